"""Galtea: what a third audit found dropped, read twice, written silently or raising raw, now
refused where it is.

1. What a record or an ``AgentInput`` says twice was compared with Python's ``==``: ``True``,
   ``1`` and ``1.0`` read as one value and one of them was dropped (sessions merged too).
2. An ``AgentInput`` whose ``messages`` was reassigned (``None``, a number, a tuple) let a raw
   ``TypeError`` out of its dump, or was refused with no path.
3. ``split_current_turn(shape=None)`` wrote and then raised a raw ``AssertionError``.
4. A record given twice was caught only when its id was a string.
5. The writer ignored a ``metadata["galtea"]`` on a text (or refusal) part.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, TextPart, TraceError, registry
from tracebridge.adapters import galtea
from tracebridge.messages import RefusalPart

pytest.importorskip("galtea")
from galtea.domain.models.trace import Trace
from galtea.utils.agent import AgentInput, ConversationMessage


def _refused(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    assert caught.value.source == "galtea"
    return caught.value


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- 1. said twice: equal as JSON, types included -----------------------------------------------

def _record(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "index": 0, "session_id": "s", "actual_output": "ok", **fields}


def test_input_data_spelled_twice_with_true_and_1_conflicts() -> None:
    record = _record(input="hi", input_data={"user_message": "hi", "n": True},
                     inputData={"user_message": "hi", "n": 1})
    error = _refused(galtea.to_messages, [record])
    assert _where(error) == ("conflicting_fields", 0, "traces[0].inputData")
    assert str(error) == ("galtea: traces[0].inputData: input_data is {'user_message': 'hi', "
                          "'n': True} but inputData is {'user_message': 'hi', 'n': 1} "
                          "[conflicting_fields]")


def test_an_input_envelope_with_1_0_beside_input_data_with_1_conflicts() -> None:
    record = {"id": "t1", "index": 0, "sessionId": "s", "input": {"user_message": "hi", "n": 1.0},
              "input_data": {"user_message": "hi", "n": 1}, "actualOutput": "ok"}
    assert _where(_refused(galtea.to_messages, [record])) == (
        "conflicting_fields", 0, "traces[0].input")


def test_an_output_envelope_with_1_beside_actual_output_data_with_true_conflicts() -> None:
    record = {"id": "t1", "index": 0, "sessionId": "s", "input": "hi",
              "actualOutput": {"assistant_message": "a", "score": 1},
              "actual_output_data": {"assistant_message": "a", "score": True}}
    assert _where(_refused(galtea.to_messages, [record])) == (
        "conflicting_fields", 0, "traces[0].actualOutput")


def test_the_same_values_said_twice_still_read() -> None:
    record = _record(input="hi", input_data={"user_message": "hi", "n": 1},
                     inputData={"user_message": "hi", "n": 1})
    assert galtea.to_messages([record])[0].metadata["galtea"]["metadata"] == {"n": 1}


def test_session_ids_1_and_true_are_two_sessions() -> None:
    records = [{"id": "t1", "index": 0, "session_id": 1, "input": "a", "actual_output": "b"},
               {"id": "t2", "index": 1, "session_id": True, "input": "c", "actual_output": "d"}]
    error = _refused(galtea.to_messages, records)
    assert _where(error) == ("ambiguous_trace", 1, "traces[1].session_id")
    assert str(error) == ("galtea: traces[1].session_id: records of 2 sessions, one "
                          "conversation each (session 1: traces[0]; session True: traces[1]); "
                          "pass the records of one session (traces.list(session_id=...)) "
                          "[ambiguous_trace]")


def test_a_session_spelled_twice_as_1_and_true_conflicts() -> None:
    record = {"id": "t1", "index": 0, "session_id": 1, "sessionId": True, "input": "a",
              "actual_output": "b"}
    assert _where(_refused(galtea.to_messages, [record])) == (
        "conflicting_fields", 0, "traces[0].sessionId")


def test_agent_input_files_with_size_true_against_the_messages_size_1_conflicts() -> None:
    def file(size: Any) -> dict[str, Any]:
        return {"uri": "gs://a", "filename": None, "mime_type": None, "type": "file",
                "size": size}
    agent_input = {"messages": [{"role": "user", "content": "hi", "input_files": [file(1)]}],
                   "session_id": "s", "input_files": [file(True)]}
    assert _where(_refused(galtea.to_messages, agent_input)) == (
        "conflicting_fields", None, "input_files")


# --- 2. an AgentInput whose messages were reassigned --------------------------------------------

def _agent_input(messages: Any) -> AgentInput:
    agent_input = AgentInput(messages=[ConversationMessage(role="user", content="hi")],
                             session_id="s1")
    agent_input.messages = messages
    return agent_input


@pytest.mark.parametrize("messages", [None, 5, ("x",)], ids=["none", "int", "tuple"])
def test_an_agent_input_with_messages_set_to_a_non_list_is_malformed_at_them(
        messages: Any) -> None:
    agent_input = _agent_input(messages)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        error = _refused(galtea.to_messages, agent_input)
        assert _where(error) == ("malformed_event", None, "messages")
        assert str(error).startswith(
            f"galtea: messages: expected a list in the AgentInput's 'messages', got "
            f"{type(messages).__name__} {messages!r} (set after the AgentInput was made?): ")
        assert galtea.detect(agent_input) is True
        assert _where(_refused(registry.convert, agent_input, source="auto",
                               target="openai_chat")) == ("malformed_event", None, "messages")
        assert _where(_refused(galtea.to_messages, [agent_input])) == (
            "malformed_event", 0, "conversation_turns[0].messages")


# --- 3. split_current_turn(shape=None) ----------------------------------------------------------

def test_split_current_turn_with_shape_none_takes_the_roles_shape() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="a")]
    assert galtea.from_messages(messages, shape=None) == [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    omitted: list[galtea.Omission] = []
    split = galtea.split_current_turn(messages, shape=None, omitted=omitted)
    assert split == ([], "q", "a")
    assert split.retrieval_context is None
    assert omitted == []


def test_split_current_turn_with_shape_none_takes_the_recorded_pairs_shape() -> None:
    pairs = [{"input": "a", "actual_output": "b"},
             {"input": "c", "actual_output": "d", "retrieval_context": "r"}]
    messages = galtea.to_messages(pairs)
    split = galtea.split_current_turn(messages, shape=None)
    assert split == ([{"input": "a", "actual_output": "b"}], "c", "d")
    assert split.retrieval_context == "r"


# --- 4. a record given twice whatever its id ----------------------------------------------------

@pytest.mark.parametrize("trace_id", [5, None], ids=["int", "null"])
def test_a_record_id_that_is_not_a_string_is_malformed(trace_id: Any) -> None:
    record = {"id": trace_id, "index": 0, "session_id": "s", "input": "a", "actual_output": "b"}
    error = _refused(galtea.to_messages, [record, dict(record)])
    assert _where(error) == ("malformed_event", 0, "traces[0].id")
    assert str(error) == (f"galtea: traces[0].id: expected the trace's id as a string, got "
                          f"{trace_id!r} [malformed_event]")


def test_a_trace_object_given_twice_is_malformed_at_the_second_id() -> None:
    trace = Trace(id="t1", index=0, session_id="s", input="a", actual_output="b")
    assert _where(_refused(galtea.to_messages, [trace, trace])) == (
        "malformed_event", 1, "traces[1].id")


# --- 5. a galtea namespace on a text part -------------------------------------------------------

def test_a_galtea_namespace_on_a_text_part_is_malformed() -> None:
    messages = [HumanMessage(content=[TextPart(text="q", metadata={"galtea": {"bogus": 1}}),
                                      FilePart(url="gs://a")])]
    error = _refused(galtea.from_messages, messages)
    assert _where(error) == ("malformed_event", 0, "messages[0].content[0].metadata.galtea")
    assert str(error) == ("galtea: messages[0].content[0].metadata.galtea: a text part holds "
                          "no galtea namespace (a turn's text has no place for it), got "
                          "{'bogus': 1} [malformed_event]")
    assert _where(_refused(galtea.split_current_turn, [*messages, AIMessage(content="a")])) == (
        "malformed_event", 0, "messages[0].content[0].metadata.galtea")


def test_a_galtea_namespace_on_a_refusal_part_is_malformed() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content=[RefusalPart(text="no", metadata={"galtea": {}})])]
    assert _where(_refused(galtea.from_messages, messages, drop=["refusals"])) == (
        "malformed_event", 1, "messages[1].content[0].metadata.galtea")


def test_other_namespaces_on_a_text_part_are_still_not_galteas() -> None:
    messages = [HumanMessage(content=[TextPart(text="q", metadata={"other": {"x": 1}}),
                                      FilePart(url="gs://a")])]
    assert galtea.from_messages(messages) == [
        {"role": "user", "content": "q", "input_files": [
            {"uri": "gs://a", "filename": None, "mime_type": None, "type": "file"}]}]
