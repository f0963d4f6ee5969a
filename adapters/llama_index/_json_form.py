"""What LlamaIndex's JSON dump of an object writes as another value, found before it is read.

``model_dump(mode="json")`` writes a NaN or an infinity as null and a dict key that is not a
string as its text (``{1: "a", "1": "b"}`` becomes ``{"1": "b"}``: one value is lost). In
the fields of its models that take any value (``_FREE_FORM``) it writes what is not JSON as
some JSON too: bytes as their text, a tuple or a set as a list, a date as its ISO text, a
Decimal, a UUID or an enum as its value's text, a pydantic model or a dataclass as a dict
(which reads back as a dict, not as the object). A ChatMessage object is read through that
dump, so such a value would be read as null, under another key or as another value without
a word, where the same message as a dict (and the same event through ``dump_events``) is
refused: ``unserializable_value`` at the value (for a key, at the dict that holds it, as
``tracebridge._json.check_json`` says it of a dict). A key holding a lone surrogate
(``"\\udc00"``) is one too: the dump writes it as three U+FFFD characters, or cannot write it
at all (``surrogate_key_at``).

Only what pydantic's serializer writes is asked (the Python-mode dump, ``model_dump()``, whose
keys and nesting are the JSON dump's, and which keeps such values as they are; but a field
that takes any value is asked as the model holds it, since that dump already makes a model
or a dataclass in it a dict), and only for objects whose dump was not written out by hand:
a hand-written dump keeps a value as it is, and the dict road checks it. A dict or list of
a subclass (an ``OrderedDict``, the ``AttributedDict`` a ReActAgent parses arguments into)
is read as the dict or list the dump writes. What is not read but kept as LlamaIndex's JSON
writes it (``_KEPT_AS_WRITTEN``: a tool output's raw values) is asked only for NaNs and keys,
whatever it holds.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from tracebridge import TraceError
from tracebridge._json import is_plain_json, json_path, surrogate_key_in
from tracebridge._optional import module_of
from tracebridge.errors import short_repr

from ._blocks import NAME, not_representable

_FREE_FORM = {
    "ChatMessage": "additional_kwargs",
    "ToolCallBlock": "tool_kwargs",
    "ToolSelection": "tool_kwargs",
    "ToolCall": "tool_kwargs",
    "ToolCallResult": "tool_kwargs",
    "ThinkingBlock": "additional_information",
}
"""LlamaIndex's models (by class name) with a field that takes any value, and that field:
what is in it must be JSON. A dict key of the same name elsewhere is only a key."""

_KEPT_AS_WRITTEN = frozenset({"raw_output", "raw_input", "raw"})
"""Model fields whose value is not read, only kept as LlamaIndex's JSON writes it (a
ToolOutput's raw values), or left out (an AgentOutput's ``raw``): the models in them are not
asked for their fields that take any value."""

_MODULES = ("llama_index.", "workflows.")
"""Where LlamaIndex's models are defined (a class of the same name elsewhere is not one)."""

_SCALARS = frozenset({str, int, bool, type(None)})
"""What the dump writes as it is (an int too long for JSON is the JSON check's to refuse)."""

_CONTAINERS = frozenset({dict, list})
"""What ``is_plain_json`` may pass whole (of exactly these types: a subclass is walked)."""

# what is at a fault's place: a float that is not finite, a key that is not a string, a key
# holding a lone surrogate, or a value that is not JSON
_FLOAT, _KEY, _SURROGATE, _VALUE = "float", "key", "surrogate", "value"


def not_json_at(value: Any, path: str, *, any_value: bool = False) -> tuple[str, str] | None:
    """The first place in ``value`` (a Python-mode dump) that a JSON dump would write as
    another value, and why; or None. ``any_value``: ``value`` is a field that takes any value
    (``_FREE_FORM``), where what is not JSON is a fault too."""
    found = _fault_at(value, path, any_value)
    return None if found is None else _said(*found)


def _said(where: str, kind: str, what: Any) -> tuple[str, str]:
    """A fault ``_fault_at`` found, where it is and why."""
    if kind is _FLOAT:
        return where, f"{what!r}, which JSON has no form for (LlamaIndex's dump writes null in " \
                      f"its place)"
    if kind is _KEY:
        return where, (f"object keys must be strings, got {type(what).__name__} "
                       f"{short_repr(what)} (LlamaIndex's dump writes it as {str(what)!r}, over "
                       f"any key of that text)")
    if kind is _SURROGATE:
        return where, surrogate_key_said(what)
    return where, f"{_not_json(what)}{_written_as(what)}"


def surrogate_key_said(key: str) -> str:
    """Why a key holding a lone surrogate is refused, said."""
    written = key.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return (f"the key {key!r} holds a lone surrogate, which LlamaIndex's JSON dump writes as "
            f"{written!a} (or cannot write at all)")


def surrogate_key_at(value: Any, path: str) -> tuple[str, str] | None:
    """The path of the first dict in ``value`` (plain JSON: dicts and lists walked) with a key
    holding a lone surrogate, and why it is refused; or None. A value with none (the usual
    case) is passed at the cost of an ``isascii`` test per key."""
    if not ((type(value) is dict or type(value) is list) and surrogate_key_in(value)):
        return None
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if type(item) is dict:
            for key in item:
                if not key.isascii() and _has_surrogate(key):
                    return where, surrogate_key_said(key)
            stack.extend((inner, json_path(where, key)) for key, inner in reversed(item.items()))
        elif type(item) is list:
            stack.extend((inner, f"{where}[{k}]") for k, inner in reversed(list(enumerate(item))))
    return None


def refuse_surrogate_key(value: Any, where: str) -> None:
    """Refuse a key holding a lone surrogate in what is written into a ChatMessage (``value``,
    plain JSON, at ``where``): ``not_representable`` at the dict that holds it. LlamaIndex's
    JSON dump of the message writes it as another key, or cannot write it, and the reader
    refuses the ChatMessage that holds it."""
    found = surrogate_key_at(value, where)
    if found is not None:
        raise not_representable(f"{found[1]}; the ChatMessage would not read back", found[0])


def _has_surrogate(key: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _not_json(value: Any) -> str:
    return (f"expected a JSON value (dict, list, str, int, float, bool, None), got "
            f"{type(value).__name__} {short_repr(value)}")


def _written_as(value: Any) -> str:
    """What LlamaIndex's dump writes in the place of a value that is not JSON, said."""
    try:
        written = to_jsonable_python(value)
    except PydanticSerializationError:
        return ""
    if type(written) is dict and not isinstance(value, dict):  # a model, a dataclass
        return f" (LlamaIndex's dump writes it as {short_repr(written)}, which reads back as " \
               f"a dict, not as the {type(value).__name__} it was)"
    return f" (LlamaIndex's dump writes it as {short_repr(written)})"


def _fault_at(value: Any, path: str, any_value: bool) -> tuple[str, str, Any] | None:
    """The first fault in ``value`` (dicts and lists of any class walked, and tuples), its
    kind and what is there: a NaN or an infinity, a key that is not a string or that holds a
    lone surrogate (placed at its dict), or, with ``any_value``, a value that is not JSON (a
    tuple is one). A dict or list of plain JSON (the usual case) is passed at once, without a
    walk building paths."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if type(item) in _CONTAINERS and is_plain_json(item) and not surrogate_key_in(item):
            continue
        if isinstance(item, dict):
            for key in item:
                if type(key) is not str:
                    return where, _KEY, key
                if not key.isascii() and _has_surrogate(key):
                    return where, _SURROGATE, key
            stack.extend((inner, json_path(where, key)) for key, inner in reversed(item.items()))
        elif isinstance(item, list) or (type(item) is tuple and not any_value):
            stack.extend((inner, f"{where}[{k}]")
                         for k, inner in reversed(list(enumerate(item))))
        elif type(item) is float:
            if not math.isfinite(item):
                return where, _FLOAT, item
        elif any_value and type(item) not in _SCALARS:
            return where, _VALUE, item
    return None


def check_json_form(obj: Any, index: int | None, where: str) -> None:
    """Refuse (``unserializable_value`` at the value) a pydantic object holding what its JSON
    dump would write as another value: a NaN, an infinity or a key that is not a string
    anywhere (``not_json_at``), and what is not JSON in a field that takes any value of a
    LlamaIndex model in it (``_free_form_fault``)."""
    check_dumped_form(obj.model_dump(), index, where)
    found = _free_form_fault(obj, where)
    if found is not None:
        raise TraceError("unserializable_value", found[1], index=index, path=found[0],
                         source=NAME)


def _free_form_fault(obj: Any, where: str) -> tuple[str, str] | None:
    """The first value that is not JSON in a field that takes any value (``_FREE_FORM``) of
    ``obj`` or of a model in it (at any depth of models and lists, but for the fields in
    ``_KEPT_AS_WRITTEN``), where it is and why."""
    if isinstance(obj, BaseModel):
        free = _free_field(obj)
        inner: Any = _dumped_fields(obj)
    elif type(obj) is list:
        free, inner = None, enumerate(obj)
    else:
        return None
    for key, value in inner:
        if key == free:
            found = _field_fault(key, value, f"{where}.{key}")
        elif key in _KEPT_AS_WRITTEN or not (isinstance(value, BaseModel) or type(value) is list):
            continue
        else:
            found = _free_form_fault(value, f"{where}[{key}]" if type(key) is int
                                     else f"{where}.{key}")
        if found is not None:
            return found
    return None


def _free_field(model: BaseModel) -> str | None:
    """The field of ``model`` that takes any value, when it is one of LlamaIndex's models
    that has one, or a subclass of one (a user's own block class)."""
    for kind in type(model).__mro__:
        free = _FREE_FORM.get(kind.__name__)
        if free is not None and module_of(kind).startswith(_MODULES):
            return free
    return None


def _field_fault(field: str, value: Any, at: str) -> tuple[str, str] | None:
    """What is not JSON in ``value``, the field ``field`` of a model (at ``at``), as the
    model holds it: the dump would write a pydantic model or a dataclass in it as a dict,
    which reads back as a dict. Bytes in a ChatMessage's ``additional_kwargs`` are said as
    LlamaIndex's serializer writes them there, as base64 text. A field of plain JSON (the
    usual case) is passed at once, without a walk building paths."""
    if is_plain_json(value):
        return None
    dumped: list[str] = []
    if field == "additional_kwargs" and type(value) is dict:
        value = _with_read_objects_dumped(value, at, dumped)
    found = _fault_at(value, at, any_value=True)
    if found is None:
        return None
    where, kind, what = found
    if (field == "additional_kwargs" and isinstance(what, bytes)
            and not any(where.startswith((place + ".", place + "[")) for place in dumped)):
        return where, _bytes_said(what)  # not in a model, whose dump keeps bytes as bytes
    return _said(where, kind, what)


_READ_AS_DUMPED = frozenset({"tool_calls", "function_call", "audio", "annotations", "images"})
"""``additional_kwargs`` keys whose objects (an openai SDK call, a ToolSelection, an
``ImageDocument``) the reader takes as their dump: a typed home reads it, or the writer writes
the object back."""


def _with_read_objects_dumped(kwargs: dict[Any, Any], at: str,
                              dumped: list[str]) -> dict[Any, Any]:
    """``kwargs`` (at ``at``) with the objects under ``_READ_AS_DUMPED`` keys (or in a list
    there) as LlamaIndex's serializer dumps them, their paths added to ``dumped``; every other
    value as it is held."""
    if _READ_AS_DUMPED.isdisjoint(kwargs):
        return kwargs
    out = dict(kwargs)
    for key in _READ_AS_DUMPED.intersection(kwargs):
        held, where = kwargs[key], json_path(at, key)
        out[key] = ([_dumped_object(item, f"{where}[{k}]", dumped) for k, item in enumerate(held)]
                    if type(held) is list else _dumped_object(held, where, dumped))
    return out


def _dumped_object(value: Any, where: str, dumped: list[str]) -> Any:
    if not isinstance(value, BaseModel):
        return value
    dumped.append(where)
    return value.model_dump()


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


def _bytes_said(value: bytes) -> str:
    written = base64.b64encode(value).decode("ascii")
    return f"{_not_json(value)} (LlamaIndex's dump writes it as its base64 text, " \
           f"{short_repr(written)})"


def check_dumped_form(dumped: Any, index: int | None, where: str) -> None:
    """Refuse (``unserializable_value`` at it) a NaN, an infinity or a key that is not a
    string in a Python-mode dump (of an object, or of a value kept as LlamaIndex's JSON writes
    it, whatever keys it holds)."""
    found = not_json_at(dumped, where)
    if found is not None:
        raise TraceError("unserializable_value", found[1], index=index, path=found[0],
                         source=NAME)
