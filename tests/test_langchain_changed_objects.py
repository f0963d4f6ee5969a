"""LangChain message objects whose fields were changed after they were made.

LangChain does not check assignments, so an object can hold what no LangChain constructor
accepts. Reading one gives the conversation or a ``TraceError`` at the field, never another
exception, and the fast path and the general reader agree on it.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from changed_objects import places
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.adapters.langchain import _read


def conversation() -> list[Any]:
    call = {"type": "function", "id": "c1", "function": {"name": "s", "arguments": '{"q": 1}'}}
    return [
        SystemMessage(content="be brief"),
        HumanMessage(content="find q"),
        AIMessage(
            content="",
            tool_calls=[{"name": "s", "args": {"q": 1}, "id": "c1"}],
            additional_kwargs={"tool_calls": [call]},
        ),
        ToolMessage(content="found", tool_call_id="c1", name="s"),
        AIMessage(
            content="again",
            invalid_tool_calls=[
                {
                    "name": "t",
                    "args": "{bad",
                    "id": "c2",
                    "error": None,
                    "type": "invalid_tool_call",
                }
            ],
        ),
        ToolMessage(content="cannot", tool_call_id="c2", status="error"),
        AIMessage(content="done"),
    ]


@contextmanager
def general_only() -> Iterator[None]:
    with mock.patch.object(_read, "_fast_plans", return_value={}):
        yield


def outcome(messages: list[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns when dumping a changed field
        try:
            return langchain.to_messages(messages)
        except TraceError as error:
            return (error.code, error.index, error.path)


@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
@pytest.mark.parametrize(
    ("position", "field", "value", "path", "said"),
    [
        (1, "name", 5, "messages[1].name", "Input should be a valid string"),
        # a type the class does not allow would read as another kind of message
        (1, "type", "ai", "messages[1].type", "this HumanMessage holds what LangChain does not"),
        (2, "type", "human", "messages[2].type", "Input should be 'ai'"),
        (3, "type", "system", "messages[3].type", "Input should be 'tool'"),
        (1, "content", None, "messages[1].content", "Input should be a valid string"),
        (1, "id", 7, "messages[1].id", "id is 7, which it would have stored as '7'"),
        (3, "content", 1.5, "messages[3].content", "which it would have stored as '1.5'"),
        (3, "tool_call_id", 5, "messages[3].tool_call_id", "stored as '5'"),
        (3, "status", "weird", "messages[3].status", "'success' or 'error', got 'weird'"),
        (2, "additional_kwargs", "x", "messages[2].additional_kwargs", "a valid dictionary"),
        (2, "tool_calls", 5, "messages[2]", "TypeError"),
    ],
)
def test_a_changed_field_is_refused_where_it_is(
    position: int, field: str, value: Any, path: str, said: str
) -> None:
    messages = conversation()
    messages[position].__dict__[field] = value
    assert outcome(messages) == _general(messages) == ("malformed_event", position, path)
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(messages)
    assert said in str(caught.value)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    ("position", "field", "value", "path"),
    [
        # each was read as it stood: a result with no status as a success, one with no call
        # id as a FunctionMessage's, a dict as its keys, counts as text, and so on
        (3, "status", None, "messages[3].status"),
        (3, "tool_call_id", None, "messages[3].tool_call_id"),
        (1, "content", {"type": "text", "text": "x"}, "messages[1].content"),
        (6, "content", {"answer": "done"}, "messages[6].content"),
        (0, "additional_kwargs", None, "messages[0].additional_kwargs"),
        (1, "response_metadata", [], "messages[1].response_metadata"),
        (6, "usage_metadata", {"input_tokens": "1", "output_tokens": 2, "total_tokens": 3},
         "messages[6].usage_metadata"),
        (6, "usage_metadata", {}, "messages[6].usage_metadata"),
        (2, "invalid_tool_calls", "", "messages[2].invalid_tool_calls"),
    ],
)
def test_a_changed_field_the_reader_took_as_it_stood_is_refused(
    position: int, field: str, value: Any, path: str
) -> None:
    messages = conversation()
    messages[position].__dict__[field] = value
    assert outcome(messages) == _general(messages) == ("malformed_event", position, path)


@pytest.mark.filterwarnings("ignore")
def test_a_tool_call_without_its_type_is_refused() -> None:
    messages = conversation()
    del messages[2].tool_calls[0]["type"]
    assert outcome(messages) == _general(messages)
    assert outcome(messages) == ("malformed_event", 2, "messages[2].tool_calls")


def _general(messages: list[Any]) -> Any:
    with general_only():
        return outcome(messages)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    ("key", "value", "path", "said"),
    [
        ("args", None, "messages[2].tool_calls[0].args", "this tool call has no 'args'"),
        ("name", None, "messages[2].tool_calls[0].name", "this tool call has no 'name'"),
        ("id", None, "messages[2].tool_calls[0].id", "this tool call has no 'id'"),
        ("name", 5, "messages[2].tool_calls[0].name", "name must be a string, got 5"),
        ("args", "x", "messages[2].tool_calls[0].args", "args must be an object, got 'x'"),
        ("id", 3, "messages[2].tool_calls[0].id", "id must be a string, got 3"),
    ],
)
def test_a_changed_tool_call_is_refused_at_the_call(
    key: str, value: Any, path: str, said: str
) -> None:
    """``None`` removes the key."""
    messages = conversation()
    call = messages[2].tool_calls[0]
    if value is None:
        del call[key]
    else:
        call[key] = value
    assert outcome(messages) == _general(messages) == ("malformed_event", 2, path)
    with pytest.raises(TraceError, match=said):
        langchain.to_messages(messages)


_VALUES = st.sampled_from(
    [None, 5, -1, 1.5, float("nan"), True, "x", "", [], [1], {}, {"a": 1}, {1: 2}, {"a": {1}},
     ("t",), b"b", object()]
)


@given(st.data(), _VALUES, st.booleans())
def test_any_changed_value_reads_or_is_refused_the_same_on_both_paths(
    data: st.DataObject, value: Any, remove: bool
) -> None:
    messages = conversation()
    position = data.draw(st.integers(0, len(messages) - 1))
    fields = messages[position].__dict__
    field = data.draw(st.sampled_from(sorted(fields)))
    spots = list(places(fields[field]))
    if spots and data.draw(st.booleans()):
        place = data.draw(st.sampled_from(spots))
        holder = fields[field]
        for step in place[:-1]:
            holder = holder[step]
        if remove:
            del holder[place[-1]]
        else:
            holder[place[-1]] = copy.deepcopy(value)  # the drawn value is shared
    else:
        fields[field] = copy.deepcopy(value)
    # any exception but a TraceError fails the test here
    assert outcome(messages) == _general(messages)
