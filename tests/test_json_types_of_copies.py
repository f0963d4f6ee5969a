"""A call's arguments agree with another copy of them only when they are the same JSON,
types included.

``1``, ``1.0`` and ``true`` are three arguments to a tool, though Python's ``==`` takes them
for one. LangChain: a raw provider call (``additional_kwargs["tool_calls"]``) or a ``tool_use``
block whose arguments differ from ``tool_calls`` only so is ``conflicting_fields`` on reading,
on the fast path (a plain ``AIMessage``) and the general one alike. LlamaIndex: so is an
``additional_kwargs["tool_calls"]`` entry against its ``ToolCallBlock``. And a typed call
edited only so has its kept copy (LangChain's raw call, the argument text a LlamaIndex block
or an OpenTelemetry span recorded) rewritten by the writer, so that what is written says the
edited call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock

import tracebridge as tb
from tracebridge import TraceError, transcript_hash
from tracebridge.adapters import langchain, llama_index, otel
from tracebridge.cli import to_json

# (typed args, the raw copy's argument text): equal in Python, different as JSON
DIFFERENT_TYPES = [
    pytest.param({"a": True}, '{"a": 1}', id="true-vs-1"),
    pytest.param({"a": 1}, '{"a": 1.0}', id="1-vs-1.0"),
    pytest.param({"a": 1.0}, '{"a": 1}', id="1.0-vs-1"),
    pytest.param({"a": [0]}, '{"a": [false]}', id="nested-0-vs-false"),
]

# the plain message takes the fast path; response metadata sends it the general way
PATHS = [pytest.param({}, id="fast"), pytest.param({"response_metadata": {"x": 1}}, id="general")]


def _conversation(ai: AIMessage) -> list[Any]:
    return [HumanMessage("hi"), ai, ToolMessage("ok", tool_call_id="c1")]


def _with_raw(args: dict[str, Any], text: str, **extra: Any) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "f", "args": args, "id": "c1"}],
        additional_kwargs={"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}},
        ]},
        **extra,
    )


@pytest.mark.parametrize("extra", PATHS)
@pytest.mark.parametrize(("args", "text"), DIFFERENT_TYPES)
def test_a_raw_call_whose_arguments_differ_in_json_type_is_a_stale_copy(
    args: dict[str, Any], text: str, extra: dict[str, Any]
) -> None:
    # other arguments than its call's (by id): the call is read from tool_calls, the raw call
    # kept as it is and marked stale, so the way back writes it exactly
    trace = _conversation(_with_raw(args, text, **extra))
    [_, ai, _] = langchain.to_messages(trace)
    assert isinstance(ai, tb.AIMessage)
    assert json.dumps(ai.tool_calls[0].args) == json.dumps(args)
    assert ai.tool_calls[0].metadata == {"langchain": {"stale": ["additional_kwargs.tool_calls"]}}
    assert messages_to_dict(langchain.from_messages(langchain.to_messages(trace))) == (
        messages_to_dict(trace))


@pytest.mark.parametrize("extra", PATHS)
def test_a_raw_call_spelled_otherwise_but_the_same_json_is_read(extra: dict[str, Any]) -> None:
    [_, ai, _] = langchain.to_messages(
        _conversation(_with_raw({"a": 1, "b": [True]}, '{"a":1,"b":[true]}', **extra)))
    assert isinstance(ai, tb.AIMessage)
    assert ai.tool_calls[0].args == {"a": 1, "b": [True]}
    assert type(ai.tool_calls[0].args["a"]) is int


def test_a_tool_use_block_whose_input_differs_in_json_type_is_a_stale_copy() -> None:
    ai = AIMessage(content=[{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}],
                   tool_calls=[{"name": "f", "args": {"a": True}, "id": "c1"}])
    [_, typed, _] = langchain.to_messages(_conversation(ai))
    assert isinstance(typed, tb.AIMessage)
    assert typed.tool_calls[0].args == {"a": True}
    assert typed.tool_calls[0].metadata["langchain"]["stale"] == ["content"]
    assert typed.tool_calls[0].metadata["langchain"]["content_block"]["block"]["input"] == {"a": 1}
    assert messages_to_dict(langchain.from_messages(langchain.to_messages(_conversation(ai)))) == (
        messages_to_dict(_conversation(ai)))


@pytest.mark.parametrize(("new", "text"), [
    ({"a": True}, '{"a": true}'),
    ({"a": 1.0}, '{"a": 1.0}'),
])
def test_an_edit_that_changes_only_a_json_type_rewrites_the_kept_raw_call(
    new: dict[str, Any], text: str
) -> None:
    typed = langchain.to_messages(_conversation(_with_raw({"a": 1}, '{"a": 1}')))
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    call = ai.tool_calls[0].model_copy(update={"args": new})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), typed[2]]
    written = langchain.from_messages(edited)
    assert written[1].additional_kwargs == {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}},
    ]}
    assert written[1].tool_calls == [{"name": "f", "args": new, "id": "c1", "type": "tool_call"}]
    assert transcript_hash(langchain.to_messages(written)) == transcript_hash(edited)


def _llama_history(kwargs: dict[str, Any], text: str) -> list[ChatMessage]:
    entry = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}}
    return [
        ChatMessage(role=MessageRole.USER, content="hi"),
        ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": [entry]},
                    blocks=[ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs=kwargs)]),
        ChatMessage(role=MessageRole.TOOL, content="ok", additional_kwargs={"tool_call_id": "c1"}),
    ]


@pytest.mark.parametrize("as_dumps", [False, True], ids=["objects", "dumps"])
@pytest.mark.parametrize(("args", "text"), DIFFERENT_TYPES)
def test_a_llama_index_entry_whose_arguments_differ_in_json_type_from_its_block_conflicts(
    args: dict[str, Any], text: str, as_dumps: bool
) -> None:
    history: list[Any] = _llama_history(args, text)
    if as_dumps:
        history = [m.model_dump(mode="json") for m in history]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls[0]")


def _edited_call(messages: list[tb.Message], i: int, args: dict[str, Any]) -> list[tb.Message]:
    ai = messages[i]
    assert isinstance(ai, tb.AIMessage)
    call = ai.tool_calls[0].model_copy(update={"args": args})
    return [*messages[:i], ai.model_copy(update={"tool_calls": [call]}), *messages[i + 1 :]]


def test_a_llama_index_block_whose_kept_text_no_longer_says_the_edited_call_is_rewritten() -> None:
    history = _llama_history({}, "")
    history[1].blocks = [ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs='{"a":1}')]
    history[1].additional_kwargs = {}
    typed = llama_index.to_messages(history)
    assert typed[1].tool_calls[0].args == {"a": 1}  # type: ignore[union-attr]
    edited = _edited_call(typed, 1, {"a": True})
    written = llama_index.from_messages(edited)
    [block] = written[1].blocks
    assert (block.tool_kwargs, type(block.tool_kwargs["a"])) == ({"a": True}, bool)
    assert transcript_hash(llama_index.to_messages(written)) == transcript_hash(edited)


def test_an_otel_argument_text_that_no_longer_says_the_edited_call_is_rewritten() -> None:
    typed = [tb.HumanMessage(content="hi"),
             tb.AIMessage(tool_calls=[tb.ToolCall(name="f", args={"a": 1}, id="c1")]),
             tb.ToolMessage(content="ok", tool_call_id="c1")]
    spans = json.loads(json.dumps(to_json("otel", otel.from_messages(typed))))
    [span] = [s for s in spans["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] == "chat"]
    [recorded] = [a["value"] for a in span["attributes"] if a["key"] == "gen_ai.output.messages"]
    [answer] = json.loads(recorded["stringValue"])
    assert answer["parts"][0]["arguments"] == {"a": 1}
    answer["parts"][0]["arguments"] = '{"a":1}'  # recorded as text, spelled its own way
    recorded["stringValue"] = json.dumps([answer])
    text = json.dumps(spans)
    read = otel.to_messages(json.loads(text))
    assert read[1].tool_calls[0].metadata == {"otel": {"arguments": '{"a":1}'}}  # type: ignore[union-attr]
    edited = _edited_call(read, 1, {"a": True})
    again = otel.to_messages(json.loads(json.dumps(to_json("otel", otel.from_messages(edited)))))
    assert again[1].tool_calls[0].args == {"a": True}  # type: ignore[union-attr]
    assert transcript_hash(again) == transcript_hash(edited)


@pytest.mark.parametrize(("left", "right", "same"), [
    ({"a": 1, "b": ["x", None]}, {"b": ["x", None], "a": 1}, True),  # key order is no matter
    ({"a": 1}, {"a": True}, False),
    ({"a": 1}, {"a": 1.0}, False),
    ({"a": [0, {"b": 2}]}, {"a": [0, {"b": 2.0}]}, False),
    ({"a": [0]}, {"a": [False]}, False),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ({}, None, False),
    ((1, "x"), (1, "x"), True),
    ((1,), (True,), False),
])
def test_same_json_tells_json_types_apart(left: Any, right: Any, same: bool) -> None:
    from tracebridge._json import same_json

    assert same_json(left, right) is same
    assert same_json(right, left) is same
