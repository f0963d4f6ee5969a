"""Message spellings the reader used to misread: a tool result under Pydantic AI's ``result``
key (or under no key: read as JSON null), tool results in a ``user`` message (Pydantic AI),
OpenInference's legacy ``function_call_name`` / ``function_call_arguments_json``, and several
choices of one call read as consecutive turns."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import otel
from tracebridge.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

SPANS = "resourceSpans[0].scopeSpans[0].spans"


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": v}


def span(n: int, attributes: dict[str, Any], scope: str = "x") -> dict[str, Any]:
    return {
        "traceId": "0" * 31 + "1", "spanId": f"{n:016x}", "name": f"s{n}",
        "startTimeUnixNano": str(10 * n), "endTimeUnixNano": str(10 * n + 5),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }


def document(*spans: dict[str, Any], scope: str = "x") -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": scope},
                                               "spans": list(spans)}]}]}


def genai(n: int, given: list[Any], answered: list[Any], **extra: Any) -> dict[str, Any]:
    return span(n, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(given),
                    "gen_ai.output.messages": json.dumps(answered), **extra})


def refused(trace: Any, **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **options)
    return caught.value.code, caught.value.index, caught.value.path


def written(messages: list[Any], key: str) -> Any:
    """The value of attribute ``key`` on the last model-call span ``from_messages`` writes."""
    spans = otel.from_messages(messages)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attributes = {a["key"]: a["value"] for a in spans[-1]["attributes"]}
    return attributes.get(key)


ASK = {"role": "user", "parts": [{"type": "text", "content": "weather?"}]}
CALL = {"role": "assistant", "parts": [
    {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}
ANSWER = [{"role": "assistant", "parts": [{"type": "text", "content": "It is 18 C."}],
           "finish_reason": "stop"}]


# --- f5: a tool result's response key -----------------------------------------------------


def test_pydantic_ai_result_key_is_the_response_and_is_written_back() -> None:
    result = {"type": "tool_call_response", "id": "c1", "name": "get_weather",
              "result": "18 C, sunny"}
    given = [ASK, CALL, {"role": "tool", "parts": [result]}]
    messages = otel.to_messages(document(genai(1, given, ANSWER)))
    assert messages[2] == ToolMessage(
        content="18 C, sunny", tool_call_id="c1",
        metadata={"otel": {"response_key": "result", "part_fields": {"name": "get_weather"}}},
    )
    back = json.loads(written(messages, "gen_ai.input.messages")["stringValue"])
    assert back == given
    assert otel.to_messages(otel.from_messages(messages)) == messages


def test_a_json_result_under_result_stays_json() -> None:
    result = {"type": "tool_call_response", "id": "c1", "result": {"celsius": 18}}
    given = [ASK, CALL, {"role": "tool", "parts": [result]}]
    messages = otel.to_messages(document(genai(1, given, ANSWER)))
    assert messages[2] == ToolMessage(
        content='{"celsius": 18}', tool_call_id="c1",
        metadata={"otel": {"response_key": "result", "response": "json"}},
    )
    assert json.loads(written(messages, "gen_ai.input.messages")["stringValue"]) == given


def test_a_response_beside_a_result_is_the_response() -> None:
    result = {"type": "tool_call_response", "id": "c1", "response": "18 C", "result": "x"}
    given = [ASK, CALL, {"role": "tool", "parts": [result]}]
    messages = otel.to_messages(document(genai(1, given, ANSWER)))
    assert messages[2] == ToolMessage(content="18 C", tool_call_id="c1",
                                      metadata={"otel": {"part_fields": {"result": "x"}}})
    assert json.loads(written(messages, "gen_ai.input.messages")["stringValue"]) == given


def test_a_tool_result_without_a_response_is_malformed() -> None:
    given = [ASK, CALL, {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1"}]}]
    assert refused(document(genai(1, given, ANSWER))) == (
        "malformed_event", 0, f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[0]']"
    )


def test_an_explicit_null_response_is_still_the_tool_returning_null() -> None:
    result = {"type": "tool_call_response", "id": "c1", "response": None}
    messages = otel.to_messages(document(genai(1, [ASK, CALL, {"role": "tool",
                                                               "parts": [result]}], ANSWER)))
    assert messages[2] == ToolMessage(content="null", tool_call_id="c1",
                                      metadata={"otel": {"response": "json"}})


def test_a_kept_response_beside_the_result_key_is_refused_on_writing() -> None:
    message = ToolMessage(content="18 C", tool_call_id="c1", metadata={"otel": {
        "response_key": "result", "part_fields": {"response": "x"}}})
    typed = [HumanMessage(content="weather?"), AIMessage(content="", tool_calls=[
        ToolCall(name="get_weather", args={}, id="c1")]), message, AIMessage(content="ok")]
    with pytest.raises(TraceError) as caught:
        otel.from_messages(typed)
    assert (caught.value.code, caught.value.path) == (
        "not_representable", "messages[2].metadata.otel.part_fields.response"
    )


# --- f8: Pydantic AI sends tool results in a user message ---------------------------------


def test_tool_results_in_a_user_message_are_tool_messages() -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "weather in Paris?"}]}
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                            "name": "get_weather", "arguments": {"city": "Paris"}}]}
    back = {"role": "user", "parts": [
        {"type": "tool_call_response", "id": "call_1", "name": "get_weather", "result": "18 C"},
        {"type": "text", "content": "Be brief."},
    ]}
    final = {"role": "assistant", "parts": [{"type": "text", "content": "18 C."}],
             "finish_reason": "stop"}
    trace = document(genai(1, [user], [call]), genai(2, [user, call, back], [final]))
    messages = otel.to_messages(trace)
    assert messages == [
        HumanMessage(content="weather in Paris?"),
        AIMessage(content="", tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")]),
        ToolMessage(content="18 C", tool_call_id="call_1", metadata={"otel": {
            "role": "user", "response_key": "result", "part_fields": {"name": "get_weather"}}}),
        HumanMessage(content="Be brief."),
        AIMessage(content="18 C.", metadata={"otel": {"fields": {"finish_reason": "stop"}}}),
    ]
    assert json.loads(written(messages, "gen_ai.input.messages")["stringValue"]) == [
        user, call,
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "call_1",
                                    "result": "18 C", "name": "get_weather"}]},
        {"role": "user", "parts": [{"type": "text", "content": "Be brief."}]},
    ]
    assert otel.to_messages(otel.from_messages(messages)) == messages
    assert list(otel.calls(trace))[1].input == messages[:4]


# --- f3: OpenInference's legacy function_call attributes ----------------------------------


ASKED = {"llm.input_messages.0.message.role": "user",
         "llm.input_messages.0.message.content": "weather?"}
LEGACY = {"role": "assistant", "function_call_name": "get_weather",
          "function_call_arguments_json": '{"city": "Paris"}'}


def prefixed(prefix: str, i: int, message: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}.{i}.message.{key}": item for key, item in message.items()}


def test_openinference_function_call_is_a_tool_call_and_written_back() -> None:
    given = {**ASKED, **prefixed("llm.input_messages", 1, LEGACY),
             **prefixed("llm.input_messages", 2, {"role": "function", "name": "get_weather",
                                                  "content": "18 C"})}
    answered = prefixed("llm.output_messages", 0, {"role": "assistant",
                                                   "content": "18 C in Paris"})
    source = {"openinference.span.kind": "LLM", **given, **answered}
    messages = otel.to_messages(document(span(1, source)))
    assert messages == [
        HumanMessage(content="weather?"),
        AIMessage(content="", tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
                  metadata={"otel": {"content": "absent"}}),
        ToolMessage(content="18 C", name="get_weather"),
        AIMessage(content="18 C in Paris"),
    ]
    spans = otel.from_messages(messages)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attributes = {a["key"]: a["value"] for a in spans[0]["attributes"]}
    assert attributes == {key: value(item) for key, item in source.items()} | {
        "session.id": {"stringValue": spans[0]["traceId"]}
    }


def test_an_openinference_function_call_reply_is_pending_until_answered() -> None:
    source = {"openinference.span.kind": "LLM", **ASKED,
              **prefixed("llm.output_messages", 0, LEGACY)}
    messages = otel.to_messages(document(span(1, source)), allow_pending=True)
    assert messages[1] == AIMessage(
        content="", tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
        metadata={"otel": {"content": "absent"}},
    )


def test_a_function_call_name_without_its_arguments_is_malformed() -> None:
    source = {"openinference.span.kind": "LLM", **ASKED,
              "llm.output_messages.0.message.role": "assistant",
              "llm.output_messages.0.message.function_call_name": "get_weather"}
    assert refused(document(span(1, source)), allow_pending=True) == (
        "malformed_event", 0, f"{SPANS}[0].attributes["
        "'llm.output_messages.0.message.function_call_arguments_json']"
    )


# --- f6: several choices of one call are not turns -----------------------------------------


JOKE = [{"role": "user", "parts": [{"type": "text", "content": "Tell me a joke"}]}]


def choice(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}],
            "finish_reason": "stop"}


def test_genai_choices_are_refused() -> None:
    trace = document(genai(1, JOKE, [choice("Joke A"), choice("Joke B")],
                           **{"gen_ai.request.choice.count": 2}))
    assert refused(trace) == (
        "ambiguous_trace", 0, f"{SPANS}[0].attributes['gen_ai.output.messages']"
    )


def test_genai_choices_that_call_tools_are_not_joined() -> None:
    calls = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{n}",
                                              "name": "search", "arguments": {"q": q}}]}
             for n, q in ((1, "a"), (2, "b"))]
    trace = document(genai(1, JOKE, calls))
    assert refused(trace, allow_pending=True) == (
        "ambiguous_trace", 0, f"{SPANS}[0].attributes['gen_ai.output.messages']"
    )


def openinference_choices(scope: str, parameters: str | None) -> dict[str, Any]:
    calls = {
        **prefixed("llm.input_messages", 0, {"role": "user", "content": "Tell me a joke"}),
        **{f"llm.output_messages.{n}.message.role": "assistant" for n in (0, 1)},
    }
    for n, q in ((0, "a"), (1, "b")):
        at = f"llm.output_messages.{n}.message.tool_calls.0.tool_call"
        calls.update({f"{at}.id": f"c{n}", f"{at}.function.name": "search",
                      f"{at}.function.arguments": json.dumps({"q": q})})
    if parameters is not None:
        calls["llm.invocation_parameters"] = parameters
    return document(span(1, {"openinference.span.kind": "LLM", **calls}), scope=scope)


def test_openinference_choices_are_refused_not_joined() -> None:
    for scope, parameters in (("openinference.instrumentation.langchain", None),
                              ("openinference.instrumentation.openai", '{"n": 2}')):
        assert refused(openinference_choices(scope, parameters), allow_pending=True) == (
            "ambiguous_trace", 0, f"{SPANS}[0].attributes['llm.output_messages.1']"
        )


def test_responses_api_output_items_are_still_one_turn() -> None:
    trace = openinference_choices("openinference.instrumentation.openai", None)
    messages = otel.to_messages(trace, allow_pending=True)
    assert [[c.id for c in m.tool_calls] for m in messages if isinstance(m, AIMessage)] == [
        ["c0", "c1"]
    ]


# --- f7: ReadableSpan.to_json() dicts hold no instrumentation scope ------------------------


def to_json_span(scope: str | None) -> dict[str, Any]:
    """A span as ``ReadableSpan.to_json()`` writes it (no scope), of OpenInference's
    Responses API reader: no instructions, so its input starts at index 1."""
    out: dict[str, Any] = {
        "name": "Response", "context": {"trace_id": "0x" + "0" * 31 + "1",
                                        "span_id": "0x" + "0" * 15 + "1"},
        "parent_id": None, "start_time": "2024-01-01T00:00:00.000000Z",
        "end_time": "2024-01-01T00:00:01.000000Z", "status": {"status_code": "UNSET"},
        "attributes": {"openinference.span.kind": "LLM",
                       "llm.input_messages.1.message.role": "user",
                       "llm.input_messages.1.message.content": "hi",
                       "llm.output_messages.0.message.role": "assistant",
                       "llm.output_messages.0.message.content": "hello"},
    }
    if scope is not None:
        out["instrumentation_scope"] = {"name": scope}
    return out


def test_a_to_json_span_without_its_scope_names_the_way_out() -> None:
    with pytest.raises(TraceError) as caught:
        otel.to_messages([to_json_span(None)])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "truncated_trace", 0, "[0].attributes['llm.input_messages']"
    )
    assert '"instrumentation_scope": {"name": span.instrumentation_scope.name}' in error.detail
    scoped = to_json_span("openinference.instrumentation.openai")
    assert otel.to_messages([scoped]) == [HumanMessage(content="hi"),
                                          AIMessage(content="hello")]
