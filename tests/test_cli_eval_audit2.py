"""The command line and evaluation runs, second audit: an output naming an input, a write that
fails inside a run, lone surrogates in results, `--checks` modules that cannot be imported,
`--timeout`, file modes, control characters in blockers, and RUN_DIR files nested too deeply.

Each test runs ``python -m tracebridge`` (or the class at fault) and checks the exit status,
the one line on stderr, and what is left on disk; none needs more than 127.0.0.1.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import WITH_REFERENCE, case, goal, write_cases
from fake_openai_server import FakeOpenAI

from tracebridge._cli_output import Output

SURROGATE_KEY = "report-\udcff.txt"
"""A file name decoded with ``surrogateescape``: JSON spells it ``report-\\udcff.txt``."""

OPEN_CALL: list[dict[str, Any]] = [
    {"role": "human", "content": "open it"},
    {"role": "ai", "content": "", "tool_calls": [
        {"name": "open", "args": {"p": "x"}, "call_id": "c1"}]},
    {"role": "tool", "content": "opened", "call_id": "c1"},
]


def tb(*argv: str, cwd: Path, env: dict[str, str] | None = None,
       umask: int | None = None) -> subprocess.CompletedProcess[str]:
    """``tracebridge *argv`` in a process of its own (bounded); its stderr never holds a
    traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "tracebridge", *argv], cwd=cwd, capture_output=True, text=True,
        timeout=120, env={**os.environ, **(env or {})},
        preexec_fn=None if umask is None else (lambda: os.umask(umask) and None),
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "never retrieved" not in done.stderr, done.stderr
    return done


def jsonl(path: Path, values: list[Any]) -> Path:
    """``values`` as JSONL, with Python's escapes (a lone surrogate as ``\\udcff``)."""
    path.write_text("".join(json.dumps(value) + "\n" for value in values))
    return path


def chat_traces(path: Path, count: int = 3) -> Path:
    return jsonl(path, [[{"role": "user", "content": f"q{i}"},
                         {"role": "assistant", "content": "a"}] for i in range(count)])


def ok_case(case_id: str = "c1", **fields: Any) -> dict[str, Any]:
    return {"case_id": case_id, "transcript": OPEN_CALL,
            "reference_tool_calls": [{"name": "open", "args": {"p": "x"}}],
            "reference_version": "v1", **fields}


def one_run(tmp_path: Path, cases: list[dict[str, Any]], *extra: str,
            out: str = "run") -> subprocess.CompletedProcess[str]:
    jsonl(tmp_path / "cases.jsonl", cases)
    return tb("run", "cases.jsonl", "--out", out, "--metric", "tool_call_f1", "--no-cache",
              *extra, cwd=tmp_path)


# --- 1. an output option naming an input ----------------------------------------------------


RUNS = "the run's"


def _destroy(flag: str, output: str, input_: str, what: str = "the input") -> str:
    return (f"{flag} {output} is the same file as {what} {input_}: writing it would destroy "
            f"it; give another file")


@pytest.mark.parametrize("command", ["validate", "convert", "show"])
def test_errors_naming_the_input_is_refused_and_the_input_kept(
    tmp_path: Path, command: str
) -> None:
    before = chat_traces(tmp_path / "traces.jsonl").read_bytes()
    extra = ["--to", "langchain"] if command == "convert" else []
    done = tb(command, "traces.jsonl", *extra, "--keep-going", "--errors", "traces.jsonl",
              cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"tracebridge: {_destroy('--errors', 'traces.jsonl', 'traces.jsonl')}\n"
    assert done.stdout == ""
    assert (tmp_path / "traces.jsonl").read_bytes() == before


def test_errors_naming_the_input_through_a_link_is_refused(tmp_path: Path) -> None:
    before = chat_traces(tmp_path / "traces.jsonl").read_bytes()
    (tmp_path / "link.jsonl").symlink_to("traces.jsonl")
    done = tb("validate", "link.jsonl", "--errors", "traces.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"tracebridge: {_destroy('--errors', 'traces.jsonl', 'link.jsonl')}\n"
    assert (tmp_path / "traces.jsonl").read_bytes() == before


def test_errors_naming_the_output_is_refused(tmp_path: Path) -> None:
    chat_traces(tmp_path / "traces.jsonl")
    done = tb("convert", "traces.jsonl", "--to", "langchain", "-o", "out.jsonl", "--errors",
              "out.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"tracebridge: {_destroy('--errors', 'out.jsonl', 'out.jsonl', '-o')}\n"
    assert not (tmp_path / "out.jsonl").exists()


def test_sample_errors_naming_the_references_is_refused(tmp_path: Path) -> None:
    chat_traces(tmp_path / "traces.jsonl")
    before = jsonl(tmp_path / "refs.jsonl", [{"id": 1, "reference": "r"}]).read_bytes()
    done = tb("sample", "traces.jsonl", "--references", "refs.jsonl", "--errors", "refs.jsonl",
              cwd=tmp_path)
    assert done.returncode == 2
    told = _destroy("--errors", "refs.jsonl", "refs.jsonl", "the references file")
    assert done.stderr == f"tracebridge: {told}\n"
    assert (tmp_path / "refs.jsonl").read_bytes() == before


def test_score_output_naming_the_dataset_is_refused_and_the_dataset_kept(
    tmp_path: Path,
) -> None:
    before = jsonl(tmp_path / "ds.jsonl", [{"messages": [{"type": "human", "content": "hi"}],
                                           "reference_tool_calls": []}]).read_bytes()
    done = tb("score", "ds.jsonl", "--metric", "tool_call_f1", "-o", "ds.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (f"tracebridge score: "
                           f"{_destroy('-o', 'ds.jsonl', 'ds.jsonl', 'the dataset')}\n")
    assert (tmp_path / "ds.jsonl").read_bytes() == before


def test_run_refuses_a_case_file_that_is_a_file_of_run_dir(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    before = jsonl(tmp_path / "run" / "cases.jsonl", [ok_case()]).read_bytes()
    done = tb("run", "run/cases.jsonl", "--out", "run", "--metric", "tool_call_f1",
              "--no-cache", cwd=tmp_path)
    assert done.returncode == 2
    told = _destroy("CASES", "run/cases.jsonl", "run/cases.jsonl", RUNS)
    assert done.stderr == f"tracebridge run: {told}\n"
    assert (tmp_path / "run" / "cases.jsonl").read_bytes() == before
    assert sorted(os.listdir(tmp_path / "run")) == ["cases.jsonl"]


def test_gate_and_report_outputs_naming_what_they_read_are_refused(tmp_path: Path) -> None:
    assert one_run(tmp_path, [ok_case()]).returncode == 0
    (tmp_path / "policy.toml").write_text('[slices.""]\nmax_failures = 0\n')
    files = {name: (tmp_path / name).read_bytes()
             for name in ("policy.toml", "cases.jsonl", "run/summary.json", "run/results.jsonl")}
    done = tb("gate", "run", "--policy", "policy.toml", "--junit", "run/summary.json",
              cwd=tmp_path)
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr == (f"tracebridge gate: "
                           f"{_destroy('--junit', 'run/summary.json', 'run/summary.json', RUNS)}\n")
    done = tb("gate", "run", "--policy", "policy.toml", "--markdown", "policy.toml",
              cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr == (f"tracebridge gate: "
                           f"{_destroy('--markdown', 'policy.toml', 'policy.toml', '--policy')}\n")
    done = tb("gate", "run", "--policy", "policy.toml", "--junit", "g.out", "--markdown",
              "g.out", cwd=tmp_path)
    assert done.returncode == 4
    told = _destroy("--junit", "g.out", "g.out", "--markdown")
    assert done.stderr == f"tracebridge gate: {told}\n"
    assert not (tmp_path / "g.out").exists()
    done = tb("report", "run", "-o", "cases.jsonl", cwd=tmp_path)
    assert done.returncode == 4
    told = _destroy("-o", "cases.jsonl", str(tmp_path / "cases.jsonl"), "the case file")
    assert done.stderr == f"tracebridge report: {told}\n"
    done = tb("report", "run", "-o", "run/results.jsonl", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr == (f"tracebridge report: "
                           f"{_destroy('-o', 'run/results.jsonl', 'run/results.jsonl', RUNS)}\n")
    for name, data in files.items():
        assert (tmp_path / name).read_bytes() == data, name


# --- 2. a write that fails inside a run -----------------------------------------------------

_FULL_DISK = """
import sys
from tracebridge.cli import main
from tracebridge.evaluation import record

opened = record.RunRecord.open


def open_on_a_full_disk(self, header):
    done = opened(self, header)
    self._results.close()
    self._results = open("/dev/full", "a", encoding="utf-8")  # every flush: ENOSPC
    return done


record.RunRecord.open = open_on_a_full_disk
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_result_that_cannot_be_written_stops_the_run_in_one_line(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(*[goal(True)] * 16)
    write_cases(tmp_path, [case(f"c{i}") for i in range(8)])
    (tmp_path / "full_disk.py").write_text(_FULL_DISK)
    argv = ["cases.jsonl", "--out", "run", "--metric", WITH_REFERENCE, "--model", "m",
            "--base-url", server.base_url, "--retries", "0", "--no-cache"]
    done = subprocess.run(
        [sys.executable, "full_disk.py", "run", *argv, "--concurrency", "2"], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, env={**os.environ, "OPENAI_API_KEY": "x"},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("tracebridge run: cannot write /dev/full: [Errno 28] No space left "
                           "on device\n")
    assert done.stdout == ""
    assert len(server.requests) <= 2  # the jobs in flight when it failed; no other started
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "running"
    # RUN_DIR is a run to resume once the disk has room
    resumed = tb("run", *argv, "--concurrency", "2", cwd=tmp_path,
                 env={"OPENAI_API_KEY": "x"})
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("complete: 8 passed;")


# --- 3, 4. lone surrogates in results and in expect reasons ----------------------------------


def test_score_writes_a_result_whose_argument_name_holds_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    call = {"name": "open", "args": {SURROGATE_KEY: True}}
    jsonl(tmp_path / "ds.jsonl", [{
        "messages": [{"type": "human", "content": "open it"},
                     {"type": "ai", "content": "", "tool_calls": [{**call, "id": "c1"}]},
                     {"type": "tool", "content": "opened", "tool_call_id": "c1"}],
        "reference_tool_calls": [call]}])
    done = tb("score", "ds.jsonl", "--metric", "tool_call_f1", "-o", "out.jsonl",
              cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    text = (tmp_path / "out.jsonl").read_text()
    assert '{"report-\\udcff.txt": true}' in text  # the escape, as it was read
    row = json.loads(text)
    assert row["value"] == 1.0
    assert row["details"]["matched"][0]["args"] == {SURROGATE_KEY: True}


def test_run_records_a_result_whose_argument_name_holds_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    transcript = json.loads(json.dumps(OPEN_CALL))
    transcript[1]["tool_calls"][0]["args"] = {SURROGATE_KEY: True}
    done = one_run(tmp_path, [ok_case(transcript=transcript, reference_tool_calls=[
        {"name": "open", "args": {SURROGATE_KEY: True}}])])
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("complete: 1 passed;")
    text = (tmp_path / "run" / "results.jsonl").read_text()
    assert '"report-\\udcff.txt": true' in text
    row = json.loads(text)
    assert row["details"]["matched"][0]["args"] == {SURROGATE_KEY: True}
    # and the readers take it back
    (tmp_path / "policy.toml").write_text('[slices.""]\nmax_failures = 0\n')
    assert tb("gate", "run", "--policy", "policy.toml", cwd=tmp_path).returncode == 0


def test_a_failed_expect_on_a_lone_surrogate_blocks_the_case_with_its_reason(
    tmp_path: Path,
) -> None:
    done = one_run(tmp_path, [ok_case(domain_evidence={"ticket_id": "T-\ud800"},
                                      expect={"ticket_id": {"equals": "T-1"}})])
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("complete: 1 blocked;")
    text = (tmp_path / "run" / "cases.jsonl").read_text()
    assert 'got \\"T-\\ud800\\"' in text  # written back as its escape
    row = json.loads(text)
    assert row["state"] == "blocked"
    assert row["reasons"] == ['expect ticket_id: expected "T-1", got "T-\ud800"']


# --- 5. gate --markdown with a lone surrogate -----------------------------------------------


def test_gate_markdown_writes_a_lone_surrogate_as_its_escape(tmp_path: Path) -> None:
    (tmp_path / "surcheck.py").write_text(
        'def check(case):\n    return ["evidence file report-\\udcff.txt missing"]\n')
    jsonl(tmp_path / "cases.jsonl", [ok_case(slice="s")])
    (tmp_path / "policy.toml").write_text("[slices.s]\nmax_failures = 0\n")
    ran = tb("run", "cases.jsonl", "--out", "run", "--metric", "tool_call_f1", "--no-cache",
             "--checks", "surcheck:check", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert ran.returncode == 0, ran.stderr
    done = tb("gate", "run", "--policy", "policy.toml", "--markdown", "summary.md",
              cwd=tmp_path)
    blocker = ("receipt_not_verified: c1: check surcheck:check: evidence file "
               "report-\\udcff.txt missing")
    assert done.returncode == 1
    assert done.stdout == blocker + "\n"
    assert done.stderr == "tracebridge gate: quality failed (exit 1): 1 blocker(s)\n"
    markdown = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert ("- `receipt_not_verified` c1: check surcheck:check: evidence file "
            "report-\\udcff.txt missing") in markdown.splitlines()


# --- 6. convert -o on a full disk ------------------------------------------------------------


class _FullOnClose(io.StringIO):
    """A temporary file whose last flush fails, as on a disk that filled mid-run."""

    def __init__(self, real: Any) -> None:
        super().__init__()
        self.real = real

    def close(self) -> None:
        self.real.close()
        super().close()
        raise OSError(28, "No space left on device")


def test_abandoned_output_leaves_nothing_beside_out_when_closing_fails(tmp_path: Path) -> None:
    out = Output(str(tmp_path / "out.jsonl"), io.StringIO())
    out.write({"a": 1}, "jsonl")
    out.stream = _FullOnClose(out.stream)
    try:
        raise OSError(28, "No space left on device")  # the write that stopped the run
    except OSError:
        out.abandon()  # says nothing more: the run's own error is the one told
    assert os.listdir(tmp_path) == []


# --- 7. sample: an id names one trace --------------------------------------------------------


def test_sample_refuses_two_traces_with_one_id(tmp_path: Path) -> None:
    jsonl(tmp_path / "traces.jsonl", [
        {"id": 3, "messages": [{"role": "user", "content": "line 1"},
                               {"role": "assistant", "content": "a"}]},
        {"messages": [{"role": "user", "content": "line 2"},
                      {"role": "assistant", "content": "b"}]},
        {"messages": [{"role": "user", "content": "line 3, so its id is 3"},
                      {"role": "assistant", "content": "c"}]},
    ])
    jsonl(tmp_path / "refs.jsonl", [{"id": 3, "reference": "REFERENCE OF CASE 3"}])
    done = tb("sample", "traces.jsonl", "--at", "messages", "--from", "openai_chat",
              "--references", "refs.jsonl", "-o", "ds.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("tracebridge: traces.jsonl: line 3: id 3 is also the id of "
                           "traces.jsonl: line 1; each trace needs its own id (a document's "
                           "id, --id PATH, or its line number)\n")
    assert not (tmp_path / "ds.jsonl").exists()


def test_sample_refuses_a_repeated_id_given_as_text_and_number(tmp_path: Path) -> None:
    message = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    jsonl(tmp_path / "traces.jsonl", [{"id": "7", "messages": message},
                                       {"id": 7, "messages": message}])
    done = tb("sample", "traces.jsonl", "--at", "messages", "--from", "openai_chat",
              "-o", "ds.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("tracebridge: traces.jsonl: line 2: id 7 is also the id of "
                                  "traces.jsonl: line 1;")
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "ds.jsonl").exists()


# --- 8. --checks modules that cannot be imported ----------------------------------------------


@pytest.mark.parametrize(("source", "spec", "told"), [
    ("def check(:\n", "badsyntax:check",
     "cannot import badsyntax: SyntaxError: invalid syntax (badsyntax.py, line 1)"),
    ('raise RuntimeError("boom at import")\n', "raising:check",
     "cannot import raising: RuntimeError: boom at import"),
    (None, ".relative:check",
     "cannot import .relative: TypeError: the 'package' argument is required to perform a "
     "relative import for '.relative'"),
])
def test_a_checks_module_that_cannot_be_imported_exits_2_in_one_line(
    tmp_path: Path, source: str | None, spec: str, told: str
) -> None:
    if source is not None:
        (tmp_path / f"{spec.split(':')[0]}.py").write_text(source)
    jsonl(tmp_path / "cases.jsonl", [ok_case()])
    done = tb("run", "cases.jsonl", "--out", "run", "--metric", "tool_call_f1", "--no-cache",
              "--checks", spec, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 2
    assert done.stderr == f"tracebridge run: --checks {spec}: {told}\n"
    assert not (tmp_path / "run").exists()


# --- 9. --timeout -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf"])  # (0 and -1 were refused already)
def test_run_refuses_a_timeout_that_is_not_a_positive_number(tmp_path: Path,
                                                             value: str) -> None:
    done = one_run(tmp_path, [ok_case()], "--timeout", value)
    assert done.returncode == 2
    shown = str(float(value))
    assert done.stderr == (
        f"tracebridge run: --timeout must be a finite number more than 0, got {shown}\n"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_score_refuses_a_timeout_that_is_not_a_positive_number(tmp_path: Path,
                                                               value: str) -> None:
    jsonl(tmp_path / "ds.jsonl", [{"messages": [{"type": "human", "content": "hi"}],
                                   "reference_tool_calls": []}])
    done = tb("score", "ds.jsonl", "--metric", "tool_call_f1", "--timeout", value,
              cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    shown = str(float(value))
    assert done.stderr == (
        f"tracebridge score: --timeout must be a finite number more than 0, got {shown}\n"
    )


# --- 10. file modes in RUN_DIR ----------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_run_dir_file_has_the_mode_the_umask_gives(tmp_path: Path, umask: int) -> None:
    jsonl(tmp_path / "cases.jsonl", [ok_case()])
    done = tb("run", "cases.jsonl", "--out", "run", "--metric", "tool_call_f1", "--no-cache",
              cwd=tmp_path, umask=umask)
    assert done.returncode == 0, done.stderr
    modes = {name: stat.S_IMODE(os.stat(tmp_path / "run" / name).st_mode)
             for name in ("summary.json", "cases.jsonl", "results.jsonl", "spent.jsonl")}
    assert modes == dict.fromkeys(modes, 0o666 & ~umask)


# --- 11. control characters in blockers --------------------------------------------------------


def test_a_newline_or_cr_in_a_case_id_keeps_each_blocker_on_one_line(tmp_path: Path) -> None:
    wrong = {"reference_tool_calls": [{"name": "close", "args": {}}]}
    one_run(tmp_path, [
        ok_case("c1\ncontrol_failed: positive-7: the judge misread the tool", slice="s",
                **wrong),
        ok_case("c2\r| x | y |", slice="s\rt", **wrong),
    ])
    (tmp_path / "policy.toml").write_text(
        '[slices.s]\nmax_failures = 0\n[slices."s\\rt"]\nmax_failures = 5\n')
    done = tb("gate", "run", "--policy", "policy.toml", "--markdown", "summary.md",
              "--junit", "junit.xml", cwd=tmp_path)
    blocker = ("slice_over_limit: s: 1 failed case(s), over the limit of 0 (c1\\ncontrol_failed:"
               " positive-7: the judge misread the tool)")
    assert done.returncode == 1
    assert done.stdout == blocker + "\n"
    markdown = (tmp_path / "summary.md").read_bytes()
    assert b"\r" not in markdown
    lines = markdown.decode().splitlines()
    assert "- `slice_over_limit` s: 1 failed case(s), over the limit of 0 (c1\\\\ncontrol\\_" \
           "failed: positive-7: the judge misread the tool)" in lines
    assert "| s\\\\rt | 0 | 1 | 0 | 0 | 0 | 0 | 5 |" in lines
    assert blocker in (tmp_path / "junit.xml").read_text()


# --- 12. a RUN_DIR file nested too deeply ------------------------------------------------------


def _deep(path: Path) -> None:
    with open(path, "a") as out:
        out.write('{"a":' + "[" * 100_000 + "]" * 100_000 + "}\n")


@pytest.mark.parametrize("name", ["results.jsonl", "cases.jsonl"])
def test_a_run_dir_line_nested_too_deeply_is_one_line_exit_4_or_2(tmp_path: Path,
                                                                  name: str) -> None:
    assert one_run(tmp_path, [ok_case()]).returncode == 0
    (tmp_path / "policy.toml").write_text('[slices.""]\nmax_failures = 0\n')
    _deep(tmp_path / "run" / name)
    told = f"run/{name}: line 2 is nested too deeply to read"
    for command, extra in (("gate", ["--policy", "policy.toml"]), ("calibrate", []),
                           ("report", ["-o", "r.html"])):
        done = tb(command, "run", *extra, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (4, ""), command
        assert done.stderr == f"tracebridge {command}: {told}\n"
    assert not (tmp_path / "r.html").exists()
    if name == "results.jsonl":  # resuming reads the results back
        done = one_run(tmp_path, [ok_case()])
        assert done.returncode == 2
        assert done.stderr == f"tracebridge run: {told}; use a new --out\n"


def test_a_summary_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    assert one_run(tmp_path, [ok_case()]).returncode == 0
    summary = tmp_path / "run" / "summary.json"
    summary.write_text('{"a":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    (tmp_path / "policy.toml").write_text('[slices.""]\nmax_failures = 0\n')
    done = tb("gate", "run", "--policy", "policy.toml", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr == "tracebridge gate: cannot read run/summary.json: it is nested too " \
                          "deeply to read\n"
    done = one_run(tmp_path, [ok_case()])
    assert done.returncode == 2
    assert done.stderr == ("tracebridge run: cannot read run/summary.json: it is nested too "
                           "deeply to read; use a new --out\n")
