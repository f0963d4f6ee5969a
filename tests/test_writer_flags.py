"""A writer's True/False options take only True or False: ``"false"`` is true in Python, and
taken as it is it would accept the loss the option names (names left out, system messages
skipped) without the caller meaning it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.adapters import galtea, openai_agents, openai_responses

NAMED = [HumanMessage(content="hi", name="bob"), AIMessage(content="hello")]

WRITERS: list[tuple[str, Callable[..., Any], str]] = [
    ("openai_responses", openai_responses.from_messages, "drop_names"),
    ("openai_agents", openai_agents.from_messages, "drop_names"),
    ("galtea", galtea.from_messages, "drop_names"),
    ("galtea", galtea.from_messages, "skip_system"),
    ("galtea", galtea.from_messages, "fold_tools"),
    ("galtea", galtea.from_messages, "drop_non_text"),
]


@pytest.mark.parametrize(
    ("name", "write", "flag"), WRITERS, ids=[f"{w[0]}-{w[2]}" for w in WRITERS]
)
@pytest.mark.parametrize(("value", "shown"), [
    ("false", "'false'"), ("no", "'no'"), (1, "1"), (0, "0"), (None, "None"), ([0], "[0]"),
])
def test_a_flag_other_than_true_or_false_is_a_value_error(
    name: str, write: Callable[..., Any], flag: str, value: Any, shown: str
) -> None:
    with pytest.raises(ValueError, match="must be True or False") as caught:
        write(NAMED, **{flag: value})
    assert str(caught.value) == f"{flag} must be True or False, got {shown}"


def test_the_flags_still_work() -> None:
    assert openai_responses.from_messages(NAMED, drop_names=True) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert galtea.from_messages(NAMED, drop_names=True) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    for write in (openai_responses.from_messages, galtea.from_messages):
        with pytest.raises(TraceError) as caught:
            write(NAMED, drop_names=False)
        assert (caught.value.code, caught.value.path) == ("not_representable", "messages[0].name")
