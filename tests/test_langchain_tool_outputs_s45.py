"""langchain: the hosted-tool items ChatOpenAI (Responses API, ``output_version="v0"``) keeps
in ``additional_kwargs["tool_outputs"]`` are opaque parts (those here after the others, as
langchain-core places them), marked so that they go back there: they render, are in the
transcript hash, and other formats refuse them instead of leaving them out.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    messages_to_dict,
)
from langchain_helpers import forms, rejected_write

import tracebridge
from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.messages import OpaquePart, ReasoningPart, RefusalPart, TextPart

LC = "langchain"

WEB_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "news"},
}
CODE = {
    "type": "code_interpreter_call",
    "id": "ci_1",
    "code": "print(1 + 1)",
    "container_id": "cntr_1",
    "outputs": None,
    "status": "completed",
}
FILE_SEARCH = {
    "type": "file_search_call",
    "id": "fs_1",
    "queries": ["news"],
    "status": "completed",
    "results": None,
}
REASONING = {
    "type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look"}]
}
TEXT = {"type": "text", "text": "Here is the news.", "annotations": []}
MARK = {LC: {"from": "tool_outputs"}}


def chatopenai_v03(**kwargs: Any) -> AIMessage:
    """A reply as ChatOpenAI on the Responses API builds it with ``output_version="v0"``: a
    list of text blocks, the message's id ``msg_...``, the response's ``resp_...``, the
    reasoning item and the hosted-tool items in ``additional_kwargs``."""
    return AIMessage(
        content=[dict(TEXT)],
        id="msg_1",
        additional_kwargs={"reasoning": copy.deepcopy(REASONING), **kwargs},
        response_metadata={"id": "resp_1", "model_name": "gpt-4.1", "model_provider": "openai"},
    )


def opaque(item: dict[str, Any], mark: dict[str, Any] | None = None) -> OpaquePart:
    return OpaquePart(kind=item["type"], value=item, metadata=mark or MARK)


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


def test_the_items_read_as_opaque_parts_after_the_others_and_go_back() -> None:
    trace = [HumanMessage("News?"), chatopenai_v03(tool_outputs=[WEB_SEARCH, FILE_SEARCH])]
    # langchain-core reads the items as hosted-tool blocks of the reply too
    assert [b["type"] for b in trace[1].content_blocks] == [
        "reasoning", "text", "server_tool_call", "server_tool_result", "server_tool_call",
        "server_tool_result",
    ]
    for form in forms(trace):
        typed = langchain.to_messages(form)
        assert typed[1].content == [
            ReasoningPart(
                text="Look", id="rs_1", metadata={LC: {"from": "reasoning", "block": {
                    "type": "reasoning", "id": "rs_1"}}}  # (an id not first stays in place)
            ),
            TextPart(text=TEXT["text"], metadata={LC: {"shape": "text",
                                                       "block": {"type": "text",
                                                                 "annotations": []}}}),
            opaque(WEB_SEARCH),
            opaque(FILE_SEARCH),
        ]
        assert "additional_kwargs" not in typed[1].metadata[LC]
        back = langchain.from_messages(typed)
        assert messages_to_dict(back) == messages_to_dict(trace)
        assert back[1].content_blocks == trace[1].content_blocks


def test_a_string_content_goes_back_as_that_string() -> None:
    for content, parts in (("Here", [TextPart(text="Here")]), ("", [])):
        trace = [HumanMessage("News?"), AIMessage(content, additional_kwargs={
            "tool_outputs": [WEB_SEARCH]})]
        for form in forms(trace):
            typed = langchain.to_messages(form)
            assert typed[1].content == [
                *parts, opaque(WEB_SEARCH, {LC: {"from": "tool_outputs", "content": "string"}})
            ]
            back = langchain.from_messages(typed)
            assert back[1].content == content
            assert messages_to_dict(back) == messages_to_dict(trace)


def test_a_text_refusal_and_an_empty_list_keep_their_layouts() -> None:
    refused = AIMessage("", additional_kwargs={"refusal": "No.", "tool_outputs": [WEB_SEARCH]})
    empty = AIMessage([], additional_kwargs={"tool_outputs": [WEB_SEARCH]})
    trace = [HumanMessage("News?"), refused, HumanMessage("And?"), empty]
    for form in forms(trace):
        typed = langchain.to_messages(form)
        assert typed[1].content == [RefusalPart(text="No."), opaque(WEB_SEARCH)]
        assert typed[3].content == [opaque(WEB_SEARCH)]
        assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_a_summed_stream_chunk_goes_back_as_it_was() -> None:
    chunk = AIMessageChunk(
        content=[{**TEXT, "index": 0}],
        id="msg_1",
        additional_kwargs={"tool_outputs": [WEB_SEARCH]},
        chunk_position="last",
    )
    trace = [HumanMessage("News?"), chunk]
    for form in forms(trace):
        typed = langchain.to_messages(form)
        assert typed[1].content[-1] == opaque(WEB_SEARCH)
        assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_only_a_list_of_typed_items_is_read_other_values_stay_verbatim() -> None:
    others: list[Any] = [[], [WEB_SEARCH, 3], [{"id": "ws_2"}], [{"type": ""}], {"type": "x"}]
    trace: list[BaseMessage] = [HumanMessage("News?")]
    trace += [AIMessage("Here", additional_kwargs={"tool_outputs": value}) for value in others]
    trace.append(AIMessage("Here", additional_kwargs={"tool_outputs": [WEB_SEARCH]}))
    typed = langchain.to_messages(trace)
    for k, value in enumerate(others, 1):
        assert typed[k].content == "Here"
        assert typed[k].metadata == {LC: {"additional_kwargs": {"tool_outputs": value}}}
    assert typed[-1].content == [
        TextPart(text="Here"), opaque(WEB_SEARCH, {LC: {"from": "tool_outputs",
                                                        "content": "string"}})
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_the_items_render_and_are_in_the_transcript_hash() -> None:
    with_items = [HumanMessage("News?"), chatopenai_v03(tool_outputs=[WEB_SEARCH])]
    without = [HumanMessage("News?"), chatopenai_v03()]
    typed = langchain.to_messages(with_items)
    assert '"web_search_call"' in tracebridge.render(typed)
    assert tracebridge.transcript_hash(typed) != tracebridge.transcript_hash(
        langchain.to_messages(without)
    )


@pytest.mark.parametrize(
    "target", ["openai_chat", "openai_responses", "openai_agents", "swarm", "llama_index"]
)
def test_other_formats_refuse_the_items_and_drop_leaves_them_out(target: str) -> None:
    reply = AIMessage("Here", additional_kwargs={"tool_outputs": [WEB_SEARCH]})
    with pytest.raises(TraceError) as caught:
        tracebridge.convert([HumanMessage("News?"), reply], source=LC, target=target)
    assert where(caught.value) == ("not_representable", 1, "messages[1].content[1]")
    assert "drop=['opaque_parts']" in str(caught.value)
    dropped = tracebridge.convert(
        [HumanMessage("News?"), reply], source=LC, target=target,
        target_options={"drop": ["opaque_parts"]},
    )
    plain = tracebridge.convert(
        [HumanMessage("News?"), AIMessage([{"type": "text", "text": "Here"}])], source=LC,
        target=target,
        target_options={"drop": ["opaque_parts"]},
    )
    assert dropped == plain


def test_galtea_refuses_the_items_naming_drop_non_text() -> None:
    reply = AIMessage("Here", additional_kwargs={"tool_outputs": [WEB_SEARCH]})
    with pytest.raises(TraceError) as caught:
        tracebridge.convert([HumanMessage("News?"), reply], source=LC, target="galtea")
    assert where(caught.value) == ("not_representable", 1, "messages[1].content[1]")
    assert "drop_non_text=True" in str(caught.value)


def typed_reply(*items: dict[str, Any]) -> list[Any]:
    reply = AIMessage("Here", additional_kwargs={"tool_outputs": list(items)})
    trace = [HumanMessage("News?"), reply]
    return langchain.to_messages(trace)


def test_edited_items_go_back_edited_and_removed_ones_not_at_all() -> None:
    typed = typed_reply(WEB_SEARCH, FILE_SEARCH)
    text, search, found = typed[1].content
    edited = search.model_copy(update={"value": {**WEB_SEARCH, "status": "failed"}})
    one = typed[1].model_copy(update={"content": [text, edited]})
    assert langchain.from_messages([typed[0], one])[1].additional_kwargs == {
        "tool_outputs": [{**WEB_SEARCH, "status": "failed"}]
    }
    # the second keeps no content mark: without the first, the content goes back as a list
    none = typed[1].model_copy(update={"content": [text, found]})
    written = langchain.from_messages([typed[0], none])[1]
    assert (written.content, written.additional_kwargs) == (
        [{"type": "text", "text": "Here"}], {"tool_outputs": [FILE_SEARCH]}
    )


def test_a_marked_part_out_of_its_place_is_refused_at_it() -> None:
    typed = typed_reply(WEB_SEARCH, FILE_SEARCH)
    text, search, found = typed[1].content
    moved = typed[1].model_copy(update={"content": [search, text, found]})
    error = rejected_write([typed[0], moved])
    assert where(error) == ("not_representable", 1, "messages[1].content[0].metadata")
    assert "additional_kwargs.tool_outputs" in str(error)
    before_refusal = typed[1].model_copy(update={"content": [text, found, RefusalPart(text="No")]})
    assert where(rejected_write([typed[0], before_refusal])) == (
        "not_representable", 1, "messages[1].content[1].metadata"
    )
    human = typed[0].model_copy(update={"content": [TextPart(text="News?"), found]})
    assert where(rejected_write([human, typed[1]])) == (
        "not_representable", 0, "messages[0].content[1].metadata"
    )


def test_a_mark_or_an_item_that_would_read_back_otherwise_is_refused_at_it() -> None:
    typed = typed_reply(WEB_SEARCH, FILE_SEARCH)
    text, search, found = typed[1].content
    marked = search.metadata[LC]
    cases = [
        ([text, search.model_copy(update={"kind": "file_search_call"}), found],
         "messages[1].content[1]"),
        ([text, search.model_copy(update={"value": [WEB_SEARCH]}), found],
         "messages[1].content[1]"),
        ([text, search.model_copy(update={"metadata": {LC: {**marked, "shape": "x"}}}), found],
         "messages[1].content[1].metadata.langchain.shape"),
        ([text, search, found.model_copy(update={"metadata": search.metadata})],
         "messages[1].content[2].metadata.langchain.content"),
        ([text, search.model_copy(update={"metadata": {LC: {**marked, "content": "list"}}})],
         "messages[1].content[1].metadata.langchain.content"),
        ([text, TextPart(text="more"), search],
         "messages[1].content[2].metadata.langchain.content"),
    ]
    for content, path in cases:
        edited = typed[1].model_copy(update={"content": content})
        assert where(rejected_write([typed[0], edited])) == ("not_representable", 1, path), path


def test_a_kept_tool_outputs_value_is_refused_where_the_items_would_go() -> None:
    typed = typed_reply(WEB_SEARCH)
    kept_typed = typed[1].model_copy(
        update={"metadata": {LC: {"additional_kwargs": {"tool_outputs": [CODE]}}},
                "content": "Here"}
    )
    assert where(rejected_write([typed[0], kept_typed])) == (
        "not_representable", 1, "messages[1].metadata.langchain.additional_kwargs.tool_outputs"
    )
    kept_other = typed[1].model_copy(
        update={"metadata": {LC: {"additional_kwargs": {"tool_outputs": []}}}}
    )
    assert where(rejected_write([typed[0], kept_other])) == (
        "not_representable", 1, "messages[1].additional_kwargs.tool_outputs"
    )
