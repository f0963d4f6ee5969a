"""The judge's budget: what a request is estimated to cost, the limits a run keeps to, and
a judge that sends a request only when the budget still covers it.

``estimate`` reads a request's rendered prompt (``_estimate``; the rules are in
docs/evaluation_budget_cache.md).
``Budget`` holds the limits (requests, tokens, cost); ``fits`` says before a run whether the
planned work fits, ``reserve``/``settle`` hold each request's estimate while it is in flight
and then charge what it really cost. ``BudgetedJudge`` wraps a judge so that every request,
each retry included, is reserved first; when the budget cannot cover one it raises
``BudgetExhausted`` instead of sending it.

Exceptions::

    JudgeError              (tracebridge.metrics.judge)
    └── BudgetExhausted     the remaining budget does not cover the next request
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import numbers
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from pydantic import BaseModel

from ..metrics.base import MetricResult, Usage
from ..metrics.judge import (
    MAX_TOKEN_COUNT,
    Judge,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    OpenAIJudge,
)
from ._dollars import dollars, finite
from ._estimate import Estimate, Price, estimate, estimate_chat, parse_price
from ._estimate import exact as _exact

__all__ = [
    "Budget",
    "BudgetExhausted",
    "BudgetedJudge",
    "Estimate",
    "Hold",
    "Price",
    "Remaining",
    "Reservation",
    "Spent",
    "estimate",
    "exhausted_reason",
    "parse_price",
]

M = TypeVar("M", bound=BaseModel)

_EXHAUSTED = "budget exhausted: "


@dataclass(frozen=True)
class Spent:
    """Requests, tokens and dollars counted so far."""

    requests: int
    tokens: int
    """Input and output tokens; a request whose tokens are unknown counts at its estimate."""
    cost: float | None
    """Dollars; None once a request to a model without a price was counted, or when the sum
    is more than a float holds (a price of ``1e300`` dollars per million tokens)."""


@dataclass(frozen=True)
class Remaining:
    """What the limits still allow, in-flight reservations taken off; None: no limit."""

    requests: int | None
    tokens: int | None
    cost: float | None


@dataclass(frozen=True)
class Reservation:
    """The hold one request has on the budget while it is in flight."""

    estimate: Estimate
    price: Price | None
    """The model's price, for charging what the request really cost."""
    number: int
    """Unique within its budget."""


class Hold:
    """What a job holds of the budget while it runs: the estimates of all its planned
    requests, so that jobs started side by side cannot each count on the same remainder and
    be cut mid-way. Each of its requests draws on it first; ``Budget.release`` gives back
    what is left of it."""

    def __init__(self, budget: Budget, requests: int, tokens: int, cost: Fraction) -> None:
        self.budget = budget
        self.requests = requests
        self.tokens = tokens
        self.cost = cost
        """What is still held (requests, tokens, dollars)."""
        self.released = False
        self.charged = Usage()
        """What the job's settled requests were charged, as they reported it (a request
        that reported no tokens, or was cut off, counts in ``requests_without_usage``): a
        job interrupted without a result still leaves this in the run's usage."""
        self.refused = 0
        """The job's requests the server refused with a client-error status and no usage (a 429,
        a 400): charged as one request each with no tokens (not billed)."""


_HOLD: contextvars.ContextVar[Hold | None] = contextvars.ContextVar("budget_hold", default=None)
"""The hold of the job the running task works for (``Budget.holding``)."""


class Budget:
    """Limits on a run's judge requests, tokens and dollars; None is no limit.

    ``max_requests`` and ``max_tokens`` are ints from 0 to ``MAX_LIMIT`` (a float or a bool
    is a ``TypeError``), ``max_cost`` a finite number, 0 or more; out of range is a
    ``ValueError``.

    Safe to share between tasks and threads: every reservation and settlement happens under
    one lock, so concurrent requests never overrun a limit by their estimates.
    """

    def __init__(
        self,
        max_requests: int | None = None,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        prices: dict[str, Price] | None = None,
    ) -> None:
        self.max_requests = _checked_count("max_requests", max_requests)
        self.max_tokens = _checked_count("max_tokens", max_tokens)
        self.max_cost = _checked_dollars(max_cost)
        self.prices: dict[str, Price] = dict(prices or {})
        """Each judge model's price, by model name."""
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._open: dict[int, Reservation] = {}
        self._requests = 0
        self._tokens = 0
        self._cost = Fraction(0)
        self._unpriced = 0
        self._held_requests = 0
        self._held_tokens = 0
        self._held_cost = Fraction(0)

    @property
    def spent(self) -> Spent:
        """What settled requests cost."""
        with self._lock:
            cost = None if self._unpriced else finite(self._cost)
            return Spent(self._requests, self._tokens, cost)

    @property
    def reserved(self) -> Spent:
        """What requests in flight hold (their estimates)."""
        with self._lock:
            return Spent(self._held_requests, self._held_tokens, finite(self._held_cost))

    @property
    def remaining(self) -> Remaining:
        """What a new reservation can still take."""
        with self._lock:
            requests, tokens, cost = self._left()
            return Remaining(requests, tokens, None if cost is None else finite(cost))

    def _left(self) -> tuple[int | None, int | None, Fraction | None]:
        requests = tokens = None
        cost = None
        if self.max_requests is not None:
            requests = max(0, self.max_requests - self._requests - self._held_requests)
        if self.max_tokens is not None:
            tokens = max(0, self.max_tokens - self._tokens - self._held_tokens)
        if self.max_cost is not None:
            cost = max(Fraction(0), _exact(self.max_cost) - self._cost - self._held_cost)
        return requests, tokens, cost

    def fits(self, estimates: Iterable[Estimate]) -> str | None:
        """None when all of the planned work fits what is left, else why not (one line).

        Each estimate counts its own requests; retries are not planned, they draw on what
        is left when they happen.
        """
        planned = _Planned(list(estimates))
        with self._lock:
            left = self._left()
        return self._misfit(planned, left)

    def hold(self, estimates: Iterable[Estimate]) -> Hold | str:
        """Hold the estimates of a job's planned requests while it runs (its requests draw on
        the hold first: ``holding``), or say why what is left does not cover them (as
        ``fits`` says it). ``release`` gives back what its requests did not take."""
        planned = _Planned(list(estimates))
        with self._lock:
            refusal = self._misfit(planned, self._left())
            if refusal is not None:
                return refusal
            self._held_requests += planned.requests
            self._held_tokens += planned.tokens
            self._held_cost += planned.cost
            return Hold(self, planned.requests, planned.tokens, planned.cost)

    def release(self, hold: Hold) -> None:
        """Give back what is left of ``hold`` (once; again is nothing)."""
        with self._lock:
            if hold.released:
                return
            hold.released = True
            self._held_requests -= hold.requests
            self._held_tokens -= hold.tokens
            self._held_cost -= hold.cost
            hold.requests, hold.tokens, hold.cost = 0, 0, Fraction(0)

    @contextlib.contextmanager
    def holding(self, hold: Hold | None) -> Iterator[None]:
        """Within the block, the requests of this task (and of the tasks it starts) draw on
        ``hold`` first; at the end what is left of it is released."""
        token = _HOLD.set(hold)
        try:
            yield
        finally:
            _HOLD.reset(token)
            if hold is not None:
                self.release(hold)

    def _misfit(self, planned: _Planned,
                left: tuple[int | None, int | None, Fraction | None]) -> str | None:
        requests, tokens, unpriced, cost = (planned.requests, planned.tokens,
                                            planned.unpriced, planned.cost)
        left_requests, left_tokens, left_cost = left
        if left_requests is not None and requests > left_requests:
            return (f"the planned work needs {requests:,} judge requests; "
                    f"{left_requests:,} of the limit of {self.max_requests:,} are left")
        if left_tokens is not None and tokens > left_tokens:
            return (f"the planned work needs an estimated {tokens:,} tokens; "
                    f"{left_tokens:,} of the limit of {self.max_tokens:,} are left")
        if left_cost is not None and planned.overflowing:
            return (f"the planned work costs more dollars than a number here holds "
                    f"({planned.overflowing:,} of {requests:,} requests, at their price) "
                    "and a cost limit is set")
        if left_cost is not None and unpriced:
            return (f"the planned work's cost is unknown ({unpriced:,} of {requests:,} "
                    "requests are to a model without a price) and a cost limit is set")
        if left_cost is not None and self.max_cost is not None and cost > left_cost:
            limit, needed, remains = dollars(self.max_cost, cost, left_cost)
            return (f"the planned work costs an estimated {needed}; "
                    f"{remains} of the limit of {limit} is left")
        return None

    def reserve(self, estimate: Estimate, model: str | None = None) -> Reservation | None:
        """Hold ``estimate`` for a request to ``model``, or None when what is left does not
        cover it. With a cost limit, ``model`` must have a price."""
        claim = self._claim(estimate, model)
        return None if isinstance(claim, str) else claim

    def _claim(self, estimate: Estimate, model: str | None) -> Reservation | str:
        """A reservation, or why there is none (one line)."""
        price = None if model is None else self.prices.get(model)
        if self.max_cost is not None and price is None:
            raise ValueError(f"a cost limit is set and the model {model!r} has no price")
        cost = None if price is None else price.cost(estimate.input_tokens, estimate.output_tokens)
        hold = _HOLD.get()
        with self._lock:
            left_requests, left_tokens, left_cost = self._left()
            if hold is not None and (hold.budget is not self or hold.released):
                hold = None
            if hold is not None:  # what the job holds is there for its own requests
                left_requests = None if left_requests is None else left_requests + hold.requests
                left_tokens = None if left_tokens is None else left_tokens + hold.tokens
                left_cost = None if left_cost is None else left_cost + hold.cost
            if left_requests is not None and estimate.requests > left_requests:
                return (f"the limit of {self.max_requests:,} judge requests is reached "
                        f"({self._requests:,} sent, {self._held_requests:,} in flight)")
            if left_tokens is not None and estimate.tokens > left_tokens:
                return (f"the next request needs up to {estimate.tokens:,} tokens (estimated) "
                        f"and {left_tokens:,} of the limit of {self.max_tokens:,} are left")
            if left_cost is not None and cost is not None and cost > left_cost:
                limit, needed, left = dollars(self.max_cost or 0.0, cost, left_cost)
                return (f"the next request may cost up to {needed} (estimated) and "
                        f"{left} of the limit of {limit} is left")
            reservation = Reservation(estimate, price, next(self._numbers))
            self._open[reservation.number] = reservation
            taken = (0, 0, Fraction(0))
            if hold is not None:  # moved from the job's hold to the request: held already
                taken = (min(estimate.requests, hold.requests),
                         min(estimate.tokens, hold.tokens), min(cost or Fraction(0), hold.cost))
                hold.requests -= taken[0]
                hold.tokens -= taken[1]
                hold.cost -= taken[2]
            self._held_requests += estimate.requests - taken[0]
            self._held_tokens += estimate.tokens - taken[1]
            self._held_cost += (cost or 0) - taken[2]
            return reservation

    def settle(self, reservation: Reservation, actual_usage: Usage) -> None:
        """Release ``reservation`` and charge what its request(s) really cost.

        A request whose reply gave no token counts (or that failed) is charged its share of
        the estimate, so an unknown never counts as free.
        """
        estimate = reservation.estimate
        unknown = actual_usage.requests_without_usage
        per_request_input = -(-estimate.input_tokens // max(estimate.requests, 1))
        per_request_output = -(-estimate.output_tokens // max(estimate.requests, 1))
        input_tokens = actual_usage.prompt_tokens + unknown * per_request_input
        output_tokens = actual_usage.completion_tokens + unknown * per_request_output
        price = reservation.price
        hold = _HOLD.get()
        with self._lock:
            if self._open.pop(reservation.number, None) is None:
                raise ValueError(f"reservation {reservation.number} is already settled")
            if hold is not None and hold.budget is self:
                hold.charged += actual_usage
            self._held_requests -= estimate.requests
            self._held_tokens -= estimate.tokens
            if price is not None:
                self._held_cost -= price.cost(estimate.input_tokens, estimate.output_tokens)
                self._cost += price.cost(input_tokens, output_tokens)
            elif actual_usage.requests:
                self._unpriced += actual_usage.requests
            self._requests += actual_usage.requests
            self._tokens += input_tokens + output_tokens


MAX_LIMIT = MAX_TOKEN_COUNT
"""The largest ``max_requests`` or ``max_tokens`` (9,007,199,254,740,992), as large as one
reply's token count may be: a larger limit is no limit a run could reach."""


def _checked_count(name: str, limit: object) -> int | None:
    """A request or token limit as an int: a whole number (an ``int``, a numpy integer, an
    ``IntEnum``) from 0 to ``MAX_LIMIT``; ``TypeError`` for a float or a bool (a limit of 1.5
    requests), ``ValueError`` out of range."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral):
        raise TypeError(f"{name} must be a whole number (an int) or None, got {limit!r}")
    count = int(limit)
    if count < 0:
        shown = count if count > -(10**30) else count_text(count)
        raise ValueError(f"{name} must be 0 or more, got {shown}")
    if count > MAX_LIMIT:
        raise ValueError(f"{name} must be at most {MAX_LIMIT:,}, got {count_text(count)}")
    return count


def count_text(count: int) -> str:
    """A whole number for a one-line message: with its thousands separated, or said to be
    long when it is (a flag of 400 digits)."""
    if abs(count) < 10**30:
        return f"{count:,}"
    return f"a{' negative' if count < 0 else ''} number of more than 30 digits"


def _checked_dollars(limit: object) -> float | int | None:
    """A cost limit as a plain int or float: a finite number of dollars, 0 or more (a numpy
    number too); ``TypeError`` for a bool or what is not a real number, ``ValueError`` for one
    out of range."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, numbers.Real):
        raise TypeError(f"max_cost must be a number of dollars or None, got {limit!r}")
    plain: float | int = int(limit) if isinstance(limit, numbers.Integral) else float(limit)
    try:
        in_range = math.isfinite(plain) and plain >= 0
    except OverflowError:  # an int past what a float holds
        raise ValueError(f"max_cost must be a finite number, got {count_text(int(plain))}") \
            from None
    if not in_range:
        raise ValueError(f"max_cost must be 0 or more, got {limit!r}")
    return plain


class _Planned:
    """The sums of some estimates."""

    def __init__(self, planned: list[Estimate]) -> None:
        self.requests = sum(e.requests for e in planned)
        self.tokens = sum(e.tokens for e in planned)
        self.unpriced = sum(e.requests for e in planned if e.cost is None and not e.overflow)
        self.overflowing = sum(e.requests for e in planned if e.overflow)
        self.cost = sum((_exact(e.cost) for e in planned if e.cost is not None), Fraction(0))


def _one_at_least(usage: object) -> Usage:
    """What an ``ask`` of a judge of our own making is charged: what it reports, but at
    least the one request it was (a judge that reports none would otherwise ask for free,
    past ``max_requests``); a request it reports no tokens for is of unknown size, and so is
    one whose usage is not a ``Usage`` (none, or a reply that is not a ``JudgeReply``: the
    metric refuses that reply itself)."""
    if not isinstance(usage, Usage):
        return Usage(requests=1, requests_without_usage=1)
    if usage.requests >= 1:
        return usage
    counted = usage.prompt_tokens or usage.completion_tokens or usage.total_tokens
    return usage.model_copy(update={"requests": 1, "requests_without_usage": 0 if counted else 1})


class BudgetExhausted(JudgeError):
    """The remaining budget does not cover the next request; it was not sent."""

    def __init__(self, reason: str, usage: Usage) -> None:
        super().__init__(f"{_EXHAUSTED}{reason}", usage)
        self.reason = reason
        """Why, in one line."""


def exhausted_reason(result: MetricResult) -> str | None:
    """Why ``result`` has no value when the budget stopped it (it was not judged), else None.

    A metric turns a judge's ``BudgetExhausted`` into an error result; its error starts
    with ``budget exhausted: ``.
    """
    if result.error is not None and result.error.startswith(_EXHAUSTED):
        return result.error[len(_EXHAUSTED):]
    return None


def check_priced(budget: Budget, model: str | None) -> None:
    """``ValueError`` when ``budget`` has a cost limit and no price for the judge ``model``:
    what the judge's requests cost could not be counted against it."""
    if budget.max_cost is not None and (model is None or model not in budget.prices):
        raise ValueError(
            f"a cost limit needs the price of the judge model {model or '(unnamed)'}: "
            f"give it as {model or 'MODEL'}=INPUT,OUTPUT (dollars per million tokens)"
        )


class BudgetedJudge:
    """A judge that sends each request only when ``budget`` covers its estimate.

    Every request is reserved before it is sent and settled with its real usage after.
    An ``OpenAIJudge`` is asked through a ``RequestGate``, so each of its requests, HTTP
    retries and re-asks after an invalid answer included, is reserved on its own (the
    client's own retries are turned off for it and the judge makes them). Any other judge
    is reserved one request per ``ask`` and charged what it reports.
    """

    def __init__(self, judge: Judge, budget: Budget, model: str | None = None) -> None:
        if model is None:
            named = getattr(judge, "model", None)
            model = named if isinstance(named, str) else None
        check_priced(budget, model)
        self.judge = judge
        self.budget = budget
        self.model = model
        """The judge's model (by default ``judge.model``), whose price the budget charges."""
        self.price = None if model is None else budget.prices.get(model)

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def settings(self) -> dict[str, Any]:
        """The wrapped judge's request settings (``OpenAIJudge.settings``), else its name."""
        settings = getattr(self.judge, "settings", None)
        return dict(settings) if isinstance(settings, dict) else {"judge": self.judge.name}

    async def ask(self, request: JudgeRequest[M]) -> JudgeReply[M]:
        if isinstance(self.judge, OpenAIJudge):
            return await self.judge.ask(request, gate=self)
        messages = [
            {"role": "system", "content": request.instructions},
            {"role": "user", "content": request.prompt},
        ]
        reservation = await self.enter(messages, request.answer)
        usage = Usage(requests=1, requests_without_usage=1)
        try:
            reply = await self.judge.ask(request)
            usage = _one_at_least(getattr(reply, "usage", None))
        except JudgeError as exc:
            usage = _one_at_least(exc.usage)
            raise
        finally:
            self.leave(reservation, usage)
        return reply

    async def enter(
        self, messages: Sequence[dict[str, str]], answer: type[BaseModel]
    ) -> Reservation:
        """Reserve the request about to send ``messages``, or raise ``BudgetExhausted``."""
        claim = self.budget._claim(estimate_chat(messages, answer, self.price), self.model)
        if isinstance(claim, str):
            raise BudgetExhausted(claim, Usage())
        return claim

    def leave(self, ticket: Reservation, usage: Usage) -> None:
        """The request is over: settle its reservation with what it cost."""
        self.budget.settle(ticket, usage)

    def refused(self, ticket: Reservation) -> None:
        """The server answered the request with an error status and no usage: counted for
        the job it was sent for (``Hold.refused``)."""
        hold = _HOLD.get()
        if hold is not None and hold.budget is self.budget:
            hold.refused += 1

    def __repr__(self) -> str:
        return f"BudgetedJudge({self.judge!r}, model={self.model!r})"

