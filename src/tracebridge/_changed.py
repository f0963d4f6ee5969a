"""Framework message objects whose fields were changed after they were made.

Pydantic models of LangChain, LlamaIndex and the OpenAI SDK do not validate assignments, so
an object can hold what no constructor of its class accepts (a number as a name, None as
content, a list where a dict belongs). When an adapter's reader falls on such an object with
an exception of its own (``FELL``), ``refusal`` asks the framework's own validation what is
wrong, and names the field: the object is refused as its framework would refuse it when built
with those values. A value the framework takes in a field of any type but pydantic cannot
write as JSON (an ``object()`` in a dict of ``Any``), or one the framework's own serializer
cannot write (a LlamaIndex media block holding a stream of bytes that are not UTF-8 text), is
``unserializable_value`` there. When
neither is found, the fault is the adapter's, and the caller lets the original exception show.

The object may also be a dict or list holding such objects (an event dict whose ``data``
holds ChatMessage objects): each is asked where it stands.
"""

from __future__ import annotations

import functools
import math
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from ._json import json_path
from .errors import TraceError, short_repr

__all__ = ["FELL", "drifted", "literal_values", "located", "missing_field", "refusal", "unmade"]

FELL = (TypeError, AttributeError, KeyError, IndexError, ValueError)
"""What a reader may raise on a value it did not expect (pydantic's ValidationError and
PydanticSerializationError are ValueErrors)."""


def refusal(
    obj: Any, at: str, framework: str, *, index: int | None = None, source: str | None = None
) -> TraceError | None:
    """``malformed_event`` at the first field of ``obj`` (a pydantic model, or a dict or
    list holding them) that its framework would refuse or store as another value, or that
    the object no longer holds (deleted from it after it was made); else
    ``unserializable_value`` at the first value pydantic cannot write as JSON, or at the
    first field the framework's own serializer falls on; else None.

    Nested models are asked first, each by its own class, so the path goes down to the
    field that is wrong (``at.blocks[1].text``).
    """
    # a field missing first: the framework's own validators may read it, and fall
    missing = missing_field(obj, at, framework, index=index, source=source)
    if missing is not None:
        return missing
    found = unmade(obj, at, framework, index=index, source=source)
    if found is not None:
        return found
    unserializable = _unserializable(obj, at, index, source)
    if unserializable is not None:
        return unserializable
    # a field whose own serializer (the framework's) cannot write it as JSON: a stream
    # of bytes that are not UTF-8 text, which a LlamaIndex media block writes as text
    unwritten = _unwritten(obj, at)
    if unwritten is None:
        return None
    model, path, exc = unwritten
    detail = (f"{framework} cannot write this {type(model).__name__} as JSON: "
              f"{type(exc).__name__}: {exc}")
    return TraceError("unserializable_value", detail, index=index, path=path, source=source)


def unmade(
    obj: Any, at: str, framework: str, *, index: int | None = None, source: str | None = None
) -> TraceError | None:
    """``malformed_event`` at the first field of ``obj`` that its framework would refuse or
    store as another value (what ``refusal`` finds first); None when there is none. For a
    reader that took the object as it stands and must know it is one the framework makes.
    A value nested past Python's depth (which no JSON writer in Python takes either) is
    ``unserializable_value`` at ``at``."""
    try:
        found = _fault(obj, at)
    except RecursionError:
        return TraceError("unserializable_value", "a value nested past Python's depth (or one "
                          "that holds itself): it has no JSON form here", index=index, path=at,
                          source=source)
    if found is None:
        return None
    model, path, said = found
    detail = (f"this {type(model).__name__} holds what {framework} does not make (was a "
              f"field changed after it was made?): {said}")
    return TraceError("malformed_event", detail, index=index, path=path, source=source)


def _fault(value: Any, at: str) -> tuple[Any, str, str] | None:
    if isinstance(value, BaseModel):
        return _model_fault(value, at)
    if type(value) is list or type(value) is tuple:
        for k, item in enumerate(value):
            found = _fault(item, f"{at}[{k}]")
            if found is not None:
                return found
    elif type(value) is dict:
        for key, item in value.items():
            if type(key) is str:
                found = _fault(item, json_path(at, key))
                if found is not None:
                    return found
    return None


def _model_fault(model: BaseModel, at: str) -> tuple[Any, str, str] | None:
    values = dict(model.__dict__, **(model.__pydantic_extra__ or {}))
    for key, value in values.items():
        found = _fault(value, f"{at}.{key}")
        if found is not None:
            return found
    try:
        validated = type(model).model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        return model, located(at, values, first["loc"]), first["msg"]
    except FELL as exc:  # a validator's own fall
        return model, at, f"{type(exc).__name__}: {exc}"
    stored = dict(validated.__dict__, **(validated.__pydantic_extra__ or {}))
    for key, value in values.items():
        if key in stored and not _same(value, stored[key]):
            # accepted only by turning a value into another (a number id into text, say)
            return model, f"{at}.{key}", (
                f"{key} is {short_repr(value)}, which it would have stored as "
                f"{short_repr(stored[key])}"
            )
    return None


def missing_field(
    obj: Any, at: str, framework: str, *, index: int | None = None, source: str | None = None
) -> TraceError | None:
    """``malformed_event`` at the first field a model in ``obj`` (models, lists, tuples and
    dicts walked) no longer holds (deleted from it after it was made); None when every
    model holds all of its class's fields."""
    missing = _missing_field(obj, at)
    if missing is None:
        return None
    model, path = missing
    return TraceError(
        "malformed_event",
        f"the {type(model).__name__} has no value for this field, which {framework} "
        "always gives it (it was removed from the object after it was made)",
        index=index, path=path, source=source,
    )


def _missing_field(value: Any, at: str) -> tuple[BaseModel, str] | None:
    """The first model in ``value`` (models, lists, tuples and dicts walked) that lacks one
    of its class's fields, and that field's path; None when every model holds them all."""
    if isinstance(value, BaseModel):
        fields = value.__dict__
        for name in type(value).model_fields:
            if name not in fields:
                return value, f"{at}.{name}"
        items: Any = fields.items()
    elif type(value) is dict:
        items = ((key, item) for key, item in value.items() if type(key) is str)
    elif type(value) is list or type(value) is tuple:
        return next(
            (found for k, item in enumerate(value)
             if (found := _missing_field(item, f"{at}[{k}]")) is not None),
            None,
        )
    else:
        return None
    for key, item in items:
        found = _missing_field(item, json_path(at, key))
        if found is not None:
            return found
    return None


def _unserializable(
    value: Any, at: str, index: int | None, source: str | None
) -> TraceError | None:
    """``unserializable_value`` at the first value in a field that takes anything (a dict of
    ``Any``) which pydantic cannot write as JSON; None when there is none."""
    if isinstance(value, BaseModel):
        items: Any = dict(value.__dict__, **(value.__pydantic_extra__ or {})).items()
    elif type(value) is dict:
        items = value.items()
    elif type(value) is list or type(value) is tuple:
        items = enumerate(value)
    else:
        try:
            to_json(value)
        except PydanticSerializationError:
            return TraceError(
                "unserializable_value",
                f"expected a JSON value, got {type(value).__name__} {short_repr(value)}",
                index=index,
                path=at,
                source=source,
            )
        return None
    for key, item in items:
        if type(key) is str or type(key) is int:
            found = _unserializable(item, json_path(at, key), index, source)
            if found is not None:
                return found
    return None


def _unwritten(value: Any, at: str) -> tuple[Any, str, Exception] | None:
    """The innermost model under ``value`` that its serializer falls on, the path of the
    field that makes it fall, and what it raised."""
    if type(value) is list or type(value) is tuple:
        for k, item in enumerate(value):
            found = _unwritten(item, f"{at}[{k}]")
            if found is not None:
                return found
        return None
    if type(value) is dict:
        for key, item in value.items():
            found = _unwritten(item, json_path(at, key)) if type(key) is str else None
            if found is not None:
                return found
        return None
    if not isinstance(value, BaseModel):
        return None
    try:
        value.model_dump(mode="json")
    except FELL as exc:
        for key, item in value.__dict__.items():
            found = _unwritten(item, f"{at}.{key}")
            if found is not None:
                return found
        for key in value.__dict__:
            try:
                value.model_dump(mode="json", include={key})
            except FELL as inner:
                return value, f"{at}.{key}", inner
        return value, at, exc
    return None


def located(at: str, values: dict[str, Any], loc: tuple[Any, ...]) -> str:
    """The path of a validation error's location, followed as far as it goes into the
    values (a union's member names, which are in the location too, are not)."""
    if not loc or type(loc[0]) is not str:
        return at
    path = f"{at}.{loc[0]}"
    current: Any = values.get(loc[0])
    for step in loc[1:]:
        if type(step) is int and type(current) in (list, tuple) and 0 <= step < len(current):
            path, current = f"{path}[{step}]", current[step]
        elif type(step) is str and type(current) is dict and step in current:
            path, current = f"{path}.{step}", current[step]
        elif type(step) is str and isinstance(current, BaseModel) and step in current.__dict__:
            path, current = f"{path}.{step}", current.__dict__[step]
        else:
            break
    return path


def _same(left: Any, right: Any) -> bool:
    """Equal in value and type all the way down (a model: the same object, or equal fields)."""
    if left is right:
        return True
    if type(left) is not type(right):
        return False
    if isinstance(left, BaseModel):
        return _same(left.__dict__, right.__dict__)
    if type(left) is dict:
        return left.keys() == right.keys() and all(_same(v, right[k]) for k, v in left.items())
    if type(left) is list or type(left) is tuple:
        return len(left) == len(right) and all(map(_same, left, right))
    if type(left) is float and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


_KIND_FIELDS = ("role", "type")
"""The fields that tell what an object is (and so how a reader reads it)."""


def drifted(obj: Any) -> bool:
    """Whether a field telling what ``obj`` (a pydantic model) is — its ``role`` or ``type``
    — holds a value its class does not allow (``role="user"`` set on an assistant-only
    class): read as it stands, such an object would pass for another kind without any
    error. A field its class does not declare as a ``Literal`` (or an optional one) is not
    looked at."""
    fields = obj.__dict__
    for field in _KIND_FIELDS:
        allowed = _literal_values(obj.__class__, field)
        if allowed is not None and field in fields:
            value = fields[field]
            if not (type(value) is str or value is None) or value not in allowed:
                return True
    return False


def literal_values(annotation: Any) -> frozenset[Any] | None:
    """The values a ``Literal`` annotation allows, None among them when it is optional
    (``Optional[Literal["message"]]``, as the SDK declares the ``type`` of an input
    message); None when it is neither."""
    if get_origin(annotation) is Literal:
        return frozenset(get_args(annotation))
    if get_origin(annotation) not in (Union, types.UnionType):
        return None
    values: set[Any] = set()
    for member in get_args(annotation):
        if member is type(None):
            values.add(None)
        elif get_origin(member) is Literal:
            values.update(get_args(member))
        else:
            return None
    return frozenset(values) if values - {None} else None


@functools.cache
def _literal_values(cls: Any, field: str) -> frozenset[str | None] | None:
    """The strings a ``Literal`` annotation of ``cls.field`` allows (and None, when it is
    optional); None when it is not a ``Literal`` of strings."""
    info = getattr(cls, "model_fields", {}).get(field)
    values = None if info is None else literal_values(info.annotation)
    if values is None or not all(type(v) is str or v is None for v in values):
        return None
    return values
