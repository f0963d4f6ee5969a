"""What the Galtea reader maps and what it keeps verbatim.

A value the reader maps (a turn, a record, an attached file, an input or output envelope) may
be any mapping (an ``OrderedDict``, as ``json.load(..., object_pairs_hook=OrderedDict)``
gives it): it is read as the dict it holds. A value it keeps verbatim (a turn's ``metadata``,
an extra key, what a record holds besides its turn) must be plain JSON: a mapping in it that
is not a plain dict is ``unserializable_value`` where it is, as written back it would come
out as another value (a dict).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tracebridge._json import MAX_DEPTH, check_json, json_path
from tracebridge.errors import TraceError, short_repr

__all__ = ["as_read", "check_kept", "kept", "mapped"]

NAME = "galtea"


def as_read(value: Any) -> Any:
    """A value the reader maps: a mapping as the dict it holds; anything else as it is (the
    caller says what it expected)."""
    if type(value) is not dict and isinstance(value, Mapping):
        return dict(value)
    return value


def mapped(value: Any) -> Any:
    """``value`` with every mapping in it (lists and mappings followed) as the dict it holds:
    a value the reader maps, compared as what it is read as. A value nested past
    ``MAX_DEPTH`` is left as it is there (``check_json`` refuses it)."""
    return _mapped(value, 0)


def _mapped(value: Any, depth: int) -> Any:
    if depth >= MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {key: _mapped(item, depth + 1) for key, item in value.items()}
    if type(value) is list:
        return [_mapped(item, depth + 1) for item in value]
    return value


def kept(value: Any, index: int, at: str) -> Any:
    """A copy of ``value``, kept verbatim from ``at`` of turn ``index`` (``check_kept``): the
    message must not share lists or dicts with the trace."""
    check_kept(value, index, at)
    return copy.deepcopy(value)


def check_kept(value: Any, index: int | None, at: str) -> None:
    """``unserializable_value`` unless ``value``, kept verbatim from ``at`` of turn ``index``,
    is plain JSON; a mapping that is not a plain dict is told as such, wherever it is."""
    try:
        check_json(value, at)
    except TraceError as exc:
        found = _first_mapping(value, at)
        if found is not None and found[0] == exc.path:
            raise TraceError("unserializable_value", f"a kept value must be plain JSON (a "
                             f"plain dict), got {type(found[1]).__name__} "
                             f"{short_repr(found[1])}", index=index, path=exc.path or None,
                             source=NAME) from None
        raise TraceError(exc.code, exc.detail, index=index, path=exc.path or None,
                         source=NAME) from None


def _first_mapping(value: Any, at: str) -> tuple[str, Any] | None:
    """The path and value of the first mapping in ``value`` that is not a plain dict, in the
    order ``check_json`` walks it (None when there is none within ``MAX_DEPTH`` levels)."""
    stack: list[tuple[Any, str, int]] = [(value, at, 0)]
    while stack:
        item, path, depth = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth < MAX_DEPTH:
                inner = list(item.items() if kind is dict else enumerate(item))
                stack.extend((v, json_path(path, k if type(k) in (str, int) else str(k)),
                              depth + 1) for k, v in reversed(inner))
        elif isinstance(item, Mapping):
            return path, item
    return None
