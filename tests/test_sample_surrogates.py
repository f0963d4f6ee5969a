"""``model_dump_json()`` -> ``model_validate_json()`` is the identity for every sample, also
one holding a lone surrogate (a file name decoded with ``surrogateescape``): pydantic's JSON
writer refused such a string (a raw PydanticSerializationError) and its reader refuses the
escaped form. The sample is then written and read by Python's ``json``."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    TraceError,
)

NAME = "report-\udcff.txt"  # b"report-\xff.txt" decoded with surrogateescape


def _sample() -> MultiTurnSample:
    call = ToolCall(name="open", args={"path": NAME, NAME: True}, id="c1")
    return MultiTurnSample(
        messages=[HumanMessage(content=f"open {NAME}, é", metadata={NAME: [NAME]}),
                  AIMessage(tool_calls=[call]),
                  ToolMessage(content="opened", tool_call_id="c1")],
        reference_tool_calls=[ToolCall(name="open", args={"path": NAME})],
    )


@pytest.mark.parametrize("indent", [None, 2])
def test_a_sample_holding_a_lone_surrogate_reads_back_from_its_json(indent: int | None) -> None:
    sample = _sample()
    text = sample.model_dump_json(indent=indent)
    assert "\\udcff" in text
    assert json.loads(text) == sample.model_dump()
    back = MultiTurnSample.model_validate_json(text)
    assert back == sample
    assert back.transcript_hash() == sample.transcript_hash()
    assert MultiTurnSample.model_validate_json(text.encode("ascii")) == sample


def test_other_samples_are_written_as_pydantic_writes_them() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="é")])
    assert sample.model_dump_json() == (
        '{"messages":[{"type":"human","content":"é","name":null,"id":null,"metadata":{}}],'
        '"reference":null,"reference_tool_calls":null,"reference_topics":null,"rubrics":null,'
        '"metadata":{}}')


@pytest.mark.parametrize("text", ["not json", '{"messages": "\\udcff"}', '{"messages": 5}'])
def test_text_that_is_no_sample_is_still_refused(text: str) -> None:
    with pytest.raises(ValidationError):
        MultiTurnSample.model_validate_json(text)


def test_an_empty_conversation_read_back_is_still_its_trace_error() -> None:
    with pytest.raises(TraceError) as caught:
        MultiTurnSample.model_validate_json('{"messages": [], "metadata": {"n": "\\udcff"}}')
    assert caught.value.code == "empty_conversation"
