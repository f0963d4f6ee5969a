"""Galtea ``Trace`` records and ``AgentInput``: what an audit found read silently, now kept or
refused.

An ``actualOutput`` envelope with no text nor files (the SDK keeps it as
``actual_output_data``) vanished; an ``input`` that disagreed with a non-dict ``input_data``, or
was not text, was dropped; ``input_data={}`` read like ``null``; the legacy ``actualInput`` (which
the SDK reads as ``input``) was no user message; files said twice (an envelope's ``content`` and
``actualOutputFiles``) kept one side only; an ``AgentInput`` spelling ``input_files`` twice kept
the first.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, TraceError
from tracebridge.adapters import galtea

RECORD = {"id": "t1", "index": 0, "session_id": "s1"}
FILE = {"uri": "gs://b/x.pdf", "filename": "x.pdf", "mime_type": "application/pdf",
        "type": "file"}
FILE_PART = {"type": "file", "uri": "gs://b/x.pdf", "filename": "x.pdf",
             "mimeType": "application/pdf"}


def _read(**fields: Any) -> list[Any]:
    return galtea.to_messages([{**RECORD, **fields}])


def _refused(trace: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(trace)
    assert caught.value.source == "galtea"
    return caught.value.code, caught.value.index, caught.value.path


def _record_refused(**fields: Any) -> tuple[str, int | None, str | None]:
    return _refused([{**RECORD, **fields}])


def _asked(text: str, trace: dict[str, Any]) -> HumanMessage:
    return HumanMessage(content=text, metadata={"galtea": {
        "retrieval_context": None, "metadata": None, "empty_files": ["input_files", "output_files"],
        "trace": trace}})


# --- 1. an output envelope with no answer text nor files ---------------------------------------

@pytest.mark.parametrize("envelope", [
    {"content": [{"type": "text", "text": "the answer"}]},
    {"assistant_message": None, "voice": "alloy"},
    {},
])
def test_an_output_envelope_with_no_text_nor_files_is_kept_with_the_record(
    envelope: dict[str, Any]
) -> None:
    # The SDK reads it as no answer (actual_output None, no files) and keeps it whole as
    # actual_output_data; so does the reader, under the record it came with.
    messages = _read(input="hi", actualOutput=envelope)
    assert messages == [_asked("hi", {**RECORD, "actualOutput": envelope})]


def test_an_output_envelope_reads_as_the_sdks_dump_of_the_same_record() -> None:
    sdk = pytest.importorskip("galtea")
    record = {**RECORD, "input": "hi",
              "actualOutput": {"content": [{"type": "text", "text": "the answer"}]}}
    dump = sdk.Trace.model_validate(dict(record)).model_dump(mode="json")
    [from_dump] = galtea.to_messages([dump])
    assert from_dump.metadata["galtea"]["trace"]["actual_output_data"] == record["actualOutput"]
    [from_api] = galtea.to_messages([record])
    assert from_api.content == from_dump.content == "hi"


def test_a_null_answer_text_beside_files_is_kept_with_the_rest_of_the_envelope() -> None:
    envelope = {"assistant_message": None, "content": [FILE_PART]}
    answer = _read(input="hi", actualOutput=envelope)[-1]
    assert answer == AIMessage(
        content=[FilePart(url="gs://b/x.pdf", filename="x.pdf", mime_type="application/pdf")],
        metadata={"galtea": {"retrieval_context": None, "metadata": envelope,
                             "empty_files": ["input_files"]}},
    )


def test_an_envelope_with_no_answer_and_no_input_is_still_nothing_to_read() -> None:
    assert _record_refused(input=None, actualOutput={"voice": "alloy"}) == (
        "malformed_event", 0, "traces[0]")


# --- 2. the input said in two places, an empty input, the legacy spelling ----------------------

def test_an_input_text_other_than_a_text_input_data_conflicts() -> None:
    assert _record_refused(input="hi", input_data="bye", actual_output="ok") == (
        "conflicting_fields", 0, "traces[0].input")
    assert [m.text for m in _read(input="hi", input_data="hi", actual_output="ok")] == [
        "hi", "ok"]


@pytest.mark.parametrize("value", [5, ["a"], True])
def test_an_input_that_is_not_text_beside_an_input_object_is_malformed(value: Any) -> None:
    assert _record_refused(input=value, input_data={"user_message": "x"},
                           actual_output="ok") == ("malformed_event", 0, "traces[0].input")


@pytest.mark.parametrize(("fields", "kept"), [
    ({"input": None, "input_data": {}}, {"input_data": {}}),
    ({"input": ""}, {"input": ""}),
    ({"input": {}}, {"input": {}}),
    ({"input": None, "input_data": None}, {}),
])
def test_an_empty_input_is_kept_apart_from_a_null_one(
    fields: dict[str, Any], kept: dict[str, Any]
) -> None:
    [answer] = _read(**fields, actual_output="ok")
    assert answer.text == "ok"
    assert answer.metadata["galtea"]["trace"] == {**RECORD, **kept}


def test_an_empty_input_beside_an_input_object_without_user_message_is_conflicting() -> None:
    # input "" says a user_message "", input_data {} none (the SDK's input is None then): two
    # values, as actual_output "" beside actual_output_data {} (tests/test_galtea_audit_s37.py)
    assert _record_refused(input="", input_data={}, actual_output="ok") == (
        "conflicting_fields", 0, "traces[0].input")


@pytest.mark.parametrize("legacy", ["actualInput", "actual_input"])
def test_the_legacy_actual_input_is_the_input(legacy: str) -> None:
    # The SDK's Trace reads actualInput / actual_input as input.
    assert _read(**{legacy: "hi"}, actual_output="ok") == _read(input="hi", actual_output="ok")
    envelope = {"user_message": "hi", "chat_type": "support"}
    assert _read(**{legacy: envelope}, actual_output="ok") == _read(input=envelope,
                                                                     actual_output="ok")
    assert _read(input="hi", **{legacy: "hi"}, actual_output="ok") == _read(
        input="hi", actual_output="ok")
    assert _record_refused(input="hi", **{legacy: "other"}, actual_output="ok") == (
        "conflicting_fields", 0, f"traces[0].{legacy}")


# --- 3. files said twice -----------------------------------------------------------------------

def test_output_files_other_than_the_envelopes_conflict() -> None:
    envelope = {"assistant_message": "a", "content": [FILE_PART]}
    assert _record_refused(input="hi", actualOutput=envelope, actualOutputFiles=[]) == (
        "conflicting_fields", 0, "traces[0].actualOutputFiles")
    other = [{**FILE, "uri": "gs://b/other.pdf"}]
    assert _record_refused(input="hi", actualOutput=envelope, actual_output_files=other) == (
        "conflicting_fields", 0, "traces[0].actual_output_files")
    same = _read(input="hi", actualOutput=envelope, actualOutputFiles=[FILE])
    assert same == _read(input="hi", actualOutput=envelope)


def test_input_files_other_than_the_input_envelopes_conflict() -> None:
    envelope = {"user_message": "hi", "content": [FILE_PART]}
    assert _record_refused(input=envelope, inputFiles=[], actual_output="a") == (
        "conflicting_fields", 0, "traces[0].inputFiles")
    same = _read(input=envelope, inputFiles=[FILE], actual_output="a")
    assert same == _read(input=envelope, actual_output="a")


# --- 4. an AgentInput spelling input_files twice -----------------------------------------------

def test_an_agent_input_spelling_input_files_twice_is_malformed() -> None:
    turn = {"role": "user", "content": "hi", "input_files": [FILE]}
    other = {**FILE, "uri": "gs://b/OTHER.pdf"}
    for camel in ([FILE, other], [FILE]):
        agent_input = {"messages": [turn], "session_id": "s", "input_files": [FILE],
                       "inputFiles": camel}
        assert _refused(agent_input) == ("malformed_event", None, "inputFiles")
    one = {"messages": [turn], "session_id": "s", "inputFiles": [FILE]}
    assert galtea.to_messages(one)[0].text == "hi"


# --- 10. records of several sessions, a record twice -------------------------------------------

def test_records_of_two_sessions_are_ambiguous() -> None:
    first = {**RECORD, "input": "a", "actual_output": "b"}
    other = {"id": "t2", "index": 1, "sessionId": "s2", "input": "c", "actual_output": "d"}
    with pytest.raises(TraceError) as caught:
        galtea.to_messages([first, other, {**other, "id": "t3", "index": 2}])
    error = caught.value
    assert (error.code, error.index, error.path) == ("ambiguous_trace", 1, "traces[1].sessionId")
    assert "session 's1': traces[0]; session 's2': traces[1, 2]" in error.detail
    same = {**other, "sessionId": "s1"}
    assert [m.text for m in galtea.to_messages([first, same])] == ["a", "b", "c", "d"]


def test_a_record_given_twice_is_malformed() -> None:
    record = {**RECORD, "input": "a", "actual_output": "b"}
    assert _refused([record, dict(record)]) == ("malformed_event", 1, "traces[1].id")
