"""JSON values: the only thing metadata and tool arguments may hold."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import JsonValue

from .errors import TraceError, short_repr

__all__ = [
    "MAX_DEPTH",
    "JsonValue",
    "NotPlainJson",
    "RepeatedKey",
    "check_json",
    "check_json_object",
    "is_plain_json",
    "json_copy",
    "json_copy_at",
    "json_copy_checked",
    "joined_surrogates_at",
    "json_path",
    "non_finite_at",
    "read_json",
    "same_json",
    "surrogate_key_in",
    "unique_keys",
]


def json_path(parent: str, key: str | int) -> str:
    """``metadata`` + ``"a"`` -> ``metadata.a``; ``args`` + ``0`` -> ``args[0]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if key.isidentifier():
        return f"{parent}.{key}" if parent else key
    return f"{parent}[{key!r}]"


class RepeatedKey(ValueError):
    """A JSON object holds a key twice: which value was meant is not known (Python's ``json``
    and pydantic keep the last, silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"an object has the key {short_repr(key)} twice (which value is meant "
                         "is not known)")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``object_pairs_hook`` of ``json`` that refuses a repeated key (``RepeatedKey``).

    The dict is built at once and its size compared: the pairs are looked at one by one
    only when a key was repeated.
    """
    value = dict(pairs)
    if len(value) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKey(key)
            seen.add(key)
    return value


UNIQUE_KEYS_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)
"""``json.loads``'s decoder, refusing a repeated key (its ``raw_decode`` reads a prefix)."""


def read_json(text: str) -> Any:
    """``json.loads(text)``, except that an object holding a key twice is ``RepeatedKey``
    (``{"eur": 100, "eur": 1000000}`` is no amount)."""
    return UNIQUE_KEYS_DECODER.decode(text)


_SCALARS = frozenset({str, bool, type(None)})
"""The scalars every value of is plain JSON (an int is, up to ``_INT_DIGITS`` digits)."""

_INT_DIGITS = 4300
"""The most digits of an int that JSON text can carry here: Python's ``json`` (its default
``sys.get_int_max_str_digits``) and pydantic's JSON reader refuse a longer one, so a sample
holding it could not be hashed, written or read back."""
_INT_BOUND: int = 10**_INT_DIGITS
_INT_FLOOR: int = -_INT_BOUND


def _short_int(value: int) -> bool:
    return _INT_FLOOR < value < _INT_BOUND


MAX_DEPTH = 128
"""The deepest a JSON value may nest (a list or an object in one another, the value itself
counting as one level). pydantic's JSON reader stops at about 200 levels, counting the
sample around the value (up to six more), and Python's ``json`` at about a thousand: a deeper
value could be neither read back from a sample's own JSON nor hashed."""


def check_json(value: Any, path: str) -> None:
    """Raise ``unserializable_value`` unless ``value`` is plain JSON.

    Plain JSON means dict with str keys, list, str, int (of at most 4,300 digits: JSON
    readers refuse a longer one), finite float, bool or None, nested at most ``MAX_DEPTH``
    levels. Tuples, sets, NaN and objects are refused rather than converted: converting
    them would make the JSON round trip lie about what was stored.
    """
    try:
        plain = _is_plain(value, MAX_DEPTH)
    except RecursionError:  # called with Python's stack nearly used up already
        plain = False
    if not plain:
        try:
            _check_at(value, path, MAX_DEPTH, path)  # walks again, building paths
        except RecursionError:
            raise TraceError("unserializable_value", "a value that is not plain JSON, nested "
                             "past Python's depth", path=path) from None


def is_plain_json(value: Any) -> bool:
    """Whether ``check_json`` takes ``value`` (without saying why not)."""
    try:
        return _is_plain(value, MAX_DEPTH)
    except RecursionError:
        return False


def _is_plain(value: Any, depth: int) -> bool:
    """``check_json``'s test without building any path (the common case: it passes);
    ``depth``: the levels a container here may still nest."""
    # Exact type checks on purpose: a str or dict subclass (an enum, a defaultdict)
    # would not survive a JSON round trip as itself.
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is dict:
        if not depth:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            inner = type(item)
            if inner in _SCALARS or (inner is int and _INT_FLOOR < item < _INT_BOUND):
                continue  # the usual items, inline (a call per item costs twice the walk)
            if not _is_plain(item, depth - 1):
                return False
        return True
    if kind is list:
        if not depth:
            return False
        for item in value:
            inner = type(item)
            if inner in _SCALARS or (inner is int and _INT_FLOOR < item < _INT_BOUND):
                continue
            if not _is_plain(item, depth - 1):
                return False
        return True
    if kind is int:
        return _short_int(value)
    return kind is float and math.isfinite(value)


class NotPlainJson(ValueError):
    """``json_copy_checked`` met a value that is not plain JSON (``check_json`` says where)."""


def json_copy_checked(value: Any) -> Any:
    """A copy of the plain JSON ``value`` (every dict and list new, scalars shared), checked
    as ``check_json`` checks it in the same walk; ``NotPlainJson`` when it is not plain JSON.

    For fast paths that keep a source's dicts: one walk instead of a copy and a check. A
    value nested past Python's depth (or one that holds itself) is ``NotPlainJson`` too: the
    general path, through ``check_json``, says what it is.
    """
    try:
        return _copy_checked(value, MAX_DEPTH)
    except RecursionError:
        raise NotPlainJson(value) from None


_COPIED_AS_IS = frozenset({str, bool, int, float, type(None)})


def json_copy(value: Any) -> Any:
    """``value`` with every dict and list in it copied (what ``copy.deepcopy`` gives for JSON,
    a good deal faster); anything else is shared as it is (a writer's output, say, whose
    values were checked when they were taken in)."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _COPIED_AS_IS else json_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _COPIED_AS_IS else json_copy(v) for v in value]
    return value


def json_copy_at(value: Any, path: str) -> Any:
    """A copy of the plain JSON ``value`` (every dict and list new, scalars shared), so that
    no one holding the original changes it after it was taken in; ``unserializable_value``
    where it is not plain JSON (as ``check_json`` says)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        check_json(value, path)
        return value
    try:
        return _copy_checked(value, MAX_DEPTH)
    except (NotPlainJson, RecursionError):
        check_json(value, path)  # says where
        raise TraceError("unserializable_value", "a value that is not plain JSON",
                         path=path) from None


def _copy_checked(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is dict:
        if not depth:
            raise NotPlainJson(value)
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotPlainJson(key)
            inner = type(item)
            if inner in _SCALARS or (inner is int and _INT_FLOOR < item < _INT_BOUND):
                out[key] = item
            else:
                out[key] = _copy_checked(item, depth - 1)
        return out
    if kind is list:
        if not depth:
            raise NotPlainJson(value)
        return [
            item
            if (inner := type(item)) in _SCALARS
            or (inner is int and _INT_FLOOR < item < _INT_BOUND)
            else _copy_checked(item, depth - 1)
            for item in value
        ]
    if kind in _SCALARS or (kind is float and math.isfinite(value)):
        return value
    if kind is int and _short_int(value):
        return value
    raise NotPlainJson(value)


_TOO_DEEP = (
    f"a value nested more than {MAX_DEPTH} levels deep, or one that holds itself (a dict or "
    "list inside its own contents): JSON readers stop before its end"
)


def _check_at(value: Any, path: str, depth: int, told: str) -> None:
    """Raise where ``value`` is not plain JSON; one nested too deep is told at ``told``: the
    path of the item of the checked value that holds it (the checked value's, for a
    scalar one)."""
    kind = type(value)
    if kind in _SCALARS:
        return
    if (kind is dict or kind is list) and not depth:
        raise TraceError("unserializable_value", _TOO_DEEP, path=told)
    top = depth == MAX_DEPTH  # the checked value: each item tells its own path
    depth -= 1
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise TraceError(
                    "unserializable_value",
                    f"object keys must be strings, got {type(key).__name__} {short_repr(key)}",
                    path=path,
                )
            if type(item) not in _SCALARS:  # recursing only where needed keeps this cheap
                inner = json_path(path, key)
                _check_at(item, inner, depth, inner if top else told)
        return
    if kind is list:
        for position, item in enumerate(value):
            if type(item) not in _SCALARS:
                inner = json_path(path, position)
                _check_at(item, inner, depth, inner if top else told)
        return
    if kind is float:
        if math.isfinite(value):
            return
        raise TraceError("unserializable_value", f"{value!r} is not a finite number", path=path)
    if kind is int:
        if _short_int(value):
            return
        raise TraceError(
            "unserializable_value",
            f"an integer of more than {_INT_DIGITS:,} digits: JSON readers refuse it",
            path=path,
        )
    raise TraceError(
        "unserializable_value",
        f"expected a JSON value (dict, list, str, int, float, bool, None), "
        f"got {kind.__name__} {short_repr(value)}",
        path=path,
    )


def non_finite_at(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity in ``value`` (dicts, lists and tuples walked;
    anything else passed over), or None: a JSON dump writes null in its place."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return where
        elif kind is dict:
            stack.extend((inner, json_path(where, key if type(key) is str else str(key)))
                         for key, inner in reversed(item.items()))
        elif kind is list or kind is tuple:
            stack.extend((inner, f"{where}[{k}]") for k, inner in reversed(list(enumerate(item))))
    return None


def check_json_object(value: Any, path: str) -> dict[str, Any]:
    """Check that ``value`` is a JSON object and return it."""
    if type(value) is not dict:
        raise TraceError(
            "unserializable_value",
            f"expected a JSON object, got {type(value).__name__} {short_repr(value)}",
            path=path,
        )
    if value:
        check_json(value, path)
    return value


def same_json(a: Any, b: Any, *, zero_signs: bool = False) -> bool:
    """Equal as JSON, types included (``1``, ``1.0`` and ``True`` are three values here, as
    they are to a tool; Python's ``==`` takes them for one).

    ``zero_signs``: ``-0.0`` and ``0.0`` are two values too, as their JSON texts (and the
    transcript hash) are: for a writer asking whether kept text still says what a value
    says. Without it they are one, as to Python (the readers that compare two places of
    one event, and their fast paths, count them so).
    """
    if a.__class__ is not b.__class__ or a != b:  # one comparison in C for most answers
        return False
    return _same_kinds(a, b) if zero_signs else _same_classes(a, b)


def _same_classes(a: Any, b: Any) -> bool:
    """For two values of one class that are equal in Python: whether every value inside has
    one class too (what ``same_json`` asks once ``==`` has said yes)."""
    kind = a.__class__
    if kind is dict:  # the usual case (arguments), in one loop without calls
        for key, value in a.items():
            inner = value.__class__
            other = b[key]
            if inner is not other.__class__ or (
                (inner is dict or inner is list or inner is tuple)
                and not _same_classes(value, other)
            ):
                return False
        return True
    if kind is list or kind is tuple:
        return all(map(_same_class, a, b))
    return True


def _same_class(value: Any, other: Any) -> bool:
    inner = value.__class__
    return inner is other.__class__ and (
        not (inner is dict or inner is list or inner is tuple) or _same_classes(value, other)
    )


def _same_kinds(a: Any, b: Any) -> bool:
    """For two values of one class that are equal in Python: whether every value inside has
    one class too, and every zero float the sign of the zero at its place in the other (only
    a zero has two signs): ``same_json(..., zero_signs=True)`` once ``==`` has said yes, in
    one walk."""
    kind = a.__class__
    if kind is float:
        return bool(a) or math.copysign(1.0, a) == math.copysign(1.0, b)
    if kind is dict:  # the usual case (arguments): each value with the other's at its key
        pairs = zip(a.values(), map(b.__getitem__, a), strict=True)
    elif kind is list or kind is tuple:
        pairs = zip(a, b, strict=True)
    else:
        return True
    for value, other in pairs:  # one frame a level: as deep as Python's == goes
        inner = value.__class__
        if value is not other and (inner is not other.__class__ or (
            (inner is dict or inner is list or inner is tuple or inner is float)
            and not _same_kinds(value, other)
        )):
            return False
    return True


def surrogate_key_in(value: Any) -> bool:
    """Whether a dict in ``value`` (a model's ``model_dump()``) has a key holding a lone
    surrogate (which pydantic's JSON writer writes as U+FFFD, without an error), looking
    into lists and tuples (a python-mode dump keeps a tuple); a key that is no string is not
    one (the JSON check tells of it)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if isinstance(key, str) and not key.isascii() and _has_surrogate(key):
                return True
            if type(item) in _HOLDERS and surrogate_key_in(item):
                return True
    elif kind is list or kind is tuple:
        for item in value:
            if type(item) in _HOLDERS and surrogate_key_in(item):
                return True
    return False


_HOLDERS = frozenset((dict, list, tuple))
"""What ``surrogate_key_in`` looks into."""


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_JOINED_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]")
"""A lone high surrogate right before a lone low one: JSON's escapes for the two
(``\\ud800\\udcff``) spell one character (U+100FF), which every reader reads back."""


def joined_surrogates_at(value: Any, path: str) -> str | None:
    """The path of the first string (or dict key) in ``value`` holding ``_JOINED_SURROGATES``,
    or None."""
    if type(value) is str:
        return path if not value.isascii() and _JOINED_SURROGATES.search(value) else None
    if type(value) is list:
        for position, item in enumerate(value):
            found = joined_surrogates_at(item, f"{path}[{position}]")
            if found is not None:
                return found
    elif type(value) is dict:
        for key, item in value.items():
            inner = _key_path(path, key)
            if joined_surrogates_at(key, "") is not None:
                return inner
            found = joined_surrogates_at(item, inner)
            if found is not None:
                return found
    return None


def _key_path(path: str, key: Any) -> str:
    """The path of the item at ``key`` of the dict at ``path``: a key that is no string as
    JSON text writes it (``1``, ``true``, ``null``), or as Python shows it (a tuple)."""
    if not isinstance(key, str):
        key = json.dumps(key) if key is None or isinstance(key, (int, float)) else repr(key)
    return json_path(path, key)
