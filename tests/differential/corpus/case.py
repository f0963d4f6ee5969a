"""A named input of the differential corpus, and the small media payloads the cases share."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CASES", "PDF_B64", "PNG_B64", "PNG_BYTES", "WAV_B64", "Case", "Kind", "case"]

Kind = Literal["messages", "openai", "flat"]
"""How each side reads the input:

* ``messages``: LangChain messages (objects, or the message-like shorthand
  ``convert_to_messages`` coerces: strings, ``(role, content)`` tuples, Anthropic-shaped
  dicts). Theirs: ``convert_to_openai_messages(x)``. Ours reads ``convert_to_messages(x)``,
  the same messages theirs converts (it calls ``convert_to_messages`` first itself).
* ``openai``: Chat Completions message dicts. Ours reads them with ``openai_chat``.
* ``flat``: ``message.model_dump()`` dicts, as apps store LangChain messages. Ours reads them
  with ``langchain`` directly.
"""

PNG_B64 = "iVBORw0KGgoAAAANSUhEUg=="
PNG_BYTES = base64.b64decode(PNG_B64)
WAV_B64 = "UklGRiQAAABXQVZFZm10IA=="
PDF_B64 = "JVBERi0xLjQKJcOkw7zDtsOf"


@dataclass(frozen=True)
class Case:
    """One input: ``build()`` makes a fresh copy (LangChain messages are mutable)."""

    name: str
    kind: Kind
    build: Callable[[], list[Any]]
    shape: str
    """What the input exercises, in a few words."""
    read_options: dict[str, Any] = field(default_factory=dict)
    """Options for our reader (``allow_pending`` for a trace cut mid-tool)."""


CASES: list[Case] = []


def case(kind: Kind, shape: str, **read_options: Any) -> Callable[[Callable[[], list[Any]]], Any]:
    """Register the decorated builder as a case named after the function."""

    def register(build: Callable[[], list[Any]]) -> Callable[[], list[Any]]:
        if any(existing.name == build.__name__ for existing in CASES):
            raise ValueError(f"two cases are named {build.__name__}")
        CASES.append(Case(build.__name__, kind, build, shape, read_options))
        return build

    return register
