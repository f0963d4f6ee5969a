"""Grouping model calls into conversations (``_rebuild.chains``) looks chains up by session
and first message; it must group exactly as the plain definition does: each call goes to the
first chain (in order of creation) of its session whose last call's messages are a shorter
start of its own, else starts a chain."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, SystemMessage
from tracebridge.adapters.otel._calls import same
from tracebridge.adapters.otel._rebuild import chains

_WORDS = [HumanMessage(content="hi"), HumanMessage(content="more"), AIMessage(content="a"),
          AIMessage(content="b")]


def _call(body: list[int], systems: bool) -> Any:
    messages = [_WORDS[k] for k in body]
    prefix = [SystemMessage(content="be brief")] if systems else []
    # input and output split anywhere: only their joining counts
    cut = len(messages) // 2
    return SimpleNamespace(span=object(), input=[*prefix, *messages[:cut]], output=messages[cut:],
                           systems=len(prefix))


def _by_definition(calls: list[Any], sessions: dict[int, str]) -> list[list[Any]]:
    found: list[list[Any]] = []
    for call in calls:
        mine = [same([m]) for m in [*call.input[call.systems:], *call.output]]
        for chain in found:
            last = chain[-1]
            theirs = [same([m]) for m in [*last.input[last.systems:], *last.output]]
            if (sessions.get(id(last.span)) == sessions.get(id(call.span))
                    and len(mine) > len(theirs) and mine[: len(theirs)] == theirs):
                chain.append(call)
                break
        else:
            found.append([call])
    return found


_CALLS = st.lists(
    st.tuples(st.lists(st.integers(0, 3), max_size=5), st.booleans(),
              st.sampled_from([None, "s1", "s2"])),
    max_size=14,
)


@given(_CALLS)
def test_chains_group_as_the_definition_does(
    drawn: list[tuple[list[int], bool, str | None]],
) -> None:
    calls = [_call(body, systems) for body, systems, _ in drawn]
    sessions = {id(call.span): session for call, (_, _, session) in zip(calls, drawn, strict=True)
                if session is not None}
    got = [[calls.index(c) for c in chain] for chain in chains(calls, sessions)]
    assert got == [[calls.index(c) for c in chain] for chain in _by_definition(calls, sessions)]


def test_a_call_two_chains_could_take_goes_to_the_first() -> None:
    # chain 1 ends with no message at all until the third call ("hi") joins it; from then it
    # is looked up by "hi", after chain 0, which the fourth call extends (both could take it)
    calls = [_call([0, 2], False), _call([], True), _call([0], False), _call([0, 2, 1], False),
             _call([0, 3], False)]
    got = [[calls.index(c) for c in chain] for chain in chains(calls, {})]
    assert got == [[0, 3], [1, 2, 4]]


def test_sessions_keep_equal_conversations_apart() -> None:
    calls = [_call([0], False), _call([0], False), _call([0, 2], False), _call([0, 2], False)]
    sessions = {id(calls[0].span): "s1", id(calls[1].span): "s2", id(calls[2].span): "s2",
                id(calls[3].span): "s1"}
    got = [[calls.index(c) for c in chain] for chain in chains(calls, sessions)]
    assert got == [[0, 3], [1, 2]]
