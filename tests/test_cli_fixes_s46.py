"""The command line reading a pipe as it arrives, ``--errors -``, and a closed standard output
beside ``-o OUT``.

* Standard input (or any pipe) was read in chunks of 64 KiB: a chunk read waited until it was
  full or the input ended, so ``tracebridge sample ... | tracebridge score -`` wrote no result
  until its input ended. A pipe is now read as it arrives, and a first document alone on its
  line is a record before the next line is read.
* A document that came in several pieces made each read ask for twice as much as the last,
  until a read asked for terabytes (``MemoryError``, exit 70); and a first line that is not
  JSON was the whole input refused when the next line had not come yet, where the file of
  the same text is JSONL with that line failed. A pipe written slowly reads as its file does.
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
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import pytest
from cli_helpers import CALL, CHAT, run
from evaluation_helpers import case, write_cases

import tracebridge._jsonstream as jsonstream
from tracebridge._json import UNIQUE_KEYS_DECODER
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


# --- a pipe written slowly, in pieces --------------------------------------------------------


def _long_trace(pairs: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": "x" * 100},
            {"role": "assistant", "content": "y" * 100}] * pairs


LONG_DOCUMENT = {"trace": _long_trace(1200)}
"""About 325 KB on one line: more than four chunks."""
LONG_LINE = {"trace": _long_trace(1500)}
"""About 410 KB on one line."""
BROKEN_LINE = b'{"role": oops, "content": "a broken first record"}\n'


def _in_pieces(data: bytes) -> list[bytes]:
    return [data[start : start + 4096] for start in range(0, len(data), 4096)]


def _write_slowly(descriptor: int, pieces: list[bytes], pause: float) -> None:
    """Write ``pieces`` to a pipe with ``pause`` seconds after each (a writer slower than its
    reader), then close it."""
    with open(descriptor, "wb", buffering=0) as writer:
        for piece in pieces:
            writer.write(piece)
            time.sleep(pause)


def _read_slowly_written(pieces: list[bytes], pause: float) -> Any:
    """What ``_read_all`` gives for ``pieces`` written slowly to a pipe."""
    read_end, write_end = os.pipe()
    writing = threading.Thread(target=_write_slowly, args=(write_end, pieces, pause))
    writing.start()
    with open(read_end, encoding="utf-8-sig", errors=ESCAPE) as stream:
        read = _read_all(stream)
    writing.join()
    return read


def _read_from_file(data: bytes) -> Any:
    return _read_all(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors=ESCAPE))


class _CountingDecoder:
    """The JSON decoder, counting how many times a document is decoded from the buffer."""

    def __init__(self) -> None:
        self.decodes = 0

    def raw_decode(self, text: str, position: int) -> tuple[Any, int]:
        self.decodes += 1
        return UNIQUE_KEYS_DECODER.raw_decode(text, position)

    def decode(self, text: str) -> Any:
        return UNIQUE_KEYS_DECODER.decode(text)


def test_a_long_document_written_slowly_to_a_pipe_is_decoded_as_often_as_from_a_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = (json.dumps(LONG_DOCUMENT) + "\n").encode()
    assert 4 * (1 << 16) < len(data) < 7 * (1 << 16)
    from_file, from_pipe = _CountingDecoder(), _CountingDecoder()
    monkeypatch.setattr(jsonstream, "_DECODER", from_file)
    assert _read_from_file(data) == ("json", [Record(1, LONG_DOCUMENT)])
    monkeypatch.setattr(jsonstream, "_DECODER", from_pipe)
    assert _read_slowly_written(_in_pieces(data), 0.002) == ("json", [Record(1, LONG_DOCUMENT)])
    # 64 KiB, then 64, 128 and 256 more: the last read holds the whole document
    assert (from_file.decodes, from_pipe.decodes) == (4, 4)


def test_a_first_record_that_comes_in_pieces_is_read_once_its_line_is_whole(
    pipe: tuple[IO[str], IO[bytes]],
) -> None:
    reader, writer = pipe
    records = iter(JsonDocuments(reader, "-", _is_conversation))
    document = {"trace": _long_trace(100)}
    line = json.dumps(document).encode()
    writer.write(line[:100])
    pool = ThreadPoolExecutor(max_workers=1)
    reading = pool.submit(next, records)
    time.sleep(0.2)  # the first piece is read, and is no whole document
    writer.write(line[100:] + b"\n")  # the pipe stays open
    try:
        assert reading.result(timeout=10) == Record(1, document)
    finally:
        pool.shutdown(wait=False)


def test_a_long_first_jsonl_line_written_slowly_to_a_pipe_reads_as_from_a_file() -> None:
    data = f"{json.dumps(LONG_LINE)}\n{json.dumps({'trace': CHAT})}\n".encode()
    expected = ("jsonl", [Record(1, LONG_LINE), Record(2, {"trace": CHAT})])
    assert _read_from_file(data) == expected
    assert _read_slowly_written(_in_pieces(data), 0.002) == expected


def test_a_broken_first_line_reads_as_jsonl_when_the_next_line_comes_later() -> None:
    rest = f"{json.dumps(CHAT)}\n\n{json.dumps(CALL)}\n".encode()
    expected = ("jsonl", [
        Record(1, problem="not valid JSON: Expecting value: line 1 column 10 (char 9)"),
        Record(3, CHAT),
        Record(5, CALL),
    ])
    assert _read_from_file(BROKEN_LINE + b"\n" + rest) == expected
    assert _read_slowly_written([BROKEN_LINE, b"\n", rest], 0.3) == expected


def test_a_broken_first_line_then_a_last_line_without_its_newline_is_jsonl() -> None:
    # a file's last line was no line until a read had found the end of the input
    data = BROKEN_LINE + json.dumps(CHAT).encode()
    expected = ("jsonl", [
        Record(1, problem="not valid JSON: Expecting value: line 1 column 10 (char 9)"),
        Record(2, CHAT),
    ])
    assert _read_from_file(data) == expected
    assert _read_slowly_written([BROKEN_LINE, data[len(BROKEN_LINE) :]], 0.3) == expected


def test_a_broken_first_line_before_a_line_that_is_no_document_is_refused_from_a_pipe() -> None:
    expected = "-: not valid JSON: Expecting value: line 1 column 10 (char 9)"
    assert _read_from_file(BROKEN_LINE + b"nope\n[1]\n") == expected
    assert _read_slowly_written([BROKEN_LINE, b"no", b"pe\n[1]\n"], 0.3) == expected


def _cli_from_slow_pipe(
    argv: list[str], pieces: list[bytes], pause: float
) -> tuple[int, str, str]:
    """``tracebridge *argv`` with ``pieces`` written slowly to its standard input, a pipe."""
    read_end, write_end = os.pipe()
    try:
        command = subprocess.Popen([SCRIPT, *argv], stdin=read_end, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
    finally:
        os.close(read_end)
    writing = threading.Thread(target=_write_slowly, args=(write_end, pieces, pause))
    writing.start()
    out, err = command.communicate(timeout=60)
    writing.join()
    return command.returncode, out, err


def _cli_from_file(argv: list[str], data: bytes, tmp_path: Path) -> tuple[int, str, str]:
    """``tracebridge *argv`` with ``data`` as its standard input, a regular file."""
    path = tmp_path / "stdin"
    path.write_bytes(data)
    with path.open("rb") as stdin:
        done = subprocess.run([SCRIPT, *argv], stdin=stdin, capture_output=True, text=True,
                              timeout=60)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(("data", "out"), [
    ((json.dumps(LONG_DOCUMENT) + "\n").encode(), "ok: 2400 messages (openai_chat)\n"),
    (f"{json.dumps(LONG_LINE)}\n{json.dumps({'trace': CHAT})}\n".encode(),
     "line 1: ok: 3000 messages (openai_chat)\nline 2: ok: 2 messages (openai_chat)\n"),
], ids=["document", "jsonl"])
def test_the_command_line_reads_a_long_document_written_slowly_as_its_file(
    data: bytes, out: str, tmp_path: Path
) -> None:
    argv = ["validate", "--at", "trace", "--keep-going", "-"]
    from_file = _cli_from_file(argv, data, tmp_path)
    assert from_file[:2] == (0, out)
    assert _cli_from_slow_pipe(argv, _in_pieces(data), 0.002) == from_file


def test_the_command_line_reads_a_broken_first_line_as_its_file_when_line_two_comes_later(
    tmp_path: Path,
) -> None:
    rest = f"{json.dumps(CHAT)}\n{json.dumps(CALL)}\n".encode()
    argv = ["convert", "--to", "openai_chat", "--keep-going", "-"]
    from_file = _cli_from_file(argv, BROKEN_LINE + rest, tmp_path)
    tool = {"role": "tool", "content": "18 C", "tool_call_id": "c1"}
    assert from_file == (
        1,
        f"{json.dumps(CHAT)}\n{json.dumps([*CALL[:2], tool, CALL[3]])}\n",
        "tracebridge: reading - as openai_chat (told from its first 2 records; --from to "
        "choose)\ntracebridge: -: line 1: not valid JSON: Expecting value: line 1 column 10 "
        "(char 9)\n2 ok, 1 failed\n"
        "tracebridge: standard output has no line for a failed record or a blank line of "
        "standard input: a record after one has another line number there than in standard input, "
        "so ids by line number (as sample "
        "--references matches them) do not carry over; run sample on standard input\n",
    )
    assert _cli_from_slow_pipe(argv, [BROKEN_LINE, rest], 1.0) == from_file


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
    assert err == (json.dumps(ORPHAN_ERROR) + "\n1 ok, 1 failed\n"
                   "tracebridge: standard output has no line for a failed record or a blank "
                   "line of standard input: a record after one has another line number there than "
                   "in standard input, so ids by "
                   "line number (as sample --references matches them) do not carry over; run "
                   "sample on standard input\n")
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
