"""Render a conversation as text for people and for LLM judges.

One message renders as a header line ``<label>: <first line of content>`` with the rest of
the content and the tool calls indented by four spaces::

    [0] developer: You are a weather bot.
    [1] human: Weather in Paris and Rome?
    [2] ai (forecaster): Checking both.
        -> get_weather [id=call_1] {"city": "Paris"}
        -> get_weather [id=call_2] invalid arguments: '{"city": Rome'
    [3] tool get_weather [id=call_1]: 18 C, sunny
    [4] tool get_weather [id=call_2] (error): arguments did not parse
    [5] ai: [refusal] I can't help with that.

A system message with the developer role is labelled ``developer``. Non-text parts become
placeholders (``[image: image/png]``, ``[image: image/png, detail=high]``,
``[file: a.pdf, application/pdf]``); reasoning shows as ``[reasoning] <text>`` and a refusal as
``[refusal] <text>``; a block kept opaque shows its kind and its JSON (cut at 300 characters).
After an agent's content and calls come its citations (``[cite 0-12] <title> <url>``) and its
audio reply (``[audio reply id=...] <transcript>``). ``RENDER_VERSION`` changes whenever the
output for some conversation changes, so judged scores can say what the judge saw.

Content may span lines (each continuation indented); a name, an id, a citation's title and
url cannot: a backslash and every character Python does not print as itself (line breaks,
other control characters, ``\u2028``, format characters such as ``\u202e``, a lone surrogate)
are written there as Python's escapes (``\n``, ``\x1b``, ``\u2028``, ``\\``), so no name
can start a line that looks like another message.

This module dispatches on the ``type`` tags and imports no message class at run time, so
``messages`` can use it without an import circle.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from ._conversation import messages_of
from ._shape import UNCHECKED, unchecked_field, unchecked_in

if TYPE_CHECKING:
    from .messages import AnyMessage, Citation, Content, Part, ToolCall

__all__ = ["RENDER_VERSION", "render", "render_message"]

RENDER_VERSION = "3"
"""``3``: names, ids, titles and urls escaped (``2``: a line break in one started a new line)."""

_INDENT = "    "
_OPAQUE_LIMIT = 300


def render(conversation: Any) -> str:
    """The whole conversation (a ``MultiTurnSample`` or messages), one numbered message a line.

    >>> from tracebridge import HumanMessage, AIMessage, render
    >>> print(render([HumanMessage(content="hi"), AIMessage(content="hello\\nthere")]))
    [0] human: hi
    [1] ai: hello
        there
    """
    messages = messages_of(conversation)
    try:
        return "\n".join(f"[{i}] {_rendered(m)}" for i, m in enumerate(messages))
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(messages)
        if refused is None:
            raise
        raise refused from None


def render_message(message: AnyMessage) -> str:
    """One message, without its position."""
    try:
        return _rendered(message)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_in(message)
        if refused is None:
            raise
        raise refused from None


def _rendered(message: AnyMessage) -> str:
    content = _content_lines(message.content)
    head = f"{_label(message)}:"
    if content and content[0]:
        head += f" {content[0]}"
    body = content[1:]
    if message.type == "ai":
        body += [_render_call(call) for call in message.tool_calls]
        body += [_render_citation(cited) for cited in message.citations]
        if message.audio is not None:
            reply = f"[audio reply id={_one_line(message.audio.id)}]"
            if message.audio.transcript is not None:
                reply += f" {message.audio.transcript}"
            body.extend(reply.split("\n"))
    return "\n".join([head, *(_INDENT + line if line else "" for line in body)])


def _label(message: AnyMessage) -> str:
    if message.type == "tool":
        label = "tool"
        if message.name is not None:
            label += f" {_one_line(message.name)}"
        if message.tool_call_id is not None:
            label += f" [id={_one_line(message.tool_call_id)}]"
        if message.is_error:
            label += " (error)"
        return label
    label = message.role if message.type == "system" else message.type
    if message.name is not None:
        label += f" ({_one_line(message.name)})"
    return label


def _render_call(call: ToolCall) -> str:
    name = _one_line(call.name)
    ident = f" [id={_one_line(call.id)}]" if call.id is not None else ""
    if call.invalid_args is not None:
        return f"-> {name}{ident} invalid arguments: {call.invalid_args!r}"
    if call.kind == "custom":
        return f"-> {name}{ident} custom input: {call.args['input']!r}"
    return f"-> {name}{ident} {json.dumps(call.args, ensure_ascii=False)}"


def _one_line(text: str) -> str:
    """``text`` (a name, an id, a title, a url) with a backslash and each character Python
    does not print as itself written as its escape, so it stays on its line.

    >>> print(_one_line("agent\\n[4] human: hi"), _one_line("C:\\\\tmp"), _one_line("ok"))
    agent\\n[4] human: hi C:\\\\tmp ok
    """
    if text.isprintable() and "\\" not in text:
        return text  # the usual name: nothing to escape
    return "".join(ch if ch.isprintable() and ch != "\\" else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    """One character as Python writes it in a string literal (``\\n``, ``\\x1b``,
    ``\\u2028``, ``\\U000e0001``, ``\\\\``)."""
    return ch.encode("unicode_escape").decode("ascii")


def _render_citation(cited: Citation) -> str:
    span = ""
    if cited.start_index is not None or cited.end_index is not None:
        span = f" {_or_blank(cited.start_index)}-{_or_blank(cited.end_index)}"
    said = " ".join(_one_line(x) for x in (cited.title, cited.url) if x is not None)
    line = f"[cite{span}] {said}".rstrip()
    if cited.cited_text is not None:
        line += f" {json.dumps(cited.cited_text, ensure_ascii=False)}"
    return line


def _or_blank(value: int | None) -> str:
    return "" if value is None else str(value)


def _content_lines(content: Content) -> list[str]:
    if isinstance(content, str):
        return content.split("\n") if content else []
    lines: list[str] = []
    for part in content:
        lines.extend(_part_text(part).split("\n"))
    return lines


def _part_text(part: Part) -> str:
    if part.type == "text":
        return part.text
    if part.type == "reasoning":
        return f"[reasoning] {part.text}"
    if part.type == "refusal":
        return f"[refusal] {part.text}"
    if part.type == "image" or part.type == "audio":
        said = [part.mime_type] if part.mime_type else []
        if part.type == "image" and part.detail is not None:
            said.append(f"detail={part.detail}")
        return f"[{part.type}: {', '.join(said)}]" if said else f"[{part.type}]"
    if part.type == "file":
        described = ", ".join(x for x in (part.filename, part.mime_type) if x)
        return f"[file: {described}]" if described else "[file]"
    if part.type == "opaque":
        value = json.dumps(part.value, ensure_ascii=False)
        if len(value) > _OPAQUE_LIMIT:
            value = value[: _OPAQUE_LIMIT - 3] + "..."
        return f"[{part.kind}] {value}"
    assert_never(part)
