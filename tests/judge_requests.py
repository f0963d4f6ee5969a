"""A judge request and a gate that lets every request through, shared by the judge's tests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from tracebridge.metrics import JudgeRequest, Usage


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str
    ok: bool


REQUEST: JudgeRequest[Verdict] = JudgeRequest(
    instructions="Judge the conversation.",
    prompt="<transcript>\n[0] human: hi\n[1] ai: hello\n</transcript>",
    answer=Verdict,
)
GOOD = '{"reason": "fine", "ok": true}'
"""A judge's answer to ``REQUEST``."""


class OpenGate:
    """A gate that lets every request through and records what each cost."""

    def __init__(self) -> None:
        self.costs: list[Usage] = []

    async def enter(self, messages: Any, answer: Any) -> int:
        return len(self.costs)

    def leave(self, ticket: Any, usage: Usage) -> None:
        self.costs.append(usage)
