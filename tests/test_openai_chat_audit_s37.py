"""Audit s37 of the Chat Completions adapters (``openai_chat`` and ``swarm``).

* Argument text kept from the source is written only while it says what ``args`` say, the sign
  of a zero included: ``{"dx":-0.0}`` is not written for ``args={"dx": 0.0}`` (it read back as
  the old value, and the transcript hash changed). The otel writer asks the same.
* A ``ParsedChatCompletionMessage[T]`` whose class was first made at a module's top level
  (pydantic names it after that module) is read like any other.
* The fast writer and the general writer give one answer: a null namespace, a null ``fields``,
  a null ``content`` form (on any role) and a null ``refusal`` spelling are refused on both.
* An SDK message set inside itself (``m.annotations = [m]``) is ``unserializable_value`` where
  it is, not a raw ``RecursionError``.
* A role (or an ``object`` / annotation ``type`` / ``tool_calls`` value) whose ``==`` has no
  truth value (a numpy array) is refused with a ``TraceError``; ``detect`` is False.
* ``ChatCompletionStoreMessage`` objects (``chat.completions.messages.list``) are read as their
  dumps are, of every role.
"""

from __future__ import annotations

import math
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessage, ParsedChatCompletionMessage
from pydantic import BaseModel

from tracebridge import (
    AIMessage,
    Citation,
    HumanMessage,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge._json import same_json
from tracebridge.adapters import openai_chat, otel, swarm

ADAPTERS = [openai_chat, swarm]


def _refused(run: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        run()
    return caught.value.code, caught.value.index, caught.value.path


def _client(body: dict[str, Any]) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(
            transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body))
        ),
    )


# --- 1. -0.0 is not 0.0 for kept argument text ------------------------------------------------

MOVE = [
    {"role": "user", "content": "move"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "move", "arguments": '{"dx":-0.0}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
]


def _with_args(typed: list[Any], args: dict[str, Any]) -> list[Any]:
    """``typed`` with the call of its second message given ``args`` (its metadata kept)."""
    call = typed[1].tool_calls[0].model_copy(update={"args": args})
    return [typed[0], typed[1].model_copy(update={"tool_calls": [call]}), typed[2]]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_args_edited_from_negative_zero_to_zero_are_written_as_dumps_of_args(adapter: Any) -> None:
    typed = adapter.to_messages(MOVE)
    call = typed[1].tool_calls[0]
    assert math.copysign(1.0, call.args["dx"]) == -1.0
    assert call.metadata == {adapter.NAME: {"arguments": '{"dx":-0.0}'}}
    edited = _with_args(typed, {"dx": 0.0})
    out = adapter.from_messages(edited)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"dx": 0.0}'
    back = adapter.to_messages(out)
    assert math.copysign(1.0, back[1].tool_calls[0].args["dx"]) == 1.0
    assert transcript_hash(back) == transcript_hash(edited)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_args_edited_from_zero_to_negative_zero_are_written_as_dumps_of_args(adapter: Any) -> None:
    trace = [dict(m) for m in MOVE]
    trace[1] = {**MOVE[1], "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "move", "arguments": '{"dx":0.0}'}}]}
    edited = _with_args(adapter.to_messages(trace), {"dx": -0.0})
    out = adapter.from_messages(edited)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"dx": -0.0}'
    assert transcript_hash(adapter.to_messages(out)) == transcript_hash(edited)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_kept_negative_zero_text_round_trips_unedited(adapter: Any) -> None:
    assert adapter.from_messages(adapter.to_messages(MOVE)) == MOVE


def test_same_json_tells_the_signs_of_zero_apart_only_when_asked() -> None:
    for a, b in [(-0.0, 0.0), ({"dx": -0.0}, {"dx": 0.0}), ([0.0], [-0.0]),
                 ({"a": [{"b": -0.0}]}, {"a": [{"b": 0.0}]}), ((1, -0.0), (1, 0.0))]:
        assert same_json(a, b) is True
        assert same_json(a, b, zero_signs=True) is False
    for a, b in [(-0.0, -0.0), ({"dx": 0.0}, {"dx": 0.0}),
                 ({"a": [1.5, -0.0]}, {"a": [1.5, -0.0]})]:
        assert same_json(a, b, zero_signs=True) is True
    assert same_json({"n": 1}, {"n": 1.0}, zero_signs=True) is False


def test_the_otel_writer_writes_args_edited_from_negative_zero_as_they_are() -> None:
    call = ToolCall(name="move", args={"dx": 0.0}, id="c1",
                    metadata={"otel": {"arguments": '{"dx":-0.0}'}})
    typed = [HumanMessage(content="move"), AIMessage(content="", tool_calls=[call]),
             ToolMessage(content="ok", tool_call_id="c1")]
    back = otel.to_messages(otel.from_messages(typed))
    assert math.copysign(1.0, back[1].tool_calls[0].args["dx"]) == 1.0
    assert transcript_hash(back) == transcript_hash(typed)


# --- 2. a ParsedChatCompletionMessage[T] made at a module's top level ---------------------------


class Weather(BaseModel):
    city: str
    temp_c: float


WeatherMessage = ParsedChatCompletionMessage[Weather]  # at the top level: named after this module

STORED_REPLY = {"role": "assistant", "content": '{"city":"Paris","temp_c":18}', "refusal": None,
                "parsed": {"city": "Paris", "temp_c": 18}}
ASK = {"role": "user", "content": "Weather in Paris?"}


def test_the_parsed_message_class_is_named_after_this_module() -> None:
    assert WeatherMessage.__module__ == __name__  # what the readers did not recognise


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_parsed_message_of_a_top_level_class_is_read(adapter: Any) -> None:
    message = WeatherMessage.model_validate(STORED_REPLY)
    typed = adapter.to_messages([ASK, message])
    assert typed[1] == AIMessage(
        content='{"city":"Paris","temp_c":18}',
        metadata={adapter.NAME: {"fields": {"refusal": None,
                                            "parsed": {"city": "Paris", "temp_c": 18.0}}}},
    )
    assert typed == adapter.to_messages(
        [ASK, message.model_dump(mode="json", exclude_unset=True)]
    )


def test_a_parsed_message_of_a_top_level_class_is_detected() -> None:
    assert openai_chat.detect([ASK, WeatherMessage.model_validate(STORED_REPLY)]) is True


# --- 3. the fast and the general writer give one answer --------------------------------------

_NULLS = [
    (None, "malformed_event", ""),
    ({"fields": None}, "malformed_event", ""),
    ({"content": None}, "not_representable", ".metadata.{ns}.content"),
]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(("kept", "code", "below"), _NULLS, ids=["namespace", "fields", "content"])
def test_a_null_namespace_fields_or_form_is_refused_on_both_writer_paths(
    adapter: Any, kept: Any, code: str, below: str
) -> None:
    md = {adapter.NAME: kept}
    path = f"{below.format(ns=adapter.NAME)}"
    cases = [
        ([HumanMessage(content="hi", metadata=md)], 0),  # the fast path
        ([HumanMessage(content=[TextPart(text="hi")], metadata=md)], 0),  # the general one
        ([HumanMessage(content="q"), AIMessage(content="a", metadata=md)], 1),
        ([HumanMessage(content="q"),
          AIMessage(content=[TextPart(text="a"), TextPart(text="b")], metadata=md)], 1),
        ([SystemMessage(content="s", metadata=md)], 0),
    ]
    for messages, i in cases:
        assert _refused(lambda m=messages: adapter.from_messages(m)) == (
            code, i, f"messages[{i}]{path}"
        ), messages


def test_the_null_namespace_error_says_what_is_expected() -> None:
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages([HumanMessage(content="hi", metadata={"openai_chat": None})])
    assert str(caught.value) == (
        "openai_chat: messages[0]: metadata.openai_chat must be an object, as to_messages "
        "writes it; got NoneType None [malformed_event]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    "content", ["a", "", [RefusalPart(text="no")], [TextPart(text="a"), RefusalPart(text="no")]],
    ids=["text", "empty", "refusal", "text-refusal"],
)
def test_a_null_refusal_spelling_is_refused(adapter: Any, content: Any) -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content=content, metadata={adapter.NAME: {"refusal": None}})]
    assert _refused(lambda: adapter.from_messages(messages)) == (
        "not_representable", 1, f"messages[1].metadata.{adapter.NAME}.refusal"
    )


def test_the_null_refusal_spelling_error_says_why() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content=[RefusalPart(text="no")],
                                                     metadata={"openai_chat": {"refusal": None}})]
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(messages)
    assert str(caught.value) == (
        "openai_chat: messages[1].metadata.openai_chat.refusal: the kept refusal spelling is "
        "null, which the reader never keeps (it keeps a spelling only for a refusal not "
        "written as content null + refusal): it would be lost [not_representable]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize("form", [None, "null", "absent"])
def test_a_content_form_beside_a_refusal_written_as_its_key_is_refused(
    adapter: Any, form: Any
) -> None:
    # content null + refusal reads back with no form: a kept one would be lost
    messages = [HumanMessage(content="q"), AIMessage(content=[RefusalPart(text="no")],
                                                     metadata={adapter.NAME: {"content": form}})]
    assert _refused(lambda: adapter.from_messages(messages)) == (
        "not_representable", 1, f"messages[1].metadata.{adapter.NAME}.content"
    )


def test_a_null_content_form_on_an_assistant_message_says_why() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content="a", metadata={"openai_chat": {"content": None}})]
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(messages)
    assert str(caught.value) == (
        "openai_chat: messages[1].metadata.openai_chat.content: an assistant message read from "
        "Chat Completions has no empty content of the kept form None [not_representable]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_the_kept_forms_the_reader_makes_are_still_written(adapter: Any) -> None:
    trace = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None},
             {"role": "user", "content": "r"}, {"role": "assistant", "refusal": "no"}]
    assert adapter.from_messages(adapter.to_messages(trace)) == trace


# --- 4. an SDK message set inside itself ------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_an_sdk_message_inside_itself_is_unserializable_where_it_is(adapter: Any) -> None:
    m = ChatCompletionMessage.model_validate({"role": "assistant", "content": "x"})
    m.annotations = [m]  # type: ignore[list-item]
    assert _refused(lambda: adapter.to_messages([{"role": "user", "content": "q"}, m])) == (
        "unserializable_value", 1, "messages[1].annotations[0]"
    )


def test_an_sdk_message_inside_itself_error_says_why() -> None:
    m = ChatCompletionMessage.model_validate({"role": "assistant", "content": "x"})
    m.annotations = [m]  # type: ignore[list-item]
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([{"role": "user", "content": "q"}, m])
    assert str(caught.value) == (
        "openai_chat: messages[1].annotations[0]: a ChatCompletionMessage set inside itself "
        "(after it was made): JSON has no form for an object inside itself "
        "[unserializable_value]"
    )


def test_sdk_messages_nested_past_the_depth_limit_are_unserializable() -> None:
    top = ChatCompletionMessage.model_validate({"role": "assistant", "content": "x"})
    inner = top
    for _ in range(200):
        nested = ChatCompletionMessage.model_validate({"role": "assistant", "content": "y"})
        inner.annotations = [nested]  # type: ignore[list-item]
        inner = nested
    code, index, path = _refused(
        lambda: openai_chat.to_messages([{"role": "user", "content": "q"}, top])
    )
    assert (code, index, path) == (
        "unserializable_value", 1, "messages[1]" + ".annotations[0]" * 128
    )


def test_the_same_annotation_object_twice_is_no_cycle() -> None:
    message = ChatCompletionMessage.model_validate({"role": "assistant", "content": "x",
        "annotations": [{"type": "url_citation", "url_citation":
                         {"url": "https://a", "title": "A", "start_index": 0, "end_index": 1}}]})
    message.annotations = [message.annotations[0], message.annotations[0]]  # type: ignore[index]
    typed = openai_chat.to_messages([{"role": "user", "content": "q"}, message])
    cited = Citation(url="https://a", title="A", start_index=0, end_index=1)
    assert typed == [HumanMessage(content="q"), AIMessage(content="x", citations=[cited, cited])]


# --- 5. values whose == has no truth value ---------------------------------------------------


def _array() -> Any:
    np = pytest.importorskip("numpy")
    return np.array(["user", "assistant"])


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_numpy_role_is_an_unknown_role(adapter: Any) -> None:
    trace = [{"role": _array(), "content": "hi"}]
    assert adapter.detect(trace) is False
    assert _refused(lambda: adapter.to_messages(trace)) == (
        "unknown_role", 0, "messages[0].role"
    )


def test_a_numpy_role_is_an_unknown_role_to_handoffs() -> None:
    trace = [{"role": _array(), "content": "hi"}]
    assert _refused(lambda: swarm.handoffs(trace)) == ("unknown_role", 0, "messages[0].role")


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("object", "array", ("unserializable_value", 1, "messages[1].object")),
        ("annotations", "array", ("malformed_event", 1, "messages[1].annotations")),
        ("annotations", "typed", ("unserializable_value", 1, "messages[1].annotations[0].type")),
        ("tool_calls", "array", ("malformed_event", 1, "messages[1].tool_calls")),
    ],
)
def test_numpy_values_where_the_reader_compares_are_refused(
    adapter: Any, key: str, value: str, expected: tuple[str, int, str]
) -> None:
    given = _array() if value == "array" else [{"type": _array()}]
    trace = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": "a", key: given}]
    assert _refused(lambda: adapter.to_messages(trace)) == expected


# --- 6. stored completions' messages ---------------------------------------------------------

PAGE = {"object": "list", "first_id": "chatcmpl-1-0", "last_id": "chatcmpl-1-1", "has_more": False,
        "data": [{"id": "chatcmpl-1-0", "role": "system", "content": "Be brief.", "name": None,
                  "content_parts": None},
                 {"id": "chatcmpl-1-1", "role": "user", "content": "Write a haiku", "name": None,
                  "content_parts": None}]}

TOOL_PAGE = {"object": "list", "first_id": "m0", "last_id": "m4", "has_more": False, "data": [
    {"id": "m0", "role": "developer", "content": "Be brief.", "name": None, "content_parts": None},
    {"id": "m1", "role": "user", "content": "Weather and a picture?", "name": "ann",
     "content_parts": [{"type": "text", "text": "Weather and a picture?"},
                       {"type": "image_url",
                        "image_url": {"url": "https://x/p.png", "detail": "low"}}]},
    {"id": "m2", "role": "assistant", "content": None, "refusal": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "w", "arguments": '{"c":"P"}'}}], "content_parts": None},
    {"id": "m3", "role": "tool", "content": "18 C", "tool_call_id": "call_1",
     "content_parts": None},
    {"id": "m4", "role": "assistant", "content": "18 C.", "refusal": None, "annotations": [],
     "content_parts": None},
]}


def _stored(page: dict[str, Any]) -> list[Any]:
    return list(_client(page).chat.completions.messages.list("chatcmpl-1"))


def test_stored_messages_are_read_as_their_dumps() -> None:
    stored = _stored(PAGE)
    assert [type(m).__name__ for m in stored] == ["ChatCompletionStoreMessage"] * 2
    assert openai_chat.detect(stored) is True
    assert openai_chat.to_messages(stored) == [
        SystemMessage(content="Be brief.", metadata={"openai_chat": {"fields": {
            "id": "chatcmpl-1-0", "content_parts": None, "name": None}}}),
        HumanMessage(content="Write a haiku", metadata={"openai_chat": {"fields": {
            "id": "chatcmpl-1-1", "content_parts": None, "name": None}}}),
    ]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_stored_messages_of_every_role_read_and_write_as_their_dumps(adapter: Any) -> None:
    stored = _stored(TOOL_PAGE)
    dumps = [m.model_dump(mode="json", exclude_unset=True) for m in stored]
    typed = adapter.to_messages(stored)
    assert [m.type for m in typed] == ["system", "human", "ai", "tool", "ai"]
    assert typed == adapter.to_messages(dumps)
    assert [m.model_dump_json() for m in typed] == [
        m.model_dump_json() for m in adapter.to_messages(dumps)
    ]
    assert adapter.from_messages(typed) == dumps


def test_a_changed_stored_message_is_refused_at_the_changed_field_not_its_role() -> None:
    stored = _stored(TOOL_PAGE)
    stored[1].name = float("nan")  # an extra field, set after it was made
    assert _refused(lambda: openai_chat.to_messages(stored)) == (
        "unserializable_value", 1, "messages[1].name"
    )


def test_a_stored_message_of_an_unknown_role_is_an_unknown_role() -> None:
    stored = _stored(PAGE)
    stored[0].role = "narrator"  # type: ignore[assignment]
    assert _refused(lambda: openai_chat.to_messages(stored)) == (
        "unknown_role", 0, "messages[0].role"
    )


def test_a_reply_whose_role_was_changed_is_still_refused() -> None:
    message = ChatCompletionMessage.model_validate({"role": "assistant", "content": "x"})
    message.role = "user"  # type: ignore[assignment]
    assert _refused(lambda: openai_chat.to_messages([message])) == (
        "malformed_event", 0, "messages[0].role"
    )
