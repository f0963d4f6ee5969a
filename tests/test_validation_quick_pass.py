"""The quick rules pass never accepts what the full pass rejects.

Every conversation of up to four messages over a small alphabet (id'd and id-less calls and
results, a call with invalid arguments, an AI message without calls) is checked both ways:
when the quick pass says every rule holds, the full pass finds no violation. The quick pass
must also take the common shapes itself (all calls answered by id, or all by position).
"""

from __future__ import annotations

import itertools

import pytest

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from tracebridge.validation import _surely_valid, _violations

ALPHABET = [
    HumanMessage(content="q"),
    SystemMessage(content="s"),
    AIMessage(content="a"),
    AIMessage(tool_calls=[ToolCall(name="f", id="a")]),
    AIMessage(tool_calls=[ToolCall(name="f", id="a"), ToolCall(name="g", id="b")]),
    AIMessage(tool_calls=[ToolCall(name="f")]),
    AIMessage(tool_calls=[ToolCall(name="f"), ToolCall(name="g")]),
    AIMessage(tool_calls=[ToolCall(name="f", id="a"), ToolCall(name="g")]),
    AIMessage(tool_calls=[ToolCall(name="f", invalid_args="{")]),
    ToolMessage(content="r", tool_call_id="a"),
    ToolMessage(content="r", tool_call_id="b"),
    ToolMessage(content="r"),
]


@pytest.mark.parametrize("allow_pending", [False, True])
def test_the_quick_pass_accepts_only_valid_conversations(allow_pending: bool) -> None:
    accepted = 0
    for size in range(1, 5):
        for messages in itertools.product(ALPHABET, repeat=size):
            full = list(_violations(list(messages), allow_pending, None, None))
            if _surely_valid(messages, allow_pending):
                accepted += 1
                assert full == [], messages
    assert accepted > 100


def test_the_quick_pass_takes_calls_answered_by_id_and_by_position() -> None:
    by_id = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f", id="a"), ToolCall(name="g", id="b")]),
        ToolMessage(content="r", tool_call_id="b"),
        ToolMessage(content="r", tool_call_id="a"),
        AIMessage(content="done"),
    ]
    by_position = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f"), ToolCall(name="g")]),
        ToolMessage(content="r"),
        ToolMessage(content="r"),
        AIMessage(content="done"),
    ]
    assert _surely_valid(by_id, False)
    assert _surely_valid(by_position, False)
    assert not _surely_valid(by_position[:3], False)  # one call left unanswered
    assert _surely_valid(by_position[:3], True)
