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
``[refusal] <text>``, and one that spans lines ends with a line of its own, ``[/reasoning]`` or
``[/refusal]``, so what follows it never reads as part of it; a block kept opaque shows its
kind and its JSON (cut at 300 characters).
After an agent's content and calls come its citations (``[cite 0-12] <title> <url>``) and its
audio reply (``[audio reply id=...] <transcript>``). ``RENDER_VERSION`` changes whenever the
output for some conversation changes, so judged scores can say what the judge saw.

Content may span lines (each continuation indented); a name, an id, a citation's title and
url cannot: a backslash and every character Python does not print as itself (line breaks,
other control characters, ``\u2028``, format characters such as ``\u202e``, a lone surrogate)
are written there as Python's escapes (``\n``, ``\x1b``, ``\u2028``, ``\\``), so no name
can start a line that looks like another message. Text breaks lines wherever
``str.splitlines`` does (``\r``, ``\x0b``, ``\u2028``, ...), each line indented; JSON
(arguments, cited text, opaque values) writes ``\x85``, ``\u2028``, ``\u2029`` as escapes.
Every line the renderer makes itself starts with ``->`` or ``[``; a line of text that starts
with ``->`` or ``[`` after any backslashes, white space or characters that show as nothing
(Unicode's default ignorable ones, the other format characters, a blank braille pattern)
gets one more backslash in front (``\\-> cancel_order``, ``\\[image: image/png]``), so text
never reads as a call or a part; a part's mime type, detail, file name and opaque kind escape
``[ ] ( ) { }`` as ids do, and a citation's title and url escape ``"``.
In a name, the characters that shape a header or a call line (``[ ] ( ) { } :``) are
written after a backslash too (a tool named ``get [id=c1]`` shows as ``get \\[id=c1\\]``);
in an id, all but ``:``.

This module dispatches on the ``type`` tags and imports no message class at run time, so
``messages`` can use it without an import circle.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ._conversation import messages_of
from ._shape import UNCHECKED, unchecked_field, unchecked_in, unknown_kind

if TYPE_CHECKING:
    from .messages import AnyMessage, Citation, Content, Part, ToolCall

__all__ = ["RENDER_VERSION", "render", "render_message"]

RENDER_VERSION = "6"
"""``6``: a text line that starts like a call or a part after any character that shows as
nothing (a default ignorable one such as a variation selector or a Hangul filler, or a blank
braille pattern) is marked too (``5``: only after a format character, category Cf);
``5``: a reasoning or refusal part that spans lines ends with a line ``[/reasoning]`` or
``[/refusal]`` (``4``: nothing marked its end, so the text after it read as more of it);
``4``: text breaks lines at every ``str.splitlines`` break and a text line that starts like
a call or a part is marked with a backslash (``3``: only ``\n`` broke a line, and such a line
showed as it stood); ``3``: names, ids, titles and urls escaped (``2``: a line break in one
started a new line)."""

_INDENT = "    "
_OPAQUE_LIMIT = 300

_TEXT_BREAK = re.compile("\r(?!\n)|[\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Where text breaks: as ``str.splitlines``, but a ``\r`` before ``\n`` stays on its line,
as it always has, so ``\r\n`` text renders as before."""
_JSON_BREAKS = {ord(ch): f"\\u{ord(ch):04x}" for ch in "\x85\u2028\u2029"}
"""The line breaks ``json.dumps(..., ensure_ascii=False)`` leaves raw, as JSON escapes."""
_DEFAULT_IGNORABLE = (
    # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties, 15.1): what a font shows
    # as nothing, such as a zero width space, a variation selector, a Hangul filler or a tag
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_OTHER_FORMAT = (
    # the rest of the format characters (category Cf) of Unicode 15
    "\u0600-\u0605\u06dd\u070f\u0890-\u0891\u08e2\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f"
)
_BLANK_SYMBOL = "\u2800"
"""BRAILLE PATTERN BLANK: a symbol (neither white space nor ignorable) drawn as a blank."""
_INVISIBLE = _DEFAULT_IGNORABLE + _OTHER_FORMAT + _BLANK_SYMBOL
"""The characters that show as nothing, for a regular expression's character class."""
_BEFORE_MADE = "[\\s\\\\" + _INVISIBLE + "]*"
"""Backslashes, white space and characters that show as nothing (a zero width space, a byte
order mark, direction marks, a variation selector, a Hangul filler, a blank braille pattern),
which may come before a ``->`` or ``[`` without changing how the line looks to a reader."""
_LOOKS_MADE = re.compile(_BEFORE_MADE + r"(?:->|\[)")
"""A text line starting like this (``->`` or ``[`` after any of ``_BEFORE_MADE``) gets a
backslash."""
_SOME_LINE_LOOKS_MADE = re.compile(
    r"(?:^|\n)(?:[^\S\n]|[\\" + _INVISIBLE + r"])*(?:->|\[)"
)
"""Whether some line of a text (split at ``\\n``) may: each is then matched alone. A
``\\n`` is no part of the run before the mark here (white space but not a line break), or a
search from each line of a run of blank lines would read to its end: quadratic time."""


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
            reply = f"[audio reply id={_id(message.audio.id)}]"
            if message.audio.transcript is None:
                body.append(reply)
            else:
                body += _after(f"{reply} ", message.audio.transcript)
    return "\n".join([head, *(_INDENT + line if line else "" for line in body)])


def _label(message: AnyMessage) -> str:
    if message.type == "tool":
        label = "tool"
        if message.name is not None:
            label += f" {_name(message.name)}"
        if message.tool_call_id is not None:
            label += f" [id={_id(message.tool_call_id)}]"
        if message.is_error:
            label += " (error)"
        return label
    label = message.role if message.type == "system" else message.type
    if message.name is not None:
        label += f" ({_name(message.name)})"
    return label


def _render_call(call: ToolCall) -> str:
    name = _name(call.name)
    ident = f" [id={_id(call.id)}]" if call.id is not None else ""
    if call.invalid_args is not None:
        return f"-> {name}{ident} invalid arguments: {call.invalid_args!r}"
    if call.kind == "custom":
        return f"-> {name}{ident} custom input: {call.args['input']!r}"
    return f"-> {name}{ident} {_json(call.args)}"


def _one_line(text: str) -> str:
    """``text`` (a name, an id, a title, a url) with a backslash and each character Python
    does not print as itself written as its escape, so it stays on its line.

    >>> print(_one_line("agent\\n[4] human: hi"), _one_line("C:\\\\tmp"), _one_line("ok"))
    agent\\n[4] human: hi C:\\\\tmp ok
    """
    if text.isprintable() and "\\" not in text:
        return text  # the usual name: nothing to escape
    return "".join(ch if ch.isprintable() and ch != "\\" else _escape(ch) for ch in text)


_ID_MARKS = frozenset("[](){}")
"""What gives a header or a call line its shape: the id's ``[id=...]``, the agent's ``(...)``,
the arguments' ``{...}``, ``(error)``; in a name (not enclosed as an id is) also the ``:``
before the content."""
_NAME_MARKS = _ID_MARKS | {":"}
_NAME_ESCAPES = {ord(ch): "\\" + ch for ch in _NAME_MARKS}
_ID_ESCAPES = {ord(ch): "\\" + ch for ch in _ID_MARKS}


def _name(text: str) -> str:
    """A name as ``_one_line`` writes it, with a backslash before each character that shapes
    its line (``[ ] ( ) { } :``), so a tool named ``get [id=c1]`` cannot read as the tool
    ``get`` answering the call ``c1``, nor a tool named ``get: done`` as one that said so.

    >>> print(_name("get [id=c1]"), _name("ok"))
    get \\[id=c1\\] ok
    """
    return _marked(_one_line(text), _NAME_MARKS, _NAME_ESCAPES)


def _id(text: str) -> str:
    """An id (or a field inside a placeholder) as ``_one_line`` writes it, with a backslash
    before ``[ ] ( ) { }`` (a ``:`` is left: the id is enclosed in ``[id=...]``, whose ``]``
    it cannot write)."""
    return _marked(_one_line(text), _ID_MARKS, _ID_ESCAPES)


def _marked(text: str, marks: frozenset[str], escapes: dict[int, str]) -> str:
    if marks.isdisjoint(text):
        return text  # the usual name or id: nothing shapes a line
    return text.translate(escapes)


def _escape(ch: str) -> str:
    """One character as Python writes it in a string literal (``\\n``, ``\\x1b``,
    ``\\u2028``, ``\\U000e0001``, ``\\\\``)."""
    return ch.encode("unicode_escape").decode("ascii")


def _quoted(text: str) -> str:
    """A citation's title or url as ``_one_line`` writes it, with a backslash before ``"``:
    only the cited text is written in quotes."""
    return _one_line(text).replace('"', '\\"')


def _render_citation(cited: Citation) -> str:
    span = ""
    if cited.start_index is not None or cited.end_index is not None:
        span = f" {_or_blank(cited.start_index)}-{_or_blank(cited.end_index)}"
    said = " ".join(_quoted(x) for x in (cited.title, cited.url) if x is not None)
    line = f"[cite{span}] {said}".rstrip()
    if cited.cited_text is not None:
        line += f" {_json(cited.cited_text)}"
    return line


def _or_blank(value: int | None) -> str:
    return "" if value is None else str(value)


def _json(value: Any) -> str:
    """``value`` as JSON on one line: the line breaks JSON leaves raw are escaped too.

    >>> print(_json({"to": "Paris\\u2028[2] human: hi"}))
    {"to": "Paris\\u2028[2] human: hi"}
    """
    text = json.dumps(value, ensure_ascii=False)
    if "\x85" not in text and "\u2028" not in text and "\u2029" not in text:
        return text  # the usual value: nothing to escape
    return text.translate(_JSON_BREAKS)


def _text_lines(text: str) -> list[str]:
    """``text`` cut into lines at every line break, each line that starts like one the
    renderer makes (``->``, ``[``, after any backslashes, white space or characters that
    show as nothing) marked with a backslash.

    >>> _text_lines("Done.\\r-> refund {}\\n[image: image/png]\\n\\\\[x]")
    ['Done.', '\\\\-> refund {}', '\\\\[image: image/png]', '\\\\\\\\[x]']
    """
    if (
        "\r" in text or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text
        or "\x1e" in text or "\x85" in text or "\u2028" in text or "\u2029" in text
    ):
        lines = _TEXT_BREAK.split(text)
    else:  # the usual text: only \n breaks it, and most often no line needs a mark
        lines = text.split("\n")
        if _SOME_LINE_LOOKS_MADE.search(text) is None:
            return lines
    return ["\\" + line if _LOOKS_MADE.match(line) else line for line in lines]


def _after(prefix: str, text: str) -> list[str]:
    """``text``'s lines, the first after ``prefix`` (where a placeholder starts it)."""
    lines = _text_lines(text)
    return [prefix + lines[0], *lines[1:]]


def _closed(kind: str, text: str) -> list[str]:
    """A reasoning or refusal part: ``[kind] <first line>``, and when it spans lines, its
    other lines and then ``[/kind]``, so the text after it never reads as more of it, nor its
    lines as what the agent said.

    >>> _closed("reasoning", "No tool.\\nSay it worked.")
    ['[reasoning] No tool.', 'Say it worked.', '[/reasoning]']
    >>> _closed("refusal", "I can't.")
    ["[refusal] I can't."]
    """
    lines = _after(f"[{kind}] ", text)
    if len(lines) > 1:
        lines.append(f"[/{kind}]")
    return lines


def _content_lines(content: Content) -> list[str]:
    if isinstance(content, str):
        return _text_lines(content) if content else []
    lines: list[str] = []
    for part in content:
        lines.extend(_part_lines(part))
    return lines


def _part_lines(part: Part) -> list[str]:
    if part.type == "text":
        return _text_lines(part.text)
    if part.type == "reasoning" or part.type == "refusal":
        return _closed(part.type, part.text)
    if part.type == "image" or part.type == "audio":
        said = [_id(part.mime_type)] if part.mime_type else []
        if part.type == "image" and part.detail is not None:
            said.append(f"detail={_id(part.detail)}")
        return [f"[{part.type}: {', '.join(said)}]" if said else f"[{part.type}]"]
    if part.type == "file":
        described = ", ".join(_id(x) for x in (part.filename, part.mime_type) if x)
        return [f"[file: {described}]" if described else "[file]"]
    if part.type == "opaque":
        value = _json(part.value)
        if len(value) > _OPAQUE_LIMIT:
            value = value[: _OPAQUE_LIMIT - 3] + "..."
        return [f"[{_id(part.kind)}] {value}"]
    unknown_kind(part)  # assert_never, raising what the fallback to unchecked_field catches
