"""langchain: a reasoning item that holds more than its part carries keeps its id.

ChatOpenAI on the Responses API keeps the reasoning item as the OpenAI SDK dumps it, in
``additional_kwargs["reasoning"]`` (``output_version="v0"``) or as a content block
(``"responses/v1"``); langchain-core's v1 translation keeps the item's other keys beside the
block's ``reasoning`` (or in its ``extras``). Asked for it (``include=["reasoning.
encrypted_content"]``, what ``store=False`` needs), the item holds ``encrypted_content``; it
may hold a ``status`` too. A reasoning part gives back its text and id to a Responses
reasoning item, nothing else: given the id, such an item would convert to ``openai_responses``
without its encrypted content. So its id stays in the item kept under ``metadata.langchain``,
and the reasoning is refused there (``drop=["reasoning"]`` leaves it out); an item holding
nothing else still gives the part its id, and LangChain replies write back as they were read.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
from openai.types.responses.response_reasoning_item import (
    Content,
    ResponseReasoningItem,
    Summary,
)

import tracebridge as tb
from tracebridge import ReasoningPart, TraceError
from tracebridge.adapters import langchain

LC = "langchain"
SECRET = "gAAAAABoEncrypted"
TEXT = "thinking about it"
RAW = "step 1: the raw chain of thought"
ANSWER = [{"type": "text", "text": "Answer", "annotations": []}]
QUESTION = {"role": "user", "content": "q"}
SAID = {"role": "assistant", "type": "message", "id": "msg_1",
        "content": [{"type": "output_text", "text": "Answer", "annotations": []}]}
"""The reply's message item, as ``openai_responses`` writes it from each layout."""
NO_ID = (
    "openai_responses: messages[1].content[0]: a reasoning item needs the id the API gave it "
    "(this reasoning part has none); pass drop=['reasoning'] to leave it out "
    "[not_representable]"
)


def sdk_item(**more: Any) -> dict[str, Any]:
    """A reasoning item as ChatOpenAI keeps it: the SDK's ``model_dump(exclude_none=True)``
    (``id``, ``summary``, ``type``, ``content``, ``encrypted_content``, ``status``)."""
    item = ResponseReasoningItem(id="rs_1", type="reasoning",
                                 summary=[Summary(type="summary_text", text=TEXT)], **more)
    return item.model_dump(exclude_none=True, mode="json")


def raw_item(**more: Any) -> dict[str, Any]:
    """The same of a model that returns its raw reasoning (gpt-oss): an empty summary."""
    item = ResponseReasoningItem(id="rs_1", type="reasoning", summary=[],
                                 content=[Content(type="reasoning_text", text=RAW)], **more)
    return item.model_dump(exclude_none=True, mode="json")


def v0(item: dict[str, Any]) -> AIMessage:
    """ChatOpenAI(use_responses_api=True), ``output_version="v0"``."""
    return AIMessage(list(ANSWER), id="msg_1", additional_kwargs={"reasoning": item},
                     response_metadata={"id": "resp_1", "model_provider": "openai"})


def responses_v1(item: dict[str, Any]) -> AIMessage:
    """The same reply with ``output_version="responses/v1"``: the item is a content block."""
    return AIMessage([item, {**ANSWER[0], "id": "msg_1"}], id="msg_1",
                     response_metadata={"id": "resp_1", "model_provider": "openai",
                                        "output_version": "responses/v1"})


def v1_standard(item: dict[str, Any]) -> AIMessage:
    """langchain-core's v1 standard blocks of the same reply (``content_blocks``)."""
    return AIMessage(v0(item).content_blocks, id="msg_1")


LAYOUTS = [v0, responses_v1, v1_standard]
LAYOUT_IDS = ["v0", "responses_v1", "v1_standard"]


def given(typed: list[tb.Message], **update: Any) -> list[tb.Message]:
    """``typed`` with its reply's first part changed by ``update``."""
    reply = typed[1]
    assert isinstance(reply.content, list)
    first = reply.content[0].model_copy(update=update)
    return [typed[0], reply.model_copy(update={"content": [first, *reply.content[1:]]})]


def refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    error = caught.value
    return error.code, error.index, error.path, str(error)


def written_back(trace: list[Any]) -> list[tb.Message]:
    """The typed messages of ``trace``, checked to write back to the same LangChain dicts
    and to read back as the same messages."""
    typed = langchain.to_messages(trace)
    written = langchain.from_messages(typed)
    assert messages_to_dict(written) == messages_to_dict(trace)
    assert langchain.to_messages(written) == typed
    return typed


def id_place(reply: Any) -> int:
    """Where the reasoning item's ``id`` sits among its keys."""
    item = reply.additional_kwargs.get("reasoning") or reply.content[0]
    return list(item).index("id")


# --- the item's id stays in it, beside what the part does not carry --------------------------


@pytest.mark.parametrize(
    ("layout", "item", "kept"),
    [
        (v0, sdk_item(encrypted_content=SECRET), {"from": "reasoning", "block": {
            "id": "rs_1", "type": "reasoning", "encrypted_content": SECRET}}),
        (responses_v1, sdk_item(encrypted_content=SECRET), {
            "shape": "responses_reasoning",
            "block": {"id": "rs_1", "type": "reasoning", "encrypted_content": SECRET}}),
        # langchain-core's v1 translation puts the item's other keys beside ``reasoning``
        (v1_standard, sdk_item(encrypted_content=SECRET), {
            "shape": "reasoning",
            "block": {"id": "rs_1", "type": "reasoning", "encrypted_content": SECRET}}),
        (v0, sdk_item(status="completed"), {"from": "reasoning", "block": {
            "id": "rs_1", "type": "reasoning", "status": "completed"}}),
        (responses_v1, raw_item(encrypted_content=SECRET), {
            "shape": "responses_reasoning_content",
            "block": {"id": "rs_1", "summary": [], "type": "reasoning",
                      "encrypted_content": SECRET}}),
        # an item of raw text alone: langchain-core's v1 translation puts them in ``extras``
        (v1_standard, raw_item(encrypted_content=SECRET), {
            "shape": "reasoning_extras_content",
            "block": {"id": "rs_1", "type": "reasoning",
                      "extras": {"encrypted_content": SECRET}}}),
    ],
    ids=["v0-encrypted", "responses_v1-encrypted", "v1_standard-encrypted", "v0-status",
         "responses_v1-raw-encrypted", "v1_standard-raw-encrypted-extras"],
)
def test_an_item_holding_more_than_the_part_carries_keeps_its_id(
    layout: Any, item: dict[str, Any], kept: dict[str, Any]
) -> None:
    trace = [HumanMessage("q"), layout(item)]
    typed = written_back(trace)
    text = RAW if "content" in item else TEXT
    assert typed[1].content[0] == ReasoningPart(text=text, metadata={LC: kept})
    # the id is written back where the item had it
    assert id_place(langchain.from_messages(typed)[1]) == id_place(trace[1]) == 0


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize(
    "item",
    [sdk_item(encrypted_content=SECRET), sdk_item(status="completed"),
     raw_item(encrypted_content=SECRET)],
    ids=["encrypted", "status", "raw-encrypted"],
)
def test_such_reasoning_is_refused_by_the_responses_api_not_written_without_it(
    layout: Any, item: dict[str, Any]
) -> None:
    trace = [HumanMessage("q"), layout(item)]
    assert refused(tb.convert, trace, source="langchain", target="openai_responses") == (
        "not_representable", 1, "messages[1].content[0]", NO_ID
    )
    assert tb.convert(trace, source="langchain", target="openai_responses",
                      target_options={"drop": ["reasoning"]}) == [QUESTION, SAID]


def test_an_encrypted_item_of_a_summary_and_raw_text_is_refused_at_its_summary() -> None:
    item = raw_item(encrypted_content=SECRET)
    item["summary"] = [{"text": TEXT, "type": "summary_text"}]
    trace = [HumanMessage("q"), v0(item)]
    typed = written_back(trace)
    assert typed[1].content[:2] == [
        ReasoningPart(text=TEXT, metadata={LC: {"from": "reasoning", "block": {
            "id": "rs_1", "type": "reasoning", "encrypted_content": SECRET}}}),
        ReasoningPart(text=RAW, metadata={LC: {"from": "content"}}),
    ]
    assert refused(tb.convert, trace, source="langchain", target="openai_responses") == (
        "not_representable", 1, "messages[1].content[0]", NO_ID
    )


# --- an item holding nothing else still gives the part its id --------------------------------


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_the_id_is_the_parts_only_when_the_item_holds_nothing_else(layout: Any) -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text",
                                                           "text": TEXT}]}
    for more, typed_id in (({}, "rs_1"), ({"encrypted_content": SECRET}, None),
                           ({"status": "completed"}, None)):
        trace = [HumanMessage("q"), layout({**item, **more})]
        assert written_back(trace)[1].content[0].id == typed_id, more
    trace = [HumanMessage("q"), layout(sdk_item())]
    assert written_back(trace)[1].content[0].id == "rs_1"
    assert tb.convert(trace, source="langchain", target="openai_responses") == [
        QUESTION, item, SAID]


def test_a_streamed_blocks_index_is_langchains_own_and_keeps_the_id() -> None:
    # ChatOpenAI's streamed responses/v1 blocks carry the position LangChain merges them by;
    # it is no key of the item, so the id is still typed (and the index stays in the block)
    trace = [HumanMessage("q"), responses_v1({**sdk_item(), "index": 0})]
    typed = written_back(trace)
    assert typed[1].content[0] == ReasoningPart(text=TEXT, id="rs_1", metadata={LC: {
        "shape": "responses_reasoning", "block": {"type": "reasoning", "index": 0}}})
    assert typed[1].content[0].id == "rs_1"
    trace = [HumanMessage("q"), responses_v1({**sdk_item(encrypted_content=SECRET),
                                              "index": 0})]
    assert written_back(trace)[1].content[0].id is None


# --- the way back: a part given an id beside such a kept item ----------------------------------


@pytest.mark.parametrize(
    ("layout", "path"),
    [(v0, "messages[1].content[0].metadata.langchain"),
     (responses_v1, "messages[1].content[0].metadata.langchain"),
     (v1_standard, "messages[1].content[0].metadata.langchain")],
    ids=LAYOUT_IDS,
)
def test_a_part_given_the_id_beside_an_item_that_keeps_it_is_refused(
    layout: Any, path: str
) -> None:
    typed = langchain.to_messages([HumanMessage("q"), layout(sdk_item(encrypted_content=SECRET))])
    assert refused(langchain.from_messages, given(typed, id="rs_1")) == (
        "not_representable", 1, path,
        f"langchain: {path}: the reasoning item kept for this part (metadata.langchain) holds "
        "'encrypted_content', which the part's id 'rs_1' would not carry to a Responses "
        "reasoning item: the reader keeps the id of such an item in the item, not as the "
        "part's id, so written, the part would read back without its id; take the id off the "
        "part and keep it in metadata.langchain.block, or take 'encrypted_content' out of "
        "metadata.langchain.block [not_representable]",
    )


def test_a_part_given_an_id_beside_a_kept_item_without_one_is_refused() -> None:
    typed = langchain.to_messages([HumanMessage("q"), v0(sdk_item(status="completed"))])
    kept = {"from": "reasoning", "block": {"type": "reasoning", "status": "completed"}}
    code, index, path, _ = refused(
        langchain.from_messages, given(typed, id="rs_2", metadata={LC: kept})
    )
    assert (code, index, path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain"
    )
    # taking the status out gives the part's id its place again
    without = {"from": "reasoning", "block": {"type": "reasoning"}}
    edited = given(typed, id="rs_2", metadata={LC: without})
    written = langchain.from_messages(edited)[1].additional_kwargs["reasoning"]
    assert written == {"id": "rs_2", "type": "reasoning",
                       "summary": [{"type": "summary_text", "text": TEXT}]}
