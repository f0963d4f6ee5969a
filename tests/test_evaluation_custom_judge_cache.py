"""The result cache keys a judged result by its judge's name, not only its settings.

A judge may have no ``settings`` (the ``Judge`` protocol asks for a name and ``ask``): its part
of the key was empty, so another such judge sharing the cache was given the first one's
results without being asked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from evaluation_helpers import WITH_REFERENCE, case, write_cases

from tracebridge.evaluation.cache import ResultCache
from tracebridge.evaluation.cases import load_cases
from tracebridge.evaluation.record import RunRecord
from tracebridge.evaluation.runner import Runner
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
