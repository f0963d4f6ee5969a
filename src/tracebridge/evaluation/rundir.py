"""Reading a run directory back: what ``tracebridge run`` wrote, checked, for the gate, the
calibration and the report.

The reader is strict about the fields it uses and ignores fields it does not know (a newer
run record may add some). ``results.jsonl`` may hold several rows for one (case, metric) when a
run was resumed (a failed request asked again): the last row is the result. A last line cut
short by a kill (no newline) is left out, as resuming the run would drop it. A run directory
whose ``cases.jsonl`` gives a (case, metric) a value that has no row in ``results.jsonl`` is
damaged (no run leaves one: each result is written before its case's row) and refused.

The case file is read only when a transcript or its length is needed (``case_file``): the one
``summary.json`` names (or another path given), and only when its manifest hash is the run's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .._jsonstream import UnreadableInput
from ..metrics.base import MetricResult
from .cases import CaseFileError, CaseSet, load_cases, record_place
from .outcome import GOAL_METRICS, State
from .record import CASES, RESULTS, ROW_KEYS, SUMMARY

__all__ = ["CaseRow", "ControlRow", "RunDir", "RunDirError", "blocked", "read_run"]

_READ = ConfigDict(frozen=True, extra="ignore")


class RunDirError(Exception):
    """RUN_DIR (or its case file) cannot be read (one line)."""


class ControlRow(BaseModel):
    """What a control was expected to come out as, and what it came out as."""

    model_config = _READ

    role: str
    expected: str
    outcome: str | None
    as_expected: bool | None


class CaseRow(BaseModel):
    """One row of ``cases.jsonl``."""

    model_config = _READ

    case_id: str
    line: int
    element: int | None = None
    """The case's place (1-based) in a JSON list of cases; None in JSONL."""
    slice: str | None
    critical: bool
    state: State
    reasons: list[str]
    control: ControlRow | None
    values: dict[str, float | None]
    human_goal_achieved: bool | None
    source_hash: str | None
    transcript_hash: str | None
    format: str | None
    reference_version: str | None
    session_id: str | None

    def place(self) -> str:
        """``line N``, or ``element K (line N)`` for a case of a JSON list (as the command
        line tells it)."""
        return record_place(self.line, self.element)  # as a loaded case says it

    def order(self) -> tuple[int, int]:
        """Where the case is in the case file: its line, then its element (cases of a
        one-line list share their line)."""
        return self.line, self.element or 0


class Planned(BaseModel):
    """The case file's slices and control roles, each with its number of cases."""

    model_config = _READ

    slices: dict[str, int]
    controls: dict[str, int]


class Summary(BaseModel):
    """The parts of ``summary.json`` the readers use."""

    model_config = _READ

    tracebridge: str
    case_file: str
    manifest_hash: str
    cases: int
    metrics: dict[str, str]
    judge: dict[str, Any] | None
    status: str
    stopped: str | None = None
    counts: dict[str, int] = {}
    cost: float | None = None
    cost_note: str | None = None
    usage: dict[str, Any] = {}
    unpriced_requests: int = 0
    """Requests sent without a price for the judge model (0 in a run directory of an
    earlier version)."""
    planned: Planned | None = None
    """None in a run directory of an earlier version."""

    @property
    def cost_unknown(self) -> str | None:
        """Why the run does not know what it cost, or None when ``cost`` is what it cost. A
        request that reported no tokens cost an unknown amount (a run directory of an earlier
        version wrote the cost of the others alone)."""
        without = self.usage.get("requests_without_usage", 0)
        no_price = self.cost_note is not None and self.cost_note.startswith("no --price")
        if type(without) is int and without > 0 and not no_price:
            return f"{without} judge request(s) reported no token usage"
        if self.unpriced_requests > 0 and not no_price:
            return (f"{self.unpriced_requests} judge request(s) were sent without a --price "
                    "for the judge model (an invocation without one; a resume does not price "
                    "them afterwards)")
        if self.cost is None and self.status == "running" and self.cost_note is None:
            return "the run has not finished and recorded no usage yet: resume it"
        if self.cost is None:  # (a resume does not price what was sent without a price)
            return "its requests were sent without a --price for the judge model: run it again " \
                "in a new --out with one"
        return None


@dataclass(frozen=True)
class RunDir:
    """A run directory as read."""

    path: Path
    summary: Summary
    raw_summary: dict[str, Any]
    """``summary.json`` whole, as written."""
    cases: list[CaseRow]
    """One row per case, in file order."""
    results: dict[tuple[str, str], MetricResult]
    """The last result of each (case_id, metric)."""
    cached: frozenset[tuple[str, str]]
    """The (case_id, metric) whose result came from the cache."""

    @property
    def unsettled(self) -> int:
        """The run's cases with no row in ``cases.jsonl`` (a run not finished)."""
        return max(self.summary.cases - len(self.cases), 0)

    @property
    def finished(self) -> bool:
        """The run ended (not ``running``) with a row for each of its cases."""
        return self.summary.status != "running" and self.unsettled == 0

    def planned_but_unsettled(self, kind: str, name: str) -> bool:
        """The case file has a slice (``kind`` ``slices``) or control role (``controls``)
        ``name`` the run has not settled yet: not absent, only not there yet."""
        planned = self.summary.planned
        if planned is None or self.finished:
            return False
        return name in (planned.slices if kind == "slices" else planned.controls)

    @property
    def metric_names(self) -> list[str]:
        return list(self.summary.metrics)

    def metrics_of(self, row: CaseRow) -> list[str]:
        """The metrics the case was to be scored with, as the runner chose them: the goal
        metrics for a control, none for a ``duplicate_side_effect`` control, else every
        metric of the run."""
        if row.control is None:
            return self.metric_names
        if row.control.role == "duplicate_side_effect":
            return []
        return [name for name in self.metric_names if name in GOAL_METRICS]

    def result_of(self, row: CaseRow, metric: str) -> MetricResult | None:
        """The case's result for ``metric``; none for a case its checks block (a result an
        earlier invocation wrote before a check blocked the case is not a verdict of this
        run)."""
        return None if blocked(row) else self.results.get((row.case_id, metric))

    def case_file(self, path: str | None = None) -> CaseSet:
        """The run's cases, read from ``path`` or the file ``summary.json`` names; refused
        when the file is not the one the run read (another manifest hash)."""
        where = path or self.summary.case_file
        try:
            cases = load_cases(where)
        except CaseFileError as exc:
            raise RunDirError(f"the case file {where} cannot be read: {exc}") from None
        except (OSError, ValueError, UnreadableInput) as exc:  # moved, deleted, not JSON
            moved = "" if os.path.exists(where) else "; give the run's case file with --cases"
            raise RunDirError(f"the case file {where} cannot be read: {exc}{moved}") from None
        if cases.manifest_hash != self.summary.manifest_hash:
            raise RunDirError(f"the case file {where} is not the one this run read (manifest "
                              f"{cases.manifest_hash}, the run's {self.summary.manifest_hash})"
                              "; give the run's case file with --cases")
        return cases


def blocked(row: CaseRow) -> bool:
    """Whether the case's checks block it (a control included): no result of it counts."""
    return row.state == "blocked" or (
        row.control is not None and row.control.outcome in ("blocked", "blocked_by_evidence"))


def read_run(path: str | os.PathLike[str]) -> RunDir:
    """Read RUN_DIR; ``RunDirError`` says in one line what is wrong with it."""
    root = Path(path)
    if not root.is_dir():
        what = "not a directory" if root.exists() else "no such directory"
        raise RunDirError(f"{root} is not a run directory ({what})")
    raw = _summary(root / SUMMARY)
    try:
        summary = Summary.model_validate(raw)
    except ValidationError as exc:
        raise RunDirError(f"{root / SUMMARY}: {_first(exc)}") from None
    rows: dict[str, CaseRow] = {}
    at: dict[str, int] = {}  # the line of cases.jsonl each case's last row is on
    for number, value in _lines(root / CASES):
        try:
            row = CaseRow.model_validate(value)
        except ValidationError as exc:
            raise RunDirError(f"{root / CASES}: line {number}: {_first(exc)}") from None
        rows.pop(row.case_id, None)  # appended as cases settle: the last row is the state
        rows[row.case_id] = row
        at[row.case_id] = number
    results: dict[tuple[str, str], MetricResult] = {}
    cached: set[tuple[str, str]] = set()
    for number, value in _lines(root / RESULTS):
        try:
            result = MetricResult.model_validate(
                {k: v for k, v in value.items() if k not in ROW_KEYS})
            key = (str(value["case_id"]), result.name)
        except (ValidationError, KeyError) as exc:
            reason = _first(exc) if isinstance(exc, ValidationError) else f"no {exc}"
            raise RunDirError(f"{root / RESULTS}: line {number}: {reason}") from None
        results[key] = result
        (cached.add if value.get("cached") is not None else cached.discard)(key)
    ordered = sorted(rows.values(), key=CaseRow.order)
    _check_agree(root, ordered, at, results)
    return RunDir(root, summary, raw, ordered, results, frozenset(cached))


def _check_agree(root: Path, rows: list[CaseRow], at: dict[str, int],
                 results: dict[tuple[str, str], MetricResult]) -> None:
    """Refuse a run directory whose ``cases.jsonl`` gives a case a value (or none, for a
    failed request) for a metric that has no row in ``results.jsonl``: that file was deleted,
    cut short or replaced. A run killed at any moment never leaves one, as each result is
    written before its case's row."""
    for row in rows:
        for name, value in row.values.items():
            if (row.case_id, name) not in results:
                raise RunDirError(
                    f"{root / RESULTS} has no result for case {row.case_id!r} and {name}, "
                    f"which {CASES} (line {at[row.case_id]}) gives the value {json.dumps(value)}: "
                    "the run "
                    "directory is damaged (a file deleted, cut short or replaced); run again "
                    "on it to redo what is missing, or use a new --out")


def _summary(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path.parent} is not a run directory (no {SUMMARY})") from None
    except (OSError, ValueError) as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    except RecursionError:
        raise RunDirError(f"cannot read {path}: it is nested too deeply to read") from None
    if not isinstance(value, dict):
        raise RunDirError(f"{path}: expected a JSON object")
    return value


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every complete JSON line of ``path`` (none when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RunDirError(f"{path}: not UTF-8 text: {exc.reason}") from None
    lines = text.split("\n")
    found = []
    for number, line in enumerate(lines[:-1], 1):  # the last piece has no newline: cut
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number} is not JSON ({exc})") from None
        except RecursionError:
            raise RunDirError(f"{path}: line {number} is nested too deeply to read") from None
        if not isinstance(value, dict):
            raise RunDirError(f"{path}: line {number}: expected a JSON object")
        found.append((number, value))
    return found


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])

