"""Reading what the Galtea SDK (5.12) holds besides turns: ``Trace`` records and ``AgentInput``.

A ``Trace`` is one stored turn (``traces.list`` / ``traces.get``): the user's input, the
agent's output, their files, and the record (id, index, status, error, latency, usage, cost).
A list of them reads the way the SDK itself rebuilds a conversation for an agent
(``TraceService._execute_agent``), leaving nothing out: a user message when the input is not
empty or has files (its text is ``user_message``, its other keys the message's ``metadata``,
a null or empty ``user_message`` among them, its files ``input_files``), then an assistant
message when there is an output (even empty text) or output files (an output envelope, the
API's ``actualOutput`` object or a dump's ``actual_output_data``, is read alike: a string
``assistant_message`` is the text, its other keys the message's ``metadata``); what two
fields say twice must agree (``conflicting_fields``; a value too deep to compare is
``unserializable_value`` first); the message carries
``retrieval_context: None`` as the SDK's does (the API does not return it). So a pending trace
(no output yet) is a user message alone, and a file-only input is a user message with files
and no text. The record's other fields are kept, verbatim, under ``metadata["galtea"]["trace"]``
of the turn's first message, and so is an input or output that gave no message but is not null
(``""``, ``{}``, an output envelope with no ``assistant_message`` text nor files, which the SDK
keeps as ``actual_output_data``), or an empty text beside files (its message, the files alone,
is the one a null text gives). A file list that is not a list is refused, message or not.
The legacy ``actualInput`` / ``actual_input`` is the input.
Accepted forms: ``Trace`` objects, their dumps in either spelling
and either mode (the status enum of a python-mode dump is read as its value), and the API's own
JSON (``input`` / ``actualOutput`` as ``{"user_message" | "assistant_message", "content"}``).

An ``AgentInput`` (what ``Agent.call`` and ``AgentInput`` agent functions receive) reads as its
``messages``; its other fields (``session_id``, ``trace_id``, ``context_data``, ``metadata``) are
kept under ``metadata["galtea"]["agent_input"]`` of the last message. Its derived
``input_files`` must be the last user message's (else ``conflicting_fields``).
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Mapping
from typing import Any, get_origin

from tracebridge._changed import FELL
from tracebridge._json import json_path, same_json
from tracebridge._optional import module_of
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import Message

from ._kept import as_read, check_kept, mapped
from ._read import error, from_role_turn, where

__all__ = ["from_agent_input", "from_records", "is_agent_input", "is_record", "is_sdk_model",
           "marks_record", "record_markers", "sdk_dump"]

NAME = "galtea"
# Each field of a Trace the conversation is read from, with its camelCase spelling.
# ``actualInput`` / ``actual_input`` are the legacy spellings of ``input`` (the SDK's ``Trace``
# still reads them as ``input``). The output envelope of a dump (the SDK's
# ``actual_output_data``) is read as the answer's, like the ``input_data`` of the question; it
# stays with the record when no answer was read from it.
_MAPPED = {
    "input": ("input", "actualInput", "actual_input"),
    "input_data": ("input_data", "inputData"),
    "input_files": ("input_files", "inputFiles"),
    "actual_output": ("actual_output", "actualOutput"),
    "actual_output_data": ("actual_output_data", "actualOutputData"),
    "actual_output_files": ("actual_output_files", "actualOutputFiles"),
}
_MAPPED_KEYS = frozenset(key for spellings in _MAPPED.values() for key in spellings)
_SESSION_KEYS = ("session_id", "sessionId")


def sdk_dump(value: Any, index: int | None = None, at: str = "") -> Any:
    """A Galtea SDK model (``ConversationMessage``, ``Trace``, ``AgentInput``) as its dump;
    any other mapping (an ``OrderedDict``, say) as a plain dict, as other adapters read one.

    ``index`` and ``at``: where ``value`` is, for an SDK object that cannot dump itself (an
    ``AgentInput`` whose ``messages`` got a plain dict appended, or one ``model_construct``
    made without them: its derived ``input_files`` reads each message's ``role``).
    """
    kind = type(value)
    if kind is list or kind is dict:
        return value
    if is_sdk_model(kind) and hasattr(value, "model_dump"):
        try:
            return value.model_dump()  # python mode: a value that is not JSON stays visible
        except FELL as exc:  # PydanticSerializationError is a ValueError
            raise _undumpable(value, exc, index, at) from None
    if isinstance(value, Mapping):
        return dict(value)
    return value


def is_sdk_model(kind: type) -> bool:
    """Whether ``kind`` is one of the Galtea SDK's classes or derives from one (an
    application's ``class SupportMessage(ConversationMessage)`` is still the SDK's model)."""
    return any(module_of(base).split(".")[0] == NAME for base in kind.__mro__)


def _undumpable(value: Any, exc: Exception, index: int | None, at: str) -> TraceError:
    """``malformed_event`` at the field of an SDK object that made its dump fail."""
    kind = type(value).__name__
    fields = getattr(type(value), "model_fields", {})
    for name in fields:
        if name not in value.__dict__:
            return TraceError("malformed_event", f"the {kind} has no {name!r} (made without "
                              f"it, by model_construct?): {exc}", index=index,
                              path=json_path(at, name), source=NAME)
    for name, info in fields.items():
        items = value.__dict__[name]
        if type(items) is not list:
            if get_origin(info.annotation) is list:  # reassigned after it was made
                return TraceError("malformed_event", f"expected a list in the {kind}'s "
                                  f"{name!r}, got {type(items).__name__} {short_repr(items)} "
                                  f"(set after the {kind} was made?): {exc}", index=index,
                                  path=json_path(at, name), source=NAME)
            continue
        for k, item in enumerate(items):
            if not is_sdk_model(type(item)):
                return TraceError("malformed_event", f"expected the SDK's model in the {kind}'s "
                                  f"{name!r}, got {type(item).__name__} {short_repr(item)} "
                                  f"(appended after the {kind} was made?): {exc}",
                                  index=k if index is None else index,
                                  path=json_path(json_path(at, name), k), source=NAME)
    return TraceError("malformed_event", f"the {kind} cannot dump itself: {exc}", index=index,
                      path=at or None, source=NAME)


def _comparable(value: Any, i: int, key: str) -> Any:
    """``value`` of a mapped field as it is compared: its mappings as the dicts they hold
    (``mapped``); refused, before it is compared, when it is not JSON or nests too deep
    (``==`` on one nested past Python's depth raises ``RecursionError``)."""
    if value is None or type(value) is str:
        return value
    plain = mapped(value)
    check_kept(plain, i, where(i, key, base="traces"))
    return plain


_REQUIRED: dict[str, tuple[str, ...]] = {"id": ("id",), "index": ("index",),
                                         "session_id": _SESSION_KEYS}
"""The fields the SDK's ``Trace`` requires, each with its spellings."""


def record_markers(value: Mapping[str, Any]) -> list[str]:
    """Which of a ``Trace``'s required fields ``value`` holds (in either spelling)."""
    return [name for name, keys in _REQUIRED.items() if any(key in value for key in keys)]


def is_record(value: Any) -> bool:
    """A ``Trace`` record: ``id``, ``index`` and ``session_id`` mark one (fewer of them are a
    turn's extra keys, which a pair may hold: ``marks_record`` says when they are more)."""
    return (type(value) is dict and "id" in value and "index" in value
            and any(key in value for key in _SESSION_KEYS))


def marks_record(value: Any) -> bool:
    """Whether ``value``, a turn of a list of ``Trace`` records (its first turn is one), is
    one of them missing a required field: a dict without a ``role`` that holds two of the
    three. (In a list of pairs the same keys are a pair's extra keys, as they always were.)"""
    return (type(value) is dict and "role" not in value
            and len(record_markers(value)) == len(_REQUIRED) - 1)


def _has_required(record: dict[str, Any], i: int) -> None:
    """``malformed_event`` at the first required field the record lacks."""
    held = record_markers(record)
    for name in _REQUIRED:
        if name not in held:
            raise error("malformed_event", f"a Trace record without its {name!r} (the SDK's "
                        "Trace requires id, index and session_id)", i, name, base="traces")


def is_agent_input(value: Any) -> bool:
    return (type(value) is dict and type(value.get("messages")) is list
            and any(key in value for key in _SESSION_KEYS))


def _with_plain_status(record: dict[str, Any]) -> dict[str, Any]:
    """The record, its ``status`` read as its value when it is a ``str`` enum: a python-mode
    dump holds the SDK's ``TraceStatus`` there. No other field's enum is read so (an
    application's enum is not its value): it is refused where it is, as anywhere in a trace."""
    status = record.get("status")
    if isinstance(status, enum.Enum) and isinstance(status.value, str):
        return {**record, "status": status.value}
    return record


def _field(record: dict[str, Any], name: str, i: int) -> tuple[str | None, Any]:
    """(key as spelled, value) of a mapped field, or (None, None) when absent; spelled two
    ways with two values, ``conflicting_fields`` (one would be lost). An input or output
    envelope is read as the dict it holds (``as_read``)."""
    found = [(key, as_read(record[key])) for key in _MAPPED[name] if key in record]
    compared = [_comparable(value, i, key) for key, value in found] if len(found) > 1 else []
    for (key, value), plain in zip(found[1:], compared[1:], strict=True):
        if not same_json(plain, compared[0]):  # True, 1 and 1.0 are three values
            raise error("conflicting_fields", f"{found[0][0]} is {short_repr(found[0][1])} but "
                        f"{key} is {short_repr(value)}", i, key, base="traces")
    return found[0] if found else (None, None)


def _file_list(record: dict[str, Any], name: str, i: int) -> tuple[str | None, list[Any]]:
    """(key as spelled, value) of one of the record's file lists, ``(None, [])`` when absent.
    A value that is not a list is ``malformed_event`` at its key whether or not a message is
    read from that side: a falsy one (``{}``, ``""``, ``null``) gives none, and would be left
    out without a word."""
    key, files = _field(record, name, i)
    if key is None:
        return None, []
    if type(files) is not list:
        raise error("malformed_event", f"expected a list of attached files, got "
                    f"{type(files).__name__} {short_repr(files)}", i, key, base="traces")
    return key, files


def _not_null(record: dict[str, Any], *names: str) -> list[str]:
    """The record's keys, in every spelling of the mapped fields ``names``, that are not null."""
    return [key for name in names for key in _MAPPED[name] if record.get(key) is not None]


def _envelope_files(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The files of an API input/output envelope, as the SDK finds them (``content`` parts of
    type ``file`` with a ``uri``); other parts stay in the envelope."""
    parts = envelope.get("content")
    if type(parts) is not list:
        return []
    files: list[dict[str, Any]] = []
    for part in parts:
        if (isinstance(part, Mapping) and isinstance(part.get("type"), str)
                and part["type"].lower() == "file" and isinstance(part.get("uri"), str)
                and part["uri"]):
            filename, mime_type = part.get("filename"), part.get("mimeType")
            files.append({
                "uri": part["uri"],
                "filename": filename if isinstance(filename, str) else None,
                "mime_type": mime_type if isinstance(mime_type, str) else None,
                "type": "file",
            })
    return files


_FILE_PART_KEYS = frozenset({"type", "uri", "filename", "mimeType"})


def _only_files(parts: Any) -> bool:
    """Whether an envelope's ``content`` holds file parts alone, each all read as a file."""
    return type(parts) is list and all(
        isinstance(part, Mapping) and part.keys() <= _FILE_PART_KEYS and "uri" in part
        and part.get("type") == "file"
        and all(type(value) is str and value for value in part.values())
        for part in parts
    )


def _files_said_once(found: list[dict[str, Any]], key: str | None, given: Any, i: int,
                     envelope_key: str | None) -> Any:
    """The file list of a record side: ``found`` (the files of its envelope) when the record has
    no file list of its own, else that list, which must name the same files (an envelope's
    files left for another list would be lost)."""
    if key is None:
        return found
    if type(given) is list and all(isinstance(file, Mapping) for file in given):
        named = [(file.get("uri"), file.get("filename"),
                  file.get("mime_type", file.get("mimeType"))) for file in given]
        if named != [(file["uri"], file["filename"], file["mime_type"]) for file in found]:
            raise error("conflicting_fields", f"{key} is {short_repr(given)} but the files of "
                        f"{envelope_key} are {short_repr(found)}", i, key, base="traces")
    return given  # a list that is not one of files is refused where files are read


# The record's own keys (as spelled, or None) that the built turns' ``metadata`` and file
# lists were taken from: the input object, input files, output envelope, output files.
_Spelled = tuple[str | None, str | None, str | None, str | None]


def _answer_of(envelope: dict[str, Any], text: str | None) -> dict[str, Any] | None:
    """The answer's ``metadata`` read from an output envelope: its keys besides ``text`` (a
    null, empty or non-text ``assistant_message`` stays with the rest: it is not the text
    left out). Its files, read as such, are all an envelope of ``content`` files says besides
    the text: an envelope of text (and files) is ``{}``, not the plain text (null); one of
    files alone is null."""
    answer = {key: value for key, value in envelope.items()
              if key != "assistant_message" or not text}
    if answer.keys() == {"content"} and answer["content"] and _only_files(answer["content"]):
        return {} if text else None
    return answer


# The answer of a record: its text (None: no text), its files, its ``metadata`` (None: plain
# text), and the record's keys (as spelled, or None) that metadata and the files came from.
_Output = tuple[str | None, Any, dict[str, Any] | None, str | None, str | None]


def _output_of(record: dict[str, Any], i: int) -> _Output:
    """The record's answer, from an API ``actualOutput`` envelope, a dump's ``actual_output``
    beside its ``actual_output_data`` envelope, or a plain text, read alike: an envelope's
    text is its ``assistant_message`` when that is a string (what the SDK unwraps), its other
    keys the answer's ``metadata``. What two fields say twice must agree."""
    output_key, output = _field(record, "actual_output", i)
    files_key, files = _file_list(record, "actual_output_files", i)
    data_key, data = _field(record, "actual_output_data", i)
    if type(output) is dict:  # the API's own JSON: the envelope itself
        if data is not None:
            _same_envelope("output", output, output_key, data, data_key, i)
        envelope, envelope_key = output, output_key
        said = envelope.get("assistant_message")
        text = said if type(said) is str else None  # what the SDK unwraps
    elif type(data) is dict:  # a dump: the envelope beside its text and files
        said = data.get("assistant_message")
        text = said if type(said) is str else None  # what the SDK unwraps
        if output_key is not None and output != text:
            raise error("conflicting_fields", f"the output {short_repr(output)} is not "
                        f"{data_key}.assistant_message {short_repr(text)}", i, output_key,
                        base="traces")
        envelope, envelope_key = data, data_key
    else:
        if output is not None and type(output) is not str:
            raise error("malformed_event", f"expected the output as a string, got "
                        f"{type(output).__name__} {short_repr(output)}", i, output_key,
                        base="traces")
        return output, files, None, output_key, files_key
    files = _files_said_once(_envelope_files(envelope), files_key, files, i, envelope_key)
    return text, files, _answer_of(envelope, text), envelope_key, files_key


def _same_envelope(what: str, given: dict[str, Any], given_key: str | None, data: Any,
                   data_key: str | None, i: int) -> None:
    """An envelope said twice (the API's ``input`` / ``actualOutput`` object and a dump's
    ``*_data`` beside it) must say the same."""
    _comparable(given, i, str(given_key))
    _comparable(data, i, str(data_key))
    if not same_json(data, given):
        raise error("conflicting_fields", f"the {what} {short_repr(given)} is not "
                    f"{data_key} {short_repr(data)}", i, given_key, base="traces")


def _turns_of(
    record: dict[str, Any], i: int
) -> tuple[list[dict[str, Any]], set[str], _Spelled]:
    """The record as the ``ConversationMessage`` dumps the SDK would build from it, except
    that nothing of it is left out: an input of files alone, or an empty answer, is a
    message too, and what two fields say twice must agree. Also the keys of the record that
    said something but gave no message (an empty input object, an output envelope with no
    text nor files): they are kept with the rest of the record. And, per role, the record's
    keys the turn's ``metadata`` and files come from (``_at_record_key``)."""
    input_key, raw_input = _field(record, "input", i)
    data_key, input_data = _field(record, "input_data", i)
    files_key, input_files = _file_list(record, "input_files", i)
    source_key = data_key if input_data is not None else input_key  # the input object's key
    if input_data is not None and type(input_data) not in (str, dict):
        raise error("malformed_event", f"expected the input as a string or a dict, got "
                    f"{type(input_data).__name__} {short_repr(input_data)}", i, data_key,
                    base="traces")
    if type(raw_input) is dict:  # the API's own JSON: the envelope itself
        if input_data is not None:
            _same_envelope("input", raw_input, input_key, input_data, data_key, i)
        input_data, source_key = raw_input, input_key
        raw_input = raw_input.get("user_message")
        input_files = _files_said_once(_envelope_files(input_data), files_key, input_files, i,
                                       input_key)
    elif raw_input is not None and type(raw_input) is not str:
        raise error("malformed_event", f"expected the input as a string (or an input object), "
                    f"got {type(raw_input).__name__} {short_repr(raw_input)}", i, input_key,
                    base="traces")
    else:
        if type(raw_input) is str and input_data is not None:
            # an absent user_message is null, which "" is not (the SDK's input is None then)
            said = input_data.get("user_message") if type(input_data) is dict else input_data
            if not same_json(raw_input, said):  # a str: no deep value is compared
                at = f"{data_key}.user_message" if type(input_data) is dict else data_key
                raise error("conflicting_fields", f"the input {short_repr(raw_input)} is not "
                            f"{at} {short_repr(said)}", i, input_key, base="traces")
        if type(input_data) is dict and files_key is not None:  # a dump: files said twice
            _files_said_once(_envelope_files(input_data), files_key, input_files, i, data_key)
    source = input_data if input_data is not None else raw_input
    turns: list[dict[str, Any]] = []
    unread: set[str] = set()
    if source or input_files:
        metadata: dict[str, Any] | None = None
        if type(source) is dict:
            text = source.get("user_message")
            if text is not None and type(text) is not str:
                raise TraceError("malformed_event", f"expected the user_message as a string, "
                                 f"got {short_repr(text)}", index=i, path=json_path(
                                     where(i, source_key, base="traces"), "user_message"),
                                 source=NAME)
            # a null or empty user_message stays with the rest: it is not the text left out
            rest = {key: value for key, value in source.items()
                    if key != "user_message" or not text}
            metadata = rest or None
            text = text or ""
        else:
            text = source or ""
            if source == "":  # beside files: kept, as the files alone read the same as null's
                unread.update(_not_null(record, "input", "input_data"))
        turns.append({"role": "user", "content": text, "retrieval_context": None,
                      "metadata": metadata, "input_files": input_files,
                      "output_files": []})
    else:  # an empty text or input object is not nothing (the SDK keeps it in input_data)
        unread.update(_not_null(record, "input", "input_data"))
    output, output_files, answer, answer_key, out_files_key = _output_of(record, i)
    envelopes = [key for key in _MAPPED["actual_output_data"] if key in record]
    if output is not None or output_files:
        # an envelope's keys besides its text ({} when it held the text alone: not plain text)
        turns.append({"role": "assistant", "content": output or "", "retrieval_context": None,
                      "metadata": answer, "input_files": [],
                      "output_files": output_files})
        # a dump's envelope the answer was read from is in it; anything else there is not
        unread.update(key for key in envelopes if not isinstance(record[key], Mapping))
        if output == "" and answer is None and output_files:  # plain "" beside files: kept,
            unread.update(_not_null(record, "actual_output"))  # as with null they read alike
    else:  # an envelope with no text nor files (the SDK keeps it as actual_output_data)
        unread.update(_not_null(record, "actual_output"))
        unread.update(envelopes)
    return turns, unread, (source_key, files_key, answer_key, out_files_key)


def _at_record_key(exc: TraceError, i: int, role: str, spelled: _Spelled) -> TraceError:
    """``exc``, found reading the ``role`` turn built from record ``i``, at the record's own
    key: the turn's ``metadata`` is the record's input or output object, its files the
    record's file list, each spelled as the record spells it (a record has no ``metadata``
    or ``output_files``). Files found in an envelope's ``content`` are built whole: no error
    is found in them."""
    source_key, files_key, output_key, out_files_key = spelled
    fields = ({"metadata": source_key, "input_files": files_key} if role == "user"
              else {"metadata": output_key, "output_files": out_files_key})
    path = exc.path or ""
    for field, key in fields.items():
        at = where(i, field, base="traces")
        if key is not None and path.startswith(at) and path[len(at):][:1] in ("", ".", "["):
            return exc.relocated(path=where(i, key, base="traces") + path[len(at):])
    return exc


def from_records(records: list[Any], origin: list[int]) -> list[Message]:
    """A list of ``Trace`` records (dicts, already out of their objects) as messages."""
    for i, record in enumerate(records):
        _has_required(record, i)
    _one_session(records)
    messages: list[Message] = []
    last_index: Any = None
    seen: dict[str, int] = {}
    for i, record in enumerate(records):
        record = _with_plain_status(record)
        trace_id = record["id"]
        if type(trace_id) is not str:  # the SDK's Trace.id; else a repeat would go unseen
            raise error("malformed_event", f"expected the trace's id as a string, got "
                        f"{short_repr(trace_id)}", i, "id", base="traces")
        if trace_id in seen:
            raise error("malformed_event", f"the trace {trace_id!r} again (traces"
                        f"[{seen[trace_id]}] is it): reading it twice would repeat its "
                        f"turn", i, "id", base="traces")
        seen[trace_id] = i
        index = record["index"]
        if type(index) is not int:
            raise error("malformed_event", f"expected the turn's index as an int, got "
                        f"{short_repr(index)}", i, "index", base="traces")
        if last_index is not None and index < last_index:
            raise error("malformed_event", f"index {index} after index {last_index}: the list is "
                        "not in conversation order (the SDK sorts traces by index; sort them "
                        "first)", i, "index", base="traces")
        last_index = index
        turns, unread, spelled = _turns_of(record, i)
        if not turns:
            raise error("malformed_event", "a trace with no input and no output: no message to "
                        "read (a turn opened before the agent answered it)", i, base="traces")
        kept = {key: value for key, value in record.items()
                if key not in _MAPPED_KEYS or key in unread}
        check_kept(kept, i, where(i, base="traces"))
        for k, turn in enumerate(turns):
            try:
                message = from_role_turn(turn, i, base="traces")
            except TraceError as exc:  # the turn's keys are not the record's
                raise _at_record_key(exc, i, turn["role"], spelled) from None
            if k == 0:
                namespace = {**message.metadata.get(NAME, {}), "trace": copy.deepcopy(kept)}
                message = message.model_copy(update={"metadata": {NAME: namespace}})
            messages.append(message)
            origin.append(i)
    return messages


def _one_session(records: list[dict[str, Any]]) -> None:
    """Refuse records of several sessions (several conversations): ``ambiguous_trace``, naming
    the records of each session so the caller can keep one. A record spelling its session
    twice must say one session (``conflicting_fields``)."""
    sessions: list[tuple[Any, list[int]]] = []
    for i, record in enumerate(records):
        said = [(key, record[key]) for key in _SESSION_KEYS if key in record]
        for key, value in said:
            _comparable(value, i, key)
        session = said[0][1]
        for key, value in said[1:]:
            if not same_json(value, session):
                raise error("conflicting_fields", f"{said[0][0]} is {short_repr(session)} but "
                            f"{key} is {short_repr(value)}", i, key, base="traces")
        for known, held in sessions:
            if same_json(known, session):
                held.append(i)
                break
        else:
            sessions.append((session, [i]))
    if len(sessions) > 1:
        first_other = sessions[1][1][0]
        key = next(key for key in _SESSION_KEYS if key in records[first_other])
        listed = "; ".join(f"session {short_repr(session)}: traces{held}"
                           for session, held in sessions)
        raise error("ambiguous_trace", f"records of {len(sessions)} sessions, one conversation "
                    f"each ({listed}); pass the records of one session (traces.list("
                    f"session_id=...))", first_other, key, base="traces")


def from_agent_input(agent_input: dict[str, Any], origin: list[int]) -> list[Message]:
    """The messages of an ``AgentInput`` (a dump, in either spelling)."""
    turns = agent_input["messages"]
    messages: list[Message] = []
    for i, turn in enumerate(turns):
        turn = sdk_dump(turn, i, f"messages[{i}]")
        if type(turn) is not dict or "role" not in turn:
            raise error("malformed_event", f"expected a conversation message (a dict with "
                        f"'role' and 'content'), got {short_repr(turn)}", i, base="messages")
        messages.append(from_role_turn(turn, i, base="messages"))
        origin.append(i)
    if "input_files" in agent_input and "inputFiles" in agent_input:
        raise TraceError("malformed_event", "the AgentInput spells 'input_files' twice "
                         "('input_files' and 'inputFiles'); one AgentInput holds one",
                         path="inputFiles", source=NAME)
    derived_key = next((k for k in ("input_files", "inputFiles") if k in agent_input), None)
    if derived_key is not None:
        dumps = [sdk_dump(turn) for turn in turns]
        last_user: dict[str, Any] = next(
            (t for t in reversed(dumps) if type(t) is dict and t.get("role") == "user"), {}
        )
        own = last_user.get("input_files", last_user.get("inputFiles", []))
        if not same_json(agent_input[derived_key], own):
            raise TraceError(
                "conflicting_fields",
                f"input_files {short_repr(agent_input[derived_key])} is not the last user "
                f"message's input_files {short_repr(own)} (the SDK derives one from the other)",
                path=derived_key, source=NAME,
            )
    kept = {key: value for key, value in agent_input.items()
            if key not in ("messages", "input_files", "inputFiles")}
    check_kept(kept, None, "")  # at the AgentInput's own keys: context_data.opened
    if messages:
        last = messages[-1]
        namespace = {**last.metadata.get(NAME, {}), "agent_input": copy.deepcopy(kept)}
        messages[-1] = last.model_copy(update={"metadata": {NAME: namespace}})
    return messages

