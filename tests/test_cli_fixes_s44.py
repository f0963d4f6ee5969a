"""The command line, s44.

1. Standard output kept the locale's encoding (``PYTHONIOENCODING=ascii``, a latin-1 locale, a
   Windows code page), and what it could not hold was written as a Python escape (``\\xe9``,
   ``\\U0001f600``), which is not JSON: ``convert`` and ``sample`` wrote output that did not
   read back, exit 0, and ``show`` printed the escapes. Standard output is UTF-8 now, as
   standard input and every OUT are.
2. A JSON array of traces whose every record failed (``--keep-going``) was written as nothing
   at all (an empty OUT, which is not JSON); it is ``[]`` now, on OUT and on standard output.
3. ``convert -o OUT`` and ``sample -o OUT`` gave an existing OUT the umask's mode (a 0600 file
   became 0644); OUT keeps its mode now, and a new OUT still gets the umask's.
4. ``gate``, ``calibrate`` and ``report`` given an unknown flag or a word too many exited 2,
   the gate's "incomplete" (the top-level parser refused it); they exit 4 now, with one line,
   as for a missing flag (which printed the usage before that line: it is one line now).
5. A Ctrl-C while pydantic's compiled core imported ``datetime`` (during the console script's
   import of the package) was a Rust panic, a ``PanicException`` traceback and exit 1; it is
   ``tracebridge: interrupted`` and exit 130 now. The interrupt is placed deterministically by
   a ``sitecustomize`` import hook (test code only), as in ``test_cli_audit_s37``.
6. ``--help`` whose output could not be written (``> /dev/full``, a reader gone) exited 0 with
   nothing said; it is one line and exit 2 now (a reader gone: 141, no message).
7. ``score`` read a file named ``.jsonl`` holding one line as one JSON document: a broken
   line refused the whole dataset (exit 2), even with ``--keep-going``. It is one bad sample
   now, named by its line, as in every command.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CHAT, run

from tracebridge.cli import main

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""

UNICODE: list[dict[str, Any]] = [
    {"role": "user", "content": "café 😀 中"},
    {"role": "assistant", "content": "ok"},
]
ORPHAN: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": "x", "content": "r"}]
"""A tool result that answers nothing: every format refuses it (``orphan_tool_result``)."""


def tb(*argv: str, cwd: Path, env: dict[str, str] | None = None,
       stdout: Any = subprocess.PIPE) -> tuple[int, bytes, str]:
    """``tracebridge *argv`` in a process of its own: (exit status, stdout bytes, stderr)."""
    done = subprocess.run([SCRIPT, *argv], cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=120,
                          env={**os.environ, **(env or {})})
    return done.returncode, done.stdout or b"", done.stderr.decode("utf-8")


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The umask the modes below are computed from, whatever the machine's."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


# --- 1. standard output is UTF-8 -------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_convert_to_stdout_reads_back_whatever_the_locale(tmp_path: Path, encoding: str) -> None:
    write_json(tmp_path / "uni.json", UNICODE)
    code, out, _ = tb("convert", "uni.json", "--to", "swarm", cwd=tmp_path,
                      env={"PYTHONIOENCODING": encoding})
    assert code == 0
    assert json.loads(out.decode("utf-8")) == UNICODE


def test_sample_to_stdout_reads_back_whatever_the_locale(tmp_path: Path) -> None:
    write_json(tmp_path / "uni.json", UNICODE)
    code, out, _ = tb("sample", "uni.json", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    assert code == 0
    sample = json.loads(out.decode("utf-8"))
    assert [message["content"] for message in sample["messages"]] == ["café 😀 中", "ok"]


def test_show_prints_the_characters_in_utf8(tmp_path: Path) -> None:
    write_json(tmp_path / "uni.json", UNICODE)
    code, out, _ = tb("show", "uni.json", cwd=tmp_path, env={"PYTHONIOENCODING": "latin-1"})
    assert (code, out.decode("utf-8")) == (0, "[0] human: café 😀 中\n[1] ai: ok\n")


def test_a_lone_surrogate_is_still_its_json_escape_on_stdout(tmp_path: Path) -> None:
    # guard (it passed before the fix too): what UTF-8 cannot hold is written as JSON spells it
    (tmp_path / "s.json").write_text(
        '[{"role": "user", "content": "a\\udcff"}, {"role": "assistant", "content": "ok"}]',
        encoding="utf-8")
    code, out, _ = tb("convert", "s.json", "--to", "openai_chat", cwd=tmp_path,
                      env={"PYTHONIOENCODING": "ascii"})
    assert code == 0
    assert b'"a\\udcff"' in out
    assert json.loads(out.decode("utf-8"))[0]["content"] == "a\udcff"


# --- 2. an array whose every record failed is [] ---------------------------------------------


def test_an_array_whose_every_record_failed_is_an_empty_array_on_stdout(tmp_path: Path) -> None:
    path = write_json(tmp_path / "bad.json", [ORPHAN])
    code, out, err = run("convert", str(path), "--to", "swarm", "--keep-going")
    assert (code, out) == (1, "[]\n")
    assert err.endswith("[orphan_tool_result]\n0 ok, 1 failed\n")


def test_an_array_whose_every_record_failed_is_an_empty_array_in_out(tmp_path: Path) -> None:
    path = write_json(tmp_path / "bad.json", [ORPHAN, ORPHAN])
    out_path = tmp_path / "out.json"
    code, out, err = run("convert", str(path), "--to", "swarm", "--keep-going", "-o",
                         str(out_path))
    assert (code, out) == (1, "")
    assert err.endswith("0 ok, 2 failed\n")
    assert out_path.read_text() == "[]\n"


def test_jsonl_and_one_document_that_failed_still_write_nothing(tmp_path: Path) -> None:
    # guards (they passed before the fix too): no record written is no line / no document
    lines = tmp_path / "bad.jsonl"
    lines.write_text(json.dumps(ORPHAN) + "\n")
    assert run("convert", str(lines), "--to", "swarm", "--keep-going")[:2] == (1, "")
    one = write_json(tmp_path / "one.json", ORPHAN)
    assert run("convert", str(one), "--to", "swarm", "--keep-going")[:2] == (1, "")


def test_an_array_read_whole_as_one_otel_trace_that_failed_writes_nothing(
    tmp_path: Path,
) -> None:
    # the file is one record, not an array of traces: its failure leaves nothing, not []
    path = write_json(tmp_path / "spans.json", [{"resourceSpans": []}, {"resourceSpans": []}])
    code, out, err = run("convert", str(path), "--from", "otel", "--to", "swarm", "--keep-going")
    assert (code, out) == (1, "")
    assert err.endswith("0 ok, 1 failed\n")


# --- 3. an existing OUT keeps its mode -------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["convert", "IN", "--to", "swarm"],
    ["sample", "IN"],
])
def test_an_existing_out_keeps_its_mode(
    tmp_path: Path, umask_022: None, command: list[str]
) -> None:
    path = write_json(tmp_path / "chat.json", CHAT)
    out_path = tmp_path / "private.json"
    out_path.write_text("secret\n")
    out_path.chmod(0o600)
    argv = [str(path) if word == "IN" else word for word in command]
    assert run(*argv, "-o", str(out_path))[0] == 0
    assert stat.S_IMODE(out_path.stat().st_mode) == 0o600
    assert out_path.read_text() != "secret\n"


def test_an_existing_out_keeps_a_wider_mode_too(tmp_path: Path, umask_022: None) -> None:
    path = write_json(tmp_path / "chat.json", CHAT)
    out_path = tmp_path / "shared.json"
    out_path.write_text("old\n")
    out_path.chmod(0o664)
    assert run("convert", str(path), "--to", "swarm", "-o", str(out_path))[0] == 0
    assert stat.S_IMODE(out_path.stat().st_mode) == 0o664


def test_a_new_out_gets_the_umask_mode(tmp_path: Path, umask_022: None) -> None:
    # guard (it passed before the fix too): not mkstemp's 0600
    path = write_json(tmp_path / "chat.json", CHAT)
    out_path = tmp_path / "new.json"
    assert run("convert", str(path), "--to", "swarm", "-o", str(out_path))[0] == 0
    assert stat.S_IMODE(out_path.stat().st_mode) == 0o644


def test_out_is_replaced_so_a_hard_link_keeps_the_old_content(tmp_path: Path) -> None:
    # documented (docs/model.md): OUT is a new file, so it is never left half-written
    path = write_json(tmp_path / "chat.json", CHAT)
    out_path = tmp_path / "out.json"
    out_path.write_text("old\n")
    os.link(out_path, tmp_path / "link.json")
    assert run("convert", str(path), "--to", "openai_chat", "-o", str(out_path))[0] == 0
    assert json.loads(out_path.read_text()) == CHAT
    assert (tmp_path / "link.json").read_text() == "old\n"


# --- 4. gate, calibrate, report: a word too many exits 4 -------------------------------------


@pytest.mark.parametrize(("argv", "line"), [
    (["gate", "x", "--policy", "p.toml", "--bogus"],
     "tracebridge gate: error: unrecognized arguments: --bogus\n"),
    (["calibrate", "x", "--bogus"],
     "tracebridge calibrate: error: unrecognized arguments: --bogus\n"),
    (["report", "x", "-o", "r.html", "extra"],
     "tracebridge report: error: unrecognized arguments: extra\n"),
    (["gate", "x", "y", "--policy", "p.toml"],
     "tracebridge gate: error: unrecognized arguments: y\n"),
    (["gate", "x"], "tracebridge gate: error: the following arguments are required: --policy\n"),
    (["calibrate"], "tracebridge calibrate: error: the following arguments are required: "
                    "RUN_DIR\n"),
])
def test_a_wrong_word_for_a_run_view_is_one_line_and_exit_4(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:  # argparse's exit, as a process would see it
        run(*argv)
    assert stopped.value.code == 4
    assert capsys.readouterr() == ("", line)


def test_a_wrong_word_for_another_command_stays_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # guard (it passed before the fix too): convert's usage errors are the request's, exit 2
    path = write_json(tmp_path / "chat.json", CHAT)
    with pytest.raises(SystemExit) as stopped:
        run("convert", str(path), "--to", "swarm", "--bogus")
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (  # one line, naming the command (before: its usage
        # block, then "tracebridge: error: ...")
        "tracebridge convert: error: unrecognized arguments: --bogus "
        "(see: tracebridge convert --help)\n")


def test_the_console_script_exits_4_on_an_unknown_gate_flag(tmp_path: Path) -> None:
    assert tb("gate", "x", "--policy", "p.toml", "--bogus", cwd=tmp_path) == (
        4, b"", "tracebridge gate: error: unrecognized arguments: --bogus\n")


# --- 5. Ctrl-C while pydantic's core imports datetime ----------------------------------------


def _interrupt_at(tmp_path: Path, module: str) -> dict[str, str]:
    """An environment whose ``sitecustomize`` sends SIGINT when ``module`` is about to be
    imported (once); the marker file says that it did."""
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "interrupted-at"
    (hook / "sitecustomize.py").write_text(f'''
import os, signal, sys

signal.signal(signal.SIGINT, signal.default_int_handler)  # as started from a terminal

class _InterruptAt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            with open({str(marker)!r}, "w") as mark:
                mark.write(name)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _InterruptAt())
''')
    return {"PYTHONPATH": str(hook)}


@pytest.mark.parametrize("module", ["datetime", "_datetime"])
def test_ctrl_c_at_the_datetime_import_is_one_line_and_130(tmp_path: Path, module: str) -> None:
    env = _interrupt_at(tmp_path, module)
    assert tb("formats", cwd=tmp_path, env=env) == (130, b"", "tracebridge: interrupted\n")
    assert (tmp_path / "interrupted-at").read_text() == module


# --- 6. --help that cannot be written --------------------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["convert", "--help"], ["formats", "-h"],
                                  ["gate", "--help"]])
def test_help_into_a_full_disk_is_one_line_and_exit_2(tmp_path: Path, argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        assert tb(*argv, cwd=tmp_path, stdout=full) == (
            2, b"", "tracebridge: cannot write standard output: [Errno 28] No space left on "
                    "device\n")


def test_help_whose_reader_went_away_is_141_without_a_message(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the help is written
    try:
        assert tb("--help", cwd=tmp_path, stdout=write) == (141, b"", "")
    finally:
        os.close(write)


def test_help_is_written_to_the_commands_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit) as stopped:
        main(["formats", "--help"], stdin=io.StringIO(), stdout=out, stderr=io.StringIO())
    assert stopped.value.code == 0
    assert out.getvalue().startswith("usage: tracebridge formats [-h] [--options]\n")
    assert capsys.readouterr() == ("", "")


def test_help_is_still_written_whole(tmp_path: Path) -> None:
    # guard (it passed before the fix too)
    code, out, err = tb("formats", "--help", cwd=tmp_path)
    assert (code, err) == (0, "")
    assert out.decode("utf-8").startswith("usage: tracebridge formats [-h] [--options]\n")


# --- 7. score reads a .jsonl name as JSONL ---------------------------------------------------


SAMPLE = json.dumps({"messages": [{"type": "human", "content": "hi"},
                                  {"type": "ai", "content": "hello"}],
                     "reference_tool_calls": []})
NOTHING_SCORED = ("metric        scored  unscorable  errors  mean  min  max\n"
                  "tool_call_f1       0           0       0     -    -    -\n"
                  "1 invalid sample(s) skipped\n")
"""The summary (on stderr, the results being on stdout) of a run whose one sample was bad."""


def test_score_one_broken_jsonl_line_is_one_bad_sample(tmp_path: Path) -> None:
    path = tmp_path / "onebad.jsonl"
    path.write_text("oops\n")
    code, out, err = run("score", str(path), "--metric", "tool_call_f1", "--keep-going")
    assert (code, out) == (1, "")
    assert err == (f"tracebridge score: {path}: line 1: not valid JSON: Expecting value: "
                   "line 1 column 1 (char 0)\n" + NOTHING_SCORED)


def test_score_a_cut_off_jsonl_line_is_named_by_line_and_cause(tmp_path: Path) -> None:
    path = tmp_path / "trunc.jsonl"
    path.write_text(SAMPLE[:25] + "\n")  # {"messages": [{"type": "h
    code, out, err = run("score", str(path), "--metric", "tool_call_f1", "--keep-going")
    assert (code, out) == (1, "")
    assert err == (f"tracebridge score: {path}: line 1: not valid JSON: Unterminated string "
                   "starting at: line 1 column 24 (char 23)\n" + NOTHING_SCORED)


def test_score_goes_on_past_a_broken_line_among_good_ones(tmp_path: Path) -> None:
    # guard (it passed before the fix too: two lines were read as JSONL already)
    path = tmp_path / "mixed.jsonl"
    path.write_text("{broken\n" + SAMPLE + "\n")
    code, out, err = run("score", str(path), "--metric", "tool_call_f1", "--keep-going")
    assert code == 1
    assert err == (
        f"tracebridge score: {path}: line 1: not valid JSON: Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1)\n"
        "metric        scored  unscorable  errors    mean     min     max\n"
        "tool_call_f1       1           0       0  1.0000  1.0000  1.0000\n"
        "1 invalid sample(s) skipped\n")
    result = json.loads(out)
    assert (result["line"], result["name"], result["value"]) == (2, "tool_call_f1", 1.0)


def test_score_without_keep_going_stops_on_the_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "onebad.jsonl"
    path.write_text("oops\n")
    code, out, err = run("score", str(path), "--metric", "tool_call_f1")
    assert (code, out) == (2, "")
    assert err == (f"tracebridge score: {path}: line 1: not valid JSON: Expecting value: "
                   "line 1 column 1 (char 0)\n")


# Review of the fixes above: OUT's owner that cannot be given back, its group alone, setuid
# and setgid, and --help started without standard output.


def _replaced_mode(tmp_path: Path, mode: int, chown: Any,
                   monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[tuple[int, int]]]:
    from tracebridge import _cli_output

    target, temp = tmp_path / "out.json", tmp_path / "temp.json"
    target.write_text("old")
    target.chmod(mode)
    temp.write_text("new")
    calls: list[tuple[int, int]] = []

    def recorded(path: Any, uid: int, gid: int) -> None:
        calls.append((uid, gid))
        chown(uid, gid)

    monkeypatch.setattr(_cli_output.os, "chown", recorded)
    _cli_output._as_replaced(str(temp), str(target))
    return stat.S_IMODE(temp.stat().st_mode), calls


def _refused(error: OSError) -> Any:
    def chown(uid: int, gid: int) -> None:
        if uid != -1:
            raise error
    return chown


@pytest.mark.parametrize("error", [PermissionError(1, "Operation not permitted"),
                                   OSError(22, "Invalid argument")])
def test_an_owner_that_cannot_be_given_back_still_keeps_the_group_and_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    # EINVAL: an owner unknown in the user namespace (rootless containers) was a failed write
    mode, calls = _replaced_mode(tmp_path, 0o664, _refused(error), monkeypatch)
    gid = (tmp_path / "out.json").stat().st_gid
    assert mode == 0o664
    assert calls == [((tmp_path / "out.json").stat().st_uid, gid), (-1, gid)]


def test_neither_owner_nor_group_given_back_leaves_the_file_ours_with_the_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(uid: int, gid: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    mode, calls = _replaced_mode(tmp_path, 0o640, never, monkeypatch)
    assert mode == 0o640
    assert len(calls) == 2


def test_setuid_and_setgid_are_cleared_as_a_direct_write_clears_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mode, _ = _replaced_mode(tmp_path, 0o6755, lambda uid, gid: None, monkeypatch)
    assert mode == 0o755


def test_help_without_standard_output_goes_to_standard_error(tmp_path: Path) -> None:
    for argv in (["--help"], ["gate", "--help"]):
        done = subprocess.run([SCRIPT, *argv], cwd=tmp_path, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
                              preexec_fn=lambda: os.close(1))
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().startswith(f"usage: tracebridge {argv[0]}"
                                               if argv[0] == "gate" else "usage: tracebridge")


# Mutation audit: a new OUT's mode is computed from the umask (not a fixed 0644).


@pytest.mark.parametrize(("umask", "mode"), [
    pytest.param(0o022, 0o644, id="umask-022"),
    pytest.param(0o027, 0o640, id="umask-027"),
    pytest.param(0o002, 0o664, id="umask-002"),
])
@pytest.mark.parametrize("command", [
    pytest.param(["convert", "IN", "--from", "openai_chat", "--to", "openai_chat"], id="convert"),
    pytest.param(["sample", "IN"], id="sample"),
])
def test_a_new_out_gets_0666_less_the_umask(
    tmp_path: Path, umask: int, mode: int, command: list[str]
) -> None:
    path = write_json(tmp_path / "chat.json", CHAT)
    out_path = tmp_path / "new.json"
    argv = [str(path) if word == "IN" else word for word in command]
    before = os.umask(umask)
    try:
        assert run(*argv, "-o", str(out_path))[0] == 0
    finally:
        os.umask(before)
    assert stat.S_IMODE(out_path.stat().st_mode) == mode
