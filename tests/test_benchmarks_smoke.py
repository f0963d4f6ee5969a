"""Every benchmark runs at tiny sizes and prints its table (how fast is not checked here).

``benchmarks/run_all.py --quick`` runs each ``bench_*.py``; ``side_by_side.py --quick
--no-ragas`` runs our side of the comparison and the pydantic floors (Ragas lives in its own
virtualenv, which the suite does not build); the Ragas worker's protocol is checked with our
interpreter, where Ragas is missing and must be reported as such, not crash the worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=BENCHMARKS, capture_output=True, text=True,
        input=stdin, timeout=120,
    )


def test_run_all_runs_every_benchmark_and_prints_one_table() -> None:
    done = run("run_all.py", "--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["benchmark", "case", "figure"]
    names = sorted(path.stem for path in BENCHMARKS.glob("bench_*.py"))
    assert len(names) >= 6
    for name in names:
        assert any(line.startswith(name + " ") for line in lines), name
    assert "FAILED" not in done.stdout


def test_side_by_side_runs_our_side_and_the_floors() -> None:
    done = run("side_by_side.py", "--quick", "--no-ragas")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for path in (
        "MultiTurnSample from dicts",
        "MultiTurnSample from objects",
        "rules alone (validate, sample objects)",
        "langchain to_messages (LangGraph, ChatOpenAI replies of langchain-openai 1.x)",
        "langchain to_messages (LangGraph, langchain-openai 0.3 replies: raw calls kept)",
        "swarm to_messages",
        "llama_index events_to_messages",
        "openai_chat to_messages",
        "galtea to_messages (role turns)",
        "llama_index to_messages (ChatMessage dumps)",
        "openai_chat from_messages",
        "swarm from_messages",
        "galtea from_messages",
        "llama_index from_messages",
        "ToolCallAccuracy strict (trajectory), sample scored before",
        "ToolCallAccuracy strict (trajectory), first score of a sample",
        "ToolCallAccuracy strict_order=False (shuffled), sample scored before",
        "ToolCallAccuracy strict_order=False (shuffled), first score of a sample",
        "ToolCallF1 (trajectory), sample scored before",
        "ToolCallF1 (trajectory), first score of a sample",
        "import (fresh interpreter, CPU time)",
    ):
        assert path in out, path
    assert "ERROR" not in out
    assert "floor: " in out
    assert "not run (--no-ragas)" in out
    assert "per-message cost growth" in out
    assert "metric rows: every score carries the sample's transcript hash" in out


def test_the_ragas_worker_answers_every_request_even_without_ragas(tmp_path: Path) -> None:
    data = tmp_path / "calls.json"
    data.write_text(json.dumps({"predicted": [], "reference": []}), encoding="utf-8")
    request = {"op": "load", "case": "c", "kind": "metric_f1", "path": str(data)}
    done = run("_ragas_side.py", stdin=json.dumps(request) + "\n")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer == {"error": "ModuleNotFoundError: No module named 'ragas'"}
