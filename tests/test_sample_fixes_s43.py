"""``tracebridge sample``, ``--at``/``--id`` steps, Galtea ``Trace`` records and Swarm's
``Response`` record: regressions.

1. A references value that is not JSON (NaN, Infinity, nested too deep), in any field, is
   refused when the references file is read: exit 2, one line naming the file, the line and
   the field's whole path; ``--errors FILE`` holds it (as it holds any references fault).
2. What a trace's sample and the references both say must be the same JSON: ``true``, ``1``
   and ``1.0`` are three values; a tool call with its default ``"id": null`` spelled out is
   the same call. A sample's ``metadata.id`` that is not a string or a whole number is
   refused, exit 2, as other invalid ids are.
3. Only ASCII digits are list positions in ``--at`` and ``--id``: a superscript two or a
   full-width zero is a key.
4. A Galtea ``Trace`` record missing ``id``, ``index`` or ``session_id`` is
   ``malformed_event`` at that key of that record, alone or in a list.
5. A stored Swarm ``Response`` record is told as Swarm's, and refused with its hint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from tracebridge.adapters import galtea, swarm
from tracebridge.errors import TraceError
from tracebridge.messages import AIMessage, HumanMessage
from tracebridge.registry import detect_format

TURNS = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]
DEEP_TEXT = ("a value nested more than 128 levels deep, or one that holds itself (a dict or "
             "list inside its own contents): JSON readers stop before its end")


def _write(path: Path, *lines: str) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def traces(tmp_path: Path) -> str:
    return _write(tmp_path / "tr.jsonl", json.dumps(TURNS))


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def _errors(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- 1. a references value that is not JSON ----------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "path", "detail", "code"),
    [
        ('{"id":1,"reference_tool_calls":[{"name":"f","args":{"a":NaN}}]}',
         "reference_tool_calls[0].args.a", "nan is not a finite number",
         "unserializable_value"),
        ('{"id":1,"reference_tool_calls":[{"name":"f","args":{}},'
         '{"name":"g","args":{"b":[Infinity]}}]}',
         "reference_tool_calls[1].args.b[0]", "inf is not a finite number",
         "unserializable_value"),
        ('{"id":1,"metadata":{"x":NaN}}', "metadata.x", "nan is not a finite number",
         "unserializable_value"),
        (json.dumps({"id": 1, "reference_tool_calls": [{"name": "f", "args": {
            "a": _nested(128)}}]}), "reference_tool_calls[0].args.a", DEEP_TEXT,
         "unserializable_value"),
        ('{"id":1,"reference_tool_calls":[{"name":3}]}', "reference_tool_calls[0].name",
         "Input should be a valid string", "malformed_event"),
    ],
)
def test_a_references_value_that_is_not_json_is_a_fault_of_the_references_file(
    traces: str, tmp_path: Path, entry: str, path: str, detail: str, code: str
) -> None:
    refs = _write(tmp_path / "refs.jsonl", entry)
    errors = tmp_path / "errors.jsonl"
    line = f"{refs}: line 1: {path}: {detail}"
    assert run("sample", traces, "--from", "galtea", "--references", refs, "--keep-going",
               "--errors", str(errors)) == (2, "", f"tracebridge: {line}\n")
    assert _errors(errors) == [{"file": refs, "line": 1, "code": code, "index": None,
                                "path": path, "source": None, "message": line}]
    assert run("sample", traces, "--from", "galtea", "--references", refs) == (
        2, "", f"tracebridge: {line}\n")


def test_tool_call_args_nested_as_deep_as_a_tool_call_takes_them_are_a_reference(
    traces: str, tmp_path: Path
) -> None:
    args = {"a": _nested(127)}  # the args object and 127 lists: 128 levels
    refs = _write(tmp_path / "refs.jsonl", json.dumps(
        {"id": 1, "reference_tool_calls": [{"name": "f", "args": args}]}))
    code, out, err = run("sample", traces, "--from", "galtea", "--references", refs)
    assert (code, err) == (0, "")
    assert json.loads(out)["reference_tool_calls"][0]["args"] == args


def test_a_line_of_the_references_file_that_is_not_json_is_in_the_errors_file(
    traces: str, tmp_path: Path
) -> None:
    refs = _write(tmp_path / "refs.jsonl", '{"id": 1}', "not json")
    errors = tmp_path / "errors.jsonl"
    line = f"{refs}: line 2: not valid JSON: Expecting value: line 1 column 1 (char 0)"
    assert run("sample", traces, "--from", "galtea", "--references", refs, "--errors",
               str(errors)) == (2, "", f"tracebridge: {line}\n")
    assert _errors(errors) == [{"file": refs, "line": 2, "code": "not_json", "index": None,
                                "path": None, "source": None, "message": line}]


# --- 2. the trace's sample and the references agree as JSON --------------------------------------


def _sample(**fields: Any) -> str:
    return json.dumps({"messages": [{"type": "human", "content": "q"},
                                    {"type": "ai", "content": "a"}], **fields})


@pytest.mark.parametrize(("ours", "theirs"), [(True, 1), (1, 1.0), (1.0, True)])
def test_a_value_said_twice_as_another_json_value_is_a_conflict(
    tmp_path: Path, ours: Any, theirs: Any
) -> None:
    dataset = _write(tmp_path / "ds.jsonl", _sample(
        reference_tool_calls=[{"name": "f", "args": {"amount": ours}}]))
    refs = _write(tmp_path / "refs.jsonl", json.dumps(
        {"id": 1, "reference_tool_calls": [{"name": "f", "args": {"amount": theirs}}]}))
    assert run("sample", dataset, "--from", "tracebridge", "--references", refs) == (
        1, "", f"tracebridge: {dataset}: line 1: cannot make a sample: tracebridge: "
        f"reference_tool_calls: reference_tool_calls is in the trace's sample and, "
        f"differently, in {refs} line 1 [conflicting_fields]\n")
    dataset = _write(tmp_path / "ds.jsonl", _sample(metadata={"flag": ours}))
    refs = _write(tmp_path / "refs.jsonl", json.dumps({"id": 1, "metadata": {"flag": theirs}}))
    assert run("sample", dataset, "--from", "tracebridge", "--references", refs) == (
        1, "", f"tracebridge: {dataset}: line 1: cannot make a sample: tracebridge: "
        f"metadata.flag: metadata 'flag' differs between the trace and {refs} line 1 "
        f"[conflicting_fields]\n")


def test_a_tool_call_with_its_default_id_spelled_out_is_the_same_call(tmp_path: Path) -> None:
    dataset = _write(tmp_path / "ds.jsonl", _sample(
        reference_tool_calls=[{"name": "f", "args": {"amount": True}}],
        metadata={"flag": True}))
    refs = _write(tmp_path / "refs.jsonl", json.dumps(
        {"id": 1, "reference_tool_calls": [{"name": "f", "args": {"amount": True}, "id": None}],
         "metadata": {"flag": True}}))
    code, out, err = run("sample", dataset, "--from", "tracebridge", "--references", refs)
    assert (code, err) == (0, "")
    sample = json.loads(out)
    assert sample["reference_tool_calls"] == [{"name": "f", "args": {"amount": True},
                                               "id": None, "invalid_args": None,
                                               "kind": "function", "metadata": {}}]
    assert sample["metadata"] == {"id": 1, "flag": True}


@pytest.mark.parametrize("bad", [True, 1.0, None, [1]])
def test_a_sample_id_that_is_not_a_string_or_a_whole_number_is_refused(
    tmp_path: Path, bad: Any
) -> None:
    dataset = _write(tmp_path / "ds.jsonl", _sample(metadata={"id": bad}))
    assert run("sample", dataset, "--from", "tracebridge") == (
        2, "", f"tracebridge: {dataset}: line 1: metadata.id: an id must be a string or a "
        f"whole number, got {bad!r}\n")
    traces = _write(tmp_path / "tr.jsonl", json.dumps(TURNS))
    refs = _write(tmp_path / "refs.jsonl", json.dumps({"id": 1, "metadata": {"id": bad}}))
    assert run("sample", traces, "--from", "galtea", "--references", refs) == (
        2, "", f"tracebridge: {refs}: line 1: metadata.id: an id must be a string or a whole "
        f"number, got {bad!r}\n")


def test_a_refused_sample_id_takes_its_reference(
    tmp_path: Path,
) -> None:
    dataset = _write(tmp_path / "ds.jsonl", _sample(metadata={"id": 1.5}), _sample())
    refs = _write(tmp_path / "refs.jsonl", *(json.dumps({"id": k, "reference": f"r{k}"})
                                            for k in (1, 2, 3)))
    errors = tmp_path / "errors.jsonl"
    code, out, err = run("sample", dataset, "--from", "tracebridge", "--references", refs,
                         "--keep-going", "--errors", str(errors))
    assert (code, [json.loads(line)["reference"] for line in out.splitlines()]) == (1, ["r2"])
    assert err == (f"tracebridge: {dataset}: line 1: metadata.id: an id must be a string or a "
                   f"whole number, got 1.5\n"
                   f"tracebridge: 1 reference(s) in {refs} matched no trace: '3'\n"
                   "1 ok, 1 failed\n")
    assert _errors(errors) == [{
        "file": dataset, "line": 1, "code": "malformed_event", "index": None,
        "path": None, "source": None,  # as for a record id that is not one: no trace error
        "message": "metadata.id: an id must be a string or a whole number, got 1.5"}]


def test_a_sample_id_given_as_text_is_the_records_number(tmp_path: Path) -> None:
    dataset = _write(tmp_path / "ds.jsonl", _sample(metadata={"id": "1"}))
    code, out, _ = run("sample", dataset, "--from", "tracebridge")
    assert (code, json.loads(out)["metadata"]) == (0, {"id": "1"})


# --- 3. --at / --id steps: ASCII digits only ----------------------------------------------------


SUPERSCRIPT_TWO, FULL_WIDTH_ZERO, ARABIC_INDIC_ONE = "\u00b2", "\uff10", "\u0661"


@pytest.mark.parametrize("step", [SUPERSCRIPT_TWO, FULL_WIDTH_ZERO, ARABIC_INDIC_ONE])
def test_a_digit_that_is_not_ascii_is_no_list_position(traces: str, step: str) -> None:
    assert run("sample", traces, "--from", "galtea", "--id", step) == (
        2, "", f"tracebridge: {traces}: line 1: --id {step}: there is no {step!r} here\n")
    assert run("convert", traces, "--from", "galtea", "--at", step, "--to", "openai_chat") == (
        2, "", f"tracebridge: {traces}: line 1: --at {step}: there is no {step!r} here\n")


def test_a_digit_that_is_not_ascii_is_a_key(tmp_path: Path) -> None:
    document = _write(tmp_path / "doc.jsonl", json.dumps(
        {FULL_WIDTH_ZERO: TURNS, SUPERSCRIPT_TWO: "x"}))
    code, out, _ = run("convert", document, "--from", "galtea", "--at", FULL_WIDTH_ZERO,
                       "--to", "openai_chat")
    assert (code, json.loads(out)) == (0, TURNS)
    code, out, _ = run("sample", document, "--from", "galtea", "--at", FULL_WIDTH_ZERO,
                       "--id", SUPERSCRIPT_TWO)
    assert (code, json.loads(out)["metadata"]) == (0, {"id": "x"})


# --- 4. Galtea Trace records missing a required field -------------------------------------


def _record(i: int) -> dict[str, Any]:
    return {"id": f"t{i}", "index": i, "session_id": "s", "status": "GENERATED",
            "input": f"q{i}", "actual_output": f"a{i}"}


def _without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


def _refusal(trace: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(trace)
    return caught.value.code, caught.value.index, caught.value.path, caught.value.detail


@pytest.mark.parametrize("key", ["id", "index", "session_id"])
@pytest.mark.parametrize("at", [1, 2])
def test_a_record_missing_a_required_field_is_refused_at_that_field(key: str, at: int) -> None:
    records = [_record(0), _record(1), _record(2)]
    records[at] = _without(records[at], key)
    assert _refusal(records) == (
        "malformed_event", at, f"traces[{at}].{key}",
        f"a Trace record without its {key!r} (the SDK's Trace requires id, index and "
        f"session_id)")


def test_a_first_record_missing_a_field_sets_the_pairs_shape_and_the_next_is_refused() -> None:
    # two of the keys are a pair's extra keys (below): the first turn sets the shape
    assert _refusal([_without(_record(0), "index"), _record(1)]) == (
        "malformed_event", 1, "conversation_turns[1]",
        "a trace record in a list of pairs (turn 0 set the shape); one list holds one shape")


@pytest.mark.parametrize("extra", [{"id": "x"}, {"id": "t1", "session_id": "s1"},
                                   {"id": "t1", "index": 3}])
def test_a_pair_with_some_of_the_record_keys_is_still_a_pair(extra: dict[str, Any]) -> None:
    # what the writer has always written for such extra keys reads back as it was
    pairs = [{"input": "q", "actual_output": "a", **extra}]
    messages = galtea.to_messages(pairs)
    assert messages[1].metadata == {"galtea": {"shape": "pairs", "extra": extra}}
    assert galtea.from_messages(messages) == pairs


def test_pair_extra_keys_that_would_read_as_a_record_are_not_representable() -> None:
    pairs = {"shape": "pairs"}
    messages = [HumanMessage(content="q", metadata={"galtea": pairs}),
                AIMessage(content="a", metadata={"galtea": {
                    **pairs, "extra": {"id": "x", "index": 0, "session_id": "s"}}})]
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.detail) == (
        "not_representable", 1, "messages[1].metadata.galtea.extra.id",
        "extra keys ['id', 'index', 'session_id'] would make the pairs turn read as a Trace "
        "record (id, index and session_id mark one)")


# --- 5. a stored Swarm Response record ----------------------------------------------------


RESPONSE = {"messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": "yo", "sender": "Triage"}],
            "agent": {"name": "Triage"}, "context_variables": {}}


def test_a_stored_response_record_is_told_as_swarms_and_refused_with_its_hint(
    tmp_path: Path,
) -> None:
    assert swarm.detect(RESPONSE)
    assert detect_format(RESPONSE) == "swarm"
    stored = {**RESPONSE, "final_agent": RESPONSE["agent"]}
    del stored["agent"]
    assert swarm.detect(stored)
    assert not swarm.detect({"messages": "x", "agent": None, "context_variables": {}})
    assert not swarm.detect({"messages": [], "agent": None})
    path = _write(tmp_path / "resp.json", json.dumps(RESPONSE))
    code, out, err = run("validate", path)
    assert (code, err) == (1, f"tracebridge: reading {path} as swarm (told from its shape; "
                              "--from to choose)\n")
    assert out == (
        "invalid: malformed_event at trace: swarm: trace: expected the history list, got a "
        "dict with keys ['agent', 'context_variables', 'messages']: pass --at messages (agent "
        "and context_variables are not messages) [malformed_event]\n")


# --- 5. hints spelled for the command line ---------------------------------------------------


def test_a_stored_swarm_response_is_told_to_be_read_at_its_messages(tmp_path: Path) -> None:
    record = _write(tmp_path / "response.json",
                    '{"messages": [{"role": "user", "content": "hi"}], "agent": null, '
                    '"context_variables": {}}')
    said = ("swarm: trace: expected the history list, got a dict with keys ['agent', "
            "'context_variables', 'messages']: pass {} (agent and context_variables are not "
            "messages) [malformed_event]")
    assert run("convert", record, "--from", "swarm", "--to", "openai_chat") == (
        1, "", "tracebridge: invalid trace: " + said.format("--at messages") + "\n")
    with pytest.raises(TraceError) as caught:  # in Python, the key to pass
        swarm.to_messages(json.loads(Path(record).read_text(encoding="utf-8")))
    assert str(caught.value) == said.format("its 'messages'")


def test_a_history_refusal_names_no_python_parameter_on_the_command_line(tmp_path: Path) -> None:
    turns = _write(tmp_path / "turns.json", json.dumps([
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "A", "input_files": [{"uri": "gs://x/a.pdf",
                                                              "type": "file"}]}]))
    said = ("galtea: messages[1].content[1]: a file part: history turns hold text only; {} "
            "leaves it out{} [not_representable]")
    assert run("convert", turns, "--from", "galtea", "--to", "galtea", "--to-option",
               "shape=history") == (
        1, "", "tracebridge: cannot write galtea: "
        + said.format("--to-option drop_non_text=true", "") + "\n")
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(galtea.to_messages(json.loads(Path(turns).read_text("utf-8"))),
                             shape="history")
    assert str(caught.value) == said.format("drop_non_text=True", " (recorded in omitted)")


def test_the_key_to_read_at_is_under_the_at_path_already_given(tmp_path: Path) -> None:
    stored = _write(tmp_path / "stored.json", json.dumps({"trace": RESPONSE}))
    code, out, err = run("convert", stored, "--from", "swarm", "--at", "trace", "--to",
                         "openai_chat")
    assert (code, out) == (1, "")
    assert err == (
        "tracebridge: invalid trace: swarm: trace: expected the history list, got a dict with "
        "keys ['agent', 'context_variables', 'messages']: pass --at trace.messages (agent and "
        "context_variables are not messages) [malformed_event]\n")
    assert run("convert", stored, "--from", "swarm", "--at", "trace.messages", "--to",
               "openai_chat")[0] == 0
