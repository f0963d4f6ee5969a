"""Writing typed messages as Chat Completions message dicts (``openai_chat`` and ``swarm``)."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from typing_extensions import assert_never

from tracebridge.errors import short_repr
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    messages_of,
)

from ._parts import PartWriter, lone_refusal
from ._read import Dialect, parse_arguments

DROPPABLE = ("is_error", "reasoning", "mime_types")
"""What ``from_messages(drop=...)`` may leave out: the format has no place for them."""


# --- writing -------------------------------------------------------------------------------


def write_trace(
    messages: Any, dialect: Dialect, *, drop: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The messages as plain dicts of ``dialect``."""
    unknown = sorted(set(drop) - set(DROPPABLE))
    if unknown:
        raise ValueError(f"drop={unknown} names nothing droppable; choose from {DROPPABLE}")
    return [_Writer(dialect, i, drop).message(m) for i, m in enumerate(messages_of(messages))]


class _Writer(PartWriter):
    """Writes the typed message at one index."""

    def __init__(self, dialect: Dialect, index: int, drop: Collection[str]) -> None:
        super().__init__(dialect.source, index, drop)
        self.dialect = dialect

    def message(self, message: AnyMessage) -> dict[str, Any]:
        namespace = self.namespace(message.metadata)
        role: str
        if isinstance(message, SystemMessage):
            role = "developer" if namespace.get("role") == "developer" else "system"
        elif isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = "function" if message.tool_call_id is None else "tool"
        else:
            assert_never(message)
        out: dict[str, Any] = {"role": role}
        refusal = lone_refusal(message.content)
        if refusal is not None and namespace.get("refusal") in ("null", "absent"):
            if namespace["refusal"] == "null":
                out["content"] = None
            out["refusal"] = refusal
        else:
            empty = namespace.get("content") if message.content == "" else None
            if empty == "null":
                out["content"] = None
            elif empty != "absent":
                out["content"] = self.content(message.content)
        name_key = self.dialect.name_keys[role]
        if message.name is not None:
            out[name_key] = message.name
        if isinstance(message, AIMessage) and message.tool_calls:
            self.calls(message.tool_calls, out)
        if isinstance(message, ToolMessage):
            if message.is_error:
                self.lose(
                    "Chat Completions tool results have no error flag (is_error=True)",
                    ".is_error",
                    "is_error",
                )
            if message.tool_call_id is not None:
                out["tool_call_id"] = message.tool_call_id
            elif message.name is None:
                self.lose(
                    "a tool result without tool_call_id becomes a legacy function message, "
                    "which needs the function's name (name is None)",
                    ".name",
                    None,
                )
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return out

    def calls(self, calls: list[ToolCall], out: dict[str, Any]) -> None:
        if all(call.id is not None for call in calls):
            out["tool_calls"] = [
                self.call(call, f".tool_calls[{k}]") for k, call in enumerate(calls)
            ]
        elif len(calls) == 1:
            namespace = self.namespace(calls[0].metadata)
            if namespace.get("type") == "custom":
                self.lose("a custom tool call needs an id", ".tool_calls[0].id", None)
            out["function_call"] = self.function(calls[0], namespace)
        else:
            self.lose(
                f"{len(calls)} tool calls without ids: only the legacy function_call "
                "pairs by position, and it holds one call",
                ".tool_calls",
                None,
            )

    def call(self, call: ToolCall, path: str) -> dict[str, Any]:
        namespace = self.namespace(call.metadata)
        inner = namespace.get("inner", {})
        if namespace.get("type") == "custom":
            text = call.args.get("input")
            if set(call.args) != {"input"} or type(text) is not str:
                self.lose(
                    f"a custom tool call's args must be {{'input': <text>}} (found "
                    f"{short_repr(call.args)})",
                    f"{path}.args",
                    None,
                )
            out = {
                "id": call.id,
                "type": "custom",
                "custom": {"name": call.name, "input": text, **inner},
            }
        else:
            out = {"id": call.id, "type": "function", "function": self.function(call, namespace)}
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return out

    def function(self, call: ToolCall, namespace: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "name": call.name,
            "arguments": _arguments(call, namespace.get("arguments")),
            **namespace.get("inner", {}),
        }


def _arguments(call: ToolCall, spelled: Any) -> str:
    """The argument text: the raw text kept, when it still says what ``args`` say."""
    if call.invalid_args is not None:
        return call.invalid_args
    if isinstance(spelled, str) and _same_json(parse_arguments(spelled), call.args):
        return spelled
    return json.dumps(call.args)


def _same_json(left: Any, right: Any) -> bool:
    if left is None:
        return False
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)

