"""The command line reading a pipe as it arrives, ``--errors -``, and a closed standard output
beside ``-o OUT``.

* Standard input (or any pipe) was read in chunks of 64 KiB: a chunk read waited until it was
  full or the input ended, so ``tracebridge sample ... | tracebridge score -`` wrote no result
  until its input ended. A pipe is now read as it arrives, and a first document alone on its
  line is a record before the next line is read.
* ``--errors -`` wrote a file named ``-``; it now writes each failure's JSON object to
  standard error, in place of its line of text.
* ``score -o OUT`` with standard output closed wrote every result, then exited 2 telling the
  user to give ``-o FILE``, for want of a place for the summary; ``run --out RUN_DIR`` did the
  same with its line of counts. The summary now goes to standard error, and the exit status
  is the run's.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import pytest
from cli_helpers import CALL, CHAT, run
from evaluation_helpers import case, write_cases

import tracebridge._jsonstream as jsonstream
from tracebridge._jsonstream import ESCAPE, JsonDocuments, Record
from tracebridge.cli import main

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
REFERENCES = {"id": 1, "reference_tool_calls": [{"name": "get_weather",
                                                 "args": {"city": "Paris"}}]}
ORPHAN = [{"role": "tool", "content": "x", "tool_call_id": "a"}]
ORPHAN_ERROR = {
    "file": "-", "line": 1, "code": "orphan_tool_result", "index": 0,
    "path": "messages[0].tool_call_id", "source": "openai_chat",
    "message": "openai_chat: messages[0].tool_call_id: tool result answers nothing: no "
               "AIMessage comes before it [orphan_tool_result]",
}


# --- a pipe, read as it arrives --------------------------------------------------------------


@pytest.fixture
def pipe() -> Iterator[tuple[IO[str], IO[bytes]]]:
    """A pipe: its reading end as the command line's standard input is (UTF-8 with a
    byte-order mark skipped, ``ESCAPE``), and its writing end, unbuffered."""
    read_end, write_end = os.pipe()
    reader = open(read_end, encoding="utf-8-sig", errors=ESCAPE)  # noqa: SIM115
    writer = open(write_end, "wb", buffering=0)  # noqa: SIM115
    yield reader, writer
    writer.close()
    reader.close()


def _is_conversation(value: Any) -> bool:
    return isinstance(value, list)


def _record_of(values: Iterator[Record]) -> Record:
    """The next record, which must come within 10 seconds."""
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(next, values).result(timeout=10)
    finally:
        pool.shutdown(wait=False)  # a read that still waits ends when the pipe is closed


def test_a_first_jsonl_record_is_read_while_its_pipe_stays_open(
    pipe: tuple[IO[str], IO[bytes]],
) -> None:
    reader, writer = pipe
    documents = JsonDocuments(reader, "-", _is_conversation)
    records = iter(documents)
    writer.write(json.dumps(CHAT).encode() + b"\n")
    assert _record_of(records) == Record(1, CHAT)
    writer.write(b"\n" + json.dumps(CALL).encode() + b"\r\n")
    assert _record_of(records) == Record(3, CALL)
    assert documents.shape == "jsonl"
    writer.close()
    assert list(records) == []


def test_a_document_alone_on_its_line_is_json_when_the_pipe_ends_after_it(
    pipe: tuple[IO[str], IO[bytes]],
) -> None:
    reader, writer = pipe
    documents = JsonDocuments(reader, "-", _is_conversation)
    records = iter(documents)
    writer.write(b"\xef\xbb\xbf" + json.dumps(CHAT).encode() + b"\n")
    assert _record_of(records) == Record(1, CHAT)
    writer.write(b"  \n\n")
    writer.close()
    assert documents.shape == "json"
    assert list(records) == []


@pytest.mark.parametrize("text", [
    "[1]\n\n[2]\r\n",
    '{"a":\n[1]\nnope\n[2]',
    "[[1], [2]]\n[3]\n",
    '[1] [2]\n[3]\n',
    "[\n[1],\n[2]\n]\n",
    "[\n1\n]\n[2]\n",
    json.dumps([CHAT, CALL]) + "\n",
    json.dumps(CHAT, indent=2),
    '"\u00e9\U0001F600" \n',
    "",
])
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 16])
def test_a_pipe_reads_as_a_file_does_cut_anywhere(
    text: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonstream, "_CHUNK", chunk)
    data = text.encode()
    from_file = _read_all(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig",
                                           errors=ESCAPE))
    read_end, write_end = os.pipe()
    writing = threading.Thread(target=_write_all, args=(write_end, data))
    writing.start()
    with open(read_end, encoding="utf-8-sig", errors=ESCAPE) as stream:
        from_pipe = _read_all(stream)
    writing.join()
    assert from_pipe == from_file


def test_a_pipe_line_that_is_not_utf8_is_one_record_as_in_a_file(
    pipe: tuple[IO[str], IO[bytes]],
) -> None:
    reader, writer = pipe
    writer.write(b"[1]\n[\"\xe9\"]\n[\"\xc3\xa9\"]\n")
    writer.close()
    documents = JsonDocuments(reader, "-", _is_conversation)
    assert list(documents) == [
        Record(1, [1]),
        Record(2, problem="not UTF-8 text: invalid continuation byte", code="no_record"),
        Record(3, ["\u00e9"]),
    ]
    assert documents.shape == "jsonl"


def _write_all(descriptor: int, data: bytes) -> None:
    with open(descriptor, "wb", buffering=0) as writer:
        for start in range(0, len(data), 5):  # several writes: reads may end anywhere
            writer.write(data[start : start + 5])


def _read_all(stream: IO[str]) -> tuple[str | None, list[Record]] | str:
    documents = JsonDocuments(stream, "-", _is_conversation, allow_empty=True)
    try:
        records = list(documents)
    except jsonstream.UnreadableInput as exc:
        return str(exc)
    return documents.shape, records


def _samples(tmp_path: Path) -> list[str]:
    references = tmp_path / "refs.jsonl"
    references.write_text(json.dumps(REFERENCES) + "\n")
    code, out, err = run("sample", "-", "--from", "openai_chat", "--references",
                         str(references), stdin=f"{json.dumps(CALL)}\n{json.dumps(CHAT)}\n")
    assert (code, err) == (0, "")
    return out.splitlines()


def _lines(stream: IO[bytes]) -> queue.Queue[bytes]:
    """The lines of ``stream`` as they come, read in a thread."""
    lines: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_score_writes_a_piped_samples_result_before_its_input_ends(tmp_path: Path) -> None:
    samples = _samples(tmp_path)
    code, out, to_stdout_summary = run("score", "-", "-m", "tool_call_f1",
                                       stdin="\n".join(samples) + "\n")
    assert code == 0
    expected = [line.encode() + b"\n" for line in out.splitlines()]
    assert [json.loads(line)["value"] for line in expected] == [1.0, None]
    scoring = subprocess.Popen([SCRIPT, "score", "-", "-m", "tool_call_f1"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert scoring.stdin is not None
    assert scoring.stdout is not None
    results = _lines(scoring.stdout)
    try:
        scoring.stdin.write(samples[0].encode() + b"\n")
        scoring.stdin.flush()
        assert results.get(timeout=30) == expected[0]  # the command's start-up included
        scoring.stdin.write(samples[1].encode() + b"\n")
        scoring.stdin.flush()
        assert results.get(timeout=10) == expected[1]
    finally:
        scoring.stdin.close()
        scoring.wait(timeout=60)
    assert scoring.returncode == 0
    assert scoring.stderr is not None
    assert scoring.stderr.read().decode() == to_stdout_summary
    scoring.stdout.close()
    scoring.stderr.close()


# --- --errors - -----------------------------------------------------------------------------


BAD = f"{json.dumps(ORPHAN)}\n{json.dumps(CHAT)}\n"


def test_errors_dash_writes_the_failures_as_json_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                         "--keep-going", "--errors", "-", stdin=BAD)
    assert (code, out) == (1, json.dumps(CHAT) + "\n")
    assert err == json.dumps(ORPHAN_ERROR) + "\n1 ok, 1 failed\n"
    assert list(tmp_path.iterdir()) == []


def test_errors_dash_holds_the_failure_that_stopped_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                         "--errors", "-", stdin=BAD)
    assert (code, out, err) == (1, "", json.dumps(ORPHAN_ERROR) + "\n")
    assert list(tmp_path.iterdir()) == []


def test_validate_errors_dash_keeps_its_verdicts_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("validate", "-", "--from", "openai_chat", "--keep-going",
                         "--errors", "-", stdin=BAD)
    assert code == 1
    assert out == (
        "line 1: invalid: orphan_tool_result at messages[0].tool_call_id: openai_chat: "
        "messages[0].tool_call_id: tool result answers nothing: no AIMessage comes before it "
        "[orphan_tool_result]\nline 2: ok: 2 messages (openai_chat)\n")
    assert err == json.dumps(ORPHAN_ERROR) + "\n1 ok, 1 failed\n"
    assert list(tmp_path.iterdir()) == []


def test_the_help_says_what_errors_dash_does() -> None:
    help_text = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        main(["convert", "--help"], stdin=io.StringIO(), stdout=help_text, stderr=io.StringIO())
    assert exited.value.code == 0
    out = help_text.getvalue()
    assert "- writes it to stderr in place of the failure's line of text" in " ".join(out.split())


# --- a closed standard output beside -o OUT --------------------------------------------------


def _closed_stdout(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    line = " ".join([SCRIPT, *argv]) + " >&-"
    return subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_score_with_out_and_stdout_closed_writes_the_summary_to_stderr(tmp_path: Path) -> None:
    (tmp_path / "ds.jsonl").write_text("\n".join(_samples(tmp_path)) + "\n")
    done = _closed_stdout("score", "ds.jsonl", "-m", "tool_call_f1", "-o", "res.jsonl",
                          cwd=tmp_path)
    to_stdout = subprocess.run([SCRIPT, "score", "ds.jsonl", "-m", "tool_call_f1"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert to_stdout.returncode == 0
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == to_stdout.stderr  # the summary, as when the results go to stdout
    assert done.stderr.startswith("metric ")
    assert (tmp_path / "res.jsonl").read_text() == to_stdout.stdout


def test_run_with_stdout_closed_writes_its_counts_to_stderr(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [case("c1"), case("c2")])
    argv = ("run", str(cases), "--out", "rd", "-m", "tool_call_f1", "--no-cache")
    done = _closed_stdout(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "")
    again = subprocess.run([SCRIPT, *argv], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0
    assert done.stderr == again.stdout  # run again, it resumes: the same counts
    assert done.stderr == (
        "complete: 2 blocked; judge: 0 request(s), 0 + 0 tokens, $0.0000; rd/summary.json\n")
