"""The run directory: what ran, what did not, and why, written as the run goes.

``RUN_DIR/results.jsonl``  one ``MetricResult`` per case and metric, appended and flushed as
                           each is produced: ``{"case_id", ...MetricResult, "cached"}``
``RUN_DIR/cases.jsonl``    each case's state, appended as it settles (started afresh on
                           resume), rewritten in case order when the run ends
``RUN_DIR/summary.json``   versions, the manifest hash, counts, usage and cost, the unrun cases;
                           ``"status": "running"`` until the run ends
``RUN_DIR/.lock``          locked (``flock``) while a run writes RUN_DIR: a second run on it is
                           refused; the system lets go of it when the process ends, killed too

Running again on the same RUN_DIR resumes: results already written are kept (those of a failed
judge request are asked again), only what is missing runs. Each row that spent judge requests
keeps the price they were sent at, so a resume with another ``--price`` (or none) never prices
the earlier invocations' requests again. A run killed at any moment loses at
most the requests in flight: a line cut short by the kill is dropped when the run resumes.
Resuming is refused when RUN_DIR holds a run of another case set, metric, judge, pass threshold
or set of user checks.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from .._cli_output import JSON_SAFE
from .._json import same_json
from ..metrics.base import MetricResult, Usage
from ._estimate import Price

__all__ = ["ROW_KEYS", "RecordError", "RunRecord", "Spend"]

RESULTS, CASES, SUMMARY = "results.jsonl", "cases.jsonl", "summary.json"
SPENT = "spent.jsonl"
"""What the judge spent on jobs that left no result (stopped by the budget mid-way): a resumed
run counts it as well as the results' own usage."""
LOCK = ".lock"
"""Held locked by the run writing RUN_DIR."""
ROW_KEYS = ("case_id", "cached", "price", "refused_requests")
"""What a results row holds besides the ``MetricResult`` fields."""
_SAME_RUN = {
    "manifest_hash": "manifest hash",
    "metrics": "set of metrics (--metric) or metric versions",
    "judge": "judge",
    "pass_threshold": "pass threshold (--pass-threshold)",
    "checks": "set of user checks (--checks)",
}
"""What must match for a run to resume on a RUN_DIR, and how the refusal names it."""


try:
    import fcntl
except ImportError:  # not a POSIX system: RUN_DIR cannot be locked there
    _flock: Callable[[Any, int], Any] | None = None
    _EXCLUSIVE = 0
else:
    _flock = fcntl.flock
    _EXCLUSIVE = fcntl.LOCK_EX | fcntl.LOCK_NB


class RecordError(Exception):
    """RUN_DIR cannot be used (one line)."""


@dataclass
class Spend:
    """What the judge's requests cost, each at the price it was sent at."""

    known: Fraction = Fraction(0)
    """Dollars of the requests sent with a price (their reported tokens at that price)."""
    unpriced: int = 0
    """Requests sent without a price for the judge model (their cost is not known)."""
    refused: int = 0
    """Requests the server refused with a client-error status and no usage (a 429, a 400): not
    billed, counted in ``Usage.requests`` with no tokens."""

    def add(self, usage: Usage, price: Price | None, refused: int) -> None:
        if price is None:  # a refused request cost nothing, whatever the price
            self.unpriced += max(usage.requests - refused, 0)
        else:
            self.known += price.cost(usage.prompt_tokens, usage.completion_tokens)
        self.refused += refused


class RunRecord:
    """Writes one run directory."""

    def __init__(
        self, path: str | os.PathLike[str], notice: Callable[[str], object] | None = None
    ) -> None:
        self.path = Path(path)
        self.notice = notice
        """Told, in one line, what the run does otherwise than asked (RUN_DIR not locked)."""
        self._results: TextIO | None = None
        self._cases: TextIO | None = None
        self._spent_rows: TextIO | None = None
        self._lock: TextIO | None = None
        self.usage = Usage()
        """What the judge spent on this RUN_DIR's results, resumed runs included (cache hits
        cost nothing)."""
        self.spend = Spend()
        """What that cost, each invocation's requests at the price they were sent at."""
        self.price: Price | None = None
        """The judge model's price in this invocation (set before ``open``), written with each
        row that spends."""

    # --- starting and resuming ---------------------------------------------------------------

    def open(self, header: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        """Start or resume the run; returns the rows already written, by (case_id, metric).

        ``header`` is the start of ``summary.json``; its ``manifest_hash``, ``metrics``,
        ``judge``, ``pass_threshold`` and ``checks`` must match those of a run already in
        RUN_DIR. RUN_DIR stays locked until ``finish``, ``close`` or ``abandon``.
        """
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordError(f"cannot create {self.path}: {exc}") from None
        made = not (self.path / LOCK).exists()
        self._take_lock()
        try:
            done = self._resume(header)
        except RecordError:
            if made:  # refused before writing anything: leave RUN_DIR as it was found
                with contextlib.suppress(OSError):
                    (self.path / LOCK).unlink()
            self._release_lock()
            raise
        self.write_summary({**header, "status": "running"})
        try:
            # JSON_SAFE: a lone surrogate (from a JSON escape) is written back as its escape
            self._results = open(  # noqa: SIM115
                self.path / RESULTS, "a", encoding="utf-8", errors=JSON_SAFE)
            # the states are worked out again from the results; the end rewrites the file whole
            self._cases = open(  # noqa: SIM115
                self.path / CASES, "w", encoding="utf-8", errors=JSON_SAFE)
            self._spent_rows = open(  # noqa: SIM115
                self.path / SPENT, "a", encoding="utf-8", errors=JSON_SAFE)
        except OSError as exc:
            raise RecordError(f"cannot write {self.path}: {exc}") from None
        return done

    def _take_lock(self) -> None:
        """Lock RUN_DIR for this run, or refuse: another run is writing it."""
        try:
            lock = open(self.path / LOCK, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise RecordError(f"cannot write {self.path}: {exc}") from None
        self._lock = lock
        try:
            if _flock is None:
                raise OSError("this system has no flock")
            _flock(lock, _EXCLUSIVE)
        except BlockingIOError:
            self._release_lock()
            raise RecordError(f"{self.path} is in use by another run (it holds "
                              f"{self.path / LOCK}): wait for that run to end, or use "
                              "another --out") from None
        except OSError as exc:  # a file system without locks (NFS without its lock service)
            if self.notice is not None:
                self.notice(f"{self.path / LOCK} cannot be locked ({exc}): the run goes on, "
                            f"but another run on {self.path} at the same time is not refused")

    def _release_lock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):  # closing lets go of the lock whatever it says
                self._lock.close()
            self._lock = None

    def _resume(self, header: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        summary = self.path / SUMMARY
        results = self.path / RESULTS
        if not summary.exists():
            # a file of the name the run writes is not the run's (it would be written over):
            # a case file called cases.jsonl, or what is left of a run that lost its summary
            for name in (RESULTS, CASES, SPENT):
                if (self.path / name).exists():
                    raise RecordError(f"{self.path} holds {name} but no {SUMMARY}: not a run "
                                      "directory this version can resume; use a new --out")
            return {}
        try:
            before = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RecordError(f"cannot read {summary}: {exc}") from None
        except RecursionError:
            raise RecordError(f"cannot read {summary}: it is nested too deeply to read; use "
                              "a new --out") from None
        for key, said in _SAME_RUN.items():
            if isinstance(before, dict) and key not in before and key in header:
                raise RecordError(
                    f"{self.path} holds a run that did not record its {said} (made by an "
                    "earlier version): it cannot be told whether resuming would mix two "
                    "runs; use a new --out"
                )
            # as JSON: a recorded true is not the threshold 1.0
            if not isinstance(before, dict) or not same_json(_compared(key, before.get(key)),
                                                             _compared(key, header.get(key))):
                raise RecordError(
                    f"{self.path} holds a run with another {said}; resuming "
                    "would mix two runs: use a new --out"
                )
        rows = self._rows(results)
        self._spent_before(self.path / SPENT)
        return rows

    def _spent_before(self, spent: Path) -> None:
        """The usage of jobs that left no result, written by earlier invocations."""
        if not spent.exists():
            return
        _drop_cut_line(spent)
        with open(spent, encoding="utf-8") as lines:
            for number, text in enumerate(lines, 1):
                try:
                    row = json.loads(text)
                    self._count(Usage.model_validate(row["usage"]), row)
                except (ValueError, KeyError, TypeError) as exc:
                    raise RecordError(f"{spent}: line {number} is not a spent row ({exc}); "
                                      "use a new --out") from None
                except RecursionError:
                    raise RecordError(f"{spent}: line {number} is nested too deeply to read; "
                                      "use a new --out") from None

    def _rows(self, results: Path) -> dict[tuple[str, str], dict[str, Any]]:
        if not results.exists():
            return {}
        _drop_cut_line(results)
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        with open(results, encoding="utf-8") as lines:
            for number, text in enumerate(lines, 1):
                try:
                    row = json.loads(text)
                    MetricResult.model_validate({k: v for k, v in row.items()
                                                 if k not in ROW_KEYS})
                    rows[(row["case_id"], row["name"])] = row
                    self._spent(row)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else exc
                    raise RecordError(f"{results}: line {number} is not a result row "
                                      f"({reason}); use a new --out") from None
                except RecursionError:
                    raise RecordError(f"{results}: line {number} is nested too deeply to "
                                      "read; use a new --out") from None
        return rows

    # --- as the run goes -----------------------------------------------------------------

    def write_result(self, case_id: str, result: MetricResult,
                     cached: dict[str, Any] | None = None,
                     refused: int = 0) -> dict[str, Any]:
        """Append one result row and flush it; returns the row. ``refused``: its requests the
        server answered with an error status and no usage."""
        # to_json: a lone surrogate (in a dict key too) is kept, written as its JSON escape
        row = {"case_id": case_id, **json.loads(result.to_json()), "cached": cached,
               **self._priced(refused)}
        self._append(self._results, row)
        self._spent(row)
        return row

    def _priced(self, refused: int) -> dict[str, Any]:
        """What a row that spends keeps of its spending: the price it was sent at (null: none
        given) and its requests refused unbilled."""
        price = None if self.price is None else {
            "input_per_million": self.price.input_per_million,
            "output_per_million": self.price.output_per_million}
        return {"price": price, "refused_requests": refused}

    def _spent(self, row: dict[str, Any]) -> None:
        if row.get("cached") is None and row.get("usage") is not None:
            self._count(Usage.model_validate(row["usage"]), row)

    def _count(self, usage: Usage, row: dict[str, Any]) -> None:
        """Count a row's usage at the price the row was written with (null: none given). A
        row of an earlier version, which kept no price, is priced at this invocation's, as
        that version priced every row (so a run it wrote keeps the cost it had)."""
        refused = row.get("refused_requests", 0)
        if type(refused) is not int or refused < 0:
            raise ValueError(f"refused_requests is {refused!r}, not a count")
        if "price" in row:
            price = None if row["price"] is None else _price(row["price"])
        else:
            price = self.price
        self.usage += usage
        self.spend.add(usage, price, refused)

    def write_spent(self, case_id: str, name: str, usage: Usage, refused: int = 0) -> None:
        """Append what a job spent before it was stopped without a result, and count it."""
        row = {"case_id": case_id, "name": name, "usage": usage.model_dump(mode="json"),
               **self._priced(refused)}
        self._append(self._spent_rows, row)
        self._count(usage, row)

    def write_case(self, row: dict[str, Any]) -> None:
        """Append one case's state as it settles."""
        self._append(self._cases, row)

    def _append(self, stream: TextIO | None, row: dict[str, Any]) -> None:
        assert stream is not None, "open() first"
        try:
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            stream.flush()
        except OSError as exc:  # a full disk: the run stops here (a cut line is dropped on
            # resume)
            raise RecordError(f"cannot write {stream.name}: {exc}") from None

    # --- the end -------------------------------------------------------------------------

    def finish(self, cases: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        """Rewrite ``cases.jsonl`` in case order, write the final ``summary.json`` and let go
        of RUN_DIR."""
        self._close_streams()
        _replace(self.path / CASES,
                 "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in cases))
        self.write_summary(summary)
        self._release_lock()

    def write_summary(self, summary: dict[str, Any]) -> None:
        _replace(self.path / SUMMARY, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")

    def close(self) -> None:
        """Close what is open and let go of RUN_DIR."""
        try:
            self._close_streams()
        finally:
            self._release_lock()

    def _close_streams(self) -> None:
        for stream in (self._results, self._cases, self._spent_rows):
            if stream is not None:
                stream.close()
        self._results = self._cases = self._spent_rows = None

    def abandon(self) -> None:
        """The run stopped on an error: close what is open, whatever closing says (a full
        disk fails again on what is still buffered; resuming drops a line cut short)."""
        for stream in (self._results, self._cases, self._spent_rows):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        self._results = self._cases = self._spent_rows = None
        self._release_lock()


def _compared(key: str, value: Any) -> Any:
    """``value`` of the ``summary.json`` field ``key`` as resuming compares it: the user
    checks as a set (the same checks, in another order or one given twice, decide the same
    states), every other field as it is."""
    if key == "checks" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sorted(set(value))
    return value


def _price(kept: Any) -> Price:
    """The price a row was written with (``ValueError``: not one)."""
    if not isinstance(kept, dict):
        raise ValueError(f"price is {kept!r}, not a price")
    try:
        return Price(kept["input_per_million"], kept["output_per_million"])
    except KeyError as exc:
        raise ValueError(f"price has no {exc}") from None


def _drop_cut_line(path: Path) -> None:
    """Cut a last line that a kill left without its newline (the request it recorded reruns)."""
    with open(path, "rb+") as data:
        size = data.seek(0, os.SEEK_END)
        if size == 0:
            return
        data.seek(size - 1)
        if data.read(1) == b"\n":
            return
        end = size
        while end > 0:
            step = min(65536, end)
            data.seek(end - step)
            chunk = data.read(step)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                data.truncate(end - step + newline + 1)
                return
            end -= step
        data.truncate(0)


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it)."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8", errors=JSON_SAFE) as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as if written directly (mkstemp makes it 0600)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        raise RecordError(f"cannot write {path}: {exc}") from None
