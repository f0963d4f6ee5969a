"""Canonical JSON and the transcript hash.

``canonical_json`` is the one byte form of a JSON value: keys sorted, no spaces, UTF-8,
no NaN. ``transcript_hash`` is the SHA-256 of the canonical JSON of the conversation with
every ``metadata`` field (of messages, parts and tool calls) and every message ``id``
left out, prefixed by the scheme version; content that is a list of exactly one text part
is hashed as that text (frameworks store it either way). So it covers each message's kind,
content and parts, name, tool calls (name, arguments, invalid arguments, call id), and tool results
(call id, name, error flag) — what the conversation *says* — and ignores what adapters keep
about where it came from. It is identical across processes and machines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .messages import AIMessage, AnyMessage, TextPart, messages_of

if TYPE_CHECKING:
    from .sample import MultiTurnSample

__all__ = ["HASH_VERSION", "canonical_json", "transcript_hash"]

HASH_VERSION = "tb1"

_LEAVE_OUT_OF_MESSAGE: Any = {
    "metadata": True,
    "id": True,
    "content": {"__all__": {"metadata"}},
    "tool_calls": {"__all__": {"metadata"}},
}


def canonical_json(value: Any) -> bytes:
    """Sorted keys, compact separators, UTF-8; refuses NaN and non-JSON values."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def transcript_hash(
    conversation: MultiTurnSample | Iterable[AnyMessage],
) -> str:
    """``tb1:`` followed by the hex SHA-256 of the conversation without metadata and ids."""
    messages = messages_of(conversation)
    body = [_hashed_fields(message) for message in messages]
    digest = hashlib.sha256(canonical_json(body)).hexdigest()
    return f"{HASH_VERSION}:{digest}"


def _hashed_fields(message: AnyMessage) -> Any:
    leave_out = dict(_LEAVE_OUT_OF_MESSAGE)
    content = message.content
    single_text = (
        content[0].text
        if not isinstance(content, str) and len(content) == 1 and isinstance(content[0], TextPart)
        else None
    )
    if isinstance(content, str) or single_text is not None:
        del leave_out["content"]
    if not isinstance(message, AIMessage):
        del leave_out["tool_calls"]
    fields = message.model_dump(mode="json", exclude=leave_out)
    if single_text is not None:
        # One text part says what a plain string says; frameworks store it either way
        # (a LlamaIndex message always has blocks, a LangChain one often a string).
        fields["content"] = single_text
    return fields
