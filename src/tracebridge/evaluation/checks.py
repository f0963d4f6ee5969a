"""The deterministic checks every case passes before a judge request is spent on it.

In order: the conversation rules (the transcript was read and follows them), ``expect``
against ``domain_evidence``, the references the run's metrics read, and the user's checks
(``package.module:function``, a function of the ``Case`` returning a list of problems). A case
that fails any is blocked, with every reason found, and costs nothing.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..hashing import canonical_json
from ..metrics._matching import args_equal
from ..metrics.goals import allowed_topics
from .cases import Case, Expectation, LoadedCase

__all__ = [
    "CheckError",
    "UserCheck",
    "check_case",
    "check_expectations",
    "load_check",
    "receipt_reason",
    "reference_fields",
]

REQUIRED_REFERENCES: dict[str, tuple[str, ...]] = {
    "agent_goal_accuracy_with_reference": ("reference",),
    "topic_adherence_precision": ("reference_topics",),
    "topic_adherence_recall": ("reference_topics",),
    "topic_adherence_f1": ("reference_topics",),
    "tool_call_accuracy": ("reference_tool_calls",),
    "tool_call_accuracy_unordered": ("reference_tool_calls",),
    "tool_call_f1": ("reference_tool_calls",),
}
"""The reference fields a metric cannot score without."""
OPTIONAL_REFERENCES: dict[str, tuple[str, ...]] = {"role_adherence": ("rubrics",)}
"""Reference fields a metric reads when they are there (the role's rubric)."""


def reference_fields(metric: str) -> tuple[str, ...]:
    """Every reference field ``metric`` reads (what its cached results depend on)."""
    return REQUIRED_REFERENCES.get(metric, ()) + OPTIONAL_REFERENCES.get(metric, ())


class CheckError(Exception):
    """A ``--checks`` function that cannot be loaded (one line)."""


@dataclass(frozen=True)
class UserCheck:
    """A user's check: its ``package.module:function`` name and the function."""

    name: str
    function: Callable[[Case], Any]


def load_check(spec: str) -> UserCheck:
    """The function ``package.module:function`` names; ``CheckError`` when there is none."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise CheckError(f"--checks {spec}: expected package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = ""
        if isinstance(exc, ModuleNotFoundError) and exc.name is not None and (
                module_name == exc.name or module_name.startswith(exc.name + ".")):
            # the module itself is not found (not a module it imports): the current
            # directory is not on the import path of an installed command
            hint = ("; the module must be importable: put its directory on the import path "
                    "(PYTHONPATH=. for a module in the current directory) or install it")
        raise CheckError(f"--checks {spec}: cannot import {module_name}: {exc}{hint}") from None
    except KeyboardInterrupt:  # Ctrl-C (and SIGTERM, taken as one) stays an interrupt
        raise
    except BaseException as exc:  # the module's own failure (a SyntaxError, an error, a
        # sys.exit or a CancelledError at import, a relative name): the check cannot be
        # loaded, said in one line
        told = " ".join(str(exc).split())
        raise CheckError(f"--checks {spec}: cannot import {module_name}: "
                         f"{type(exc).__name__}: {told}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise CheckError(f"--checks {spec}: {module_name} has no function {attribute}")
    if _is_async(function):
        raise CheckError(f"--checks {spec}: {attribute} is an async function; a check is a "
                         "plain function of the case returning a list of problems")
    return UserCheck(spec, function)


def _is_async(function: Callable[..., Any]) -> bool:
    """Whether calling ``function`` gives a coroutine (an ``async def``, or an object whose
    ``__call__`` is one): no check runs its body."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__)


def check_case(
    case: LoadedCase, metrics: Sequence[str], user_checks: Sequence[UserCheck] = ()
) -> list[str]:
    """Every reason to block ``case`` before a judge sees it (empty: go ahead)."""
    reasons: list[str] = []
    if case.transcript_error is not None:
        reasons.append(f"conversation rules: {case.transcript_error}")
    reasons.extend(check_expectations(case.case))
    reasons.extend(_references(case.case, metrics))
    for check in user_checks:
        reasons.extend(_user(check, case.case))
    return reasons


def receipt_reason(reason: str) -> bool:
    """Whether a reason a case was blocked for is its evidence contradicting it (an
    ``expect`` not met, or a problem a user check found), rather than missing evidence (an
    unreadable transcript, a missing reference, a user check that raised or returned
    something other than a list of problems: its own failure says nothing of the case)."""
    if reason.startswith("expect "):
        return True
    if reason.startswith("check "):  # "check pkg.mod:fn: problem" vs "check ... raised"
        name = reason[len("check "):].split(" ", 1)[0]
        return name.endswith(":")
    return False


def check_expectations(case: Case) -> list[str]:
    """Each ``expect`` assertion that ``domain_evidence`` does not meet."""
    return [
        f"expect {key}: {problem}"
        for key, expectation in case.expect.items()
        if (problem := _unmet(case.domain_evidence, key, expectation)) is not None
    ]


def _unmet(evidence: dict[str, Any], key: str, expectation: Expectation) -> str | None:
    there = key in evidence
    value = evidence.get(key)
    kind = expectation.kind
    if kind == "present":
        present = there and value is not None
        if present == expectation.present:
            return None
        if expectation.present:
            return "expected present, but domain_evidence has " + (
                "null" if there else "no such field")
        return f"expected absent or null, got {_json(value)}"
    if not there:
        return f"expected {kind} {_json(getattr(expectation, kind))}, but domain_evidence " \
               "has no such field"
    if kind == "equals":  # as typed JSON: 10 is 10.0, 0 is -0.0, true is not 1
        if args_equal(value, expectation.equals):
            return None
        return f"expected {_json(expectation.equals)}, got {_json(value)}"
    if not isinstance(value, list):
        return f"expected a list of {expectation.count}, got {_json(value)}"
    if len(value) == expectation.count:
        return None
    return f"expected {expectation.count} item(s), got {len(value)}: {_json(value)}"


def _json(value: Any) -> str:
    # canonical_json writes a lone surrogate (from a JSON escape) as its bytes: read back as
    # it, and written to RUN_DIR as its escape
    return canonical_json(value).decode("utf-8", "surrogatepass")


def _references(case: Case, metrics: Sequence[str]) -> list[str]:
    reasons = []
    reads_one = False
    for metric in metrics:
        needed = REQUIRED_REFERENCES.get(metric, ())
        reads_one = reads_one or bool(needed)
        missing = [name for name in needed if _empty(name, getattr(case, name))]
        if missing:
            reasons.append(f"reference: {metric} needs {', '.join(missing)}, and the case has "
                           "none")
    if reads_one and not case.reference_version:
        reasons.append("reference: the case has no reference_version (a metric of this run "
                       "reads its references)")
    return reasons


def _empty(name: str, value: Any) -> bool:
    """No reference to score against (an empty list of expected calls is one: expect none;
    topics that are all blank allow nothing, as ``TopicAdherence`` reads them)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return name == "reference_topics" and not allowed_topics(value)


def _user(check: UserCheck, case: Case) -> list[str]:
    try:
        problems = check.function(case)
    except KeyboardInterrupt:  # Ctrl-C (and SIGTERM, taken as one) stays an interrupt
        raise
    except BaseException as exc:  # the check's own failure (a sys.exit or a CancelledError
        # in it too; a check is no coroutine, so nothing cancels it) is a reason not to
        # judge, said so
        return [f"check {check.name} raised {type(exc).__name__}: {exc}"]
    if inspect.iscoroutine(problems):  # never awaited: closed, so nothing warns of it
        problems.close()
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return [f"check {check.name} returned {type(problems).__name__}; expected a list of "
                "problems (strings)"]
    return [f"check {check.name}: {problem}" for problem in problems]
