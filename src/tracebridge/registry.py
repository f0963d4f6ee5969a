"""Find adapters by name, detect a trace's format, and convert between formats.

Adapters live in ``tracebridge.adapters.<name>``; the core never imports one until it is
asked for. Each adapter module has ``NAME``, ``to_messages``, ``from_messages`` and
``detect`` (a cheap shape test that never imports a framework package).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._conversation import sample_extras, sample_refused
from ._drop import check_flag
from ._sibling import renamed
from .errors import FormatError, TraceError
from .messages import Message

if TYPE_CHECKING:
    from .sample import MultiTurnSample

__all__ = [
    "ADAPTER_NAMES",
    "FORMATS",
    "SAME_ITEMS",
    "Adapter",
    "carried",
    "convert",
    "detect_format",
    "get_adapter",
]

ADAPTER_NAMES: tuple[str, ...] = (
    "openai_chat",
    "swarm",
    "langchain",
    "llama_index",
    "galtea",
    "openai_responses",
    "openai_agents",
    "otel",
)
"""The adapters in ``tracebridge.adapters``; a test checks this matches the folder."""

NATIVE = "tracebridge"
FORMATS: tuple[str, ...] = (NATIVE, *ADAPTER_NAMES)
"""Every format ``convert`` knows: tracebridge's own JSON, then the adapters."""


SAME_ITEMS: Mapping[str, str] = {
    "openai_responses": "openai_agents",
    "openai_agents": "openai_responses",
    "openai_chat": "swarm",
    "swarm": "openai_chat",
}
"""An adapter -> the adapter that reads and writes the same items with the same reader, each
keeping what it reads under its own namespace: converting between them carries the metadata
over (``carried``). A Swarm history is a list of Chat Completions messages, read by the same
reader with other keys for the typed names (``sender``, ``tool_name``)."""


class Adapter(Protocol):
    """What every adapter module provides."""

    NAME: str
    to_messages: Callable[..., list[Message]]
    from_messages: Callable[..., Any]
    detect: Callable[[Any], bool]


def get_adapter(name: str) -> Adapter:
    """The adapter module for ``name``; ``FormatError`` names the known ones otherwise."""
    if name == NATIVE:
        module: ModuleType = importlib.import_module("tracebridge.native")
    elif name in ADAPTER_NAMES:
        module = importlib.import_module(f"tracebridge.adapters.{name}")
    else:
        raise FormatError(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}")
    return cast(Adapter, module)


def detect_format(trace: Any, *, candidates: Sequence[str] = FORMATS) -> str:
    """The format whose shape ``trace`` has; ``FormatError`` when none or several match.

    Several shapes may match one trace (a plain user/assistant list is both an OpenAI chat
    history and Galtea role turns). Then every matching reader reads it, and when they all give
    the same typed messages, metadata included, the first of them in ``candidates`` is the
    answer: the choice cannot change what is read. When they all refuse it with the same code
    at the same message, the first one's ``TraceError`` is raised: the trace is invalid
    whichever it is. Otherwise the error names each reading.
    """
    return _detect(trace, candidates)[0]


def _detect(trace: Any, candidates: Sequence[str]) -> tuple[str, list[Message] | None]:
    """The format, and the messages it read when telling several shapes apart needed that."""
    matches = [name for name in candidates if get_adapter(name).detect(trace)]
    if len(matches) == 1:
        return matches[0], None
    if not matches:
        raise FormatError(
            f"cannot tell the format of this {type(trace).__name__}: it matches none of "
            f"{', '.join(candidates)}; pass source=<format>"
        )
    readings: dict[str, list[Message] | TraceError] = {}
    for name in matches:
        try:
            readings[name] = get_adapter(name).to_messages(trace)
        except TraceError as error:
            readings[name] = error
    first = readings[matches[0]]
    if not isinstance(first, TraceError) and all(
        reading == first for reading in readings.values()
    ):
        return matches[0], first
    if isinstance(first, TraceError) and all(
        isinstance(r, TraceError) and _where(r) == _where(first) for r in readings.values()
    ):
        raise first  # broken the same way whichever format it is: that is the answer
    raise FormatError(
        f"ambiguous trace: it has the shape of {' and '.join(matches)}, and they read it "
        f"differently ({'; '.join(_reading(name, r) for name, r in readings.items())}); "
        f"pass source= one of them"
    )


def _where(error: TraceError) -> tuple[str, int | None]:
    """What a refusal says is wrong, and in which message: each format names the place in
    its own words (``messages[0].metadata`` in one, ``conversation_turns[0].metadata.a``
    in another), so the path is left out."""
    return (error.code, error.index)


def _reading(name: str, reading: list[Message] | TraceError) -> str:
    if isinstance(reading, TraceError):
        return f"{name} refuses it: {reading.code} at {reading.path}"
    kept = sorted({key for message in reading for key in message.metadata})
    said = f", keeping metadata[{', '.join(map(repr, kept))}]" if kept else ""
    return f"{name} reads {len(reading)} message(s){said}"


def convert(
    trace: Any,
    *,
    source: str = "auto",
    target: str,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    messages_only: bool = False,
) -> Any:
    """Convert ``trace`` from ``source`` to ``target`` through the typed model.

    ``source="auto"`` detects the format from the trace's shape. The options go to the
    source's ``to_messages`` and the target's ``from_messages``.

    A ``MultiTurnSample`` (the object, or its JSON object) read as ``tracebridge`` is
    converted as ``tracebridge convert`` converts it: to ``tracebridge`` it stays a sample,
    its ``reference``, ``reference_tool_calls``, ``reference_topics``, ``rubrics`` and
    ``metadata`` kept (a dict: the sample's ``model_dump()``); any other format has no
    place for them, so a sample that sets one is refused (``not_representable`` at the first,
    ``reference`` say) unless ``messages_only=True`` accepts converting its conversation
    alone. A list of messages converts as a list.

    >>> from tracebridge import convert
    >>> convert([{"type": "human", "content": "hi"}], source="tracebridge", target="tracebridge")
    [{'type': 'human', 'content': 'hi', 'name': None, 'id': None, 'metadata': {}}]
    """
    check_flag("messages_only", messages_only)
    writer = get_adapter(target)
    messages = None
    if source == "auto":
        source, messages = _detect(trace, FORMATS)
    if source == NATIVE and (isinstance(trace, dict) or _is_sample(trace)):
        from .native import to_sample

        sample = to_sample(trace, **(source_options or {}))
        return _sample_written(sample, target, writer, messages_only, target_options or {})
    if messages is None or source_options:
        messages = get_adapter(source).to_messages(trace, **(source_options or {}))
    return writer.from_messages(carried(messages, source, target), **(target_options or {}))


def carried(messages: Sequence[Message], source: str, target: str) -> list[Message]:
    """``messages`` read by ``source``, with the metadata ``target``'s writer is to read.

    An adapter's ``from_messages`` reads only its own metadata namespace. Two adapters that
    write the same items (``SAME_ITEMS``: ``openai_responses`` and ``openai_agents``;
    ``openai_chat`` and ``swarm``) read them into the same messages, each keeping what it does
    not map under its own name: converting from one to the other renames the source's
    namespace as the target's wherever the target's is absent (on each message, part, call,
    citation and audio reference), so that the target writes the items back as they were read.
    Keys only the source has a place for (the Agents SDK's ``run_items``) stay behind under the
    source's name; a kept key the target maps to a typed field (an assistant's ``name`` kept by
    Swarm, whose names are in ``sender``) is refused by the target's writer as any such key is.
    Between any other formats, ``messages`` as they are. ``convert`` and ``tracebridge
    convert`` call it between reading and writing.

    >>> from tracebridge import AIMessage
    >>> reply = AIMessage(content="hi", id="msg_1", metadata={"openai_agents": {"run_items": [],
    ...                                                       "fields": {"status": "completed"}}})
    >>> carried([reply], "openai_agents", "openai_responses")[0].metadata
    {'openai_agents': {'run_items': []}, 'openai_responses': {'fields': {'status': 'completed'}}}
    >>> carried([reply], "openai_agents", "langchain")[0] is reply
    True
    """
    if SAME_ITEMS.get(source) != target:
        return list(messages)
    # the walk over every holder of metadata is the same for both pairs; of the keys there,
    # only the Agents SDK's run_items are one adapter's alone
    return renamed(messages, source, target)


def _is_sample(trace: Any) -> bool:
    from .sample import MultiTurnSample

    return isinstance(trace, MultiTurnSample)


def _sample_written(
    sample: MultiTurnSample, target: str, writer: Adapter, messages_only: bool,
    options: dict[str, Any],
) -> Any:
    """What ``convert`` writes of a sample: the whole sample to ``tracebridge``; elsewhere its
    messages, when it sets nothing else or ``messages_only`` accepts leaving that out."""
    if target == NATIVE:  # a sample stays a sample, references and all
        kept = sample.model_dump(exclude={"messages"})
        return {"messages": writer.from_messages(sample, **options), **kept}
    fields = sample_extras(sample)
    if fields and not messages_only:
        raise sample_refused(fields, target, "pass messages_only=True to convert the conversation")
    return writer.from_messages(sample.messages, **options)
