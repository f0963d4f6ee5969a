"""Assembling written entries into turns of one shape: roles, history or pairs."""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

from typing_extensions import assert_never

from tracebridge._json import json_path, same_json
from tracebridge._shape import UNCHECKED, unchecked_field
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import AIMessage, AnyMessage, HumanMessage, messages_of
from tracebridge.validation import validate

from ._files import FILE_FIELDS
from ._records import is_record
from ._write import (
    NAME,
    SHAPES,
    Entry,
    Omission,
    Options,
    Shape,
    check_options,
    leave_out,
    read_entry,
    refuse,
    to_entries,
)

__all__ = ["Origin", "from_messages", "write_turns"]

_CAMEL = {"retrieval_context": "retrievalContext", "input_files": "inputFiles",
          "output_files": "outputFiles"}
# Keys an ``extra`` entry may not take in a written turn: they would change what the turn
# says, or make to_messages read it as another shape.
_RESERVED: dict[Shape, frozenset[str]] = {
    "roles": frozenset({"role", "content", "retrieval_context", "metadata", "input_files",
                        "output_files", *_CAMEL.values(), "input", "actual_output"}),
    "history": frozenset(),
    "pairs": frozenset({"input", "actual_output", "retrieval_context", "role"}),
}
# A turn holding all of id, index and a session key is read as a Trace record (fewer of them
# are extra keys like any other, and are written back).
_RECORD_MARKERS = frozenset({"id", "index", "session_id", "sessionId"})
_NO_OPTIONS = Options()


class Origin(NamedTuple):
    """Where a written turn came from, as indexes of the messages."""

    completed_by: int
    """The message that completed it (a pair's answer; a joined turn's first message)."""
    fields: int
    """The message whose Galtea fields it holds: that one, unless a join took a later one's."""
    files: int
    """The message its files came from: that one, unless a join took a later one's."""

    @classmethod
    def of(cls, entry: Entry) -> Origin:
        return cls(entry.index, entry.fields_index, entry.files_index)

    @classmethod
    def given(cls, origin: Origin | int) -> Origin:
        """An origin as ``write_turns`` gives it: an ``Origin``, or the index of a plain
        message, which is all three (made into an ``Origin`` only when asked for)."""
        return origin if isinstance(origin, Origin) else cls(origin, origin, origin)


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
    else ``roles`` (``traces.create_batch``). ``history`` is what
    ``test_cases.create(conversation_history=...)`` takes: role and text only. ``pairs`` needs
    user, assistant, user, assistant, ... ending with an answer. Each option accepts one loss:
    ``skip_system`` (system messages), ``fold_tools`` (tool calls and results; an AIMessage
    left with nothing to write is left out), ``drop_non_text`` (image, audio, reasoning and
    opaque parts, and files a shape cannot attach), ``drop_names`` (message names; message ids
    are never written), ``join_consecutive=<separator>`` (consecutive messages of one role
    become one turn), and ``drop`` names the losses in ``DROPPABLE``. What they left out is
    appended to ``omitted`` when given.

    >>> from tracebridge import AIMessage, HumanMessage
    >>> from_messages([HumanMessage(content="hi"), AIMessage(content="hello")], shape="pairs")
    [{'input': 'hi', 'actual_output': 'hello'}]
    """
    check_options(join_consecutive, drop, omitted)
    dropped = tuple(drop)
    defaults = (  # a flag that is not False is True, or refused by Options
        skip_system is False and fold_tools is False and drop_non_text is False
        and drop_names is False
    )
    if dropped or join_consecutive is not None or not defaults:
        options = Options(
            skip_system, fold_tools, drop_non_text, drop_names, join_consecutive, dropped
        )
    else:
        options = _NO_OPTIONS  # options are read by truth alone: the same as the defaults
    turns, _ = write_turns(messages, shape, options, omitted)
    return turns


def write_turns(
    messages: Sequence[AnyMessage],
    shape: Shape | None,
    options: Options,
    omitted: list[Omission] | None,
    context_on_last: bool = False,
) -> tuple[list[dict[str, Any]], list[Origin | int]]:
    """The turns, and for each turn the messages it came from (``Origin``, or the index of
    a plain message: ``Origin.given`` makes it one).

    ``context_on_last``: the last turn, when an answer, keeps its ``retrieval_context`` in
    ``history`` too (``split_current_turn`` has a place for the current answer's).
    """
    if shape is not None and shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(map(repr, SHAPES))}, got {shape!r}")
    check_options(options.join_consecutive, options.drop, omitted)
    messages = messages_of(messages, NAME)
    # The conversation rules, as every writer checks them: a result that answers nothing, a
    # call id used twice, a call left unanswered before the conversation goes on, or no
    # message at all is broken evidence, which fold_tools must not hide by leaving the tool
    # activity out (a call still pending at the end is allowed: a trace cut mid-tool). Without
    # fold_tools any tool call or result is refused while writing (Galtea turns cannot hold
    # it), so the rules are checked after: only an empty conversation is left for them.
    if options.fold_tools:
        validate(messages, allow_pending=True, source=NAME)
    found: list[Omission] = []
    try:
        written = _written(messages, shape, options, found, context_on_last)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(messages, NAME)
        if refused is None:
            raise
        raise refused from None
    if not options.fold_tools:
        validate(messages, allow_pending=True, source=NAME)
    if not written[0]:  # messages there were (validate says so), but the options left out all
        raise TraceError(
            "empty_conversation",
            f"no turn to write: skip_system / fold_tools left out all {len(messages)} "
            f"message(s), and Galtea takes no empty conversation (traces.create_batch refuses "
            f"one)",
            source=NAME,
        )
    if omitted is not None:
        omitted.extend(found)
    return written


def _written(
    messages: list[AnyMessage], shape: Shape | None, options: Options, found: list[Omission],
    context_on_last: bool,
) -> tuple[list[dict[str, Any]], list[Origin | int]]:
    if options.join_consecutive is None and shape != "pairs":
        written = _one_turn_each(messages, shape, options, found, context_on_last)
        if written is not None:
            return written
    if shape is None:
        shape = _recorded_shape(messages)
    entries = to_entries(messages, shape, options, found)
    if options.join_consecutive is not None:
        entries = _join(entries, options.join_consecutive, options, found)
    origins: list[Origin | int]
    if shape == "pairs":
        turns, origins = _pairs(entries, options, found)
    elif shape == "roles":
        turns, origins = [_role_turn(entry) for entry in entries], [Origin.of(e) for e in entries]
    elif shape == "history":
        last = len(entries) - 1
        turns = [_history_turn(entry, options, found, context_on_last and k == last)
                 for k, entry in enumerate(entries)]
        origins = [Origin.of(entry) for entry in entries]
    else:
        assert_never(shape)
    return turns, origins


def _one_turn_each(
    messages: Sequence[AnyMessage], shape: Shape | None, options: Options,
    found: list[Omission], context_on_last: bool,
) -> tuple[list[dict[str, Any]], list[Origin | int]] | None:
    """Roles or history turns, one per message not left out; None when ``shape`` is None and
    the messages recorded the pairs shape (the caller writes pairs).

    A plain message (a user or assistant message of text alone: no name, no metadata, no
    calls, citations or audio) is written here as the general path writes it,
    ``{"role", "content"}`` in either shape, with nothing to refuse or leave out; any other
    goes through ``entry`` and ``_role_turn`` / ``_history_turn``. A plain message records no
    shape, so the shape is looked up only when the first other message comes.
    """
    # Every message is read before any entry becomes a turn, as in the general path, so that
    # the same error comes first and omissions are recorded in the same order.
    written: list[dict[str, Any] | Entry] = []
    origins: list[Origin | int] = []
    plain = True  # every message written is a plain one (a dict already)
    for i, message in enumerate(messages):
        kind = type(message)
        if kind is HumanMessage or kind is AIMessage:
            content = message.content
            if (type(content) is str and not message.metadata and message.name is None
                    and (kind is HumanMessage or not (
                        message.tool_calls or message.citations  # type: ignore[union-attr]
                        or message.audio is not None))):  # type: ignore[union-attr]
                written.append({"role": "user" if kind is HumanMessage else "assistant",
                                "content": content})
                origins.append(i)  # (an Origin only when asked for: Origin.given)
                continue
        if shape is None:
            shape = _recorded_shape(messages)
            if shape == "pairs":
                return None
        read = read_entry(message, i, shape, options, found)
        if read is not None:
            written.append(read)
            origins.append(Origin.of(read))
            plain = False
    if plain:
        return written, origins  # type: ignore[return-value]  # dicts alone
    last = len(written) - 1
    turns = [
        turn if isinstance(turn, dict)
        else _role_turn(turn) if shape == "roles"
        else _history_turn(turn, options, found, context_on_last and k == last)
        for k, turn in enumerate(written)
    ]
    return turns, origins


def _recorded_shape(messages: Sequence[AnyMessage]) -> Shape:
    for message in messages:
        namespace = getattr(message, "metadata", {}).get(NAME)
        if isinstance(namespace, dict) and namespace.get("shape") == "pairs":
            return "pairs"
    return "roles"


def _join(entries: list[Entry], separator: str, options: Options,
          found: list[Omission]) -> list[Entry]:
    joined: list[Entry] = []
    for entry in entries:
        last = joined[-1] if joined else None
        if last is None or last.role != entry.role:
            joined.append(Entry(entry.role, entry.text, entry.index, dict(entry.namespace),
                                list(entry.files)))
            continue
        said, saying = _saying(last.namespace), _saying(entry.namespace)
        if said and saying and not same_json(said, saying, zero_signs=True):
            raise _unjoinable(last.fields_index, entry.index)
        if last.files and entry.files:
            raise _unjoinable(last.files_index, entry.index)
        if last.files and entry.text:
            # one turn holds its text before its files: this text would move before them
            leave_out("part_order" in options.drop,
                      Omission(entry.index, "part_order", "drop=part_order",
                               f"text written before the files of messages[{last.files_index}]"),
                      found, f"messages[{entry.index}].content",
                      f"text after the files of messages[{last.files_index}] it is joined to",
                      "a Galtea turn holds its text, then its files")
        # a message with no text (files alone, or emptied by an option) adds no boundary
        last.text = separator.join(text for text in (last.text, entry.text) if text)
        # the fields that say something; when both say the same, the first one's (spelling,
        # nulls and empty file lists included)
        if (saying and not said) or not last.namespace:
            last.namespace, last.fields_index = dict(entry.namespace), entry.index
        if not last.files and entry.files:
            last.files, last.files_index = list(entry.files), entry.index
        found.append(Omission(entry.index, "joined", "join_consecutive",
                              f"joined into the {entry.role} turn of messages[{last.index}]"))
    return joined


def _unjoinable(held_by: int, index: int) -> TraceError:
    """The refusal to join messages[index] to the turn whose fields or files messages[held_by]
    gave (compared as JSON: ``1`` and ``true`` are two values, and one would be lost)."""
    return refuse(
        index,
        f"messages[{index}].metadata.{NAME}",
        f"cannot join messages[{held_by}] and messages[{index}]: both carry Galtea fields "
        f"(retrieval_context, metadata, files or extra keys) and one turn holds one set",
    )


def _extra(entry: Entry, shape: Shape) -> dict[str, Any]:
    extra: dict[str, Any] = entry.namespace.get("extra", {})
    clashes = sorted(key for key in extra if key in _RESERVED[shape])
    if clashes:
        raise refuse(
            entry.fields_index,
            json_path(f"messages[{entry.fields_index}].metadata.{NAME}.extra", clashes[0]),
            f"extra key(s) {clashes} would take the place of {with_article(shape)} turn's own "
            "field",
        )
    markers = sorted(key for key in extra if key in _RECORD_MARKERS)
    if is_record(extra):
        raise refuse(
            entry.fields_index,
            json_path(f"messages[{entry.fields_index}].metadata.{NAME}.extra", markers[0]),
            f"extra keys {markers} would make the {shape} turn read as a Trace record "
            f"(id, index and session_id mark one)",
        )
    return copy.deepcopy(extra)  # the turn must not share lists/dicts with a frozen message


def _spelled(entry: Entry, key: str) -> str:
    camel = _CAMEL.get(key)
    return camel if camel is not None and camel in entry.namespace.get("aliases", []) else key


def _role_turn(entry: Entry) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": entry.role, "content": entry.text}
    if "retrieval_context" in entry.namespace:
        turn[_spelled(entry, "retrieval_context")] = entry.namespace["retrieval_context"]
    if "metadata" in entry.namespace:
        turn["metadata"] = copy.deepcopy(entry.namespace["metadata"])
    empty = entry.namespace.get("empty_files", [])
    for field in FILE_FIELDS:
        files = [written for goes_to, written in entry.files if goes_to == field]
        if files or field in empty:
            turn[_spelled(entry, field)] = files
    turn.update(_extra(entry, "roles"))
    return turn


def _history_turn(entry: Entry, options: Options, found: list[Omission],
                  keep_context: bool = False) -> dict[str, Any]:
    """``{"role", "content"}``: ``conversation_history`` takes text only (the API refuses a
    ``retrieval_context``). A null field or an empty file list says nothing and is not written.
    ``keep_context``: an answer's ``retrieval_context`` is written too (the current answer
    ``split_current_turn`` takes apart)."""
    turn: dict[str, Any] = {"role": entry.role, "content": entry.text}
    at = f"messages[{entry.fields_index}].metadata.{NAME}"
    why = "conversation_history turns hold role and text only"
    context = entry.namespace.get("retrieval_context")
    if context is not None and keep_context and entry.role == "assistant":
        turn["retrieval_context"] = context
    elif context is not None:
        leave_out("retrieval_context" in options.drop,
                  Omission(entry.fields_index, "retrieval_context", "drop=retrieval_context",
                           f"retrieval_context {short_repr(context)}"),
                  found, f"{at}.retrieval_context", "a retrieval_context", why)
    kept = {key: entry.namespace[key] for key in ("metadata", "extra")
            if entry.namespace.get(key) is not None}
    if kept:
        leave_out("turn_metadata" in options.drop,
                  Omission(entry.fields_index, "turn_metadata", "drop=turn_metadata",
                           f"turn fields {short_repr(kept)}"),
                  found, at, "the turn's metadata and other keys", why)
    return turn


def _pairs(entries: list[Entry], options: Options,
           found: list[Omission]) -> tuple[list[dict[str, Any]], list[Origin | int]]:
    turns: list[dict[str, Any]] = []
    origins: list[Origin | int] = []
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
        _question_fields(question, options, found)
        metadata = answer.namespace.get("metadata")
        if metadata is not None:
            leave_out("turn_metadata" in options.drop,
                      Omission(answer.fields_index, "turn_metadata", "drop=turn_metadata",
                               f"turn metadata {short_repr(metadata)}"),
                      found, f"messages[{answer.fields_index}].metadata.{NAME}.metadata",
                      "the turn's metadata", "a pair has no metadata field (shape='roles' has)")
        pair: dict[str, Any] = {"input": question.text, "actual_output": answer.text}
        if "retrieval_context" in answer.namespace:
            pair["retrieval_context"] = answer.namespace["retrieval_context"]
        pair.update(_extra(answer, "pairs"))
        turns.append(pair)
        origins.append(Origin.of(answer))
    return turns, origins


def _question_fields(question: Entry, options: Options, found: list[Omission]) -> None:
    """A pair's question is its text alone: a user message's ``retrieval_context`` needs
    ``drop=["retrieval_context"]``, its ``metadata`` and extra keys ``drop=["turn_metadata"]``."""
    held = _saying(question.namespace)
    at = f"messages[{question.fields_index}].metadata.{NAME}"
    why = ("a pair keeps retrieval_context and extra keys on its answer only (shape='roles' "
           "keeps them on the user turn)")
    context = held.pop("retrieval_context", None)
    if context is not None:
        leave_out("retrieval_context" in options.drop,
                  Omission(question.fields_index, "retrieval_context", "drop=retrieval_context",
                           f"retrieval_context {short_repr(context)}"),
                  found, at, "a user message's retrieval_context", why)
    if held:
        leave_out("turn_metadata" in options.drop,
                  Omission(question.fields_index, "turn_metadata", "drop=turn_metadata",
                           f"turn fields {short_repr(held)}"),
                  found, at, "the user message's metadata and other keys", why)


def _saying(namespace: dict[str, Any]) -> dict[str, Any]:
    """The Galtea fields of a message that say something, which a pair's question cannot hold
    and two joined messages must not say differently: spellings, empty file lists, a null
    metadata and a null retrieval_context say nothing (every message read from the SDK's own
    objects carries them)."""
    return {key: value for key, value in namespace.items()
            if key not in ("aliases", "empty_files")
            and not (key in ("metadata", "retrieval_context") and value is None)}
