"""The otel reader's placing of results without ids, its JSON reading, and what it says of
spans that lost what made them model calls (docs/adapters/otel.md).

1. Results without call ids answer the closing message's calls by position: they are put at
   their calls' positions, and ``is_error`` on the failed one; one that cannot be is
   ``ambiguous_trace``.
2. A span that dropped attributes and holds messages, but no longer says it is a model call,
   is ``truncated_trace``.
3. A JSON key given twice (in a GenAI message list, or in OTLP text) is ``malformed_event``.
4. An earlier call's input that records a message with other fields than the last call's
   is ``conflicting_fields`` at the earlier call.
5. ``session_id`` with tool spans that name no session keeps another session's tool spans out;
   one that names a call of one session only by id is that session's, whenever it ran.
6. ``NaN`` in a GenAI message list, a value nested too deep and one the messages refuse
   (an infinity) are refused at the span and attribute, with the path in the source's terms.
7. JSON lines end at ``\\n`` only; ``lines[n]`` is the text's line n.
8. Messages in span events are refused with a text that says so.
9. A GenAI message list cut at the value-length limit is ``truncated_trace``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_helpers import refused, where
from test_otel import recorded_spans

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage
from tracebridge.adapters import otel
from tracebridge.adapters.otel._write_flat import any_value  # JSON as an OTLP AnyValue

SPANS = "resourceSpans[0].scopeSpans[0].spans"


def text(role: str, said: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": said}], **extra}


def chat(tracer: Any, given: Any, answered: Any, **extra: Any) -> None:
    """A GenAI chat span, its attributes set in the order openai-v2 sets them."""
    with tracer.start_as_current_span("chat") as current:
        current.set_attribute("gen_ai.operation.name", "chat")
        for key, value in extra.items():
            current.set_attribute(key, value)
        for key, messages in (("gen_ai.input.messages", given),
                              ("gen_ai.output.messages", answered)):
            current.set_attribute(key, messages if isinstance(messages, str)
                                  else json.dumps(messages))


def tool(tracer: Any, name: str, arguments: str, result: str, *, failed: bool = False,
         **extra: Any) -> None:
    trace = pytest.importorskip("opentelemetry.trace")
    with tracer.start_as_current_span(f"execute_tool {name}") as current:
        current.set_attribute("gen_ai.operation.name", "execute_tool")
        current.set_attribute("gen_ai.tool.name", name)
        current.set_attribute("gen_ai.tool.call.arguments", arguments)
        current.set_attribute("gen_ai.tool.call.result", result)
        for key, value in extra.items():
            current.set_attribute(key, value)
        if failed:
            current.set_status(trace.Status(trace.StatusCode.ERROR))


def limited_spans(build: Any, **limits: Any) -> list[Any]:
    """``recorded_spans`` under a provider with ``SpanLimits(**limits)``."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    exporter = memory.InMemorySpanExporter()
    provider = sdk.TracerProvider(span_limits=sdk.SpanLimits(**limits))
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    build(provider.get_tracer("test"))
    return list(exporter.get_finished_spans())


def otlp(*spans: list[tuple[str, Any]], events: Any = None) -> dict[str, Any]:
    """An OTLP/JSON document of spans given as attribute pairs, one after another."""
    built = []
    for n, pairs in enumerate(spans, start=1):
        found: dict[str, Any] = {
            "traceId": "ab" * 16, "spanId": f"{n:016x}", "name": "chat",
            "startTimeUnixNano": str(10 * n), "endTimeUnixNano": str(10 * n + 1),
            "attributes": [{"key": k, "value": any_value(v)} for k, v in pairs],
        }
        if events is not None:
            found["events"] = events
        built.append(found)
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": built}]}]}


def genai(given: Any, answered: Any) -> list[tuple[str, Any]]:
    return [("gen_ai.operation.name", "chat"),
            ("gen_ai.input.messages", given if isinstance(given, str) else json.dumps(given)),
            ("gen_ai.output.messages", json.dumps(answered))]


# --- 1. results without ids, at their calls' positions -------------------------------------

WEATHER = {"type": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}}
TIME = {"type": "tool_call", "name": "get_time", "arguments": {"tz": "CET"}}
ASKED = HumanMessage(content="weather and time?")
CALLED = AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}),
                               ToolCall(name="get_time", args={"tz": "CET"})])


def calls_without_ids(*tools: tuple[str, str, str, bool]) -> list[Any]:
    def build(tracer: Any) -> None:
        chat(tracer, [text("user", "weather and time?")],
             [{"role": "assistant", "parts": [WEATHER, TIME]}])
        for name, arguments, result, failed in tools:
            tool(tracer, name, arguments, result, failed=failed)

    return recorded_spans(build)


def test_results_without_ids_take_their_calls_positions_and_the_failed_one_is_flagged() -> None:
    # before: the results were listed in the order the spans ran, so "timezone service
    # down" answered get_weather (by position), and both were flagged is_error
    spans = calls_without_ids(("get_time", '{"tz": "CET"}', "timezone service down", True),
                              ("get_weather", '{"city": "Paris"}', "Sunny", False))
    assert otel.to_messages(spans) == [
        ASKED,
        CALLED,
        ToolMessage(content="Sunny", name="get_weather"),
        ToolMessage(content="timezone service down", name="get_time", is_error=True),
    ]


def test_results_without_ids_in_call_order_are_kept_as_they_ran() -> None:
    spans = calls_without_ids(("get_weather", '{"city": "Paris"}', "Sunny", False),
                              ("get_time", '{"tz": "CET"}', "10:00", False))
    assert otel.to_messages(spans) == [
        ASKED, CALLED, ToolMessage(content="Sunny", name="get_weather"),
        ToolMessage(content="10:00", name="get_time"),
    ]


def test_a_result_without_id_whose_earlier_call_has_none_is_ambiguous() -> None:
    # before: with allow_pending its result was read as get_weather's
    spans = calls_without_ids(("get_time", '{"tz": "CET"}', "10:00", False))
    error = refused(spans, allow_pending=True)
    assert where(error) == ("ambiguous_trace", 1, "[1]")
    assert "call at position 1" in error.detail
    assert "positions [1]" in error.detail


# --- 2. a span whose attribute limit dropped gen_ai.operation.name ---------------------------


def test_a_span_that_dropped_its_operation_name_and_holds_messages_is_truncated() -> None:
    # before: the second call was not read as a model call, and its turn was silently lost
    def build(tracer: Any) -> None:
        chat(tracer, [text("user", "hi")], [text("assistant", "hello")],
             **{"gen_ai.request.model": "m"})
        chat(tracer, [text("user", "hi"), text("assistant", "hello"), text("user", "2+2?")],
             [text("assistant", "4")],
             **{"gen_ai.request.model": "m", "gen_ai.request.temperature": 0.2})

    spans = limited_spans(build, max_span_attributes=4)
    assert [span.dropped_attributes for span in spans] == [0, 1]
    error = refused(spans)
    assert where(error) == ("truncated_trace", 1, "[1]")
    assert "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" in error.detail


def test_a_chain_span_that_dropped_attributes_is_still_not_a_model_call() -> None:
    document = otlp(
        [("openinference.span.kind", "CHAIN"), ("llm.input_messages.0.message.role", "user"),
         ("llm.input_messages.0.message.content", "hi")],
        genai([text("user", "hi")], [text("assistant", "hello")]),
    )
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["droppedAttributesCount"] = 3
    assert otel.to_messages(document) == [HumanMessage(content="hi"),
                                          AIMessage(content="hello")]


# --- 3. a JSON key given twice ------------------------------------------------------------


PAY = ('[{"role": "user", "parts": [{"type": "text", "content": "pay"}]},'
       ' {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "pay",'
       ' "arguments": {"eur": 100, "eur": 1000000}}]},'
       ' {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",'
       ' "response": "paid"}]}]')


def test_a_key_given_twice_in_a_genai_message_list_is_malformed() -> None:
    # before: the arguments were {"eur": 1000000}, the last value, without a word
    error = refused(otlp(genai(PAY, [text("assistant", "done")])))
    assert where(error) == (
        "malformed_event", 0, f"{SPANS}[0].attributes['gen_ai.input.messages']"
    )
    assert "'eur' twice" in error.detail


def test_an_any_value_given_twice_in_otlp_text_is_malformed() -> None:
    # before: the text was read with the last stringValue, as the API's dict form refuses
    asked = json.dumps([text("user", "send 100 EUR")])
    given = json.dumps(otlp(genai(asked, [text("assistant", "done")])))
    spelled = json.dumps({"stringValue": asked})
    doubled = spelled[:-1] + ", " + json.dumps({"stringValue": asked.replace("100", "1000000")})[1:]
    assert spelled in given
    error = refused(given.replace(spelled, doubled))
    assert where(error) == ("malformed_event", None, "lines[0]")  # (a text of one line)
    assert "'stringValue' twice" in error.detail


def test_a_key_given_twice_in_an_indented_document_is_malformed() -> None:
    given = json.dumps(otlp(genai([text("user", "hi")], [text("assistant", "hello")])),
                       indent=2)
    doubled = given.replace('"resourceSpans"', '"resourceSpans": [],\n  "resourceSpans"', 1)
    error = refused(doubled)
    assert where(error) == ("malformed_event", None, None)
    assert error.detail == (
        "the text is one JSON document, and an object has the key 'resourceSpans' twice "
        "(which value is meant is not known)"
    )


def test_a_key_given_twice_on_a_json_line_is_malformed_there() -> None:
    good = json.dumps(otlp(genai([text("user", "hi")], [text("assistant", "hello")])))
    doubled = good.replace('{"resourceSpans"', '{"resourceSpans": [], "resourceSpans"', 1)
    error = refused(good + "\n" + doubled + "\n")
    assert where(error) == ("malformed_event", None, "lines[1]")
    assert "'resourceSpans' twice" in error.detail


# --- 4. an earlier call's input record --------------------------------------------------------


@pytest.mark.parametrize("earlier_has_it", [True, False])
def test_an_earlier_inputs_other_fields_are_conflicting(earlier_has_it: bool) -> None:
    # before: the field survived only when the last call recorded it
    with_field, without = text("user", "hi", lang="en"), text("user", "hi")

    def build(tracer: Any) -> None:
        chat(tracer, [with_field if earlier_has_it else without], [text("assistant", "hello")])
        chat(tracer, [without if earlier_has_it else with_field, text("assistant", "hello"),
                      text("user", "more")], [text("assistant", "ok")])

    error = refused(recorded_spans(build))
    assert where(error) == ("conflicting_fields", 0, "[0]")
    assert "input[0]" in error.detail


# --- 5. session_id with tool spans that name no session --------------------------------------


def test_another_sessions_tool_span_without_a_session_is_left_out() -> None:
    # before: session_id="A" was orphan_tool_result at session B's tool span
    def call(call_id: str, city: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "parts": [
            {"type": "tool_call", "id": call_id, "name": "get_weather",
             "arguments": {"city": city}}]}]

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("evaluation"):
            for session, call_id, city, result in (("A", "ca", "Paris", "Sunny"),
                                                   ("B", "cb", "Rome", "Rain")):
                chat(tracer, [text("user", f"weather in {city}?")], call(call_id, city),
                     **{"session.id": session})
                tool(tracer, "get_weather", json.dumps({"city": city}), result,
                     **{"gen_ai.tool.call.id": call_id})

    spans = recorded_spans(build)
    for session, call_id, city, result in (("A", "ca", "Paris", "Sunny"),
                                           ("B", "cb", "Rome", "Rain")):
        assert otel.to_messages(spans, session_id=session) == [
            HumanMessage(content=f"weather in {city}?"),
            AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": city},
                                           id=call_id)]),
            ToolMessage(content=result, tool_call_id=call_id, name="get_weather"),
        ]


def traced(*spans: tuple[str, int, dict[str, Any]]) -> dict[str, Any]:
    """An OTLP/JSON document of spans given as (trace id, start, attributes)."""
    built = [
        {"traceId": trace_id, "spanId": f"{n:016x}", "name": "span",
         "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
         "attributes": [{"key": k, "value": any_value(v)} for k, v in pairs.items()]}
        for n, (trace_id, start, pairs) in enumerate(spans, start=1)
    ]
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": built}]}]}


def session_chat(session: str, asked: str, call_id: str | None) -> dict[str, Any]:
    answered = ([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": call_id, "name": "f", "arguments": {}}]}]
        if call_id is not None else [text("assistant", "yo")])
    return {"gen_ai.operation.name": "chat", "session.id": session,
            "gen_ai.input.messages": json.dumps([text("user", asked)]),
            "gen_ai.output.messages": json.dumps(answered)}


def tool_result(call_id: str, result: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
            "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.result": result}


def answered(asked: str, call_id: str, result: str) -> list[Any]:
    return [HumanMessage(content=asked),
            AIMessage(tool_calls=[ToolCall(name="f", args={}, id=call_id)]),
            ToolMessage(content=result, tool_call_id=call_id, name="f")]


A_TRACE, B_TRACE = "0a" * 16, "0b" * 16


@pytest.mark.parametrize("allow_pending", [False, True])
def test_another_sessions_call_in_another_trace_does_not_cut_this_sessions_result(
    allow_pending: bool,
) -> None:
    # before: unanswered_tool_call, and with allow_pending the result was left out
    document = traced((A_TRACE, 10, session_chat("A", "hi A", "c1")),
                      (B_TRACE, 20, session_chat("B", "hi B", None)),
                      (A_TRACE, 30, tool_result("c1", "R")))
    read = otel.to_messages(document, session_id="A", allow_pending=allow_pending)
    assert read == answered("hi A", "c1", "R")


def test_two_interleaved_sessions_in_one_trace_each_read_their_results() -> None:
    # before: session A was unanswered_tool_call (B's call, started between, cut A's
    # result), session B orphan_tool_result at A's tool span
    document = traced((A_TRACE, 10, session_chat("A", "hi A", "ca")),
                      (A_TRACE, 20, session_chat("B", "hi B", "cb")),
                      (A_TRACE, 30, tool_result("ca", "RA")),
                      (A_TRACE, 40, tool_result("cb", "RB")))
    assert otel.to_messages(document, session_id="A") == answered("hi A", "ca", "RA")
    assert otel.to_messages(document, session_id="B") == answered("hi B", "cb", "RB")


def test_a_result_after_another_sessions_call_that_made_the_same_id_is_left_out() -> None:
    # an id both sessions made names no one session's call: the horizon holds
    document = traced((A_TRACE, 10, session_chat("A", "hi A", "c1")),
                      (A_TRACE, 15, tool_result("c1", "RA")),
                      (A_TRACE, 20, session_chat("B", "hi B", "c1")),
                      (A_TRACE, 30, tool_result("c1", "RB")))
    assert otel.to_messages(document, session_id="A") == answered("hi A", "c1", "RA")
    assert otel.to_messages(document, session_id="B") == answered("hi B", "c1", "RB")


# --- 6. refusals from inside a GenAI message list, at the span ----------------------------------


def nan_in(given: str) -> dict[str, Any]:
    return otlp(genai([text("user", "x")], [text("assistant", "done")]),
                genai(given, [text("assistant", "done")]))


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_token_in_a_message_list_is_refused_at_the_attribute(value: str) -> None:
    # before: unserializable_value with no index and the typed path 'args.x'
    given = ('[{"role": "user", "parts": [{"type": "text", "content": "x"}]},'
             ' {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",'
             f' "arguments": {{"x": {value}}}}}]}}]')
    error = refused(nan_in(given))
    assert where(error) == (
        "unserializable_value", 1, f"{SPANS}[1].attributes['gen_ai.input.messages']"
    )
    assert f"{value}, which is no JSON value" in error.detail


def test_arguments_nested_too_deep_are_refused_at_the_span() -> None:
    given = ('[{"role": "user", "parts": [{"type": "text", "content": "x"}]},'
             ' {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",'
             ' "arguments": {"x": ' + "[" * 200 + "]" * 200 + '}}]}]')
    error = refused(nan_in(given))
    assert where(error) == (
        "unserializable_value", 1,
        f"{SPANS}[1].attributes['gen_ai.input.messages[1].parts[0].arguments.x']",
    )
    assert error.source == "otel"


CALL_C1 = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                           "arguments": {}}]}


@pytest.mark.parametrize(("given", "inside"), [
    ([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                       "arguments": {"x": "BIG"}}]}],
     "[1].parts[0].arguments.x"),
    ([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                       "arguments": ["BIG"]}]}],
     "[1].parts[0].arguments[0]"),
    ([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f",
                                       "arguments": {}, "zz": {"y": "BIG"}}]}],
     "[1].parts[0].zz.y"),
    ([{"role": "assistant", "parts": [{"type": "text", "content": "a"},
                                      {"type": "text", "content": "b", "zz": "BIG"}]}],
     "[1].parts[1].zz"),
    ([{"role": "assistant", "parts": [{"type": "text", "content": "a"}], "zz": ["BIG"]}],
     "[1].zz[0]"),
    ([{"role": "assistant", "parts": [{"type": "custom", "v": "BIG"}]}], "[1].parts[0].v"),
    ([{"role": "assistant", "parts": [{"type": "opaque", "kind": "k", "value": {"v": "BIG"}}]}],
     "[1].parts[0].value.v"),
    ([CALL_C1, {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                           "response": "ok", "zz": "BIG"}]}],
     "[2].parts[0].zz"),
    ([CALL_C1, {"role": "tool", "zz": "BIG", "parts": [{"type": "tool_call_response",
                                                         "id": "c1", "response": "ok"}]}],
     "[2].zz"),
])
def test_a_value_the_messages_refuse_is_told_at_its_part_in_the_sources_terms(
    given: list[Any], inside: str
) -> None:
    # before: no source, and the typed path after the message (...messages[1]'].args.x)
    listed = json.dumps([text("user", "x"), *given]).replace('"BIG"', "1e999")
    error = refused(otlp(genai(listed, [text("assistant", "done")])))
    assert (error.source, *where(error)) == (
        "otel", "unserializable_value", 0,
        f"{SPANS}[0].attributes['gen_ai.input.messages{inside}']",
    )
    assert error.detail == "inf is not a finite number"


# --- 7. JSON lines ----------------------------------------------------------------------------


def test_a_raw_line_separator_inside_a_string_does_not_end_a_json_line() -> None:
    # before: str.splitlines broke the line at U+2028 and refused the text
    for separator in ("\u2028", "\u2029", "\x85"):
        asked = f"line one{separator}line two"
        given = [text("user", asked)], [text("user", asked), text("assistant", "hello"),
                                        text("user", "more")]
        documents = [
            otlp(genai(json.dumps(messages, ensure_ascii=False), [text("assistant", said)]))
            for messages, said in zip(given, ("hello", "ok"), strict=True)
        ]
        # two calls: two span ids (one id twice is one span, recorded twice)
        documents[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = f"{2:016x}"
        lines = "".join(json.dumps(document, ensure_ascii=False) + "\n" for document in documents)
        assert separator in lines
        assert otel.to_messages(lines) == [
            HumanMessage(content=asked), AIMessage(content="hello"),
            HumanMessage(content="more"), AIMessage(content="ok"),
        ]


def test_a_json_lines_error_names_the_texts_own_line() -> None:
    # before: lines[1], "line 2", counted after leading blank lines were stripped
    good = json.dumps(otlp(genai([text("user", "hi")], [text("assistant", "hello")])))
    error = refused("\n\n" + good + "\n{not json\n")
    assert where(error) == ("malformed_event", None, "lines[3]")
    assert error.detail.startswith("line 4 is not JSON (")


# --- 8. content in span events ------------------------------------------------------------------


@pytest.mark.parametrize("names", [("gen_ai.content.prompt", "gen_ai.content.completion"),
                                   ("gen_ai.user.message", "gen_ai.choice")])
def test_messages_in_span_events_are_refused_saying_so(names: tuple[str, str]) -> None:
    # before: "content capture was off", which is false here
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            current.set_attribute("gen_ai.operation.name", "chat")
            current.add_event(names[0], {"gen_ai.prompt": json.dumps([{"role": "user"}])})
            current.add_event(names[1], {"gen_ai.completion": "[]"})

    error = refused(recorded_spans(build))
    assert where(error) == ("content_not_captured", 0, "[0]")
    assert f"span events ({', '.join(sorted(names))})" in error.detail
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in error.detail
    assert "content capture was off" not in error.detail


def test_messages_in_otlp_span_events_are_refused_saying_so() -> None:
    events = [{"name": "gen_ai.content.prompt", "timeUnixNano": "10", "attributes": []}]
    error = refused(otlp([("gen_ai.operation.name", "chat")], events=events))
    assert where(error) == ("content_not_captured", 0, f"{SPANS}[0]")
    assert "span events (gen_ai.content.prompt)" in error.detail


# --- 9. a message list cut at the value-length limit ---------------------------------------------


def test_a_message_list_cut_at_the_value_length_limit_is_truncated() -> None:
    # before: malformed_event, "not JSON"
    def build(tracer: Any) -> None:
        chat(tracer, [text("user", "please summarise this long document about otters")],
             [text("assistant", "ok")])

    error = refused(limited_spans(build, max_span_attribute_length=60))
    assert where(error) == ("truncated_trace", 0, "[0].attributes['gen_ai.input.messages']")
    assert "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT" in error.detail


def test_a_list_that_ends_early_is_truncated_and_one_that_is_wrong_is_malformed() -> None:
    cut = json.dumps([text("user", "hi")])[:-1]
    error = refused(otlp(genai(cut, [text("assistant", "ok")])))
    assert where(error)[:2] == ("truncated_trace", 0)
    for wrong in ("[1,]", "", "  "):
        error = refused(otlp(genai(wrong, [text("assistant", "ok")])))
        assert where(error) == (
            "malformed_event", 0, f"{SPANS}[0].attributes['gen_ai.input.messages']"
        )
