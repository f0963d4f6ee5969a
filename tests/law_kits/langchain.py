"""Law kit for LangChain / LangGraph messages.

Traces are built from real ``langchain_core`` message objects, in all four accepted forms
(objects, ``messages_to_dict`` dicts, flat ``model_dump()`` dicts, LangGraph state): plain and
developer system prompts, ``ChatMessage`` roles, content blocks of every shape the adapter
maps (image detail, audio formats, Bedrock / Vertex raw bytes, refusal and annotated text
blocks) and opaque ones, ChatOpenAI's ``additional_kwargs`` homes (refusal, audio reply,
annotations), parallel calls in eight styles (parsed lists only, with the raw OpenAI form in
``additional_kwargs`` (``""`` arguments too, and a message LangChain parsed from the raw form
alone), Anthropic ``tool_use`` blocks beside ``tool_calls`` or alone with the results as
``tool_result`` blocks in a human message, Responses ``function_call`` and
``custom_tool_call`` blocks, an aggregated ``AIMessageChunk``), invalid calls, error results
with JSON artifacts, legacy ``function_call`` + ``FunctionMessage``, usage/response metadata
and pydantic extra attributes.

Conversations are the typed ones LangChain can express, every typed home included: tool
results with ids, invalid calls after the valid ones, opaque parts that are block dicts, no
other adapter's metadata; an AI message with a custom call and a text content reads back as
one text part (the custom call's block makes the content a list). ``canonical`` compares
every form by ``messages_to_dict``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

from tracebridge import AIMessage as TypedAI
from tracebridge import Message, OpaquePart, TextPart
from tracebridge.adapters.langchain._classes import langchain_core_messages
from tracebridge.adapters.langchain._write import write_trace

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

# --- content -------------------------------------------------------------------------------

JPEG = bytes.fromhex("ffd8ffe000104a46494600")
detail = st.sampled_from(["low", "high", "auto"])
annotation = st.one_of(
    st.builds(
        lambda u, t, a: {
            "type": "citation",
            "url": u,
            "title": t,
            "start_index": a,
            "end_index": a,
        },
        st.just("https://example.com/s"),
        texts,
        st.integers(0, 50),
    ),
    st.builds(
        lambda t: {"type": "url_citation", "url": "https://example.com/r", "title": t},
        texts,
    ),
    st.just({"type": "file_citation", "file_id": "file-9", "index": 0}),
)

blocks: st.SearchStrategy[Any] = st.one_of(
    texts,
    texts.map(lambda t: {"type": "text", "text": t}),
    st.builds(lambda t, i: {"type": "text", "text": t, "id": i, "annotations": []}, texts, names),
    st.builds(
        lambda t, a: {"type": "text", "text": t, "annotations": a},
        texts,
        st.lists(annotation, min_size=1, max_size=2),
    ),
    st.builds(
        lambda d: {
            "type": "image_url",
            "image_url": {"url": "https://example.com/a.png", "detail": d},
        },
        detail,
    ),
    st.just({"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgo="}),
    st.just({"type": "image", "url": "https://example.com/b.png"}),
    st.builds(
        lambda d: {"type": "image", "url": "https://example.com/c.png", "extras": {"detail": d}},
        detail,
    ),
    st.just({"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png", "id": "img"}),
    st.just(
        {"type": "image", "source_type": "base64", "data": "iVBORw0KGgo=", "mime_type": "image/png"}
    ),
    st.just(
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
        }
    ),
    st.just({"type": "image", "image": {"format": "jpeg", "source": {"bytes": JPEG}}}),
    st.just({"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}),
    st.just({"document": {"format": "pdf", "name": "a", "source": {"bytes": b"%PDF-1.4"}}}),
    st.just({"type": "media", "mime_type": "image/jpeg", "data": JPEG}),
    st.just({"type": "media", "mime_type": "application/pdf", "file_uri": "gs://b/a.pdf"}),
    st.just({"type": "image", "file_id": "file-1"}),
    st.builds(
        lambda f: {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": f}},
        st.sampled_from(["wav", "mp3", "mpeg", "x-custom"]),
    ),
    st.just({"type": "audio", "base64": "UklGRg==", "mime_type": "audio/mp3"}),
    st.just(
        {"type": "file", "file_id": "file-2", "filename": "a.pdf", "mime_type": "application/pdf"}
    ),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, texts, names),
    st.builds(lambda t: {"type": "reasoning", "reasoning": t}, texts),
    st.builds(lambda t: {"type": "refusal", "refusal": t}, texts),
    st.just({"type": "refusal"}),
    st.builds(lambda v: {"type": "citation_like", "value": v}, json_values),
)

content = st.one_of(texts, st.lists(blocks, max_size=3))

optional_id = st.none() | names
extras = st.one_of(
    st.just({}), st.dictionaries(names.map(lambda n: f"x_{n}"), json_values, max_size=2)
)
kwargs_json = st.one_of(
    st.just({}), st.dictionaries(names.map(lambda n: f"k_{n}"), json_values, max_size=2)
)
audio_reply = st.builds(
    lambda i, d, t: {"id": f"audio_{i}", "data": d, "expires_at": 1700000000, "transcript": t},
    names,
    st.none() | st.just("UklGRg=="),
    texts,
)
url_citations = st.lists(
    st.builds(
        lambda t, a: {
            "type": "url_citation",
            "url_citation": {
                "url": "https://example.com/n",
                "title": t,
                "start_index": a,
                "end_index": a + 3,
            },
        },
        texts,
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=2,
)
ai_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "reasoning_content": st.none() | texts | st.just({"r": 1}),
        "refusal": st.none() | texts,
        "audio": audio_reply,
        "annotations": url_citations,
        "k_other": json_values,
    },
)
usage = st.none() | st.builds(
    lambda a, b: {"input_tokens": a, "output_tokens": b, "total_tokens": a + b},
    st.integers(0, 1000),
    st.integers(0, 1000),
)
bad_args = st.sampled_from(["not json", "[1, 2]", '{"city": "Par'])

# --- messages ------------------------------------------------------------------------------


@st.composite
def system_message(draw: st.DrawFn) -> BaseMessage:
    text = draw(content)
    style = draw(st.sampled_from(["plain", "developer", "chat"]))
    if style == "chat":
        return ChatMessage(content=text, role=draw(st.sampled_from(["system", "developer"])))
    kwargs = {"__openai_role__": "developer"} if style == "developer" else {}
    return SystemMessage(content=text, additional_kwargs=kwargs, id=draw(optional_id))


@st.composite
def human_message(draw: st.DrawFn) -> BaseMessage:
    text = draw(content)
    style = draw(st.sampled_from(["plain", "plain", "chat", "chunk"]))
    if style == "chat":
        return ChatMessage(content=text, role=draw(st.sampled_from(["user", "human"])))
    cls = HumanMessageChunk if style == "chunk" else HumanMessage
    return cls(content=text, name=draw(st.none() | names), id=draw(optional_id), **draw(extras))


@st.composite
def final_answer(draw: st.DrawFn) -> BaseMessage:
    cls = draw(st.sampled_from([AIMessage, AIMessage, AIMessageChunk, ChatMessage]))
    if cls is ChatMessage:
        return ChatMessage(
            content=draw(content),
            role=draw(st.sampled_from(["assistant", "ai"])),
            additional_kwargs=draw(ai_kwargs),
        )
    return cls(
        content=draw(content),
        name=draw(st.none() | names),
        id=draw(optional_id),
        response_metadata=draw(kwargs_json),
        usage_metadata=draw(usage),
        additional_kwargs=draw(st.one_of(kwargs_json, ai_kwargs)),
    )


STYLES = [
    "lists",
    "raw",
    "empty_args",
    "raw_only",
    "anthropic",
    "anthropic_content",
    "responses",
    "chunk",
]


def _raw(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": c.get("bad") or c["text"]},
        }
        for c in calls
    ]


@st.composite
def tool_step(draw: st.DrawFn, counter: list[int]) -> list[BaseMessage]:
    """An AI message with 1-3 calls (some invalid) in one of eight styles, and its results."""
    style = draw(st.sampled_from(STYLES))
    calls: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        counter[0] += 1
        may_be_invalid = style in ("lists", "raw", "raw_only", "chunk", "responses")
        call = {"name": draw(names), "id": f"call_{counter[0]}"}
        if may_be_invalid and draw(st.integers(0, 3)) == 0:
            # LangChain's default_tool_parser chokes on a JSON list; a chunk's "{" is a piece.
            odd = {"raw_only": ["not json", "{"], "chunk": ["not json", "[1]"]}.get(style)
            call["bad"] = draw(st.sampled_from(odd) if odd else bad_args)
        elif style in ("empty_args", "raw_only") and draw(st.booleans()):
            call["args"], call["text"] = {}, ""
        elif style == "responses" and draw(st.booleans()):
            call["custom"] = draw(texts)
            call["args"] = {"__arg1": call["custom"]}
        else:
            call["args"] = draw(json_objects)
            call["text"] = json.dumps(call["args"])
        calls.append(call)
    valid = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in calls if "args" in c]
    invalid = [
        {"name": c["name"], "args": c["bad"], "id": c["id"], "error": draw(st.none() | texts)}
        for c in calls
        if "bad" in c
    ]
    common = {
        "id": draw(optional_id),
        "response_metadata": draw(kwargs_json),
        "usage_metadata": draw(usage),
    }
    results: list[BaseMessage] | None = None
    if style == "lists":
        ai: BaseMessage = AIMessage(
            content=draw(content), tool_calls=valid, invalid_tool_calls=invalid, **common
        )
    elif style in ("raw", "empty_args"):
        ai = AIMessage(
            content=draw(texts),
            tool_calls=valid,
            invalid_tool_calls=[{**i, "error": None} for i in invalid],
            additional_kwargs={"tool_calls": _raw(calls)},
            **common,
        )
    elif style == "raw_only":
        # LangChain parses the raw form itself (default_tool_parser: "" is invalid to it).
        ai = AIMessage(content=draw(texts), additional_kwargs={"tool_calls": _raw(calls)}, **common)
    elif style in ("anthropic", "anthropic_content"):
        text = [{"type": "text", "text": draw(texts)}] if draw(st.booleans()) else []
        uses = [
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
            for c in calls
        ]
        listed = valid if style == "anthropic" else []
        ai = AIMessage(content=text + uses, tool_calls=listed, **common)
        if style == "anthropic_content":
            results = [draw(anthropic_results(calls))]
    elif style == "responses":
        ai = AIMessage(
            content=[_responses_block(c, draw(names)) for c in calls],
            tool_calls=valid,
            invalid_tool_calls=invalid,
            **common,
        )
    else:
        chunks = [
            {
                "name": c["name"],
                "args": c.get("bad") or json.dumps(c.get("args")),
                "id": c["id"],
                "index": k,
            }
            for k, c in enumerate(calls)
        ]
        ai = AIMessageChunk(
            content=draw(texts),
            tool_call_chunks=chunks,
            chunk_position=draw(st.sampled_from([None, "last"])),
            **common,
        )
    if results is None:
        order = draw(st.permutations(calls))
        results = [
            ToolMessage(
                content=draw(content),
                tool_call_id=c["id"],
                name=draw(st.none() | st.just(c["name"])),
                status=draw(st.sampled_from(["success", "error"])),
                artifact=draw(st.none() | json_values),
                id=draw(optional_id),
                **draw(extras),
            )
            for c in order
        ]
    return [ai, *results]


def _responses_block(call: dict[str, Any], item_id: str) -> dict[str, Any]:
    """The block langchain-openai keeps for a Responses API function or custom call."""
    if "custom" in call:
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{item_id}",
            "call_id": call["id"],
            "name": call["name"],
            "input": call["custom"],
            "status": "completed",
        }
    return {
        "type": "function_call",
        "id": f"fc_{item_id}",
        "call_id": call["id"],
        "name": call["name"],
        "arguments": call.get("bad") or call["text"],
        "status": "completed",
    }


@st.composite
def anthropic_results(draw: st.DrawFn, calls: list[dict[str, Any]]) -> BaseMessage:
    """The user message an Anthropic history answers ``tool_use`` calls with."""
    results: list[Any] = []
    for call in draw(st.permutations(calls)):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"]}
        body = draw(st.sampled_from(["text", "blocks", "none"]))
        if body != "none":
            block["content"] = draw(texts) if body == "text" else [{"type": "text", "text": "ok"}]
        error = draw(st.sampled_from([None, True, False]))
        if error is not None:
            block["is_error"] = error
        results.append(block)
    after = draw(st.lists(blocks, max_size=2))
    return HumanMessage(content=results + after, id=draw(optional_id))


@st.composite
def function_step(draw: st.DrawFn) -> list[BaseMessage]:
    """A legacy OpenAI function call and its FunctionMessage result."""
    name = draw(names)
    arguments = draw(st.one_of(json_objects.map(json.dumps), bad_args))
    ai = AIMessage(
        content="", additional_kwargs={"function_call": {"name": name, "arguments": arguments}}
    )
    return [ai, FunctionMessage(content=draw(texts), name=name, id=draw(optional_id))]


@st.composite
def native_conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """A valid LangChain conversation: [system] (human step* answer?)+ ."""
    counter = [0]
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(draw(system_message()))
    for _ in range(draw(st.integers(1, 3))):
        messages.append(draw(human_message()))
        for _ in range(draw(st.integers(0, 2))):
            step = function_step() if draw(st.integers(0, 5)) == 0 else tool_step(counter)
            messages.extend(draw(step))
        if draw(st.booleans()):
            messages.append(draw(final_answer()))
    return messages


def in_some_form(messages: list[BaseMessage]) -> st.SearchStrategy[Any]:
    dicts = messages_to_dict(messages)
    dumps = [message.model_dump() for message in messages]
    return st.sampled_from(
        [messages, dicts, dumps, {"messages": messages}, {"messages": dicts}, {"messages": dumps}]
    )


def _loaded(item: Any) -> BaseMessage:
    if isinstance(item, BaseMessage):
        return item
    if set(item) == {"type", "data"}:
        return messages_from_dict([item])[0]
    return messages_from_dict([{"type": item["type"], "data": item}])[0]


def canonical(trace: Any) -> list[dict[str, Any]]:
    """Every accepted form as LangChain's own dicts (a dict is loaded and dumped again)."""
    items = trace["messages"] if isinstance(trace, dict) else trace
    return messages_to_dict([_loaded(item) for item in items])


# --- typed conversations LangChain can express ---------------------------------------------


def _as_block(part: Any) -> Any:
    if isinstance(part, OpaquePart):
        kind = f"x_{part.kind}"
        return OpaquePart(kind=kind, value={"type": kind, "value": part.value})
    return part


def expressible(messages: list[Message]) -> list[Message]:
    """Opaque parts as block dicts; invalid calls after the valid ones (LangChain's lists);
    beside a custom call's block, a text content is a text block."""
    out: list[Message] = []
    for message in messages:
        update: dict[str, Any] = {}
        if isinstance(message.content, list):
            update["content"] = [_as_block(part) for part in message.content]
        if isinstance(message, TypedAI):
            update["tool_calls"] = sorted(
                message.tool_calls, key=lambda c: c.invalid_args is not None
            )
            custom = any(call.kind == "custom" for call in message.tool_calls)
            if custom and isinstance(message.content, str) and message.content:
                update["content"] = [TextPart(text=message.content)]
        out.append(message.model_copy(update=update))
    return out


TYPED_SHAPE = Shape(metadata=False, ids=True)
"""Every typed home LangChain has: developer role, refusals, image detail, audio mime types,
citations, audio replies, custom calls (all on in ``Shape``'s defaults).

No generated metadata (``metadata=False``): the faithful law needs ``to_messages`` to give back
all of ``m``, and the format carries only the keys of ``metadata["langchain"]`` its writer owns,
each with its own meaning; a namespace of any keys (what ``strategies.metadata`` draws) is
another adapter's or a wrong one, which the writer leaves out by design
(``test_from_messages_reads_only_its_own_namespace``). The owned keys are built from native
LangChain messages in ``traces`` (the lossless law) and checked by the example tests."""

# --- broken traces -------------------------------------------------------------------------


RULE_SHAPE = Shape(metadata=False, parts=False, invalid_args=False, ids=True)


@st.composite
def broken_by_rule(draw: st.DrawFn, code: str | None = None) -> BrokenTrace:
    """A conversation rule broken (orphan, unanswered, duplicate id; ``code``: that one), in
    LangChain objects."""
    rules = rule_mutations(RULE_SHAPE)
    broken = draw(mutations(RULE_SHAPE) if code is None else rules[code])
    # The writer without its rule check: from_messages refuses a broken conversation whole.
    plain = expressible([_plain(m) for m in broken.messages])
    trace = write_trace(plain, langchain_core_messages(), ())
    return BrokenTrace(draw(in_some_form(trace)), broken.code, broken.index, _path(broken))


def _path(broken: Broken) -> str:
    """The mutation's path; a call whose arguments did not parse (``mutate_duplicate_id``
    may reuse the id on one) is the first of ``invalid_tool_calls`` (they follow the valid)."""
    message = broken.messages[broken.index]  # type: ignore[index]
    if broken.field == ".tool_calls[0].id" and message.tool_calls[0].invalid_args is not None:
        return f"messages[{broken.index}].invalid_tool_calls[0].id"
    return broken.path


def _plain(message: Message) -> Message:
    """The message without metadata, its parts' and calls' included (a mutation may draw any
    adapter's namespace)."""
    update: dict[str, Any] = {"metadata": {}}
    if isinstance(message.content, list):
        update["content"] = [part.model_copy(update={"metadata": {}}) for part in message.content]
    if isinstance(message, TypedAI):
        update["tool_calls"] = [call.model_copy(update={"metadata": {}})
                                for call in message.tool_calls]
    return message.model_copy(update=update)


def _ai_positions(messages: list[BaseMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and m.tool_calls]


UNKNOWN_ROLES = ["remove", "role", "unknown"]


@st.composite
def broken_by_event(draw: st.DrawFn, kinds: tuple[str, ...] = ()) -> BrokenTrace:
    """One message replaced or inserted so that the adapter itself must refuse it (one of
    ``kinds``, when given); an unknown role with its path."""
    messages = draw(native_conversations())
    at = draw(st.integers(0, len(messages)))
    kind = draw(st.sampled_from(kinds or [*UNKNOWN_ROLES, "partial", "malformed", "bytes"]))
    field: str | None = None
    if kind == "remove":
        inserted: Any = RemoveMessage(id="m1")
        code, field = "unknown_role", ".type"
    elif kind == "role":
        inserted = ChatMessage(
            content="beep", role=draw(st.sampled_from(["robot", "tool", "critic"]))
        )
        code, field = "unknown_role", ".role"
    elif kind == "unknown":
        inserted = {"type": "robot", "data": {"content": "beep"}}
        code, field = "unknown_role", ".type"
    elif kind == "partial":
        fragment = {"name": None, "args": "1}", "id": None, "index": 0}
        inserted = AIMessageChunk(content="", tool_call_chunks=[fragment])
        code = "streaming_chunk"
    elif kind == "malformed":
        inserted = {"type": "human", "data": {"content": 3}}
        code = "malformed_event"
    else:
        inserted = HumanMessage(content="hi", additional_kwargs={"blob": b"\x00"})
        code = "unserializable_value"
    trace = [*messages[:at], inserted, *messages[at:]]
    return BrokenTrace(trace, code, at, None if field is None else f"messages[{at}]{field}")


@st.composite
def broken_by_conflict(draw: st.DrawFn) -> BrokenTrace:
    """An AI message whose raw provider calls or tool_use blocks name a call tool_calls does
    not have (a copy naming a call of tool_calls by id with other values is a stale copy
    LangChain left, read as such)."""
    messages = draw(native_conversations().filter(lambda ms: bool(_ai_positions(ms))))
    at = draw(st.sampled_from(_ai_positions(messages)))
    ai = messages[at]
    call = ai.tool_calls[0]
    if draw(st.booleans()):
        raw = [
            {
                "id": f"{call['id']}_other",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(call["args"]),
                },
            }
        ]
        changed = ai.model_copy(update={"additional_kwargs": {"tool_calls": raw}})
    else:
        block = {
            "type": "tool_use",
            "id": f"{call['id']}_other",
            "name": call["name"],
            "input": call["args"],
        }
        changed = ai.model_copy(update={"content": [block]})
    return BrokenTrace([*messages[:at], changed, *messages[at + 1 :]], "conflicting_fields", at)


RULES = {
    "unknown_role": broken_by_event(kinds=tuple(UNKNOWN_ROLES)),
    **{code: broken_by_rule(code) for code in rule_mutations(RULE_SHAPE)},
}

KIT = LawKit(
    traces=native_conversations().flatmap(in_some_form),
    conversations=conversations(TYPED_SHAPE).map(expressible),
    broken=st.one_of(broken_by_rule(), broken_by_event(), broken_by_conflict()),
    canonical=canonical,
    rules=RULES,
)
