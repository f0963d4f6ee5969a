"""``MultiTurnSample``: one validated conversation plus what an evaluation compares it with."""

from __future__ import annotations

import json
import weakref
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticSerializationError

from ._gc import pause_gc, resume_gc
from .errors import TraceError
from .hashing import transcript_hash
from .messages import Message, Metadata, Part, ToolCall
from .render import render
from .validation import validate

__all__ = ["MultiTurnSample"]

_MESSAGE: TypeAdapter[Any] = TypeAdapter(Message)
_TOOL_CALL: TypeAdapter[Any] = TypeAdapter(ToolCall)
_PART: TypeAdapter[Any] = TypeAdapter(Part)
_TAGS = ("human", "ai", "tool", "system")
_HASHES: dict[int, tuple[list[Any], str]] = {}
"""id(sample) -> (its messages list, their hash); an entry leaves when its sample does."""
_MESSAGE_FIELDS = ("messages", "user_input")


class MultiTurnSample(BaseModel):
    """A conversation that satisfies the conversation rules, with its references.

    Construction validates: a broken conversation raises ``TraceError`` (not pydantic's
    ``ValidationError``) with ``code``, ``index`` and ``path``.

    >>> from tracebridge import HumanMessage, AIMessage, MultiTurnSample
    >>> sample = MultiTurnSample(messages=[HumanMessage(content="hi"), AIMessage(content="hello")])
    >>> MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample
    True
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, use_attribute_docstrings=True
    )

    messages: list[Message] = Field(validation_alias=AliasChoices("messages", "user_input"))
    """The conversation, in order. ``user_input`` is accepted as an alias (Ragas)."""
    reference: str | None = None
    """The expected outcome, in words."""
    reference_tool_calls: list[ToolCall] | None = None
    """The tool calls the agent was expected to make."""
    reference_topics: list[str] | None = None
    """The topics the agent may talk about."""
    rubrics: dict[str, str] | None = None
    """Named rubrics for judge-based metrics (e.g. ``{"role": ...}``)."""
    metadata: Metadata = Field(default_factory=dict)
    """Anything else about the sample, as JSON."""

    @property
    def user_input(self) -> list[Message]:
        """The conversation (the Ragas name for ``messages``)."""
        return self.messages

    @model_validator(mode="wrap")
    @classmethod
    def _trace_errors_reach_the_caller(cls, data: Any, handler: Any) -> Any:
        paused = pause_gc()  # a long conversation makes many objects and no cycles
        try:
            return handler(data)
        except ValidationError as exc:
            problem = _first_message_error(exc)
            if problem is None:
                raise
            raise problem from None
        except TraceError as exc:
            raise _locate(exc, data) from None
        finally:
            resume_gc(paused)

    @model_validator(mode="after")
    def _follows_the_rules(self) -> MultiTurnSample:
        # runs after the wrap validator has resumed the collector: paused again, or its
        # first allocation would start a collection over every message just built
        paused = pause_gc()
        try:
            validate(self.messages)
        finally:
            resume_gc(paused)
        return self

    def pretty_repr(self) -> str:
        """The conversation as tracebridge renders it."""
        return render(self.messages)

    def model_dump_json(self, **options: Any) -> str:
        """pydantic's ``model_dump_json``, except for a string holding a lone surrogate (a
        file name decoded with ``surrogateescape``): pydantic's writer refuses one, so the
        sample is then written by Python's ``json``, which escapes it (``\\udcff``) and
        everything else that is not ASCII. ``model_validate_json`` reads either back."""
        try:
            return super().model_dump_json(**options)
        except PydanticSerializationError:
            indent = options.pop("indent", None)
            options.pop("ensure_ascii", None)
            data = self.model_dump(**options)  # Python's form: every string as it is
            return json.dumps(data, indent=indent,
                              separators=None if indent is not None else (",", ":"))

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, **options: Any
    ) -> MultiTurnSample:
        """pydantic's ``model_validate_json``, except that JSON text holding an escaped lone
        surrogate (which pydantic's reader refuses) is read by Python's ``json``."""
        try:
            return super().model_validate_json(json_data, **options)
        except ValidationError as error:
            first = error.errors()[0]
            if first["type"] != "json_invalid" or "surrogate" not in first["msg"]:
                raise
            try:
                data = json.loads(json_data)
            except ValueError:
                raise error from None
            return cls.model_validate(data, **options)

    def transcript_hash(self) -> str:
        """The hash of the conversation (see ``tracebridge.hashing``), computed once.

        A sample is frozen, so its hash is kept beside it (not in it: a private attribute
        would take part in ``==``) for as long as the sample lives. ``model_copy`` with new
        messages is a new sample with its own entry; one with the same messages list shares
        the conversation, so the hash stays right.
        """
        key = id(self)
        cached = _HASHES.get(key)
        if cached is not None and cached[0] is self.messages:
            return cached[1]
        value = transcript_hash(self.messages)
        if cached is None:
            weakref.finalize(self, _HASHES.pop, key, None)
        _HASHES[key] = (self.messages, value)
        return value


def _first_message_error(exc: ValidationError) -> TraceError | None:
    """Turn pydantic's complaint about one message into a TraceError, if it is about one."""
    for details in exc.errors():
        loc = details["loc"]
        if len(loc) >= 2 and loc[0] in _MESSAGE_FIELDS and isinstance(loc[1], int):
            return _message_error(details, loc[1])
    return None


def _message_error(details: ErrorDetails, index: int) -> TraceError:
    path = _path(details["loc"][2:], f"messages[{index}]")
    if details["type"] == "union_tag_invalid":
        found = details["input"].get("type") if isinstance(details["input"], dict) else None
        return TraceError(
            "unknown_role",
            f"unknown message type {found!r}; expected one of {', '.join(_TAGS)}",
            index=index,
            path=f"messages[{index}].type",
        )
    found = f"{type(details['input']).__name__} {_clip(details['input'])}"
    if path.endswith(".content") and details["type"] in ("string_type", "list_type"):
        expected = "content must be a string or a list of parts"
    else:
        expected = details["msg"]
    return TraceError(
        "malformed_event",
        f"{expected} (got {found})",
        index=index,
        path=path,
    )


def _path(loc: tuple[int | str, ...], root: str) -> str:
    path = root
    for position, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
        elif position == 0 and part in _TAGS:
            continue  # the discriminator branch pydantic names; not a field
        elif part.isidentifier() and part != "str":
            path += f".{part}"
        # anything else is a union-branch label such as 'list[tagged-union[...]]'
    return path


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _locate(exc: TraceError, data: Any) -> TraceError:
    """Find which message (and which tool call or part in it) raised ``exc``.

    A JSON check deep inside a message does not know where the message sits; on this
    error path only, the raw messages are validated one by one to find it.
    """
    messages = None
    if isinstance(data, dict):
        for key in _MESSAGE_FIELDS:
            if key in data:
                messages = data[key]
    if not isinstance(messages, list) or exc.index is not None:
        return exc
    for index, item in enumerate(messages):
        inner = _raised_by(_MESSAGE, item)
        if inner is not None:
            return inner.relocated(index=index, path=_nested_path(item, index, inner))
    return exc


def _nested_path(item: Any, index: int, inner: TraceError) -> str:
    root = f"messages[{index}]"
    if isinstance(item, dict):
        for field, adapter in (("tool_calls", _TOOL_CALL), ("content", _PART)):
            children = item.get(field)
            if isinstance(children, list):
                for position, child in enumerate(children):
                    found = _raised_by(adapter, child)
                    if found is not None:
                        return f"{root}.{field}[{position}].{found.path}"
    return f"{root}.{inner.path}"


def _raised_by(adapter: TypeAdapter[Any], item: Any) -> TraceError | None:
    try:
        adapter.validate_python(item)
    except TraceError as error:
        return error
    except ValidationError:
        return None  # another kind of problem; the TraceError is elsewhere
    return None
