"""Score many samples with many metrics: ``evaluate`` / ``aevaluate`` and ``summarize``.

Every (sample, metric) pair is one job; at most ``max_concurrency`` run at once. Results
come back in input order: ``results[i][k]`` is metric ``k`` on sample ``i``. A metric that
raises does not stop the batch: its result records the exception as ``error``. A sample
whose transcript hash cannot be computed (a value in it that is not plain JSON, put there by
an edit in place or ``model_construct``) is refused with ``unserializable_value`` before any
job runs: every result carries that hash.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from pydantic import BaseModel, ConfigDict

from ..errors import TraceError, with_article
from ..sample import MultiTurnSample
from .base import Metric, MetricResult, run_sync

__all__ = ["MetricSummary", "aevaluate", "evaluate", "summarize"]

_AUTO_PROGRESS_FROM = 20
"""With ``progress=None``, runs of this many jobs or more show progress on a terminal."""


class _Progress:
    """``scored 12/40 (1 error)`` on one rewritten stderr line."""

    def __init__(self, total: int, enabled: bool | None, stream: TextIO) -> None:
        if enabled is None:
            enabled = total >= _AUTO_PROGRESS_FROM and stream.isatty()
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.errors = 0
        self.stream = stream

    def advance(self, result: MetricResult) -> None:
        self.done += 1
        self.errors += result.error is not None
        if self.enabled:
            plural = "" if self.errors == 1 else "s"
            self.stream.write(f"\rscored {self.done}/{self.total} ({self.errors} error{plural})")
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()


def crashed(metric: Metric, sample: MultiTurnSample, exc: Exception) -> MetricResult:
    """The result of ``metric`` raising ``exc`` on ``sample``: no value, and the exception as
    ``error``. When the metric cannot name its judge either (a judge whose ``name`` raises,
    the likely cause of ``exc``), the result names none."""
    error = f"{type(exc).__name__}: {exc}"
    try:
        return metric.failed(sample, error)
    except Exception:  # reading the judge's name raised: a result naming no judge
        return MetricResult(
            name=metric.name,
            value=None,
            error=error,
            metric_version=metric.metric_version,
            transcript_hash=sample.transcript_hash(),
        )


async def aevaluate(
    samples: Sequence[MultiTurnSample],
    metrics: Sequence[Metric],
    *,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> list[list[MetricResult]]:
    """Score every sample with every metric; ``results[i][k]`` = metric k on sample i.

    ``progress``: True shows a progress line on stderr, False never, None (default) only
    for runs of 20 jobs or more when stderr is a terminal.
    """
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be 1 or more, got {max_concurrency}")
    for position, sample in enumerate(samples):
        if not isinstance(sample, MultiTurnSample):
            raise TypeError(
                f"samples[{position}] is {with_article(type(sample).__name__)}; expected a "
                "MultiTurnSample"
            )
        try:  # every result carries it (computed once, kept): a sample without one is refused
            sample.transcript_hash()  # before any job runs, not after the rest were scored
        except TraceError as error:
            raise TraceError(error.code, error.detail, index=error.index,
                             path=f"samples[{position}].{error.path}") from None
    gate = asyncio.Semaphore(max_concurrency)
    tracker = _Progress(len(samples) * len(metrics), progress, sys.stderr)

    async def job(sample: MultiTurnSample, metric: Metric) -> MetricResult:
        async with gate:
            try:
                result = await metric.ascore(sample)
            except Exception as exc:  # one broken metric or sample must not end the batch
                result = crashed(metric, sample, exc)
        tracker.advance(result)
        return result

    jobs = [job(sample, metric) for sample in samples for metric in metrics]
    flat = await asyncio.gather(*jobs)
    width = len(metrics)
    return [list(flat[i * width : (i + 1) * width]) for i in range(len(samples))]


def evaluate(
    samples: Sequence[MultiTurnSample],
    metrics: Sequence[Metric],
    *,
    max_concurrency: int = 8,
    progress: bool | None = None,
) -> list[list[MetricResult]]:
    """``aevaluate`` for synchronous code (not from inside a running event loop)."""
    return run_sync(
        aevaluate(samples, metrics, max_concurrency=max_concurrency, progress=progress),
        "evaluate()",
        "`await aevaluate(...)`",
    )


class MetricSummary(BaseModel):
    """One metric over a batch: how many samples it scored and the mean of the values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    scored: int
    errors: int
    mean: float | None
    minimum: float | None
    maximum: float | None


def summarize(results: Sequence[Sequence[MetricResult]]) -> list[MetricSummary]:
    """Per metric name, in first-seen order: counts, and mean/min/max of the values.

    Results without a value count as errors and stay out of the mean (they are not zeros).
    """
    values: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    for row in results:
        for result in row:
            values.setdefault(result.name, [])
            errors.setdefault(result.name, 0)
            if result.value is None:
                errors[result.name] += 1
            else:
                values[result.name].append(result.value)
    return [
        MetricSummary(
            name=name,
            scored=len(scored),
            errors=errors[name],
            mean=sum(scored) / len(scored) if scored else None,
            minimum=min(scored) if scored else None,
            maximum=max(scored) if scored else None,
        )
        for name, scored in values.items()
    ]
