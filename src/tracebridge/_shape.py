"""Where a message holds a value its model does not declare.

pydantic checks nothing in a message made with ``model_construct`` or changed with
``model_copy(update=...)``: such a message may hold ``content=5``, a dict where a part or a
call belongs, ``metadata=None``. Writers, the rules, the hash and rendering read the fields as
declared, so they fall on it with Python's own exception. ``unchecked_field`` is asked only
then (the usual path pays nothing): it names the first field, in message order and field
order, whose value is not of its declared type, as ``malformed_event`` at its path; ``None``
when every field holds what is declared, and the caller re-raises its exception (a fault of
ours is shown as it is, not blamed on the messages).

The checks are derived from the models' field annotations (``str``, ``int``, ``bool``,
``Literal``, ``X | None``, ``list[...]``, JSON objects and values, the part union, nested
models), strict on classes: a dict is no part and no call. An annotation of another kind
raises ``TypeError`` when the checks are built (a test builds them all), so a field added
to a model is covered or noticed. Past the types: a dict or JSON value that is not plain JSON
is ``unserializable_value`` (as ``check_json`` says), and an object whose fields are all of
their types but break its model's own rule (a custom call's input, an image with no source)
is ``malformed_event`` with pydantic's reason.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from functools import cache
from typing import Annotated, Any, Literal, NoReturn, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from typing_extensions import Never

from ._json import check_json
from .errors import TraceError, short_repr

__all__ = [
    "NOT_HASHED",
    "UNCHECKED",
    "register_messages",
    "unchecked_field",
    "unchecked_in",
    "unchecked_value",
    "unknown_kind",
]

UNCHECKED = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError)
"""What reading a field of an undeclared type raises (``RecursionError``: a value nested past
Python's depth, or one that holds itself, put in a dict after validation). ``TraceError``
derives from none of them, so an ``except UNCHECKED`` lets it pass unchanged."""

NOT_HASHED = frozenset({"metadata", "id"})
"""The fields of a message the transcript hash leaves out; of a part, a call, a citation or
an audio reference it leaves out ``metadata`` (a call's ``id`` is hashed)."""

_MESSAGES: tuple[type[BaseModel], ...] = ()
"""The message classes, registered by ``messages`` (this module imports none of the core's
modules that render or hash: they route their falls through it)."""

_NOT_CHECKED = (
    "(a message made with model_construct or model_copy(update=...) is not checked when made)"
)
_MISSING = object()

# (code, path inside the message, detail)
Fault = tuple[Literal["malformed_event", "unserializable_value"], str, str]
Check = Callable[[Any, str], "Fault | None"]


def unknown_kind(value: Never) -> NoReturn:
    """``assert_never`` for a dispatch over parts or messages, raising ``TypeError`` (one of
    ``UNCHECKED``): only a part or message whose ``type`` was changed unchecked
    (``model_copy(update={"type": ...})``) gets here, and the caller's fallback then names
    that field (``malformed_event``), where ``assert_never``'s ``AssertionError`` went past it.
    Type checkers still prove the dispatch exhaustive: ``value`` must be ``Never``."""
    raise TypeError(f"no branch for {type(value).__name__} of type "
                    f"{short_repr(getattr(value, 'type', None))}")


def register_messages(*classes: type[BaseModel]) -> None:
    """Name the message classes (``messages`` does, once, when it is imported)."""
    global _MESSAGES
    _MESSAGES = classes


def unchecked_field(
    messages: Sequence[Any],
    source: str | None = None,
    origin: Sequence[int] | None = None,
    *,
    hashed_only: bool = False,
) -> TraceError | None:
    """The ``TraceError`` for the first value of ``messages`` that is not of its declared
    type (a non-message item included), or None when there is none.

    ``origin[i]``, when given, is the position in the source trace of message ``i``.
    ``hashed_only``: only the fields the transcript hash covers are looked at (not
    ``NOT_HASHED``), so that a fault in a value the hash never reads is not blamed for one
    that stopped it.
    """
    for i, message in enumerate(messages):
        at = origin[i] if origin is not None else i
        if not isinstance(message, _MESSAGES):
            return TraceError(
                "malformed_event",
                f"expected a tracebridge message (human, ai, tool or system), got "
                f"{type(message).__name__}",
                index=at,
                path=f"messages[{at}]",
                source=source,
            )
        fault = _fields_fault(type(message), message, "", hashed_only)
        if fault is not None:
            code, where, detail = fault
            return TraceError(
                code, detail, index=at, path=f"messages[{at}]{where}", source=source
            )
    return None


def unchecked_in(message: Any) -> TraceError | None:
    """``unchecked_field`` of one message on its own (its ``text``, its ``pretty_repr()``):
    the path starts at its field (``content[0].text``), with no index."""
    refused = unchecked_field([message])
    if refused is None:
        return None
    path = (refused.path or "").removeprefix("messages[0]").removeprefix(".") or None
    return TraceError(refused.code, refused.detail, path=path)


def unchecked_value(value: Any, annotation: Any, path: str) -> TraceError | None:
    """The ``TraceError`` for the first value in ``value`` that is not of ``annotation``
    (``list[ToolCall]`` for a sample's ``reference_tool_calls``), at ``path`` and below; None
    when there is none."""
    fault = _checks_of(annotation)(value, f".{path}")
    if fault is None:
        return None
    code, where, detail = fault
    return TraceError(code, detail, path=where[1:])


@cache
def _checks_of(annotation: Any) -> Check:
    return _check_for(annotation, False)[0]


def _fields_fault(
    model: type[BaseModel], value: BaseModel, path: str, hashed_only: bool
) -> Fault | None:
    held = value.__dict__
    for name, check in _field_checks(model, hashed_only):
        inner = held.get(name, _MISSING)
        where = f"{path}.{name}"
        if inner is _MISSING:
            return ("malformed_event", where, f"{where[1:]} is missing {_NOT_CHECKED}")
        fault = check(inner, where)
        if fault is not None:
            return fault
    left_out = _left_out(model, hashed_only)
    try:  # the model's own rules over fields of the right types (left out: their defaults)
        model.model_validate({k: v for k, v in held.items() if k not in left_out})
    except ValidationError as error:
        first = error.errors()[0]
        where = path + "".join(
            f"[{step}]" if isinstance(step, int) else f".{step}" for step in first["loc"]
        )
        said = f"{where[1:]}: {first['msg']}" if where else first["msg"]
        return ("malformed_event", where, f"{said} {_NOT_CHECKED}")
    except TraceError as error:  # a field's own validator (an int JSON cannot carry)
        where = f"{path}.{error.path}" if error.path else path
        return (error.code, where, error.detail)  # type: ignore[return-value]
    return None


@cache
def _field_checks(model: type[BaseModel], hashed_only: bool) -> tuple[tuple[str, Check], ...]:
    """Each field of ``model`` with the check of its declared type (``hashed_only``: those
    the transcript hash covers)."""
    left_out = _left_out(model, hashed_only)
    return tuple(
        (name, _check_for(field.annotation, hashed_only)[0])
        for name, field in model.model_fields.items()
        if name not in left_out
    )


def _left_out(model: type[BaseModel], hashed_only: bool) -> frozenset[str]:
    """The fields of ``model`` that ``hashed_only`` passes over (the hash does not read)."""
    if not hashed_only:
        return frozenset()
    return NOT_HASHED if model in _MESSAGES else _NOT_HASHED_INSIDE


_NOT_HASHED_INSIDE = frozenset({"metadata"})


def _check_for(annotation: Any, hashed_only: bool) -> tuple[Check, str, Callable[[Any], bool]]:
    """The check of ``annotation`` (deep), what it is called in a detail, and whether a value
    is of its outer class (which member of a union is meant); ``hashed_only``: the models
    in it checked as ``_field_checks`` says."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _check_for(get_args(annotation)[0], hashed_only)
    if origin is Union or origin is types.UnionType:
        return _union(get_args(annotation), hashed_only)
    if origin is Literal:
        return _literal(get_args(annotation))
    if origin is list:
        return _list(get_args(annotation)[0], hashed_only)
    if origin is dict or annotation is dict:
        return _json(dict, "dict (a JSON object)")
    if annotation is Any:
        return _json(object, "a JSON value")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(annotation, hashed_only)
    if annotation in (str, bool, type(None)):
        return _plain(annotation, lambda value: isinstance(value, annotation))
    if annotation is int:  # a bool is an int to Python, not to the model
        return _plain(int, lambda value: isinstance(value, int) and not isinstance(value, bool))
    raise TypeError(f"no check for the annotation {annotation!r}: add one to _shape")


def _wrong(value: Any, path: str, expected: str) -> Fault:
    return (
        "malformed_event",
        path,
        f"{path[1:]} must be {expected}, got {type(value).__name__} {short_repr(value)} "
        f"{_NOT_CHECKED}",
    )


def _plain(kind: type, admits: Callable[[Any], bool]) -> tuple[Check, str, Callable[[Any], bool]]:
    said = "None" if kind is type(None) else kind.__name__

    def check(value: Any, path: str) -> Fault | None:
        return None if admits(value) else _wrong(value, path, said)

    return check, said, admits


def _literal(choices: tuple[Any, ...]) -> tuple[Check, str, Callable[[Any], bool]]:
    said = " | ".join(map(repr, choices))

    def admits(value: Any) -> bool:
        return isinstance(value, str) and value in choices

    def check(value: Any, path: str) -> Fault | None:
        return None if admits(value) else _wrong(value, path, said)

    return check, said, admits


def _json(kind: type, said: str) -> tuple[Check, str, Callable[[Any], bool]]:
    def admits(value: Any) -> bool:
        return isinstance(value, kind)

    def check(value: Any, path: str) -> Fault | None:
        if not admits(value):
            return _wrong(value, path, said)
        try:
            check_json(value, path[1:])
        except TraceError as error:
            return (error.code, f".{error.path}", error.detail)  # type: ignore[return-value]
        return None

    return check, said, admits


def _model(
    model: type[BaseModel], hashed_only: bool
) -> tuple[Check, str, Callable[[Any], bool]]:
    def admits(value: Any) -> bool:
        return isinstance(value, model)

    def check(value: Any, path: str) -> Fault | None:
        if not admits(value):
            return _wrong(value, path, model.__name__)
        return _fields_fault(model, value, path, hashed_only)

    return check, model.__name__, admits


def _list(item: Any, hashed_only: bool) -> tuple[Check, str, Callable[[Any], bool]]:
    check_item, item_said, _ = _check_for(item, hashed_only)
    said = f"list[{item_said}]"

    def admits(value: Any) -> bool:
        return isinstance(value, list)

    def check(value: Any, path: str) -> Fault | None:
        if not admits(value):
            return _wrong(value, path, said)
        for k, inner in enumerate(value):
            fault = check_item(inner, f"{path}[{k}]")
            if fault is not None:
                return fault
        return None

    return check, said, admits


def _union(
    members: tuple[Any, ...], hashed_only: bool
) -> tuple[Check, str, Callable[[Any], bool]]:
    built = [_check_for(member, hashed_only) for member in members]
    names = [name for _, name, _ in built]
    if all(isinstance(m, type) and issubclass(m, BaseModel) for m in members):
        said = "Part"  # the part union, named as messages.py names it
        expected = f"a part ({', '.join(names)})"
    else:
        said = expected = " | ".join(names)

    def admits(value: Any) -> bool:
        return any(member_admits(value) for _, _, member_admits in built)

    def check(value: Any, path: str) -> Fault | None:
        for member_check, _, member_admits in built:
            if member_admits(value):
                return member_check(value, path)
        return _wrong(value, path, expected)

    return check, said, admits
