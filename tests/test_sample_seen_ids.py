"""``tracebridge sample`` checks that ids are unique in bounded memory: past
``SeenIds.IN_MEMORY`` ids they move to a temporary SQLite table on disk, and the check, the
message naming both lines, and the ids that are not text (lone surrogates) stay the same."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from cli_helpers import run

from tracebridge._cli_sample import SeenIds


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SeenIds, "IN_MEMORY", 3)


def test_ids_before_and_after_the_move_to_disk_are_found(small: None) -> None:
    seen = SeenIds()
    try:
        assert [seen.add(str(k), f"line {k}") for k in range(6)] == [None] * 6
        assert seen._table is not None  # moved at the fourth id
        assert seen._held == {}
        assert seen.add("0", "line 9") == "line 0"  # taken before the move
        assert seen.add("5", "line 10") == "line 5"  # taken after it
        assert seen.add("6", "line 11") is None
        assert seen.add("6", "line 12") == "line 11"
    finally:
        seen.close()
    assert seen._table is None


def test_ids_and_places_with_lone_surrogates_survive_the_table(small: None) -> None:
    seen = SeenIds()
    try:
        for k in range(4):
            assert seen.add(f"id{k}", f"x{k}") is None
        assert seen.add("\ud800", "f\udcff.jsonl: line 5") is None
        assert seen.add("\ud800", "g: line 6") == "f\udcff.jsonl: line 5"
        assert seen.add("\udc00", "g: line 7") is None  # another surrogate, another id
    finally:
        seen.close()


def test_in_memory_ids_find_the_first_place() -> None:
    seen = SeenIds()
    assert seen.add("a", "line 1") is None
    assert seen.add("a", "line 2") == "line 1"
    assert seen.add("a", "line 3") == "line 1"
    assert seen._table is None
    seen.close()


def test_the_command_refuses_a_repeat_found_on_disk(small: None, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    lines = [
        {"id": k, "messages": [{"role": "user", "content": f"q{k}"},
                               {"role": "assistant", "content": "a"}]}
        for k in [1, 2, 3, 4, 5, 2]
    ]
    traces.write_text("".join(json.dumps(line) + "\n" for line in lines))
    dataset = tmp_path / "ds.jsonl"
    code, out, err = run("sample", str(traces), "--at", "messages", "--from", "openai_chat",
                         "-o", str(dataset))
    assert (code, out) == (2, "")
    assert not dataset.exists()
    assert err == (f"tracebridge: {traces}: line 6: id 2 is also the id of {traces}: line 2; "
                   "each trace needs its own id (a document's id, --id PATH, or its line "
                   "number)\n")


def test_the_command_writes_every_sample_when_ids_are_unique(small: None, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(
        json.dumps([{"role": "user", "content": f"q{k}"}, {"role": "assistant", "content": "a"}])
        + "\n" for k in range(8)
    ))
    code, out, err = run("sample", str(traces), "--from", "openai_chat")
    assert code == 0, err
    assert [json.loads(line)["metadata"]["id"] for line in out.splitlines()] == list(range(1, 9))


def test_memory_held_per_id_stops_growing_after_the_move(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SeenIds, "IN_MEMORY", 1000)
    seen = SeenIds()
    tracemalloc.start()
    try:
        for k in range(1001):
            seen.add(f"trace-{k:08d}", f"traces.jsonl: line {k}")
        moved = tracemalloc.get_traced_memory()[0]
        for k in range(1001, 21001):
            seen.add(f"trace-{k:08d}", f"traces.jsonl: line {k}")
        later = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        seen.close()
    # 20,000 more ids held in a dict would take over 2 MB; on disk, SQLite's page cache only
    assert later - moved < 1_000_000, (moved, later)


@pytest.mark.parametrize("key", ["\ud800", "\udc00x", "a\udc00"])
def test_sample_writes_a_lone_surrogate_in_a_nested_key(key: str, tmp_path: Path) -> None:
    """pydantic's JSON mode refused such a key nested in a dict value (exit 70)."""
    traces = tmp_path / "traces.jsonl"
    document = {"messages": [{"type": "human", "content": "hi", "metadata": {"k": {key: 1}}},
                             {"type": "ai", "content": "yo"}]}
    traces.write_text(json.dumps(document) + "\n")
    code, out, err = run("sample", str(traces))
    assert (code, err.count("\n")) == (0, 1), err
    written = json.loads(out)
    assert written["messages"][0]["metadata"] == {"k": {key: 1}}
    assert written["metadata"] == {"id": 1}
