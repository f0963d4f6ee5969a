"""The langchain adapter: a kept block that the way back would write for the part anyway is
refused (it would read back without its metadata), and rule errors point at a call's place
in LangChain's own list and at a legacy function result itself."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain

LC = "langchain"
URL = "https://example.com/a.png"


def _refused(call: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call()
    return caught.value.code, caught.value.index, caught.value.path


def _with_part(message: tb.Message, j: int, part: Any) -> tb.Message:
    content = list(message.content)
    content[j] = part
    return message.model_copy(update={"content": content})


# --- a kept block written as the way back writes the part without metadata ----------------


def test_an_image_url_block_given_a_detail_after_reading_is_refused_at_its_metadata() -> None:
    trace = [HumanMessage([
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": URL}},
    ])]
    typed = langchain.to_messages(trace)
    image = typed[0].content[1]
    kept = {"shape": "image_url", "block": {"type": "image_url", "image_url": {}}}
    assert image == tb.ImagePart(url=URL, metadata={LC: kept})
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)
    edited = [_with_part(typed[0], 1, image.model_copy(update={"detail": "high"}))]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[1].metadata.langchain"
    )
    assert caught.value.detail == (
        "the block kept for this part (metadata.langchain, shape 'image_url') makes the written "
        "block {'type': 'image_url', 'image_url': {'url': 'https://example.com/a.png', "
        "'detail': 'high'}}, the block the way back writes for this part without metadata, "
        "which reads back without metadata.langchain; take metadata.langchain off the part "
        "(the same block is written)"
    )
    plain = [_with_part(typed[0], 1, tb.ImagePart(url=URL, detail="high"))]
    [written] = langchain.from_messages(plain)
    assert written.content[1] == {"type": "image_url", "image_url": {"url": URL, "detail": "high"}}
    assert langchain.to_messages(langchain.from_messages(plain)) == plain


def test_a_refusal_block_read_last_that_is_no_longer_last_is_refused_at_its_metadata() -> None:
    trace = [HumanMessage("q"), AIMessage([{"type": "refusal", "refusal": "I can't."}])]
    typed = langchain.to_messages(trace)
    mark = {LC: {"shape": "refusal", "block": {"type": "refusal"}}}
    assert typed[1].content == [tb.RefusalPart(text="I can't.", metadata=mark)]
    # last, the reader marks the plain block itself: it goes back as it was
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)
    followed = typed[1].model_copy(
        update={"content": [*typed[1].content, tb.TextPart(text="Sorry.")]}
    )
    assert _refused(lambda: langchain.from_messages([typed[0], followed])) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain"
    )
    unmarked = followed.model_copy(
        update={"content": [tb.RefusalPart(text="I can't."), tb.TextPart(text="Sorry.")]}
    )
    assert langchain.to_messages(langchain.from_messages([typed[0], unmarked])) == [
        typed[0], unmarked
    ]


def test_a_refusal_kept_as_a_block_in_a_human_message_is_refused_at_its_metadata() -> None:
    mark = {LC: {"shape": "refusal", "block": {"type": "refusal"}}}
    typed = [tb.HumanMessage(content=[tb.RefusalPart(text="no", metadata=mark)])]
    assert _refused(lambda: langchain.from_messages(typed)) == (
        "not_representable", 0, "messages[0].content[0].metadata.langchain"
    )


# --- a call's place in LangChain's two lists ----------------------------------------------

_BAD = {"id": "bad", "type": "function", "function": {"name": "g", "arguments": "{oops"}}


def _raw(call_id: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": arguments}}


def _answered_a() -> list[Any]:
    return [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "a"}]),
        ToolMessage("r", tool_call_id="a"),
    ]


def test_a_valid_call_after_an_invalid_one_reuses_an_id_at_its_tool_calls_entry() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [_BAD, _raw("a")]})
    assert [c["id"] for c in ai.tool_calls] == ["a"]  # LangChain's own list: first
    assert [c["id"] for c in ai.invalid_tool_calls] == ["bad"]
    assert [c.id for c in langchain.to_messages([HumanMessage("q"), ai], allow_pending=True)[1]
            .tool_calls] == ["bad", "a"]  # typed: second, in the provider's order
    trace = [*_answered_a(), ai, ToolMessage("r", tool_call_id="a")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "duplicate_tool_call_id", 3, "messages[3].tool_calls[0].id"
    )


def test_an_invalid_call_reusing_an_id_is_refused_at_its_invalid_tool_calls_entry() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [_raw("b"), _raw("x", "{oops"),
                                                         _raw("a", "{no")]})
    assert [c["id"] for c in ai.invalid_tool_calls] == ["x", "a"]
    trace = [*_answered_a(), ai, ToolMessage("r", tool_call_id="b")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "duplicate_tool_call_id", 3, "messages[3].invalid_tool_calls[1].id"
    )


def test_a_streamed_call_after_an_invalid_one_reuses_an_id_at_its_tool_calls_entry() -> None:
    ai = AIMessageChunk(content="", tool_call_chunks=[
        {"name": "g", "args": "[1]", "id": "bad", "index": 0},
        {"name": "f", "args": "{}", "id": "a", "index": 1},
    ])
    assert [c["id"] for c in ai.tool_calls] == ["a"]
    trace = [*_answered_a(), ai, ToolMessage("r", tool_call_id="a")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "duplicate_tool_call_id", 3, "messages[3].tool_calls[0].id"
    )


def test_an_unanswered_call_after_an_invalid_one_is_refused_at_its_tool_calls_entry() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [_BAD, _raw("a")]})
    assert _refused(lambda: langchain.to_messages([HumanMessage("q"), ai, HumanMessage("n")])) == (
        "unanswered_tool_call", 1, "messages[1].tool_calls[0]"
    )


def test_a_call_in_its_typed_place_keeps_its_path() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [_raw("b"), _raw("a"), _BAD]})
    trace = [*_answered_a(), ai, ToolMessage("r", tool_call_id="b")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "duplicate_tool_call_id", 3, "messages[3].tool_calls[1].id"
    )


# --- a legacy function result that answers nothing ----------------------------------------


@pytest.mark.parametrize("cls", [FunctionMessage, FunctionMessageChunk])
def test_a_function_message_before_any_call_is_an_orphan_at_the_message(cls: Any) -> None:
    trace = [HumanMessage("q"), cls(content="r", name="f")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "orphan_tool_result", 1, "messages[1]"
    )


def test_a_second_function_message_for_one_function_call_is_an_orphan_at_the_message() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}}),
        FunctionMessage(content="r", name="f"),
        FunctionMessage(content="again", name="f"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "orphan_tool_result", 3, "messages[3]"
    )
    after_text = [HumanMessage("q"), AIMessage("hi"), FunctionMessage(content="r", name="f")]
    assert _refused(lambda: langchain.to_messages(after_text)) == (
        "orphan_tool_result", 2, "messages[2]"
    )


def test_a_tool_message_that_answers_nothing_keeps_its_tool_call_id_path() -> None:
    trace = [HumanMessage("q"), AIMessage("hi"), ToolMessage("r", tool_call_id="a")]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "orphan_tool_result", 2, "messages[2].tool_call_id"
    )


# --- a refusal block read last, then followed by a refusal for additional_kwargs ----------


def test_a_refusal_block_read_last_then_followed_by_a_plain_refusal_is_refused() -> None:
    # the plain refusal goes to additional_kwargs.refusal, where the reader leaves the
    # content's last refusal block unmarked: the marked one would read back without its mark
    trace = [HumanMessage("q"), AIMessage([{"type": "refusal", "refusal": "I can't."}])]
    typed = langchain.to_messages(trace)
    followed = typed[1].model_copy(
        update={"content": [*typed[1].content, tb.RefusalPart(text="Not allowed.")]}
    )
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([typed[0], followed], form="dicts")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain"
    )
    assert caught.value.detail == (
        "the block kept for this part (metadata.langchain, shape 'refusal') makes the written "
        "block {'type': 'refusal', 'refusal': \"I can't.\"}, the block the way back writes for "
        "this part without metadata, which reads back without metadata.langchain; take "
        "metadata.langchain off the part (the same block is written)"
    )
    # unmarked, the same reply is written as LangChain holds it, and reads back as it is
    unmarked = followed.model_copy(
        update={"content": [tb.RefusalPart(text="I can't."), tb.RefusalPart(text="Not allowed.")]}
    )
    [_, written] = langchain.from_messages([typed[0], unmarked])
    assert (written.content, written.additional_kwargs) == (
        [{"type": "refusal", "refusal": "I can't."}], {"refusal": "Not allowed."}
    )
    assert langchain.to_messages([trace[0], written]) == [typed[0], unmarked]


# --- a kept spelling at a typed field's place that no longer says the field ---------------


def _audio(spelled: str) -> list[tb.Message]:
    return langchain.to_messages([HumanMessage(
        [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": spelled}}])])


@pytest.mark.parametrize(("spelled", "read", "given"), [
    ("mpeg", "audio/mpeg", "audio/wav"),
    ("mpeg", "audio/mpeg", "audio/flac"),
    ("x-wav", "audio/x-wav", "audio/wav"),
    ("x-wav", "audio/x-wav", "audio/mpeg"),
])
def test_an_audio_format_kept_in_its_spelling_then_given_another_type_is_refused(
        spelled: str, read: str, given: str) -> None:
    # before: written in the type's own spelling, read back without the kept one
    [typed] = _audio(spelled)
    part = typed.content[0]
    assert (part.mime_type, part.metadata[LC]["block"]) == (
        read, {"type": "input_audio", "input_audio": {"format": spelled}})
    changed = [_with_part(typed, 0, part.model_copy(update={"mime_type": given}))]
    assert _refused(lambda: langchain.from_messages(changed)) == (
        "not_representable", 0, "messages[0].content[0].metadata.langchain")


def test_an_audio_format_kept_in_its_spelling_names_what_it_holds() -> None:
    [typed] = _audio("mpeg")
    part = typed.content[0].model_copy(update={"mime_type": "audio/wav"})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([_with_part(typed, 0, part)])
    assert caught.value.detail == (
        "the block kept for this part (metadata.langchain, shape 'input_audio') holds 'mpeg' "
        "at input_audio.format, which does not say the part's mime_type 'audio/wav': written, "
        "the part would read back with other metadata; take metadata.langchain off the part, "
        "or give it the block as it should be written"
    )
    # without the kept block the part is written in LangChain's own layout, and reads back
    plain = _with_part(typed, 0, part.model_copy(update={"metadata": {}}))
    [written] = langchain.from_messages([plain])
    assert written.content == [{"type": "audio", "base64": "AAAA", "mime_type": "audio/wav"}]
    assert langchain.to_messages([written]) == [plain]


@pytest.mark.parametrize("spelled", ["mpeg", "x-wav", "wav", "mp3"])
def test_an_audio_format_kept_in_its_spelling_still_writes_as_read(spelled: str) -> None:
    # guard: a spelling that still says the part's type is written as it was read
    typed = _audio(spelled)
    [written] = langchain.from_messages(typed)
    assert written.content == [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": spelled}}]
    assert langchain.to_messages([written]) == typed


def test_a_reasoning_summary_kept_whole_still_writes_as_read() -> None:
    # guard: a summary of two entries stays in the kept block and goes back as it was read
    reply = AIMessage([{"type": "reasoning", "id": "rs_1", "summary": [
        {"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]},
        {"type": "text", "text": "x"}])
    typed = langchain.to_messages([HumanMessage("q"), reply])
    assert typed[1].content[0].text == "a\n\nb"
    assert langchain.to_messages(langchain.from_messages(typed)) == typed


# --- a reasoning summary kept whole that no longer joins to the part's text ---------------

_TWO = [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]
_KEPT_SUMMARIES = [
    _TWO,
    [],
    [{"type": "summary_text", "text": "a", "index": 0}],
]


def _block_reply(summary: list[dict[str, Any]]) -> AIMessage:
    # ChatOpenAI on the Responses API, output_version="responses/v1"
    return AIMessage([{"type": "reasoning", "id": "rs_1", "summary": summary},
                      {"type": "text", "text": "x"}])


def _item_reply(summary: list[dict[str, Any]]) -> AIMessage:
    # the same reply with output_version="v0"
    return AIMessage("x", additional_kwargs={
        "reasoning": {"type": "reasoning", "id": "rs_1", "summary": summary}})


def _retexted(typed: list[tb.Message], text: str) -> list[tb.Message]:
    part = typed[1].content[0].model_copy(update={"text": text})
    return [typed[0], _with_part(typed[1], 0, part)]


@pytest.mark.parametrize("reply", [_block_reply, _item_reply])
@pytest.mark.parametrize("summary", _KEPT_SUMMARIES)
def test_a_reasoning_summary_kept_whole_then_given_another_text_is_refused(
        reply: Any, summary: list[dict[str, Any]]) -> None:
    # before: written as one summary_text entry, read back without the kept summary
    typed = langchain.to_messages([HumanMessage("q"), reply(summary)])
    assert typed[1].content[0].metadata[LC]["block"]["summary"] == summary
    assert _refused(lambda: langchain.from_messages(_retexted(typed, "changed"))) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")


def test_a_reasoning_summary_kept_whole_names_what_it_holds() -> None:
    typed = langchain.to_messages([HumanMessage("q"), _block_reply(_TWO)])
    changed = _retexted(typed, "changed")
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(changed)
    assert caught.value.detail == (
        "the reasoning block kept for this part (metadata.langchain) holds the summary "
        "[{'type': 'summary_text', 'text': 'a'}, {'type': 'summary_text', 'text': 'b'}], "
        "which does not join to the part's text 'changed': written, the part would read back "
        "with other metadata; take 'summary' out of metadata.langchain.block to write the text "
        "as one summary_text entry, or give the part the text the summary joins to"
    )
    # the id stays in the item beside the kept summary; without the summary the text is the
    # item's one entry, and the id the part's
    assert changed[1].content[0].id is None
    block = {"type": "reasoning"}
    unkept = [changed[0], _with_part(changed[1], 0, changed[1].content[0].model_copy(
        update={"id": "rs_1", "metadata": {LC: {"shape": "responses_reasoning", "block": block}}}
    ))]
    [_, written] = langchain.from_messages(unkept)
    assert written == _block_reply([{"type": "summary_text", "text": "changed"}])
    assert langchain.to_messages([HumanMessage("q"), written]) == unkept
    # without the kept block the part is written as a v1 reasoning block, and reads back
    plain = [changed[0], _with_part(changed[1], 0, changed[1].content[0].model_copy(
        update={"id": "rs_1", "metadata": {}}))]
    [_, written] = langchain.from_messages(plain)
    assert written.content == [{"type": "reasoning", "reasoning": "changed", "id": "rs_1"},
                               {"type": "text", "text": "x"}]
    assert langchain.to_messages(langchain.from_messages(plain)) == plain


@pytest.mark.parametrize("reply", [_block_reply, _item_reply])
@pytest.mark.parametrize("summary", _KEPT_SUMMARIES)
def test_a_reasoning_summary_kept_whole_with_its_text_writes_as_read(
        reply: Any, summary: list[dict[str, Any]]) -> None:
    # guard: a kept summary that still joins to the part's text goes back as it was read
    message = reply(summary)
    typed = langchain.to_messages([HumanMessage("q"), message])
    [_, written] = langchain.from_messages(typed)
    assert (written.content, written.additional_kwargs) == (
        message.content, message.additional_kwargs)
    assert langchain.to_messages([HumanMessage("q"), written]) == typed


@pytest.mark.parametrize("reply", [_block_reply, _item_reply])
def test_a_reasoning_summary_of_one_entry_given_another_text_writes_it(reply: Any) -> None:
    # guard: a summary of one entry is not kept; another text is written as its one entry
    typed = langchain.to_messages(
        [HumanMessage("q"), reply([{"type": "summary_text", "text": "a"}])])
    assert "summary" not in typed[1].content[0].metadata[LC]["block"]
    changed = _retexted(typed, "changed")
    [_, written] = langchain.from_messages(changed)
    assert written == reply([{"type": "summary_text", "text": "changed"}])
    assert langchain.to_messages([HumanMessage("q"), written]) == changed
