"""Law kit for OpenAI Responses items (dicts mixed with the SDK's Responses objects).

* ``conversations``: typed conversations the format expresses: ids on every call, no names;
  user/system/developer content as text or input parts (text, images by URL or data with a
  detail, wav/mp3 audio, files by id, data or URL, parts kept verbatim); replies with reasoning
  parts (carrying their item id), text and refusals, citations with every field, message ids;
  function calls (some with arguments that did not parse), custom calls, hosted calls (a call
  and its JSON result) and computer calls with their outputs.
* ``traces``: those conversations written out, then re-spelled as real item lists are:
  argument JSON with other spacing, ``type: "message"`` on input messages, ``status`` keys,
  unknown keys, ``annotations`` left out, and items as SDK objects.
* ``broken``: item-level mutations: an unknown item type, an output no call asked for, an
  output removed, an output given twice, a call id used twice, an element that is not an
  item, arguments that are not text, a message without a role.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pydantic
from hypothesis import strategies as st
from openai.types.responses import ResponseInputItem, ResponseOutputItem
from pydantic import TypeAdapter

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
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.adapters import openai_responses

from law_kits import BrokenTrace, LawKit
from strategies import Shape, conversations, json_objects, names, texts

NS = openai_responses.NAME
SHAPE = Shape(
    parts=False,
    metadata=False,
    names=False,
    citations=False,
    audio_replies=False,
    refusals=False,
    details=False,
    message_ids=False,
)
"""``parts`` and metadata are drawn by this kit, as the items hold them.

No generated metadata (``metadata=False``): the faithful law needs ``to_messages`` to give back
all of ``m``, and the format carries only the keys of ``metadata["openai_responses"]`` its
writer owns, each with its own meaning; a namespace of any keys (what ``strategies.metadata``
draws) is another adapter's or a wrong one, which the writer leaves out by design
(``test_from_messages_reads_only_its_own_namespace``). The owned keys are built where this kit
draws them (reasoning item ids, hosted and computer calls, verbatim parts, audio read from a
file)."""
details = st.sampled_from([None, "auto", "low", "high"])


def verbatim(kind: str) -> st.SearchStrategy[OpaquePart]:
    return st.builds(
        lambda fields: OpaquePart(
            kind=kind, value={**fields, "type": kind}, metadata={NS: {"verbatim": True}}
        ),
        json_objects.filter(lambda fields: "type" not in fields),
    )


def input_parts() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(TextPart, text=texts),
        st.builds(ImagePart, url=st.just("https://example.com/a.png"), detail=details),
        st.builds(
            ImagePart, data=st.just("iVBORw0KGgo="), mime_type=st.just("image/png"), detail=details
        ),
        st.builds(
            AudioPart,
            data=st.just("UklGRg=="),
            mime_type=st.sampled_from(["audio/wav", "audio/mpeg"]),
            metadata=st.just({NS: {"read": True}}),
        ),
        st.builds(FilePart, file_id=names, filename=st.none() | names),
        st.builds(FilePart, url=st.just("https://example.com/a.pdf")),
        st.builds(
            FilePart,
            data=st.just("JVBERi0x"),
            mime_type=st.none() | st.just("application/pdf"),
            filename=st.none() | names,
        ),
        verbatim("x_vendor_block"),
    )


def output_parts() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(TextPart, text=texts),
        st.builds(ImagePart, url=st.just("https://example.com/chart.png"), detail=details),
        st.builds(FilePart, file_id=names),
    )


reply_parts = st.one_of(
    st.builds(TextPart, text=texts),
    st.builds(RefusalPart, text=texts),
    verbatim("x_vendor_block"),
)


@st.composite
def reply_content(draw: st.DrawFn, n: int) -> tuple[Any, list[Citation]]:
    """A reply's content (reasoning first, then its message parts) and its citations."""
    reasoning = [
        ReasoningPart(text=draw(texts), id=f"rs_{n}_{k}")
        for k in range(draw(st.integers(0, 2)))
    ]
    if not reasoning and draw(st.booleans()):
        return draw(texts), []
    spoken = draw(st.lists(reply_parts, max_size=3))
    written = [part.text for part in spoken if isinstance(part, TextPart)]
    cited = draw(cited_spans(written)) if written and draw(st.booleans()) else []
    return [*reasoning, *spoken], cited


@st.composite
def cited_spans(draw: st.DrawFn, written: list[str]) -> list[Citation]:
    """One or two citations, each a span of a drawn text part of ``written`` (the reply's text
    parts), in part order as the writer needs them. Their indexes count characters of the
    reply's text: the text parts joined by a newline, as ``AIMessage.text`` joins them."""
    starts = [sum(len(text) + 1 for text in written[:j]) for j in range(len(written))]
    cited_parts = sorted(
        draw(st.lists(st.integers(0, len(written) - 1), min_size=1, max_size=2))
    )
    cited = []
    for k, j in enumerate(cited_parts):
        begin = draw(st.integers(0, len(written[j])))
        end = draw(st.integers(begin, len(written[j])))
        cited.append(
            Citation(url=f"https://example.com/{k}", title=draw(texts),
                     start_index=starts[j] + begin, end_index=starts[j] + end)
        )
    return cited


status = st.sampled_from(["completed", "failed"])
HOSTED: dict[str, st.SearchStrategy[tuple[dict[str, Any], dict[str, Any]]]] = {
    "web_search_call": st.tuples(
        st.builds(lambda q: {"action": {"type": "search", "query": q}}, texts),
        st.builds(lambda s: {"status": s}, status),
    ),
    "file_search_call": st.tuples(
        st.builds(lambda q: {"queries": [q]}, texts),
        st.builds(
            lambda s, t: {"status": s, "results": [{"file_id": "file-1", "text": t}]}, status, texts
        ),
    ),
    "code_interpreter_call": st.tuples(
        st.builds(lambda code: {"code": code, "container_id": "cntr_1"}, texts),
        st.builds(lambda s, logs: {"status": s, "outputs": [{"type": "logs", "logs": logs}]},
                  status, texts),
    ),
    "image_generation_call": st.tuples(
        st.just({}), st.builds(lambda s: {"status": s, "result": "iVBORw0KGgo="}, status)
    ),
    "mcp_call": st.tuples(
        st.builds(
            lambda name: {"name": name, "arguments": "{}", "server_label": "docs"}, names
        ),
        st.builds(lambda s, out: {"status": s, "output": out, "error": None}, status, texts),
    ),
}
"""For each hosted call type: its input (the call's args) and its result, as the API has them."""


@st.composite
def hosted_step(draw: st.DrawFn, n: int) -> list[Message]:
    """A reply that made a hosted call (its result follows) and maybe a computer call."""
    kind = draw(st.sampled_from(openai_responses.HOSTED_CALLS))
    name = kind.removesuffix("_call")
    call_id = f"{name}_{n}"
    args, result = draw(HOSTED[kind])
    call = ToolCall(name=name, args=args, id=call_id, metadata={NS: {"item": kind}})
    messages: list[Message] = [
        AIMessage(tool_calls=[call]),
        ToolMessage(
            content=json.dumps(result, ensure_ascii=False, sort_keys=True),
            tool_call_id=call_id,
            name=name,
        ),
    ]
    if draw(st.booleans()):
        computer = ToolCall(
            name="computer",
            args={"action": {"type": "screenshot"}, "pending_safety_checks": []},
            id=f"cc_{n}",
            metadata={NS: {"item": "computer_call", "id": f"ci_{n}", "status": "completed"}},
        )
        shot = {"type": "computer_screenshot", "image_url": "https://example.com/s.png"}
        messages[0] = AIMessage(tool_calls=[call, computer])
        messages.append(
            ToolMessage(
                content=json.dumps(shot, sort_keys=True),
                tool_call_id=f"cc_{n}",
                metadata={NS: {"output": "json"}},
            )
        )
    return messages


@st.composite
def expressible(draw: st.DrawFn) -> list[Message]:
    messages = draw(conversations(SHAPE))
    calls = {
        call.id: call
        for message in messages
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    }
    out: list[Message] = []
    for n, message in enumerate(messages):
        update: dict[str, Any] = {}
        if isinstance(message, (HumanMessage, SystemMessage)):
            update["content"] = draw(texts | st.lists(input_parts(), max_size=3))
        elif isinstance(message, ToolMessage):
            call = calls[message.tool_call_id]
            update["is_error"] = False
            update["name"] = call.name if call.kind == "function" and draw(st.booleans()) else None
            update["content"] = draw(texts | st.lists(output_parts(), max_size=2))
        elif isinstance(message, AIMessage):
            update["content"], update["citations"] = draw(reply_content(n))
            # an id has a place on an assistant message item with parts only
            content = update["content"]
            if isinstance(content, list) and (
                not content or any(not isinstance(part, ReasoningPart) for part in content)
            ):
                update["id"] = draw(st.none() | st.just(f"msg_{n}"))
            else:
                update["id"] = None
        out.append(type(message).model_validate({**dict(message), **update}))
        after = messages[n + 1] if n + 1 < len(messages) else None
        if (
            isinstance(message, HumanMessage)
            and (after is None or isinstance(after, HumanMessage))
            and draw(st.integers(0, 2)) == 0
        ):
            out.extend(draw(hosted_step(n)))
    return out


# --- traces as real item lists spell them --------------------------------------------------

OUTPUT_ITEM: TypeAdapter[Any] = TypeAdapter(ResponseOutputItem)
INPUT_ITEM: TypeAdapter[Any] = TypeAdapter(ResponseInputItem)


def as_sdk_object(item: dict[str, Any]) -> Any:
    """The item as the SDK's object, when one holds it exactly."""
    for adapter in (OUTPUT_ITEM, INPUT_ITEM):
        try:
            sdk = adapter.validate_python(item)
        except pydantic.ValidationError:
            continue
        if sdk.model_dump(mode="json", exclude_unset=True) == item:
            return sdk
    return item


@st.composite
def traces(draw: st.DrawFn) -> list[Any]:
    items = openai_responses.from_messages(draw(expressible()))
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            args = _parsed(item["arguments"]) if item["arguments"] else None
            if isinstance(args, dict) and draw(st.booleans()):
                item["arguments"] = json.dumps(args, separators=(",", ":"))
            if draw(st.booleans()):
                item["status"] = "completed"
                item["id"] = f"fc_{item['call_id']}"
        elif "role" in item and kind is None and draw(st.booleans()):
            item["type"] = "message"
        elif kind == "message" and item["role"] == "assistant" and draw(st.booleans()):
            item["status"] = "completed"
            for part in item["content"]:
                bare = part["type"] == "output_text" and not part["annotations"]
                if bare and draw(st.booleans()):
                    del part["annotations"]
        if draw(st.integers(0, 9)) == 0:
            item["x_trace"] = draw(json_objects)
    return [as_sdk_object(item) if draw(st.booleans()) else item for item in items]


def canonical(trace: list[Any]) -> list[Any]:
    return [
        item.model_dump(mode="json", exclude_unset=True) if hasattr(item, "model_dump") else item
        for item in trace
    ]


# --- broken traces -------------------------------------------------------------------------


def _outputs(items: list[Any]) -> list[int]:
    return [j for j, item in enumerate(items) if item.get("type") == "function_call_output"]


def _parsed_outputs(items: list[Any]) -> list[int]:
    """The outputs of function calls whose arguments parsed (such a call must be answered)."""
    return [
        j
        for j in _outputs(items)
        if any(
            other.get("call_id") == items[j]["call_id"]
            and other.get("type") == "function_call"
            and other["arguments"][:1] in ("{", "")
            and isinstance(_parsed(other["arguments"]), dict)
            for other in items
        )
    ]


def _calls(items: list[Any]) -> list[int]:
    return [j for j, item in enumerate(items) if item.get("type") == "function_call"]


def breaks(items: list[Any]) -> list[str]:
    """The kinds of break ``broken`` can make of ``items``."""
    options = ["unknown_type", "orphan", "not_an_item", "no_role"]
    if _parsed_outputs(items):
        options.append("removed_output")
    if _outputs(items):
        options.append("output_twice")
    if len(_calls(items)) >= 2:
        options.append("duplicate_call_id")
    if _calls(items):
        options.append("arguments_object")
    return options


def written_items(only: str | None = None) -> st.SearchStrategy[list[Any]]:
    """Item lists ``from_messages`` writes (``only``: that ``broken`` can break that way)."""
    items = expressible().map(lambda ms: copy.deepcopy(openai_responses.from_messages(ms)))
    return items if only is None else items.filter(lambda found: only in breaks(found))


RULE_BREAKS = {
    "unknown_role": ["unknown_type"],
    "orphan_tool_result": ["orphan", "output_twice"],
    "unanswered_tool_call": ["removed_output"],
    "duplicate_tool_call_id": ["duplicate_call_id"],
}
"""The breaks of ``broken`` that make each of ``law_kits.RULE_KINDS``."""


def rules() -> dict[str, st.SearchStrategy[BrokenTrace]]:
    return {
        code: st.one_of(*[broken(kind) for kind in kinds]) for code, kinds in RULE_BREAKS.items()
    }


@st.composite
def broken(draw: st.DrawFn, only: str | None = None) -> BrokenTrace:
    """Written items broken one way (``only``: that way); the code, index and path (where it
    is one of ``RULE_BREAKS``) they must raise."""
    items = draw(written_items(only))
    kind = only if only is not None else draw(st.sampled_from(breaks(items)))
    parsed, outputs, calls = _parsed_outputs(items), _outputs(items), _calls(items)
    if kind == "unknown_type":
        at = draw(st.integers(0, len(items) - 1))
        items[at] = {**items[at], "type": draw(st.sampled_from(["tool_result", "robot", "text"]))}
        return BrokenTrace(items, "unknown_role", at, f"items[{at}].type")
    if kind == "orphan":
        users = [j for j, item in enumerate(items) if item.get("role") in ("user", "system")]
        at = draw(st.sampled_from(users)) + 1
        items.insert(at, {"type": "function_call_output", "call_id": "call_stray", "output": "x"})
        return BrokenTrace(items, "orphan_tool_result", at, f"items[{at}].call_id")
    if kind == "not_an_item":
        at = draw(st.integers(0, len(items)))
        items.insert(at, draw(st.sampled_from([None, "hello", 3, ["user", "hi"]])))
        return BrokenTrace(items, "malformed_event", at)
    if kind == "no_role":
        messages = [j for j, item in enumerate(items) if "role" in item]
        at = draw(st.sampled_from(messages))
        del items[at]["role"]
        items[at]["type"] = "message"
        return BrokenTrace(items, "malformed_event", at)
    if kind == "removed_output":
        gone = draw(st.sampled_from(parsed))
        call_id = items[gone]["call_id"]
        del items[gone]
        (at,) = [
            j
            for j, item in enumerate(items)
            if item.get("type") == "function_call" and item["call_id"] == call_id
        ]
        return BrokenTrace(items, "unanswered_tool_call", at, f"items[{at}]")
    if kind == "output_twice":
        at = draw(st.sampled_from(outputs)) + 1
        items.insert(at, copy.deepcopy(items[at - 1]))
        return BrokenTrace(items, "orphan_tool_result", at, f"items[{at}].call_id")
    if kind == "duplicate_call_id":
        first = calls[0]
        later = draw(st.sampled_from(calls[1:]))
        old = items[later]["call_id"]
        for item in items:
            if item.get("call_id") == old:
                item["call_id"] = items[first]["call_id"]
        return BrokenTrace(items, "duplicate_tool_call_id", later, f"items[{later}].call_id")
    at = draw(st.sampled_from(calls))
    items[at]["arguments"] = {"city": "Paris"}
    return BrokenTrace(items, "malformed_event", at)


def _parsed(text: str) -> Any:
    if text == "":
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return None


KIT = LawKit(
    traces=traces(),
    conversations=expressible(),
    broken=st.one_of(broken(), *rules().values()),
    canonical=canonical,
    rules=rules(),
)

__all__ = ["KIT", "as_sdk_object", "broken", "canonical", "expressible", "rules", "traces"]
