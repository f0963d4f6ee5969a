"""Copies of JSON values (what ``copy.deepcopy`` gives for them, a good deal faster)."""

from __future__ import annotations

from typing import Any

__all__ = ["json_copy"]

_SCALARS = frozenset({str, bool, int, float, type(None)})


def json_copy(value: Any) -> Any:
    """``value`` with every dict and list in it copied; anything else is immutable in JSON
    and shared (a value that is not JSON is shared as it is: callers check JSON apart)."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else json_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else json_copy(v) for v in value]
    return value
