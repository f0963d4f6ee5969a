"""``MultiTurnSample``: one validated conversation plus what an evaluation compares it with."""

from __future__ import annotations

import operator
import re
import weakref
from typing import Any, get_args

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import ErrorDetails

from ._conversation import register_sample
from ._gc import pause_gc, resume_gc
from ._json import json_path
from ._json import surrogate_key_in as surrogate_key_in  # for the JSON writers that ask
from ._json_model import JsonTextModel
from .errors import TraceError, short_repr
from .hashing import transcript_hash
from .messages import (
    AudioReference,
    Citation,
    Message,
    Metadata,
    OpaquePart,
    Part,
    ToolCall,
)
from .render import render
from .validation import validate

__all__ = ["MultiTurnSample"]

_MESSAGE: TypeAdapter[Any] = TypeAdapter(Message)
_TOOL_CALL: TypeAdapter[Any] = TypeAdapter(ToolCall)
_PART: TypeAdapter[Any] = TypeAdapter(Part)
_CITATION: TypeAdapter[Any] = TypeAdapter(Citation)
_AUDIO: TypeAdapter[Any] = TypeAdapter(AudioReference)
_TAGS = ("human", "ai", "tool", "system")
_PART_TAGS: tuple[str, ...] = tuple(
    kind.model_fields["type"].default for kind in get_args(get_args(Part)[0])
)
_HASHES: dict[int, tuple[list[Any], str]] = {}
"""id(sample) -> (a copy of its messages list, their hash); an entry leaves when its sample
does."""
_MESSAGE_FIELDS = ("messages", "user_input")
ALLOW_PENDING: dict[str, bool] = {"allow_pending": True}
"""The validation context under which a sample's last block may hold unanswered calls (the
``tracebridge`` reader's ``allow_pending=True``); only this very dict does it."""


class MultiTurnSample(JsonTextModel):
    """A conversation that satisfies the conversation rules, with its references.

    Construction validates: a broken conversation raises ``TraceError`` (not pydantic's
    ``ValidationError``) with ``code``, ``index`` and ``path``.

    >>> from tracebridge import HumanMessage, AIMessage, MultiTurnSample
    >>> sample = MultiTurnSample(messages=[HumanMessage(content="hi"), AIMessage(content="hello")])
    >>> MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample
    True
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,  # the constructor refuses a mistyped value, as model_validate does
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    messages: list[Message] = Field(
        validation_alias=AliasChoices("messages", "user_input"),
        json_schema_extra={"minItems": 1},  # the schema's; an empty list is empty_conversation
    )
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
    def _trace_errors_reach_the_caller(
        cls, data: Any, handler: Any, info: ValidationInfo
    ) -> Any:
        paused = pause_gc()  # a long conversation makes many objects and no cycles
        try:
            try:
                sample = handler(data)
            except ValidationError as exc:
                problem = _first_message_error(exc)
                if problem is None:
                    raise
                raise problem from None
            except TraceError as exc:
                located, site = _located(exc, data)
                earlier = _earlier_fault(data, site, handler)
                raise (located if earlier is None else earlier) from None
            # the rules, still paused: the first allocation after the collector is back
            # would start a collection over every message just built
            validate(sample.messages, allow_pending=info.context is ALLOW_PENDING)
            return sample
        finally:
            resume_gc(paused)

    @classmethod
    def model_validate(
        cls, obj: Any, *, strict: bool | None = True, **options: Any
    ) -> MultiTurnSample:
        """pydantic's ``model_validate``, strict by default: a mistyped value (``"is_error":
        "off"``, ``"start_index": "5"``, ``3.0`` for an int, bytes for text) is
        ``malformed_event`` at its path, not turned into another value. An int is still a
        float, and a dict a model."""
        return super().model_validate(obj, strict=strict, **options)

    def pretty_repr(self) -> str:
        """The conversation as tracebridge renders it."""
        return render(self.messages)

    def transcript_hash(self) -> str:
        """The hash of the conversation (see ``tracebridge.hashing``), computed once.

        A sample is frozen, so its hash is kept beside it (not in it: a private attribute
        would take part in ``==``) for as long as the sample lives, with the message objects
        it was computed from: when the list holds other ones (a message replaced, added or
        removed), the hash is computed again. A message is frozen too; one changed in place
        all the same (a list inside it edited) is not seen: make a new message
        (``model_copy``) instead.
        """
        key = id(self)
        cached = _HASHES.get(key)
        messages = self.messages
        if cached is not None and _same_objects(cached[0], messages):
            return cached[1]
        value = transcript_hash(messages)
        if cached is None:
            weakref.finalize(self, _HASHES.pop, key, None)
        _HASHES[key] = (list(messages), value)
        return value


register_sample(MultiTurnSample)


def _same_objects(kept: list[Any], messages: list[Any]) -> bool:
    """Whether both lists hold the very same objects, in order (``==`` would ask each
    message, and ``{"a": 1}`` equals ``{"a": True}``, which hashes otherwise)."""
    return len(kept) == len(messages) and all(map(operator.is_, kept, messages))


_NO_DATA: Any = object()


def _first_message_error(exc: ValidationError, data: Any = _NO_DATA) -> TraceError | None:
    """Turn pydantic's complaint about one message, or about a field beside the messages
    (``reference_tool_calls[0].name``), into a TraceError, if it is about one. ``data``: the
    sample's raw data when ``exc`` came from a cut of it (``_earlier_fault``), whose own
    values the message quotes."""
    errors = exc.errors()
    for position, details in enumerate(errors):
        loc = details["loc"]
        if len(loc) >= 2 and loc[0] in _MESSAGE_FIELDS and isinstance(loc[1], int):
            if loc[-1] == "str" and isinstance(details["input"], (list, tuple)):
                # content is str | list[Part]: pydantic tells the str branch first, but for a
                # list the list branch's error says which part is wrong, and why
                details = _list_branch(errors[position + 1:], loc[:-1]) or details
            if details["input"] is _STAND_IN:
                return None  # nothing before the value that raised (see _earlier_fault)
            if data is not _NO_DATA:
                details = {**details, "input": _found_at(data, details["loc"])}
            return _message_error(details, loc[1])
        if loc and loc[0] not in _MESSAGE_FIELDS and loc[0] in MultiTurnSample.model_fields:
            if details["input"] is _STAND_IN:
                return None
            if data is not _NO_DATA:
                details = {**details, "input": _found_at(data, details["loc"])}
            # a validator's own text, as in a message (pydantic adds "Value error, ")
            expected = (
                "keys must be strings"
                if _is_key(loc)
                else details["msg"].removeprefix("Value error, ")
            )
            return TraceError(
                "malformed_event",
                f"{expected} (got {type(details['input']).__name__} "
                f"{_clip(details['input'])})",
                path=loc_path(loc),
            )
    return None


def _list_branch(errors: list[ErrorDetails], content: tuple[int | str, ...]) -> ErrorDetails | None:
    """The first of ``errors`` inside the list branch of the content at ``content``."""
    for details in errors:
        loc = details["loc"]
        if loc[: len(content)] == content and len(loc) > len(content):
            branch = loc[len(content)]
            if isinstance(branch, str) and branch.startswith("list["):
                return details
    return None


def _message_error(details: ErrorDetails, index: int) -> TraceError:
    root = f"messages[{index}]"
    path = _path(details["loc"][2:], root)
    if details["type"] == "union_tag_invalid":
        given = details["input"]  # a dict, or a message or part whose type was changed
        found = given.get("type") if isinstance(given, dict) else getattr(given, "type", None)
        if path == root:
            return TraceError(
                "unknown_role",
                f"unknown message type {found!r}; expected one of {', '.join(_TAGS)}",
                index=index,
                path=f"{root}.type",
            )
        return TraceError(  # a content part's: a part type is no role
            "malformed_event",
            f"unknown part type {found!r}; expected one of {', '.join(_PART_TAGS)}",
            index=index,
            path=f"{path}.type",
        )
    found = f"{type(details['input']).__name__} {_clip(details['input'])}"
    if path.endswith(".content") and details["type"] in ("string_type", "list_type"):
        expected = "content must be a string or a list of parts"
    else:
        expected = details["msg"].removeprefix("Value error, ")
    return TraceError(
        "malformed_event",
        f"{expected} (got {found})",
        index=index,
        path=path,
    )


def _found_at(data: Any, loc: tuple[int | str, ...]) -> Any:
    """What ``data`` (a sample's raw data) holds at pydantic's ``loc``, the union-branch
    labels passed over as ``_path`` passes them; the last value there is when a step is
    missing (pydantic's input for a missing field is the object that lacks it)."""
    found = data
    part_at = False
    for position, step in enumerate(loc):
        if isinstance(step, int):
            if type(found) is not list or not 0 <= step < len(found):
                return found
            found = found[step]
            before = loc[position - 1] if position else None
            part_at = isinstance(before, str) and before.startswith("list[tagged-union[")
            continue
        branch = (position == 2 and loc[0] in _MESSAGE_FIELDS and step in _TAGS) or (
            part_at and step in _PART_TAGS)
        part_at = False
        if branch or not step.isidentifier() or step == "str":
            continue  # a union-branch label, not a field
        if type(found) is not dict or step not in found:
            return found
        found = found[step]
    return found


def _path(loc: tuple[int | str, ...], root: str) -> str:
    path = root
    part_at = False  # the step before was a content part's index: its type's name may follow
    for position, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
            before = loc[position - 1] if position else None
            part_at = isinstance(before, str) and before.startswith("list[tagged-union[")
            continue
        if (position == 0 and part in _TAGS) or (part_at and part in _PART_TAGS):
            pass  # the discriminator branch pydantic names; not a field
        elif part.isidentifier() and part != "str":
            path += f".{part}"
        # anything else is a union-branch label such as 'list[tagged-union[...]]'
        part_at = False
    return path


def loc_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's location of a sample field as a path: ``reference_tool_calls[0].name``,
    ``rubrics.tone``, ``rubrics['a b']``; ``sample`` for the sample itself; ``rubrics`` for
    a key of it that is not a string."""
    if _is_key(loc):
        loc = loc[:-2]
    path = ""
    for part in loc:
        path = json_path(path, part)
    return path or "sample"


def _is_key(loc: tuple[int | str, ...]) -> bool:
    """Whether pydantic's ``loc`` is of a dict's key (``("rubrics", 1, "[key]")``: the key
    itself, then pydantic's mark), not of the value at a key named ``[key]``."""
    return len(loc) >= 3 and loc[-1] == "[key]"


def _clip(value: Any) -> str:
    return short_repr(value, 80)


Site = tuple[str | int, ...]
"""Where in a sample's raw data a value raised: the keys and list positions down to the field
that holds it (``("messages", 2, "tool_calls", 0, "args")``)."""


def locate(exc: TraceError, data: Any) -> TraceError:
    """Find which message (and which tool call, part, citation or audio reply in it), or which
    reference tool call, raised ``exc``.

    A JSON check deep inside a message does not know where the message sits; on this
    error path only, the raw messages are validated one by one to find it.
    """
    return _located(exc, data)[0]


def _located(exc: TraceError, data: Any) -> tuple[TraceError, Site | None]:
    """``locate``, and the site of the value that raised (None when it is not known)."""
    if exc.index is not None or not isinstance(data, dict):
        return exc, None
    key: str | None = None
    messages = None
    for name in _MESSAGE_FIELDS:
        if name in data:
            key, messages = name, data[name]
    if isinstance(messages, list) and key is not None:
        for index, item in enumerate(messages):
            inner = _raised_by(_MESSAGE, item)
            if inner is not None:
                path, steps = _nested(item, index, inner)
                return inner.relocated(index=index, path=path), _site(key, index, *steps)
    calls = data.get("reference_tool_calls")
    if isinstance(calls, list):
        for position, call in enumerate(calls):
            inner = _raised_by(_TOOL_CALL, call)
            if inner is not None:
                path = f"reference_tool_calls[{position}].{inner.path}"
                site = _site("reference_tool_calls", position, _field_of(inner))
                return inner.relocated(path=path), site
    return exc, _site(_field_of(exc))  # a field of the sample's own (its metadata)


def _site(*steps: str | int | None) -> Site | None:
    site = tuple(step for step in steps if step is not None)
    return site if len(site) == len(steps) else None


def _field_of(error: TraceError) -> str | None:
    """The field a model's own error names first (``args`` of ``args.when``)."""
    match = _FIELD.match(error.path or "")
    return match.group() if match else None


_FIELD = re.compile(r"[A-Za-z_]\w*")

_NESTED = (("content", _PART), ("tool_calls", _TOOL_CALL), ("citations", _CITATION))
"""The fields of a message that hold models, in the order pydantic validates them (the
fields' order: content, tool_calls, citations, then audio)."""


def _nested(item: Any, index: int, inner: TraceError) -> tuple[str, tuple[str | int | None, ...]]:
    """The path of what raised ``inner`` in the message ``item``, and its site in it."""
    root = f"messages[{index}]"
    if isinstance(item, dict):
        for field, adapter in _NESTED:
            children = item.get(field)
            if isinstance(children, list):
                for position, child in enumerate(children):
                    found = _raised_by(adapter, child)
                    if found is not None and _same_fault(found, inner):
                        return (f"{root}.{field}[{position}].{found.path}",
                                (field, position, _field_of(found)))
        found = _raised_by(_AUDIO, item.get("audio"))
        if found is not None and _same_fault(found, inner):
            return f"{root}.audio.{found.path}", ("audio", _field_of(found))
    return f"{root}.{inner.path}", (_field_of(inner),)


def _same_fault(found: TraceError, raised: TraceError) -> bool:
    """Whether ``found`` (a field's own error) is the one the message raised: the path is
    told with the detail it belongs to, never another fault's."""
    return found.code == raised.code and found.detail == raised.detail


def _raised_by(adapter: TypeAdapter[Any], item: Any) -> TraceError | None:
    try:
        adapter.validate_python(item)
    except TraceError as error:
        return error
    except ValidationError:
        return None  # another kind of problem; the TraceError is elsewhere
    return None


class _StandIn:
    """What ``_earlier_fault`` puts where a value raised: a value no field takes."""

    def __repr__(self) -> str:
        return "<the value that raised>"


_STAND_IN = _StandIn()


class _NoCut(Exception):
    """The data around a site is not plain dicts and lists (a model object, say)."""


def _earlier_fault(data: Any, site: Site | None, handler: Any) -> TraceError | None:
    """A fault pydantic met before the value at ``site`` raised its ``TraceError``, or None.

    pydantic records a mistyped field and goes on; a ``TraceError`` (a value that is not
    JSON) stops it at once, before the messages are told apart, so the fault it met first
    would be lost. On this error path only, the data is validated again (as the caller
    asked: strict or not) up to the site, where a stand-in no field takes is put and what
    follows is left out: the first error then is an earlier fault, or the stand-in's.
    """
    if site is None:
        return None
    try:
        cut = _cut(data, site, MultiTurnSample)
    except _NoCut:
        return None
    try:
        handler(cut)
    except ValidationError as exc:
        return _first_message_error(exc, data)
    except TraceError:  # not expected: what comes before the site raised none the first time
        return None
    return None


_MESSAGE_KINDS: dict[Any, type[BaseModel]] = {
    kind.model_fields["type"].default: kind for kind in get_args(get_args(Message)[0])
}
_PART_KINDS: dict[Any, type[BaseModel]] = {
    kind.model_fields["type"].default: kind for kind in get_args(get_args(Part)[0])
}
_HOLDS: dict[str, type[BaseModel] | dict[Any, type[BaseModel]]] = {
    "messages": _MESSAGE_KINDS, "user_input": _MESSAGE_KINDS, "content": _PART_KINDS,
    "tool_calls": ToolCall, "reference_tool_calls": ToolCall, "citations": Citation,
    "audio": AudioReference,
}
"""The model each field holds (in a list or alone); by its ``type`` tag for a message or
a part."""


def _model_of(field: str, value: Any) -> type[BaseModel]:
    held = _HOLDS.get(field)
    if isinstance(held, dict):
        held = held.get(value.get("type")) if type(value) is dict else None
    if held is None:
        raise _NoCut
    return held


def _cut(value: Any, site: Site, model: type[BaseModel]) -> dict[str, Any]:
    """``value`` (a model's raw dict) with the fields declared before ``site``'s first, that
    one cut further (or the stand-in, at the end of the site), and nothing after."""
    if type(value) is not dict:
        raise _NoCut
    field, rest = site[0], site[1:]
    if not isinstance(field, str):
        raise _NoCut
    out: dict[str, Any] = {}
    for name in _keys(model, value):
        if name == field:
            break
        if name in value:
            out[name] = value[name]
    else:
        raise _NoCut
    if not rest:
        if model is OpaquePart and field == "value":
            # any value is taken here, or refused with a TraceError: the stand-in goes to
            # the field right after it instead
            out["value"], out["metadata"] = None, _STAND_IN
        else:
            out[field] = _STAND_IN
        return out
    child = value.get(field)
    position = rest[0]
    if isinstance(position, int):
        if type(child) is not list or not 0 <= position < len(child):
            raise _NoCut
        item = child[position]
        out[field] = [*child[:position], _cut(item, rest[1:], _model_of(field, item))]
    else:
        out[field] = _cut(child, rest, _model_of(field, child))
    return out


def _keys(model: type[BaseModel], value: dict[str, Any]) -> list[str]:
    """The keys of ``model``'s fields in ``value``, in their declared order (a sample's
    messages under the name they were given; both names given are not cut)."""
    if model is not MultiTurnSample:
        return list(model.model_fields)
    given = [name for name in _MESSAGE_FIELDS if name in value]
    if len(given) > 1:
        raise _NoCut
    messages = given[0] if given else "messages"
    return [messages if name == "messages" else name for name in model.model_fields]

