"""Samples on the command line: converting one keeps its references; ``tracebridge sample``
builds a dataset that ``tracebridge score`` reads, end to end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from cli_helpers import CALL, CHAT, run

from tracebridge import MultiTurnSample

SAMPLE = {
    "messages": [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}],
    "reference": "greets back",
    "reference_topics": ["greetings"],
    "rubrics": {"role": "polite"},
    "metadata": {"case": 7},
}


# --- converting a sample -------------------------------------------------------------------------


def test_a_sample_converted_to_tracebridge_keeps_every_field() -> None:
    code, out, err = run("convert", "-", "--to", "tracebridge", stdin=json.dumps(SAMPLE))
    assert (code, err.count("\n")) == (0, 1)
    assert MultiTurnSample.model_validate(json.loads(out)) == MultiTurnSample.model_validate(SAMPLE)


def test_a_sample_into_a_format_without_references_is_refused_by_name() -> None:
    code, out, err = run("convert", "-", "--to", "openai_chat", stdin=json.dumps(SAMPLE))
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == (
        "tracebridge: cannot write openai_chat: openai_chat: reference: the sample's reference, "
        "reference_topics, rubrics, metadata have no place in openai_chat: convert to "
        "tracebridge to keep them, or pass --messages-only to convert the conversation alone "
        "[not_representable]"
    )
    code, out, _ = run("convert", "-", "--to", "openai_chat", "--messages-only",
                       stdin=json.dumps(SAMPLE))
    assert (code, json.loads(out)) == (0, CHAT)


def test_a_sample_without_references_converts_as_its_conversation() -> None:
    bare = {"messages": SAMPLE["messages"]}
    code, out, _ = run("convert", "-", "--to", "openai_chat", stdin=json.dumps(bare))
    assert (code, json.loads(out)) == (0, CHAT)


# --- tracebridge sample ----------------------------------------------------------------------


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n", encoding="utf-8")
    return path


def _references(tmp_path: Path, *entries: dict[str, object]) -> Path:
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def test_sample_makes_a_dataset_with_references_by_id(traces: Path, tmp_path: Path) -> None:
    refs = _references(
        tmp_path,
        {"id": 2, "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
         "reference": "tells the weather", "metadata": {"slice": "tools"}},
    )
    code, out, err = run("sample", str(traces), "--references", str(refs))
    assert code == 0
    assert err == (f"tracebridge: reading {traces} as openai_chat (told from its first 2 "
                   "records; --from to choose)\n")
    first, second = (MultiTurnSample.model_validate_json(line) for line in out.splitlines())
    assert (first.reference, first.metadata) == (None, {"id": 1})
    assert second.reference == "tells the weather"
    assert second.metadata == {"id": 2, "slice": "tools"}
    assert [call.name for call in second.reference_tool_calls or []] == ["get_weather"]
    assert [m.type for m in second.messages] == ["human", "ai", "tool", "ai"]


def test_sample_takes_ids_from_the_documents(tmp_path: Path) -> None:
    documents = tmp_path / "cases.jsonl"
    documents.write_text(
        json.dumps({"case": {"key": "a"}, "trace": CHAT}) + "\n"
        + json.dumps({"case": {"key": "b"}, "trace": CALL}) + "\n", encoding="utf-8")
    refs = _references(tmp_path, {"id": "b", "reference": "weather"},
                       {"id": "c", "reference": "unused"})
    code, out, err = run("sample", str(documents), "--at", "trace", "--id", "case.key",
                         "--references", str(refs), "--from", "openai_chat")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["metadata"]["id"], r["reference"]) for r in rows] == [("a", None),
                                                                      ("b", "weather")]
    assert err == f"tracebridge: 1 reference(s) in {refs} matched no trace: 'c'\n"


def test_sample_of_several_files_names_records_by_file_and_line(
    traces: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps(CALL), encoding="utf-8")
    code, out, _ = run("sample", str(traces), str(other), "--from", "openai_chat")
    assert code == 0
    assert [json.loads(line)["metadata"]["id"] for line in out.splitlines()] == [
        f"{traces}:1", f"{traces}:2", f"{other}:1"
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"reference": "x"}, "expected an object with an 'id', got {'reference': 'x'}"),
        ({"id": 1.5}, "id must be a string or a whole number, got 1.5"),
        ({"id": 1, "refrence": "x"}, "unknown field 'refrence'; a reference has id and "
                                     "reference, reference_tool_calls, reference_topics, "
                                     "rubrics, metadata"),
        ({"id": 1, "reference_topics": "x"}, "reference_topics: Input should be a valid list"),
    ],
)
def test_a_bad_references_file_is_unusable(
    traces: Path, tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    refs = _references(tmp_path, entry)
    assert run("sample", str(traces), "--from", "openai_chat", "--references", str(refs)) == (
        2, "", f"tracebridge: {refs}: line 1: {message}\n"
    )


def test_a_reference_id_given_twice_is_unusable(traces: Path, tmp_path: Path) -> None:
    refs = _references(tmp_path, {"id": 1}, {"id": "1"})
    assert run("sample", str(traces), "--from", "openai_chat", "--references", str(refs)) == (
        2, "", f"tracebridge: {refs}: line 2: id '1' is also on line 1\n"
    )


def test_a_sample_in_the_traces_keeps_its_own_references_and_refuses_conflicts(
    tmp_path: Path,
) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    code, out, _ = run("sample", str(samples), "--from", "tracebridge")
    assert code == 0
    assert json.loads(out)["metadata"] == {"id": 1, "case": 7}
    assert json.loads(out)["reference"] == "greets back"
    refs = _references(tmp_path, {"id": 1, "reference": "something else"})
    code, out, err = run("sample", str(samples), "--from", "tracebridge", "--references",
                         str(refs))
    assert (code, out) == (1, "")
    assert err == (f"tracebridge: {samples}: line 1: cannot make a sample: tracebridge: "
                   f"reference: reference is in the trace's sample and, differently, in {refs} "
                   f"line 1 [conflicting_fields]\n")


def test_sample_keep_going_skips_invalid_traces(tmp_path: Path) -> None:
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x",
                                                  "content": "?"}]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(CHAT) + "\n" + json.dumps(orphan) + "\n", encoding="utf-8")
    code, out, err = run("sample", str(path), "--from", "openai_chat", "--keep-going")
    assert code == 1
    assert len(out.splitlines()) == 1
    assert err.splitlines()[-1] == "1 ok, 1 failed"


def test_references_are_held_in_about_the_size_of_their_file(tmp_path: Path) -> None:
    from tracebridge._cli_sample import References

    calls = [{"name": "get_weather", "args": {"city": "Paris", "days": 3}},
             {"name": "search_docs", "args": {"query": "refund policy", "top_k": 5}}]
    refs = _references(tmp_path, *({"id": n, "reference_tool_calls": calls,
                                     "reference": f"answer {n}"} for n in range(5000)))
    size = refs.stat().st_size
    tracemalloc.start()
    try:
        references = References(str(refs), io.StringIO())
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # parsed dicts and lists would hold about ten times the file; the entries are kept as
    # compact JSON text and parsed when a trace takes one
    assert held < 3 * size, (held, size)
    assert references.take("4999") == ({"reference_tool_calls": calls,
                                        "reference": "answer 4999"}, 5000)


def test_readme_pipeline_from_traces_to_scores(traces: Path, tmp_path: Path) -> None:
    """The trace -> sample -> score path, as the README runs it (a real shell pipe)."""
    refs = _references(
        tmp_path,
        {"id": 1, "reference_tool_calls": []},
        {"id": 2, "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
    )
    tracebridge = Path(sys.executable).parent / "tracebridge"
    done = subprocess.run(
        f"{tracebridge} sample {traces} --references {refs} "
        f"| {tracebridge} score - --metric tool_call_f1 -o {tmp_path / 'scores.jsonl'}",
        shell=True, capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == [
        "tool_call_f1", "2", "0", "0", "1.0000", "1.0000", "1.0000"
    ]
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [(r["line"], r["id"], r["value"]) for r in rows] == [(1, 1, 1.0), (2, 2, 1.0)]
