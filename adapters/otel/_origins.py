"""Where in a span each typed message was recorded, so that a conversation rule's violation
names the recorded message, not its typed position.

Typed positions differ from recorded ones: ``gen_ai.system_instructions`` adds a leading
message, a GenAI tool message with several results (or a Pydantic AI user message holding
results) becomes several messages, and ``join_calls`` joins call-only messages. Paths are
in the attribute terms the readers' own refusals use: ``gen_ai.input.messages[2].parts[1]``
in GenAI's lists, ``llm.input_messages.2.message`` / ``gen_ai.prompt.2`` for flat keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracebridge.errors import TraceError

from ._spans import Span


@dataclass(frozen=True)
class Origin:
    """Where one typed message was recorded in its span."""

    where: str | None = None
    """The message (or the result part it was read from); None: the span itself (a tool
    span's result)."""
    calls: tuple[str, ...] = ()
    """Where each of its tool calls was recorded (each call's ``id`` is under it)."""
    result_id: str | None = None
    """Where a result's call id was recorded."""


def joined(before: Origin, after: Origin) -> Origin:
    """The origin of a message whose calls were joined from two recorded messages."""
    return Origin(before.where, before.calls + after.calls, before.result_id)


_CALL = re.compile(r"\.tool_calls\[(\d+)\](\.id)?")


def source_path(span: Span, origin: Origin, suffix: str) -> str:
    """The path of a typed message's field (``suffix``: ``""``, ``.tool_call_id``,
    ``.tool_calls[k]``, ``.tool_calls[k].id``) where the span recorded it."""
    if not suffix:
        return span.at(origin.where)
    if suffix == ".tool_call_id" and origin.result_id is not None:
        return span.at(origin.result_id)
    found = _CALL.fullmatch(suffix)
    if found is not None and int(found[1]) < len(origin.calls):
        return span.at(origin.calls[int(found[1])] + (".id" if found[2] else ""))
    if origin.where is None:
        return span.path
    return f"{span.at(origin.where)}{suffix}"


def moved(error: TraceError, origin: list[tuple[Span, Origin]]) -> TraceError:
    """A rule violation at typed position ``i`` pointed at where its span recorded it."""
    if error.index is None or error.index >= len(origin):
        return error
    span, recorded = origin[error.index]
    root = f"messages[{error.index}]"
    suffix = error.path[len(root):] if error.path and error.path.startswith(root) else ""
    return error.relocated(index=span.index, path=source_path(span, recorded, suffix))
