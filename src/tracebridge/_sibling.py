"""The metadata one of two adapters that write the same items kept, renamed as the other's.

``openai_responses`` and ``openai_agents`` read the same Responses items with the same reader,
and ``openai_chat`` and ``swarm`` the same Chat Completions messages, each keeping what it
reads under its own namespace, and each writer reads only its own. Converting
from one to the other (``tracebridge.registry.carried``) renames the source's namespace as the
target's wherever the target's is absent (on a message, a part, a call, a citation, an audio
reference), so that the target writes the items back. Keys that are one adapter's alone (the
Agents SDK's ``run_items`` wrappers) stay behind under its name: the other has no place for
them, as for any other format's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .messages import AIMessage, AnyMessage

__all__ = ["renamed"]

OWN_KEYS: Mapping[str, tuple[str, ...]] = {"openai_agents": ("run_items",)}
"""The keys of an adapter's namespace that are its own, not the shared reader's."""


def renamed(messages: Sequence[AnyMessage], source: str, target: str) -> list[AnyMessage]:
    """``messages`` with ``source``'s namespace renamed as ``target``'s wherever ``target``'s
    is absent, the keys that are ``source``'s alone left behind under its name; the messages
    that hold none as they are."""
    return [_renamed(message, source, target) for message in messages]


def _renamed(message: AnyMessage, source: str, target: str) -> AnyMessage:
    """``message`` with each metadata in it renamed (itself when none moves)."""
    update: dict[str, Any] = {}
    metadata = _metadata(message.metadata, source, target)
    if metadata is not message.metadata:
        update["metadata"] = metadata
    if isinstance(message.content, list):
        content = _each(message.content, source, target)
        if content is not message.content:
            update["content"] = content
    if isinstance(message, AIMessage):
        for key in ("tool_calls", "citations"):
            listed = getattr(message, key)
            if isinstance(listed, list):
                found = _each(listed, source, target)
                if found is not listed:
                    update[key] = found
        audio = _with_metadata(message.audio, source, target)
        if audio is not message.audio:
            update["audio"] = audio
    return message.model_copy(update=update) if update else message


def _each(values: list[Any], source: str, target: str) -> list[Any]:
    """``values`` (parts, calls or citations) each with its metadata renamed; ``values``
    itself when none moves."""
    found = [_with_metadata(value, source, target) for value in values]
    if all(new is old for new, old in zip(found, values, strict=True)):
        return values
    return found


def _with_metadata(value: Any, source: str, target: str) -> Any:
    """``value`` (a model with ``metadata``) with it renamed."""
    metadata = getattr(value, "metadata", None)
    if not isinstance(metadata, dict):
        return value  # none, or of an undeclared type: the writer refuses it where it is
    moved = _metadata(metadata, source, target)
    return value if moved is metadata else value.model_copy(update={"metadata": moved})


def _metadata(metadata: Any, source: str, target: str) -> Any:
    """``metadata`` with ``source``'s namespace renamed as ``target``'s, its own keys left
    behind under ``source``, when ``target`` has none there; ``metadata`` itself otherwise."""
    if not isinstance(metadata, dict) or target in metadata or source not in metadata:
        return metadata
    space = metadata[source]
    own = OWN_KEYS.get(source, ())
    left: dict[str, Any] = {}
    if isinstance(space, dict):
        left = {key: value for key, value in space.items() if key in own}
        space = {key: value for key, value in space.items() if key not in own}
        if not space:
            return metadata
    out = {key: value for key, value in metadata.items() if key != source}
    if left:
        out[source] = left
    out[target] = space
    return out
