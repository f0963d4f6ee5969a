"""tracebridge: agent conversation traces in one validated, typed model, and back again."""

from __future__ import annotations

from .errors import TraceError
from .hashing import transcript_hash
from .messages import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from .registry import convert
from .render import render
from .sample import MultiTurnSample
from .validation import check, validate

__all__ = [
    "AIMessage",
    "AudioPart",
    "AudioReference",
    "Citation",
    "FilePart",
    "HumanMessage",
    "ImagePart",
    "Message",
    "MultiTurnSample",
    "OpaquePart",
    "ReasoningPart",
    "RefusalPart",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolMessage",
    "TraceError",
    "check",
    "convert",
    "render",
    "transcript_hash",
    "validate",
]

__version__ = "0.1.0"
