"""Property tests of laws the adapter-law harness does not draw:

* LlamaIndex event streams (``events_to_messages``): the four named mutations (unknown event
  type, a result no call asked for / a result given twice, a removed result, a call id used
  twice) on generated AgentWorkflow runs, each with its code, index and path.
* Reasoning-part ids (a typed home no strategy draws): faithful for the formats with a place
  for them (native, LangChain, Responses, Agents), provenance left out (not a crash, not a
  changed conversation otherwise) by the others.
* The typed homes ``strategies.parts`` never draws (audio and files by URL or data, reasoning
  ids): native lossless/faithful, and every writer whole-or-refused on them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage as LcAI
from langchain_core.messages import HumanMessage as LcHuman
from test_llama_index_events import _with_sniffed_images, stream

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters import langchain, llama_index
from tracebridge.cli import to_json
from tracebridge.registry import FORMATS, get_adapter

from law_kits.langchain import TYPED_SHAPE
from law_kits.langchain import canonical as lc_canonical
from law_kits.langchain import expressible as lc_expressible
from law_kits.llama_index import expressible as li_expressible
from law_kits.openai_agents import conversations as agents_conversations
from law_kits.openai_responses import expressible as responses_expressible
from strategies import Shape, conversations, names, texts

# --- LlamaIndex event streams: the named mutations ----------------------------------------

EVENT_SHAPE = Shape(metadata=False, message_ids=False, names=False, system=False)


def _runs() -> st.SearchStrategy[list[Message]]:
    # (an image given by data gets the mime type LlamaIndex reads from it, as event objects
    # built from the stream would say)
    return conversations(EVENT_SHAPE).map(li_expressible).map(
        lambda ms: [_with_sniffed_images(m) for m in ms]).filter(
        lambda ms: any(isinstance(m, ToolMessage) for m in ms))


def _results(events: list[dict[str, Any]]) -> list[int]:
    return [e for e, ev in enumerate(events) if ev["event"] == "ToolCallResult"]


def _outputs(events: list[dict[str, Any]]) -> list[int]:
    return [e for e, ev in enumerate(events) if ev["event"] == "AgentOutput"]


def _call_ids(event: dict[str, Any]) -> list[str]:
    return [b["tool_call_id"] for b in event["data"]["response"]["blocks"]
            if b["block_type"] == "tool_call"] + [
        c["id"] for c in event["data"]["response"]["additional_kwargs"].get("tool_calls", [])]


def _read(events: list[dict[str, Any]]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    return caught.value


@settings(max_examples=15)
@given(_runs(), st.data())
def test_events_an_unknown_event_type_is_unknown_role(messages: list[Message],
                                                      data: st.DataObject) -> None:
    events = stream(messages, "Agent")
    at = data.draw(st.integers(0, len(events) - 1), label="at")
    events[at]["event"] = data.draw(st.sampled_from(["RobotEvent", "agentoutput", ""]))
    error = _read(events)
    assert (error.code, error.index, error.path) == ("unknown_role", at, f"events[{at}].event")


@settings(max_examples=15)
@given(_runs(), st.data())
def test_events_a_stray_or_repeated_result_is_orphan(messages: list[Message],
                                                     data: st.DataObject) -> None:
    events = stream(messages, "Agent")
    original = data.draw(st.sampled_from(_results(events)), label="result")
    copied = copy.deepcopy(events[original])
    if data.draw(st.booleans(), label="stray"):
        copied["data"]["tool_id"] = "call_stray"
    at = original + 1
    events.insert(at, copied)
    error = _read(events)
    assert (error.code, error.index, error.path) == (
        "orphan_tool_result", at, f"events[{at}].data.tool_id")


@settings(max_examples=15)
@given(_runs(), st.data())
def test_events_a_removed_result_leaves_its_call_unanswered(messages: list[Message],
                                                            data: st.DataObject) -> None:
    events = stream(messages, "Agent")
    parsed = {c.id for m in messages if isinstance(m, AIMessage) for c in m.tool_calls
              if c.invalid_args is None}  # a call whose arguments did not parse may go unanswered
    removable = [e for e in _results(events) if events[e]["data"]["tool_id"] in parsed]
    assume(removable)
    gone = data.draw(st.sampled_from(removable), label="removed")
    call_id = events[gone]["data"]["tool_id"]
    kept = []
    for e, event in enumerate(events):
        if e == gone:
            continue
        event = copy.deepcopy(event)
        if event["event"] == "AgentInput":  # the memory the next step reads lost it too
            event["data"]["input"] = [
                m for m in event["data"]["input"]
                if m["additional_kwargs"].get("tool_call_id") != call_id]
        kept.append(event)
    (opener,) = [e for e in _outputs(kept) if call_id in _call_ids(kept[e])]
    k = _call_ids(kept[opener]).index(call_id)
    error = _read(kept)
    assert (error.code, error.index, error.path) == (
        "unanswered_tool_call", opener, f"events[{opener}].data.response.tool_calls[{k}]")


@settings(max_examples=15)
@given(_runs().filter(lambda ms: sum(bool(getattr(m, "tool_calls", None)) for m in ms) >= 2),
       st.data())
def test_events_a_reused_call_id_is_duplicate(messages: list[Message],
                                              data: st.DataObject) -> None:
    events = stream(messages, "Agent")
    openers = [e for e in _outputs(events) if _call_ids(events[e])]
    first, later = openers[0], data.draw(st.sampled_from(openers[1:]), label="later")
    taken, old = _call_ids(events[first])[0], _call_ids(events[later])[0]
    text = json.dumps(events[later:]).replace(json.dumps(old), json.dumps(taken))
    events = events[:later] + json.loads(text)
    error = _read(events)
    assert (error.code, error.index, error.path) == (
        "duplicate_tool_call_id", later, f"events[{later}].data.response.tool_calls[0].id")


# --- reasoning ids ------------------------------------------------------------------------


def with_reasoning_ids(messages: list[Message], prefix: str = "rs") -> list[Message]:
    """Each AI message's reasoning parts given ids; an AI message with none gets one first."""
    out: list[Message] = []
    for n, message in enumerate(messages):
        if isinstance(message, AIMessage):
            content = message.content
            parts = [TextPart(text=content)] if isinstance(content, str) and content else (
                [] if isinstance(content, str) else list(content))
            if not any(isinstance(p, ReasoningPart) for p in parts) and (
                    parts or message.id is None):  # (a Responses message id needs a part)
                parts.insert(0, ReasoningPart(text=f"thought {n}"))
            if any(isinstance(p, ReasoningPart) for p in parts):  # else the content as given
                parts = [p.model_copy(update={"id": f"{prefix}_{n}_{k}", "metadata": {}})
                         if isinstance(p, ReasoningPart) else p for k, p in enumerate(parts)]
                message = message.model_copy(update={"content": parts})
        out.append(message)
    return out


REASONED = {
    "tracebridge": conversations(Shape(ids=True)).map(with_reasoning_ids),
    "langchain": conversations(TYPED_SHAPE).map(lc_expressible).map(with_reasoning_ids),
    "openai_responses": responses_expressible().map(with_reasoning_ids),
    "openai_agents": agents_conversations.map(with_reasoning_ids),
}


@pytest.mark.parametrize("name", sorted(REASONED))
@settings(max_examples=25)
@given(data=st.data())
def test_reasoning_ids_are_faithful_where_the_format_has_a_place(name: str,
                                                                 data: st.DataObject) -> None:
    messages = data.draw(REASONED[name], label="messages")
    adapter = get_adapter(name)
    written = adapter.from_messages(messages)
    stored = json.loads(json.dumps(to_json(name, written)))
    assert adapter.to_messages(stored) == messages


# --- typed homes strategies.parts never draws ---------------------------------------------

wide_parts = st.one_of(
    st.builds(AudioPart, url=st.just("https://example.com/a.wav"),
              mime_type=st.none() | st.just("audio/wav")),
    st.builds(FilePart, url=st.just("https://example.com/a.pdf"),
              filename=st.none() | names, mime_type=st.none() | st.just("application/pdf")),
    st.builds(FilePart, data=st.just("JVBERi0x"), filename=st.none() | names,
              mime_type=st.none() | st.just("application/pdf")),
    st.builds(ReasoningPart, text=texts, id=st.none() | names),
    st.builds(TextPart, text=texts),
)


@st.composite
def wide_conversations(draw: st.DrawFn) -> list[Message]:
    messages = draw(conversations(Shape(metadata=False)))
    out = []
    for m in messages:
        if draw(st.booleans()):
            m = m.model_copy(update={"content": draw(st.lists(wide_parts, min_size=1,
                                                              max_size=3))})
        out.append(m)
    return out


@settings(max_examples=40)
@given(wide_conversations())
def test_native_carries_the_parts_strategies_never_draw(messages: list[Message]) -> None:
    adapter = get_adapter("tracebridge")
    stored = json.loads(json.dumps(to_json("tracebridge", adapter.from_messages(messages))))
    assert adapter.to_messages(stored) == messages


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=30)
@given(messages=wide_conversations())
def test_wide_parts_are_written_whole_or_refused(name: str, messages: list[Message]) -> None:
    adapter = get_adapter(name)
    try:
        written = adapter.from_messages(messages)
    except TraceError as error:
        refused: TraceError | None = error
    else:
        refused = None
    if refused is not None:
        assert (refused.code, refused.source) == ("not_representable", name)
        assert refused.index is not None
        return
    again = adapter.to_messages(json.loads(json.dumps(to_json(name, written))))
    assert transcript_hash(again) == transcript_hash(messages)


# --- LangChain: reasoning blocks with ids in native traces (the lossless law's traces never
# hold one: law_kits/langchain.py draws {"type": "reasoning", "reasoning": t} only) -----------


rs_ids = names.map(lambda n: f"rs_{n}")
summary_entry = st.builds(lambda t, i: {"type": "summary_text", "text": t, **i}, texts,
                          st.sampled_from([{}, {"index": 0}]))
reasoning_blocks = st.one_of(
    st.builds(lambda t, i: {"type": "reasoning", "reasoning": t, "id": i}, texts, rs_ids),
    st.builds(lambda t, i, x: {"type": "reasoning", "reasoning": t, "id": i, "extras": x},
              texts, rs_ids, st.just({"signature": "sig"})),
    st.builds(lambda i, s: {"type": "reasoning", "id": i, "summary": s}, rs_ids,
              st.lists(summary_entry, max_size=2)),
)


@settings(max_examples=40)
@given(st.lists(reasoning_blocks, min_size=1, max_size=2), texts,
       st.sampled_from([None, "v1", "responses/v1"]))
def test_langchain_reasoning_blocks_with_ids_are_lossless(blocks: list[dict[str, Any]],
                                                         text: str, version: str | None) -> None:
    metadata = {} if version is None else {"output_version": version}
    trace = [LcHuman(content="q"),
             LcAI(content=[*blocks, {"type": "text", "text": text}], response_metadata=metadata)]
    typed = langchain.to_messages(trace)
    assert lc_canonical(langchain.from_messages(typed)) == lc_canonical(trace)
