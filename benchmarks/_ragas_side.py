"""The peer's side of the side-by-side benchmark, run inside Ragas's own virtualenv as a
worker (``_worker.serve``: one JSON request per line in, one answer per line out).
Only the standard library, Ragas and what Ragas's converters need are imported here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from _timing import finish
from _worker import serve

Work = Callable[[], Any]


def prepare(kind: str, data: Any) -> Work:
    from ragas import MultiTurnSample

    if kind == "sample_dicts":
        return lambda: MultiTurnSample.model_validate({"user_input": data})
    if kind == "sample_objects":
        objects = MultiTurnSample.model_validate({"user_input": data}).user_input
        return lambda: MultiTurnSample(user_input=objects)
    if kind == "langgraph":
        from langchain_core.messages import messages_from_dict
        from ragas.integrations.langgraph import convert_to_ragas_messages

        graph_messages = messages_from_dict(data)
        return lambda: convert_to_ragas_messages(graph_messages)
    if kind == "read_swarm":
        from ragas.integrations.swarm import convert_to_ragas_messages as from_swarm

        return lambda: from_swarm(data)
    if kind == "llama_events":
        from llama_index.core.agent import workflow
        from ragas.integrations.llama_index import convert_to_ragas_messages as from_llama

        events = [getattr(workflow, e["event"]).model_validate(e["data"]) for e in data]
        return lambda: from_llama(events)
    if kind.startswith(("metric_", "first_metric_")):  # Ragas keeps nothing between scores
        return _metric(kind.partition("metric_")[2], data)
    raise ValueError(f"no Ragas counterpart for {kind!r}")


def _metric(name: str, calls: dict[str, Any]) -> Work:
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    messages: list[Any] = [HumanMessage(content="go")]
    for call in calls["predicted"]:
        messages.append(AIMessage(content="", tool_calls=[ToolCall(**call)]))
        messages.append(ToolMessage(content="ok"))
    reference = [ToolCall(**call) for call in calls["reference"]]
    metric = {
        "accuracy": ToolCallAccuracy(),
        "accuracy_unordered": ToolCallAccuracy(strict_order=False),
        "f1": ToolCallF1(),
    }[name]
    return lambda: finish(metric.ascore(user_input=messages, reference_tool_calls=reference))


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # Ragas warns on every length mismatch it scores
    serve(prepare)
