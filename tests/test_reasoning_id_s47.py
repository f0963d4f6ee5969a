"""A reasoning item's id is the reasoning part's typed ``id``.

ChatOpenAI on the Responses API keeps the reasoning item (with its ``rs_...`` id) in
``additional_kwargs["reasoning"]`` (``output_version="v0"``) or as a ``reasoning`` content block
(``"responses/v1"``, and langchain-core's v1 standard block with its ``id``). The Responses API
needs that id to take the reasoning back. Before, the id had no typed home: the ``langchain``
reader kept it in its own namespace, so ``convert(langchain -> openai_responses)`` refused the
reasoning, and ``convert(openai_responses -> langchain)`` left the id out. The id is now
``ReasoningPart.id``: provenance, as a message's id is (the transcript hash leaves it out, and
formats with no place for it leave it out).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict

import tracebridge as tb
from tracebridge import ReasoningPart, TraceError, transcript_hash
from tracebridge.adapters import langchain, openai_agents, openai_responses
from tracebridge.registry import get_adapter

LC = "langchain"
SUMMARY = [{"type": "summary_text", "text": "thinking about it"}]
ITEM = {"type": "reasoning", "id": "rs_123", "summary": SUMMARY}
SDK_ITEM = {"id": "rs_123", "summary": SUMMARY, "type": "reasoning"}
"""The item as ChatOpenAI keeps it: the OpenAI SDK's ``model_dump``, the id first."""
SAID = {"type": "message", "role": "assistant", "id": "msg_1",
        "content": [{"type": "output_text", "text": "Answer", "annotations": []}]}
ITEMS = [{"role": "user", "content": "q"}, ITEM, SAID]
"""The Responses items of the reply, as ``openai_responses`` writes them back."""


def v0_reply() -> AIMessage:
    """ChatOpenAI(use_responses_api=True), output_version="v0": the item in additional_kwargs."""
    return AIMessage([{"type": "text", "text": "Answer", "annotations": []}], id="msg_1",
                     additional_kwargs={"reasoning": dict(SDK_ITEM)},
                     response_metadata={"id": "resp_1", "model_provider": "openai"})


def responses_v1_reply() -> AIMessage:
    """The same reply with output_version="responses/v1": the item is a content block."""
    return AIMessage([dict(SDK_ITEM), {"type": "text", "text": "Answer", "annotations": [],
                                   "id": "msg_1"}],
                     id="msg_1", response_metadata={"id": "resp_1", "model_provider": "openai",
                                                    "output_version": "responses/v1"})


def v1_reply() -> AIMessage:
    """langchain-core's v1 standard blocks of the same reply (``content_blocks``)."""
    return AIMessage(v0_reply().content_blocks, id="msg_1")


def refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


# --- LangChain -> Responses: the item goes back with its id ----------------------------------


@pytest.mark.parametrize("reply", [v0_reply, responses_v1_reply, v1_reply],
                         ids=["v0", "responses_v1", "v1_standard"])
def test_a_chatopenai_reply_with_reasoning_converts_to_responses(reply: Any) -> None:
    written = tb.convert([HumanMessage("q"), reply()], source="langchain",
                         target="openai_responses")
    assert written[:2] == ITEMS[:2]
    assert written[2]["content"] == SAID["content"]


@pytest.mark.parametrize("reply", [v0_reply, responses_v1_reply, v1_reply],
                         ids=["v0", "responses_v1", "v1_standard"])
def test_the_reasoning_part_read_from_langchain_holds_the_items_id(reply: Any) -> None:
    trace = [HumanMessage("q"), reply()]
    typed = langchain.to_messages(trace)
    part = typed[1].content[0]
    assert isinstance(part, ReasoningPart)
    assert (part.text, part.id) == ("thinking about it", "rs_123")
    # and the LangChain message is written back as it was
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_the_v0_item_keeps_the_rest_of_it_without_the_id() -> None:
    part = langchain.to_messages([HumanMessage("q"), v0_reply()])[1].content[0]
    assert part == ReasoningPart(text="thinking about it", id="rs_123", metadata={
        LC: {"from": "reasoning", "block": {"type": "reasoning"}}})


def test_an_sdk_ordered_item_is_written_back_with_its_id_first() -> None:
    # the status stays in the item, and so does its id (typed, it would go to the Responses
    # API without the status: tests/test_reasoning_encrypted_s47.py)
    item = {"id": "rs_123", "summary": SUMMARY, "type": "reasoning", "status": "completed"}
    trace = [HumanMessage("q"), AIMessage("Answer", additional_kwargs={"reasoning": item})]
    typed = langchain.to_messages(trace)
    assert typed[1].content[0] == ReasoningPart(text="thinking about it", metadata={
        LC: {"from": "reasoning",
             "block": {"id": "rs_123", "type": "reasoning", "status": "completed"},
             "content": "string"}})
    written = langchain.from_messages(typed)[1].additional_kwargs["reasoning"]
    assert written == item
    assert next(iter(written)) == "id"


# --- Responses -> LangChain: the id goes into the block ---------------------------------------


def test_responses_reasoning_is_written_to_langchain_with_its_id() -> None:
    written = tb.convert(ITEMS, source="openai_responses", target="langchain")
    assert written[1].content == [
        {"type": "reasoning", "id": "rs_123", "reasoning": "thinking about it"},
        {"type": "text", "text": "Answer"},
    ]
    # langchain-core reads the id as the v1 block's own
    assert written[1].content_blocks[0] == {"type": "reasoning", "id": "rs_123",
                                            "reasoning": "thinking about it"}


def test_responses_reasoning_makes_the_round_trip_through_langchain() -> None:
    through = tb.convert(ITEMS, source="openai_responses", target="langchain")
    assert tb.convert(through, source="langchain", target="openai_responses") == [
        ITEMS[0], ITEM, {"role": "assistant", "type": "message", "id": "msg_1",
                         "content": SAID["content"]},
    ]


# --- the Responses reader and writer ----------------------------------------------------------


def test_the_responses_reader_gives_the_id_to_the_part() -> None:
    typed = openai_responses.to_messages(ITEMS)
    assert typed[1].content[0] == ReasoningPart(text="thinking about it", id="rs_123")
    assert openai_responses.from_messages(typed) == ITEMS
    assert openai_agents.from_messages(typed) == ITEMS  # the typed id is no adapter's own


def test_a_reasoning_part_made_with_an_id_is_written_as_its_item() -> None:
    reply = tb.AIMessage(content=[ReasoningPart(text="thinking about it", id="rs_123"),
                                  tb.TextPart(text="Answer")], id="msg_1")
    assert openai_responses.from_messages([tb.HumanMessage(content="q"), reply])[1] == ITEM


def test_reasoning_without_an_id_is_still_refused_or_dropped() -> None:
    reply = tb.AIMessage(content=[ReasoningPart(text="thinking about it"),
                                  tb.TextPart(text="Answer")])
    messages = [tb.HumanMessage(content="q"), reply]
    with pytest.raises(TraceError) as caught:
        openai_responses.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable", 1, "messages[1].content[0]",
        "openai_responses: messages[1].content[0]: a reasoning item needs the id the API gave "
        "it (this reasoning part has none); pass drop=['reasoning'] to leave it out "
        "[not_representable]",
    )
    assert openai_responses.from_messages(messages, drop=["reasoning"])[1:] == [
        {"role": "assistant", "type": "message",
         "content": [{"type": "output_text", "text": "Answer", "annotations": []}]},
    ]


def test_an_id_left_in_the_namespace_is_malformed() -> None:
    # the namespace's id is null alone (an item read without one); the id is the part's
    reply = tb.AIMessage(content=[
        ReasoningPart(text="t", metadata={"openai_responses": {"id": "rs_1"}})])
    assert refused(openai_responses.from_messages, [tb.HumanMessage(content="q"), reply]) == (
        "malformed_event", 1, "messages[1].content[0].metadata.openai_responses.id"
    )
    both = tb.AIMessage(content=[
        ReasoningPart(text="t", id="rs_1", metadata={"openai_responses": {"id": None}})])
    assert refused(openai_responses.from_messages, [tb.HumanMessage(content="q"), both]) == (
        "malformed_event", 1, "messages[1].content[0].metadata.openai_responses.id"
    )


def test_an_item_read_without_an_id_is_still_written_without_one() -> None:
    items = [ITEMS[0], {"type": "reasoning", "summary": SUMMARY}, SAID]
    typed = openai_responses.to_messages(items)
    assert typed[1].content[0] == ReasoningPart(
        text="thinking about it", metadata={"openai_responses": {"id": None}})
    assert openai_responses.from_messages(typed) == items


# --- the LangChain writer --------------------------------------------------------------------


def test_a_kept_item_id_that_is_not_the_parts_is_refused() -> None:
    typed = langchain.to_messages([HumanMessage("q"), responses_v1_reply()])
    part = typed[1].content[0]
    kept = {LC: {"shape": "responses_reasoning", "block": {"type": "reasoning", "id": "rs_9"}}}
    edited = typed[1].model_copy(update={"content": [
        part.model_copy(update={"metadata": kept}), *typed[1].content[1:]]})
    assert refused(langchain.from_messages, [typed[0], edited]) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain"
    )


def test_a_kept_item_id_is_written_in_its_place() -> None:
    item = {"type": "reasoning", "id": "rs_123", "summary": SUMMARY, "status": "completed"}
    trace = [HumanMessage("q"), AIMessage([item, {"type": "text", "text": "Answer"}])]
    typed = langchain.to_messages(trace)
    # the id stays in the item beside its status (tests/test_reasoning_encrypted_s47.py)
    assert typed[1].content[0] == ReasoningPart(text="thinking about it", metadata={
        LC: {"shape": "responses_reasoning",
             "block": {"type": "reasoning", "id": "rs_123", "status": "completed"}}})
    written = langchain.from_messages(typed)[1].content[0]
    assert written == item
    assert list(written)[:2] == ["type", "id"]


# --- provenance: the hash, rendering, formats without a place ---------------------------------


def test_the_id_is_not_in_the_transcript_hash_nor_rendered() -> None:
    with_id = openai_responses.to_messages(ITEMS)
    assert with_id[1].content[0] == ReasoningPart(text="thinking about it", id="rs_123")
    without = [with_id[0], with_id[1].model_copy(update={"content": [
        ReasoningPart(text="thinking about it"), *with_id[1].content[1:]]})]
    assert transcript_hash(with_id) == transcript_hash(without)
    assert with_id[1].pretty_repr() == without[1].pretty_repr()
    assert tb.hashing.hashed_messages(with_id) == tb.hashing.hashed_messages(without)


@pytest.mark.parametrize("target", ["llama_index", "otel"])
def test_a_format_without_a_place_leaves_the_id_out(target: str) -> None:
    assert openai_responses.to_messages(ITEMS)[1].content[0].id == "rs_123"
    written = tb.convert(ITEMS, source="openai_responses", target=target)
    back = get_adapter(target).to_messages(written)
    assert back[1].content[0] == ReasoningPart(text="thinking about it")
    assert transcript_hash(back) == transcript_hash(openai_responses.to_messages(ITEMS))


def test_the_model_and_its_schema_carry_the_id() -> None:
    part = ReasoningPart(text="t", id="rs_1")
    assert part.model_dump() == {"type": "reasoning", "text": "t", "id": "rs_1", "metadata": {}}
    assert ReasoningPart.model_validate_json(part.model_dump_json()) == part
    schema = ReasoningPart.model_json_schema()["properties"]["id"]
    assert schema["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert schema["default"] is None
    native = tb.convert(ITEMS, source="openai_responses", target="tracebridge")
    assert get_adapter("tracebridge").to_messages(native)[1].content[0].id == "rs_123"
