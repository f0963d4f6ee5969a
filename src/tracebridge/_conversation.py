"""The messages of a conversation, whatever holds them (imports only the error type: every
module may use it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .errors import TraceError

if TYPE_CHECKING:
    from .messages import AnyMessage

__all__ = ["messages_of"]


def messages_of(conversation: Any, source: str | None = None) -> list[AnyMessage]:
    """The messages of a ``MultiTurnSample`` (its ``messages``) or of a sequence of messages;
    ``malformed_event`` at ``messages`` for anything else (the items are not looked at)."""
    messages = getattr(conversation, "messages", conversation)
    if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Iterable):
        raise TraceError(
            "malformed_event",
            f"expected a list of tracebridge messages or a MultiTurnSample, got "
            f"{type(messages).__name__}",
            path="messages",
            source=source,
        )
    return list(messages)
