"""The Ray side: ``read_traces`` (lines of JSONL files, with file and line, read by us) and
``score`` (judged scoring on an actor pool under one budget actor). Imported only when one
of them is called, so the batch functions work without Ray.

Traps this module avoids, each met on a small machine: a UDF that raises aborts the job and
leaves partial output (ours never raise for bad data); ``read_json`` fails a whole file on
one broken line and turns absent keys into nulls (the records stay text until our reader
parses them); actors at a whole CPU can starve the read tasks (ours ask for a fraction);
a SQLite cache cannot be shared across machines (earlier results in Parquet serve instead).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import ray
import ray.data

from .._cli_input import WHOLE_FILE, FormatCheck, Item, Problem, TraceFile
from .._jsonstream import BLANK, JsonDocuments, UnreadableInput, _parse_line, is_jsonl_name
from ..errors import FormatError
from ..evaluation.budget import Budget
from ..evaluation.cache import CacheError
from ..metrics.base import MetricResult
from ..metrics.cli import JUDGED
from ._convert import arrow_array, check_source
from ._factory import build_judge, check_factory
from ._lease import Allowances, Lease, LeasingJudge, Limits, check_price
from ._scoring import SAMPLE, CachedResult, JudgeFactory, Scorer, check_metrics

__all__ = ["load_results", "read_traces", "score"]

BLOCK_BYTES = 8 << 20
"""About how many bytes of a JSONL file one read task takes (cut at a line's end)."""
_BOM = b"\xef\xbb\xbf"
_BLANK = BLANK.encode("ascii")
TRACE_COLUMNS: dict[str, pa.DataType] = {
    "record": pa.string(), "file": pa.string(), "line": pa.int64(), "element": pa.int64(),
    "source": pa.string(), "problem_code": pa.string(), "problem": pa.string(),
}
"""``element``: the record's place (1-based) in its file's top-level JSON array of traces, as
the command line numbers it (records of a one-line array share their line); null in JSONL and
in a file of one document. ``problem_code`` and ``problem``: why a record cannot be used,
found while reading (null for the others): an item of a file read whole that is not JSON (its
record is then null), or a record that is not of the format its file was told to hold
(``unknown_format``)."""


@dataclass(frozen=True)
class Told:
    """What was told of a file from its first records."""

    format: str
    shape: str
    candidates: tuple[str, ...] = ()
    """The formats that all read the first records alike, when several did: each later
    record is told apart by them, as the command line does."""
    basis: str = ""
    """What the format was told from (``its first 32 records``)."""


# --- reading ---------------------------------------------------------------------------------


def read_traces(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    source: str = "auto",
    block_bytes: int = BLOCK_BYTES,
    notice: Callable[[str], object] | None = None,
) -> ray.data.Dataset:
    """The traces of ``paths``, one row each: ``record`` (the JSON text of one trace),
    ``file``, ``line`` (1-based, where it starts), ``element`` (1-based, its place in a JSON
    array of traces, whose records may share a line; null elsewhere) and ``source`` (its
    file's format).

    The format of each file is told once from its first records (as the command line does)
    unless ``source`` names it (``"sample"``: ``MultiTurnSample`` records). JSONL is cut into
    ranges of about ``block_bytes`` at line ends (``\n``; a lone ``\r`` ends no line) and
    read in parallel; every line that is not blank (JSON whitespace only: space, tab, ``\r``)
    is a row, a line that is not JSON too (``convert_batch`` reports it, as it does a line
    holding two documents or an object with a key twice), and a line that is not UTF-8 has
    a null record. A file holding one JSON document or array is read here and its records
    re-encoded as JSON. A record the command line would refuse while reading has it in
    ``problem_code`` and ``problem``, which ``convert_batch`` and ``score_batch`` report:
    one not of its file's told format (``unknown_format``), an item of a file read whole
    that is not JSON (``not_json``, its record null).
    A file that cannot be read as traces (empty, not JSON, not UTF-8 text, an object with a
    key twice in a file read whole) or whose format cannot be told raises ``FormatError``
    (one line, as the command line words it) before anything runs (an empty JSONL file, or
    an empty file of samples, has no rows); a path that is no file raises its ``OSError``,
    as Ray's own readers do: ``FileNotFoundError`` when it is not there,
    ``IsADirectoryError`` for a folder (name the files in it).
    """
    pieces: list[dict[str, Any]] = []
    whole: list[dict[str, Any]] = []
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else list(paths):
        name = _trace_file(os.fspath(path))
        try:
            told = _told(name, source, notice)
            if told.shape == "jsonl" and told.format != WHOLE_FILE:
                pieces.extend(_ranges(name, told, block_bytes))
            else:
                whole.extend(_documents(name, source, told.format))
        except UnreadableInput as exc:
            raise FormatError(str(exc)) from None
    datasets = []
    if pieces:
        ranges = ray.data.from_items(pieces, override_num_blocks=len(pieces))
        # one CPU, as a map_batches asks by default: Ray then fuses the reading with the
        # conversion that follows into one task, and the records never cross the object store
        datasets.append(ranges.map_batches(_read_ranges, batch_size=1, batch_format="pyarrow"))
    if whole or not pieces:
        datasets.append(ray.data.from_arrow(_table(whole)))
    return datasets[0] if len(datasets) == 1 else datasets[0].union(*datasets[1:])


def _trace_file(path: str) -> str:
    """``path``, once it opens as a file: a missing one raises ``FileNotFoundError`` and a
    folder ``IsADirectoryError`` (its traces are read only from files named one by one)."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "Is a folder; name the trace files in it", path)
    with open(path, "rb"):
        return path


def _told(path: str, source: str, notice: Callable[[str], object] | None) -> Told:
    """The file's format (told from its first records unless given) and its shape.

    A line that is not UTF-8 among the first records does not stop the telling: it is told
    again with such bytes replaced (the lines themselves are read strictly, one by one).
    """
    try:
        return _tell(path, source, notice, lenient=False)
    except UnreadableInput as exc:
        if "not UTF-8" not in str(exc):
            raise
        return _tell(path, source, notice, lenient=True)


def _tell(path: str, source: str, notice: Callable[[str], object] | None, *, lenient: bool
          ) -> Told:
    if source == SAMPLE:
        with open(path, encoding="utf-8-sig", errors="replace" if lenient else "strict",
                  newline="\n") as text:
            documents = JsonDocuments(text, path, _is_sample, jsonl=is_jsonl_name(path),
                                      allow_empty=True)
            for _ in documents:
                break
            return Told(source, documents.shape or "json")
    file = TraceFile(path, sys.stdin, source=source, at=None, from_options=[],
                     allow_pending=False, notice=notice or (lambda _: None))
    try:
        if lenient:
            file.documents.stream = open(  # noqa: SIM115 - closed below
                path, encoding="utf-8-sig", errors="replace", newline="\n")
        try:
            for _ in file.items():
                break
        finally:
            if lenient:
                file.documents.stream.close()
        shape = file.documents.shape or "json"
    finally:
        file.close()
    check = file.check
    if check is None:
        return Told(file.format or source, shape)
    return Told(check.format, shape, check.candidates, check.told)


def _ranges(path: str, told: Told | str, block_bytes: int) -> Iterable[dict[str, Any]]:
    """Byte ranges of ``path`` cut at line ends, each with the number of its first line and
    what was ``told`` of the file (or only its format, given)."""
    if isinstance(told, str):
        told = Told(told, "jsonl")
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        start = len(_BOM) if stream.read(len(_BOM)) == _BOM else 0
        line = 1
        while start < size:
            end = min(start + max(block_bytes, 1), size)
            if end < size:
                stream.seek(end - 1)
                end += len(stream.readline()) - 1  # to just after the next newline
            yield {"file": path, "path": os.path.abspath(path), "start": start, "end": end,
                   "line": line, "source": told.format,
                   "candidates": ",".join(told.candidates), "basis": told.basis}
            stream.seek(start)
            line += stream.read(end - start).count(b"\n")
            start = end


def _read_ranges(batch: pa.Table) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for piece in batch.to_pylist():
        teller = _teller(piece)
        with open(piece["path"], "rb") as stream:  # absolute: a worker has its own cwd
            stream.seek(piece["start"])
            data = stream.read(piece["end"] - piece["start"])
        for number, raw in enumerate(data.split(b"\n"), start=piece["line"]):
            if not raw.strip(_BLANK):
                continue  # a blank line is no record, as in every JSONL reader of ours
            try:
                record: str | None = raw.decode("utf-8")
            except UnicodeDecodeError:
                record = None
            problem = None
            if teller is not None and record is not None:
                problem = _told_apart(teller, piece["file"], record, number)
            rows.append(_row(record, piece["file"], number, None, piece["source"], problem))
    return _table(rows)


def _teller(piece: dict[str, Any]) -> FormatCheck | None:
    """What the command line knows of a file once it has told its format from the first
    records, as it checks every later record with it; None when one format alone read
    the first records (nothing to tell apart)."""
    if not piece["candidates"]:
        return None
    return FormatCheck(piece["source"], tuple(piece["candidates"].split(",")), piece["basis"])


def _told_apart(teller: FormatCheck, file: str, text: str, line: int) -> Problem | None:
    """Why the record on ``line`` is not of its file's told format, or None (a line that
    is not JSON is left to the batch functions, which report it)."""
    parsed = _parse_line(text, line)
    if parsed.problem is not None:
        return None
    item = Item(file, line, "jsonl", parsed.value, parsed.value)
    return teller.told_apart(item).problem


def _row(record: str | None, file: str, line: int, element: int | None, source: str,
         problem: Problem | None) -> dict[str, Any]:
    return {"record": record, "file": file, "line": line, "element": element, "source": source,
            "problem_code": None if problem is None else problem.code,
            "problem": None if problem is None else problem.message}


def _is_sample(element: Any) -> bool:
    """Is an element of a top-level array a sample (as ``tracebridge score`` reads them)?"""
    return isinstance(element, dict) and ("messages" in element or "user_input" in element)


def _documents(path: str, source: str, told: str) -> list[dict[str, Any]]:
    """The records of a JSON document or array file (or an OpenTelemetry file, one trace),
    of the format ``told`` from them. They are read as the command line reads them with
    ``source`` (told again when "auto", so that every later record is told apart as there):
    a record it refuses has its problem."""
    if source == SAMPLE:
        with open(path, encoding="utf-8-sig", newline="\n") as text:
            return _sample_rows(JsonDocuments(text, path, _is_sample, allow_empty=True), path)
    file = TraceFile(path, sys.stdin, source=source, at=None, from_options=[],
                     allow_pending=False, notice=lambda _: None)
    try:
        return [_row(_text(item), path, item.line, item.element, told, item.problem)
                for item in file.items()]
    finally:
        file.close()


def _sample_rows(documents: JsonDocuments, path: str) -> list[dict[str, Any]]:
    """The rows of a file of samples read whole, numbered as ``tracebridge score`` numbers
    them (an element of a top-level array has its element number)."""
    rows = []
    for number, record in enumerate(documents, start=1):
        element = number if documents.shape == "array" else None
        text = None if record.problem else json.dumps(record.value, ensure_ascii=False)
        problem = None if record.problem is None else Problem(record.code, record.problem)
        rows.append(_row(text, path, record.line, element, SAMPLE, problem))
    return rows


def _text(item: Item) -> str | None:
    """The record's JSON text; null for one that could not be read (a record not of the
    told format keeps its text, as a JSONL line does)."""
    if item.problem is not None and item.document is None:
        return None
    return json.dumps(item.trace, ensure_ascii=False)


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    """The rows as a table; a record re-encoded from a document holding a lone surrogate
    (or a file name holding one) has it as its escape (``arrow_array``)."""
    return pa.table({name: arrow_array([row[name] for row in rows], kind)
                     for name, kind in TRACE_COLUMNS.items()},
                    schema=pa.schema(list(TRACE_COLUMNS.items())))


# --- earlier results -------------------------------------------------------------------------


def load_results(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
                 ) -> dict[str, CachedResult]:
    """Earlier ``score`` results (Parquet files or folders) as a cache: each scored judged
    result by its key. Every result is validated here; one that does not validate, or that
    holds an error, raises ``CacheError`` (one line) before anything is scored, as does a
    path that is not there (on a first run, leave ``score``'s ``cache`` None)."""
    found: dict[str, CachedResult] = {}
    sources = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike))
                                      else list(paths))]
    first_run = "on a first run, before any results were written, leave cache=None"
    try:
        parts = [pads.dataset(p, format="parquet") for p in sources]
        if not any(part.files for part in parts):
            raise CacheError(f"earlier results {sources}: they hold no Parquet file ({first_run})")
        table = pads.dataset(parts).to_table(columns=["key", "state", "result", "scored_at"])
    except FileNotFoundError as exc:  # its text is the path alone
        raise CacheError(f"earlier results {sources}: cannot read them: {exc}: no such file or "
                         f"folder ({first_run})") from None
    except (OSError, pa.ArrowException) as exc:  # (Arrow's text may run over lines)
        raise CacheError(f"earlier results {sources}: cannot read them: "
                         f"{' '.join(str(exc).split())}") from None
    for row in table.filter(pads.field("state") == "scored").to_pylist():
        if row["key"] is None:
            continue  # a deterministic metric: not cached, as in the evaluation cache
        try:
            result = MetricResult.from_json(row["result"] or "")
        except ValueError as exc:
            raise CacheError(f"earlier result for key {row['key']} does not validate: "
                             f"{' '.join(str(exc).split())[:200]}") from None
        if result.error is not None:
            raise CacheError(f"earlier result for key {row['key']} holds an error, which is "
                             "never cached")
        details = {k: v for k, v in result.details.items() if k != "cached"}
        text = result.model_copy(update={"details": details}).to_json()
        found.setdefault(row["key"], (text, row["scored_at"] or ""))
    return found


# --- scoring ---------------------------------------------------------------------------------


def score(
    ds: ray.data.Dataset,
    metrics: Sequence[str],
    *,
    judge: JudgeFactory | None = None,
    actors: int = 2,
    budget: Budget | None = None,
    source: str = SAMPLE,
    cache: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    concurrency: int = 8,
    num_cpus: float = 0.25,
    batch_size: int = 64,
) -> ray.data.Dataset:
    """One row per record and metric: the record's columns and ``metric``, ``state``,
    ``value``, ``error``, ``error_code``, ``result`` (JSON), ``transcript_hash``, ``key``,
    ``cached``, ``scored_at`` (see ``SCORE_COLUMNS``).

    ``judge`` builds each actor's judge (``OpenAIJudgeSpec(...)``: every actor opens its own
    async client); ``actors`` scoring actors of ``num_cpus`` CPU each run at most
    ``concurrency`` jobs each. ``budget`` is held by one budget actor that leases each
    scoring actor its share in chunks; past the boundary rows are ``unrun`` with the reason.
    ``cache`` names earlier results (Parquet written from this function's output): a judged
    job whose key is among them is answered from them without a request.

    A ``judge`` that is a judge itself, or does not pickle, raises ``ValueError`` here; so
    does a cost limit without the price of the model ``judge`` names (an ``OpenAIJudgeSpec``,
    or a ``model`` attribute; else each actor checks the judge it builds). A judge that
    cannot be built in an actor raises, with the actor's first batch, one line naming the
    factory and why.
    """
    names = check_metrics(metrics, judge is not None)
    check_source(source)
    if actors < 1:
        raise ValueError(f"actors must be 1 or more, got {actors}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be 1 or more, got {concurrency}")
    if judge is not None:
        check_factory(judge)
    model = getattr(judge, "model", None)
    if budget is not None and isinstance(model, str):  # else each actor checks its judge's
        check_price(model, Limits.of(budget))
    keeper = None
    if budget is not None and any(name in JUDGED for name in names):
        keeper = _Keeper.remote(Limits.of(budget), actors)
    cached = ray.put(load_results(cache) if cache is not None else {})
    # Blocks of a batch's size (split as they stream, no shuffle), so that every actor gets
    # work: a JSONL file under ``block_bytes`` is one block, which one actor would take whole.
    return ds.repartition(target_num_rows_per_block=batch_size).map_batches(
        _ScoringActor,
        fn_constructor_kwargs={"names": names, "judge": judge, "keeper": keeper,
                               "limits": None if budget is None else Limits.of(budget),
                               "cached": [cached], "source": source,
                               "concurrency": concurrency},
        batch_format="pyarrow", batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=num_cpus,
    )


class _KeeperActor:
    """The budget actor: the one ``Allowances`` every scoring actor leases from."""

    def __init__(self, limits: Limits, workers: int) -> None:
        self.books = Allowances(limits, workers)

    def lease(self, tokens: int, cost: float) -> Lease | str:
        return self.books.lease(tokens, cost)

    def give_back(self, unused: Lease) -> None:
        self.books.give_back(unused)

    def leased(self) -> tuple[int, int, float, str | None]:
        books = self.books
        return books.requests, books.tokens, float(books.cost), books.stopped


_Keeper: Any = ray.remote(num_cpus=0)(_KeeperActor)


class _ScoringActor:
    """One scoring actor: its own event loop, judge client and share of the budget."""

    def __init__(
        self,
        names: list[str],
        judge: JudgeFactory | None,
        keeper: Any,
        limits: Limits | None,
        cached: list[Any],
        source: str,
        concurrency: int,
    ) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.keeper = keeper
        self.leasing: LeasingJudge | None = None
        self.failed: Exception | None = None
        """Why this actor has no judge: raised with its first batch, in one line."""
        leased = limits if keeper is not None else None
        built = None if judge is None else build_judge(judge, leased)
        if isinstance(built, Exception):
            self.failed = built
            return
        if built is not None and leased is not None:
            self.leasing = LeasingJudge(built, leased, self._lease)
        self.scorer = Scorer(names, self.leasing or built, source=source,
                             cached=ray.get(cached[0]), concurrency=concurrency)

    async def _lease(self, tokens: int, cost: float) -> Lease | str:
        granted: Lease | str = await self.keeper.lease.remote(tokens, cost)
        return granted

    def __call__(self, batch: pa.Table) -> pa.Table:
        if self.failed is not None:
            raise self.failed
        scored = self.loop.run_until_complete(self.scorer.score_table(batch))
        if self.leasing is not None:  # nothing is in flight between batches
            ray.get(self.keeper.give_back.remote(self.leasing.unused()))
        return scored
