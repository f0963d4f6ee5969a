"""What Traceloop's LangChain instrumentation records on a tool span in its own way.

``opentelemetry-instrumentation-langchain`` (scope ``opentelemetry.instrumentation.langchain``)
makes an ``execute_tool`` span of every LangChain tool run, with no ``gen_ai.tool.call.id``.
Its ``on_tool_start`` records the callback's own arguments as ``gen_ai.tool.call.arguments``
(JSON text, also ``traceloop.entity.input``)::

    {"input_str": "{'city': 'Paris'}", "tags": [...], "metadata": {...},
     "inputs": {"city": "Paris"}, "kwargs": {"color": ..., "name": ..., "tool_call_id": "call_1"}}

LangChain's ``BaseTool.run`` passes ``input_str`` (``str()`` of the arguments: a Python repr),
``inputs`` (the arguments themselves, injected ones left out; ``None`` when the tool was given
text) and the tool call's id (``tool_call_id``, ``None`` when the tool was not run for a call).
Of that scope exactly that shape is read: the call id from ``kwargs``, the arguments from
``inputs`` (or ``input_str`` when there are none). ``on_tool_end`` records
``{"output": <the tool's output>, "kwargs": {...}}`` as ``gen_ai.tool.call.result``: the output
is read, LangChain's ``ToolMessage`` in its serialized form (``{"lc": 1, "type":
"constructor", "id": [..., "ToolMessage"], "kwargs": {...}}``) as the ``ToolMessage`` JSON
``{"type": "tool", "data": {...}}``. A failed run records no result.

A record whose ``kwargs`` holds ``tool_call_id`` as ``null`` says the tool ran for no call of
the model (a tool that another tool invokes; application code calling ``tool.invoke`` before
or after a run): such a span answers no call and flags none (``for_no_call``); it is not read.
"""

from __future__ import annotations

import json
from typing import Any

from ._spans import Span

SCOPE = "opentelemetry.instrumentation.langchain"

ARGUMENTS = "gen_ai.tool.call.arguments"

INPUT_KEYS = frozenset(("input_str", "tags", "metadata", "inputs", "kwargs"))
"""The keys of ``on_tool_start``'s record, all always written."""

OUTPUT_KEYS = frozenset(("output", "kwargs"))
"""The keys of ``on_tool_end``'s record."""


def is_wrapped_input(span: Span, parsed: Any) -> bool:
    """Whether ``parsed`` (the span's arguments, parsed) is ``on_tool_start``'s record."""
    return (
        span.scope == SCOPE
        and isinstance(parsed, dict)
        and parsed.keys() == INPUT_KEYS
        and isinstance(parsed["input_str"], str)
        and isinstance(parsed["kwargs"], dict)
    )


def for_no_call(span: Span, parsed: Any) -> bool:
    """Whether ``parsed`` is ``on_tool_start``'s record of a run made for no tool call:
    ``kwargs.tool_call_id`` present and ``null``."""
    return (
        is_wrapped_input(span, parsed)
        and "tool_call_id" in parsed["kwargs"]
        and parsed["kwargs"]["tool_call_id"] is None
    )


def tool_input(span: Span, parsed: Any, given: Any) -> tuple[Any, str | None]:
    """The arguments and the call id a Traceloop LangChain tool span records in its
    ``on_tool_start`` record (``given``, read as ``parsed``); ``(parsed, None)`` for any
    other span or shape."""
    if not is_wrapped_input(span, parsed):
        return parsed, None
    _refuse_two_call_ids(span, given)
    call_id = parsed["kwargs"].get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        span.fail("malformed_event", "the LangChain tool call id Traceloop records "
                  f"(kwargs.tool_call_id) must be a string, got {call_id!r}", ARGUMENTS)
    inputs = parsed["inputs"]
    if inputs is None:  # the tool was given text
        return parsed["input_str"], call_id
    if not isinstance(inputs, dict):
        span.fail("malformed_event", "the LangChain tool arguments Traceloop records "
                  f"(inputs) must be an object or null, got {inputs!r}", ARGUMENTS)
    return inputs, call_id


class _Repeated(dict[str, Any]):
    """An object of JSON text that holds a key twice, with every pair it gives."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def _keep_repeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    return value if len(value) == len(pairs) else _Repeated(pairs)


_PAIRS = json.JSONDecoder(object_pairs_hook=_keep_repeated)

_ABSENT = object()
"""A reading of the record that gives no ``kwargs.tool_call_id``."""


def _refuse_two_call_ids(span: Span, given: Any) -> None:
    """``malformed_event`` when the record's text gives ``kwargs.tool_call_id`` two values
    (the key given twice, or ``kwargs`` given twice): which call the run answers is not
    known. The same value given twice reads."""
    if not isinstance(given, str):
        return
    ids = _call_ids(_PAIRS.decode(given))
    if any(other != ids[0] for other in ids[1:]):
        shown = " and ".join("none" if i is _ABSENT else repr(i) for i in ids)
        span.fail("malformed_event", "the LangChain tool call id Traceloop records "
                  f"(kwargs.tool_call_id) is given twice, {shown}: which call the tool ran "
                  "for is not known", ARGUMENTS)


def _call_ids(record: dict[str, Any]) -> list[Any]:
    """Every ``kwargs.tool_call_id`` the record gives, as read each way its repeated keys
    can be read (``_ABSENT`` for a ``kwargs`` without one)."""
    return [
        call_id
        for kwargs in _values(record, "kwargs")
        if isinstance(kwargs, dict)
        for call_id in (_values(kwargs, "tool_call_id") or [_ABSENT])
    ]


def _values(value: dict[str, Any], key: str) -> list[Any]:
    """The values an object gives ``key``: several when the key was given twice."""
    if isinstance(value, _Repeated):
        return [v for k, v in value.pairs if k == key]
    return [value[key]] if key in value else []


def is_wrapped_output(span: Span, parsed: Any) -> bool:
    """Whether ``parsed`` (the span's result, parsed) is ``on_tool_end``'s record."""
    return span.scope == SCOPE and isinstance(parsed, dict) and parsed.keys() == OUTPUT_KEYS


def tool_output(span: Span, parsed: Any, call_id: str | None) -> Any:
    """The output a Traceloop LangChain tool span records in its ``on_tool_end`` record: a
    serialized ``ToolMessage`` as the ``ToolMessage`` JSON; text as it is when the tool ran
    for no call (for a call LangChain makes its output a ``ToolMessage``: other text there is
    the ``str()`` of something else, a LangGraph ``Command`` say). ``None`` when the span or
    the shape is not that: the result is then the record as recorded, which the rebuild
    refuses where it is needed (``is_wrapped_output``)."""
    if not is_wrapped_output(span, parsed):
        return None
    output = parsed["output"]
    if isinstance(output, str) and call_id is None:
        return output
    if (
        isinstance(output, dict)
        and output.keys() == {"lc", "type", "id", "kwargs"}
        and output["type"] == "constructor"
        and output["id"] == ["langchain", "schema", "messages", "ToolMessage"]
        and isinstance(output["kwargs"], dict)
    ):
        return {"type": "tool", "data": output["kwargs"]}
    return None
