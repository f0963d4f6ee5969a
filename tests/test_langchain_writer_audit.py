"""The LangChain writer writes everything a typed conversation holds, or refuses.

Regressions from an audit of ``from_messages``:

* kept fields (``metadata.langchain``) were written over the typed fields (a kept ``name``,
  ``status``, an ``extra`` attribute named like a field), and a kept ``additional_kwargs``
  value the reader takes into a typed home (a text refusal, an audio reply, citations, the
  developer marker) was written and read back as typed data the message did not have;
* an ``AIMessageChunk`` (a summed stream) given calls but no ``tool_call_chunks`` was
  written as one whose chunks LangChain makes itself: read back with chunks it did not
  keep, or refused by this adapter's own reader as an un-summed stream piece;
* an id-less tool result named ``""`` was refused, though ``FunctionMessage(name="")``
  holds it;
* an inline image with a detail went out as a v1 block whose ``extras.detail``
  langchain-core's ``convert_to_openai_messages`` drops; an image by a ``data:`` URL with
  a detail was refused.

A second audit: what the writer writes from kept metadata (block templates, layouts) went
over typed data or invented it:

* an assistant ``ChatMessage``'s kept calls were not checked: an edited legacy
  ``function_call`` call reverted to the original, a kept ``function_call`` without a
  call invented one, kept raw ``tool_calls`` made output the reader refuses;
* the human message after Anthropic tool results, edited to an empty content list,
  vanished;
* a call block's template went over the call's name, id and arguments; a custom call was
  written into a ``tool_use`` block; a call marked ``in_content`` without a block was
  written nowhere; an edited streamed ``tool_use`` reverted to its ``partial_json``; a
  block-only call given an id or arguments after reading lost them;
* an ``extra`` attribute named like a constructor parameter (``content_blocks``) replaced
  the content;
* a part's kept block of another type or layout read back as another part, or with
  fields the part does not have; a kept citation annotation in an AI text block read back
  as a citation;
* a tool result's kept block of another type read back as user text;
* kept audio-reply and citation layouts filled typed fields that are None;
* found on the way: kept block positions that reordered tool results or content-only
  calls; a call added before content-only calls (output the reader refuses); an empty text
  before a refusal dropped; an untyped Bedrock block kept without its bytes, and a kept
  ``function_call`` that is no dict, written as output the reader refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import (
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    convert_to_openai_messages,
    messages_to_dict,
)
from langchain_core.messages import HumanMessage as LangChainHuman
from langchain_core.messages import ToolMessage as LangChainTool

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import langchain

ASK = HumanMessage(content="q")
PNG = "iVBORw0KGgo="


def _refused(messages: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert caught.value.source == "langchain"
    return caught.value.code, caught.value.index, caught.value.path


def _kept(metadata: dict[str, Any]) -> dict[str, Any]:
    return {"langchain": metadata}


def _answered(result_metadata: dict[str, Any], *, is_error: bool = False) -> list[Any]:
    return [
        ASK,
        AIMessage(tool_calls=[ToolCall(name="f", id="c")]),
        ToolMessage(content="r", tool_call_id="c", is_error=is_error,
                    metadata=_kept(result_metadata)),
    ]


# --- kept fields never go over typed ones ---------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "index", "path"),
    [
        ([HumanMessage(content="hi", name="alice", metadata=_kept({"name": "bob"}))], 0,
         "messages[0].metadata.langchain.name"),
        ([HumanMessage(content="hi", id="h1", metadata=_kept({"id": "h2"}))], 0,
         "messages[0].metadata.langchain.id"),
        ([HumanMessage(content="hi", metadata=_kept({"content": "bye"}))], 0,
         "messages[0].metadata.langchain.content"),
        ([HumanMessage(content="hi", name="alice", metadata=_kept({"extra": {"name": "bob"}}))],
         0, "messages[0].metadata.langchain.extra.name"),
        # a declared field kept as an extra attribute would read back as that kept field
        ([HumanMessage(content="hi", metadata=_kept({"extra": {"response_metadata": {"a": 1}}}))],
         0, "messages[0].metadata.langchain.extra.response_metadata"),
        # a field LangChain's class does not declare would read back under extra
        ([HumanMessage(content="hi", metadata=_kept({"run": "r1"}))], 0,
         "messages[0].metadata.langchain.run"),
        ([ASK, AIMessage(content="a", metadata=_kept(
            {"tool_calls": [{"name": "f", "args": {}, "id": "c9", "type": "tool_call"}]}))],
         1, "messages[1].metadata.langchain.tool_calls"),
        ([ASK, AIMessage(content="a", metadata=_kept({"invalid_tool_calls": []}))], 1,
         "messages[1].metadata.langchain.invalid_tool_calls"),
        (_answered({"status": "error"}), 2, "messages[2].metadata.langchain.status"),
        (_answered({"status": "success"}, is_error=True), 2,
         "messages[2].metadata.langchain.status"),
        (_answered({"tool_call_id": "c9"}), 2, "messages[2].metadata.langchain.tool_call_id"),
        (_answered({"extra": {"status": "error"}}), 2,
         "messages[2].metadata.langchain.extra.status"),
    ],
    ids=[
        "human-name", "human-id", "human-content", "extra-name", "extra-declared-field",
        "undeclared-field", "ai-tool_calls", "ai-invalid_tool_calls", "status-error",
        "status-success", "tool_call_id", "extra-status",
    ],
)
def test_a_kept_field_the_way_back_writes_from_the_typed_message_is_refused(
    messages: list[Any], index: int, path: str
) -> None:
    assert _refused(messages) == ("not_representable", index, path)


def test_an_extra_attribute_also_kept_as_a_field_is_refused() -> None:
    message = HumanMessage(content="hi", metadata=_kept(
        {"response_metadata": {"a": 1}, "extra": {"response_metadata": {"a": 2}}}))
    assert _refused([message]) == (
        "not_representable", 0, "messages[0].metadata.langchain.extra.response_metadata")


# --- kept additional_kwargs the reader takes into typed homes --------------------------------


@pytest.mark.parametrize(
    ("messages", "index", "path"),
    [
        ([ASK, AIMessage(content="x", metadata=_kept({"additional_kwargs": {"refusal": "no"}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.refusal"),
        ([ASK, AIMessage(content="x", metadata=_kept(
            {"additional_kwargs": {"audio": {"id": "a1", "transcript": "hi"}}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.audio"),
        ([ASK, AIMessage(content="x", metadata=_kept(
            {"additional_kwargs": {"annotations": [{"type": "citation", "url": "u"}]}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.annotations"),
        ([SystemMessage(content="x", metadata=_kept(
            {"additional_kwargs": {"__openai_role__": "developer"}}))],
         0, "messages[0].metadata.langchain.additional_kwargs.__openai_role__"),
        # the same on the other classes the reader reads these homes on
        ([ASK, AIMessage(content="x", metadata=_kept(
            {"class": "AIMessageChunk", "additional_kwargs": {"refusal": "no"}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.refusal"),
        ([ASK, AIMessage(content="x", metadata=_kept(
            {"class": "chat", "role": "assistant", "additional_kwargs": {"refusal": "no"}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.refusal"),
        ([SystemMessage(content="x", metadata=_kept(
            {"class": "SystemMessageChunk",
             "additional_kwargs": {"__openai_role__": "developer"}}))],
         0, "messages[0].metadata.langchain.additional_kwargs.__openai_role__"),
        # with the typed home set too, the kept value would not come back as kept
        ([ASK, AIMessage(content=[RefusalPart(text="no")], metadata=_kept(
            {"additional_kwargs": {"refusal": "no"}}))],
         1, "messages[1].metadata.langchain.additional_kwargs.refusal"),
        ([SystemMessage(content="x", role="developer", metadata=_kept(
            {"additional_kwargs": {"__openai_role__": "developer"}}))],
         0, "messages[0].metadata.langchain.additional_kwargs.__openai_role__"),
    ],
    ids=[
        "refusal", "audio", "annotations", "developer", "chunk-refusal", "chat-refusal",
        "system-chunk-developer", "refusal-twice", "developer-twice",
    ],
)
def test_a_kept_additional_kwargs_value_read_as_typed_data_is_refused(
    messages: list[Any], index: int, path: str
) -> None:
    assert _refused(messages) == ("not_representable", index, path)


def test_a_typed_developer_role_over_a_kept_role_marker_is_refused() -> None:
    # The kept marker ("system") was overwritten by "developer": the message read back
    # without it in its metadata.
    message = SystemMessage(content="x", role="developer",
                            metadata=_kept({"additional_kwargs": {"__openai_role__": "system"}}))
    assert _refused([message]) == (
        "not_representable", 0, "messages[0].additional_kwargs.__openai_role__")


def test_kept_additional_kwargs_the_reader_leaves_there_are_still_written() -> None:
    # Controls (these passed before too): values the reader does not take into a typed
    # home go back verbatim and read back as they were.
    messages = [
        SystemMessage(content="s", metadata=_kept(
            {"additional_kwargs": {"__openai_role__": "system"}})),
        SystemMessage(content="s", role="developer", metadata=_kept(
            {"class": "chat", "role": "developer",
             "additional_kwargs": {"__openai_role__": "developer"}})),
        ASK,
        AIMessage(content="x", metadata=_kept({"additional_kwargs": {
            "refusal": None,
            "audio": {"transcript": "no id"},
            "annotations": [{"type": "citation", "url": "u"}, {"type": "file"}],
        }})),
        AIMessage(content=[RefusalPart(text="no")],
                  audio=AudioReference(id="a1"),
                  citations=[Citation(url="u")]),
    ]
    assert langchain.to_messages(langchain.from_messages(messages)) == messages


def _anthropic_history(*rest: str) -> list[Any]:
    return [
        LangChainHuman("q"),
        LangChainAI([{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
                    tool_calls=[{"name": "f", "args": {}, "id": "t1"}]),
        LangChainHuman([{"type": "tool_result", "tool_use_id": "t1", "content": "r"}, *rest],
                       id="h2"),
    ]


def test_kept_fields_of_a_human_message_holding_only_tool_results_are_checked_there() -> None:
    read = langchain.to_messages(_anthropic_history())
    kept = read[2].metadata["langchain"]
    assert kept["from_human"] == {"id": "h2"}
    # a kept content was written over by the results' blocks: dropped
    edited = read[2].model_copy(update={"metadata": _kept(
        {**kept, "from_human": {"id": "h2", "content": "other"}})})
    assert _refused([*read[:2], edited]) == (
        "not_representable", 2, "messages[2].metadata.langchain.from_human.content")


def test_kept_fields_of_the_human_message_after_its_tool_results_are_checked_there() -> None:
    read = langchain.to_messages(_anthropic_history("more"))
    assert read[3].metadata == _kept({"with_tool_results": True})
    edited = read[3].model_copy(update={"metadata": _kept(
        {"with_tool_results": True, "name": "bob"})})
    assert _refused([*read[:3], edited]) == (
        "not_representable", 3, "messages[3].metadata.langchain.name")


# --- an AIMessageChunk given calls it keeps no chunks for -----------------------------------


@pytest.mark.parametrize(
    "call",
    [
        ToolCall(name="f", id="c1", invalid_args="{oops"),  # read back: streaming_chunk
        ToolCall(name="f", id="c1", invalid_args="oops"),
        ToolCall(name="f", args={"city": "Rome"}, id="c1"),  # read back with chunks kept
    ],
    ids=["invalid-partial-json", "invalid-text", "valid"],
)
def test_a_summed_chunk_given_calls_without_chunks_is_refused(call: ToolCall) -> None:
    summed = AIMessageChunk(content="Let me check") + AIMessageChunk(content=" that.")
    read = langchain.to_messages([LangChainHuman("q"), summed])
    assert read[1].metadata == {"langchain": {"class": "AIMessageChunk"}}
    edited = [read[0], read[1].model_copy(update={"tool_calls": [call]})]
    assert _refused(edited) == ("not_representable", 1, "messages[1].tool_calls")
    # without calls it is still written, as the chunk it was
    assert messages_to_dict(langchain.from_messages(read)) == messages_to_dict(
        [LangChainHuman("q"), summed])


# --- an id-less tool result named "" ---------------------------------------------------------


def test_an_id_less_tool_result_named_empty_is_a_function_message() -> None:
    chat = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "function_call": {"name": "", "arguments": "{}"}},
        {"role": "function", "name": "", "content": "r"},
    ]
    typed = convert(chat, source="openai_chat", target="langchain")
    assert isinstance(typed[2], FunctionMessage)
    assert (typed[2].name, typed[2].content) == ("", "r")
    back = langchain.to_messages(typed)
    assert back[2] == ToolMessage(content="r", name="")


# --- image detail ----------------------------------------------------------------------------


def test_an_inline_image_with_a_detail_is_an_image_url_block_that_keeps_it() -> None:
    image = ImagePart(data=PNG, mime_type="image/png", detail="low")
    typed = [HumanMessage(content=[TextPart(text="see"), image])]
    [written] = langchain.from_messages(typed)
    block = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}",
                                                "detail": "low"}}
    assert written.content == [{"type": "text", "text": "see"}, block]
    [sent] = convert_to_openai_messages([written], text_format="block")
    assert sent["content"][1] == block  # the v1 block's extras.detail is dropped there
    assert langchain.to_messages([written]) == typed
    # from Chat Completions, the detail reaches LangChain's own conversion too
    chat = [{"role": "user", "content": [block]}]
    [converted] = convert(chat, source="openai_chat", target="langchain")
    assert convert_to_openai_messages([converted]) == chat


def test_an_inline_image_whose_mime_type_a_data_url_cannot_spell_stays_a_v1_block() -> None:
    image = ImagePart(data=PNG, mime_type="image/png,x", detail="low")
    typed = [HumanMessage(content=[image])]
    [written] = langchain.from_messages(typed)
    assert written.content == [{"type": "image", "base64": PNG, "mime_type": "image/png,x",
                                "extras": {"detail": "low"}}]
    assert langchain.to_messages([written]) == typed


def test_a_v1_inline_image_block_with_a_detail_keeps_its_layout() -> None:
    block = {"type": "image", "base64": PNG, "mime_type": "image/png",
             "extras": {"detail": "high"}}
    trace = [LangChainHuman([block])]
    [typed] = langchain.to_messages(trace)
    assert typed.content == [ImagePart(
        data=PNG, mime_type="image/png", detail="high",
        metadata=_kept({"shape": "image", "block": {"type": "image", "extras": {}}}))]
    assert messages_to_dict(langchain.from_messages([typed])) == messages_to_dict(trace)


@pytest.mark.parametrize("url", [f"data:image/png;base64,{PNG}", "data:;base64,AA=="])
def test_an_image_by_data_url_with_a_detail_is_refused(url: str) -> None:
    # LangChain sends any block holding a base64 data: URL as inline data, and the reader
    # reads it so (as openai_chat does): a URL part of that kind would come back as data
    typed = [HumanMessage(content=[ImagePart(url=url, detail="low")])]
    assert _refused(typed) == ("not_representable", 0, "messages[0].content[0].url")


# --- second audit: kept metadata never goes over typed data, nor invents it ------------------

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"


def _golden(name: str) -> list[Any]:
    case = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return langchain.to_messages(case["trace"])


def _with(messages: list[Any], i: int, **update: Any) -> list[Any]:
    """``messages`` with message ``i`` edited and validated, as a user's edit is."""
    message = messages[i]
    edited = type(message).model_validate({**message.model_dump(), **update})
    return [*messages[:i], edited, *messages[i + 1 :]]


def _call(call: ToolCall, **update: Any) -> ToolCall:
    return ToolCall.model_validate({**call.model_dump(), **update})


# finding 1: an assistant ChatMessage's kept calls

_CHAT_FUNCTION_CALL = [
    LangChainHuman("q"),
    ChatMessage(role="assistant", content="", additional_kwargs={
        "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}),
    FunctionMessage(name="get_weather", content="18C"),
]


def test_an_edited_function_call_of_a_chat_message_is_written_into_its_copy() -> None:
    read = langchain.to_messages(_CHAT_FUNCTION_CALL)
    [call] = read[1].tool_calls
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    edited = _with(read, 1, tool_calls=[
        _call(call, name="get_time", args={"tz": "UTC"}).model_dump()])
    written = langchain.from_messages(edited)
    assert isinstance(written[1], ChatMessage)
    assert written[1].additional_kwargs == {
        "function_call": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}
    back = langchain.to_messages(written)
    assert back[1].tool_calls == edited[1].tool_calls
    assert transcript_hash(back) == transcript_hash(edited)
    # unedited, the copy goes back as it was read
    assert messages_to_dict(langchain.from_messages(read)) == messages_to_dict(
        _CHAT_FUNCTION_CALL)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"function_call": {"name": "delete_account", "arguments": "{}"}},
        {"tool_calls": [{"id": "c9", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}}]},
    ],
    ids=["function_call", "raw-tool_calls"],
)
def test_kept_calls_of_a_chat_message_without_typed_calls_are_refused(
    kwargs: dict[str, Any],
) -> None:
    message = AIMessage(content="x", metadata=_kept(
        {"class": "chat", "role": "assistant", "additional_kwargs": kwargs}))
    assert _refused([ASK, message]) == ("not_representable", 1, "messages[1].tool_calls")


# finding 2: the human message after Anthropic tool results


def test_the_human_message_after_tool_results_edited_to_no_content_is_refused() -> None:
    read = _golden("anthropic_history")
    assert len(read) == 7
    assert read[3] == HumanMessage(content=[TextPart(text="And Rome?")], id="human-2",
                                   metadata=_kept({"with_tool_results": True}))
    assert _refused(_with(read, 3, content=[])) == (
        "not_representable", 3, "messages[3].content")


# finding 3: a call block's template holds the call's name, id or arguments


def _block_call(block: dict[str, Any]) -> list[Any]:
    call = ToolCall(name="get_weather", args={"city": "Paris"}, id="toolu_1", metadata=_kept(
        {"in_content": True, "content_block": {"at": 0, "block": block}}))
    return [ASK, AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="ok", tool_call_id="toolu_1")]


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({"type": "tool_use", "name": "delete_account", "id": "toolu_1",
          "input": {"user": "all"}}, "id"),
        ({"type": "tool_use", "id": "other"}, "id"),
        ({"type": "tool_use", "name": "delete_account"}, "name"),
        ({"type": "tool_use", "input": {"user": "all"}}, "input"),
        ({"type": "tool_call", "args": {"user": "all"}}, "args"),
        ({"type": "tool_use", "input": {"city": "Rome"}, "partial_json": "{}"}, "input"),
        ({"type": "function_call", "call_id": "other"}, "call_id"),
    ],
    ids=["all", "id", "name", "input", "v1-args", "input-beside-partial_json", "call_id"],
)
def test_a_call_block_template_holding_the_call_is_refused(
    block: dict[str, Any], key: str
) -> None:
    assert _refused(_block_call(block)) == (
        "not_representable", 1,
        f"messages[1].tool_calls[0].metadata.langchain.content_block.block.{key}")


_STREAMED_TOOL_USE = [
    LangChainHuman("q"),
    LangChainAI(content=[{"type": "tool_use", "id": "t1", "name": "f", "input": {},
                          "partial_json": '{"a": 1}'}]),
    LangChainTool("r", tool_call_id="t1"),
]


@pytest.mark.parametrize("args", [{"a": 2}, {}])
def test_an_edited_streamed_tool_use_call_is_written_with_its_arguments(
    args: dict[str, Any],
) -> None:
    read = langchain.to_messages(_STREAMED_TOOL_USE)
    [call] = read[1].tool_calls
    assert call.args == {"a": 1}
    edited = _with(read, 1, tool_calls=[_call(call, args=args).model_dump()])
    written = langchain.from_messages(edited)
    assert written[1].content == [{"id": "t1", "name": "f", "type": "tool_use", "input": {},
                                   "partial_json": json.dumps(args)}]
    back = langchain.to_messages(written)
    assert back[1].tool_calls[0].args == args
    assert transcript_hash(back) == transcript_hash(edited)
    # unedited, the block goes back as it was read
    assert messages_to_dict(langchain.from_messages(read)) == messages_to_dict(
        _STREAMED_TOOL_USE)


def test_a_block_only_call_given_an_id_after_reading_keeps_it() -> None:
    source = [LangChainHuman("q"),
              LangChainAI(content=[{"type": "tool_use", "name": "get_time", "input": {}}])]
    read = langchain.to_messages(source, allow_pending=True)
    [call] = read[1].tool_calls
    assert call.id is None
    edited = [*_with(read, 1, tool_calls=[_call(call, id="t1").model_dump()]),
              ToolMessage(content="12:00", tool_call_id="t1")]
    back = langchain.to_messages(langchain.from_messages(edited))
    assert [c.id for c in back[1].tool_calls] == ["t1"]
    assert transcript_hash(back) == transcript_hash(edited)


def test_a_block_only_call_given_arguments_after_reading_keeps_them() -> None:
    source = [LangChainHuman("q"),
              LangChainAI(content=[{"type": "tool_use", "id": "t1", "name": "get_time"}]),
              LangChainTool("12:00", tool_call_id="t1")]
    read = langchain.to_messages(source)
    [call] = read[1].tool_calls
    assert call.args == {}
    edited = _with(read, 1, tool_calls=[_call(call, args={"tz": "UTC"}).model_dump()])
    back = langchain.to_messages(langchain.from_messages(edited))
    assert back[1].tool_calls[0].args == {"tz": "UTC"}
    assert transcript_hash(back) == transcript_hash(edited)


# finding 4: an extra attribute named like a constructor parameter


@pytest.mark.parametrize(
    ("messages", "index"),
    [
        ([HumanMessage(content="real user text", metadata=_kept(
            {"extra": {"content_blocks": [{"type": "text", "text": "invented"}]}}))], 0),
        ([SystemMessage(content="real prompt", metadata=_kept(
            {"extra": {"content_blocks": [{"type": "text", "text": "invented"}]}}))], 0),
        ([ASK, AIMessage(content="real answer", metadata=_kept(
            {"extra": {"content_blocks": [{"type": "text", "text": "invented"}]}}))], 1),
        (_answered({"extra": {"content_blocks": [{"type": "text", "text": "invented"}]}}), 2),
    ],
    ids=["human", "system", "ai", "tool"],
)
def test_an_extra_attribute_named_like_a_constructor_parameter_is_refused(
    messages: list[Any], index: int
) -> None:
    assert _refused(messages) == (
        "not_representable", index, f"messages[{index}].metadata.langchain.extra.content_blocks")


# finding 5: a part's kept block of another type or layout


@pytest.mark.parametrize(
    "part",
    [
        TextPart(text="hi", metadata=_kept(
            {"shape": "text", "block": {"type": "image", "url": "https://evil.example/x.png"}})),
        TextPart(text="hi", metadata=_kept(
            {"shape": "text", "block": {"type": "refusal", "refusal": "invented"}})),
        ImagePart(data=PNG, mime_type="image/png", metadata=_kept(
            {"shape": "anthropic_image_base64",
             "block": {"type": "x", "source": {"type": "base64"}}})),
        ImagePart(data=PNG, mime_type="image/png", metadata=_kept(
            {"shape": "anthropic_image_base64",
             "block": {"type": "image", "source": {"type": None}}})),
        ImagePart(data=PNG, mime_type="image/png", metadata=_kept(
            {"shape": "image", "block": {"type": "image", "url": "https://invented.example/i.png",
                                         "extras": {"detail": "high"}}})),
        ImagePart(data=PNG, mime_type="image/png", metadata=_kept(
            {"shape": "anthropic_image_base64",
             "block": {"type": "image", "source": {"type": "base64"},
                       "url": "https://invented.example/i.png"}})),
    ],
    ids=["text-as-image", "text-as-refusal", "image-type-x", "image-source-type-none",
         "v1-image-url-detail", "anthropic-image-v1-url"],
)
def test_a_part_whose_kept_block_reads_back_as_another_part_is_refused(part: Any) -> None:
    assert _refused([HumanMessage(content=[TextPart(text="look"), part])]) == (
        "not_representable", 0, "messages[0].content[1].metadata")


def test_a_kept_citation_annotation_in_an_ai_text_block_is_refused() -> None:
    part = TextPart(text="hi", metadata=_kept({"shape": "text", "block": {
        "type": "text", "annotations": [{"type": "citation", "url": "https://x"}]}}))
    assert _refused([ASK, AIMessage(content=[part])]) == (
        "not_representable", 1, "messages[1].content[0].metadata")
    # in a human message the reader leaves it in the block
    human = [HumanMessage(content=[part])]
    assert langchain.to_messages(langchain.from_messages(human)) == human


# finding 6: a call marked in_content without a block


@pytest.mark.parametrize(
    "messages",
    [
        [ASK, AIMessage(content="", tool_calls=[ToolCall(
            name="get_weather", args={"city": "Paris"}, id="c1",
            metadata=_kept({"in_content": True}))]),
         ToolMessage(content="18C", tool_call_id="c1")],
        [ASK, AIMessage(content="hmm", tool_calls=[ToolCall(
            name="get_weather", args={"city": "Paris"}, id="c1",
            metadata=_kept({"in_content": True}))])],
        [ASK, AIMessage(content="hmm", tool_calls=[ToolCall(
            name="get_weather", invalid_args="{bad", id="c1",
            metadata=_kept({"in_content": True}))])],
    ],
    ids=["answered", "pending", "invalid"],
)
def test_a_call_marked_in_content_without_its_block_is_refused(messages: list[Any]) -> None:
    assert _refused(messages) == ("not_representable", 1, "messages[1].tool_calls[0]")


# finding 7: a custom call kept with a tool_use block


@pytest.mark.parametrize("golden", ["anthropic_history", "anthropic_content_blocks"])
def test_a_custom_call_kept_with_a_tool_use_block_is_refused(golden: str) -> None:
    read = _golden(golden)
    call = read[1].tool_calls[0]
    assert call.metadata["langchain"]["content_block"]["block"] == {"type": "tool_use"}
    custom = _call(call, kind="custom", args={"input": "Paris"})
    edited = _with(read, 1, tool_calls=[custom.model_dump(),
                                        *[c.model_dump() for c in read[1].tool_calls[1:]]])
    assert _refused(edited) == ("not_representable", 1, "messages[1].tool_calls[0]")


def test_a_custom_call_kept_with_a_custom_tool_call_block_without_input_is_refused() -> None:
    # The block does not repeat the input, so the pair reads as a function call with
    # args {"__arg1": ...}; made custom, it would still read back as that function call.
    source = [
        LangChainHuman("q"),
        LangChainAI(content=[{"type": "custom_tool_call", "call_id": "c1", "name": "f"}],
                    tool_calls=[{"name": "f", "args": {"__arg1": "x"}, "id": "c1"}]),
        LangChainTool("r", tool_call_id="c1"),
    ]
    read = langchain.to_messages(source)
    [call] = read[1].tool_calls
    assert (call.kind, call.args) == ("function", {"__arg1": "x"})
    assert messages_to_dict(langchain.from_messages(read)) == messages_to_dict(source)
    custom = _call(call, kind="custom", args={"input": "x"})
    assert _refused(_with(read, 1, tool_calls=[custom.model_dump()])) == (
        "not_representable", 1, "messages[1].tool_calls[0]")


# finding 8: a tool result's kept block of another type


def test_a_tool_result_kept_as_a_block_of_another_type_is_refused() -> None:
    messages = [
        ASK,
        AIMessage(tool_calls=[ToolCall(name="f", id="c1", invalid_args="{oops")]),
        ToolMessage(content="the tool failed", tool_call_id="c1", metadata=_kept(
            {"from_human": {},
             "tool_result": {"at": 0, "block": {"type": "text", "text": "invented"}}})),
    ]
    assert _refused(messages) == ("not_representable", 2, "messages[2].metadata")


def test_a_tool_result_kept_without_content_whose_block_holds_one_is_refused() -> None:
    read = langchain.to_messages(_anthropic_history())
    link = read[2].metadata["langchain"]["tool_result"]
    edited = read[2].model_copy(update={"content": "", "metadata": _kept(
        {**read[2].metadata["langchain"],
         "tool_result": {**link, "without_content": True,
                         "block": {**link["block"], "content": "invented"}}})})
    assert _refused([*read[:2], edited]) == ("not_representable", 2, "messages[2].metadata")


# finding 9: kept audio and citation layouts fill typed fields that are None


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (AIMessage(content="", audio=AudioReference(
            id="audio_1", metadata=_kept({"transcript": "invented transcript"}))),
         "messages[1].audio.metadata"),
        (AIMessage(content="", audio=AudioReference(
            id="audio_1", transcript="t", metadata=_kept({"data": [{}]}))),
         "messages[1].audio.metadata"),
        (AIMessage(content="x", citations=[Citation(url="https://a", metadata=_kept(
            {"annotation": {"type": "citation", "title": "invented",
                            "cited_text": "invented too"}}))]),
         "messages[1].citations[0].metadata"),
        (AIMessage(content="x", citations=[Citation(title="t", metadata=_kept(
            {"annotation": {"type": "url_citation",
                            "url_citation": {"url": "https://invented"}}}))]),
         "messages[1].citations[0].metadata"),
    ],
    ids=["audio-transcript", "audio-data", "citation-title", "url_citation-url"],
)
def test_a_kept_layout_holding_a_typed_field_the_home_lacks_is_refused(
    message: AIMessage, path: str
) -> None:
    assert _refused([ASK, message]) == ("not_representable", 1, path)


def test_kept_layouts_with_none_or_other_values_at_typed_places_still_go_back() -> None:
    # Controls: what the reader keeps there (None; a value of another type, which it
    # leaves in the layout) is written back and reads back as it was.
    messages = [
        ASK,
        AIMessage(content="x",
                  audio=AudioReference(id="a1", metadata=_kept({"transcript": None})),
                  citations=[Citation(url="u", metadata=_kept(
                      {"annotation": {"type": "citation", "title": None, "start_index": "5"}}))]),
    ]
    assert langchain.to_messages(langchain.from_messages(messages)) == messages


# --- found on the way (same audit's fuzzing of kept metadata and edits) ----------------------


def test_tool_results_whose_kept_block_places_would_reorder_them_are_refused() -> None:
    source = [
        LangChainHuman("q"),
        LangChainAI([{"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                     {"type": "tool_use", "id": "t2", "name": "g", "input": {}}]),
        LangChainHuman([{"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
                        {"type": "tool_result", "tool_use_id": "t2", "content": "r2"}]),
    ]
    read = langchain.to_messages(source)
    assert [m.tool_call_id for m in read[2:]] == ["t1", "t2"]
    second = read[3].metadata["langchain"]
    assert second == _kept({"tool_result": {"at": 1, "block": {"type": "tool_result"}}})[
        "langchain"]
    edited = read[3].model_copy(update={"metadata": _kept(
        {"tool_result": {"at": 0, "block": {"type": "tool_result"}}})})
    assert _refused([*read[:3], edited]) == ("not_representable", 3, "messages[3].metadata")


def test_a_call_put_before_calls_only_content_blocks_name_is_refused() -> None:
    read = _golden("anthropic_history")
    [call] = read[1].tool_calls
    assert call.metadata["langchain"]["in_content"] is True
    added = ToolCall(name="get_time", args={}, id="c0")
    edited = [
        *_with(read, 1, tool_calls=[added.model_dump(), call.model_dump()])[:2],
        ToolMessage(content="12:00", tool_call_id="c0"),
        *read[2:],
    ]
    # written, tool_calls would hold the new call, and the reader would take the tool_use
    # block for a second copy of a call tool_calls does not have (conflicting_fields)
    assert _refused(edited) == ("not_representable", 1, "messages[1].tool_calls[1]")


def test_a_refusal_after_a_text_edited_to_empty_keeps_the_empty_text_part() -> None:
    read = langchain.to_messages(
        [LangChainHuman("q"), LangChainAI("Sorry", additional_kwargs={"refusal": "I cannot"})])
    text, refusal = read[1].content
    assert text == TextPart(text="Sorry")
    assert refusal.metadata == _kept({"content": "string"})
    edited = _with(read, 1, content=[TextPart(text="").model_dump(), refusal.model_dump()])
    written = langchain.from_messages(edited)
    assert written[1].content == [{"type": "text", "text": ""}]
    back = langchain.to_messages(written)
    assert back[1].content == [TextPart(text=""), RefusalPart(text="I cannot")]
    assert transcript_hash(back) == transcript_hash(edited)


def test_calls_only_content_blocks_name_whose_kept_places_would_reorder_them_are_refused() -> None:
    source = [
        LangChainHuman("q"),
        LangChainAI([{"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                     {"type": "tool_use", "id": "t2", "name": "g", "input": {}}]),
    ]
    read = langchain.to_messages(source, allow_pending=True)
    first, second = read[1].tool_calls
    assert second.metadata == _kept(
        {"in_content": True, "content_block": {"at": 1, "block": {"type": "tool_use"}}})
    moved = second.model_copy(update={"metadata": _kept(
        {"in_content": True, "content_block": {"at": 0, "block": {"type": "tool_use"}}})})
    edited = [read[0], read[1].model_copy(update={"tool_calls": [first, moved]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls[1].metadata")


def test_an_untyped_bedrock_block_kept_without_its_bytes_is_refused() -> None:
    read = langchain.to_messages(
        [LangChainHuman([{"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}])])
    [image] = read[0].content
    kept = image.metadata["langchain"]
    assert kept["bytes"] == [["image", "source", "bytes"]]
    # without the bytes, the block would go out with base64 text and no type: the reader
    # refuses an untyped block that holds no raw bytes
    edited = image.model_copy(update={"metadata": _kept({**kept, "bytes": []})})
    assert _refused([HumanMessage(content=[edited])]) == (
        "not_representable", 0, "messages[0].content[0].metadata")


def test_a_call_from_a_kept_function_call_that_is_no_dict_is_refused() -> None:
    read = langchain.to_messages(
        [LangChainHuman("q"),
         LangChainAI("", additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}})],
        allow_pending=True)
    assert read[1].tool_calls[0].metadata == _kept({"from": "function_call"})
    edited = read[1].model_copy(update={"metadata": _kept(
        {"additional_kwargs": {"function_call": [["x"]]}})})
    assert _refused([read[0], edited]) == (
        "not_representable", 1, "messages[1].metadata.langchain.additional_kwargs.function_call")
