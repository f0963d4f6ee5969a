"""Galtea ``from_messages``: what an audit found written silently, now refused.

The writer did not check the conversation rules (with ``fold_tools=True`` an orphan result, a
duplicate call id or a call left unanswered mid-conversation was folded away, and an empty
conversation was written as ``[]``); extra keys ``id`` + ``index`` + ``session_id`` were written
into a turn, which then read back as a ``Trace`` record; bad option values escaped as
``TypeError`` / ``AttributeError``; ``join_consecutive`` moved a message's text before the
files of the message it was joined to without a word; an empty text part beside files was
left out unrecorded when ``drop_non_text`` took another part of the message.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import galtea
from tracebridge.messages import FilePart, ImagePart, TextPart

SHAPES = ["roles", "history", "pairs"]


def _error(messages: list[Any], **options: Any) -> tuple[str, int | None, str | None]:
    omitted: list[galtea.Omission] = []
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, omitted=omitted, **options)
    assert caught.value.source == "galtea"
    assert omitted == []  # filled only when the conversion succeeds
    return caught.value.code, caught.value.index, caught.value.path


# --- 5. the conversation rules -----------------------------------------------------------------

ORPHAN = [HumanMessage(content="hi"), ToolMessage(content="42", tool_call_id="nope"),
          AIMessage(content="ok")]
DUPLICATE = [HumanMessage(content="hi"),
             AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1"),
                                               ToolCall(name="g", id="c1")]),
             ToolMessage(content="1", tool_call_id="c1"),
             ToolMessage(content="2", tool_call_id="c1"), AIMessage(content="done")]
UNANSWERED = [HumanMessage(content="hi"),
              AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1")]),
              HumanMessage(content="again"), AIMessage(content="x")]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("messages", "expected"), [
    (ORPHAN, ("orphan_tool_result", 1, "messages[1].tool_call_id")),
    (DUPLICATE, ("duplicate_tool_call_id", 1, "messages[1].tool_calls[1].id")),
    (UNANSWERED, ("unanswered_tool_call", 1, "messages[1].tool_calls[0]")),
], ids=["orphan", "duplicate", "unanswered"])
def test_fold_tools_does_not_hide_a_broken_conversation(
    shape: str, messages: list[Any], expected: tuple[str, int, str]
) -> None:
    assert _error(messages, shape=shape, fold_tools=True) == expected


@pytest.mark.parametrize("shape", SHAPES)
def test_an_empty_conversation_is_not_written(shape: str) -> None:
    assert _error([], shape=shape) == ("empty_conversation", None, None)
    assert _error([], shape=shape, fold_tools=True) == ("empty_conversation", None, None)


def test_split_current_turn_checks_the_rules_too() -> None:
    with pytest.raises(TraceError) as caught:
        galtea.split_current_turn(ORPHAN, fold_tools=True)
    assert (caught.value.code, caught.value.index) == ("orphan_tool_result", 1)


def test_without_fold_tools_a_tool_result_is_refused_as_galtea_cannot_hold_it() -> None:
    assert _error(ORPHAN) == ("not_representable", 1, "messages[1]")


def test_a_call_pending_at_the_end_is_still_folded() -> None:
    omitted: list[galtea.Omission] = []
    pending = [HumanMessage(content="hi"),
               AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1")])]
    assert galtea.from_messages(pending, fold_tools=True, omitted=omitted) == [
        {"role": "user", "content": "hi"}]
    assert [(o.index, o.what, o.option) for o in omitted] == [(1, "tool_calls", "fold_tools")]


# --- 6. extra keys that would make a turn a Trace record ---------------------------------------

@pytest.mark.parametrize("session", ["session_id", "sessionId"])
@pytest.mark.parametrize("shape", ["roles", "pairs"])
def test_extra_keys_marking_a_trace_record_are_not_representable(shape: str,
                                                                 session: str) -> None:
    extra = {"id": "x", "index": 0, session: "s"}
    pairs = {"shape": "pairs"} if shape == "pairs" else {}
    messages = [HumanMessage(content="hi", metadata={"galtea": pairs}),
                AIMessage(content="yo", metadata={"galtea": {**pairs, "extra": extra}})]
    assert _error(messages, shape=shape) == (
        "not_representable", 1, "messages[1].metadata.galtea.extra.id")


@pytest.mark.parametrize("extra", [{"id": "x"}, {"index": 0, "session_id": "s"},
                                   {"id": "x", "session_id": "s"}])
def test_one_record_key_alone_is_an_extra_key_like_any_other(extra: dict[str, Any]) -> None:
    # A role turn with it reads back as a role turn (lossless), so it is written.
    turns = [{"role": "user", "content": "hi", **extra}, {"role": "assistant", "content": "yo"}]
    assert galtea.from_messages(galtea.to_messages(turns)) == turns


# --- 7. option values --------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "message"), [
    ({"join_consecutive": 5}, "join_consecutive must be a separator string or None, got 5"),
    ({"drop": None}, r"^drop= takes a list of names from \('refusals', .*\), got None$"),
    ({"drop": 5}, r"^drop= takes a list of names from \('refusals', .*\), got 5$"),
    ({"drop": [["x"]]}, r"drop=\[\['x'\]\] names nothing droppable"),
    ({"omitted": ()}, r"omitted must be a list \(what was left out is appended to it\) or "
                      r"None, got \(\)"),
])
def test_a_bad_option_value_is_a_value_error(options: dict[str, Any], message: str) -> None:
    broken = [ToolMessage(content="r", tool_call_id="x")]  # refused only after the options
    for messages in ([HumanMessage(content="q"), AIMessage(content="a")], broken):
        with pytest.raises(ValueError, match=message):
            galtea.from_messages(messages, **options)
    with pytest.raises(ValueError, match=message):
        galtea.split_current_turn(broken, **options)


# --- 9. join_consecutive moving text before files ----------------------------------------------

FILED = HumanMessage(content=[TextPart(text="a"), FilePart(url="gs://x")])
JOINED = [{"role": "user", "content": "a\nb",
           "input_files": [{"uri": "gs://x", "filename": None, "mime_type": None,
                            "type": "file"}]},
          {"role": "assistant", "content": "c"}]


def test_joining_text_after_files_needs_part_order() -> None:
    messages = [FILED, HumanMessage(content="b"), AIMessage(content="c")]
    assert _error(messages, join_consecutive="\n") == (
        "not_representable", 1, "messages[1].content")
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, join_consecutive="\n", drop=["part_order"],
                                omitted=omitted) == JOINED
    assert [(o.index, o.what, o.option) for o in omitted] == [
        (1, "part_order", "drop=part_order"), (1, "joined", "join_consecutive")]


def test_joining_text_before_files_keeps_the_order() -> None:
    messages = [HumanMessage(content="a"),
                HumanMessage(content=[TextPart(text="b"), FilePart(url="gs://x")]),
                AIMessage(content="c")]
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, join_consecutive="\n", omitted=omitted) == JOINED
    assert [o.what for o in omitted] == ["joined"]


# --- 7. an empty text part beside files, when drop_non_text took another part ------------------

def test_drop_non_text_does_not_cover_an_empty_text_part_beside_files() -> None:
    messages = [HumanMessage(content=[TextPart(text=""), FilePart(url="gs://x"),
                                      ImagePart(url="https://i")])]
    assert _error(messages, drop_non_text=True) == ("not_representable", 0, "messages[0].content")
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, drop_non_text=True, drop=["part_boundaries"],
                                omitted=omitted) == [JOINED[0] | {"content": ""}]
    assert [(o.index, o.what, o.option) for o in omitted] == [
        (0, "non_text_part", "drop_non_text"), (0, "part_boundaries", "drop=part_boundaries")]
