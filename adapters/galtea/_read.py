"""Reading Galtea ``conversation_turns``: pairs and role turns, one turn at a time.

A role turn is the Galtea SDK's ``ConversationMessage`` (5.12): ``role``, ``content`` and the
optional ``retrieval_context``, ``metadata``, ``input_files`` and ``output_files``, in snake
case or in the camelCase of its aliased dumps (``retrievalContext``, ``inputFiles``,
``outputFiles``). A pair is ``{"input", "actual_output", "retrieval_context"?}``, the turn
format of Galtea's earlier evaluation-task API. The trace-record and agent-input readers
are in ``_records.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracebridge import _build
from tracebridge._json import json_path
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AIMessage, FilePart, HumanMessage, Message, Part, TextPart

from ._files import file_fields, read_files
from ._kept import kept

__all__ = ["ROLE_KEYS", "error", "from_pair", "from_role_turn", "plain_turns", "where"]

NAME = "galtea"
# Each optional field of a role turn, with its camelCase alias (metadata has none).
_OPTIONAL: dict[str, str] = {
    "retrieval_context": "retrievalContext",
    "metadata": "metadata",
    "input_files": "inputFiles",
    "output_files": "outputFiles",
}
ROLE_KEYS = frozenset({"role", "content", *_OPTIONAL, *_OPTIONAL.values()})
_PAIR_KEYS = frozenset({"input", "actual_output", "retrieval_context"})
_ROLES = frozenset({"user", "assistant"})


def where(i: int, key: str | None = None, base: str = "conversation_turns") -> str:
    turn = f"{base}[{i}]"
    return turn if key is None else json_path(turn, key)


def error(code: Any, detail: str, i: int, key: str | None = None,
          base: str = "conversation_turns") -> TraceError:
    return TraceError(code, detail, index=i, path=where(i, key, base), source=NAME)


def _text(turn: dict[str, Any], i: int, key: str, needed_by: str, base: str) -> str:
    if key not in turn:
        raise error("malformed_event", f"missing {key!r}: {needed_by}", i, key, base)
    value = turn[key]
    if type(value) is not str:
        raise error(
            "malformed_event",
            f"expected a string, got {type(value).__name__} {short_repr(value)}",
            i, key, base,
        )
    return value


def _string_or_null(value: Any, i: int, key: str, base: str) -> str | None:
    if value is not None and type(value) is not str:
        raise error(
            "malformed_event",
            f"expected a string (or null), got {type(value).__name__} {short_repr(value)}",
            i, key, base,
        )
    return value


def from_role_turn(turn: dict[str, Any], i: int, base: str = "conversation_turns") -> Message:
    """One role turn (a ``ConversationMessage`` or its dump) as one message."""
    role = turn["role"]
    if type(role) is not str:
        raise error(
            "malformed_event",
            f"expected the role as a string ('user' or 'assistant'), got "
            f"{type(role).__name__} {short_repr(role)}",
            i, "role", base,
        )
    if role not in _ROLES:
        raise error("unknown_role", f"unknown role {role!r}: Galtea turns are 'user' or "
                    "'assistant'", i, "role", base)
    text = _text(turn, i, "content", "a role turn needs its text under 'content'", base)
    namespace: dict[str, Any] = {}
    aliases: list[str] = []
    for field, alias in _OPTIONAL.items():
        if field in turn and alias in turn and alias != field:
            raise error("malformed_event", f"the turn spells {field!r} twice ({field!r} and "
                        f"{alias!r}); one turn holds one", i, alias, base)
        if alias in turn and alias != field:
            aliases.append(alias)
    for field in ("retrieval_context", "metadata"):
        key = _OPTIONAL[field] if _OPTIONAL[field] in turn else field
        if key not in turn:
            continue
        value = turn[key]
        if field == "retrieval_context":
            namespace[field] = _string_or_null(value, i, key, base)
        elif value is None or isinstance(value, Mapping):  # kept: a plain dict, else refused
            namespace[field] = kept(value, i, where(i, key, base))
        else:
            raise error("malformed_event", f"expected a dict (or null), got "
                        f"{type(value).__name__} {short_repr(value)}", i, key, base)
    files: list[FilePart] = []
    empty: list[str] = []
    for field, key in file_fields(turn):
        found = read_files(turn[key], role, field, where(i, key, base), i)
        files.extend(found)
        if not found:
            empty.append(field)
    if empty:
        namespace["empty_files"] = empty
    if aliases:
        namespace["aliases"] = aliases
    extra = {key: value for key, value in turn.items() if key not in ROLE_KEYS}
    if extra:
        namespace["extra"] = kept(extra, i, where(i, None, base))
    content: str | list[Part] = text
    if files:
        # The turn's text first, then its files; a file-only turn ("content": "") has no
        # text part, so that a file-only message of another format reads back as it was.
        content = [*([TextPart(text=text)] if text else []), *files]
    kind = HumanMessage if role == "user" else AIMessage
    if namespace:
        return kind(content=content, metadata={NAME: namespace})
    return kind(content=content)  # the default metadata, as plain_turns gives it


def plain_turns(trace: list[Any]) -> list[Message]:
    """The messages of the leading plain role turns of ``trace``: dicts of exactly ``role``
    (``user`` or ``assistant``, a ``str`` itself) and a string ``content``, which
    ``from_role_turn`` reads as a message of that text and nothing else, with no error
    possible. It stops at the first other item, which the general reader takes from there (and
    judges).
    """
    messages: list[Message] = []
    append = messages.append
    human = _build.human
    ai = _build.ai
    for turn in trace:
        if type(turn) is not dict or len(turn) != 2:
            break
        content = turn.get("content")
        if type(content) is not str:
            break
        role = turn.get("role")
        if type(role) is not str:  # a str enum compares equal, but is not the text
            break
        if role == "user":
            append(human(content))
        elif role == "assistant":
            append(ai(content))
        else:
            break
    return messages


def from_pair(turn: dict[str, Any], i: int) -> list[Message]:
    """One pair as a user message and its answer."""
    base = "conversation_turns"
    question = _text(turn, i, "input", "a pair needs the user's query under 'input'", base)
    answer = _text(
        turn, i, "actual_output", "a pair needs the assistant's answer under 'actual_output'",
        base,
    )
    namespace: dict[str, Any] = {"shape": "pairs"}
    if "retrieval_context" in turn:
        namespace["retrieval_context"] = _string_or_null(
            turn["retrieval_context"], i, "retrieval_context", base
        )
    extra = {key: value for key, value in turn.items() if key not in _PAIR_KEYS}
    if extra:
        namespace["extra"] = kept(extra, i, where(i))
    return [
        HumanMessage(content=question, metadata={NAME: {"shape": "pairs"}}),
        AIMessage(content=answer, metadata={NAME: namespace}),
    ]

