"""SDK item objects whose nested parts or annotations were changed into another kind.

Pydantic does not check assignments: ``part.type = "input_text"`` on an ``output_text`` part
makes an object the SDK never builds, which the reader would take for an input part (and a
``url_citation`` typed ``file_citation`` for another annotation) without any error. The item
reader asks ``passed_for_another`` first; the model it names is refused by the SDK's own
validation (``tracebridge._changed.unmade``) at its path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tracebridge._changed import drifted, literal_values
from tracebridge._json import json_path
from tracebridge._optional import module_of

__all__ = ["passed_for_another"]

_LEAVES = frozenset((str, int, float, bool, type(None)))

_KIND_FIELDS: dict[type, tuple[tuple[str, frozenset[Any]], ...] | None] = {}
"""Per class: its ``role`` and ``type`` fields declared as a ``Literal`` (or an optional
one, which allows None too), with the values they allow; None for a class that is not a
pydantic model."""


def _kind_fields(cls: type) -> tuple[tuple[str, frozenset[Any]], ...] | None:
    if cls in _KIND_FIELDS:
        return _KIND_FIELDS[cls]
    fields = getattr(cls, "model_fields", None) if issubclass(cls, BaseModel) else None
    table = None
    if isinstance(fields, dict):
        allowed = {key: literal_values(fields[key].annotation)
                   for key in ("role", "type") if key in fields}
        table = tuple((key, values) for key, values in allowed.items() if values is not None)
    _KIND_FIELDS[cls] = table
    return table


def _kind_changed_below(item: BaseModel) -> bool:
    """Whether a model nested in ``item`` holds a ``role`` or ``type`` its class does not
    allow: one cheap walk over the models and lists (dicts of an SDK item hold plain JSON)."""
    try:
        return _changed_inside(item.__dict__.values())
    except RecursionError:  # nested past Python's depth: the precise walk has a stack
        return True


def _changed_inside(values: Any) -> bool:
    for value in values:
        cls = type(value)
        if cls in _LEAVES:
            continue
        if cls is list or cls is tuple:
            if _changed_inside(value):
                return True
            continue
        table = _kind_fields(cls)
        if table is None:
            continue
        fields = value.__dict__
        for key, allowed in table:
            kind = fields.get(key)
            if key in fields and (not (type(kind) is str or kind is None) or kind not in allowed):
                return True
        if _changed_inside(fields.values()):
            return True
    return False


def passed_for_another(item: BaseModel, at: str) -> tuple[BaseModel, str] | None:
    """The first model nested in ``item`` (an SDK item object, at path ``at``) whose ``role``
    or ``type`` was set to a value its class does not allow but another SDK class does (an
    ``output_text`` part now typed ``input_text``), and its path; None when there is none.

    Read as it stands, such a model would pass for that other kind. A value no SDK class
    knows is left alone: the SDK builds a newer API's kind so, and the reader keeps it
    verbatim. The usual item costs one cheap walk; the walk that builds paths runs only
    when that one found a changed kind."""
    if not _kind_changed_below(item):
        return None
    known: frozenset[str] | None = None
    stack: list[tuple[Any, str]] = [(value, f"{at}.{key}") for key, value in item.__dict__.items()]
    stack.reverse()
    walked: set[int] = set()  # a value met twice (shared, or holding itself) is walked once
    while stack:
        value, path = stack.pop()
        if id(value) in walked:
            continue
        if isinstance(value, BaseModel):
            if drifted(value):
                known = _sdk_kinds() if known is None else known
                fields = value.__dict__
                if any(fields.get(key) in known for key in ("role", "type")
                       if type(fields.get(key)) is str):
                    return value, path
            inner = [(v, f"{path}.{k}") for k, v in value.__dict__.items()]
        elif type(value) is list or type(value) is tuple:
            inner = [(v, f"{path}[{k}]") for k, v in enumerate(value)]
        elif type(value) is dict:
            inner = [(v, json_path(path, k)) for k, v in value.items() if type(k) is str]
        else:
            continue
        walked.add(id(value))
        stack.extend(reversed(inner))
    return None


def _sdk_kinds() -> frozenset[str]:
    """Every ``role`` and ``type`` value an OpenAI SDK model class declares as a ``Literal``."""
    kinds: set[str] = set()
    classes: list[type] = [BaseModel]
    seen: set[type] = set()
    while classes:
        subclasses: list[type] = classes.pop().__subclasses__()
        for sub in subclasses:
            if sub in seen:
                continue
            seen.add(sub)
            classes.append(sub)
            if not module_of(sub).startswith("openai.types."):
                continue
            for key in ("role", "type"):
                info = getattr(sub, "model_fields", {}).get(key)
                values = None if info is None else literal_values(info.annotation)
                kinds.update(v for v in values or () if type(v) is str)
    return frozenset(kinds)
