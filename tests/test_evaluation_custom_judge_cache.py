"""Judges of one's own (the ``Judge`` protocol: a name and ``ask``) in evaluation runs.

Such a judge may have no ``settings``: its part of a cache key was empty, so another such judge
sharing the cache was given the first one's results without being asked. And one that reports
no usage was charged nothing, so it was asked past ``max_requests``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from evaluation_helpers import WITH_REFERENCE, case, write_cases

from tracebridge.evaluation.budget import Budget
from tracebridge.evaluation.cache import ResultCache
from tracebridge.evaluation.cases import load_cases
from tracebridge.evaluation.record import RunRecord
from tracebridge.evaluation.runner import Runner, RunSettings
from tracebridge.metrics.base import Usage
from tracebridge.metrics.judge import JudgeReply


class FixedJudge:
    """Says every goal was achieved (or never), and counts how often it was asked."""

    def __init__(self, name: str, achieved: bool) -> None:
        self.name, self.achieved, self.asked = name, achieved, 0

    async def ask(self, request: Any) -> JudgeReply[Any]:
        self.asked += 1
        answer = request.answer.model_validate({"user_goal": "g", "end_state": "e",
                                                "reason": self.name, "achieved": self.achieved})
        return JudgeReply(answer=answer, usage=Usage(requests=1, prompt_tokens=10,
                                                     completion_tokens=5, total_tokens=15))


def _run(cases: Path, out: Path, cache: Path, judge: FixedJudge) -> dict[str, Any]:
    store = ResultCache(str(cache))
    try:
        runner = Runner(load_cases(str(cases)), [WITH_REFERENCE], RunRecord(str(out)),
                        judge=judge, model=judge.name, cache=store)
        asyncio.run(runner.run())
    finally:
        store.close()
    return {key[0]: (result.value, result.judge) for key, result in runner.results.items()}


def test_two_judges_without_settings_do_not_share_results(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [case("a"), case("b")])
    cache = tmp_path / "cache.sqlite"
    yes, no = FixedJudge("always", True), FixedJudge("never", False)
    assert _run(cases, tmp_path / "one", cache, yes) == {"a": (1.0, "always"), "b": (1.0, "always")}
    assert _run(cases, tmp_path / "two", cache, no) == {"a": (0.0, "never"), "b": (0.0, "never")}
    assert (yes.asked, no.asked) == (2, 2)
    again = FixedJudge("always", True)  # the same judge again: answered from the cache
    assert _run(cases, tmp_path / "three", cache, again) == {
        "a": (1.0, "always"), "b": (1.0, "always")}
    assert again.asked == 0


class QuietJudge(FixedJudge):
    """Reports no usage at all (``Usage()``): it does not know what it spent."""

    async def ask(self, request: Any) -> JudgeReply[Any]:
        reply = await super().ask(request)
        return JudgeReply(answer=reply.answer, usage=Usage())


def test_a_judge_that_reports_no_usage_is_charged_a_request_per_ask(tmp_path: Path) -> None:
    # it was charged the zero it reported, and asked past max_requests
    cases = write_cases(tmp_path, [case(name) for name in "abcd"])
    judge, budget = QuietJudge("quiet", True), Budget(max_requests=1)
    runner = Runner(load_cases(str(cases)), [WITH_REFERENCE], RunRecord(str(tmp_path / "run")),
                    judge=judge, model="quiet", budget=budget,
                    settings=RunSettings(allow_partial=True, concurrency=1))
    summary = asyncio.run(runner.run())
    assert judge.asked == 1
    assert budget.spent.requests == 1
    assert (summary["status"], summary["counts"]["passed"], summary["counts"]["unrun"]) == (
        "incomplete", 1, 3)
