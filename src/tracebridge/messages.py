"""The typed conversation model: tool calls, content parts and the four message kinds.

Every model is a frozen, strict pydantic v2 model with ``extra="forbid"``: its constructor
refuses a value of another type (``is_error="off"``, ``start_index=True``) rather than
converting it. Parts and messages are discriminated on their ``type`` tag. ``metadata`` (and
``ToolCall.args``) hold JSON values only; anything else raises
``TraceError("unserializable_value")`` naming the field path. A mapping of another class given
for one (an ``OrderedDict``) is checked as a dict and kept as a plain dict copy; inside it, as
in any JSON value, an object must be a plain dict. An int field (a citation's indexes, an
audio reply's ``expires_at``) takes only what JSON text carries (at most 4,300 digits), as
metadata does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ._conversation import messages_of
from ._json import _INT_DIGITS, _short_int, json_copy_at
from ._json_model import JsonTextModel
from ._shape import UNCHECKED, register_messages, unchecked_in
from .errors import TraceError
from .render import render_message

__all__ = [
    "AIMessage",
    "AnyMessage",
    "AudioPart",
    "AudioReference",
    "Citation",
    "Content",
    "FilePart",
    "HumanMessage",
    "ImagePart",
    "JsonObject",
    "Message",
    "OpaquePart",
    "Part",
    "ReasoningPart",
    "RefusalPart",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolMessage",
    "messages_of",
]


def _json_object_field(name: str) -> BeforeValidator:
    def check(value: Any) -> Any:
        # Only JSON objects get checked here; a non-mapping falls through to pydantic's own
        # type error so the message stays the usual "Input should be a valid dictionary".
        # Taken as a copy: a frozen message does not change when its source's dicts do.
        if type(value) is dict:
            return json_copy_at(value, name) if value else value
        if isinstance(value, Mapping):
            # Rare: an OrderedDict, a defaultdict, a MappingProxyType. pydantic would make a
            # dict of it unchecked; it is checked as a dict is and kept as a plain dict copy.
            return json_copy_at(dict(value), name)
        return value

    return BeforeValidator(check)


def _json_int(value: int | None, name: str | None) -> int | None:
    """``unserializable_value`` for an int JSON text cannot carry (as in metadata)."""
    if value is not None and not _short_int(value):
        raise TraceError(
            "unserializable_value",
            f"an integer of more than {_INT_DIGITS:,} digits: JSON readers refuse it",
            path=name,
        )
    return value


def _json_value_field(name: str) -> BeforeValidator:
    def check(value: Any) -> Any:
        return json_copy_at(value, name)

    return BeforeValidator(check)


_JSON_OBJECT_SCHEMA = WithJsonSchema({"type": "object", "additionalProperties": True})

JsonObject = Annotated[dict[str, Any], _JSON_OBJECT_SCHEMA]
"""A JSON object (the schema; checking happens in each field's validator)."""

Metadata = Annotated[dict[str, Any], _json_object_field("metadata"), _JSON_OBJECT_SCHEMA]


def _type_is_required(schema: dict[str, Any]) -> None:
    """List the ``type`` tag as required in a model's JSON Schema: it has a default for
    Python's constructors, but a reader tells messages and parts apart by it."""
    if "type" in schema.get("properties", {}):
        required = schema.setdefault("required", [])
        if "type" not in required:
            required.insert(0, "type")


_CONFIG = ConfigDict(
    frozen=True,
    extra="forbid",
    strict=True,  # a constructor refuses a mistyped value, as model_validate does
    use_attribute_docstrings=True,
    json_schema_extra=_type_is_required,
)
# Mutable defaults are given as default_factory: a literal {} default is deep-copied on
# every validation, which costs more than validating the rest of a message.


class ToolCall(JsonTextModel):
    """One tool call made by the agent."""

    model_config = _CONFIG

    name: str
    """The tool's name as the agent wrote it."""
    args: Annotated[dict[str, Any], _json_object_field("args"), _JSON_OBJECT_SCHEMA] = Field(
        default_factory=dict
    )
    """The parsed arguments; ``{}`` when ``invalid_args`` is set."""
    id: str | None = None
    """The provider's call id, used to pair the call with its result."""
    invalid_args: str | None = None
    """The raw argument text when it is not a JSON object (malformed JSON, a list, ...)."""
    kind: Literal["function", "custom"] = "function"
    """``custom``: a free-text call (OpenAI custom tools); ``args`` is ``{"input": <text>}``."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields an adapter keeps verbatim, under the adapter's name."""

    @field_validator("invalid_args")
    @classmethod
    def _invalid_args_means_no_args(cls, value: str | None, info: ValidationInfo) -> str | None:
        # A field validator runs only when invalid_args is given, so valid calls pay nothing.
        if value is not None and info.data.get("args"):
            raise ValueError("args must be {} when invalid_args is set (arguments did not parse)")
        return value

    @field_validator("kind")
    @classmethod
    def _custom_input_is_text(cls, value: str, info: ValidationInfo) -> str:
        if value == "custom":
            args = info.data.get("args")
            text = args.get("input") if isinstance(args, dict) and len(args) == 1 else None
            if type(text) is not str:
                raise ValueError("a custom call's args must be {'input': <text>}")
            if info.data.get("invalid_args") is not None:
                raise ValueError("a custom call's input is text: it has no invalid_args")
        return value


class TextPart(JsonTextModel):
    """Plain text."""

    model_config = _CONFIG

    type: Literal["text"] = "text"
    text: str
    """The text."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


class _SourcedPart(JsonTextModel):
    """A part that points at bytes: by URL or inline base64 data."""

    model_config = _CONFIG

    @model_validator(mode="after")
    def _has_a_source(self) -> _SourcedPart:
        sources = ("url", "data", "file_id")
        if all(getattr(self, field, None) is None for field in sources):
            present = [field for field in sources if field in type(self).model_fields]
            name = self.__class__.__name__
            article = "an" if name[0] in "AEIOU" else "a"
            raise ValueError(f"{article} {name} needs one of: {', '.join(present)}")
        return self


class ImagePart(_SourcedPart):
    """An image, by URL (possibly a data: URL) or inline base64 data."""

    type: Literal["image"] = "image"
    url: str | None = None
    """Where the image is (http(s) or data: URL), exactly as given."""
    data: str | None = None
    """Base64 bytes, exactly as given."""
    mime_type: str | None = None
    """``image/png`` and so on, when the source says it."""
    detail: str | None = None
    """The resolution the model should see it at, when given (any string: the OpenAI Chat and
    Responses writers take ``auto``, ``low``, ``high``, ``original``, or one read from them)."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


class AudioPart(_SourcedPart):
    """A sound clip, by URL or inline base64 data."""

    type: Literal["audio"] = "audio"
    url: str | None = None
    """Where the clip is, exactly as given."""
    data: str | None = None
    """Base64 bytes, exactly as given."""
    mime_type: str | None = None
    """``audio/wav`` and so on; a provider's format name maps through ``tracebridge.media``."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


class FilePart(_SourcedPart):
    """A document or other file, by URL, inline base64 data or provider file id."""

    type: Literal["file"] = "file"
    url: str | None = None
    """Where the file is, exactly as given."""
    data: str | None = None
    """Base64 bytes (or a data: URL), exactly as given."""
    file_id: str | None = None
    """A provider's id for an uploaded file."""
    mime_type: str | None = None
    """``application/pdf`` and so on, when the source says it."""
    filename: str | None = None
    """The file's name, when the source says it."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


class ReasoningPart(JsonTextModel):
    """The model's visible reasoning (thinking) text."""

    model_config = _CONFIG

    type: Literal["reasoning"] = "reasoning"
    text: str
    """The reasoning text."""
    id: str | None = None
    """The id the provider gave the reasoning (an OpenAI Responses reasoning item's
    ``rs_...``, which the API needs to take it back). Provenance, as a message's id is: the
    transcript hash leaves it out, and a format with no place for it leaves it out."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim (a signature, ...)."""


class RefusalPart(JsonTextModel):
    """The model declined to answer; the text says why (OpenAI ``refusal``)."""

    model_config = _CONFIG

    type: Literal["refusal"] = "refusal"
    text: str
    """The refusal as the model wrote it."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


class OpaquePart(JsonTextModel):
    """A provider block kept verbatim, not interpreted."""

    model_config = _CONFIG

    type: Literal["opaque"] = "opaque"
    kind: str
    """The block's own type name in its source (``refusal``, ``citation``, ...)."""
    value: Annotated[Any, _json_value_field("value"), WithJsonSchema({})]
    """The block exactly as the source had it."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""


Part = Annotated[
    TextPart | ImagePart | AudioPart | FilePart | ReasoningPart | RefusalPart | OpaquePart,
    Field(discriminator="type"),
]
"""One content part, discriminated on ``type``."""

Content = str | list[Part]
"""A plain string when the source had one; a list of parts when it had parts."""


class Citation(JsonTextModel):
    """A source the agent's reply cites (OpenAI ``url_citation``, LangChain ``citation``)."""

    model_config = _CONFIG

    url: str | None = None
    """Where the cited source is."""
    title: str | None = None
    """The source's title."""
    start_index: int | None = None
    """Where the cited span starts in the reply's text (characters)."""
    end_index: int | None = None
    """Where the cited span ends in the reply's text (characters, exclusive)."""
    cited_text: str | None = None
    """The words of the source that are cited, when given."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""

    @field_validator("start_index", "end_index")
    @classmethod
    def _index_fits_json(cls, value: int | None, info: ValidationInfo) -> int | None:
        # runs only when an index is given: most citations pay nothing
        return _json_int(value, info.field_name)


class AudioReference(JsonTextModel):
    """A spoken reply the provider keeps, referred to by id (OpenAI ``message.audio``)."""

    model_config = _CONFIG

    id: str
    """The provider's id for the audio; sending it back lets the model hear its own reply."""
    transcript: str | None = None
    """What the audio says, when the provider gave it."""
    data: str | None = None
    """The audio as base64, when the provider gave it."""
    expires_at: int | None = None
    """When the provider forgets the audio (Unix seconds), when given."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields kept verbatim."""

    @field_validator("expires_at")
    @classmethod
    def _time_fits_json(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _json_int(value, info.field_name)


def _text_of(content: Content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


class _MessageBase(JsonTextModel):
    model_config = _CONFIG

    @property
    def text(self) -> str:
        """The content as text: the string, or the text parts joined by newlines."""
        try:
            content: Content = self.content  # type: ignore[attr-defined]
            return _text_of(content)
        except UNCHECKED:  # a message made unchecked (model_construct), or a fault of ours
            refused = unchecked_in(self)
            if refused is None:
                raise
            raise refused from None

    def pretty_repr(self) -> str:
        """The message as tracebridge renders it for people and judges."""
        return render_message(self)  # type: ignore[arg-type]


class HumanMessage(_MessageBase):
    """A message from the user."""

    type: Literal["human"] = "human"
    content: Content
    """What the user sent."""
    name: str | None = None
    """The user's name, when the source gives one."""
    id: str | None = None
    """The source's message id."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields the adapter keeps verbatim, under its own name."""


class AIMessage(_MessageBase):
    """A message from the agent: text, tool calls, or both."""

    type: Literal["ai"] = "ai"
    content: Content = ""
    """What the agent said."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tool calls the agent made, in order."""
    name: str | None = None
    """The agent's name (multi-agent systems)."""
    citations: list[Citation] = Field(default_factory=list)
    """The sources the reply cites, in order (OpenAI ``annotations``)."""
    audio: AudioReference | None = None
    """The spoken reply the provider keeps, when the agent answered with audio."""
    id: str | None = None
    """The source's message id."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields the adapter keeps verbatim, under its own name."""


class ToolMessage(_MessageBase):
    """The result of one tool call."""

    type: Literal["tool"] = "tool"
    content: Content
    """What the tool returned."""
    tool_call_id: str | None = None
    """The id of the call this answers; None pairs by position."""
    name: str | None = None
    """The tool's name."""
    is_error: bool = False
    """True when the tool failed and this content is the error."""
    id: str | None = None
    """The source's message id."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields the adapter keeps verbatim, under its own name."""


class SystemMessage(_MessageBase):
    """Instructions to the agent (system or developer prompt)."""

    type: Literal["system"] = "system"
    content: Content
    """The instructions."""
    role: Literal["system", "developer"] = "system"
    """``developer`` for OpenAI's developer role (instructions that outrank the user's)."""
    name: str | None = None
    """A name, when the source gives one."""
    id: str | None = None
    """The source's message id."""
    metadata: Metadata = Field(default_factory=dict)
    """Source fields the adapter keeps verbatim, under its own name."""


Message = Annotated[
    HumanMessage | AIMessage | ToolMessage | SystemMessage,
    Field(discriminator="type"),
]
"""Any message, discriminated on ``type``."""

AnyMessage = HumanMessage | AIMessage | ToolMessage | SystemMessage
"""The plain union of the four message classes (``Message`` is the same, annotated)."""

register_messages(HumanMessage, AIMessage, ToolMessage, SystemMessage)


def checked_messages(conversation: Any, source: str | None = None) -> list[AnyMessage]:
    """``messages_of``, with each item a tracebridge message (``malformed_event`` at the first
    that is not, as ``validate`` says it), for writers that read every message's fields."""
    messages = messages_of(conversation, source)
    for i, message in enumerate(messages):
        if not isinstance(message, (HumanMessage, AIMessage, ToolMessage, SystemMessage)):
            raise TraceError(
                "malformed_event",
                f"expected a tracebridge message (human, ai, tool or system), got "
                f"{type(message).__name__}",
                index=i,
                path=f"messages[{i}]",
                source=source,
            )
    return messages
