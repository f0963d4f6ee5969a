"""The fast paths of the Galtea adapter give exactly what the general reader and writer give.

``_read.plain_turns`` reads the leading plain role turns of a list (``role`` and a string
``content``, nothing else) and hands the rest to the general reader; ``_one_turn_each`` writes
plain messages (text alone) of ``roles`` and ``history`` directly and every other message
through the general entry. Turned off, each path is the general code alone: the typed messages
(and which fields were set), the written turns, the omissions and the first error (code, index,
path, text) must be the same either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, Message, SystemMessage, TraceError
from tracebridge.adapters import galtea
from tracebridge.adapters.galtea import _read, _turns

from law_kits.galtea import KIT, pair_turns, role_turns
from strategies import Shape, conversations, texts

GOLDEN = sorted((Path(__file__).resolve().parents[1] / "golden_traces" / "galtea").rglob("*.json"))
RECORD = {"id": "t1", "index": 0, "session_id": "s1", "input": {"user_message": "q"}}


@contextmanager
def general_only() -> Iterator[None]:
    """The reader and the writer with their fast paths off."""
    with mock.patch.object(galtea, "plain_turns", return_value=[]), \
            mock.patch.object(_turns, "_one_turn_each", return_value=None):
        yield


def read(trace: Any) -> Any:
    try:
        messages = galtea.to_messages(trace)
    except TraceError as error:
        return (error.code, error.index, error.path, str(error))
    return [(message, message.model_fields_set) for message in messages]


def write(messages: list[Any], **options: Any) -> Any:
    omitted: list[galtea.Omission] = []
    try:
        turns = galtea.from_messages(messages, omitted=omitted, **options)
    except (TraceError, ValueError, TypeError) as error:
        return (type(error).__name__, getattr(error, "code", None), getattr(error, "index", None),
                getattr(error, "path", None), str(error))
    return turns, omitted


def _containers_copied(value: Any) -> Any:
    """A copy of every dict and list of ``value``; anything else (an ``object()`` a broken
    trace holds, which equals only itself) is the same object."""
    if type(value) is dict:
        return {key: _containers_copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_containers_copied(item) for item in value]
    return value


def both_read(trace: Any) -> tuple[Any, Any]:
    copied = _containers_copied(trace)
    fast = read(copied)
    assert copied == trace  # the fast path leaves its input alone
    with general_only():
        general = read(trace)
    return fast, general


def both_write(messages: list[Any], **options: Any) -> tuple[Any, Any]:
    fast = write(messages, **options)
    with general_only():
        general = write(messages, **options)
    return fast, general


def golden_traces() -> list[Any]:
    """Every golden trace: turns, AgentInputs, Trace records (SDK and API spellings), and the
    invalid ones."""
    found: list[Any] = []
    for path in GOLDEN:
        case = json.loads(path.read_text(encoding="utf-8"))
        found += [case[key] for key in ("trace", "records", "api_records") if key in case]
    return found


plain_turns = st.builds(lambda role, text: {"role": role, "content": text},
                        st.sampled_from(["user", "assistant"]), texts)
# Plain turns mixed with every other kind of item, so that the general reader takes over
# after a plain prefix: role turns with fields, pairs, Trace records, and broken items.
mixed_items = st.one_of(
    plain_turns, plain_turns, role_turns(), pair_turns(), st.just(RECORD),
    st.sampled_from([None, "turn", {"role": "tool", "content": "x"}, {"role": "user"},
                     {"role": "user", "content": 3}, {"role": "user", "content": "q", "input": "q"},
                     {"role": 1, "content": "x"}, {"content": "x", "extra": 1}]),
)


def test_the_golden_traces_read_the_same_on_both_paths() -> None:
    taken = 0
    for trace in golden_traces():
        fast, general = both_read(trace)
        assert fast == general
        if isinstance(trace, list):
            taken += len(_read.plain_turns(trace))
    assert taken >= 10  # the golden role turns that are plain


@given(st.lists(plain_turns, min_size=1, max_size=8))
def test_plain_turns_take_the_fast_path_whole(trace: list[dict[str, Any]]) -> None:
    assert len(_read.plain_turns(trace)) == len(trace)
    fast, general = both_read(trace)
    assert fast == general


@given(st.lists(mixed_items, max_size=8))
def test_plain_turns_mixed_with_any_item_read_the_same(trace: list[Any]) -> None:
    fast, general = both_read(trace)
    assert fast == general


@given(KIT.traces)
def test_every_law_kit_trace_reads_the_same(trace: Any) -> None:
    fast, general = both_read(trace)
    assert fast == general


@given(KIT.broken)
def test_every_broken_trace_is_refused_the_same(broken: Any) -> None:
    fast, general = both_read(broken.trace)
    assert fast == general
    assert type(fast) is tuple


@pytest.mark.parametrize("item", [
    {"role": "user", "content": "q", "metadata": None},
    {"role": "user", "content": ["q"]},
    {"role": "system", "content": "q"},
    {"content": "q", "role": "assistant", "x": 1},
    {"input": "q", "actual_output": "a"},
])
def test_the_fast_reader_stops_at_anything_but_a_plain_turn(item: dict[str, Any]) -> None:
    trace = [{"role": "user", "content": "hi"}, item]
    assert len(_read.plain_turns(trace)) == 1
    fast, general = both_read(trace)
    assert fast == general


OPTIONS: list[dict[str, Any]] = [
    {},
    {"shape": "roles"},
    {"shape": "history"},
    {"shape": "pairs"},
    {"skip_system": True, "fold_tools": True, "drop_non_text": True, "drop_names": True},
    {"shape": "history", "skip_system": True, "fold_tools": True, "drop_non_text": True,
     "drop_names": True, "drop": list(galtea.DROPPABLE)},
    {"join_consecutive": "\n"},
    {"shape": "rows"},
    {"join_consecutive": 1},
    {"drop": ["nothing"]},
]


def test_the_golden_conversations_write_the_same_on_both_paths() -> None:
    for trace in golden_traces():
        messages = galtea.to_messages(trace) if not isinstance(read(trace), tuple) else []
        for options in OPTIONS:
            fast, general = both_write(messages, **options)
            assert fast == general, options


@pytest.mark.parametrize("options", OPTIONS)
@given(messages=st.one_of(KIT.conversations, conversations()))
def test_generated_conversations_write_the_same(messages: list[Message],
                                                options: dict[str, Any]) -> None:
    fast, general = both_write(messages, **options)
    assert fast == general


@given(st.lists(st.one_of(
    st.builds(HumanMessage, content=texts), st.builds(AIMessage, content=texts),
    st.builds(lambda text: HumanMessage(content=text, name="ann"), texts),
    st.builds(lambda text: AIMessage(content=text, metadata={"galtea": {"shape": "pairs"}}),
              texts),
    st.builds(lambda text: SystemMessage(content=text), texts),
), max_size=8), st.sampled_from(OPTIONS))
def test_plain_messages_mixed_with_others_write_the_same(messages: list[Message],
                                                         options: dict[str, Any]) -> None:
    fast, general = both_write(messages, **options)
    assert fast == general


@given(conversations(Shape(parts=False, metadata=False, names=False, system=False,
                           message_ids=False, citations=False, audio_replies=False),
                     max_turns=4))
def test_plain_conversations_write_what_the_general_writer_writes(
    messages: list[Message],
) -> None:
    for options in ({}, {"shape": "history"}, {"fold_tools": True}):
        fast, general = both_write(messages, **options)
        assert fast == general


def test_a_plain_conversation_round_trips_on_the_fast_paths() -> None:
    turns = [{"role": "user" if k % 2 == 0 else "assistant", "content": f"turn {k}"}
             for k in range(20)]
    messages = galtea.to_messages(turns)
    assert messages == [HumanMessage(content=f"turn {k}") if k % 2 == 0
                        else AIMessage(content=f"turn {k}") for k in range(20)]
    assert galtea.from_messages(messages) == turns
    assert galtea.from_messages(messages, shape="history") == turns
