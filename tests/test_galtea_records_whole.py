"""Galtea ``Trace`` records: nothing of a record is left out of the conversation unsaid.

The reader follows the SDK's own rebuild (``TraceService._execute_agent``), which drops what
it does not use. These were lost without a word: the keys of an API ``actualOutput`` envelope
besides its text and files; an ``input`` text when ``input_data`` said another; an input
envelope beside ``input_data``; a field spelled both ways (the second spelling); files sent
with an empty input; an empty answer (read as no answer); and a ``user_message`` that is not
text read as empty text. Now each is kept, or refused where it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, TraceError
from tracebridge.adapters import galtea

FILE = {"uri": "gs://b/f.pdf", "filename": "f.pdf", "mime_type": "application/pdf",
        "type": "file"}
API = {"id": "t1", "index": 0, "sessionId": "s1", "status": "GENERATED"}
SDK = {"id": "t1", "index": 0, "session_id": "s1"}


def _read(**record: Any) -> list[Any]:
    return galtea.to_messages([record])


def _refused(**record: Any) -> tuple[str, str | None]:
    with pytest.raises(TraceError) as caught:
        galtea.to_messages([record])
    return caught.value.code, caught.value.path


def test_an_output_envelopes_other_keys_are_kept_with_the_answer() -> None:
    output = {"assistant_message": "a", "finish_reason": "stop",
              "content": [{"type": "text", "text": "a"}]}
    answer = _read(**API, input={"user_message": "q"}, actualOutput=output)[-1]
    assert isinstance(answer, AIMessage)
    assert answer.text == "a"
    assert answer.metadata["galtea"]["metadata"] == {
        "finish_reason": "stop", "content": [{"type": "text", "text": "a"}]}


def test_an_output_envelope_of_text_and_files_alone_keeps_nothing_more() -> None:
    part = {"type": "file", "uri": "gs://b/f.pdf", "filename": "f.pdf",
            "mimeType": "application/pdf"}
    answer = _read(**API, input={"user_message": "q"},
                   actualOutput={"assistant_message": "a", "content": [part]})[-1]
    # {}: an envelope, not the plain text with its files (null; tests/test_galtea_audit_s39.py)
    assert answer.metadata["galtea"]["metadata"] == {}
    assert isinstance(answer.content, list)
    assert answer.content[1] == FilePart(url="gs://b/f.pdf", filename="f.pdf",
                                         mime_type="application/pdf")
    odd = {**part, "type": "FILE"}  # read as a file, but not as it was spelled: kept
    answer = _read(**API, input={"user_message": "q"},
                   actualOutput={"assistant_message": "a", "content": [odd]})[-1]
    assert answer.metadata["galtea"]["metadata"] == {"content": [odd]}


def test_an_input_text_other_than_its_input_datas_conflicts() -> None:
    assert _refused(**SDK, input="one text", input_data={"user_message": "another"},
                    actual_output="a") == ("conflicting_fields", "traces[0].input")
    same = _read(**SDK, input="q", input_data={"user_message": "q"}, actual_output="a")
    assert same[0].text == "q"


def test_an_input_envelope_other_than_input_data_conflicts() -> None:
    assert _refused(**SDK, input={"user_message": "one"}, input_data={"user_message": "two"},
                    actual_output="a") == ("conflicting_fields", "traces[0].input")


@pytest.mark.parametrize(("snake", "camel", "value", "other"), [
    ("actual_output", "actualOutput", "a", "b"),
    ("input_files", "inputFiles", [FILE], []),
])
def test_a_field_spelled_both_ways_must_say_one_thing(
    snake: str, camel: str, value: Any, other: Any
) -> None:
    record = {**SDK, "input": "q", "actual_output": "a", snake: value}
    assert _refused(**record, **{camel: other}) == ("conflicting_fields", f"traces[0].{camel}")
    assert _read(**record, **{camel: value}) == _read(**record)


def test_files_sent_with_an_empty_input_are_a_user_message() -> None:
    [asked, answer] = _read(**SDK, input="", input_files=[FILE], actual_output="a")
    assert isinstance(asked, HumanMessage)
    assert asked.content == [FilePart(url="gs://b/f.pdf", filename="f.pdf",
                                      mime_type="application/pdf")]
    assert answer.text == "a"


@pytest.mark.parametrize("value", [0, False, [], {}])
def test_a_user_message_that_is_not_text_is_malformed(value: Any) -> None:
    assert _refused(**SDK, input_data={"user_message": value}, actual_output="a") == (
        "malformed_event", "traces[0].input_data.user_message")


def test_a_null_user_message_is_kept_beside_the_empty_text() -> None:
    asked = _read(**SDK, input_data={"user_message": None, "k": 1}, actual_output="a")[0]
    assert asked.text == ""
    assert asked.metadata["galtea"]["metadata"] == {"user_message": None, "k": 1}


def test_an_empty_answer_is_an_answer_and_a_pending_one_is_none() -> None:
    answered = _read(**SDK, input="q", actual_output="")
    assert [(m.type, m.text) for m in answered] == [("human", "q"), ("ai", "")]
    pending = _read(**SDK, input="q", actual_output=None)
    assert [m.type for m in pending] == ["human"]
