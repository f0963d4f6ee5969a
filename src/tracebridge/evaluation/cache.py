"""A cache of judged results in SQLite, keyed by everything that can change the answer.

``cache_key`` hashes the metric (class, name, ``metric_version`` with its prompt and render
versions, its configuration), the tracebridge version, the judge's request settings, the
transcript hash and a hash of each reference field the metric reads. ``ResultCache`` keeps
results in one SQLite file (WAL, a busy timeout), which several processes may use at once;
a stored value is validated again on every read (against the question asked too, when the
caller says what it was) and comes back marked
``details["cached"] = {"key": ..., "stored_at": ...}``. Results with an error are never
stored. ``NoCache`` has the same methods and keeps nothing.

Exceptions::

    CacheError      the database cannot be opened or read, or holds a value that does not
                    validate or answers another question than its key's (one line; never a
                    wrong value)
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from pydantic import ValidationError
from typing_extensions import Self

from ..hashing import canonical_json
from ..metrics.base import Metric, MetricResult

__all__ = [
    "DEFAULT_PATH",
    "KEY_SCHEME",
    "CacheError",
    "NoCache",
    "ResultCache",
    "cache_key",
]

DEFAULT_PATH = ".tracebridge/cache.sqlite"
KEY_SCHEME = "tbcache2"
"""Changes whenever what a key covers changes, so old keys cannot match new questions."""
_SCHEMA_VERSION = 1
_APPLICATION_ID = 0x74626331  # "tbc1": marks the file as a tracebridge cache
_MARK = "cached"
_TRY = 0.1
"""How long SQLite itself waits on a lock (in C, where no signal handler runs) before the
wait goes on in Python: Ctrl-C or SIGTERM is acted on between tries."""
_T = TypeVar("_T")


class CacheError(Exception):
    """The cache database cannot be used; the message is one line and names the file."""


def judge_part(name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """A judge's part of a cache key: its name and its request settings (a judge may have
    no settings: the protocol asks for a name and ``ask`` only)."""
    return {"name": name, **settings}


def cache_key(
    metric: Metric,
    judge_settings: dict[str, Any],
    transcript_hash: str,
    references: dict[str, str | None],
) -> str:
    """The hex SHA-256 naming ``metric``'s result for one sample and one judge.

    ``references`` maps each reference field the metric reads (all of them, None for an
    absent one) to its canonical JSON text; only the values' hashes enter the key, and the
    field names do even when the value is None, so a metric that reads no reference never
    shares a key with one that reads an absent reference. ``judge_settings`` is the judge's
    ``settings`` (model, endpoint, temperature and every other request setting).

    >>> from tracebridge.metrics import ToolCallF1
    >>> len(cache_key(ToolCallF1(), {}, "tb1:00", {"reference_tool_calls": None}))
    64
    """
    import tracebridge  # read at call time: the version of the code that runs

    kind = type(metric)
    document = {
        "scheme": KEY_SCHEME,
        "tracebridge": tracebridge.__version__,
        "metric": {
            "class": f"{kind.__module__}.{kind.__qualname__}",
            "name": metric.name,
            "version": metric.metric_version,
            "config": _configuration(metric),
        },
        "judge": judge_settings,
        "transcript": transcript_hash,
        "references": {
            field: None if value is None else _sha256(value.encode("utf-8", "surrogatepass"))
            for field, value in references.items()
        },
    }
    try:
        encoded = canonical_json(document)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a cache key is built from JSON values only: {exc}") from None
    return _sha256(encoded)


def _configuration(metric: Metric) -> dict[str, Any]:
    """The metric's own settings (``window``, ``mode``, ...), its judge left out (the judge
    enters the key through its settings). A value that is not JSON enters as its ``repr``,
    which at worst makes every lookup miss, never a wrong one hit."""
    config: dict[str, Any] = {}
    for name, value in sorted(vars(metric).items()):
        if name == "judge":
            continue
        try:
            canonical_json(value)
        except (TypeError, ValueError):
            value = repr(value)
        config[name] = value
    return config


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Closing:
    """``with cache:`` closes the cache at the end of the block."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _Locked(Exception):
    """Opening found the database locked (``sqlite3.OperationalError``: ``cause``)."""

    def __init__(self, cause: sqlite3.OperationalError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _is_locked(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite said the database is locked or busy (another connection holds it)."""
    text = str(error)
    return "locked" in text or "busy" in text


class ResultCache(_Closing):
    """Judged results in a SQLite file, shared safely by threads and processes.

    >>> import tempfile, os
    >>> with ResultCache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
    ...     cache.get("0" * 64) is None
    True
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, *, timeout: float = 30.0):
        self.path = Path(path)
        """The database file."""
        self._lock = threading.Lock()
        self._timeout = timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cache {self.path}: cannot create its folder: {exc}") from None
        if self.path.is_dir():  # SQLite says only that it cannot open it, as for a damaged file
            raise CacheError(f"cache {self.path}: is a directory; give the path of a file")
        self._db = self._connect(timeout)

    def _connect(self, timeout: float) -> sqlite3.Connection:
        """The open database, made a result cache when it is new. Processes opening a new
        file at once may find it locked where SQLite does not wait (two turning it to WAL:
        each holds the lock the other needs, so one is told at once): that is tried again,
        with a short pause, until ``timeout`` has passed."""
        deadline = time.monotonic() + timeout
        pause = 0.01
        while True:
            try:
                return self._connect_once(timeout)
            except _Locked as locked:
                left = deadline - time.monotonic()
                if left <= 0:  # given up only once the whole timeout has passed
                    raise self._error("cannot open it", locked.cause) from None
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.5)

    def _connect_once(self, timeout: float) -> sqlite3.Connection:
        """The database opened in one try, SQLite waiting at most ``_TRY`` of ``timeout`` on
        a lock (``_Locked`` after that: ``_connect`` tries again)."""
        db: sqlite3.Connection | None = None
        wait = min(timeout, _TRY)
        try:
            db = sqlite3.connect(
                self.path, timeout=wait, isolation_level=None, check_same_thread=False
            )
            db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("BEGIN IMMEDIATE")
            self._check_or_create(db)
            db.execute("COMMIT")
        except (sqlite3.Error, CacheError) as exc:
            if db is not None:
                db.close()
            if isinstance(exc, CacheError):
                raise
            if isinstance(exc, sqlite3.OperationalError) and _is_locked(exc):
                raise _Locked(exc) from None
            raise self._error("cannot open it", exc) from None
        return db

    def _check_or_create(self, db: sqlite3.Connection) -> None:
        application_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if application_id == 0 and version == 0 and not tables:
            db.execute(
                "CREATE TABLE results (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                "stored_at TEXT NOT NULL) WITHOUT ROWID"
            )
            db.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            return
        if application_id != _APPLICATION_ID or "results" not in tables:
            raise CacheError(f"cache {self.path}: not a tracebridge result cache "
                             "(an SQLite database of something else); give another path")
        if version != _SCHEMA_VERSION:
            raise CacheError(f"cache {self.path}: made by another tracebridge (layout "
                             f"{version}, this one reads {_SCHEMA_VERSION}); give another path")

    def _error(self, doing: str, exc: sqlite3.Error) -> CacheError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, sqlite3.OperationalError) and _is_locked(exc):
            # the file is sound: another connection held it for the whole timeout
            return CacheError(f"cache {self.path}: {doing}: {detail} (another connection "
                              f"held it for longer than the {self._timeout:g} s timeout; try "
                              "again once it is released)")
        return CacheError(f"cache {self.path}: {doing}: {detail} "
                          "(the file is damaged or unreadable; delete it or give another path)")

    def get(self, key: str, asked: Mapping[str, str] | None = None) -> MetricResult | None:
        """The stored result for ``key`` (validated again, marked cached), or None.

        ``asked`` is what the result must hold to answer the question the key names: its
        ``name``, ``metric_version`` and ``transcript_hash``, as the job asking has them.
        Raises ``CacheError`` when the database cannot be read or the stored value is not a
        valid result without an error, or holds another value for a field of ``asked``.
        """
        with self._lock:
            try:
                row = self._waiting(lambda: self._db.execute(
                    "SELECT value, stored_at FROM results WHERE key = ?", (key,)
                ).fetchone())
            except sqlite3.Error as exc:
                raise self._error("cannot read it", exc) from None
        if row is None:
            return None
        value, stored_at = row
        where = f"cache {self.path}: the stored result for key {key}"
        if not isinstance(value, str) or not isinstance(stored_at, str):
            raise CacheError(f"{where} is not text (the file is damaged; delete it)")
        try:
            result = MetricResult.from_json(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(part) for part in first["loc"]) or "the value"
            problem = " ".join(f"{at}: {first['msg']}".split())
            raise CacheError(f"{where} does not validate ({problem}); delete the file") from None
        if result.error is not None:
            raise CacheError(f"{where} holds an error, which is never cached; delete the file")
        other = _answers_other(result, asked or {})
        if other is not None:
            raise CacheError(f"{where} does not match its key ({other}); delete the file")
        mark = {"key": key, "stored_at": stored_at}
        return result.model_copy(update={"details": {**result.details, _MARK: mark}})

    def put(self, key: str, result: MetricResult) -> bool:
        """Store ``result`` under ``key``; True when stored.

        A result with an error is never stored (False), nor is a second value for a key
        already held (False; the first stays). A cached result's mark is not stored.
        """
        if result.error is not None or result.value is None:
            return False
        details = {name: v for name, v in result.details.items() if name != _MARK}
        value = result.model_copy(update={"details": details}).to_json()
        stored_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            try:
                cursor = self._waiting(lambda: self._db.execute(
                    "INSERT INTO results (key, value, stored_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO NOTHING",
                    (key, value, stored_at),
                ))
            except sqlite3.Error as exc:
                raise self._error("cannot write to it", exc) from None
        return cursor.rowcount == 1

    def _waiting(self, statement: Callable[[], _T]) -> _T:
        """What ``statement`` gives, tried again while another connection holds the database
        (SQLite waits ``_TRY`` each time) until the timeout has passed; then its error."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                return statement()
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(0.01)  # SQLite may say busy without waiting (a WAL being recovered)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"ResultCache({str(self.path)!r})"


def _answers_other(result: MetricResult, asked: Mapping[str, str]) -> str | None:
    """The first field of ``asked`` that ``result`` holds another value for, said as
    ``name is 'x', asked for 'y'``, or None."""
    for field, wanted in asked.items():
        held = getattr(result, field)
        if held != wanted:
            return f"{field} is {held!r}, asked for {wanted!r}"
    return None


class NoCache(_Closing):
    """No cache (``--no-cache``): every lookup misses and nothing is stored."""

    path = None

    def get(self, key: str, asked: Mapping[str, str] | None = None) -> MetricResult | None:
        return None

    def put(self, key: str, result: MetricResult) -> bool:
        return False

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return "NoCache()"
