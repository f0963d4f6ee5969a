"""Core speed: MultiTurnSample validation of a 101-message conversation with tool calls.

    .venv/bin/python benchmarks/bench_core.py [--quick]

Prints messages per second for validation from JSON-ready dicts and from message objects,
the cost of the rules pass alone on growing conversations (it should stay flat per
message: one linear pass), ``render`` of a message holding a run of n and then 10n blank
lines (its growth should be near 1: linear), and the time to ``import tracebridge`` in a
fresh process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from _table import Row, growth_rows, quick_flag, show

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    render,
    validate,
)


def conversation_dicts(turns: int) -> list[dict[str, Any]]:
    """1 user message, then ``turns`` x (assistant tool call, tool result): 1 + 2*turns."""
    messages: list[dict[str, Any]] = [{"type": "human", "content": "Plan my trip to Lisbon."}]
    for i in range(turns):
        messages.append(
            {
                "type": "ai",
                "content": f"Step {i}: looking it up.",
                "tool_calls": [
                    {"name": "search", "args": {"query": f"lisbon {i}", "limit": 5}, "id": f"c{i}"}
                ],
            }
        )
        messages.append(
            {"type": "tool", "content": f"result {i}", "tool_call_id": f"c{i}", "name": "search"}
        )
    return messages


def conversation_objects(turns: int) -> list[Any]:
    out: list[Any] = [HumanMessage(content="Plan my trip to Lisbon.")]
    for i in range(turns):
        call = ToolCall(name="search", args={"query": f"lisbon {i}", "limit": 5}, id=f"c{i}")
        out.append(AIMessage(content=f"Step {i}: looking it up.", tool_calls=[call]))
        out.append(ToolMessage(content=f"result {i}", tool_call_id=f"c{i}", name="search"))
    return out


def rate(work: Callable[[], object], messages: int, seconds: float = 1.0) -> float:
    """Best-of-5 messages per second."""
    rates = []
    for _ in range(5):
        loops, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 5:
            work()
            loops += 1
        rates.append(loops * messages / elapsed)
    return max(rates)


def run(quick: bool = False) -> list[Row]:
    seconds = 0.05 if quick else 1.0
    dicts, objects = conversation_dicts(50), conversation_objects(50)
    assert len(dicts) == len(objects) == 101
    from_dicts = rate(lambda: MultiTurnSample.model_validate({"messages": dicts}), 101, seconds)
    from_objects = rate(lambda: MultiTurnSample(messages=objects), 101, seconds)
    rows: list[Row] = [
        ("MultiTurnSample from dicts, 101 messages", f"{from_dicts / 1e6:.2f} M msgs/s"),
        ("MultiTurnSample from objects, 101 messages", f"{from_objects / 1e6:.2f} M msgs/s"),
    ]
    # the rules pass alone: its per-message cost should stay flat as the conversation grows
    for turns in (5, 50) if quick else (50, 500, 5_000, 50_000):
        msgs = conversation_objects(turns)
        per_second = rate(lambda msgs=msgs: validate(msgs), len(msgs), seconds)  # type: ignore[misc]
        rows.append((f"rules pass (validate), {len(msgs)} messages",
                     f"{per_second / 1e6:.2f} M msgs/s"))
    rows += blank_line_rows(quick, seconds)
    runs = 1 if quick else 5
    times, baseline = [], []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import tracebridge"], check=True)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append(time.perf_counter() - start)
    rows.append(("import tracebridge, fresh process (bare interpreter start)",
                 f"{statistics.median(times) * 1000:.0f} ms "
                 f"({statistics.median(baseline) * 1000:.0f} ms)"))
    return rows


def blank_line_rows(quick: bool, seconds: float) -> list[Row]:
    """``render`` of one message holding a run of blank lines, at n and 10n lines: the cost
    per line should not grow with the run."""
    sizes = (2_000, 20_000) if quick else (20_000, 200_000)
    rates = []
    for lines in sizes:
        message = [HumanMessage(content="\n" * lines + "x")]
        rates.append(rate(lambda message=message: render(message), lines, seconds))  # type: ignore[misc]
    return growth_rows({"render, blank lines": rates}, sizes, " lines", "lines")


if __name__ == "__main__":
    show("core", run(quick_flag(__doc__ or "")))
