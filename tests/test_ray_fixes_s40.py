"""``tracebridge.ray_data`` reads and scores what the command line reads and scores, the same
way: a sample read as ``tracebridge`` keeps its references; a record after the first ones is
told apart as the command line tells it; a raising judge is ``errored``; a budget leaves the
cache keys alone; every tag ``read_traces`` gives is readable; a bad item of a file read whole
keeps its own code; a wrong request raises before any row; and concurrent jobs of two workers
spend the whole budget.

Most tests call the functions ``read_traces`` runs on Ray's workers (``_ranges``,
``_read_ranges``, ``_documents``) in this process; one starts a small Ray cluster.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pytest
from cli_helpers import run
from ray_helpers import GOAL, sample, write_jsonl

from tracebridge import MultiTurnSample, convert
from tracebridge._cli_commands import to_json
from tracebridge._cli_input import WHOLE_FILE
from tracebridge.errors import FormatError
from tracebridge.evaluation.budget import Budget
from tracebridge.evaluation.cache import cache_key, judge_part
from tracebridge.metrics.base import Usage
from tracebridge.metrics.cli import JUDGED
from tracebridge.metrics.judge import JudgeReply, JudgeRequest
from tracebridge.ray_data import _cluster, convert_batch, score_batch
from tracebridge.ray_data._lease import Allowances, Lease, LeasingJudge, Limits
from tracebridge.ray_data._scoring import Scorer

ROOT = Path(__file__).resolve().parent.parent
EVENTS = [
    {"event": "AgentInput", "data": {"input": [{"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "text", "text": "hi"}]}], "current_agent_name": "a"}},
    {"event": "AgentOutput", "data": {"response": {"role": "assistant", "additional_kwargs": {},
                                                   "blocks": [{"block_type": "text",
                                                               "text": "hello"}]},
                                      "tool_calls": [], "raw": None, "current_agent_name": "a"}},
]
"""A LlamaIndex AgentWorkflow event stream: a user's "hi" and the agent's "hello"."""


def plain(number: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"hi {number}"}, {"role": "assistant", "content": "hello"}]


SENDER = [{"role": "user", "content": "hi"},
          {"role": "assistant", "content": "hello", "sender": "Agent A"}]
"""A Swarm reply: its ``sender`` has no place in OpenAI chat."""
ANNOTATED = [{"role": "user", "content": "hi", "metadata": {"page": "ctx"}},
             {"role": "assistant", "content": "hello"}]
"""A turn's ``metadata``: OpenAI chat (an unknown key) and Galtea read it differently."""
OUTSIDE = ("it has the shape of swarm or galtea, not of openai_chat, which this file is read as "
           "(told from its first 32 records); one file holds one format: pass --from FORMAT")
AMBIGUOUS = ("ambiguous trace: it has the shape of openai_chat and galtea, and they read it "
             "differently (openai_chat reads 2 message(s), keeping metadata['openai_chat']; "
             "galtea reads 2 message(s), keeping metadata['galtea']); pass --from with one of "
             "them")


def read_here(path: Path, source: str = "auto", block_bytes: int = 1 << 20) -> pa.Table:
    """What ``read_traces(path)`` gives, read by its own functions in this process."""
    told = _cluster._told(str(path), source, None)
    if told.shape == "jsonl" and told.format != WHOLE_FILE:
        pieces = list(_cluster._ranges(str(path), told, block_bytes))
        return pa.concat_tables(
            [_cluster._read_ranges(pa.Table.from_pylist([piece])) for piece in pieces])
    return _cluster._table(_cluster._documents(str(path), source, told.format))


def cli_errors(tmp_path: Path, path: Path, target: str) -> list[tuple[int, str, str]]:
    """(line, code, message) of what ``tracebridge convert --keep-going`` refuses."""
    errors = tmp_path / "errors.jsonl"
    run("convert", str(path), "--to", target, "--keep-going", "--errors", str(errors),
        "-o", str(tmp_path / "out.jsonl"))
    return [(e["line"], e["code"], e["message"])
            for e in map(json.loads, errors.read_text().splitlines())]


def failed(out: pa.Table) -> list[tuple[int, str, str]]:
    return [(r["line"], r["error_code"], r["error_message"]) for r in out.to_pylist()
            if r["error_code"] is not None]


class GoalJudge:
    """A judge of our own: the goal is achieved when the transcript mentions Paris."""

    name = "goal-judge"

    def __init__(self) -> None:
        self.asked = 0

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        self.asked += 1
        data = {"user_goal": "g", "end_state": "e", "reason": "[1] r",
                "achieved": "Paris" in request.prompt}
        return JudgeReply(request.answer.model_validate(data), Usage(requests=1))


class BrokenJudge:
    name = "broken-judge"

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        raise RuntimeError("connection pool exploded")


def table(records: list[Any], sources: list[str] | None = None) -> pa.Table:
    columns: dict[str, Any] = {"record": [json.dumps(r) for r in records],
                               "line": list(range(1, len(records) + 1))}
    if sources is not None:
        columns["source"] = sources
    return pa.table(columns)


# --- 1. a tracebridge record that is a sample keeps its references -----------------------------


@pytest.mark.parametrize("source", ["auto", "tracebridge"])
def test_a_sample_read_as_tracebridge_is_scored_with_its_references(source: str) -> None:
    records = [sample("Paris"), sample("Rome")]
    rows = score_batch(table(records, ["tracebridge", "tracebridge"]),
                       metrics=["tool_call_f1"], source=source).to_pylist()
    assert [(r["state"], r["value"], r["error"]) for r in rows] == [
        ("scored", 1.0, None), ("scored", 0.0, None)]
    as_samples = score_batch(table(records), metrics=["tool_call_f1"]).to_pylist()
    assert [r["result"] for r in rows] == [r["result"] for r in as_samples]


def test_a_sample_told_as_tracebridge_gives_the_role_of_its_rubrics_to_the_judge() -> None:
    prompts: list[str] = []

    class RoleJudge:
        name = "role-judge"

        async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
            prompts.append(request.prompt)
            verdict = {"message_index": 1, "reason": "r", "verdict": "pirate" in request.prompt}
            return JudgeReply(request.answer.model_validate({"verdicts": [verdict]}),
                              Usage(requests=1))

    pirate = {"messages": [{"type": "system", "content": "You are a helpful assistant."},
                           {"type": "ai", "content": "Arr, matey!"}],
              "rubrics": {"role": "a pirate who only speaks like a pirate"}}
    rows = score_batch(table([pirate], ["tracebridge"]), metrics=["role_adherence"],
                       judge=RoleJudge(), source="auto").to_pylist()
    assert (rows[0]["state"], rows[0]["value"]) == ("scored", 1.0)
    assert "a pirate who only speaks like a pirate" in prompts[0]


# --- 2. records after the first ones are told apart as the command line does ------------------


def test_a_jsonl_record_of_another_shape_after_the_head_fails_as_on_the_command_line(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [*map(plain, range(40)), SENDER, ANNOTATED])
    rows = read_here(path)
    assert rows.column("source").to_pylist() == ["openai_chat"] * 42
    out = convert_batch(rows, target="langchain")
    expected = [(41, "unknown_format", OUTSIDE), (42, "unknown_format", AMBIGUOUS)]
    assert failed(out) == expected
    assert cli_errors(tmp_path, path, "langchain") == expected
    # cut into many ranges, each read on its own: the same
    assert failed(convert_batch(read_here(path, block_bytes=100), target="langchain")) == expected
    scored = score_batch(rows, metrics=["tool_call_f1"], source="auto").to_pylist()
    assert [(r["line"], r["state"], r["error_code"], r["error"]) for r in scored[40:]] == [
        (41, "errored", "unknown_format", OUTSIDE), (42, "errored", "unknown_format", AMBIGUOUS)]


def test_the_told_apart_problem_stands_for_the_told_format_only(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [*map(plain, range(40)), SENDER])
    out = convert_batch(read_here(path), source="swarm", target="tracebridge").to_pylist()
    assert out[40]["error_code"] is None  # read as swarm, as ``--from swarm`` reads it
    assert json.loads(out[40]["output"])[1]["name"] == "Agent A"


def test_an_array_element_of_another_shape_fails_as_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "arr.json"
    path.write_text(json.dumps([*map(plain, range(35)), SENDER]), encoding="utf-8")
    out = convert_batch(read_here(path), target="tracebridge")
    assert failed(out) == [(1, "unknown_format", OUTSIDE)]
    assert out.column("error_code").to_pylist()[:35] == [None] * 35
    assert cli_errors(tmp_path, path, "tracebridge") == [(1, "unknown_format", OUTSIDE)]


# --- 4. a raising judge is errored --------------------------------------------------------------


def test_a_judge_that_raises_makes_the_row_errored_as_tracebridge_score_does() -> None:
    rows = score_batch(table([sample("Paris")]), metrics=[GOAL], judge=BrokenJudge).to_pylist()
    assert [(r["state"], r["value"], r["error"]) for r in rows] == [
        ("errored", None, "RuntimeError: connection pool exploded")]
    assert json.loads(rows[0]["result"])["error"] == "RuntimeError: connection pool exploded"


# --- 5. a budget leaves the cache keys alone ------------------------------------------------------


def test_a_budget_does_not_change_the_cache_key_of_a_custom_judge() -> None:
    records = table([sample("Paris")])
    free = score_batch(records, metrics=[GOAL], judge=GoalJudge).to_pylist()[0]
    budgeted = score_batch(records, metrics=[GOAL], judge=GoalJudge,
                           budget=Budget(max_requests=10)).to_pylist()[0]
    hashed = MultiTurnSample.model_validate(sample("Paris")).transcript_hash()
    runner_key = cache_key(JUDGED[GOAL](GoalJudge()), judge_part("goal-judge", {}), hashed, {})
    assert free["key"] == budgeted["key"] == runner_key
    again = score_batch(records, metrics=[GOAL], judge=GoalJudge, budget=Budget(max_requests=10),
                        cached={free["key"]: (free["result"], free["scored_at"])}).to_pylist()
    assert (again[0]["cached"], again[0]["value"]) == (True, 1.0)


# --- 6. every tag read_traces gives is read ------------------------------------------------------


def test_an_event_stream_told_by_read_traces_converts_and_scores(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "events.jsonl", [EVENTS, EVENTS])
    rows = read_here(path)
    assert rows.column("source").to_pylist() == ["llama_index_events"] * 2
    out = convert_batch(rows, target="tracebridge").to_pylist()
    code, written, err = run("convert", str(path), "--to", "tracebridge")
    assert code == 0, err
    assert [r["error_code"] for r in out] == [None, None]
    assert [json.loads(r["output"]) for r in out] == list(map(json.loads, written.splitlines()))
    scored = score_batch(rows, metrics=["tool_call_f1"], source="auto").to_pylist()
    assert [(r["state"], r["error"]) for r in scored] == [
        ("unscorable", "the sample has no reference_tool_calls (None); give [] to expect no "
                       "calls")] * 2


def test_an_event_stream_named_as_the_source_converts(tmp_path: Path) -> None:
    # source="llama_index_events" given, not told: its options are the LlamaIndex reader's
    rows = pa.table({"record": [json.dumps(EVENTS)]})
    out = convert_batch(rows, source="llama_index_events", target="tracebridge").to_pylist()
    path = write_jsonl(tmp_path / "events.jsonl", [EVENTS])
    code, written, err = run("convert", str(path), "--from", "llama_index_events", "--to",
                             "tracebridge")
    assert code == 0, err
    assert [(r["error_code"], json.loads(r["output"])) for r in out] == [
        (None, json.loads(written))]
    with pytest.raises(ValueError, match=r"^source_options: allow_pending") as caught:
        convert_batch(rows, source="llama_index_events", target="tracebridge",
                      source_options={"allow_pending": "x"})
    assert str(caught.value) == "source_options: allow_pending takes True or False, got 'x'"


def test_a_sample_row_tagged_sample_converts_whole(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "samples.jsonl", [sample("Paris")])
    rows = read_here(path, source="sample")
    assert rows.column("source").to_pylist() == ["sample"]
    out = convert_batch(rows, target="tracebridge").to_pylist()
    assert out[0]["error_code"] is None
    assert json.loads(out[0]["output"]) == to_json(
        "tracebridge", convert(sample("Paris"), source="tracebridge", target="tracebridge"))
    refused = convert_batch(rows, target="openai_chat").to_pylist()[0]
    assert (refused["error_code"], refused["error_path"]) == (
        "not_representable", "reference_tool_calls")


# --- 7. a bad item of a file read whole keeps its code --------------------------------------------


def test_a_bad_line_of_an_otel_jsonl_file_is_not_json_as_on_the_command_line(
    tmp_path: Path,
) -> None:
    golden = json.loads((ROOT / "golden_traces/otel/openai_v2_tool_loop.json").read_text())
    path = tmp_path / "otel.jsonl"
    path.write_text(json.dumps(golden["trace"]) + "\n{broken\n", encoding="utf-8")
    out = convert_batch(read_here(path), target="tracebridge")
    message = ("not valid JSON: Expecting property name enclosed in double quotes: line 1 "
               "column 2 (char 1)")
    assert failed(out) == [(2, "not_json", message)]
    assert cli_errors(tmp_path, path, "tracebridge") == [(2, "not_json", message)]
    scored = score_batch(read_here(path), metrics=["tool_call_f1"], source="auto").to_pylist()
    assert [(r["state"], r["error_code"], r["error"]) for r in scored] == [
        ("errored", "not_json", message)]


# --- 8. a wrong request raises before any row -----------------------------------------------------


@pytest.mark.parametrize(("options", "message"), [
    ({"target": "openai_chat", "target_options": {"drop": "is_error"}},
     "target_options: drop takes a list of names from is_error, reasoning, mime_types, "
     "refusals, citations, custom_calls, unanswered_calls, opaque_parts, audio_parts, got "
     "'is_error'"),
    ({"target": "openai_chat", "target_options": {"foo": 1}},
     "target_options: openai_chat's writer has no option 'foo' (known: drop)"),
    ({"target": "langchain", "target_options": {"form": "xyz"}},
     "target_options: form takes one of messages, dicts, model_dump, state, got 'xyz'"),
    ({"target": "openai_chat", "source": "openai_chat",
      "source_options": {"allow_pending": "yes"}},
     "source_options: allow_pending takes True or False, got 'yes'"),
    ({"target": "openai_chat", "source_options": {"bogus": True}},
     "source_options: no format's reader has the option 'bogus' (known: allow_pending, "
     "drop_artifacts, session_id, span_id, trace_id)"),
])
def test_convert_batch_refuses_wrong_options_at_once(options: dict[str, Any], message: str
                                                     ) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        convert_batch(table([plain(1)]), **options)


def test_good_options_still_convert() -> None:
    out = convert_batch(table([plain(1)]), target="openai_chat",
                        target_options={"drop": ["is_error"]},
                        source_options={"allow_pending": False}).to_pylist()
    assert out[0]["error_code"] is None


def test_scoring_refuses_an_unknown_source_and_no_concurrency_at_once() -> None:
    with pytest.raises(FormatError, match="unknown format 'bogus'"):
        score_batch(table([]), metrics=["tool_call_f1"], source="bogus")
    ds = cast(Any, None)  # refused before the dataset is looked at
    with pytest.raises(FormatError, match="unknown format 'bogus'"):
        _cluster.score(ds, ["tool_call_f1"], source="bogus")
    with pytest.raises(ValueError, match=r"^concurrency must be 1 or more, got 0$"):
        _cluster.score(ds, ["tool_call_f1"], concurrency=0)


# --- 3. concurrent jobs of two workers spend the whole budget -------------------------------------


async def test_two_busy_workers_spend_the_whole_budget_between_them() -> None:
    limits = Limits(max_requests=100)
    books = Allowances(limits, workers=2)
    granted: list[int | str] = []

    async def lease(tokens: int, cost: float) -> Lease | str:
        await asyncio.sleep(0.005)  # the keeper answers later, as an actor does
        answer = books.lease(tokens, cost)
        granted.append(answer.requests if isinstance(answer, Lease) else answer)
        return answer

    judges = [GoalJudge(), GoalJudge()]
    leasing = [LeasingJudge(judge, limits, lease) for judge in judges]
    records = [sample(f"City{i}") for i in range(120)]

    async def worker(index: int) -> list[str]:
        scorer = Scorer([GOAL], leasing[index], concurrency=16)
        out = await scorer.score_table(table(records[60 * index:60 * (index + 1)]))
        return cast(list[str], out.column("state").to_pylist())

    states = [state for part in await asyncio.gather(worker(0), worker(1)) for state in part]
    assert states.count("scored") == 100
    assert states.count("unrun") == 20
    assert judges[0].asked + judges[1].asked == 100
    assert sum(g for g in granted if isinstance(g, int)) == 100
    assert granted[:3] == [16, 16, 16]  # one lease at a time per worker, each a chunk


# --- on Ray -----------------------------------------------------------------------------------


@pytest.mark.ray
def test_on_ray_every_told_problem_is_a_row_error(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    import ray

    from tracebridge.ray_data import init_local, read_traces

    mixed = write_jsonl(tmp_path / "mixed.jsonl", [*map(plain, range(40)), SENDER, ANNOTATED])
    events = write_jsonl(tmp_path / "events.jsonl", [EVENTS])
    init_local(num_cpus=2)
    try:
        ds = read_traces([str(mixed), str(events)])
        rows = ds.map_batches(convert_batch, fn_kwargs={"target": "tracebridge"},
                              batch_format="pyarrow").take_all()
    finally:
        ray.shutdown()
    errors = sorted((Path(r["file"]).name, r["line"], r["error_code"], r["error_message"])
                    for r in rows if r["error_code"] is not None)
    assert errors == [("mixed.jsonl", 41, "unknown_format", OUTSIDE),
                      ("mixed.jsonl", 42, "unknown_format", AMBIGUOUS)]
    assert len(rows) == 43
