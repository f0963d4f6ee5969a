"""openai_responses / openai_agents: a reasoning item's raw reasoning text (``content``).

gpt-oss and other open-weight models served through the Responses API return their reasoning
as ``content: [{"type": "reasoning_text", "text": ...}]``, usually with ``summary: []``. The
text has the typed home every format shares (``ReasoningPart``): it renders, is in the
transcript hash, carries across formats, and round-trips as it was read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent
from agents import items as sdk_items
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from openai.types.responses.response_reasoning_item import (
    Content,
    ResponseReasoningItem,
    Summary,
)

from tracebridge import (
    AIMessage,
    HumanMessage,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import openai_agents
from tracebridge.adapters.openai_responses import from_messages, to_messages
from tracebridge.registry import get_adapter

NS = "openai_responses"
USER = {"role": "user", "content": "x"}
RAW = "step 1: the raw chain of thought"
SAID = {"role": "assistant", "content": [{"type": "output_text", "text": "ans", "annotations": []}],
        "type": "message", "id": "msg_1", "status": "completed"}
TYPED_SAID = TextPart(text="ans")
SAID_NS = {NS: {"fields": {"status": "completed"}}}


def raw_only(text: str = RAW, **more: Any) -> dict[str, Any]:
    """A reasoning item as gpt-oss returns it: its raw text, an empty summary."""
    return {"type": "reasoning", "id": "rs_1", "summary": [],
            "content": [{"type": "reasoning_text", "text": text}], **more}


def both(**more: Any) -> dict[str, Any]:
    return {"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "A summary."}],
            "content": [{"type": "reasoning_text", "text": RAW}], **more}


def byte_equal_roundtrip(items: list[Any]) -> list[Any]:
    """The typed messages of ``items``, which write back to the very same JSON text."""
    messages = to_messages(items)
    assert json.dumps(from_messages(messages)) == json.dumps(items)
    return messages


def failure(read: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        read(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


# --- reading, and writing back as it was ----------------------------------------------------


def test_raw_text_with_an_empty_summary_is_the_items_one_reasoning_part() -> None:
    messages = byte_equal_roundtrip([USER, raw_only(), SAID])
    assert messages[1] == AIMessage(
        content=[ReasoningPart(text=RAW, metadata={NS: {"id": "rs_1", "from": "content"}}),
                 TYPED_SAID],
        id="msg_1",
        metadata=SAID_NS,
    )


def test_a_summary_and_raw_text_are_two_parts_of_one_item() -> None:
    messages = byte_equal_roundtrip([USER, both(encrypted_content="gAAA"), SAID])
    assert messages[1] == AIMessage(
        content=[
            ReasoningPart(text="A summary.",
                          metadata={NS: {"id": "rs_1", "fields": {"encrypted_content": "gAAA"}}}),
            ReasoningPart(text=RAW, metadata={NS: {"from": "content"}}),
            TYPED_SAID,
        ],
        id="msg_1",
        metadata=SAID_NS,
    )


@pytest.mark.parametrize("raw_first", [True, False], ids=["raw_only_first", "both_first"])
def test_an_item_with_both_beside_an_item_with_raw_text_alone_round_trips(
    raw_first: bool
) -> None:
    alone = {**raw_only("more"), "id": "rs_2"}
    reasoned = [alone, both()] if raw_first else [both(), alone]
    messages = byte_equal_roundtrip([USER, *reasoned, SAID])
    parts = [ReasoningPart(text="A summary.", metadata={NS: {"id": "rs_1"}}),
             ReasoningPart(text=RAW, metadata={NS: {"from": "content"}})]
    other = ReasoningPart(text="more", metadata={NS: {"id": "rs_2", "from": "content"}})
    expected = [other, *parts] if raw_first else [*parts, other]
    assert messages[1].content == [*expected, TYPED_SAID]


def test_raw_text_with_kept_keys_and_without_an_id_round_trips() -> None:
    # the Agents SDK replays reasoning without its id (reasoning_item_id_policy="omit")
    item = raw_only(encrypted_content="gAAA", status="completed")
    del item["id"]
    messages = byte_equal_roundtrip([USER, item, SAID])
    assert messages[1].content[0] == ReasoningPart(text=RAW, metadata={NS: {
        "id": None, "from": "content", "fields": {"encrypted_content": "gAAA",
                                                  "status": "completed"}}})


def test_a_content_list_other_than_one_plain_entry_is_kept_beside_the_mark() -> None:
    listed = [{"type": "reasoning_text", "text": "one"},
              {"type": "reasoning_text", "text": "two", "logprobs": []}]
    summary = [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]
    item = {"type": "reasoning", "id": "rs_1", "summary": summary, "content": listed}
    messages = byte_equal_roundtrip([USER, item, SAID])
    assert messages[1].content[:2] == [
        ReasoningPart(text="a\n\nb", metadata={NS: {"id": "rs_1", "summary": summary}}),
        ReasoningPart(text="one\n\ntwo", metadata={NS: {"from": "content", "content": listed}}),
    ]
    alone = {"type": "reasoning", "id": "rs_1", "summary": [], "content": listed}
    assert byte_equal_roundtrip([USER, alone, SAID])[1].content[0] == ReasoningPart(
        text="one\n\ntwo", metadata={NS: {"id": "rs_1", "from": "content", "content": listed}}
    )


@pytest.mark.parametrize("empty", [None, []], ids=["null", "empty_list"])
def test_a_content_without_entries_stays_in_fields(empty: Any) -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "content": empty}
    messages = byte_equal_roundtrip([USER, item, SAID])
    assert messages[1].content[0] == ReasoningPart(
        text="", metadata={NS: {"id": "rs_1", "summary": [], "fields": {"content": empty}}}
    )


def test_an_sdk_reasoning_item_with_content_reads_as_its_dict() -> None:
    sdk = ResponseReasoningItem(id="rs_1", type="reasoning",
                                summary=[Summary(type="summary_text", text="A summary.")],
                                content=[Content(type="reasoning_text", text=RAW)])
    assert to_messages([USER, sdk, SAID]) == to_messages([USER, both(), SAID])


def test_two_parts_of_one_item_keep_the_replys_item_bookkeeping() -> None:
    # a message before each call ("messages") and reasoning between the calls ("calls_at"):
    # each counts the reply's items, and the two parts of one reasoning item are one item
    def call(call_id: str) -> dict[str, Any]:
        return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}

    def said(item_id: str, text: str) -> dict[str, Any]:
        return {"role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
                "type": "message", "id": item_id}

    items = [USER, both(), said("msg_1", "First."), call("c1"),
             {**raw_only("more"), "id": "rs_2"}, said("msg_2", "Second."), call("c2"),
             {"type": "function_call_output", "call_id": "c1", "output": "1"},
             {"type": "function_call_output", "call_id": "c2", "output": "2"}]
    messages = byte_equal_roundtrip(items)
    assert messages[1] == AIMessage(
        content=[
            ReasoningPart(text="A summary.", metadata={NS: {"id": "rs_1"}}),
            ReasoningPart(text=RAW, metadata={NS: {"from": "content"}}),
            TextPart(text="First."),
            ReasoningPart(text="more", metadata={NS: {"id": "rs_2", "from": "content"}}),
            TextPart(text="Second."),
        ],
        tool_calls=[ToolCall(name="f", id="c1"), ToolCall(name="f", id="c2")],
        metadata={NS: {
            "messages": [{"at": 2, "parts": 1, "id": "msg_1"},
                         {"at": 4, "parts": 1, "id": "msg_2"}],
            "calls_at": [2, 4],
        }},
    )
    assert messages[2:] == [ToolMessage(content="1", tool_call_id="c1"),
                            ToolMessage(content="2", tool_call_id="c2")]


def test_an_edited_raw_text_is_written_as_one_plain_entry() -> None:
    listed = [{"type": "reasoning_text", "text": "one"}, {"type": "reasoning_text", "text": "two"}]
    messages = to_messages([USER, {**raw_only(), "content": listed}, SAID])
    part = messages[1].content[0]
    edited = messages[1].model_copy(update={"content": [
        part.model_copy(update={"text": "changed"}), TYPED_SAID]})
    assert from_messages([messages[0], edited])[1] == raw_only("changed")


def test_an_unmarked_reasoning_part_with_an_id_is_written_as_a_summary() -> None:
    reply = AIMessage(content=[ReasoningPart(text="r", id="rs_9"),
                               TYPED_SAID])
    assert from_messages([HumanMessage(content="x"), reply])[1] == {
        "type": "reasoning", "id": "rs_9", "summary": [{"type": "summary_text", "text": "r"}]
    }


# --- malformed items and metadata -----------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "path"),
    [
        ("the text", "items[1].content"),
        ({"type": "reasoning_text", "text": "t"}, "items[1].content"),
        ([{"type": "summary_text", "text": "t"}], "items[1].content[0]"),
        ([{"type": "reasoning_text", "text": "t"}, {"type": "reasoning_text"}],
         "items[1].content[1]"),
        ([{"type": "reasoning_text", "text": 3}], "items[1].content[0]"),
        (["t"], "items[1].content[0]"),
    ],
    ids=["string", "object", "other_type", "no_text", "text_not_string", "entry_not_object"],
)
def test_a_content_that_is_no_list_of_reasoning_text_is_malformed(content: Any, path: str) -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "content": content}
    assert failure(to_messages, [USER, item, SAID]) == ("malformed_event", 1, path)


def marked(text: str, **kept: Any) -> ReasoningPart:
    """A reasoning part with ``kept`` in its namespace, but for ``id``: the part's own."""
    item_id = kept.pop("id", None)
    return ReasoningPart(text=text, id=item_id, metadata={NS: kept})


@pytest.mark.parametrize(
    ("content", "code", "path"),
    [
        ([marked(RAW, **{"from": "content"})],
         "malformed_event", "messages[1].content[0].metadata.openai_responses"),
        ([ReasoningPart(text="r"), marked(RAW, **{"from": "content"})],
         "not_representable", "messages[1].content[0]"),
        ([marked("s", id="rs_1"), TYPED_SAID, marked(RAW, **{"from": "content"})],
         "malformed_event", "messages[1].content[2].metadata.openai_responses"),
        ([marked(RAW, id="rs_1", **{"from": "content"}), marked(RAW, **{"from": "content"})],
         "malformed_event", "messages[1].content[1].metadata.openai_responses"),
        ([marked("s", id="rs_1"), marked(RAW, fields={"a": 1}, **{"from": "content"})],
         "malformed_event", "messages[1].content[1].metadata.openai_responses.fields"),
        ([marked(RAW, id="rs_1", **{"from": "summary"})],
         "malformed_event", "messages[1].content[0].metadata.openai_responses.from"),
        ([marked(RAW, id="rs_1", summary=[], **{"from": "content"})],
         "malformed_event", "messages[1].content[0].metadata.openai_responses.summary"),
        ([marked(RAW, id="rs_1", content=["t"], **{"from": "content"})],
         "malformed_event", "messages[1].content[0].metadata.openai_responses.content[0]"),
        ([marked("s", id="rs_1", fields={"content": [{"type": "reasoning_text", "text": "t"}]})],
         "not_representable", "messages[1].content[0].metadata.openai_responses.fields.content"),
        ([marked("A summary.", id="rs_1"), marked(RAW, **{"from": "content"})],
         None, None),
    ],
    ids=["alone", "after_another_formats", "after_the_message", "after_raw_text",
         "continuation_keeps_more", "other_mark", "summary_beside_raw", "bad_layout",
         "content_in_fields", "fits"],
)
def test_marked_parts_that_no_item_reads_back_as_are_refused(
    content: list[Any], code: str | None, path: str | None
) -> None:
    conversation = [HumanMessage(content="x"), AIMessage(content=content)]
    if code == "not_representable" and path == "messages[1].content[0]":
        # (the part of another format is refused first; left out, the mark has no item)
        assert failure(from_messages, conversation, drop=["reasoning"]) == (
            "malformed_event", 1, "messages[1].content[1].metadata.openai_responses"
        )
    if code is None:
        assert from_messages(conversation)[1] == both()
        return
    assert failure(from_messages, conversation) == (code, 1, path)


# --- across formats, rendering and hashing --------------------------------------------------

REPRODUCED = [USER, raw_only(), SAID]


def test_the_raw_text_carries_to_langchain() -> None:
    out = convert(REPRODUCED, source="openai_responses", target="langchain")
    assert [m.model_dump(include={"type", "content"}) for m in out] == [
        {"type": "human", "content": "x"},
        {"type": "ai", "content": [{"type": "reasoning", "reasoning": RAW},
                                   {"type": "text", "text": "ans"}]},
    ]


def test_the_raw_text_carries_to_llama_index() -> None:
    out = convert(REPRODUCED, source="openai_responses", target="llama_index")
    assert [m.model_dump(mode="json")["blocks"] for m in out] == [
        [{"block_type": "text", "text": "x"}],
        [{"block_type": "thinking", "content": RAW, "num_tokens": None,
          "additional_information": {}},
         {"block_type": "text", "text": "ans"}],
    ]


@pytest.mark.parametrize("target", ["langchain", "llama_index", "otel"])
def test_the_raw_text_reads_back_from_the_other_format(target: str) -> None:
    reader = get_adapter(target)
    # an item with raw text keeps its id beside it (no other format writes that item back)
    out = convert(REPRODUCED, source="openai_responses", target=target)
    assert reader.to_messages(out)[1].content == [ReasoningPart(text=RAW), TYPED_SAID]
    summary_first = convert([USER, both(), SAID], source="openai_responses", target=target)
    assert reader.to_messages(summary_first)[1].content == [
        ReasoningPart(text="A summary."), ReasoningPart(text=RAW), TYPED_SAID
    ]


def test_chat_completions_refuses_the_raw_text_by_name_as_any_reasoning_of_another_format() -> None:
    # Chat Completions writes only reasoning read from Chat Completions (its own key): the
    # raw text is refused with the option that accepts the loss, never written empty
    assert failure(convert, REPRODUCED, source="openai_responses", target="openai_chat") == (
        "not_representable", 1, "messages[1].content[0]"
    )
    assert convert(REPRODUCED, source="openai_responses", target="openai_chat",
                   target_options={"drop": ["reasoning"]}) == [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": [{"type": "text", "text": "ans"}]},
    ]


def test_the_raw_text_renders_and_is_in_the_transcript_hash() -> None:
    first = to_messages(REPRODUCED)
    other = to_messages([USER, raw_only("step 1: another chain of thought"), SAID])
    assert transcript_hash(first) != transcript_hash(other)
    assert RAW in first[1].pretty_repr()


# --- the Agents SDK adapter reads and writes them the same way ------------------------------


def test_an_agents_reasoning_item_with_raw_text_reads_and_writes_as_the_sdk_replays_it() -> None:
    agent = Agent(name="Thinker")
    reasoned = ResponseReasoningItem(id="rs_1", type="reasoning",
                                     summary=[Summary(type="summary_text", text="A summary.")],
                                     content=[Content(type="reasoning_text", text=RAW)])
    said = ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text="ans", annotations=[])],
    )
    run = [sdk_items.ReasoningItem(agent=agent, raw_item=reasoned),
           sdk_items.MessageOutputItem(agent=agent, raw_item=said)]
    messages = openai_agents.to_messages(run, input=[USER])
    assert messages[1].content == [
        ReasoningPart(text="A summary.", metadata={"openai_agents": {"id": "rs_1"}}),
        ReasoningPart(text=RAW, metadata={"openai_agents": {"from": "content"}}),
        TYPED_SAID,
    ]
    assert openai_agents.from_messages(messages, drop_names=True) == [
        USER, *(item.to_input_item() for item in run)
    ]


def test_raw_text_after_the_part_of_an_item_with_an_empty_summary_is_refused() -> None:
    """Dropping the summary's part of an item with both leaves its raw text after an item
    read from summary [] (an o-series item without a summary): written into that item, it
    would be read back as that item's one part, under its id."""
    items = [
        {"role": "user", "content": "q"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "S"}],
         "content": [{"type": "reasoning_text", "text": "RAW"}]},
        {"type": "message", "role": "assistant", "id": "msg_1",
         "content": [{"type": "output_text", "text": "ok", "annotations": []}]},
    ]
    messages = to_messages(items)
    parts = [part for k, part in enumerate(messages[1].content) if k != 1]
    with pytest.raises(TraceError) as caught:
        from_messages([messages[0], messages[1].model_copy(update={"content": parts})])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "messages[1].content[1].metadata.openai_responses")
