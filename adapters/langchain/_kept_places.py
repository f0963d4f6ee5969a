"""Where a typed message holds this adapter's metadata, for the writer's errors.

The writer reads ``metadata["langchain"]`` as the reader wrote it; a crafted value of
another type can make it fall over. ``kept_in`` names the place to blame: a namespace that is
not an object, or a key holding a value of a type the reader never keeps there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AIMessage, Message

from ._classes import NAME

__all__ = [
    "CALL_KEYS",
    "GROUP_MARKERS",
    "MESSAGE_KEYS",
    "OPAQUE_PART_KEYS",
    "PART_KEYS",
    "STRING_PART_KEYS",
    "check_types",
    "kept_in",
    "refuse_unknown",
]

GROUP_MARKERS = ("tool_result", "from_human", "with_tool_results")
"""Metadata keys of messages that came from (and go back into) one human message."""


def kept_in(messages: Sequence[Message], i: int) -> tuple[int, str, str | None] | None:
    """Where the message at ``i`` holds this adapter's metadata (on it, its parts, calls,
    citations or audio reply), with the tool results written back with it into one human
    message, and what was expected there: the first place whose namespace is not an object,
    else the first key holding a value of a type the reader never keeps there, else the
    first place; None when none holds any."""
    group = [i]
    for j in range(i + 1, len(messages)):
        own = messages[j].metadata.get(NAME)
        if not (isinstance(own, dict) and not own.keys().isdisjoint(GROUP_MARKERS)):
            break
        group.append(j)
    found = [(j, place) for j in group for place in _kept(messages[j])]
    for j, (where, _, namespace) in found:
        if not isinstance(namespace, dict):
            return j, where, "an object"
    for j, (where, kind, namespace) in found:
        wrong = _wrong_typed(namespace, _KEPT_TYPES[kind])
        if wrong is None and kind == "message" and type(namespace.get("from_human")) is dict:
            # the fields of the human message tool results came from
            wrong = _wrong_typed(namespace["from_human"], _KEPT_TYPES[kind], ".from_human")
        if wrong is not None:
            return j, f"{where}{wrong[0]}", wrong[1]
    return (found[0][0], found[0][1][0], None) if found else None


def _wrong_typed(
    namespace: dict[str, Any], types: dict[str, tuple[type, ...]], prefix: str = ""
) -> tuple[str, str] | None:
    """The first key of ``namespace`` whose value is of no type the reader keeps there, and
    those types."""
    for key, value in namespace.items():
        expected = types.get(key)
        if expected is not None and type(value) not in expected:
            return f"{prefix}.{key}", " or ".join(_TYPE_NAMES[t] for t in expected)
    return None


_TYPE_NAMES = {
    dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer"
}

_KEPT_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "message": {
        "class": (str,),
        "role": (str,),
        "extra": (dict,),
        "additional_kwargs": (dict,),
        "response_metadata": (dict,),
        "usage_metadata": (dict,),
        "tool_call_chunks": (list,),
        "chunk_position": (str,),
        "artifact_dropped": (str,),
        "tool_result": (dict,),
        "with_tool_results": (bool,),
        "from_human": (dict, str),
    },
    "part": {
        "shape": (str,),
        "block": (dict,),
        "bytes": (list,),
        "from": (str,),
        "content": (str,),
    },
    "call": {
        "content_block": (dict,),
        "invalid_tool_call": (dict,),
        "in_content": (bool,),
        "from": (str,),
    },
    "citation": {
        "annotation": (dict,),
        "in_block": (int,),
        "at": (int,),
        "outside": (bool,),
        "in_list": (str,),
        "title_key": (str,),
    },
    "audio": {},
}
"""The types of the values the reader keeps under each key, by the place holding them (a
kept audio reply's keys are the reply's own, of any type)."""


MESSAGE_KEYS = frozenset(_KEPT_TYPES["message"])
"""The message keys the reader keeps besides the fields of the class it read (which
``_write._check_kept`` holds to the class written)."""

CALL_KEYS = frozenset(_KEPT_TYPES["call"])
"""What the reader keeps on a call: its content block, its ``invalid_tool_calls`` entry's
other keys, and the marks of a call named only by a block or read from ``function_call``."""

PART_KEYS = frozenset(("shape", "block", "bytes"))
"""What the reader keeps on a part written as a content block (its layout, the block
without the mapped fields, where raw bytes were). The others of ``_KEPT_TYPES["part"]``
(``from``, ``content``) are kept only on a reasoning or refusal part that goes back into
``additional_kwargs``, whose writer checks them."""

STRING_PART_KEYS = frozenset(("shape",))
"""What the reader keeps on a text part read from a bare string in a content list."""

OPAQUE_PART_KEYS = frozenset(("bytes",))
"""What the reader keeps on an opaque part: where its raw bytes were."""


def refuse_unknown(kept: dict[str, Any], known: frozenset[str], what: str, where: str) -> None:
    """``not_representable`` at the first key of ``kept`` (the namespace at ``where``) that
    is not in ``known``: nothing writes it, so it would be lost."""
    for key in kept:
        if key not in known:
            raise TraceError(
                "not_representable",
                f"{key!r} is no key the langchain reader keeps on {what} (it keeps "
                f"{', '.join(sorted(known))}): nothing writes it, so it would be lost",
                path=f"{where}.{key}",
                source=NAME,
            )


def check_types(kept: dict[str, Any], kind: str, where: str) -> None:
    """``malformed_event`` at the first key of ``kept`` (a namespace of the ``kind`` of place
    at ``where``) whose value is of no type the reader keeps there."""
    wrong = _wrong_typed(kept, _KEPT_TYPES[kind])
    if wrong is not None:
        raise TraceError(
            "malformed_event",
            f"metadata.{NAME}{wrong[0]} is {short_repr(kept[wrong[0][1:]])}, not {wrong[1]}, "
            f"as to_messages writes it",
            path=f"{where}{wrong[0]}",
            source=NAME,
        )


def _kept(message: Message) -> list[tuple[str, str, Any]]:
    """Each place of ``message`` holding this adapter's namespace, with its kind (a key of
    ``_KEPT_TYPES``) and the namespace."""
    places: list[tuple[str, str, Any]] = [("", "message", message)]
    if not isinstance(message.content, str):
        places += [(f".content[{j}]", "part", part) for j, part in enumerate(message.content)]
    if isinstance(message, AIMessage):
        places += [
            (f".tool_calls[{k}]", "call", call) for k, call in enumerate(message.tool_calls)
        ]
        places += [
            (f".citations[{k}]", "citation", cited) for k, cited in enumerate(message.citations)
        ]
        if message.audio is not None:
            places.append((".audio", "audio", message.audio))
    return [(f"{where}.metadata.{NAME}", kind, held.metadata[NAME])
            for where, kind, held in places if NAME in held.metadata]
