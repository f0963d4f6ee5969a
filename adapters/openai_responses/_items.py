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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracebridge._optional import module_of

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
    "is_sdk_item",
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


def is_sdk_item(item: Any) -> bool:
    """Whether ``item`` is one of the openai SDK's Responses models."""
    module = module_of(type(item))
    return module.startswith("openai.types.responses.") and hasattr(item, "model_dump")
