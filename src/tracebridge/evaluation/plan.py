"""What a judged metric would ask, found before anything is sent (for the budget estimate).

The metric runs against a ``PlanningJudge``, which records each request and answers it with a
placeholder of the answer's shape (empty strings, false, zeros, empty lists), so a metric that
asks one request per message (``conversation_relevancy``) shows all of them. Nothing is sent.
"""

from __future__ import annotations

import contextlib
import types
import typing
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from ..metrics.base import Metric, Usage
from ..metrics.judge import JudgeReply, JudgeRequest
from ..sample import MultiTurnSample

__all__ = ["PlanningJudge", "planned_requests"]

M = TypeVar("M", bound=BaseModel)


class PlanningJudge:
    """A judge that sends nothing: it records requests and answers with placeholders."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.requests: list[JudgeRequest[Any]] = []

    @property
    def name(self) -> str:
        return self._name

    async def ask(self, request: JudgeRequest[M]) -> JudgeReply[M]:
        self.requests.append(request)
        return JudgeReply(answer=_placeholder(request.answer), usage=Usage())


async def planned_requests(
    metric: Metric, planner: PlanningJudge, sample: MultiTurnSample
) -> list[JudgeRequest[Any]]:
    """The requests ``metric`` (built on ``planner``) would send to score ``sample``."""
    planner.requests = []
    # Placeholder answers may not score (a share of zero verdicts); only the requests the
    # metric made on the way count here, and they are all recorded by then.
    with contextlib.suppress(ArithmeticError, ValueError, TypeError, IndexError, KeyError):
        await metric.ascore(sample)
    return planner.requests


def _placeholder(model: type[M]) -> M:
    values = {name: _blank(field.annotation) for name, field in model.model_fields.items()}
    return model.model_construct(**values)


def _blank(annotation: Any) -> Any:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return None
    if origin is typing.Literal:
        return get_args(annotation)[0]
    if origin in (list, tuple, set):
        return []
    if origin is dict:
        return {}
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return _placeholder(annotation)
        for kind in (bool, int, float, str):
            if issubclass(annotation, kind):
                return kind()
    return None
