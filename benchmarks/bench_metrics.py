"""Time the deterministic tool-call metrics on long conversations.

    .venv/bin/python benchmarks/bench_metrics.py [--quick]

Calls over 5 tool names with 3 arguments each (``_inputs.tool_calls``). ``trajectory``: the
agent follows the reference in order, with one argument different in every third call, an
extra call and a missing one. ``shuffled``: the reference is the same calls (every third
changed) in random order, with identical calls repeated far apart, the worst case for the
ordered pairing. Prints the median of 5 runs per metric and size. A sample computes its
transcript hash once, at its first score; the ``first score`` rows time scoring a sample
that has not been scored yet (a fresh copy each run), hash included.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from _inputs import tool_calls
from _table import Row, quick_flag, show

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import Metric, ToolCallAccuracy, ToolCallF1


def sample_of(calls: dict[str, Any]) -> MultiTurnSample:
    messages: list[Any] = [HumanMessage(content="go")]
    for k, call in enumerate(calls["predicted"]):
        messages.append(AIMessage(tool_calls=[ToolCall(id=f"c{k}", **call)]))
        messages.append(ToolMessage(content="ok", tool_call_id=f"c{k}"))
    reference = [ToolCall(**call) for call in calls["reference"]]
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def median_seconds(
    metric: Metric, sample: MultiTurnSample, runs: int = 5, fresh: bool = False
) -> float:
    times = []
    for _ in range(runs):
        scored = sample.model_copy() if fresh else sample  # a copy has no hash yet
        start = time.perf_counter()
        metric.score(scored)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(quick: bool = False) -> list[Row]:
    metrics: list[Metric] = [ToolCallAccuracy(), ToolCallAccuracy(strict_order=False), ToolCallF1()]
    rows: list[Row] = []
    for order in ("trajectory", "shuffled"):
        for n in (5, 10) if quick else (10, 100, 1000):
            sample = sample_of(tool_calls(n, order))
            for metric in metrics:
                seconds = median_seconds(metric, sample)
                rows.append((f"{metric.name}, {order}, {n} calls", f"{seconds * 1e3:.3f} ms"))
            seconds = median_seconds(metrics[0], sample, fresh=True)
            rows.append(
                (f"{metrics[0].name}, {order}, {n} calls, first score", f"{seconds * 1e3:.3f} ms")
            )
    return rows


if __name__ == "__main__":
    show("metrics (median of 5)", run(quick_flag(__doc__ or "")))
