"""A framework object missing one of its fields (deleted from it after it was made) is
refused at that field as malformed_event, not a raw AttributeError."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import HumanMessage as LangChainHuman
from llama_index.core.agent.workflow import AgentInput, AgentOutput
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage

from tracebridge import TraceError
from tracebridge.adapters import langchain, llama_index


def _llama_events() -> list[object]:
    question = ChatMessage(role="user", content="hi")
    answer = ChatMessage(role="assistant", content="hello")
    return [
        AgentInput(input=[question], current_agent_name="planner"),
        AgentOutput(response=answer, tool_calls=[], raw=None, current_agent_name="planner"),
    ]


def test_an_agent_output_without_its_tool_calls_field_is_malformed_there() -> None:
    events = _llama_events()
    del events[1].__dict__["tool_calls"]
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.tool_calls")
    assert error.detail == (
        "the AgentOutput has no value for this field, which LlamaIndex always gives it (it was "
        "removed from the object after it was made)")


def test_a_nested_message_without_its_blocks_is_malformed_at_them() -> None:
    events = _llama_events()
    del events[1].response.__dict__["blocks"]
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.response.blocks")


def test_a_langchain_message_without_its_tool_calls_field_is_malformed_there() -> None:
    reply = LangChainAI(content="hello")
    del reply.__dict__["tool_calls"]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([LangChainHuman(content="hi"), reply])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "messages[1].tool_calls")
    # the LangChain reader's own words for it, as before
    assert error.detail == ("this AIMessage has no tool_calls (made with model_construct() "
                            "without it?); LangChain's constructor requires one")


def test_a_nested_message_without_its_additional_kwargs_is_malformed_at_them() -> None:
    """A field a LlamaIndex validator reads is found missing before the validator falls on
    it (it gave an AttributeError's text at the outer event)."""
    events = _llama_events()
    del events[1].response.__dict__["additional_kwargs"]
    for read in (llama_index.events_to_messages, llama_index.dump_events):
        with pytest.raises(TraceError) as caught:
            read(events)
        error = caught.value
        assert (error.code, error.index, error.path) == (
            "malformed_event", 1, "events[1].data.response.additional_kwargs")


def test_dump_events_refuses_an_event_missing_a_field() -> None:
    """Its dump left the field out without a word, and read back as a valid trace."""
    events = _llama_events()
    del events[1].__dict__["tool_calls"]
    with pytest.raises(TraceError) as caught:
        llama_index.dump_events(events)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.tool_calls")


class _OwnCallBlock(ToolCallBlock):
    """A user's own subclass of LlamaIndex's call block."""


def test_a_subclass_of_a_call_block_keeps_the_must_be_json_rule() -> None:
    block = _OwnCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"a": 1})
    block.tool_kwargs["a"] = (1, 2)  # a tuple, which LlamaIndex's dump writes as a list
    messages = [ChatMessage(role="user", content="hi"),
                ChatMessage(role="assistant", blocks=[block])]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.a")
