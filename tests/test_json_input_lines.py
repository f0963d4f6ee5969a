"""What a JSON input line is, read alike by the command line and by Ray (audit f3, f4).

A JSONL line ends at ``\\n`` only (``\\r\\n`` works; a lone ``\\r`` ends no line); a blank line
holds JSON whitespace only; a line holding two documents is not JSON, the first line too; an
object that has a key twice is refused like a line that is not JSON (which value was meant
is not known). ``MultiTurnSample.model_validate_json`` refuses a repeated key too.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from pydantic import ValidationError

import tracebridge._jsonstream as jsonstream
from tracebridge import HumanMessage, MultiTurnSample, TraceError
from tracebridge._json import RepeatedKey, read_json
from tracebridge._jsonstream import JsonDocuments, UnreadableInput

# the samples of the audit's repro (f3_cli_vs_ray_lines.py)
S = [MultiTurnSample(messages=[HumanMessage(content=f"q{k}")],
                     reference_tool_calls=[]).model_dump_json() for k in range(5)]
EXTRA = f"Extra data: line 1 column {len(S[0]) + 2} (char {len(S[0]) + 1})"
"""Where a second sample after ``S[0]`` and one separator is found, as ``json`` says it."""
FILES = {
    "a_cr.jsonl": "\r".join(S[:3]) + "\r",
    "b_blank_like.jsonl": S[0] + "\n\u00a0\n" + S[1] + "\n\x1c\n" + S[2] + "\n\u3000\n",
    "c_two_first.jsonl": S[0] + " " + S[1] + "\n" + S[2] + "\n",
    "c_two_third.jsonl": S[0] + "\n" + S[1] + "\n" + S[2] + " " + S[3] + "\n",
}
NOT_A_VALUE = "not valid JSON: Expecting value: line 1 column 1 (char 0)"
"""What a line of U+00A0, U+3000 or U+001C alone is (no JSON whitespace)."""

# the audit's repro f4_duplicate_keys.py: an argument and the reference calls given twice
PAY = ('{"messages":[{"type":"human","content":"pay 100"},'
       '{"type":"ai","content":"","tool_calls":[{"name":"pay","args":{"eur":100,"eur":1000000},'
       '"id":"c1"}]},{"type":"tool","content":"paid","tool_call_id":"c1"}],'
       '"reference_tool_calls":[{"name":"pay","args":{"eur":100}}],'
       '"reference_tool_calls":[{"name":"pay","args":{"eur":1000000}}]}')
TWICE = "an object has the key {!r} twice (which value is meant is not known)"


def write(path: Path, text: str) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as stream:  # as written: no translation
        stream.write(text)
    return path


def documents(text: str, **options: bool) -> tuple[str | None, list[tuple[int, Any, Any]]]:
    reader = JsonDocuments(io.StringIO(text), "-", lambda v: isinstance(v, list), **options)
    read = [(r.line, r.value, r.problem) for r in reader]
    return reader.shape, read


def rows_of(path: Path) -> list[tuple[int, str, Any]]:
    return [(row["line"], row["name"], row["value"])
            for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())]


# --- the reader: lines -----------------------------------------------------------------------


def test_a_lone_cr_ends_no_line_and_crlf_still_does() -> None:
    assert documents("[1]\r[2]\r") == (
        "jsonl", [(1, None, "not valid JSON: Extra data: line 1 column 5 (char 4)")])
    assert documents("[1]\r\n[2]\r\n\r\n[3]") == (
        "jsonl", [(1, [1], None), (2, [2], None), (4, [3], None)])
    assert documents("[1]\n[2]\r[3]\n", jsonl=True) == (
        "jsonl", [(1, [1], None), (2, None, "not valid JSON: Extra data: line 1 column 5 "
                                           "(char 4)")])


def test_a_file_opened_with_universal_newlines_is_read_as_written(tmp_path: Path) -> None:
    # as tracebridge score and the case reader open their files (newline=None)
    path = write(tmp_path / "cr.jsonl", "[1]\r[2]\r\n[3]\n")
    with open(path, encoding="utf-8-sig") as stream:
        read = [(r.line, r.value, r.problem) for r in JsonDocuments(stream, "f", bool)]
    assert read == [(1, None, "not valid JSON: Extra data: line 1 column 5 (char 4)"),
                    (2, [3], None)]


def test_a_blank_line_holds_json_whitespace_only() -> None:
    text = "[1]\n\u00a0\n[2]\n\x1c\n[3]\n\u3000\n \t\r\n\x0b\n\x0c\n\n"
    expected = [(1, [1], None), (2, None, NOT_A_VALUE), (3, [2], None), (4, None, NOT_A_VALUE),
                (5, [3], None), (6, None, NOT_A_VALUE), (8, None, NOT_A_VALUE),
                (9, None, NOT_A_VALUE)]
    assert documents(text) == ("jsonl", expected)
    assert documents(text, jsonl=True) == ("jsonl", expected)
    # on the first line too: it is a failed record of JSONL, not the end of the file
    assert documents("\u00a0\n[1]\n") == ("jsonl", [(1, None, NOT_A_VALUE), (2, [1], None)])


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 16])
def test_two_documents_on_the_first_line_are_not_json_as_on_any_line(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonstream, "_CHUNK", chunk)
    assert documents("[1] [2]\n[3]\n") == (
        "jsonl", [(1, None, "not valid JSON: Extra data: line 1 column 5 (char 4)"),
                  (2, [3], None)])
    assert documents("[3]\n[1] [2]\n") == (
        "jsonl", [(1, [3], None),
                  (2, None, "not valid JSON: Extra data: line 1 column 5 (char 4)")])
    # the whole line is read again, its leading whitespace included (columns as on Ray)
    assert documents("\n  [1]" + " " * 100 + "[2]\n[3]") == (
        "jsonl", [(2, None, "not valid JSON: Extra data: line 1 column 106 (char 105)"),
                  (3, [3], None)])
    # a one-line array of conversations followed by more on its line
    assert documents("[[1], [2]] [3]\n[4]\n") == (
        "jsonl", [(1, None, "not valid JSON: Extra data: line 1 column 12 (char 11)"),
                  (2, [4], None)])
    # a broken first line is read from the line's start as well
    assert documents('  {"a":\n[1]\n') == (
        "jsonl", [(1, None, "not valid JSON: Expecting value: line 1 column 8 (char 7)"),
                  (2, [1], None)])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n"a": 1}\n[2]\n', "-: line 3: more JSON after the document of lines 1 to 2; a file "
                              "holds one JSON document, or JSONL (one document per line)"),
        ("[1,\n2] [3]\n", "-: line 2: more JSON after the document of lines 1 to 2; a file "
                          "holds one JSON document, or JSONL (one document per line)"),
    ],
)
def test_a_document_over_several_lines_followed_by_more_json_is_refused(
    text: str, message: str
) -> None:
    with pytest.raises(UnreadableInput) as raised:
        documents(text)
    assert str(raised.value) == message


# --- the reader: a key given twice -----------------------------------------------------------


def test_a_key_given_twice_is_refused_by_the_shared_reader() -> None:
    with pytest.raises(RepeatedKey) as raised:
        read_json('{"a": {"eur": 100, "b": [], "eur": 1000000}}')
    assert (str(raised.value), raised.value.key) == (TWICE.format("eur"), "eur")
    assert isinstance(raised.value, ValueError)
    assert read_json('{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}') == {
        "a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}


def test_a_jsonl_line_with_a_key_twice_is_a_line_that_is_not_json() -> None:
    assert documents('[1]\n{"b": {"c": 1, "c": 1}}\n[2]\n') == (
        "jsonl", [(1, [1], None), (2, None, f"not valid JSON: {TWICE.format('c')}"),
                  (3, [2], None)])
    assert documents('{"a": 1, "a": 2}\n[1]\n') == (
        "jsonl", [(1, None, f"not valid JSON: {TWICE.format('a')}"), (2, [1], None)])
    assert documents('{"a": 1, "a": 2}\n', jsonl=True) == (
        "jsonl", [(1, None, f"not valid JSON: {TWICE.format('a')}")])


@pytest.mark.parametrize("text", ['{"a": 1, "a": 2}', '[[{"a": 1}], [{"a": 1, "a": 2}]]',
                                  '[{"a": 1},\n {"a": 1, "a": 2}]'])
def test_a_json_document_with_a_key_twice_is_refused(text: str) -> None:
    with pytest.raises(UnreadableInput) as raised:
        documents(text)
    line = text.count("\n") + 1 if text.startswith("[{") else 1
    assert str(raised.value) == f"-: line {line}: not valid JSON: {TWICE.format('a')}"


# --- the command line --------------------------------------------------------------------------


def test_score_reads_the_lines_of_the_audit_files_as_ray_does(tmp_path: Path) -> None:
    paths = {name: write(tmp_path / name, text) for name, text in FILES.items()}
    out = tmp_path / "out.jsonl"
    code, stdout, err = run("score", str(paths["a_cr.jsonl"]), "-m", "tool_call_f1",
                            "-o", str(out))
    assert (code, stdout, rows_of(out)) == (2, "", [])
    assert err == f"tracebridge score: {paths['a_cr.jsonl']}: line 1: not valid JSON: {EXTRA}\n"
    code, stdout, err = run("score", str(paths["c_two_first.jsonl"]), "-m", "tool_call_f1",
                            "-o", str(out))
    assert (code, stdout, rows_of(out)) == (2, "", [])
    assert err == (f"tracebridge score: {paths['c_two_first.jsonl']}: line 1: not valid JSON: "
                   f"{EXTRA}\n")
    code, stdout, err = run("score", str(paths["b_blank_like.jsonl"]), "-m", "tool_call_f1",
                            "-o", str(out))
    assert (code, rows_of(out)) == (2, [(1, "tool_call_f1", 1.0)])
    assert stdout == ("metric        scored  unscorable  errors    mean     min     max\n"
                      "tool_call_f1       1           0       0  1.0000  1.0000  1.0000\n")
    assert err == (f"tracebridge score: {paths['b_blank_like.jsonl']}: line 2: {NOT_A_VALUE}\n")
    code, stdout, err = run("score", str(paths["b_blank_like.jsonl"]), "-m", "tool_call_f1",
                            "--keep-going", "-o", str(out))
    assert (code, rows_of(out)) == (1, [(1, "tool_call_f1", 1.0), (3, "tool_call_f1", 1.0),
                                        (5, "tool_call_f1", 1.0)])
    assert err.splitlines() == [
        f"tracebridge score: {paths['b_blank_like.jsonl']}: line {n}: {NOT_A_VALUE}"
        for n in (2, 4, 6)]
    assert stdout == ("metric        scored  unscorable  errors    mean     min     max\n"
                      "tool_call_f1       3           0       0  1.0000  1.0000  1.0000\n"
                      "3 invalid sample(s) skipped\n")
    code, stdout, err = run("score", str(paths["c_two_first.jsonl"]), "-m", "tool_call_f1",
                            "--keep-going", "-o", str(out))
    assert (code, rows_of(out)) == (1, [(2, "tool_call_f1", 1.0)])


def test_score_reads_a_lone_cr_alike_from_standard_input() -> None:
    code, stdout, err = run("score", "-", "-m", "tool_call_f1", stdin=FILES["a_cr.jsonl"])
    assert (code, stdout, err) == (2, "", f"tracebridge score: -: line 1: not valid JSON: "
                                          f"{EXTRA}\n")


def test_convert_keeps_going_past_each_bad_line_with_its_code(tmp_path: Path) -> None:
    chat = '[{"role": "user", "content": "hi"}]'
    path = write(tmp_path / "conv.jsonl", f"{chat} {chat}\n{chat}\r\n\u00a0\n{chat}\r{chat}\n")
    errors = tmp_path / "errors.jsonl"
    code, out, err = run("convert", str(path), "--to", "openai_chat", "--keep-going",
                         "--errors", str(errors))
    assert (code, out) == (1, chat + "\n")
    extra = "not valid JSON: Extra data: line 1 column 37 (char 36)"
    assert err.splitlines() == [
        f"tracebridge: reading {path} as openai_chat (told from line 2; --from to choose)",
        f"tracebridge: {path}: line 1: {extra}",
        f"tracebridge: {path}: line 3: {NOT_A_VALUE}",
        f"tracebridge: {path}: line 4: {extra}",
        "1 ok, 3 failed",
        f"tracebridge: standard output has no line for a failed record or a blank line of "
        f"{path}: a record after one has another line number there than in {path}, so ids by line "
        f"number (as sample "
        f"--references matches them) do not carry over; run sample on {path}",
    ]
    rows = [json.loads(line) for line in errors.read_text(encoding="utf-8").splitlines()]
    assert [(row["line"], row["code"], row["message"]) for row in rows] == [
        (1, "not_json", extra), (3, "not_json", NOT_A_VALUE), (4, "not_json", extra)]


def test_score_refuses_a_sample_with_a_key_twice(tmp_path: Path) -> None:
    path = write(tmp_path / "f4.jsonl", PAY + "\n")
    code, out, err = run("score", str(path), "-m", "tool_call_f1", "-m", "tool_call_accuracy")
    assert (code, out) == (2, "")
    assert err == f"tracebridge score: {path}: line 1: not valid JSON: {TWICE.format('eur')}\n"
    path = write(tmp_path / "f4b.jsonl", S[0] + "\n" + PAY + "\n" + S[1] + "\n")
    code, out, err = run("score", str(path), "-m", "tool_call_f1", "--keep-going")
    assert code == 1
    assert [json.loads(line)["line"] for line in out.splitlines()] == [1, 3]
    assert err.splitlines()[0] == (f"tracebridge score: {path}: line 2: not valid JSON: "
                                   f"{TWICE.format('eur')}")
    assert err.splitlines()[-1] == "1 invalid sample(s) skipped"
    # reference_tool_calls given twice (the first value would be lost)
    twice = S[0][:-1] + ',"reference_tool_calls":[{"name":"pay","args":{}}]}'
    code, out, err = run("score", "-", "-m", "tool_call_f1", stdin=twice)
    assert (code, out, err) == (2, "", f"tracebridge score: -: line 1: not valid JSON: "
                                       f"{TWICE.format('reference_tool_calls')}\n")


@pytest.mark.parametrize("command", [["convert", "--to", "tracebridge"], ["validate"], ["show"]])
def test_every_trace_command_refuses_a_key_twice(tmp_path: Path, command: list[str]) -> None:
    trace = '[{"role": "user", "content": "hi", "content": "bye"}]'
    single = write(tmp_path / "dup.json", trace)
    code, out, err = run(command[0], str(single), "--from", "openai_chat", *command[1:])
    assert (code, out) == (2, "")
    assert err == f"tracebridge: {single}: line 1: not valid JSON: {TWICE.format('content')}\n"
    lines = write(tmp_path / "dup.jsonl", trace + '\n[{"role": "user", "content": "ok"}]\n')
    errors = tmp_path / "errors.jsonl"
    code, out, err = run(command[0], str(lines), "--from", "openai_chat", *command[1:],
                         "--keep-going", "--errors", str(errors))
    assert code == 1
    moved = ([f"tracebridge: standard output has no line for a failed record or a blank line "
              f"of {lines}: a record after one has another line number there than in {lines}, so "
              f"ids by line number (as "
              f"sample --references matches them) do not carry over; run sample on {lines}"]
             if command[0] == "convert" else [])  # validate and show write no OUT
    assert err.splitlines() == [
        f"tracebridge: {lines}: line 1: not valid JSON: {TWICE.format('content')}",
        "1 ok, 1 failed", *moved]
    [row] = [json.loads(line) for line in errors.read_text(encoding="utf-8").splitlines()]
    assert (row["line"], row["code"]) == (1, "not_json")


def test_sample_refuses_a_reference_with_a_key_twice(tmp_path: Path) -> None:
    traces = write(tmp_path / "t.jsonl", '[{"role": "user", "content": "hi"}]\n')
    refs = write(tmp_path / "refs.jsonl", '{"id": 1, "reference": "a", "reference": "b"}\n')
    code, out, err = run("sample", str(traces), "--references", str(refs))
    assert (code, out) == (2, "")
    assert err == f"tracebridge: {refs}: line 1: not valid JSON: {TWICE.format('reference')}\n"


# --- MultiTurnSample.model_validate_json -----------------------------------------------------


def test_model_validate_json_refuses_a_key_twice() -> None:
    for text in (PAY, PAY.encode("utf-8")):
        with pytest.raises(ValidationError) as raised:
            MultiTurnSample.model_validate_json(text)
        [error] = raised.value.errors()
        assert (error["type"], error["loc"], error["msg"]) == (
            "json_invalid", (), f"Invalid JSON: {TWICE.format('eur')}")


def test_model_validate_json_reads_what_it_read_before() -> None:
    sample = MultiTurnSample.model_validate_json(PAY.replace('"eur":100,', "").replace(
        '"reference_tool_calls":[{"name":"pay","args":{"eur":100}}],', ""))
    assert sample.messages[1].tool_calls[0].args == {"eur": 1000000}
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample
    # an escaped lone surrogate: JSON that pydantic's own reader refuses
    odd = MultiTurnSample.model_validate_json('{"messages": [{"type": "human", '
                                              '"content": "\\ud800"}]}')
    assert odd.messages[0].content == "\ud800"
    # text that is not JSON is pydantic's error, as before
    with pytest.raises(ValidationError) as raised:
        MultiTurnSample.model_validate_json('{"messages": [')
    assert raised.value.errors()[0]["type"] == "json_invalid"
    # strict as before: a value of the wrong JSON type is refused at its path
    with pytest.raises(TraceError) as mistyped:
        MultiTurnSample.model_validate_json(
            '{"messages": [{"type": "ai", "content": "", "tool_calls": [{"name": "f", '
            '"args": {}, "id": "c"}]}, {"type": "tool", "content": "r", "tool_call_id": "c", '
            '"is_error": "off"}]}')
    assert (mistyped.value.code, mistyped.value.index, mistyped.value.path) == (
        "malformed_event", 1, "messages[1].is_error")


# --- on Ray: the same lines ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    pytest.importorskip("ray")
    from tracebridge.ray_data import init_local

    init_local(num_cpus=2)
    import ray

    try:
        yield
    finally:
        ray.shutdown()


def test_ray_reads_the_lines_as_the_command_line_does(tmp_path: Path, cluster: None) -> None:
    from tracebridge.ray_data import read_traces, score

    texts = {**FILES,
             "d_ascii_controls.jsonl": S[0] + "\n\x0b\n\x0c\n \t\r\n" + S[1] + "\r\n",
             "e_twice.jsonl": S[0] + "\n" + PAY + "\n"}
    seen = {}
    for name, text in texts.items():
        path = write(tmp_path / name, text)
        rows = score(read_traces(str(path), source="sample"), ["tool_call_f1"],
                     actors=1).take_all()
        seen[name] = sorted((row["line"], row["state"], row["error_code"], row["error"])
                            for row in rows)
    extra = f"not valid JSON: {EXTRA}"
    assert seen == {
        "a_cr.jsonl": [(1, "errored", "not_json", extra)],
        "b_blank_like.jsonl": [(1, "scored", None, None), (2, "errored", "not_json", NOT_A_VALUE),
                               (3, "scored", None, None), (4, "errored", "not_json", NOT_A_VALUE),
                               (5, "scored", None, None), (6, "errored", "not_json", NOT_A_VALUE)],
        "c_two_first.jsonl": [(1, "errored", "not_json", extra), (2, "scored", None, None)],
        "c_two_third.jsonl": [(1, "scored", None, None), (2, "scored", None, None),
                              (3, "errored", "not_json", extra)],
        "d_ascii_controls.jsonl": [(1, "scored", None, None),
                                   (2, "errored", "not_json", NOT_A_VALUE),
                                   (3, "errored", "not_json", NOT_A_VALUE),
                                   (5, "scored", None, None)],
        "e_twice.jsonl": [(1, "scored", None, None),
                          (2, "errored", "not_json", f"not valid JSON: {TWICE.format('eur')}")],
    }
    # the command line: the same lines scored, the same lines refused
    for name in texts:
        out = tmp_path / f"{name}.out"
        code, _, err = run("score", str(tmp_path / name), "-m", "tool_call_f1", "--keep-going",
                           "-o", str(out))
        assert code == 1  # each file has a line that is not JSON
        refused = [int(line.split(": line ")[1].split(":")[0]) for line in err.splitlines()
                   if ": line " in line]
        assert sorted([line for line, _, _ in rows_of(out)] + refused) == [
            row[0] for row in seen[name]]
        assert [line for line, state, _, _ in seen[name] if state == "errored"] == refused
