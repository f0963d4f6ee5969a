"""A budget held in one place and spent in many: ``Allowances`` keeps the global limits
(the budget actor holds one), ``LeasingJudge`` spends a worker's share and asks for more.

Each worker's judge reserves every request (retries included) on its own local ``Budget``,
as ``BudgetedJudge`` does in one process. When the local share does not cover the next
request, it leases more from the keeper: a chunk of up to ``LEASE_CHUNK`` such requests,
fewer as the budget runs low (at most a share of what is left per worker, and at least the
one request), so little lies idle in one worker while another is refused. A worker asks for
one lease at a time: its jobs that find the local share short wait for the lease in flight and
claim from what it brought before asking again, so concurrent jobs do not each take a chunk.
A refusal is final (the keeper refuses every later lease with the same reason): the request
is not sent and the job is ``unrun``, unless the worker's own share covers it by then. A
worker gives back what it has not used at the end of each batch, charging what its requests
really cost. The global limits are never exceeded by estimates; a few requests' worth leased
to a worker that had no more to ask may be left unspent at the boundary (with one worker,
none).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from pydantic import BaseModel

from ..evaluation._dollars import dollars
from ..evaluation._estimate import estimate_chat, exact
from ..evaluation.budget import Budget, BudgetedJudge, BudgetExhausted, Price, Reservation
from ..metrics.base import Usage
from ..metrics.judge import Judge

__all__ = ["LEASE_CHUNK", "Allowances", "Lease", "LeasingJudge", "Limits", "check_price"]

LEASE_CHUNK = 16
"""The most requests one lease covers."""


@dataclass(frozen=True)
class Limits:
    """A budget's limits and prices, as plain values a worker or an actor can be given."""

    max_requests: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    prices: tuple[tuple[str, Price], ...] = ()

    @classmethod
    def of(cls, budget: Budget) -> Limits:
        return cls(budget.max_requests, budget.max_tokens, budget.max_cost,
                   tuple(sorted(budget.prices.items())))


def check_price(model: object, limits: Limits) -> None:
    """A cost limit needs the judge's model and its price among the limits' prices
    (``ValueError`` without them, as ``Budget(...)`` spells them)."""
    if limits.max_cost is None or (isinstance(model, str) and model in dict(limits.prices)):
        return
    if not isinstance(model, str):
        raise ValueError("a cost limit needs the judge's model, to price its requests: the "
                         "judge has no 'model'")
    raise ValueError(f"a cost limit needs the price of the judge model {model}: give it as "
                     f"Budget(..., prices={{{model!r}: Price(INPUT, OUTPUT)}})")


@dataclass(frozen=True)
class Lease:
    """An allowance given to (or given back by) a worker; tokens and cost may be negative
    when given back (its requests cost more than they were estimated)."""

    requests: int
    tokens: int
    cost: float


class Allowances:
    """The keeper's books: what the limits allow and what is leased out."""

    def __init__(self, limits: Limits, workers: int) -> None:
        self.limits = limits
        self.workers = max(workers, 1)
        self.requests = 0
        self.tokens = 0
        self.cost = Fraction(0)
        self.stopped: str | None = None
        """The reason of the first refusal; every later lease is refused with it."""

    def lease(self, tokens: int, cost: float, chunk: int = LEASE_CHUNK) -> Lease | str:
        """Up to ``chunk`` requests of ``tokens`` tokens and ``cost`` dollars each, or why
        not even one fits."""
        if self.stopped is not None:
            return self.stopped
        fits: list[int] = [chunk]
        limits = self.limits
        if limits.max_requests is not None:
            fits.append(limits.max_requests - self.requests)
            if fits[-1] < 1:
                return self._stop(f"the limit of {limits.max_requests:,} judge requests is "
                                  f"reached ({self.requests:,} leased)")
        if limits.max_tokens is not None and tokens > 0:
            fits.append((limits.max_tokens - self.tokens) // tokens)
            if fits[-1] < 1:
                return self._stop(f"the next request needs up to {tokens:,} tokens (estimated) "
                                  f"and {max(limits.max_tokens - self.tokens, 0):,} of the "
                                  f"limit of {limits.max_tokens:,} are left")
        if limits.max_cost is not None and cost > 0:
            left = exact(limits.max_cost) - self.cost
            fits.append(math.floor(left / exact(cost)))
            if fits[-1] < 1:
                limit, needed, remains = dollars(limits.max_cost, cost, max(left, Fraction(0)))
                return self._stop(f"the next request may cost up to {needed} (estimated) "
                                  f"and {remains} of the limit of {limit} is left")
        # a share of what is left per worker, so that little lies idle in one worker while
        # another is refused; without a limit, whole chunks
        share = max(1, min(fits[1:], default=2 * self.workers * chunk) // (2 * self.workers))
        count = min(chunk, share, *fits)
        self.requests += count
        self.tokens += count * tokens
        if limits.max_cost is None:  # dollars are not leased without a limit to hold them to
            return Lease(count, count * tokens, 0.0)  # (16 requests may cost past a float)
        self.cost += count * exact(cost)
        return Lease(count, count * tokens, float(count * exact(cost)))

    def give_back(self, unused: Lease) -> None:
        """A worker's unused allowance (negative parts: what it spent beyond its estimates)."""
        self.requests -= unused.requests
        self.tokens -= unused.tokens
        self.cost -= exact(unused.cost)

    def _stop(self, reason: str) -> str:
        self.stopped = reason
        return reason


class LeasingJudge(BudgetedJudge):
    """A ``BudgetedJudge`` on a local budget that grows by leases from the keeper.

    ``lease(tokens, cost)`` asks the keeper for an allowance of requests like the next one
    (``Allowances.lease``); it returns a ``Lease`` or the reason of the refusal.
    """

    def __init__(
        self,
        judge: Judge,
        limits: Limits,
        lease: Callable[[int, float], Awaitable[Lease | str]],
        model: str | None = None,
    ) -> None:
        local = Budget(
            max_requests=None if limits.max_requests is None else 0,
            max_tokens=None if limits.max_tokens is None else 0,
            max_cost=None if limits.max_cost is None else 0.0,
            prices=dict(limits.prices),
        )
        super().__init__(judge, local, model)
        self._lease = lease
        self._leasing = asyncio.Lock()
        """Held while a lease is asked for: one at a time per worker."""
        self.leased = Lease(0, 0, 0.0)
        """What the leases held now allow in all."""

    async def enter(
        self, messages: Sequence[dict[str, str]], answer: type[BaseModel]
    ) -> Reservation:
        need = estimate_chat(messages, answer, self.price)
        claim = self.budget._claim(need, self.model)
        if isinstance(claim, str) and need.overflow and self.budget.max_cost is not None:
            # no lease is that large: none is asked
            raise BudgetExhausted("the next request may cost more dollars than a number here "
                                  "holds (estimated) and a cost limit is set", Usage())
        while isinstance(claim, str):
            async with self._leasing:
                # a lease taken while this job waited may cover it: claim before asking
                claim = self.budget._claim(need, self.model)
                if not isinstance(claim, str):
                    break
                granted = await self._lease(need.tokens, need.cost or 0.0)
                if isinstance(granted, Lease):
                    self._grow(granted)
                claim = self.budget._claim(need, self.model)
                if isinstance(claim, str) and isinstance(granted, str):
                    # what the jobs in flight gave back while the keeper answered may
                    # still cover it; else the refusal stands
                    raise BudgetExhausted(granted, Usage())
        return claim

    def _grow(self, by: Lease) -> None:
        self.leased = Lease(self.leased.requests + by.requests, self.leased.tokens + by.tokens,
                            self.leased.cost + by.cost)
        budget = self.budget
        if budget.max_requests is not None:
            budget.max_requests = self.leased.requests
        if budget.max_tokens is not None:
            budget.max_tokens = self.leased.tokens
        if budget.max_cost is not None:
            budget.max_cost = self.leased.cost

    def unused(self) -> Lease:
        """Take back what the leases allow beyond what was spent or is in flight."""
        spent, held = self.budget.spent, self.budget.reserved
        unused = Lease(
            self.leased.requests - spent.requests - held.requests,
            self.leased.tokens - spent.tokens - held.tokens,
            self.leased.cost - (spent.cost or 0.0) - (held.cost or 0.0),
        )
        self._grow(Lease(-unused.requests, -unused.tokens, -unused.cost))
        return unused
