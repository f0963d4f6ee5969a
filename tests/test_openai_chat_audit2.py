"""Second audit of the Chat Completions adapters (``openai_chat`` and ``swarm``, one reader
and writer in two dialects).

* The writer's output is the caller's: kept audio, citation and annotation values are copies,
  so editing what ``from_messages`` returned never changes the frozen typed messages.
* Kept metadata of an ``AudioReference``, a ``Citation`` or the annotations layout that the
  reader maps to typed data (or refuses) is ``not_representable`` at that key, as for messages,
  calls and parts: written, it invented a transcript, a title, a whole citation, or was dropped.
* Kept message fields the reader refuses the whole message for (a streaming chunk, a
  completion), and a kept ``content`` whatever its value, are ``not_representable``.
* ``swarm.handoffs`` takes a deeply nested JSON result as an ordinary result.
* The fast reader stores only exact ``str`` values (a ``str`` Enum role, call type or kept key
  goes through the general reader), and both readers give the same ``model_fields_set`` and
  metadata key order.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessage

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    MultiTurnSample,
    SystemMessage,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.openai_chat import _read

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
ADAPTERS = [openai_chat, swarm]
H = HumanMessage(content="hi")


def _reply(message: dict[str, Any]) -> ChatCompletionMessage:
    """The message of a completion the real SDK parsed (over a mock transport)."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4o-audio-preview",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
    }
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(
            lambda request: httpx.Response(200, json=body)
        )),
    )
    created = client.chat.completions.create(
        model="gpt-4o-audio-preview", messages=[{"role": "user", "content": "hi"}]
    )
    return created.choices[0].message


def _refused(adapter: Any, messages: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    return caught.value.code, caught.value.index, caught.value.path


def _read_refused(adapter: Any, trace: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(trace)
    return caught.value.code, caught.value.index, caught.value.path


# --- f1: the writer's output shares nothing with the typed messages -------------------------

SPOKEN = {
    "role": "assistant",
    "content": "See x.",
    "refusal": None,
    "audio": {
        "id": "audio_1",
        "data": "UklGRg==",
        "expires_at": 1767229200,
        "transcript": "See x.",
        "x_vendor": {"k": [1]},
    },
    "annotations": [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://x.org", "title": "X", "start_index": 0, "end_index": 3,
                "x_inner": {"a": 1},
            },
            "x_field": {"b": 2},
        },
        # OpenRouter's file annotation: kept verbatim in the annotations layout
        {"type": "file", "file": {"hash": "h", "name": "doc.pdf",
                                  "content": [{"type": "text", "text": "p1"}]}},
    ],
}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_kept_audio_citation_and_annotation_values_are_written_as_copies(adapter: Any) -> None:
    typed = adapter.to_messages([{"role": "user", "content": "hi"}, _reply(SPOKEN)])
    ns = adapter.NAME
    assert typed[1] == AIMessage(
        content="See x.",
        citations=[Citation(
            url="https://x.org", title="X", start_index=0, end_index=3,
            metadata={ns: {"inner": {"x_inner": {"a": 1}}, "fields": {"x_field": {"b": 2}}}},
        )],
        audio=AudioReference(
            id="audio_1", transcript="See x.", data="UklGRg==", expires_at=1767229200,
            metadata={ns: {"fields": {"x_vendor": {"k": [1]}}}},
        ),
        metadata={ns: {"annotations": [None, SPOKEN["annotations"][1]],  # type: ignore[index]
                       "fields": {"refusal": None}}},
    )
    before = typed[1].model_dump_json()
    out = adapter.from_messages(typed)
    assert out[1] == SPOKEN
    out[1]["audio"]["x_vendor"]["k"].append("EDIT")
    out[1]["annotations"][0]["url_citation"]["x_inner"]["a"] = "EDIT"
    out[1]["annotations"][0]["x_field"]["b"] = "EDIT"
    out[1]["annotations"][1]["file"]["name"] = "EDIT"
    out[1]["annotations"][1]["file"]["content"].clear()
    assert typed[1].model_dump_json() == before
    assert adapter.from_messages(typed)[1] == SPOKEN


# --- f2: kept audio / citation / layout metadata that would invent typed data ---------------


def _audio(fields: dict[str, Any], ns: str, **typed: Any) -> AIMessage:
    return AIMessage(content="x", audio=AudioReference(
        id="a1", **typed, metadata={ns: {"fields": fields}}
    ))


def _cited(kept: dict[str, Any], ns: str, **typed: Any) -> AIMessage:
    whole = {"url": "https://a.org", "title": "A", "start_index": 0, "end_index": 1}
    return AIMessage(content="x", citations=[Citation(
        **{**whole, **typed}, metadata={ns: kept}
    )])


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    ("build", "where"),
    [
        # read back as a transcript / expiry the reference never had
        (lambda ns: _audio({"transcript": "I never said this", "expires_at": 5}, ns),
         ".audio.metadata.{ns}.fields.transcript"),
        (lambda ns: _audio({"expires_at": 5}, ns), ".audio.metadata.{ns}.fields.expires_at"),
        (lambda ns: _audio({"data": "UklGRg=="}, ns), ".audio.metadata.{ns}.fields.data"),
        # beside the typed value: one of them would be lost (setdefault dropped the kept one)
        (lambda ns: _audio({"id": "other"}, ns), ".audio.metadata.{ns}.fields.id"),
        (lambda ns: _audio({"transcript": None}, ns, transcript="said"),
         ".audio.metadata.{ns}.fields.transcript"),
        # a citation's inner keys read back as a title / start index it never had
        (lambda ns: _cited({"inner": {"title": "Invented", "start_index": 0}}, ns),
         ".citations[0].metadata.{ns}.inner.title"),
        (lambda ns: _cited({"inner": {"end_index": 9}}, ns),
         ".citations[0].metadata.{ns}.inner.end_index"),
        (lambda ns: _cited({"inner": {"url": "https://b.org"}}, ns),
         ".citations[0].metadata.{ns}.inner.url"),
        # the annotation's own type and object: silently dropped before
        (lambda ns: _cited({"fields": {"type": "file_citation"}}, ns),
         ".citations[0].metadata.{ns}.fields.type"),
        (lambda ns: _cited({"fields": {"url_citation": {"url": "https://evil"}}}, ns),
         ".citations[0].metadata.{ns}.fields.url_citation"),
        # a layout entry that is a url_citation reads back as a citation the message lacks
        (lambda ns: AIMessage(content="x", metadata={ns: {"annotations": [
            {"type": "url_citation", "url_citation": {"url": "https://invented.org"}}]}}),
         ".metadata.{ns}.annotations[0]"),
        # a layout entry that is no annotation object: the reader refuses it
        (lambda ns: AIMessage(content="x", metadata={ns: {"annotations": [5]}}),
         ".metadata.{ns}.annotations[0]"),
        (lambda ns: AIMessage(content="x", citations=_cited({}, ns).citations,
                              metadata={ns: {"annotations": [None, "note"]}}),
         ".metadata.{ns}.annotations[1]"),
    ],
)
def test_kept_reply_metadata_the_reader_maps_is_not_representable(
    adapter: Any, build: Any, where: str
) -> None:
    message = build(adapter.NAME)
    assert _refused(adapter, [H, message]) == (
        "not_representable", 1, "messages[1]" + where.format(ns=adapter.NAME)
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_what_the_reader_keeps_of_audio_and_citations_still_reads_back_whole(
    adapter: Any,
) -> None:
    """Nulls and unknown keys the reader keeps are written back as they were, as copies."""
    item = {
        "role": "assistant",
        "content": "x",
        "audio": {"id": "a1", "transcript": None, "expires_at": None, "x": [1]},
        "annotations": [
            {"type": "file_citation", "file_citation": {"file_id": "f1"}},
            {"type": "url_citation", "url_citation": {"url": "https://a.org", "title": None},
             "x": {"y": 1}},
        ],
    }
    ns = adapter.NAME
    typed = adapter.to_messages([{"role": "user", "content": "hi"}, item])
    assert typed[1] == AIMessage(
        content="x",
        audio=AudioReference(
            id="a1", metadata={ns: {"fields": {"transcript": None, "expires_at": None, "x": [1]}}}
        ),
        citations=[Citation(url="https://a.org", metadata={
            ns: {"absent": ["start_index", "end_index"], "inner": {"title": None},
                 "fields": {"x": {"y": 1}}}
        })],
        metadata={ns: {"annotations": [item["annotations"][0], None]}},  # type: ignore[index]
    )
    out = adapter.from_messages(typed)
    assert out[1] == item
    out[1]["audio"]["x"].append(2)
    out[1]["annotations"][0]["file_citation"]["file_id"] = "EDIT"
    out[1]["annotations"][1]["x"]["y"] = 2
    assert adapter.from_messages(typed)[1] == item


# --- f3: handoffs() and deeply nested JSON results ------------------------------------------

DEEP = "[" * 1000 + "]" * 1000


def test_a_deeply_nested_json_result_is_not_a_handoff() -> None:
    history = [
        {"role": "user", "content": "Dump the tree, then pass me to billing."},
        {"role": "assistant", "content": "", "sender": "Triage", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "dump_tree", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "dump_tree", "content": DEEP},
        {"role": "assistant", "content": "Here it is.", "sender": "Triage", "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "transfer_to_billing", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "tool_name": "transfer_to_billing",
         "content": '{"assistant": "Billing Agent"}'},
        {"role": "assistant", "content": "Billing here.", "sender": "Billing Agent"},
    ]
    typed = swarm.to_messages(history)
    assert typed[2] == ToolMessage(content=DEEP, tool_call_id="c1", name="dump_tree")
    expected = [swarm.Handoff(index=4, from_agent="Triage", to_agent="Billing Agent")]
    assert swarm.handoffs(typed) == expected
    assert swarm.handoffs(history) == expected
    assert swarm.handoffs(history[:3]) == []


# --- f4 / f5: the fast reader stores and accepts only exact strings -------------------------


class Role(str, enum.Enum):
    system = "system"
    developer = "developer"
    user = "user"


class ToolType(str, enum.Enum):
    function = "function"


class Key(str):
    pass


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_str_enum_role_is_stored_as_the_plain_string(adapter: Any) -> None:
    trace = [
        {"role": Role.developer, "content": "Answer in French."},
        {"role": Role.system, "content": "Be brief.", "name": "ops"},
        {"role": Role.user, "content": "Hi"},
    ]
    typed = adapter.to_messages(trace)
    assert typed == [
        SystemMessage(content="Answer in French.", role="developer"),
        SystemMessage(content="Be brief.", name="ops"),
        HumanMessage(content="Hi"),
    ]
    assert [type(m.role) for m in typed[:2]] == [str, str]  # type: ignore[union-attr]
    assert typed[0].model_fields_set == {"content", "role"}
    assert typed[1].model_fields_set == {"content", "name"}
    assert MultiTurnSample(messages=typed).pretty_repr() == (
        "[0] developer: Answer in French.\n[1] system (ops): Be brief.\n[2] human: Hi"
    )
    written = adapter.from_messages(typed)
    assert written == [{"role": "developer", "content": "Answer in French."},
                       {"role": "system", "content": "Be brief.", "name": "ops"},
                       {"role": "user", "content": "Hi"}]
    assert [type(m["role"]) for m in written] == [str, str, str]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_str_enum_call_type_is_refused_on_every_path(adapter: Any) -> None:
    call = {"id": "c1", "type": ToolType.function,
            "function": {"name": "f", "arguments": '{"a": 1}'}}
    user = {"role": "user", "content": "go"}
    result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    expected = ("malformed_event", 1, "messages[1].tool_calls[0].type")
    for assistant in (
        {"role": "assistant", "content": None, "tool_calls": [call]},  # the fast shape
        {"role": "assistant", "content": "", "refusal": "", "tool_calls": [call]},  # general
    ):
        assert _read_refused(adapter, [user, assistant, result]) == expected


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize("key", ["refusal", "audio", "annotations", "function_call", "tool_calls"])
def test_a_str_subclass_key_with_a_null_value_is_refused_on_every_path(
    adapter: Any, key: str
) -> None:
    user = {"role": "user", "content": "go"}
    expected = ("unserializable_value", 1, "messages[1]")
    for assistant in (
        {"role": "assistant", "content": "hi", Key(key): None},  # the fast shape
        {"role": "assistant", "content": "hi", Key(key): None, "x": 1},  # general
    ):
        assert _read_refused(adapter, [user, assistant]) == expected


# --- f6: kept message fields the reader refuses the message for ------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    ("build", "key"),
    [
        (lambda ns: AIMessage(content="hello", metadata={ns: {"fields": {
            "delta": {"content": "x"}}}}), "delta"),
        (lambda ns: AIMessage(content="hello", metadata={ns: {"fields": {
            "object": "chat.completion.chunk"}}}), "object"),
        (lambda ns: HumanMessage(content="hello", metadata={ns: {"fields": {
            "choices": []}}}), "choices"),
        (lambda ns: HumanMessage(content="hello", metadata={ns: {"fields": {
            "tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}}}), "tool_calls"),
        # content: null would read back as the "null" form, not as "absent" + a kept null
        (lambda ns: AIMessage(content="", metadata={ns: {
            "content": "absent", "fields": {"content": None}}}), "content"),
    ],
)
def test_kept_fields_the_reader_refuses_or_maps_are_not_representable(
    adapter: Any, build: Any, key: str
) -> None:
    assert _refused(adapter, [H, build(adapter.NAME)]) == (
        "not_representable", 1, f"messages[1].metadata.{adapter.NAME}.fields.{key}"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_kept_object_of_a_whole_message_still_reads_back_beside_a_refused_chunk(
    adapter: Any,
) -> None:
    """``object: "chat.completion.chunk"`` is refused; another ``object`` is kept as ever."""
    ns = adapter.NAME
    chunk = AIMessage(content="hello", metadata={ns: {"fields": {
        "object": "chat.completion.chunk"}}})
    assert _refused(adapter, [H, chunk])[0] == "not_representable"
    item = {"role": "assistant", "content": "hello", "object": "chat.completion.message"}
    typed = adapter.to_messages([{"role": "user", "content": "hi"}, item])
    assert typed[1] == AIMessage(
        content="hello", metadata={ns: {"fields": {"object": "chat.completion.message"}}}
    )
    assert adapter.from_messages(typed)[1] == item


# --- f8: the fast and general readers give the same fields set and key order ----------------


def _shape(message: Any) -> tuple[Any, ...]:
    calls = getattr(message, "tool_calls", [])
    return (
        message.model_fields_set,
        [call.model_fields_set for call in calls],
        message.model_dump_json(),
    )


@pytest.mark.parametrize(
    ("item", "fields_set"),
    [
        ({"role": "user", "content": "hi"}, {"content"}),
        ({"role": "developer", "content": "be brief"}, {"content", "role"}),
        ({"role": "system", "content": "be brief", "name": "ops"}, {"content", "name"}),
        ({"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"content", "tool_call_id"}),
        ({"role": "assistant", "annotations": [], "content": None}, {"content", "metadata"}),
        ({"role": "assistant", "content": None, "refusal": None, "annotations": [],
          "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "f", "arguments": "{}"}}]},
         {"content", "tool_calls", "metadata"}),
    ],
)
def test_both_readers_give_the_same_fields_set_and_key_order(
    item: dict[str, Any], fields_set: set[str]
) -> None:
    fast = _read._FastReader(openai_chat.OPENAI).message(dict(item))
    general = _read._Reader(openai_chat.OPENAI, 0).message(dict(item))
    assert fast is not None
    assert fast == general
    assert fast.model_fields_set == general.model_fields_set == fields_set
    assert _shape(fast) == _shape(general)


def test_the_general_reader_passes_only_what_differs_from_the_defaults() -> None:
    read = _read._Reader(openai_chat.OPENAI, 0).message
    assert read({"role": "user", "content": "hi", "x": 1}).model_fields_set == {
        "content", "metadata"
    }
    message = read({"role": "assistant", "content": "", "refusal": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    assert message.model_fields_set == {"content", "tool_calls"}
    assert message.tool_calls == [ToolCall(name="f", id="c1")]
    assert message.tool_calls[0].model_fields_set == {"name", "id"}  # type: ignore[union-attr]


def test_the_fast_reader_agrees_on_fields_set_and_json_over_the_golden_traces() -> None:
    taken = 0
    for folder, dialect in (("openai_chat", openai_chat.OPENAI), ("swarm", swarm.SWARM)):
        fast = _read._FastReader(dialect)
        for path in sorted((GOLDEN / folder).glob("*.json")):
            for i, item in enumerate(json.loads(path.read_text(encoding="utf-8"))["trace"]):
                if not isinstance(item, dict):
                    continue
                read = fast.message(json.loads(json.dumps(item)))
                if read is None:
                    continue
                taken += 1
                general = _read._Reader(dialect, i).message(json.loads(json.dumps(item)))
                assert _shape(read) == _shape(general), (path.name, i)
    assert taken >= 50
