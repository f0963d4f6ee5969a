"""Which tool call a tool span without a call id ran.

OpenInference's LangChain instrumentation records no call id on a failed tool span (the id
comes from the ``ToolMessage`` in its output, and a failed run has none), and records the
input of a tool whose one argument is text as that text alone (``input.value = "Paris"``
for ``{"city": "Paris"}``). Such a span is placed by tool name and arguments when exactly
one call of the conversation has them; otherwise by time: the model call that started
last before the tool span made the call, and the k-th such span after it ran the k-th of
that model call's matching calls. A span that neither tells apart is ``ambiguous_trace``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tracebridge.messages import AIMessage, Message, ToolCall, ToolMessage

from ._calls import Call, ToolRun
from ._spans import SOURCE


@dataclass(frozen=True)
class Slot:
    """One tool call of the conversation: where it is and which model call made it."""

    message: int
    """Position of its AIMessage in the conversation."""
    position: int
    """Its position among that message's calls."""
    call: ToolCall
    maker: Call | None
    """The model call whose output it was (None: it was only ever an input)."""


def slots(messages: list[Message], makers: dict[int, Call]) -> list[Slot]:
    """Every tool call of ``messages``; ``makers``: message position -> the call that made it."""
    return [
        Slot(i, j, call, makers.get(i))
        for i, message in enumerate(messages)
        if isinstance(message, AIMessage)
        for j, call in enumerate(message.tool_calls)
    ]


def call_ids(messages: list[Message]) -> set[str]:
    """The ids of the messages' tool calls."""
    return {
        call.id for message in messages if isinstance(message, AIMessage)
        for call in message.tool_calls if call.id is not None
    }


def runs_call(run: ToolRun, call: ToolCall) -> bool:
    """Whether the span could have run the call: the same tool, and the same arguments as
    an object or (OpenInference, a tool of one text argument) as that text alone. Input
    that is JSON text but not plain JSON (``ToolRun.loose``: a key given twice, ``NaN``) is
    not read as arguments: only a call that recorded that very text is one it ran."""
    if run.loose:
        return (run.name is None or run.name == call.name) and _loosely_ran(run.given, call)
    return could_run(run.name, run.given, run.args, call)


def _loosely_ran(text: str, call: ToolCall) -> bool:
    """Whether loose JSON ``text`` is the call's input: the call recorded that very text
    (unparsed, ``invalid_args``, or beside what it read as, ``metadata.otel.arguments``), or
    it is the call's one text argument, or every way of reading it (the first or the last
    value of a key given twice) gives the call's arguments."""
    if call.invalid_args is not None:
        return bool(call.invalid_args == text)
    kept = call.metadata.get(SOURCE)
    if isinstance(kept, dict) and kept.get("arguments") == text:
        return True
    values = list(call.args.values())
    if len(values) == 1 and values[0] == text:
        return True
    try:
        first = json.loads(text, object_pairs_hook=_first_of_each)
        last = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return bool(first == call.args == last)  # (NaN equals nothing: no call holds one)


def _first_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object read keeping the first value of a key given twice."""
    read: dict[str, Any] = {}
    for key, value in pairs:
        read.setdefault(key, value)
    return read


def could_run(name: str | None, given: Any, args: Any, call: ToolCall) -> bool:
    """``runs_call`` for a tool span's name, its input as recorded (``given``) and that
    input parsed (``args``); the writer asks it too, of the spans it writes without a call id."""
    if name is not None and name != call.name:
        return False
    if given is None:  # no input recorded: the name alone tells
        return True
    if call.invalid_args is not None:
        return False
    if call.args == args:
        return True
    values = list(call.args.values())
    return len(values) == 1 and isinstance(values[0], str) and values[0] == given


def maker_of(run: ToolRun, calls: list[Call]) -> Call | None:
    """The model call of ``calls`` (in time order) that started last before the span."""
    before = [call for call in calls if call.span.start <= run.span.start]
    return before[-1] if before else None


def place(run: ToolRun, runs: list[ToolRun], found: list[Slot], calls: list[Call]) -> Slot:
    """The call the span ran (it has no call id), or ``ambiguous_trace`` at the span."""
    matching = [slot for slot in found if runs_call(run, slot.call)]
    if len(matching) == 1:
        return matching[0]
    maker = maker_of(run, calls)
    local = [slot for slot in matching if maker is not None and slot.maker is maker]
    peers = sorted(
        (
            other for other in runs
            if other.call_id is None
            and maker_of(other, calls) is maker
            and [s for s in found if s.maker is maker and runs_call(other, s.call)] == local
        ),
        key=lambda other: (other.span.start, other.span.index),
    )
    if local and len(peers) == len(local):
        return local[peers.index(run)]
    said = f"{len(matching)} calls of the conversation" if matching else "no call"
    run.span.fail(
        "ambiguous_trace",
        f"the tool span records no call id (tool_call.id, tool.id, gen_ai.tool.call.id) "
        f"and its tool name {run.name!r} and input {run.given!r} match {said}; the time "
        f"order does not tell either ({len(peers)} such tool span(s) after the model call "
        f"that made {len(local)} such call(s)): which call it ran cannot be told",
    )


def result_of(messages: list[Message], slot: Slot) -> int | None:
    """Position of the ToolMessage answering the call: by id, or by position in a block of
    results without ids; None when it is unanswered."""
    block: list[int] = []
    for k in range(slot.message + 1, len(messages)):
        if not isinstance(messages[k], ToolMessage):
            break
        block.append(k)
    for k in block:
        if slot.call.id is not None and getattr(messages[k], "tool_call_id", None) == slot.call.id:
            return k
    if any(getattr(messages[k], "tool_call_id", None) is not None for k in block):
        return None
    return block[slot.position] if slot.position < len(block) else None
