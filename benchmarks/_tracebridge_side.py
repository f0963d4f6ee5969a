"""Our side of the side-by-side benchmark: each kind of case as a ready-to-time call.

Run as a script, it is our worker (``_worker.serve``), which times the cases Ragas is timed
on, in a process that holds the same inputs as Ragas's worker.

``prepare(kind, data)`` does everything that is not the measured work (building framework
objects from the JSON, the sample a metric scores) and returns the work itself.
``prepare_floor(kind, data)`` does the same for the pydantic floor of a format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _floors import FLOORS
from _timing import finish

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    validate,
)

Work = Callable[[], Any]


def prepare(kind: str, data: Any) -> Work:
    if kind == "sample_dicts":
        return lambda: MultiTurnSample.model_validate({"messages": data})
    if kind == "sample_objects":
        objects = MultiTurnSample.model_validate({"messages": data}).messages
        return lambda: MultiTurnSample(messages=objects)
    if kind == "rules":
        objects = MultiTurnSample.model_validate({"messages": data}).messages
        return lambda: validate(objects)
    if kind == "langgraph":
        from langchain_core.messages import messages_from_dict

        from tracebridge.adapters import langchain

        graph_messages = messages_from_dict(data)
        return lambda: langchain.to_messages(graph_messages)
    if kind == "llama_events":
        from tracebridge.adapters import llama_index

        events = llama_event_objects(data)
        return lambda: llama_index.events_to_messages(events)
    if kind.startswith("read_"):
        adapter = _adapter(kind.removeprefix("read_"))
        return lambda: adapter.to_messages(data)
    if kind.startswith("write_"):
        adapter = _adapter(kind.removeprefix("write_"))
        typed = adapter.to_messages(data)
        return lambda: adapter.from_messages(typed)
    if kind.startswith("metric_"):
        return _metric(kind.removeprefix("metric_"), data)
    raise ValueError(f"unknown kind {kind!r}")


def prepare_floor(kind: str, data: Any) -> Work:
    """The floor's reading (``read_<adapter>``) or writing (``write_<adapter>``) of ``data``."""
    action, _, name = kind.partition("_")
    floor = FLOORS[name]
    if action == "read":
        return lambda: floor.validate_python(data)
    models = floor.validate_python(data)
    if name == "llama_index":  # our writer builds ChatMessage objects: the floor builds models
        return lambda: floor.validate_python(data)
    return lambda: floor.dump_python(models, mode="json", exclude_none=True)


def llama_event_objects(data: list[dict[str, Any]]) -> list[Any]:
    """The LlamaIndex event objects of ``{"event", "data"}`` dumps."""
    from llama_index.core.agent import workflow

    return [getattr(workflow, e["event"]).model_validate(e["data"]) for e in data]


def _adapter(name: str) -> Any:
    import importlib

    return importlib.import_module(f"tracebridge.adapters.{name}")


def _metric(name: str, calls: dict[str, Any]) -> Work:
    from tracebridge.metrics import ToolCallAccuracy, ToolCallF1

    messages: list[Any] = [HumanMessage(content="go")]
    for k, call in enumerate(calls["predicted"]):
        messages.append(AIMessage(tool_calls=[ToolCall(id=f"c{k}", **call)]))
        messages.append(ToolMessage(content="ok", tool_call_id=f"c{k}"))
    reference = [ToolCall(**call) for call in calls["reference"]]
    sample = MultiTurnSample(messages=messages, reference_tool_calls=reference)
    metric = {
        "accuracy": ToolCallAccuracy(),
        "accuracy_unordered": ToolCallAccuracy(strict_order=False),
        "f1": ToolCallF1(),
    }[name]
    return lambda: finish(metric.ascore(sample))


if __name__ == "__main__":
    from _worker import serve

    serve(prepare)
