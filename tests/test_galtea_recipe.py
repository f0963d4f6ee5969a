"""The recipe from Galtea's page: an application's OpenAI-style history -> conversation_turns.

``galtea.from_messages(openai_chat.to_messages(history), shape="pairs", ...)``, with the page's
pirate example and its two pitfalls: the first entry has no ``role`` key, and the page's
helper quietly drops a user message that another user message follows.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import galtea, openai_chat
from tracebridge.adapters.galtea import Omission

PAGE_HISTORY: list[dict[str, Any]] = [
    {"system": "system", "content": "You are a pirate."},
    {"role": "user", "content": "Can you teach me to swim?"},
    {"role": "assistant", "content": "Sure thing, matey! Then ye go swim with the shark."},
    {"role": "user", "content": "I am not sure if I can swim with the shark."},
    {"role": "assistant", "content": "Ye can do it!"},
]
HISTORY = [{"role": "system", "content": "You are a pirate."}, *PAGE_HISTORY[1:]]
TURNS = [
    {
        "input": "Can you teach me to swim?",
        "actual_output": "Sure thing, matey! Then ye go swim with the shark.",
    },
    {"input": "I am not sure if I can swim with the shark.", "actual_output": "Ye can do it!"},
]


def test_the_pages_history_is_malformed_at_0_not_a_key_error() -> None:
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages(PAGE_HISTORY)
    assert (caught.value.code, caught.value.index) == ("malformed_event", 0)


def test_the_system_prompt_is_refused_until_the_caller_skips_it_by_name() -> None:
    messages = openai_chat.to_messages(HISTORY)
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, shape="pairs")
    assert (caught.value.code, caught.value.index) == ("not_representable", 0)
    assert "skip_system=True" in caught.value.detail

    omitted: list[Omission] = []
    assert galtea.from_messages(messages, shape="pairs", skip_system=True, omitted=omitted) == TURNS
    assert omitted == [
        Omission(0, "system_message", "skip_system", "system message 'You are a pirate.'")
    ]


def test_consecutive_user_messages_are_refused_unless_the_caller_says_how_to_join_them() -> None:
    # The page's helper keeps only the later of two user messages in a row, without a word.
    history = [*HISTORY[:3], {"role": "user", "content": "Hello?"}, *HISTORY[3:]]
    messages = openai_chat.to_messages(history)
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, shape="pairs", skip_system=True)
    assert (caught.value.code, caught.value.index) == ("not_representable", 4)
    assert caught.value.detail.startswith(
        "two user messages in a row (messages[3] and messages[4])"
    )

    joined = galtea.from_messages(messages, shape="pairs", skip_system=True, join_consecutive="\n")
    assert joined == [
        TURNS[0],
        {
            "input": "Hello?\nI am not sure if I can swim with the shark.",
            "actual_output": "Ye can do it!",
        },
    ]


def test_the_production_call_takes_prior_turns_plus_the_current_exchange() -> None:
    messages = openai_chat.to_messages(HISTORY)
    conversation_turns, question, answer = galtea.split_current_turn(messages, skip_system=True)
    assert conversation_turns == TURNS[:1]
    assert (question, answer) == (TURNS[1]["input"], TURNS[1]["actual_output"])


def test_tool_activity_in_the_history_is_refused_unless_folded_away() -> None:
    history = [
        {"role": "user", "content": "Where be the treasure?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_map", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "X marks the spot"},
        {"role": "assistant", "content": "Under the X, matey!"},
    ]
    messages = openai_chat.to_messages(history)
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, shape="pairs")
    assert (caught.value.code, caught.value.index) == ("not_representable", 1)
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, shape="pairs", fold_tools=True, omitted=omitted) == [
        {"input": "Where be the treasure?", "actual_output": "Under the X, matey!"}
    ]
    assert [(o.index, o.what) for o in omitted] == [(1, "tool_calls"), (2, "tool_result")]
