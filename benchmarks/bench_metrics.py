"""Time the deterministic tool-call metrics on long conversations.

    /work/venv/bin/python benchmarks/bench_metrics.py

Each conversation has N tool calls over 5 tool names with 3 arguments each; the reference
is the same calls shuffled with one argument changed in every third call, so both pairings
do real work (no early exit on identical lists). Prints the median of 5 runs per metric.
"""

from __future__ import annotations

import random
import statistics
import time

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import Metric, ToolCallAccuracy, ToolCallF1


def conversation(n: int, seed: int = 7) -> MultiTurnSample:
    rng = random.Random(seed)
    calls = [
        ToolCall(
            name=f"tool_{rng.randrange(5)}",
            args={"query": f"q{rng.randrange(20)}", "limit": rng.randrange(3), "exact": True},
            id=f"c{k}",
        )
        for k in range(n)
    ]
    messages: list[object] = [HumanMessage(content="go")]
    for call in calls:
        messages += [AIMessage(tool_calls=[call]), ToolMessage(content="ok", tool_call_id=call.id)]
    reference = [
        ToolCall(name=c.name, args={**c.args, "limit": 99} if k % 3 == 0 else c.args)
        for k, c in enumerate(calls)
    ]
    rng.shuffle(reference)
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def median_seconds(metric: Metric, sample: MultiTurnSample, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        metric.score(sample)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    metrics: list[Metric] = [ToolCallAccuracy(), ToolCallAccuracy(strict_order=False), ToolCallF1()]
    print(f"{'calls':>6}  " + "  ".join(f"{m.name:>28}" for m in metrics))
    for n in (10, 50, 200):
        sample = conversation(n)
        cells = [f"{median_seconds(m, sample) * 1000:>25.1f} ms" for m in metrics]
        print(f"{n:>6}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
