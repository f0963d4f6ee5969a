"""``score_batch`` and the ``Scorer`` behind it: records in, one row per record and metric
out, with a state (``scored``, ``unscorable``, ``errored``, ``unrun``). No Ray here.

A record is a ``MultiTurnSample`` as JSON (``source="sample"``, what ``tracebridge sample``
writes and ``tracebridge score`` reads), or a trace of any format, scored as a sample without
references (a ``tracebridge`` object is a sample: its references are kept). Each judged
(record, metric) has the evaluation cache's key (``tracebridge.evaluation.cache.cache_key``,
built as the evaluation runner builds it); a key found among earlier results is answered from
them without asking the judge. A judge whose budget refuses a request leaves that job
``unrun`` with the reason, and no job starts after that (the boundary); a judge or provider
failure, or a metric that raises, is ``errored``, never a low score.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any, cast

import pyarrow as pa
from pydantic import ValidationError

from ..errors import TraceError, with_article
from ..evaluation.budget import Budget, BudgetedJudge, exhausted_reason
from ..evaluation.cache import CacheError, cache_key, judge_part
from ..evaluation.cases import LoadedCase
from ..evaluation.runner import _references
from ..metrics.base import Metric, MetricResult, run_sync
from ..metrics.cli import DETERMINISTIC, JUDGED, score_verdict
from ..metrics.evaluate import crashed
from ..metrics.judge import Judge, OpenAIJudge
from ..native import to_sample
from ..registry import NATIVE, detect_format
from ..sample import MultiTurnSample
from ._convert import (
    SAMPLE,
    RowError,
    check_source,
    parse_record,
    reader_of,
    record_texts,
    row_problems,
    with_columns,
)

__all__ = [
    "SAMPLE",
    "SCORE_COLUMNS",
    "STATES",
    "CachedResult",
    "JudgeFactory",
    "OpenAIJudgeSpec",
    "Scorer",
    "check_metrics",
    "score_batch",
]

STATES = ("scored", "unscorable", "errored", "unrun")
"""``scored``: a value; ``unscorable``: the sample lacks what the metric needs (no judge
failed); ``errored``: the judge or the record failed; ``unrun``: not run (the budget)."""
SCORE_COLUMNS: dict[str, pa.DataType] = {
    "metric": pa.string(),
    "state": pa.string(),
    "value": pa.float64(),
    "error": pa.string(),
    "error_code": pa.string(),
    "result": pa.string(),
    "transcript_hash": pa.string(),
    "key": pa.string(),
    "cached": pa.bool_(),
    "scored_at": pa.string(),
}
"""The columns each output row adds to its record's columns. ``result`` is the
``MetricResult`` as JSON (null when the record could not be read or the job did not run);
``key`` the evaluation cache key of a judged job; ``scored_at`` when the result was made
(for a cached one, when it was made the first time)."""

CachedResult = tuple[str, str]
"""An earlier result: its ``MetricResult`` JSON and when it was made."""
JudgeFactory = Callable[[], Judge]
"""Builds a judge where the scoring runs (each worker its own client)."""


@dataclass(frozen=True)
class OpenAIJudgeSpec:
    """An ``OpenAIJudge`` to build in each worker: a spec pickles, an open client does not.

    The API key is read from ``api_key_env`` where the judge is built; without one, a
    ``base_url`` (a local server) gets a placeholder key, as ``tracebridge score`` does; with
    neither, building raises ``ValueError`` naming the variable.
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    temperature: float | None = 0
    max_retries: int = 2

    def __call__(self) -> OpenAIJudge:
        import os

        api_key = os.environ.get(self.api_key_env) or (
            "unused" if self.base_url is not None else None
        )
        if api_key is None:
            raise ValueError(f"set {self.api_key_env} to the API key where the judge is built "
                             "(on a cluster: in the workers' environment), or give base_url "
                             "for a server that needs none")
        return OpenAIJudge.connect(self.model, base_url=self.base_url, api_key=api_key,
                                   timeout=self.timeout, temperature=self.temperature,
                                   max_retries=self.max_retries)


def check_metrics(names: Sequence[str], has_judge: bool) -> list[str]:
    """The metric names, once each; ``ValueError`` for an unknown one or a judged one
    without a judge."""
    unique = list(dict.fromkeys(names))
    unknown = [n for n in unique if n not in DETERMINISTIC and n not in JUDGED]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; known: "
                         f"{', '.join([*DETERMINISTIC, *JUDGED])}")
    judged = [n for n in unique if n in JUDGED]
    if judged and not has_judge:
        raise ValueError(f"judged metrics ({', '.join(judged)}) need a judge")
    if not unique:
        raise ValueError("no metric to score")
    return unique


class Scorer:
    """Scores Arrow batches of records with ``metrics`` (names as ``tracebridge score``
    takes them), at most ``concurrency`` jobs at once.

    ``judge`` answers the judged metrics (wrapped in a budget by the caller when there is
    one: the cache keys take the settings of the judge inside, as an unbudgeted run's);
    ``cached`` maps cache keys to earlier results. An unknown ``source`` raises
    ``FormatError`` here, before any record.
    """

    def __init__(
        self,
        metrics: Sequence[str],
        judge: Judge | None = None,
        *,
        source: str = SAMPLE,
        cached: Mapping[str, CachedResult] | None = None,
        concurrency: int = 8,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be 1 or more, got {concurrency}")
        self.names = check_metrics(metrics, judge is not None)
        check_source(source)
        self.source = source
        self.cached = cached or {}
        self.concurrency = concurrency
        self.judge_settings: dict[str, Any] = {}
        if judge is not None:  # its part of a cache key, as a run's
            self.judge_settings = judge_part(judge.name, _settings(judge))
        self.metrics: dict[str, Metric] = {}
        for name in self.names:
            if name in DETERMINISTIC:
                self.metrics[name] = DETERMINISTIC[name]()
            else:
                assert judge is not None
                self.metrics[name] = JUDGED[name](judge)
        self.stopped: str | None = None
        """Why no more judged jobs start (the budget's boundary), once it is reached."""

    async def score_table(self, batch: pa.Table) -> pa.Table:
        """One row per record and metric (record-major), the record's columns repeated."""
        records = record_texts(batch, "record")
        lines = (batch.column("line").to_pylist() if "line" in batch.column_names
                 else [None] * batch.num_rows)
        sources = (batch.column("source").to_pylist() if "source" in batch.column_names
                   else [None] * batch.num_rows)
        problems = row_problems(batch, records, told=self.source == "auto")
        gate = asyncio.Semaphore(self.concurrency)
        jobs: list[asyncio.Task[dict[str, Any]]] = []
        for text, line, told, problem in zip(records, lines, sources, problems, strict=True):
            sample: MultiTurnSample | RowError
            try:
                sample = problem if problem is not None else self.sample(text, line, told)
            except RowError as error:
                sample = error
            for name in self.names:
                jobs.append(asyncio.ensure_future(self._job(sample, name, gate)))
        rows = await asyncio.gather(*jobs)
        columns = {name: [row[name] for row in rows] for name in SCORE_COLUMNS}
        return with_columns(_repeat_rows(batch, len(self.names)), columns, SCORE_COLUMNS)

    def sample(self, text: str | None, line: int | None, told: str | None) -> MultiTurnSample:
        """The sample a record stands for; ``RowError`` when it cannot be read.

        A ``tracebridge`` object is a sample, read whole with its references (as
        ``convert`` reads it); a trace of another format is a sample of its messages alone.
        """
        value = parse_record(text, line)
        source = told if self.source == "auto" and told else self.source
        try:
            if source == SAMPLE:
                if not isinstance(value, dict):
                    raise RowError("invalid_sample", f"expected a MultiTurnSample object, got "
                                                     f"{with_article(type(value).__name__)}")
                return MultiTurnSample.model_validate(value)
            if source == "auto":
                source = detect_format(value)
            if source == NATIVE and isinstance(value, dict):
                return to_sample(value)
            return MultiTurnSample(messages=reader_of(source)(value))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'sample'}: "
                                 f"{e['msg']}" for e in exc.errors()[:3])
            raise RowError("invalid_sample", f"invalid sample: {problems}") from None
        except (RowError, TraceError) as exc:
            raise RowError.of(exc, "reading the record") from None
        except Exception as exc:  # one record's failure is its rows' error, never the batch's
            raise RowError.of(exc, f"reading the record as {source}") from None

    async def _job(
        self, sample: MultiTurnSample | RowError, name: str, gate: asyncio.Semaphore
    ) -> dict[str, Any]:
        row: dict[str, Any] = dict.fromkeys(SCORE_COLUMNS)
        row.update(metric=name, cached=False)
        if isinstance(sample, RowError):
            row.update(state="errored", error=sample.message, error_code=sample.code)
            return row
        metric = self.metrics[name]
        judged = name in JUDGED
        if judged:
            references = _references(cast(LoadedCase, SimpleNamespace(case=sample)), name)
            row["key"] = key = cache_key(metric, self.judge_settings, sample.transcript_hash(),
                                         references)
            if key in self.cached:
                return _fill(row, *_from_cache(key, self.cached[key]), cached=True)
        async with gate:
            if judged and self.stopped is not None:
                row.update(state="unrun", error=self.stopped,
                           transcript_hash=sample.transcript_hash())
                return row
            try:
                result = await metric.ascore(sample)
            except Exception as exc:  # one broken metric or judge must not end the batch
                failed = crashed(metric, sample, exc)  # as tracebridge score
                return _fill(row, failed, _now(), state="errored")
        refused = exhausted_reason(result)
        if refused is not None:
            self.stopped = self.stopped or f"budget: {refused}"
            _fill(row, result, _now())
            row.update(state="unrun", error=f"budget: {refused}", value=None)
            return row
        return _fill(row, result, _now())


def _repeat_rows(batch: Any, times: int) -> Any:
    """Each row of ``batch`` (a ``pa.Table`` or a ``pa.RecordBatch``, given back as the same)
    ``times`` times in a row (record-major), every column of the type it had."""
    if times == 1 or batch.num_rows == 0:
        return batch
    indices = pa.array([i for i in range(batch.num_rows) for _ in range(times)], type=pa.int64())
    try:
        return batch.take(indices)
    except pa.ArrowNotImplementedError:  # a column Arrow takes no rows of: one by one
        columns = [_repeat_column(column, indices, times) for column in batch.columns]
        if isinstance(batch, pa.RecordBatch):
            return pa.RecordBatch.from_arrays(columns, schema=batch.schema)
        return pa.Table.from_arrays(columns, schema=batch.schema)


def _repeat_column(column: Any, indices: pa.Array, times: int) -> Any:
    """``column`` taken at ``indices`` (each row ``times`` times in a row). Arrow takes no
    rows of some types: a view type (``string_view``, ``binary_view``, or a list, map,
    dictionary or struct holding one) is taken as its plain type and cast back, which
    keeps it as compact as its rows; a run-end encoded column is repeated by slices, which
    concatenate compactly."""
    try:
        return column.take(indices)
    except pa.ArrowNotImplementedError:
        plain = _without_views(column.type)
        if plain != column.type:
            return column.cast(plain).take(indices).cast(column.type)
    whole = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return pa.concat_arrays([whole.slice(i, 1) for i in range(len(whole)) for _ in range(times)])


def _without_views(kind: pa.DataType) -> pa.DataType:
    """``kind`` with each view type in it (at any depth of lists, fixed-size lists, maps,
    dictionaries and structs) its plain large counterpart."""
    if pa.types.is_string_view(kind):
        return pa.large_string()
    if pa.types.is_binary_view(kind):
        return pa.large_binary()
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_without_views(kind.value_type)))
    if pa.types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_without_views(kind.value_type)))
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(kind.value_field.with_type(_without_views(kind.value_type)),
                        kind.list_size)
    if pa.types.is_map(kind):
        return pa.map_(kind.key_field.with_type(_without_views(kind.key_type)),
                       kind.item_field.with_type(_without_views(kind.item_type)),
                       kind.keys_sorted)
    if pa.types.is_dictionary(kind):
        return pa.dictionary(kind.index_type, _without_views(kind.value_type), kind.ordered)
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_without_views(field.type)) for field in kind])
    return kind


def _fill(row: dict[str, Any], result: MetricResult, at: str, *, cached: bool = False,
          state: str | None = None) -> dict[str, Any]:
    """``row`` with ``result`` in it, in the state its verdict says unless ``state`` is given."""
    if state is None:
        state = {"scored": "scored", "unscorable": "unscorable",
                 "error": "errored"}[score_verdict(result)]
    row.update(state=state, value=result.value, error=result.error,
               result=result.to_json(), transcript_hash=result.transcript_hash,
               cached=cached, scored_at=at)
    return row


def _settings(judge: Judge) -> dict[str, Any]:
    """The request settings of the judge that answers (inside a budget's wrapper, which
    changes none of them), as the evaluation runner takes them for its cache keys."""
    inner = judge.judge if isinstance(judge, BudgetedJudge) else judge
    found = getattr(inner, "settings", None)
    return dict(found) if isinstance(found, dict) else {}


def _from_cache(key: str, cached: CachedResult) -> tuple[MetricResult, str]:
    """The earlier result, validated again and marked as the evaluation cache marks it."""
    text, stored_at = cached
    try:
        result = MetricResult.from_json(text)
    except ValidationError as exc:  # checked when the results were loaded; kept for safety
        raise CacheError(f"earlier result for key {key} does not validate: "
                         f"{exc.errors()[0]['msg']}") from None
    mark = {"key": key, "stored_at": stored_at}
    return result.model_copy(update={"details": {**result.details, "cached": mark}}), stored_at


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def score_batch(
    batch: pa.Table,
    *,
    metrics: Sequence[str],
    judge: Judge | JudgeFactory | None = None,
    budget: Budget | None = None,
    source: str = SAMPLE,
    cached: Mapping[str, CachedResult] | None = None,
    concurrency: int = 8,
) -> pa.Table:
    """Score ``batch`` in this process: one row per record and metric, record-major.

    ``batch`` has ``record`` (a ``MultiTurnSample`` as JSON, or a trace of ``source``'s
    format) and may have ``file``, ``line`` and ``source`` (kept). ``judge`` is a judge or
    a function (or class) that builds one; ``budget`` limits its requests (``BudgetedJudge``).
    A record that cannot be read gives ``errored`` rows; nothing raises for bad data.
    Not from inside a running event loop (use ``Scorer.score_table`` there).

    >>> import pyarrow as pa
    >>> rows = pa.table({"record": ['{"messages": [{"type": "human", "content": "hi"}]}']})
    >>> score_batch(rows, metrics=["tool_call_f1"]).column("state").to_pylist()
    ['unscorable']
    """
    builds = isinstance(judge, type) or (judge is not None and not hasattr(judge, "ask"))
    used = cast(Judge | None, cast(JudgeFactory, judge)() if builds else judge)
    if used is not None and budget is not None:
        used = BudgetedJudge(used, budget)
    scorer = Scorer(metrics, used, source=source, cached=cached, concurrency=concurrency)
    return run_sync(scorer.score_table(batch), "score_batch()", "`await Scorer.score_table()`")
