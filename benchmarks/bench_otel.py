"""OpenTelemetry adapter speed: a long agent run written as spans and read back.

    .venv/bin/python benchmarks/bench_otel.py [--quick]

An agent run of many turns, each a tool call whose tool failed (every result is written as a
tool span of its own, beside the model-call spans), is written (``from_messages``) and read
back (``to_messages``) at two sizes; the growth is the cost per message at the larger size
over the smaller one, which stays near 1 when the cost is linear.

Then many conversations, each written as a document of its own and kept together (an
evaluation set's spans), read with no session chosen: grouping their calls into
conversations must stay linear in the number of sessions, up to the refusal that names them
all (``ambiguous_trace``).
"""

from __future__ import annotations

from typing import Any

from _table import Row, growth_rows, quick_flag, show
from bench_core import rate  # best-of-5 messages per second; run from this folder's script

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import otel


def failed_turns(n: int) -> list[Any]:
    """A question, ``n`` turns of a call and its failed result, and the answer."""
    messages: list[Any] = [HumanMessage(content="Book the flight.")]
    for k in range(n):
        messages.append(AIMessage(tool_calls=[ToolCall(name="book", args={"try": k}, id=f"c{k}")]))
        messages.append(ToolMessage(content="timed out", tool_call_id=f"c{k}", name="book",
                                    is_error=True))
    return [*messages, AIMessage(content="It could not be booked.")]


def run(quick: bool = False) -> list[Row]:
    seconds = 0.05 if quick else 1.0
    small, large = (20, 80) if quick else (100, 2000)
    rates: dict[str, list[float]] = {"from_messages": [], "to_messages": []}
    for n in (small, large):
        messages = failed_turns(n)
        spans = otel.from_messages(messages)
        assert otel.to_messages(spans) == messages
        count = len(messages)
        rates["from_messages"].append(
            rate(lambda m=messages: otel.from_messages(m), count, seconds))  # type: ignore[misc]
        rates["to_messages"].append(
            rate(lambda s=spans: otel.to_messages(s), count, seconds))  # type: ignore[misc]
    rows = growth_rows(rates, (small, large), " failed tool turns", "msgs")
    sizes = (10, 40) if quick else (100, 1600)
    per_session = []
    for n in sizes:
        document = sessions(n)
        per_session.append(rate(lambda d=document: _refused(d), n, seconds))  # type: ignore[misc]
    return rows + growth_rows({"to_messages, no session chosen": per_session}, sizes,
                              " sessions", "sessions")


def sessions(n: int) -> dict[str, Any]:
    """``n`` two-turn conversations, each written alone, as one document."""
    documents = [
        otel.from_messages([HumanMessage(content=f"Question {k}?"), AIMessage(content="Yes."),
                            HumanMessage(content="Why?"), AIMessage(content="Because.")])
        for k in range(n)
    ]
    return {"resourceSpans": [part for doc in documents for part in doc["resourceSpans"]]}


def _refused(document: dict[str, Any]) -> None:
    try:
        otel.to_messages(document)
    except TraceError as error:
        if error.code == "ambiguous_trace":
            return
        raise
    raise AssertionError("several sessions were read as one conversation")


if __name__ == "__main__":
    show("otel", run(quick_flag(__doc__ or "")))
