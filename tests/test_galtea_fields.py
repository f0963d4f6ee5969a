"""The Galtea SDK's turn fields, exactly: files, spellings, Trace records, AgentInput, history."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, ImagePart, TextPart, TraceError
from tracebridge.adapters import galtea
from tracebridge.adapters.galtea import Omission

DEED = {"uri": "gs://f/deed.pdf", "filename": "deed.pdf", "mime_type": "application/pdf",
        "type": "file"}
DEED_PART = FilePart(url="gs://f/deed.pdf", filename="deed.pdf", mime_type="application/pdf")


def error_of(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- files ---------------------------------------------------------------------------------


def test_files_follow_the_text_and_a_file_only_turn_has_no_text_part() -> None:
    trace = [
        {"role": "user", "content": "Who holds it?", "input_files": [DEED]},
        {"role": "assistant", "content": "", "output_files": [DEED]},
    ]
    messages = galtea.to_messages(trace)
    assert messages == [
        HumanMessage(content=[TextPart(text="Who holds it?"), DEED_PART]),
        AIMessage(content=[DEED_PART]),
    ]
    assert galtea.from_messages(messages) == trace


def test_a_files_missing_keys_spelling_odd_type_and_extras_are_kept_on_the_part() -> None:
    file = {"uri": "gs://f/a", "mimeType": None, "type": "FILE", "sha": "ab"}
    trace = [{"role": "assistant", "content": "x", "input_files": [file]}]
    part = FilePart(url="gs://f/a", metadata={"galtea": {
        "field": "input_files", "type": "FILE", "absent": ["filename"], "aliases": ["mimeType"],
        "extra": {"sha": "ab"}}})
    assert galtea.to_messages(trace) == [AIMessage(content=[TextPart(text="x"), part])]
    assert galtea.from_messages(galtea.to_messages(trace)) == trace


def test_camel_case_dumps_are_those_fields_and_are_written_back_as_spelled() -> None:
    trace = [{"role": "user", "content": "q", "retrievalContext": "ctx", "metadata": None,
              "inputFiles": [], "outputFiles": []}]
    assert galtea.to_messages(trace) == [HumanMessage(content="q", metadata={"galtea": {
        "retrieval_context": "ctx", "metadata": None,
        "empty_files": ["input_files", "output_files"],
        "aliases": ["retrievalContext", "inputFiles", "outputFiles"]}})]
    assert galtea.from_messages(galtea.to_messages(trace)) == trace


def test_a_field_spelled_twice_is_malformed() -> None:
    error = error_of(galtea.to_messages, [{"role": "user", "content": "q", "input_files": [],
                                           "inputFiles": []}])
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "conversation_turns[0].inputFiles")


@pytest.mark.parametrize(("files", "path"), [
    ({"uri": "gs://a"}, "conversation_turns[0].input_files"),
    ([{"filename": "a.pdf"}], "conversation_turns[0].input_files[0].uri"),
    ([{"uri": "gs://a", "filename": 3}], "conversation_turns[0].input_files[0].filename"),
    (["gs://a"], "conversation_turns[0].input_files[0]"),
])
def test_broken_attached_files_are_malformed_where_they_break(files: Any, path: str) -> None:
    error = error_of(galtea.to_messages, [{"role": "user", "content": "q", "input_files": files}])
    assert (error.code, error.index, error.path) == ("malformed_event", 0, path)


def test_a_file_by_data_or_id_cannot_be_attached_and_is_left_out_only_by_name() -> None:
    messages = [HumanMessage(content=[TextPart(text="see"), FilePart(data="JVBERi0=")])]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[1]")
    assert error.detail == (
        "a file part: Galtea attaches a file by its uri alone (no inline data, no provider file "
        "id); drop_non_text=True leaves it out (recorded in omitted)")
    assert galtea.from_messages(messages, drop_non_text=True) == [{"role": "user",
                                                                   "content": "see"}]


def test_text_after_a_file_is_refused_unless_the_order_may_change() -> None:
    messages = [HumanMessage(content=[DEED_PART, TextPart(text="this one")])]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.path) == ("not_representable", "messages[0].content")
    assert error.detail.endswith("drop=['part_order'] leaves it out (recorded in omitted)")
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, drop=["part_order"], omitted=omitted) == [
        {"role": "user", "content": "this one", "input_files": [DEED]}]
    assert omitted == [Omission(0, "part_order", "drop=part_order",
                                "files written after the text, input files first")]


def test_an_empty_text_part_beside_files_is_a_part_boundary() -> None:
    messages = [HumanMessage(content=[TextPart(text=""), DEED_PART])]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == ("not_representable", 0, "messages[0].content")
    assert error.detail == (
        "an empty text part: a Galtea turn holds one text; drop=['part_boundaries'] leaves it "
        "out (recorded in omitted)"
    )
    assert galtea.from_messages(messages, drop=["part_boundaries"]) == [
        {"role": "user", "content": "", "input_files": [DEED]}]


def test_images_stay_non_text_parts_even_by_url() -> None:
    messages = [HumanMessage(content=[ImagePart(url="https://x/a.png")])]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[0]")
    assert error.detail == (
        "an image part: Galtea turns hold only user and assistant text and files; "
        "drop_non_text=True leaves it out (recorded in omitted)"
    )


# --- history: test_cases.create(conversation_history=...) ------------------------------------


def test_history_writes_role_and_text_and_names_each_loss() -> None:
    messages = galtea.to_messages([
        {"role": "user", "content": "q", "retrieval_context": None, "metadata": None,
         "input_files": [], "output_files": []},
        {"role": "assistant", "content": "a", "retrieval_context": "doc",
         "metadata": {"k": 1}},
    ])
    error = error_of(galtea.from_messages, messages, shape="history")
    assert str(error) == (
        "galtea: messages[1].metadata.galtea.retrieval_context: a retrieval_context: "
        "conversation_history turns hold role and text only; drop=['retrieval_context'] "
        "leaves it out (recorded in omitted) [not_representable]")
    error = error_of(galtea.from_messages, messages, shape="history", drop=["retrieval_context"])
    assert (error.path, error.detail.split(";")[1]) == (
        "messages[1].metadata.galtea", " drop=['turn_metadata'] leaves it out (recorded in "
        "omitted)")
    assert galtea.from_messages(messages, shape="history",
                                drop=["retrieval_context", "turn_metadata"]) == [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


# --- Trace records and AgentInput ------------------------------------------------------------


class Status(str, enum.Enum):  # what a python-mode dump of a Trace holds
    PENDING = "PENDING"


def record(index: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"t{index}", "index": index, "session_id": "s1", **fields}


def test_a_pending_record_with_an_enum_status_is_a_user_message_alone() -> None:
    messages = galtea.to_messages([record(0, status=Status.PENDING, input="Hi?")])
    assert messages == [HumanMessage(content="Hi?", metadata={"galtea": {
        "retrieval_context": None, "metadata": None,
        "empty_files": ["input_files", "output_files"],
        "trace": {"id": "t0", "index": 0, "session_id": "s1", "status": "PENDING"}}})]


def test_a_file_only_input_in_the_apis_json_is_its_files_with_the_envelope_as_metadata() -> None:
    part = {"type": "file", "uri": "gs://f/deed.pdf", "filename": "deed.pdf",
            "mimeType": "application/pdf"}
    messages = galtea.to_messages([record(0, input={"content": [part]}, actualOutput="Got it.")])
    assert messages[0].content == [DEED_PART]
    assert messages[0].metadata["galtea"]["metadata"] == {"content": [part]}
    assert messages[1].text == "Got it."


def test_records_out_of_order_or_with_nothing_to_read_are_malformed() -> None:
    error = error_of(galtea.to_messages, [record(1, input="a"), record(0, input="b")])
    assert (error.code, error.index, error.path) == ("malformed_event", 1, "traces[1].index")
    error = error_of(galtea.to_messages, [record(0, input="a"), record(1, status="PENDING")])
    assert (error.code, error.index, error.path) == ("malformed_event", 1, "traces[1]")


def test_a_record_cannot_be_written_as_a_turn_unless_dropped_by_name() -> None:
    messages = galtea.to_messages([record(0, input="q", actual_output="a", latency=812.0)])
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].metadata.galtea.trace")
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, drop=["trace_records"], omitted=omitted) == [
        {"role": "user", "content": "q", "retrieval_context": None, "metadata": None,
         "input_files": [], "output_files": []},
        {"role": "assistant", "content": "a", "retrieval_context": None, "metadata": None,
         "input_files": [], "output_files": []},
    ]
    assert [(o.index, o.what, o.option) for o in omitted] == [
        (0, "trace_record", "drop=trace_records")]


def test_an_agent_inputs_derived_files_must_be_its_last_user_messages() -> None:
    agent_input = {"messages": [{"role": "user", "content": "q", "input_files": [DEED]}],
                   "session_id": "s1", "input_files": []}
    error = error_of(galtea.to_messages, agent_input)
    assert (error.code, error.path) == ("conflicting_fields", "input_files")
    agent_input["input_files"] = [DEED]
    messages = galtea.to_messages(agent_input)
    assert messages[0].metadata == {"galtea": {"agent_input": {"session_id": "s1"}}}
    assert error_of(galtea.from_messages, messages).path == (
        "messages[0].metadata.galtea.agent_input")
    assert galtea.from_messages(messages, drop=["agent_context"]) == agent_input["messages"]


@pytest.mark.parametrize(("trace", "expected"), [
    ([record(0, input="q")], True),
    ({"messages": [], "sessionId": "s"}, True),
    ([record(0, input="q"), {"role": "user", "content": "q"}], False),
])
def test_detect_takes_records_and_agent_inputs(trace: Any, expected: bool) -> None:
    assert galtea.detect(trace) is expected
