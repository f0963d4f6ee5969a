"""The seams between commands: ``convert --keep-going`` says that OUT's line numbers are not
FILE's once it left a record out (ids by line number do not carry over to it); ``sample``
refusing a sample's own ``metadata.id`` says how to take it; a case gives its transcript's
reader options as ``source_options`` (one conversation of OpenTelemetry spans that hold
several), checked as ``convert --from-option`` checks them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CALL, CHAT, run
from evaluation_helpers import goal, rows, run_cases, states, write_cases
from fake_openai_server import FakeOpenAI

from tracebridge.adapters import otel
from tracebridge.evaluation.cases import load_cases
from tracebridge.messages import AIMessage, HumanMessage
from tracebridge.options import Option
from tracebridge.sample import MultiTurnSample

ORPHAN = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "?"}]
ORPHANED = ("invalid trace: openai_chat: messages[1].tool_call_id: tool result answers "
            "nothing: no AIMessage comes before it [orphan_tool_result]")


def _jsonl(*traces: Any) -> str:
    return "".join(json.dumps(trace) + "\n" for trace in traces)


# --- 1. convert --keep-going: OUT's line numbers are not FILE's ----------------------------


def test_convert_keep_going_says_line_ids_do_not_carry_over_to_out(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_jsonl(CHAT, ORPHAN, CALL))
    out = tmp_path / "native.jsonl"
    code, stdout, err = run("convert", str(traces), "--from", "openai_chat", "--to",
                            "openai_chat", "--keep-going", "-o", str(out))
    assert (code, stdout) == (1, "")
    assert [json.loads(line) for line in out.read_text().splitlines()] == [CHAT, CALL]
    assert err.splitlines() == [
        f"tracebridge: {traces}: line 2: {ORPHANED}",
        "2 ok, 1 failed",
        f"tracebridge: {out} has no line for a failed record or a blank line of {traces}: a "
        f"record after one has another line number there than in {traces}, so ids by line number "
        f"(as sample --references "
        f"matches them) do not carry over; run sample on {traces}",
    ]


def test_convert_keep_going_of_an_array_says_element_numbers_moved() -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going", stdin=json.dumps([CHAT, ORPHAN, ORPHAN, CALL]))
    assert code == 1
    assert json.loads(stdout) == [CHAT, CALL]
    assert err.splitlines() == [
        f"tracebridge: -: element 2 (line 1): {ORPHANED}",
        f"tracebridge: -: element 3 (line 1): {ORPHANED}",
        "2 ok, 2 failed",
        "tracebridge: standard output has no element for a failed record of standard input: a "
        "record after one has another element number there than in standard input, so ids by "
        "element number (as "
        "sample --references matches them) do not carry over; run sample on standard input",
    ]


def test_no_notice_when_no_record_was_written_after_a_failed_one() -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going", stdin=_jsonl(CHAT, CALL, ORPHAN))
    assert code == 1
    assert [json.loads(line) for line in stdout.splitlines()] == [CHAT, CALL]
    assert err.splitlines() == [f"tracebridge: -: line 3: {ORPHANED}", "2 ok, 1 failed"]


@pytest.mark.parametrize("command", ["validate", "show"])
def test_validate_and_show_write_no_out_and_give_no_notice(command: str) -> None:
    code, _, err = run(command, "-", "--from", "openai_chat", "--keep-going",
                       stdin=_jsonl(CHAT, ORPHAN, CALL))
    assert code == 1
    assert err.splitlines()[-1] == "2 ok, 1 failed"
    assert "leaves out" not in err


def test_references_by_line_pair_with_their_traces_when_sampled_from_file(
    tmp_path: Path,
) -> None:
    """What the notice sends the user to do: ``sample`` on FILE keeps each trace's line."""
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_jsonl(CHAT, ORPHAN, CALL))
    refs = tmp_path / "refs.jsonl"
    refs.write_text(_jsonl({"id": 1, "reference": "greets"}, {"id": 3, "reference": "Paris"}))
    code, stdout, err = run("sample", str(traces), "--from", "openai_chat", "--references",
                            str(refs), "--keep-going")
    assert code == 1
    samples = [json.loads(line) for line in stdout.splitlines()]
    assert [(s["messages"][0]["content"], s["reference"], s["metadata"]) for s in samples] == [
        ("hi", "greets", {"id": 1}), ("weather in Paris?", "Paris", {"id": 3})]
    assert err.splitlines()[-1] == "2 ok, 1 failed"


# --- 2. sample refusing a sample's own metadata.id says how to go on -------------------------


def _dataset_with_a_gap(tmp_path: Path) -> tuple[Path, str]:
    """What ``sample --keep-going`` writes from three traces whose second one fails: ids 1, 3."""
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_jsonl(CHAT, ORPHAN, CALL))
    dataset = tmp_path / "ds.jsonl"
    code, _, _ = run("sample", str(traces), "--from", "openai_chat", "--keep-going", "-o",
                     str(dataset))
    assert code == 1
    return dataset, dataset.read_text()


def test_resampling_a_dataset_with_a_gap_says_to_take_its_own_ids(tmp_path: Path) -> None:
    dataset, written = _dataset_with_a_gap(tmp_path)
    assert [json.loads(line)["metadata"] for line in written.splitlines()] == [
        {"id": 1}, {"id": 3}]
    again = tmp_path / "again.jsonl"
    code, stdout, err = run("sample", str(dataset), "--from", "tracebridge", "-o", str(again))
    assert (code, stdout, again.exists()) == (1, "", False)
    assert err == (f"tracebridge: {dataset}: line 2: cannot make a sample: tracebridge: "
                   "metadata.id: metadata id 3 differs from the record's id 2 (pass --id "
                   "metadata.id to take the sample's own id) [conflicting_fields]\n")
    code, stdout, err = run("sample", str(dataset), "--from", "tracebridge", "--id",
                            "metadata.id")
    assert (code, stdout, err) == (0, written, "")


def test_the_refusal_reaches_a_dataset_through_convert(tmp_path: Path) -> None:
    """``convert --to tracebridge`` keeps a sample's ``metadata.id``: re-sampling its output is
    refused with the hint, never paired by the new line numbers."""
    dataset, written = _dataset_with_a_gap(tmp_path)
    native = tmp_path / "native.jsonl"
    code, _, _ = run("convert", str(dataset), "--from", "tracebridge", "--to", "tracebridge",
                     "-o", str(native))
    assert code == 0
    assert [json.loads(line) for line in native.read_text().splitlines()] == [
        json.loads(line) for line in written.splitlines()]
    code, _, err = run("sample", str(native), "--from", "tracebridge", "--errors", "-")
    assert code == 1
    assert json.loads(err.splitlines()[0]) == {
        "file": str(native), "line": 2, "code": "conflicting_fields", "index": None,
        "path": "metadata.id", "source": "tracebridge",
        "message": "tracebridge: metadata.id: metadata id 3 differs from the record's id 2 "
                   "(pass --id metadata.id to take the sample's own id) [conflicting_fields]"}


def test_a_references_metadata_id_is_named_with_its_line(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_jsonl(CHAT))
    refs = tmp_path / "refs.jsonl"
    refs.write_text(_jsonl({"id": 1, "metadata": {"id": 5}}))
    code, _, err = run("sample", str(traces), "--from", "openai_chat", "--references",
                       str(refs))
    assert code == 1
    assert err == (f"tracebridge: {traces}: line 1: cannot make a sample: tracebridge: "
                   f"metadata.id: metadata id 5 in {refs} line 1 differs from the record's id "
                   f"1 [conflicting_fields]\n")


# --- 3. a case's source_options ---------------------------------------------------------------


def _span(trace_id: str, span_id: str, session: str, user: str, reply: str) -> dict[str, Any]:
    def attribute(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    def said(role: str, text: str) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])

    return {"traceId": trace_id, "spanId": span_id, "name": "chat", "kind": "SPAN_KIND_CLIENT",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", "status": {},
            "attributes": [attribute("gen_ai.operation.name", "chat"),
                           attribute("gen_ai.input.messages", said("user", user)),
                           attribute("gen_ai.output.messages", said("assistant", reply)),
                           attribute("gen_ai.conversation.id", session)]}


TWO_SESSIONS: dict[str, Any] = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [
    {"scope": {"name": "app"}, "spans": [
        _span("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "s-1",
              "Open a ticket for the double charge.", "Ticket T-1 is open."),
        _span("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "s-2",
              "Close my account.", "Your account is closed."),
    ]}]}]}
"""OpenTelemetry spans of two sessions: two conversations."""


def _otel_case(case_id: str, **fields: Any) -> dict[str, Any]:
    return {"case_id": case_id, "transcript": TWO_SESSIONS, "source": "otel",
            "reference": "The user's request is done.", "reference_version": "v1", **fields}


def test_source_options_pick_one_conversation_of_the_spans(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [_otel_case("s2", source_options={"session_id": "s-2"})])
    [loaded] = load_cases(str(path)).cases
    assert loaded.transcript_error is None
    assert loaded.format == "otel"
    assert loaded.messages == [HumanMessage(content="Close my account."),
                               AIMessage(content="Your account is closed.")]
    assert loaded.messages == otel.to_messages(TWO_SESSIONS, session_id="s-2")
    assert loaded.transcript_hash == MultiTurnSample(messages=loaded.messages).transcript_hash()


def test_a_case_with_source_options_runs_and_each_session_is_its_own(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """Two cases over the same spans, one session each, with the result cache on: each is
    judged on its own conversation (the cache key holds the hash of what was read)."""
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [_otel_case("s1", source_options={"session_id": "s-1"}),
                                  _otel_case("s2", source_options={"session_id": "s-2"})])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--cache",
                             str(tmp_path / "cache.sqlite"))
    assert (code, err) == (0, "")
    assert states(out) == {"s1": "passed", "s2": "passed"}
    assert len(server.requests) == 2
    prompts = [json.dumps(request["messages"]) for request in server.requests]
    assert ["Open a ticket" in prompt for prompt in prompts] == [True, False]
    assert ["Close my account" in prompt for prompt in prompts] == [False, True]
    [one, two] = rows(out, "cases.jsonl")
    assert one["source_hash"] == two["source_hash"]  # the same spans, as written
    assert one["transcript_hash"] == MultiTurnSample(
        messages=otel.to_messages(TWO_SESSIONS, session_id="s-1")).transcript_hash()
    assert two["transcript_hash"] == MultiTurnSample(
        messages=otel.to_messages(TWO_SESSIONS, session_id="s-2")).transcript_hash()


def test_spans_of_several_conversations_are_blocked_naming_source_options(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [_otel_case("both")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err == (
        f"tracebridge run: {path}: line 1 (case both): the transcript cannot be used: otel: "
        "trace: the spans hold 2 conversations (in different sessions, or whose calls are not "
        "prefixes of one another); choose one with a filter: span_id=b7ad6b7169203331 (its "
        "last call, at resourceSpans[0].scopeSpans[0].spans[0]); "
        "trace_id=0af7651916cd43dd8448eb211c80319c; session_id=s-1 | span_id=00f067aa0ba902b7 "
        "(its last call, at resourceSpans[0].scopeSpans[0].spans[1]); "
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736; session_id=s-2; a case gives the filter as "
        'source_options, such as {"trace_id": "..."} [ambiguous_trace]; the case is blocked\n')
    assert states(out) == {"both": "blocked"}
    assert server.requests == []


NOT_A_CASE_OPTION = ("source_options: allow_pending is not a case option: a case's "
                     "conversation must be complete (one cut mid-tool is blocked by the "
                     "conversation rules)")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"source_options": {"sesion_id": "s-2"}},
         "source_options: 'sesion_id' is not an option of otel; it takes: trace_id, "
         "session_id, span_id"),
        ({"source_options": {"session_id": 2}},
         "source_options: session_id takes a string, got 2"),
        ({"source_options": {"allow_pending": "true"}}, NOT_A_CASE_OPTION),
        ({"source_options": {"allow_pending": 1}}, NOT_A_CASE_OPTION),
        ({"source": "langchain", "source_options": {"drop_artifacts": "true"}},
         "source_options: drop_artifacts takes true or false, got 'true'"),
        ({"source_options": "session_id=s-2"},
         "source_options: Input should be a valid dictionary"),
        ({"source": None, "source_options": {"session_id": "s-2"}},
         "source_options: they are the options of a format's reader; name the transcript's "
         "format in source"),
        ({"source": "roles", "transcript": [{"role": "human", "content": "hi"}],
          "source_options": {"allow_pending": True}}, NOT_A_CASE_OPTION),
    ],
)
def test_a_bad_source_option_is_a_bad_case_record(
    tmp_path: Path, server: FakeOpenAI, fields: dict[str, Any], message: str
) -> None:
    path = write_cases(tmp_path, [_otel_case("c", **fields)])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 1
    assert err.splitlines() == [f"tracebridge run: {path}: line 1 (case c): {message}",
                                "tracebridge run: 1 bad case record(s); nothing ran"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        (Option("n", "int", 0), 3, None),
        (Option("n", "int", 0), True, "a whole number"),
        (Option("n", "int", 0), 3.0, "a whole number"),
        (Option("how", "choice", "a", ("a", "b")), "b", None),
        (Option("how", "choice", "a", ("a", "b")), "c", "one of a, b"),
        (Option("drop", "list", (), ("x", "y")), ["y"], None),
        (Option("drop", "list", (), ("x", "y")), ["z"], "a list of names from x, y"),
        (Option("drop", "list", (), ("x", "y")), "x", "a list of names from x, y"),
        (Option("names", "list", ()), ["any"], None),
        (Option("names", "list", ()), [1], "a list of names"),
    ],
)
def test_each_kind_of_option_takes_json_of_its_own_type(
    option: Option, value: Any, expected: str | None
) -> None:
    """No reader takes these kinds today; a case takes them as ``--from-option`` would."""
    from tracebridge.evaluation.cases import _what_it_takes

    assert _what_it_takes(option, value) == expected
