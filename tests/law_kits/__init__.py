"""One law kit per format: what the adapter-law harness needs to check the three laws.

``tests/law_kits/<format>.py`` defines ``KIT = LawKit(...)``. The harness
(``tests/test_adapter_laws.py``) runs, for every registered format:

* lossless:  ``canonical(from_messages(to_messages(t))) == canonical(t)`` for ``t`` in ``traces``;
* faithful:  ``to_messages(from_messages(m)) == m`` for ``m`` in ``conversations``;
* strict:    ``to_messages(b.trace)`` raises ``TraceError`` with ``b.code`` and ``b.index``
  (and ``b.path`` where the kit states it) for ``b`` in ``broken``; and, whatever the draws,
  for each mutation named in ``RULE_KINDS``, for ``b`` in ``rules[kind]`` (each with its path).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tracebridge import Message


@dataclass(frozen=True)
class BrokenTrace:
    """A trace that breaks the format or a rule, and the error it must raise."""

    trace: Any
    code: str
    index: int | None
    path: str | None = None
    """The field path the error must name; None where the kit does not state it."""


RULE_KINDS = ("unknown_role", "orphan_tool_result", "unanswered_tool_call",
              "duplicate_tool_call_id")
"""The mutations every kit breaks a trace with, each checked on its own (by the code it must
raise: a role the format does not have, a result that answers nothing, a removed result, a
call id used twice)."""


def identity(trace: Any) -> Any:
    return trace


@dataclass(frozen=True)
class LawKit:
    traces: st.SearchStrategy[Any]
    """Valid traces in the format's own form (for object formats: the objects)."""
    conversations: st.SearchStrategy[list[Message]]
    """Typed conversations the format can express."""
    broken: st.SearchStrategy[BrokenTrace]
    """Invalid traces with the code and source index they must be rejected with."""
    rules: Mapping[str, st.SearchStrategy[BrokenTrace]] = field(default_factory=dict)
    """For each kind of ``RULE_KINDS`` the format can hold: traces broken that way, each with
    its path."""
    no_rules: Mapping[str, str] = field(default_factory=dict)
    """The kinds of ``RULE_KINDS`` the format cannot hold, and why."""
    canonical: Callable[[Any], Any] = identity
    """How two traces are compared (object forms: the framework's own dict serialization)."""
    to_options: dict[str, Any] = field(default_factory=dict)
    from_options: dict[str, Any] = field(default_factory=dict)
