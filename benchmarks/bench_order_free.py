"""Time ``ToolCallAccuracy(strict_order=False)`` on many calls of one tool.

    .venv/bin/python benchmarks/bench_order_free.py [--quick]

The order-free pairing's hard inputs: every call of one tool, each side as long, with an id
no other call has, so no two calls are identical and the whole side is left to the
assignment. ``values=V``: arguments a, b, c drawn from V values (10: most pairs share one
argument; 1,000: few share any). ``mixed names``: each of 8 argument names present or not,
values from 5. ``dense``: 20 arguments from 2 values each, nearly every pair sharing about
half of them. ``hub``: every predicted call holds hot=1, one reference call in 50 does.
Prints the CPU time of one score, the least of 3 runs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from _table import Row, quick_flag, show

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import ToolCallAccuracy

Arguments = Callable[[random.Random, str], dict[str, Any]]


def values(count: int) -> Arguments:
    return lambda rng, tag: {key: rng.randrange(count) for key in "abc"}


def mixed_names(rng: random.Random, tag: str) -> dict[str, Any]:
    return {f"k{k}": rng.randrange(5) for k in range(8) if rng.random() < 0.5}


def dense(rng: random.Random, tag: str) -> dict[str, Any]:
    return {f"k{k}": rng.randrange(2) for k in range(20)}


def hub(rng: random.Random, tag: str) -> dict[str, Any]:
    hot = 1 if tag == "p" or rng.randrange(50) == 0 else 0
    return {"hot": hot, "a": rng.randrange(50), "b": rng.randrange(50)}


CASES: dict[str, Arguments] = {
    "values=10": values(10),
    "values=30": values(30),
    "values=1000": values(1000),
    "mixed names": mixed_names,
    "dense": dense,
    "hub": hub,
}


def sample_of(arguments: Arguments, n: int, seed: int = 1) -> MultiTurnSample:
    rng = random.Random(seed)
    messages: list[Any] = [HumanMessage(content="go")]
    for k in range(n):
        call = ToolCall(id=f"c{k}", name="t", args={**arguments(rng, "p"), "id": f"p{k}"})
        messages.append(AIMessage(tool_calls=[call]))
        messages.append(ToolMessage(content="ok", tool_call_id=f"c{k}"))
    reference = [ToolCall(name="t", args={**arguments(rng, "r"), "id": f"r{k}"}) for k in range(n)]
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def least_seconds(sample: MultiTurnSample, runs: int = 3) -> float:
    metric = ToolCallAccuracy(strict_order=False)
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        metric.score(sample)
        best = min(best, time.process_time() - start)
    return best


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    for name, arguments in CASES.items():
        for n in (40,) if quick else (100, 1000):
            seconds = least_seconds(sample_of(arguments, n))
            rows.append((f"{name}, {n} calls a side", f"{seconds * 1e3:.1f} ms"))
    return rows


if __name__ == "__main__":
    show(
        "ToolCallAccuracy(strict_order=False), one tool (least of 3)",
        run(quick_flag(__doc__ or "")),
    )
