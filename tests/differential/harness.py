"""Run one case through langchain-core's converters and ours, and compare what each carried.

Directions (named for what theirs produces):

* ``to_openai``: theirs is ``convert_to_openai_messages(x)``. Ours goes through LangChain
  messages as theirs does: ``messages`` cases read ``convert_to_messages(x)`` with
  ``langchain``; ``openai`` cases read ``x`` with ``openai_chat`` and write it as LangChain
  messages first; ``flat`` cases read ``x`` with ``langchain``. Then ``openai_chat`` writes.
* ``to_langchain``: theirs is ``convert_to_messages(x)``; ours reads ``x`` with its own reader
  (``openai_chat`` or ``langchain``) and writes with ``langchain``. Not run for ``messages``
  cases: there theirs would only coerce shorthand we read after it (comparing ours on its
  output with its output proves nothing).

A writer that refuses with ``not_representable`` and names a ``drop=`` option is called
again with that option, and the options it took are part of the outcome: the loss is
accepted by name, never silently.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    convert_to_messages,
    convert_to_openai_messages,
    messages_from_dict,
    messages_to_dict,
)

from tracebridge import TraceError
from tracebridge.adapters import langchain, openai_chat

from .content import Fact
from .corpus import Case
from .facts import langchain_facts, openai_facts

__all__ = ["Comparison", "Key", "Outcome", "differences", "run"]

_DROP_HINT = re.compile(r"drop=\[([^\]]*)\]")
_MAX_DROPS = 8


@dataclass(frozen=True)
class Comparison:
    """One direction of one case."""

    direction: str
    theirs_error: str | None = None
    """langchain-core raised (type and first line): ours carries more, nothing to compare."""
    ours_error: tuple[str, int | None] | None = None
    """Our ``TraceError`` (code, index) when we refused even with the named drops; any other
    exception is a crash, recorded as (``"crash:<type>"``, None)."""
    drops: tuple[str, ...] = ()
    """The ``drop=`` options our writers needed."""
    missing: frozenset[Fact] = frozenset()
    """Facts theirs carries and ours does not."""
    extra: frozenset[Fact] = frozenset()
    """Facts ours carries and theirs does not."""


@dataclass(frozen=True)
class Outcome:
    """What happened to one case."""

    case: Case
    read_error: tuple[str, int | None] | None
    """Our reader refused the input (code, index)."""
    round_trip: str | None
    """Our reader's own round trip, input -> typed -> input: ``"exact"``, ``"differs"``, or
    the code with which our writer refused to write the input back (None when it could not
    read it)."""
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    """Per direction; when our reader refused, only theirs ran (``theirs_error`` or not)."""
    typed_round_trip: str | None = None
    """The other way, typed -> input format -> typed, with the same adapter: ``"exact"``,
    ``"differs"``, or the code with which it refused (None when it could not read it)."""


def run(case: Case) -> Outcome:
    """Both converters on ``case``, compared in every direction that applies."""
    reader = openai_chat if case.kind == "openai" else langchain
    directions = ("to_openai",) if case.kind == "messages" else ("to_openai", "to_langchain")
    try:
        typed = reader.to_messages(_our_input(case), **case.read_options)
    except TraceError as error:
        theirs = {
            name: Comparison(name, theirs_error=_theirs_error(case, name)) for name in directions
        }
        return Outcome(case, (error.code, error.index), None, theirs)
    comparisons = {"to_openai": _to_openai(case, typed)}
    if case.kind != "messages":
        comparisons["to_langchain"] = _to_langchain(case, typed)
    return Outcome(
        case, None, _round_trip(case, typed), comparisons, _typed_round_trip(case, typed)
    )


_THEIRS = {"to_openai": convert_to_openai_messages, "to_langchain": convert_to_messages}


def _theirs_error(case: Case, direction: str) -> str | None:
    try:
        _THEIRS[direction](case.build())
    except Exception as error:  # theirs refusing is data here, whatever it raises
        return _described(error)
    return None


def _described(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def _our_input(case: Case) -> Any:
    return convert_to_messages(case.build()) if case.kind == "messages" else case.build()


def _to_openai(case: Case, typed: list[Any]) -> Comparison:
    def ours(drops: list[str]) -> Any:
        messages = typed
        if case.kind == "openai":
            native = _write(langchain, messages, drops)
            messages = langchain.to_messages(native, **case.read_options)
        return _write(openai_chat, messages, drops)

    return _compare(
        "to_openai", lambda: convert_to_openai_messages(case.build()), ours, openai_facts
    )


def _to_langchain(case: Case, typed: list[Any]) -> Comparison:
    return _compare(
        "to_langchain",
        lambda: convert_to_messages(case.build()),
        lambda drops: _write(langchain, typed, drops),
        langchain_facts,
    )


def _compare(
    direction: str,
    theirs: Callable[[], Any],
    ours: Callable[[list[str]], Any],
    facts: Callable[[Any], frozenset[Fact]],
) -> Comparison:
    drops: list[str] = []
    ours_error: tuple[str, int | None] | None = None
    theirs_error: str | None = None
    try:
        written = ours(drops)
    except TraceError as error:
        ours_error = (error.code, error.index)
    except Exception as error:  # a crash is recorded as one, to be reported, not hidden
        ours_error = (f"crash:{type(error).__name__}", None)
    try:
        theirs_out = theirs()
    except Exception as error:  # theirs refusing is data here, whatever it raises
        theirs_error = _described(error)
    if ours_error is not None or theirs_error is not None:
        return Comparison(direction, theirs_error, ours_error, tuple(drops))
    ours_facts, theirs_facts = facts(written), facts(theirs_out)
    return Comparison(
        direction,
        drops=tuple(drops),
        missing=theirs_facts - ours_facts,
        extra=ours_facts - theirs_facts,
    )


def _write(adapter: Any, messages: list[Any], drops: list[str]) -> Any:
    """``adapter.from_messages``, taking each loss a refusal names (recorded in ``drops``)."""
    accepts_drop = "drop" in inspect.signature(adapter.from_messages).parameters
    for _ in range(_MAX_DROPS):
        try:
            if accepts_drop:
                return adapter.from_messages(messages, drop=list(drops))
            return adapter.from_messages(messages)
        except TraceError as error:
            named = _DROP_HINT.search(error.detail) if error.code == "not_representable" else None
            options = re.findall(r"'([^']+)'", named.group(1)) if named else []
            new = [option for option in options if option not in drops]
            if not accepts_drop or not new:
                raise
            drops.extend(new)
    raise AssertionError(f"more than {_MAX_DROPS} drop options asked for: {drops}")


def _round_trip(case: Case, typed: list[Any]) -> str:
    try:
        if case.kind == "openai":
            same = openai_chat.from_messages(typed) == case.build()
        else:
            same = messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(
                _as_langchain_loads_it(case)
            )
    except TraceError as error:
        return error.code
    return "exact" if same else "differs"


def _typed_round_trip(case: Case, typed: list[Any]) -> str:
    adapter = openai_chat if case.kind == "openai" else langchain
    try:
        again = adapter.to_messages(adapter.from_messages(typed), **case.read_options)
    except TraceError as error:
        return error.code
    return "exact" if again == typed else "differs"


def _as_langchain_loads_it(case: Case) -> list[Any]:
    if case.kind == "flat":
        return messages_from_dict([{"type": item["type"], "data": item} for item in case.build()])
    return convert_to_messages(case.build())


Key = tuple[Any, ...]
"""One observed difference: ``("read", "refused", code, index)``, ``("round_trip", status)``,
``("typed_round_trip", status)``, ``(direction, "refused", code, index)``,
``(direction, "drop", option)`` or ``(direction, "missing", fact)``."""


def differences(outcome: Outcome) -> frozenset[Key]:
    """Every way ``outcome`` departs from "read, round-tripped, carries all theirs carries"."""
    keys: set[Key] = set()
    if outcome.read_error is not None:
        keys.add(("read", "refused", *outcome.read_error))
    if outcome.round_trip not in (None, "exact"):
        keys.add(("round_trip", outcome.round_trip))
    if outcome.typed_round_trip not in (None, "exact"):
        keys.add(("typed_round_trip", outcome.typed_round_trip))
    for direction, comparison in outcome.comparisons.items():
        if comparison.ours_error is not None:
            keys.add((direction, "refused", *comparison.ours_error))
        keys.update((direction, "drop", option) for option in comparison.drops)
        keys.update((direction, "missing", fact) for fact in comparison.missing)
    return frozenset(keys)
