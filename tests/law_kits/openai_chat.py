"""Law kit for OpenAI Chat Completions message lists (dicts mixed with SDK objects).

* ``conversations``: typed conversations the format expresses: ids on every call (or one
  id-less call answered by a legacy ``function`` message), no message ids, no error flags,
  parts the format has (text, image URL or base64 with a mime type, input audio, files by
  id or data, refusal and other provider parts kept opaque).
* ``traces``: those conversations written out, then re-spelled the ways real histories are:
  argument JSON with other spacing and key order, null-valued optional keys, keys left out,
  unknown keys, ``developer`` prompts, and assistant messages as ``ChatCompletionMessage``
  objects.
* ``broken``: the rule mutations of ``strategies`` written out, and format errors (unknown
  role, non-dict element, no role, tool result without ``tool_call_id``, a streaming delta,
  arguments that are not a string).
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessage

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.adapters import openai_chat

from law_kits import BrokenTrace, LawKit
from strategies import (
    Broken,
    Shape,
    conversations,
    json_objects,
    json_values,
    mutations,
    names,
    texts,
)

SHAPE = Shape(parts=False, metadata=False, message_ids=False)

# --- typed conversations the format expresses ---------------------------------------------


def parts(namespace: str) -> st.SearchStrategy[Any]:
    detail = st.sampled_from(["auto", "low", "high"]).map(
        lambda d: {namespace: {"inner": {"detail": d}}}
    )
    other_kinds = names.filter(lambda k: k not in ("text", "image_url", "input_audio", "file"))
    return st.one_of(
        st.builds(TextPart, text=texts),
        st.builds(
            ImagePart, url=st.just("https://example.com/a.png"), metadata=st.just({}) | detail
        ),
        st.builds(ImagePart, data=st.just("iVBORw0KGgo="), mime_type=st.just("image/png")),
        st.builds(
            AudioPart,
            data=st.just("UklGRg=="),
            mime_type=st.sampled_from(["audio/wav", "audio/mp3"]),
        ),
        st.builds(FilePart, file_id=names, filename=st.none() | names),
        st.builds(
            FilePart,
            data=st.just("JVBERi0x"),
            mime_type=st.none() | st.just("application/pdf"),
            filename=st.none() | names,
        ),
        texts.map(lambda t: OpaquePart(kind="refusal", value={"type": "refusal", "refusal": t})),
        st.builds(
            lambda kind, fields: OpaquePart(kind=kind, value={**fields, "type": kind}),
            other_kinds,
            json_objects,
        ),
    )


def content(namespace: str) -> st.SearchStrategy[Any]:
    return st.one_of(texts, st.lists(parts(namespace), max_size=3))


@st.composite
def _expressible(draw: st.DrawFn, namespace: str) -> list[Message]:
    """A generated conversation with representable contents and no error flags."""
    messages = draw(conversations(SHAPE))
    out: list[Message] = []
    for message in messages:
        update: dict[str, Any] = {"content": draw(content(namespace))}
        if isinstance(message, ToolMessage):
            update["is_error"] = False
        if isinstance(message, AIMessage) and message.tool_calls:
            update["tool_calls"] = [
                custom_call(call, namespace, draw(texts)) if draw(st.integers(0, 3)) == 0 else call
                for call in message.tool_calls
            ]
        if isinstance(message, SystemMessage) and draw(st.booleans()):
            update["metadata"] = {namespace: {"role": "developer"}}
        if isinstance(message, AIMessage) and draw(st.integers(0, 5)) == 0:
            refusal = OpaquePart(kind="refusal", value={"type": "refusal", "refusal": draw(texts)})
            update["content"] = [refusal]
            update["metadata"] = {namespace: {"refusal": draw(st.sampled_from(["null", "absent"]))}}
        elif isinstance(message, AIMessage) and draw(st.booleans()):
            update["content"] = ""
            update["metadata"] = {
                namespace: draw(
                    st.sampled_from(
                        [
                            {"content": "null"},
                            {"content": "absent"},
                            {"content": "null", "fields": {"refusal": None, "annotations": []}},
                        ]
                    )
                )
            }
        out.append(type(message).model_validate({**dict(message), **update}))
    return out


def custom_call(call: ToolCall, namespace: str, text: str) -> ToolCall:
    """A custom-tool call (free-text input) in place of ``call``."""
    return ToolCall(
        name=call.name, args={"input": text}, id=call.id, metadata={namespace: {"type": "custom"}}
    )


@st.composite
def legacy_function_conversations(draw: st.DrawFn) -> list[Message]:
    """The legacy shape: one id-less ``function_call`` answered by a ``function`` message."""
    name = draw(names)
    call = ToolCall(name=name, args=draw(json_objects))
    return [
        HumanMessage(content=draw(texts)),
        AIMessage(content=draw(st.just("") | texts), tool_calls=[call]),
        ToolMessage(content=draw(texts), name=name),
        AIMessage(content=draw(texts)),
    ]


def expressible(namespace: str) -> st.SearchStrategy[list[Message]]:
    return st.one_of(_expressible(namespace), legacy_function_conversations())


# --- traces as real histories spell them ----------------------------------------------------


def _respell_arguments(draw: st.DrawFn, function: dict[str, Any]) -> None:
    args = openai_chat.parse_arguments(function["arguments"])
    if args is None or not draw(st.booleans()):
        return
    style = draw(st.sampled_from(["compact", "sorted", "indented", "spaced"]))
    if style == "compact":
        function["arguments"] = json.dumps(args, separators=(",", ":"))
    elif style == "sorted":
        function["arguments"] = json.dumps(args, sort_keys=True, ensure_ascii=False)
    elif style == "indented":
        function["arguments"] = json.dumps(args, indent=2)
    else:
        function["arguments"] = " " + json.dumps(args) + "\n"


@st.composite
def respelled(draw: st.DrawFn, adapter: ModuleType) -> list[dict[str, Any]]:
    """A history written by ``adapter`` and re-spelled the ways real histories differ."""
    history: list[dict[str, Any]] = adapter.from_messages(draw(expressible(adapter.NAME)))
    for message in history:
        for call in message.get("tool_calls") or []:
            if call["type"] == "function":
                _respell_arguments(draw, call["function"])
            if draw(st.integers(0, 9)) == 0:
                call["x_trace"] = draw(json_values)
        if "function_call" in message:
            _respell_arguments(draw, message["function_call"])
        if message["role"] == "assistant" and draw(st.booleans()):
            for key in draw(st.sets(st.sampled_from(["refusal", "annotations", "audio"]))):
                message.setdefault(key, None)
            if "tool_calls" not in message and "function_call" not in message:
                message[draw(st.sampled_from(["tool_calls", "function_call"]))] = None
        if message["role"] in ("user", "system") and "name" not in message and draw(st.booleans()):
            message["name"] = None
        if draw(st.integers(0, 9)) == 0:
            message["x_trace"] = draw(json_values)
        for part in message["content"] if isinstance(message.get("content"), list) else []:
            if part["type"] in ("text", "image_url") and draw(st.integers(0, 4)) == 0:
                part["x_cache"] = {"mode": "explicit"}
    return history


def _as_sdk_object(message: dict[str, Any]) -> Any:
    """An assistant dict as the SDK's ``ChatCompletionMessage``, when the model allows it."""
    if message["role"] != "assistant" or isinstance(message.get("content"), list):
        return message
    if message.get("audio") is not None or message.get("annotations") not in (None, []):
        return message
    return ChatCompletionMessage.model_validate(message)


@st.composite
def traces(draw: st.DrawFn) -> list[Any]:
    history = draw(respelled(openai_chat))
    return [_as_sdk_object(message) if draw(st.booleans()) else message for message in history]


def canonical(trace: list[Any]) -> list[Any]:
    """SDK objects compared by their own serialization of the keys they were given."""
    return [
        item.model_dump(mode="json", exclude_unset=True)
        if isinstance(item, ChatCompletionMessage)
        else item
        for item in trace
    ]


# --- broken traces -------------------------------------------------------------------------


def plain(message: Message) -> Message:
    """The message with what the format cannot hold removed (text content, no ids/flags)."""
    update: dict[str, Any] = {"content": message.text, "id": None, "metadata": {}}
    if isinstance(message, ToolMessage):
        update["is_error"] = False
    if isinstance(message, AIMessage):
        update["tool_calls"] = [
            call.model_copy(update={"metadata": {}}) for call in message.tool_calls
        ]
    return type(message).model_validate({**dict(message), **update})


def written(adapter: ModuleType, broken: Broken) -> BrokenTrace:
    messages = [plain(m) for m in broken.messages]
    return BrokenTrace(adapter.from_messages(messages), broken.code, broken.index)


@st.composite
def format_errors(draw: st.DrawFn, adapter: ModuleType) -> BrokenTrace:
    history: list[Any] = adapter.from_messages(draw(_expressible(adapter.NAME)))
    at = draw(st.integers(0, len(history) - 1))
    message = history[at]
    options = ["unknown_role", "not_a_dict", "no_role", "delta"]
    if message["role"] == "tool":
        options.append("no_tool_call_id")
    if message.get("tool_calls") and message["tool_calls"][0]["type"] == "function":
        options.append("arguments_object")
    kind = draw(st.sampled_from(options))
    code = "malformed_event"
    if kind == "unknown_role":
        message["role"] = draw(st.sampled_from(["robot", "model", "chatbot", "", "USER"]))
        code = "unknown_role"
    elif kind == "not_a_dict":
        history[at] = draw(st.sampled_from([None, "hello", ["user", "hi"], 3]))
    elif kind == "no_role":
        del message["role"]
    elif kind == "delta":
        history[at] = {"delta": {"content": "Hel"}, "index": 0, "finish_reason": None}
        code = "streaming_chunk"
    elif kind == "no_tool_call_id":
        del message["tool_call_id"]
    else:
        function = message["tool_calls"][0]["function"]
        function["arguments"] = {"city": "Paris"}
    return BrokenTrace(history, code, at)


def broken(adapter: ModuleType) -> st.SearchStrategy[BrokenTrace]:
    return st.one_of(
        mutations(SHAPE).map(lambda b: written(adapter, b)),
        format_errors(adapter),
        format_errors(adapter),
    )


KIT = LawKit(
    traces=traces(),
    conversations=expressible(openai_chat.NAME),
    broken=broken(openai_chat),
    canonical=canonical,
)

__all__ = ["KIT", "broken", "canonical", "expressible", "respelled"]
