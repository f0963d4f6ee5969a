"""Galtea records and joined turns, and Ray scoring of view-typed columns.

``score_batch`` raised Arrow's ``ArrowNotImplementedError`` on a batch with a ``string_view``
(or other view-typed) column, which ``convert_batch`` reads. A ``Trace`` record's file list
that was not a list but falsy (``{}``, ``""``, ``0``, ``false``, ``null``) vanished when no
message was read from its side. ``input: ""`` and ``input: null`` beside input files (and
``actual_output: ""`` and ``null`` beside output files) read to the same messages. After
``join_consecutive``, what was refused or left out of a later message's Galtea fields was
named at the first message of the run. And two messages whose fields said the same thing,
spelled apart or beside an empty file list, were refused a join.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from test_galtea_audit2 import _refused

from tracebridge import AIMessage, FilePart, HumanMessage, TraceError, convert
from tracebridge import native as tracebridge_native
from tracebridge.adapters import galtea
from tracebridge.ray_data import SCORE_COLUMNS, score_batch

RECORD = {"id": "t0", "index": 0, "session_id": "s"}
FILE = {"uri": "gs://b/x.pdf", "filename": "x.pdf", "mime_type": "application/pdf",
        "type": "file"}
FILE_PART = FilePart(url="gs://b/x.pdf", filename="x.pdf", mime_type="application/pdf")


def _galtea(**fields: Any) -> dict[str, Any]:
    return {"galtea": fields}


# --- 1. score_batch on view-typed columns ------------------------------------------------------

CHAT = json.dumps([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
CALLS = json.dumps([
    {"type": "human", "content": "weather?"},
    {"type": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "w", "args": {}}]},
    {"type": "tool", "tool_call_id": "c1", "content": "sun"},
    {"type": "ai", "content": "sunny"},
])


def _scored_rows(table: pa.Table, metrics: list[str], source: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = score_batch(table, metrics=metrics, source=source).to_pylist()
    for row in rows:
        del row["scored_at"]  # when it was made: the two runs differ by the clock alone
    return rows


@pytest.mark.parametrize("metrics", [["tool_call_f1"], ["tool_call_f1", "tool_call_accuracy"]])
def test_a_string_view_record_column_is_scored_as_a_string_one(metrics: list[str]) -> None:
    records = [CHAT, "{not json", None]
    viewed = pa.table({"record": pa.array(records, pa.string_view())})
    plain = pa.table({"record": pa.array(records, pa.string())})
    out = score_batch(viewed, metrics=metrics, source="galtea")
    assert out.schema.field("record").type == pa.string_view()
    assert out.column_names == ["record", *SCORE_COLUMNS]
    assert _scored_rows(viewed, metrics, "galtea") == _scored_rows(plain, metrics, "galtea")
    assert out.column("state").to_pylist() == [
        state for state in ("unscorable", "errored", "errored") for _ in metrics]
    assert out.column("error_code").to_pylist() == [
        code for code in (None, "not_json", "no_record") for _ in metrics]


def test_view_typed_passthrough_columns_are_repeated_with_their_types() -> None:
    metrics = ["tool_call_f1", "tool_call_accuracy"]
    columns = {
        "record": pa.array([CALLS, CHAT]),
        "note": pa.array(["first", None], pa.string_view()),
        "raw": pa.array([b"\x00a", b"b"], pa.binary_view()),
        "tags": pa.array([["x"], ["y", "z"]], pa.list_(pa.string_view())),
    }
    viewed = pa.table(columns)
    plain = pa.table({"record": columns["record"], "note": pa.array(["first", None]),
                      "raw": pa.array([b"\x00a", b"b"]), "tags": pa.array([["x"], ["y", "z"]])})
    out = score_batch(viewed, metrics=metrics, source="langchain")
    assert [out.schema.field(name).type for name in columns] == [
        pa.string(), pa.string_view(), pa.binary_view(), pa.list_(pa.string_view())]
    assert out.select(["note", "raw", "tags", "metric"]).to_pylist() == [
        {"note": "first", "raw": b"\x00a", "tags": ["x"], "metric": "tool_call_f1"},
        {"note": "first", "raw": b"\x00a", "tags": ["x"], "metric": "tool_call_accuracy"},
        {"note": None, "raw": b"b", "tags": ["y", "z"], "metric": "tool_call_f1"},
        {"note": None, "raw": b"b", "tags": ["y", "z"], "metric": "tool_call_accuracy"},
    ]
    assert _scored_rows(viewed, metrics, "langchain") == _scored_rows(plain, metrics, "langchain")
    # the chat is no langchain trace: its rows are errored, the others read
    assert out.column("state").to_pylist() == ["unscorable", "unscorable", "errored", "errored"]
    assert out.column("error_code").to_pylist() == [None, None, "malformed_event",
                                                    "malformed_event"]


def test_a_string_view_batch_of_no_rows_keeps_its_schema() -> None:
    empty = pa.table({"record": pa.array([], pa.string_view())})
    out = score_batch(empty, metrics=["tool_call_f1", "tool_call_accuracy"], source="galtea")
    assert out.num_rows == 0
    assert out.schema.field("record").type == pa.string_view()


# --- 2. a record's file list that is not a list ------------------------------------------------

NOT_LISTS = [{}, "", 0, False, None]


@pytest.mark.parametrize("value", NOT_LISTS)
@pytest.mark.parametrize("key", ["input_files", "inputFiles"])
def test_an_input_file_list_that_is_not_a_list_is_malformed_with_no_input(
    key: str, value: Any
) -> None:
    alone = [{**RECORD, "input": None, key: value, "actual_output": "x"}]
    beside = [{**RECORD, "input": "hi", key: value, "actual_output": "x"}]
    assert _refused(galtea.to_messages, alone) == ("malformed_event", 0, f"traces[0].{key}")
    assert _refused(galtea.to_messages, beside) == ("malformed_event", 0, f"traces[0].{key}")


@pytest.mark.parametrize("value", NOT_LISTS)
@pytest.mark.parametrize("key", ["actual_output_files", "actualOutputFiles"])
def test_an_output_file_list_that_is_not_a_list_is_malformed_with_no_output(
    key: str, value: Any
) -> None:
    alone = [{**RECORD, "input": "hi", key: value}]
    beside = [{**RECORD, "input": "hi", "actual_output": "o", key: value}]
    assert _refused(galtea.to_messages, alone) == ("malformed_event", 0, f"traces[0].{key}")
    assert _refused(galtea.to_messages, beside) == ("malformed_event", 0, f"traces[0].{key}")


def test_the_refusal_of_a_file_list_says_what_it_got() -> None:
    with pytest.raises(TraceError) as caught:
        galtea.to_messages([{**RECORD, "input_files": {}, "actual_output": "x"}])
    assert caught.value.detail == "expected a list of attached files, got dict {}"


def test_an_empty_file_list_with_no_message_on_its_side_is_still_read() -> None:
    [answer] = galtea.to_messages([{**RECORD, "input": None, "input_files": [],
                                    "actual_output": "x"}])
    assert answer.metadata["galtea"]["trace"] == RECORD


# --- 4. an empty text beside files is not a null one --------------------------------------------

def _asked(content: Any, trace: dict[str, Any], empty: list[str]) -> HumanMessage:
    return HumanMessage(content=content, metadata=_galtea(
        retrieval_context=None, metadata=None, empty_files=empty, trace=trace))


def _answered(content: Any, empty: list[str]) -> AIMessage:
    return AIMessage(content=content, metadata=_galtea(
        retrieval_context=None, metadata=None, empty_files=empty))


def test_an_empty_input_beside_files_is_kept_apart_from_a_null_one() -> None:
    empty = galtea.to_messages([{**RECORD, "input": "", "input_files": [FILE],
                                 "actual_output": "ok"}])
    null = galtea.to_messages([{**RECORD, "input": None, "input_files": [FILE],
                                "actual_output": "ok"}])
    answer = _answered("ok", ["input_files", "output_files"])
    assert empty == [_asked([FILE_PART], {**RECORD, "input": ""}, ["output_files"]), answer]
    assert null == [_asked([FILE_PART], RECORD, ["output_files"]), answer]


def test_an_empty_output_beside_files_is_kept_apart_from_a_null_one() -> None:
    empty = galtea.to_messages([{**RECORD, "input": "hi", "actual_output": "",
                                 "actual_output_files": [FILE]}])
    null = galtea.to_messages([{**RECORD, "input": "hi", "actual_output": None,
                                "actual_output_files": [FILE]}])
    answer = _answered([FILE_PART], ["input_files"])
    both = ["input_files", "output_files"]
    assert empty == [_asked("hi", {**RECORD, "actual_output": ""}, both), answer]
    assert null == [_asked("hi", RECORD, both), answer]


def test_an_empty_output_without_files_is_an_empty_answer_as_before() -> None:
    messages = galtea.to_messages([{**RECORD, "input": "hi", "actual_output": ""}])
    assert messages[0].metadata["galtea"]["trace"] == RECORD
    assert messages[1] == _answered("", ["input_files", "output_files"])


@pytest.mark.parametrize(("fields", "key"), [
    ({"input": "", "input_files": [FILE], "actual_output": "ok"}, "input"),
    ({"input": "hi", "actual_output": "", "actual_output_files": [FILE]}, "actual_output"),
])
def test_sdk_traces_with_an_empty_or_null_text_beside_files_read_apart(
    fields: dict[str, Any], key: str
) -> None:
    sdk = pytest.importorskip("galtea")
    empty = sdk.Trace(**RECORD, **fields)
    null = sdk.Trace(**RECORD, **{**fields, key: None})
    assert getattr(empty, key) == ""
    assert getattr(null, key) is None
    read_empty, read_null = galtea.to_messages([empty]), galtea.to_messages([null])
    assert read_empty != read_null
    assert [m.content for m in read_empty] == [m.content for m in read_null]
    assert read_empty[0].metadata["galtea"]["trace"][key] == ""
    assert key not in read_null[0].metadata["galtea"]["trace"]
    # every dump reads as the object does, the key kept as the dump spells it
    assert galtea.to_messages([empty.model_dump()]) == read_empty
    assert galtea.to_messages([empty.model_dump(mode="json")]) == read_empty
    camel = galtea.to_messages([empty.model_dump(mode="json", by_alias=True)])
    spelled = "actualOutput" if key == "actual_output" else key
    assert camel[0].metadata["galtea"]["trace"][spelled] == ""


def test_an_empty_input_beside_files_round_trips_through_tracebridge_json() -> None:
    records = [{**RECORD, "input": "", "input_files": [FILE], "actual_output": ""},
               {"id": "t1", "index": 1, "session_id": "s", "input": "more",
                "actual_output": "", "actual_output_files": [FILE]}]
    messages = galtea.to_messages(records)
    written = convert(records, source="galtea", target="tracebridge")
    assert tracebridge_native.to_messages(json.loads(json.dumps(written))) == messages
    assert messages[0].metadata["galtea"]["trace"] == {**RECORD, "input": ""}
    assert messages[2].metadata["galtea"]["trace"] == {
        "id": "t1", "index": 1, "session_id": "s", "actual_output": ""}
    assert messages[1] == _answered("", ["input_files", "output_files"])


# --- 3. refusals and omissions of a joined message's fields ------------------------------------

JOINED_QUESTION = [HumanMessage(content="a"),
                   HumanMessage(content="b", metadata=_galtea(metadata={"k": 1})),
                   AIMessage(content="d")]


@pytest.mark.parametrize("shape", ["pairs", "history"])
def test_a_later_joined_messages_metadata_is_refused_at_that_message(shape: str) -> None:
    assert _refused(galtea.from_messages, JOINED_QUESTION, shape=shape,
                    join_consecutive="\n") == ("not_representable", 1,
                                               "messages[1].metadata.galtea")


@pytest.mark.parametrize("shape", ["pairs", "history"])
def test_a_later_joined_messages_metadata_is_left_out_at_that_message(shape: str) -> None:
    omitted: list[galtea.Omission] = []
    galtea.from_messages(JOINED_QUESTION, shape=shape, join_consecutive="\n",
                         drop=["turn_metadata"], omitted=omitted)
    assert [(o.index, o.what, o.option) for o in omitted] == [
        (1, "joined", "join_consecutive"), (1, "turn_metadata", "drop=turn_metadata")]


def test_a_later_joined_questions_retrieval_context_is_named_at_its_message() -> None:
    messages = [HumanMessage(content="a"),
                HumanMessage(content="b", metadata=_galtea(retrieval_context="r")),
                AIMessage(content="d")]
    assert _refused(galtea.from_messages, messages, shape="pairs", join_consecutive="\n") == (
        "not_representable", 1, "messages[1].metadata.galtea")
    omitted: list[galtea.Omission] = []
    galtea.from_messages(messages, shape="pairs", join_consecutive="\n",
                         drop=["retrieval_context"], omitted=omitted)
    assert [(o.index, o.what) for o in omitted] == [(1, "joined"), (1, "retrieval_context")]


def test_a_later_joined_answers_fields_are_named_at_its_message() -> None:
    metadata = [HumanMessage(content="q"), AIMessage(content="a"),
                AIMessage(content="b", metadata=_galtea(metadata={"k": 1}))]
    assert _refused(galtea.from_messages, metadata, shape="pairs", join_consecutive="\n") == (
        "not_representable", 2, "messages[2].metadata.galtea.metadata")
    context = [HumanMessage(content="q"), AIMessage(content="a"),
               AIMessage(content="b", metadata=_galtea(retrieval_context="r"))]
    assert _refused(galtea.from_messages, context, shape="history",
                    join_consecutive="\n") == (
        "not_representable", 2, "messages[2].metadata.galtea.retrieval_context")


@pytest.mark.parametrize("shape", ["roles", "pairs"])
def test_a_later_joined_messages_extra_key_clash_is_at_that_message(shape: str) -> None:
    clash = "input" if shape == "roles" else "role"
    messages = [HumanMessage(content="q"), AIMessage(content="a"),
                AIMessage(content="b", metadata=_galtea(extra={clash: "x"}))]
    assert _refused(galtea.from_messages, messages, shape=shape, join_consecutive="\n") == (
        "not_representable", 2, f"messages[2].metadata.galtea.extra.{clash}")


@pytest.mark.parametrize("shape", ["roles", "pairs"])
def test_split_names_a_later_joined_messages_fields_at_that_message(shape: str) -> None:
    assert _refused(galtea.split_current_turn, JOINED_QUESTION, shape=shape,
                    join_consecutive="\n") == ("not_representable", 1,
                                               "messages[1].metadata.galtea")
    omitted: list[galtea.Omission] = []
    galtea.split_current_turn(JOINED_QUESTION, shape="roles", join_consecutive="\n",
                              drop=["turn_metadata"], omitted=omitted)
    assert [(o.index, o.what) for o in omitted] == [(1, "joined"), (1, "turn_metadata")]


def test_split_names_a_later_joined_messages_files_at_that_message() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="a"),
                AIMessage(content=[FILE_PART])]
    assert _refused(galtea.split_current_turn, messages, shape="roles",
                    join_consecutive="\n") == ("not_representable", 2,
                                               "messages[2].metadata.galtea")


def test_a_join_names_the_messages_whose_files_and_fields_it_holds() -> None:
    files = [HumanMessage(content="a"), HumanMessage(content=[FILE_PART]),
             HumanMessage(content="c")]
    omitted: list[galtea.Omission] = []
    galtea.from_messages(files, join_consecutive="\n", drop=["part_order"], omitted=omitted)
    assert [(o.index, o.what, o.detail) for o in omitted if o.what == "part_order"] == [
        (2, "part_order", "text written before the files of messages[1]")]
    fields = [HumanMessage(content="a"),
              HumanMessage(content="b", metadata=_galtea(metadata={"k": 1})),
              HumanMessage(content="c", metadata=_galtea(metadata={"k": 2}))]
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(fields, join_consecutive="\n")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata.galtea")
    assert caught.value.detail.startswith("cannot join messages[1] and messages[2]: ")


# --- 5. joined messages compared by what their fields say ---------------------------------------

def _joined(turns: list[Any]) -> list[dict[str, Any]]:
    return galtea.from_messages(galtea.to_messages(turns), join_consecutive="\n")


@pytest.mark.parametrize(("first", "second", "written"), [
    ("retrieval_context", "retrievalContext", "retrieval_context"),
    ("retrievalContext", "retrieval_context", "retrievalContext"),
])
def test_one_retrieval_context_spelled_two_ways_joins_in_the_first_spelling(
    first: str, second: str, written: str
) -> None:
    assert _joined([{"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a", first: "r"},
                    {"role": "assistant", "content": "b", second: "r"}]) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a\nb", written: "r"}]


def test_the_same_metadata_beside_an_empty_file_list_joins_as_the_first_one_says() -> None:
    with_files = {"role": "assistant", "content": "a", "metadata": {"k": 1}, "output_files": []}
    without = {"role": "assistant", "content": "b", "metadata": {"k": 1}}
    question = {"role": "user", "content": "q"}
    assert _joined([question, with_files, without]) == [
        question, {"role": "assistant", "content": "a\nb", "metadata": {"k": 1},
                   "output_files": []}]
    assert _joined([question, {**without, "content": "a"}, {**with_files, "content": "b"}]) == [
        question, {"role": "assistant", "content": "a\nb", "metadata": {"k": 1}}]


def test_the_same_retrieval_context_beside_a_null_metadata_joins() -> None:
    assert _joined([{"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a", "retrieval_context": "r",
                     "metadata": None},
                    {"role": "assistant", "content": "b", "retrieval_context": "r"}]) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a\nb", "retrieval_context": "r", "metadata": None}]


def test_sdk_messages_saying_the_same_metadata_join() -> None:
    sdk = pytest.importorskip("galtea")
    turns = [sdk.ConversationMessage(role="user", content="q"),
             sdk.ConversationMessage(role="assistant", content="a", metadata={"k": 1}),
             {"role": "assistant", "content": "b", "metadata": {"k": 1}}]
    assert _joined(turns) == [
        {"role": "user", "content": "q", "retrieval_context": None, "metadata": None,
         "input_files": [], "output_files": []},
        {"role": "assistant", "content": "a\nb", "retrieval_context": None,
         "metadata": {"k": 1}, "input_files": [], "output_files": []}]


def test_fields_saying_values_equal_only_to_python_are_not_joined() -> None:
    # 1 and True are one value to Python, two in JSON: joined, one would be lost
    read = galtea.to_messages([{"role": "user", "content": "q"},
                               {"role": "assistant", "content": "a", "metadata": {"k": 1}},
                               {"role": "assistant", "content": "b", "metadata": {"k": True}}])
    assert _refused(galtea.from_messages, read, join_consecutive="\n") == (
        "not_representable", 2, "messages[2].metadata.galtea")
