"""The keys of ``metadata[<adapter>]`` the Chat Completions writer knows, at each level.

The reader (``_read``, ``_reply``, ``_parts``) keeps under its namespace only the keys listed
here, each on the roles, parts and calls it reads them from, and the writer reads them there.
Any other key (a ``finish_reason`` beside ``fields``, say), or a known one where the writer
does not read it (``annotations`` on a user message, ``arguments`` on a custom call), would be
left out without a word: it is refused (``not_representable`` at the key), as are values of
a known key the writer does not act on (a refusal spelling the message is not written in,
annotations that are not a list, argument text, an audio format or an image detail that is
not text).

The writer asks here about each namespace it has read, once it has written the element (so
its own refusals come first), and only when the namespace is not empty: a subset test, no
second pass. The fast writer takes only messages whose namespace holds no more than
``content``, ``annotations: []`` and ``fields`` on the roles that have them and whose parts,
calls, citations and audio reply keep nothing, so it needs no test. Other formats' writers
built on these classes (otel's flat messages) keep other keys and check them themselves:
only a writer whose ``known_keys`` is set asks (``openai_chat``'s and ``swarm``'s own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tracebridge._json import json_path
from tracebridge.errors import short_repr

if TYPE_CHECKING:
    from ._parts import PartWriter

__all__ = [
    "AUDIO_KEYS",
    "CALL_KEYS",
    "CITATION_KEYS",
    "MESSAGE_KEYS",
    "PART_KEYS",
    "PART_NAMES",
    "ROLE_NAMES",
    "check_call",
    "check_reply",
    "refuse_unknown",
    "refuse_untyped",
]

_STORED = ("content_parts", "joined", "joined_parts")
MESSAGE_KEYS: Mapping[str, frozenset[str]] = {
    "system": frozenset(("fields", *_STORED)),
    "developer": frozenset(("fields", *_STORED)),
    "user": frozenset(("fields", *_STORED)),
    "tool": frozenset(("fields", *_STORED)),
    "function": frozenset(("fields", "content")),
    "assistant": frozenset(("fields", "content", "refusal", "annotations", *_STORED)),
}
"""Per role written, what the reader keeps on such a message: ``fields`` everywhere, the
``content`` form of an empty content where a null or absent one is read (assistant, function),
an assistant's refusal spelling and annotation layout, and where a stored message's parts
were read (``content_parts``) with their joined text when it is not the usual one
(``joined``, and what the parts said then, ``joined_parts``) on the roles that take parts."""

PART_KEYS: Mapping[str, frozenset[str]] = {
    "text": frozenset(("fields",)),
    "refusal": frozenset(("fields",)),
    "image": frozenset(("fields", "inner", "detail")),
    "audio": frozenset(("fields", "inner", "format")),
    "file": frozenset(("fields", "inner")),
    "opaque": frozenset(("verbatim",)),
    "reasoning": frozenset(("from", "also", "content")),
}
"""Per typed part kind, what the reader keeps on it (on a reasoning part: the assistant key it
was read from, the other key when both held it, and the form of the rest of the content)."""

CALL_KEYS: Mapping[str, frozenset[str]] = {
    "function": frozenset(("fields", "inner", "arguments")),
    "custom": frozenset(("fields", "inner")),
    "legacy": frozenset(("inner", "arguments")),
}
"""Per way a call is written: in ``tool_calls`` as a function or a custom call, or as the
id-less legacy ``function_call`` (one object: its unknown keys are all ``inner``)."""

CITATION_KEYS = frozenset(("fields", "inner", "absent"))
AUDIO_KEYS = frozenset(("fields",))

PART_NAMES = {
    "text": "a text part",
    "refusal": "a refusal part",
    "image": "an image part",
    "audio": "an audio part",
    "file": "a file part",
    "opaque": "an opaque part",
    "reasoning": "a reasoning part",
}
ROLE_NAMES = {
    "system": "a system message",
    "developer": "a developer message",
    "user": "a user message",
    "assistant": "an assistant message",
    "tool": "a tool message",
    "function": "a function message",
}
_CALL_NAMES = {
    "function": "a function tool call",
    "custom": "a custom tool call",
    "legacy": "an id-less call (the legacy function_call)",
}


def refuse_unknown(
    writer: PartWriter, own: Mapping[str, Any], known: frozenset[str], what: str, where: str
) -> None:
    """Refuse the first key of ``own`` (a namespace at ``where``) not in ``known``."""
    for key in own:
        if key not in known:
            writer.refuse(
                f"{key!r} is no key the {writer.source} reader keeps on {what} (it keeps "
                f"{', '.join(sorted(known))}): nothing writes it, so it would be lost",
                json_path(where, key),
            )


def refuse_untyped(writer: PartWriter, value: Any, kind: str, what: str, path: str) -> None:
    """``malformed_event``: a known key's value (at ``path``) is not the ``kind`` the reader
    keeps there, and the writer would pass over it without a word."""
    writer.malformed(
        f"{path[1:]} must be {kind} ({what}), as to_messages writes it; got "
        f"{type(value).__name__} {short_repr(value)}",
        path,
    )


def check_call(writer: PartWriter, own: Mapping[str, Any], way: str, path: str) -> None:
    """The namespace of the call at ``path`` (``.tool_calls[k]``), written ``way``
    (``CALL_KEYS``): a key the reader does not keep there, or argument text that is none."""
    where = f"{path}.metadata.{writer.source}"
    if not CALL_KEYS[way].issuperset(own):
        refuse_unknown(writer, own, CALL_KEYS[way], _CALL_NAMES[way], where)
    if "arguments" in own and type(own["arguments"]) is not str:
        refuse_untyped(writer, own["arguments"], "a string", "the call's argument text",
                       f"{where}.arguments")


def check_reply(
    writer: PartWriter, own: Mapping[str, Any], out: dict[str, Any], where: str
) -> None:
    """Refuse an assistant's kept refusal spelling that the message, written as ``out``, is
    not written in, or a content form beside it (the reader keeps only the refusal's)."""
    if "content" in own:
        writer.refuse(
            f"the kept form {own['content']!r} of an empty content beside the refusal "
            f"spelling {own['refusal']!r}: the reader keeps only the refusal's (it names "
            "the content too), so the form would be lost",
            f"{where}.content",
        )
    if own["refusal"] is None:  # (the writer takes it for no spelling at all)
        writer.refuse(
            "the kept refusal spelling is null, which the reader never keeps (it keeps a "
            "spelling only for a refusal not written as content null + refusal): it would "
            "be lost",
            f"{where}.refusal",
        )
    read_back = _refusal_form(out)
    if own["refusal"] == "after_parts" and out.get("content") == "" and writer.drop:
        return  # every part before the refusal was left out by name (drop=...)
    if own["refusal"] != read_back:
        got = "no spelling" if read_back is None else f"the spelling {read_back!r}"
        writer.refuse(
            f"the kept refusal spelling {own['refusal']!r} is not how this message's "
            f"content ({_content_shape(out)}) is written: it reads back with {got}, so "
            "the kept one would be lost",
            f"{where}.refusal",
        )


def _refusal_form(out: dict[str, Any]) -> str | None:
    """The refusal spelling the reader keeps for the written assistant message ``out``
    (``_reply.ReplyReader.refusal``), or None when it keeps none."""
    refusal = out.get("refusal")
    if refusal is None:  # no refusal key, or a null one
        content = out.get("content")
        lone = (
            isinstance(content, list)
            and len(content) == 1
            and isinstance(content[0], dict)
            and content[0].get("type") == "refusal"
            and len(content[0]) == 2  # type and refusal: nothing the part keeps of its own
        )
        return "part" if lone else None
    if "content" not in out:
        return "absent"
    content = out["content"]
    if isinstance(content, list):
        return "after_parts"
    if content is None:
        return None if refusal else "null"
    if content:
        return "after_text"
    return "empty" if refusal else None


def _content_shape(out: dict[str, Any]) -> str:
    refusal = "a refusal key" if out.get("refusal") is not None else "no refusal key"
    if "content" not in out:
        return f"no content, {refusal}"
    content = out["content"]
    if isinstance(content, list):
        return f"{len(content)} part(s), {refusal}"
    return f"content {'null' if content is None else repr(content[:20])}, {refusal}"
