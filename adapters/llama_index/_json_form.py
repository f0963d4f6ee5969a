"""What LlamaIndex's JSON dump of an object writes as another value, found before it is read.

``model_dump(mode="json")`` writes a NaN or an infinity as null and a dict key that is not a
string as its text (``{1: "a", "1": "b"}`` becomes ``{"1": "b"}``: one value is lost). In
the fields that take any value (``_ANY_VALUE``) it writes what is not JSON as some JSON too:
bytes as their text, a tuple or a set as a list, a date as its ISO text, a Decimal, a UUID
or an enum as its value's text. A ChatMessage object is read through that dump, so such a
value would be read as null, under another key or as another value without a word, where
the same message as a dict (and the same event through ``dump_events``) is refused:
``unserializable_value`` at the value (for a key, at the dict that holds it, as
``tracebridge._json.check_json`` says it of a dict).

Only what pydantic's serializer writes is asked (the Python-mode dump, ``model_dump()``, whose
keys and nesting are the JSON dump's, and which keeps such values as they are), and only for
objects whose dump was not written out by hand: a hand-written dump keeps a value as it is,
and the dict road checks it.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from tracebridge import TraceError
from tracebridge._json import is_plain_json, json_path
from tracebridge.errors import short_repr

from ._blocks import NAME, Llama

_ANY_VALUE = frozenset({"additional_kwargs", "tool_kwargs", "additional_information"})
"""LlamaIndex's fields that take any value (a ChatMessage's, a ToolCallBlock's, a
ToolSelection's or a tool event's, a ThinkingBlock's): what is in them must be JSON."""

_SCALARS = frozenset({str, int, bool, type(None)})
"""What the dump writes as it is (an int too long for JSON is the JSON check's to refuse)."""

# what is at a fault's place: a float that is not finite, a key, or a value that is not JSON
_FLOAT, _KEY, _VALUE = "float", "key", "value"


def not_json_at(value: Any, path: str) -> tuple[str, str] | None:
    """The first place in ``value`` (a Python-mode dump) that a JSON dump would write as
    another value, and why; or None."""
    found = _fault_at(value, path)
    if found is None:
        return None
    where, kind, what = found
    if kind is _FLOAT:
        return where, f"{what!r}, which JSON has no form for (LlamaIndex's dump writes null in " \
                      f"its place)"
    if kind is _KEY:
        return where, (f"object keys must be strings, got {type(what).__name__} "
                       f"{short_repr(what)} (LlamaIndex's dump writes it as {str(what)!r}, over "
                       f"any key of that text)")
    return where, f"{_not_json(what)}{_written_as(what)}"


def _not_json(value: Any) -> str:
    return (f"expected a JSON value (dict, list, str, int, float, bool, None), got "
            f"{type(value).__name__} {short_repr(value)}")


def _written_as(value: Any) -> str:
    """What LlamaIndex's dump writes in the place of a value that is not JSON, said."""
    try:
        written = to_jsonable_python(value)
    except PydanticSerializationError:
        return ""
    return f" (LlamaIndex's dump writes it as {short_repr(written)})"


def _fault_at(value: Any, path: str) -> tuple[str, str, Any] | None:
    """The first fault in ``value`` (dicts, lists and tuples walked), its kind and what is
    there: a NaN or an infinity, a key that is not a string (placed at its dict), or, under a
    field of ``_ANY_VALUE``, a value that is not JSON (a tuple there is one). Such a field
    that is plain JSON (the usual case) is passed at once, without a walk building paths."""
    stack: list[tuple[Any, str, bool]] = [(value, path, False)]
    while stack:
        item, where, any_value = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return where, _KEY, key
            for key, inner in reversed(item.items()):
                if key in _ANY_VALUE and not any_value:
                    if not is_plain_json(inner):
                        stack.append((inner, json_path(where, key), True))
                else:
                    stack.append((inner, json_path(where, key), any_value))
        elif kind is list or (kind is tuple and not any_value):
            stack.extend((inner, f"{where}[{k}]", any_value)
                         for k, inner in reversed(list(enumerate(item))))
        elif kind is float:
            if not math.isfinite(item):
                return where, _FLOAT, item
        elif any_value and kind not in _SCALARS:
            return where, _VALUE, item
    return None


def check_json_form(obj: Any, index: int | None, where: str) -> None:
    """Refuse (``unserializable_value`` at the value) a pydantic object holding what its JSON
    dump would write as another value (``not_json_at``, and bytes in the ``additional_kwargs``
    of a ChatMessage in it, which LlamaIndex's serializer writes as base64 text in both
    dumps)."""
    check_dumped_form(obj.model_dump(), index, where)
    found = _kwargs_bytes_at(obj, where)
    if found is not None:
        raise TraceError("unserializable_value", _bytes_said(found[1]), index=index,
                         path=found[0], source=NAME)


def _kwargs_bytes_at(obj: Any, where: str) -> tuple[str, bytes] | None:
    """The first bytes in the ``additional_kwargs`` of ``obj`` (a ChatMessage) or of a
    ChatMessage in it (an event's, at any depth of models and lists), where they are."""
    if type(obj) is Llama.loaded().chat_message:
        extra = obj.additional_kwargs
        if type(extra) is not dict or is_plain_json(extra):  # the usual case, at once
            return None
        return _bytes_at(extra, f"{where}.additional_kwargs")
    if isinstance(obj, BaseModel):
        inner: Any = _dumped_fields(obj)
    elif type(obj) is list:
        inner = enumerate(obj)
    else:
        return None
    for key, value in inner:
        if isinstance(value, BaseModel) or type(value) is list:
            at = f"{where}[{key}]" if type(key) is int else f"{where}.{key}"
            found = _kwargs_bytes_at(value, at)
            if found is not None:
                return found
    return None


def _dumped_fields(model: BaseModel) -> list[tuple[str, Any]]:
    """A model's fields as its dump writes them: a workflow event's also those given beyond
    its declared ones (kept in ``_data``) and a StopEvent's ``result`` (kept in
    ``_result``), which their serializers write as fields."""
    fields = list(model.__dict__.items())
    private = model.__pydantic_private__
    if private:
        data = private.get("_data")
        if type(data) is dict:
            fields.extend((key, value) for key, value in data.items() if type(key) is str)
        if "_result" in private:
            fields.append(("result", private["_result"]))
    return fields


def _bytes_at(value: Any, path: str) -> tuple[str, bytes] | None:
    """The first bytes in the dicts and lists of ``value`` (what LlamaIndex's serializer of
    ``additional_kwargs`` walks, writing bytes as base64 text), where they are."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, bytes):
            return where, item
        if isinstance(item, dict):
            stack.extend((inner, json_path(where, key if type(key) is str else str(key)))
                         for key, inner in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{k}]") for k, inner in reversed(list(enumerate(item))))
    return None


def _bytes_said(value: bytes) -> str:
    written = base64.b64encode(value).decode("ascii")
    return f"{_not_json(value)} (LlamaIndex's dump writes it as its base64 text, " \
           f"{short_repr(written)})"


def check_dumped_form(dumped: Any, index: int | None, where: str) -> None:
    """``check_json_form`` of a Python-mode dump (of an object, or one of its fields)."""
    found = not_json_at(dumped, where)
    if found is not None:
        raise TraceError("unserializable_value", found[1], index=index, path=found[0],
                         source=NAME)
