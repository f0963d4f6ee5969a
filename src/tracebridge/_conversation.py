"""The messages of a conversation, whatever holds them (no imports: every module may use it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .messages import AnyMessage

__all__ = ["messages_of"]


def messages_of(conversation: Any) -> list[AnyMessage]:
    """The messages of a ``MultiTurnSample`` (its ``messages``) or of a sequence of messages."""
    messages: Iterable[AnyMessage] = getattr(conversation, "messages", conversation)
    return list(messages)
