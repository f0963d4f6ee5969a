"""langchain: an Anthropic text block's own ``citations`` list reads into
``AIMessage.citations`` as langchain-core's ``content_blocks`` reads it, and goes back exactly;
the un-summed pieces of a streamed legacy ``function_call`` are ``streaming_chunk``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)

from tracebridge import TraceError, convert, transcript_hash
from tracebridge import messages as tm
from tracebridge.adapters import langchain

LC = "langchain"


def where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


def refused(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, **options)
    return caught.value


def typed_fields(citations: list[tm.Citation]) -> list[tuple[Any, ...]]:
    return [(c.url, c.title, c.start_index, c.end_index, c.cited_text) for c in citations]


# --- Anthropic citations, as ChatAnthropic (output_version="v0") keeps them ---------------

WEB = {
    "type": "web_search_result_location",
    "cited_text": "Paris is 18C today",
    "url": "https://w.example/paris",
    "title": "Paris weather",
    "encrypted_index": "Eo8B",
}
CHAR = {
    "type": "char_location",
    "cited_text": "The grass is green.",
    "document_index": 0,
    "document_title": None,
    "start_char_index": 0,
    "end_char_index": 20,
    "file_id": None,
}
PAGE = {
    "type": "page_location",
    "cited_text": "Revenue rose 4%.",
    "document_index": 1,
    "document_title": "Q3 report",
    "start_page_number": 2,
    "end_page_number": 3,
}
BLOCK = {
    "type": "content_block_location",
    "cited_text": "Notes say so.",
    "document_index": 2,
    "document_title": "Notes",
    "start_block_index": 0,
    "end_block_index": 1,
}
SEARCH = {
    "type": "search_result_location",
    "cited_text": "It rains in May.",
    "source": "https://s.example/may",
    "title": "May weather",
    "search_result_index": 0,
    "start_block_index": 0,
    "end_block_index": 1,
}
NO_CITED_TEXT = {"type": "web_search_result_location", "url": "https://w.example/other"}
"""langchain-core reads it as a ``non_standard_annotation``: no citation."""

ANTHROPIC_META = {"model_provider": "anthropic", "stop_reason": "end_turn"}


def anthropic_reply(content: list[Any]) -> AIMessage:
    return AIMessage(content, id="msg_01", response_metadata=dict(ANTHROPIC_META))


def kept(j: int, k: int, entry: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"langchain": {"in_block": j, "at": k, "in_list": "citations", "annotation": entry,
                          **more}}


def test_a_web_search_citation_reads_as_content_blocks_reads_it() -> None:
    reply = anthropic_reply([{"type": "text", "text": "It is 18C in Paris.", "citations": [WEB]}])
    typed = langchain.to_messages([HumanMessage("weather?"), reply])
    assert reply.content_blocks[0]["annotations"] == [
        {"type": "citation", "cited_text": "Paris is 18C today", "url": "https://w.example/paris",
         "title": "Paris weather", "extras": {"encrypted_index": "Eo8B"}}
    ]
    assert typed[1].citations == [
        tm.Citation(
            url="https://w.example/paris",
            title="Paris weather",
            cited_text="Paris is 18C today",
            metadata=kept(0, 0, {"type": "web_search_result_location", "encrypted_index": "Eo8B"}),
        )
    ]
    assert typed[1].content == [
        tm.TextPart(
            text="It is 18C in Paris.",
            metadata={"langchain": {"shape": "text", "block": {"type": "text", "citations": []}}},
        )
    ]


MIXED = [
    {"type": "text", "text": "Intro. "},
    {"type": "text", "text": "It is 18C in Paris.", "citations": [WEB, NO_CITED_TEXT, CHAR]},
    {"type": "text", "text": "And more.", "citations": [PAGE, BLOCK, SEARCH]},
]


def test_document_citations_read_without_a_span_and_with_their_titles() -> None:
    typed = langchain.to_messages([HumanMessage("q"), anthropic_reply(MIXED)])
    assert typed[1].citations == [
        tm.Citation(
            url="https://w.example/paris", title="Paris weather", cited_text="Paris is 18C today",
            metadata=kept(1, 0, {"type": "web_search_result_location", "encrypted_index": "Eo8B"}),
        ),
        tm.Citation(
            cited_text="The grass is green.",
            metadata=kept(1, 2, {key: value for key, value in CHAR.items() if key != "cited_text"}),
        ),
        tm.Citation(
            title="Q3 report", cited_text="Revenue rose 4%.",
            metadata=kept(2, 0, {"type": "page_location", "document_index": 1,
                                 "start_page_number": 2, "end_page_number": 3}),
        ),
        tm.Citation(
            title="Notes", cited_text="Notes say so.",
            metadata=kept(2, 1, {"type": "content_block_location", "document_index": 2,
                                 "start_block_index": 0, "end_block_index": 1}),
        ),
        tm.Citation(
            title="May weather", cited_text="It rains in May.",
            metadata=kept(2, 2, {"type": "search_result_location",
                                 "source": "https://s.example/may", "search_result_index": 0,
                                 "start_block_index": 0, "end_block_index": 1}),
        ),
    ]
    # the entry langchain-core reads as no citation stays in its block, where it was
    assert typed[1].content[1].metadata == {
        "langchain": {"shape": "text", "block": {"type": "text", "citations": [NO_CITED_TEXT]}}
    }


def test_the_v0_and_v1_layouts_of_one_reply_read_alike() -> None:
    reply = anthropic_reply(MIXED)
    v1 = AIMessage(reply.content_blocks, id="msg_01", response_metadata={"output_version": "v1"})
    v0_typed = langchain.to_messages([HumanMessage("q"), reply])
    v1_typed = langchain.to_messages([HumanMessage("q"), v1])
    assert typed_fields(v0_typed[1].citations) == typed_fields(v1_typed[1].citations) == [
        ("https://w.example/paris", "Paris weather", None, None, "Paris is 18C today"),
        (None, None, None, None, "The grass is green."),
        (None, "Q3 report", None, None, "Revenue rose 4%."),
        (None, "Notes", None, None, "Notes say so."),
        (None, "May weather", None, None, "It rains in May."),
    ]
    assert transcript_hash(v0_typed) == transcript_hash(v1_typed)


def test_anthropic_citations_go_back_into_their_blocks_exactly() -> None:
    trace = [HumanMessage("q"), anthropic_reply(MIXED)]
    written = langchain.from_messages(langchain.to_messages(trace))
    assert messages_to_dict(written) == messages_to_dict(trace)
    assert written[1].content == MIXED


def test_a_title_from_the_other_key_keeps_where_it_was() -> None:
    entry = {"type": "char_location", "cited_text": "x", "title": "Doc", "document_index": 0}
    reply = anthropic_reply([{"type": "text", "text": "y", "citations": [entry]}])
    trace = [HumanMessage("q"), reply]
    typed = langchain.to_messages(trace)
    assert typed[1].citations == [
        tm.Citation(
            title="Doc", cited_text="x",
            metadata=kept(0, 0, {"type": "char_location", "document_index": 0},
                          title_key="title"),
        )
    ]
    assert trace[1].content_blocks[0]["annotations"][0]["title"] == "Doc"
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


@pytest.mark.parametrize("target", ["openai_responses", "openai_chat"])
def test_convert_refuses_the_spanless_citations_naming_drop(target: str) -> None:
    trace = [HumanMessage("weather?"), anthropic_reply(
        [{"type": "text", "text": "It is 18C in Paris.", "citations": [WEB]}])]
    with pytest.raises(TraceError) as caught:
        convert(trace, source=LC, target=target)
    assert where(caught.value) == ("not_representable", 1, "messages[1].citations[0]", target)
    assert "pass drop=['citations'] to leave it out" in str(caught.value)
    dropped = convert(trace, source=LC, target=target, target_options={"drop": ["citations"]})
    assert dropped[-1]["role"] == "assistant"


def typed_web_reply(citation: tm.Citation) -> list[tm.Message]:
    block = {"type": "text", "citations": []}
    return [
        tm.HumanMessage(content="weather?"),
        tm.AIMessage(
            content=[tm.TextPart(text="It is 18C in Paris.",
                                 metadata={"langchain": {"shape": "text", "block": block}})],
            citations=[citation],
        ),
    ]


WEB_CITATION = tm.Citation(
    url="https://w.example/paris", title="Paris weather", cited_text="Paris is 18C today",
    metadata=kept(0, 0, {"type": "web_search_result_location", "encrypted_index": "Eo8B"}),
)


@pytest.mark.parametrize(
    ("update", "path", "detail"),
    [
        (
            {"start_index": 0, "end_index": 5},
            "messages[1].citations[0].start_index",
            "would read back with start_index None, not 0",
        ),
        ({"title": ""}, "messages[1].citations[0].title", "would read back with title None"),
        (
            {"cited_text": None},
            "messages[1].citations[0]",
            "would read back as none: such an entry is read as a citation only with cited_text",
        ),
    ],
    ids=["span", "empty_title", "no_cited_text"],
)
def test_a_citation_such_an_entry_cannot_give_back_is_refused(
    update: dict[str, Any], path: str, detail: str
) -> None:
    typed = typed_web_reply(WEB_CITATION.model_copy(update=update))
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    assert where(caught.value) == ("not_representable", 1, path, LC)
    assert detail in str(caught.value)


def test_an_unknown_list_mark_is_refused() -> None:
    marked = kept(0, 0, {"type": "web_search_result_location"}, in_list="sources")
    typed = typed_web_reply(WEB_CITATION.model_copy(update={"metadata": marked}))
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    assert where(caught.value) == (
        "not_representable", 1, "messages[1].citations[0].metadata.langchain.in_list", LC
    )


def test_a_kept_block_holding_an_anthropic_citation_is_refused() -> None:
    block = {"type": "text", "citations": [WEB]}
    typed = [
        tm.HumanMessage(content="q"),
        tm.AIMessage(
            content=[tm.TextPart(text="It is 18C.",
                                 metadata={"langchain": {"shape": "text", "block": block}})]
        ),
    ]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    assert where(caught.value) == ("not_representable", 1, "messages[1].content[0].metadata", LC)
    assert "metadata.langchain.block.citations[0]" in str(caught.value)


# --- un-summed pieces of a streamed legacy function_call ----------------------------------


def fake_function_call_pieces() -> list[AIMessageChunk]:
    """The pieces ``GenericFakeChatModel`` streams for a reply with a ``function_call``."""
    function_call = {"name": "f", "arguments": '{"a": 1}'}
    reply = AIMessage("", additional_kwargs={"function_call": function_call})
    return list(GenericFakeChatModel(messages=iter([reply])).stream("hi"))


def test_a_function_call_piece_with_cut_off_arguments_is_a_streaming_chunk() -> None:
    piece = AIMessageChunk("", id="run-1", additional_kwargs={
        "function_call": {"name": "get_weather", "arguments": '{"city": "Pa'}})
    error = refused([HumanMessage("q"), piece, AIMessage("It is 18C.")])
    assert where(error) == (
        "streaming_chunk", 1, "messages[1].additional_kwargs.function_call.arguments", LC
    )
    assert "are cut off mid-JSON; sum the chunks (chunk + chunk) before converting" in str(error)


@pytest.mark.parametrize(
    "function_call",
    [
        {"arguments": 'ris"}'},
        {"name": None, "arguments": 'ris"}'},
        {"name": "", "arguments": 'ris"}'},
    ],
    ids=["no_name", "name_none", "name_empty"],
)
def test_a_function_call_piece_without_a_name_continues_a_call(function_call: Any) -> None:
    piece = AIMessageChunk("", id="run-2", additional_kwargs={"function_call": function_call})
    error = refused([HumanMessage("q"), piece])
    assert where(error) == (
        "streaming_chunk", 1, "messages[1].additional_kwargs.function_call", LC
    )
    assert "continues a function call started in an earlier chunk" in str(error)


def test_the_pieces_a_fake_model_streams_are_streaming_chunks() -> None:
    first, second, last = fake_function_call_pieces()
    assert (first.additional_kwargs, second.additional_kwargs) == (
        {"function_call": {"name": "f"}}, {"function_call": {"arguments": '{"a": 1}'}}
    )
    for piece, detail in ((first, "has no arguments: they come in later chunks"),
                          (second, "has no name")):
        error = refused([HumanMessage("q"), piece], allow_pending=True)
        assert where(error) == (
            "streaming_chunk", 1, "messages[1].additional_kwargs.function_call", LC
        )
        assert detail in str(error)
    summed = first + second + last
    typed = langchain.to_messages([HumanMessage("q"), summed], allow_pending=True)
    assert typed[1].tool_calls == [
        tm.ToolCall(name="f", args={"a": 1}, metadata={"langchain": {"from": "function_call"}})
    ]


CUT_OFF = {"function_call": {"name": "get_weather", "arguments": '{"city": "Pa'}}


@pytest.mark.parametrize(
    "reply",
    [AIMessage("", id="a", additional_kwargs=CUT_OFF),
     AIMessageChunk("", id="a", additional_kwargs=CUT_OFF, chunk_position="last")],
    ids=["summed_message", "last_chunk"],
)
def test_cut_off_arguments_of_a_whole_reply_stay_an_invalid_call(reply: Any) -> None:
    typed = langchain.to_messages([HumanMessage("q"), reply, AIMessage("It is 18C.")])
    assert typed[1].tool_calls == [
        tm.ToolCall(name="get_weather", invalid_args='{"city": "Pa',
                    metadata={"langchain": {"from": "function_call"}}),
    ]


def test_a_joined_function_call_copy_beside_calls_is_no_piece() -> None:
    chunk = AIMessageChunk(
        "",
        id="g",
        tool_call_chunks=[
            {"name": "f", "args": "{}", "id": "c1", "index": 0},
            {"name": "g", "args": "{}", "id": "c2", "index": 1},
        ],
        additional_kwargs={"function_call": {"name": "fg", "arguments": "{}{}"}},
    )
    typed = langchain.to_messages(
        [HumanMessage("q"), chunk, ToolMessage("a", tool_call_id="c1"),
         ToolMessage("b", tool_call_id="c2")]
    )
    assert typed[1].tool_calls == [tm.ToolCall(name="f", args={}, id="c1"),
                                   tm.ToolCall(name="g", args={}, id="c2")]
