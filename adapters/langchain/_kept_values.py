"""The values the reader keeps as metadata, taken as the message holds them.

``model_dump()`` turns a pydantic model or a dataclass anywhere in a field into a dict, so a
check of the dump would keep a retriever's ``Document`` objects, or the parsed object of a
structured reply, as dicts that read back as dicts. The reader checks and copies the values
the message holds instead: such an object is ``unserializable_value`` at its path, as a tuple
or a date is, and the error says what to do for the objects LangChain apps usually leave
there.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel

from tracebridge._json import json_copy_at, json_path
from tracebridge._optional import module_of
from tracebridge.errors import TraceError

__all__ = ["held_fields", "kept_copy"]


def held_fields(message: Any) -> dict[str, Any]:
    """Each field of ``message`` as it holds it, extra attributes too (the keys of its
    ``model_dump()``, their values before the dump; a computed field, or a key a custom
    serializer adds, is only in the dump)."""
    extra = message.__pydantic_extra__
    return {**message.__dict__, **extra} if extra else message.__dict__


def kept_copy(value: Any, key: str, where: str) -> Any:
    """A copy of the plain JSON ``value`` of the field ``key`` (at ``where``);
    ``unserializable_value`` where it is not plain JSON, saying what to do when it is an
    object LangChain apps usually leave there."""
    try:
        return json_copy_at(value, where)
    except TraceError as error:
        hint = _hint(_value_at(value, where, error.path), key, where, error.path)
        if hint is None:
            raise
        raise TraceError(error.code, f"{error.detail}; {hint}", index=error.index,
                         path=error.path, source=error.source) from None


def _hint(found: Any, key: str, where: str, path: str | None) -> str | None:
    """What to do about ``found``, the value at ``path`` (the error's) in the field ``key``;
    None when there is nothing more to say than where it is and what is wrong there."""
    if key == "artifact":
        what = "the Documents a content_and_artifact tool returns" if _is_document(
            found) else "an artifact that is not JSON"
        return (f"a ToolMessage's artifact is kept only as JSON: to_messages(..., "
                f"drop_artifacts=True) drops {what} (recording its type as "
                f"metadata.langchain.artifact_dropped)")
    if not _is_object(found):
        return None
    said = ("a pydantic model or a dataclass is refused rather than kept as the dict its dump "
            "gives, which would read back as a dict")
    if key == "additional_kwargs" and path == f"{where}.parsed":
        return (f"{said}. This is the parsed object of a structured reply (ChatOpenAI's "
                f"with_structured_output keeps it here): the message's content holds the same "
                f"reply as JSON text, so remove the key before converting, or put "
                f"parsed.model_dump() in its place to keep it as a dict")
    return said


def _is_object(value: Any) -> bool:
    """A pydantic model or a dataclass instance (whose dump is a dict)."""
    return isinstance(value, BaseModel) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def _is_document(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "Document" and module_of(kind).startswith("langchain_core.")


def _value_at(value: Any, where: str, path: str | None) -> Any:
    """The value at ``path`` inside ``value`` (the field at ``where``), walked along the
    path's suffix; None when the path leads nowhere in it."""
    if path is None:
        return None
    while path != where:
        found = _step_towards(value, where, path)
        if found is None:
            return None
        where, value = found
    return value


def _step_towards(value: Any, where: str, path: str) -> tuple[str, Any] | None:
    """The path and value of the item of ``value`` (at ``where``) whose path ``path`` is or
    runs through; None when no item's is."""
    kind = type(value)
    if kind is dict:
        items: Any = ((key, item) for key, item in value.items() if type(key) is str)
    elif kind is list:
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        inner = json_path(where, key)
        if path == inner or path.startswith((f"{inner}.", f"{inner}[")):
            return inner, item
    return None
