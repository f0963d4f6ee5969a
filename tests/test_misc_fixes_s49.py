"""Ray reading and cache errors, Galtea joins and current turns, and OpenTelemetry's
``allow_pending`` check.

1. ``read_traces`` let a private exception out for a file that cannot be read as traces
   (empty, not JSON, not UTF-8 text, a key twice), and for a missing file or a folder: now
   ``FormatError`` for the first, the path's own ``OSError`` for the others.
2. ``join_consecutive`` put its separator beside a message with no text (files alone, empty,
   or emptied by ``drop_non_text``): ``"Who holds this deed?"`` and a file became
   ``"Who holds this deed?\\n"``.
3. ``split_current_turn``'s result compared equal, and had the same repr, whatever its
   ``retrieval_context``.
4. ``otel.to_messages`` took ``allow_pending=None`` / ``0`` / ``""`` / ``[]`` without a word,
   while every other adapter raises ``ValueError``.
5. ``score(..., cache=PATH)`` with a PATH that is not there named no cause.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, ImagePart, TraceError, convert
from tracebridge.adapters import galtea, otel
from tracebridge.errors import FormatError
from tracebridge.evaluation.cache import CacheError

pytest.importorskip("ray")

from tracebridge.ray_data import load_results, read_traces

# --- 1. read_traces: what cannot be read as traces, and what is no file -------------------------

UNREADABLE: list[tuple[str, bytes, str]] = [
    ("broken.json", b'[[{"role":"user","content":"hi"}], {bad}]',
     ": not valid JSON: Expecting property name enclosed in double quotes: "
     "line 1 column 37 (char 36)"),
    ("empty.json", b"", " is empty: expected a JSON trace or JSONL traces"),
    ("latin.json", b'[[{"role":"user","content":"\xff"}]]', ": not UTF-8 text: invalid start byte"),
    ("dupkey.json", b'[[{"role":"user","content":"a"}],[{"role":"user","role":"user",'
                    b'"content":"b"}]]',
     ": line 1: not valid JSON: an object has the key 'role' twice (which value is meant is "
     "not known)"),
]


# (an empty file of samples holds none, as ``tracebridge score`` reads it: no error)
CASES = [pytest.param(*case, source, id=f"{case[0]}-{source}") for case in UNREADABLE
         for source in ("auto", "openai_chat", "sample")
         if (case[0], source) != ("empty.json", "sample")]


@pytest.mark.parametrize(("name", "data", "why", "source"), CASES)
def test_a_file_that_cannot_be_read_as_traces_raises_format_error(
    tmp_path: Path, name: str, data: bytes, why: str, source: str,
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        read_traces(str(path), source=source)
    assert type(caught.value) is FormatError
    assert str(caught.value) == f"{path}{why}"


@pytest.mark.parametrize("name", ["missing.json", "missing.jsonl"])
def test_a_missing_file_raises_file_not_found_as_rays_readers_do(
    tmp_path: Path, name: str,
) -> None:
    path = tmp_path / name
    with pytest.raises(FileNotFoundError) as caught:
        read_traces([str(path)])
    assert (caught.value.errno, caught.value.filename) == (2, str(path))
    assert str(caught.value) == f"[Errno 2] No such file or directory: '{path}'"


def test_a_folder_raises_is_a_directory_naming_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('[{"role":"user","content":"hi"}]\n')
    with pytest.raises(IsADirectoryError) as caught:
        read_traces(tmp_path)
    assert (caught.value.errno, caught.value.filename) == (21, str(tmp_path))
    assert str(caught.value) == (
        f"[Errno 21] Is a folder; name the trace files in it: '{tmp_path}'")


# --- 2. join_consecutive beside a message with no text --------------------------------------------

DEED = FilePart(url="gs://b/deed.pdf", filename="deed.pdf", mime_type="application/pdf")
DEED_FILE = {"uri": "gs://b/deed.pdf", "filename": "deed.pdf", "mime_type": "application/pdf",
             "type": "file"}


def _joined(first: Any, second: Any, **options: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    omitted: list[galtea.Omission] = []
    turns = galtea.from_messages(
        [HumanMessage(content=first), HumanMessage(content=second),
         AIMessage(content="Marta Ruiz.")],
        join_consecutive="\n", omitted=omitted, **options)
    return turns, omitted


JOINED = galtea.Omission(1, "joined", "join_consecutive", "joined into the user turn of "
                         "messages[0]")
ANSWER = {"role": "assistant", "content": "Marta Ruiz."}


def test_a_question_then_its_file_joins_to_the_question_with_no_separator() -> None:
    turns, omitted = _joined("Who holds this deed?", [DEED])
    assert turns == [{"role": "user", "content": "Who holds this deed?",
                      "input_files": [DEED_FILE]}, ANSWER]
    assert omitted == [JOINED]
    assert galtea.from_messages(galtea.to_messages(turns)) == turns


def test_a_file_then_its_question_joins_with_no_separator_under_drop_part_order() -> None:
    turns, omitted = _joined([DEED], "Who holds this deed?", drop=["part_order"])
    assert turns == [{"role": "user", "content": "Who holds this deed?",
                      "input_files": [DEED_FILE]}, ANSWER]
    assert omitted == [
        galtea.Omission(1, "part_order", "drop=part_order",
                        "text written before the files of messages[0]"),
        JOINED,
    ]


@pytest.mark.parametrize(("first", "second", "text"), [
    ("", "b", "b"),
    ("a", "", "a"),
    ("", "", ""),
    ("a", "b", "a\nb"),
])
def test_an_empty_message_adds_no_separator(first: str, second: str, text: str) -> None:
    turns, omitted = _joined(first, second)
    assert turns == [{"role": "user", "content": text}, ANSWER]
    assert omitted == [JOINED]


def test_a_message_emptied_by_drop_non_text_adds_no_separator() -> None:
    turns, omitted = _joined("a", [ImagePart(url="https://i/x.png")], drop_non_text=True)
    assert turns == [{"role": "user", "content": "a"}, ANSWER]
    assert [(o.index, o.what) for o in omitted] == [(1, "non_text_part"), (1, "joined")]


# --- 3. CurrentTurn and its retrieval context ----------------------------------------------------

def _split(context: str | None) -> galtea.CurrentTurn:
    fields = {} if context is None else {"metadata": {"galtea": {"retrieval_context": context}}}
    return galtea.split_current_turn([HumanMessage(content="q"), AIMessage(content="a", **fields)])


def test_two_splits_with_different_retrieval_contexts_differ() -> None:
    with_context, without, other = _split("Deed 4411."), _split(None), _split("Deed 4412.")
    assert (with_context == without, with_context != without) == (False, True)
    assert (with_context == other, with_context != other) == (False, True)
    assert (with_context == _split("Deed 4411."), with_context != _split("Deed 4411.")) == (
        True, False)


def test_a_plain_triple_compares_with_the_three_values_it_holds() -> None:
    split = _split("Deed 4411.")
    same: tuple[list[Any], str, str] = ([], "q", "a")
    other: tuple[list[Any], str, str] = ([], "q", "b")
    assert (split == same, same == split, split != same, same != split) == (
        True, True, False, False)
    assert (split == other, other == split, split != other, other != split) == (
        False, False, True, True)
    assert (split == "q", split != "q") == (False, True)
    hashable = galtea.CurrentTurn((), "q", "a", "Deed 4411.")  # type: ignore[arg-type]
    assert hash(hashable) == hash(((), "q", "a"))


def test_the_repr_shows_the_retrieval_context() -> None:
    assert repr(_split("Deed 4411.")) == (
        "CurrentTurn(conversation_turns=[], input='q', actual_output='a', "
        "retrieval_context='Deed 4411.')")
    assert repr(_split(None)) == (
        "CurrentTurn(conversation_turns=[], input='q', actual_output='a', "
        "retrieval_context=None)")


def test_a_split_still_unpacks_copies_and_pickles_with_its_context() -> None:
    split = _split("Deed 4411.")
    turns, question, answer = split
    assert (turns, question, answer) == ([], "q", "a")
    for clone in (copy.copy(split), copy.deepcopy(split), pickle.loads(pickle.dumps(split))):
        assert type(clone) is galtea.CurrentTurn
        assert (clone == split, clone != _split(None)) == (True, True)
        assert clone.retrieval_context == "Deed 4411."


# --- 4. otel's allow_pending is True or False -------------------------------------------------

GOLDEN = Path(__file__).resolve().parent.parent / "golden_traces" / "otel"


def _otel_trace() -> Any:
    return json.loads((GOLDEN / "openai_v2_tool_loop.json").read_text())["trace"]


@pytest.mark.parametrize("by_span", [False, True])
@pytest.mark.parametrize("value", [None, 0, "", [], "false", 1])
def test_otel_refuses_an_allow_pending_that_is_not_a_bool(value: Any, by_span: bool) -> None:
    trace = _otel_trace()
    view = {"span_id": next(iter(otel.calls(trace))).span_id} if by_span else {}
    with pytest.raises(ValueError, match="allow_pending must be") as caught:
        otel.to_messages(trace, allow_pending=value, **view)
    assert str(caught.value) == f"allow_pending must be True or False, got {value!r}"


@pytest.mark.parametrize("value", [None, 0])
def test_convert_from_otel_refuses_an_allow_pending_that_is_not_a_bool(value: Any) -> None:
    with pytest.raises(ValueError, match="allow_pending must be") as caught:
        convert(_otel_trace(), source="otel", target="openai_chat",
                source_options={"allow_pending": value})
    assert str(caught.value) == f"allow_pending must be True or False, got {value!r}"


def test_otel_checks_allow_pending_before_reading_the_spans() -> None:
    with pytest.raises(ValueError, match="allow_pending must be") as caught:
        otel.to_messages({"resourceSpans": "not a list"}, allow_pending=None)
    assert not isinstance(caught.value, TraceError)
    assert str(caught.value) == "allow_pending must be True or False, got None"


# --- 5. earlier results that are not there ----------------------------------------------------

def test_earlier_results_that_are_not_there_say_so_and_what_to_do(tmp_path: Path) -> None:
    missing = str(tmp_path / "scores-monday")
    with pytest.raises(CacheError) as caught:
        load_results(missing)
    assert str(caught.value) == (
        f"earlier results ['{missing}']: cannot read them: {missing}: no such file or folder "
        "(on a first run, before any results were written, leave cache=None)")


def test_an_empty_folder_of_earlier_results_says_so_in_one_line(tmp_path: Path) -> None:
    """A folder made for the results before any run wrote there (before the review fix:
    Arrow's error over four lines, with no advice), named by a Path (shown as its text)."""
    with pytest.raises(CacheError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == (
        f"earlier results ['{tmp_path}']: they hold no Parquet file (on a first run, before any "
        "results were written, leave cache=None)")


def test_a_file_that_is_no_parquet_is_told_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not parquet\n")
    with pytest.raises(CacheError) as caught:
        load_results([tmp_path / "notes.txt"])
    message = str(caught.value)
    assert message.startswith(f"earlier results ['{tmp_path / 'notes.txt'}']: cannot read them: ")
    assert "\n" not in message
