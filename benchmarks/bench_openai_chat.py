"""openai_chat and swarm adapter speed: messages per second each way.

    python benchmarks/bench_openai_chat.py

The history is the golden ``parallel_calls`` and ``malformed_arguments`` runs repeated to
about 1000 messages (full ``ChatCompletionMessage`` dumps with their nulls, parallel tool
calls, a compact argument string kept verbatim, an invalid-arguments call), with call ids
renumbered so that they stay unique. Each figure is the best of 5 runs. ``to_messages``
includes the conversation rules; ``from_messages`` writes the dicts back (equal to the input).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracebridge.adapters import openai_chat, swarm

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"


def repeated(paths: list[Path], size: int) -> list[dict[str, Any]]:
    """Whole copies of the golden histories until ``size`` messages, call ids made unique."""
    pieces = [json.loads(p.read_text(encoding="utf-8"))["trace"] for p in paths]
    trace: list[dict[str, Any]] = []
    copy_number = 0
    while len(trace) < size:
        for piece in pieces:
            copy_number += 1
            for message in copy.deepcopy(piece):
                for call in message.get("tool_calls") or []:
                    call["id"] = f"{call['id']}_{copy_number}"
                if "tool_call_id" in message:
                    message["tool_call_id"] = f"{message['tool_call_id']}_{copy_number}"
                trace.append(message)
    return trace


def rate(work: Callable[[], object], messages: int) -> float:
    best = min(timed(work) for _ in range(5))
    return messages / best


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def bench(name: str, adapter: Any, trace: list[dict[str, Any]]) -> None:
    typed = adapter.to_messages(trace)
    assert adapter.from_messages(typed) == trace
    read = rate(lambda: adapter.to_messages(trace), len(trace))
    write = rate(lambda: adapter.from_messages(typed), len(trace))
    print(
        f"{name:<12} {len(trace):>5} msgs   to_messages {read:>9,.0f} msgs/s   "
        f"from_messages {write:>9,.0f} msgs/s"
    )


def main() -> None:
    chat = repeated(
        [
            GOLDEN / "openai_chat" / "parallel_calls.json",
            GOLDEN / "openai_chat" / "malformed_arguments.json",
        ],
        1000,
    )
    bench("openai_chat", openai_chat, chat)
    bench("swarm", swarm, repeated(sorted((GOLDEN / "swarm").glob("*.json")), 1000))


if __name__ == "__main__":
    main()
