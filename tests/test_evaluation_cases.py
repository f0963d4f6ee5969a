"""Case files: the strict role/call_id reader, every bad case reported, the hashes."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import TICKET, case, control, write_cases

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.errors import TraceError
from tracebridge.evaluation import roles
from tracebridge.evaluation.cases import CaseFileError, ControlRole, load_cases
from tracebridge.hashing import canonical_json

# --- the role/call_id form ----------------------------------------------------------------


def test_the_role_form_reads_into_typed_messages_with_call_ids() -> None:
    assert roles.to_messages(TICKET) == [
        HumanMessage(content="Open a ticket for the double charge."),
        AIMessage(content="Opening it now.", tool_calls=[
            ToolCall(name="create_ticket", args={"category": "billing"}, id="call-1")]),
        ToolMessage(content='{"ticket_id": "T-1"}', tool_call_id="call-1"),
        AIMessage(content="Your ticket T-1 is open."),
    ]


def test_the_role_form_keeps_names_errors_and_system_messages() -> None:
    trace = [
        {"role": "system", "content": "You file tickets."},
        {"role": "human", "content": "hi", "name": "ana"},
        {"role": "ai", "tool_calls": [{"name": "t", "call_id": "c"}], "name": "desk"},
        {"role": "tool", "call_id": "c", "content": "down", "is_error": True, "name": "t"},
    ]
    [system, human, ai, tool] = roles.to_messages(trace)
    assert system.content == "You file tickets."
    assert (human.name, ai.name, ai.content) == ("ana", "desk", "")
    assert ai.tool_calls == [ToolCall(name="t", args={}, id="c")]
    assert (tool.is_error, tool.name, tool.tool_call_id) == (True, "t", "c")


def broken(index: int, **changes: Any) -> list[dict[str, Any]]:
    trace = copy.deepcopy(TICKET)
    trace[index].update(changes)
    return trace


@pytest.mark.parametrize(
    ("trace", "code", "index", "path"),
    [
        (broken(0, role="user"), "unknown_role", 0, "transcript[0].role"),
        # the form's own keys, not the typed model's (tool_call_id, tool_calls[k].id)
        (broken(2, call_id="call-9"), "orphan_tool_result", 2, "transcript[2].call_id"),
        (TICKET[:2], "unanswered_tool_call", 1, "transcript[1].tool_calls[0]"),
        ([TICKET[0], TICKET[2]], "orphan_tool_result", 1, "transcript[1].call_id"),
        (broken(0, content=None), "malformed_event", 0, "transcript[0].content"),
        (broken(0, extra=1), "malformed_event", 0, "transcript[0].extra"),
        (broken(2, call_id=""), "malformed_event", 2, "transcript[2].call_id"),
        (broken(1, tool_calls=[{"name": "create_ticket", "args": {}}]), "malformed_event", 1,
         "transcript[1].tool_calls[0].call_id"),
        (broken(1, tool_calls=[{"name": "x", "args": [1], "call_id": "c"}]), "malformed_event",
         1, "transcript[1].tool_calls[0].args"),
        (broken(2, is_error="yes"), "malformed_event", 2, "transcript[2].is_error"),
        (["hi"], "malformed_event", 0, "transcript[0]"),
        ([], "empty_conversation", None, None),
    ],
)
def test_the_role_form_is_read_strictly(
    trace: list[Any], code: str, index: int | None, path: str | None
) -> None:
    with pytest.raises(TraceError) as caught:
        roles.to_messages(trace)
    error = caught.value
    assert (error.code, error.index, error.source) == (code, index, "roles")
    assert error.path == path


def test_a_duplicate_call_id_is_refused() -> None:
    trace = [*TICKET[:3], {"role": "ai", "tool_calls": [{"name": "t", "call_id": "call-1"}]},
             {"role": "tool", "call_id": "call-1", "content": "again"}]
    with pytest.raises(TraceError) as caught:
        roles.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "duplicate_tool_call_id", 3, "transcript[3].tool_calls[0].call_id"
    )


# --- loading ------------------------------------------------------------------------------


def test_loading_reads_every_field_and_hashes_each_case(tmp_path: Path) -> None:
    item = control(
        "c-1", "negative_false_claim", critical=True, session_id="s-9",
        reference_tool_calls=[{"name": "create_ticket", "args": {"category": "billing"}}],
        reference_topics=["billing"], rubrics={"role": "a ticket agent"},
        metadata={"team": "desk"}, domain_evidence={"ticket_id": None, "operation_id": "op-77"},
        expect={"ticket_id": {"present": True}},
        human_adjudication={"goal_achieved": False, "reason": "no ticket"},
    )
    path = write_cases(tmp_path, [item, case("c-2")])
    loaded = load_cases(str(path))
    first = loaded.cases[0]
    assert first.case.control_role is ControlRole.NEGATIVE_FALSE_CLAIM
    assert (first.case.critical, first.case.session_id, first.case.slice) == (
        True, "s-9", "tickets")
    assert first.case.expect["ticket_id"].kind == "present"
    assert first.format == "roles"
    assert first.line == 1
    assert loaded.cases[1].line == 2
    assert first.source_hash == "sha256:" + hashlib.sha256(canonical_json(TICKET)).hexdigest()
    assert first.transcript_hash == MultiTurnSample(
        messages=roles.to_messages(TICKET)).transcript_hash()
    sample = first.sample()
    assert sample.reference_tool_calls == [
        ToolCall(name="create_ticket", args={"category": "billing"})]
    assert (sample.reference_topics, sample.rubrics) == (["billing"], {"role": "a ticket agent"})
    digest = hashlib.sha256()
    for record in (item, case("c-2")):
        digest.update(canonical_json(record) + b"\n")
    assert loaded.manifest_hash == f"sha256:{digest.hexdigest()}"


def test_the_manifest_hash_changes_with_any_case(tmp_path: Path) -> None:
    one = load_cases(str(write_cases(tmp_path, [case("a"), case("b")], "one.jsonl")))
    two = load_cases(str(write_cases(tmp_path, [case("a"), case("b", critical=True)],
                                     "two.jsonl")))
    swapped = load_cases(str(write_cases(tmp_path, [case("b"), case("a")], "three.jsonl")))
    assert len({one.manifest_hash, two.manifest_hash, swapped.manifest_hash}) == 3


def test_a_json_list_of_cases_loads_like_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    text = json.dumps([case("a"), case("b")], indent=1)
    path.write_text(text)
    loaded = load_cases(str(path))
    assert [c.case_id for c in loaded.cases] == ["a", "b"]
    starts = [number for number, line in enumerate(text.splitlines(), 1) if line == " {"]
    assert [c.line for c in loaded.cases] == starts == [2, 36]


def test_other_formats_are_detected_or_named(tmp_path: Path) -> None:
    openai_chat = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ]
    typed = [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]
    path = write_cases(tmp_path, [
        case("auto", transcript=openai_chat),
        case("named", transcript=openai_chat, source="openai_chat"),
        case("typed", transcript=typed),
    ])
    loaded = load_cases(str(path))
    assert [c.format for c in loaded.cases] == ["openai_chat", "openai_chat", "tracebridge"]
    assert loaded.cases[0].messages == loaded.cases[1].messages


def test_every_bad_case_is_reported_by_line_and_case_id(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    lines = [
        json.dumps(case("a")),
        json.dumps(case("a")),
        json.dumps(control("b", "sideways")),
        json.dumps(control("c", "goal_shift")),
        "{not json",
        json.dumps(case("d", critical="very")),
        json.dumps(control("e", "positive", human_adjudication={"goal_achieved": False})),
        json.dumps(case("f", source="nowhere")),
        json.dumps(case("g", expect={"ticket_id": {"present": True, "count": 1}})),
        json.dumps({"transcript": TICKET}),
        json.dumps(case("h", surprise=1)),
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CaseFileError) as caught:
        load_cases(str(path))
    told = [str(problem) for problem in caught.value.problems]
    roles_known = ", ".join(role.value for role in ControlRole)
    assert told[0] == "line 2 (case a): duplicate case_id (first on line 1)"
    assert told[1] == (f"line 3 (case b): control_role: unknown control_role 'sideways'; "
                       f"expected one of {roles_known}")
    assert told[2] == ("line 4 (case c): a goal_shift control needs "
                       "human_adjudication.goal_achieved (its expected outcome is the human "
                       "label)")
    assert told[3].startswith("line 5: not valid JSON")
    assert told[4].startswith("line 6 (case d): critical: ")
    assert told[5] == ("line 7 (case e): human_adjudication.goal_achieved=False contradicts "
                       "control_role positive")
    assert told[6].startswith("line 8 (case f): unknown source 'nowhere'; known: roles, ")
    assert told[7] == ("line 9 (case g): expect.ticket_id: an expectation has exactly one of "
                       "present, equals, count (got count, present)")
    assert told[8] == "line 10: case_id: Field required"
    assert told[9] == "line 11 (case h): surprise: Extra inputs are not permitted"
    assert len(told) == 10


def test_a_transcript_that_breaks_the_rules_is_kept_with_its_error(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [case("bad", transcript=TICKET[:2]), case("good")])
    loaded = load_cases(str(path))
    [bad] = loaded.unreadable()
    assert bad.case_id == "bad"
    assert isinstance(bad.transcript_error, TraceError)
    assert bad.transcript_error.code == "unanswered_tool_call"
    assert (bad.messages, bad.transcript_hash) == (None, None)
    assert bad.source_hash.startswith("sha256:")


def test_an_empty_case_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(CaseFileError) as caught:
        load_cases(str(path))
    assert str(caught.value) == f"{path}: no cases"
