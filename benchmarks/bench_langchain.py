"""langchain adapter speed: messages per second each way, for objects, dicts and flat dumps.

    .venv/bin/python benchmarks/bench_langchain.py [--quick]

The trace is every valid golden LangGraph run in golden_traces/langchain/ (parallel calls,
a tool error, two turns, system + developer prompts, Anthropic content blocks and an
Anthropic-format history, a refusal, an image with detail, invalid calls, an aggregated chunk)
repeated to about 1000 messages, with message and call ids renumbered so that they stay
unique; the runs that end with a pending call are left out so that the whole trace is valid.
Each figure is the best of 5 runs. ``to_messages`` includes the conversation rules;
``from_messages`` builds ``BaseMessage`` objects (equal, by ``messages_to_dict``, to the input).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _table import Row, quick_flag, show
from langchain_core.messages import messages_from_dict, messages_to_dict

from tracebridge.adapters import langchain

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"


def renumbered(text: str, ids: list[str], copy_number: int) -> str:
    for old in ids:
        text = text.replace(json.dumps(old), json.dumps(f"{old}#{copy_number}"))
    return text


def repeated(size: int) -> list[dict[str, Any]]:
    """Whole copies of the complete golden runs until ``size`` messages, ids made unique."""
    pieces = []
    for path in sorted(GOLDEN.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("to_options"):
            continue  # ends with a pending call; only valid at the end of a trace
        pieces.append(case["trace"])
    trace: list[dict[str, Any]] = []
    copy_number = 0
    while len(trace) < size:
        for piece in pieces:
            copy_number += 1
            ids = [m["data"]["id"] for m in piece if m["data"]["id"]]
            ids += [
                c["id"]
                for m in piece
                for key in ("tool_calls", "invalid_tool_calls")
                for c in m["data"].get(key, [])
                if c.get("id")
            ]
            ids += [  # calls only an Anthropic tool_use block names
                block["id"]
                for m in piece
                if isinstance(m["data"]["content"], list)
                for block in m["data"]["content"]
                if isinstance(block, dict) and block.get("type") == "tool_use"
            ]
            trace.extend(json.loads(renumbered(json.dumps(piece), ids, copy_number)))
    return trace


def rate(work: Callable[[], object], messages: int) -> float:
    return messages / min(timed(work) for _ in range(5))


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run(quick: bool = False) -> list[Row]:
    dicts = repeated(50 if quick else 1000)
    objects = messages_from_dict(dicts)
    dumps = [message.model_dump() for message in objects]
    typed = langchain.to_messages(objects)
    assert messages_to_dict(langchain.from_messages(typed)) == dicts
    figures = {
        "to_messages (BaseMessage objects)": rate(
            lambda: langchain.to_messages(objects), len(dicts)
        ),
        "to_messages (messages_to_dict dicts)": rate(
            lambda: langchain.to_messages(dicts), len(dicts)
        ),
        "to_messages (model_dump dicts)": rate(lambda: langchain.to_messages(dumps), len(dicts)),
        "from_messages (BaseMessage objects)": rate(
            lambda: langchain.from_messages(typed), len(dicts)
        ),
        "from_messages (dicts)": rate(
            lambda: langchain.from_messages(typed, form="dicts"), len(dicts)
        ),
    }
    return [(f"{label}, {len(dicts)} messages", f"{value:,.0f} msgs/s")
            for label, value in figures.items()]


if __name__ == "__main__":
    show("langchain (best of 5)", run(quick_flag(__doc__ or "")))
