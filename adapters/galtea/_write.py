"""The writing side of the Galtea adapter: typed messages -> ``conversation_turns``.

``galtea.py`` re-exports ``from_messages`` and builds ``split_current_turn`` on ``write_turns``.

Galtea turns hold user and assistant text and nothing else. Everything else is refused with
``not_representable`` (index and path in the typed conversation, and the option that accepts
the loss) unless the caller names that option; what an option leaves out is recorded as an
``Omission`` in the caller's ``omitted`` list. The return value stays a plain list of turn
dicts, so ``from_messages(to_messages(turns)) == turns``.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from typing_extensions import assert_never

from tracebridge._json import json_path
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolMessage,
)

__all__ = ["DROPPABLE", "FIELDS", "NAME", "Omission", "OmissionKind", "Options", "Shape",
           "from_messages", "refuse", "write_turns"]

NAME = "galtea"

Shape = Literal["pairs", "roles"]
"""``pairs``: ``{"input", "actual_output"}`` dicts; ``roles``: ``{"role", "content"}`` dicts."""

OmissionKind = Literal[
    "system_message", "tool_calls", "tool_result", "non_text_part", "name", "joined",
    "refusal", "citations", "audio_reply", "part_boundaries",
]

DROPPABLE = ("refusals", "citations", "audio_replies", "part_boundaries")
"""What ``from_messages(drop=...)`` accepts losing, besides the boolean options:

* ``refusals``: a refusal is written as the answer's plain text (that it was a refusal is lost);
* ``citations``: an answer's citations are left out;
* ``audio_replies``: an answer's audio reply is left out;
* ``part_boundaries``: several text parts are written as one text, joined by newlines.
"""

_NAMESPACE_KEYS = ("shape", "retrieval_context", "extra")
FIELDS: dict[Shape, frozenset[str]] = {
    "roles": frozenset({"role", "content", "retrieval_context"}),
    "pairs": frozenset({"input", "actual_output", "retrieval_context"}),
}
# Keys an ``extra`` entry may not take in a written turn: they would change what the turn
# says, or make to_messages read it as the other shape.
_RESERVED: dict[Shape, frozenset[str]] = {
    "roles": frozenset({"role", "content", "retrieval_context", "input", "actual_output"}),
    "pairs": frozenset({"input", "actual_output", "retrieval_context", "role"}),
}


@dataclass(frozen=True)
class Omission:
    """One thing ``from_messages`` left out because the caller accepted that loss."""

    index: int
    """Position of the message in the typed conversation."""
    what: OmissionKind
    """What kind of thing was left out."""
    option: str
    """The option that accepted the loss (``skip_system``, ``fold_tools``, ...)."""
    detail: str
    """What it was, in a few words."""


@dataclass(frozen=True)
class Options:
    skip_system: bool = False
    fold_tools: bool = False
    drop_non_text: bool = False
    drop_names: bool = False
    join_consecutive: str | None = None
    drop: Collection[str] = ()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.drop) - set(DROPPABLE))
        if isinstance(self.drop, str) or unknown:
            raise ValueError(
                f"drop={self.drop!r} names nothing droppable; choose from {DROPPABLE}"
            )


@dataclass
class _Entry:
    """A user or assistant text on its way to becoming (part of) a turn."""

    role: Literal["user", "assistant"]
    text: str
    index: int
    namespace: dict[str, Any]
    """The message's ``metadata["galtea"]`` without ``shape``."""


def from_messages(
    messages: Sequence[AnyMessage],
    *,
    shape: Shape | None = None,
    skip_system: bool = False,
    fold_tools: bool = False,
    drop_non_text: bool = False,
    drop_names: bool = False,
    join_consecutive: str | None = None,
    drop: Collection[str] = (),
    omitted: list[Omission] | None = None,
) -> list[dict[str, Any]]:
    """Galtea turns from typed messages.

    ``shape`` defaults to the one ``to_messages`` recorded (pairs when any message says so),
    else ``roles``. ``pairs`` needs user, assistant, user, assistant, ... ending with an answer.
    Each option accepts one loss: ``skip_system`` (system messages), ``fold_tools`` (tool
    calls and results; an AIMessage left with no text and no Galtea fields is left out),
    ``drop_non_text`` (image, audio, file, reasoning and opaque parts), ``drop_names``
    (message names; message ids are never written), ``join_consecutive=<separator>``
    (consecutive messages of one role become one turn), and ``drop`` names the losses in
    ``DROPPABLE`` (refusals as plain text, citations, audio replies, text part boundaries).
    What they left out is appended to ``omitted`` when given.

    >>> from tracebridge import AIMessage, HumanMessage
    >>> from_messages([HumanMessage(content="hi"), AIMessage(content="hello")], shape="pairs")
    [{'input': 'hi', 'actual_output': 'hello'}]
    """
    options = Options(
        skip_system, fold_tools, drop_non_text, drop_names, join_consecutive, tuple(drop)
    )
    turns, _ = write_turns(messages, shape, options, omitted)
    return turns


# --- the pipeline -------------------------------------------------------------------------


def write_turns(
    messages: Sequence[AnyMessage],
    shape: Shape | None,
    options: Options,
    omitted: list[Omission] | None,
) -> tuple[list[dict[str, Any]], list[int]]:
    """The turns, and for each turn the index of the message that completed it."""
    if shape is None:
        shape = _recorded_shape(messages)
    if shape not in ("pairs", "roles"):
        raise ValueError(f"shape must be 'pairs' or 'roles', got {shape!r}")
    if options.join_consecutive is not None and type(options.join_consecutive) is not str:
        raise TypeError(
            f"join_consecutive must be a separator string or None, "
            f"got {short_repr(options.join_consecutive)}"
        )
    found: list[Omission] = []
    entries: list[_Entry] = []
    for i, message in enumerate(messages):
        entry = _entry(message, i, options, found)
        if entry is not None:
            entries.append(entry)
    if options.join_consecutive is not None:
        entries = _join(entries, options.join_consecutive, found)
    if shape == "pairs":
        turns, origins = _pairs(entries)
    elif shape == "roles":
        turns, origins = _role_turns(entries)
    else:
        assert_never(shape)
    if omitted is not None:
        omitted.extend(found)
    return turns, origins


def _recorded_shape(messages: Sequence[AnyMessage]) -> Shape:
    for message in messages:
        namespace = getattr(message, "metadata", {}).get(NAME)
        if isinstance(namespace, dict) and namespace.get("shape") == "pairs":
            return "pairs"
    return "roles"


def refuse(index: int, path: str, detail: str) -> TraceError:
    return TraceError("not_representable", detail, index=index, path=path, source=NAME)


def _leave_out(accepted: bool, omission: Omission, found: list[Omission], path: str,
               what: str) -> None:
    """Record ``omission`` when its option is on; otherwise refuse, naming the option."""
    if not accepted:
        option = omission.option
        spelled = option[len("drop=") :] if option.startswith("drop=") else None
        accept = f"drop=[{spelled!r}]" if spelled else f"{option}=True"
        raise refuse(
            omission.index,
            path,
            f"{what}: Galtea turns hold only user and assistant text; "
            f"{accept} leaves it out (recorded in omitted)",
        )
    found.append(omission)


def _entry(message: Any, i: int, options: Options, found: list[Omission]) -> _Entry | None:
    """The message as a user/assistant text, or None when an option left all of it out."""
    at = f"messages[{i}]"
    if isinstance(message, SystemMessage):
        detail = f"system message {short_repr(message.text)}"
        _leave_out(options.skip_system, Omission(i, "system_message", "skip_system", detail),
                   found, at, "a system message")
        return None
    if isinstance(message, ToolMessage):
        detail = f"result of {message.name or message.tool_call_id!r}: {short_repr(message.text)}"
        _leave_out(options.fold_tools, Omission(i, "tool_result", "fold_tools", detail),
                   found, at, "a tool result")
        return None
    if isinstance(message, HumanMessage):
        role: Literal["user", "assistant"] = "user"
    elif isinstance(message, AIMessage):
        role = "assistant"
    else:
        raise TraceError(
            "malformed_event",
            f"expected a tracebridge message, got {type(message).__name__} {short_repr(message)}",
            index=i,
            path=at,
            source=NAME,
        )
    namespace = _namespace(message, i)
    # A message id is provenance, like other adapters' metadata: turns have no place for
    # it and it is not part of what was said, so it is not written. A name is (an agent's).
    if message.name is not None:
        _leave_out(options.drop_names,
                   Omission(i, "name", "drop_names", f"name {message.name!r}"),
                   found, f"{at}.name", f"a message name ({message.name!r})")
    text = _text(message, i, options, found)
    if isinstance(message, AIMessage):
        _answer_extras(message, i, options, found)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(call.name for call in message.tool_calls)
        empty = text == "" and not namespace
        detail = f"{len(message.tool_calls)} tool call(s): {calls}" + (
            "; the message had no text and is left out" if empty else ""
        )
        _leave_out(options.fold_tools, Omission(i, "tool_calls", "fold_tools", detail),
                   found, f"{at}.tool_calls", "tool calls")
        if empty:
            return None
    return _Entry(role, text, i, namespace)


def _namespace(message: HumanMessage | AIMessage, i: int) -> dict[str, Any]:
    """``metadata["galtea"]`` checked, without ``shape``; {} when absent."""
    namespace = message.metadata.get(NAME, {})  # the namespace itself is optional
    at = f"messages[{i}].metadata.{NAME}"

    def bad(detail: str, key: str | None = None) -> TraceError:
        path = at if key is None else json_path(at, key)
        return TraceError("malformed_event", detail, index=i, path=path, source=NAME)

    if not isinstance(namespace, dict):
        raise bad(f"expected a dict, got {type(namespace).__name__} {short_repr(namespace)}")
    for key in namespace:
        if key not in _NAMESPACE_KEYS:
            raise bad(f"unknown key {key!r}; the galtea namespace holds "
                      f"{', '.join(_NAMESPACE_KEYS)}", key)
    if namespace.get("shape", "pairs") != "pairs":
        raise bad(f"expected 'pairs' (roles is not recorded), got {namespace['shape']!r}",
                  "shape")
    context = namespace.get("retrieval_context")
    if context is not None and type(context) is not str:
        raise bad(f"expected a string or null, got {short_repr(context)}", "retrieval_context")
    if type(namespace.get("extra", {})) is not dict:
        raise bad(f"expected a dict of turn keys, got {short_repr(namespace['extra'])}", "extra")
    return {key: value for key, value in namespace.items() if key != "shape"}


def _answer_extras(message: AIMessage, i: int, options: Options, found: list[Omission]) -> None:
    if message.citations:
        detail = f"{len(message.citations)} citation(s)"
        _leave_out("citations" in options.drop,
                   Omission(i, "citations", "drop=citations", detail),
                   found, f"messages[{i}].citations", "citations")
    if message.audio is not None:
        detail = f"audio reply {message.audio.id!r}"
        _leave_out("audio_replies" in options.drop,
                   Omission(i, "audio_reply", "drop=audio_replies", detail),
                   found, f"messages[{i}].audio", "an audio reply")


def _text(message: HumanMessage | AIMessage, i: int, options: Options,
          found: list[Omission]) -> str:
    if isinstance(message.content, str):
        return message.content
    texts: list[str] = []
    for j, part in enumerate(message.content):
        at = f"messages[{i}].content[{j}]"
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, RefusalPart):
            # Left out, a refusal would read as an empty answer: it can only become its text.
            detail = f"refusal at content[{j}] written as text"
            _leave_out("refusals" in options.drop, Omission(i, "refusal", "drop=refusals", detail),
                       found, at, "a refusal")
            texts.append(part.text)
        else:
            detail = f"{part.type} part at content[{j}]"
            _leave_out(options.drop_non_text, Omission(i, "non_text_part", "drop_non_text", detail),
                       found, at, f"a {part.type} part")
    text_parts = sum(isinstance(part, TextPart) for part in message.content)
    if text_parts > 1 and text_parts == len(message.content):
        # Several parts become one string: the boundaries are part of what the hash covers.
        # (When other parts were left out or turned into text, an option already accepted
        # that this content is not written as it was.)
        detail = f"{len(texts)} text parts joined by newlines"
        _leave_out("part_boundaries" in options.drop,
                   Omission(i, "part_boundaries", "drop=part_boundaries", detail),
                   found, f"messages[{i}].content", "several text parts")
    return "\n".join(texts)


def _join(entries: list[_Entry], separator: str, found: list[Omission]) -> list[_Entry]:
    joined: list[_Entry] = []
    for entry in entries:
        last = joined[-1] if joined else None
        if last is None or last.role != entry.role:
            joined.append(_Entry(entry.role, entry.text, entry.index, dict(entry.namespace)))
            continue
        if last.namespace and entry.namespace:
            raise refuse(
                entry.index,
                f"messages[{entry.index}].metadata.{NAME}",
                f"cannot join messages[{last.index}] and messages[{entry.index}]: both carry "
                f"Galtea fields (retrieval_context or extra keys) and one turn holds one set",
            )
        last.text = last.text + separator + entry.text
        last.namespace = last.namespace or dict(entry.namespace)
        found.append(Omission(entry.index, "joined", "join_consecutive",
                              f"joined into the {entry.role} turn of messages[{last.index}]"))
    return joined


def _extra(entry: _Entry, shape: Shape) -> dict[str, Any]:
    extra: dict[str, Any] = entry.namespace.get("extra", {})
    clashes = sorted(key for key in extra if key in _RESERVED[shape])
    if clashes:
        raise refuse(
            entry.index,
            json_path(f"messages[{entry.index}].metadata.{NAME}.extra", clashes[0]),
            f"extra key(s) {clashes} would take the place of a {shape} turn's own field",
        )
    return copy.deepcopy(extra)  # the turn must not share lists/dicts with a frozen message


def _role_turns(entries: list[_Entry]) -> tuple[list[dict[str, Any]], list[int]]:
    turns: list[dict[str, Any]] = []
    for entry in entries:
        turn: dict[str, Any] = {"role": entry.role, "content": entry.text}
        if "retrieval_context" in entry.namespace:
            context = entry.namespace["retrieval_context"]
            if entry.role == "user" and context is not None:
                raise refuse(
                    entry.index,
                    f"messages[{entry.index}].metadata.{NAME}.retrieval_context",
                    "a user message with a retrieval_context: Galtea takes it on assistant "
                    "turns only",
                )
            turn["retrieval_context"] = context
        turn.update(_extra(entry, "roles"))
        turns.append(turn)
    return turns, [entry.index for entry in entries]


def _pairs(entries: list[_Entry]) -> tuple[list[dict[str, Any]], list[int]]:
    turns: list[dict[str, Any]] = []
    origins: list[int] = []
    for k in range(0, len(entries), 2):
        question = entries[k]
        if question.role != "user":
            before = (
                "no user message comes before it"
                if k == 0
                else f"it follows the assistant message messages[{entries[k - 1].index}]"
            )
            raise refuse(
                question.index,
                f"messages[{question.index}]",
                f"an assistant message that answers no user message ({before}); a pair is "
                f"one input and its answer: join_consecutive=<separator> joins consecutive "
                f"messages, shape='roles' keeps them as they are",
            )
        if k + 1 == len(entries):
            raise refuse(
                question.index,
                f"messages[{question.index}]",
                "the last user message has no answer; a pair needs input and actual_output "
                "(shape='roles' writes a lone user turn)",
            )
        answer = entries[k + 1]
        if answer.role != "assistant":
            raise refuse(
                answer.index,
                f"messages[{answer.index}]",
                f"two user messages in a row (messages[{question.index}] and "
                f"messages[{answer.index}]); a pair holds one input: "
                f"join_consecutive=<separator> joins them, shape='roles' keeps both",
            )
        if question.namespace:
            raise refuse(
                question.index,
                f"messages[{question.index}].metadata.{NAME}",
                f"a pair keeps retrieval_context and extra keys on its answer only; this user "
                f"message carries {sorted(question.namespace)} (shape='roles' keeps them)",
            )
        pair: dict[str, Any] = {"input": question.text, "actual_output": answer.text}
        if "retrieval_context" in answer.namespace:
            pair["retrieval_context"] = answer.namespace["retrieval_context"]
        pair.update(_extra(answer, "pairs"))
        turns.append(pair)
        origins.append(answer.index)
    return turns, origins
