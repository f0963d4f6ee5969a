"""The command line, s40: ``-o OUT`` when standard input is open on OUT, and the records of a
JSON array written on one line.

1. ``-o /dev/null`` with standard input read-only on ``/dev/null`` (``< /dev/null``, or any
   command run by ``xargs``) failed, exit 2, ``cannot write /dev/null: [Errno 9] Bad file
   descriptor``: OUT was taken for standard input, the stream it names, and written through
   a copy of that read-only descriptor. ``convert FILE -o FILE < FILE`` failed the same way.
   Only standard output and standard error are written through now; OUT that standard input
   reads is written as any OUT is. These cases run the real console script in a process of
   its own, its standard input opened read-only (``subprocess`` would open ``/dev/null``
   read-write, which hid the fault).
2. Every record of a JSON array written on one line (what ``json.dump([t1, t2], f)`` writes)
   was "line 1": ``sample`` refused the array (each trace's default id was its line number,
   so the second repeated the first), and ``validate``, ``show``, ``--keep-going``,
   ``--errors`` and ``score`` could not tell the records apart. A record of an array now has
   its element number (1-based): it is the default id (for every array, however it is laid
   out on lines, so a pretty-printed array's ids changed from line numbers to element
   numbers), messages name ``FILE: element K (line N)``, ``--errors`` and ``score`` results
   add ``"element": K``. JSONL and single documents are named as before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from cli_helpers import run

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""


def tb_reading(*argv: str, cwd: Path, stdin: BinaryIO) -> tuple[int, str, str]:
    """``tracebridge *argv`` in a process of its own, its standard input ``stdin`` (a file
    opened for reading only): (exit status, stdout, stderr)."""
    done = subprocess.run([SCRIPT, *argv], cwd=cwd, stdin=stdin, capture_output=True,
                          timeout=120)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def chat(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"hi {n}"}, {"role": "assistant", "content": "ok"}]


def chat_line(n: int) -> str:
    """``chat(n)`` as ``convert --to openai_chat`` writes it to JSONL."""
    return json.dumps(chat(n)) + "\n"


def sample_of(n: int, record_id: Any) -> dict[str, Any]:
    """``tracebridge sample`` of ``chat(n)`` with the id ``record_id``."""
    return {
        "messages": [
            {"type": "human", "content": f"hi {n}", "name": None, "id": None, "metadata": {}},
            {"type": "ai", "content": "ok", "tool_calls": [], "name": None, "citations": [],
             "audio": None, "id": None, "metadata": {}}],
        "reference": None, "reference_tool_calls": None, "reference_topics": None,
        "rubrics": None, "metadata": {"id": record_id}}


SAMPLE: dict[str, Any] = {"messages": [{"type": "human", "content": "hi"}],
                          "reference_tool_calls": []}
SCORED: dict[str, Any] = {
    "name": "tool_call_f1", "value": 1.0, "reason": None,
    "details": {"true_positives": 0, "false_positives": 0, "false_negatives": 0,
                "precision": None, "recall": None, "matched": [], "unexpected": [],
                "missing": []},
    "error": None, "metric_version": "1", "judge": None, "usage": None,
    "transcript_hash": "tb1:5c0c53bef05b18ce7c06a64ba82aee42863929d7ceb85ce6dde5c9272e18ed83",
}
"""``score --metric tool_call_f1`` of ``SAMPLE``, without where the sample is."""
SUMMARY_1 = ("metric        scored  unscorable  errors    mean     min     max\n"
             "tool_call_f1       1           0       0  1.0000  1.0000  1.0000\n")
SUMMARY_2 = ("metric        scored  unscorable  errors    mean     min     max\n"
             "tool_call_f1       2           0       0  1.0000  1.0000  1.0000\n")


# --- 1. -o OUT that standard input is open on ------------------------------------------------


def _out_command(command: str, tmp_path: Path, out: str) -> tuple[list[str], str]:
    """(argv reading in.jsonl and writing ``out``, what it prints on standard output)."""
    if command == "score":
        (tmp_path / "in.jsonl").write_text(json.dumps(SAMPLE) + "\n")
        return ["score", "in.jsonl", "--metric", "tool_call_f1", "-o", out], SUMMARY_1
    (tmp_path / "in.jsonl").write_text(chat_line(1) + chat_line(2))
    if command == "convert":
        return ["convert", "in.jsonl", "--from", "openai_chat", "--to", "langchain", "-o",
                out], ""
    return ["sample", "in.jsonl", "--from", "openai_chat", "-o", out], ""


@pytest.mark.parametrize("command", ["convert", "sample", "score"])
def test_out_dev_null_with_standard_input_read_only_on_dev_null(tmp_path: Path,
                                                                command: str) -> None:
    argv, printed = _out_command(command, tmp_path, os.devnull)
    with open(os.devnull, "rb") as stdin:  # read-only, as `< /dev/null` and xargs open it
        assert tb_reading(*argv, cwd=tmp_path, stdin=stdin) == (0, printed, "")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


@pytest.mark.skipif(shutil.which("xargs") is None, reason="needs xargs")
def test_out_dev_null_under_xargs(tmp_path: Path) -> None:
    # xargs gives the commands it runs a read-only /dev/null as standard input
    (tmp_path / "in.jsonl").write_text(chat_line(1) + chat_line(2))
    done = subprocess.run(
        ["xargs", "-I{}", SCRIPT, "convert", "{}", "--from", "openai_chat", "--to",
         "langchain", "-o", os.devnull],
        cwd=tmp_path, input=b"in.jsonl\n", capture_output=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_convert_out_the_input_that_standard_input_reads_replaces_it(tmp_path: Path) -> None:
    # `convert in.jsonl -o in.jsonl < in.jsonl` is `convert in.jsonl -o in.jsonl`: written
    # beside it, and put in its place when the run ends
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(chat(1), indent=None, separators=(",", ":")) + "\n"
                      + json.dumps(chat(2), separators=(",", ":")) + "\n")
    with open(source, "rb") as stdin:
        assert tb_reading("convert", "in.jsonl", "--from", "openai_chat", "--to",
                          "openai_chat", "-o", "in.jsonl", cwd=tmp_path, stdin=stdin) == (
            0, "", "")
    assert source.read_text() == chat_line(1) + chat_line(2)
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_sample_out_the_input_that_standard_input_reads_replaces_it(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(chat_line(1) + chat_line(2))
    with open(source, "rb") as stdin:
        assert tb_reading("sample", "in.jsonl", "--from", "openai_chat", "-o", "in.jsonl",
                          cwd=tmp_path, stdin=stdin) == (0, "", "")
    assert source.read_text() == "".join(
        json.dumps(sample_of(n, n)) + "\n" for n in (1, 2))
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [(("score", "-", "--metric", "tool_call_f1", "-o", "data.jsonl"),
      "tracebridge score: -o data.jsonl is the same file as the dataset"),
     (("validate", "-", "--errors", "data.jsonl"),
      "tracebridge: --errors data.jsonl is the same file as the input")],
    ids=["score-out", "errors"],
)
def test_an_output_standard_input_reads_is_refused_where_it_is_written_first(
    tmp_path: Path, argv: tuple[str, ...], named: str
) -> None:
    # `score - -o DATA < DATA` opens OUT before it reads: it emptied DATA, as `--errors X < X`
    # did; refused as `score DATA -o DATA` is, DATA untouched
    data = tmp_path / "data.jsonl"
    held = "".join(json.dumps({"messages": [{"type": "human", "content": f"hi {n}"}],
                               "reference_tool_calls": []}) + "\n" for n in (1, 2))
    data.write_text(held)
    with open(data, "rb") as stdin:
        assert tb_reading(*argv, cwd=tmp_path, stdin=stdin) == (
            2, "", f"{named} - (standard input): writing it would destroy it; give another "
            "file\n")
    assert data.read_text() == held


def test_out_dev_stdout_is_still_written_through_standard_output(tmp_path: Path) -> None:
    # `{ echo BEFORE; tracebridge ... -o /dev/stdout < /dev/null; } > log`: through the
    # stream, after what it holds (standard input, read-only, is no stream OUT is written by)
    (tmp_path / "in.jsonl").write_text(chat_line(1))
    script = (f'{{ echo BEFORE; "{SCRIPT}" convert in.jsonl --from openai_chat --to '
              f'openai_chat -o /dev/stdout < /dev/null; echo "rc=$? AFTER"; }} > log 2>&1')
    subprocess.run(["bash", "-c", script], cwd=tmp_path, check=True, timeout=120)
    assert (tmp_path / "log").read_text() == f"BEFORE\n{chat_line(1)}rc=0 AFTER\n"


# --- 2. the records of a JSON array: element numbers ----------------------------------------

INVALID = [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]
"""An OpenAI chat history whose tool message has no tool_call_id."""
INVALID_MESSAGE = ("openai_chat: messages[1].tool_call_id: missing required 'tool_call_id' "
                   "[malformed_event]")
NOTICE = ("tracebridge: reading {} as openai_chat (told from its first 2 records; --from to "
          "choose)\n")


def _one_line(path: Path, *traces: Any) -> Path:
    """What ``json.dump(list(traces), f)`` writes: the array on one line."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(list(traces), file)
    return path


def test_sample_of_a_one_line_array_gives_each_trace_its_element_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), chat(2), chat(3))
    code, out, err = run("sample", "arr.json", "--from", "openai_chat")
    assert (code, err) == (0, "")
    assert [json.loads(text) for text in out.splitlines()] == [
        sample_of(1, 1), sample_of(2, 2), sample_of(3, 3)]


@pytest.mark.parametrize("indent", [None, 0, 2], ids=["one-line", "indent0", "indent2"])
def test_an_arrays_ids_do_not_depend_on_its_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None
) -> None:
    # the same array, however json.dump laid it out, gives the same ids (its lines did before)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arr.json").write_text(json.dumps([chat(1), chat(2)], indent=indent))
    code, out, err = run("sample", "arr.json", "--from", "openai_chat")
    assert (code, err) == (0, "")
    assert [json.loads(text)["metadata"]["id"] for text in out.splitlines()] == [1, 2]


def test_sample_of_several_files_names_an_arrays_traces_file_and_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "a.json", chat(1), chat(2))
    (tmp_path / "b.jsonl").write_text(chat_line(3))
    code, out, err = run("sample", "a.json", "b.jsonl", "--from", "openai_chat")
    assert (code, err) == (0, "")
    assert [json.loads(text)["metadata"]["id"] for text in out.splitlines()] == [
        "a.json:1", "a.json:2", "b.jsonl:1"]


def test_sample_takes_the_reference_of_an_arrays_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), chat(2))
    (tmp_path / "refs.jsonl").write_text(json.dumps({"id": 2, "reference": "second"}) + "\n")
    code, out, err = run("sample", "arr.json", "--from", "openai_chat", "--references",
                         "refs.jsonl")
    assert (code, err) == (0, "")
    assert [json.loads(text)["reference"] for text in out.splitlines()] == [None, "second"]


def test_a_repeated_id_in_an_array_names_both_elements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), chat(2), chat(1))
    code, out, err = run("sample", "arr.json", "--from", "openai_chat", "--id", "0.content")
    assert (code, err) == (
        2, "tracebridge: arr.json: element 3 (line 1): id 'hi 1' is also the id of arr.json: "
           "element 1 (line 1); each trace needs its own id (a document's id, --id PATH, or "
           "its element number)\n")
    assert [json.loads(text)["metadata"]["id"] for text in out.splitlines()] == [
        "hi 1", "hi 2"]


def test_a_repeated_id_in_jsonl_is_told_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text(chat_line(1) + chat_line(2) + chat_line(1))
    code, _out, err = run("sample", "t.jsonl", "--from", "openai_chat", "--id", "0.content")
    assert (code, err) == (
        2, "tracebridge: t.jsonl: line 3: id 'hi 1' is also the id of t.jsonl: line 1; each "
           "trace needs its own id (a document's id, --id PATH, or its line number)\n")


def test_validate_names_each_element_of_a_one_line_array(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), INVALID)
    assert run("validate", "arr.json", "--keep-going") == (
        1,
        "element 1 (line 1): ok: 2 messages (openai_chat)\n"
        "element 2 (line 1): invalid: malformed_event at messages[1].tool_call_id: "
        f"{INVALID_MESSAGE}\n",
        NOTICE.format("arr.json") + "1 ok, 1 failed\n")


def test_show_heads_each_element_of_a_one_line_array(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), chat(2))
    assert run("show", "arr.json", "--from", "openai_chat") == (
        0, "# element 1 (line 1)\n[0] human: hi 1\n[1] ai: ok\n\n"
           "# element 2 (line 1)\n[0] human: hi 2\n[1] ai: ok\n", "")


def test_keep_going_and_errors_name_the_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), INVALID, chat(3))
    code, out, err = run("convert", "arr.json", "--from", "openai_chat", "--to", "openai_chat",
                         "--keep-going", "--errors", "errors.jsonl")
    assert (code, err) == (
        1, f"tracebridge: arr.json: element 2 (line 1): invalid trace: {INVALID_MESSAGE}\n"
           "2 ok, 1 failed\n"
           "tracebridge: standard output has no element for a failed record of arr.json: a "
           "record after one has another element number there than in arr.json, so ids by element "
           "number (as "
           "sample --references matches them) do not carry over; run sample on arr.json\n")
    assert json.loads(out) == [chat(1), chat(3)]
    written = (tmp_path / "errors.jsonl").read_text()
    assert written == json.dumps({
        "file": "arr.json", "line": 1, "element": 2, "code": "malformed_event", "index": 1,
        "path": "messages[1].tool_call_id", "source": "openai_chat",
        "message": INVALID_MESSAGE}) + "\n"


def test_a_missing_at_path_names_the_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", {"trace": chat(1)}, {"trace": chat(2)}, {"other": 1})
    code, out, err = run("convert", "arr.json", "--at", "trace", "--from", "openai_chat",
                         "--to", "openai_chat", "--keep-going", "--errors", "errors.jsonl")
    assert (code, err) == (
        1, "tracebridge: arr.json: element 3 (line 1): --at trace: there is no 'trace' here\n"
           "2 ok, 1 failed\n")
    assert json.loads(out) == [chat(1), chat(2)]
    assert json.loads((tmp_path / "errors.jsonl").read_text()) == {
        "file": "arr.json", "line": 1, "element": 3, "code": "no_such_path", "index": None,
        "path": None, "source": None, "message": "--at trace: there is no 'trace' here"}


def test_records_of_an_array_of_another_format_name_their_elements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "arr.json", chat(1), {"messages": [{"type": "human", "content": "x"}]})
    assert run("validate", "arr.json") == (
        2, "", "tracebridge: arr.json: element 1 (line 1) has the shape of openai_chat or "
               "galtea, element 2 (line 1) of tracebridge; one file holds one format: pass "
               "--from FORMAT\n")


def test_score_of_a_one_line_array_tells_each_result_its_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "ds.json", SAMPLE, SAMPLE)
    code, out, err = run("score", "ds.json", "--metric", "tool_call_f1")
    assert (code, out) == (0, "".join(
        json.dumps({"line": 1, "element": n, **SCORED}) + "\n" for n in (1, 2)))
    assert err == SUMMARY_2


def test_score_of_an_invalid_sample_in_an_array_names_its_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _one_line(tmp_path / "ds.json", SAMPLE, {"messages": "no"})
    code, out, err = run("score", "ds.json", "--metric", "tool_call_f1", "--keep-going")
    assert (code, out) == (1, json.dumps({"line": 1, "element": 1, **SCORED}) + "\n")
    assert err == ("tracebridge score: invalid sample: ds.json: element 2 (line 1): messages: "
                   "Input should be a valid list\n" + SUMMARY_1 + "1 invalid sample(s) skipped\n")


def test_score_of_jsonl_has_no_element(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.jsonl").write_text(json.dumps(SAMPLE) + "\n" + json.dumps(SAMPLE) + "\n")
    code, out, err = run("score", "ds.jsonl", "--metric", "tool_call_f1")
    assert (code, out, err) == (0, "".join(
        json.dumps({"line": n, **SCORED}) + "\n" for n in (1, 2)), SUMMARY_2)
