"""A call whose arguments did not parse (``invalid_args``) crosses formats whole or is refused.

Writers put ``invalid_args`` back as the raw argument text, and the same format's reader
parses that text again. Where the reader takes it as arguments (``""`` is a tool without
parameters to the OpenAI readers and to LangChain's ``parse_tool_call``; an object with
spaces around it, or with a repeated key, is an object to ``json``), the call would come back
as another call, one with arguments: the writer refuses it instead, ``not_representable`` at
``messages[i].tool_calls[k].invalid_args``. No ``drop=`` option fits: leaving the call out
would orphan its result, and writing it as parsed would "fix" what the agent produced.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import HumanMessage as LangChainHuman
from langchain_core.messages import ToolMessage as LangChainTool

from tracebridge import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import langchain
from tracebridge.cli import to_json
from tracebridge.registry import FORMATS, get_adapter

OBJECT_TEXTS = (
    "{}",
    " {} ",
    '{"a": 1}',
    ' {"a": 1} ',
    '\n{"a": 1}\n',
    '{"a": 1, "a": 2}',  # json keeps the last: {"a": 2}
)
"""Texts that are a JSON object (to ``json``), though not in the spelling a writer makes."""

CARRIED_TEXTS = (
    "null", "[]", "[1]", "0", "false", '""', " ", '{"a": 1} x', "NaN", '{"a": NaN}', "1e999",
    '{"city": ', "not json",
)
"""Texts no reader takes as arguments. LangChain's ``parse_tool_call`` reads a falsy JSON
value (``null``, ``[]``, ``0``, ``false``, ``""``) as ``{}``, but only in places a call was
parsed; ``invalid_tool_calls`` keep them verbatim."""

_OPENAI = frozenset(("", *OBJECT_TEXTS))
READ_AS_ARGUMENTS: dict[str, frozenset[str]] = {
    "tracebridge": frozenset(),
    "openai_chat": _OPENAI,
    "swarm": _OPENAI,
    "langchain": frozenset(("",)),
    "llama_index": frozenset(OBJECT_TEXTS),  # its reader takes "" as invalid text
    "galtea": frozenset(),  # refuses every tool call (below)
    "openai_responses": _OPENAI,
    "openai_agents": _OPENAI,
    "otel": _OPENAI,
}
"""For each format, the texts its reader takes as a call's arguments (so its writer refuses
a call with that ``invalid_args``)."""

NOT_FIXED: frozenset[str] = frozenset()
"""Readers whose writers still write such a call (not fixed here; each case is a strict xfail,
so fixing the writer turns it into a failure that asks for this set to shrink)."""


def test_the_table_names_every_format() -> None:
    assert set(READ_AS_ARGUMENTS) == set(FORMATS)


def conversation(text: str) -> list[Any]:
    return [
        HumanMessage(content="What is the weather in Paris?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", invalid_args=text, id="c1")]),
        ToolMessage(content="Error: the arguments are not a JSON object", tool_call_id="c1"),
        AIMessage(content="Sorry, let me try again."),
    ]


def through(target: str, messages: list[Any], **options: Any) -> list[Any]:
    """``messages`` written to ``target``, stored as JSON, read back."""
    written = get_adapter(target).from_messages(messages, **options)
    stored = json.loads(json.dumps(to_json(target, written)))
    return list(get_adapter(target).to_messages(stored, allow_pending=True))


def refusal(target: str, messages: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        get_adapter(target).from_messages(messages, **options)
    return caught.value


def _cases() -> list[Any]:
    cases = []
    for target in FORMATS:
        for text in sorted({*CARRIED_TEXTS, *OBJECT_TEXTS, ""}):
            marks = []
            if target in NOT_FIXED and text in READ_AS_ARGUMENTS[target]:
                marks.append(pytest.mark.xfail(
                    strict=True, reason=f"{target} still writes the text, which it reads parsed"
                ))
            cases.append(pytest.param(target, text, marks=marks, id=f"{target}-{text!r}"))
    return cases


@pytest.mark.parametrize(("target", "text"), _cases())
def test_a_call_with_invalid_args_comes_back_the_same_or_is_refused(
    target: str, text: str
) -> None:
    messages = conversation(text)
    if target == "galtea":  # Galtea turns have no tool calls at all
        error = refusal(target, messages)
        assert (error.code, error.index, error.path, error.source) == (
            "not_representable", 1, "messages[1].tool_calls", "galtea"
        )
    elif text in READ_AS_ARGUMENTS[target]:
        error = refusal(target, messages)
        assert (error.code, error.index, error.path, error.source) == (
            "not_representable", 1, "messages[1].tool_calls[0].invalid_args", target
        )
        assert f"invalid_args={text!r}" in error.detail
        assert "drop=" not in error.detail  # no option accepts this loss
    else:
        assert through(target, messages) == messages


REFUSING = [t for t in FORMATS if "" in READ_AS_ARGUMENTS[t]]


@pytest.mark.parametrize("target", REFUSING)
def test_the_refusal_points_at_the_call_among_others(target: str) -> None:
    messages = [
        HumanMessage(content="Weather in Paris and Rome?"),
        AIMessage(content="Checking."),
        HumanMessage(content="Both, please."),
        AIMessage(tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}, id="c1"),
            ToolCall(name="get_weather", invalid_args="", id="c2"),
        ]),
        ToolMessage(content="sunny", tool_call_id="c1"),
        ToolMessage(content="Error: no city", tool_call_id="c2"),
    ]
    error = refusal(target, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 3, "messages[3].tool_calls[1].invalid_args"
    )


@pytest.mark.parametrize("target", ["openai_chat", "swarm", "langchain", "otel"])
def test_an_id_less_call_is_refused_too(target: str) -> None:
    # Without ids Chat Completions writes the legacy function_call: the same text, read the same.
    messages = [
        HumanMessage(content="hi"),
        AIMessage(tool_calls=[ToolCall(name="now", invalid_args="")]),
        ToolMessage(content="Error", name="now"),
    ]
    error = refusal(target, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )


@pytest.mark.parametrize(
    ("target", "left"),
    [
        ("openai_chat", [AIMessage(content="")]),
        ("swarm", [AIMessage(content="")]),
        # the option names the call, not the reply: the turn stays, as an empty message item
        ("openai_responses", [AIMessage(content="")]),
        ("openai_agents", [AIMessage(content="")]),
    ],
)
def test_an_unanswered_call_is_refused_as_unanswered_and_drop_leaves_it_out(
    target: str, left: list[Any]
) -> None:
    # A call no result answers has its own refusal, with the option that leaves it out.
    messages = [HumanMessage(content="hi"), AIMessage(tool_calls=[
        ToolCall(name="now", invalid_args="", id="c1")
    ])]
    error = refusal(target, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0]"
    )
    assert "drop=['unanswered_calls']" in error.detail
    assert through(target, messages, drop=["unanswered_calls"]) == [messages[0], *left]


@pytest.mark.parametrize("target", ["langchain", "otel"])
def test_an_unanswered_call_is_refused_where_unanswered_calls_are_written(target: str) -> None:
    messages = [HumanMessage(content="hi"), AIMessage(tool_calls=[
        ToolCall(name="now", invalid_args="", id="c1")
    ])]
    error = refusal(target, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )


# --- convert, from traces a framework produced --------------------------------------------


def langchain_trace(invalid: dict[str, Any]) -> list[Any]:
    return [
        LangChainHuman("What is the weather in Paris?"),
        LangChainAI("", invalid_tool_calls=[{"id": "c1", "error": None, **invalid}]),
        LangChainTool("Error: bad arguments", tool_call_id="c1"),
    ]


@pytest.mark.parametrize(
    ("invalid", "text"),
    [
        # LangChain files a call without arguments as invalid with args None: invalid_args "".
        ({"name": "get_weather", "args": None}, ""),
        ({"name": "get_weather", "args": ' {"city": "Paris"} '}, ' {"city": "Paris"} '),
    ],
)
@pytest.mark.parametrize("target", ["openai_chat", "openai_responses", "otel"])
def test_convert_refuses_a_langchain_invalid_call_the_target_reads_parsed(
    invalid: dict[str, Any], text: str, target: str
) -> None:
    trace = langchain_trace(invalid)
    [_, ai, _] = langchain.to_messages(trace)
    assert [call.invalid_args for call in ai.tool_calls] == [text]
    assert langchain.from_messages(langchain.to_messages(trace)) == trace  # lossless at home
    with pytest.raises(TraceError) as caught:
        convert(trace, source="langchain", target=target)
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args", target
    )


def test_convert_carries_a_langchain_invalid_call_the_target_keeps_as_text() -> None:
    trace = langchain_trace({"name": "get_weather", "args": '{"city": '})
    written = convert(trace, source="langchain", target="openai_chat")
    assert written[1]["tool_calls"][0]["function"]["arguments"] == '{"city": '
    again = get_adapter("openai_chat").to_messages(written)
    assert transcript_hash(again) == transcript_hash(langchain.to_messages(trace))
    assert again[1].tool_calls == [ToolCall(name="get_weather", invalid_args='{"city": ', id="c1")]


# --- each writer's other places for a call --------------------------------------------------


def with_call(messages: list[Any], **update: Any) -> list[Any]:
    """``messages`` with the first call of ``messages[1]`` updated."""
    ai = messages[1]
    call = ai.tool_calls[0].model_copy(update=update)
    return [messages[0], ai.model_copy(update={"tool_calls": [call]}), *messages[2:]]


def test_langchain_refuses_an_entry_whose_kept_args_read_back_as_other_text() -> None:
    # The entry's args come from the kept source value (None), which reads as "": an edited
    # invalid_args would silently come back as "".
    typed = langchain.to_messages(langchain_trace({"name": "f", "args": None}))
    assert langchain.from_messages(typed)[1].invalid_tool_calls[0]["args"] is None
    error = refusal("langchain", with_call(typed, invalid_args="{oops"))
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )


@pytest.mark.parametrize("text", ["", "null", "0", "[]", " {} ", '{"a": 1}'])
def test_langchain_refuses_a_call_only_a_block_names_when_parse_tool_call_parses_it(
    text: str,
) -> None:
    # Named only by a Responses function_call block, the call is parsed as parse_tool_call
    # does: a falsy JSON value is {} there.
    block = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "[1]"}
    trace = [LangChainHuman("go"), LangChainAI([block]), LangChainTool("r", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    assert typed[1].tool_calls[0].invalid_args == "[1]"
    assert langchain.from_messages(typed) == trace
    error = refusal("langchain", with_call(typed, invalid_args=text))
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )
    kept = with_call(typed, invalid_args="[2]")  # still not arguments: written as given
    assert langchain.to_messages(langchain.from_messages(kept))[1].tool_calls[0].invalid_args == (
        "[2]"
    )


def test_langchain_refuses_an_invalid_call_kept_with_an_object_block() -> None:
    block = {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}
    trace = [LangChainHuman("go"), LangChainAI([block]), LangChainTool("r", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    error = refusal("langchain", with_call(typed, args={}, invalid_args="{oops"))
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )


@pytest.mark.parametrize(("item", "tool"), [("web_search_call", "web_search"),
                                           ("computer_call", "computer")])
def test_responses_refuses_invalid_args_on_an_item_that_holds_its_input_as_fields(
    item: str, tool: str
) -> None:
    # Named as the reader names such a call (the item type names the tool).
    messages = with_call(
        conversation("{oops"), name=tool, metadata={"openai_responses": {"item": item}}
    )
    messages[2] = ToolMessage(content="{}", tool_call_id="c1")
    error = refusal("openai_responses", messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )


def test_otel_refuses_invalid_args_recorded_as_an_object_and_carries_a_list() -> None:
    # The GenAI reader takes a recorded object as the arguments; any other value is kept.
    recorded_object = with_call(conversation("{}"), metadata={"otel": {"arguments": {}}})
    error = refusal("otel", recorded_object)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
    )
    recorded_list = with_call(conversation("[1]"), metadata={"otel": {"arguments": [1]}})
    assert through("otel", recorded_list) == recorded_list


# --- any text -------------------------------------------------------------------------------


def _not_json(token: str) -> Any:
    raise ValueError(token)


def _finite(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(token)
    return value


def is_python_json_object(text: str) -> bool:
    """What ``json.loads`` says, refusing NaN and infinities spelled as such: an object?"""
    try:
        value = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return False
    return type(value) is dict


def is_json_object(text: str) -> bool:
    """What ``json`` says, as strict JSON (no NaN, no infinities): is ``text`` an object?"""
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError):
        return False
    return type(value) is dict


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner,
                                                                 max_size=2),
    max_leaves=4,
)
_AROUND = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\u00a0", "\ufeff", "x", ",", "}"])
TEXTS = st.one_of(
    st.text(max_size=10),
    st.builds(lambda before, value, after: before + json.dumps(value) + after,
              _AROUND, _JSON, _AROUND),
)

CHECKED = [t for t in FORMATS if t not in NOT_FIXED and t != "galtea"]


@pytest.mark.parametrize("target", CHECKED)
@given(text=TEXTS)
@example(text="")
@example(text=" {} ")
@example(text='{"a": 1, "a": 2}')
@example(text="null")
@example(text='{"a": Infinity}')
def test_any_invalid_args_comes_back_the_same_or_is_refused(target: str, text: str) -> None:
    messages = conversation(text)
    if target == "tracebridge":
        parsed = False
    elif target == "langchain":
        parsed = text == ""
    elif target == "llama_index":  # json.loads: "" is not JSON; 1e999 is a (non-finite) float
        parsed = is_python_json_object(text)
    else:
        parsed = text == "" or is_json_object(text)
    if parsed:
        error = refusal(target, messages)
        assert (error.code, error.index, error.path) == (
            "not_representable", 1, "messages[1].tool_calls[0].invalid_args"
        )
    else:
        assert through(target, messages) == messages
