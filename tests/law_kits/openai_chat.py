"""Law kit for OpenAI Chat Completions message lists (dicts mixed with SDK objects).

* ``conversations``: typed conversations the format expresses: ids on every call (or one
  id-less call answered by a legacy ``function`` message), no message ids, no error flags;
  the developer role, custom calls, citations and audio replies (from ``strategies``), and in
  each role the parts the API takes there: user text, images by URL or base64 with a mime
  type and a ``detail``, input audio (some with a format the table spells otherwise), files by
  id or data; assistant text and refusals in each spelling the format has, some after the
  model's reasoning (read from ``reasoning_content`` or ``reasoning``, or both); plus, in any
  role, parts the API does not take there, kept verbatim.
* ``traces``: those conversations written out, then re-spelled the ways real histories are:
  argument JSON with other spacing and key order, ``arguments: ""`` for no arguments, a
  refusal next to text or parts, audio formats such as ``"mpeg"``, ``annotations: []`` and
  annotation types other than ``url_citation``, null-valued optional keys, keys left out,
  unknown keys, and assistant messages as ``ChatCompletionMessage`` objects.
* ``broken``: the rule mutations of ``strategies`` written out, and format errors (unknown
  role, non-dict element, no role, tool result without ``tool_call_id``, a streaming delta,
  arguments that are not a string, a refusal that is not a string, annotations that are not a
  list, an audio reply without id).
"""

from __future__ import annotations

import json
import typing
from types import ModuleType
from typing import Any

import pydantic
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageParam
from pydantic import TypeAdapter
from typing_extensions import Required

from tracebridge import (
    AIMessage,
    AudioPart,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.adapters import openai_chat
from tracebridge.adapters.openai_chat._write import write_message

from law_kits import BrokenTrace, LawKit
from strategies import (
    Broken,
    Shape,
    conversations,
    json_objects,
    json_values,
    mutations,
    names,
    rule_mutations,
    texts,
)

# Parts are drawn here, role by role; metadata only as this adapter writes it.
SHAPE = Shape(parts=False, metadata=False, message_ids=False)

# --- typed conversations the format expresses ---------------------------------------------

PART_TYPES = {
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
    "other": ("text",),
}
details = st.none() | st.sampled_from(["auto", "low", "high"])


def verbatim(namespace: str, taken: tuple[str, ...]) -> st.SearchStrategy[OpaquePart]:
    """A part the API does not take in this role, kept whole as the reader keeps it."""
    kinds = st.sampled_from(["refusal", "image_url", "input_audio", "file", "x_vendor"]) | names
    return st.builds(
        lambda kind, fields: OpaquePart(
            kind=kind, value={**fields, "type": kind}, metadata={namespace: {"verbatim": True}}
        ),
        kinds.filter(lambda kind: kind not in taken),
        json_objects,
    )


def user_parts(namespace: str) -> st.SearchStrategy[Any]:
    # a format the table spells otherwise, or one the API does not take (wav and mp3 only):
    # written only for a part read in it, which keeps it
    spelled_audio = st.sampled_from(
        [("audio/mpeg", "mpeg"), ("audio/pcm", "pcm"), ("audio/flac", "flac")]
    ).map(
        lambda pair: AudioPart(
            data="UklGRg==", mime_type=pair[0], metadata={namespace: {"format": pair[1]}}
        )
    )
    return st.one_of(
        st.builds(TextPart, text=texts),
        st.builds(ImagePart, url=st.just("https://example.com/a.png"), detail=details),
        st.builds(
            ImagePart,
            data=st.just("iVBORw0KGgo="),
            mime_type=st.just("image/png"),
            detail=details,
        ),
        st.builds(
            AudioPart,
            data=st.just("UklGRg=="),
            mime_type=st.sampled_from(["audio/wav", "audio/mpeg"]),
        ),
        spelled_audio,
        st.builds(FilePart, file_id=names, filename=st.none() | names),
        st.builds(
            FilePart,
            data=st.just("JVBERi0x"),
            mime_type=st.none() | st.just("application/pdf"),
            filename=st.none() | names,
        ),
        verbatim(namespace, PART_TYPES["user"]),
    )


def assistant_parts(namespace: str) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(TextPart, text=texts),
        st.builds(RefusalPart, text=texts),
        verbatim(namespace, PART_TYPES["assistant"]),
    )


def other_parts(namespace: str) -> st.SearchStrategy[Any]:
    return st.one_of(st.builds(TextPart, text=texts), verbatim(namespace, PART_TYPES["other"]))


def content(namespace: str, message: Message) -> st.SearchStrategy[Any]:
    if isinstance(message, HumanMessage):
        parts = user_parts(namespace)
    elif isinstance(message, AIMessage):
        parts = assistant_parts(namespace)
    else:
        parts = other_parts(namespace)
    return st.one_of(texts, st.lists(parts, max_size=3))


@st.composite
def refused(draw: st.DrawFn, namespace: str) -> tuple[list[Any], dict[str, Any]]:
    """An assistant content ending in a refusal, and the namespace that names its spelling."""
    form = draw(
        st.sampled_from([None, "absent", "empty", "null", "part", "after_text", "after_parts"])
    )
    # "empty" names a non-empty refusal's "" content, "null" an empty refusal's null one (the
    # other spelling of each is its default, see adapters/openai_chat/_reply.py)
    text = "" if form == "null" else draw(texts.filter(bool) if form == "empty" else texts)
    refusal = RefusalPart(text=text)
    if form == "after_text":
        return [TextPart(text=draw(texts.filter(bool))), refusal], {"refusal": form}
    if form == "after_parts":
        before = draw(st.lists(assistant_parts(namespace), max_size=2))
        return [*before, refusal], {"refusal": form}
    return [refusal], {} if form is None else {"refusal": form}


@st.composite
def annotation_layout(draw: st.DrawFn, cited: int) -> list[Any] | None:
    """Where other annotation types sit among ``cited`` citations (None: the default list)."""
    others = draw(
        st.lists(
            st.builds(
                lambda kind, fields: {**fields, "type": kind},
                st.sampled_from(["file_citation", "container_file_citation"]) | names,
                json_objects,
            ).filter(lambda annotation: annotation["type"] != "url_citation"),
            max_size=2,
        )
    )
    if not others and (cited or draw(st.booleans())):
        return None  # what the citations alone write (no key when there are none)
    layout: list[Any] = [None] * cited
    for other in others:
        layout.insert(draw(st.integers(0, len(layout))), other)
    return layout


@st.composite
def _expressible(draw: st.DrawFn, namespace: str) -> list[Message]:
    """A generated conversation with representable contents and no error flags."""
    messages = draw(conversations(SHAPE))
    out: list[Message] = []
    for message in messages:
        update: dict[str, Any] = {"content": draw(content(namespace, message))}
        kept: dict[str, Any] = {}
        if isinstance(message, ToolMessage):
            update["is_error"] = False
        if isinstance(message, AIMessage):
            # url_citation annotations have no place for the cited text.
            update["citations"] = [as_read(cited, namespace) for cited in message.citations]
            layout = draw(annotation_layout(len(message.citations)))
            if layout is not None:
                kept["annotations"] = layout
            choice = draw(st.integers(0, 5))
            if choice == 0:
                update["content"], spelled = draw(refused(namespace))
                kept.update(spelled)
            elif choice < 3:
                update["content"] = ""
                kept["content"] = draw(st.sampled_from(["null", "absent"]))
                if draw(st.booleans()):
                    nulls = {"refusal": None}
                    if message.audio is None:
                        nulls["audio"] = None
                    if not message.citations and "annotations" not in kept:
                        nulls["annotations"] = None
                    kept["fields"] = nulls
        if kept:
            update["metadata"] = {namespace: kept}
        if isinstance(message, AIMessage) and draw(st.integers(0, 3)) == 0:
            update["content"] = draw(reasoned(namespace, update["content"]))
        out.append(type(message).model_validate({**dict(message), **update}))
    return out


def as_read(cited: Citation, namespace: str) -> Citation:
    """A citation without cited text, as the reader reads a url_citation that leaves out the
    keys it has no value for (``absent``): the API takes only whole ones from elsewhere."""
    absent = [key for key in ("url", "title", "start_index", "end_index")
              if getattr(cited, key) is None]
    kept = {"metadata": {namespace: {"absent": absent}}} if absent else {}
    return cited.model_copy(update={"cited_text": None, **kept})


@st.composite
def reasoned(draw: st.DrawFn, namespace: str, content: Any) -> list[Any]:
    """An assistant content after the model's reasoning, as the reader reads it from
    ``reasoning_content`` / ``reasoning`` (both keys when they hold the same text)."""
    keys = draw(st.permutations(["reasoning_content", "reasoning"]))
    marker: dict[str, Any] = {"from": keys[0]}
    if draw(st.integers(0, 3)) == 0:
        marker["also"] = keys[1]
    if isinstance(content, str):
        marker["content"] = "string"
        content = [TextPart(text=content)] if content else []
    return [ReasoningPart(text=draw(texts), metadata={namespace: marker}), *content]


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
    style = draw(st.sampled_from(["compact", "sorted", "indented", "spaced", "empty"]))
    if style == "compact":
        function["arguments"] = json.dumps(args, separators=(",", ":"))
    elif style == "sorted":
        function["arguments"] = json.dumps(args, sort_keys=True, ensure_ascii=False)
    elif style == "indented":
        function["arguments"] = json.dumps(args, indent=2)
    elif style == "empty" and not args:
        function["arguments"] = ""  # OpenRouter, vLLM: a tool without parameters
    else:
        function["arguments"] = " " + json.dumps(args) + "\n"


def _respell_refusal(draw: st.DrawFn, message: dict[str, Any]) -> None:
    """The refusal key next to each content the API and applications put beside it."""
    if type(message.get("refusal")) is not str or not draw(st.booleans()):
        return
    form = draw(st.sampled_from(["null", "empty", "absent", "text", "parts"]))
    if form == "absent":
        message.pop("content", None)
    elif form == "text":
        message["content"] = draw(texts.filter(bool))
    elif form == "parts":
        message["content"] = [{"type": "text", "text": draw(texts)}]
    else:
        message["content"] = None if form == "null" else ""


def _respell_annotations(draw: st.DrawFn, message: dict[str, Any]) -> None:
    annotations = message.get("annotations")
    if annotations is None:
        if "annotations" not in message and draw(st.booleans()):
            message["annotations"] = []  # what the API sends with every reply
        return
    for annotation in annotations:
        if annotation.get("type") == "url_citation" and draw(st.integers(0, 3)) == 0:
            annotation["url_citation"]["x_rank"] = draw(json_values)
    if draw(st.integers(0, 3)) == 0:
        annotations.append({"type": "file_citation", "file_citation": {"file_id": draw(names)}})


def _respell_audio(draw: st.DrawFn, message: dict[str, Any]) -> None:
    audio = message.get("audio")
    if isinstance(audio, dict) and draw(st.integers(0, 3)) == 0:
        audio[draw(st.sampled_from(["transcript", "x_voice"]))] = None


def _respell_parts(draw: st.DrawFn, parts: list[dict[str, Any]]) -> None:
    for part in parts:
        if part["type"] in ("text", "image_url", "refusal") and draw(st.integers(0, 4)) == 0:
            part["x_cache"] = {"mode": "explicit"}
        # (a verbatim part of these types, from a role that does not take them, has no inner)
        if isinstance(part.get("image_url"), dict) and draw(st.integers(0, 4)) == 0:
            part["image_url"]["detail"] = draw(st.sampled_from([None, "original"]))
        if isinstance(part.get("input_audio"), dict) and draw(st.integers(0, 2)) == 0:
            part["input_audio"]["format"] = draw(st.sampled_from(["mpeg", "pcm", "wave", "ogg"]))


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
        if message["role"] == "assistant":
            _respell_refusal(draw, message)
            _respell_annotations(draw, message)
            _respell_audio(draw, message)
            if draw(st.booleans()):
                for key in draw(st.sets(st.sampled_from(["refusal", "annotations", "audio"]))):
                    message.setdefault(key, None)
                if "tool_calls" not in message and "function_call" not in message:
                    message[draw(st.sampled_from(["tool_calls", "function_call"]))] = None
        if message["role"] in ("user", "system") and "name" not in message and draw(st.booleans()):
            message["name"] = None
        if draw(st.integers(0, 9)) == 0:
            message["x_trace"] = draw(json_values)
        if isinstance(message.get("content"), list):
            _respell_parts(draw, message["content"])
    return history


def _as_sdk_object(message: dict[str, Any]) -> Any:
    """An assistant dict as the SDK's ``ChatCompletionMessage``, when the model holds it as is."""
    if message["role"] != "assistant":
        return message
    try:
        sdk = ChatCompletionMessage.model_validate(message)
    except pydantic.ValidationError:
        return message  # content parts, a partial audio reply, ...: the SDK has no object
    same = sdk.model_dump(mode="json", exclude_unset=True) == message
    return sdk if same else message


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


def plain(message: Message, namespace: str) -> Message:
    """The message with what the format cannot hold removed (text content, no ids/flags).

    Calls get parsed arguments: a mutation can leave a call unanswered (one that takes a
    duplicate id), and the writer refuses an unanswered call whose arguments did not parse.
    """
    update: dict[str, Any] = {"content": message.text, "id": None, "metadata": {}}
    if isinstance(message, ToolMessage):
        update["is_error"] = False
    if isinstance(message, AIMessage):
        update["tool_calls"] = [
            call.model_copy(update={"metadata": {}, "invalid_args": None})
            for call in message.tool_calls
        ]
        update["citations"] = [as_read(cited, namespace) for cited in message.citations]
    return type(message).model_validate({**dict(message), **update})


def written(adapter: ModuleType, broken: Broken) -> BrokenTrace:
    # Message by message: from_messages checks the conversation rules and refuses to write
    # the broken conversation at all.
    dialect = adapter.SWARM if adapter.NAME == "swarm" else adapter.OPENAI
    history = [
        write_message(plain(m, adapter.NAME), dialect, i) for i, m in enumerate(broken.messages)
    ]
    return BrokenTrace(history, broken.code, broken.index, broken.path)


@st.composite
def format_errors(draw: st.DrawFn, adapter: ModuleType, only: str | None = None) -> BrokenTrace:
    """A written history with one message broken (``only``: that way)."""
    history: list[Any] = adapter.from_messages(draw(_expressible(adapter.NAME)))
    at = draw(st.integers(0, len(history) - 1))
    message = history[at]
    options = ["unknown_role", "not_a_dict", "no_role", "delta"]
    if message["role"] == "tool":
        options.append("no_tool_call_id")
    if message.get("tool_calls") and message["tool_calls"][0]["type"] == "function":
        options.append("arguments_object")
    if message["role"] == "assistant":
        options += ["refusal_not_text", "annotations_object", "audio_without_id"]
    kind = only or draw(st.sampled_from(options))
    code = "malformed_event"
    if kind == "unknown_role":
        message["role"] = draw(st.sampled_from(["robot", "model", "chatbot", "", "USER"]))
        return BrokenTrace(history, "unknown_role", at, f"messages[{at}].role")
    elif kind == "not_a_dict":
        history[at] = draw(st.sampled_from([None, "hello", ["user", "hi"], 3]))
    elif kind == "no_role":
        del message["role"]
    elif kind == "delta":
        history[at] = {"delta": {"content": "Hel"}, "index": 0, "finish_reason": None}
        code = "streaming_chunk"
    elif kind == "no_tool_call_id":
        del message["tool_call_id"]
    elif kind == "refusal_not_text":
        message["refusal"] = draw(st.sampled_from([3, ["no"], {"text": "no"}, True]))
    elif kind == "annotations_object":
        message["annotations"] = {"type": "url_citation"}
    elif kind == "audio_without_id":
        message["audio"] = {"transcript": draw(texts)}
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


def rules(adapter: ModuleType) -> dict[str, st.SearchStrategy[BrokenTrace]]:
    """Each rule mutation written by ``adapter``, and a role the format does not have."""
    found = {
        code: mutation.map(lambda b: written(adapter, b))
        for code, mutation in rule_mutations(SHAPE).items()
    }
    return {"unknown_role": format_errors(adapter, only="unknown_role"), **found}


# --- what the API accepts -------------------------------------------------------------------
#
# The openai SDK's own request types (``ChatCompletionMessageParam``: which part types each role
# takes) plus the API's ordering rule (an assistant message's ``tool_calls`` are each answered
# by a ``tool`` message right after it, before anything else).
#
# The API reads an explicit ``null`` for an optional key as "not given": a reply stored with
# ``message.model_dump()`` (``tool_calls: null``, ``function_call: null``, ``audio: null``) is
# sent back as it is, and Swarm sends its whole history that way (its streaming loop even sets
# ``tool_calls = None``). The TypedDicts type ``tool_calls`` as a list only, so the oracle
# leaves null optional keys out before validating; a null *required* key (a user message's
# ``content``) is still rejected.

REQUEST = TypeAdapter(list[ChatCompletionMessageParam])


def _optional_keys(param: Any) -> frozenset[str]:
    hints = typing.get_type_hints(param, include_extras=True)
    return frozenset(key for key, kind in hints.items() if typing.get_origin(kind) is not Required)


OPTIONAL = {
    typing.get_type_hints(param)["role"].__args__[0]: _optional_keys(param)
    for param in typing.get_args(ChatCompletionMessageParam)
}
"""For each role, the keys its request TypedDict does not require."""


def _nulls_left_out(message: Any) -> Any:
    if not isinstance(message, dict) or message.get("role") not in OPTIONAL:
        return message
    optional = OPTIONAL[message["role"]]
    return {k: v for k, v in message.items() if not (v is None and k in optional)}


def _validated(value: Any) -> Any:
    # pydantic validates an ``Iterable[...]`` field lazily: iterate it to check each part.
    if isinstance(value, dict):
        return {key: _validated(item) for key, item in value.items()}
    if isinstance(value, list) or hasattr(value, "__next__"):
        return [_validated(item) for item in value]
    return value


def api_problems(history: list[dict[str, Any]]) -> list[str]:
    """What the API would reject in ``history`` (empty: it would accept it)."""
    try:
        _validated(REQUEST.validate_python([_nulls_left_out(m) for m in history]))
    except ValueError as error:
        return [str(error).splitlines()[0]]
    problems = []
    waiting: set[str] = set()
    for i, message in enumerate(history):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in waiting:
                problems.append(f"[{i}] answers no open call")
            waiting.discard(message["tool_call_id"])
            continue
        if waiting:
            problems.append(f"[{i}] comes before calls {sorted(waiting)} are answered")
            waiting = set()
        if role == "assistant":
            waiting = {call["id"] for call in message.get("tool_calls") or []}
            spoken = ("tool_calls", "function_call", "audio", "refusal")
            if message.get("content") is None and not any(message.get(k) for k in spoken):
                problems.append(f"[{i}] an assistant message with nothing in it")
    if waiting:
        problems.append(f"calls {sorted(waiting)} are never answered")
    return problems


KIT = LawKit(
    traces=traces(),
    conversations=expressible(openai_chat.NAME),
    broken=broken(openai_chat),
    canonical=canonical,
    rules=rules(openai_chat),
)

__all__ = ["KIT", "api_problems", "broken", "canonical", "expressible", "respelled", "rules"]
