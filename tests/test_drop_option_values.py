"""Every writer refuses a ``drop=`` value that is not a list of its droppable names with a
``ValueError`` that says so, before it writes anything: never a raw ``TypeError`` (``None``,
a number), and a string is not taken as its characters."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import HumanMessage
from tracebridge.registry import get_adapter

WRITERS = ["openai_chat", "swarm", "otel", "openai_responses", "openai_agents"]
MESSAGES = [HumanMessage(content="hi")]


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("drop", [None, 5, 1.5, object()])
def test_a_drop_that_is_no_list_is_a_value_error(name: str, drop: Any) -> None:
    with pytest.raises(ValueError, match=r"^drop= takes a list of names from \('"):
        get_adapter(name).from_messages(MESSAGES, drop=drop)


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("drop", ["is_error", b"is_error"])
def test_a_drop_that_is_one_string_is_refused_whole(name: str, drop: Any) -> None:
    with pytest.raises(ValueError, match=r"^drop= takes a list of names from \(") as caught:
        get_adapter(name).from_messages(MESSAGES, drop=drop)
    assert str(caught.value).endswith(f"got {drop!r}")


@pytest.mark.parametrize("name", WRITERS)
def test_a_name_that_is_not_droppable_is_named(name: str) -> None:
    adapter = get_adapter(name)
    with pytest.raises(ValueError, match="names nothing droppable") as caught:
        adapter.from_messages(MESSAGES, drop=["nope", 1])
    assert str(caught.value) == (
        f"drop=['nope', 1] names nothing droppable; drop= takes a list of names from "
        f"{tuple(adapter.DROPPABLE)}"
    )


@pytest.mark.parametrize("name", WRITERS)
def test_droppable_names_are_taken(name: str) -> None:
    adapter = get_adapter(name)
    assert adapter.from_messages(MESSAGES, drop=list(adapter.DROPPABLE)) == (
        adapter.from_messages(MESSAGES)
    )
