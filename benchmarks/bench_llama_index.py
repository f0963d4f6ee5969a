"""LlamaIndex adapter speed: messages per second each way, and from an event stream.

    .venv/bin/python benchmarks/bench_llama_index.py [--quick]

A 251-message memory history (a user message, then 100 steps: alternately an assistant
message with a thinking block and two parallel ToolCallBlocks, and one whose call is both a
JSON-text ToolCallBlock and an ``additional_kwargs["tool_calls"]`` entry; each with its tool
results) is read from ``ChatMessage`` objects and from their JSON
dumps (``to_messages``) and written back (``from_messages``, which builds ChatMessage
objects). The event stream of the same history (what a FunctionAgent run streams: an
AgentInput repeating the history before each step) is read with ``events_to_messages``.
Prints the median of 5 runs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from _table import Row, quick_flag, show
from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage

from tracebridge import AIMessage
from tracebridge.adapters import llama_index

STEPS = 100


def history(steps: int) -> list[ChatMessage]:
    messages = [ChatMessage(role="user", content="Plan my trip to Lisbon.")]
    for i in range(steps):
        if i % 2:
            arguments = json.dumps({"query": f"lisbon {i}"})
            block = ToolCallBlock(tool_call_id=f"s{i}", tool_name="search", tool_kwargs=arguments)
            entry = {"id": f"s{i}", "type": "function",
                     "function": {"name": "search", "arguments": arguments}}
            messages.append(ChatMessage(role="assistant", blocks=[block],
                                        additional_kwargs={"tool_calls": [entry]}))
            messages.append(ChatMessage(role="tool", content=f"result {i}",
                                        additional_kwargs={"tool_call_id": f"s{i}"}))
            continue
        messages.append(ChatMessage(role="assistant", blocks=[
            ThinkingBlock(content="two lookups at once", additional_information={"sig": "x"}),
            ToolCallBlock(tool_call_id=f"a{i}", tool_name="weather", tool_kwargs={"day": i}),
            ToolCallBlock(tool_call_id=f"b{i}", tool_name="hotels", tool_kwargs={"night": i}),
        ]))
        for call_id in (f"a{i}", f"b{i}"):
            messages.append(ChatMessage(role="tool", blocks=[TextBlock(text=f"{call_id} ok")],
                                        additional_kwargs={"tool_call_id": call_id}))
    return messages


def events(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """The stream a FunctionAgent would write for this history, as ``dump_events`` dicts."""
    dumped = [m.model_dump(mode="json") for m in messages]
    # each result names its call (tool name and arguments), as FunctionAgent's results do
    calls = {call.id: call for typed in llama_index.to_messages(messages)
             if isinstance(typed, AIMessage) for call in typed.tool_calls}
    stream: list[dict[str, Any]] = []
    for k, message in enumerate(dumped):
        if message["role"] == "assistant":
            stream.append({"event": "AgentInput",
                           "data": {"input": dumped[:k], "current_agent_name": "planner"}})
            stream.append({"event": "AgentOutput",
                           "data": {"response": message, "current_agent_name": "planner"}})
        elif message["role"] == "tool":
            call = calls[message["additional_kwargs"]["tool_call_id"]]
            stream.append({"event": "ToolCallResult", "data": {
                "tool_id": call.id,
                "tool_name": call.name,
                "tool_kwargs": call.args,
                "tool_output": {"blocks": message["blocks"], "is_error": False},
                "return_direct": False,
            }})
    return stream


def rate(label: str, count: int, work: Callable[[], object]) -> Row:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return (label, f"{count / median:,.0f} msgs/s ({median * 1000:.1f} ms for {count})")


def run(quick: bool = False) -> list[Row]:
    objects = history(5 if quick else STEPS)
    dumps = [m.model_dump(mode="json") for m in objects]
    typed = llama_index.to_messages(objects)
    stream = events(objects)
    assert llama_index.strip_event_extras(llama_index.events_to_messages(stream)) == typed
    n = len(objects)
    return [
        rate(f"to_messages (ChatMessage objects), {n} messages", n,
             lambda: llama_index.to_messages(objects)),
        rate(f"to_messages (model_dump dicts), {n} messages", n,
             lambda: llama_index.to_messages(dumps)),
        rate(f"from_messages (-> ChatMessage objects), {n} messages", n,
             lambda: llama_index.from_messages(typed)),
        rate(f"events_to_messages ({len(stream)} events), {n} messages", n,
             lambda: llama_index.events_to_messages(stream)),
    ]


if __name__ == "__main__":
    show("llama_index (median of 5)", run(quick_flag(__doc__ or "")))
