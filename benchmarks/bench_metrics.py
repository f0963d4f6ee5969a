"""Time the deterministic tool-call metrics on long conversations.

    .venv/bin/python benchmarks/bench_metrics.py [--quick]

Calls over 5 tool names with 3 arguments each (``_inputs.tool_calls``). ``trajectory``: the
agent follows the reference in order, with one argument different in every third call, an
extra call and a missing one. ``shuffled``: the reference is the same calls (every third
changed) in random order, with identical calls repeated far apart, the worst case for the
ordered pairing. Prints the CPU time of one score per metric and size (scores back to back
for a budget of CPU time, after the samples are built and moved out of the garbage
collector's sight; see ``_timing``). A sample computes its transcript hash once, at its
first score; the ``first score`` rows time scoring a sample that has not been scored yet (a
fresh copy each run, the least of 7), hash included.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from _inputs import tool_calls
from _table import Row, quick_flag, show
from _timing import freeze, seconds_per_call

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import Metric, ToolCallAccuracy, ToolCallF1


def sample_of(calls: dict[str, Any]) -> MultiTurnSample:
    messages: list[Any] = [HumanMessage(content="go")]
    for k, call in enumerate(calls["predicted"]):
        messages.append(AIMessage(tool_calls=[ToolCall(id=f"c{k}", **call)]))
        messages.append(ToolMessage(content="ok", tool_call_id=f"c{k}"))
    reference = [ToolCall(**call) for call in calls["reference"]]
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def first_score_seconds(metric: Metric, sample: MultiTurnSample, runs: int = 7) -> float:
    """The least CPU time of a score of a copy of ``sample`` not scored yet (no hash)."""
    best = float("inf")
    for _ in range(runs):
        scored = sample.model_copy()  # a copy has no hash yet
        start = time.process_time()
        metric.score(scored)
        best = min(best, time.process_time() - start)
    return best


def run(quick: bool = False) -> list[Row]:
    metrics: list[Metric] = [ToolCallAccuracy(), ToolCallAccuracy(strict_order=False), ToolCallF1()]
    budget = 0.01 if quick else 0.2
    rows: list[Row] = []
    for order in ("trajectory", "shuffled"):
        for n in (5, 10) if quick else (10, 100, 1000):
            sample = sample_of(tool_calls(n, order))
            freeze()
            for metric in metrics:
                seconds = seconds_per_call(partial(metric.score, sample), budget)
                rows.append((f"{metric.name}, {order}, {n} calls", f"{seconds * 1e3:.3f} ms"))
            seconds = first_score_seconds(metrics[0], sample)
            rows.append(
                (f"{metrics[0].name}, {order}, {n} calls, first score", f"{seconds * 1e3:.3f} ms")
            )
    return rows


if __name__ == "__main__":
    show("metrics (CPU time per score)", run(quick_flag(__doc__ or "")))
