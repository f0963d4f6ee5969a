"""Writing typed messages as Responses items: what the API produced, in its order.

An ``AIMessage`` becomes its items in order: reasoning and kept items where its content has
them, one assistant ``message`` item for its text and refusals (when it has any, an id or
citations), then one item per call. A hosted call is written together with the
``ToolMessage`` that holds its result, as the one item it was read from; every other
``ToolMessage`` is the output item of the call it answers.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tracebridge._drop import check_drop as check_names
from tracebridge._drop import check_flag
from tracebridge._json import json_copy
from tracebridge._shape import UNCHECKED, unchecked_field, unknown_kind
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    OpaquePart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    messages_of,
)
from tracebridge.validation import validate

from ..openai_chat._write import unanswered_calls
from ._items import CALL_OUTPUTS, HOSTED_CALLS, OPAQUE_INPUT_ITEMS, OPAQUE_REPLY_ITEMS
from ._read import is_item_part
from ._reply_writer import ReplyWriter, item_of

__all__ = ["DROPPABLE", "write_items"]

DROPPABLE = (
    "is_error",
    "reasoning",
    "mime_types",
    "refusals",
    "citations",
    "audio_replies",
    "audio_parts",
    "unanswered_calls",
    "opaque_parts",
)
"""What ``from_messages(drop=...)`` may leave out: the format has no place for them."""


def write_items(
    messages: Any, *, source: str, drop: Collection[str] = (), drop_names: bool = False
) -> list[dict[str, Any]]:
    """The messages as Responses item dicts, in the order the API takes them (``drop_names``
    leaves out the names message items have no place for). Only ``source``'s metadata is
    read: converting from the adapter that writes the same items carries its metadata over
    (``tracebridge.registry.carried``)."""
    check_flag("drop_names", drop_names)
    check_drop(drop)
    typed = messages_of(messages, source)
    validate(typed, allow_pending=True, source=source)
    try:
        return _written(typed, source, drop, drop_names)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, source)
        if refused is None:
            raise
        raise refused from None


def _written(
    typed: list[AnyMessage], source: str, drop: Collection[str], drop_names: bool
) -> list[dict[str, Any]]:
    unanswered = unanswered_calls(typed)
    answered, hosted = _pairs(typed, source)
    # Call ids are unique in a valid conversation: one map serves every reply.
    results: dict[str | None, tuple[int, ToolMessage]] = {}
    for t in hosted:
        result = typed[t]
        assert isinstance(result, ToolMessage)
        results[result.tool_call_id] = (t, result)
    items: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] | None = None  # the items of the reply just written
    for i, message in enumerate(typed):
        if i in hosted:
            continue  # written inside its call's item
        writer = _Writer(source, i, drop, unanswered.get(i, ()), drop_names)
        written = writer.message(message, answered, results)
        if isinstance(message, AIMessage):
            if previous and written and _joins(previous, written[0]):
                writer.refuse(
                    "two replies in a row with no item between them read back as one reply "
                    f"({with_article(written[0].get('type', 'message'))} item right after a "
                    f"{previous[-1].get('type', 'message')} item)",
                    "",
                )
            previous = written or previous
        else:
            previous = None
        items.extend(written)
    # the items hold the typed messages' own dicts (arguments, kept fields): copied, so that
    # changing what was written never changes the frozen messages it came from
    return json_copy(items)  # type: ignore[no-any-return]


def check_drop(drop: Any) -> None:
    """Refuse a ``drop=`` value that is not a list of ``DROPPABLE`` names (``ValueError``),
    before anything is written."""
    check_names(drop, DROPPABLE)


def _joins(previous: list[dict[str, Any]], first: dict[str, Any]) -> bool:
    """Whether a reply starting with ``first`` would be read as part of ``previous``."""
    spoke = any(item.get("role") == "assistant" for item in previous)
    last = previous[-1].get("type")
    called = last not in ("message", "reasoning", None) and last not in _KEPT_WHOLE
    kind = first.get("type")
    if kind is None or kind in ("message", "reasoning"):  # a message item: type absent or null
        return not spoke and not called
    if kind in _KEPT_WHOLE:
        return not called
    return True  # a call joins the calls, or follows the content, of the reply before it


_KEPT_WHOLE = frozenset(OPAQUE_REPLY_ITEMS)


def _pairs(
    typed: list[AnyMessage], source: str
) -> tuple[dict[int, ToolCall], dict[int, ToolCall]]:
    """For each ToolMessage, the call it answers; those that answer a hosted call apart.

    A hosted result is written inside its call's item, and read back right after the reply,
    in call order, before the other results: one that stands elsewhere is refused."""
    answered: dict[int, ToolCall] = {}
    hosted: dict[int, ToolCall] = {}
    calls: dict[str, tuple[int, ToolCall]] = {}
    last_hosted = -1  # the call index of the block's last hosted result so far
    other: int | None = None  # the block's first result that is not a hosted one
    for i, message in enumerate(typed):
        if isinstance(message, AIMessage):
            calls = {call.id: (k, call) for k, call in enumerate(message.tool_calls)
                     if call.id is not None}
            last_hosted, other = -1, None
        elif isinstance(message, ToolMessage):
            found = calls.get(message.tool_call_id) if message.tool_call_id is not None else None
            if found is None:
                continue  # no call id: the writer refuses it (validate() refused orphans)
            k, call = found
            answered[i] = call
            kind = item_of(call, source)
            if kind not in HOSTED_CALLS:
                other = i if other is None else other
                continue
            hosted[i] = call
            if other is not None or k < last_hosted:
                after = (f"the result at messages[{other}]" if other is not None
                         else "the result of a later hosted call")
                raise TraceError(
                    "not_representable",
                    f"the result of {with_article(kind)} item is written inside its call's item, "
                    "which reads back right after the reply, before the other results and in "
                    f"call order: this one stands after {after}",
                    index=i,
                    path=f"messages[{i}]",
                    source=source,
                )
            last_hosted = k
        else:
            calls = {}
    return answered, hosted


class _Writer(ReplyWriter):
    """Writes the typed message at one index."""

    def message(
        self,
        message: AnyMessage,
        answered: dict[int, ToolCall],
        results: dict[str | None, tuple[int, ToolMessage]],
    ) -> list[dict[str, Any]]:
        namespace = self.namespace(message.metadata)
        if isinstance(message, AIMessage):
            return self.reply(message, namespace, results)
        if message.name is not None and not isinstance(message, ToolMessage):
            self.unnamed(f"a Responses {message.type} message has no name ({message.name!r})")
        if isinstance(message, ToolMessage):
            return [self.output(message, namespace, answered.get(self.index))]
        role: str
        if isinstance(message, HumanMessage):
            role = "user"
            content = message.content
            if (
                isinstance(content, list)
                and len(content) == 1
                and isinstance(content[0], OpaquePart)
                and is_item_part(content[0], self.source)
            ):
                if namespace:
                    self.nothing_kept(namespace, content[0].kind)
                return [self.kept_item(content[0], ".content[0]", OPAQUE_INPUT_ITEMS)]
        elif isinstance(message, SystemMessage):
            role = message.role
        else:
            unknown_kind(message)
        out: dict[str, Any] = {"role": role, "content": self.parts(message.content, role)}
        if message.id is not None and namespace:
            # input message items have no id key: one read so from this format is written back
            out["id"] = message.id
        return [self.with_fields(out, namespace, "", _input_message_key)]

    def nothing_kept(self, namespace: dict[str, Any], kind: str) -> None:
        """Refuse kept keys of a message written as the item its one part keeps whole: the
        item is written as it is, with no place for them (the reader keeps none there)."""
        for key, value in namespace.items():
            if key == "fields" and isinstance(value, dict):
                if not value:
                    continue
                key = f"fields.{next(iter(value))}"
                value = next(iter(value.values()))
            self.refuse(
                f"the {kind} item is kept whole and written as it is, with no place for the "
                f"message's kept {key} ({short_repr(value)})",
                f".metadata.{self.source}.{key}",
            )

    def output(
        self, message: ToolMessage, namespace: dict[str, Any], call: ToolCall | None
    ) -> dict[str, Any]:
        if message.tool_call_id is None:
            self.refuse("a Responses output item needs the call_id of its call", ".tool_call_id")
        if message.is_error:
            self.lose("Responses output items have no error flag (is_error=True)", ".is_error",
                      "is_error")
        kind = namespace.get("item")
        if kind is None:
            kind = _output_kind(call, self.source)
        elif kind not in _OUTPUT_TYPES:  # only hand-edited metadata: the reader keeps these
            self.malformed(f"metadata.{self.source}.item names the output item type, one of "
                           f"{', '.join(_OUTPUT_TYPES)}; got {short_repr(kind)}",
                           f".metadata.{self.source}.item")
        if namespace.get("output") == "absent" and kind != "apply_patch_call_output":
            self.refuse(
                f"output: 'absent' marks an apply_patch_call_output without output (the one "
                f"output item whose output is optional); {with_article(kind)} item needs its "
                "output",
                f".metadata.{self.source}.output",
            )
        out: dict[str, Any] = {"type": kind, "call_id": message.tool_call_id}
        if kind == "local_shell_call_output" and namespace.get("paired_by") != "call_id":
            out = {"type": kind, "id": message.tool_call_id}  # the API names the call by id
        if kind in ("function_call_output", "custom_tool_call_output"):
            out["output"] = self.parts(message.content, "output")
        elif namespace.get("output") == "json":
            out["output"] = self.json_text(message.content, ".content")
        elif namespace.get("output") == "absent" and message.content == "":
            pass  # an apply_patch_call_output without output
        else:
            out["output"] = self.text(message.content, ".content", kind)
        if message.name is not None:
            if kind == "function_call_output":
                out["name"] = message.name
            else:
                self.unnamed(f"{with_article(kind)} item has no tool name ({message.name!r})")
        if message.id is not None and namespace:
            # ids are provenance: only one read from this format is written back (the API
            # checks an item id's prefix, which an id from another format does not have)
            if "id" in out:
                self.refuse(
                    f"{with_article(kind)} item names its call with its id: it has no id of its "
                    f"own ({message.id!r})",
                    ".id",
                )
            out["id"] = message.id
        # the reader takes the output and the call id whatever they are, a string id, and a
        # function_call_output's string name
        named = ("id", "name") if kind == "function_call_output" else ("id",)
        return self.with_fields(out, namespace, "", lambda key, value: (
            key in ("output", "call_id") or (value is not None and key in named)
        ))


_OUTPUT_TYPES = tuple(CALL_OUTPUTS.values())


def _input_message_key(key: str, value: Any) -> bool:
    """Whether the reader takes this kept key of an input message into typed data: a
    string id, or a type other than "message" (another item's)."""
    return (key == "id" and value is not None) or (
        key == "type" and value not in ("message", None)
    )


def _output_kind(call: ToolCall | None, source: str) -> str:
    item = item_of(call, source) if call is not None else None
    if item is not None and item in CALL_OUTPUTS:
        return CALL_OUTPUTS[item]
    if call is not None and call.kind == "custom":
        return "custom_tool_call_output"
    return "function_call_output"
