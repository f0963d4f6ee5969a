"""evaluate/aevaluate: bounded concurrency, input order, failures as results; summarize;
MetricResult's own rules."""

from __future__ import annotations

import asyncio
import io

import pytest
from pydantic import ValidationError

import tracebridge.metrics as metrics_module
from tracebridge import AIMessage, HumanMessage, MultiTurnSample
from tracebridge.metrics import (
    Metric,
    MetricResult,
    MetricSummary,
    ToolCallAccuracy,
    ToolCallF1,
    aevaluate,
    evaluate,
    summarize,
)
from tracebridge.metrics.cli import format_summary


def numbered(n: int) -> MultiTurnSample:
    return MultiTurnSample(
        messages=[HumanMessage(content=f"sample {n}"), AIMessage(content="ok")],
        metadata={"n": n},
    )


class Slow(Metric):
    """Sleeps longer for earlier samples and records how many run at once."""

    name = "slow"

    def __init__(self) -> None:
        self.running = 0
        self.most = 0

    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        self.running += 1
        self.most = max(self.most, self.running)
        n = sample.metadata["n"]
        await asyncio.sleep(0.002 * (20 - n))
        self.running -= 1
        return self.result(sample, n / 100, details={"n": n})


class Exploding(Metric):
    name = "exploding"

    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        if sample.metadata["n"] == 1:
            raise KeyError("n")
        return self.result(sample, 1.0)


async def test_results_come_back_in_input_order_with_bounded_concurrency() -> None:
    slow = Slow()
    samples = [numbered(n) for n in range(12)]
    results = await aevaluate(samples, [slow], max_concurrency=3, progress=False)
    assert [row[0].details["n"] for row in results] == list(range(12))
    assert slow.most == 3


async def test_one_failure_is_an_error_result_not_a_crash() -> None:
    samples = [numbered(n) for n in range(3)]
    results = await aevaluate(samples, [Exploding(), ToolCallF1()], progress=False)
    assert [[r.name for r in row] for row in results] == [["exploding", "tool_call_f1"]] * 3
    broken = results[1][0]
    assert broken.value is None
    assert broken.error == "KeyError: 'n'"
    assert broken.transcript_hash == samples[1].transcript_hash()
    assert results[0][0].value == 1.0
    assert results[2][0].value == 1.0
    # ToolCallF1 has no reference here: an error result of its own, the batch goes on
    assert results[1][1].error is not None


def test_evaluate_is_the_synchronous_form(capsys: pytest.CaptureFixture[str]) -> None:
    sample = MultiTurnSample(
        messages=[HumanMessage(content="hi"), AIMessage(content="hello")],
        reference_tool_calls=[],
    )
    results = evaluate([sample, sample], [ToolCallAccuracy(), ToolCallF1()], progress=True)
    assert [[r.value for r in row] for row in results] == [[1.0, 1.0], [1.0, 1.0]]
    assert capsys.readouterr().err == (
        "\rscored 1/4 (0 errors)\rscored 2/4 (0 errors)\rscored 3/4 (0 errors)"
        "\rscored 4/4 (0 errors)\n"
    )


def test_no_progress_by_default_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    evaluate([numbered(n) for n in range(10)], [Slow(), Slow(), Slow()])
    assert capsys.readouterr().err == ""


async def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_concurrency must be 1 or more, got 0"):
        await aevaluate([numbered(0)], [Slow()], max_concurrency=0)
    with pytest.raises(TypeError, match=r"samples\[1\] is a dict; expected a MultiTurnSample"):
        await aevaluate([numbered(0), {"messages": []}], [Slow()])  # type: ignore[list-item]


async def test_evaluate_inside_a_running_loop_says_to_await() -> None:
    with pytest.raises(RuntimeError, match=r"use `await aevaluate\(\.\.\.\)`"):
        evaluate([numbered(0)], [Slow()])


def test_summarize_leaves_errors_out_of_the_mean() -> None:
    sample = numbered(0)
    accuracy = ToolCallAccuracy()
    rows = [
        [accuracy.result(sample, 0.5)],
        [accuracy.result(sample, 1.0)],
        [accuracy.failed(sample, "no reference")],
    ]
    assert summarize(rows) == [
        MetricSummary(name="tool_call_accuracy", scored=2, errors=1, mean=0.75, minimum=0.5,
                      maximum=1.0)
    ]
    assert format_summary(summarize(rows)) == (
        "metric              scored  errors    mean     min     max\n"
        "tool_call_accuracy       2       1  0.7500  0.5000  1.0000\n"
    )
    assert format_summary(summarize([[accuracy.failed(sample, "x")]])) == (
        "metric              scored  errors  mean  min  max\n"
        "tool_call_accuracy       0       1     -    -    -\n"
    )


def test_a_result_has_a_value_or_an_error() -> None:
    base = {"name": "m", "metric_version": "1", "transcript_hash": "tb1:x"}
    with pytest.raises(ValidationError, match="a value or an error, not both and not neither"):
        MetricResult(value=None, **base)
    with pytest.raises(ValidationError, match="a value or an error"):
        MetricResult(value=0.5, error="why", **base)
    with pytest.raises(ValidationError, match="less than or equal to 1"):
        MetricResult(value=1.5, **base)
    result = MetricResult(value=0.5, **base)
    assert MetricResult.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(ValidationError, match="frozen"):
        result.value = 1.0  # type: ignore[misc]


def test_the_public_names() -> None:
    assert sorted(metrics_module.__all__) == [
        "AgentGoalAccuracyWithReference",
        "AgentGoalAccuracyWithoutReference",
        "ConversationCompleteness",
        "ConversationRelevancy",
        "Judge",
        "JudgeError",
        "JudgeReply",
        "JudgeRequest",
        "JudgedMetric",
        "KnowledgeRetention",
        "Metric",
        "MetricResult",
        "MetricSummary",
        "OpenAIJudge",
        "RoleAdherence",
        "ToolCallAccuracy",
        "ToolCallF1",
        "TopicAdherence",
        "Usage",
        "aevaluate",
        "evaluate",
        "strict_json_schema",
        "summarize",
    ]
    for name in metrics_module.__all__:
        assert getattr(metrics_module, name) is not None


def test_progress_counts_errors() -> None:
    from tracebridge.metrics.evaluate import _Progress

    stream = io.StringIO()
    progress = _Progress(2, True, stream)
    sample = numbered(0)
    progress.advance(ToolCallF1().failed(sample, "x"))
    progress.advance(ToolCallF1().result(sample, 1.0))
    assert stream.getvalue() == "\rscored 1/2 (1 error)\rscored 2/2 (1 error)\n"

