"""Reading what the Galtea SDK (5.12) holds besides turns: ``Trace`` records and ``AgentInput``.

A ``Trace`` is one stored turn (``traces.list`` / ``traces.get``): the user's input, the
agent's output, their files, and the record (id, index, status, error, latency, usage, cost).
A list of them reads the way the SDK itself rebuilds a conversation for an agent
(``TraceService._execute_agent``), leaving nothing out: a user message when the input is not
empty or has files (its text is ``user_message``, its other keys the message's ``metadata``,
its files ``input_files``), then an assistant message when there is an output (even empty
text) or output files; what two fields say twice must agree; the message carries
``retrieval_context: None`` as the SDK's does (the API does not return it). So a pending trace
(no output yet) is a user message alone, and a file-only input is a user message with files
and no text. The record's other fields are kept, verbatim, under ``metadata["galtea"]["trace"]``
of the turn's first message. Accepted forms: ``Trace`` objects, their dumps in either spelling
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
from typing import Any

from tracebridge._json import check_json, json_path
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import Message

from ._read import error, from_role_turn, where

__all__ = ["from_agent_input", "from_records", "is_agent_input", "is_record", "sdk_dump"]

NAME = "galtea"
# Each field of a Trace the conversation is read from, with its camelCase spelling.
_MAPPED = {
    "input": "input",
    "input_data": "inputData",
    "input_files": "inputFiles",
    "actual_output": "actualOutput",
    "actual_output_files": "actualOutputFiles",
}
_SESSION_KEYS = ("session_id", "sessionId")


def sdk_dump(value: Any) -> Any:
    """A Galtea SDK model (``ConversationMessage``, ``Trace``, ``AgentInput``) as its dump."""
    kind = type(value)
    if kind is list or kind is dict:
        return value
    if kind.__module__.split(".")[0] == NAME and hasattr(value, "model_dump"):
        return value.model_dump()  # python mode: a value that is not JSON stays visible
    return value


def is_record(value: Any) -> bool:
    return (type(value) is dict and "id" in value and "index" in value
            and any(key in value for key in _SESSION_KEYS))


def is_agent_input(value: Any) -> bool:
    return (type(value) is dict and type(value.get("messages")) is list
            and any(key in value for key in _SESSION_KEYS))


def _plain(value: Any) -> Any:
    # The status of a python-mode dump is a TraceStatus (a str enum); its value is the data.
    if isinstance(value, enum.Enum) and isinstance(value.value, str):
        return value.value
    return value


def _field(record: dict[str, Any], name: str, i: int) -> tuple[str | None, Any]:
    """(key as spelled, value) of a mapped field, or (None, None) when absent; spelled both
    ways with two values, ``conflicting_fields`` (one would be lost)."""
    found = [(key, record[key]) for key in (name, _MAPPED[name]) if key in record]
    if len(found) == 2 and found[0][1] != found[1][1]:
        raise error("conflicting_fields", f"{found[0][0]} is {short_repr(found[0][1])} but "
                    f"{found[1][0]} is {short_repr(found[1][1])}", i, found[1][0],
                    base="traces")
    return found[0] if found else (None, None)


def _envelope_files(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The files of an API input/output envelope, as the SDK finds them (``content`` parts of
    type ``file`` with a ``uri``); other parts stay in the envelope."""
    parts = envelope.get("content")
    if type(parts) is not list:
        return []
    files: list[dict[str, Any]] = []
    for part in parts:
        if (type(part) is dict and isinstance(part.get("type"), str)
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
        type(part) is dict and part.keys() <= _FILE_PART_KEYS and "uri" in part
        and part.get("type") == "file"
        and all(type(value) is str and value for value in part.values())
        for part in parts
    )


def _turns_of(record: dict[str, Any], i: int) -> list[dict[str, Any]]:
    """The record as the ``ConversationMessage`` dumps the SDK would build from it, except
    that nothing of it is left out: an input of files alone, or an empty answer, is a
    message too, and what two fields say twice must agree."""
    input_key, raw_input = _field(record, "input", i)
    data_key, input_data = _field(record, "input_data", i)
    files_key, input_files = _field(record, "input_files", i)
    output_key, output = _field(record, "actual_output", i)
    out_files_key, output_files = _field(record, "actual_output_files", i)
    input_files = [] if files_key is None else input_files
    output_files = [] if out_files_key is None else output_files
    if type(raw_input) is dict:  # the API's own JSON: the envelope itself
        if input_data is not None and input_data != raw_input:
            raise error("conflicting_fields", f"the input {short_repr(raw_input)} is not "
                        f"{data_key} {short_repr(input_data)}", i, input_key, base="traces")
        input_data = raw_input
        raw_input = raw_input.get("user_message")
        input_files = _envelope_files(input_data) if files_key is None else input_files
    elif type(raw_input) is str and type(input_data) is dict and raw_input != (
        input_data.get("user_message") or ""
    ):
        raise error("conflicting_fields", f"the input {short_repr(raw_input)} is not "
                    f"{data_key}.user_message {short_repr(input_data.get('user_message'))}",
                    i, input_key, base="traces")
    answer: dict[str, Any] | None = None
    if type(output) is dict:
        output_files = _envelope_files(output) if out_files_key is None else output_files
        answer = {key: value for key, value in output.items() if key != "assistant_message"}
        if answer.keys() == {"content"} and _only_files(answer["content"]):
            answer = None  # its files, read as such, are all it says besides the text
        output = output.get("assistant_message")
    source = input_data if input_data is not None else raw_input
    if source is not None and type(source) not in (str, dict):
        raise error("malformed_event", f"expected the input as a string or a dict, got "
                    f"{type(source).__name__} {short_repr(source)}", i,
                    data_key if input_data is not None else input_key, base="traces")
    if output is not None and type(output) is not str:
        raise error("malformed_event", f"expected the output as a string, got "
                    f"{type(output).__name__} {short_repr(output)}", i,
                    output_key, base="traces")
    turns: list[dict[str, Any]] = []
    if source or input_files:
        metadata: dict[str, Any] | None = None
        if type(source) is dict:
            text = source.get("user_message")
            if text is not None and type(text) is not str:
                raise error("malformed_event", f"expected the user_message as a string, got "
                            f"{short_repr(text)}", i, json_path(data_key or "input",
                                                                "user_message"), base="traces")
            # a null user_message stays with the rest: it is not the empty text
            rest = {key: value for key, value in source.items()
                    if key != "user_message" or text is None}
            metadata = rest or None
            text = text or ""
        else:
            text = source or ""
        turns.append({"role": "user", "content": text, "retrieval_context": None,
                      "metadata": metadata, "input_files": input_files,
                      "output_files": []})
    if output is not None or output_files:
        turns.append({"role": "assistant", "content": output or "", "retrieval_context": None,
                      "metadata": answer or None, "input_files": [],
                      "output_files": output_files})
    return turns


def from_records(records: list[Any], origin: list[int]) -> list[Message]:
    """A list of ``Trace`` records (dicts, already out of their objects) as messages."""
    messages: list[Message] = []
    last_index: Any = None
    for i, record in enumerate(records):
        record = {key: _plain(value) for key, value in record.items()}
        index = record["index"]
        if type(index) is not int:
            raise error("malformed_event", f"expected the turn's index as an int, got "
                        f"{short_repr(index)}", i, "index", base="traces")
        if last_index is not None and index < last_index:
            raise error("malformed_event", f"index {index} after index {last_index}: the list is "
                        "not in conversation order (the SDK sorts traces by index; sort them "
                        "first)", i, "index", base="traces")
        last_index = index
        turns = _turns_of(record, i)
        if not turns:
            raise error("malformed_event", "a trace with no input and no output: no message to "
                        "read (a turn opened before the agent answered it)", i, base="traces")
        kept = {key: value for key, value in record.items()
                if key not in _MAPPED and key not in _MAPPED.values()}
        try:
            check_json(kept, where(i, base="traces"))
        except TraceError as exc:
            raise exc.relocated(index=i, source=NAME) from None
        for k, turn in enumerate(turns):
            message = from_role_turn(turn, i, base="traces")
            if k == 0:
                namespace = {**message.metadata.get(NAME, {}), "trace": copy.deepcopy(kept)}
                message = message.model_copy(update={"metadata": {NAME: namespace}})
            messages.append(message)
            origin.append(i)
    return messages


def from_agent_input(agent_input: dict[str, Any], origin: list[int]) -> list[Message]:
    """The messages of an ``AgentInput`` (a dump, in either spelling)."""
    turns = agent_input["messages"]
    messages: list[Message] = []
    for i, turn in enumerate(turns):
        turn = sdk_dump(turn)
        if type(turn) is not dict or "role" not in turn:
            raise error("malformed_event", f"expected a conversation message (a dict with "
                        f"'role' and 'content'), got {short_repr(turn)}", i, base="messages")
        messages.append(from_role_turn(turn, i, base="messages"))
        origin.append(i)
    derived_key = next((k for k in ("input_files", "inputFiles") if k in agent_input), None)
    if derived_key is not None:
        dumps = [sdk_dump(turn) for turn in turns]
        last_user: dict[str, Any] = next(
            (t for t in reversed(dumps) if type(t) is dict and t.get("role") == "user"), {}
        )
        own = last_user.get("input_files", last_user.get("inputFiles", []))
        if agent_input[derived_key] != own:
            raise TraceError(
                "conflicting_fields",
                f"input_files {short_repr(agent_input[derived_key])} is not the last user "
                f"message's input_files {short_repr(own)} (the SDK derives one from the other)",
                path=derived_key, source=NAME,
            )
    kept = {key: _plain(value) for key, value in agent_input.items()
            if key not in ("messages", "input_files", "inputFiles")}
    try:
        check_json(kept, "agent_input")
    except TraceError as exc:
        raise exc.relocated(source=NAME) from None
    if messages:
        last = messages[-1]
        namespace = {**last.metadata.get(NAME, {}), "agent_input": copy.deepcopy(kept)}
        messages[-1] = last.model_copy(update={"metadata": {NAME: namespace}})
    return messages

