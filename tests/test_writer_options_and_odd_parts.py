"""Every writer refuses ``drop=`` given as a mapping (``{"citations": False}`` read as its keys
would be consent to the very loss it seems to refuse), and no writer lets an object that is
not a part, placed in a message's content without validation, out as a raw exception."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, TextPart, TraceError
from tracebridge.registry import ADAPTER_NAMES, get_adapter

MESSAGES = [HumanMessage(content="q"), AIMessage(content="a")]


@pytest.mark.parametrize("name", ADAPTER_NAMES)
def test_drop_given_as_a_mapping_is_refused(name: str) -> None:
    adapter: Any = get_adapter(name)
    droppable = adapter.DROPPABLE
    with pytest.raises(ValueError, match="drop="):
        adapter.from_messages(MESSAGES, drop={droppable[0]: False})
    assert adapter.from_messages(MESSAGES, drop=[droppable[0]]) == adapter.from_messages(MESSAGES)


class LooksLikeAPart:
    """Not a part, though it has a part's attributes (duck typing passes it far)."""

    def __init__(self) -> None:
        self.type = "text"
        self.text = "x"
        self.metadata: dict[str, Any] = {}


def _with_odd_part(at: int) -> list[Any]:
    messages: list[Any] = list(MESSAGES)
    content = [TextPart(text="q"), LooksLikeAPart()]
    messages[at] = messages[at].model_copy(update={"content": content})
    return messages


REFUSED_AS_UNWRITABLE = {"galtea", "llama_index"}
"""Writers that refuse a part they have no form for before looking closer at it: an object
that is no part is one of those (``not_representable``); the others fall on it, and their
fallback names it (``malformed_event``)."""


@pytest.mark.parametrize("at", [0, 1])
@pytest.mark.parametrize("name", ADAPTER_NAMES)
def test_an_object_that_is_no_part_is_refused_at_its_place(name: str, at: int) -> None:
    code = "not_representable" if name in REFUSED_AS_UNWRITABLE else "malformed_event"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the unchecked value it dumps
        with pytest.raises(TraceError) as caught:
            get_adapter(name).from_messages(_with_odd_part(at))
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        code, at, f"messages[{at}].content[1]"
    )
