"""Which raw items each ``RunItem`` class wraps, and the check that a wrapper holds one.

The SDK makes each ``RunItem`` class around one kind of Responses item (``agents.items``):
a ``MessageOutputItem`` around an assistant ``message``, a ``ToolCallOutputItem`` around an
output item, a ``HandoffOutputItem`` around the output it writes for the handoff. A wrapper
holding another kind (a stored state edited by hand, an object changed after it was made)
says two things about one item: ``conflicting_fields`` at the raw item's field that
disagrees. An ``input_item`` admits any input item, and a ``tool_approval_item`` holds the
call it waits on, kept whole: neither is checked here. A raw item whose kind is no string
(or is not given at all) is left to the Responses reader, which refuses it at that field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

from tracebridge.errors import TraceError, short_repr, with_article

NAME = "openai_agents"

RAW_ITEM_TYPES: Mapping[str, tuple[str, ...]] = {
    "message_output_item": ("message",),
    "tool_search_call_item": ("tool_search_call",),
    "tool_search_output_item": ("tool_search_output",),
    "handoff_call_item": ("function_call",),
    "handoff_output_item": ("function_call_output",),
    "tool_call_item": (
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "program",
        "hosted_tool_call",
    ),
    "tool_call_output_item": (
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "program_output",
    ),
    "reasoning_item": ("reasoning",),
    "mcp_list_tools_item": ("mcp_list_tools",),
    "mcp_approval_request_item": ("mcp_approval_request",),
    "mcp_approval_response_item": ("mcp_approval_response",),
    "compaction_item": ("compaction",),
}
"""Per ``RunItem`` type, the raw item types the SDK (openai-agents 0.24, 0.25) wraps in it; a
``message`` there is an assistant's. (``program`` and ``hosted_tool_call`` calls, the tool
search items and ``compaction`` are the SDK's; the Responses reader has no mapping for them.)"""


def check_raw_item(
    kind: str, raw: Any, target_agent: str | None, index: int, path: str
) -> None:
    """Refuse a raw item of another kind than its ``kind`` of wrapper wraps
    (``conflicting_fields`` at ``path.raw_item.type``, or ``.role`` for a message, ``.output``
    for a handoff's output); ``target_agent``: a handoff output's ``target_agent`` name."""
    allowed = RAW_ITEM_TYPES.get(kind)
    if allowed is None:
        return
    item_type, role = _field(raw, "type"), _field(raw, "role")
    if item_type is None and isinstance(role, str):
        item_type, told_by = "message", "role"  # a message given by its role alone
    elif isinstance(item_type, str):
        told_by = "type"
    else:
        return
    if item_type not in allowed:
        _conflict(f"{with_article(kind)} wraps {_expected(allowed)}, not {_said(item_type, role)}",
                  index, f"{path}.raw_item.{told_by}")
    if item_type == "message" and isinstance(role, str) and role != "assistant":
        _conflict(f"{with_article(kind)} wraps an assistant message, not a {role} message",
                  index, f"{path}.raw_item.role")
    if kind == "handoff_output_item" and target_agent is not None:
        _check_transfer(raw, target_agent, index, path)


def _expected(allowed: tuple[str, ...]) -> str:
    if allowed == ("message",):
        return "an assistant message"
    if len(allowed) == 1:
        return f"an item of type {allowed[0]!r}"
    return f"an item of type {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r}"


def _said(item_type: str, role: Any) -> str:
    if item_type != "message":
        return f"an item of type {item_type!r}"
    return f"a {role} message" if isinstance(role, str) else "a message"


def _check_transfer(raw: Any, target_agent: str, index: int, path: str) -> None:
    """A handoff's output is the text the SDK writes for it: ``{"assistant": <target>}``."""
    output = _field(raw, "output")
    if output is None:
        return  # no output: the Responses reader says what the item needs
    if _transfer_target(output) != target_agent:
        written = json.dumps({"assistant": target_agent}, ensure_ascii=False)
        _conflict(
            f"a handoff_output_item wraps the output the SDK writes for a handoff to its "
            f"target_agent, {written}, not {short_repr(output)}",
            index, f"{path}.raw_item.output",
        )


def _transfer_target(output: Any) -> Any:
    """The ``assistant`` of an output that is the JSON text ``{"assistant": ...}``, else None."""
    if type(output) is not str:
        return None
    try:
        value = json.loads(output)
    except (ValueError, RecursionError):  # no JSON (or nested past the parser's depth)
        return None
    if isinstance(value, dict) and list(value) == ["assistant"]:
        return value["assistant"]
    return None


def _field(raw: Any, key: str) -> Any:
    """A field of a raw item, a dict or an SDK object (None when it has none)."""
    return raw.get(key) if isinstance(raw, Mapping) else getattr(raw, key, None)


def _conflict(detail: str, index: int, path: str) -> NoReturn:
    raise TraceError("conflicting_fields", detail, index=index, path=path, source=NAME)
