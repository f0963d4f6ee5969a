"""One law kit per format: what the adapter-law harness needs to check the three laws.

``tests/law_kits/<format>.py`` defines ``KIT = LawKit(...)``. The harness
(``tests/test_adapter_laws.py``) runs, for every registered format:

* lossless:  ``canonical(from_messages(to_messages(t))) == canonical(t)`` for ``t`` in ``traces``;
* faithful:  ``to_messages(from_messages(m)) == m`` for ``m`` in ``conversations``;
* strict:    ``to_messages(b.trace)`` raises ``TraceError`` with ``b.code`` and ``b.index``
  for ``b`` in ``broken``.
"""

from __future__ import annotations

from collections.abc import Callable
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
    canonical: Callable[[Any], Any] = identity
    """How two traces are compared (object forms: the framework's own dict serialization)."""
    to_options: dict[str, Any] = field(default_factory=dict)
    from_options: dict[str, Any] = field(default_factory=dict)
