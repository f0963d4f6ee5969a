"""Shapes real LangChain apps store that the adapter reads: flat ``model_dump()`` dicts,
Anthropic histories as ``convert_to_messages`` builds them, empty argument text, and the raw
bytes of Bedrock Converse / Vertex AI blocks."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    messages_to_dict,
)
from test_langchain import rejected_at, roundtrip

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain, openai_chat
from tracebridge.registry import detect_format

LC = "langchain"


# --- the flat model_dump() form ------------------------------------------------------------

RUN = [
    SystemMessage("be brief", id="s1"),
    HumanMessage("weather?", id="h1"),
    AIMessage("", id="a1", tool_calls=[{"name": "w", "args": {"c": "P"}, "id": "c1"}]),
    ToolMessage("18C", tool_call_id="c1", id="t1", status="error"),
    AIMessage(
        "18C.", id="a2", usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    ),
]
DUMPS = [message.model_dump() for message in RUN]


@pytest.mark.parametrize("trace", [DUMPS, {"messages": DUMPS}], ids=["list", "state"])
def test_flat_dumps_are_detected_and_read_like_the_objects(trace: Any) -> None:
    assert langchain.detect(trace) is True
    assert langchain.to_messages(trace) == langchain.to_messages(RUN)


def test_auto_detection_takes_flat_dumps_for_langchain() -> None:
    assert detect_format(DUMPS) == "langchain"


def test_flat_dumps_go_back_to_the_same_flat_dumps() -> None:
    typed = langchain.to_messages(DUMPS)
    assert langchain.from_messages(typed, form="model_dump") == DUMPS
    assert langchain.from_messages(typed, form="dicts") == messages_to_dict(RUN)
    assert langchain.FORMS == ("messages", "dicts", "model_dump", "state")


def test_a_typed_tracebridge_dump_is_not_taken_for_a_flat_langchain_dump() -> None:
    typed = [m.model_dump(mode="json") for m in langchain.to_messages(RUN)]
    assert langchain.detect(typed) is False
    assert langchain.detect([{"type": "human", "content": "hi"}]) is False


@pytest.mark.parametrize(
    ("item", "code", "path"),
    [
        ({**DUMPS[1], "content": 3}, "malformed_event", "messages[1].content"),
        ({**DUMPS[1], "type": "robot"}, "unknown_role", "messages[1].type"),
        ({**DUMPS[1], "type": "remove"}, "unknown_role", "messages[1].type"),
        ({"content": "hi"}, "malformed_event", "messages[1]"),
    ],
    ids=["content", "unknown-type", "remove", "no-type"],
)
def test_broken_flat_dumps_are_rejected_at_their_index(
    item: dict[str, Any], code: str, path: str
) -> None:
    assert rejected_at([DUMPS[0], item]) == (code, 1, path)


def test_an_unknown_form_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="form must be one of"):
        langchain.from_messages([tb.HumanMessage(content="x")], form="json")  # type: ignore[arg-type]


# --- empty argument text -------------------------------------------------------------------

NOW = {"id": "c1", "type": "function", "function": {"name": "now", "arguments": ""}}


def test_empty_arguments_beside_parsed_calls_are_no_arguments() -> None:
    """ChatOpenAI parses "" with parse_tool_call: args {} and the raw text in additional_kwargs."""
    trace = [
        HumanMessage("time?"),
        AIMessage(
            "",
            tool_calls=[{"name": "now", "args": {}, "id": "c1"}],
            additional_kwargs={"tool_calls": [NOW]},
        ),
        ToolMessage("12:00", tool_call_id="c1"),
    ]
    assert langchain.to_messages(trace)[1].tool_calls == [tb.ToolCall(name="now", id="c1")]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_empty_arguments_langchain_filed_as_invalid_are_still_no_arguments() -> None:
    """A message built from the raw calls alone: default_tool_parser files "" as invalid."""
    trace = [
        HumanMessage("time?"),
        AIMessage("", additional_kwargs={"tool_calls": [NOW]}),
        ToolMessage("12:00", tool_call_id="c1"),
    ]
    assert trace[1].invalid_tool_calls[0]["args"] == ""
    assert langchain.to_messages(trace)[1].tool_calls == [
        tb.ToolCall(
            name="now",
            id="c1",
            metadata={
                LC: {"invalid_tool_call": {"type": "invalid_tool_call", "error": None, "args": ""}}
            },
        )
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_call_with_empty_arguments_must_be_answered() -> None:
    trace = [HumanMessage("time?"), AIMessage("", additional_kwargs={"tool_calls": [NOW]})]
    # LangChain filed it in invalid_tool_calls (tool_calls is empty): the error is there
    assert rejected_at(trace) == ("unanswered_tool_call", 1, "messages[1].invalid_tool_calls[0]")


@pytest.mark.parametrize(
    "ai",
    [
        AIMessage("", additional_kwargs={"function_call": {"name": "now", "arguments": ""}}),
        AIMessage([{"type": "function_call", "call_id": "c1", "name": "now", "arguments": ""}]),
        AIMessageChunk("", tool_call_chunks=[{"name": "now", "args": "", "id": "c1", "index": 0}]),
    ],
    ids=["legacy-function_call", "responses-block", "aggregated-chunk"],
)
def test_empty_arguments_read_as_no_arguments_wherever_langchain_keeps_raw_text(
    ai: BaseMessage,
) -> None:
    trace = [HumanMessage("time?"), ai]
    [_, typed] = langchain.to_messages(trace, allow_pending=True)
    [call] = typed.tool_calls
    assert (call.name, call.args, call.invalid_args) == ("now", {}, None)
    assert roundtrip(trace, allow_pending=True) == messages_to_dict(trace)


# --- Anthropic histories as convert_to_messages builds them --------------------------------

PNG = "iVBORw0KGgo="
USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
USE_2 = {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"tz": "CET"}}


def anthropic(*dicts: dict[str, Any]) -> list[BaseMessage]:
    return convert_to_messages([{"role": "user", "content": "Weather and time in Paris?"}, *dicts])


def result(call_id: str = "toolu_1", **fields: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "18C", **fields}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


WEATHER = tb.ToolCall(
    name="get_weather",
    args={"city": "Paris"},
    id="toolu_1",
    metadata={LC: {"in_content": True, "content_block": {"at": 0, "block": {"type": "tool_use"}}}},
)


def tool_result(
    content: Any = "18C", at: int = 0, opens: Any = "rest", **block: Any
) -> tb.ToolMessage:
    kept: dict[str, Any] = {"tool_result": {"at": at, "block": {"type": "tool_result", **block}}}
    if opens is not None:
        kept["from_human"] = opens
    return tb.ToolMessage(
        content=content,
        tool_call_id="toolu_1",
        is_error=block.get("is_error") is True,
        metadata={LC: kept},
    )


def test_an_anthropic_tool_round_reads_as_a_call_and_its_result() -> None:
    trace = anthropic(assistant(USE), user(result()), {"role": "assistant", "content": "18C."})
    assert all(not getattr(m, "tool_calls", None) for m in trace)  # what LangChain builds
    assert langchain.to_messages(trace) == [
        tb.HumanMessage(content="Weather and time in Paris?"),
        tb.AIMessage(tool_calls=[WEATHER]),
        tool_result(opens={}),
        tb.AIMessage(content="18C."),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_the_typed_history_is_what_convert_to_openai_messages_makes_of_it() -> None:
    trace = anthropic(assistant({"type": "text", "text": "Checking."}, USE), user(result()))
    typed = langchain.to_messages(trace)
    ours = [(m.type, m.text, [c.id for c in getattr(m, "tool_calls", [])]) for m in typed]
    theirs = convert_to_openai_messages(trace)
    assert ours == [
        ("human", "Weather and time in Paris?", []),
        ("ai", "Checking.", ["toolu_1"]),
        ("tool", "18C", []),
    ]
    assert [m["role"] for m in theirs] == ["user", "assistant", "tool"]
    assert theirs[1]["tool_calls"][0]["id"] == "toolu_1"
    assert theirs[2]["tool_call_id"] == "toolu_1"


ANTHROPIC_CASES: dict[str, tuple[list[dict[str, Any]], list[tb.ToolMessage | tb.HumanMessage]]] = {
    "error-result": (
        [assistant(USE), user(result(is_error=True))],
        [tool_result(opens={}, is_error=True)],
    ),
    "explicit-not-error": (
        [assistant(USE), user(result(is_error=False))],
        [tool_result(opens={}, is_error=False)],
    ),
    "result-blocks": (
        [assistant(USE), user(result(content=[{"type": "text", "text": "18C"}]))],
        [tool_result(content=[tb.TextPart(text="18C")], opens={})],
    ),
    "result-image": (
        [
            assistant(USE),
            user(
                result(
                    content=[
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        }
                    ]
                )
            ),
        ],
        [
            tool_result(
                content=[
                    tb.ImagePart(
                        data=PNG,
                        mime_type="image/png",
                        metadata={
                            LC: {
                                "shape": "anthropic_image_base64",
                                "block": {"type": "image", "source": {"type": "base64"}},
                            }
                        },
                    )
                ],
                opens={},
            )
        ],
    ),
    "result-without-content": (
        [assistant(USE), user({"type": "tool_result", "tool_use_id": "toolu_1"})],
        [
            tb.ToolMessage(
                content="",
                tool_call_id="toolu_1",
                metadata={
                    LC: {
                        "tool_result": {
                            "at": 0,
                            "block": {"type": "tool_result"},
                            "without_content": True,
                        },
                        "from_human": {},
                    }
                },
            )
        ],
    ),
    "result-then-text": (
        [assistant(USE), user(result(), {"type": "text", "text": "And now stop."})],
        [
            tool_result(),
            tb.HumanMessage(
                content=[tb.TextPart(text="And now stop.")],
                metadata={LC: {"with_tool_results": True}},
            ),
        ],
    ),
    "text-then-result": (
        [assistant(USE), user({"type": "text", "text": "Here:"}, result())],
        [
            tool_result(at=1),
            tb.HumanMessage(
                content=[tb.TextPart(text="Here:")], metadata={LC: {"with_tool_results": True}}
            ),
        ],
    ),
    "cache-control": (
        [assistant(USE), user(result(cache_control={"type": "ephemeral"}))],
        [tool_result(opens={}, cache_control={"type": "ephemeral"})],
    ),
}


@pytest.mark.parametrize(("dicts", "results"), ANTHROPIC_CASES.values(), ids=list(ANTHROPIC_CASES))
def test_anthropic_tool_results_read_as_tool_messages(
    dicts: list[dict[str, Any]], results: list[Any]
) -> None:
    trace = anthropic(*dicts)
    assert langchain.to_messages(trace)[1:] == [tb.AIMessage(tool_calls=[WEATHER]), *results]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_two_calls_and_their_results_in_another_order() -> None:
    trace = anthropic(
        assistant({"type": "text", "text": "Both."}, USE, USE_2),
        user(result("toolu_2", content="09:00"), result()),
        {"role": "assistant", "content": "18C at 09:00."},
    )
    typed = langchain.to_messages(trace)
    assert [c.id for c in typed[1].tool_calls] == ["toolu_1", "toolu_2"]
    assert [(m.tool_call_id, m.content) for m in typed[2:4]] == [
        ("toolu_2", "09:00"),
        ("toolu_1", "18C"),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_thinking_and_a_system_prompt_around_an_anthropic_round() -> None:
    thinking = {"type": "thinking", "thinking": "Use the tool.", "signature": "c2ln"}
    trace = convert_to_messages(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            assistant(thinking, USE),
            user(result()),
        ]
    )
    typed = langchain.to_messages(trace)
    assert [m.type for m in typed] == ["system", "human", "ai", "tool"]
    assert typed[2].content[0].text == "Use the tool."
    assert typed[2].tool_calls[0].metadata[LC]["content_block"]["at"] == 1
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_tool_use_block_without_input_beside_its_call_agrees() -> None:
    """langchain-core's own filter_messages test builds tool_use blocks without input."""
    trace = [
        HumanMessage("go"),
        AIMessage(
            [{"name": "foo", "type": "tool_use", "id": "1"}],
            tool_calls=[{"name": "foo", "id": "1", "args": {}}],
        ),
        ToolMessage("baz", tool_call_id="1"),
    ]
    [_, ai, _] = langchain.to_messages(trace)
    assert ai.tool_calls[0].metadata == {
        LC: {"content_block": {"at": 0, "block": {"type": "tool_use"}, "without_args": True}}
    }
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_streamed_tool_use_alone_takes_its_arguments_from_partial_json() -> None:
    block = {**USE, "input": {}, "partial_json": '{"city": "Paris"}', "index": 1}
    trace = anthropic(assistant(block), user(result()))
    assert langchain.to_messages(trace)[1].tool_calls[0].args == {"city": "Paris"}
    assert roundtrip(trace) == messages_to_dict(trace)


def test_responses_function_call_blocks_alone_are_the_calls() -> None:
    block = {
        "type": "function_call",
        "call_id": "c1",
        "name": "add",
        "arguments": '{"a": 1}',
        "id": "fc_1",
    }
    trace = [HumanMessage("1+?"), AIMessage([block]), ToolMessage("2", tool_call_id="c1")]
    assert langchain.to_messages(trace)[1].tool_calls == [
        tb.ToolCall(
            name="add",
            args={"a": 1},
            id="c1",
            metadata={
                LC: {
                    "in_content": True,
                    "content_block": {
                        "at": 0,
                        "block": {"type": "function_call", "arguments": '{"a": 1}', "id": "fc_1"},
                    },
                }
            },
        )
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


@pytest.mark.parametrize(
    ("dicts", "expected"),
    [
        (
            [assistant(USE), user(result("toolu_9"))],
            ("orphan_tool_result", 2, "messages[2].content[0].tool_use_id"),
        ),
        (
            [assistant(USE), {"role": "assistant", "content": "?"}],
            ("unanswered_tool_call", 1, "messages[1].content[0]"),
        ),
        (
            [assistant(USE), user({"type": "tool_result", "content": "18C"})],
            ("malformed_event", 2, "messages[2].content[0].tool_use_id"),
        ),
        (
            [assistant(USE), user(result(content=7))],
            ("malformed_event", 2, "messages[2].content[0].content"),
        ),
        (
            [assistant({**USE, "name": None}), user(result())],
            ("malformed_event", 1, "messages[1].content[0].name"),
        ),
        (
            [assistant(USE, USE), user(result())],
            ("duplicate_tool_call_id", 1, "messages[1].content[1].id"),
        ),
    ],
    ids=[
        "orphan-result",
        "unanswered",
        "no-tool_use_id",
        "bad-content",
        "no-name",
        "same-call-twice",
    ],
)
def test_broken_anthropic_histories_are_rejected(
    dicts: list[dict[str, Any]], expected: tuple[str, int, str]
) -> None:
    assert rejected_at(anthropic(*dicts)) == expected


def test_a_tool_use_block_that_names_no_listed_call_still_conflicts() -> None:
    """Only when tool_calls is empty are the blocks the calls; beside a list they must agree."""
    trace = [
        HumanMessage("go"),
        AIMessage(
            [USE_2],
            tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_1"}],
        ),
        ToolMessage("18C", tool_call_id="toolu_1"),
    ]
    assert rejected_at(trace) == ("conflicting_fields", 1, "messages[1].content[0].id")


def test_typed_results_without_langchain_metadata_stay_tool_messages() -> None:
    typed = langchain.to_messages(anthropic(assistant(USE), user(result())))
    plain = [m.model_copy(update={"metadata": {}}) for m in typed]
    plain[1] = plain[1].model_copy(
        update={"tool_calls": [c.model_copy(update={"metadata": {}}) for c in typed[1].tool_calls]}
    )
    written = langchain.from_messages(plain)
    assert [type(m).__name__ for m in written] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert written[1].tool_calls[0]["id"] == "toolu_1"


def test_a_result_marked_for_a_human_message_must_keep_its_place() -> None:
    typed = langchain.to_messages(
        anthropic(assistant(USE), user(result(), {"type": "text", "text": "more"}))
    )
    without_rest = typed[:3]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(without_rest)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        2,
        "messages[2].metadata",
    )


# --- raw bytes in Bedrock Converse and Vertex AI blocks ------------------------------------

JPEG = bytes.fromhex("ffd8ffe000104a464946")
PDF = b"%PDF-1.4 tiny"
B64 = base64.b64encode(JPEG).decode()


@pytest.mark.parametrize(
    ("block", "part"),
    [
        (
            {"type": "image", "image": {"format": "jpeg", "source": {"bytes": JPEG}}},
            tb.ImagePart(
                data=B64,
                mime_type="image/jpeg",
                metadata={
                    LC: {
                        "shape": "bedrock_image",
                        "block": {"type": "image", "image": {"source": {}}},
                        "bytes": [["image", "source", "bytes"]],
                    }
                },
            ),
        ),
        (
            {"image": {"format": "jpeg", "source": {"bytes": JPEG}}},
            tb.ImagePart(
                data=B64,
                mime_type="image/jpeg",
                metadata={
                    LC: {
                        "shape": "bedrock_image_untyped",
                        "block": {"image": {"source": {}}},
                        "bytes": [["image", "source", "bytes"]],
                    }
                },
            ),
        ),
        (
            {"document": {"format": "pdf", "name": "report", "source": {"bytes": PDF}}},
            tb.FilePart(
                data=base64.b64encode(PDF).decode(),
                mime_type="application/pdf",
                filename="report",
                metadata={
                    LC: {
                        "shape": "bedrock_document_untyped",
                        "block": {"document": {"source": {}}},
                        "bytes": [["document", "source", "bytes"]],
                    }
                },
            ),
        ),
        (
            {"document": {"format": "docx", "name": "memo", "source": {"bytes": PDF}}},
            tb.FilePart(
                data=base64.b64encode(PDF).decode(),
                filename="memo",
                metadata={
                    LC: {
                        "shape": "bedrock_document_untyped",
                        "block": {"document": {"format": "docx", "source": {}}},
                        "bytes": [["document", "source", "bytes"]],
                    }
                },
            ),
        ),
        (
            {"type": "media", "mime_type": "image/jpeg", "data": JPEG},
            tb.ImagePart(
                data=B64,
                mime_type="image/jpeg",
                metadata={
                    LC: {
                        "shape": "vertex_media_image",
                        "block": {"type": "media"},
                        "bytes": [["data"]],
                    }
                },
            ),
        ),
        (
            {"type": "media", "mime_type": "audio/wav", "data": JPEG},
            tb.AudioPart(
                data=B64,
                mime_type="audio/wav",
                metadata={
                    LC: {
                        "shape": "vertex_media_audio",
                        "block": {"type": "media"},
                        "bytes": [["data"]],
                    }
                },
            ),
        ),
        (
            {"type": "media", "mime_type": "application/pdf", "file_uri": "gs://b/a.pdf"},
            tb.FilePart(
                url="gs://b/a.pdf",
                mime_type="application/pdf",
                metadata={LC: {"shape": "vertex_media_file", "block": {"type": "media"}}},
            ),
        ),
        (
            {"video": {"format": "mp4", "source": {"bytes": JPEG}}},
            tb.OpaquePart(
                kind="video",
                value={"video": {"format": "mp4", "source": {"bytes": B64}}},
                metadata={LC: {"bytes": [["video", "source", "bytes"]]}},
            ),
        ),
    ],
    ids=[
        "bedrock-image",
        "bedrock-image-untyped",
        "bedrock-pdf",
        "bedrock-docx",
        "vertex-image",
        "vertex-audio",
        "vertex-file-uri",
        "bedrock-video",
    ],
)
def test_raw_bytes_read_as_base64_and_come_back_as_bytes(block: dict[str, Any], part: Any) -> None:
    trace = [HumanMessage([{"type": "text", "text": "Look:"}, block])]
    [typed] = langchain.to_messages(trace)
    assert typed.content[1] == part
    [back] = langchain.from_messages([typed])
    assert back.content[1] == block
    assert roundtrip(trace) == messages_to_dict(trace)


def test_base64_that_no_longer_decodes_cannot_go_back_to_bytes() -> None:
    block = {"type": "image", "image": {"format": "jpeg", "source": {"bytes": JPEG}}}
    [typed] = langchain.to_messages([HumanMessage([block])])
    [part] = typed.content
    edited = typed.model_copy(update={"content": [part.model_copy(update={"data": "not base64!"})]})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([edited])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        0,
        "messages[0].content[0]",
    )


def test_bytes_anywhere_else_are_still_unserializable() -> None:
    trace = [
        HumanMessage([{"type": "media", "mime_type": "image/png", "data": "x", "raw": b"\x00"}])
    ]
    assert rejected_at(trace) == ("unserializable_value", 0, "messages[0].content[0].raw")


# --- an image_url block holding its image inline -------------------------------------------

PNG = "iVBORw0KGgo="


@pytest.mark.parametrize("detail", [None, "low"])
def test_an_inline_image_url_reads_as_data_as_chat_completions_reads_it(
    detail: str | None,
) -> None:
    inner = {"url": f"data:image/png;base64,{PNG}"} | ({"detail": detail} if detail else {})
    block = {"type": "image_url", "image_url": inner}
    trace = [HumanMessage(content=[{"type": "text", "text": "see"}, block])]
    messages = langchain.to_messages(trace)
    image = messages[0].content[1]
    assert (image.url, image.data, image.mime_type) == (None, PNG, "image/png")
    assert image.detail == detail
    # the same block as Chat Completions content is the same typed conversation
    openai = openai_chat.to_messages(convert_to_openai_messages(trace))
    assert tb.transcript_hash(openai) == tb.transcript_hash(messages)
    assert roundtrip(trace) == messages_to_dict(trace)
    # read from Chat Completions, no LangChain layout is kept: without a detail the v1
    # standard block is written; with one, this image_url block (which carries the detail
    # on to OpenAI: convert_to_openai_messages drops a v1 block's extras.detail)
    v1 = {"type": "image", "base64": PNG, "mime_type": "image/png"}
    assert langchain.from_messages(openai)[0].content[1] == (block if detail else v1)


def test_an_image_url_by_address_stays_a_url() -> None:
    block = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    image = langchain.to_messages([HumanMessage(content=[block])])[0].content[0]
    assert (image.url, image.data, image.mime_type) == ("https://example.com/a.png", None, None)


def test_an_inline_image_url_needs_a_mime_type_to_be_written_back() -> None:
    block = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    messages = langchain.to_messages([HumanMessage(content=[block])])
    part = messages[0].content[0].model_copy(update={"mime_type": None})
    broken = [messages[0].model_copy(update={"content": [part]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(broken)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[0].mime_type")


def test_a_v1_image_by_data_url_with_a_detail_is_read_and_written_back() -> None:
    # LangChain takes it; the reader asked the default way back (OpenAI's image_url block,
    # which would read a data URL back as inline data) and let its refusal out of to_messages;
    # the data URL reads as inline data with its mime type, as an image_url block's does
    block = {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo=",
             "extras": {"detail": "low"}}
    trace = [HumanMessage(content=[{"type": "text", "text": "what is this?"}, block])]
    part = langchain.to_messages(trace)[0].content[1]
    assert isinstance(part, tb.ImagePart)
    assert (part.url, part.detail, part.data, part.mime_type) == (
        None, "low", "iVBORw0KGgo=", "image/png"
    )
    assert langchain.from_messages(langchain.to_messages(trace)) == trace
