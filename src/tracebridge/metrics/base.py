"""What every metric returns (``MetricResult``) and what every metric is (``Metric``).

A metric scores one ``MultiTurnSample``. It never invents a value: when it cannot score
(a reference is missing, there is nothing to judge, the judge failed), ``value`` is None and
``error`` says why. ``score()`` is the synchronous form of ``await ascore()``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticSerializationError

from .._json import RepeatedKey, json_copy_at, read_json
from ..errors import TraceError
from ..messages import JsonObject
from ..sample import MultiTurnSample, surrogate_key_in

__all__ = ["Metric", "MetricResult", "Usage", "run_sync"]

T = TypeVar("T")

_CONFIG = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Usage(BaseModel):
    """Tokens a judge spent on one result, summed over every request (retries included)."""

    model_config = _CONFIG

    requests: int = Field(default=0, ge=0)
    """Chat Completions requests sent (including retries and failed ones)."""
    prompt_tokens: int = Field(default=0, ge=0)
    """Input tokens, as the server reported them."""
    completion_tokens: int = Field(default=0, ge=0)
    """Output tokens, as the server reported them."""
    total_tokens: int = Field(default=0, ge=0)
    """Total tokens, as the server reported them."""
    requests_without_usage: int = Field(default=0, ge=0)
    """Requests whose reply carried no ``usage`` (their tokens are not in the sums)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            requests_without_usage=self.requests_without_usage + other.requests_without_usage,
        )


class _DetailsNotJson(TraceError, ValueError):
    """``details`` that are not plain JSON (``unserializable_value``, with the path inside
    them). A ``ValueError`` too, so pydantic reports it as it reports any field's problem:
    a ``ValidationError`` whose error's ``ctx["error"]`` is this ``TraceError``, which every
    reader of stored results already handles."""


def _plain_details(value: Any) -> Any:
    """``details`` checked as a message's ``metadata`` is (``json_copy_at``: plain JSON, taken
    as a copy), or left to pydantic's own type error when it is not a dict."""
    if type(value) is dict and value:
        try:
            return json_copy_at(value, "details")
        except TraceError as error:
            raise _DetailsNotJson(error.code, error.detail, path=error.path) from None
    return value


class MetricResult(BaseModel):
    """One metric's verdict on one sample.

    Exactly one of ``value`` and ``error`` is set: a score in [0, 1], or the reason there
    is none.
    """

    model_config = _CONFIG

    name: str
    """The metric's name (``tool_call_accuracy``, ``topic_adherence_f1``, ...)."""
    value: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """The score in [0, 1]; None when the metric could not score (see ``error``)."""
    reason: str | None = None
    """The judge's explanation, for judge-based metrics."""
    details: Annotated[JsonObject, BeforeValidator(_plain_details)] = {}
    """How the value was reached: pairings, per-message verdicts, counts (plain JSON: NaN, a
    tuple, a set, a key that is not a string or an object is refused, see ``_DetailsNotJson``,
    since the JSON round trip would change it)."""
    error: str | None = None
    """Why there is no value; None when there is one."""
    metric_version: str
    """The metric's code version; for judged metrics also the prompt and render versions."""
    judge: str | None = None
    """The judge that was asked (model and endpoint); None for deterministic metrics."""
    usage: Usage | None = None
    """Tokens spent by the judge; None for deterministic metrics."""
    transcript_hash: str
    """``sample.transcript_hash()`` of the scored sample."""

    @classmethod
    def _trusted(cls, fields: dict[str, Any]) -> MetricResult:
        """An instance of ``fields`` (every field, in order, already of its type) without
        validation, as pydantic's ``model_construct`` makes one, for a fraction of its cost."""
        result = object.__new__(cls)
        object.__setattr__(result, "__dict__", fields)
        object.__setattr__(result, "__pydantic_fields_set__", set(_FIELDS))
        object.__setattr__(result, "__pydantic_extra__", None)
        object.__setattr__(result, "__pydantic_private__", None)
        return result

    def to_json(self) -> str:
        """The result as JSON text that ``from_json`` reads back equal. Unlike
        ``model_dump_json``, it writes any string: a lone surrogate (a file name decoded
        with ``surrogateescape``, in a call's arguments) is escaped (``\\udcff``), where
        pydantic's writer refuses it."""
        try:
            text = self.model_dump_json()
        except PydanticSerializationError:
            return self._json_by_python()
        # a lone surrogate in a dict key comes out as U+FFFD, without an error (as in a sample)
        if "\ufffd" in text and surrogate_key_in(self.model_dump()):
            return self._json_by_python()
        return text

    def _json_by_python(self) -> str:
        return json.dumps(self.model_dump(), separators=(",", ":"))  # every field JSON

    @classmethod
    def from_json(cls, text: str | bytes) -> MetricResult:
        """The result ``to_json`` wrote (``ValidationError`` when the text is not one).

        Read strictly, as ``to_json`` writes it: ``"value": true`` or ``"1"`` and a count of
        ``true`` are refused, not converted, and so is an object holding a key twice (which
        value was meant is not known): a damaged stored result never reads as a score.
        Python's reader reads it (pydantic's refuses an escaped lone surrogate); text that is
        not JSON to it is pydantic's to refuse.
        """
        try:
            value = read_json(text if isinstance(text, str) else text.decode("utf-8"))
        except RepeatedKey as exc:
            raise ValidationError.from_exception_data(cls.__name__, [
                {"type": "json_invalid", "loc": (), "input": text, "ctx": {"error": str(exc)}},
            ]) from None
        except (ValueError, RecursionError):  # not JSON (or too deep) for Python's reader
            return cls.model_validate_json(text, strict=True)
        return cls.model_validate(value, strict=True)

    @model_validator(mode="after")
    def _value_or_error(self) -> MetricResult:
        if (self.value is None) == (self.error is None):
            raise ValueError(
                "a MetricResult has a value or an error, not both and not neither "
                f"(got value={self.value!r}, error={self.error!r})"
            )
        return self


_FIELDS = frozenset(MetricResult.model_fields)


class Metric(ABC):
    """A metric: ``await metric.ascore(sample)`` or ``metric.score(sample)``."""

    name: str
    """The name results carry; unique per configuration (``topic_adherence_recall``)."""
    version: str = "1"
    """The code version; bumped whenever a value can change for the same sample."""

    @property
    def metric_version(self) -> str:
        """What ``MetricResult.metric_version`` holds for this metric."""
        return self.version

    @property
    def judge_name(self) -> str | None:
        """The judge's identity, for judge-based metrics."""
        return None

    @abstractmethod
    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        """Score one sample."""

    def score(self, sample: MultiTurnSample) -> MetricResult:
        """Score one sample synchronously (not from inside a running event loop)."""
        return run_sync(
            self.ascore(sample),
            f"{type(self).__name__}.score()",
            "`await metric.ascore(sample)`",
        )

    def result(
        self,
        sample: MultiTurnSample,
        value: float | None,
        *,
        error: str | None = None,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> MetricResult:
        """A result of this metric for ``sample``."""
        return MetricResult(
            name=self.name,
            value=value,
            reason=reason,
            details=details or {},
            error=error,
            metric_version=self.metric_version,
            judge=self.judge_name,
            usage=usage,
            transcript_hash=sample.transcript_hash(),
        )

    def scored(
        self, sample: MultiTurnSample, value: float, details: dict[str, Any]
    ) -> MetricResult:
        """A deterministic metric's result: ``value`` and the JSON ``details`` its own code
        computed, built without a second validation pass (the same fields ``result`` sets;
        the value's range is still checked, ``details`` are trusted to be plain JSON: give
        anything else to ``result``, which checks them)."""
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"a score lies in [0, 1], got {value!r}")
        return MetricResult._trusted(
            {
                "name": self.name,
                "value": value,
                "reason": None,
                "details": details,
                "error": None,
                "metric_version": self.metric_version,
                "judge": None,
                "usage": None,
                "transcript_hash": sample.transcript_hash(),
            }
        )

    def failed(
        self,
        sample: MultiTurnSample,
        error: str,
        *,
        details: dict[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> MetricResult:
        """A result with no value, saying why."""
        return self.result(sample, None, error=error, details=details, usage=usage)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


_runner: asyncio.AbstractEventLoop | None = None
_runner_lock = threading.Lock()


def _runner_loop() -> asyncio.AbstractEventLoop:
    global _runner
    with _runner_lock:
        if _runner is None:
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="tracebridge-metrics", daemon=True
            ).start()
            _runner = loop
        return _runner


async def on_runner_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Await ``coroutine`` on the background loop that ``run_sync`` uses, from any loop.

    A judge sends its requests there: an async HTTP client's pooled connections belong to
    the loop that opened them, so a client used from ``score()`` and then from
    ``asyncio.run(...)`` (or from two ``asyncio.run`` calls, the first loop closed) would
    meet a connection of another loop. Cancelling the awaiting task cancels the coroutine.
    """
    runner = _runner_loop()
    if asyncio.get_running_loop() is runner:
        return await coroutine
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, runner))


def run_sync(coroutine: Coroutine[Any, Any, T], caller: str, instead: str) -> T:
    """Run ``coroutine`` to its end from synchronous code.

    Every synchronous call runs on one background event loop, not on a fresh one each
    time: an async HTTP client keeps its connections bound to the loop that opened them,
    so a judge's client stays usable from one ``score()`` call to the next.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        coroutine.close()
        raise RuntimeError(
            f"{caller} was called inside a running event loop; use {instead} there"
        )
    future = asyncio.run_coroutine_threadsafe(coroutine, _runner_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # an interrupt (Ctrl-C) stops the work too
        raise
