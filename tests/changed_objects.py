"""Changing a framework object's fields after it was made, for the changed-objects tests.

Pydantic models of LlamaIndex and the OpenAI SDK do not validate assignments: ``setattr``
stores anything. ``change`` puts a drawn value anywhere inside one object of a trace (a field,
a field of a nested model, a key or item of a dict or list field), as a user's code might.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from tracebridge import TraceError

VALUES = st.sampled_from(
    [None, 5, -1, 1.5, float("nan"), True, "x", "", [], [1], {}, {"a": 1}, {1: 2}, {"a": {1}},
     ("t",), b"b", object()]
)
"""What a changed field may hold: every JSON type, and what is not JSON."""


class Field(str):
    """A step into a model's field (a plain str step is a dict key)."""

    __slots__ = ()


def places(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place inside a value: its models' fields, dict keys and list positions."""
    if isinstance(value, BaseModel):
        for key in list(value.__dict__):
            yield (*prefix, Field(key))
            yield from places(value.__dict__[key], (*prefix, Field(key)))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from places(item, (*prefix, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield (*prefix, position)
            yield from places(item, (*prefix, position))


def change(holder: Any, place: tuple[Any, ...], value: Any, *, remove: bool = False) -> None:
    """Put ``value`` at ``place`` inside ``holder`` (a model's field through ``setattr``);
    ``remove`` deletes a dict key or list item instead (a model keeps its fields)."""
    for step in place[:-1]:
        holder = holder.__dict__[step] if type(step) is Field else holder[step]
    last = place[-1]
    if type(last) is Field:
        setattr(holder, last, value)
    elif remove:
        del holder[last]
    else:
        holder[last] = value


def change_one(data: st.DataObject, trace: list[Any], value: Any, remove: bool) -> None:
    """Change one drawn place inside one drawn framework object of ``trace``."""
    objects = [k for k, item in enumerate(trace) if isinstance(item, BaseModel)]
    k = data.draw(st.sampled_from(objects))
    place = data.draw(st.sampled_from(list(places(trace[k]))))
    change(trace, (k, *place), copy.deepcopy(value), remove=remove)  # drawn values are shared


def outcome(read: Callable[[Any], Any], trace: Any) -> Any:
    """The messages ``read`` gives, or the (code, index, path) of its TraceError; any other
    exception fails the test that asks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns when dumping a changed field
        try:
            return read(trace)
        except TraceError as error:
            return (error.code, error.index, error.path)
