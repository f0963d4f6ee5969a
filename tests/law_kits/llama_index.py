"""Law kit for LlamaIndex ``ChatMessage`` lists (objects and ``model_dump(mode="json")`` dicts).

Typed conversations use every typed home a ChatMessage holds: the developer role, refusals
(the last part of an assistant message), image detail, audio mime types, spoken replies (by
``reference_audio_id`` with their data block, or as OpenAI's ``audio`` dict), citations
without cited text, custom tool calls.

Traces are built from them, written out by ``from_messages``, and then varied the ways real
histories vary: the other roles (chatbot, model, function), tool calls as JSON-string
``tool_kwargs``, in ``additional_kwargs["tool_calls"]`` (OpenAI dicts or SDK objects,
ToolSelections) as well as or instead of ``ToolCallBlock``s, blocks before the calls, results
linked by ``call_id``, extra kwargs, audio format spellings, every other block type, the
residue of OpenAI dicts (``refusal: None``, ``annotations: []``, ...), and the legacy shapes:
``function_call`` answered by a ``function`` message, and ``images`` of ``ImageDocument``s.
An assistant's reasoning is also given as ``from_openai_message_dict`` keeps a compatible
API's reply: ``reasoning_content`` and/or ``reasoning`` text (a first part marked ``from``
them in typed conversations), or a null value beside the others.
"""

from __future__ import annotations

import json
from dataclasses import replace
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
from llama_index.core.schema import ImageDocument
from llama_index.core.tools import ToolSelection
from openai.types.chat import (
    ChatCompletionMessageCustomToolCall,
    ChatCompletionMessageFunctionToolCall,
)

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolMessage,
)
from tracebridge.adapters import llama_index as adapter
from tracebridge.media import audio_format, canonical_audio_mime_type

from law_kits import BrokenTrace, LawKit
from strategies import (
    Broken,
    Shape,
    conversations,
    json_objects,
    mutations,
    names,
    rule_mutations,
    tool_conversations,
)

SHAPE = Shape(metadata=False, message_ids=False)
"""A ChatMessage has no message id, and ``from_messages`` reads only its own metadata;
every typed home has a place (``expressible`` narrows the few values that do not).

No generated metadata (``metadata=False``): the faithful law needs ``to_messages`` to give back
all of ``m``, and the format carries only the keys of ``metadata["llama_index"]`` its writer
owns, each with its own meaning; a namespace of any keys (what ``strategies.metadata`` draws) is
another adapter's or a wrong one, which the writer leaves out by design
(``test_from_messages_reads_only_its_own_namespace``). The owned keys are built where this kit
draws them (reasoning marks) and, from real ChatMessages, in ``traces`` (the lossless law)."""

ROLE_VARIANTS = {
    "system": ["system", "developer"],
    "developer": ["developer", "system"],
    "assistant": ["assistant", "chatbot", "model"],
    "tool": ["tool", "function"],
    "function": ["function", "tool"],
    "user": ["user"],
}


def canonical(trace: list[Any]) -> list[Any]:
    """ChatMessage objects as their JSON dump; dicts (already dumps) as they are."""
    return [m if isinstance(m, dict) else m.model_dump(mode="json") for m in trace]


# --- typed conversations the format can express ------------------------------------------


def _audio_mime(mime_type: str | None) -> str | None:
    """What an AudioBlock's format gives back: the table's spelling, None for no audio type."""
    if mime_type is None or audio_format(mime_type) is None:
        return None
    return canonical_audio_mime_type(mime_type)


def _expressible_part(part: Any) -> Any:
    if isinstance(part, AudioPart):
        return part.model_copy(update={"mime_type": _audio_mime(part.mime_type)})
    if (
        isinstance(part, ImagePart)
        and part.data is None
        and part.mime_type is not None
        and ImageBlock(url=part.url).image_mimetype == part.mime_type
    ):
        # LlamaIndex derives this type from the URL: a ChatMessage cannot say it was given.
        return part.model_copy(update={"mime_type": None})
    if isinstance(part, FilePart):
        filename = part.filename if part.filename != "input_document" else None
        return FilePart(data="JVBERi0=", filename=filename, mime_type=part.mime_type)
    if isinstance(part, OpaquePart):
        block = CachePoint(cache_control=CacheControl(type=part.kind)).model_dump(mode="json")
        return OpaquePart(kind="cache", value=block)
    return part


def _expressible_content(content: Any, is_ai: bool) -> Any:
    if isinstance(content, str):
        return content
    parts = [_expressible_part(part) for part in content]
    # One refusal, the last part of an assistant message: any other one says it as text.
    parts = [
        TextPart(text=part.text)
        if isinstance(part, RefusalPart) and not (is_ai and k == len(parts) - 1)
        else part
        for k, part in enumerate(parts)
    ]
    # One text block is how LlamaIndex writes a plain string: the two cannot be told apart.
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return parts


def expressible(messages: list[Any]) -> list[Any]:
    """The closest conversation a ChatMessage list can hold (no error flags, no file ids,
    audio mime types as the table spells them, no image mime type LlamaIndex derives from the
    URL, one trailing refusal per assistant message, no cited text, opaque parts only as
    LlamaIndex blocks)."""
    out = []
    for message in messages:
        if not hasattr(message, "content"):
            out.append(message)
            continue
        is_ai = isinstance(message, AIMessage)
        update: dict[str, Any] = {"content": _expressible_content(message.content, is_ai)}
        if isinstance(message, ToolMessage):
            update["is_error"] = False
        if is_ai:
            update["citations"] = [_as_read(c) for c in message.citations]
        out.append(message.model_copy(update=update))
    return out


def _as_read(cited: Any) -> Any:
    """A citation without cited text, as the reader reads an OpenAI url_citation entry that
    leaves out the keys it has no value for (listed as ``absent``): OpenAI takes only whole
    ones from elsewhere."""
    update: dict[str, Any] = {"cited_text": None}
    absent = [key for key in ("url", "title", "start_index", "end_index")
              if getattr(cited, key) is None]
    if absent:
        update["metadata"] = {**cited.metadata, "llama_index": {"absent": absent}}
    return cited.model_copy(update=update)


_REASONING_MARKS = [None, {"from": "reasoning_content"}, {"from": "reasoning"},
                    {"from": "reasoning_content", "also": "reasoning"},
                    {"from": "reasoning", "also": "reasoning_content"}]
"""How an assistant's reasoning read from ``additional_kwargs`` is marked (None: none)."""


def _with_reasoning(messages: list[Any], marks: list[Any]) -> list[Any]:
    """Each assistant message with a first reasoning part marked as read from the keys its
    mark names (the rest of its content as parts)."""
    out = []
    for message, mark in zip(messages, marks, strict=True):
        if isinstance(message, AIMessage) and mark is not None:
            content = message.content
            rest = ([TextPart(text=content)] if isinstance(content, str) else list(content))
            first = ReasoningPart(text=f"thought {len(out)}", metadata={"llama_index": mark})
            message = message.model_copy(update={"content": [first, *rest]})
        out.append(message)
    return out


def typed_conversations() -> st.SearchStrategy[list[Message]]:
    return conversations(SHAPE).map(expressible).flatmap(lambda messages: st.lists(
        st.sampled_from(_REASONING_MARKS), min_size=len(messages), max_size=len(messages)
    ).map(lambda marks: _with_reasoning(messages, marks)))


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
    if entry.get("type") == "custom":
        return ChatCompletionMessageCustomToolCall.model_validate(entry)
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
        # Custom calls (written as entries only) come after the block calls: they stay there.
        after = dump["additional_kwargs"].get("tool_calls", [])
        entries = [_any_entry(draw, b, with_ids) for b in calls]
        dump["additional_kwargs"]["tool_calls"] = entries + after
    if mode == "kwargs":
        dump["blocks"] = [b for b in blocks if b["block_type"] != "tool_call"]
    elif draw(st.booleans()):
        dump["blocks"] = [*calls[:1], *[b for b in blocks if b is not calls[0]]]


_REASONING_KEYS = ("reasoning_content", "reasoning")

# What ``from_openai_message_dict`` leaves in the kwargs of an assistant message dict.
_OPENAI_RESIDUE = {"refusal": None, "audio": None, "annotations": [], "function_call": None,
                   "tool_calls": None}

# A format as different sources spell it: each reads as the table's mime type.
_FORMAT_SPELLINGS = {"wav": ["wav", "WAV", "wave", "x-wav"], "mp3": ["mp3", "mpeg", "mp3"]}

PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def _vary_blocks(draw: st.DrawFn, dump: dict[str, Any]) -> None:
    for block in dump["blocks"]:
        if block["block_type"] == "audio" and block["format"] in _FORMAT_SPELLINGS:
            block["format"] = draw(st.sampled_from(_FORMAT_SPELLINGS[block["format"]]))
    for block in draw(st.lists(st.sampled_from(_EXTRA_BLOCKS), max_size=2)):
        dump["blocks"].append(block.model_dump(mode="json"))


def _legacy_turn(draw: st.DrawFn) -> list[Any]:
    """A user turn in the legacy shapes: images as ``ImageDocument``s, and OpenAI's deprecated
    ``function_call`` answered by a ``function`` message (no ids: paired by position)."""
    name = draw(names)
    arguments = json.dumps(draw(json_objects), indent=draw(st.sampled_from([None, 2])))
    residue = _OPENAI_RESIDUE if draw(st.booleans()) else {}
    question = ChatMessage(role="user", content=draw(st.text(max_size=10)), additional_kwargs={
        "images": [ImageDocument(image=PIXEL_PNG)] if draw(st.booleans()) else []})
    turn = [
        question,
        ChatMessage(role="assistant", blocks=[], additional_kwargs={
            **residue, "function_call": {"name": name, "arguments": arguments}}),
        ChatMessage(role="function", content=draw(st.text(max_size=10)),
                    additional_kwargs={"name": name}),
    ]
    if draw(st.booleans()):
        turn.append(ChatMessage(role="assistant", content="done", additional_kwargs=residue))
    return turn


@st.composite
def chat_histories(draw: st.DrawFn) -> list[Any]:
    """A valid ChatMessage list (objects, dicts, or both) in the shapes real histories take."""
    messages = draw(typed_conversations())
    written = adapter.from_messages(messages)
    if draw(st.booleans()):
        written += _legacy_turn(draw)
    dumps = [m.model_dump(mode="json") for m in written]
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
            free = [key for key in _REASONING_KEYS if key not in dump["additional_kwargs"]]
            if free and draw(st.booleans()):  # a null reasoning key, as an API may send
                dump["additional_kwargs"][draw(st.sampled_from(free))] = None
            if draw(st.booleans()):
                dump["additional_kwargs"] = {**_OPENAI_RESIDUE, **kwargs}
        _vary_blocks(draw, dump)
        if draw(st.booleans()):
            trace.append(dump)
            continue
        entries = dump["additional_kwargs"].get("tool_calls")
        if sdk_objects and entries and all("id" in e or "tool_id" in e for e in entries):
            dump["additional_kwargs"]["tool_calls"] = [_as_object(e) for e in entries]
        images = dump["additional_kwargs"].pop("images", None)
        message = ChatMessage.model_validate(dump)
        if images is not None:  # attached as the object had them, not appended once more
            message.additional_kwargs["images"] = [ImageDocument.model_validate(d)
                                                  for d in images]
        trace.append(message)
    return trace


# --- broken traces -----------------------------------------------------------------------


def _written(broken: Broken) -> BrokenTrace:
    # The writer without its rule check: from_messages refuses a broken conversation whole.
    messages = adapter.each_written(expressible(broken.messages), frozenset({"is_error"}))
    return BrokenTrace(messages, broken.code, broken.index, broken.path)


@st.composite
def unknown_roles(draw: st.DrawFn) -> BrokenTrace:
    trace = canonical(draw(chat_histories()))
    at = draw(st.integers(0, len(trace) - 1))
    trace[at]["role"] = draw(st.sampled_from(["robot", "human", "ai", "Assistant", ""]))
    return BrokenTrace(trace, "unknown_role", at, f"messages[{at}].role")


@st.composite
def conflicting_calls(draw: st.DrawFn) -> BrokenTrace:
    """A call whose ``additional_kwargs`` entry disagrees with its ToolCallBlock (custom calls
    have no block)."""
    messages = draw(tool_conversations(replace(SHAPE, custom_calls=False)).map(expressible))
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


RULES = {
    "unknown_role": unknown_roles(),
    **{code: mutation.map(_written) for code, mutation in rule_mutations(SHAPE).items()},
}

KIT = LawKit(
    traces=chat_histories(),
    conversations=typed_conversations(),
    rules=RULES,
    broken=st.one_of(
        mutations(SHAPE).map(_written),
        unknown_roles(),
        conflicting_calls(),
        malformed_messages(),
    ),
    canonical=canonical,
)
