"""Error texts that speak the caller's language.

* The role/``call_id`` case reader's rule errors name ``transcript[i]``, ``call_id`` and the
  form's roles in their text, as their path does (never the typed model's ``messages[i]``,
  ``tool_call_id`` or ``AIMessage``); quoted ids and names stay as the case wrote them.
* Galtea's ``drop=`` refusals say what is wrong, in the words every writer uses: a string is
  refused whole, and of a list only the names that are not droppable are named.
* ``galtea.split_current_turn`` refuses an unknown option naming itself, as ``from_messages``
  does.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import galtea
from tracebridge.adapters.galtea import Omission
from tracebridge.evaluation import roles

ASK = {"role": "human", "content": "hi"}


def _call(call_id: str, name: str = "f") -> dict[str, Any]:
    return {"role": "ai", "tool_calls": [{"name": name, "call_id": call_id}]}


def _result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "call_id": call_id, "content": "r"}


def _refusal(transcript: list[Any]) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        roles.to_messages(transcript)
    error = caught.value
    return error.code, error.index, error.path, error.detail


# --- 1. the roles reader's rule errors ---------------------------------------------------------

@pytest.mark.parametrize(("transcript", "expected"), [
    pytest.param(
        [ASK, _call("c"), _result("z")],
        ("orphan_tool_result", 2, "transcript[2].call_id",
         "call_id 'z' names no call of transcript[1] (its call ids: ['c'])"),
        id="names-no-call",
    ),
    pytest.param(
        [ASK, _call("c"), _result("c"), _call("c"), _result("c")],
        ("duplicate_tool_call_id", 3, "transcript[3].tool_calls[0].call_id",
         "call_id 'c' is already used at transcript[1]"),
        id="duplicate-call-id",
    ),
    pytest.param(
        [ASK, _call("c"), _result("c"), _result("c")],
        ("orphan_tool_result", 3, "transcript[3].call_id",
         "call_id 'c' was already answered at transcript[2]"),
        id="already-answered",
    ),
    pytest.param(
        [ASK, _call("c"), ASK],
        ("unanswered_tool_call", 1, "transcript[1].tool_calls[0]",
         "tool call 'f' (call_id 'c') has no result before transcript[2]"),
        id="unanswered-before",
    ),
    pytest.param(
        [ASK, _call("c")],
        ("unanswered_tool_call", 1, "transcript[1].tool_calls[0]",
         "tool call 'f' (call_id 'c') has no result before the conversation ends"),
        id="unanswered-at-end",
    ),
    pytest.param(
        [ASK, {"role": "ai", "content": "x"}, _result("c")],
        ("orphan_tool_result", 2, "transcript[2].call_id",
         "tool result answers nothing: the ai message at transcript[1] has no tool calls"),
        id="opener-without-calls",
    ),
    pytest.param(
        [_result("c")],
        ("orphan_tool_result", 0, "transcript[0].call_id",
         "tool result answers nothing: no ai message comes before it"),
        id="no-ai-before",
    ),
    pytest.param(
        [ASK, _call("c"), _result("c"), ASK, _result("c")],
        ("orphan_tool_result", 4, "transcript[4].call_id",
         "tool result answers nothing: it must follow an ai message or a tool message, "
         "not a human message"),
        id="after-a-human-message",
    ),
])
def test_a_rule_error_speaks_the_forms_words(
    transcript: list[Any], expected: tuple[str, int, str, str]
) -> None:
    assert _refusal(transcript) == expected


def test_quoted_ids_and_names_stay_as_the_case_wrote_them() -> None:
    # an id or a name that reads like the typed model's words is the case's own value
    odd = "messages[0] tool_call_id (id AIMessage"
    quoted = "it's \"messages[0]\" (id tool call id"
    assert _refusal([ASK, _call(odd, name=quoted), ASK]) == (
        "unanswered_tool_call", 1, "transcript[1].tool_calls[0]",
        f"tool call {quoted!r} (call_id {odd!r}) has no result before transcript[2]",
    )
    assert _refusal([ASK, _call(odd), _result(quoted)]) == (
        "orphan_tool_result", 2, "transcript[2].call_id",
        f"call_id {quoted!r} names no call of transcript[1] (its call ids: [{odd!r}])",
    )


def test_the_whole_message_names_the_form() -> None:
    with pytest.raises(TraceError) as caught:
        roles.to_messages([ASK, _call("c"), _result("z")])
    assert str(caught.value) == (
        "roles: transcript[2].call_id: call_id 'z' names no call of transcript[1] "
        "(its call ids: ['c']) [orphan_tool_result]"
    )


# --- 2. galtea's drop= refusals ----------------------------------------------------------------

PAIR = [HumanMessage(content="a"), AIMessage(content="b")]


def _drop_refusal(write: Any, drop: Any) -> str:
    with pytest.raises(ValueError, match=r"^drop=") as caught:
        write(PAIR, drop=drop)
    assert not isinstance(caught.value, TraceError)
    return str(caught.value)


@pytest.mark.parametrize("write", [galtea.from_messages, galtea.split_current_turn])
@pytest.mark.parametrize("drop", ["citations", b"citations", None, 5, {"citations": False}])
def test_a_drop_that_is_no_list_is_refused_whole(write: Any, drop: Any) -> None:
    assert _drop_refusal(write, drop) == (
        f"drop= takes a list of names from {galtea.DROPPABLE}, got {drop!r}")


@pytest.mark.parametrize("write", [galtea.from_messages, galtea.split_current_turn])
def test_only_the_names_that_are_not_droppable_are_named(write: Any) -> None:
    assert _drop_refusal(write, ["citations", "nope", 1]) == (
        f"drop=['nope', 1] names nothing droppable; drop= takes a list of names from "
        f"{galtea.DROPPABLE}")


# --- 3. split_current_turn's options -----------------------------------------------------------

def test_an_unknown_option_of_split_current_turn_names_it() -> None:
    with pytest.raises(TypeError) as caught:
        galtea.split_current_turn(PAIR, skip_sytem=True)  # type: ignore[call-arg]
    assert str(caught.value) == (
        "split_current_turn() got an unexpected keyword argument 'skip_sytem'")


def test_split_current_turn_takes_the_options_of_from_messages() -> None:
    def options(function: Any) -> dict[str, Any]:
        parameters = inspect.signature(function).parameters
        return {name: parameters[name].default for name in list(parameters)[1:]}

    assert options(galtea.split_current_turn) == {**options(galtea.from_messages),
                                                  "shape": "pairs"}
    assert galtea.split_current_turn(PAIR, skip_system=True, drop=["citations"]) == ([], "a", "b")


# --- 4. mutation audit: gaps the tests above left open -----------------------------------------

def test_a_double_quoted_id_stays_as_the_case_wrote_it() -> None:
    # repr quotes an id holding an apostrophe with double quotes; its words are the case's too
    assert _refusal([ASK, _call("c"), _result("it's AIMessage")]) == (
        "orphan_tool_result", 2, "transcript[2].call_id",
        'call_id "it\'s AIMessage" names no call of transcript[1] (its call ids: [\'c\'])',
    )


# each keyword of split_current_turn reaches its own option: with it the split succeeds and
# records what it left out under that option's name; without it the same messages are refused
# at the place that option covers
_SPLIT_OPTIONS = [
    pytest.param(
        {"skip_system": True},
        [SystemMessage(content="s"), HumanMessage(content="a"), AIMessage(content="b")],
        ([], "a", "b"),
        [Omission(index=0, what="system_message", option="skip_system",
                  detail="system message 's'")],
        (0, "messages[0]",
         "a system message: Galtea turns hold only user and assistant text and files; "
         "skip_system=True leaves it out (recorded in omitted)"),
        id="skip_system",
    ),
    pytest.param(
        {"fold_tools": True},
        [HumanMessage(content="a"),
         AIMessage(content="", tool_calls=[ToolCall(id="c1", name="f", args={})]),
         ToolMessage(tool_call_id="c1", content="r"), AIMessage(content="b")],
        ([], "a", "b"),
        [Omission(index=1, what="tool_calls", option="fold_tools",
                  detail="1 tool call(s): f; the message had no text and is left out"),
         Omission(index=2, what="tool_result", option="fold_tools",
                  detail="result of 'c1': 'r'")],
        (1, "messages[1].tool_calls",
         "tool calls: Galtea turns hold only user and assistant text and files; "
         "fold_tools=True leaves it out (recorded in omitted)"),
        id="fold_tools",
    ),
    pytest.param(
        {"drop_non_text": True},
        [HumanMessage(content="a"), AIMessage(content="b"),
         HumanMessage(content=[TextPart(text="c"), ImagePart(url="https://x/i.png")]),
         AIMessage(content="d")],
        ([{"input": "a", "actual_output": "b"}], "c", "d"),
        [Omission(index=2, what="non_text_part", option="drop_non_text",
                  detail="image part at content[1]")],
        (2, "messages[2].content[1]",
         "an image part: Galtea turns hold only user and assistant text and files; "
         "drop_non_text=True leaves it out (recorded in omitted)"),
        id="drop_non_text",
    ),
    pytest.param(
        {"drop_names": True},
        [HumanMessage(content="a", name="ann"), AIMessage(content="b"),
         HumanMessage(content="c"), AIMessage(content="d")],
        ([{"input": "a", "actual_output": "b"}], "c", "d"),
        [Omission(index=0, what="name", option="drop_names", detail="name 'ann'")],
        (0, "messages[0].name",
         "a message name ('ann'): Galtea turns hold only user and assistant text and files; "
         "drop_names=True leaves it out (recorded in omitted)"),
        id="drop_names",
    ),
    pytest.param(
        {"join_consecutive": " "},
        [HumanMessage(content="a"), HumanMessage(content="a2"), AIMessage(content="b")],
        ([], "a a2", "b"),
        [Omission(index=1, what="joined", option="join_consecutive",
                  detail="joined into the user turn of messages[0]")],
        (1, "messages[1]",
         "two user messages in a row (messages[0] and messages[1]); a pair holds one input: "
         "join_consecutive=<separator> joins them, shape='roles' keeps both"),
        id="join_consecutive",
    ),
    pytest.param(
        {"drop": ["part_boundaries"]},
        [HumanMessage(content="a"), AIMessage(content=[TextPart(text="b"), TextPart(text="c")])],
        ([], "a", "b\nc"),
        [Omission(index=1, what="part_boundaries", option="drop=part_boundaries",
                  detail="2 text parts joined by newlines")],
        (1, "messages[1].content",
         "several text parts: a Galtea turn holds one text; drop=['part_boundaries'] leaves "
         "it out (recorded in omitted)"),
        id="drop",
    ),
]


@pytest.mark.parametrize(("option", "messages", "split", "omissions", "refusal"),
                         _SPLIT_OPTIONS)
def test_each_option_of_split_current_turn_reaches_its_own_field(
    option: dict[str, Any],
    messages: list[Any],
    split: tuple[Any, ...],
    omissions: list[Omission],
    refusal: tuple[int, str, str],
) -> None:
    omitted: list[Omission] = []
    assert galtea.split_current_turn(messages, omitted=omitted, **option) == split
    assert omitted == omissions
    with pytest.raises(TraceError) as caught:
        galtea.split_current_turn(messages)
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "not_representable", *refusal)
