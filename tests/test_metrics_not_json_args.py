"""A call argument that is not JSON, put into a validated sample's ``args`` in place (the
models are frozen, the dicts in them are not), is refused where it is by the tool-call
metrics that meet it: ``unserializable_value`` at its path, not a ``TypeError``."""

from __future__ import annotations

import asyncio

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.metrics import ToolCallAccuracy, ToolCallF1
from tracebridge.metrics.base import Metric
from tracebridge.sample import MultiTurnSample

METRICS = {
    "strict": ToolCallAccuracy(),
    "unordered": ToolCallAccuracy(strict_order=False),
    "f1": ToolCallF1(),
}


def _sample() -> MultiTurnSample:
    return MultiTurnSample(
        messages=[
            HumanMessage(content="q"),
            AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": [1], "b": 2},
                                                       id="c")]),
            ToolMessage(content="r", tool_call_id="c"),
            AIMessage(content="done"),
        ],
        reference_tool_calls=[ToolCall(name="f", args={"a": [1], "b": 2})],
    )


def _refusal(metric: Metric, sample: MultiTurnSample) -> TraceError:
    with pytest.raises(TraceError) as raised:
        metric.score(sample)
    with pytest.raises(TraceError) as awaited:
        asyncio.run(metric.ascore(sample))
    assert str(awaited.value) == str(raised.value)
    return raised.value


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize(("bad", "at"), [({1}, ".a"), ([(1,)], ".a[0]"), ([{1}], ".a[0]")],
                         ids=["set", "tuple in list", "set in list"])
def test_a_reference_argument_that_is_not_json_is_refused_where_it_is(
    name: str, bad: object, at: str,
) -> None:
    sample = _sample()
    assert sample.reference_tool_calls is not None
    sample.reference_tool_calls[0].args["a"] = bad
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index) == ("unserializable_value", None)
    assert error.path == "reference_tool_calls[0].args" + at


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize(("bad", "at"), [({1}, ".a"), ([(1,)], ".a[0]")],
                         ids=["set", "tuple in list"])
def test_a_predicted_argument_that_is_not_json_is_refused_where_it_is(
    name: str, bad: object, at: str,
) -> None:
    sample = _sample()
    sample.messages[1].tool_calls[0].args["a"] = bad  # type: ignore[union-attr]
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index) == ("unserializable_value", 1)
    assert error.path == "messages[1].tool_calls[0].args" + at


def test_the_strict_metric_refuses_a_tuple_it_cannot_compare() -> None:
    sample = _sample()
    assert sample.reference_tool_calls is not None
    sample.reference_tool_calls[0].args["a"] = (1,)
    error = _refusal(METRICS["strict"], sample)
    assert (error.code, error.path) == ("unserializable_value", "reference_tool_calls[0].args.a")
    assert "tuple" in error.detail


def test_json_arguments_score_as_before() -> None:
    sample = _sample()
    assert [METRICS[name].score(sample).value for name in METRICS] == [1.0, 1.0, 1.0]
