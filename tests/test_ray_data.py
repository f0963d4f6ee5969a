"""``tracebridge.ray_data`` on a real Ray cluster: one small local cluster for the session,
on the loopback interface only, every test under a time limit.

What is checked: every line of a file is a row with its file and line (bad ones too); the
conversion on Ray equals the one in one process; judged scoring on the actor pool gives the
results ``tracebridge score`` gives in one process (values, transcript hashes, the whole
result); the global budget holds across actors, the rest comes back unrun with the reason;
earlier results answer a rerun, which asks only what is new.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

from cli_helpers import run
from ray_helpers import GOAL, chat, goal_server, sample, time_limited, write_jsonl

from tracebridge.evaluation.budget import Budget
from tracebridge.ray_data import (
    OpenAIJudgeSpec,
    convert_batch,
    init_local,
    score_batch,
)

pytestmark = pytest.mark.ray

LIMIT_SECONDS = 180
"""No test here may take longer (the first one starts the cluster's workers)."""


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    init_local(num_cpus=2)
    import ray

    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    with time_limited(LIMIT_SECONDS):
        yield


@pytest.fixture
def server() -> Iterator[Any]:
    with goal_server() as state:
        yield state


def rows_of(ds: Any) -> list[dict[str, Any]]:
    return sorted(ds.take_all(), key=lambda row: (row["file"], row["line"], row.get("metric")))


def _listening(pid: int) -> list[str]:
    """The local addresses ``pid`` listens on (TCP, IPv4 and IPv6), from /proc."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1]
                  for fd in os.listdir(f"/proc/{pid}/fd")
                  if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
    except (FileNotFoundError, PermissionError):
        return []  # the process has ended
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for entry in Path(table).read_text().splitlines()[1:]:
            fields = entry.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.append(fields[1].split(":")[0])
    return found


def test_the_cluster_listens_on_the_loopback_interface_only() -> None:
    import ray
    from ray._private import worker

    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    pids = [info.process.pid for infos in worker._global_node.all_processes.values()
            for info in infos]
    addresses = [address for pid in pids for address in _listening(pid)]
    assert addresses  # the GCS and the raylet listen
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, ::ffff:127.0.0.1
    assert set(addresses) <= loopback


def test_read_traces_gives_every_line_with_its_file_and_line(tmp_path: Path) -> None:
    from tracebridge.ray_data import read_traces

    good = [chat(f"City{n}") for n in range(40)]
    path = write_jsonl(tmp_path / "t.jsonl", good, bad={3: "{broken", 6: "   "})
    with path.open("ab") as stream:  # line 43
        stream.write(b'[{"role": "user", "content": "caf\xe9"}]\n')  # latin-1: not UTF-8
    array = tmp_path / "a.json"
    array.write_text(json.dumps([chat("Lima"), chat("Kyiv")], indent=1), encoding="utf-8")
    notices: list[str] = []
    ds = read_traces([path, array], block_bytes=700, notice=notices.append)
    assert ds.schema().names == ["record", "file", "line", "element", "source", "problem_code",
                                 "problem"]
    rows = rows_of(ds)
    text = path.read_bytes().split(b"\n")
    assert [(row["file"], row["line"]) for row in rows] == [
        (str(array), 2), (str(array), 31),
        *((str(path), n) for n in range(1, 44) if n != 6)]
    for row in rows[2:-1]:
        assert row["record"] == text[row["line"] - 1].decode("utf-8")  # verbatim
    assert rows[-1]["record"] is None
    assert {row["source"] for row in rows} == {"openai_chat"}
    assert {(row["problem_code"], row["problem"]) for row in rows} == {(None, None)}
    assert json.loads(rows[0]["record"]) == chat("Lima")
    assert notices[0] == (f"reading {path} as openai_chat (told from its first 32 records; "
                          "--from to choose)")
    head = tmp_path / "head.jsonl"  # among the records the format is told from
    head.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]\n' + path.read_bytes())
    rows = rows_of(read_traces(head))
    assert (rows[0]["line"], rows[0]["record"], rows[1]["line"]) == (1, None, 2)
    assert len(rows) == 43


def test_conversion_on_ray_accounts_for_every_row_as_one_process_does(tmp_path: Path) -> None:
    import pyarrow as pa

    from tracebridge.ray_data import read_traces
    from tracebridge.ray_data._cluster import TRACE_COLUMNS

    traces = [chat(f"City{n}", call=n % 2 == 0) for n in range(40)]
    bad = {5: "not json", 17: json.dumps([{"role": "tool", "tool_call_id": "x", "content": ""}]),
           30: json.dumps({"x": 1})}
    path = write_jsonl(tmp_path / "t.jsonl", traces, bad=bad)
    ds = read_traces(path, block_bytes=2000)
    converted = ds.map_batches(convert_batch, fn_kwargs={"target": "langchain"},
                               batch_format="pyarrow", batch_size=7)
    rows = rows_of(converted)
    assert len(rows) == 43
    failed = {row["line"]: row["error_code"] for row in rows if row["error_code"]}
    assert failed == {5: "not_json", 17: "orphan_tool_result", 30: "malformed_event"}
    table = pa.Table.from_pylist([{k: row[k] for k in TRACE_COLUMNS} for row in rows])
    alone = convert_batch(table, target="langchain").to_pylist()
    assert rows == alone


def samples_file(tmp_path: Path, cities: list[str]) -> Path:
    return write_jsonl(tmp_path / "samples.jsonl", [sample(city) for city in cities])


CITIES = ["Paris", "Rome", "Paris", "Oslo", "Nice", "Paris", "Bonn", "Graz", "Lima"]


def test_scoring_on_actors_equals_a_one_process_run(tmp_path: Path, server: Any) -> None:
    from tracebridge.ray_data import read_traces, score

    path = samples_file(tmp_path, CITIES)
    spec = OpenAIJudgeSpec("judge-model", base_url=server.base_url)
    ds = score(read_traces(path, source="sample"), [GOAL, "tool_call_f1"], judge=spec,
               actors=2, batch_size=2)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        rows = rows_of(ds)
    assert not [w for w in warned if "fully utilize" in str(w.message)]  # both actors work
    assert len(server.requests) == len(CITIES)
    code, _, _ = run("score", str(path), "--metric", GOAL, "--metric", "tool_call_f1",
                       "--model", "judge-model", "--base-url", server.base_url,
                       "-o", str(tmp_path / "alone.jsonl"))
    assert code == 0
    alone = [json.loads(line) for line in (tmp_path / "alone.jsonl").read_text().splitlines()]
    expected = sorted(((r.pop("line"), r["name"]), r) for r in alone)
    assert [((row["line"], row["metric"]), json.loads(row["result"])) for row in rows] == expected
    assert [row["value"] for row in rows if row["metric"] == GOAL] == [
        1.0 if city == "Paris" else 0.0 for city in CITIES]
    assert {row["state"] for row in rows} == {"scored"}
    assert all(row["transcript_hash"] == json.loads(row["result"])["transcript_hash"]
               for row in rows)


def test_the_budget_holds_across_actors_and_the_rest_is_unrun(tmp_path: Path,
                                                              server: Any) -> None:
    from tracebridge.ray_data import read_traces, score

    path = samples_file(tmp_path, CITIES * 2)
    spec = OpenAIJudgeSpec("judge-model", base_url=server.base_url)
    ds = score(read_traces(path, source="sample"), [GOAL], judge=spec, actors=2,
               budget=Budget(max_requests=5), batch_size=3)
    rows = rows_of(ds)
    assert len(rows) == 18
    assert len(server.requests) == 5
    states = [row["state"] for row in rows]
    assert states.count("scored") == 5
    assert states.count("unrun") == 13
    for row in rows:
        if row["state"] == "unrun":
            assert row["value"] is None
            assert row["error"] == ("budget: the limit of 5 judge requests is reached "
                                    "(5 leased)")


def test_earlier_results_answer_a_rerun_which_asks_only_what_is_new(tmp_path: Path,
                                                                     server: Any) -> None:
    from tracebridge.ray_data import load_results, read_traces, score

    spec = OpenAIJudgeSpec("judge-model", base_url=server.base_url)
    first = score(read_traces(samples_file(tmp_path, ["Paris", "Rome"]), source="sample"),
                  [GOAL], judge=spec).materialize()  # scored once, not again on each read
    first.write_parquet(str(tmp_path / "earlier"))
    assert len(server.requests) == 2
    assert len(load_results(tmp_path / "earlier")) == 2
    more = samples_file(tmp_path, ["Paris", "Rome", "Oslo"])
    again = rows_of(score(read_traces(more, source="sample"), [GOAL], judge=spec,
                          cache=tmp_path / "earlier"))
    assert len(server.requests) == 3  # only Oslo was asked
    assert [(row["line"], row["cached"], row["value"]) for row in again] == [
        (1, True, 1.0), (2, True, 0.0), (3, False, 0.0)]
    earlier = {row["key"]: row for row in first.take_all()}
    for row in again[:2]:
        result = json.loads(row["result"])
        assert result["details"]["cached"] == {"key": row["key"],
                                               "stored_at": earlier[row["key"]]["scored_at"]}
        assert json.loads(earlier[row["key"]]["result"]) == {
            **result, "details": {k: v for k, v in result["details"].items() if k != "cached"}}
    one_process = score_batch(
        __import__("pyarrow").table({"record": [json.dumps(sample("Oslo"))]}),
        metrics=[GOAL], judge=spec)
    assert one_process.column("key").to_pylist() == [again[2]["key"]]


def test_the_benchmark_runs_at_a_tiny_size() -> None:
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(benchmarks))
    try:
        import ray_scale
    finally:
        sys.path.remove(str(benchmarks))
    lines = ray_scale.main(["--quick"])
    assert [line.split("  ")[0] for line in lines] == [
        "convert, one process", "convert, two processes", "convert, Ray",
        "judged, no budget actor", "judged, budget actor"]


def test_the_pipeline_in_the_docs_runs(tmp_path: Path, server: Any) -> None:
    import pyarrow.parquet as pq

    docs = (Path(__file__).resolve().parents[1] / "docs" / "ray.md").read_text("utf-8")
    code = docs.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) == 10
    code = code.replace("init_local(num_cpus=8)", "None")  # the session's cluster is running
    code = code.replace('OpenAIJudgeSpec("gpt-4o-mini")',
                        f'OpenAIJudgeSpec("gpt-4o-mini", base_url="{server.base_url}")')
    code = code.replace('"/data/', f'"{tmp_path}/')
    (tmp_path / "traces").mkdir()
    write_jsonl(tmp_path / "traces" / "monday.jsonl", [chat("Paris"), chat("Rome")],
                bad={2: "{"})
    write_jsonl(tmp_path / "traces" / "tuesday.jsonl", [chat("Oslo")])
    write_jsonl(tmp_path / "samples.jsonl", [sample("Paris"), sample("Rome")])
    earlier = score_batch(__import__("pyarrow").table({"record": [json.dumps(sample("Paris"))]}),
                          metrics=[GOAL], judge=OpenAIJudgeSpec("gpt-4o-mini",
                                                                base_url=server.base_url))
    (tmp_path / "out" / "scores-monday").mkdir(parents=True)
    pq.write_table(earlier, tmp_path / "out" / "scores-monday" / "part.parquet")
    exec(compile(code, "docs/ray.md", "exec"), {})
    converted = pq.read_table(tmp_path / "out" / "converted").to_pylist()
    assert sorted((Path(r["file"]).name, r["line"], r["error_code"]) for r in converted) == [
        ("monday.jsonl", 1, None), ("monday.jsonl", 2, "not_json"), ("monday.jsonl", 3, None),
        ("tuesday.jsonl", 1, None)]
    scores = pq.read_table(tmp_path / "out" / "scores-tuesday").to_pylist()
    assert sorted((r["line"], r["metric"], r["state"], r["cached"]) for r in scores) == [
        (1, GOAL, "scored", True), (1, "tool_call_f1", "scored", False),
        (2, GOAL, "scored", False), (2, "tool_call_f1", "scored", False)]
    assert len(server.requests) == 2  # the earlier result, and Rome


def test_a_cost_limit_without_the_judge_models_price_is_refused_before_anything_runs(
        tmp_path: Path) -> None:
    from tracebridge.ray_data import read_traces, score

    ds = read_traces(samples_file(tmp_path, ["Paris"]), source="sample")
    with pytest.raises(ValueError, match=r"^a cost limit needs the price of the judge model "
                                         r"judge-model: give it as Budget\(\.\.\., prices="):
        score(ds, [GOAL], judge=OpenAIJudgeSpec("judge-model"), budget=Budget(max_cost=1.0))
