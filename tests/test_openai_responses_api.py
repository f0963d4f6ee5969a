"""openai_responses writes what the Responses API accepts, or refuses by name.

The oracle (``api_problems``) is the openai SDK's own request type (``ResponseInputParam``: which
items and part types it takes) plus the API's pairing rule (every call item the application
runs is answered by its output item later in the list, and every output answers a call before
it), and its item id rule (an assistant ``message`` item's ``id`` begins with ``msg``: the API
answers another with "Expected an ID that begins with 'msg'"). Two relaxations, both documented
by the API: an assistant ``message`` item the API did not produce has no ``id``/``status`` (the
SDK reuses the output shape, where they are required), and an ``input_image`` without
``detail`` means ``"auto"``. The real client then sends the written
items to a scripted endpoint on 127.0.0.1, which must receive exactly them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import openai
import pytest
from hypothesis import given, settings
from local_server import serving
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import openai_chat, openai_responses
from tracebridge.adapters.openai_responses import from_messages, to_messages
from tracebridge.registry import detect_format

from law_kits.openai_chat import _validated
from law_kits.openai_responses import expressible
from strategies import conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "openai_responses"
REQUEST: TypeAdapter[Any] = TypeAdapter(ResponseInputParam)


def _with_api_defaults(item: dict[str, Any]) -> dict[str, Any]:
    """The item with the two values the API fills in itself spelled out (see the docstring)."""
    item = json.loads(json.dumps(item))
    if item.get("role") == "assistant" and isinstance(item.get("content"), list):
        item.setdefault("id", "msg_written")
        item.setdefault("status", "completed")
    for key in ("content", "output"):  # a message's parts, a tool output's parts
        parts = item.get(key)
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "input_image":
                part.setdefault("detail", "auto")
    return item


def api_problems(items: list[dict[str, Any]]) -> list[str]:
    """What the API would reject in ``items`` (empty: it would accept it)."""
    try:
        _validated(REQUEST.validate_python([_with_api_defaults(item) for item in items]))
    except ValueError as error:
        return [str(error).splitlines()[0]]
    problems = []
    waiting: dict[str, str] = {}
    for j, item in enumerate(items):
        kind = item.get("type", "message")
        if item.get("role") == "assistant" and not str(item.get("id", "msg")).startswith("msg"):
            problems.append(f"[{j}].id {item['id']!r}: expected an ID that begins with 'msg'")
        if kind in openai_responses.CALL_OUTPUTS:
            waiting[item["call_id"]] = openai_responses.CALL_OUTPUTS[kind]
        elif kind in openai_responses.CALL_OUTPUTS.values():
            # A local shell output names its call by ``id`` (the API's LocalShellCallOutput).
            call_id = item["id"] if "call_id" not in item else item["call_id"]
            if waiting.pop(call_id, None) != kind:
                problems.append(f"[{j}] answers no call waiting for a {kind}")
    if waiting:
        problems.append(f"calls {sorted(waiting)} are never answered")
    return problems


def load(path: Path) -> list[Any]:
    trace: list[Any] = json.loads(path.read_text(encoding="utf-8"))["trace"]
    return trace


def test_the_oracle_accepts_what_the_real_client_sent() -> None:
    for path in sorted(GOLDEN.glob("*.json")):
        assert api_problems(load(path)) == [], path.name


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        (
            [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
            "calls ['c1'] are never answered",
        ),
        (
            [{"type": "function_call_output", "call_id": "c1", "output": "x"}],
            "[0] answers no call waiting for a function_call_output",
        ),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "validation error"),
        ([{"role": "robot", "content": "hi"}], "validation error"),
        (
            [{"type": "message", "role": "assistant", "id": "lc_run--1", "content": []}],
            "[0].id 'lc_run--1': expected an ID that begins with 'msg'",
        ),
    ],
    ids=["unanswered", "orphan", "chat-part", "unknown-role", "message-id-prefix"],
)
def test_the_oracle_rejects_what_the_api_rejects(items: list[Any], problem: str) -> None:
    problems = api_problems(items)
    assert problems
    assert problem in problems[0]


def _written_or_refused(messages: list[Any], drop: tuple[str, ...] = ()) -> Any:
    try:
        return from_messages(messages, drop=drop)
    except TraceError as error:
        refused = (error.code, error.source)
    assert refused == ("not_representable", "openai_responses")
    return refused[0]


ASKED_AND_ANSWERED = [
    HumanMessage(content="Weather in Paris?"),
    AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")]),
    ToolMessage(content="18 C", tool_call_id="call_1", name="get_weather"),
    AIMessage(content="18 C in Paris."),
]


def test_a_plain_conversation_is_written_and_the_api_accepts_it() -> None:
    # the properties below pass for a writer that refuses everything: this one must be written
    for drop in ((), openai_responses.DROPPABLE):
        written = _written_or_refused(ASKED_AND_ANSWERED, drop=drop)
        assert written == [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather",
             "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "18 C",
             "name": "get_weather"},
            {"role": "assistant", "content": "18 C in Paris."},
        ]
        assert api_problems(written) == []


@given(messages=conversations())
def test_whatever_is_written_the_api_accepts(messages: list[Any]) -> None:
    written = _written_or_refused(messages)
    if written != "not_representable":
        assert api_problems(written) == []


@given(messages=conversations())
def test_whatever_is_written_with_every_loss_accepted_the_api_accepts(messages: list[Any]) -> None:
    written = _written_or_refused(messages, drop=openai_responses.DROPPABLE)
    if written != "not_representable":
        assert api_problems(written) == []


def _no_verbatim_parts(messages: list[Any]) -> bool:
    # A part kept verbatim (or an audio part) is one the API does not take there: written
    # back as it was read.
    return not any(
        isinstance(part, (OpaquePart, AudioPart))
        for message in messages
        if isinstance(message.content, list)
        for part in message.content
    )


def test_an_image_without_detail_in_a_custom_output_means_auto() -> None:
    # ResponseCustomToolCallOutputParam's image part requires detail; the API reads it as auto.
    messages = [
        HumanMessage(content="Chart?"),
        AIMessage(tool_calls=[ToolCall(name="chart", args={"input": "q3"}, id="c1",
                                       kind="custom")]),
        ToolMessage(content=[ImagePart(url="https://example.com/chart.png")], tool_call_id="c1"),
    ]
    items = from_messages(messages)
    assert items[2]["output"] == [
        {"type": "input_image", "image_url": "https://example.com/chart.png"}
    ]
    assert api_problems(items) == []


@given(messages=expressible().filter(_no_verbatim_parts))
def test_every_expressible_conversation_is_written_as_the_api_takes_it(
    messages: list[Any],
) -> None:
    assert api_problems(from_messages(messages)) == []


# --- the real client ---------------------------------------------------------------------


class _Received(BaseHTTPRequestHandler):
    bodies: ClassVar[list[dict[str, Any]]] = []
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
        data = json.dumps(
            {
                "id": "resp_1",
                "object": "response",
                "created_at": 1767225600,
                "status": "completed",
                "model": "gpt-5",
                "output": [],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def client() -> Iterator[tuple[openai.OpenAI, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []
    handler = type("Handler", (_Received,), {"bodies": bodies})
    with serving(handler) as base_url:
        yield openai.OpenAI(
            api_key="sk-test", base_url=f"{base_url}/v1", max_retries=0, timeout=10.0
        ), bodies


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_the_real_client_sends_the_written_items_as_they_are(
    client: tuple[openai.OpenAI, list[dict[str, Any]]], path: Path
) -> None:
    sdk, bodies = client
    items = from_messages(to_messages(load(path)))
    sdk.responses.create(model="gpt-5", input=items)  # type: ignore[arg-type]
    assert bodies[-1]["input"] == items


@settings(max_examples=10)
@given(messages=expressible())
def test_the_real_client_sends_written_conversations_as_they_are(messages: list[Any]) -> None:
    bodies: list[dict[str, Any]] = []
    handler = type("Handler", (_Received,), {"bodies": bodies})
    items = from_messages(messages)
    with serving(handler) as base_url:
        sdk = openai.OpenAI(api_key="sk-test", base_url=f"{base_url}/v1", max_retries=0, timeout=10)
        sdk.responses.create(model="gpt-5", input=items)  # type: ignore[arg-type]
    assert bodies == [{"model": "gpt-5", "input": items}]


# --- what has no place -------------------------------------------------------------------

CALL = ToolCall(name="get_weather", args={"city": "Oslo"}, id="c1")


@pytest.mark.parametrize(
    ("messages", "path", "option"),
    [
        ([HumanMessage(content="hi", name="ana")], "messages[0].name", "drop_names"),
        (
            [HumanMessage(content="hi"), AIMessage(content="yo", name="bot")],
            "messages[1].name",
            "drop_names",
        ),
        (
            [HumanMessage(content="hi"), AIMessage(audio=AudioReference(id="audio_1"))],
            "messages[1].audio",
            "audio_replies",
        ),
        (
            [HumanMessage(content="hi"), AIMessage(content=[ReasoningPart(text="hmm")])],
            "messages[1].content[0]",
            "reasoning",
        ),
        (
            [
                HumanMessage(content="hi"),
                AIMessage(tool_calls=[CALL]),
                ToolMessage(content="boom", tool_call_id="c1", is_error=True),
            ],
            "messages[2].is_error",
            "is_error",
        ),
        ([HumanMessage(content="hi"), AIMessage(tool_calls=[CALL])], "messages[1].tool_calls[0]",
         "unanswered_calls"),
        (
            [
                HumanMessage(content="hi"),
                AIMessage(tool_calls=[CALL.model_copy(update={"id": None})]),
                ToolMessage(content="3 C"),
            ],
            "messages[1].tool_calls[0].id",
            None,
        ),
        (
            [HumanMessage(content="hi"),
             AIMessage(content="Sources:", citations=[Citation(url="https://a.example")])],
            "messages[1].citations[0]",
            "citations",
        ),
    ],
    ids=["user-name", "agent-name", "audio", "reasoning-without-id", "is-error", "unanswered",
         "call-without-id", "partial-citation"],
)
def test_what_the_format_has_no_place_for_is_refused_by_name(
    messages: list[Any], path: str, option: str | None
) -> None:
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.path) == ("not_representable", path)
    if option is None:
        assert "drop=" not in str(caught.value)
        return
    if option == "drop_names":
        assert "pass drop_names=True" in str(caught.value)
        from_messages(messages, drop_names=True)
        return
    assert f"pass drop=['{option}']" in str(caught.value)
    from_messages(messages, drop=[option])


def test_two_replies_in_a_row_are_refused_rather_than_merged() -> None:
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(content="Let me check."),
        AIMessage(tool_calls=[CALL]),
        ToolMessage(content="3 C", tool_call_id="c1"),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index) == ("not_representable", 2)
    # As one reply (the text, then the call) it is what the API produces.
    one = [messages[0], AIMessage(content="Let me check.", tool_calls=[CALL]), messages[3]]
    assert from_messages(one) == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "c1", "name": "get_weather",
         "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "3 C"},
    ]
    assert to_messages(from_messages(one)) == one


def test_a_reply_is_written_as_the_api_produced_it() -> None:
    reply = AIMessage(
        content=[
            ReasoningPart(text="Two cities.", id="rs_1"),
            TextPart(text="Checking both."),
        ],
        tool_calls=[CALL, ToolCall(name="get_weather", args={"city": "Rome"}, id="c2")],
        id="msg_1",
    )
    items = from_messages([HumanMessage(content="Oslo and Rome?"), reply,
                           ToolMessage(content="3 C", tool_call_id="c1"),
                           ToolMessage(content="24 C", tool_call_id="c2")])
    assert [item.get("type", "message") for item in items] == [
        "message", "reasoning", "message", "function_call", "function_call",
        "function_call_output", "function_call_output",
    ]
    assert items[1:3] == [
        {"type": "reasoning", "id": "rs_1",
         "summary": [{"type": "summary_text", "text": "Two cities."}]},
        {"type": "message", "role": "assistant", "id": "msg_1",
         "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]},
    ]


def test_a_hosted_call_and_its_result_are_one_item_again() -> None:
    item = {"id": "ws_1", "type": "web_search_call", "status": "completed",
            "action": {"type": "search", "query": "Oslo"}}
    messages = to_messages([{"role": "user", "content": "News?"}, item])
    assert messages[1:] == [
        AIMessage(tool_calls=[ToolCall(
            name="web_search", args={"action": {"type": "search", "query": "Oslo"}}, id="ws_1",
            metadata={"openai_responses": {"item": "web_search_call"}})]),
        ToolMessage(content='{"status": "completed"}', tool_call_id="ws_1", name="web_search"),
    ]
    assert from_messages(messages)[1] == item
    edited = [*messages[:2], messages[2].model_copy(update={"content": "it went well"})]
    with pytest.raises(TraceError) as caught:
        from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].content"
    )


# --- detection ---------------------------------------------------------------------------


def test_a_plain_role_list_is_left_to_the_chat_formats_and_reads_the_same_here() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert not openai_responses.detect(plain)
    assert detect_format(plain) == "openai_chat"
    assert to_messages(plain) == openai_chat.to_messages(plain)


@pytest.mark.parametrize(
    "items",
    [
        [{"type": "message", "role": "user", "content": "hi"}],
        [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        [{"role": "user", "content": "hi"},
         {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
         {"type": "function_call_output", "call_id": "c1", "output": "x"}],
    ],
    ids=["typed-message", "input-parts", "calls"],
)
def test_a_responses_list_is_told_from_its_items_alone(items: list[Any]) -> None:
    assert detect_format(items) == "openai_responses"
    assert not openai_chat.detect(items)


def test_a_chat_history_is_not_claimed() -> None:
    chat = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]
    assert not openai_responses.detect(chat)
    assert detect_format(chat) == "openai_chat"


def test_the_droppable_losses_are_named() -> None:
    assert openai_responses.DROPPABLE == (
        "is_error", "reasoning", "mime_types", "refusals", "citations", "audio_replies",
        "audio_parts", "unanswered_calls", "opaque_parts",
    )


def test_system_messages_keep_their_role() -> None:
    messages = [SystemMessage(content="Be brief.", role="developer"), HumanMessage(content="hi")]
    assert from_messages(messages)[0] == {"role": "developer", "content": "Be brief."}
    assert to_messages(from_messages(messages)) == messages
