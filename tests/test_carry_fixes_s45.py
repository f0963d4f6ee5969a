"""Converting between the two adapters of one format, and the order of the Agents writer's
refusals.

* ``openai_chat`` and ``swarm`` read the same Chat Completions messages (Swarm's names in
  ``sender`` and ``tool_name``): ``convert`` between them carries the source's namespace over
  as the target's, so what both hold comes back as it was read: a kept ``input_audio`` format,
  an image ``detail`` only the reader keeps, an unknown part, ``reasoning_content``, unknown
  message keys. A kept key the target reads as a typed name is refused at the key.
* ``openai_agents.from_messages`` reports faults as ``openai_responses`` does: the
  conversation rules first, then the refusals in message order, an agent name at its own
  message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from hypothesis import given, settings
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    AudioReference,
    HumanMessage,
    ImagePart,
    Message,
    ToolMessage,
    TraceError,
    convert,
)
from tracebridge.adapters import openai_agents, openai_chat, openai_responses, swarm
from tracebridge.registry import SAME_ITEMS, carried

from law_kits.openai_chat import expressible
from strategies import json_values

ROOT = Path(__file__).resolve().parents[1]
PAIR = [("openai_chat", "swarm"), ("swarm", "openai_chat")]


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return (error.code, error.index, error.path)


def _refused(call: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call()
    return caught.value


# --- openai_chat <-> swarm: what both hold converts whole ----------------------------------

_USER = {"role": "user", "content": "hi"}
_OK = {"role": "assistant", "content": "ok"}

WHOLE = {
    "ogg audio": [
        {"role": "user", "content": [
            {"type": "text", "text": "hi"},
            {"type": "input_audio", "input_audio": {"data": "aGVsbG8=", "format": "ogg"}}]},
        _OK,
    ],
    "reasoning_content": [
        _USER, {"role": "assistant", "content": "ok", "reasoning_content": "thinking..."}],
    "reasoning": [_USER, {"role": "assistant", "content": "ok", "reasoning": "thinking..."}],
    "unknown message key": [{"role": "user", "content": "hi", "x_trace": 7}, _OK],
    "image detail very_high": [
        {"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "very_high"}}]},
        _OK,
    ],
    "opaque part": [
        {"role": "user", "content": [{"type": "mystery", "mystery": {"a": [1, None]}}]}, _OK],
    "unknown keys of a call": [
        _USER,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "x_call": 1,
             "function": {"name": "f", "arguments": "{ }", "x_inner": True}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ],
    "citation's unknown keys": [
        _USER,
        {"role": "assistant", "content": "ok", "annotations": [
            {"type": "url_citation", "url_citation": {
                "url": "https://x", "title": "T", "start_index": 0, "end_index": 2, "z": 1}}]},
    ],
    "audio reply's unknown keys": [
        _USER, {"role": "assistant", "content": None, "audio": {"id": "audio_1", "z": [2]}}],
    "nulls": [
        _USER,
        {"role": "assistant", "content": "ok", "refusal": None, "audio": None,
         "annotations": [], "tool_calls": None, "function_call": None}],
    "stored parts": [
        _USER,
        {"role": "assistant", "content": "ok",
         "content_parts": [{"type": "text", "text": "ok"}]}],
    "null sender and tool_name": [
        _USER,
        {"role": "assistant", "content": None, "sender": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r", "tool_name": None},
    ],
    "a user's name": [{"role": "user", "content": "hi", "name": "bob"}, _OK],
}


@pytest.mark.parametrize(("source", "target"), PAIR)
@pytest.mark.parametrize("label", sorted(WHOLE))
def test_what_both_hold_converts_as_it_was_read(label: str, source: str, target: str) -> None:
    trace = WHOLE[label]
    assert convert(trace, source=source, target=target) == trace


def test_the_report_case_ogg_audio_is_written_to_swarm_as_read() -> None:
    written = convert(WHOLE["ogg audio"], source="openai_chat", target="swarm")
    assert written == [
        {"role": "user", "content": [
            {"type": "text", "text": "hi"},
            {"type": "input_audio", "input_audio": {"data": "aGVsbG8=", "format": "ogg"}}]},
        {"role": "assistant", "content": "ok"},
    ]


def test_the_report_case_unknown_key_is_not_left_out() -> None:
    assert convert(WHOLE["unknown message key"], source="openai_chat", target="swarm") == [
        {"role": "user", "content": "hi", "x_trace": 7},
        {"role": "assistant", "content": "ok"},
    ]
    assert convert(WHOLE["unknown message key"], source="swarm", target="openai_chat") == [
        {"role": "user", "content": "hi", "x_trace": 7},
        {"role": "assistant", "content": "ok"},
    ]


_CALLED = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


def test_names_move_between_name_and_sender_or_tool_name() -> None:
    chat = [_USER, {**_CALLED, "name": "Front"},
            {"role": "tool", "tool_call_id": "c1", "content": "r", "name": "f", "x": 1},
            {"role": "assistant", "content": "done", "name": "Front", "x_trace": [1]}]
    history = [_USER, {**_CALLED, "sender": "Front"},
               {"role": "tool", "tool_call_id": "c1", "content": "r", "tool_name": "f", "x": 1},
               {"role": "assistant", "content": "done", "sender": "Front", "x_trace": [1]}]
    assert convert(chat, source="openai_chat", target="swarm") == history
    assert convert(history, source="swarm", target="openai_chat") == chat


NAME_KEYS = {
    # (trace, source): the kept key the target reads as the typed name
    "swarm assistant name": (
        [_USER, {"role": "assistant", "content": "x", "name": "n"}], "swarm",
        ("not_representable", 1, "messages[1].metadata.openai_chat.fields.name")),
    "swarm assistant name beside sender": (
        [_USER, {"role": "assistant", "content": "x", "sender": "A", "name": "n"}], "swarm",
        ("not_representable", 1, "messages[1].metadata.openai_chat.fields.name")),
    "swarm tool name": (
        [_USER, _CALLED, {"role": "tool", "tool_call_id": "c1", "content": "r", "name": "g"}],
        "swarm", ("not_representable", 2, "messages[2].metadata.openai_chat.fields.name")),
    "chat sender": (
        [_USER, {"role": "assistant", "content": "x", "sender": "S"}], "openai_chat",
        ("not_representable", 1, "messages[1].metadata.swarm.fields.sender")),
    "chat tool_name": (
        [_USER, _CALLED, {"role": "tool", "tool_call_id": "c1", "content": "r", "tool_name": "f"}],
        "openai_chat", ("not_representable", 2, "messages[2].metadata.swarm.fields.tool_name")),
}


@pytest.mark.parametrize("label", sorted(NAME_KEYS))
def test_a_kept_key_the_target_reads_as_a_name_is_refused(label: str) -> None:
    trace, source, where = NAME_KEYS[label]
    target = SAME_ITEMS[source]
    error = _refused(lambda: convert(trace, source=source, target=target))
    assert _where(error) == where
    assert error.source == target
    key = where[2].rsplit(".", 1)[1]
    assert error.detail.startswith(f"the kept key {key!r} ")


@pytest.mark.parametrize(("source", "target"), PAIR)
def test_the_command_line_carries_the_namespace_too(source: str, target: str) -> None:
    trace = WHOLE["reasoning_content"] + [{"role": "user", "content": "more", "x_trace": 7}]
    code, out, err = run("convert", "--from", source, "--to", target, "-",
                         stdin=json.dumps(trace))
    assert (code, json.loads(out), err) == (0, trace, "")


def test_the_pair_is_listed_both_ways() -> None:
    assert SAME_ITEMS == {
        "openai_responses": "openai_agents",
        "openai_agents": "openai_responses",
        "openai_chat": "swarm",
        "swarm": "openai_chat",
    }


def test_carried_renames_every_holder_of_the_namespace() -> None:
    read = openai_chat.to_messages(WHOLE["ogg audio"] + [
        {"role": "assistant", "content": "ok", "reasoning_content": "t", "x": 1}])
    moved = carried(read, "openai_chat", "swarm")
    assert moved[0].content[1].metadata == {"swarm": {"format": "ogg"}}
    assert moved[2].metadata == {"swarm": {"fields": {"x": 1}}}
    assert moved[2].content[0].metadata == swarm.to_messages(
        [{"role": "assistant", "content": "ok", "reasoning_content": "t"}])[0].content[0].metadata
    assert carried(moved, "swarm", "openai_chat") == read


def test_a_target_namespace_already_there_is_not_replaced() -> None:
    message = HumanMessage(content="hi", metadata={"openai_chat": {"fields": {"a": 1}},
                                                   "swarm": {"fields": {"b": 2}}})
    assert carried([message], "openai_chat", "swarm")[0] is message


# --- golden traces: there and back ---------------------------------------------------------

GOLDEN = sorted(
    path for name in ("openai_chat", "swarm")
    for path in (ROOT / "golden_traces" / name).glob("*.json")
)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_golden_trace_converts_to_the_other_and_back_whole(path: Path) -> None:
    source = path.parent.name
    target = SAME_ITEMS[source]
    trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
    there = convert(trace, source=source, target=target)
    assert convert(there, source=target, target=source) == trace
    if source == "openai_chat":  # a chat golden trace names no agent: swarm writes it as it is
        assert there == trace


def test_the_golden_traces_are_there() -> None:
    assert {p.parent.name for p in GOLDEN} == {"openai_chat", "swarm"}
    assert len(GOLDEN) >= 16


# --- generated histories with kept keys: there and back -------------------------------------

# What both adapters spell: the Chat kit's conversations (in each role the parts the API takes
# there, the rest kept verbatim, refusal and reasoning spellings, legacy function calls), with
# their namespace named for each source. Before, a conversation of any parts in any role
# (``conversations()``) was refused by a writer three times in four, and that draw discarded.
_HISTORIES = expressible(openai_chat.NAME)


def _in_namespace(value: Any, name: str) -> Any:
    """``value`` (a message's JSON form) with the Chat namespace renamed ``name``, wherever it
    is: the message's metadata, its parts', its citations'."""
    if isinstance(value, list):
        return [_in_namespace(item, name) for item in value]
    if isinstance(value, dict):
        return {name if key == openai_chat.NAME else key: _in_namespace(item, name)
                for key, item in value.items()}
    return value


def _for(source: str, messages: list[Message]) -> list[Message]:
    if source == openai_chat.NAME:
        return messages
    return [type(m).model_validate(_in_namespace(m.model_dump(mode="json"), source))
            for m in messages]


_EXTRA_PARTS = [
    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "flac"}},
    {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "ultra"}},
    {"type": "mystery", "mystery": {"k": "v"}},
]


@st.composite
def _kept(draw: st.DrawFn, written: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``written`` with what the reader keeps verbatim added: unknown keys, an assistant's
    reasoning text (where none is written), a user's parts in a format or detail the API does
    not take."""
    out = []
    for message in written:
        message = dict(message)
        if draw(st.booleans()):
            message[f"x_{draw(st.integers(0, 3))}"] = draw(json_values)
        reasoned = "reasoning_content" in message or "reasoning" in message
        if message["role"] == "assistant" and not reasoned and draw(st.booleans()):
            # (not beside a written reasoning: two keys with other texts are refused)
            message["reasoning_content"] = draw(st.text(max_size=8))
        if message["role"] == "user" and draw(st.booleans()):
            given = message["content"]
            parts = given if isinstance(given, list) else [{"type": "text", "text": given}]
            message["content"] = [*parts, draw(st.sampled_from(_EXTRA_PARTS))]
        out.append(message)
    return out


def _written(adapter: Any, messages: list[Message]) -> list[dict[str, Any]]:
    # Both formats spell every such conversation: a refusal fails the test (no draw is
    # thrown away).
    return adapter.from_messages(messages, drop=adapter.DROPPABLE)  # type: ignore[no-any-return]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), messages=_HISTORIES)
def test_a_generated_history_converts_to_the_other_and_back(
    data: st.DataObject, messages: list[Message]
) -> None:
    for source, target in PAIR:
        adapter = openai_chat if source == "openai_chat" else swarm
        trace = data.draw(_kept(_written(adapter, _for(source, messages))))
        there = convert(trace, source=source, target=target)
        assert convert(there, source=target, target=source) == trace


# --- openai_agents: refusals in the order openai_responses gives them ----------------------

ORDER = {
    "orphan result before an agent name": (
        [HumanMessage(content="hi"), ToolMessage(content="r", tool_call_id="zz"),
         AIMessage(content="ok", name="bot")],
        ("orphan_tool_result", 1, "messages[1].tool_call_id")),
    "orphan result after an agent name": (
        [HumanMessage(content="hi"), AIMessage(content="ok", name="bot"),
         ToolMessage(content="r", tool_call_id="zz")],
        ("orphan_tool_result", 2, "messages[2].tool_call_id")),
    "a person's name before an agent name": (
        [HumanMessage(content="hi", name="bob"), AIMessage(content="ok", name="agent1")],
        ("not_representable", 0, "messages[0].name")),
    "an image's mime type before an agent name": (
        [HumanMessage(content=[ImagePart(url="https://x/i.png", mime_type="image/png")]),
         AIMessage(content="ok", name="agent1")],
        ("not_representable", 0, "messages[0].content[0]")),
}


@pytest.mark.parametrize("label", sorted(ORDER))
def test_agents_reports_the_fault_responses_reports(label: str) -> None:
    messages, where = ORDER[label]
    agents = _refused(lambda: openai_agents.from_messages(messages))
    responses = _refused(lambda: openai_responses.from_messages(messages))
    assert _where(agents) == where == _where(responses)
    assert agents.source == "openai_agents"


_NAME_REFUSAL = (
    "the agent name 'agent1': Responses input items have no place for it (Runner.run gets the "
    "agent from its first argument); drop_names=True leaves names out"
)

NAME_FIRST = {
    "alone": [HumanMessage(content="hi"), AIMessage(content="ok", name="agent1")],
    "before a person's name": [HumanMessage(content="hi"), AIMessage(content="ok", name="agent1"),
                               HumanMessage(content="more", name="bob")],
    "before its own audio reply": [
        HumanMessage(content="hi"),
        AIMessage(content="ok", name="agent1", audio=AudioReference(id="audio_1"))],
    "before a second agent's": [HumanMessage(content="hi"), AIMessage(content="ok", name="agent1"),
                                HumanMessage(content="more"), AIMessage(content="b", name="two")],
}


@pytest.mark.parametrize("label", sorted(NAME_FIRST))
def test_an_agent_name_is_refused_at_its_own_message(label: str) -> None:
    error = _refused(lambda: openai_agents.from_messages(NAME_FIRST[label]))
    assert _where(error) == ("not_representable", 1, "messages[1].name")
    assert error.detail == _NAME_REFUSAL
    assert error.source == "openai_agents"


def test_drop_names_still_writes_the_items_without_names() -> None:
    messages = NAME_FIRST["before a second agent's"]
    assert openai_agents.from_messages(messages, drop_names=True) == openai_responses.from_messages(
        messages, drop_names=True)
    assert openai_agents.from_messages(messages, drop_names=True) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": "b"},
    ]
