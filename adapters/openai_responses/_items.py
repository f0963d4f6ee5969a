"""The Responses item types this adapter knows, and how each one is shaped.

Items fall into five families:

* ``message``: a user, system or developer message stands alone; an assistant message joins
  the reply around it;
* the reply's own items: ``reasoning``, and items kept whole (``OPAQUE_REPLY_ITEMS``);
* calls answered by a later item (``CALL_OUTPUTS``: ``function_call`` by
  ``function_call_output``, ...), and those outputs;
* hosted calls whose result is in the same item (``HOSTED_CALLS``);
* items the application sends back whole (``OPAQUE_INPUT_ITEMS``).

Any other ``type`` is ``unknown_role``.

An item, or any value inside a dict item (a part of a response in a history dict, a hosted
call's ``action``), may also be an object of the openai SDK: it is read as the plain dict of
the keys it was given (``sdk_dict``), as the SDK itself sends it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tracebridge._changed import FELL, drifted, refusal, unmade
from tracebridge._json import MAX_DEPTH, json_path
from tracebridge._optional import module_of

from ._drift import passed_for_another

__all__ = [
    "CALL_OUTPUTS",
    "HOSTED_CALLS",
    "ITEM_TYPES",
    "MESSAGE_ROLES",
    "OPAQUE_INPUT_ITEMS",
    "OPAQUE_REPLY_ITEMS",
    "OUTPUT_CALLS",
    "RESULT_KEYS",
    "call_name",
    "held_sdk_dicts",
    "is_sdk_item",
    "is_sdk_model",
    "sdk_dict",
    "with_sdk_dicts",
]

NAME = "openai_responses"

MESSAGE_ROLES = ("user", "assistant", "system", "developer")
"""The roles of a ``message`` item."""

CALL_OUTPUTS: Mapping[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
"""A call the application runs -> the item type of its output (paired by ``call_id``)."""

OUTPUT_CALLS: Mapping[str, str] = {output: call for call, output in CALL_OUTPUTS.items()}
"""An output item type -> the call item type it answers."""

HOSTED_CALLS = (
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
)
"""Calls the API runs itself: the call and its result are one item."""

RESULT_KEYS = ("status", "results", "outputs", "output", "result", "error")
"""The keys of a hosted call item that say how it went (its result); the rest are its input."""

OPAQUE_REPLY_ITEMS = ("mcp_list_tools", "mcp_approval_request")
"""Items of a reply kept whole as an ``OpaquePart`` of the ``AIMessage``."""

OPAQUE_INPUT_ITEMS = ("mcp_approval_response",)
"""Items the application sends, kept whole as an ``OpaquePart`` of a ``HumanMessage``."""

ITEM_TYPES = frozenset(
    (
        "message",
        "reasoning",
        *CALL_OUTPUTS,
        *OUTPUT_CALLS,
        *HOSTED_CALLS,
        *OPAQUE_REPLY_ITEMS,
        *OPAQUE_INPUT_ITEMS,
    )
)
"""Every item ``type`` the adapter reads."""


def call_name(item_type: str) -> str:
    """The tool name a call item that has none is read with: its type without ``_call``."""
    return item_type.removesuffix("_call")


_ITEM_MODULES = ("openai.types.responses.", "openai.types.conversations.")
"""The openai SDK's modules of Responses item classes (the Conversations API lists the same
items, some under classes of its own)."""


def is_sdk_item(item: Any) -> bool:
    """Whether ``item`` is one of the openai SDK's Responses item models (also as the
    Conversations API lists them: ``openai.types.conversations``)."""
    module = module_of(type(item))
    return module.startswith(_ITEM_MODULES) and hasattr(item, "model_dump")


def is_sdk_model(value: Any) -> bool:
    """Whether ``value`` is a pydantic model of the openai SDK (an item, a content part, an
    annotation of any of its APIs), which the reader reads as ``sdk_dict`` gives it."""
    return isinstance(value, BaseModel) and module_of(type(value)).startswith("openai.")


def sdk_dict(model: BaseModel, path: str, index: int, source: str) -> dict[str, Any]:
    """An openai SDK object at ``path`` of the item at ``index`` as a plain dict: the keys it
    was given (``exclude_unset``), spelled as the API spells them (``by_alias``: ``async``,
    which the SDK holds as ``async_``), without the fields the SDK itself leaves out of a
    request (``__api_exclude__``: what ``responses.parse()`` adds, ``parsed`` and
    ``parsed_arguments``, also on a message's parts). One the SDK would not make (a field
    changed after it was made) is refused at that field."""
    # pydantic does not check assignments: a field changed after the object was made
    if drifted(model):  # a role or type the class does not allow: it would pass for another
        refused = refusal(model, path, "the OpenAI SDK", index=index, source=source)
        if refused is not None:
            raise refused
    passed = passed_for_another(model, path)
    if passed is not None:  # a part or annotation set to another kind's type
        refused = unmade(passed[0], passed[1], "the OpenAI SDK", index=index, source=source)
        if refused is not None:
            raise refused
    try:
        dumped: dict[str, Any] = model.model_dump(
            mode="json", exclude_unset=True, by_alias=True, exclude=_api_exclude(model)
        )
    except FELL:
        refused = refusal(model, path, "the OpenAI SDK", index=index, source=source)
        if refused is None:
            raise  # the SDK accepts the object: the fault is ours, shown as it is
        raise refused from None
    return dumped


def _api_exclude(model: BaseModel) -> Any:
    """The fields the SDK leaves out when it sends ``model`` (its ``__api_exclude__``, which
    a message computes for its parts), or None."""
    return getattr(model, "__api_exclude__", None)


_PART_KEYS = ("content", "output", "summary")
"""The keys of an item that hold its parts: a message's content, an output item's output, a
reasoning item's summary."""


def with_sdk_dicts(item: Mapping[str, Any], index: int, source: str) -> dict[str, Any]:
    """A dict item as a plain dict, with each openai SDK object among its parts (and among the
    annotations of a part) as ``sdk_dict`` gives it: a history dict holding the parts of a
    response, which the SDK sends as such dicts. An object deeper in the item (a part's
    ``Logprob``, a hosted call's ``action``) is read where the item's values are kept
    (``held_sdk_dicts``)."""
    data = dict(item)
    for key in _PART_KEYS:
        if key in data:
            data[key] = _as_dicts(data[key], f"items[{index}].{key}", index, source)
    return data


def _as_dicts(value: Any, path: str, index: int, source: str) -> Any:
    """``value`` (an SDK object, or a list of parts or annotations) with its SDK objects as
    dicts; ``value`` itself when it holds none."""
    if is_sdk_model(value):
        return sdk_dict(value, path, index, source)
    if type(value) is not list:
        return value
    copied: list[Any] | None = None
    for k, part in enumerate(value):
        found = part
        if is_sdk_model(part):
            found = sdk_dict(part, f"{path}[{k}]", index, source)
        elif type(part) is dict and type(part.get("annotations")) is list:
            listed = part["annotations"]
            annotations = _as_dicts(listed, f"{path}[{k}].annotations", index, source)
            if annotations is not listed:
                found = {**part, "annotations": annotations}
        if found is not part:
            copied = list(value) if copied is None else copied
            copied[k] = found
    return value if copied is None else copied


def held_sdk_dicts(value: Any, path: str, index: int, source: str) -> Any:
    """``value`` (kept from the item at ``index``, at ``path``; not plain JSON) with each
    openai SDK object anywhere in it (a ``Logprob`` of a part, a hosted call's ``action``) as
    ``sdk_dict`` gives it, as the SDK sends it; ``value`` itself when it holds none. Each
    value of a dict is walked alone: one nested too deep (or inside itself) is left as it
    is, for the check of kept values to refuse where it is, and the others are still read."""
    if type(value) is not dict:
        return _held_within(value, (), path, index, source)
    copied = dict(value)
    for key, inner in value.items():
        if type(inner) not in _SCALARS:
            copied[key] = _held_within(inner, (key,), path, index, source)
    return copied


def _held_within(value: Any, keys: tuple[Any, ...], path: str, index: int, source: str) -> Any:
    """``_held_dicts`` of ``value``, or ``value`` itself when it nests too deep."""
    try:
        return _held_dicts(value, keys, path, index, source, MAX_DEPTH)
    except _TooDeep:
        return value


_SCALARS = frozenset((str, int, float, bool, type(None)))
"""The value classes that hold nothing inside: passed over without a look."""


class _TooDeep(Exception):
    """A value nests deeper than a JSON value may: the walk stops at once (one inside itself
    twice would otherwise be walked down every branch)."""


def _held_dicts(
    value: Any, keys: tuple[Any, ...], path: str, index: int, source: str, depth: int
) -> Any:
    """``value`` with its openai SDK objects (itself, or any inside its dicts and lists) as
    dicts; ``value`` itself when it holds none. ``keys``: where ``value`` is below ``path``
    (spelled only for an object found); ``depth``: how many more levels may nest."""
    if is_sdk_model(value):
        for key in keys:  # a dict key that is no string (refused later) spelled as its text
            path = json_path(path, key if type(key) is int or type(key) is str else str(key))
        return sdk_dict(value, path, index, source)
    kind = type(value)
    if kind is not dict and kind is not list:
        return value
    if depth == 0:
        raise _TooDeep
    pairs = value.items() if kind is dict else enumerate(value)
    copied: Any = None
    for key, inner in pairs:
        if type(inner) in _SCALARS:
            continue
        found = _held_dicts(inner, (*keys, key), path, index, source, depth - 1)
        if found is not inner:
            copied = (dict(value) if kind is dict else list(value)) if copied is None else copied
            copied[key] = found
    return value if copied is None else copied
