"""openai_chat, swarm and openai_responses: a ``function`` message answering ``tool_calls`` is
reported when it is the first fault, and an image detail the API does not take is written only
for a part read with it."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from langchain_core.messages import AIMessage as LCAI
from langchain_core.messages import HumanMessage as LCHuman
from llama_index.core.llms import ChatMessage, ImageBlock
from openai.types.chat import ChatCompletionContentPartImageParam
from openai.types.responses import ImageDetail

from tracebridge import AIMessage, AudioPart, HumanMessage, ImagePart, TraceError, convert
from tracebridge.adapters import openai_agents, openai_chat, openai_responses, swarm
from tracebridge.adapters.openai_chat import _parts

URL = "https://example.com/a.png"


def caught(call: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as error:
        call()
    return error.value.code, error.value.index, error.value.path


# --- 1. a function message answering tool_calls, before a later fault ---------------------


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


USER = {"role": "user", "content": "q"}
FUNCTION = {"role": "function", "name": "f", "content": "r"}
HEAD = [USER, {"role": "assistant", "content": None, "tool_calls": [call("c1")]}, FUNCTION, USER]
LATER_FAULTS = {
    "unanswered": [{"role": "assistant", "content": None, "tool_calls": [call("c2")]}, USER],
    "duplicate": [
        {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ],
    "orphan": [{"role": "tool", "tool_call_id": "c9", "content": "r"}],
}
FIRST = ("orphan_tool_result", 2, "messages[2]")


@pytest.mark.parametrize("later", sorted(LATER_FAULTS))
def test_a_function_message_answering_tool_calls_is_the_first_fault(later: str) -> None:
    assert caught(lambda: openai_chat.to_messages(HEAD + LATER_FAULTS[later])) == FIRST


@pytest.mark.parametrize("later", sorted(LATER_FAULTS))
def test_swarm_reports_it_first_too(later: str) -> None:
    trace = [{**m, "sender": "A"} if m["role"] == "assistant" else m
             for m in HEAD + LATER_FAULTS[later]]
    assert caught(lambda: swarm.to_messages(trace)) == FIRST


def test_an_earlier_fault_of_the_rules_stays_first() -> None:
    trace = [
        {"role": "assistant", "content": None, "tool_calls": [call("c0")]},
        USER,  # c0 is unanswered here, before the function message
        *HEAD[1:],
    ]
    assert caught(lambda: openai_chat.to_messages(trace)) == (
        "unanswered_tool_call", 0, "messages[0].tool_calls[0]"
    )


def test_a_call_left_unanswered_in_the_same_block_is_met_after_the_function_message() -> None:
    # The rules pair the function message with c2 and find c3 unanswered only where the
    # block closes (messages[4]), after they passed the function message at messages[3].
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2"),
                                                              call("c3")]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        FUNCTION,
        USER,
    ]
    assert caught(lambda: openai_chat.to_messages(trace)) == (
        "orphan_tool_result", 3, "messages[3]"
    )


def test_at_the_same_message_the_rules_error_is_kept() -> None:
    # After a user message the function message answers nothing at all: the rules say so.
    trace = [*HEAD[:2], {"role": "tool", "tool_call_id": "c1", "content": "r"}, USER, FUNCTION]
    with pytest.raises(TraceError) as error:
        openai_chat.to_messages(trace)
    assert (error.value.code, error.value.index, error.value.path) == (
        "orphan_tool_result", 4, "messages[4]"
    )
    assert error.value.detail == (
        "tool result answers nothing: it must follow an AIMessage or a ToolMessage, not a "
        "human message"
    )


# --- 2. an image detail the API does not take ----------------------------------------------


def literal_values(annotation: Any) -> tuple[str, ...]:
    return tuple(typing.get_args(annotation))


def test_the_details_are_those_of_the_sdk() -> None:
    hints = typing.get_type_hints(ChatCompletionContentPartImageParam)
    image_url = typing.get_type_hints(hints["image_url"])
    assert set(_parts.API_IMAGE_DETAILS) == set(literal_values(image_url["detail"]))
    assert set(_parts.API_IMAGE_DETAILS) == set(literal_values(ImageDetail))


def typed(detail: str) -> list[Any]:
    return [HumanMessage(content=[ImagePart(url=URL, detail=detail)]), AIMessage(content="x")]


REFUSED = ("not_representable", 0, "messages[0].content[0].detail")
ORIGINS = {
    "openai_chat": "a Chat Completions trace",
    "swarm": "a Swarm history",
    "openai_responses": "a Responses trace",
    "openai_agents": "an Agents SDK run",
}
"""What each writer names as the source of a part that keeps a detail or a format."""


@pytest.mark.parametrize("detail", ["ultra", "", "LOW"])
@pytest.mark.parametrize("adapter", [openai_chat, swarm, openai_responses])
def test_a_detail_the_api_does_not_take_is_refused(adapter: Any, detail: str) -> None:
    with pytest.raises(TraceError) as error:
        adapter.from_messages(typed(detail))
    assert (error.value.code, error.value.index, error.value.path) == REFUSED
    assert error.value.source == adapter.NAME
    assert error.value.detail == (
        f"{'Responses' if adapter is openai_responses else 'Chat Completions'} takes an "
        f"image's detail only as one of auto, low, high, original, not {detail!r} (only a part "
        f"read from {ORIGINS[adapter.NAME]} with another detail, kept in "
        f"metadata.{adapter.NAME}.detail, is written back with it)"
    )


@pytest.mark.parametrize("detail", ["auto", "low", "high", "original"])
def test_a_detail_the_api_takes_is_written(detail: str) -> None:
    assert openai_chat.from_messages(typed(detail))[0]["content"] == [
        {"type": "image_url", "image_url": {"url": URL, "detail": detail}}
    ]
    assert openai_responses.from_messages(typed(detail))[0]["content"] == [
        {"type": "input_image", "image_url": URL, "detail": detail}
    ]


CHAT_ULTRA = [
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": URL,
                                                                     "detail": "ultra"}}]},
    {"role": "assistant", "content": "a cat"},
]
RESPONSES_ULTRA = [
    {"role": "user", "content": [{"type": "input_image", "image_url": URL, "detail": "ultra"}]},
    {"role": "assistant", "content": "a cat"},
]


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_a_chat_trace_with_another_detail_reads_back_as_it_was(adapter: Any) -> None:
    messages = adapter.to_messages(CHAT_ULTRA)
    assert messages[0].content[0] == ImagePart(
        url=URL, detail="ultra", metadata={adapter.NAME: {"detail": "ultra"}}
    )
    assert adapter.from_messages(messages) == CHAT_ULTRA


def test_a_detail_the_api_takes_is_not_marked() -> None:
    trace = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": URL,
                                                                                "detail": "low"}}]}]
    assert openai_chat.to_messages(trace)[0].content[0] == ImagePart(url=URL, detail="low")


def test_a_responses_trace_with_another_detail_reads_back_as_it_was() -> None:
    messages = openai_responses.to_messages(RESPONSES_ULTRA)
    assert messages[0].content[0] == ImagePart(
        url=URL, detail="ultra", metadata={"openai_responses": {"detail": "ultra"}}
    )
    assert openai_responses.from_messages(messages) == RESPONSES_ULTRA


def test_the_mark_vouches_only_for_the_detail_it_was_read_with() -> None:
    messages = openai_chat.to_messages(CHAT_ULTRA)
    part = messages[0].content[0].model_copy(update={"detail": "mega"})
    edited = [messages[0].model_copy(update={"content": [part]}), messages[1]]
    assert caught(lambda: openai_chat.from_messages(edited)) == REFUSED


def test_a_mark_that_is_not_text_is_malformed() -> None:
    part = ImagePart(url=URL, detail="ultra", metadata={"openai_chat": {"detail": 1}})
    messages = [HumanMessage(content=[part]), AIMessage(content="x")]
    assert caught(lambda: openai_chat.from_messages(messages)) == (
        "malformed_event", 0, "messages[0].content[0].metadata.openai_chat.detail"
    )


@pytest.mark.parametrize(
    ("source", "target"),
    [("openai_chat", "openai_responses"), ("openai_responses", "openai_chat"),
     ("openai_responses", "swarm")],
)
def test_the_mark_of_one_format_is_not_the_other_s(source: str, target: str) -> None:
    trace = CHAT_ULTRA if source == "openai_chat" else RESPONSES_ULTRA
    assert caught(lambda: convert(trace, source=source, target=target)) == REFUSED


FOREIGN = {
    "llama_index": [
        ChatMessage(role="user", blocks=[ImageBlock(url=URL, detail="ultra")]),
        ChatMessage(role="assistant", content="a cat"),
    ],
    "langchain": [
        LCHuman(content=[{"type": "image_url", "image_url": {"url": URL, "detail": "ultra"}}]),
        LCAI(content="a cat"),
    ],
}


@pytest.mark.parametrize("target", ["openai_chat", "openai_responses", "swarm", "openai_agents"])
@pytest.mark.parametrize("source", sorted(FOREIGN))
def test_another_format_s_detail_is_refused_whole(source: str, target: str) -> None:
    assert caught(lambda: convert(FOREIGN[source], source=source, target=target)) == REFUSED


def test_an_agents_run_item_list_keeps_its_detail_too() -> None:
    messages = openai_agents.to_messages(RESPONSES_ULTRA)
    assert messages[0].content[0] == ImagePart(
        url=URL, detail="ultra", metadata={"openai_agents": {"detail": "ultra"}}
    )
    assert openai_agents.from_messages(messages) == RESPONSES_ULTRA


# --- 3. a kept detail or format the part is not written with --------------------------------

WRITERS = [openai_chat, swarm, openai_responses, openai_agents]


def image(detail: str | None, metadata: dict[str, Any]) -> list[Any]:
    return [HumanMessage(content=[ImagePart(url=URL, detail=detail, metadata=metadata)]),
            AIMessage(content="x")]


def refusal(call: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as error:
        call()
    return error.value.code, error.value.index, error.value.path, error.value.detail


def api_name(adapter: Any) -> str:
    return "Chat Completions" if adapter in (openai_chat, swarm) else "Responses"


@pytest.mark.parametrize("detail", ["auto", "low", "high", "original"])
@pytest.mark.parametrize("adapter", WRITERS)
def test_a_kept_detail_the_api_takes_is_refused(adapter: Any, detail: str) -> None:
    messages = image(detail, {adapter.NAME: {"detail": detail}})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, f"messages[0].content[0].metadata.{adapter.NAME}.detail",
        f"the kept detail {detail!r} is one {api_name(adapter)} takes: the reader keeps a "
        "detail only when the API does not take it, so the kept one would be lost",
    )


@pytest.mark.parametrize(("detail", "kept"), [(None, "ultra"), ("low", "ultra"), (None, "")])
@pytest.mark.parametrize("adapter", WRITERS)
def test_a_kept_detail_that_is_not_the_part_s_is_refused(
    adapter: Any, detail: str | None, kept: str
) -> None:
    messages = image(detail, {adapter.NAME: {"detail": kept}})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, f"messages[0].content[0].metadata.{adapter.NAME}.detail",
        f"the kept detail {kept!r} is not the part's detail ({detail!r}): the part is written "
        "with its own, so the kept one would be lost",
    )


@pytest.mark.parametrize("adapter", WRITERS)
def test_a_part_read_with_another_detail_still_round_trips(adapter: Any) -> None:
    messages = image("ultra", {adapter.NAME: {"detail": "ultra"}})
    assert adapter.to_messages(adapter.from_messages(messages)) == messages


@pytest.mark.parametrize("detail", ["ultra", None])
@pytest.mark.parametrize("adapter", WRITERS)
def test_a_kept_detail_that_is_not_text_is_malformed_in_every_writer(
    adapter: Any, detail: str | None
) -> None:
    messages = image(detail, {adapter.NAME: {"detail": 5}})
    path = f"messages[0].content[0].metadata.{adapter.NAME}.detail"
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "malformed_event", 0, path,
        f"{path[len('messages[0].'):]} must be a string (the source's image detail), as "
        "to_messages writes it; got int 5",
    )


def audio(mime_type: str, metadata: dict[str, Any]) -> list[Any]:
    return [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime_type,
                                            metadata=metadata)])]


@pytest.mark.parametrize(("mime_type", "kept"), [("audio/wav", "wav"), ("audio/mpeg", "mp3")])
@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_a_kept_format_the_part_is_written_in_anyway_is_refused(
    adapter: Any, mime_type: str, kept: str
) -> None:
    messages = audio(mime_type, {adapter.NAME: {"format": kept}})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, f"messages[0].content[0].metadata.{adapter.NAME}.format",
        f"the kept format {kept!r} is the one the part's mime type is written in: the reader "
        "keeps a format only when the table spells it otherwise or Chat Completions does not "
        "take it, so the kept one would be lost",
    )


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_a_kept_format_that_no_longer_names_the_mime_type_is_refused(adapter: Any) -> None:
    messages = audio("audio/wav", {adapter.NAME: {"format": "mpeg"}})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, f"messages[0].content[0].metadata.{adapter.NAME}.format",
        "the kept format 'mpeg' does not name the part's mime type ('audio/wav'): the part is "
        "written in 'wav', so the kept one would be lost",
    )


@pytest.mark.parametrize(("mime_type", "kept", "why"), [
    ("audio/wav", "mpeg", "does not name the part's mime type ('audio/wav'): the part is "
     "written in 'wav'"),
    ("audio/wav", "wav", "is the one the part's mime type is written in: the reader keeps a "
     "format only when the table spells it otherwise"),
])
@pytest.mark.parametrize("adapter", [openai_responses, openai_agents])
def test_the_responses_writers_refuse_a_kept_format_so_too(
    adapter: Any, mime_type: str, kept: str, why: str
) -> None:
    messages = audio(mime_type, {adapter.NAME: {"read": True, "format": kept}})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, f"messages[0].content[0].metadata.{adapter.NAME}.format",
        f"the kept format {kept!r} {why}, so the kept one would be lost",
    )


@pytest.mark.parametrize("adapter", [openai_responses, openai_agents])
def test_a_kept_format_that_is_not_text_is_malformed_in_the_responses_writers(
    adapter: Any,
) -> None:
    messages = audio("audio/mpeg", {adapter.NAME: {"read": True, "format": 3}})
    path = f"messages[0].content[0].metadata.{adapter.NAME}.format"
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "malformed_event", 0, path,
        f"{path[len('messages[0].'):]} must be a string (the source's audio format), as "
        "to_messages writes it; got int 3",
    )


@pytest.mark.parametrize(("adapter", "spelled"), [
    (openai_chat, "ogg"), (openai_chat, "mpeg"), (swarm, "pcm16"),
    (openai_responses, "mpeg"), (openai_agents, "pcm16"),
])
def test_a_format_the_reader_keeps_still_round_trips(adapter: Any, spelled: str) -> None:
    part = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": spelled}}
    trace = [{"role": "user", "content": [part]}]  # (the same dict in both APIs)
    assert adapter.from_messages(adapter.to_messages(trace)) == trace


def test_swarm_names_its_own_history_for_a_part_read_from_a_chat_trace() -> None:
    messages = openai_chat.to_messages(CHAT_ULTRA)
    assert refusal(lambda: swarm.from_messages(messages)) == (
        *REFUSED,
        "Chat Completions takes an image's detail only as one of auto, low, high, original, "
        "not 'ultra' (only a part read from a Swarm history with another detail, kept in "
        "metadata.swarm.detail, is written back with it)",
    )


def test_the_agents_writer_names_an_agents_run() -> None:
    assert refusal(lambda: openai_agents.from_messages(typed("ultra"))) == (
        *REFUSED,
        "Responses takes an image's detail only as one of auto, low, high, original, not "
        "'ultra' (only a part read from an Agents SDK run with another detail, kept in "
        "metadata.openai_agents.detail, is written back with it)",
    )


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_the_audio_refusal_names_the_writer_s_own_format_and_namespace(adapter: Any) -> None:
    messages = audio("audio/flac", {})
    assert refusal(lambda: adapter.from_messages(messages)) == (
        "not_representable", 0, "messages[0].content[0]",
        "Chat Completions takes input_audio only in the formats wav and mp3, not 'flac' "
        f"(mime_type 'audio/flac'; only a part read from {ORIGINS[adapter.NAME]} in another "
        f"format, kept in metadata.{adapter.NAME}.format, is written back in it); pass "
        "drop=['audio_parts'] to leave it out",
    )
