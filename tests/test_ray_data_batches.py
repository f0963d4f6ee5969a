"""The batch functions of ``tracebridge.ray_data`` without Ray: rows out = rows in, bad data
in the error columns, never an exception; the scoring states, the budget's boundary, the
cache key of the evaluation runner, and the leases of the budget keeper."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
import pytest
from ray_helpers import GOAL, chat, goal_server, sample

from tracebridge import convert
from tracebridge._cli_commands import to_json
from tracebridge.errors import FormatError
from tracebridge.evaluation.budget import Budget, Price
from tracebridge.evaluation.cache import cache_key, judge_part
from tracebridge.metrics.cli import JUDGED
from tracebridge.ray_data import (
    CONVERT_COLUMNS,
    SCORE_COLUMNS,
    OpenAIJudgeSpec,
    convert_batch,
    score_batch,
)
from tracebridge.ray_data._lease import Allowances, Lease, LeasingJudge, Limits
from tracebridge.ray_data._scoring import Scorer

BAD_LINES = {
    2: "{not json",
    4: json.dumps([{"role": "tool", "tool_call_id": "x", "content": "?"}]),
    5: json.dumps({"no": "trace"}),
}


def batch(records: list[str | None]) -> pa.Table:
    return pa.table({"record": pa.array(records, pa.string()),
                     "file": ["f.jsonl"] * len(records),
                     "line": list(range(1, len(records) + 1))})


def mixed() -> pa.Table:
    good = [json.dumps(chat(city)) for city in ("Paris", "Rome", "Oslo")]
    records: list[str | None] = [good[0], BAD_LINES[2], good[1], BAD_LINES[4], BAD_LINES[5],
                                 None, good[2]]
    return batch(records)


def test_convert_batch_keeps_every_row_and_puts_bad_data_in_the_error_columns() -> None:
    out = convert_batch(mixed(), source="openai_chat", target="langchain")
    assert out.num_rows == 7
    assert out.column_names == ["record", "file", "line", *CONVERT_COLUMNS]
    assert out.column("line").to_pylist() == [1, 2, 3, 4, 5, 6, 7]
    rows = out.to_pylist()
    assert [r["error_code"] for r in rows] == [
        None, "not_json", None, "orphan_tool_result", "malformed_event", "no_record", None]
    assert rows[3]["error_index"] == 0
    assert rows[3]["error_path"] == "messages[0].tool_call_id"
    assert rows[1]["error_message"] == (
        "not valid JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)")
    for row in rows:
        assert (row["output"] is None) == (row["error_code"] is not None)
        assert (row["error_message"] is None) == (row["error_code"] is None)
    for row, city in zip((rows[0], rows[2], rows[6]), ("Paris", "Rome", "Oslo"), strict=True):
        written = convert(chat(city), source="openai_chat", target="langchain")
        assert json.loads(row["output"]) == to_json("langchain", written)  # as the CLI writes


def test_convert_batch_detects_per_record_or_uses_the_source_column() -> None:
    table = batch([json.dumps(chat("Paris")), json.dumps({"no": "trace"})])
    out = convert_batch(table, source="auto", target="tracebridge").to_pylist()
    assert out[0]["error_code"] is None
    assert out[1]["error_code"] == "unknown_format"
    assert out[1]["error_message"].startswith("cannot tell the format of this dict")
    told = table.append_column("source", pa.array(["openai_chat", "openai_chat"]))
    out = convert_batch(told, source="auto", target="tracebridge").to_pylist()
    assert [row["error_code"] for row in out] == [None, "malformed_event"]


def test_convert_batch_refuses_a_wrong_request_at_once() -> None:
    with pytest.raises(FormatError):
        convert_batch(mixed(), source="openai_chat", target="no_such_format")
    with pytest.raises(ValueError, match="no 'record' column"):
        convert_batch(pa.table({"x": [1]}), source="openai_chat", target="tracebridge")


def test_convert_batch_of_no_rows_has_the_schema() -> None:
    out = convert_batch(batch([]), source="openai_chat", target="tracebridge")
    assert out.num_rows == 0
    assert out.schema.field("error_index").type == pa.int64()


def test_score_batch_gives_one_row_per_record_and_metric_in_order() -> None:
    records = [json.dumps(sample("Paris")), "{", json.dumps(sample("Rome")), "[]"]
    out = score_batch(batch(records), metrics=["tool_call_f1", "tool_call_accuracy"])
    assert out.num_rows == 8
    assert out.column_names == ["record", "file", "line", *SCORE_COLUMNS]
    rows = out.to_pylist()
    assert [(r["line"], r["metric"], r["state"], r["value"]) for r in rows] == [
        (1, "tool_call_f1", "scored", 1.0), (1, "tool_call_accuracy", "scored", 1.0),
        (2, "tool_call_f1", "errored", None), (2, "tool_call_accuracy", "errored", None),
        (3, "tool_call_f1", "scored", 0.0), (3, "tool_call_accuracy", "scored", 0.0),
        (4, "tool_call_f1", "errored", None), (4, "tool_call_accuracy", "errored", None),
    ]
    assert [rows[2]["error_code"], rows[6]["error_code"]] == ["not_json", "invalid_sample"]
    assert rows[6]["error"] == "expected a MultiTurnSample object, got a list"
    assert rows[0]["key"] is None  # deterministic metrics are not cached
    assert json.loads(rows[0]["result"])["transcript_hash"] == rows[0]["transcript_hash"]


def test_score_batch_reads_traces_of_a_format_as_samples_without_references() -> None:
    table = batch([json.dumps(chat("Paris")), json.dumps([{"role": "nobody"}])])
    rows = score_batch(table, metrics=["tool_call_f1"], source="openai_chat").to_pylist()
    assert rows[0]["state"] == "unscorable"
    assert rows[0]["error"].startswith("the sample has no reference_tool_calls")
    assert (rows[1]["state"], rows[1]["error_code"]) == ("errored", "unknown_role")


def test_score_batch_refuses_unknown_metrics_and_judged_ones_without_a_judge() -> None:
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        score_batch(batch([]), metrics=["nope"])
    with pytest.raises(ValueError, match="need a judge"):
        score_batch(batch([]), metrics=[GOAL])


@pytest.fixture
def server() -> Iterator[object]:
    with goal_server() as state:
        yield state


def spec(server: object) -> OpenAIJudgeSpec:
    return OpenAIJudgeSpec("judge-model", base_url=server.base_url, timeout=10.0)  # type: ignore[attr-defined]


def test_score_batch_judges_with_the_cache_key_of_the_evaluation_runner(server) -> None:
    records = [json.dumps(sample(city)) for city in ("Paris", "Rome")]
    rows = score_batch(batch(records), metrics=[GOAL], judge=spec(server)).to_pylist()
    assert [(r["state"], r["value"]) for r in rows] == [("scored", 1.0), ("scored", 0.0)]
    assert len(server.requests) == 2
    judge = spec(server)()
    metric = JUDGED[GOAL](judge)
    for row, city in zip(rows, ("Paris", "Rome"), strict=True):
        from tracebridge import MultiTurnSample

        hashed = MultiTurnSample.model_validate(sample(city)).transcript_hash()
        assert row["transcript_hash"] == hashed
        assert row["key"] == cache_key(metric, judge_part(judge.name, judge.settings), hashed, {})
    cached = {rows[0]["key"]: (rows[0]["result"], rows[0]["scored_at"])}
    again = score_batch(batch(records), metrics=[GOAL], judge=spec(server),
                        cached=cached).to_pylist()
    assert len(server.requests) == 3  # only Rome asked again
    assert [r["cached"] for r in again] == [True, False]
    first = json.loads(again[0]["result"])
    assert first["details"]["cached"] == {"key": rows[0]["key"], "stored_at": rows[0]["scored_at"]}
    assert again[0]["value"] == 1.0


def test_a_judge_failure_is_errored_not_a_low_score(server) -> None:
    server.fail = "Rome"
    records = [json.dumps(sample(city)) for city in ("Paris", "Rome")]
    judge = OpenAIJudgeSpec("judge-model", base_url=server.base_url, max_retries=0)
    rows = score_batch(batch(records), metrics=[GOAL], judge=judge).to_pylist()
    assert [(r["state"], r["value"]) for r in rows] == [("scored", 1.0), ("errored", None)]
    assert "500" in rows[1]["error"]


def test_at_the_budget_boundary_the_rest_is_unrun_with_the_reason(server) -> None:
    records = [json.dumps(sample(city)) for city in ("Paris", "Rome", "Oslo", "Nice")]
    rows = score_batch(batch(records), metrics=[GOAL], judge=spec(server),
                       budget=Budget(max_requests=2), concurrency=1).to_pylist()
    assert len(server.requests) == 2
    assert [r["state"] for r in rows] == ["scored", "scored", "unrun", "unrun"]
    reason = "budget: the limit of 2 judge requests is reached (2 sent, 0 in flight)"
    assert [r["error"] for r in rows[2:]] == [reason, reason]
    assert rows[2]["value"] is None


def test_the_keeper_leases_in_chunks_that_shrink_near_the_limit() -> None:
    books = Allowances(Limits(max_requests=100), workers=2)
    assert books.lease(tokens=10, cost=0.0) == Lease(16, 160, 0.0)
    granted = [books.lease(10, 0.0) for _ in range(30)]
    counts = [g.requests for g in granted if isinstance(g, Lease)]
    assert sum(counts) == 84
    assert counts[-3:] == [1, 1, 1]
    assert granted[-1] == "the limit of 100 judge requests is reached (100 leased)"
    assert books.lease(10, 0.0) == granted[-1]  # final
    books.give_back(Lease(5, 50, 0.0))
    assert books.requests == 95
    assert books.lease(10, 0.0) == granted[-1]


def test_without_limits_the_keeper_leases_whole_chunks() -> None:
    books = Allowances(Limits(), workers=2)
    assert [books.lease(10, 0.0) for _ in range(2)] == [Lease(16, 160, 0.0)] * 2
    assert books.requests == 32


def test_the_keeper_counts_tokens_and_cost() -> None:
    books = Allowances(Limits(max_tokens=1000, max_cost=0.5), workers=1)
    assert books.lease(tokens=100, cost=0.01) == Lease(5, 500, 0.05)
    assert books.lease(tokens=100, cost=0.1) == Lease(2, 200, 0.2)
    refused = books.lease(tokens=400, cost=0.0)
    assert refused == ("the next request needs up to 400 tokens (estimated) and 300 of the "
                       "limit of 1,000 are left")


async def test_a_leasing_judge_sends_no_more_than_the_keeper_allows(server) -> None:
    books = Allowances(Limits(max_requests=3, prices=(("judge-model", Price(1.0, 2.0)),)), 1)

    async def lease(tokens: int, cost: float) -> Lease | str:
        return books.lease(tokens, cost)

    judge = LeasingJudge(spec(server)(), Limits(max_requests=3), lease)
    scorer = Scorer([GOAL], judge, concurrency=2)
    records = [json.dumps(sample(city)) for city in ("Paris", "Rome", "Oslo", "Nice", "Bonn")]
    rows = (await scorer.score_table(batch(records))).to_pylist()
    assert len(server.requests) == 3
    assert [r["state"] for r in rows].count("unrun") == 2
    unused = judge.unused()
    assert unused.requests == 0
    assert judge.leased == Lease(3, 3 * 120, 0.0)  # the server reports 120 tokens a request
    assert unused.tokens == books.tokens - 360


def test_the_keys_are_those_a_tracebridge_run_stores_in_its_cache(tmp_path, server) -> None:
    import sqlite3

    from evaluation_helpers import WITH_REFERENCE, case, run_cases, write_cases

    from tracebridge.evaluation.cases import load_cases

    path = write_cases(tmp_path, [case("a"), case("b", reference="Two tickets.")])
    database = tmp_path / "cache.sqlite"
    code, _, err = run_cases(path, tmp_path / "run", server.base_url, "--cache", str(database),
                             metrics=(WITH_REFERENCE,))
    assert code == 0, err
    with sqlite3.connect(database) as db:
        stored = sorted(key for (key,) in db.execute("SELECT key FROM results"))
    samples = [loaded.sample().model_dump(mode="json") for loaded in load_cases(str(path)).cases]
    rows = score_batch(batch([json.dumps(s) for s in samples]), metrics=[WITH_REFERENCE],
                       judge=spec(server)).to_pylist()
    assert len(stored) == 2
    assert sorted(row["key"] for row in rows) == stored
