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
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import (
    AIMessageChunk,
    FunctionMessage,
    convert_to_openai_messages,
    messages_to_dict,
)
from langchain_core.messages import HumanMessage as LangChainHuman

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
    assert back[2] == ToolMessage(content="r", name="", metadata=_kept({"class": "function"}))


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
def test_an_image_by_data_url_with_a_detail_is_a_v1_block(url: str) -> None:
    typed = [HumanMessage(content=[ImagePart(url=url, detail="low")])]
    [written] = langchain.from_messages(typed)
    assert written.content == [{"type": "image", "url": url, "extras": {"detail": "low"}}]
    back = langchain.to_messages([written])
    assert back == typed
    assert transcript_hash(back) == transcript_hash(typed)
