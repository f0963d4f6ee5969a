"""langchain: the writer checks the conversation rules as its reader does, and a dict (or an
object) whose tool call lacks ``name``, ``args`` or ``id`` is refused at the missing key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict

from tracebridge import TraceError, convert
from tracebridge import messages as tm
from tracebridge.adapters import langchain

LC = "langchain"


def where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


# --- the writer refuses what its reader refuses ---------------------------------------------

QUESTION = tm.HumanMessage(content="Weather?")
CALL = tm.ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")
RESULT = tm.ToolMessage(content="18C", tool_call_id="c1")

BROKEN: dict[str, tuple[list[tm.Message], tuple[str, int | None, str | None, str]]] = {
    "empty": ([], ("empty_conversation", None, None, LC)),
    "orphan_result": (
        [QUESTION, RESULT],
        ("orphan_tool_result", 1, "messages[1].tool_call_id", LC),
    ),
    "unanswered_before_more": (
        [QUESTION, tm.AIMessage(tool_calls=[CALL]), tm.HumanMessage(content="next")],
        ("unanswered_tool_call", 1, "messages[1].tool_calls[0]", LC),
    ),
    "duplicate_call_id": (
        [
            QUESTION,
            tm.AIMessage(tool_calls=[CALL]),
            RESULT,
            tm.AIMessage(tool_calls=[CALL]),
            RESULT,
        ],
        ("duplicate_tool_call_id", 3, "messages[3].tool_calls[0].id", LC),
    ),
}


@pytest.mark.parametrize("form", langchain.FORMS)
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_writer_refuses_a_conversation_that_breaks_the_rules(case: str, form: Any) -> None:
    typed, expected = BROKEN[case]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed, form=form)
    assert where(caught.value) == expected


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_writer_refuses_as_its_reader_does(case: str) -> None:
    """The error the writer raises is the one its reader raises on the same conversation
    written by hand."""
    typed, (code, index, path, _) = BROKEN[case]
    lc_messages = [_lc_message(message) for message in typed]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(lc_messages)
    assert where(caught.value) == (code, index, path, LC)


def _lc_message(message: tm.Message) -> Any:
    if isinstance(message, tm.HumanMessage):
        return HumanMessage(message.content)
    if isinstance(message, tm.ToolMessage):
        return ToolMessage(message.content, tool_call_id=message.tool_call_id)
    assert isinstance(message, tm.AIMessage)
    calls = [{"name": c.name, "args": c.args, "id": c.id} for c in message.tool_calls]
    return AIMessage("", tool_calls=calls)


def test_convert_to_langchain_refuses_a_conversation_that_breaks_the_rules() -> None:
    typed = [QUESTION, tm.AIMessage(tool_calls=[CALL]), tm.HumanMessage(content="next")]
    with pytest.raises(TraceError) as caught:
        convert(typed, source="tracebridge", target=LC)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unanswered_tool_call",
        1,
        "messages[1].tool_calls[0]",
    )


def test_writer_writes_calls_still_unanswered_at_the_end() -> None:
    """An agent paused before its tools node: written, and read back with allow_pending."""
    typed = [QUESTION, tm.AIMessage(tool_calls=[CALL])]
    out = langchain.from_messages(typed, form="dicts")
    assert out == [
        {
            "type": "human",
            "data": {
                "content": "Weather?",
                "additional_kwargs": {},
                "response_metadata": {},
                "type": "human",
                "name": None,
                "id": None,
            },
        },
        {
            "type": "ai",
            "data": {
                "content": "",
                "additional_kwargs": {},
                "response_metadata": {},
                "type": "ai",
                "name": None,
                "id": None,
                "tool_calls": [
                    {
                        "name": "get_weather",
                        "args": {"city": "Paris"},
                        "id": "c1",
                        "type": "tool_call",
                    }
                ],
                "invalid_tool_calls": [],
                "usage_metadata": None,
            },
        },
    ]
    assert langchain.to_messages(out, allow_pending=True) == typed


def test_writer_writes_an_invalid_call_left_unanswered_mid_conversation() -> None:
    """Rule 6: a call whose arguments did not parse may go unanswered (LangGraph's ToolNode
    never runs it)."""
    invalid = tm.ToolCall(name="get_weather", invalid_args='{"city": ', id="c1")
    typed = [QUESTION, tm.AIMessage(tool_calls=[invalid]), tm.HumanMessage(content="next")]
    out = langchain.from_messages(typed)
    assert [m.type for m in out] == ["human", "ai", "human"]
    assert out[1].invalid_tool_calls == [
        {
            "type": "invalid_tool_call",
            "id": "c1",
            "name": "get_weather",
            "args": '{"city": ',
            "error": None,
        }
    ]
    assert langchain.to_messages(out) == typed


def test_a_message_made_with_model_construct_is_still_malformed_event() -> None:
    """The rules run on the typed messages as they are: a call list that is no list is the
    field's malformed_event, and so is a result id that is no string."""
    bad_calls = tm.AIMessage.model_construct(content="", tool_calls=None)
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([QUESTION, bad_calls])
    assert where(caught.value)[:3] == ("malformed_event", 1, "messages[1].tool_calls")
    number_id = tm.ToolMessage.model_construct(content="18C", tool_call_id=1)
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([QUESTION, tm.AIMessage(tool_calls=[CALL]), number_id])
    assert where(caught.value) == ("malformed_event", 2, "messages[2].tool_call_id", LC)


def test_an_item_that_is_no_message_is_refused_before_the_rules() -> None:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([QUESTION, {"role": "user"}])  # type: ignore[list-item]
    assert where(caught.value) == ("malformed_event", 1, "messages[1]", LC)


# --- a tool call without name, args or id: refused at the missing key -----------------------


def _dicts(call: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "human", "data": {"content": "Weather?"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [call]}},
    ]


def _flat(call: dict[str, Any]) -> list[dict[str, Any]]:
    ai = {
        "type": "ai",
        "content": "",
        "additional_kwargs": {},
        "response_metadata": {},
        "tool_calls": [call],
    }
    return [{"type": "human", "data": {"content": "Weather?"}}, ai]


FULL_CALL = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}


@pytest.mark.parametrize(("form", "at"), [
    (_dicts, "messages[1].data.tool_calls[0]"),  # messages_to_dict
    (_flat, "messages[1].tool_calls[0]"),  # a flat dump
], ids=["dict", "flat"])
@pytest.mark.parametrize("missing", ["name", "args", "id"])
def test_a_tool_call_without_a_key_is_refused_at_that_key(
    form: Callable[[dict[str, Any]], list[dict[str, Any]]], at: str, missing: str
) -> None:
    call = {k: v for k, v in FULL_CALL.items() if k != missing}
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(form(call))
    assert where(caught.value) == ("malformed_event", 1, f"{at}.{missing}", LC)
    assert caught.value.detail == (
        f"LangChain's tool_call() requires name, args and id (an id may be None); this tool "
        f"call has no '{missing}': {call!r}"
    )


def test_dict_tool_call_without_any_key_is_refused_at_the_first() -> None:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(_dicts({"type": "tool_call"}))
    assert where(caught.value) == (
        "malformed_event",
        1,
        "messages[1].data.tool_calls[0].name",
        LC,
    )


def test_dict_tool_call_later_in_the_list_is_named_by_its_position() -> None:
    second = {"name": "get_weather", "id": "c2"}
    trace = _dicts(FULL_CALL)
    trace[1]["data"]["tool_calls"].append(second)
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, allow_pending=True)
    assert where(caught.value) == (
        "malformed_event",
        1,
        "messages[1].data.tool_calls[1].args",
        LC,
    )


def test_dict_tool_call_with_id_none_is_read() -> None:
    """``id`` must be there, as ``None`` for a call without one."""
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": None}
    read = langchain.to_messages(_dicts(call), allow_pending=True)
    assert read[1] == tm.AIMessage(
        tool_calls=[tm.ToolCall(name="get_weather", args={"city": "Paris"})]
    )


def test_invalid_tool_call_without_keys_is_still_read() -> None:
    """LangChain's invalid_tool_call() takes every key as optional: nothing to refuse."""
    trace = _dicts(FULL_CALL)
    del trace[1]["data"]["tool_calls"]
    trace[1]["data"]["invalid_tool_calls"] = [{"args": "{"}]
    read = langchain.to_messages(trace, allow_pending=True)
    assert [(c.name, c.id, c.invalid_args) for c in read[1].tool_calls] == [("", None, "{")]


@pytest.mark.parametrize("missing", ["name", "args", "id"])
def test_object_tool_call_whose_key_was_deleted_is_refused_at_that_key(missing: str) -> None:
    ai = AIMessage("", tool_calls=[dict(FULL_CALL)])
    del ai.tool_calls[0][missing]  # type: ignore[misc]
    trace = [HumanMessage("Weather?"), ai, ToolMessage("18C", tool_call_id="c1")]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    assert where(caught.value) == ("malformed_event", 1, f"messages[1].tool_calls[0].{missing}", LC)
    assert caught.value.detail.startswith(
        f"LangChain's tool_call() requires name, args and id (an id may be None); this tool "
        f"call has no '{missing}' (taken out after the message was made?): "
    )


def test_object_and_its_dicts_name_the_same_key() -> None:
    ai = AIMessage("", tool_calls=[dict(FULL_CALL)])
    del ai.tool_calls[0]["args"]  # type: ignore[misc]
    trace = [HumanMessage("Weather?"), ai, ToolMessage("18C", tool_call_id="c1")]
    paths = []
    for given in (trace, messages_to_dict(trace)):
        with pytest.raises(TraceError) as caught:
            langchain.to_messages(given)
        paths.append(caught.value.path)
    assert paths == ["messages[1].tool_calls[0].args", "messages[1].data.tool_calls[0].args"]
