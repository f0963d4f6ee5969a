"""A reasoning part's typed ``id`` only where the part alone gives its item back.

A reasoning part has a typed id only when its text and id rebuild the Responses reasoning
item it was read from: one plain ``summary_text`` entry, no raw ``content``, no kept empty
``summary``, nothing else (``encrypted_content``, ``status``), and no id langchain-core made
itself (``lc_``). Any other id stays where its adapter keeps it, so that converting the part
to the Responses API is refused (``not_representable``, ``drop=["reasoning"]``) instead of
writing a changed item; and a reasoning id is written once in a conversation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.content import create_reasoning_block

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain, openai_agents, openai_responses

LC = "langchain"
NS = "openai_responses"
USER = {"role": "user", "content": "q"}
SAID = {"role": "assistant", "content": [{"type": "output_text", "text": "A", "annotations": []}],
        "type": "message", "id": "msg_1", "status": "completed"}
ONE = [{"type": "summary_text", "text": "s"}]
TWO = [{"type": "summary_text", "text": "s"}, {"type": "summary_text", "text": "t"}]
RAW = [{"type": "reasoning_text", "text": "raw"}]
_ADAPTERS: dict[str, Any] = {"openai_responses": openai_responses,
                             "openai_agents": openai_agents}


def failure(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


def item(**fields: Any) -> dict[str, Any]:
    return {"type": "reasoning", "id": "rs_1", **fields}


# --- F1: one id written once ---------------------------------------------------------------


def split_v1_reply() -> AIMessage:
    """langchain-core's own v1 translation of a ChatOpenAI reply whose reasoning item has
    two summary entries: one ``reasoning`` block per entry, each with the item's id."""
    v0 = AIMessage([{"type": "text", "text": "A", "annotations": []}],
                   additional_kwargs={"reasoning": item(summary=TWO)},
                   response_metadata={"model_provider": "openai"})
    return AIMessage(v0.content_blocks)


def test_the_v1_translation_splits_an_item_of_two_entries_into_blocks_of_one_id() -> None:
    assert split_v1_reply().content[:2] == [
        {"id": "rs_1", "type": "reasoning", "reasoning": "s"},
        {"id": "rs_1", "type": "reasoning", "reasoning": "t"},
    ]


@pytest.mark.parametrize("target", sorted(_ADAPTERS))
def test_reasoning_blocks_sharing_an_id_are_not_written_as_two_items(target: str) -> None:
    trace = [HumanMessage("q"), split_v1_reply()]
    assert failure(tb.convert, trace, source="langchain", target=target) == (
        "not_representable", 1, "messages[1].content[1]")


@pytest.mark.parametrize("target", sorted(_ADAPTERS))
def test_a_reasoning_id_repeated_in_one_message_is_refused(target: str) -> None:
    reply = tb.AIMessage(content=[tb.ReasoningPart(text="s", id="rs_1"),
                                  tb.ReasoningPart(text="t", id="rs_1"), tb.TextPart(text="A")])
    messages = [tb.HumanMessage(content="q"), reply]
    with pytest.raises(TraceError) as caught:
        _ADAPTERS[target].from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable", 1, "messages[1].content[1]",
        f"{target}: messages[1].content[1]: a reasoning item with the id 'rs_1' is written "
        "already in this message (parts that share an id are pieces of one item, which the "
        "API gave whole); pass drop=['reasoning'] to leave it out [not_representable]")
    written = _ADAPTERS[target].from_messages(messages, drop=["reasoning"])
    assert [x.get("id") for x in written if x.get("type") == "reasoning"] == ["rs_1"]


@pytest.mark.parametrize("target", sorted(_ADAPTERS))
def test_a_reasoning_item_repeated_in_another_turn_is_written_as_read(target: str) -> None:
    reasoning = {"type": "reasoning", "id": "rs_1",
                 "summary": [{"type": "summary_text", "text": "s"}]}
    answer = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
              "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
    items = [{"role": "user", "content": "hi"}, reasoning, answer,
             {"role": "user", "content": "again"}, reasoning, {**answer, "id": "msg_2"}]
    adapter = _ADAPTERS[target]
    assert adapter.from_messages(adapter.to_messages(items)) == items


# --- F2, F3: the Responses reader ---------------------------------------------------------

_KEPT_ITEMS = {
    "encrypted": (item(summary=ONE, encrypted_content="gAAA"), "s",
                  {"id": "rs_1", "fields": {"encrypted_content": "gAAA"}}),
    "status": (item(summary=ONE, status="completed"), "s",
               {"id": "rs_1", "fields": {"status": "completed"}}),
    "empty": (item(summary=[]), "", {"id": "rs_1", "summary": []}),
    "two": (item(summary=TWO), "s\n\nt", {"id": "rs_1", "summary": TWO}),
    "raw": (item(summary=[], content=RAW), "raw", {"id": "rs_1", "from": "content"}),
}


@pytest.mark.parametrize("source", sorted(_ADAPTERS))
@pytest.mark.parametrize("name", sorted(_KEPT_ITEMS))
def test_an_item_its_part_alone_does_not_give_back_keeps_its_id(source: str, name: str) -> None:
    kept_item, text, kept = _KEPT_ITEMS[name]
    items = [USER, kept_item, SAID]
    part = _ADAPTERS[source].to_messages(items)[1].content[0]
    assert part == tb.ReasoningPart(text=text, metadata={source: kept})
    assert json.dumps(_ADAPTERS[source].from_messages(
        _ADAPTERS[source].to_messages(items))) == json.dumps(items)


def test_an_item_with_a_summary_and_raw_text_keeps_its_id_on_the_summarys_part() -> None:
    items = [USER, item(summary=ONE, content=RAW), SAID]
    read = openai_responses.to_messages(items)
    assert read[1].content[:2] == [
        tb.ReasoningPart(text="s", metadata={NS: {"id": "rs_1"}}),
        tb.ReasoningPart(text="raw", metadata={NS: {"from": "content"}}),
    ]
    assert json.dumps(openai_responses.from_messages(read)) == json.dumps(items)


@pytest.mark.parametrize("source", sorted(_ADAPTERS))
def test_an_item_of_one_plain_summary_entry_has_a_typed_id(source: str) -> None:
    items = [USER, item(summary=ONE), SAID]
    read = _ADAPTERS[source].to_messages(items)
    assert read[1].content[0] == tb.ReasoningPart(text="s", id="rs_1")
    assert _ADAPTERS[source].from_messages(read) == items


@pytest.mark.parametrize(("source", "target"), [("openai_responses", "openai_agents"),
                                                ("openai_agents", "openai_responses")])
@pytest.mark.parametrize("name", sorted(_KEPT_ITEMS))
def test_the_sibling_writer_refuses_an_item_it_would_change(
    source: str, target: str, name: str
) -> None:
    items = [USER, _KEPT_ITEMS[name][0], SAID]
    read = _ADAPTERS[source].to_messages(items)
    assert failure(_ADAPTERS[target].from_messages, read) == (
        "not_representable", 1, "messages[1].content[0]")
    assert tb.convert(items, source=source, target=target) == items


@pytest.mark.parametrize("name", sorted(_KEPT_ITEMS))
def test_an_item_its_part_alone_does_not_give_back_is_refused_by_langchain_to_responses(
    name: str
) -> None:
    items = [USER, _KEPT_ITEMS[name][0], SAID]
    written = tb.convert(items, source="openai_responses", target="langchain")
    assert failure(tb.convert, written, source="langchain", target="openai_responses") == (
        "not_representable", 1, "messages[1].content[0]")


def test_a_kept_id_beside_a_part_that_gives_its_item_back_alone_is_malformed() -> None:
    reply = tb.AIMessage(content=[tb.ReasoningPart(text="s", metadata={NS: {"id": "rs_1"}})])
    with pytest.raises(TraceError) as caught:
        openai_responses.from_messages([tb.HumanMessage(content="q"), reply])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, "messages[1].content[0].metadata.openai_responses.id")


def test_a_kept_id_beside_the_parts_own_id_is_malformed() -> None:
    reply = tb.AIMessage(content=[tb.ReasoningPart(
        text="s", id="rs_1", metadata={NS: {"id": "rs_1", "fields": {"status": "done"}}})])
    assert failure(openai_responses.from_messages, [tb.HumanMessage(content="q"), reply]) == (
        "malformed_event", 1, "messages[1].content[0].metadata.openai_responses.id")


# --- F2: the LangChain reader --------------------------------------------------------------


@pytest.mark.parametrize(
    ("kept_item", "text"),
    [(item(summary=[]), ""), (item(summary=TWO), "s\n\nt"),
     (item(summary=[], content=RAW), "raw")],
    ids=["empty", "two", "raw"],
)
def test_a_chatopenai_item_its_part_alone_does_not_give_back_keeps_its_id(
    kept_item: dict[str, Any], text: str
) -> None:
    trace = [HumanMessage("q"), AIMessage("A", additional_kwargs={"reasoning": kept_item})]
    typed = langchain.to_messages(trace)
    part = typed[1].content[0]
    assert (part.text, part.id, part.metadata[LC]["block"]["id"]) == (text, None, "rs_1")
    assert langchain.from_messages(typed) == trace
    assert failure(tb.convert, trace, source="langchain", target="openai_responses") == (
        "not_representable", 1, "messages[1].content[0]")


@pytest.mark.parametrize(
    ("kept_item", "held"),
    [(item(summary=[]), "'summary'"), (item(summary=[], content=RAW), "'content'")],
    ids=["empty", "raw"],
)
def test_a_part_given_an_id_beside_such_a_kept_item_is_refused(
    kept_item: dict[str, Any], held: str
) -> None:
    trace = [HumanMessage("q"), AIMessage("A", additional_kwargs={"reasoning": kept_item})]
    typed = langchain.to_messages(trace)
    part = typed[1].content[0].model_copy(update={"id": "rs_1"})
    edited = [typed[0], typed[1].model_copy(update={"content": [part]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")
    assert f"holds {held}, which the part's id 'rs_1'" in caught.value.detail


# --- F4: langchain-core's own ids ----------------------------------------------------------


def test_an_id_langchain_core_made_is_no_reasoning_items_id() -> None:
    block = create_reasoning_block("think")
    assert block["id"].startswith("lc_")
    trace = [HumanMessage("q"), AIMessage([block, {"type": "text", "text": "A"}])]
    typed = langchain.to_messages(trace)
    assert typed[1].content[0] == tb.ReasoningPart(text="think", metadata={LC: {
        "shape": "reasoning", "block": {"type": "reasoning", "id": block["id"]}}})
    assert langchain.from_messages(typed) == trace
    assert failure(tb.convert, trace, source="langchain", target="openai_responses") == (
        "not_representable", 1, "messages[1].content[0]")


def test_a_part_with_an_id_langchain_core_made_is_refused() -> None:
    reply = tb.AIMessage(content=[tb.ReasoningPart(text="think", id="lc_1"),
                                  tb.TextPart(text="A")])
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([tb.HumanMessage(content="q"), reply])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")
    assert caught.value.detail.startswith(
        "the part's id 'lc_1' has langchain-core's own prefix ('lc_'")


# --- F5: homes without an id ---------------------------------------------------------------


def with_id(typed: list[tb.Message], j: int, item_id: str) -> list[tb.Message]:
    content = list(typed[1].content)
    content[j] = content[j].model_copy(update={"id": item_id})
    return [typed[0], typed[1].model_copy(update={"content": content})]


def test_a_part_with_an_id_in_the_reasoning_content_home_is_refused() -> None:
    typed = langchain.to_messages([HumanMessage("q"), AIMessage(
        "A", additional_kwargs={"reasoning_content": "think"})])
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(with_id(typed, 0, "rs_9"))
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.detail) == (
        "not_representable", 1, "messages[1].content[0].id",
        "additional_kwargs.reasoning_content is a string, a layout without id; the part has "
        "id 'rs_9'")


@pytest.mark.parametrize("v1", [False, True], ids=["v0_item", "v1_blocks"])
def test_a_raw_continuation_part_with_an_id_is_refused(v1: bool) -> None:
    reply = AIMessage([{"type": "text", "text": "A", "annotations": []}],
                      additional_kwargs={"reasoning": item(summary=ONE, content=RAW)},
                      response_metadata={"model_provider": "openai"})
    typed = langchain.to_messages([HumanMessage("q"), AIMessage(reply.content_blocks)
                                   if v1 else reply])
    assert typed[1].content[1] == tb.ReasoningPart(text="raw", metadata={LC: {"from": "content"}})
    assert failure(langchain.from_messages, with_id(typed, 1, "rs_9")) == (
        "not_representable", 1, "messages[1].content[1].id")


# --- F6: the path of a v1 block's kept id ----------------------------------------------------


def test_a_v1_blocks_id_kept_in_place_without_the_parts_is_refused_at_its_metadata() -> None:
    typed = langchain.to_messages([HumanMessage("q"), AIMessage(
        [{"type": "reasoning", "index": 0, "id": "rs_1", "reasoning": "x"}])])
    part = typed[1].content[0]
    assert part.id == "rs_1"
    assert part.metadata == {LC: {"shape": "reasoning",
                                  "block": {"type": "reasoning", "index": 0, "id": "rs_1"}}}
    edited = [typed[0], typed[1].model_copy(update={"content": [part.model_copy(
        update={"id": None})]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")
    assert "take 'id' out of metadata.langchain.block" in caught.value.detail
