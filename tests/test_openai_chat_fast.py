"""The fast paths of openai_chat/swarm give exactly what the general reader and writer give.

``_FastReader`` / ``_FastWriter`` take the common shapes (text content, function calls with
ids, null-valued keys) without the general code's bookkeeping and hand everything else back.
Whatever they take, the typed message (or the written dict) must equal the general path's,
and what they hand back must be what only the general path can judge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.openai_chat import _read, _write

from law_kits.openai_chat import respelled
from law_kits.openai_chat import traces as openai_traces
from law_kits.swarm import swarm_shaped
from strategies import conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
OPENAI = openai_chat.OPENAI
SWARM = swarm.SWARM


def _general_read(item: Any, dialect: Any, index: int) -> Any:
    try:
        return _read._Reader(dialect, index).message(item)
    except TraceError as error:
        return error.code


def _check_read(trace: list[Any], dialect: Any) -> int:
    """How many messages took the fast path; each equals the general reader's."""
    fast = _read._FastReader(dialect)
    taken = 0
    for i, item in enumerate(trace):
        copied = json.loads(json.dumps(item)) if isinstance(item, dict) else item
        read = fast.message(copied)
        if read is not None:
            taken += 1
            assert read == _general_read(copied, dialect, i), item
            assert copied == item  # the fast path leaves its input alone
    return taken


def test_the_fast_reader_takes_the_golden_messages_it_can_and_agrees() -> None:
    taken = 0
    for folder, dialect in (("openai_chat", OPENAI), ("swarm", SWARM)):
        for path in sorted((GOLDEN / folder).glob("*.json")):
            taken += _check_read(json.loads(path.read_text(encoding="utf-8"))["trace"], dialect)
    assert taken >= 50  # of 68


@given(trace=st.one_of(openai_traces(), respelled(openai_chat)))
def test_the_fast_reader_agrees_on_generated_traces(trace: list[Any]) -> None:
    _check_read(trace, OPENAI)


@given(trace=st.one_of(swarm_shaped(), respelled(swarm)))
def test_the_fast_reader_agrees_on_swarm_histories(trace: list[Any]) -> None:
    _check_read(trace, SWARM)


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": None},
        {"role": "user", "content": "hi", "name": 3},
        {"role": "user", "content": "hi", "x_extra": 1},
        {"role": "tool", "content": "r"},
        {"role": "tool", "content": "r", "tool_call_id": 7},
        {"role": "assistant", "content": 3},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "assistant", "content": "", "tool_calls": [{**CALL, "index": 0}]},
        {"role": "assistant", "content": "", "tool_calls": [{**CALL, "type": "custom"}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "{"}}],
        },
        {"role": "assistant", "content": "", "refusal": "no"},
        {"role": "assistant", "content": "", "annotations": [{"type": "url_citation"}]},
        {"role": "assistant", "content": "", "name": None, "x_extra": None},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        {"role": None, "content": "hi"},
        {"delta": {"content": "Hel"}},
        ["user", "hi"],
    ],
)
def test_the_fast_reader_hands_back_what_it_does_not_take(item: Any) -> None:
    assert _read._FastReader(OPENAI).message(item) is None


def _general_write(message: Any, dialect: Any, index: int) -> Any:
    try:
        return _write._OwnWriter(dialect, index, (), ()).message(message)
    except TraceError as error:
        return error.code


def test_the_fast_writer_takes_a_plain_conversation_and_agrees() -> None:
    # the property below passes for a fast writer that takes nothing: this one it must take
    messages = [
        HumanMessage(content="Weather in Paris?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")]),
        ToolMessage(content="18 C", tool_call_id="c1", name="get_weather"),
        AIMessage(content="18 C in Paris."),
    ]
    for dialect in (OPENAI, SWARM):
        fast = _write._FastWriter(dialect)
        for i, message in enumerate(messages):
            out = fast.message(message)
            assert out is not None
            assert out == _general_write(message, dialect, i)


@given(messages=conversations())
def test_the_fast_writer_agrees_on_generated_conversations(messages: list[Any]) -> None:
    for dialect in (OPENAI, SWARM):
        fast = _write._FastWriter(dialect)
        for i, message in enumerate(messages):
            out = fast.message(message)
            if out is not None:
                assert out == _general_write(message, dialect, i)


def test_the_fast_writer_agrees_on_what_it_read() -> None:
    taken = 0
    for folder, adapter in (("openai_chat", openai_chat), ("swarm", swarm)):
        dialect = OPENAI if adapter is openai_chat else SWARM
        fast = _write._FastWriter(dialect)
        for path in sorted((GOLDEN / folder).glob("*.json")):
            typed = adapter.to_messages(json.loads(path.read_text(encoding="utf-8"))["trace"])
            for i, message in enumerate(typed):
                out = fast.message(message)
                if out is not None:
                    taken += 1
                    assert out == _general_write(message, dialect, i)
    assert taken >= 50  # of 68


@pytest.mark.parametrize(
    "message",
    [
        ToolMessage(content="r", tool_call_id="c1", is_error=True),
        ToolMessage(content="r", name="f"),
        AIMessage(tool_calls=[ToolCall(name="f")]),
        AIMessage(tool_calls=[ToolCall(name="f", id="c1", invalid_args="{")]),
        AIMessage(tool_calls=[ToolCall(name="f", id="c1", args={"input": "x"}, kind="custom")]),
        AIMessage(content="", metadata={"openai_chat": {"content": "weird"}}),
        AIMessage(content="", metadata={"openai_chat": {"refusal": "absent"}}),
        AIMessage(content="", metadata={"openai_chat": {"fields": []}}),
        AIMessage(content="", metadata={"openai_chat": []}),
        HumanMessage(content="", metadata={"openai_chat": {"content": "null"}}),
    ],
)
def test_the_fast_writer_hands_back_what_it_does_not_take(message: Any) -> None:
    assert _write._FastWriter(OPENAI).message(message) is None


def test_a_kept_null_function_call_is_not_a_legacy_call() -> None:
    # A Swarm reply keeps "function_call": null; the results after its tool_calls still
    # need their ids.
    typed = swarm.to_messages(
        [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": "", "function_call": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ]
    )
    broken = [*typed[:2], typed[2].model_copy(update={"tool_call_id": None, "name": "f"})]
    with pytest.raises(TraceError) as caught:
        swarm.from_messages(broken)
    assert (caught.value.code, caught.value.path) == (
        "not_representable",
        "messages[2].tool_call_id",
    )


def test_the_collector_is_paused_only_while_a_trace_is_built() -> None:
    import gc

    trace = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert gc.isenabled()
    typed = openai_chat.to_messages(trace)
    assert gc.isenabled()
    assert openai_chat.from_messages(typed) == trace
    assert gc.isenabled()
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([{"role": "user", "content": 3}])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 0, "messages[0].content")
    assert gc.isenabled()
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages([ToolMessage(content="r", tool_call_id="c1", is_error=True)])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "orphan_tool_result", 0, "messages[0].tool_call_id")
    assert gc.isenabled()
    gc.disable()
    try:
        openai_chat.to_messages(trace)
        openai_chat.from_messages(typed)
        assert not gc.isenabled()  # the application's choice stays
    finally:
        gc.enable()


@pytest.mark.parametrize("arguments", ["{}", "", "{ }", '{"a": 1}', '{"a":1}'])
def test_a_call_without_parameters_reads_the_same_on_both_paths(arguments: str) -> None:
    call = {**CALL, "function": {"name": "f", "arguments": arguments}}
    for dialect in (OPENAI, SWARM):
        trace = [{"role": "assistant", "content": "", "tool_calls": [call]}]
        assert _check_read(trace, dialect) == 1


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(
    args=st.dictionaries(st.text(max_size=4), _JSON_VALUES, max_size=4),
    separators=st.sampled_from([(", ", ": "), (",", ":"), (", ", ":"), (",", ": ")]),
    ensure_ascii=st.booleans(),
)
def test_the_spelling_check_agrees_with_writing_the_arguments_out(
    args: dict[str, Any], separators: tuple[str, str], ensure_ascii: bool
) -> None:
    raw = json.dumps(args, separators=separators, ensure_ascii=ensure_ascii)
    parsed = _read.parse_arguments(raw)
    assert parsed is not None
    assert _read.spelled_as_dumps(parsed, raw) == (_read.dumps(parsed) == raw)
