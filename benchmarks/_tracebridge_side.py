"""Our side of the side-by-side benchmark: each kind of case as a ready-to-time call.

Run as a script, it is our worker (``_worker.serve``), which times the cases Ragas is timed
on, in a process that holds the same inputs as Ragas's worker.

``prepare(kind, data)`` does everything that is not the measured work (building framework
objects from the JSON, the sample a metric scores) and returns the work itself.
``prepare_floor(kind, data)`` does the same for the pydantic floor of a format, with the
cycle collector paused during each call as our readers and writers pause it
(``tracebridge._gc``): a floor is the least a typed reader can do, and such a reader can
pause it too.
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
from tracebridge._gc import gc_paused

Work = Callable[[], Any]


def prepare(kind: str, data: Any) -> Work:
    if kind == "sample_dicts":
        return lambda: MultiTurnSample.model_validate({"messages": data})
    if kind == "sample_objects":
        objects = MultiTurnSample.model_validate({"messages": data}).messages
        return lambda: MultiTurnSample(messages=objects)
    if kind == "rules":
        objects = MultiTurnSample.model_validate({"messages": data}).messages
        return lambda: _validated(objects)
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
        return _metric(kind.removeprefix("metric_"), data, first_score=False)
    if kind.startswith("first_metric_"):
        return _metric(kind.removeprefix("first_metric_"), data, first_score=True)
    raise ValueError(f"unknown kind {kind!r}")


def _validated(messages: Any) -> Any:
    """``validate(messages)``, then the messages (so the run can count them)."""
    validate(messages)
    return messages


def prepare_floor(kind: str, data: Any) -> Work:
    """The floor's reading (``read_<adapter>``) or writing (``write_<adapter>``) of ``data``."""
    action, _, name = kind.partition("_")
    floor = FLOORS[name]
    if action == "read":
        return gc_paused(lambda: floor.validate_python(data))
    models = floor.validate_python(data)
    if name == "llama_index":  # our writer builds ChatMessage objects: the floor builds models
        return gc_paused(lambda: floor.validate_python(data))
    return gc_paused(lambda: floor.dump_python(models, mode="json", exclude_none=True))


def llama_event_objects(data: list[dict[str, Any]]) -> list[Any]:
    """The LlamaIndex event objects of ``{"event", "data"}`` dumps."""
    from llama_index.core.agent import workflow

    return [getattr(workflow, e["event"]).model_validate(e["data"]) for e in data]


def _adapter(name: str) -> Any:
    import importlib

    return importlib.import_module(f"tracebridge.adapters.{name}")


def _metric(name: str, calls: dict[str, Any], *, first_score: bool) -> Work:
    """A score of ``calls`` by the metric ``name``. Every score carries the sample's
    transcript hash, computed at its first score and kept for the sample's life: with
    ``first_score`` each call scores a new copy of the sample (``model_copy``, timed with
    it), so the hash is computed each time, as for the first metric a user runs on a
    sample; without it the same sample is scored again (another metric on a sample scored
    before)."""
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
    if first_score:
        return lambda: finish(metric.ascore(sample.model_copy()))
    return lambda: finish(metric.ascore(sample))


if __name__ == "__main__":
    from _worker import serve

    serve(prepare)
