"""An evaluation run: checks, controls first, judged metrics under a budget through a cache.

1. Every case passes the deterministic checks (``checks.py``); a case that fails one is
   blocked and costs nothing.
2. Each (case, metric) still to do is looked up in the cache; a hit is a result, marked cached
   (a control's once the run is not refused, another case's once the controls came out as
   expected: when the run is refused or the controls stop it, it is unrun like the rest).
3. Each judged job left is estimated from the requests its metric would send (``plan.py``,
   ``budget.estimate``); when the whole does not fit the budget the run refuses to start,
   unless ``allow_partial``.
4. Controls run first, with the goal metrics only. If one comes out otherwise than its role
   expects (or could not be scored, the budget's boundary included), the run stops there
   (``controls_failed``, ``controls_incomplete``, whatever stopped it before) and every other
   case is unrun, unless ``continue_on_control_failure``: then the other cases are scored all
   the same, and the run ends with that status still (the status of a RUN_DIR does not depend
   on the setting).
5. Then critical cases, then the rest, at most ``concurrency`` jobs at once. A job starts only
   when the budget's remaining share covers its estimate, which it then holds while it runs
   (so jobs in flight side by side cannot be cut mid-way); a job the jobs in flight leave too
   little waits for them to give back what they did not use. The boundary is where what is
   left does not cover the next job with none in flight (so, while jobs stay within their
   plans, the concurrency never changes which cases run; a retry past its plan draws from
   what is left, which jobs in flight may hold): no new judged job starts, and what is left
   is unrun with the reason; a deterministic metric sends no request, so it is still scored
   past the boundary. A judge or provider failure is an ``errored`` result (never a goal
   failure); a successful judged result goes into the cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ..hashing import canonical_json
from ..metrics.base import Metric, MetricResult
from ..metrics.cli import DETERMINISTIC, JUDGED, verdict
from ..metrics.judge import Judge
from ..sample import MultiTurnSample
from .budget import Budget, BudgetedJudge, Estimate, Hold, estimate, exhausted_reason
from .cache import NoCache, ResultCache, cache_key, judge_part
from .cases import CaseSet, ControlRole, LoadedCase
from .checks import UserCheck, check_case, reference_fields
from .outcome import GOAL_METRICS, case_row
from .plan import PlanningJudge, planned_requests
from .record import ROW_KEYS, SUMMARY, RunRecord
from .summary import header, planned
from .summary import summary as build_summary

__all__ = ["Job", "RunSettings", "Runner", "UsageError"]

M = TypeVar("M", bound=BaseModel)

EVERY_CASE_STOPS = ("refused", "controls_failed", "controls_incomplete")
"""The statuses that leave every case unrun, the cache's answers and the deterministic metrics
included."""
CONTROL_STOPS = ("controls_failed", "controls_incomplete")
_YIELD_EVERY = 10
"""Cases (or estimates) prepared between two turns of the event loop, where an interrupt is
taken."""


class UsageError(Exception):
    """The run cannot be set up as asked (one line)."""


@dataclass(frozen=True)
class RunSettings:
    """How a run goes."""

    concurrency: int = 4
    """Jobs (one case, one metric) in flight at once."""
    continue_on_control_failure: bool = False
    """Score the other cases even when a control came out wrong (the run still ends
    ``controls_failed``, or ``controls_incomplete`` for a control that could not be scored)."""
    allow_partial: bool = False
    """Start even when the estimate says the budget cannot cover all the work."""
    pass_threshold: float = 1.0
    """A metric passes a case when its value is at least this."""


@dataclass
class Job:
    """One metric on one case."""

    case: LoadedCase
    metric: Metric
    sample: MultiTurnSample
    judged: bool
    key: str | None = None
    estimates: list[Estimate] = field(default_factory=list)


class Runner:
    """One run over a case set; ``await runner.run()`` returns the summary."""

    def __init__(
        self,
        cases: CaseSet,
        metric_names: Sequence[str],
        record: RunRecord,
        *,
        judge: Judge | None = None,
        judge_settings: dict[str, Any] | None = None,
        model: str | None = None,
        budget: Budget | None = None,
        cache: ResultCache | NoCache | None = None,
        user_checks: Sequence[UserCheck] = (),
        settings: RunSettings = RunSettings(),
    ) -> None:
        self.cases = cases
        self.names = list(dict.fromkeys(metric_names))
        unknown = [n for n in self.names if n not in DETERMINISTIC and n not in JUDGED]
        if unknown:
            raise UsageError(f"unknown metric {unknown[0]!r}; known: "
                             f"{', '.join([*DETERMINISTIC, *JUDGED])}")
        judged = [n for n in self.names if n in JUDGED]
        if judged and judge is None:
            raise UsageError(f"judged metrics ({', '.join(judged)}) need a judge (--model)")
        if settings.concurrency < 1:
            raise UsageError(f"concurrency must be 1 or more, got {settings.concurrency}")
        if not 0.0 <= settings.pass_threshold <= 1.0:  # nan: no value is below it, all pass
            raise UsageError(f"pass_threshold must be from 0 to 1, got "
                             f"{settings.pass_threshold}")
        self.record = record
        self.judge = judge
        self.budget = budget if budget is not None else Budget()
        self.cache = cache if cache is not None else NoCache()
        self.user_checks = list({check.name: check for check in user_checks}.values())
        """Each check once, in the order first given (a check named twice runs once)."""
        self.settings = settings
        named = getattr(judge, "model", None)
        self.model = model or (named if isinstance(named, str) else "")
        """The judge's model, whose price the budget charges (by default ``judge.model``)."""
        record.price = self.budget.prices.get(self.model)  # kept with what this run spends
        if judge_settings is None:
            found = getattr(judge, "settings", None)
            judge_settings = dict(found) if isinstance(found, dict) else {}
        self.judge_settings = judge_settings
        self.metrics: dict[str, Metric] = {}
        self.planners: dict[str, tuple[Metric, PlanningJudge]] = {}
        try:
            budgeted = None if judge is None else BudgetedJudge(judge, self.budget,
                                                                self.model or None)
        except ValueError as exc:  # a cost limit without the model's price
            raise UsageError(str(exc)) from None
        for name in self.names:
            if name in DETERMINISTIC:
                self.metrics[name] = DETERMINISTIC[name]()
            else:
                assert budgeted is not None
                assert judge is not None
                self.metrics[name] = JUDGED[name](budgeted)
                planner = PlanningJudge(judge.name)
                self.planners[name] = (JUDGED[name](planner), planner)
        self._check_controls()
        self.header = header(
            os.path.abspath(cases.path), cases.manifest_hash, len(cases.cases),
            {name: metric.metric_version for name, metric in self.metrics.items()},
            None if judge is None else {"name": judge.name, **self.judge_settings},
            settings.pass_threshold,
            [check.name for check in self.user_checks],
            planned(cases),
        )
        """The start of ``summary.json``; a run resumes only where it matches."""
        self.results: dict[tuple[str, str], MetricResult] = {}
        self.unrun: dict[tuple[str, str], str] = {}
        self.blocked: dict[str, list[str]] = {}
        self.stopped: str | None = None
        self.status = "complete"
        self.settled: set[str] = set()
        """The cases whose row is in ``cases.jsonl`` (an interrupted run tells the others
        apart as unsettled)."""
        self._opened = False

    def _check_controls(self) -> None:
        needs_goal = [c.case_id for c in self.cases.cases
                      if c.case.control_role not in (None, ControlRole.DUPLICATE_SIDE_EFFECT)]
        if needs_goal and not any(name in GOAL_METRICS for name in self.names):
            raise UsageError(
                f"the case file has controls ({needs_goal[0]}...) and no goal metric scores "
                f"them: add --metric {GOAL_METRICS[0]} or --metric {GOAL_METRICS[1]}"
            )

    # --- the plan --------------------------------------------------------------------------

    def metrics_of(self, case: LoadedCase) -> list[str]:
        """The metrics a case is scored with: the goal metrics for a control, else all."""
        role = case.case.control_role
        if role is ControlRole.DUPLICATE_SIDE_EFFECT:
            return []  # a deterministic check must block it; no judge is asked
        if role is not None:
            return [name for name in self.names if name in GOAL_METRICS]
        return self.names

    def _jobs(self, case: LoadedCase) -> list[Job]:
        sample = case.sample()
        jobs = []
        for name in self.metrics_of(case):
            if (case.case_id, name) in self.results:
                continue
            metric = self.metrics[name]
            job = Job(case, metric, sample, judged=name in JUDGED)
            if job.judged:
                assert self.judge is not None  # judged metrics need one (checked above)
                # by its name too: a judge with no settings had no part in the key, and
                # another such judge was given its cached results
                job.key = cache_key(metric, judge_part(self.judge.name, self.judge_settings),
                                    case.transcript_hash or "", _references(case, name))
            jobs.append(job)
        return jobs

    async def _estimate(self, job: Job) -> None:
        planned_metric, planner = self.planners[job.metric.name]
        requests = await planned_requests(planned_metric, planner, job.sample)
        price = self.budget.prices.get(self.model)
        job.estimates = [estimate(request, self.model, price) for request in requests]

    # --- the run ---------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        """Run every case; writes RUN_DIR as it goes and returns the summary."""
        try:
            return await self._run()
        except BaseException as exc:
            if self._opened and isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                # still running (a resume finishes it), but saying what settled and what
                # the judge was sent so far; never counted as a finished run
                with contextlib.suppress(OSError):
                    self.record.write_summary(self._interrupted())
            self.record.abandon()  # what was written stays, for a resumed run
            raise

    def _interrupted(self) -> dict[str, Any]:
        """``summary.json`` of a run interrupted (Ctrl-C): ``status: running``, the counts of
        the settled cases, ``unsettled`` the others, and the usage and cost so far (the
        requests in flight charged their estimate: ``spent.jsonl``)."""
        rows = [self._settle(case) for case in self.cases.cases
                if case.case_id in self.settled]
        unsettled = [case.case_id for case in self.cases.cases
                     if case.case_id not in self.settled]
        summary = build_summary(self, rows)
        return {**summary, "status": "running", "finished_at": None,
                "stopped": f"interrupted: {len(rows)} of {len(self.cases.cases)} case(s) "
                           "settled; run again on the same RUN_DIR to resume",
                "unsettled": unsettled}

    async def _run(self) -> dict[str, Any]:
        self.header = {**self.header, **_started(self.record.path / SUMMARY)}
        done = self.record.open(self.header)
        self._opened = True
        for (case_id, name), row in done.items():
            result = MetricResult.model_validate({k: v for k, v in row.items()
                                                  if k not in ROW_KEYS})
            if _finished(result):
                self.results[(case_id, name)] = result
        order = self._ordered()
        phases: list[list[Job]] = [[], []]
        hits: list[list[tuple[Job, MetricResult]]] = [[], []]
        """The cache's answers, the controls' and the other cases': results only once the run
        is not refused, and the other cases' once the controls came out right."""
        for number, case in enumerate(order):
            await _let_the_loop_in(number)
            reasons = check_case(case, self.metrics_of(case), self.user_checks)
            if reasons:
                self.blocked[case.case_id] = reasons
                self._write_case(case)
                continue
            all_jobs = self._jobs(case)
            if not all_jobs:  # done in an earlier run, or nothing to ask (a duplicate control)
                self._write_case(case)
            control = case.case.control_role is not None
            for job in all_jobs:
                hit = self._cached(job)
                if hit is None:
                    phases[0 if control else 1].append(job)
                else:
                    hits[0 if control else 1].append((job, hit))
        judged = (job for phase in phases for job in phase if job.judged)
        for number, job in enumerate(judged):
            await _let_the_loop_in(number)
            await self._estimate(job)
        refusal = self.budget.fits([e for phase in phases for j in phase for e in j.estimates])
        if refusal is not None and not self.settings.allow_partial:
            self._stop(f"refused: the estimate does not fit the budget: {refusal} "
                       "(--allow-partial starts it anyway)", "refused")
        self._take_hits(hits[0])
        await self._run_jobs(phases[0])
        if not self.settings.continue_on_control_failure:
            self._check_control_outcomes()
        self._take_hits(hits[1])
        await self._run_jobs(phases[1])
        return self._finish(order)

    def _ordered(self) -> list[LoadedCase]:
        def rank(case: LoadedCase) -> tuple[int, int]:
            if case.case.control_role is not None:
                return 0, case.position
            return (1 if case.case.critical else 2), case.position

        return sorted(self.cases.cases, key=rank)

    def _cached(self, job: Job) -> MetricResult | None:
        """The cache's result for ``job``, or None (a miss, or a job with no key). A stored
        result of another metric, metric version or transcript than the job's is a damaged
        cache (``CacheError``), never a result."""
        if job.key is None:
            return None
        asked = {"name": job.metric.name, "metric_version": job.metric.metric_version,
                 "transcript_hash": job.sample.transcript_hash()}
        return self.cache.get(job.key, asked)

    def _take_hits(self, hits: list[tuple[Job, MetricResult]]) -> None:
        """Keep the cache's answers as results, or, when the run stopped for every case
        (refused, or the controls stopped it), leave them unrun with that reason."""
        for job, hit in hits:
            if self.status in EVERY_CASE_STOPS:
                self.unrun[(job.case.case_id, job.metric.name)] = self.stopped or ""
            else:
                self._keep(job, hit, cached=True)

    def _keep(self, job: Job, result: MetricResult, *, cached: bool = False,
              refused: int = 0) -> None:
        mark = result.details.get("cached") if cached else None
        self.record.write_result(job.case.case_id, result, mark if isinstance(mark, dict) else None,
                                 refused)
        self.results[(job.case.case_id, job.metric.name)] = result
        case_id = job.case.case_id
        if all((case_id, name) in self.results for name in self.metrics_of(job.case)):
            self._write_case(job.case)  # as it settles; the end rewrites
        if (not cached and job.judged and job.key is not None and result.error is None):
            self.cache.put(job.key, result)

    def _write_case(self, case: LoadedCase) -> None:
        self.record.write_case(self._settle(case))
        self.settled.add(case.case_id)

    def _stop(self, reason: str, status: str) -> None:
        """Stop the run for ``reason``. The first reason stands, except that the controls'
        verdict replaces a budget stop: a control the budget left unrun leaves the judge
        unproven, and no other case is scored."""
        if self.stopped is None or (self.status == "incomplete" and status in CONTROL_STOPS):
            self.stopped = reason
            self.status = status

    async def _run_jobs(self, jobs: list[Job]) -> None:
        """Run ``jobs``, ``concurrency`` at once. A job that fails to record its result (RUN_DIR
        or the cache cannot be written) stops the run: no other job starts, those in flight
        are cancelled, and its error is raised."""
        gate = asyncio.Semaphore(self.settings.concurrency)
        running: set[asyncio.Task[None]] = set()
        holds: list[Hold] = []
        failed: list[Exception] = []
        """What stopped a job from recording its result (told before its place is freed)."""
        try:
            for job in jobs:
                await gate.acquire()
                if failed:
                    gate.release()
                    break
                hold: Hold | None = None
                if self.stopped is None and job.judged:
                    # the job holds all its planned requests while it runs: jobs side by
                    # side never count on the same remainder and get cut mid-way
                    claim = await self._hold(job, running, failed)
                    if failed:
                        gate.release()
                        break
                    if isinstance(claim, str):
                        self._stop(f"budget: {claim}", "incomplete")
                    else:
                        hold = claim
                        holds.append(hold)
                if self.stopped is not None and (job.judged or self.status != "incomplete"):
                    # the budget covers judge requests: a job that sends none still gets
                    # its result at the boundary (a real failure is never hidden as unrun);
                    # a refused run or wrong controls stop every job
                    gate.release()
                    self.unrun[(job.case.case_id, job.metric.name)] = self.stopped
                    continue
                task = asyncio.create_task(self._job(job, gate, failed, hold))
                running.add(task)
                task.add_done_callback(running.discard)
                await asyncio.sleep(0)  # let the job start before the next is looked at
            while running and not failed:
                await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
        finally:
            left = list(running)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
            for held in holds:  # a job cancelled before it started never released its own
                self.budget.release(held)
        if failed:
            raise failed[0]

    async def _hold(self, job: Job, running: set[asyncio.Task[None]],
                    failed: list[Exception]) -> Hold | str:
        """The budget's hold for ``job``, or why what is left does not cover it. While the
        jobs in flight keep too much of the budget, waits for one of them to finish (it
        gives back what it did not use) and asks again: the boundary is only where nothing
        is in flight, the same at any concurrency while jobs stay within their plans. Gives
        up waiting once the run stopped or a job failed to record its result."""
        claim = self.budget.hold(job.estimates)
        while isinstance(claim, str) and running and not failed and self.stopped is None:
            await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
            if failed or self.stopped is not None:
                break
            claim = self.budget.hold(job.estimates)
        return claim

    async def _job(self, job: Job, gate: asyncio.Semaphore, failed: list[Exception],
                   hold: Hold | None = None) -> None:
        try:
            try:
                with self.budget.holding(hold):
                    result = await job.metric.ascore(job.sample)
            except asyncio.CancelledError:
                # interrupted in flight: what its requests were charged (a request cut off
                # at its estimate, an unknown never free) is kept for the usage
                if hold is not None and hold.charged.requests:
                    self.record.write_spent(job.case.case_id, job.metric.name, hold.charged,
                                            hold.refused)
                raise
            except Exception as exc:  # one broken metric must not end the run
                result = _crashed(job, exc, hold)
            refused = exhausted_reason(result)
            if refused is not None:
                self._stop(f"budget: {refused}", "incomplete")
                self.unrun[(job.case.case_id, job.metric.name)] = f"budget: {refused}"
                if result.usage is not None:  # spent before the refusal: counted, and kept
                    # for a resumed run, which sums what the run directory holds
                    self.record.write_spent(job.case.case_id, job.metric.name, result.usage,
                                            _refused(hold))
            else:
                self._keep(job, result, refused=_refused(hold))
        except Exception as exc:  # RUN_DIR or the cache cannot be written: the run stops
            failed.append(exc)
        finally:
            gate.release()

    def _check_control_outcomes(self) -> None:
        verdict = self._controls_verdict()
        if verdict is not None:
            self._stop(*verdict)

    def _controls_verdict(self) -> tuple[str, str] | None:
        """Why the controls do not prove the judge, and the status it gives the run, or
        None when they came out as expected."""
        rows = [self._settle(case) for case in self._ordered()
                if case.case.control_role is not None]
        wrong = [row for row in rows if row["state"] == "failed"]
        unknown = [row for row in rows if row["state"] in ("errored", "unrun")]
        if wrong:
            return "controls_failed: " + "; ".join(
                f"{row['case_id']}: {row['reasons'][0]}" for row in wrong), "controls_failed"
        if unknown:
            return ("controls_incomplete: " + ", ".join(
                f"{row['case_id']} {row['state']}" for row in unknown)
                + " (the controls must come out as expected before other cases are scored)",
                "controls_incomplete")
        return None

    def _settle(self, case: LoadedCase) -> dict[str, Any]:
        names = self.metrics_of(case)
        return case_row(
            case, names,
            blocked=self.blocked.get(case.case_id, []),
            results={n: r for n in names if (r := self.results.get((case.case_id, n)))},
            unrun={n: self.unrun.get((case.case_id, n), self.stopped or "not run")
                   for n in names},
            threshold=self.settings.pass_threshold,
        )

    def _finish(self, order: list[LoadedCase]) -> dict[str, Any]:
        rows = {row["case_id"]: row for row in map(self._settle, order)}
        in_file_order = [rows[case.case_id] for case in self.cases.cases]
        left = {case.case_id: kind for case in self.cases.cases
                if (kind := self._work_left(case)) is not None}
        if self.status == "complete" and left:
            self.status = "incomplete"
        verdict = self._controls_verdict()
        if verdict is not None and self.status in ("complete", "incomplete"):
            # the other cases were scored all the same (continue_on_control_failure): the
            # run still ends with the controls' verdict, as it would without the setting
            self.status = verdict[1]
        summary = build_summary(self, in_file_order, left)
        self.record.finish(in_file_order, summary)
        return summary


    def _work_left(self, case: LoadedCase) -> str | None:
        """``errored`` or ``unrun`` when a metric of the case (not blocked) has no value for
        a failed request or did not run, whatever its state (a failed case says it after its
        failures), else None."""
        if case.case_id in self.blocked:
            return None
        found = [self.results.get((case.case_id, name)) for name in self.metrics_of(case)]
        if any(result is not None and not _finished(result) for result in found):
            return "errored"
        return "unrun" if None in found else None


async def _let_the_loop_in(number: int) -> None:
    """Give the event loop a turn every ``_YIELD_EVERY`` cases or jobs prepared: checks,
    cache lookups and estimates never wait on anything, so without it a Ctrl-C or SIGTERM
    (a cancel of the run's task) would be taken only once the whole case file is prepared."""
    if number % _YIELD_EVERY == 0:
        await asyncio.sleep(0)


def _started(summary: Path) -> dict[str, str]:
    """The ``started_at`` of the run ``summary`` (``summary.json``) holds, which a resumed
    run keeps: it started then. Nothing when there is no such file or time; a file that
    cannot be read is told when the run is opened."""
    try:
        before = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # none yet, or told by ``RunRecord.open``
        return {}
    started = before.get("started_at") if isinstance(before, dict) else None
    return {"started_at": started} if isinstance(started, str) else {}


def _crashed(job: Job, exc: Exception, hold: Hold | None) -> MetricResult:
    """The result of a metric that raised ``exc``: its error, with what its hold was charged
    (the requests it sent are counted, their cost unknown unless they reported it; a judged
    one that sent any is an error a resume asks again)."""
    usage = None if hold is None or not hold.charged.requests else hold.charged
    return job.metric.failed(job.sample, f"{type(exc).__name__}: {exc}", usage=usage)


def _refused(hold: Hold | None) -> int:
    """The requests of a job the server answered with an error status and no usage."""
    return 0 if hold is None else hold.refused


def _finished(result: MetricResult) -> bool:
    """A result worth keeping on resume: a value, or no value for a reason that would not
    change if asked again (no request failed)."""
    return verdict(result) != "error"


def _references(case: LoadedCase, metric: str) -> dict[str, str | None]:
    values = {}
    for name in reference_fields(metric):
        value = getattr(case.case, name)
        if isinstance(value, list):
            value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
        if value is not None:  # a lone surrogate's bytes (see canonical_json) read back as it
            value = canonical_json(value).decode("utf-8", "surrogatepass")
        values[name] = value
    return values
