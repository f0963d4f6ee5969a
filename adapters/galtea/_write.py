"""The writing side of the Galtea adapter: typed messages -> turn dicts.

Three shapes: ``roles`` (the Galtea SDK's ``ConversationMessage``, what
``traces.create_batch(conversation_turns=...)`` takes), ``history`` (what
``test_cases.create(conversation_history=...)`` takes: role and text only) and ``pairs`` (the
turns of Galtea's earlier evaluation-task API). Galtea turns hold user and assistant text, files
by uri, and the turn's own fields. Everything else is refused with ``not_representable`` (index
and path in the typed conversation, and the option that accepts the loss) unless the caller
names that option; what an option leaves out is recorded as an ``Omission`` in the caller's
``omitted`` list. The return value stays a plain list of turn dicts, so
``from_messages(to_messages(turns)) == turns``. Turns are assembled in ``_turns.py``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tracebridge._drop import check_drop, check_flag
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    FilePart,
    HumanMessage,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolMessage,
)

from ._files import FILE_FIELDS, FileField, checked_namespace, part_field, write_file

__all__ = ["ALIASES", "DROPPABLE", "NAME", "SHAPES", "Entry", "Omission", "OmissionKind", "Options",
           "Shape", "check_options", "leave_out", "read_entry", "read_namespace", "refuse",
           "to_entries"]

NAME = "galtea"

Shape = Literal["roles", "history", "pairs"]
"""``roles``: ``{"role", "content", ...}`` turns; ``history``: ``{"role", "content"}`` only;
``pairs``: ``{"input", "actual_output"}`` dicts."""
SHAPES: tuple[Shape, ...] = ("roles", "history", "pairs")

OmissionKind = Literal[
    "system_message", "tool_calls", "tool_result", "non_text_part", "name", "joined",
    "refusal", "citations", "audio_reply", "part_boundaries", "part_order",
    "retrieval_context", "turn_metadata", "trace_record", "agent_context",
]

DROPPABLE = ("refusals", "citations", "audio_replies", "part_boundaries", "part_order",
             "retrieval_context", "turn_metadata", "trace_records", "agent_context")
"""What ``from_messages(drop=...)`` accepts losing, besides the boolean options:

* ``refusals``: a refusal is written as the answer's plain text (that it was a refusal is lost);
* ``citations``: an answer's citations are left out;
* ``audio_replies``: an answer's audio reply is left out;
* ``part_boundaries``: several text parts are written as one text, joined by newlines (an
  empty text part beside files is left out, content of no parts is written as empty text);
* ``part_order``: a turn's files are written after its text, input files before output files;
* ``retrieval_context``: a turn's retrieval context, where the shape has no place for it;
* ``turn_metadata``: a turn's ``metadata`` and other keys, where the shape has no place for them;
* ``trace_records``: the ``Trace`` record a message was read from (id, status, latency, ...);
* ``agent_context``: the ``AgentInput`` fields a conversation was read with (session, context).
"""

_NAMESPACE_KEYS = ("shape", "retrieval_context", "metadata", "empty_files", "aliases", "extra",
                   "trace", "agent_input")
ALIASES = ("retrievalContext", "inputFiles", "outputFiles")
_RECORDS: tuple[tuple[str, OmissionKind, str, str, str], ...] = (
    ("trace", "trace_record", "trace_records", "the Trace record the message was read from",
     "a turn has no place for its id, status, error, latency, usage or cost"),
    ("agent_input", "agent_context", "agent_context",
     "the AgentInput fields the conversation came with",
     "a turn has no place for the session, trace id or context data"),
)


@dataclass(frozen=True)
class Omission:
    """One thing ``from_messages`` left out because the caller accepted that loss."""

    index: int
    """Position of the message in the typed conversation."""
    what: OmissionKind
    """What kind of thing was left out."""
    option: str
    """The option that accepted the loss (``skip_system``, ``drop=refusals``, ...)."""
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
        for flag in ("skip_system", "fold_tools", "drop_non_text", "drop_names"):
            check_flag(flag, getattr(self, flag))
        check_options(self.join_consecutive, self.drop)


def check_options(join_consecutive: Any, drop: Any, omitted: Any = None) -> None:
    """Refuse option values that mean nothing (``ValueError``), before anything is written."""
    if join_consecutive is None and omitted is None and type(drop) is tuple and not drop:
        return  # the defaults (most calls): nothing to look at
    if join_consecutive is not None and type(join_consecutive) is not str:
        raise ValueError(f"join_consecutive must be a separator string or None, "
                         f"got {short_repr(join_consecutive)}")
    check_drop(drop, DROPPABLE)
    if omitted is not None and type(omitted) is not list:
        raise ValueError(f"omitted must be a list (what was left out is appended to it) or "
                         f"None, got {short_repr(omitted)}")


@dataclass
class Entry:
    """A user or assistant message on its way to becoming (part of) a turn."""

    role: Literal["user", "assistant"]
    text: str
    index: int
    namespace: dict[str, Any]
    """The message's ``metadata["galtea"]`` without ``shape``, ``trace`` and ``agent_input``."""
    files: list[tuple[FileField, dict[str, Any]]] = field(default_factory=list)
    """The attached-file dicts, each with the list it goes to."""
    fields_index: int = field(init=False)
    """The message whose Galtea fields ``namespace`` holds: ``index``, unless a join took a
    later message's (what is refused or left out of them is that message's)."""
    files_index: int = field(init=False)
    """The message ``files`` came from: ``index``, unless a join took a later message's."""

    def __post_init__(self) -> None:
        self.fields_index = self.files_index = self.index


def refuse(index: int, path: str, detail: str) -> TraceError:
    return TraceError("not_representable", detail, index=index, path=path, source=NAME)


def leave_out(accepted: bool, omission: Omission, found: list[Omission], path: str,
              what: str, why: str = "Galtea turns hold only user and assistant text and files"
              ) -> None:
    """Record ``omission`` when its option is on; otherwise refuse, naming the option."""
    if not accepted:
        option = omission.option
        spelled = option[len("drop=") :] if option.startswith("drop=") else None
        accept = f"drop=[{spelled!r}]" if spelled else f"{option}=True"
        raise refuse(omission.index, path,
                     f"{what}: {why}; {accept} leaves it out (recorded in omitted)")
    found.append(omission)


def to_entries(messages: Sequence[AnyMessage], shape: Shape, options: Options,
               found: list[Omission]) -> list[Entry]:
    entries: list[Entry] = []
    for i, message in enumerate(messages):
        read = read_entry(message, i, shape, options, found)
        if read is not None:
            entries.append(read)
    return entries


def read_entry(message: Any, i: int, shape: Shape, options: Options,
           found: list[Omission]) -> Entry | None:
    """The message as a user/assistant entry, or None when an option left all of it out."""
    at = f"messages[{i}]"
    if isinstance(message, SystemMessage):
        detail = f"system message {short_repr(message.text)}"
        leave_out(options.skip_system, Omission(i, "system_message", "skip_system", detail),
                  found, at, "a system message")
        return None
    if isinstance(message, ToolMessage):
        detail = f"result of {message.name or message.tool_call_id!r}: {short_repr(message.text)}"
        leave_out(options.fold_tools, Omission(i, "tool_result", "fold_tools", detail),
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
    namespace = read_namespace(message, i)
    _records(namespace, i, options, found)
    # A message id is provenance, like other adapters' metadata: turns have no place for
    # it and it is not part of what was said, so it is not written. A name is (an agent's).
    if message.name is not None:
        leave_out(options.drop_names,
                  Omission(i, "name", "drop_names", f"name {message.name!r}"),
                  found, f"{at}.name", f"a message name ({message.name!r})")
    entry = Entry(role, "", i, namespace)
    _content(message, entry, shape, options, found)
    if isinstance(message, AIMessage):
        _answer_extras(message, i, options, found)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(call.name for call in message.tool_calls)
        empty = entry.text == "" and not entry.files and not namespace
        detail = f"{len(message.tool_calls)} tool call(s): {calls}" + (
            "; the message had no text and is left out" if empty else ""
        )
        leave_out(options.fold_tools, Omission(i, "tool_calls", "fold_tools", detail),
                  found, f"{at}.tool_calls", "tool calls")
        if empty:
            return None
    return entry


def _records(namespace: dict[str, Any], i: int, options: Options, found: list[Omission]) -> None:
    """The Trace record and AgentInput fields a message was read with have no place in a turn."""
    for key, kind, option, what, why in _RECORDS:
        if key in namespace:
            fields = sorted(namespace.pop(key))
            leave_out(option in options.drop, Omission(i, kind, f"drop={option}", f"{what}: "
                      f"{short_repr(fields)}"), found, f"messages[{i}].metadata.{NAME}.{key}",
                      what, why)


def read_namespace(message: HumanMessage | AIMessage, i: int) -> dict[str, Any]:
    """``metadata["galtea"]`` checked, without ``shape``; {} when absent."""
    namespace, bad = checked_namespace(message.metadata, i, f"messages[{i}]", _NAMESPACE_KEYS)
    if namespace.get("shape", "pairs") != "pairs":
        raise bad(f"expected 'pairs' (roles is not recorded), got {namespace['shape']!r}",
                  "shape")
    context = namespace.get("retrieval_context")
    if context is not None and type(context) is not str:
        raise bad(f"expected a string or null, got {short_repr(context)}", "retrieval_context")
    expected: dict[str, tuple[Any, str]] = {
        "metadata": ((dict, type(None)), "a dict or null"),
        "extra": (dict, "a dict of turn keys"),
        "trace": (dict, "a dict (the Trace record)"),
        "agent_input": (dict, "a dict (the AgentInput fields)"),
    }
    for key, (kinds, noun) in expected.items():
        if key in namespace and not isinstance(namespace[key], kinds):
            raise bad(f"expected {noun}, got {short_repr(namespace[key])}", key)
    for key, allowed in (("empty_files", FILE_FIELDS), ("aliases", ALIASES)):
        value = namespace.get(key, [])
        listed = (type(value) is list and all(type(v) is str for v in value)
                  and set(value) <= set(allowed))
        if not listed or (key in namespace and not value) or len(set(value)) != len(value):
            raise bad(f"expected a non-empty list of {allowed}, got {short_repr(value)}", key)
        if len(value) > 1 and value != [name for name in allowed if name in value]:
            # the written turn holds its fields in one order: read back, this one would change
            raise bad(f"expected {key} in the order a turn is read in "
                      f"({[name for name in allowed if name in value]}), got {value}", key)
    _said_and_written(message, namespace, bad)
    return {key: value for key, value in namespace.items() if key != "shape"}


def _said_and_written(message: HumanMessage | AIMessage, namespace: dict[str, Any],
                      bad: Any) -> None:
    """Refuse a namespace recording what the message does not carry: written, the turn would
    leave it out without a word (``to_messages`` never records such a thing)."""
    if namespace.get("extra") == {}:
        raise bad("an empty 'extra' records no key (leave it out)", "extra")
    role = "user" if isinstance(message, HumanMessage) else "assistant"
    filed = {part_field(part, role) for part in message.content
             if isinstance(part, FilePart)} if isinstance(message.content, list) else set()
    empty = namespace.get("empty_files", [])
    full = sorted(filed & set(empty))
    if full:
        raise bad(f"{full[0]!r} is recorded as an empty file list but the message has files "
                  f"that go to it", "empty_files")
    carried = {"retrievalContext": "retrieval_context" in namespace,
               "inputFiles": "input_files" in filed or "input_files" in empty,
               "outputFiles": "output_files" in filed or "output_files" in empty}
    for alias in namespace.get("aliases", []):
        if not carried[alias]:
            raise bad(f"{alias!r} is recorded as the spelling of a field the message does not "
                      f"carry", "aliases")


def _answer_extras(message: AIMessage, i: int, options: Options, found: list[Omission]) -> None:
    if message.citations:
        detail = f"{len(message.citations)} citation(s)"
        leave_out("citations" in options.drop,
                  Omission(i, "citations", "drop=citations", detail),
                  found, f"messages[{i}].citations", "citations")
    if message.audio is not None:
        detail = f"audio reply {message.audio.id!r}"
        leave_out("audio_replies" in options.drop,
                  Omission(i, "audio_reply", "drop=audio_replies", detail),
                  found, f"messages[{i}].audio", "an audio reply")


def _content(message: HumanMessage | AIMessage, entry: Entry, shape: Shape, options: Options,
             found: list[Omission]) -> None:
    """The entry's text and files. Read back, a turn is its text (when not empty) then its
    files, input files first: content in any other layout is a loss to accept by name."""
    i = entry.index
    if isinstance(message.content, str):
        entry.text = message.content
        return
    texts: list[str] = []
    # a refusal written as text: drop=refusals already accepted that its text is not read back
    # as it was (another option leaving a part out does not cover an empty text part)
    changed = False
    reordered = False
    for j, part in enumerate(message.content):
        at = f"messages[{i}].content[{j}]"
        if isinstance(part, TextPart):
            if NAME in part.metadata:
                _no_namespace(part, i, at)
            texts.append(part.text)
            reordered = reordered or bool(entry.files)
        elif isinstance(part, RefusalPart):
            if NAME in part.metadata:
                _no_namespace(part, i, at)
            # Left out, a refusal would read as an empty answer: it can only become its text.
            detail = f"refusal at content[{j}] written as text"
            leave_out("refusals" in options.drop,
                      Omission(i, "refusal", "drop=refusals", detail), found, at, "a refusal")
            texts.append(part.text)
            changed = True
            reordered = reordered or bool(entry.files)
        elif isinstance(part, FilePart) and _attachable(part, shape):
            goes_to = part_field(part, entry.role)
            if goes_to == "input_files" and any(f == "output_files" for f, _ in entry.files):
                reordered = True
            entry.files.append((goes_to, write_file(part, entry.role, i, at)))
        else:
            leave_out(options.drop_non_text,
                      Omission(i, "non_text_part", "drop_non_text",
                               f"{part.type} part at content[{j}]"),
                      found, at, f"{with_article(part.type)} part", _why_not(part, shape))
    entry.text = "\n".join(texts)
    at = f"messages[{i}].content"
    if reordered:
        leave_out("part_order" in options.drop,
                  Omission(i, "part_order", "drop=part_order",
                           "files written after the text, input files first"),
                  found, at, "text or input files after files",
                  "a Galtea turn holds its text, then its input files, then its output files")
    # each option accepts its own loss: joined text parts are one more, whatever else went
    several = len(texts) > 1
    empty_beside_files = texts == [""] and entry.files and not changed
    # (an answer's tool calls, when it has them, are left out by an option already named)
    no_parts = not message.content and not (isinstance(message, AIMessage) and message.tool_calls)
    if several or empty_beside_files or no_parts:
        # Several parts become one string, an empty part disappears beside files, or a list of
        # no parts reads back as empty text: the boundaries are part of what the hash covers.
        detail, what = (
            (f"{len(texts)} text parts joined by newlines", "several text parts") if several
            else ("an empty text part beside files left out", "an empty text part")
            if empty_beside_files
            else ("content of no parts written as empty text", "content of no parts")
        )
        leave_out("part_boundaries" in options.drop,
                  Omission(i, "part_boundaries", "drop=part_boundaries", detail),
                  found, at, what, "a Galtea turn holds one text")


def _no_namespace(part: TextPart | RefusalPart, i: int, at: str) -> None:
    """Refuse ``metadata["galtea"]`` on a text or refusal part: ``to_messages`` records none
    there and a turn's text has no place for one, so written it would be left out without a
    word (as an unknown key of a message's or a file's namespace is refused)."""
    raise TraceError("malformed_event",
                     f"{with_article(part.type)} part holds no galtea namespace (a turn's text "
                     f"has no place for it), got {short_repr(part.metadata[NAME])}",
                     index=i, path=f"{at}.metadata.{NAME}", source=NAME)


def _attachable(part: FilePart, shape: Shape) -> bool:
    return shape == "roles" and part.url is not None and part.data is None and \
        part.file_id is None


def _why_not(part: Any, shape: Shape) -> str:
    if not isinstance(part, FilePart):
        return "Galtea turns hold only user and assistant text and files"
    if shape != "roles":
        return f"{shape} turns hold text only"
    return "Galtea attaches a file by its uri alone (no inline data, no provider file id)"

