"""The command line, audit s37: ``-o OUT`` that is a symbolic link, a FIFO or a device; a JSONL
line that is not UTF-8; Ctrl-C while the package is still being imported.

1. ``-o OUT`` renamed its temporary file over OUT whatever OUT was: a symbolic link became a
   regular file (its target untouched), a FIFO's reader got nothing, a device node was
   replaced. Now the file a link names is replaced (the link stays), and OUT that exists and
   is not a regular file is written directly; ``convert``, ``sample`` and ``score`` agree
   (``score`` always wrote through: its cases pin that).
2. One JSONL line that is not UTF-8 ended every command with exit 2 and no line number, even
   with ``--keep-going``. Now it is one bad record, code ``no_record`` (the code
   ``tracebridge.ray_data`` gives that line), exit 2 without ``--keep-going``; a JSON document
   that is not UTF-8 is still refused whole (those guards passed before as well).
3. A Ctrl-C while ``tracebridge.cli`` was still being imported printed a traceback (and the
   process died of the signal). The interrupt is made deterministic here: a
   ``sitecustomize`` on ``PYTHONPATH`` (test code only, nothing in the product reads it)
   puts an import hook first on ``sys.meta_path`` that sends the process a real SIGINT
   (``os.kill``) when the chosen module is about to be imported, so Python's own handler
   raises ``KeyboardInterrupt`` at that exact point, as a Ctrl-C then would.

Every case runs the real console script (``.venv/bin/tracebridge``), or ``python -m
tracebridge`` where that is the point, in a process of its own.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""


def tb(*argv: str, cwd: Path, stdin: bytes = b"", env: dict[str, str] | None = None,
       module: bool = False) -> tuple[int, str, str]:
    """``tracebridge *argv`` in a process of its own: (exit status, stdout, stderr)."""
    command = [sys.executable, "-m", "tracebridge"] if module else [SCRIPT]
    done = subprocess.run([*command, *argv], cwd=cwd, input=stdin, capture_output=True,
                          timeout=120, env={**os.environ, **(env or {})})
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def chat(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"hi {n}"}, {"role": "assistant", "content": "ok"}]


def line(n: int) -> str:
    """Record ``n`` as ``convert --to openai_chat`` writes it (and as the input holds it)."""
    return json.dumps(chat(n)) + "\n"


LATIN1 = b'[{"role": "user", "content": "caf\xe9"}, {"role": "assistant", "content": "ok"}]'
"""A latin-1 "cafe" with its accent: \\xe9 then '"' is not UTF-8 (invalid continuation byte)."""


def traces(path: Path, bad: dict[int, bytes], count: int = 5, head: bytes = b"") -> Path:
    """JSONL of ``chat(n)`` for lines 1..count, with the lines in ``bad`` replaced."""
    lines = [bad.get(n, line(n).encode().rstrip(b"\n")) for n in range(1, count + 1)]
    path.write_bytes(head + b"\n".join(lines) + b"\n")
    return path


def sample_line(n: int) -> str:
    """``tracebridge sample`` of ``chat(n)`` on line ``n``."""
    return json.dumps({
        "messages": [
            {"type": "human", "content": f"hi {n}", "name": None, "id": None, "metadata": {}},
            {"type": "ai", "content": "ok", "tool_calls": [], "name": None, "citations": [],
             "audio": None, "id": None, "metadata": {}}],
        "reference": None, "reference_tool_calls": None, "reference_topics": None,
        "rubrics": None, "metadata": {"id": n}}) + "\n"


SAMPLE = json.dumps({"messages": [{"type": "human", "content": "hi"}],
                     "reference_tool_calls": []}) + "\n"
SCORED = json.dumps({
    "line": 1, "name": "tool_call_f1", "value": 1.0, "reason": None,
    "details": {"true_positives": 0, "false_positives": 0, "false_negatives": 0,
                "precision": None, "recall": None, "matched": [], "unexpected": [],
                "missing": []},
    "error": None, "metric_version": "1", "judge": None, "usage": None,
    "transcript_hash": "tb1:5c0c53bef05b18ce7c06a64ba82aee42863929d7ceb85ce6dde5c9272e18ed83",
}) + "\n"
"""``score --metric tool_call_f1`` of ``SAMPLE``."""
SUMMARY = ("metric        scored  unscorable  errors    mean     min     max\n"
           "tool_call_f1       1           0       0  1.0000  1.0000  1.0000\n")


# --- 1. -o OUT: a symbolic link, a FIFO, a device ------------------------------------------


def _write_command(command: str, tmp_path: Path, out: str) -> tuple[list[str], str, str]:
    """(argv writing to ``out``, what OUT then holds, what stdout then holds)."""
    if command == "score":
        (tmp_path / "in.jsonl").write_text(SAMPLE)
        return (["score", "in.jsonl", "--metric", "tool_call_f1", "-o", out], SCORED,
                SUMMARY)
    traces(tmp_path / "in.jsonl", {}, count=2)
    if command == "convert":
        return (["convert", "in.jsonl", "--from", "openai_chat", "--to", "openai_chat", "-o",
                 out], line(1) + line(2), "")
    return (["sample", "in.jsonl", "--from", "openai_chat", "-o", out],
            sample_line(1) + sample_line(2), "")


COMMANDS = ["convert", "sample", "score"]


@pytest.mark.parametrize("command", COMMANDS)
def test_out_through_a_symbolic_link_replaces_its_target_and_the_link_stays(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "elsewhere").mkdir()
    real = tmp_path / "elsewhere" / "real.jsonl"
    real.write_text("old\n")
    (tmp_path / "link.jsonl").symlink_to("elsewhere/real.jsonl")
    argv, wanted, printed = _write_command(command, tmp_path, "link.jsonl")
    assert tb(*argv, cwd=tmp_path) == (0, printed, "")
    assert os.readlink(tmp_path / "link.jsonl") == "elsewhere/real.jsonl"
    assert real.read_text() == wanted
    # the temporary file was beside the target, and nothing is left of it
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "in.jsonl", "link.jsonl"]
    assert os.listdir(tmp_path / "elsewhere") == ["real.jsonl"]


@pytest.mark.parametrize("command", ["convert", "sample"])
def test_out_a_link_to_nothing_yet_makes_the_file_it_names(tmp_path: Path,
                                                           command: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link.jsonl").symlink_to("elsewhere/new.jsonl")
    argv, wanted, printed = _write_command(command, tmp_path, "link.jsonl")
    assert tb(*argv, cwd=tmp_path) == (0, printed, "")
    assert os.readlink(tmp_path / "link.jsonl") == "elsewhere/new.jsonl"
    assert (tmp_path / "elsewhere" / "new.jsonl").read_text() == wanted


@pytest.mark.parametrize("command", COMMANDS)
def test_out_a_fifo_is_written_directly(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # a reader holds the FIFO open (without blocking), so the command's open for writing
    # does not wait, and what it writes stays in the pipe until read here
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        argv, wanted, printed = _write_command(command, tmp_path, "pipe")
        assert tb(*argv, cwd=tmp_path) == (0, printed, "")
        try:
            got = os.read(reader, 1 << 20)
        except BlockingIOError:  # nothing was ever written to the FIFO
            got = b""
    finally:
        os.close(reader)
    assert got.decode("utf-8") == wanted
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _device(path: Path, minor: int) -> Path:
    """A character device node of the memory driver (1, minor): 3 null, 7 full."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_out_a_device_node_is_written_and_stays_a_device(tmp_path: Path, command: str) -> None:
    _device(tmp_path / "null", 3)
    argv, _wanted, printed = _write_command(command, tmp_path, "null")
    assert tb(*argv, cwd=tmp_path) == (0, printed, "")
    assert stat.S_ISCHR(os.lstat(tmp_path / "null").st_mode)
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "null"]


@pytest.mark.parametrize("command", COMMANDS)
def test_out_a_full_device_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    _device(tmp_path / "full", 7)
    argv, _wanted, _printed = _write_command(command, tmp_path, "full")
    prefix = "tracebridge score" if command == "score" else "tracebridge"
    assert tb(*argv, cwd=tmp_path) == (
        2, "", f"{prefix}: cannot write full: [Errno 28] No space left on device\n")
    assert stat.S_ISCHR(os.lstat(tmp_path / "full").st_mode)
    assert sorted(os.listdir(tmp_path)) == ["full", "in.jsonl"]


@pytest.mark.skipif(not (os.path.exists("/dev/full")
                         and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                    reason="needs /dev/full")
@pytest.mark.parametrize("command", ["convert", "sample"])
def test_out_a_link_to_dev_full_writes_through_it(tmp_path: Path, command: str) -> None:
    # /dev/full is only written through a link of our own: the code before the fix replaced
    # the link, never /dev/full, so this test is safe to run against it
    (tmp_path / "link").symlink_to("/dev/full")
    argv, _wanted, _printed = _write_command(command, tmp_path, "link")
    assert tb(*argv, cwd=tmp_path) == (
        2, "", "tracebridge: cannot write link: [Errno 28] No space left on device\n")
    assert os.readlink(tmp_path / "link") == "/dev/full"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize("command", COMMANDS)
def test_out_the_file_a_standard_stream_is_redirected_to_is_written_through_it(
    tmp_path: Path, command: str, stream: str
) -> None:
    # `{ echo BEFORE; tracebridge convert ... -o /dev/stdout; echo AFTER; } > log 2>&1`: the
    # records go into log between the two lines; log is not replaced (which cut off what the
    # shell wrote after) nor opened anew (truncated, or written at another offset)
    argv, wanted, printed = _write_command(command, tmp_path, f"/dev/{stream}")
    script = (f'{{ echo BEFORE; "{SCRIPT}" {" ".join(argv)}; echo "rc=$? AFTER"; }} '
              "> log 2>&1")
    subprocess.run(["bash", "-c", script], cwd=tmp_path, check=True, timeout=120)
    assert (tmp_path / "log").read_text(encoding="utf-8") == (
        f"BEFORE\n{wanted}{printed}rc=0 AFTER\n"
    )


# --- 2. a JSONL line that is not UTF-8 is one bad record ------------------------------------

BAD_LINE_3 = "tracebridge: t.jsonl: line 3: not UTF-8 text: invalid continuation byte\n"


def moved(out: str, file: str, failed: int) -> str:
    """The line ``convert --keep-going`` ends with when it wrote a record after a failed one
    (``failed`` of them: the count line says how many)."""
    return (f"tracebridge: {out} has no line for a failed record or a blank line of {file}: a "
            f"record after one has another line number there than in {file}, so ids by line "
            f"number (as sample "
            f"--references matches them) do not carry over; run sample on {file}\n")
ERROR_3 = {"file": "t.jsonl", "line": 3, "code": "no_record", "index": None, "path": None,
           "source": None, "message": "not UTF-8 text: invalid continuation byte"}


@pytest.mark.parametrize("to_file", [False, True], ids=["stdout", "-o"])
@pytest.mark.parametrize("name", ["t.jsonl", "t.txt"])  # t.txt: JSONL told from its content
def test_convert_keep_going_writes_every_good_record(tmp_path: Path, to_file: bool,
                                                     name: str) -> None:
    traces(tmp_path / name, {3: LATIN1})
    out = ["-o", "out.jsonl"] if to_file else []
    code, stdout, stderr = tb("convert", name, "--from", "openai_chat", "--to",
                              "openai_chat", "--keep-going", "--errors", "errors.jsonl", *out,
                              cwd=tmp_path)
    written = (tmp_path / "out.jsonl").read_text() if to_file else stdout
    assert (code, stderr) == (1, BAD_LINE_3.replace("t.jsonl", name) + "4 ok, 1 failed\n"
                              + moved("out.jsonl" if to_file else "standard output", name, 1))
    assert written == line(1) + line(2) + line(4) + line(5)
    assert stdout == ("" if to_file else written)
    errors = (tmp_path / "errors.jsonl").read_text().splitlines()
    assert [json.loads(text) for text in errors] == [{**ERROR_3, "file": name}]


def test_convert_stops_at_the_line_without_keep_going(tmp_path: Path) -> None:
    traces(tmp_path / "t.jsonl", {3: LATIN1})
    assert tb("convert", "t.jsonl", "--from", "openai_chat", "--to", "openai_chat", "--errors",
              "errors.jsonl", cwd=tmp_path) == (2, line(1) + line(2), BAD_LINE_3)
    assert json.loads((tmp_path / "errors.jsonl").read_text()) == ERROR_3
    assert tb("convert", "t.jsonl", "--from", "openai_chat", "--to", "openai_chat", "-o",
              "out.jsonl", cwd=tmp_path) == (2, "", BAD_LINE_3)
    assert sorted(os.listdir(tmp_path)) == ["errors.jsonl", "t.jsonl"]  # OUT never made


def test_validate_keep_going_reports_the_line(tmp_path: Path) -> None:
    traces(tmp_path / "t.jsonl", {3: LATIN1})
    assert tb("validate", "t.jsonl", "--from", "openai_chat", "--keep-going",
              cwd=tmp_path) == (
        1, "".join(f"line {n}: ok: 2 messages (openai_chat)\n" for n in (1, 2, 4, 5)),
        BAD_LINE_3 + "4 ok, 1 failed\n")


def test_a_first_line_that_is_not_utf8_after_a_bom_with_the_format_told(
    tmp_path: Path
) -> None:
    # not named .jsonl: the first line is read as a possible JSON document first
    traces(tmp_path / "t.log", {1: LATIN1}, count=3, head=b"\xef\xbb\xbf")
    assert tb("convert", "t.log", "--to", "openai_chat", "--keep-going", cwd=tmp_path) == (
        1, line(2) + line(3),
        "tracebridge: reading t.log as openai_chat (told from its first 2 records; --from to "
        "choose)\n"
        "tracebridge: t.log: line 1: not UTF-8 text: invalid continuation byte\n"
        "2 ok, 1 failed\n" + moved("standard output", "t.log", 1))


def test_a_line_of_standard_input_that_is_not_utf8(tmp_path: Path) -> None:
    data = traces(tmp_path / "t.jsonl", {2: b"\xff" + LATIN1, 3: LATIN1}).read_bytes()
    assert tb("convert", "-", "--from", "openai_chat", "--to", "openai_chat", "--keep-going",
              cwd=tmp_path, stdin=data) == (
        1, line(1) + line(4) + line(5),
        "tracebridge: -: line 2: not UTF-8 text: invalid start byte\n"
        "tracebridge: -: line 3: not UTF-8 text: invalid continuation byte\n"
        "3 ok, 2 failed\n" + moved("standard output", "standard input", 2))


def test_a_json_escape_of_a_lone_surrogate_after_a_bad_line_is_still_read(
    tmp_path: Path
) -> None:
    # "\\udcff" is six ASCII characters in the file, not a byte that is not UTF-8
    escaped = '[{"role": "user", "content": "\u00e9 \\udcff"}]'
    (tmp_path / "t.jsonl").write_bytes(LATIN1 + b"\n" + escaped.encode("utf-8") + b"\n")
    assert tb("convert", "t.jsonl", "--from", "openai_chat", "--to", "openai_chat",
              "--allow-pending", "--keep-going", cwd=tmp_path) == (
        1, escaped + "\n",
        "tracebridge: t.jsonl: line 1: not UTF-8 text: invalid continuation byte\n"
        "1 ok, 1 failed\n" + moved("standard output", "t.jsonl", 1))


def test_sample_keep_going_and_a_references_line_that_is_not_utf8(tmp_path: Path) -> None:
    traces(tmp_path / "t.jsonl", {2: LATIN1}, count=3)
    assert tb("sample", "t.jsonl", "--from", "openai_chat", "--keep-going", "-o", "ds.jsonl",
              cwd=tmp_path) == (
        1, "", "tracebridge: t.jsonl: line 2: not UTF-8 text: invalid continuation byte\n"
               "2 ok, 1 failed\n")
    assert (tmp_path / "ds.jsonl").read_text() == sample_line(1) + sample_line(3)
    (tmp_path / "refs.jsonl").write_bytes(b'{"id": 1, "reference": "a"}\n'
                                          b'{"id": 3, "reference": "\xff"}\n')
    assert tb("sample", "t.jsonl", "--from", "openai_chat", "--references", "refs.jsonl",
              cwd=tmp_path) == (
        2, "", "tracebridge: refs.jsonl: line 2: not UTF-8 text: invalid start byte\n")


def test_score_a_sample_line_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(b'{"messages": [{"type": "human", "content": "caf\xe9"}]}\n'
                                       + SAMPLE.encode())
    bad = "tracebridge score: s.jsonl: line 1: not UTF-8 text: invalid continuation byte\n"
    assert tb("score", "s.jsonl", "--metric", "tool_call_f1", "--keep-going",
              cwd=tmp_path) == (
        1, SCORED.replace('"line": 1', '"line": 2'),
        bad + SUMMARY + "1 invalid sample(s) skipped\n")
    assert tb("score", "s.jsonl", "--metric", "tool_call_f1", cwd=tmp_path) == (2, "", bad)


@pytest.mark.parametrize(("name", "data", "why"), [
    ("t.json", b'[\n  {"role": "user",\n   "content": "caf\xe9"}\n]\n',
     "invalid continuation byte"),
    ("t.json", b'[\xff]\n', "invalid start byte"),
    ("t.json", b'[\n [{"role": "user", "content": "hi"}],\n [{"role": "user", "content": '
               b'"caf\xe9"}]\n]\n', "invalid continuation byte"),
])
def test_a_json_document_that_is_not_utf8_is_still_refused_whole(
    tmp_path: Path, name: str, data: bytes, why: str
) -> None:
    # guards (they passed before the fix too): only a JSONL line is a record of its own
    (tmp_path / name).write_bytes(data)
    code, _stdout, stderr = tb("convert", name, "--from", "openai_chat", "--to", "openai_chat",
                               "--keep-going", cwd=tmp_path)
    assert (code, stderr) == (2, f"tracebridge: {name}: not UTF-8 text: {why}\n")


# --- 3. Ctrl-C while the package is being imported ------------------------------------------


def _interrupt_at(tmp_path: Path, module: str) -> dict[str, str]:
    """An environment whose ``sitecustomize`` sends SIGINT when ``module`` is imported; the
    marker file says that it did."""
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "interrupted-at"
    (hook / "sitecustomize.py").write_text(f'''
import os, signal, sys

# Ctrl-C's handler as an interpreter started from a terminal has it: a process started in the
# background of a shell without job control inherits SIGINT ignored, and would not see it
signal.signal(signal.SIGINT, signal.default_int_handler)

class _InterruptAt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            with open({str(marker)!r}, "w") as mark:
                mark.write(name)
            os.kill(os.getpid(), signal.SIGINT)  # raised as KeyboardInterrupt right here
        return None

sys.meta_path.insert(0, _InterruptAt())
''')
    return {"PYTHONPATH": str(hook)}


@pytest.mark.parametrize("module", [
    "tracebridge", "pydantic", "tracebridge.messages", "tracebridge.registry",
    "tracebridge.cli", "tracebridge._cli_commands",
])
def test_ctrl_c_while_importing_is_one_line_and_130(tmp_path: Path, module: str) -> None:
    env = _interrupt_at(tmp_path, module)
    assert tb("formats", cwd=tmp_path, env=env) == (130, "", "tracebridge: interrupted\n")
    assert (tmp_path / "interrupted-at").read_text() == module


def test_python_m_tracebridge_handles_it_as_the_script_does(tmp_path: Path) -> None:
    # -m imports the package before tracebridge/__main__.py runs; from there on it is the
    # same entry as the console script
    env = _interrupt_at(tmp_path, "tracebridge.cli")
    assert tb("formats", cwd=tmp_path, env=env, module=True) == (
        130, "", "tracebridge: interrupted\n")
    assert (tmp_path / "interrupted-at").read_text() == "tracebridge.cli"


def test_the_console_script_starts_at_the_early_entry() -> None:
    assert "from _tracebridge_cli import main\n" in Path(SCRIPT).read_text()
