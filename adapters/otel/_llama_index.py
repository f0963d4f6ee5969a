"""What OpenInference's LlamaIndex instrumentation records in its own way.

``openinference-instrumentation-llama-index`` makes a span of every method LlamaIndex's
dispatcher wraps, named ``<class>.<method>``; on an LLM every such span is of kind ``LLM``
(its ``_init_span_kind``), whether or not the method calls the model. Messages are recorded
only from the chat events (``LLMChatStartEvent``, ``LLMChatEndEvent``) that the model-calling
methods (``chat``, ``achat``, ``stream_chat``, ...) send. ``_prepare_chat_with_tools``, abstract
in ``FunctionCallingLLM`` and so given a span in every implementation, only builds the request
that the next ``chat`` / ``achat`` sends: its span holds ``input.value`` and ``output.value``,
never messages. Such a span is no model call (with content capture off it is the ``chat``
span that has no messages, and is refused).

``LLM``'s prompt and tool helpers (``predict``, ``stream``, ``structured_predict``,
``predict_and_call``, their async and streaming forms) and the ``complete`` family of an LLM
whose completion calls its dispatched ``chat`` only wrap the model call that a ``chat``-family
span below them records: they send chat events of their own never (``predict`` records a
prompt template, a ``complete`` span ``llm.prompts``). Such a span, recording no messages,
with an ``LLM`` span of this scope that records messages below it, is no model call
(``wrapper_spans``). With content capture off no span below it records messages either: it
is read, and refused. A ``complete``-family span with no such span below it made the call
itself, a text completion: its prompt (``llm.prompts``, a list of strings) is no message.

``StructuredLLM`` (what ``FunctionAgent(output_cls=...)`` and ``as_structured_llm`` make)
records messages on its ``chat``-family spans: the input it was given and, as its reply, the
JSON of the object the model call below it (same input, a call of the schema's tool) was
parsed into. Both are recorded calls, of a conversation apart from the agent's (the agent's
run re-sent as one user message): kept as two calls, not as a nested duplicate.

A tool span (``FunctionTool.acall``) records the method's bound arguments as ``input.value``,
``{"kwargs": {...}}``: the call's arguments are those kwargs. A tool whose function takes the
workflow's ``Context`` gets it injected by ``FunctionTool`` (the model never sends it, and
the tool's schema, ``tool.parameters``, leaves it out); the span records it among the kwargs
as its repr, ``"<workflows.context.context.Context object at 0x...>"``. A key whose value is
that repr and which the schema recorded on the span does not declare is left out; nothing
else is (no schema, or one that declares the key: it stays).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ._flat import LEGACY_INPUT, LEGACY_OUTPUT, OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT
from ._genai import INPUT, OUTPUT, SYSTEM
from ._spans import Span

SCOPE = "openinference.instrumentation.llama_index"

NO_CALL_METHODS = frozenset({"_prepare_chat_with_tools"})
"""LLM methods LlamaIndex's dispatcher wraps in a span that make no model call."""


WRAPPER_METHODS = frozenset({
    "predict", "apredict", "stream", "astream",
    "structured_predict", "astructured_predict",
    "stream_structured_predict", "astream_structured_predict",
    "predict_and_call", "apredict_and_call",
    "complete", "acomplete", "stream_complete", "astream_complete",
})
"""LLM methods that call the model through another method the dispatcher wraps (or, for
the ``complete`` family of a completion model, the model itself)."""

PROMPTS = "llm.prompts"
"""Where OpenInference records a text completion's prompt (``LLMCompletionStartEvent``)."""


def wrapper_spans(spans: Iterable[Span]) -> set[int]:
    """``id()`` of each LlamaIndex LLM span of a ``WRAPPER_METHODS`` method that records
    no messages and has, below it, an LLM span of this scope that does: the span of the
    method that wrapped that model call, no call of its own."""
    spans = list(spans)
    children: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        if span.parent_id is not None:
            children.setdefault((span.trace_id, span.parent_id), []).append(span)
    found: set[int] = set()
    for span in spans:
        if not (_is_llm(span) and _method(span) in WRAPPER_METHODS
                and not records_messages(span)):
            continue
        below = list(children.get((span.trace_id, span.span_id), []))
        seen: set[int] = set()
        while below:
            child = below.pop()
            if id(child) in seen:
                continue
            seen.add(id(child))
            if _is_llm(child) and records_messages(child):
                found.add(id(span))
                break
            below.extend(children.get((child.trace_id, child.span_id), []))
    return found


STRUCTURED_CLASS = "StructuredLLM"

STRUCTURED = (
    "LlamaIndex's StructuredLLM: the structured output of the model call below it, in a "
    "conversation of its own (FunctionAgent(output_cls=...) re-sends the run as one user "
    "message to make it)"
)


def is_structured(span: Span) -> bool:
    """Whether ``span`` is an LLM span of LlamaIndex's ``StructuredLLM``."""
    owner, dot, _ = span.name.rpartition(".")
    return _is_llm(span) and bool(dot) and owner == STRUCTURED_CLASS


def structures(outer: Span, inner: Span) -> bool:
    """Whether ``inner``, an LLM span of this scope nested in ``outer``, is the model call
    whose reply a ``StructuredLLM`` span (``outer``) parsed: not a nested duplicate."""
    return is_structured(outer) and _is_llm(inner) and not is_structured(inner)


def is_completion(span: Span) -> bool:
    """Whether ``span`` is a LlamaIndex LLM span that recorded a text completion's prompt
    (``llm.prompts`` as a list: masked, it is ``__REDACTED__``) and no messages."""
    return (
        _is_llm(span)
        and isinstance(span.attributes.get(PROMPTS), list)
        and not records_messages(span)
    )


def _is_llm(span: Span) -> bool:
    return span.scope == SCOPE and span.attributes.get("openinference.span.kind") == "LLM"


def _method(span: Span) -> str | None:
    owner, dot, method = span.name.rpartition(".")
    return method if owner and dot else None


def prepares_only(span: Span) -> bool:
    """Whether ``span`` is a LlamaIndex ``<class>._prepare_chat_with_tools`` span that
    recorded no messages: it prepares a model call, it makes none."""
    owner, dot, method = span.name.rpartition(".")
    return (
        span.scope == SCOPE
        and bool(owner and dot)
        and method in NO_CALL_METHODS
        and not records_messages(span)
    )


def builds_request(span: Span) -> bool:
    """Whether ``span`` is a LlamaIndex ``<class>._prepare_chat_with_tools`` span, messages
    or not: its ``output.value`` is the request it built, no model's answer."""
    return span.scope == SCOPE and _method(span) in NO_CALL_METHODS


_MESSAGE_PREFIXES = tuple(
    f"{prefix}." for prefix in (
        OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT, LEGACY_INPUT, LEGACY_OUTPUT, INPUT, OUTPUT
    )
)


def records_messages(span: Span) -> bool:
    """Whether the span holds an attribute the call reader reads messages (or a reference
    to them, ``gen_ai.input.messages.ref``) from."""
    return any(
        key in (INPUT, OUTPUT, SYSTEM) or key.startswith(_MESSAGE_PREFIXES)
        for key in span.attributes
    )


def tool_arguments(span: Span, args: Any) -> Any:
    """A LlamaIndex tool span's arguments: the ``kwargs`` of its bound arguments
    (``{"kwargs": {"city": "Paris"}}`` -> ``{"city": "Paris"}``); ``args`` otherwise."""
    if (
        span.scope == SCOPE
        and isinstance(args, dict)
        and args.keys() == {"kwargs"}
        and isinstance(args["kwargs"], dict)
    ):
        declared = _declared(span)
        return {
            key: value
            for key, value in args["kwargs"].items()
            if declared is None
            or key in declared
            or not (isinstance(value, str) and CONTEXT_REPR.fullmatch(value))
        }
    return args


CONTEXT_REPR = re.compile(r"<(?:[A-Za-z_][\w]*\.)*Context object at 0x[0-9a-fA-F]+>")
"""The repr of an injected workflow ``Context`` (``workflows.context.context.Context``)."""


def _declared(span: Span) -> set[str] | None:
    """The argument names the tool's schema (``tool.parameters``, JSON) declares; None when
    the span has no such schema."""
    schema = span.attributes.get("tool.parameters")
    if not isinstance(schema, str):
        return None
    try:
        parsed = json.loads(schema)
    except (ValueError, RecursionError):
        return None
    properties = parsed.get("properties") if isinstance(parsed, dict) else None
    return set(properties) if isinstance(properties, dict) else None
