"""langchain: an OpenAI Responses reasoning item's raw reasoning text (``content``).

gpt-oss and other open-weight models served through the Responses API return their reasoning
as ``content: [{"type": "reasoning_text", "text": ...}]`` with ``summary: []``. ChatOpenAI
keeps that item in ``additional_kwargs["reasoning"]`` (``output_version="v0"``) or as a content
block (``"responses/v1"``), and langchain-core's v1 translation as a standard ``reasoning``
block with the list in ``extras.content``. In each, the raw text is the reasoning part's text:
it renders, is in the transcript hash, carries across formats, and writes back as it was read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
from openai.types.responses.response_reasoning_item import Content, ResponseReasoningItem

import tracebridge as tb
from tracebridge import TraceError, convert, transcript_hash
from tracebridge.adapters import langchain, openai_responses

LC = "langchain"
RAW = "step 1: the raw chain of thought"
ENTRY = {"type": "reasoning_text", "text": RAW}
TWO = [{"type": "reasoning_text", "text": "one"},
       {"type": "reasoning_text", "text": "two", "logprobs": []}]
ANSWER = tb.TextPart(text="ans")


def raw_item(content: list[Any] | None = None, **more: Any) -> dict[str, Any]:
    """A reasoning item as gpt-oss returns it: an empty summary, its raw text."""
    return {"type": "reasoning", "id": "rs_1", "summary": [],
            "content": [ENTRY] if content is None else content, **more}


def v0(item: dict[str, Any]) -> list[Any]:
    return [HumanMessage("x"), AIMessage("ans", additional_kwargs={"reasoning": item})]


def responses_v1(item: dict[str, Any]) -> list[Any]:
    return [HumanMessage("x"), AIMessage([item, {"type": "text", "text": "ans"}])]


def v1_standard(item: dict[str, Any]) -> list[Any]:
    """The reply as langchain-core's own v1 translation gives it (``content_blocks``)."""
    reply = AIMessage([item, {"type": "text", "text": "ans"}],
                      response_metadata={"model_provider": "openai"})
    return [HumanMessage("x"), AIMessage(reply.content_blocks)]


def lossless(trace: list[Any]) -> list[tb.Message]:
    """The typed messages of ``trace``, which write back to the same LangChain dicts, with
    their keys in the same order."""
    typed = langchain.to_messages(trace)
    written = messages_to_dict(langchain.from_messages(typed))
    assert json.dumps(written) == json.dumps(messages_to_dict(trace))
    return typed


def refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


def edited(typed: list[tb.Message], text: str) -> list[tb.Message]:
    """``typed`` with its reply's first part given another text."""
    reply = typed[1]
    assert isinstance(reply.content, list)
    first = reply.content[0].model_copy(update={"text": text})
    return [typed[0], reply.model_copy(update={"content": [first, *reply.content[1:]]})]


# --- reading each layout, and writing it back as it was -------------------------------------


def test_a_v0_item_of_raw_text_is_a_reasoning_part_of_that_text() -> None:
    typed = lossless(v0(raw_item()))
    assert typed[1] == tb.AIMessage(content=[
        # raw text alone does not give the item back as a summary: the id stays in the item
        tb.ReasoningPart(text=RAW, metadata={LC: {
            "from": "reasoning", "shape": "responses_reasoning_content",
            "block": {"type": "reasoning", "id": "rs_1", "summary": []}, "content": "string",
        }}),
        ANSWER,
    ])


def test_a_responses_v1_block_of_raw_text_is_a_reasoning_part_of_that_text() -> None:
    typed = lossless(responses_v1(raw_item(status="completed")))
    # the status stays in the item, and so does its id (typed, it would go to the Responses
    # API without the status)
    assert typed[1] == tb.AIMessage(content=[
        tb.ReasoningPart(text=RAW, metadata={LC: {
            "shape": "responses_reasoning_content",
            "block": {"type": "reasoning", "id": "rs_1", "summary": [], "status": "completed"},
        }}),
        ANSWER,
    ])


def test_a_v1_standard_block_with_raw_text_in_extras_is_a_reasoning_part_of_that_text() -> None:
    trace = v1_standard(raw_item())
    assert trace[1].content[0] == {"type": "reasoning", "id": "rs_1",
                                   "extras": {"content": [ENTRY]}}
    typed = lossless(trace)
    assert typed[1] == tb.AIMessage(content=[
        tb.ReasoningPart(text=RAW, metadata={LC: {  # the id stays beside the raw text
            "shape": "reasoning_extras_content",
            "block": {"type": "reasoning", "id": "rs_1", "extras": {}},
        }}),
        ANSWER,
    ])


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_an_sdk_item_of_raw_text_writes_back_equal(layout: Any) -> None:
    # as ChatOpenAI keeps it: the SDK item's model_dump (id, summary, type, content, ...),
    # whose entries spell text before type (written back as type, text: equal as dicts, as
    # the summary's entries are)
    sdk = ResponseReasoningItem(id="rs_1", type="reasoning", summary=[],
                                content=[Content(type="reasoning_text", text=RAW)],
                                encrypted_content="gAAA", status="completed")
    item = sdk.model_dump(exclude_none=True, mode="json")
    assert list(item) == ["id", "summary", "type", "content", "encrypted_content", "status"]
    trace = layout(item)
    typed = langchain.to_messages(trace)
    assert typed[1].content[0].text == RAW
    written = messages_to_dict(langchain.from_messages(typed))
    assert written == messages_to_dict(trace)
    reply = written[1]["data"]
    kept = (reply["additional_kwargs"]["reasoning"] if layout is v0 else reply["content"][0])
    assert list(kept) == list(reply_item(trace))


def reply_item(trace: list[Any]) -> dict[str, Any]:
    reply = trace[1]
    return reply.additional_kwargs.get("reasoning") or reply.content[0]


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_a_raw_text_list_other_than_one_plain_entry_is_joined_and_kept(layout: Any) -> None:
    typed = lossless(layout(raw_item(TWO)))
    part = typed[1].content[0]
    assert part.text == "one\n\ntwo"
    kept = part.metadata[LC]["block"]
    assert (kept["extras"] if layout is v1_standard else kept)["content"] == TWO


@pytest.mark.parametrize("empty", [None, []], ids=["null", "empty_list"])
@pytest.mark.parametrize("layout", [v0, responses_v1])
def test_a_content_without_entries_stays_in_the_kept_item(layout: Any, empty: Any) -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "content": empty}
    part = lossless(layout(item))[1].content[0]
    assert part.text == ""
    assert part.metadata[LC]["block"] == item


def test_a_content_of_other_entries_stays_in_the_kept_item() -> None:
    item = raw_item([{"type": "text", "text": RAW}])
    part = lossless(responses_v1(item))[1].content[0]
    # the summary [] is kept: the id stays beside it
    assert part == tb.ReasoningPart(text="", metadata={LC: {
        "shape": "responses_reasoning", "block": item}})


# --- across formats ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_the_raw_text_is_the_llama_index_thinking_block(layout: Any) -> None:
    reply = convert(layout(raw_item()), source="langchain", target="llama_index")[1]
    assert [block.model_dump(include={"block_type", "content", "text"}) for block in
            reply.blocks] == [{"block_type": "thinking", "content": RAW},
                              {"block_type": "text", "text": "ans"}]


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_the_raw_text_is_hashed_as_the_responses_adapter_reads_it(layout: Any) -> None:
    items = [{"role": "user", "content": "x"}, raw_item(),
             {"role": "assistant", "content": [{"type": "output_text", "text": "ans",
                                                "annotations": []}]}]
    assert transcript_hash(langchain.to_messages(layout(raw_item()))) == transcript_hash(
        openai_responses.to_messages(items)
    )
    other = langchain.to_messages(layout(raw_item([{"type": "reasoning_text", "text": "else"}])))
    assert transcript_hash(other) != transcript_hash(langchain.to_messages(layout(raw_item())))


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_raw_text_into_chat_completions_is_refused_naming_the_drop(layout: Any) -> None:
    trace = layout(raw_item())
    assert refused(convert, trace, source="langchain", target="openai_chat") == (
        "not_representable", 1, "messages[1].content[0]"
    )
    dropped = convert(trace, source="langchain", target="openai_chat",
                      target_options={"drop": ["reasoning"]})
    assert dropped[1] == {"role": "assistant", "content": [{"type": "text", "text": "ans"}]}


def test_a_responses_trace_of_raw_text_keeps_it_through_langchain() -> None:
    items = [{"role": "user", "content": "x"}, raw_item(),
             {"role": "assistant", "content": [{"type": "output_text", "text": "ans",
                                                "annotations": []}]}]
    written = convert(items, source="openai_responses", target="langchain")
    # an item of raw text keeps its id beside it in the Responses reader's namespace: the
    # part alone does not give the item back, so no other format writes the id
    assert written[1].content == [{"type": "reasoning", "reasoning": RAW},
                                  {"type": "text", "text": "ans"}]
    assert langchain.to_messages(written)[1].content == [tb.ReasoningPart(text=RAW), ANSWER]


# --- the way back after an edit ------------------------------------------------------------


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_an_edited_raw_text_is_written_as_one_plain_entry(layout: Any) -> None:
    typed = edited(langchain.to_messages(layout(raw_item())), "changed")
    written = langchain.from_messages(typed)
    assert langchain.to_messages(written) == typed
    entry = [{"type": "reasoning_text", "text": "changed"}]
    if layout is v0:
        assert written[1].additional_kwargs["reasoning"] == raw_item(entry)
    elif layout is responses_v1:
        assert written[1].content[0] == raw_item(entry)
    else:
        assert written[1].content[0] == {"type": "reasoning", "id": "rs_1",
                                         "extras": {"content": entry}}


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_a_kept_raw_text_list_given_another_text_is_refused(layout: Any) -> None:
    typed = edited(langchain.to_messages(layout(raw_item(TWO))), "changed")
    assert refused(langchain.from_messages, typed) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain"
    )


def test_a_kept_raw_text_list_names_what_it_holds() -> None:
    typed = edited(langchain.to_messages(responses_v1(raw_item(TWO))), "changed")
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    assert caught.value.detail == (
        "the reasoning block kept for this part (metadata.langchain) holds the raw reasoning "
        "[{'type': 'reasoning_text', 'text': 'one'}, {'type': 'reasoning_text', 'text': 'two', "
        "'logprobs': []}] at content, which does not join to the part's text 'changed': "
        "written, the part would read back with other metadata; take 'content' out of "
        "metadata.langchain.block to write the text as one reasoning_text entry, or give the "
        "part the text the list joins to"
    )


def test_a_v0_item_marked_with_another_shape_is_refused_at_the_mark() -> None:
    typed = langchain.to_messages(v0(raw_item()))
    part = typed[1].content[0]
    marked = {**part.metadata[LC], "shape": "responses_reasoning"}
    reply = typed[1].model_copy(update={"content": [
        part.model_copy(update={"metadata": {LC: marked}}), ANSWER]})
    assert refused(langchain.from_messages, [typed[0], reply]) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain.shape"
    )


def test_a_v0_item_kept_with_raw_text_but_marked_as_summary_is_refused() -> None:
    # the item written would read back as its raw text, not as the summary's ""
    kept = {"from": "reasoning", "block": raw_item(), "content": "string"}
    reply = tb.AIMessage(content=[tb.ReasoningPart(text="", metadata={LC: kept}), ANSWER])
    assert refused(langchain.from_messages, [tb.HumanMessage(content="x"), reply]) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain.block.content"
    )


@pytest.mark.parametrize(
    "kept",
    [
        {"from": "reasoning", "block": {"type": "reasoning", "id": "rs_1", "content": [ENTRY]}},
        {"shape": "responses_reasoning",
         "block": {"type": "reasoning", "id": "rs_1", "content": [ENTRY]}},
        {"shape": "reasoning", "block": {"type": "reasoning", "id": "rs_1", "content": [ENTRY]}},
    ],
    ids=["v0", "responses_v1", "v1_standard"],
)
def test_a_summary_kept_with_raw_text_in_its_item_is_refused(kept: Any) -> None:
    # written, the item would read back as two parts: the summary's and the raw text's
    reply = tb.AIMessage(content=[tb.ReasoningPart(text="A summary.", metadata={LC: kept}),
                                  ANSWER])
    assert refused(langchain.from_messages, [tb.HumanMessage(content="x"), reply]) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain.block.content"
    )


def test_a_raw_text_part_of_another_format_is_written_as_a_reasoning_block() -> None:
    reply = tb.AIMessage(content=[tb.ReasoningPart(
        text=RAW, id="rs_1", metadata={"openai_responses": {"from": "content"}}), ANSWER])
    written = langchain.from_messages([tb.HumanMessage(content="x"), reply])
    assert written[1].content == [{"type": "reasoning", "id": "rs_1", "reasoning": RAW},
                                  {"type": "text", "text": "ans"}]


# --- an item with a summary and raw text: two parts -------------------------------------------

SUMMARY = [{"type": "summary_text", "text": "A summary."}]
CONTINUED = tb.ReasoningPart(text=RAW, metadata={LC: {"from": "content"}})


def both(content: list[Any] | None = None) -> dict[str, Any]:
    return raw_item(content) | {"summary": SUMMARY}


@pytest.mark.parametrize(
    ("layout", "kept"),
    [
        (v0, {"from": "reasoning", "block": {"type": "reasoning", "id": "rs_1"},
              "content": "string"}),
        (responses_v1, {"shape": "responses_reasoning",
                        "block": {"type": "reasoning", "id": "rs_1"}}),
        (v1_standard, None),  # the id right after the type: where the way back writes it
    ],
    ids=["v0", "responses_v1", "v1_standard"],
)
def test_a_summary_and_raw_text_are_two_parts_of_one_item(layout: Any, kept: Any) -> None:
    typed = lossless(layout(both()))
    assert typed[1] == tb.AIMessage(content=[
        tb.ReasoningPart(text="A summary.", id="rs_1", metadata={LC: kept} if kept else {}),
        CONTINUED, ANSWER])


def test_a_v1_standard_block_without_an_id_gives_a_summary_part_without_metadata() -> None:
    trace = [HumanMessage("x"), AIMessage([
        {"type": "reasoning", "reasoning": "A summary.", "content": [ENTRY]}, "ans"])]
    typed = lossless(trace)
    assert typed[1].content[:2] == [tb.ReasoningPart(text="A summary."), CONTINUED]


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_a_raw_list_beside_a_summary_other_than_one_plain_entry_is_kept_on_its_part(
    layout: Any
) -> None:
    typed = lossless(layout(both(TWO)))
    assert typed[1].content[1] == tb.ReasoningPart(
        text="one\n\ntwo", metadata={LC: {"from": "content", "block": {"content": TWO}}})


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_both_texts_carry_to_llama_index_and_hash_as_the_responses_adapter_reads_them(
    layout: Any
) -> None:
    trace = layout(both())
    reply = convert(trace, source="langchain", target="llama_index")[1]
    assert [block.model_dump(include={"block_type", "content", "text"}) for block in
            reply.blocks] == [{"block_type": "thinking", "content": "A summary."},
                              {"block_type": "thinking", "content": RAW},
                              {"block_type": "text", "text": "ans"}]
    items = [{"role": "user", "content": "x"}, both(),
             {"role": "assistant", "content": [{"type": "output_text", "text": "ans",
                                                "annotations": []}]}]
    assert transcript_hash(langchain.to_messages(trace)) == transcript_hash(
        openai_responses.to_messages(items)
    )


def test_a_responses_item_with_both_keeps_them_through_langchain() -> None:
    items = [{"role": "user", "content": "x"}, both(),
             {"role": "assistant", "content": [{"type": "output_text", "text": "ans",
                                                "annotations": []}]}]
    written = convert(items, source="openai_responses", target="langchain")
    assert langchain.to_messages(written)[1].content == [
        tb.ReasoningPart(text="A summary."), tb.ReasoningPart(text=RAW), ANSWER]


def with_raw(typed: list[tb.Message], part: tb.ReasoningPart) -> list[tb.Message]:
    """``typed`` with its reply's second part (the raw text's) replaced."""
    reply = typed[1]
    assert isinstance(reply.content, list)
    content = [reply.content[0], part, *reply.content[2:]]
    return [typed[0], reply.model_copy(update={"content": content})]


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_an_edited_raw_text_beside_a_summary_is_written_as_one_plain_entry(
    layout: Any
) -> None:
    typed = with_raw(langchain.to_messages(layout(both(TWO))),
                     tb.ReasoningPart(text="changed", metadata={LC: {"from": "content"}}))
    written = langchain.from_messages(typed)
    assert langchain.to_messages(written) == typed
    item = (written[1].additional_kwargs["reasoning"] if layout is v0
            else written[1].content[0])
    assert item["content"] == [{"type": "reasoning_text", "text": "changed"}]


@pytest.mark.parametrize("layout", [v0, responses_v1, v1_standard])
def test_a_kept_raw_list_beside_a_summary_given_another_text_is_refused(layout: Any) -> None:
    typed = langchain.to_messages(layout(both(TWO)))
    changed = typed[1].content[1].model_copy(update={"text": "changed"})
    assert refused(langchain.from_messages, with_raw(typed, changed)) == (
        "not_representable", 1, "messages[1].content[1].metadata.langchain"
    )


@pytest.mark.parametrize(
    ("content", "k"),
    [
        ([CONTINUED, ANSWER], 0),
        ([ANSWER, CONTINUED], 1),
        ([tb.ReasoningPart(text="r", metadata={LC: {"from": "reasoning_content"}}), CONTINUED], 1),
        ([tb.ReasoningPart(text="t", metadata={LC: {"shape": "thinking",
                                                    "block": {"type": "thinking"}}}),
          CONTINUED], 1),
        ([tb.ReasoningPart(text="A summary."), CONTINUED.model_copy(update={"text": "r"}),
          CONTINUED], 2),
    ],
    ids=["first", "after_text", "after_reasoning_content", "after_thinking", "after_itself"],
)
def test_a_raw_text_part_not_after_an_item_with_a_summary_is_refused(
    content: Any, k: int
) -> None:
    messages = [tb.HumanMessage(content="x"), tb.AIMessage(content=content)]
    assert refused(langchain.from_messages, messages) == (
        "not_representable", 1, f"messages[1].content[{k}].metadata.langchain.from"
    )


@pytest.mark.parametrize("layout", [v0, responses_v1])
def test_a_raw_text_part_after_an_item_of_an_empty_summary_is_refused(layout: Any) -> None:
    # with the raw text the item would read back as one part: that text
    typed = langchain.to_messages(layout({"type": "reasoning", "id": "rs_1", "summary": []}))
    reply = typed[1]
    assert isinstance(reply.content, list)
    content = [reply.content[0], CONTINUED, *reply.content[1:]]
    messages = [typed[0], reply.model_copy(update={"content": content})]
    assert refused(langchain.from_messages, messages) == (
        "not_representable", 1, "messages[1].content[1].metadata.langchain.from"
    )


def test_a_raw_text_part_in_a_human_message_is_refused_at_its_mark() -> None:
    messages = [tb.HumanMessage(content=[CONTINUED])]
    assert refused(langchain.from_messages, messages) == (
        "not_representable", 0, "messages[0].content[0].metadata.langchain.from"
    )


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        ({"from": "content", "shape": "reasoning"},
         ("not_representable", 1, "messages[1].content[1].metadata.langchain.shape")),
        ({"from": "content", "block": {"content": "t"}},
         ("malformed_event", 1, "messages[1].content[1].metadata.langchain.block")),
        ({"from": "content", "block": {"content": TWO, "id": "rs_1"}},
         ("malformed_event", 1, "messages[1].content[1].metadata.langchain.block")),
    ],
    ids=["other_key", "block_not_a_list", "block_with_other_keys"],
)
def test_a_raw_text_part_keeping_more_than_its_mark_is_refused(
    kept: Any, expected: Any
) -> None:
    typed = langchain.to_messages(responses_v1(both()))
    assert refused(langchain.from_messages, with_raw(typed, CONTINUED.model_copy(
        update={"metadata": {LC: kept}}))) == expected
