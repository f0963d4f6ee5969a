"""Judged metrics with one verdict per message: role adherence, knowledge retention,
conversation completeness and conversation relevancy.

``value`` is the share of good verdicts; ``details["verdicts"]`` lists each verdict with
its message index. When there is nothing to judge (no agent message, no user intention)
there is no value and ``error`` starts with ``nothing to judge``. Formulas: docs/metrics.md.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..messages import SystemMessage
from ..sample import MultiTurnSample
from .base import MetricResult, Usage
from .judge import Judge
from .judged import (
    ANSWER_CONFIG,
    JudgedMetric,
    MessageVerdict,
    MessageVerdicts,
    ai_indexes,
    check_indexes,
    human_indexes,
    render_window,
    section,
    share_of_good,
)

__all__ = [
    "ConversationCompleteness",
    "ConversationRelevancy",
    "Intention",
    "Intentions",
    "KnowledgeRetention",
    "RelevancyVerdict",
    "RoleAdherence",
]


class _PerAIMessage(JudgedMetric):
    """One judge call returning a verdict for each agent message in ``judged_indexes``."""

    instructions: str
    label = "agent messages"

    def judged_indexes(self, sample: MultiTurnSample) -> list[int]:
        return ai_indexes(sample)

    def extra_prompt(self, sample: MultiTurnSample) -> str:
        return ""

    async def verdicts(self, sample: MultiTurnSample, indexes: list[int]) -> MetricResult:
        prompt = (
            f"{self.transcript(sample)}{self.extra_prompt(sample)}\n"
            f"Give one verdict for each of the messages {indexes}."
        )

        def check(answer: MessageVerdicts) -> None:
            check_indexes((v.message_index for v in answer.verdicts), indexes, exact=True)

        answer, usage = await self.ask(self.instructions, prompt, MessageVerdicts, Usage(), check)
        verdicts = sorted(answer.verdicts, key=lambda v: v.message_index)
        value, reason = share_of_good(verdicts, lambda v: v.verdict, self.label)
        details = {"verdicts": [v.model_dump() for v in verdicts]}
        return self.result(sample, value, reason=reason, details=details, usage=usage)

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        indexes = self.judged_indexes(sample)
        if not indexes:
            return self.nothing_to_judge(sample, f"the conversation has no {self.label}", Usage())
        return await self.verdicts(sample, indexes)


class RoleAdherence(_PerAIMessage):
    """Share of agent messages that stay in the role the agent was given.

    The role is ``sample.rubrics["role"]`` when present, else the text of the system
    message(s). With neither there is no value; blank text (whitespace only) is none.
    """

    name = "role_adherence"
    instructions = """\
The agent was given the role in <role>. For each agent message asked about, decide whether
it stays in that role: its persona, tone, scope and the limits the role sets, including
which tools it calls. verdict is true when the message keeps to the role."""

    def role(self, sample: MultiTurnSample) -> str | None:
        """The role the agent was given, or None."""
        if sample.rubrics is not None and sample.rubrics.get("role", "").strip():
            return sample.rubrics["role"]
        system = [m.text for m in sample.messages
                  if isinstance(m, SystemMessage) and m.text.strip()]
        return "\n".join(system) if system else None

    def extra_prompt(self, sample: MultiTurnSample) -> str:
        return f"\n{section('role', self.role(sample) or '')}"

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        if self.role(sample) is None:
            return self.failed(
                sample,
                "no role to adhere to: the sample has no system message text "
                'and no rubrics["role"]',
                usage=Usage(),
            )
        return await super().judged(sample)


class KnowledgeRetention(_PerAIMessage):
    """Share of agent messages (after the user's first message) that keep what the user
    said earlier: they do not contradict it, forget it or ask for it again."""

    name = "knowledge_retention"
    label = "agent messages after a user message"
    instructions = """\
For each agent message asked about, decide whether it retains what the user told it in
earlier messages (facts, preferences, constraints, corrections). It fails when it
contradicts that information, ignores it, or asks for something the user already gave.
verdict is true when the message retains the user's information."""

    def judged_indexes(self, sample: MultiTurnSample) -> list[int]:
        users = human_indexes(sample)
        if not users:
            return []
        return [i for i in ai_indexes(sample) if i > users[0]]


class Intention(BaseModel):
    """One thing the user wanted from the conversation."""

    model_config = ANSWER_CONFIG

    message_index: int
    """The [index] of the user message that expresses it."""
    intention: str
    """What the user wanted, briefly."""
    reason: str
    """Why it was or was not satisfied, citing message indexes."""
    satisfied: bool
    """True when the agent fulfilled it by the end (or the user withdrew it)."""


class Intentions(BaseModel):
    """Every intention of the user, in conversation order."""

    model_config = ANSWER_CONFIG

    intentions: list[Intention]
    """One entry per distinct intention."""


_COMPLETENESS = """\
List every distinct intention the user expressed (what they wanted done or answered), with
the index of the user message that expresses it. For each, decide whether the agent
satisfied it by the end of the conversation; an intention the user withdrew counts as
satisfied. Greetings and thanks are not intentions."""


class ConversationCompleteness(JudgedMetric):
    """Share of the user's intentions the agent satisfied by the end of the conversation."""

    name = "conversation_completeness"

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        users = human_indexes(sample)
        if not users:
            return self.nothing_to_judge(sample, "the conversation has no user message", Usage())

        def check(answer: Intentions) -> None:
            check_indexes((i.message_index for i in answer.intentions), users, exact=False)

        answer, usage = await self.ask(
            _COMPLETENESS, self.transcript(sample), Intentions, Usage(), check
        )
        if not answer.intentions:
            return self.nothing_to_judge(sample, "the judge found no user intention", usage)
        value, reason = share_of_good(answer.intentions, lambda i: i.satisfied, "intentions")
        details = {"intentions": [i.model_dump() for i in answer.intentions]}
        return self.result(sample, value, reason=reason, details=details, usage=usage)


class RelevancyVerdict(BaseModel):
    """Whether one agent message is relevant to the conversation before it."""

    model_config = ANSWER_CONFIG

    reason: str
    """Why, citing message indexes."""
    relevant: bool
    """True when the message responds to what the user asked within the window."""


_RELEVANCY = """\
Decide whether the last message of the transcript, an agent message, is relevant: it
responds to what the user asked or said in the messages shown (answering, asking a
needed clarification, or calling tools that serve the request). It is not relevant when
it ignores the user, changes the subject, or serves a request the user did not make."""


class ConversationRelevancy(JudgedMetric):
    """Share of agent messages relevant to the recent conversation.

    Each agent message is judged in its own request, seeing the conversation from the
    ``window``-th most recent user message up to that agent message (all of it when there
    are fewer user messages). Agent messages before any user message are not judged.
    """

    name = "conversation_relevancy"

    def __init__(self, judge: Judge, window: int = 5) -> None:
        super().__init__(judge)
        if type(window) is not int:
            raise TypeError(f"window must be a whole number (an int), got {window!r}")
        if window < 1:
            raise ValueError(f"window must be 1 or more user turns, got {window}")
        self.window = window

    def window_start(self, sample: MultiTurnSample, index: int) -> int:
        """Where the window of the agent message at ``index`` starts."""
        users = [i for i in human_indexes(sample) if i < index]
        return users[-self.window] if len(users) >= self.window else 0

    async def judged(self, sample: MultiTurnSample) -> MetricResult:
        users = human_indexes(sample)
        indexes = [i for i in ai_indexes(sample) if users and i > users[0]]
        if not indexes:
            return self.nothing_to_judge(
                sample, "the conversation has no agent message after a user message", Usage()
            )
        usage = Usage()
        verdicts: list[MessageVerdict] = []
        for index in indexes:
            start = self.window_start(sample, index)
            prompt = section("transcript", render_window(sample, start, index))
            answer, usage = await self.ask(_RELEVANCY, prompt, RelevancyVerdict, usage)
            verdicts.append(
                MessageVerdict(message_index=index, reason=answer.reason, verdict=answer.relevant)
            )
        value, reason = share_of_good(verdicts, lambda v: v.verdict, "agent messages")
        details = {
            "window": self.window,
            "verdicts": [
                {**v.model_dump(), "window_start": self.window_start(sample, v.message_index)}
                for v in verdicts
            ],
        }
        return self.result(sample, value, reason=reason, details=details, usage=usage)
