"""openai_chat and swarm adapter speed: messages per second each way.

    .venv/bin/python benchmarks/bench_openai_chat.py [--quick]

The history is the golden ``parallel_calls`` and ``malformed_arguments`` runs repeated to
about 1000 messages (full ``ChatCompletionMessage`` dumps with their nulls, parallel tool
calls, a compact argument string kept verbatim, an invalid-arguments call), with call ids
renumbered so that they stay unique. Each figure is the best of 5 runs. ``to_messages``
includes the conversation rules; ``from_messages`` writes the dicts back (equal to the input).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from _inputs import GOLDEN, repeated
from _table import Row, quick_flag, show

from tracebridge.adapters import openai_chat, swarm


def rate(work: Callable[[], object], messages: int) -> float:
    best = min(timed(work) for _ in range(5))
    return messages / best


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def bench(name: str, adapter: Any, trace: list[dict[str, Any]]) -> list[Row]:
    typed = adapter.to_messages(trace)
    assert adapter.from_messages(typed) == trace
    read = rate(lambda: adapter.to_messages(trace), len(trace))
    write = rate(lambda: adapter.from_messages(typed), len(trace))
    return [
        (f"{name} to_messages, {len(trace)} messages", f"{read:,.0f} msgs/s"),
        (f"{name} from_messages, {len(trace)} messages", f"{write:,.0f} msgs/s"),
    ]


def run(quick: bool = False) -> list[Row]:
    size = 50 if quick else 1000
    chat = repeated(
        [
            GOLDEN / "openai_chat" / "parallel_calls.json",
            GOLDEN / "openai_chat" / "malformed_arguments.json",
        ],
        size,
    )
    swarm_trace = repeated(sorted((GOLDEN / "swarm").glob("*.json")), size)
    return bench("openai_chat", openai_chat, chat) + bench("swarm", swarm, swarm_trace)


if __name__ == "__main__":
    show("openai_chat and swarm (best of 5)", run(quick_flag(__doc__ or "")))
