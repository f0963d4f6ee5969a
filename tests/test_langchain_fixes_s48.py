"""langchain: two call blocks with one id are refused as a duplicate call id (rule 5), and
``to_json`` refuses what is not ``from_messages`` output with ``malformed_event``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
    messages_to_dict,
)

from tracebridge import TraceError
from tracebridge import messages as tm
from tracebridge.adapters import langchain

LC = "langchain"
QUESTION = HumanMessage("hi")


def where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


def in_form(trace: list[BaseMessage], form: str) -> list[Any]:
    """The trace as objects, ``messages_to_dict`` dicts or flat dumps."""
    if form == "dicts":
        return messages_to_dict(trace)
    if form == "model_dump":
        return [message.model_dump() for message in trace]
    return trace


FORMS = ("messages", "dicts", "model_dump")


# --- two call blocks with one id, tool_calls empty: two calls, rule 5 -----------------------

TWO_BLOCKS: dict[str, tuple[list[dict[str, Any]], str]] = {
    "tool_use": (
        [
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "t1", "name": "g", "input": {}},
        ],
        "messages[1].content[1].id",
    ),
    "function_call": (
        [
            {"type": "function_call", "call_id": "t1", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "t1", "name": "g", "arguments": "{}"},
        ],
        "messages[1].content[1].call_id",
    ),
    "custom_tool_call": (
        [
            {"type": "custom_tool_call", "call_id": "t1", "name": "f", "input": "x"},
            {"type": "custom_tool_call", "call_id": "t1", "name": "g", "input": "y"},
        ],
        "messages[1].content[1].call_id",
    ),
    "tool_call": (
        [
            {"type": "tool_call", "id": "t1", "name": "f", "args": {}},
            {"type": "tool_call", "id": "t1", "name": "g", "args": {}},
        ],
        "messages[1].content[1].id",
    ),
    "invalid_tool_call": (
        [
            {"type": "invalid_tool_call", "id": "t1", "name": "f", "args": "{"},
            {"type": "invalid_tool_call", "id": "t1", "name": "g", "args": "{"},
        ],
        "messages[1].content[1].id",
    ),
    "tool_use_after_text": (
        [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        ],
        "messages[1].content[2].id",
    ),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", sorted(TWO_BLOCKS))
def test_two_call_blocks_with_one_id_are_a_duplicate_call_id(case: str, form: str) -> None:
    blocks, path = TWO_BLOCKS[case]
    reply = AIMessage(blocks)
    assert reply.tool_calls == []  # the blocks are the calls
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(in_form([QUESTION, reply], form), allow_pending=True)
    assert where(caught.value) == ("duplicate_tool_call_id", 1, path, LC)
    assert str(caught.value) == (
        f"langchain: {path}: tool call id 't1' is already used at messages[1] "
        "[duplicate_tool_call_id]"
    )


def test_anthropic_dicts_with_one_id_twice_are_a_duplicate_call_id() -> None:
    trace = convert_to_messages([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
        ]},
    ])
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, allow_pending=True)
    assert where(caught.value) == (
        "duplicate_tool_call_id", 1, "messages[1].content[1].id", LC
    )


def test_a_block_id_used_by_an_earlier_message_is_still_a_duplicate() -> None:
    first = AIMessage([{"type": "tool_use", "id": "t1", "name": "f", "input": {}}])
    answer = ToolMessage("ok", tool_call_id="t1")
    again = AIMessage([
        {"type": "tool_use", "id": "t2", "name": "f", "input": {}},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
    ])
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([QUESTION, first, answer, again], allow_pending=True)
    assert where(caught.value) == (
        "duplicate_tool_call_id", 3, "messages[3].content[1].id", LC
    )
    assert str(caught.value) == (
        "langchain: messages[3].content[1].id: tool call id 't1' is already used at "
        "messages[1] [duplicate_tool_call_id]"
    )


# --- an id tool_calls holds twice, repeated by blocks: the list's second call ---------------

LISTED_TWICE: dict[str, AIMessage] = {
    # ChatAnthropic's shape: the calls in tool_calls, each repeated by a tool_use block
    "tool_use_blocks": AIMessage(
        [
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        ],
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}, {"name": "f", "args": {}, "id": "c1"}],
    ),
    # the blocks in the other order: no block can be told for a copy of one call or the other
    "v1_blocks_in_other_order": AIMessage(
        [
            {"type": "tool_call", "id": "c1", "name": "g", "args": {"b": 2}},
            {"type": "tool_call", "id": "c1", "name": "f", "args": {"a": 1}},
        ],
        tool_calls=[
            {"name": "f", "args": {"a": 1}, "id": "c1"},
            {"name": "g", "args": {"b": 2}, "id": "c1"},
        ],
    ),
    "no_blocks": AIMessage(
        "",
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}, {"name": "g", "args": {}, "id": "c1"}],
    ),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", sorted(LISTED_TWICE))
def test_an_id_tool_calls_holds_twice_is_a_duplicate_at_the_second_call(
    case: str, form: str
) -> None:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(
            in_form([QUESTION, LISTED_TWICE[case]], form), allow_pending=True
        )
    assert where(caught.value) == (
        "duplicate_tool_call_id", 1, "messages[1].tool_calls[1].id", LC
    )


def test_a_second_block_for_one_call_of_tool_calls_still_names_no_call() -> None:
    reply = AIMessage(
        [
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        ],
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
    )
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([QUESTION, reply], allow_pending=True)
    assert where(caught.value) == (
        "conflicting_fields", 1, "messages[1].content[1].id", LC
    )
    assert caught.value.detail == (
        "a tool_use block with id 'c1' names no call of tool_calls that another block has "
        "not named (call ids: ['c1'])"
    )


def test_call_blocks_with_distinct_ids_still_read_as_their_calls() -> None:
    reply = AIMessage([
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
        {"type": "tool_use", "id": "t2", "name": "g", "input": {}},
    ])
    typed = langchain.to_messages([QUESTION, reply], allow_pending=True)
    calls = typed[1].tool_calls if isinstance(typed[1], tm.AIMessage) else []
    assert [(call.name, call.args, call.id) for call in calls] == [
        ("f", {"a": 1}, "t1"),
        ("g", {}, "t2"),
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(
        [QUESTION, reply]
    )


# --- to_json refuses what from_messages does not return ------------------------------------

TAKES = "to_json takes what from_messages returns"
NOT_A_LIST = (
    f"{TAKES} (a list of BaseMessage objects or their dicts, or a state {{'messages': [...]}}); "
    "got "
)

NOT_MESSAGES: dict[str, tuple[Any, tuple[str, int | None, str | None, str], str]] = {
    "int_item": (
        [1],
        ("malformed_event", 0, "messages[0]", LC),
        f"{TAKES} (BaseMessage objects, or their dicts); got int 1",
    ),
    "int_after_a_message": (
        [HumanMessage("x"), 5],
        ("malformed_event", 1, "messages[1]", LC),
        f"{TAKES} (BaseMessage objects, or their dicts); got int 5",
    ),
    "typed_message": (
        [tm.HumanMessage(content="hi", metadata={"k": 1})],
        ("malformed_event", 0, "messages[0]", LC),
        f"{TAKES} (BaseMessage objects, or their dicts); got a typed tracebridge "
        "HumanMessage: pass from_messages(messages), the LangChain messages written for it",
    ),
    "typed_message_in_a_state": (
        {"messages": [HumanMessage("x"), tm.AIMessage(content="hello")]},
        ("malformed_event", 1, "messages[1]", LC),
        f"{TAKES} (BaseMessage objects, or their dicts); got a typed tracebridge "
        "AIMessage: pass from_messages(messages), the LangChain messages written for it",
    ),
    "none": (None, ("malformed_event", None, None, LC), f"{NOT_A_LIST}NoneType None"),
    "text": ("hi", ("malformed_event", None, None, LC), f"{NOT_A_LIST}str 'hi'"),
    "dict_that_is_no_state": (
        {"other": []},
        ("malformed_event", None, None, LC),
        f"{NOT_A_LIST}dict {{'other': []}}",
    ),
    "state_without_a_list": (
        {"messages": None},
        ("malformed_event", None, None, LC),
        f"{NOT_A_LIST}NoneType None in state['messages']",
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_MESSAGES))
def test_to_json_refuses_what_from_messages_does_not_return(case: str) -> None:
    trace, expected, detail = NOT_MESSAGES[case]
    with pytest.raises(TraceError) as caught:
        langchain.to_json(trace)
    assert where(caught.value) == expected
    assert caught.value.detail == detail


def test_to_json_writes_objects_and_dicts_side_by_side() -> None:
    objects = [HumanMessage("hi"), AIMessage("hello")]
    mixed = [objects[0], messages_to_dict([objects[1]])[0]]
    assert langchain.to_json(mixed) == messages_to_dict(objects)
    assert langchain.to_json(tuple(objects)) == messages_to_dict(objects)
    assert langchain.to_json({"messages": objects}) == {"messages": messages_to_dict(objects)}


@pytest.mark.parametrize("form", langchain.FORMS)
def test_to_json_of_from_messages_reads_back(form: Any) -> None:
    typed = [tm.HumanMessage(content="hi"), tm.AIMessage(content="hello")]
    written = langchain.to_json(langchain.from_messages(typed, form=form))
    assert langchain.to_messages(written) == typed


def _invalid(call_id: str) -> dict[str, Any]:
    return {"name": "g", "args": "{", "id": call_id, "error": None, "type": "invalid_tool_call"}


ACROSS_THE_LISTS: dict[str, tuple[AIMessage, str]] = {
    # one id in tool_calls and invalid_tool_calls, blocks of either kind naming it
    "valid_and_invalid": (
        AIMessage(
            [
                {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
                {"type": "tool_use", "id": "c1", "name": "g", "input": {}},
            ],
            tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
            invalid_tool_calls=[_invalid("c1")],
        ),
        "messages[1].invalid_tool_calls[0].id",
    ),
    "invalid_twice_v1_block": (
        AIMessage([{"type": "tool_call", "id": "c1", "name": "g", "args": {}}],
                  invalid_tool_calls=[_invalid("c1"), _invalid("c1")]),
        "messages[1].invalid_tool_calls[1].id",
    ),
    "invalid_twice_custom_block": (
        AIMessage([{"type": "custom_tool_call", "call_id": "c1", "name": "g", "input": "x"}],
                  invalid_tool_calls=[_invalid("c1"), _invalid("c1")]),
        "messages[1].invalid_tool_calls[1].id",
    ),
    # more blocks with the id than calls with it
    "three_blocks_two_calls": (
        AIMessage(
            [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}] * 3,
            tool_calls=[{"name": "f", "args": {}, "id": "c1"}] * 2,
        ),
        "messages[1].tool_calls[1].id",
    ),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", sorted(ACROSS_THE_LISTS))
def test_an_id_the_two_lists_hold_twice_is_a_duplicate_whatever_its_blocks(
    case: str, form: str
) -> None:
    """Blocks naming an id the lists hold twice are not matched to those calls (before: a
    raw KeyError when one was an invalid call, or conflicting_fields at a third block)."""
    reply, path = ACROSS_THE_LISTS[case]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(in_form([QUESTION, reply], form), allow_pending=True)
    assert where(caught.value) == ("duplicate_tool_call_id", 1, path, LC)
