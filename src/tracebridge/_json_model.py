"""The JSON side of the typed models: ``==`` as JSON, the JSON writer that keeps every
string (a lone surrogate included) and refuses what JSON cannot hold, and the reader that
refuses a repeated key (``JsonTextModel``); and ``same_record``, the readers' comparison of two
records of one message."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError
from typing_extensions import Self

from ._json import (
    _INT_DIGITS,
    _TOO_DEEP,
    RepeatedKey,
    _key_path,
    _same_kinds,
    _short_int,
    joined_surrogates_at,
    json_path,
    read_json,
    same_json,
    surrogate_key_in,
)
from .errors import TraceError, short_repr

__all__ = ["JsonTextModel", "same_record", "unwritable_in"]

def same_record(a: Any, b: Any) -> bool:
    """``same_json`` through the models ``a`` holds (a message, its parts and calls), field
    by field: ``1``, ``1.0`` and ``True`` are three values, ``-0.0`` and ``0.0`` one. For a
    reader asking whether two records of one message agree (model ``==`` counts the zero
    signs two, as the hash does)."""
    if a is b:
        return True
    if isinstance(a, BaseModel):
        if a.__class__ is not b.__class__:
            return False
        held, others = a.__dict__, b.__dict__
        return all(
            same_record(held.get(name), others.get(name)) for name in type(a).__pydantic_fields__
        )
    if _holds_models(a):
        return type(b) is list and len(a) == len(b) and all(map(same_record, a, b))
    return same_json(a, b)


def _holds_models(value: Any) -> bool:
    """Whether ``value`` is a list of models (a field's parts, calls or messages)."""
    return type(value) is list and any(isinstance(item, BaseModel) for item in value)


class JsonTextModel(BaseModel):
    """pydantic's JSON methods, keeping every string a model holds (see ``model_dump_json``)
    and refusing a repeated key (see ``model_validate_json``); ``==`` as JSON (see
    ``__eq__``)."""

    def __eq__(self, other: object) -> bool:
        """pydantic's ``==`` (the same class, equal fields), with every value inside of one
        JSON type too, as ``same_json(..., zero_signs=True)`` says: ``1``, ``1.0`` and
        ``True`` are three values, ``0.0`` and ``-0.0`` two, as they are to the transcript
        hash, rendering and the metrics (Python's ``==`` takes them for one). The models a
        field holds (parts, calls, messages) compare by their own ``==``.

        A model is equal to itself, and a value to itself, whatever it holds (a copy shares
        its values). Two models that hold, at one place, two values nested past Python's
        depth or holding themselves (put in after validation) cannot be compared:
        ``unserializable_value`` at its path, never a ``RecursionError``."""
        if self is other:
            return True
        try:
            return self._equal_as_json(other)
        except (RecursionError, _NotComparable):  # (a model held compared first: told again)
            raise _not_comparable(self, other) from None

    def _equal_as_json(self, other: object) -> bool:
        equal = super().__eq__(other)
        if equal is not True:
            return equal
        held, others = self.__dict__, other.__dict__
        for name in type(self).__pydantic_fields__:
            value, given = held.get(name), others.get(name)
            if value is given:
                continue
            kind = value.__class__
            if kind is not given.__class__:
                return False
            # a scalar of one class is one value, and so is an empty dict or list
            if (((kind is dict or kind is list) and value) or kind is float) and not (
                _same_kinds(value, given)
            ):
                return False
        return True

    def model_dump_json(self, **options: Any) -> str:
        """pydantic's ``model_dump_json``, except for a string holding a lone surrogate (a
        file name decoded with ``surrogateescape``): pydantic's writer refuses one as a value
        and writes one in a dict key as U+FFFD, so the model is then written by Python's
        ``json``, which escapes it (``\\udcff``) and everything else that is not ASCII.
        ``model_validate_json`` reads either back. A lone high surrogate right before a lone
        low one is ``unserializable_value``: JSON has no spelling for the two that does not
        read back as one other character."""
        try:
            text = super().model_dump_json(**options)
        except PydanticSerializationError:
            return self._json_by_python(options)
        # pydantic writes a lone surrogate in a dict *key* as U+FFFD (no error): only then is
        # there a U+FFFD (or, ensure_ascii, its escape) in the text to look closer at
        if ("\ufffd" in text or (options.get("ensure_ascii") and "\\ufffd" in text)) and (
            surrogate_key_in(self.model_dump())
        ):
            return self._json_by_python(options)
        return text

    def _json_by_python(self, options: dict[str, Any]) -> str:
        """The model, as ``options`` dump it, written by Python's ``json``. What it cannot
        write (an object, NaN or an infinity, a value that holds itself or is nested past
        Python's depth: put there after validation) is ``unserializable_value`` at its path,
        as the joined surrogates are; what it writes (a tuple, an int key) is written."""
        indent = options.pop("indent", None)
        options.pop("ensure_ascii", None)
        dumped: dict[str, Any] | None = None
        try:
            dumped = self.model_dump(**options)  # Python's form: every string as it is
            _refuse_joined_surrogates(dumped)
            return json.dumps(dumped, indent=indent, allow_nan=False,
                              separators=None if indent is not None else (",", ":"))
        except (ValueError, TypeError, RecursionError):
            refused = unwritable_in(self, dumped)
            if refused is None:
                raise
            raise refused from None

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *, strict: bool | None = True, **options: Any
    ) -> Self:
        """pydantic's ``model_validate_json``, strict by default as ``model_validate`` is,
        except that an object holding a key twice is refused (a ``ValidationError`` of type
        ``json_invalid``: which value was meant is not known, where pydantic's reader keeps
        the last). The text is read by Python's ``json`` (which reads an escaped lone
        surrogate, ``"\\ud800"``, that pydantic's reader refuses) and validated as
        ``model_validate`` does; text that is not JSON to it, and input that is not text
        (``None``, a number, a ``memoryview``), are pydantic's to read or refuse."""
        if not isinstance(json_data, (str, bytes, bytearray)):
            return super().model_validate_json(json_data, strict=strict, **options)
        try:
            text = json_data if isinstance(json_data, str) else bytes(json_data).decode("utf-8")
            data = read_json(text)
        except RepeatedKey as exc:
            raise ValidationError.from_exception_data(cls.__name__, [
                {"type": "json_invalid", "loc": (), "input": json_data,
                 "ctx": {"error": str(exc)}},
            ]) from None
        except (ValueError, RecursionError):
            return super().model_validate_json(json_data, strict=strict, **options)
        return cls.model_validate(data, strict=strict, **options)


class _NotComparable(TraceError):
    """``==`` met two values it cannot compare (``JsonTextModel.__eq__``)."""


def _not_comparable(model: BaseModel, other: object) -> TraceError:
    """``unserializable_value`` at the first value of ``model`` whose comparison with the one
    at its place in ``other`` goes past Python's depth; its message's index in a sample's."""
    path = _uncomparable_at(model, other, "")
    return _NotComparable(
        "unserializable_value",
        "a value nested past Python's depth, or one that holds itself (a dict or list inside "
        "its own contents), at the same place in both: == cannot compare them",
        index=_message_index(path),
        path=path,
    )


def _uncomparable_at(value: Any, other: Any, path: str) -> str | None:
    """The path of the first value in ``value`` (a model, its fields through the models they
    hold) that cannot be compared with its place in ``other``, told as ``check_json`` tells a
    value too deep: at the item of the field that holds it; None when there is none."""
    if isinstance(value, BaseModel) and isinstance(other, BaseModel):
        held, others = value.__dict__, other.__dict__
        places = [(held.get(name), others.get(name), json_path(path, name))
                  for name in type(value).__pydantic_fields__]
    elif _holds_models(value) and type(other) is list:
        places = _paired(value, other, path)
    else:
        return _uncomparable_item(value, other, path)
    return next((found for inner, given, where in places
                 if (found := _uncomparable_at(inner, given, where)) is not None), None)


def _uncomparable_item(value: Any, other: Any, path: str) -> str | None:
    """``_uncomparable_at`` of a field's value: the item that cannot be compared, else
    the field."""
    if _compares(value, other):
        return None
    if type(value) is dict and type(other) is dict:
        items = [(item, other[key], json_path(path, key))
                 for key, item in value.items() if type(key) is str and key in other]
    elif type(value) is list and type(other) is list:
        items = _paired(value, other, path)
    else:
        return path
    return next((where for item, given, where in items if not _compares(item, given)), path)


def _paired(value: list[Any], other: list[Any], path: str) -> list[tuple[Any, Any, str]]:
    """Each item of ``value`` with the one at its place in ``other``, and its path."""
    return [(item, other[k], json_path(path, k)) for k, item in enumerate(value[: len(other)])]


def _compares(value: Any, other: Any) -> bool:
    """Whether ``same_json(value, other, zero_signs=True)`` has an answer within Python's
    depth."""
    try:
        same_json(value, other, zero_signs=True)
    except (RecursionError, _NotComparable):
        return False
    return True


def unwritable_in(
    model: BaseModel, dumped: dict[str, Any] | None, path: str = ""
) -> TraceError | None:
    """``unserializable_value`` at the first value of ``dumped`` (``model``'s
    ``model_dump()``; None when the dump itself failed: the model's own fields, all of them)
    that Python's ``json`` cannot write, each told from its own field as ``check_json`` tells
    it; None when there is none. What a dict edited after validation, or a model made with
    ``model_construct``, may hold. ``path``: the model's own (``messages[1]``); the error
    has the index of the sample's message the path starts at."""
    try:
        _refuse_unwritable_fields(model, dumped, path)
    except TraceError as error:
        return TraceError(error.code, error.detail, index=_message_index(error.path),
                          path=error.path)
    return None


def _refuse_unwritable_fields(model: BaseModel, dumped: dict[str, Any] | None, path: str) -> None:
    held = model.__dict__
    for name in type(model).__pydantic_fields__ if dumped is None else dumped:
        value = held.get(name)
        written = value if dumped is None else dumped[name]
        _refuse_unwritable_field(value, written, dumped is None, json_path(path, name))


def _refuse_unwritable_field(value: Any, written: Any, own: bool, path: str) -> None:
    """``_refuse_unwritable`` of a field's value as dumped (``written``; ``own``: the value
    itself), through the models it holds (a part, the calls, the messages)."""
    if isinstance(value, BaseModel) and (own or type(written) is dict):
        _refuse_unwritable_fields(value, None if own else written, path)
    elif _holds_models(value) and (own or (type(written) is list and len(written) == len(value))):
        for position, item in enumerate(value):
            inner = item if own else written[position]
            _refuse_unwritable_field(item, inner, own, json_path(path, position))
    else:
        _refuse_unwritable(written, path)


def _refuse_unwritable(value: Any, path: str) -> None:
    """Raise where Python's ``json`` (``allow_nan=False``) cannot write ``value``, a field's."""
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_unwritable_key(key, path)
            _refuse_unwritable_item(item, _key_path(path, key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            _refuse_unwritable_item(item, json_path(path, position))
    else:
        _refuse_unwritable_at(value, path)


def _refuse_unwritable_item(item: Any, path: str) -> None:
    """``_refuse_unwritable_at`` of an item of a field's value: one nested past Python's
    depth, or holding itself, is told at the item (as ``check_json`` tells one)."""
    try:
        _refuse_unwritable_at(item, path)
    except RecursionError:
        raise TraceError("unserializable_value", _TOO_DEEP, path=path) from None


def _refuse_unwritable_at(value: Any, path: str) -> None:
    """What ``json.dumps`` refuses, in its order: an object, NaN or an infinity, an int of
    more than 4,300 digits, a key of no JSON form (a tuple, say); a tuple is a list to it,
    and a key that is a number, a bool or None is written as text."""
    if isinstance(value, str) or value is None or value is True or value is False:
        return
    if isinstance(value, int):
        if not _short_int(value):
            raise TraceError(
                "unserializable_value",
                f"an integer of more than {_INT_DIGITS:,} digits: JSON readers refuse it",
                path=path,
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise TraceError("unserializable_value", f"{value!r} is not a finite number",
                             path=path)
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            _refuse_unwritable_at(item, json_path(path, position))
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_unwritable_key(key, path)
            _refuse_unwritable_at(item, _key_path(path, key))
    else:
        raise TraceError(
            "unserializable_value",
            f"expected a JSON value (dict, list, str, int, float, bool, None), "
            f"got {type(value).__name__} {short_repr(value)}",
            path=path,
        )


def _refuse_unwritable_key(key: Any, path: str) -> None:
    """Raise at the dict (``path``) when ``json.dumps`` cannot write ``key``."""
    if isinstance(key, str) or key is None or (
        isinstance(key, float) and math.isfinite(key)
    ) or (isinstance(key, int) and _short_int(key)):
        return
    raise TraceError(
        "unserializable_value",
        f"object keys must be strings, numbers, booleans or null, got {type(key).__name__} "
        f"{short_repr(key)}",
        path=path,
    )


def _refuse_joined_surrogates(data: dict[str, Any]) -> None:
    """``unserializable_value`` at the first string of a model's dump whose JSON would read
    back as another string (``_JOINED_SURROGATES``); its message's index in a sample's."""
    path = joined_surrogates_at(data, "")
    if path is None:
        return
    raise TraceError(
        "unserializable_value",
        "a lone high surrogate right before a lone low one: JSON spells the two as one "
        "other character, which is what would be read back",
        index=_message_index(path),
        path=path,
    )


def _message_index(path: str | None) -> int | None:
    """The index of the sample's message ``path`` starts at, or None."""
    found = _MESSAGE_INDEX.match(path or "")
    return int(found.group(1)) if found else None


_MESSAGE_INDEX = re.compile(r"messages\[(\d+)\]")
"""A sample's message at the start of a path (a sample's dump is the only one with
``messages``)."""
