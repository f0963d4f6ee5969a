"""``Metric.scored`` builds the same ``MetricResult`` that ``Metric.result`` validates."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import ValidationError

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import MetricResult, ToolCallAccuracy, ToolCallF1

CALL = ToolCall(name="search", args={"query": "lisbon", "exact": True}, id="c1")
SAMPLE = MultiTurnSample(
    messages=[
        HumanMessage(content="find"),
        AIMessage(tool_calls=[CALL]),
        ToolMessage(content="ok", tool_call_id="c1"),
    ],
    reference_tool_calls=[ToolCall(name="search", args={"query": "lisbon", "exact": 1})],
)


@pytest.mark.parametrize("metric", [ToolCallAccuracy(), ToolCallAccuracy(False), ToolCallF1()])
def test_a_scored_result_is_the_validated_one(metric: ToolCallAccuracy | ToolCallF1) -> None:
    fast = metric.score(SAMPLE)
    assert fast.value is not None
    slow = metric.result(SAMPLE, fast.value, details=fast.details)
    assert fast == slow
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast.model_fields_set == slow.model_fields_set
    assert MetricResult.model_validate_json(fast.model_dump_json()) == fast
    assert pickle.loads(pickle.dumps(fast)) == fast
    assert copy.deepcopy(fast) == fast
    assert fast.model_copy(update={"value": 0.0}).value == 0.0
    with pytest.raises(ValidationError) as frozen:
        fast.value = 1.0
    assert frozen.value.errors()[0]["type"] == "frozen_instance"


def test_a_scored_value_outside_zero_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"a score lies in \[0, 1\], got 1.5"):
        ToolCallF1().scored(SAMPLE, 1.5, {})
