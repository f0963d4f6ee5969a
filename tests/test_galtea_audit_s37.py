"""Galtea: what the fourth audit found (``/tmp/audit_galtea_4``), now refused where it is.

1. A ``Trace`` whose ``input`` is ``""`` beside an ``input_data`` with a null or absent
   ``user_message`` read like the record without ``input``: the ``""`` was lost (``""`` and
   null were taken for one value). The SDK's ``input`` is ``None`` then, so the two disagree.
2. Errors inside a record named keys the record does not have (the ``ConversationMessage``
   built from it: ``metadata``, ``input_files``, ``output_files``), or one key with a dot
   (``['input_data.user_message']``); now the record's own key, as spelled.
3. ``from_messages`` wrote ``[]`` when the options left out every message; Galtea takes no
   empty turn list (``traces.create_batch`` refuses one), and ``to_messages([])`` and
   ``split_current_turn`` refuse it: now ``empty_conversation`` too.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import galtea

pytest.importorskip("galtea")
from galtea.application.services.trace_service import TraceService
from galtea.domain.models.trace import Trace


def _error(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    assert caught.value.source == "galtea"
    return caught.value


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- 1. an empty input beside an input_data with no user_message -------------------------------

SDK_RECORD = {"id": "t1", "index": 0, "session_id": "s"}


def test_an_sdk_trace_with_an_empty_input_and_no_user_message_is_conflicting() -> None:
    trace = Trace(id="t1", index=0, session_id="s", input="", input_data={"k": 1},
                  actual_output="ok")
    error = _error(galtea.to_messages, [trace])
    assert _where(error) == ("conflicting_fields", 0, "traces[0].input")
    assert str(error) == ("galtea: traces[0].input: the input '' is not "
                          "input_data.user_message None [conflicting_fields]")
    for dump in (trace.model_dump(), trace.model_dump(mode="json")):
        assert _where(_error(galtea.to_messages, [dump])) == (
            "conflicting_fields", 0, "traces[0].input")
    camel = trace.model_dump(by_alias=True, mode="json")
    error = _error(galtea.to_messages, [camel])
    assert _where(error) == ("conflicting_fields", 0, "traces[0].input")
    assert error.detail == "the input '' is not inputData.user_message None"


@pytest.mark.parametrize("input_data", [{"k": 1}, {"user_message": None, "k": 1}])
def test_an_empty_input_is_not_an_absent_or_null_user_message(
    input_data: dict[str, Any]
) -> None:
    record = {**SDK_RECORD, "input": "", "input_data": input_data, "actual_output": "ok"}
    assert _where(_error(galtea.to_messages, [record])) == (
        "conflicting_fields", 0, "traces[0].input")
    second = {**record, "id": "t2", "index": 1}
    good = {**SDK_RECORD, "input": "q", "actual_output": "a"}
    assert _where(_error(galtea.to_messages, [good, second])) == (
        "conflicting_fields", 1, "traces[1].input")


def test_an_input_that_agrees_with_its_user_message_still_reads() -> None:
    # the output side's rule, mirrored: "" beside "" and None beside null agree
    [asked, answer] = galtea.to_messages([{**SDK_RECORD, "input": "", "actual_output": "ok",
                                           "input_data": {"user_message": "", "k": 1}}])
    assert isinstance(asked, HumanMessage)
    assert asked.text == ""
    assert asked.metadata["galtea"]["metadata"] == {"user_message": "", "k": 1}
    assert answer.text == "ok"
    sdk_read = Trace.model_validate({"id": "t1", "index": 0, "sessionId": "s",
                                     "input": {"k": 1}, "actualOutput": "ok"})
    assert sdk_read.input is None  # how the SDK reads an input object with no user_message
    [asked, answer] = galtea.to_messages([sdk_read])
    assert asked.text == ""
    assert asked.metadata["galtea"]["metadata"] == {"k": 1}
    assert answer.text == "ok"


# --- 2. error paths name the record's own keys -------------------------------------------------

API_RECORD = {"id": "t1", "index": 0, "sessionId": "s", "actualOutput": "ok"}


@pytest.mark.parametrize(
    ("fields", "code", "path"),
    [
        ({"input": "q", "inputFiles": [{"uri": 5}]},
         "malformed_event", "inputFiles[0].uri"),
        ({"input": "q", "actualOutputFiles": [{"uri": None}]},
         "malformed_event", "actualOutputFiles[0].uri"),
        ({"input": "q", "actual_output_files": "x"},
         "malformed_event", "actual_output_files"),
        ({"input": "q", "input_files": "x"},
         "malformed_event", "input_files"),
        ({"input_data": {"user_message": "x", "k": float("nan")}},
         "unserializable_value", "input_data.k"),
        ({"inputData": {"user_message": "x", "k": [1, float("nan")]}},
         "unserializable_value", "inputData.k[1]"),
        ({"input": {"user_message": "x", "k": (1,)}},
         "unserializable_value", "input.k"),
        ({"input": "q", "actualOutput": {"assistant_message": "x", "k": float("nan")}},
         "unserializable_value", "actualOutput.k"),
        ({"input_data": {"user_message": 0}},
         "malformed_event", "input_data.user_message"),
        ({"inputData": {"user_message": 0}},
         "malformed_event", "inputData.user_message"),
        ({"input": {"user_message": 0}},
         "malformed_event", "input.user_message"),
        ({"actualInput": {"user_message": 0}},
         "malformed_event", "actualInput.user_message"),
    ],
)
def test_an_error_in_a_record_names_the_records_own_key(
    fields: dict[str, Any], code: str, path: str
) -> None:
    record = {**API_RECORD, **fields}
    assert _where(_error(galtea.to_messages, [record])) == (code, 0, f"traces[0].{path}")
    second = {**record, "id": "t2", "index": 1}
    good = {**API_RECORD, "input": "q"}
    assert _where(_error(galtea.to_messages, [good, second])) == (code, 1, f"traces[1].{path}")


def test_an_error_in_an_sdk_traces_input_object_names_its_dump_key() -> None:
    trace = Trace.model_validate({"id": "t1", "index": 0, "sessionId": "s",
                                  "input": {"user_message": "x", "k": math.nan},
                                  "actualOutput": "ok"})
    assert _where(_error(galtea.to_messages, [trace])) == (
        "unserializable_value", 0, "traces[0].input_data.k")
    camel = trace.model_dump(by_alias=True)
    error = _error(galtea.to_messages, [camel])
    assert _where(error) == ("unserializable_value", 0, "traces[0].inputData.k")
    assert str(error) == ("galtea: traces[0].inputData.k: nan is not a finite number "
                          "[unserializable_value]")


def test_a_files_error_names_the_key_and_keeps_the_detail() -> None:
    error = _error(galtea.to_messages, [{**API_RECORD, "input": "q",
                                         "inputFiles": [{"uri": 5}]}])
    assert str(error) == ("galtea: traces[0].inputFiles[0].uri: an attached file needs its "
                          "reference as a string under 'uri', got 5 [malformed_event]")


# --- 3. nothing left to write after the options ------------------------------------------------

ONLY_SYSTEM = [SystemMessage(content="You are a pirate.")]
TOOL_ROUND = [AIMessage(content="", tool_calls=[ToolCall(name="lookup", args={}, id="c1")]),
              ToolMessage(content="42", tool_call_id="c1")]
LEFT_OUT = (
    "no turn to write: skip_system / fold_tools left out all {n} message(s), and Galtea takes "
    "no empty conversation (traces.create_batch refuses one)"
)


@pytest.mark.parametrize("shape", ["roles", "history", "pairs"])
@pytest.mark.parametrize(
    ("messages", "options"),
    [(ONLY_SYSTEM, {"skip_system": True}), (TOOL_ROUND, {"fold_tools": True}),
     (ONLY_SYSTEM + TOOL_ROUND, {"skip_system": True, "fold_tools": True})],
)
def test_a_conversation_the_options_leave_empty_is_not_written(
    messages: list[Any], options: dict[str, Any], shape: str
) -> None:
    omitted: list[galtea.Omission] = []
    error = _error(galtea.from_messages, messages, shape=shape, omitted=omitted, **options)
    assert _where(error) == ("empty_conversation", None, None)
    assert error.detail == LEFT_OUT.format(n=len(messages))
    assert omitted == []  # filled only when the conversion succeeds
    assert _where(_error(galtea.split_current_turn, messages, shape=shape, **options)) == (
        "empty_conversation", None, None)


@pytest.mark.parametrize("options", [{}, {"skip_system": True}, {"fold_tools": True}])
def test_no_messages_at_all_is_still_the_rules_empty_conversation(
    options: dict[str, Any]
) -> None:
    error = _error(galtea.from_messages, [], **options)
    assert _where(error) == ("empty_conversation", None, None)
    assert error.detail == "a conversation needs at least one message"


def test_a_message_left_beside_what_the_options_left_out_is_written() -> None:
    omitted: list[galtea.Omission] = []
    turns = galtea.from_messages([*ONLY_SYSTEM, HumanMessage(content="hi")], skip_system=True,
                                 omitted=omitted)
    assert turns == [{"role": "user", "content": "hi"}]
    assert [(o.index, o.what) for o in omitted] == [(0, "system_message")]


def test_the_sdk_refuses_an_empty_turn_list() -> None:
    # why [] is refused: traces.create_batch checks its turns before any request
    service = object.__new__(TraceService)
    with pytest.raises(ValueError, match="conversation_turns must be a non-empty list"):
        service.create_batch(session_id="s", conversation_turns=[])
