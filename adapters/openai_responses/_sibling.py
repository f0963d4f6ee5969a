"""The metadata of the adapter that writes the same Responses items, read as this one's.

``openai_responses`` and ``openai_agents`` read the same items with the same reader, each
keeping what it reads under its own namespace. A writer of one reads the other's namespace
where its own is absent (on a message, a part, a call, a citation, an audio reference) as its
own, so that converting between the two gives the items back. Keys that are one adapter's
alone (the Agents SDK's ``run_items`` wrappers) stay where they are: the other has no place
for them, as for any other format's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracebridge.errors import TraceError
from tracebridge.messages import AIMessage, AnyMessage

__all__ = ["as_own", "in_sibling_terms"]

SIBLINGS: Mapping[str, str] = {
    "openai_responses": "openai_agents",
    "openai_agents": "openai_responses",
}
"""An adapter -> the adapter whose namespace holds what the same reader read."""

OWN_KEYS: Mapping[str, tuple[str, ...]] = {"openai_agents": ("run_items",)}
"""The keys of an adapter's namespace that are its own, not the Responses reader's."""


def as_own(messages: Sequence[AnyMessage], source: str) -> tuple[list[AnyMessage], set[int]]:
    """``messages`` with the sibling's namespace read as ``source``'s wherever ``source``'s
    is absent, and the indexes of the messages that hold such metadata."""
    sibling = SIBLINGS.get(source)
    out = list(messages)
    moved: set[int] = set()
    if sibling is None:
        return out, moved
    for i, message in enumerate(messages):
        renamed = _renamed(message, source, sibling)
        if renamed is not message:
            out[i] = renamed
            moved.add(i)
    return out, moved


def in_sibling_terms(error: TraceError, source: str) -> TraceError:
    """``error``, raised on a message whose sibling metadata was read as ``source``'s, with its
    path and detail naming that metadata as the message holds it."""
    own, sibling = f"metadata.{source}", f"metadata.{SIBLINGS[source]}"
    path = None if error.path is None else error.path.replace(own, sibling)
    return TraceError(error.code, error.detail.replace(own, sibling), index=error.index,
                      path=path, source=error.source)


def _renamed(message: AnyMessage, source: str, sibling: str) -> AnyMessage:
    """``message`` with each metadata in it read as ``source``'s (itself when none moves)."""
    update: dict[str, Any] = {}
    metadata = _metadata(message.metadata, source, sibling)
    if metadata is not message.metadata:
        update["metadata"] = metadata
    if isinstance(message.content, list):
        content = _each(message.content, source, sibling)
        if content is not message.content:
            update["content"] = content
    if isinstance(message, AIMessage):
        for key in ("tool_calls", "citations"):
            listed = getattr(message, key)
            if isinstance(listed, list):
                found = _each(listed, source, sibling)
                if found is not listed:
                    update[key] = found
        audio = _with_metadata(message.audio, source, sibling)
        if audio is not message.audio:
            update["audio"] = audio
    return message.model_copy(update=update) if update else message


def _each(values: list[Any], source: str, sibling: str) -> list[Any]:
    """``values`` (parts, calls or citations) each with its metadata read as ``source``'s;
    ``values`` itself when none moves."""
    found = [_with_metadata(value, source, sibling) for value in values]
    if all(new is old for new, old in zip(found, values, strict=True)):
        return values
    return found


def _with_metadata(value: Any, source: str, sibling: str) -> Any:
    """``value`` (a model with ``metadata``) with it read as ``source``'s."""
    metadata = getattr(value, "metadata", None)
    if not isinstance(metadata, dict):
        return value  # none, or of an undeclared type: the writer refuses it where it is
    moved = _metadata(metadata, source, sibling)
    return value if moved is metadata else value.model_copy(update={"metadata": moved})


def _metadata(metadata: Any, source: str, sibling: str) -> Any:
    """``metadata`` with the sibling's namespace (less its own keys) as ``source``'s, when
    ``source`` has none there; ``metadata`` itself otherwise."""
    if not isinstance(metadata, dict) or source in metadata or sibling not in metadata:
        return metadata
    space = metadata[sibling]
    if isinstance(space, dict):
        space = {key: value for key, value in space.items()
                 if key not in OWN_KEYS.get(sibling, ())}
        if not space:
            return metadata
    return {**metadata, source: space}
