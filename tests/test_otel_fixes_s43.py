"""The otel reader on tool spans that answer no call, hidden outputs, content events, spans
delivered twice, OpenInference's partial hide switches, part field types, spans naming two
sessions, tool spans naming another tool, tool spans whose call may be another
conversation's or session's, reused call ids, the writer's time, copies in another trace, and
why output messages may be missing (docs/adapters/otel.md).

1. A tool span whose call id names no call of the conversation is ``orphan_tool_result`` at
   the span, wherever it ran and whatever the last call made.
2. A model call that recorded its input, no output messages, did not fail and says it
   answered (``output.value``, finish reasons, output tokens) is ``content_not_captured``.
3. Message content in span events is refused even when the span records messages in
   attributes.
4. A span delivered twice (same trace and span id, same record) is read once; two different
   records under one id are ``conflicting_fields`` at the second.
5. OpenInference's ``OPENINFERENCE_HIDE_INPUT_IMAGES`` / ``_HIDE_INPUT_MESSAGES`` are
   ``content_not_captured`` naming them.
6. A GenAI part's ``modality`` that is not text is ``malformed_event`` there.
7. A media part's field of the wrong type is refused at the part's own key.
8. A span naming two different sessions is ``conflicting_fields`` at the second key.
9. A tool span placed by call id that names another tool than its call is
   ``conflicting_fields`` at its name.
10. A tool span whose call may be another's is not the conversation's orphan: a model call
    read outside it holds the call id (in its input too), an unread call of another session
    started before it, or it ran before the conversation's first call, after another's.
11. A call id reused in a later turn is ``duplicate_tool_call_id``, not a misnamed tool span.
12. Many results written as tool spans read back (their speed: benchmarks/bench_otel.py).
13. Copies of a span are compared after the ``trace_id`` filter.
14. Output messages not recorded are blamed on a switch or on reply items with no message.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from otel_helpers import refused, text, where
from test_otel import recorded_spans

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import otel

GOLDEN = Path(__file__).resolve().parent.parent / "golden_traces" / "otel"
SPANS = "resourceSpans[0].scopeSpans[0].spans"


def golden(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text())
    return loaded


ASK = text("user", "Weather in Paris?")
CALLING = {"role": "assistant", "parts": [
    {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                     "response": "sunny"}]}
ANSWER = text("assistant", "It is sunny.")


def chat(tracer: Any, given: Any, answered: Any = None, **extra: Any) -> None:
    with tracer.start_as_current_span("chat") as current:
        current.set_attribute("gen_ai.operation.name", "chat")
        for key, value in extra.items():
            current.set_attribute(key, value)
        current.set_attribute("gen_ai.input.messages", json.dumps(given))
        if answered is not None:
            current.set_attribute("gen_ai.output.messages", json.dumps(answered))


def tool(tracer: Any, call_id: str, name: str, result: str, *, failed: bool = False,
         **extra: Any) -> None:
    trace = pytest.importorskip("opentelemetry.trace")
    with tracer.start_as_current_span(f"execute_tool {name}") as current:
        current.set_attribute("gen_ai.operation.name", "execute_tool")
        current.set_attribute("gen_ai.tool.call.id", call_id)
        current.set_attribute("gen_ai.tool.name", name)
        current.set_attribute("gen_ai.tool.call.result", result)
        for key, value in extra.items():
            current.set_attribute(key, value)
        if failed:
            current.set_status(trace.Status(trace.StatusCode.ERROR, "boom"))


def one_span(attributes: dict[str, Any], events: tuple[tuple[str, Any], ...] = ()) -> list[Any]:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            for key, value in attributes.items():
                current.set_attribute(key, value)
            for name, said in events:
                current.add_event(name, said)

    return recorded_spans(build)


def spans_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return found


def attributes_of(span: dict[str, Any]) -> dict[str, Any]:
    return {item["key"]: item["value"] for item in span["attributes"]}


def without(document: dict[str, Any], *prefixes: str) -> dict[str, Any]:
    """The document with every attribute whose key starts with one of ``prefixes`` left out,
    as OpenInference's ``TraceConfig.censor`` leaves out what a hide switch hides."""
    edited = copy.deepcopy(document)
    for span in spans_of(edited):
        span["attributes"] = [item for item in span["attributes"]
                              if not item["key"].startswith(prefixes)]
    return edited


# --- 1. a tool span that answers no call ---------------------------------------------------


def stray_tool(where_it_ran: str, failed: bool) -> list[Any]:
    """A chat that calls c1, its tool, a chat answering in text; one more tool span runs c9,
    which no model call made (the span of the call that made it was lost, say)."""
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("agent"):
            if where_it_ran == "before":
                tool(tracer, "c9", "delete_db", "deleted", failed=failed)
            chat(tracer, [ASK], [CALLING])
            tool(tracer, "c1", "get_weather", "sunny")
            if where_it_ran == "between":
                tool(tracer, "c9", "delete_db", "deleted", failed=failed)
            chat(tracer, [ASK, CALLING, RESULT], [ANSWER])
            if where_it_ran == "after":
                tool(tracer, "c9", "delete_db", "deleted", failed=failed)

    return recorded_spans(build)


@pytest.mark.parametrize("failed", [False, True])
@pytest.mark.parametrize(("where_it_ran", "index"), [("before", 0), ("between", 2),
                                                     ("after", 3)])
def test_a_tool_span_naming_no_call_is_an_orphan_wherever_it_ran(
    where_it_ran: str, index: int, failed: bool
) -> None:
    # before: dropped silently when the last call answered in text, and between model calls
    spans = stray_tool(where_it_ran, failed)
    for options in ({}, {"allow_pending": True}):
        error = refused(spans, **options)
        assert where(error) == ("orphan_tool_result", index, f"[{index}]")
        assert "'c9'" in error.detail


def test_a_real_tool_span_whose_call_was_lost_is_an_orphan() -> None:
    # the LangGraph run's get_weather span, its ToolMessage now answering a call no model
    # call made (its model call's span lost); before: dropped silently, mid-conversation
    document = copy.deepcopy(golden("openinference_langgraph_agent")["trace"])
    span = spans_of(document)[6]
    output = next(item for item in span["attributes"] if item["key"] == "output.value")
    output["value"]["stringValue"] = output["value"]["stringValue"].replace(
        '"tool_call_id": "call_1"', '"tool_call_id": "call_lost"')
    error = refused(document)
    assert where(error) == ("orphan_tool_result", 6, f"{SPANS}[6]")


def test_another_sessions_tool_span_is_not_an_orphan_of_this_one() -> None:
    # (kept as it was: a tool span running a call only another session's model call made is
    # that session's)
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            chat(tracer, [ASK], [ANSWER], **{"session.id": "a"})
            chat(tracer, [ASK], [CALLING], **{"session.id": "b"})
            tool(tracer, "c1", "get_weather", "sunny")
            chat(tracer, [ASK, CALLING, RESULT], [ANSWER], **{"session.id": "b"})

    spans = recorded_spans(build)
    assert otel.to_messages(spans, session_id="a") == [
        HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny.")]
    assert otel.to_messages(spans, session_id="b")[2] == ToolMessage(
        content="sunny", tool_call_id="c1")


def test_a_tool_span_of_this_session_is_its_orphan_though_another_sessions_input_holds_its_id(
) -> None:
    # the span names session a: only a's calls may excuse it, other sessions do not count
    calling = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "cb", "name": "get_weather", "arguments": {"city": "Rome"}}]}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "cb",
                                         "response": "rain"}]}

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            chat(tracer, [ASK], [ANSWER], **{"session.id": "a"})
            named_a: dict[str, Any] = {"session.id": "a"}  # the tool span names session a
            tool(tracer, "cb", "get_weather", "rain", **named_a)
            chat(tracer, [text("user", "Weather in Rome?"), calling, result],
                 [text("assistant", "Rain.")], **{"session.id": "b"})

    spans = recorded_spans(build)
    assert [span.name for span in spans][:3] == ["chat", "execute_tool get_weather", "chat"]
    error = refused(spans, session_id="a")
    assert where(error) == ("orphan_tool_result", 1, "[1]")
    assert error.detail == (
        "the tool span ran call 'cb', which names no call of the conversation (its calls: "
        "none with an id): its result would be dropped (a model-call span lost to sampling "
        "or to a full export queue leaves such a tool span)")


def test_of_two_orphan_tool_spans_the_earlier_started_is_refused_whatever_the_input_order(
) -> None:
    def orphan(tracer: Any, call_id: str, name: str, start: int) -> None:
        with tracer.start_as_current_span(f"execute_tool {name}", start_time=start) as current:
            current.set_attribute("gen_ai.operation.name", "execute_tool")
            current.set_attribute("gen_ai.tool.call.id", call_id)
            current.set_attribute("gen_ai.tool.name", name)
            current.set_attribute("gen_ai.tool.call.result", "done")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("agent"):
            chat(tracer, [ASK], [CALLING])
            tool(tracer, "c1", "get_weather", "sunny")
            started = time.time_ns()
            orphan(tracer, "c8", "delete_db", started)
            orphan(tracer, "c9", "drop_table", started + 1_000)
            chat(tracer, [ASK, CALLING, RESULT], [ANSWER])

    spans = recorded_spans(build)
    assert [span.name for span in spans] == [
        "chat", "execute_tool get_weather", "execute_tool delete_db", "execute_tool drop_table",
        "chat", "agent"]
    backwards = [spans[i] for i in (3, 2, 0, 1, 4, 5)]  # c9's span first, then c8's
    for given, index in ((spans, 2), (backwards, 1)):
        error = refused(given)
        assert where(error) == ("orphan_tool_result", index, f"[{index}]")
        assert error.detail == (
            "the tool span ran call 'c8', which names no call of the conversation (its calls: "
            "'c1'): its result would be dropped (a model-call span lost to sampling or to a "
            "full export queue leaves such a tool span)")


# --- 2. outputs hidden, input recorded ----------------------------------------------------


def test_hidden_output_messages_are_not_captured_not_a_shorter_conversation() -> None:
    # OPENINFERENCE_HIDE_OUTPUT_MESSAGES on the real openai tool loop: output.value stays;
    # before: 4 messages, the final answer lost, no error
    document = without(golden("openinference_openai_tool_loop")["trace"],
                       "llm.output_messages")
    error = refused(document)
    assert where(error) == ("content_not_captured", 0,
                            f"{SPANS}[0].attributes['output.value']")
    assert "OPENINFERENCE_HIDE_OUTPUT_MESSAGES" in error.detail
    with pytest.raises(TraceError) as caught:
        list(otel.calls(document))
    assert where(caught.value) == where(error)


def test_hidden_outputs_are_told_by_the_output_token_count() -> None:
    # OPENINFERENCE_HIDE_OUTPUTS hides output.value too; the token count says it answered
    document = without(golden("openinference_openai_tool_loop")["trace"],
                       "llm.output_messages", "output.")
    error = refused(document)
    assert where(error) == ("content_not_captured", 0,
                            f"{SPANS}[0].attributes['llm.token_count.completion']")
    assert "OPENINFERENCE_HIDE_OUTPUTS" in error.detail


def test_a_genai_call_with_finish_reasons_and_no_output_is_not_captured() -> None:
    spans = recorded_spans(lambda tracer: chat(
        tracer, [ASK], None, **{"gen_ai.response.finish_reasons": ("stop",)}))
    error = refused(spans)
    assert where(error) == ("content_not_captured", 0,
                            "[0].attributes['gen_ai.response.finish_reasons']")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in error.detail


def test_a_real_genai_call_without_its_output_is_not_captured() -> None:
    document = without(golden("openai_v2_tool_loop")["trace"], "gen_ai.output.messages")
    error = refused(document)
    assert where(error) == ("content_not_captured", 0,
                            f"{SPANS}[0].attributes['gen_ai.response.finish_reasons']")


def test_a_failed_call_without_output_still_reads() -> None:
    # (kept as it was: a call that failed answered nothing)
    trace = pytest.importorskip("opentelemetry.trace")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            current.set_attribute("gen_ai.operation.name", "chat")
            current.set_attribute("gen_ai.input.messages", json.dumps([ASK]))
            current.set_attribute("gen_ai.response.finish_reasons", ("error",))
            current.set_status(trace.Status(trace.StatusCode.ERROR, "timeout"))

    assert otel.to_messages(recorded_spans(build)) == [HumanMessage(content="Weather in Paris?")]


# --- 3. content events beside message attributes ------------------------------------------


@pytest.mark.parametrize(("attributes", "event"), [
    ({"gen_ai.input.messages": json.dumps([text("user", "hi")])},
     ("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                        "message": json.dumps({"role": "assistant", "content": "hello"})})),
    ({"gen_ai.input.messages": json.dumps([text("user", "hi")]),
      "gen_ai.output.messages": json.dumps([text("assistant", "hello")])},
     ("gen_ai.system.message", {"content": "Never reveal the password."})),
])
def test_content_events_are_refused_beside_message_attributes(
    attributes: dict[str, Any], event: tuple[str, Any]
) -> None:
    # before: the reply (first case) or the system prompt (second) was dropped silently
    spans = one_span({"gen_ai.operation.name": "chat", **attributes}, (event,))
    error = refused(spans)
    assert where(error) == ("content_not_captured", 0, "[0]")
    assert f"span events ({event[0]})" in error.detail


# --- 4. spans delivered twice ---------------------------------------------------------------


def test_a_batch_delivered_twice_is_read_once() -> None:
    # before: ambiguous_trace, whose suggested filters were ambiguous_trace again
    case = golden("openai_v2_tool_loop")
    once = otel.to_messages(case["trace"])
    assert [m.model_dump(mode="json") for m in once] == case["expected"]
    lines = json.dumps(case["trace"]) + "\n" + json.dumps(case["trace"]) + "\n"
    assert otel.to_messages(lines) == once
    assert otel.to_messages([case["trace"], case["trace"]]) == once


def test_sdk_spans_given_twice_are_read_once() -> None:
    spans = recorded_spans(lambda tracer: (chat(tracer, [ASK], [CALLING]),
                                           tool(tracer, "c1", "get_weather", "sunny")))
    assert otel.to_messages([*spans, *spans]) == otel.to_messages(spans)


def _other_output_tokens(document: dict[str, Any]) -> None:
    answer = next(item for item in spans_of(document)[0]["attributes"]
                  if item["key"] == "gen_ai.usage.output_tokens")
    answer["value"] = {"intValue": "999"}


RECORDS: list[tuple[str, Any]] = [
    ("attributes", _other_output_tokens),
    ("start", lambda document: spans_of(document)[0].update(startTimeUnixNano="0")),
    ("end", lambda document: spans_of(document)[0].update(endTimeUnixNano="3")),
    ("name", lambda document: spans_of(document)[0].update(name="chat other")),
    ("error", lambda document: spans_of(document)[0].update(
        status={"code": "STATUS_CODE_ERROR"})),
    ("events", lambda document: spans_of(document)[0].update(
        events=[{"name": "retry", "timeUnixNano": "1"}])),
    ("parent_id", lambda document: spans_of(document)[0].update(parentSpanId="AAAAAAAAIAI=")),
    ("dropped_attributes", lambda document: spans_of(document)[0].update(
        droppedAttributesCount=1)),
    ("scope", lambda document: document["resourceSpans"][0]["scopeSpans"][0].update(
        scope={"name": "another.instrumentation"})),
]


@pytest.mark.parametrize(("differs", "edit"), RECORDS, ids=[name for name, _ in RECORDS])
def test_one_span_id_with_two_records_is_conflicting(differs: str, edit: Any) -> None:
    case = golden("openai_v2_tool_loop")
    other = copy.deepcopy(case["trace"])
    edit(other)
    lines = json.dumps(case["trace"]) + "\n" + json.dumps(other) + "\n"
    error = refused(lines)
    assert where(error) == ("conflicting_fields", 2,
                            "lines[1].resourceSpans[0].scopeSpans[0].spans[0]")
    assert error.detail == (
        "span 0000000000001001 of trace 0000000000000000000000000000a001 appears twice (first "
        f"at lines[0].resourceSpans[0].scopeSpans[0].spans[0]) and the copies' {differs} "
        "differ: a span id is unique in its trace, so which record is the span cannot be told")


# --- 5. OpenInference's partial hide switches ------------------------------------------------

IMAGE_CONTENT = "llm.input_messages.0.message.contents.1.message_content"


def test_hidden_input_images_are_not_captured() -> None:
    # before: malformed_event ("an image content needs image.image.url")
    spans = one_span({
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "What is this?",
        f"{IMAGE_CONTENT}.type": "image",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "A cat.",
    })
    error = refused(spans)
    assert where(error) == ("content_not_captured", 0, f"[0].attributes['{IMAGE_CONTENT}.image']")
    assert "OPENINFERENCE_HIDE_INPUT_IMAGES" in error.detail


def test_hidden_input_messages_are_not_captured_and_name_openinference() -> None:
    # before: truncated_trace, blaming Traceloop
    document = without(golden("openinference_openai_tool_loop")["trace"], "llm.input_messages")
    error = refused(document)
    assert where(error) == ("content_not_captured", 0,
                            f"{SPANS}[0].attributes['llm.input_messages']")
    assert "OPENINFERENCE_HIDE_INPUT_MESSAGES" in error.detail
    assert "Traceloop" not in error.detail


# --- 6. and 7. GenAI part fields -------------------------------------------------------------

OUTPUT = json.dumps([text("assistant", "ok")])


def with_part(part: dict[str, Any]) -> list[Any]:
    listed = [{"role": "user", "parts": [{"type": "text", "content": "see"}, part]}]
    return one_span({"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(listed),
                     "gen_ai.output.messages": OUTPUT})


@pytest.mark.parametrize("modality", [3, None, ["image"], True])
def test_a_modality_that_is_not_text_is_malformed(modality: Any) -> None:
    # before: kept as metadata the writer then refused
    spans = with_part({"type": "blob", "modality": modality, "mime_type": "image/png",
                       "content": "AAAA"})
    error = refused(spans)
    assert where(error) == ("malformed_event", 0,
                            "[0].attributes['gen_ai.input.messages[0].parts[1].modality']")


@pytest.mark.parametrize(("part", "key"), [
    ({"type": "blob", "modality": "image", "mime_type": "image/png", "content": 5}, "content"),
    ({"type": "uri", "modality": "audio", "uri": ["u"]}, "uri"),
    ({"type": "file", "modality": "file", "file_id": 7}, "file_id"),
    ({"type": "uri", "modality": "image", "uri": "u", "mime_type": {"a": 1}}, "mime_type"),
    ({"type": "uri", "modality": "image", "uri": "u", "detail": 2}, "detail"),
    ({"type": "uri", "modality": "video", "uri": "u", "filename": False}, "filename"),
])
def test_a_part_field_of_the_wrong_type_is_refused_at_its_key(
    part: dict[str, Any], key: str
) -> None:
    # before: at the message, in typed terms ("Input should be a valid string (at data)")
    error = refused(with_part(part))
    assert where(error) == ("malformed_event", 0,
                            f"[0].attributes['gen_ai.input.messages[0].parts[1].{key}']")
    assert error.detail == f"Input should be a valid string, got {part[key]!r}"


# --- 8. two sessions on one span -----------------------------------------------------------

TWO_SESSIONS = {"gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([text("user", "hi")]),
                "gen_ai.output.messages": OUTPUT,
                "session.id": "phoenix-session-A", "gen_ai.conversation.id": "conv_B"}


@pytest.mark.parametrize("session_id", ["conv_B", "phoenix-session-A", None])
def test_a_span_naming_two_sessions_is_conflicting(session_id: str | None) -> None:
    # before: session.id won silently; conv_B said "no span has session id 'conv_B'"
    error = refused(one_span(TWO_SESSIONS), session_id=session_id)
    assert where(error) == ("conflicting_fields", 0, "[0].attributes['gen_ai.conversation.id']")
    assert "'phoenix-session-A'" in error.detail
    assert "'conv_B'" in error.detail


def test_a_trace_id_that_leaves_the_span_out_does_not_look_at_it() -> None:
    def build(tracer: Any) -> None:
        one = {**TWO_SESSIONS, "gen_ai.conversation.id": "phoenix-session-A"}
        for attributes in (TWO_SESSIONS, one):
            with tracer.start_as_current_span("chat") as current:  # a root: a trace of its own
                for key, value in attributes.items():
                    current.set_attribute(key, value)

    spans = recorded_spans(build)
    assert where(refused(spans)) == ("conflicting_fields", 0,
                                     "[0].attributes['gen_ai.conversation.id']")
    other = f"{spans[1].context.trace_id:032x}"
    assert otel.to_messages(spans, trace_id=other) == [HumanMessage(content="hi"),
                                                       AIMessage(content="ok")]


def test_one_session_under_two_keys_reads() -> None:
    # (kept as it was)
    spans = one_span({**TWO_SESSIONS, "gen_ai.conversation.id": "phoenix-session-A"})
    assert otel.to_messages(spans, session_id="phoenix-session-A") == [
        HumanMessage(content="hi"), AIMessage(content="ok")]


# --- 9. a tool span placed by id that names another tool ----------------------------------


def test_a_tool_span_naming_another_tool_than_its_call_is_conflicting() -> None:
    # before: the result of get_weather's call read as get_time's
    def build(tracer: Any) -> None:
        chat(tracer, [ASK], [CALLING])
        tool(tracer, "c1", "get_time", "10:00",
             **{"gen_ai.tool.call.arguments": json.dumps({"tz": "UTC"})})

    error = refused(recorded_spans(build))
    assert where(error) == ("conflicting_fields", 1, "[1].attributes['gen_ai.tool.name']")
    assert "'get_weather'" in error.detail
    assert "'get_time'" in error.detail


def test_a_real_tool_span_naming_another_tool_mid_conversation_is_conflicting() -> None:
    document = copy.deepcopy(golden("openinference_langgraph_agent")["trace"])
    span = spans_of(document)[6]
    name = next(item for item in span["attributes"] if item["key"] == "tool.name")
    name["value"] = {"stringValue": "get_time"}
    error = refused(document)
    assert where(error) == ("conflicting_fields", 6, f"{SPANS}[6].attributes['tool.name']")


@pytest.mark.parametrize("is_error", [False, True])
def test_the_writer_refuses_a_result_named_otherwise_than_its_call(is_error: bool) -> None:
    # the reader refuses such a tool span, so the writer does not write one
    messages = [HumanMessage(content="q"),
                AIMessage(tool_calls=[ToolCall(name="get_weather", args={}, id="c1")]),
                ToolMessage(content="10:00", tool_call_id="c1", name="get_time",
                            is_error=is_error)]
    if is_error:
        messages.append(AIMessage(content="sorry"))
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages)
    assert where(caught.value) == ("not_representable", 2, "messages[2].name")


# --- 10. a tool span whose call may be another's is not the conversation's orphan ----------

FORCED = {"role": "assistant", "parts": [
    {"type": "tool_call", "id": "forced", "name": "get_weather", "arguments": {"city": "Rome"}}]}
FORCED_RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "forced",
                                            "response": "rain"}]}
ASK_ROME = text("user", "Weather in Rome?")
RAIN = text("assistant", "Rain.")


def chat_span_ids(spans: list[Any]) -> list[str]:
    return [f"{span.context.span_id:016x}" for span in spans if span.name == "chat"]


def test_another_conversations_forced_call_is_not_an_orphan_of_this_one() -> None:
    # a LangGraph node forces B's first tool call (no model call's output holds it; B's next
    # call's input does); before: A, chosen by the span_id ambiguous_trace names, was
    # orphan_tool_result at B's tool span
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("batch"):
            with tracer.start_as_current_span("graph A"):
                chat(tracer, [ASK], [ANSWER])
            with tracer.start_as_current_span("graph B"):
                tool(tracer, "forced", "get_weather", "rain")
                chat(tracer, [ASK_ROME, FORCED, FORCED_RESULT], [RAIN])

    spans = recorded_spans(build)
    a_last, b_last = chat_span_ids(spans)
    assert where(refused(spans)) == ("ambiguous_trace", None, None)
    assert otel.to_messages(spans, span_id=a_last) == [
        HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny.")]
    assert otel.to_messages(spans, span_id=b_last)[2] == ToolMessage(
        content="rain", tool_call_id="forced")


def test_a_forced_call_after_a_call_is_not_an_orphan_of_that_calls_view() -> None:
    # before: the first call's view was orphan_tool_result at the forced call's tool span
    let = text("assistant", "Let me check.")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("graph"):
            chat(tracer, [ASK], [let])
            tool(tracer, "forced", "get_weather", "rain")
            chat(tracer, [ASK, let, FORCED, FORCED_RESULT], [RAIN])

    spans = recorded_spans(build)
    first, _ = chat_span_ids(spans)
    assert otel.to_messages(spans, span_id=first) == [
        HumanMessage(content="Weather in Paris?"), AIMessage(content="Let me check.")]
    assert len(otel.to_messages(spans)) == 5


@pytest.mark.parametrize("between", [False, True])
def test_a_tool_span_an_unread_call_of_another_session_may_have_made_is_not_an_orphan(
    between: bool,
) -> None:
    # session b's call's output was cut (an attribute limit); b's tool span ran before
    # session a's first call, or between a's calls; before: session a was
    # orphan_tool_result at b's tool span
    cut = json.dumps([{**CALLING, "parts": [{**CALLING["parts"][0], "id": "cb"}]}])[:-5]
    let = text("assistant", "Let me see.")
    more = text("user", "Thanks.")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            if between:
                chat(tracer, [ASK], [let], **{"session.id": "a"})
            chat(tracer, [ASK], None, **{"session.id": "b", "gen_ai.output.messages": cut})
            tool(tracer, "cb", "get_weather", "sunny")
            chat(tracer, [ASK, let, more] if between else [ASK], [ANSWER], **{"session.id": "a"})

    assert [m.text for m in otel.to_messages(recorded_spans(build), session_id="a")] == (
        ["Weather in Paris?", "Let me see.", "Thanks.", "It is sunny."] if between
        else ["Weather in Paris?", "It is sunny."])


@pytest.mark.parametrize("between", [False, True])
def test_a_tool_span_a_call_of_another_session_with_hidden_output_may_have_made_is_not_an_orphan(
    between: bool,
) -> None:
    # as above, but session b's output messages are hidden (its finish reasons say it
    # answered): b's call is unread, not a call that made nothing
    let = text("assistant", "Let me see.")
    more = text("user", "Thanks.")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            if between:
                chat(tracer, [ASK], [let], **{"session.id": "a"})
            chat(tracer, [ASK], None, **{"session.id": "b",
                                         "gen_ai.response.finish_reasons": ("tool_calls",)})
            tool(tracer, "cb", "get_weather", "sunny")
            chat(tracer, [ASK, let, more] if between else [ASK], [ANSWER], **{"session.id": "a"})

    spans = recorded_spans(build)
    assert otel.to_messages(spans, session_id="a") == (
        [HumanMessage(content="Weather in Paris?"), AIMessage(content="Let me see."),
         HumanMessage(content="Thanks."), AIMessage(content="It is sunny.")] if between
        else [HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny.")])
    b_call = 1 if between else 0
    assert where(refused(spans, session_id="b")) == (
        "content_not_captured", b_call,
        f"[{b_call}].attributes['gen_ai.response.finish_reasons']")


def test_a_call_another_sessions_input_holds_is_not_an_orphan_of_this_session() -> None:
    # session b's node forces a call after session a's call (GenAI tool spans name no
    # session); before: session a was orphan_tool_result at b's tool span
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            chat(tracer, [ASK], [ANSWER], **{"session.id": "a"})
            tool(tracer, "forced", "get_weather", "rain")
            chat(tracer, [ASK_ROME, FORCED, FORCED_RESULT], [RAIN], **{"session.id": "b"})

    spans = recorded_spans(build)
    assert otel.to_messages(spans, session_id="a") == [
        HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny.")]
    assert otel.to_messages(spans, session_id="b")[2] == ToolMessage(
        content="rain", tool_call_id="forced")


def test_an_earlier_conversations_orphan_is_refused_there_not_in_a_later_one() -> None:
    # the span of X's call that made c9 was lost; Y's first call started after c9's span,
    # and Y's input would hold a call of its own: before, Y was orphan_tool_result too
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("batch"):
            chat(tracer, [ASK], [CALLING])
            tool(tracer, "c1", "get_weather", "sunny")
            chat(tracer, [ASK, CALLING, RESULT], [ANSWER])
            tool(tracer, "c9", "delete_db", "deleted")
            chat(tracer, [ASK_ROME], [RAIN])

    spans = recorded_spans(build)
    _, x_last, y_last = chat_span_ids(spans)
    assert otel.to_messages(spans, span_id=y_last) == [
        HumanMessage(content="Weather in Rome?"), AIMessage(content="Rain.")]
    assert where(refused(spans, span_id=x_last)) == ("orphan_tool_result", 3, "[3]")


@pytest.mark.parametrize(("after", "refusal"), [
    (1, None), (0, ("orphan_tool_result", 3, "[3]"))], ids=["before-it", "with-it"])
def test_a_tool_span_that_started_with_the_conversations_first_call_is_its_orphan(
    after: int, refusal: tuple[str, int, str] | None
) -> None:
    # only a span that ran before the conversation's first call may be an earlier one's
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("batch"):
            chat(tracer, [ASK], [CALLING])
            tool(tracer, "c1", "get_weather", "sunny")
            chat(tracer, [ASK, CALLING, RESULT], [ANSWER])
            at = time.time_ns() + 1_000_000
            with tracer.start_as_current_span("execute_tool delete_db", start_time=at) as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.call.id", "c9")
                span.set_attribute("gen_ai.tool.name", "delete_db")
                span.set_attribute("gen_ai.tool.call.result", "deleted")
            with tracer.start_as_current_span("chat", start_time=at + after) as span:
                span.set_attribute("gen_ai.operation.name", "chat")
                span.set_attribute("gen_ai.input.messages", json.dumps([ASK_ROME]))
                span.set_attribute("gen_ai.output.messages", json.dumps([RAIN]))

    spans = recorded_spans(build)
    _, _, y_last = chat_span_ids(spans)
    if refusal is None:
        assert otel.to_messages(spans, span_id=y_last) == [
            HumanMessage(content="Weather in Rome?"), AIMessage(content="Rain.")]
    else:
        assert where(refused(spans, span_id=y_last)) == refusal


# --- 11. a call id reused in a later turn ------------------------------------------------


def test_a_call_id_reused_in_a_later_turn_is_a_duplicate_not_a_misnamed_tool_span() -> None:
    # before: conflicting_fields at the first turn's tool span, which names its own call's tool
    def call(call_id: str, name: str) -> dict[str, Any]:
        return {"role": "assistant", "parts": [
            {"type": "tool_call", "id": call_id, "name": name, "arguments": {}}]}

    def result(call_id: str, said: str) -> dict[str, Any]:
        return {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": call_id, "response": said}]}

    first = [ASK, call("c1", "get_weather"), result("c1", "sunny"), ANSWER,
             text("user", "And the time?")]

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("agent"):
            chat(tracer, [ASK], [call("c1", "get_weather")])
            tool(tracer, "c1", "get_weather", "sunny")
            chat(tracer, first[:3], [ANSWER])
            chat(tracer, first, [call("c1", "get_time")])
            tool(tracer, "c1", "get_time", "10:00")
            chat(tracer, [*first, call("c1", "get_time"), result("c1", "10:00")],
                 [text("assistant", "10:00")])

    error = refused(recorded_spans(build))
    assert where(error) == ("duplicate_tool_call_id", 5,
                            "[5].attributes['gen_ai.input.messages[5].parts[0].id']")


# --- 12. many results written as tool spans -------------------------------------------------


def failed_turns(n: int) -> list[Any]:
    messages: list[Any] = [HumanMessage(content="q")]
    for k in range(n):
        messages.append(AIMessage(tool_calls=[ToolCall(name="t", args={"k": k}, id=f"c{k}")]))
        messages.append(ToolMessage(content="boom", tool_call_id=f"c{k}", name="t",
                                    is_error=True))
    return [*messages, AIMessage(content="done")]


def test_many_failed_results_are_written_as_tool_spans_and_read_back() -> None:
    # how the time grows with the results: benchmarks/bench_otel.py (before: quadratic)
    turns = failed_turns(2000)
    assert otel.to_messages(otel.from_messages(turns)) == turns


# --- 13. copies of a span in a trace the trace_id filter leaves out -----------------------


def test_copies_of_a_span_in_another_trace_are_not_looked_at() -> None:
    # before: conflicting_fields at trace B's second copy, with trace_id=A
    def build(tracer: Any) -> None:
        chat(tracer, [ASK], [ANSWER])  # a root span: trace A
        chat(tracer, [text("user", "hi")], [text("assistant", "hello")])  # trace B

    dicts = [json.loads(span.to_json()) for span in recorded_spans(build)]
    for span in dicts:
        span["instrumentation_scope"] = {"name": "test"}
    other = copy.deepcopy(dicts[1])
    other["attributes"]["gen_ai.usage.output_tokens"] = 7
    trace_a = dicts[0]["context"]["trace_id"]
    assert otel.to_messages([*dicts, other], trace_id=trace_a) == [
        HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny.")]
    error = refused([*dicts, other], trace_id=dicts[1]["context"]["trace_id"])
    assert where(error) == ("conflicting_fields", 2, "[2]")


# --- 14. output messages not recorded: a switch, or items with no message ----------------


def test_a_reply_of_items_with_no_message_is_not_blamed_on_a_switch() -> None:
    # OpenInference's Responses API reply of [mcp_list_tools, mcp_approval_request] records
    # no output messages with every switch off; before: "... is set; unset it to record them"
    error = refused(one_span({
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Roll 2d4+1",
        "output.value": json.dumps({"output": [{"type": "mcp_list_tools"},
                                               {"type": "mcp_approval_request"}]}),
        "llm.token_count.completion": 20,
    }))
    assert where(error) == ("content_not_captured", 0, "[0].attributes['output.value']")
    assert error.detail == (
        "the model call recorded its input and no output messages, but output.value says it "
        "answered: its output messages were not recorded (a hide switch, or reply items the "
        "instrumentation does not record as messages). OpenInference records no output "
        "messages when OPENINFERENCE_HIDE_OUTPUT_MESSAGES (or OPENINFERENCE_HIDE_OUTPUTS, "
        "which hides output.value too) is set, nor for a Responses API reply made only of "
        "items it does not map to messages (MCP tool lists and approval requests, image "
        "generation or code interpreter calls); if a switch is set, unset it")
