"""Judged metrics about outcomes: agent goal accuracy (with and without a reference) and
topic adherence. Formulas and edge cases: docs/metrics.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from ..sample import MultiTurnSample
from .base import MetricResult, Usage
from .judge import Judge
from .judged import ANSWER_CONFIG, JudgedMetric, check_indexes, human_indexes, section

__all__ = [
    "AgentGoalAccuracyWithReference",
    "AgentGoalAccuracyWithoutReference",
    "GoalVerdict",
    "TopicAdherence",
    "TopicQuestion",
    "TopicReport",
]


class GoalVerdict(BaseModel):
    """The judge's account of the user's goal and of what the conversation reached."""

    model_config = ANSWER_CONFIG

    user_goal: str
    """The user's final goal, after their corrections and cancellations."""
    end_state: str
    """What was actually achieved by the end, according to the tool results."""
    reason: str
    """Why the verdict is what it is, citing message indexes."""
    achieved: bool
    """True only when the end state satisfies the goal."""


_GOAL_STEPS = """\
1. user_goal: state the user's final goal. Later messages override earlier ones: apply the
   user's corrections, and drop requests the user cancelled.
2. end_state: state what was actually achieved by the end of the conversation, according to
   the tool results. A success the agent claims but a tool result contradicts (an error, a
   failure, different data) did not happen.
3. reason and achieved:"""

_WITHOUT_REFERENCE = f"""\
Decide whether the agent achieved the user's goal.
{_GOAL_STEPS} achieved is true only if the end state fully satisfies the final goal."""

_WITH_REFERENCE = f"""\
Decide whether the agent reached the expected outcome given in <reference>.
{_GOAL_STEPS} achieved is true only if the end state matches the expected outcome in
   <reference> (the reference says what should have happened; wording may differ)."""


class _GoalAccuracy(JudgedMetric):
    instructions: str

    def _prompt(self, sample: MultiTurnSample) -> str:
        return self.transcript(sample)

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        verdict, usage = await self.ask(
            self.instructions, self._prompt(sample), GoalVerdict, Usage()
        )
        return self.result(
            sample,
            1.0 if verdict.achieved else 0.0,
            reason=verdict.reason,
            details={"user_goal": verdict.user_goal, "end_state": verdict.end_state},
            usage=usage,
        )


class AgentGoalAccuracyWithoutReference(_GoalAccuracy):
    """1.0 when the judge finds the user's final goal achieved, else 0.0. With no user
    message there is no goal to find: no value ("nothing to judge"), and nothing is asked."""

    name = "agent_goal_accuracy_without_reference"
    instructions = _WITHOUT_REFERENCE

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        if not human_indexes(sample):
            return self.nothing_to_judge(sample, "the conversation has no user message", Usage())
        return await super().judged(sample)


class AgentGoalAccuracyWithReference(_GoalAccuracy):
    """1.0 when the end state matches ``sample.reference``, else 0.0.

    A conversation with no user message is judged too: the reference states the outcome
    expected (an agent started by its system message, a scheduled task, can reach it).
    """

    name = "agent_goal_accuracy_with_reference"
    instructions = _WITH_REFERENCE

    def _prompt(self, sample: MultiTurnSample) -> str:
        return f"{self.transcript(sample)}\n{section('reference', sample.reference or '')}"

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        if sample.reference is None or not sample.reference.strip():
            return self.failed(
                sample, "the sample has no reference (the expected outcome, in words)",
                usage=Usage(),
            )
        return await super().judged(sample)


class TopicQuestion(BaseModel):
    """One question or request of the user."""

    model_config = ANSWER_CONFIG

    message_index: int
    """The [index] of the user message that asks it."""
    question: str
    """The question or request, briefly."""
    topic: str
    """Its topic, in a few words."""
    topic_allowed: bool
    """True when the topic falls under one of the allowed topics."""
    answered: bool
    """True when the agent answered or acted on it; False when it refused or deflected."""


class TopicReport(BaseModel):
    """Every question or request the user made."""

    model_config = ANSWER_CONFIG

    questions: list[TopicQuestion]
    """In conversation order."""


_TOPICS = """\
The agent may only talk about the topics listed in <allowed_topics>: each topic starts with
"- " on a line of its own, and the indented lines after it belong to that topic. List every
question or request the user made (message_index: the user message it is in). For each, name
its topic, say whether that topic falls under one of the allowed topics, and whether the agent
answered it (answered or acted on it) or refused it (declined, deflected or redirected).
Greetings and thanks are not questions."""


def _topic_item(topic: str) -> str:
    """``topic`` as an item of the allowed topics: ``- `` and its first line, its other lines
    indented as the transcript indents a message's, so a topic holding a line break stays one.

    >>> print(_topic_item("weather\\n- lock picking"))
    - weather
        - lock picking
    """
    first, *rest = topic.splitlines() or [""]
    return "\n".join([f"- {first}", *(f"    {line}" if line else "" for line in rest)])


TopicMode = Literal["precision", "recall", "f1"]


class TopicAdherence(JudgedMetric):
    """Does the agent answer allowed topics and refuse the others?

    Each user question is a true positive (allowed, answered), false positive (off-topic,
    answered), false negative (allowed, refused) or true negative (off-topic, refused: a
    correct refusal). precision = tp / (tp + fp), 1.0 when nothing was answered; recall =
    tp / (tp + fn), 1.0 when no allowed question was asked; f1 = their harmonic mean (0 when
    both are 0). No question at all: no value ("nothing to judge"). Blank topics
    (whitespace only) are left out; none left, or none given: no value.
    """

    prompt_version = "3"
    """``3``: a topic's further lines are indented, and the instructions say they belong to
    it (``2``: a topic holding a line break read as several)."""

    def __init__(self, judge: Judge, mode: TopicMode = "f1") -> None:
        super().__init__(judge)
        if mode not in ("precision", "recall", "f1"):
            raise ValueError(f"mode must be 'precision', 'recall' or 'f1', got {mode!r}")
        self.mode: TopicMode = mode
        self.name = f"topic_adherence_{mode}"

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        topics = allowed_topics(sample.reference_topics)
        if not topics:
            return self.failed(
                sample, "the sample has no reference_topics (the allowed topics)", usage=Usage()
            )
        users = human_indexes(sample)
        if not users:
            return self.nothing_to_judge(sample, "the conversation has no user message", Usage())
        allowed = "\n".join(_topic_item(topic) for topic in topics)
        prompt = f"{self.transcript(sample)}\n{section('allowed_topics', allowed)}"

        def check(report: TopicReport) -> None:
            check_indexes((q.message_index for q in report.questions), users, exact=False)

        report, usage = await self.ask(_TOPICS, prompt, TopicReport, Usage(), check)
        if not report.questions:
            return self.nothing_to_judge(sample, "the judge found no user question", usage)
        return self._scored(sample, report, usage)

    def _scored(self, sample: MultiTurnSample, report: TopicReport, usage: Usage) -> MetricResult:
        labels = {
            (True, True): "true_positive",
            (False, True): "false_positive",
            (True, False): "false_negative",
            (False, False): "true_negative",
        }
        rows = [
            {**q.model_dump(), "label": labels[(q.topic_allowed, q.answered)]}
            for q in report.questions
        ]
        counts = {label: sum(r["label"] == label for r in rows) for label in labels.values()}
        tp, fp, fn = counts["true_positive"], counts["false_positive"], counts["false_negative"]
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        value = {"precision": precision, "recall": recall, "f1": f1}[self.mode]
        wrong = [r for r in rows if r["label"] in ("false_positive", "false_negative")]
        if wrong:
            reason = "; ".join(
                f"[{r['message_index']}] {r['topic']}: "
                + ("answered off-topic" if r["label"] == "false_positive" else "refused on-topic")
                for r in wrong
            )
        else:
            reason = f"all {len(rows)} questions handled correctly"
        details = {
            "mode": self.mode,
            "questions": rows,
            **counts,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
        return self.result(sample, value, reason=reason, details=details, usage=usage)


def allowed_topics(topics: Sequence[str] | None) -> list[str]:
    """The topics of ``reference_topics`` that allow something: a blank one (whitespace only)
    allows nothing and is left out, as a blank role or reference is."""
    return [topic for topic in topics or () if topic.strip()]
