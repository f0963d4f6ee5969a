"""``tracebridge score DATASET.jsonl --metric NAME ...``: score a JSONL file of samples.

Each line of DATASET is a ``MultiTurnSample`` as JSON. Results go to ``-o OUT`` (or to
standard output), one JSON object per line: ``{"line": <dataset line>, ...MetricResult}``.
A summary table goes to standard output, or to standard error when the results do.
Exit codes: 0 scored (individual results may still carry errors, shown in the summary),
1 a sample in DATASET is invalid, 2 the request or the input is unusable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from ..errors import MissingExtraError, TraceError
from ..sample import MultiTurnSample
from .base import Metric, MetricResult
from .conversation import (
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
    RoleAdherence,
)
from .evaluate import MetricSummary, aevaluate, summarize
from .goals import AgentGoalAccuracyWithoutReference, AgentGoalAccuracyWithReference, TopicAdherence
from .judge import Judge, OpenAIJudge
from .tool_calls import ToolCallAccuracy, ToolCallF1

__all__ = ["DETERMINISTIC", "JUDGED", "configure", "run"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

DETERMINISTIC: dict[str, Callable[[], Metric]] = {
    "tool_call_accuracy": ToolCallAccuracy,
    "tool_call_accuracy_unordered": lambda: ToolCallAccuracy(strict_order=False),
    "tool_call_f1": ToolCallF1,
}
"""Metric names ``--metric`` accepts that need no judge."""

JUDGED: dict[str, Callable[[Judge], Metric]] = {
    "agent_goal_accuracy_with_reference": AgentGoalAccuracyWithReference,
    "agent_goal_accuracy_without_reference": AgentGoalAccuracyWithoutReference,
    "topic_adherence_precision": lambda judge: TopicAdherence(judge, mode="precision"),
    "topic_adherence_recall": lambda judge: TopicAdherence(judge, mode="recall"),
    "topic_adherence_f1": lambda judge: TopicAdherence(judge, mode="f1"),
    "role_adherence": RoleAdherence,
    "knowledge_retention": KnowledgeRetention,
    "conversation_completeness": ConversationCompleteness,
    "conversation_relevancy": ConversationRelevancy,
}
"""Metric names ``--metric`` accepts that need ``--model`` (an OpenAI-compatible judge)."""


class _Unusable(Exception):
    """The request or the input cannot be used (exit 2)."""


class _InvalidSample(Exception):
    """A line of the dataset is not a valid sample (exit 1)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``score`` arguments to ``parser``."""
    parser.add_argument(
        "dataset", metavar="DATASET.jsonl", help="one MultiTurnSample (JSON) per line"
    )
    parser.add_argument(
        "-m", "--metric", dest="metrics", action="append", required=True, metavar="NAME",
        choices=[*DETERMINISTIC, *JUDGED],
        help="a metric to compute (repeat for several): " + ", ".join([*DETERMINISTIC, *JUDGED]),
    )
    parser.add_argument(
        "--model", metavar="M", help="the judge model (needed by judged metrics)"
    )
    parser.add_argument(
        "--base-url", metavar="URL",
        help="an OpenAI-compatible endpoint (default: the OpenAI API)",
    )
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
        help="environment variable holding the API key (default: OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, metavar="SECONDS",
        help="seconds per judge request (default: 120)",
    )
    parser.add_argument(
        "--max-concurrency", type=int, default=8, metavar="N", help="jobs run at once (default: 8)"
    )
    parser.add_argument(
        "-o", "--output", metavar="OUT",
        help="write results here (JSONL) instead of standard output",
    )


def run(args: argparse.Namespace, *, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    """Score the dataset; returns the exit code. Errors are one line on stderr."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        samples = read_samples(args.dataset)
        if args.max_concurrency < 1:
            raise _Unusable(f"--max-concurrency must be 1 or more, got {args.max_concurrency}")
        judge = _judge(args)
        metrics = _metrics(args.metrics, judge)
        results = asyncio.run(_score(samples, metrics, judge, args.max_concurrency))
    except _InvalidSample as exc:
        err.write(f"tracebridge score: invalid sample: {exc}\n")
        return EXIT_INVALID
    except (_Unusable, MissingExtraError) as exc:
        err.write(f"tracebridge score: {exc}\n")
        return EXIT_USAGE
    summary_stream = err if args.output is None else out
    try:
        _write_results(args.output, samples, results, out)
    except OSError as exc:
        err.write(f"tracebridge score: cannot write {args.output}: {exc}\n")
        return EXIT_USAGE
    summary_stream.write(format_summary(summarize(results)))
    return EXIT_OK


def read_samples(path: str) -> list[tuple[int, MultiTurnSample]]:
    """(line number, sample) for every non-blank line of the JSONL file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unusable(f"cannot read {path}: {exc}") from None
    samples = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # blank lines between records carry nothing
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _Unusable(f"{path}: line {number}: not valid JSON: {exc}") from None
        try:
            samples.append((number, MultiTurnSample.model_validate(data)))
        except TraceError as exc:
            raise _InvalidSample(f"{path}: line {number}: {exc}") from None
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'sample'}: {e['msg']}"
                for e in exc.errors()[:3]
            )
            raise _InvalidSample(f"{path}: line {number}: {problems}") from None
    if not samples:
        raise _Unusable(f"{path} holds no samples: expected one MultiTurnSample JSON per line")
    return samples


def _judge(args: argparse.Namespace) -> OpenAIJudge | None:
    judged = [name for name in args.metrics if name in JUDGED]
    if not judged:
        return None
    if not args.model:
        raise _Unusable(f"--model is required for judged metrics ({', '.join(judged)})")
    api_key = os.environ.get(args.api_key_env)
    if api_key is None:
        if args.base_url is None:
            raise _Unusable(f"set {args.api_key_env} to the API key (or use --api-key-env)")
        api_key = "unused"  # local OpenAI-compatible servers usually accept any key
    return OpenAIJudge.connect(
        args.model, base_url=args.base_url, api_key=api_key, timeout=args.timeout
    )


def _metrics(names: Sequence[str], judge: Judge | None) -> list[Metric]:
    metrics: list[Metric] = []
    for name in dict.fromkeys(names):  # a name given twice is computed once
        if name in DETERMINISTIC:
            metrics.append(DETERMINISTIC[name]())
        else:
            assert judge is not None  # _judge requires --model for judged names
            metrics.append(JUDGED[name](judge))
    return metrics


async def _score(
    samples: list[tuple[int, MultiTurnSample]],
    metrics: list[Metric],
    judge: OpenAIJudge | None,
    max_concurrency: int,
) -> list[list[MetricResult]]:
    try:
        return await aevaluate(
            [sample for _, sample in samples], metrics, max_concurrency=max_concurrency
        )
    finally:
        if judge is not None:
            await judge.aclose()


def _write_results(
    output: str | None,
    samples: list[tuple[int, MultiTurnSample]],
    results: list[list[MetricResult]],
    stdout: TextIO,
) -> None:
    lines = [
        json.dumps({"line": number, **result.model_dump(mode="json")}, ensure_ascii=False)
        for (number, _), row in zip(samples, results, strict=True)
        for result in row
    ]
    text = "".join(line + "\n" for line in lines)
    if output is None:
        stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")


def format_summary(summary: list[MetricSummary]) -> str:
    """The summary as an aligned text table."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    header = ("metric", "scored", "errors", "mean", "min", "max")
    rows = [
        (s.name, str(s.scored), str(s.errors), number(s.mean), number(s.minimum),
         number(s.maximum))
        for s in summary
    ]
    widths = [max(len(row[k]) for row in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) if k == 0 else cell.rjust(w)
                  for k, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in [header, *rows]
    ]
    return "\n".join(lines) + "\n"
