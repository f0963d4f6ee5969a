"""The command line streams: the shapes of input and output, one record at a time, flat memory."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest
from cli_helpers import CALL, CHAT, run

import tracebridge._jsonstream as jsonstream
from tracebridge._jsonstream import JsonDocuments, UnreadableInput
from tracebridge.cli import main


def documents(text: str, **options: bool) -> tuple[str | None, list[tuple[int, object, object]]]:
    reader = JsonDocuments(io.StringIO(text), "-", lambda v: isinstance(v, list), **options)
    read = [(r.line, r.value, r.problem) for r in reader]
    return reader.shape, read


# --- the reader ----------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 16])
def test_documents_cut_anywhere_by_the_chunks_read_back_whole(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonstream, "_CHUNK", chunk)
    value = [{"a": "\u00e9\\\"\n\U0001F600", "n": 12345.5e-3, "t": True, "z": None},
             [[], {}, -0.0, 100000000000000000000]]
    assert documents(json.dumps(value)) == ("json", [(1, value, None)])
    assert documents(json.dumps(value, indent=2)) == ("json", [(1, value, None)])
    assert documents("123456789") == ("json", [(1, 123456789, None)])
    lines = "\n".join(json.dumps(v) for v in value) + "\n"
    assert documents(lines) == ("jsonl", [(1, value[0], None), (2, value[1], None)])


def test_shapes_json_array_of_conversations_and_jsonl() -> None:
    assert documents(json.dumps(CHAT)) == ("json", [(1, CHAT, None)])
    assert documents(json.dumps([CHAT, CALL], indent=1)) == (
        "array", [(2, CHAT, None), (12, CALL, None)]
    )
    # a one-line array of conversations is one too (a dump of a list of traces)
    assert documents(json.dumps([CHAT, CALL])) == ("array", [(1, CHAT, None), (1, CALL, None)])
    # JSONL whose first line is a list of lists: that line is one record, not the whole file
    assert documents("[[1], [2]]\n[3]\n") == ("jsonl", [(1, [[1], [2]], None), (2, [3], None)])
    assert documents("\n\n" + json.dumps(CHAT) + "\r\n\n" + json.dumps(CALL) + "\r\n") == (
        "jsonl", [(3, CHAT, None), (5, CALL, None)]
    )
    assert documents(json.dumps(CHAT), jsonl=True) == ("jsonl", [(1, CHAT, None)])
    assert documents("", allow_empty=True) == (None, [])


def test_a_broken_line_of_jsonl_is_one_record_even_the_first() -> None:
    shape, read = documents('{"a":\n[1]\nnope\n[2]')
    assert shape == "jsonl"
    assert read == [
        (1, None, "not valid JSON: Expecting value: line 1 column 6 (char 5)"),
        (2, [1], None),
        (3, None, "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (4, [2], None),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "- is empty: expected a JSON trace or JSONL traces"),
        ("  \n ", "- is empty: expected a JSON trace or JSONL traces"),
        ('{"a": [1, 2}', "-: not valid JSON: Expecting ',' delimiter: line 1 column 12 (char 11)"),
        ("[[1], [2] x", "-: line 1: not valid JSON: expected ',' or ']' in the array of "
                        "conversations, found 'x'"),
        ("[\n[1],\n[2]\n]\n[3]", "-: line 5: more JSON after the array of conversations; a file "
                                 "holds one JSON document, or JSONL (one document per line)"),
        ("[" * 100_000, "-: line 1: not valid JSON: nested too deeply to read"),
        ("1" * 5000, "-: line 1: not valid JSON: Exceeds the limit (4300 digits) for integer "
                     "string conversion: value has 5000 digits; use sys.set_int_max_str_digits() "
                     "to increase the limit"),
    ],
)
def test_unreadable_input_is_one_line(text: str, message: str) -> None:
    with pytest.raises(UnreadableInput) as raised:
        documents(text)
    assert str(raised.value) == message


def test_a_broken_document_is_found_without_reading_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(jsonstream, "_CHUNK", 64)
    reads: list[int] = []

    class Counting(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            reads.append(size or -1)
            return super().read(size)

    text = '{"a": [1, 2}' + " " * 10_000 + "\n" + "[1]\n" * 10_000
    with pytest.raises(UnreadableInput, match="Expecting ',' delimiter"):
        list(JsonDocuments(Counting(text), "-", lambda v: False))
    assert reads == [64]


# --- shapes on the command line --------------------------------------------------------------


def test_json_in_gives_json_out_and_jsonl_in_gives_jsonl_whatever_the_count(
    tmp_path: Path,
) -> None:
    code, out, _ = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                       stdin=json.dumps(CHAT))
    assert (code, out) == (0, json.dumps(CHAT, indent=2) + "\n")
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(CHAT) + "\n", encoding="utf-8")
    code, out, _ = run("convert", str(one), "--from", "openai_chat", "--to", "openai_chat")
    assert (code, out) == (0, json.dumps(CHAT) + "\n")
    code, out, _ = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                       stdin=json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n")
    assert (code, [json.loads(line) for line in out.splitlines()]) == (0, [CHAT, CALL])


def test_a_json_array_of_conversations_comes_out_as_one() -> None:
    code, out, err = run("convert", "-", "--to", "tracebridge", stdin=json.dumps([CHAT, CALL]))
    assert code == 0
    assert err == ("tracebridge: reading - as openai_chat (told from its first 2 records; --from "
                   "to choose)\n")
    converted = json.loads(out)
    assert [len(c) for c in converted] == [2, 4]
    assert out.startswith("[\n")
    assert out.endswith("\n]\n")
    assert [line[-1] for line in out.splitlines()[1:-1]] == [",", "]"]  # one per line


def test_samples_of_a_json_array_are_shown_with_their_elements_and_lines() -> None:
    code, out, _ = run("show", "-", "--from", "openai_chat", stdin=json.dumps([CHAT, CHAT],
                                                                               indent=0))
    assert (code, out) == (
        0, "# element 1 (line 2)\n[0] human: hi\n[1] ai: hello\n\n"
           "# element 2 (line 12)\n[0] human: hi\n[1] ai: hello\n"
    )


class _Trickle(io.StringIO):
    """Standard input that hands out one line at a time and checks what was written so far."""

    def __init__(self, lines: list[str], written: io.StringIO) -> None:
        super().__init__()
        self.lines = lines
        self.given = 0
        self.written = written
        self.seen: list[int] = []

    def _next(self) -> str:
        self.seen.append(len(self.written.getvalue().splitlines()))
        if self.given == len(self.lines):
            return ""
        self.given += 1
        return self.lines[self.given - 1]

    def read(self, size: int | None = -1) -> str:
        return self._next()

    def readline(self, size: int | None = -1) -> str:
        return self._next()


def test_records_are_written_before_the_next_is_read() -> None:
    out, err = io.StringIO(), io.StringIO()
    lines = [json.dumps(CALL) + "\n" for _ in range(5)]
    stdin = _Trickle(lines, out)
    code = main(["convert", "-", "--from", "openai_chat", "--to", "tracebridge"],
                stdin=stdin, stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, "")
    # two lines are read to tell JSONL from one JSON document; from then on each record is
    # written before the next line is asked for (the last call finds the end)
    assert stdin.seen == [0, 0, 2, 3, 4, 5]


def _memory_peak(argv: list[str]) -> int:
    out = io.StringIO()
    tracemalloc.start()
    try:
        code = main(argv, stdin=io.StringIO(""), stdout=io.StringIO(), stderr=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, out.getvalue()
    return peak


@pytest.mark.parametrize("shape", ["jsonl", "array"])
def test_memory_stays_flat_as_the_input_grows(tmp_path: Path, shape: str) -> None:
    def write(count: int) -> tuple[Path, int]:
        path = tmp_path / f"{shape}-{count}.json"
        if shape == "jsonl":
            text = "".join(json.dumps(CALL) + "\n" for _ in range(count))
        else:  # as convert writes an array: one conversation per line
            text = "[\n" + ",\n".join(json.dumps(CALL) for _ in range(count)) + "\n]\n"
        path.write_text(text, encoding="utf-8")
        return path, len(text)

    small, _ = write(1000)
    large, size = write(4000)
    peaks = []
    for path in (small, small, large):  # the first run also imports the adapters
        output = tmp_path / "out.json"
        peaks.append(_memory_peak(["convert", str(path), "--from", "openai_chat", "--to",
                                   "tracebridge", "-o", str(output)]))
    assert size > 1_300_000
    # four times the records, the same memory (the buffer a chunk is read into; what grows
    # is the output file); reading the whole input would take about ten times its size
    assert peaks[2] < peaks[1] * 1.25 + 50_000, peaks
    assert peaks[2] < size / 2, peaks
