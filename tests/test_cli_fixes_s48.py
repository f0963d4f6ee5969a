"""The command line, s48.

1. SIGTERM (``timeout``, ``docker stop``, ``kill``) or SIGHUP (the terminal closed) during
   ``convert -o OUT`` or ``sample -o OUT`` killed the process outright: the hidden
   ``.OUT.*.partial`` file beside OUT was left behind, as big as the output written so far,
   and the exit was the raw signal with nothing said. Each command now takes them as it
   takes Ctrl-C: one line, ``tracebridge: terminated (SIGTERM)`` (exit 143) or
   ``tracebridge: hung up (SIGHUP)`` (exit 129), OUT left as it was and nothing beside it. A
   command that tells an interrupt in its own words (``score``, ``run``) exits 143 or 129 too.
   The handlers before the command are put back when it ends; none is set outside the main
   thread, and a signal the process was started with ignored (``nohup``) stays ignored.
2. ``sample - -`` read standard input twice: every record was written, then the run failed
   with ``- is empty`` (exit 2; with ``-o OUT`` the whole run was thrown away). Standard
   input named twice (among FILE..., or as FILE and ``--references``) is refused before
   anything is read, exit 2.
"""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CALL, CHAT, run

from tracebridge.cli import main

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""

RECORDS = json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n"
STOPPED = {
    signal.SIGTERM: (143, "tracebridge: terminated (SIGTERM)\n"),
    signal.SIGHUP: (129, "tracebridge: hung up (SIGHUP)\n"),
}
"""What each stop signal makes of a command: its exit status and its one line."""


def _default_signals() -> None:
    """The child starts with SIGTERM and SIGHUP at their defaults, whatever this test run
    inherited (``nohup`` ignores SIGHUP, and an ignored signal is passed on)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([SCRIPT, *argv], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)


def _open_writer(fifo: Path, process: subprocess.Popen[str]) -> int:
    """The FIFO's write end, opened once the command has opened it to read (it is then
    running its command, with its handlers set); the command then waits for more input."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        assert process.poll() is None, process.communicate(timeout=30)
        assert time.monotonic() < deadline, "the command never opened its input"
        time.sleep(0.05)


def _wait_for(found: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not found():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _stopped(tmp_path: Path, argv: list[str], signum: int, wait_for: Any = None,
             records: str = RECORDS) -> tuple[int, str, str]:
    """Run ``tracebridge *argv`` reading the FIFO ``in.jsonl`` (``records``, then it waits
    for more), send it ``signum`` once it is under way (and ``wait_for()`` holds): (exit
    status, stdout, stderr)."""
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    process = _start(argv, tmp_path)
    writer = _open_writer(fifo, process)
    try:
        os.write(writer, records.encode())
        if wait_for is not None:
            _wait_for(wait_for, "the command got under way")
        time.sleep(0.3)  # the records are read, and the command waits for more
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        os.close(writer)
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    return process.returncode, out, err


def _partial_in(directory: Path) -> Any:
    return lambda: any(path.name.endswith(".partial") for path in directory.iterdir())


# --- 1. SIGTERM and SIGHUP are taken as Ctrl-C is -------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", [
    ["convert", "in.jsonl", "--from", "openai_chat", "--to", "langchain"],
    ["sample", "in.jsonl", "--from", "openai_chat"],
])
def test_a_stop_signal_leaves_out_as_it_was_and_nothing_beside_it(
    tmp_path: Path, command: list[str], signum: int
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "out.jsonl").write_text("old\n")
    code, out, err = _stopped(tmp_path, [*command, "-o", "out/out.jsonl"], signum,
                              wait_for=_partial_in(out_dir))
    assert (code, out, err) == (STOPPED[signum][0], "", STOPPED[signum][1])
    assert sorted(path.name for path in out_dir.iterdir()) == ["out.jsonl"]
    assert (out_dir / "out.jsonl").read_text() == "old\n"


def test_a_stop_signal_before_out_exists_leaves_no_out(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = _stopped(
        tmp_path, ["convert", "in.jsonl", "--from", "openai_chat", "--to", "langchain", "-o",
                   "out/new.jsonl"], signal.SIGTERM, wait_for=_partial_in(out_dir))
    assert (code, out, err) == (143, "", "tracebridge: terminated (SIGTERM)\n")
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", ["validate", "show"])
def test_a_stop_signal_ends_a_command_on_standard_output_with_one_line(
    tmp_path: Path, command: str, signum: int
) -> None:
    errors = tmp_path / "errors.jsonl"  # opened as the command starts: it is under way
    code, _, err = _stopped(tmp_path, [command, "in.jsonl", "--from", "openai_chat",
                                       "--errors", "errors.jsonl"], signum,
                            wait_for=errors.exists)
    assert (code, err) == STOPPED[signum]
    assert errors.read_text() == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["errors.jsonl", "in.jsonl"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_score_stopped_by_a_signal_says_so_in_its_words_and_exits_as_the_signal_asks(
    tmp_path: Path, signum: int
) -> None:
    scores = tmp_path / "scores.jsonl"  # opened before the dataset is read, which waits
    code, out, err = _stopped(tmp_path, ["score", "in.jsonl", "--metric", "tool_call_accuracy",
                                         "-o", "scores.jsonl"], signum, wait_for=scores.exists,
                              records="")
    said = STOPPED[signum][1].removeprefix("tracebridge: ").removesuffix("\n")
    assert (code, out, err) == (
        STOPPED[signum][0], "", f"tracebridge score: {said}; 0 result(s) written to "
        "scores.jsonl\n")


def test_run_hung_up_before_it_started_says_so_and_exits_129(tmp_path: Path) -> None:
    code, out, err = _stopped(tmp_path, ["run", "in.jsonl", "--out", "rundir", "--metric",
                                         "tool_call_accuracy", "--no-cache"], signal.SIGHUP,
                              records="")
    assert (code, out, err) == (129, "", "tracebridge run: interrupted before the run started; "
                                "nothing was written to rundir\n")
    assert not (tmp_path / "rundir").exists()


class _SignalledInput(io.StringIO):
    """Standard input that sends this process ``signum`` when it is first read."""

    def __init__(self, text: str, signum: int) -> None:
        super().__init__(text)
        self.signum = signum
        self.sent = False

    def read(self, size: int | None = -1) -> str:
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), self.signum)
        return super().read(size)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_main_handles_a_stop_signal_in_process_and_puts_the_default_back(
    tmp_path: Path, signum: int
) -> None:
    before = signal.signal(signum, signal.SIG_DFL)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["convert", "-", "--from", "openai_chat", "--to", "langchain", "-o",
                     str(tmp_path / "out.jsonl")], stdin=_SignalledInput(RECORDS, signum),
                    stdout=out, stderr=err)
        assert signal.getsignal(signum) is signal.SIG_DFL
    finally:
        signal.signal(signum, before)
    assert (code, out.getvalue(), err.getvalue()) == (STOPPED[signum][0], "",
                                                      STOPPED[signum][1])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_main_leaves_a_stop_signal_to_the_program_that_handles_it(
    tmp_path: Path, signum: int
) -> None:
    """A program calling ``main`` with its own handler keeps it: the signal is its own."""
    seen: list[int] = []

    def own(received: int, frame: Any) -> None:
        seen.append(received)

    before = signal.signal(signum, own)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["convert", "-", "--from", "openai_chat", "--to", "langchain", "-o",
                     str(tmp_path / "out.jsonl")], stdin=_SignalledInput(RECORDS, signum),
                    stdout=out, stderr=err)
        assert signal.getsignal(signum) is own
    finally:
        signal.signal(signum, before)
    assert seen == [signum]
    assert (code, out.getvalue(), err.getvalue()) == (0, "", "")
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


def test_a_signal_ignored_when_main_starts_stays_ignored(tmp_path: Path) -> None:
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["convert", "-", "--from", "openai_chat", "--to", "langchain", "-o",
                     str(tmp_path / "out.jsonl")],
                    stdin=_SignalledInput(RECORDS, signal.SIGHUP), stdout=out, stderr=err)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
    assert (code, out.getvalue(), err.getvalue()) == (0, "", "")
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2
    assert [path.name for path in tmp_path.iterdir()] == ["out.jsonl"]


def test_main_runs_outside_the_main_thread_without_setting_handlers() -> None:
    found: list[tuple[int, str, str]] = []
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    thread = threading.Thread(target=lambda: found.append(
        run("validate", "-", "--from", "openai_chat", stdin=RECORDS)))
    thread.start()
    thread.join(timeout=60)
    assert found == [(0, "line 1: ok: 2 messages (openai_chat)\n"
                         "line 2: ok: 4 messages (openai_chat)\n", "")]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == handlers


# --- 2. standard input is read once -----------------------------------------------------------


def test_sample_refuses_standard_input_given_twice_before_reading_it() -> None:
    code, out, err = run("sample", "-", "-", "--from", "openai_chat", stdin=RECORDS)
    assert (code, out, err) == (
        2, "", "tracebridge: - (standard input) is given twice as FILE: it can be read only "
        "once; give it once\n")


def test_sample_refuses_standard_input_given_three_times() -> None:
    code, out, err = run("sample", "-", "-", "-", "--from", "openai_chat", stdin=RECORDS)
    assert (code, out, err) == (
        2, "", "tracebridge: - (standard input) is given 3 times as FILE: it can be read only "
        "once; give it once\n")


def test_sample_refuses_standard_input_as_traces_and_references(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text(RECORDS)
    code, out, err = run("sample", str(traces), "-", "--references", "-", "--from",
                         "openai_chat", stdin=json.dumps({"id": 1, "reference": "x"}) + "\n")
    assert (code, out, err) == (
        2, "", "tracebridge: --references - and FILE - both read standard input, which can be "
        "read only once; give a file for one\n")


def test_sample_refused_for_standard_input_twice_leaves_out_as_it_was(tmp_path: Path) -> None:
    out_path = tmp_path / "out.jsonl"
    out_path.write_text("old\n")
    code, out, err = run("sample", "-", "-", "--from", "openai_chat", "-o", str(out_path),
                         stdin=RECORDS)
    assert (code, out) == (2, "")
    assert err.startswith("tracebridge: - (standard input) is given twice as FILE")
    assert [path.name for path in tmp_path.iterdir()] == ["out.jsonl"]
    assert out_path.read_text() == "old\n"


def test_standard_input_once_with_references_from_a_file_still_works(tmp_path: Path) -> None:
    references = tmp_path / "refs.jsonl"
    references.write_text(json.dumps({"id": 1, "reference": "hello"}) + "\n")
    code, out, err = run("sample", "-", "--references", str(references), "--from",
                         "openai_chat", stdin=RECORDS)
    assert (code, err) == (0, "")
    samples = [json.loads(line) for line in out.splitlines()]
    assert [(s["reference"], s["metadata"]) for s in samples] == [
        ("hello", {"id": 1}), (None, {"id": 2})]
