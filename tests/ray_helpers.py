"""Samples, a judge server that answers from what it reads, and files of them, for the
tests of ``tracebridge.ray_data`` (and its benchmark)."""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_openai_server import FakeOpenAI, Reply, serve

GOAL = "agent_goal_accuracy_without_reference"


def chat(city: str, *, call: bool = True) -> list[dict[str, Any]]:
    """An OpenAI chat trace: a booking to ``city``, with one tool call and its result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Book a flight to {city}."}]
    if call:
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "book", "arguments": json.dumps({"to": city})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": f"booked {city}"},
        ]
    return [*messages, {"role": "assistant", "content": f"Booked to {city}."}]


def sample(city: str) -> dict[str, Any]:
    """A MultiTurnSample (as JSON) of ``chat(city)`` with the reference call to Paris."""
    from tracebridge import convert

    return {"messages": convert(chat(city), source="openai_chat", target="tracebridge"),
            "reference_tool_calls": [{"name": "book", "args": {"to": "Paris"}}]}


@dataclass
class GoalServer(FakeOpenAI):
    """Answers every goal request: achieved when the transcript mentions Paris.

    The answer depends only on the request, so any number of clients in any order get the
    same verdicts; ``fail`` makes every request containing that text a 500. ``times`` holds
    when each request arrived (``time.monotonic()``).
    """

    fail: str | None = None
    times: list[float] = field(default_factory=list)

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        prompt = body["messages"][-1]["content"]
        with self.lock:
            self.requests.append(body)
            self.times.append(time.monotonic())
        if self.fail is not None and self.fail in prompt:
            return Reply(status=500)
        achieved = "Paris" in prompt
        return Reply(content=json.dumps({
            "user_goal": "book a flight", "end_state": "booked" if achieved else "elsewhere",
            "reason": "[1] says so", "achieved": achieved}))


@contextlib.contextmanager
def goal_server() -> Iterator[GoalServer]:
    """A running ``GoalServer``."""
    running = serve(GoalServer())
    server = next(running)
    assert isinstance(server, GoalServer)
    try:
        yield server
    finally:
        running.close()


def write_jsonl(path: Path, records: list[Any], *, bad: dict[int, str] | None = None) -> Path:
    """``records`` one per line; ``bad`` puts a raw text line at those 1-based lines."""
    lines = [json.dumps(record) for record in records]
    for number, text in sorted((bad or {}).items()):
        lines.insert(number - 1, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def time_limited(seconds: int) -> Iterator[None]:
    """The block, stopped with ``TimeoutError`` after ``seconds`` (a hang, never a speed
    check: a Ray test's first call starts the cluster's workers)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
