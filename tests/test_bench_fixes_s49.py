"""benchmarks: the side-by-side figures count what a user's call pays and what both sides
produce. The LangGraph input carries what a ChatOpenAI reply and ``add_messages`` give a
message; each metric has a row scoring a sample for the first time (its transcript hash
computed in the call); the floors run with the cycle collector paused as ours do; rates
divide by the messages produced, and sides producing different counts are an error row;
the import row is the import's CPU time, who goes first alternating; the input folder is
deleted at the end of a run.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
RAGAS_PYTHON = BENCHMARKS / ".ragas-venv" / "bin" / "python"
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

TOKEN_USAGE = {
    "completion_tokens": 20, "prompt_tokens": 300, "total_tokens": 320,
    "completion_tokens_details": {
        "accepted_prediction_tokens": 0, "audio_tokens": 0, "reasoning_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
    "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 0},
}
USAGE_METADATA = {
    "input_tokens": 300, "output_tokens": 20, "total_tokens": 320,
    "input_token_details": {"audio": 0, "cache_read": 0},
    "output_token_details": {"audio": 0, "reasoning": 0},
}
CALL = {"name": "search", "args": {"query": "lisbon 0", "limit": 5}, "id": "c0",
        "type": "tool_call"}
RAW_CALL = {"type": "function", "id": "c0",
            "function": {"name": "search", "arguments": '{"query": "lisbon 0", "limit": 5}'}}


def bench(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module(name)


def reply_without_id(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    data = dict(message["data"])
    return data.pop("id"), data


def test_langgraph_input_replies_are_chat_openai_1x_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = bench("_inputs", monkeypatch)
    messages = inputs.langgraph_dicts(5)
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai", "human"]
    run_id, reply = reply_without_id(messages[1])
    assert re.fullmatch(f"lc_run--{UUID4.pattern}-0", run_id)
    assert reply == {
        "content": "Looking up step 0.",
        "additional_kwargs": {"refusal": None},
        "response_metadata": {
            "token_usage": TOKEN_USAGE, "model_provider": "openai",
            "model_name": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_0ba0d124f1",
            "id": "chatcmpl-000001", "service_tier": "default", "finish_reason": "tool_calls",
            "logprobs": None,
        },
        "type": "ai", "name": None, "tool_calls": [CALL], "invalid_tool_calls": [],
        "usage_metadata": USAGE_METADATA,
    }
    answer = messages[3]["data"]
    assert answer["additional_kwargs"] == {"refusal": None}
    assert answer["response_metadata"]["finish_reason"] == "stop"
    for index in (0, 2, 4):  # add_messages gives each a uuid4
        assert UUID4.fullmatch(messages[index]["data"]["id"]), index


def test_langgraph_input_of_langchain_openai_0_3_keeps_the_raw_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = bench("_inputs", monkeypatch)
    messages = inputs.langgraph_dicts(5, "0.3")
    run_id, reply = reply_without_id(messages[1])
    assert re.fullmatch(f"run-{UUID4.pattern}-0", run_id)
    assert reply["additional_kwargs"] == {"tool_calls": [RAW_CALL], "refusal": None}
    assert "model_provider" not in reply["response_metadata"]
    assert reply["usage_metadata"] == USAGE_METADATA
    assert messages[3]["data"]["additional_kwargs"] == {"refusal": None}
    with pytest.raises(ValueError, match="unknown langchain-openai version '2'"):
        inputs.langgraph_dicts(5, "2")


@pytest.mark.parametrize(("kind", "hashes"), [("first_metric_f1", 3), ("metric_f1", 1)])
def test_a_first_score_computes_the_transcript_hash_in_every_call(
    monkeypatch: pytest.MonkeyPatch, kind: str, hashes: int
) -> None:
    import tracebridge.sample

    side = bench("_tracebridge_side", monkeypatch)
    inputs = bench("_inputs", monkeypatch)
    computed: list[int] = []
    real = tracebridge.sample.transcript_hash

    def counted(messages: Any) -> str:
        computed.append(len(messages))
        return real(messages)

    monkeypatch.setattr(tracebridge.sample, "transcript_hash", counted)
    work = side.prepare(kind, inputs.tool_calls(10, "trajectory"))
    values = [work().value for _ in range(3)]
    assert values == [6 / 11] * 3
    assert computed == [23] * hashes  # 1 question, 11 calls with their 11 results


def test_side_by_side_has_both_rows_for_every_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    side_by_side = bench("side_by_side", monkeypatch)
    metric_paths = [case.path for case, _ in side_by_side.cases(quick=True)
                    if case.unit == "sample" and case.n == 10]
    assert metric_paths == [
        f"{label}, {how}"
        for label in ("ToolCallAccuracy strict (trajectory)",
                      "ToolCallAccuracy strict (shuffled: worst case)",
                      "ToolCallAccuracy strict_order=False (shuffled)",
                      "ToolCallF1 (trajectory)")
        for how in ("sample scored before (hash computed once per sample)",
                    "first score of a sample (hash included)")
    ]
    first = next(case for case, _ in side_by_side.cases(quick=True)
                 if case.kind == "first_metric_f1")
    assert side_by_side.bar(first) == 1.0


def test_a_floor_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    side = bench("_tracebridge_side", monkeypatch)
    floors = bench("_floors", monkeypatch)
    seen: list[bool] = []

    class Recorder:
        def validate_python(self, data: Any) -> Any:
            seen.append(gc.isenabled())
            return data

        def dump_python(self, models: Any, **options: Any) -> Any:
            seen.append(gc.isenabled())
            return models

    monkeypatch.setitem(floors.FLOORS, "openai_chat", Recorder())
    assert gc.isenabled()
    side.prepare_floor("read_openai_chat", [])()
    write = side.prepare_floor("write_openai_chat", [])  # validates once, outside the timing
    write()
    assert seen == [False, True, False]
    assert gc.isenabled()


def test_rates_and_growth_divide_by_the_messages_produced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    side_by_side = bench("side_by_side", monkeypatch)
    small = side_by_side.Case("swarm to_messages", 100, "read_swarm", "ragas", "msgs",
                              messages=112, ours=[112e-6], theirs=[224e-6])
    large = side_by_side.Case("swarm to_messages", 10_000, "read_swarm", "ragas", "msgs",
                              messages=10_010, ours=[10_010e-6 * 1.5], theirs=[20_020e-6])
    assert side_by_side._figure(small, 112e-6, small.messages) == "1.00M msgs/s"
    assert side_by_side.growth([small, large]).splitlines() == [
        "per-message cost growth (tracebridge; bar: within 1.5x):",
        "  swarm to_messages: 1.50x  (112 -> 10,010 messages) ok; Ragas 1.00x",
    ]
    table = side_by_side.table([small]).splitlines()
    assert table[2].split()[:4] == ["swarm", "to_messages", "112", "1.00M"]


def test_sides_producing_different_counts_are_an_error_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    side_by_side = bench("side_by_side", monkeypatch)
    case = side_by_side.Case("swarm to_messages", 10, "read_swarm", "ragas", "msgs",
                             messages=14, peer_messages=13)
    assert side_by_side.count_error(case) == (
        "messages produced differ: tracebridge 14, Ragas 0.4.3 13"
    )
    floor = side_by_side.Case("galtea from_messages", 10, "write_galtea", "floor", "msgs",
                              messages=10, peer_messages=9)
    assert side_by_side.count_error(floor) == "messages produced differ: tracebridge 10, floor 9"
    uncounted = side_by_side.Case("rules alone", 10, "rules", "none", "msgs")
    assert side_by_side.count_error(uncounted) == "our call gave no list of messages to count"
    peer_uncounted = side_by_side.Case("swarm to_messages", 10, "read_swarm", "ragas", "msgs",
                                       messages=14)
    assert side_by_side.count_error(peer_uncounted) == (
        "Ragas 0.4.3 gave no list of messages to count"
    )
    peer_uncounted.peer_error = "not run (--no-ragas)"
    assert side_by_side.count_error(peer_uncounted) is None
    same = side_by_side.Case("swarm to_messages", 10, "read_swarm", "ragas", "msgs",
                             messages=14, peer_messages=14)
    assert side_by_side.count_error(same) is None
    score = side_by_side.Case("ToolCallF1", 10, "metric_f1", "ragas", "sample")
    assert side_by_side.count_error(score) is None


def test_every_case_counts_its_messages_on_our_side_and_the_floors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    side = bench("_tracebridge_side", monkeypatch)
    inputs = bench("_inputs", monkeypatch)
    worker = bench("_worker", monkeypatch)
    from tracebridge.adapters import openai_chat

    data = json.loads(json.dumps(inputs.sample_dicts(10)))
    for kind in ("sample_dicts", "sample_objects", "rules"):
        assert worker.messages_in(side.prepare(kind, data)()) == 9, kind
    trace = openai_chat.from_messages(inputs.conversation(10))
    for kind in ("read_openai_chat", "write_openai_chat"):
        assert worker.messages_in(side.prepare(kind, trace)()) == 9, kind
        assert worker.messages_in(side.prepare_floor(kind, trace)()) == 9, kind


def test_the_import_row_is_the_import_s_cpu_time_alternating_who_goes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    side_by_side = bench("side_by_side", monkeypatch)
    assert side_by_side.import_seconds(sys.executable, "sys") < 0.005  # no start-up
    order: list[str] = []

    def timed(python: Path | str, module: str) -> float:
        order.append(module)
        return 0.25 if module == "tracebridge" else 1.0

    monkeypatch.setattr(side_by_side, "import_seconds", timed)
    row = side_by_side._time_imports(2, Path("ragas-python"))
    assert order == ["tracebridge", "ragas", "ragas", "tracebridge"]
    assert (row.path, row.ours, row.theirs) == (
        "import (fresh interpreter, CPU time)", [0.25, 0.25], [1.0, 1.0]
    )


def test_side_by_side_deletes_its_input_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "side_by_side.py", "--quick", "--no-ragas", "--only", "galtea from"],
        cwd=BENCHMARKS, capture_output=True, text=True, timeout=120,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "galtea from_messages" in done.stdout
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.skipif(not RAGAS_PYTHON.exists(), reason="the Ragas virtualenv is not built")
def test_both_workers_produce_the_same_messages_from_the_langgraph_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = bench("_inputs", monkeypatch)
    worker = bench("_worker", monkeypatch)
    requests = []
    for version in ("1.x", "0.3"):
        path = inputs.write(tmp_path, f"langgraph_{version}", inputs.langgraph_dicts(10, version))
        requests.append({"op": "load", "case": version, "kind": "langgraph", "path": str(path)})
    calls = inputs.write(tmp_path, "calls", inputs.tool_calls(10, "trajectory"))
    for kind in ("metric_f1", "first_metric_f1"):
        requests.append({"op": "load", "case": kind, "kind": kind, "path": str(calls)})
    answers = []
    for python, script in ((sys.executable, "_tracebridge_side.py"),
                           (RAGAS_PYTHON, "_ragas_side.py")):
        side = worker.Worker(python, BENCHMARKS / script)
        try:
            answers.append([side.ask(**request) for request in requests])
        finally:
            side.close()
    expected = [{"ok": True, "produced": 9}] * 2 + [{"ok": True, "produced": None}] * 2
    assert answers == [expected, expected]
