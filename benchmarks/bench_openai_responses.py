"""Responses adapter speed on long replies: parts per second, and its growth with size.

    .venv/bin/python benchmarks/bench_openai_responses.py [--quick]

Two shapes a long agent reply takes: one assistant message item of many ``output_text``
parts, each with a ``url_citation`` (written back: ``from_messages`` places each citation on
its part), and a reply of many message items, each a preamble before a function call, then
every call's output (read: ``to_messages``). Each is timed at two sizes; the growth is the
cost per part (or item) at the larger size over the smaller one, which stays near 1 when the
cost is linear.
"""

from __future__ import annotations

from typing import Any

from _table import Row, growth_rows, quick_flag, show
from bench_core import rate  # best-of-5 items per second; run from this folder's script

from tracebridge.adapters import openai_responses

USER = {"role": "user", "content": "Where is Paris?"}


def cited_parts(n: int) -> list[dict[str, Any]]:
    """One assistant message of ``n`` cited text parts."""
    part = {"type": "output_text", "text": "Paris is in France. ", "annotations": [
        {"type": "url_citation", "url": "https://example.org/paris", "title": "Paris",
         "start_index": 0, "end_index": 5}]}
    return [USER, {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                   "content": [dict(part) for _ in range(n)]}]


def preambles(n: int) -> list[dict[str, Any]]:
    """A reply of ``n`` message items, each before its function call, then the outputs."""
    items: list[dict[str, Any]] = [USER]
    for i in range(n):
        items.append({"type": "message", "role": "assistant", "id": f"msg_{i}",
                      "content": [{"type": "output_text", "text": f"Step {i}.",
                                   "annotations": []}]})
        items.append({"type": "function_call", "call_id": f"c{i}", "name": "lookup",
                      "arguments": f'{{"step": {i}}}'})
    items += [{"type": "function_call_output", "call_id": f"c{i}", "output": f"done {i}"}
              for i in range(n)]
    return items


def run(quick: bool = False) -> list[Row]:
    seconds = 0.05 if quick else 1.0
    small, large = (50, 200) if quick else (500, 8000)
    rates: dict[str, list[float]] = {"write cited parts": [], "read message items": []}
    for n in (small, large):
        cited = cited_parts(n)
        typed = openai_responses.to_messages(cited)
        assert openai_responses.from_messages(typed) == cited
        rates["write cited parts"].append(
            rate(lambda m=typed: openai_responses.from_messages(m), n, seconds))  # type: ignore[misc]
        steps = preambles(n)
        assert openai_responses.from_messages(openai_responses.to_messages(steps)) == steps
        rates["read message items"].append(
            rate(lambda t=steps: openai_responses.to_messages(t), n, seconds))  # type: ignore[misc]
    return growth_rows(rates, (small, large), "", "")


if __name__ == "__main__":
    show("openai_responses", run(quick_flag(__doc__ or "")))
