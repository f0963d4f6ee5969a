"""The langchain adapter: a file block's name where LangChain keeps it, citations counted in
the reply's text, a legacy function result that reads back equal, and rule errors that point
at the content blocks holding the calls and results."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    FunctionMessageChunk,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    messages_to_dict,
)
from langchain_core.messages.content import create_file_block

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain, openai_chat, openai_responses
from tracebridge.hashing import transcript_hash

LC = "langchain"
PDF = "JVBERi0xLjQK"


def _refused(call: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call()
    return caught.value.code, caught.value.index, caught.value.path


def _roundtrip(trace: list[Any]) -> list[dict[str, Any]]:
    return messages_to_dict(langchain.from_messages(langchain.to_messages(trace)))


# --- a file block's name -------------------------------------------------------------------


def _ask(block: dict[str, Any]) -> list[Any]:
    return [HumanMessage([{"type": "text", "text": "Summarise"}, block]), AIMessage("Done.")]


def test_a_v1_file_block_names_its_file_in_extras_as_create_file_block_writes_it() -> None:
    block = create_file_block(
        base64=PDF, mime_type="application/pdf", filename="report.pdf", id="lc_1"
    )
    assert block["extras"] == {"filename": "report.pdf"}  # (no top-level key in v1)
    trace = _ask(block)
    part = langchain.to_messages(trace)[0].content[1]
    assert part == tb.FilePart(
        data=PDF,
        mime_type="application/pdf",
        filename="report.pdf",
        metadata={
            LC: {
                "shape": "file_filename_in_extras",
                "block": {"type": "file", "id": "lc_1", "extras": {}},
            }
        },
    )
    assert _roundtrip(trace) == messages_to_dict(trace)
    ours = tb.convert(trace, source="langchain", target="openai_chat")
    assert ours[0]["content"][1] == convert_to_openai_messages(trace)[0]["content"][1] == {
        "type": "file",
        "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "report.pdf"},
    }


@pytest.mark.parametrize(
    ("block", "shape", "kept"),
    [
        (
            {"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf",
             "metadata": {"filename": "d.pdf", "pages": 2}},
            "file_source_base64_filename_in_metadata",
            {"type": "file", "source_type": "base64", "metadata": {"pages": 2}},
        ),
        (
            {"type": "file", "base64": PDF, "mime_type": "application/pdf",
             "metadata": {"filename": "d.pdf"}},
            "file_filename_in_metadata",
            {"type": "file", "metadata": {}},
        ),
        (
            {"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf",
             "extras": {"filename": "d.pdf"}},
            "file_source_base64_filename_in_extras",
            {"type": "file", "source_type": "base64", "extras": {}},
        ),
    ],
    ids=["v0-metadata", "v1-metadata", "v0-extras"],
)
def test_a_file_name_kept_where_langchain_core_looks_for_it_is_read(
    block: dict[str, Any], shape: str, kept: dict[str, Any]
) -> None:
    trace = _ask(block)
    part = langchain.to_messages(trace)[0].content[1]
    assert part == tb.FilePart(
        data=PDF, mime_type="application/pdf", filename="d.pdf",
        metadata={LC: {"shape": shape, "block": kept}},
    )
    assert _roundtrip(trace) == messages_to_dict(trace)
    ours = tb.convert(trace, source="langchain", target="openai_chat")
    assert ours[0]["content"][1]["file"]["filename"] == "d.pdf"
    assert convert_to_openai_messages(trace)[0]["content"][1]["file"]["filename"] == "d.pdf"


def test_a_top_level_file_name_wins_as_in_langchain_core_and_extras_stay_in_the_block() -> None:
    block = {"type": "file", "base64": PDF, "mime_type": "application/pdf",
             "filename": "top.pdf", "extras": {"filename": "inner.pdf"}}
    trace = _ask(block)
    part = langchain.to_messages(trace)[0].content[1]
    assert part.filename == "top.pdf"
    assert part.metadata == {
        LC: {"shape": "file", "block": {"type": "file", "extras": {"filename": "inner.pdf"}}}
    }
    assert convert_to_openai_messages(trace)[0]["content"][1]["file"]["filename"] == "top.pdf"
    assert _roundtrip(trace) == messages_to_dict(trace)


def test_an_edited_file_name_goes_back_where_it_was_read_from() -> None:
    block = create_file_block(base64=PDF, mime_type="application/pdf", filename="a.pdf", id="x")
    typed = langchain.to_messages(_ask(block))
    content = list(typed[0].content)
    content[1] = content[1].model_copy(update={"filename": "b.pdf"})
    edited = typed[0].model_copy(update={"content": content})
    [written] = langchain.from_messages([edited])
    assert written.content[1] == {
        "type": "file", "id": "x", "base64": PDF, "mime_type": "application/pdf",
        "extras": {"filename": "b.pdf"},
    }


@pytest.mark.parametrize(
    ("block", "shape"),
    [
        (create_file_block(base64=PDF, mime_type="application/pdf", filename="b.pdf", id="x"),
         "file_filename_in_extras"),
        ({"type": "file", "base64": PDF, "mime_type": "application/pdf",
          "metadata": {"filename": "b.pdf"}}, "file_filename_in_metadata"),
        ({"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf",
          "extras": {"filename": "b.pdf"}}, "file_source_base64_filename_in_extras"),
        ({"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf",
          "metadata": {"filename": "b.pdf"}}, "file_source_base64_filename_in_metadata"),
    ],
    ids=["v1-extras", "v1-metadata", "v0-extras", "v0-metadata"],
)
def test_a_file_name_removed_from_a_layout_that_needs_one_is_refused_at_the_shape(
    block: dict[str, Any], shape: str
) -> None:
    # written without the name, the block reads back in the plain layout ('file', ...)
    typed = langchain.to_messages(_ask(block))
    content = list(typed[0].content)
    content[1] = content[1].model_copy(update={"filename": None})
    edited = [typed[0].model_copy(update={"content": content})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    plain = shape.removesuffix("_filename_in_extras").removesuffix("_filename_in_metadata")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[1].metadata.langchain.shape")
    assert caught.value.detail == (
        f"metadata.langchain.shape is {shape!r}, a layout for a part with filename, but the "
        f"written block reads back in the {plain!r} layout; give the part filename, or take "
        "metadata.langchain off the part to write it in the layout the way back picks"
    )
    content[1] = content[1].model_copy(update={"metadata": {}})
    unkept = [typed[0].model_copy(update={"content": content})]
    assert langchain.to_messages(langchain.from_messages(unkept)) == unkept


def test_a_file_name_from_another_format_is_a_top_level_filename() -> None:
    part = tb.FilePart(data=PDF, mime_type="application/pdf", filename="a.pdf")
    [written] = langchain.from_messages([tb.HumanMessage(content=[part])])
    assert written.content == [
        {"type": "file", "base64": PDF, "mime_type": "application/pdf", "filename": "a.pdf"}
    ]


# --- citations counted in the reply's text -------------------------------------------------


def _cited(url: str, start: int, end: int) -> dict[str, Any]:
    return {"type": "url_citation", "url": url, "title": url[-1].upper(),
            "start_index": start, "end_index": end}


TWO_BLOCKS = [
    {"type": "text", "text": "Paris ", "annotations": [_cited("https://a", 0, 5)]},
    {"type": "text", "text": "is nice", "annotations": [_cited("https://b", 0, 2)]},
]
REPLY = [HumanMessage("q"), AIMessage(TWO_BLOCKS, id="msg_1")]


def test_a_citation_of_a_later_text_block_counts_in_the_reply_text() -> None:
    [_, reply] = langchain.to_messages(REPLY)
    assert [(c.url, c.start_index, c.end_index) for c in reply.citations] == [
        ("https://a", 0, 5), ("https://b", 7, 9)
    ]
    assert [reply.text[c.start_index:c.end_index] for c in reply.citations] == ["Paris", "is"]
    assert reply.citations[1].metadata == {
        LC: {"in_block": 1, "at": 0, "annotation": {"type": "url_citation"}}
    }
    assert _roundtrip(REPLY) == messages_to_dict(REPLY)


def test_the_same_reply_read_by_the_responses_reader_has_the_same_hash() -> None:
    items = [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "message", "role": "assistant", "id": "msg_1", "content": [
            {"type": "output_text", "text": block["text"], "annotations": block["annotations"]}
            for block in TWO_BLOCKS
        ]},
    ]
    from_responses = openai_responses.to_messages(items)
    from_langchain = langchain.to_messages(REPLY)
    assert [(c.url, c.start_index, c.end_index) for c in from_responses[1].citations] == [
        (c.url, c.start_index, c.end_index) for c in from_langchain[1].citations
    ]
    assert transcript_hash(from_langchain) == transcript_hash(from_responses)


def test_citations_convert_to_chat_completions_counted_in_the_whole_content() -> None:
    out = tb.convert(REPLY, source="langchain", target="openai_chat")
    assert [a["url_citation"]["start_index"] for a in out[1]["annotations"]] == [0, 7]


def test_strings_and_other_blocks_before_a_cited_block_count_as_the_reply_text_does() -> None:
    image = {"type": "image", "url": "https://ex.org/a.png"}
    content = ["Hi", image, {"type": "text", "text": "Paris", "annotations": [
        {"type": "citation", "url": "https://p", "start_index": 0, "end_index": 5}]}]
    trace = [HumanMessage("q"), AIMessage(content)]
    [_, reply] = langchain.to_messages(trace)
    assert (reply.citations[0].start_index, reply.citations[0].end_index) == (3, 8)
    assert reply.text[3:8] == "Paris"
    assert _roundtrip(trace) == messages_to_dict(trace)


def _with_citation(reply: tb.AIMessage, k: int, **update: Any) -> tb.AIMessage:
    citations = list(reply.citations)
    citations[k] = citations[k].model_copy(update=update)
    return reply.model_copy(update={"citations": citations})


def test_a_citation_edited_out_of_its_block_is_refused_unless_citations_are_dropped() -> None:
    [question, reply] = langchain.to_messages(REPLY)
    edited = _with_citation(reply, 1, start_index=0, end_index=5)  # "Paris": block 0's text
    assert _refused(lambda: langchain.from_messages([question, edited])) == (
        "not_representable", 1, "messages[1].citations[1]"
    )
    [_, written] = langchain.from_messages([question, edited], drop=["citations"])
    assert [block["annotations"] for block in written.content] == [[], []]


def test_a_citation_edited_inside_its_block_goes_back_counted_in_the_block() -> None:
    [question, reply] = langchain.to_messages(REPLY)
    edited = _with_citation(reply, 1, start_index=10, end_index=14)  # "nice"
    [_, written] = langchain.from_messages([question, edited])
    assert written.content[1]["annotations"] == [_cited("https://b", 3, 7)]


def test_a_citation_read_outside_its_block_goes_back_as_it_was() -> None:
    blocks = [dict(TWO_BLOCKS[0]), {**TWO_BLOCKS[1], "annotations": [_cited("https://b", 0, 50)]}]
    trace = [HumanMessage("q"), AIMessage(blocks)]
    [_, reply] = langchain.to_messages(trace)
    assert (reply.citations[1].start_index, reply.citations[1].end_index) == (7, 57)
    assert reply.citations[1].metadata[LC]["outside"] is True
    assert _roundtrip(trace) == messages_to_dict(trace)
    assert langchain.to_messages(langchain.from_messages([reply])) == [reply]


@pytest.mark.parametrize("value", [True, False, "yes"])
def test_an_outside_mark_on_a_span_inside_its_block_is_refused(value: Any) -> None:
    [question, reply] = langchain.to_messages(REPLY)
    cited = reply.citations[1]
    marked = _with_citation(reply, 1, metadata={LC: {**cited.metadata[LC], "outside": value}})
    assert _refused(lambda: langchain.from_messages([question, marked])) == (
        "not_representable", 1, "messages[1].citations[1].metadata.langchain.outside"
    )


# --- a legacy function result reads back equal ---------------------------------------------


@pytest.mark.parametrize("form", ["messages", "model_dump", "dicts"])
def test_an_id_less_named_tool_result_reads_back_equal(form: str) -> None:
    typed = [
        tb.HumanMessage(content="q"),
        tb.AIMessage(tool_calls=[tb.ToolCall(name="f", args={})]),
        tb.ToolMessage(content="ok", name="f"),
    ]
    assert langchain.to_messages(langchain.from_messages(typed, form=form)) == typed


def test_a_chat_completions_function_result_gains_no_metadata_through_langchain() -> None:
    chat = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "r"},
    ]
    typed = openai_chat.to_messages(chat)
    assert typed[2] == tb.ToolMessage(content="r", name="f")
    through = langchain.to_messages(langchain.from_messages(typed))
    assert through[2] == tb.ToolMessage(content="r", name="f")


def test_a_function_message_chunk_still_keeps_its_class() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}}),
        FunctionMessageChunk(content="r", name="f"),
    ]
    assert langchain.to_messages(trace)[2].metadata == {LC: {"class": "FunctionMessageChunk"}}
    assert _roundtrip(trace) == messages_to_dict(trace)


def test_a_kept_function_class_the_writer_picks_anyway_is_refused() -> None:
    typed = [
        tb.HumanMessage(content="q"),
        tb.AIMessage(tool_calls=[tb.ToolCall(name="f", args={})]),
        tb.ToolMessage(content="ok", name="f", metadata={LC: {"class": "function"}}),
    ]
    assert _refused(lambda: langchain.from_messages(typed)) == (
        "not_representable", 2, "messages[2].metadata.langchain.class"
    )


# --- rule errors point at the blocks LangChain keeps calls and results in ------------------

_ANTHROPIC = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "checking"},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
    ]},
]


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([_result("zz", "a")],
         ("orphan_tool_result", 2, "messages[2].content[0].tool_use_id")),
        ([_result("t1", "a"), _result("t1", "b")],
         ("orphan_tool_result", 2, "messages[2].content[1].tool_use_id")),
        ([{"type": "text", "text": "hi"}, _result("t1", "a"), _result("zz", "b")],
         ("orphan_tool_result", 2, "messages[2].content[2].tool_use_id")),
    ],
    ids=["unknown-id", "answered-twice", "second-result"],
)
def test_a_tool_result_block_that_answers_nothing_is_refused_at_its_tool_use_id(
    blocks: list[dict[str, Any]], expected: tuple[str, int, str]
) -> None:
    trace = [*convert_to_messages(_ANTHROPIC), HumanMessage(blocks)]
    assert _refused(lambda: langchain.to_messages(trace)) == expected


def test_an_unanswered_tool_use_block_is_refused_at_the_block() -> None:
    trace = convert_to_messages([*_ANTHROPIC, {"role": "user", "content": "next"}])
    assert trace[1].tool_calls == []  # the call is in the content alone
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unanswered_tool_call", 1, "messages[1].content[1]"
    )


def test_an_unanswered_function_call_is_refused_at_it() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}}),
        HumanMessage("n"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unanswered_tool_call", 1, "messages[1].additional_kwargs.function_call"
    )


def test_a_tool_use_block_reusing_an_id_is_refused_at_its_id() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "a"}]),
        ToolMessage("r", tool_call_id="a"),
        AIMessage([{"type": "tool_use", "id": "a", "name": "f", "input": {}}]),
        ToolMessage("r", tool_call_id="a"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "duplicate_tool_call_id", 3, "messages[3].content[0].id"
    )


def test_a_call_of_tool_calls_and_a_tool_message_keep_their_own_paths() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "a"}]),
        ToolMessage("r", tool_call_id="zz"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "orphan_tool_result", 2, "messages[2].tool_call_id"
    )
    assert _refused(lambda: langchain.to_messages([*trace[:2], HumanMessage("n")])) == (
        "unanswered_tool_call", 1, "messages[1].tool_calls[0]"
    )


def test_validate_takes_source_paths_for_the_fields_a_source_keeps_elsewhere() -> None:
    messages = [
        tb.HumanMessage(content="q"),
        tb.AIMessage(tool_calls=[tb.ToolCall(name="f", args={}, id="a")]),
        tb.ToolMessage(content="r", tool_call_id="zz"),
    ]
    paths = {(2, ".tool_call_id"): "messages[7].content[3].tool_use_id"}
    error = _refused(lambda: tb.validate(
        messages, source="x", origin=[0, 1, 7], paths=lambda i, field: paths.get((i, field))
    ))
    assert error == ("orphan_tool_result", 7, "messages[7].content[3].tool_use_id")
    assert _refused(lambda: tb.validate(messages, origin=[0, 1, 7], paths=lambda i, f: None)) == (
        "orphan_tool_result", 7, "messages[7].tool_call_id"
    )
