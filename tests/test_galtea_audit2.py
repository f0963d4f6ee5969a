"""Galtea: what a second audit found read, written or split silently (or raising raw), now kept
or refused where it is.

1. An empty ``user_message`` / ``assistant_message`` in a ``Trace`` envelope, and an output
   envelope of its text alone, read like their absence (plain text).
2. An ``AgentInput`` that cannot dump itself (a plain dict appended to its ``messages``, or
   ``model_construct`` without them) raised a raw ``AttributeError``.
3. Values the record reader compares (two spellings, an envelope and ``input_data``, session
   ids), nested past Python's depth, raised a raw ``RecursionError``.
4. A conversation read from the SDK's own objects could not be written as pairs (the null
   ``retrieval_context`` of its user messages).
5. The ``to_messages`` fast path took a ``str`` enum role the general reader refuses.
6. The writer left out, without a word, namespace records the written turn does not carry.
7. ``split_current_turn`` filled ``omitted`` and then refused.
8. A record, ``AgentInput`` or role turn in a dict subclass read as another shape or was
   refused / not detected.
9. Fields said twice in a record were not all cross-checked.
"""

from __future__ import annotations

import enum
import json
import warnings
from collections import OrderedDict
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    FilePart,
    HumanMessage,
    SystemMessage,
    TextPart,
    TraceError,
    registry,
)
from tracebridge.adapters import galtea
from tracebridge.hashing import transcript_hash

sdk = pytest.importorskip("galtea")
from galtea.domain.models.trace import Trace  # noqa: E402
from galtea.utils.agent import AgentInput, ConversationMessage  # noqa: E402

RECORD = {"id": "t1", "index": 0, "sessionId": "s1"}
FILE_PART = {"type": "file", "uri": "gs://b/scan.png", "filename": "scan.png",
             "mimeType": "image/png"}
FILE = {"uri": "gs://b/scan.png", "filename": "scan.png", "mime_type": "image/png",
        "type": "file"}
SCAN = FilePart(url="gs://b/scan.png", filename="scan.png", mime_type="image/png")


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    assert caught.value.source == "galtea"
    return caught.value.code, caught.value.index, caught.value.path


def _api(**fields: Any) -> dict[str, Any]:
    return {**RECORD, **fields}


def _forms(record: dict[str, Any]) -> list[list[Any]]:
    """The API's JSON of one record, the SDK's Trace of it, and its JSON dump."""
    trace = Trace.model_validate(json.loads(json.dumps(record)))
    return [[record], [trace], [trace.model_dump(mode="json")]]


def _asked(content: Any, metadata: Any, empty: list[str]) -> HumanMessage:
    return HumanMessage(content=content, metadata={"galtea": {
        "retrieval_context": None, "metadata": metadata, "empty_files": empty,
        "trace": RECORD}})


def _answered(content: Any, metadata: Any, empty: list[str]) -> AIMessage:
    return AIMessage(content=content, metadata={"galtea": {
        "retrieval_context": None, "metadata": metadata, "empty_files": empty}})


def _without_trace(messages: list[Any]) -> list[Any]:
    out = []
    for message in messages:
        namespace = {k: v for k, v in message.metadata["galtea"].items() if k != "trace"}
        out.append(message.model_copy(update={"metadata": {"galtea": namespace}}))
    return out


def _reads_back_from_roles(messages: list[Any]) -> None:
    turns = galtea.from_messages(messages, drop=["trace_records"])
    assert galtea.to_messages(turns) == _without_trace(messages)


# --- 1. empty texts and a text-only envelope ---------------------------------------------------

def test_an_empty_user_message_beside_files_is_kept_apart_from_none() -> None:
    empty = _api(input={"user_message": "", "content": [FILE_PART]}, actualOutput="ok")
    absent = _api(input={"content": [FILE_PART]}, actualOutput="ok")
    assert galtea.to_messages([empty]) == [
        _asked([SCAN], {"user_message": "", "content": [FILE_PART]}, ["output_files"]),
        _answered("ok", None, ["input_files", "output_files"]),
    ]
    for with_empty, without in zip(_forms(empty), _forms(absent), strict=True):
        read = galtea.to_messages(with_empty)
        assert read[0].metadata["galtea"]["metadata"] == {"user_message": "",
                                                          "content": [FILE_PART]}
        assert galtea.to_messages(without)[0].metadata["galtea"]["metadata"] == {
            "content": [FILE_PART]}
    _reads_back_from_roles(galtea.to_messages([empty]))


def test_an_empty_user_message_beside_other_keys_is_kept_apart_from_none() -> None:
    empty = _api(input={"user_message": "", "chat_type": "x"}, actualOutput="ok")
    messages = galtea.to_messages([empty])
    assert messages[0] == _asked("", {"user_message": "", "chat_type": "x"},
                                 ["input_files", "output_files"])
    for form in _forms(empty):
        assert galtea.to_messages(form)[0].metadata["galtea"]["metadata"] == {
            "user_message": "", "chat_type": "x"}
    for form in _forms(_api(input={"chat_type": "x"}, actualOutput="ok")):
        assert galtea.to_messages(form)[0].metadata["galtea"]["metadata"] == {"chat_type": "x"}
    _reads_back_from_roles(messages)
    assert galtea.from_messages(messages, drop=["trace_records"])[0] == {
        "role": "user", "content": "", "retrieval_context": None,
        "metadata": {"user_message": "", "chat_type": "x"}, "input_files": [],
        "output_files": []}


def test_an_empty_answer_text_beside_files_is_kept_with_the_rest_of_the_envelope() -> None:
    envelope = {"assistant_message": "", "content": [FILE_PART]}
    messages = galtea.to_messages([_api(input="hi", actualOutput=envelope)])
    assert messages[1] == _answered([SCAN], envelope, ["input_files"])
    absent = galtea.to_messages([_api(input="hi", actualOutput={"content": [FILE_PART]})])
    assert absent[1] == _answered([SCAN], None, ["input_files"])
    _reads_back_from_roles(messages)


@pytest.mark.parametrize(("envelope", "kept"), [
    ({"assistant_message": "ok"}, {}),
    ({"assistant_message": "ok", "content": []}, {"content": []}),
])
def test_an_output_envelope_of_its_text_alone_is_not_plain_text(
    envelope: dict[str, Any], kept: dict[str, Any]
) -> None:
    messages = galtea.to_messages([_api(input="hi", actualOutput=envelope)])
    assert messages[1] == _answered("ok", kept, ["input_files", "output_files"])
    plain = galtea.to_messages([_api(input="hi", actualOutput="ok")])
    assert plain[1] == _answered("ok", None, ["input_files", "output_files"])
    assert galtea.from_messages(messages, drop=["trace_records"])[1] == {
        "role": "assistant", "content": "ok", "retrieval_context": None, "metadata": kept,
        "input_files": [], "output_files": []}
    _reads_back_from_roles(messages)


# --- 2. an AgentInput that cannot dump itself ---------------------------------------------------

def _agent_input_with_a_dict() -> Any:
    agent_input = AgentInput(messages=[ConversationMessage(role="user", content="hi")],
                             session_id="s1")
    agent_input.messages.append({"role": "assistant", "content": "hello"})  # type: ignore[arg-type]
    return agent_input


def test_an_agent_input_with_a_plain_dict_appended_is_malformed_at_it() -> None:
    agent_input = _agent_input_with_a_dict()
    assert _refused(galtea.to_messages, agent_input) == ("malformed_event", 1, "messages[1]")
    assert galtea.detect(agent_input) is True
    assert _refused(registry.convert, agent_input, source="auto", target="openai_chat") == (
        "malformed_event", 1, "messages[1]")
    assert _refused(galtea.to_messages, [agent_input]) == (
        "malformed_event", 0, "conversation_turns[0].messages[1]")


def test_an_agent_input_made_without_messages_is_malformed_at_them() -> None:
    agent_input = AgentInput.model_construct(session_id="s1")
    assert _refused(galtea.to_messages, agent_input) == ("malformed_event", None, "messages")
    assert galtea.detect(agent_input) is True


# --- 3. values too deep to compare --------------------------------------------------------------

def _deep(n: int = 5000) -> Any:
    """A dict nested ``n`` levels deep: ``==`` on two of them overflows Python's stack."""
    value: Any = "leaf"
    for _ in range(n):
        value = {"a": value}
    return value


@pytest.mark.parametrize(("fields", "path"), [
    ({"input_data": "deep", "inputData": "deep"}, "traces[0].input_data.a"),
    ({"input": {"user_message": "q", "k": "deep"},
      "input_data": {"user_message": "q", "k": "deep"}}, "traces[0].input.k"),
    ({"input": "q", "actual_output": "deep", "actualOutput": "deep"},
     "traces[0].actual_output.a"),
    ({"input": "q", "actualOutput": {"assistant_message": "a", "k": "deep"},
      "actual_output_data": {"assistant_message": "a", "k": "deep"}},
     "traces[0].actualOutput.k"),
], ids=["input_data-twice", "envelope-and-input_data", "output-twice",
        "output-envelope-and-data"])
def test_values_too_deep_to_compare_are_unserializable_where_they_are(
    fields: dict[str, Any], path: str
) -> None:
    def deepened(value: Any) -> Any:
        if value == "deep":
            return _deep()
        if type(value) is dict:
            return {key: deepened(item) for key, item in value.items()}
        return value

    record = {"id": "t", "index": 0, "session_id": "s", **deepened(fields)}
    assert _refused(galtea.to_messages, [record]) == ("unserializable_value", 0, path)


def test_session_ids_too_deep_to_compare_are_unserializable_where_they_are() -> None:
    records = [{"id": "t", "index": 0, "session_id": _deep(), "input": "q"},
               {"id": "t2", "index": 1, "session_id": _deep(), "input": "q"}]
    assert _refused(galtea.to_messages, records) == (
        "unserializable_value", 0, "traces[0].session_id.a")


# --- 4. pairs from what the SDK's objects read as -----------------------------------------------

def test_pairs_take_the_null_retrieval_context_of_a_user_message_read_from_the_sdk() -> None:
    messages = galtea.to_messages([
        ConversationMessage(role="user", content="q1"),
        ConversationMessage(role="assistant", content="a1", retrieval_context="doc"),
    ])
    assert messages[0].metadata == {"galtea": {
        "retrieval_context": None, "metadata": None,
        "empty_files": ["input_files", "output_files"]}}
    pairs = galtea.from_messages(messages, shape="pairs")
    assert pairs == [{"input": "q1", "actual_output": "a1", "retrieval_context": "doc"}]
    assert transcript_hash(galtea.to_messages(pairs)) == transcript_hash(messages)
    current = galtea.split_current_turn(messages)
    assert (current, current.retrieval_context) == (([], "q1", "a1"), "doc")
    # a retrieval context that says something still has no place on a pair's question
    said = galtea.to_messages([
        {"role": "user", "content": "q", "retrieval_context": "doc"},
        {"role": "assistant", "content": "a"},
    ])
    assert _refused(galtea.from_messages, said, shape="pairs") == (
        "not_representable", 0, "messages[0].metadata.galtea")
    assert _refused(galtea.split_current_turn, said) == (
        "not_representable", 0, "messages[0].metadata.galtea")


def test_pairs_take_trace_records_once_the_record_is_dropped() -> None:
    traces = [Trace(id="t1", index=0, session_id="s1", input="q", actual_output="a")]
    messages = galtea.to_messages(traces)
    assert galtea.from_messages(messages, shape="pairs", drop=["trace_records"]) == [
        {"input": "q", "actual_output": "a", "retrieval_context": None}]


# --- 5. a str enum role on the fast path --------------------------------------------------------

class Role(str, enum.Enum):
    USER = "user"
    ASSISTANT = "assistant"


@pytest.mark.parametrize(("turns", "index"), [
    ([{"role": Role.USER, "content": "hi"}, {"role": "assistant", "content": "hello"}], 0),
    ([{"role": "user", "content": "hi"}, {"role": Role.ASSISTANT, "content": "hello"}], 1),
])
def test_a_str_enum_role_is_refused_on_the_fast_path_too(turns: list[Any], index: int) -> None:
    assert _refused(galtea.to_messages, turns) == (
        "malformed_event", index, f"conversation_turns[{index}].role")


# --- 6. namespace records the written turn does not carry --------------------------------------

def _file(namespace: dict[str, Any]) -> FilePart:
    return FilePart(url="gs://a", metadata={"galtea": namespace})


@pytest.mark.parametrize(("message", "path"), [
    (HumanMessage(content="a", metadata={"galtea": {"aliases": ["retrievalContext"]}}),
     "messages[0].metadata.galtea.aliases"),
    (HumanMessage(content="a", metadata={"galtea": {"aliases": ["inputFiles"]}}),
     "messages[0].metadata.galtea.aliases"),
    (AIMessage(content=[TextPart(text="a"), FilePart(url="gs://a")],
               metadata={"galtea": {"aliases": ["outputFiles", "inputFiles"]}}),
     "messages[0].metadata.galtea.aliases"),
    (HumanMessage(content=[TextPart(text="a"), FilePart(url="gs://a")],
                  metadata={"galtea": {"empty_files": ["input_files"]}}),
     "messages[0].metadata.galtea.empty_files"),
    (HumanMessage(content="a", metadata={"galtea": {"extra": {}}}),
     "messages[0].metadata.galtea.extra"),
    (HumanMessage(content=[TextPart(text="a"), _file({"absent": []})]),
     "messages[0].content[1].metadata.galtea.absent"),
    (HumanMessage(content=[TextPart(text="a"), _file({"aliases": []})]),
     "messages[0].content[1].metadata.galtea.aliases"),
    (HumanMessage(content=[TextPart(text="a"), _file({"extra": {}})]),
     "messages[0].content[1].metadata.galtea.extra"),
    (HumanMessage(content=[TextPart(text="a"), _file({"field": "input_files"})]),
     "messages[0].content[1].metadata.galtea.field"),
    (AIMessage(content=[TextPart(text="a"), _file({"field": "output_files"})]),
     "messages[0].content[1].metadata.galtea.field"),
    (HumanMessage(content=[TextPart(text="a"),
                           _file({"absent": ["mime_type"], "aliases": ["mimeType"]})]),
     "messages[0].content[1].metadata.galtea.aliases"),
], ids=["alias-retrievalContext", "alias-inputFiles", "alias-of-other-list",
        "empty_files-with-files", "extra-empty", "file-absent-empty", "file-aliases-empty",
        "file-extra-empty", "file-field-default-user", "file-field-default-assistant",
        "file-alias-of-absent"])
def test_a_namespace_recording_what_the_turn_does_not_carry_is_malformed(
    message: Any, path: str
) -> None:
    assert _refused(galtea.from_messages, [message]) == ("malformed_event", 0, path)


def test_aliases_name_only_what_the_turn_carries_as_the_reader_records_them() -> None:
    lacking = HumanMessage(content="a", metadata={"galtea": {
        "retrieval_context": None, "aliases": ["retrievalContext", "outputFiles"]}})
    assert _refused(galtea.from_messages, [lacking]) == (
        "malformed_event", 0, "messages[0].metadata.galtea.aliases")
    # what the reader records is written back whole
    turns = [
        {"role": "user", "content": "a", "retrievalContext": None, "inputFiles": [],
         "metadata": {"k": 1}, "x": 1},
        {"role": "assistant", "content": "b", "outputFiles": [
            {"uri": "gs://a", "mimeType": "text/plain", "type": "doc", "size": 3}],
         "inputFiles": [{"uri": "gs://b"}]},
    ]
    messages = galtea.to_messages(turns)
    assert galtea.from_messages(messages) == turns
    assert galtea.to_messages(galtea.from_messages(messages)) == messages


# --- 7. split_current_turn's omitted ------------------------------------------------------------

def test_split_current_turn_fills_omitted_only_when_it_succeeds() -> None:
    omitted: list[galtea.Omission] = []
    with pytest.raises(TraceError) as caught:
        galtea.split_current_turn([SystemMessage(content="be brief"), HumanMessage(content="q")],
                                  shape="roles", skip_system=True, omitted=omitted)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1]")
    assert omitted == []
    with pytest.raises(TraceError) as caught:
        galtea.split_current_turn(
            [SystemMessage(content="s"), HumanMessage(content="q"),
             AIMessage(content="a", metadata={"galtea": {"extra": {"k": 1}}})],
            skip_system=True, omitted=omitted)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata.galtea")
    assert omitted == []
    done = galtea.split_current_turn(
        [SystemMessage(content="s"), HumanMessage(content="q"), AIMessage(content="a")],
        skip_system=True, omitted=omitted)
    assert done == ([], "q", "a")
    assert omitted == [galtea.Omission(0, "system_message", "skip_system", "system message 's'")]


# --- 8. mappings other than dict ----------------------------------------------------------------

def test_a_record_in_an_ordered_dict_reads_as_the_record() -> None:
    record = {"id": "t1", "index": 0, "session_id": "s1", "status": "GENERATED", "input": "hi",
              "input_files": [FILE], "actual_output": "ok"}
    assert galtea.to_messages([OrderedDict(record)]) == galtea.to_messages([record])
    assert galtea.to_messages([OrderedDict(record)])[0].content == [TextPart(text="hi"), SCAN]
    assert galtea.detect([OrderedDict(record)]) is True


def test_an_agent_input_in_an_ordered_dict_reads_as_the_agent_input() -> None:
    agent_input = {"messages": [OrderedDict(role="user", content="hi")], "session_id": "s1"}
    assert galtea.to_messages(OrderedDict(agent_input)) == [HumanMessage(
        content="hi", metadata={"galtea": {"agent_input": {"session_id": "s1"}}})]
    assert galtea.detect(OrderedDict(agent_input)) is True


def test_role_turns_in_ordered_dicts_are_detected_as_they_are_read() -> None:
    turns = [OrderedDict(role="user", content="x"), OrderedDict(role="assistant", content="y")]
    assert galtea.detect(turns) is True
    assert galtea.to_messages(turns) == [HumanMessage(content="x"), AIMessage(content="y")]
    assert registry.detect_format(turns) == "openai_chat"  # both read it alike


# --- 9. fields said twice -----------------------------------------------------------------------

def test_a_session_spelled_twice_must_be_one() -> None:
    records = [
        {"id": "t1", "index": 0, "session_id": "a", "sessionId": "x", "input": "q1"},
        {"id": "t2", "index": 1, "session_id": "a", "sessionId": "y", "input": "q2"},
    ]
    assert _refused(galtea.to_messages, records) == (
        "conflicting_fields", 0, "traces[0].sessionId")
    same = [{**record, "sessionId": "a"} for record in records]
    assert [m.text for m in galtea.to_messages(same)] == ["q1", "q2"]


def _dump(**fields: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trace = Trace.model_validate(_api(**fields))
    return trace.model_dump(mode="json")


def test_a_dumps_input_files_must_be_its_input_datas() -> None:
    dump = _dump(input={"user_message": "q", "content": [FILE_PART]}, actualOutput="a")
    assert galtea.to_messages([dump])[0].content == [TextPart(text="q"), SCAN]
    assert _refused(galtea.to_messages, [{**dump, "input_files": []}]) == (
        "conflicting_fields", 0, "traces[0].input_files")
    camel = Trace.model_validate(_api(input={"user_message": "q", "content": [FILE_PART]},
                                      actualOutput="a")).model_dump(by_alias=True, mode="json")
    assert _refused(galtea.to_messages, [{**camel, "inputFiles": []}]) == (
        "conflicting_fields", 0, "traces[0].inputFiles")


def test_a_dumps_output_must_be_its_output_datas() -> None:
    dump = _dump(input="q", actualOutput={"assistant_message": "a", "content": [FILE_PART]})
    assert galtea.to_messages([dump])[1].content == [TextPart(text="a"), SCAN]
    other = {**dump, "actual_output_data": {**dump["actual_output_data"],
                                            "assistant_message": "OTHER"}}
    assert _refused(galtea.to_messages, [other]) == (
        "conflicting_fields", 0, "traces[0].actual_output")
    assert _refused(galtea.to_messages, [{**dump, "actual_output_files": []}]) == (
        "conflicting_fields", 0, "traces[0].actual_output_files")
    no_text = {**dump, "actual_output_data": {"content": [FILE_PART]}}
    assert _refused(galtea.to_messages, [no_text]) == (
        "conflicting_fields", 0, "traces[0].actual_output")


def test_an_api_output_envelope_must_be_its_output_data() -> None:
    record = _api(input="q", actualOutput={"assistant_message": "a"},
                  actual_output_data={"assistant_message": "OTHER"})
    assert _refused(galtea.to_messages, [record]) == (
        "conflicting_fields", 0, "traces[0].actualOutput")
    same = {**record, "actual_output_data": {"assistant_message": "a"}}
    assert [m.text for m in galtea.to_messages([same])] == ["q", "a"]


def test_output_data_spelled_twice_must_be_one() -> None:
    record = _api(input="q", actual_output="a", actual_output_data={"assistant_message": "a"},
                  actualOutputData={"assistant_message": "b"})
    assert _refused(galtea.to_messages, [record]) == (
        "conflicting_fields", 0, "traces[0].actualOutputData")
