"""Render a conversation as text for people and for LLM judges.

One message renders as a header line ``<label>: <first line of content>`` with the rest of
the content and the tool calls indented by four spaces::

    [0] system: You are a weather bot.
    [1] human: Weather in Paris and Rome?
    [2] ai (forecaster): Checking both.
        -> get_weather [id=call_1] {"city": "Paris"}
        -> get_weather [id=call_2] invalid arguments: '{"city": Rome'
    [3] tool get_weather [id=call_1]: 18 C, sunny
    [4] tool get_weather [id=call_2] (error): arguments did not parse

Non-text parts become placeholders (``[image: image/png]``, ``[file: a.pdf, application/pdf]``);
reasoning shows as ``[reasoning] <text>``; a block kept opaque shows its kind and its JSON
(cut at 300 characters). ``RENDER_VERSION`` changes
whenever the output for some conversation changes, so judged scores can say what the
judge saw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .messages import (
    AIMessage,
    AnyMessage,
    AudioPart,
    Content,
    FilePart,
    ImagePart,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    messages_of,
)

if TYPE_CHECKING:
    from .sample import MultiTurnSample

__all__ = ["RENDER_VERSION", "render", "render_message"]

RENDER_VERSION = "1"

_INDENT = "    "
_OPAQUE_LIMIT = 300


def render(conversation: MultiTurnSample | Iterable[AnyMessage]) -> str:
    """The whole conversation, one numbered message after another.

    >>> from tracebridge import HumanMessage, AIMessage, render
    >>> print(render([HumanMessage(content="hi"), AIMessage(content="hello\\nthere")]))
    [0] human: hi
    [1] ai: hello
        there
    """
    messages = messages_of(conversation)
    return "\n".join(f"[{i}] {render_message(m)}" for i, m in enumerate(messages))


def render_message(message: AnyMessage) -> str:
    """One message, without its position."""
    content = _content_lines(message.content)
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    head = f"{_label(message)}:"
    if content and content[0]:
        head += f" {content[0]}"
    body = [*content[1:], *(_render_call(call) for call in calls)]
    return "\n".join([head, *(_INDENT + line if line else "" for line in body)])


def _label(message: AnyMessage) -> str:
    if isinstance(message, ToolMessage):
        label = "tool"
        if message.name is not None:
            label += f" {message.name}"
        if message.tool_call_id is not None:
            label += f" [id={message.tool_call_id}]"
        if message.is_error:
            label += " (error)"
        return label
    label = message.type
    if message.name is not None:
        label += f" ({message.name})"
    return label


def _render_call(call: ToolCall) -> str:
    ident = f" [id={call.id}]" if call.id is not None else ""
    if call.invalid_args is not None:
        return f"-> {call.name}{ident} invalid arguments: {call.invalid_args!r}"
    return f"-> {call.name}{ident} {json.dumps(call.args, ensure_ascii=False)}"


def _content_lines(content: Content) -> list[str]:
    if isinstance(content, str):
        return content.split("\n") if content else []
    lines: list[str] = []
    for part in content:
        lines.extend(_part_text(part).split("\n"))
    return lines


def _part_text(part: Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ReasoningPart):
        return f"[reasoning] {part.text}"
    if isinstance(part, (ImagePart, AudioPart)):
        kind = "image" if isinstance(part, ImagePart) else "audio"
        return f"[{kind}: {part.mime_type}]" if part.mime_type else f"[{kind}]"
    if isinstance(part, FilePart):
        described = ", ".join(x for x in (part.filename, part.mime_type) if x)
        return f"[file: {described}]" if described else "[file]"
    if isinstance(part, OpaquePart):
        value = json.dumps(part.value, ensure_ascii=False)
        if len(value) > _OPAQUE_LIMIT:
            value = value[: _OPAQUE_LIMIT - 3] + "..."
        return f"[{part.kind}] {value}"
    raise TypeError(f"cannot render part {type(part).__name__}")  # unreachable: Part is closed
