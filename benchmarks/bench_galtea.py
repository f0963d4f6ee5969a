"""Galtea adapter speed: messages per second each way, for both shapes.

    .venv/bin/python benchmarks/bench_galtea.py [--quick]

A 100-message conversation (50 exchanges; every other answer has a retrieval_context and an
extra key) is read from pairs and from role turns (``to_messages``) and written back
(``from_messages``). The same exchanges as full ``ConversationMessage`` dumps (every field, an
attached file on every other turn) and as ``Trace`` records (what ``traces.list`` returns, read
only) follow. A last line writes a 201-message agent run (system prompt, a tool step per
exchange) as pairs with ``skip_system`` and ``fold_tools``.
"""

from __future__ import annotations

from typing import Any

from _table import Row, quick_flag, show
from bench_core import rate  # best-of-5 messages per second; run from this folder's script

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from tracebridge.adapters import galtea
from tracebridge.messages import AnyMessage


def pair_trace(exchanges: int) -> list[dict[str, Any]]:
    trace: list[dict[str, Any]] = []
    for i in range(exchanges):
        pair: dict[str, Any] = {"input": f"Question {i}?", "actual_output": f"Answer {i}."}
        if i % 2:
            pair["retrieval_context"] = f"Document {i}: the answer is {i}."
            pair["latency_ms"] = 100 + i
        trace.append(pair)
    return trace


def role_trace(exchanges: int) -> list[dict[str, Any]]:
    trace: list[dict[str, Any]] = []
    for i in range(exchanges):
        trace.append({"role": "user", "content": f"Question {i}?"})
        answer: dict[str, Any] = {"role": "assistant", "content": f"Answer {i}."}
        if i % 2:
            answer["retrieval_context"] = f"Document {i}: the answer is {i}."
            answer["latency_ms"] = 100 + i
        trace.append(answer)
    return trace


def message_dumps(exchanges: int) -> list[dict[str, Any]]:
    """ConversationMessage.model_dump() of each turn, a file on every other exchange."""
    trace: list[dict[str, Any]] = []
    for i in range(exchanges):
        file = {"uri": f"gs://files/{i}.pdf", "filename": f"{i}.pdf",
                "mime_type": "application/pdf", "type": "file"}
        for role, text in (("user", f"Question {i}?"), ("assistant", f"Answer {i}.")):
            files = [file] if i % 2 else []
            trace.append({"role": role, "content": text, "retrieval_context": None,
                          "metadata": {"chat_type": "support"} if role == "user" else None,
                          "input_files": files if role == "user" else [],
                          "output_files": files if role == "assistant" else []})
    return trace


def trace_records(exchanges: int) -> list[dict[str, Any]]:
    """Trace.model_dump(mode="json") of each answered turn, as traces.list returns them."""
    return [
        {"id": f"t{i}", "index": i, "session_id": "s1", "status": "GENERATED", "error": None,
         "input": f"Question {i}?", "input_data": {"user_message": f"Question {i}?"},
         "input_files": [], "actual_output": f"Answer {i}.", "actual_output_data": None,
         "actual_output_files": [], "latency": 812.0, "tokens": None, "cost": None}
        for i in range(exchanges)
    ]


def agent_conversation(exchanges: int) -> list[AnyMessage]:
    """A system prompt, then per exchange: question, tool call, tool result, answer."""
    messages: list[AnyMessage] = [SystemMessage(content="Answer from the documents.")]
    for i in range(exchanges):
        call = ToolCall(name="search", args={"query": f"q{i}"}, id=f"c{i}")
        messages += [
            HumanMessage(content=f"Question {i}?"),
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content=f"Document {i}", tool_call_id=f"c{i}"),
            AIMessage(content=f"Answer {i}."),
        ]
    return messages


def run(quick: bool = False) -> list[Row]:
    seconds = 0.05 if quick else 1.0
    pairs, roles = pair_trace(50), role_trace(50)
    pair_messages, role_messages = galtea.to_messages(pairs), galtea.to_messages(roles)
    assert len(pair_messages) == len(role_messages) == 100
    assert galtea.from_messages(pair_messages) == pairs
    assert galtea.from_messages(role_messages) == roles
    rows: list[Row] = []
    cases = (("pairs", pairs, pair_messages), ("roles", roles, role_messages))
    for shape, trace, messages in cases:
        read = rate(lambda t=trace: galtea.to_messages(t), 100, seconds)  # type: ignore[misc]
        write = rate(lambda m=messages: galtea.from_messages(m), 100, seconds)  # type: ignore[misc]
        rows.append((f"{shape}, 100 messages: to_messages", f"{read / 1e3:.1f} k msgs/s"))
        rows.append((f"{shape}, 100 messages: from_messages", f"{write / 1e3:.1f} k msgs/s"))
    dumps = message_dumps(50)
    dump_messages = galtea.to_messages(dumps)
    assert galtea.from_messages(dump_messages) == dumps
    read = rate(lambda: galtea.to_messages(dumps), 100, seconds)
    write = rate(lambda: galtea.from_messages(dump_messages), 100, seconds)
    rows.append(("ConversationMessage dumps (files, metadata), 100 messages: to_messages",
                 f"{read / 1e3:.1f} k msgs/s"))
    rows.append(("ConversationMessage dumps (files, metadata), 100 messages: from_messages",
                 f"{write / 1e3:.1f} k msgs/s"))
    records = trace_records(50)
    assert len(galtea.to_messages(records)) == 100
    read = rate(lambda: galtea.to_messages(records), 100, seconds)
    rows.append(("trace records (traces.list), 100 messages: to_messages",
                 f"{read / 1e3:.1f} k msgs/s"))
    agent = agent_conversation(50)
    options = {"shape": "pairs", "skip_system": True, "fold_tools": True}
    assert len(galtea.from_messages(agent, **options)) == 50
    folded = rate(lambda: galtea.from_messages(agent, **options, omitted=[]), len(agent), seconds)
    rows.append((f"agent run, {len(agent)} messages -> 50 pairs (skip_system, fold_tools)",
                 f"{folded / 1e3:.1f} k msgs/s"))
    return rows


if __name__ == "__main__":
    show("galtea", run(quick_flag(__doc__ or "")))
