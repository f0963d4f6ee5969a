"""``tracebridge score DATASET --metric NAME ...``: score a dataset of samples as it is read.

DATASET is JSONL with one ``MultiTurnSample`` per line (or a JSON array of them; ``-`` reads
standard input, e.g. from ``tracebridge sample``). Samples are read one at a time and each
result is written, and flushed, as soon as it is produced: ``{"line": <dataset line>,
"element": <its place in a JSON array, when DATASET is one>, "id": <metadata id, when the
sample has one>, ...MetricResult}`` per line, to ``-o OUT`` or standard output (``-o -`` too).
Ctrl-C stops the run and keeps every result written so far.

The summary (to standard output, or to standard error when the results go there) counts per
metric the samples ``scored``, those ``unscorable`` (the sample lacks what the metric needs, or
the judge found nothing to judge: ``score_verdict``) and the ``errors`` (the judge failed,
a judge request could not be sent, or the metric crashed), then every judge request sent,
retries included.

Exit codes: 0 every result scored or unscorable; 1 a sample in DATASET is invalid (or, with
--keep-going, some were); 2 the request or the input is unusable; 3 some results are errors;
130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from pydantic import ValidationError

from .._cli_output import same_file, standard_stream, summary_stream
from .._jsonstream import ESCAPE, JsonDocuments, Record, UnreadableInput, is_jsonl_name
from .._optional import require
from ..errors import MissingExtraError, TraceError, with_article
from ..options import command_line_hint
from ..sample import ALLOW_PENDING, MultiTurnSample
from .base import Metric, MetricResult, Usage
from .conversation import (
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
    RoleAdherence,
)
from .evaluate import MetricSummary, crashed
from .goals import AgentGoalAccuracyWithoutReference, AgentGoalAccuracyWithReference, TopicAdherence
from .judge import Judge, OpenAIJudge
from .tool_calls import ToolCallAccuracy, ToolCallF1

__all__ = ["DETERMINISTIC", "JUDGED", "configure", "format_summary", "run"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_ERRORS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

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

Verdict = Literal["scored", "unscorable", "error"]


class _Unusable(Exception):
    """The request or the input cannot be used (exit 2)."""


class _InvalidSample(Exception):
    """A record of the dataset is not a valid sample (exit 1)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``score`` arguments to ``parser``."""
    parser.add_argument(
        "dataset", metavar="DATASET",
        help="JSONL, one MultiTurnSample per line (or a JSON array of them); - is stdin",
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
        help="write results here (JSONL, each flushed as it is produced) instead of stdout; "
        "- is stdout",
    )
    parser.add_argument(
        "--keep-going", action="store_true",
        help="skip an invalid sample (reported on stderr) instead of stopping there",
    )
    parser.add_argument(
        "--allow-pending", action="store_true",
        help="accept samples ending on unanswered tool calls (as tracebridge sample "
        "--allow-pending makes them)",
    )


@dataclass
class _Row:
    """One metric's counts over the run."""

    scored: list[float] = field(default_factory=list)
    unscorable: int = 0
    errors: int = 0


@dataclass
class _Tally:
    rows: dict[str, _Row]
    usage: Usage = field(default_factory=Usage)
    written: int = 0
    skipped: int = 0
    samples: int = 0

    def add(self, result: MetricResult, verdict: Verdict) -> None:
        row = self.rows[result.name]
        if verdict == "scored":
            assert result.value is not None
            row.scored.append(result.value)
        elif verdict == "unscorable":
            row.unscorable += 1
        else:
            row.errors += 1
        if result.usage is not None:
            self.usage += result.usage
        self.written += 1


def run(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Score the dataset; returns the exit code. Errors are one line on stderr."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    if args.output == "-":  # standard output, as for convert and sample
        args = argparse.Namespace(**{**vars(args), "output": None})
    results: TextIO | None = None
    tally: _Tally | None = None
    try:
        if args.max_concurrency < 1:
            raise _Unusable(f"--max-concurrency must be 1 or more, got {args.max_concurrency}")
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise _Unusable(f"--timeout must be a finite number more than 0, got {args.timeout}")
        clash = same_file(args.output, [("the dataset", args.dataset)])
        if clash is not None:  # OUT is opened (emptied) before DATASET is read
            raise _Unusable(f"-o {clash}")
        judge = _judge(args)
        metrics = _metrics(args.metrics, judge)
        records = _records(args.dataset, stdin or sys.stdin)
        results = out if args.output is None else _open_output(args.output)
        tally = _Tally({metric.name: _Row() for metric in metrics})
        stopped = asyncio.run(_score(records, metrics, judge, args, results, tally, err))
        if results is not out:
            _close_output(results, args.output)
    except KeyboardInterrupt as exc:
        where = "" if args.output is None else f" to {args.output}"
        done = tally.written if tally is not None else 0
        # a stop signal says which ("terminated (SIGTERM)"); Ctrl-C says nothing
        said = str(exc) or "interrupted"
        err.write(f"tracebridge score: {said}; {done} result(s) written{where}\n")
        return EXIT_INTERRUPTED
    except (_Unusable, MissingExtraError) as exc:
        err.write(f"tracebridge score: {exc}\n")
        return EXIT_USAGE
    finally:
        if results is not None and results is not out:
            with contextlib.suppress(OSError):  # the run has stopped: its error is told
                results.close()
    assert tally is not None
    if stopped is not None:
        err.write(f"tracebridge score: {stopped}\n")
    if tally.written or stopped is None:
        (err if args.output is None else summary_stream(out, err)).write(_summary(tally))
    if isinstance(stopped, _Unusable):
        return EXIT_USAGE
    if isinstance(stopped, _InvalidSample) or tally.skipped:
        return EXIT_INVALID
    return EXIT_ERRORS if any(row.errors for row in tally.rows.values()) else EXIT_OK


def _open_output(path: str) -> TextIO:
    try:
        shared = standard_stream(path)  # -o /dev/stdout redirected to a file: through it
        if shared is not None:
            return os.fdopen(os.dup(shared), "w", encoding="utf-8", errors="backslashreplace")
        return open(path, "w", encoding="utf-8", errors="backslashreplace")  # closed by run
    except OSError as exc:
        raise _Unusable(f"cannot write {path}: {exc}") from None


def _close_output(results: TextIO, path: str) -> None:
    try:
        results.close()
    except OSError as exc:  # the last write (a full disk)
        if _closed_stdout(exc, path):
            raise
        raise _Unusable(f"cannot write {path}: {exc}") from None


def _closed_stdout(exc: OSError, path: str) -> bool:
    """Whether OUT is standard output (``-o /dev/stdout``) and its reader went away: exit
    141 without a message, as for standard output itself."""
    return isinstance(exc, BrokenPipeError) and standard_stream(path) == 1


_Place = dict[str, int]
"""Where a sample is in DATASET, as its results say it: ``{"line": N}``, and ``"element": K``
(1-based) in a JSON array of samples, whose elements may share a line."""
_Done = tuple[_Place, MultiTurnSample, MetricResult, Verdict]
"""A finished job: where its sample is, the sample, its result and the result's verdict."""


def _records(path: str, stdin: TextIO) -> Iterator[tuple[Record, _Place]]:
    if path == "-":
        stream = stdin
    else:
        try:
            # ESCAPE: a line that is not UTF-8 is one bad record (see _jsonstream)
            stream = open(  # noqa: SIM115 - closed after the last record
                path, encoding="utf-8-sig", errors=ESCAPE)
        except OSError as exc:
            raise _Unusable(f"cannot read {path}: {exc}") from None

    def is_sample(element: Any) -> bool:
        return isinstance(element, dict) and ("messages" in element or "user_input" in element)

    def records() -> Iterator[tuple[Record, _Place]]:
        try:
            # a file named .jsonl is JSONL even with one line, as every command reads it
            documents = JsonDocuments(stream, path, is_sample, allow_empty=True,
                                      jsonl=path != "-" and is_jsonl_name(path))
            for element, record in enumerate(documents, start=1):
                # (asked only of an array: a sample alone on the first line is scored before
                # the next line is read)
                if _array_of_non_samples(record.value) and documents.shape == "json":
                    yield from _elements(record)
                    continue
                # every record of an array is one of its elements, in order
                place = {"line": record.line}
                if documents.is_array:
                    place["element"] = element
                yield record, place
        finally:
            if stream is not stdin:
                stream.close()

    return records()


def _array_of_non_samples(document: Any) -> bool:
    """Whether DATASET, read as one document (an array is streamed only when its first
    element is a sample), is an array of samples all the same: ``[]``, or one whose first
    element is not an object, so no message of a conversation either."""
    return type(document) is list and (not document or type(document[0]) is not dict)


def _elements(array: Record) -> Iterator[tuple[Record, _Place]]:
    """The elements of an array read as one document, each told at the array's line."""
    for element, value in enumerate(array.value, start=1):
        yield Record(array.line, value), {"line": array.line, "element": element}


def _sample(record: Record, place: _Place, path: str, allow_pending: bool) -> MultiTurnSample:
    where = f"{path}: line {record.line}"
    if "element" in place:
        where = f"{path}: element {place['element']} (line {record.line})"
    if record.problem is not None:
        raise _Unusable(f"{where}: {record.problem}")
    if not isinstance(record.value, dict):
        raise _InvalidSample(
            f"invalid sample: {where}: expected a MultiTurnSample object, got "
            f"{with_article(type(record.value).__name__)}; make samples from traces with: "
            f"tracebridge sample FILE [--references REFS.jsonl]"
        )
    try:
        return MultiTurnSample.model_validate(
            record.value, context=ALLOW_PENDING if allow_pending else None)
    except TraceError as exc:
        hint = command_line_hint(str(exc), allow_pending_flag=True)
        raise _InvalidSample(f"invalid sample: {where}: {hint}") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'sample'}: {e['msg']}"
            for e in exc.errors()[:3]
        )
        raise _InvalidSample(f"invalid sample: {where}: {problems}") from None


def _judge(args: argparse.Namespace) -> OpenAIJudge | None:
    api_key = judge_key(args)
    if api_key is None:
        return None
    return OpenAIJudge.connect(
        args.model, base_url=args.base_url, api_key=api_key, timeout=args.timeout
    )


def judge_key(args: argparse.Namespace) -> str | None:
    """The API key the judge connects with, None when no judged metric is asked for;
    ``_Unusable`` when the flags cannot make a judge (no ``--model``, no key)."""
    judged = [name for name in args.metrics if name in JUDGED]
    if not judged:
        return None
    if not args.model:
        raise _Unusable(f"--model is required for judged metrics ({', '.join(judged)})")
    # the missing extra first: a key would not make a judge without it
    require("openai", adapter="OpenAI judge", extra="openai", package="openai")
    api_key = os.environ.get(args.api_key_env)
    if not api_key:  # unset or empty
        if args.base_url is None:
            raise _Unusable(f"set {args.api_key_env} to the API key (or use --api-key-env)")
        api_key = "unused"  # local OpenAI-compatible servers usually accept any key
    return api_key


def _metrics(names: Sequence[str], judge: Judge | None) -> list[Metric]:
    metrics: list[Metric] = []
    for name in dict.fromkeys(names):  # a name given twice is computed once
        if name in DETERMINISTIC:
            metrics.append(DETERMINISTIC[name]())
        else:
            assert judge is not None  # _judge requires --model for judged names
            metrics.append(JUDGED[name](judge))
    return metrics


def verdict(result: MetricResult) -> Verdict:
    """A result with no value is unscorable when no judge failed on it: the sample lacked
    what the metric needs (no request was sent), or the judge answered that there is nothing
    to judge. Otherwise the judge failed, and that is an error. (A run puts the case of an
    unscorable result up for review, so there a request that could not be sent counts as
    unscorable too; ``tracebridge score`` has no review and goes by cause: ``score_verdict``.)
    """
    if result.value is not None:
        return "scored"
    assert result.error is not None
    judged = result.usage is not None and result.usage.requests > 0
    if judged and not result.error.startswith("nothing to judge"):
        return "error"
    return "unscorable"


UNSCORABLE_CAUSES = ("the sample has no ", "no role to adhere to: ", "nothing to judge: ")
"""How the ``error`` of an unscorable result starts: the sample lacks what the metric needs
(``the sample has no reference_tool_calls …``, ``… reference …``, ``… reference_topics …``,
``no role to adhere to: …``), or there is nothing to judge."""


def score_verdict(result: MetricResult) -> Verdict:
    """``tracebridge score``'s verdict: a result with no value is unscorable only for one of
    the ``UNSCORABLE_CAUSES``; any other (a judge that failed, a judge request that could not
    be sent) is an error."""
    if result.value is not None:
        return "scored"
    assert result.error is not None
    return "unscorable" if result.error.startswith(UNSCORABLE_CAUSES) else "error"


async def _job(place: _Place, sample: MultiTurnSample, metric: Metric) -> _Done:
    try:
        result = await metric.ascore(sample)
    except Exception as exc:  # one broken metric or sample must not end the run
        return place, sample, crashed(metric, sample, exc), "error"
    return place, sample, result, score_verdict(result)


async def _score(
    records: Iterator[tuple[Record, _Place]],
    metrics: list[Metric],
    judge: OpenAIJudge | None,
    args: argparse.Namespace,
    results: TextIO,
    tally: _Tally,
    err: TextIO,
) -> Exception | None:
    """Score every sample as it is read; returns what stopped the run early, if anything."""
    running: dict[asyncio.Task[_Done], int] = {}
    """Each job's task, and its place in the order the jobs were started."""

    def write(done: set[asyncio.Task[_Done]]) -> None:
        # jobs that finished together are written in the order they were started
        try:
            for task in sorted(done, key=running.__getitem__):
                del running[task]
                place, sample, result, kind = task.result()
                row: dict[str, Any] = dict(place)
                if "id" in sample.metadata:
                    row["id"] = sample.metadata["id"]
                # to_json: a lone surrogate (in a dict key too) is written as its JSON escape
                results.write(json.dumps({**row, **json.loads(result.to_json())},
                                         ensure_ascii=False) + "\n")
                tally.add(result, kind)
            if done:
                results.flush()
        except OSError as exc:  # -o OUT: a full disk, /dev/full, a FIFO's reader gone
            if args.output is None or _closed_stdout(exc, args.output):
                raise  # standard output: a reader that went away is exit 141
            raise _Unusable(f"cannot write {args.output}: {exc}") from None

    stopped: Exception | None = None
    started = 0
    try:
        while True:
            try:
                numbered = next(records, None)
                if numbered is None:
                    break
                record, place = numbered
                sample = _sample(record, place, args.dataset, args.allow_pending)
            except UnreadableInput as exc:
                stopped = _Unusable(str(exc))
                break
            except (_Unusable, _InvalidSample) as exc:
                if not args.keep_going:
                    stopped = exc
                    break
                tally.skipped += 1
                err.write(f"tracebridge score: {exc}\n")
                continue
            tally.samples += 1
            for metric in metrics:
                while len(running) >= args.max_concurrency:
                    done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    write(done)
                running[asyncio.create_task(_job(place, sample, metric))] = started
                started += 1
            await asyncio.sleep(0)  # let finished jobs report between reads
            write({task for task in running if task.done()})
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            write(done)
    finally:
        for task in running:
            task.cancel()  # interrupted: what is not finished is not written
        await asyncio.gather(*running, return_exceptions=True)
        if judge is not None:
            await judge.aclose()
    if stopped is None and tally.samples == 0 and not tally.skipped:
        stopped = _Unusable(
            f"{args.dataset} holds no samples: expected one MultiTurnSample JSON per line"
        )
    return stopped


def _summary(tally: _Tally) -> str:
    rows = [
        (name, str(len(row.scored)), str(row.unscorable), str(row.errors),
         *_spread(row.scored))
        for name, row in tally.rows.items()
    ]
    text = _table(("metric", "scored", "unscorable", "errors", "mean", "min", "max"), rows)
    if tally.usage.requests:
        usage = tally.usage
        text += (f"judge: {usage.requests} request(s) sent, retries included; "
                 f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens")
        if usage.requests_without_usage:
            text += f" ({usage.requests_without_usage} request(s) reported no usage)"
        text += "\n"
    if tally.skipped:
        text += f"{tally.skipped} invalid sample(s) skipped\n"
    return text


def _spread(values: list[float]) -> tuple[str, str, str]:
    if not values:
        return "-", "-", "-"
    return (f"{sum(values) / len(values):.4f}", f"{min(values):.4f}", f"{max(values):.4f}")


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[k]) for row in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) if k == 0 else cell.rjust(w)
                  for k, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in [header, *rows]
    ]
    return "\n".join(lines) + "\n"


def format_summary(summary: list[MetricSummary]) -> str:
    """``evaluate.summarize``'s summary as an aligned text table."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    return _table(
        ("metric", "scored", "errors", "mean", "min", "max"),
        [(s.name, str(s.scored), str(s.errors), number(s.mean), number(s.minimum),
          number(s.maximum)) for s in summary],
    )
