"""Writing typed messages as Responses items: what the API produced, in its order.

An ``AIMessage`` becomes its items in order: reasoning and kept items where its content has
them, one assistant ``message`` item for its text and refusals (when it has any, an id or
citations), then one item per call. A hosted call is written together with the
``ToolMessage`` that holds its result, as the one item it was read from; every other
``ToolMessage`` is the output item of the call it answers.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from typing_extensions import assert_never

from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    Citation,
    HumanMessage,
    OpaquePart,
    Part,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    messages_of,
)
from tracebridge.validation import validate

from ..openai_chat._write import _arguments, unanswered_calls
from ._items import CALL_OUTPUTS, HOSTED_CALLS, OPAQUE_REPLY_ITEMS
from ._parts import ItemPartWriter
from ._read import is_item_part, would_write_message

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
    leaves out the names message items have no place for)."""
    unknown = sorted(set(drop) - set(DROPPABLE))
    if unknown:
        raise ValueError(f"drop={unknown} names nothing droppable; choose from {DROPPABLE}")
    typed = messages_of(messages)
    validate(typed, allow_pending=True, source=source)
    unanswered = unanswered_calls(typed)
    answered, hosted = _pairs(typed, source)
    # Call ids are unique in a valid conversation: one map serves every reply.
    results: dict[str | None, ToolMessage] = {}
    for t in hosted:
        result = typed[t]
        assert isinstance(result, ToolMessage)
        results[result.tool_call_id] = result
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
                    f"(a {written[0].get('type', 'message')} item right after a "
                    f"{previous[-1].get('type', 'message')} item)",
                    "",
                )
            previous = written or previous
        else:
            previous = None
        items.extend(written)
    return items


def _joins(previous: list[dict[str, Any]], first: dict[str, Any]) -> bool:
    """Whether a reply starting with ``first`` would be read as part of ``previous``."""
    spoke = any(item.get("role") == "assistant" for item in previous)
    last = previous[-1].get("type")
    called = last not in ("message", "reasoning", None) and last not in _KEPT_WHOLE
    kind = first.get("type", "message")
    if kind in ("message", "reasoning"):
        return not spoke and not called
    if kind in _KEPT_WHOLE:
        return not called
    return True  # a call joins the calls, or follows the content, of the reply before it


_KEPT_WHOLE = frozenset(OPAQUE_REPLY_ITEMS)


def _pairs(
    typed: list[AnyMessage], source: str
) -> tuple[dict[int, ToolCall], dict[int, ToolCall]]:
    """For each ToolMessage, the call it answers; those that answer a hosted call apart."""
    answered: dict[int, ToolCall] = {}
    hosted: dict[int, ToolCall] = {}
    calls: dict[str, ToolCall] = {}
    for i, message in enumerate(typed):
        if isinstance(message, AIMessage):
            calls = {call.id: call for call in message.tool_calls if call.id is not None}
        elif isinstance(message, ToolMessage):
            call = calls.get(message.tool_call_id) if message.tool_call_id is not None else None
            if call is not None:
                answered[i] = call
                if _item_of(call, source) in HOSTED_CALLS:
                    hosted[i] = call
        else:
            calls = {}
    return answered, hosted


def _item_of(call: ToolCall, source: str) -> str | None:
    kept = call.metadata.get(source)
    item = kept.get("item") if isinstance(kept, dict) else None
    return item if isinstance(item, str) else None


class _Writer(ItemPartWriter):
    """Writes the typed message at one index."""

    def __init__(
        self,
        source: str,
        index: int,
        drop: Collection[str],
        unanswered: Collection[int],
        drop_names: bool,
    ) -> None:
        super().__init__(source, index, drop)
        self.unanswered = unanswered
        self.drop_names = drop_names
        self.annotations: dict[int, list[dict[str, Any]]] = {}
        self.part_at = 0

    def message(
        self,
        message: AnyMessage,
        answered: dict[int, ToolCall],
        results: dict[str | None, ToolMessage],
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
                return [self.whole(content[0], ".content[0]", "item")]
        elif isinstance(message, SystemMessage):
            role = message.role
        else:
            assert_never(message)
        out: dict[str, Any] = {"role": role, "content": self.parts(message.content, role)}
        if message.id is not None:
            out["id"] = message.id
        return [self.with_fields(out, namespace)]

    def unnamed(self, what: str) -> None:
        """Refuse a name the item has no place for, unless ``drop_names`` leaves it out."""
        if not self.drop_names:
            self.refuse(f"{what}; pass drop_names=True to leave names out", ".name")

    def with_fields(self, out: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return out

    # -- tool outputs --

    def output(
        self, message: ToolMessage, namespace: dict[str, Any], call: ToolCall | None
    ) -> dict[str, Any]:
        if message.tool_call_id is None:
            self.refuse("a Responses output item needs the call_id of its call", ".tool_call_id")
        if message.is_error:
            self.lose("Responses output items have no error flag (is_error=True)", ".is_error",
                      "is_error")
        kind = namespace.get("item")
        if not isinstance(kind, str):
            kind = _output_kind(call, self.source)
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
                self.unnamed(f"a {kind} item has no tool name ({message.name!r})")
        if message.id is not None:
            if "id" in out:
                self.refuse(
                    f"a {kind} item names its call with its id: it has no id of its own "
                    f"({message.id!r})",
                    ".id",
                )
            out["id"] = message.id
        return self.with_fields(out, namespace)

    def text(self, content: Any, path: str, what: str) -> str:
        if not isinstance(content, str):
            self.refuse(f"a {what} holds its output as text, not parts", path)
        return content

    def json_text(self, content: Any, path: str) -> Any:
        text = self.text(content, path, "JSON output")
        try:
            return json.loads(text)
        except ValueError:
            self.refuse(f"the output was read as JSON and is no longer JSON: {text[:60]!r}", path)

    # -- replies --

    def reply(
        self, message: AIMessage, namespace: dict[str, Any], results: dict[str | None, ToolMessage]
    ) -> list[dict[str, Any]]:
        if message.name is not None:
            self.unnamed(f"a Responses reply has no agent name ({message.name!r})")
        if message.audio is not None:
            self.lose("a Responses reply has no audio reply", ".audio", "audio_replies")
        items = self.content_items(message, namespace)
        for k, call in enumerate(message.tool_calls):
            if k in self.unanswered:
                self.lose(
                    f"tool call {call.name!r} has no result: the API rejects a call item "
                    "without its output",
                    f".tool_calls[{k}]",
                    "unanswered_calls",
                )
                continue
            items.append(self.call(call, f".tool_calls[{k}]", results.get(call.id)))
        return items

    def content_items(self, message: AIMessage, namespace: dict[str, Any]) -> list[dict[str, Any]]:
        content = message.content
        parts = [] if isinstance(content, str) else list(content)
        spoken = [j for j, part in enumerate(parts) if not is_item_part(part, self.source)]
        if spoken and spoken != list(range(spoken[0], spoken[-1] + 1)):
            self.refuse(
                "a Responses reply holds its text in one message item: reasoning or a kept item "
                "between its parts cannot be placed",
                f".content[{spoken[0]}]",
            )
        at = namespace.get("message")
        writes = would_write_message(
            content, message.id, message.citations, message.tool_calls, self.source
        )
        if spoken:
            at = spoken[0]
        elif not isinstance(at, int) or not 0 <= at <= len(parts):
            at = len(parts) if writes else None
        items: list[dict[str, Any]] = []
        for j, part in enumerate([*parts, None]):
            if j == at:
                items.append(self.reply_message(message, namespace, [parts[k] for k in spoken]))
            if part is None or j in spoken:
                continue
            if isinstance(part, ReasoningPart):
                reasoning = self.reasoning(part, f".content[{j}]")
                if reasoning is not None:
                    items.append(reasoning)
            else:
                assert isinstance(part, OpaquePart)  # is_item_part: an item kept whole
                items.append(self.whole(part, f".content[{j}]", "item"))
        return items

    def reply_message(
        self, message: AIMessage, namespace: dict[str, Any], spoken: list[Part]
    ) -> dict[str, Any]:
        content = message.content
        out: dict[str, Any] = {"role": "assistant"}
        text = None
        if isinstance(content, str):
            text = content
        elif namespace.get("content") == "string" and (
            not spoken or (len(spoken) == 1 and type(spoken[0]) is TextPart)
        ):
            text = spoken[0].text if spoken else ""  # type: ignore[union-attr]
        if text is not None and not message.citations:
            out["content"] = text
        else:
            parts: list[Part] = [TextPart(text=text)] if text is not None else spoken
            self.place_citations(message.citations, parts)
            written = []
            for j, part in enumerate(parts):
                self.part_at = j
                item = self.item_part(part, f".content[{j}]", "assistant")
                if item is not None:
                    written.append(item)
            out["content"] = written
            if namespace.get("type") != "absent":
                out["type"] = "message"
        if message.id is not None:
            out["id"] = message.id
        return self.with_fields(out, namespace)

    def place_citations(self, citations: list[Citation], parts: list[Part]) -> None:
        texts = [j for j, part in enumerate(parts) if isinstance(part, TextPart)]
        for k, citation in enumerate(citations):
            annotation = self.annotation(citation, f".citations[{k}]")
            if annotation is None:
                continue
            if not texts:
                self.lose("a citation needs an output_text part to annotate", f".citations[{k}]",
                          "citations")
                continue
            part = self.namespace(citation.metadata).get("part")
            if not (isinstance(part, int) and part in texts):
                part = texts[0]
            self.annotations.setdefault(part, []).append(annotation)

    def annotation(self, citation: Citation, path: str) -> dict[str, Any] | None:
        fields = {
            key: getattr(citation, key) for key in ("url", "title", "start_index", "end_index")
        }
        missing = [key for key, value in fields.items() if value is None]
        if missing or citation.cited_text is not None:
            what = (
                f"a url_citation annotation needs {', '.join(missing)}"
                if missing
                else f"a url_citation annotation has no place for the cited text "
                f"({citation.cited_text!r})"
            )
            self.lose(what, path, "citations")
            if missing:
                return None
        out: dict[str, Any] = {"type": "url_citation", **fields}
        return self.with_fields(out, self.namespace(citation.metadata))

    def output_text(self, part: TextPart, namespace: dict[str, Any], out: dict[str, Any]) -> None:
        cited = self.annotations.get(self.part_at, [])
        layout = namespace.get("annotations")
        if layout == "absent" and not cited:
            return
        if not isinstance(layout, list):
            out["annotations"] = cited
            return
        kept = [entry for entry in layout if entry is not None]
        if len(kept) + len(cited) != len(layout):
            out["annotations"] = cited + kept  # edited: the citations first
            return
        given = iter(cited)
        out["annotations"] = [next(given) if entry is None else entry for entry in layout]

    def reasoning(self, part: ReasoningPart, path: str) -> dict[str, Any] | None:
        namespace = self.namespace(part.metadata)
        item_id = namespace.get("id")
        if not isinstance(item_id, str):
            self.lose(
                "a reasoning item needs the id the API gave it (a reasoning part from another "
                "format has none)",
                path,
                "reasoning",
            )
            return None
        summary = namespace.get("summary")
        if not (
            isinstance(summary, list)
            and all(isinstance(entry, dict) for entry in summary)
            and "\n\n".join(str(entry.get("text")) for entry in summary) == part.text
        ):
            summary = [{"type": "summary_text", "text": part.text}]
        out = {"type": "reasoning", "id": item_id, "summary": summary}
        return self.with_fields(out, namespace)

    # -- calls --

    def call(self, call: ToolCall, path: str, result: ToolMessage | None) -> dict[str, Any]:
        if call.id is None:
            self.refuse("a Responses call item needs a call id", f"{path}.id")
        namespace = self.namespace(call.metadata)
        kind = _item_of(call, self.source)
        out: dict[str, Any]
        if kind in HOSTED_CALLS:
            return self.hosted(call, kind, path, result)
        if kind in CALL_OUTPUTS:
            out = {"type": kind, "call_id": call.id, **call.args}
            if "status" in namespace:
                out["status"] = namespace["status"]
        elif call.kind == "custom":
            out = {
                "type": "custom_tool_call",
                "call_id": call.id,
                "name": call.name,
                "input": call.args["input"],
            }
        else:
            out = {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": _arguments(call, namespace.get("arguments")),
            }
        if "id" in namespace:
            out["id"] = namespace["id"]
        return self.with_fields(out, namespace)

    def hosted(
        self, call: ToolCall, kind: str, path: str, result: ToolMessage | None
    ) -> dict[str, Any]:
        if result is None:
            self.refuse(f"a {kind} item holds its result, and none follows the call", path)
        result_path = f"{path} (result)"
        if result.is_error:
            self.lose(f"a {kind} item has no error flag (is_error=True)", result_path, "is_error")
        if result.name not in (None, call.name):
            self.refuse(
                f"the result of a {kind} item is named for its call ({call.name!r}), not "
                f"{result.name!r}",
                result_path,
            )
        fields = self.json_text(result.content, result_path)
        if not isinstance(fields, dict):
            self.refuse(f"the result of a {kind} item must be a JSON object", result_path)
        return {"type": kind, "id": call.id, **call.args, **fields}


def _output_kind(call: ToolCall | None, source: str) -> str:
    item = _item_of(call, source) if call is not None else None
    if item is not None and item in CALL_OUTPUTS:
        return CALL_OUTPUTS[item]
    if call is not None and call.kind == "custom":
        return "custom_tool_call_output"
    return "function_call_output"
