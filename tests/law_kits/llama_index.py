"""Law kit for LlamaIndex ``ChatMessage`` lists (objects and ``model_dump(mode="json")`` dicts).

Traces are built from valid typed conversations written out by ``from_messages`` and then
varied the ways real histories vary: the other roles (developer, chatbot, model, function),
tool calls as JSON-string ``tool_kwargs``, in ``additional_kwargs["tool_calls"]`` (OpenAI
dicts or SDK objects, ToolSelections) as well as or instead of ``ToolCallBlock``s, blocks
before the calls, results linked by ``call_id``, extra kwargs, and every other block type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    ChatMessage,
    CitableBlock,
    CitationBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    VideoBlock,
)
from llama_index.core.tools import ToolSelection
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    Message,
    OpaquePart,
    TextPart,
    ToolMessage,
)
from tracebridge.adapters import llama_index as adapter

from law_kits import BrokenTrace, LawKit
from strategies import (
    Broken,
    Shape,
    conversations,
    json_objects,
    mutations,
    names,
    tool_conversations,
)

SHAPE = Shape(metadata=False, message_ids=False)
"""A ChatMessage has no message id, and ``from_messages`` reads only its own metadata."""

ROLE_VARIANTS = {
    "system": ["system", "developer"],
    "assistant": ["assistant", "chatbot", "model"],
    "tool": ["tool", "function"],
    "user": ["user"],
}


def canonical(trace: list[Any]) -> list[Any]:
    """ChatMessage objects as their JSON dump; dicts (already dumps) as they are."""
    return [m if isinstance(m, dict) else m.model_dump(mode="json") for m in trace]


# --- typed conversations the format can express ------------------------------------------


def _expressible_part(part: Any) -> Any:
    if isinstance(part, AudioPart):
        return part.model_copy(update={"mime_type": None})
    if isinstance(part, FilePart):
        filename = part.filename if part.filename != "input_document" else None
        return FilePart(data="JVBERi0=", filename=filename, mime_type=part.mime_type)
    if isinstance(part, OpaquePart):
        block = CachePoint(cache_control=CacheControl(type=part.kind)).model_dump(mode="json")
        return OpaquePart(kind="cache", value=block)
    return part


def _expressible_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts = [_expressible_part(part) for part in content]
    # One text block is how LlamaIndex writes a plain string: the two cannot be told apart.
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return parts


def expressible(messages: list[Any]) -> list[Any]:
    """The closest conversation a ChatMessage list can hold (no error flags, no file ids,
    no audio mimetypes, opaque parts only as LlamaIndex blocks)."""
    out = []
    for message in messages:
        if not hasattr(message, "content"):
            out.append(message)
            continue
        update: dict[str, Any] = {"content": _expressible_content(message.content)}
        if isinstance(message, ToolMessage):
            update["is_error"] = False
        out.append(message.model_copy(update=update))
    return out


def typed_conversations() -> st.SearchStrategy[list[Message]]:
    return conversations(SHAPE).map(expressible)


# --- native traces -----------------------------------------------------------------------

_EXTRA_BLOCKS = [
    CachePoint(cache_control=CacheControl(type="ephemeral")),
    CitableBlock(title="Doc", source="https://example.com/d", content=[TextBlock(text="cite me")]),
    CitationBlock(
        cited_content=TextBlock(text="quoted"),
        source="https://example.com/d",
        title="Doc",
        additional_location_info={"start": 0, "end": 6},
    ),
    ThinkingBlock(content="let me think", num_tokens=3, additional_information={"sig": "abc"}),
    ThinkingBlock(content=None),
    VideoBlock(url="https://example.com/v.mp4", fps=24),
    ImageBlock(image=b"iVBORw0KGgo=", image_mimetype="image/png", detail="high"),
    ImageBlock(path=Path(__file__)),  # a path must name a file that exists
    DocumentBlock(path="/srv/reports/q3.pdf"),
    AudioBlock(audio=b"UklGRg==", format="wav"),
    DocumentBlock(url="https://example.com/a.pdf", title="report.pdf"),
]


def _entry(block: dict[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": block["tool_call_id"],
        "type": "function",
        "function": {"name": block["tool_name"], "arguments": arguments},
    }


def _arguments_text(draw: st.DrawFn, kwargs: Any) -> str:
    if isinstance(kwargs, str):
        return kwargs
    return json.dumps(kwargs, indent=draw(st.sampled_from([None, 2])))


def _any_entry(draw: st.DrawFn, block: dict[str, Any], with_id: bool) -> dict[str, Any]:
    """The call as an OpenAI-shaped entry, or as a ToolSelection when its kwargs are a dict."""
    kwargs = block["tool_kwargs"]
    if isinstance(kwargs, dict) and draw(st.booleans()):
        entry = {"tool_id": block["tool_call_id"], "tool_name": block["tool_name"],
                 "tool_kwargs": kwargs}
        id_key = "tool_id"
    else:
        entry, id_key = _entry(block, _arguments_text(draw, kwargs)), "id"
    if not with_id:
        del entry[id_key]
    return entry


def _as_object(entry: dict[str, Any]) -> Any:
    if "tool_name" in entry:
        return ToolSelection.model_validate(entry)
    return ChatCompletionMessageFunctionToolCall.model_validate(entry)


def _vary_ai(draw: st.DrawFn, dump: dict[str, Any]) -> None:
    blocks = dump["blocks"]
    calls = [b for b in blocks if b["block_type"] == "tool_call"]
    for block in calls:
        if isinstance(block["tool_kwargs"], dict) and draw(st.booleans()):
            block["tool_kwargs"] = _arguments_text(draw, block["tool_kwargs"])
    if not calls:
        return
    with_ids = all(b["tool_call_id"] is not None for b in calls)
    mode = draw(st.sampled_from(["blocks", "both", "kwargs"] if with_ids else ["blocks", "kwargs"]))
    if mode != "blocks":
        entries = [_any_entry(draw, b, with_ids) for b in calls]
        dump["additional_kwargs"]["tool_calls"] = entries
    if mode == "kwargs":
        dump["blocks"] = [b for b in blocks if b["block_type"] != "tool_call"]
    elif draw(st.booleans()):
        dump["blocks"] = [*calls[:1], *[b for b in blocks if b is not calls[0]]]


@st.composite
def chat_histories(draw: st.DrawFn) -> list[Any]:
    """A valid ChatMessage list (objects, dicts, or both) in the shapes real histories take."""
    messages = draw(typed_conversations())
    dumps = [m.model_dump(mode="json") for m in adapter.from_messages(messages)]
    sdk_objects = draw(st.booleans())
    trace: list[Any] = []
    for dump in dumps:
        dump["role"] = draw(st.sampled_from(ROLE_VARIANTS[dump["role"]]))
        kwargs = dump["additional_kwargs"]
        if draw(st.booleans()):
            kwargs["provider_field"] = draw(json_objects)
        if "tool_call_id" in kwargs and draw(st.booleans()):
            kwargs["call_id"] = kwargs.pop("tool_call_id")
        if dump["role"] in ROLE_VARIANTS["assistant"]:
            _vary_ai(draw, dump)
        for block in draw(st.lists(st.sampled_from(_EXTRA_BLOCKS), max_size=2)):
            dump["blocks"].append(block.model_dump(mode="json"))
        if draw(st.booleans()):
            trace.append(dump)
            continue
        entries = dump["additional_kwargs"].get("tool_calls")
        if sdk_objects and entries and all("id" in e or "tool_id" in e for e in entries):
            dump["additional_kwargs"]["tool_calls"] = [_as_object(e) for e in entries]
        trace.append(ChatMessage.model_validate(dump))
    return trace


# --- broken traces -----------------------------------------------------------------------


def _written(broken: Broken) -> BrokenTrace:
    messages = adapter.from_messages(expressible(broken.messages), drop={"is_error"})
    return BrokenTrace(messages, broken.code, broken.index)


@st.composite
def unknown_roles(draw: st.DrawFn) -> BrokenTrace:
    trace = canonical(draw(chat_histories()))
    at = draw(st.integers(0, len(trace) - 1))
    trace[at]["role"] = draw(st.sampled_from(["robot", "human", "ai", "Assistant", ""]))
    return BrokenTrace(trace, "unknown_role", at)


@st.composite
def conflicting_calls(draw: st.DrawFn) -> BrokenTrace:
    """A call whose ``additional_kwargs`` entry disagrees with its ToolCallBlock."""
    messages = draw(tool_conversations(SHAPE).map(expressible))
    trace = [m.model_dump(mode="json") for m in adapter.from_messages(messages)]
    openers = [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and m.tool_calls]
    at = draw(st.sampled_from(openers))
    block = next(b for b in trace[at]["blocks"] if b["block_type"] == "tool_call")
    entry = _entry(block, json.dumps({"__conflict__": draw(names)}))
    if draw(st.booleans()):
        entry["function"] = {"name": block["tool_name"] + "_other", "arguments": "{}"}
    trace[at]["additional_kwargs"]["tool_calls"] = [entry]
    return BrokenTrace(trace, "conflicting_fields", at)


@st.composite
def malformed_messages(draw: st.DrawFn) -> BrokenTrace:
    trace = canonical(draw(chat_histories()))
    at = draw(st.integers(0, len(trace) - 1))
    trace[at]["blocks"] = draw(st.sampled_from(["text", None, {"block_type": "text"}]))
    return BrokenTrace(trace, "malformed_event", at)


KIT = LawKit(
    traces=chat_histories(),
    conversations=typed_conversations(),
    broken=st.one_of(
        mutations(SHAPE).map(_written),
        unknown_roles(),
        conflicting_calls(),
        malformed_messages(),
    ),
    canonical=canonical,
)
