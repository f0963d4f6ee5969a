"""What ``score`` gives its actors to build their judges from: checked on the driver before
anything runs, then built in each actor.

The driver checks what it can know for certain: that ``judge`` builds a judge rather than
being one (an open client does not pickle), and that it pickles. What only the actor can
know (its environment, the judge's model) is checked where the judge is built; a failure
there is kept and raised with the actor's first batch, since an actor whose constructor
raises dies, and Ray reports that in pages of tracebacks rather than in one line.
"""

from __future__ import annotations

import functools

import ray.cloudpickle

from ..errors import with_article
from ..metrics.judge import Judge
from ._lease import Limits, check_price
from ._scoring import JudgeFactory, OpenAIJudgeSpec

__all__ = ["build_judge", "check_factory", "factory_name"]


def check_factory(judge: object) -> None:
    """Refuse (``ValueError``) a ``judge`` no actor can build its judge from: a judge
    itself (a class that builds one is welcome), anything else that cannot be called, or a
    function that does not pickle."""
    if (hasattr(judge, "ask") and not isinstance(judge, type)) or not callable(judge):
        raise ValueError(f"judge: score() needs what builds a judge in each actor (an "
                         f"OpenAIJudgeSpec(...) or a function returning a judge), got "
                         f"{with_article(type(judge).__name__)}")
    try:
        ray.cloudpickle.dumps(judge)  # type: ignore[no-untyped-call]
    except Exception as exc:  # whatever pickling raises, the actors cannot be sent it
        raise ValueError(f"judge: {factory_name(judge)} cannot be sent to the actors: "
                         f"{_one_line(exc)}; build what it holds inside it, or give an "
                         "OpenAIJudgeSpec(...)") from None


def build_judge(judge: JudgeFactory, limits: Limits | None) -> Judge | Exception:
    """The judge ``judge`` builds here, or the one-line error to raise instead of scoring:
    the factory raised or returned no judge, or (with ``limits``) a cost limit has no price
    for its model."""
    try:
        built = judge()
    except Exception as exc:  # the factory is the caller's code: any failure is reported
        return RuntimeError(f"judge: {factory_name(judge)} could not build a judge in a "
                            f"scoring actor: {_one_line(exc)}")
    if not hasattr(built, "ask"):
        what = "None" if built is None else with_article(type(built).__name__)
        return ValueError(f"judge: {factory_name(judge)} returned {what}, not a judge")
    if limits is not None:
        try:
            check_price(getattr(built, "model", None), limits)
        except ValueError as exc:
            return ValueError(f"judge: {factory_name(judge)}: {exc}")
    return built


def factory_name(judge: object) -> str:
    """How an error names ``judge``: a spec by its model, a function by its name (never by
    its arguments, which may hold a key)."""
    if isinstance(judge, OpenAIJudgeSpec):
        return f"OpenAIJudgeSpec({judge.model!r})"
    if isinstance(judge, functools.partial):
        return f"partial({factory_name(judge.func)}, ...)"
    name = getattr(judge, "__qualname__", None)
    return name if isinstance(name, str) else type(judge).__name__


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
