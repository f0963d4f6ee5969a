"""openai_chat and swarm: a stored message's ``content_parts`` as its content, input audio in
formats the API does not take, the refusal of id-less calls beside calls with ids, Swarm
handoffs after assistant messages without ``sender``, and Swarm's ``Response`` object."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage as LCAI
from langchain_core.messages import HumanMessage as LCHuman
from openai.types.chat import ChatCompletionContentPartInputAudioParam
from pydantic import BaseModel, TypeAdapter

from tracebridge import (
    AIMessage,
    AudioPart,
    HumanMessage,
    ImagePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
)
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.swarm import Handoff


def caught(call: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as error:
        call()
    return error.value.code, error.value.index, error.value.path, str(error.value)


# --- 1. a stored message's content_parts are its content ------------------------------------


def stored(data: list[dict[str, Any]]) -> list[Any]:
    """``client.chat.completions.messages.list(...)`` of a server that stored ``data``."""

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"object": "list", "data": data, "first_id": "m1",
                                         "last_id": "m2", "has_more": False})

    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handle)),
    )
    return list(client.chat.completions.messages.list("chatcmpl_1"))


QUESTION = "What is in this picture?"
CAT = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}}
PICTURE = [
    {"id": "m1", "role": "user", "content": QUESTION,
     "content_parts": [{"type": "text", "text": QUESTION}, CAT]},
    {"id": "m2", "role": "assistant", "content": "A cat.", "refusal": None},
]


def test_a_stored_image_is_an_image_part_and_the_message_round_trips() -> None:
    objects = stored(PICTURE)
    typed = openai_chat.to_messages(objects)
    assert typed[0] == HumanMessage(
        content=[TextPart(text=QUESTION),
                 ImagePart(url="https://example.com/cat.png", detail="low")],
        metadata={"openai_chat": {"content_parts": True, "fields": {"id": "m1"}}},
    )
    assert typed[0].text == QUESTION
    written = openai_chat.from_messages(typed)
    assert written == [o.model_dump(mode="json", exclude_unset=True) for o in objects]
    assert written == PICTURE
    assert openai_chat.to_messages(PICTURE) == typed  # the dict form reads the same


def test_a_stored_image_is_carried_to_other_formats_or_refused() -> None:
    objects = stored(PICTURE)
    assert convert(objects, source="openai_chat", target="langchain")[0].content == [
        {"type": "text", "text": QUESTION}, CAT]
    code, index, path, _ = caught(lambda: convert(objects, source="openai_chat",
                                                  target="galtea"))
    assert (code, index, path) == ("not_representable", 0, "messages[0].content[1]")


@pytest.mark.parametrize(
    ("content", "kept"),
    [("a\nb", {}), ("ab", {"joined": "ab", "joined_parts": "a\nb"}),
     (None, {"joined": None, "joined_parts": "a\nb"})],
    ids=["joined-by-newlines", "joined-otherwise", "null"],
)
def test_stored_text_parts_round_trip_whatever_their_joined_text(
    content: str | None, kept: dict[str, Any]
) -> None:
    data = [{"id": "m1", "role": "user", "content": content,
             "content_parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    typed = openai_chat.to_messages(stored(data))
    assert typed[0].content == [TextPart(text="a"), TextPart(text="b")]
    assert typed[0].metadata == {
        "openai_chat": {"content_parts": True, **kept, "fields": {"id": "m1"}}}
    assert openai_chat.from_messages(typed) == data


def test_null_content_parts_stay_a_kept_field() -> None:
    data = [{"id": "m1", "role": "user", "content": "hi", "content_parts": None},
            {"id": "m2", "role": "assistant", "content": "yo", "content_parts": None}]
    typed = openai_chat.to_messages(stored(data))
    assert typed[0] == HumanMessage(
        content="hi", metadata={"openai_chat": {"fields": {"id": "m1", "content_parts": None}}})
    assert openai_chat.from_messages(typed) == data


def test_an_error_inside_content_parts_is_at_its_place() -> None:
    data = [{"role": "user", "content": "x",
             "content_parts": [{"type": "text", "text": "x"}, {"type": "image_url",
                                                               "image_url": {}}]}]
    assert caught(lambda: openai_chat.to_messages(data))[:3] == (
        "malformed_event", 0, "messages[0].content_parts[1].image_url.url")


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({"role": "user", "content": "x", "content_parts": "x"}, "messages[0].content_parts"),
        ({"role": "user", "content_parts": []}, "messages[0].content"),
        ({"role": "user", "content": ["x"], "content_parts": []}, "messages[0].content"),
    ],
    ids=["not-a-list", "no-content", "content-not-text"],
)
def test_malformed_content_parts_are_refused(message: dict[str, Any], path: str) -> None:
    assert caught(lambda: openai_chat.to_messages([message]))[:3] == (
        "malformed_event", 0, path)


def test_content_parts_kept_by_hand_are_refused_where_they_would_be_lost() -> None:
    ns = "openai_chat"
    text = HumanMessage(content="hi", metadata={ns: {"content_parts": True}})
    assert caught(lambda: openai_chat.from_messages([text]))[:3] == (
        "not_representable", 0, "messages[0].metadata.openai_chat.content_parts")
    joined = HumanMessage(content=[TextPart(text="hi")], metadata={ns: {"joined": "x"}})
    assert caught(lambda: openai_chat.from_messages([joined]))[:3] == (
        "not_representable", 0, "messages[0].metadata.openai_chat.joined")
    old = HumanMessage(content="hi", metadata={ns: {"fields": {"content_parts": [
        {"type": "text", "text": "hi"}]}}})
    assert caught(lambda: openai_chat.from_messages([old]))[:3] == (
        "not_representable", 0, "messages[0].metadata.openai_chat.fields.content_parts")


# --- 2. input audio only in the formats the API takes ---------------------------------------


def test_audio_from_another_format_in_a_format_the_api_does_not_take_is_refused() -> None:
    lc = [LCHuman(content=[{"type": "text", "text": "transcribe"},
                           {"type": "audio", "base64": "T2dnUw==", "mime_type": "audio/ogg"}]),
          LCAI(content="ok")]
    assert caught(lambda: convert(lc, source="langchain", target="openai_chat")) == (
        "not_representable", 0, "messages[0].content[1]",
        "openai_chat: messages[0].content[1]: Chat Completions takes input_audio only in the "
        "formats wav and mp3, not 'ogg' (mime_type 'audio/ogg'; only a part read from a Chat "
        "Completions trace in another format, kept in metadata.openai_chat.format, is written "
        "back in it); pass drop=['audio_parts'] to leave it out [not_representable]")
    written = convert(lc, source="langchain", target="openai_chat",
                      target_options={"drop": ["audio_parts"]})
    assert written[0] == {"role": "user", "content": [{"type": "text", "text": "transcribe"}]}


@pytest.mark.parametrize("mime_type", ["audio/ogg", "audio/flac", "audio/webm", "audio/aac",
                                       "audio/L16", "audio/pcm"])
@pytest.mark.parametrize("adapter", [openai_chat, swarm], ids=["openai_chat", "swarm"])
def test_a_typed_audio_part_the_api_takes_no_format_for_is_refused(
    adapter: Any, mime_type: str
) -> None:
    messages = [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime_type)])]
    code, index, path, text = caught(lambda: adapter.from_messages(messages))
    assert (code, index, path) == ("not_representable", 0, "messages[0].content[0]")
    assert "pass drop=['audio_parts'] to leave it out" in text
    assert adapter.from_messages(messages, drop=["audio_parts"]) == [
        {"role": "user", "content": ""}]


@pytest.mark.parametrize(("mime_type", "spelled"), [("audio/wav", "wav"), ("audio/mpeg", "mp3"),
                                                    ("audio/x-wav", "wav")])
def test_what_is_written_for_typed_audio_the_sdk_takes(mime_type: str, spelled: str) -> None:
    messages = [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime_type)])]
    part = openai_chat.from_messages(messages)[0]["content"][0]
    assert part == {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": spelled}}
    TypeAdapter(ChatCompletionContentPartInputAudioParam).validate_python(part)


@pytest.mark.parametrize("spelled", ["ogg", "flac", "pcm16", "webm"])
@pytest.mark.parametrize("adapter", [openai_chat, swarm], ids=["openai_chat", "swarm"])
def test_audio_read_in_another_format_keeps_it_and_round_trips(adapter: Any, spelled: str) -> None:
    trace = [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": spelled}}]}]
    typed = adapter.to_messages(trace)
    assert typed[0].content[0].metadata == {adapter.NAME: {"format": spelled}}
    assert adapter.from_messages(typed) == trace


def test_a_kept_format_for_another_mime_type_is_refused_when_the_api_takes_neither() -> None:
    edited = AudioPart(data="UklGRg==", mime_type="audio/flac",
                       metadata={"openai_chat": {"format": "ogg"}})
    assert caught(lambda: openai_chat.from_messages([HumanMessage(content=[edited])]))[:3] == (
        "not_representable", 0, "messages[0].content[0]")


def test_audio_parts_is_a_named_loss_of_both_adapters() -> None:
    assert openai_chat.DROPPABLE[-1] == "audio_parts"
    assert swarm.DROPPABLE == openai_chat.DROPPABLE
    assert openai_chat.options.writer["drop"].choices == tuple(openai_chat.DROPPABLE)


# --- 3. id-less calls beside calls with ids -------------------------------------------------


def test_an_id_less_call_beside_a_call_with_an_id_is_refused_at_its_id() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content="", tool_calls=[ToolCall(name="f"),
                                                  ToolCall(name="g", id="call_2")]),
                ToolMessage(content="r"), ToolMessage(content="r2", tool_call_id="call_2")]
    assert caught(lambda: openai_chat.from_messages(messages)) == (
        "not_representable", 1, "messages[1].tool_calls[0].id",
        "openai_chat: messages[1].tool_calls[0].id: 1 tool call without an id beside 1 tool "
        "call with one: calls with ids are written as tool_calls, where each needs its id, and "
        "only the legacy function_call (one call, nothing beside it) is written without one "
        "[not_representable]")


def test_id_less_calls_are_counted_alone_and_the_first_is_named() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1"), ToolCall(name="g"),
                                                  ToolCall(name="h"), ToolCall(name="i", id="c4")])]
    answered = [*messages, ToolMessage(content="a", tool_call_id="c1"), ToolMessage(content="b"),
                ToolMessage(content="c"), ToolMessage(content="d", tool_call_id="c4")]
    code, index, path, text = caught(lambda: swarm.from_messages(answered))
    assert (code, index, path) == ("not_representable", 1, "messages[1].tool_calls[1].id")
    assert "2 tool calls without an id beside 2 tool calls with one" in text


# --- 4. handoffs after assistant messages without sender ------------------------------------


def reply(sender: str, **keys: Any) -> dict[str, Any]:
    """An assistant message as Swarm's run stores it (non-streaming)."""
    return {"content": None, "refusal": None, "role": "assistant", "annotations": None,
            "audio": None, "function_call": None, "tool_calls": None, **keys, "sender": sender}


def transfer(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "function": {"arguments": "{}", "name": name}, "type": "function"}


def handed(call_id: str, name: str, agent: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "tool_name": name,
            "content": json.dumps({"assistant": agent})}


def test_a_greeting_without_sender_before_the_run_names_no_agent() -> None:
    # Swarm.run(agent=triage, messages=[greeting, user]): the caller's greeting has no sender
    history = [
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "my bill"},
        reply("Triage", tool_calls=[transfer("d", "to_billing")]),
        handed("d", "to_billing", "Billing"),
        reply("Billing", content="billing here"),
    ]
    assert swarm.handoffs(history) == [Handoff(index=3, from_agent="Triage", to_agent="Billing")]


def test_a_line_without_sender_between_runs_does_not_hide_the_next_run_s_agent() -> None:
    history = [
        {"role": "user", "content": "my bill"},
        reply("Triage", tool_calls=[transfer("a", "to_billing")]),
        handed("a", "to_billing", "Billing"),
        reply("Billing", content="Billing here, done."),
        {"role": "assistant", "content": "(operator) Anything else?"},
        {"role": "user", "content": "buy something"},
        reply("Triage", tool_calls=[transfer("b", "to_sales")]),
        handed("b", "to_sales", "Sales"),
        reply("Sales", content="Sales here"),
    ]
    assert swarm.handoffs(history) == [
        Handoff(index=2, from_agent="Triage", to_agent="Billing"),
        Handoff(index=7, from_agent="Triage", to_agent="Sales"),
    ]


def test_calls_before_any_sender_have_no_known_agent() -> None:
    history = [
        {"role": "user", "content": "my bill"},
        {"role": "assistant", "content": None, "tool_calls": [transfer("a", "to_billing")]},
        handed("a", "to_billing", "Billing"),
        reply("Billing", content="here"),
    ]
    assert swarm.handoffs(history) == [Handoff(index=2, from_agent=None, to_agent="Billing")]


# --- 5. Swarm's Response object -------------------------------------------------------------


class Agent(BaseModel):
    name: str = "Agent"


class Response(BaseModel):
    """The shape of ``swarm.types.Response`` (what ``Swarm.run`` returns)."""

    messages: list[Any] = []
    agent: Agent | None = None
    context_variables: dict[str, Any] = {}


RESPONSE = Response(messages=[{"role": "assistant", "content": "hi", "sender": "Triage"}],
                    agent=Agent(name="Triage"))
POINTER = ("swarm: trace: expected the history list, got Response (a run's result, with "
           "messages, agent and context_variables): pass its .messages (agent and "
           "context_variables are not messages) [malformed_event]")


@pytest.mark.parametrize("read", [swarm.to_messages, swarm.handoffs],
                         ids=["to_messages", "handoffs"])
def test_a_response_object_is_refused_with_a_pointer_to_its_messages(read: Any) -> None:
    assert caught(lambda: read(RESPONSE)) == ("malformed_event", None, None, POINTER)
    code, _, _, text = caught(lambda: read(RESPONSE.model_dump()))
    assert code == "malformed_event"
    assert "pass its 'messages' (agent and context_variables are not messages)" in text



def test_the_messages_of_a_response_are_read() -> None:
    assert swarm.to_messages(RESPONSE.messages) == [AIMessage(content="hi", name="Triage")]
    assert swarm.handoffs(RESPONSE.messages) == []


@pytest.mark.parametrize("content", ["a b", None], ids=["joined-otherwise", "null"])
def test_an_edited_stored_part_writes_the_parts_text_not_the_kept_one(content: str | None) -> None:
    """The kept content text is written only while the parts still say what they said when
    read: after an edit it would contradict content_parts (and content is what the API reads)."""
    data = [{"id": "m1", "role": "user", "content": content,
             "content_parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    typed = openai_chat.to_messages(stored(data))
    edited = typed[0].model_copy(update={"content": [TextPart(text="a"), TextPart(text="c")]})
    written = openai_chat.from_messages([edited])
    assert written == [{"id": "m1", "role": "user", "content": "a\nc",
                        "content_parts": [{"type": "text", "text": "a"},
                                          {"type": "text", "text": "c"}]}]
    assert openai_chat.to_messages(written) == [edited.model_copy(
        update={"metadata": {"openai_chat": {"content_parts": True, "fields": {"id": "m1"}}}})]


@pytest.mark.parametrize(
    ("kept", "code"),
    [({"content_parts": True, "joined": "x", "joined_parts": 3}, "malformed_event"),
     ({"content_parts": True, "joined": "x"}, "malformed_event"),
     ({"content_parts": True, "joined_parts": "x"}, "not_representable"),
     ({"joined_parts": "x"}, "not_representable")],
    ids=["not-text", "missing", "without-joined", "without-marker"],
)
def test_a_kept_joined_parts_the_reader_would_not_keep_is_refused(
    kept: dict[str, Any], code: str
) -> None:
    message = HumanMessage(content=[TextPart(text="hi")], metadata={"openai_chat": kept})
    assert caught(lambda: openai_chat.from_messages([message]))[:3] == (
        code, 0, "messages[0].metadata.openai_chat.joined_parts")
