"""The messages of a conversation, whatever holds them (imports only the error type: every
module may use it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .errors import TraceError

if TYPE_CHECKING:
    from .messages import AnyMessage

__all__ = ["messages_of", "register_sample", "sample_extras", "sample_refused"]


def messages_of(conversation: Any, source: str | None = None) -> list[AnyMessage]:
    """The messages of a ``MultiTurnSample`` (its ``messages``) or of a sequence of messages;
    ``malformed_event`` at ``messages`` for anything else (the items are not looked at).

    ``source`` is the writer that asks (every writer names itself; ``render`` and
    ``transcript_hash`` read a sample's conversation and name none): a writer writes the
    conversation alone, so a sample that holds more (a ``reference``, ``rubrics``, ...) is
    ``not_representable`` at the first such field, as ``convert`` refuses it.
    """
    messages = getattr(conversation, "messages", conversation)
    if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Iterable):
        raise TraceError(
            "malformed_event",
            f"expected a list of tracebridge messages or a MultiTurnSample, got "
            f"{type(messages).__name__}",
            path="messages",
            source=source,
        )
    if source is not None and messages is not conversation:
        _whole_sample_refused(conversation, source)
    return list(messages)


def sample_refused(fields: list[str], writer: str, instead: str) -> TraceError:
    """``not_representable`` for a sample whose ``fields`` (``sample_extras``) a format of
    messages alone has no place for; ``instead`` says how to write the conversation alone."""
    held = f"{', '.join(fields)} {'has' if len(fields) == 1 else 'have'}"
    return TraceError(
        "not_representable",
        f"the sample's {held} no place in {writer}: convert to tracebridge to keep "
        f"{'it' if len(fields) == 1 else 'them'}, or {instead} alone",
        path=fields[0],
        source=writer,
    )


def sample_extras(sample: Any) -> list[str]:
    """The fields of a ``MultiTurnSample`` beside its messages that hold something (not
    ``None``, not ``{}``), in their declared order: what a format of messages alone has no
    place for."""
    return [
        name for name in type(sample).model_fields
        if name != "messages" and (value := getattr(sample, name)) is not None and value != {}
    ]


_SAMPLE: type | None = None
"""``MultiTurnSample``, named by its module when imported (which imports this one)."""


def register_sample(kind: type) -> None:
    """Name the sample class (``sample`` does, once, when it is imported)."""
    global _SAMPLE
    _SAMPLE = kind


def _whole_sample_refused(conversation: Any, writer: str) -> None:
    if _SAMPLE is None or not isinstance(conversation, _SAMPLE):
        return
    fields = sample_extras(conversation)
    if fields:
        raise sample_refused(fields, writer, "pass sample.messages to write the conversation")
