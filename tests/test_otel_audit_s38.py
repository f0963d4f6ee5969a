"""Audit s38 of the otel reader and writer (docs/adapters/otel.md).

1. Sessions are told apart per span, not per trace: two sessions run under one root span
   (OpenInference's ``using_session``, a real run copied below) are two conversations.
2. A tool retried with success is no error: Traceloop's LangChain record gives the failed
   attempt the call id too (a real run: golden ``traceloop_langgraph_tool_retry*``).
3. A NaN or an infinity in an SDK span's attribute (or its ``to_json()`` dict) is
   ``unserializable_value``, as in OTLP/JSON; the writer refuses one in a result's value.
4. Bytes in an SDK span's attribute are ``unserializable_value``, as a ``bytesValue`` is.
5. A flat OpenInference key that holds a value and starts another key is refused in either
   order; the input is never changed.
6. Structured GenAI messages set on an SDK span (tuples, at any depth) read as their OTLP
   export and ``to_json()`` do.
Seen on the way: a model call whose parents loop was dropped as nested in itself.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_otel import recorded_spans

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters import otel
from tracebridge.adapters.otel._write_flat import any_value  # JSON as an OTLP AnyValue
from tracebridge.registry import get_adapter

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
SPANS = "resourceSpans[0].scopeSpans[0].spans"


def load(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((FOLDER / f"{name}.json").read_text("utf-8"))
    return case


def refused(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **options)
    return caught.value


def where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


# --- OTLP/JSON built as the audit's repros build it (h.py) ---------------------------------


def span(number: int, attributes: Any, start: int, parent: int | None = None,
         name: str = "chat") -> dict[str, Any]:
    pairs = attributes.items() if isinstance(attributes, dict) else attributes
    found: dict[str, Any] = {
        "traceId": "ab" * 16, "spanId": f"{number:016x}", "name": name,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
        "attributes": [{"key": k, "value": any_value(v)} for k, v in pairs],
    }
    if parent:
        found["parentSpanId"] = f"{parent:016x}"
    return found


def document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": list(spans)}]}]}


def genai(given: list[Any], answered: list[Any], **extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(given),
            "gen_ai.output.messages": json.dumps(answered), **extra}


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "parts": [{"type": "text", "content": text}]}]


def assistant(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]


# --- 1. sessions, per span -----------------------------------------------------------------

# The real run of scripts/golden/otel.py's case openinference_openai_sessions_one_trace
# (openinference-instrumentation-openai 0.1.66, openinference-instrumentation 0.1.72's
# using_session; its --raw output, copied): conv-A asks "Hi"; conv-B's prior turns are conv-A's
# exchange, then "Weather in Paris?"; both sessions run under the root span "evaluation run".
OPENINFERENCE = {"name": "openinference.instrumentation.openai", "version": "0.1.66"}
EVAL = {"name": "eval"}
TRACE_ID = "AAAAAAAAAAAAAAAAAACgAQ=="
OK = {"code": "STATUS_CODE_OK"}
SESSION_SPANS: list[Any] = [  # the spans of the run, as exported
    (OPENINFERENCE, TRACE_ID, 'AAAAAAAAEAI=', 'AAAAAAAAEAE=', 'ChatCompletion',
     'SPAN_KIND_INTERNAL', '2', '3', OK, 256, [
        ('llm.system', 'openai'),
        ('input.value',
         '{"model": "gpt-4o-2024-08-06", "messages": [{"role": "user", "content": "Hi"}]}'),
        ('input.mime_type', 'application/json'),
        ('output.value',
         '{"id":"chatcmpl-1","choices":[{"finish_reason":"stop","index":0,"logprobs":null,"mess'
         'age":{"content":"Hello! How can I help?","refusal":null,"role":"assistant"}}],"create'
         'd":1700000000,"model":"gpt-4o-2024-08-06","object":"chat.completion","usage":{"comple'
         'tion_tokens":20,"prompt_tokens":100,"total_tokens":120}}'),
        ('output.mime_type', 'application/json'),
        ('session.id', 'conv-A'),
        ('llm.invocation_parameters', '{"model": "gpt-4o-2024-08-06"}'),
        ('llm.input_messages.0.message.role', 'user'),
        ('llm.input_messages.0.message.content', 'Hi'),
        ('llm.model_name', 'gpt-4o-2024-08-06'),
        ('llm.token_count.total', 120),
        ('llm.token_count.prompt', 100),
        ('llm.token_count.completion', 20),
        ('llm.output_messages.0.message.role', 'assistant'),
        ('llm.output_messages.0.message.content', 'Hello! How can I help?'),
        ('llm.finish_reason', 'stop'),
        ('openinference.span.kind', 'LLM'),
     ]),
    (OPENINFERENCE, TRACE_ID, 'AAAAAAAAEAM=', 'AAAAAAAAEAE=', 'ChatCompletion',
     'SPAN_KIND_INTERNAL', '4', '5', OK, 256, [
        ('llm.system', 'openai'),
        ('input.value',
         '{"model": "gpt-4o-2024-08-06", "messages": [{"role": "user", "content": "Hi"}, {"role'
         '": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "We'
         'ather in Paris?"}]}'),
        ('input.mime_type', 'application/json'),
        ('output.value',
         '{"id":"chatcmpl-2","choices":[{"finish_reason":"stop","index":0,"logprobs":null,"mess'
         'age":{"content":"It is sunny in Paris.","refusal":null,"role":"assistant"}}],"created'
         '":1700000000,"model":"gpt-4o-2024-08-06","object":"chat.completion","usage":{"complet'
         'ion_tokens":20,"prompt_tokens":100,"total_tokens":120}}'),
        ('output.mime_type', 'application/json'),
        ('session.id', 'conv-B'),
        ('llm.invocation_parameters', '{"model": "gpt-4o-2024-08-06"}'),
        ('llm.input_messages.0.message.role', 'user'),
        ('llm.input_messages.0.message.content', 'Hi'),
        ('llm.input_messages.1.message.role', 'assistant'),
        ('llm.input_messages.1.message.content', 'Hello! How can I help?'),
        ('llm.input_messages.2.message.role', 'user'),
        ('llm.input_messages.2.message.content', 'Weather in Paris?'),
        ('llm.model_name', 'gpt-4o-2024-08-06'),
        ('llm.token_count.total', 120),
        ('llm.token_count.prompt', 100),
        ('llm.token_count.completion', 20),
        ('llm.output_messages.0.message.role', 'assistant'),
        ('llm.output_messages.0.message.content', 'It is sunny in Paris.'),
        ('llm.finish_reason', 'stop'),
        ('openinference.span.kind', 'LLM'),
     ]),
    (EVAL, TRACE_ID, 'AAAAAAAAEAE=', None, 'evaluation run',
     'SPAN_KIND_INTERNAL', '1', '6', {}, 256, [
     ]),
]
RESOURCE = {"attributes": [
    {"key": key, "value": {"stringValue": value}} for key, value in (
        ("telemetry.sdk.language", "python"), ("telemetry.sdk.name", "opentelemetry"),
        ("telemetry.sdk.version", "fixed"), ("service.instance.id", "fixed"),
        ("service.name", "unknown_service:python"),
    )
]}
HISTORIES = {
    "conv-A": [{"role": "user", "content": "Hi"},
               {"role": "assistant", "content": "Hello! How can I help?"}],
    "conv-B": [{"role": "user", "content": "Hi"},
               {"role": "assistant", "content": "Hello! How can I help?"},
               {"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": "It is sunny in Paris."}],
}


def exported(rows: list[Any]) -> dict[str, Any]:
    """The OTLP/JSON document of ``SESSION_SPANS`` (protobuf's JSON mapping)."""
    scopes: list[dict[str, Any]] = []
    for scope, trace_id, span_id, parent, name, kind, start, end, status, flags, pairs in rows:
        found: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
        if parent is not None:
            found["parentSpanId"] = parent
        found.update({"name": name, "kind": kind, "startTimeUnixNano": start,
                      "endTimeUnixNano": end, "status": status, "flags": flags})
        if pairs:
            found["attributes"] = [
                {"key": key, "value": {"intValue": str(value)} if isinstance(value, int)
                 else {"stringValue": value}}
                for key, value in pairs
            ]
        if scopes and scopes[-1]["scope"] == scope:
            scopes[-1]["spans"].append(found)
        else:
            scopes.append({"scope": scope, "spans": [found]})
    return {"resourceSpans": [{"resource": RESOURCE, "scopeSpans": scopes}]}


BOTH = exported(SESSION_SPANS)


def history(session: str) -> list[Message]:
    return get_adapter("openai_chat").to_messages(HISTORIES[session])


def test_session_id_gives_that_sessions_conversation_in_a_shared_trace() -> None:
    named = [
        (s["name"], s["traceId"],
         {a["key"]: a["value"] for a in s.get("attributes", [])}.get("session.id"))
        for scope in BOTH["resourceSpans"][0]["scopeSpans"] for s in scope["spans"]
    ]
    assert named == [
        ("ChatCompletion", "AAAAAAAAAAAAAAAAAACgAQ==", {"stringValue": "conv-A"}),
        ("ChatCompletion", "AAAAAAAAAAAAAAAAAACgAQ==", {"stringValue": "conv-B"}),
        ("evaluation run", "AAAAAAAAAAAAAAAAAACgAQ==", None),
    ]
    first = otel.to_messages(BOTH, session_id="conv-A")
    assert first == [HumanMessage(content="Hi"), AIMessage(content="Hello! How can I help?")]
    assert transcript_hash(first) == transcript_hash(history("conv-A"))
    second = otel.to_messages(BOTH, session_id="conv-B")
    assert second == [
        HumanMessage(content="Hi"), AIMessage(content="Hello! How can I help?"),
        HumanMessage(content="Weather in Paris?"), AIMessage(content="It is sunny in Paris."),
    ]
    assert transcript_hash(second) == transcript_hash(history("conv-B"))
    assert [view.span_id for view in otel.calls(BOTH, session_id="conv-A")] == [
        "0000000000001002"
    ]
    assert [view.span_id for view in otel.calls(BOTH, session_id="conv-B")] == [
        "0000000000001003"
    ]


def test_two_sessions_in_one_trace_without_a_filter_are_ambiguous() -> None:
    error = refused(BOTH)
    assert where(error) == ("ambiguous_trace", None, None, "otel")
    assert str(error) == (
        "otel: trace: the spans hold 2 conversations (in different sessions, or whose calls "
        "are not prefixes of one another); choose one with a filter: "
        "span_id=0000000000001002 (its last call, at resourceSpans[0].scopeSpans[0].spans[0]); "
        "trace_id=0000000000000000000000000000a001; session_id=conv-A | "
        "span_id=0000000000001003 (its last call, at resourceSpans[0].scopeSpans[0].spans[1]); "
        "trace_id=0000000000000000000000000000a001; session_id=conv-B [ambiguous_trace]"
    )


CRAFTED = document(
    span(1, genai(user("hi"), assistant("x"), **{"gen_ai.conversation.id": "A"}), 1),
    span(2, genai(user("hi"), assistant("y"), **{"gen_ai.conversation.id": "B"}), 5),
)


def test_each_conversation_is_listed_with_its_own_session() -> None:
    error = refused(CRAFTED)
    assert where(error) == ("ambiguous_trace", None, None, "otel")
    assert str(error).split("filter: ")[1] == (
        "span_id=0000000000000001 (its last call, at resourceSpans[0].scopeSpans[0].spans[0]); "
        "trace_id=abababababababababababababababab; session_id=A | "
        "span_id=0000000000000002 (its last call, at resourceSpans[0].scopeSpans[0].spans[1]); "
        "trace_id=abababababababababababababababab; session_id=B [ambiguous_trace]"
    )
    assert otel.to_messages(CRAFTED, session_id="A") == [
        HumanMessage(content="hi"), AIMessage(content="x")
    ]
    assert otel.to_messages(CRAFTED, session_id="B") == [
        HumanMessage(content="hi"), AIMessage(content="y")
    ]


def test_a_call_is_in_its_nearest_ancestors_session() -> None:
    # Each conversation's root span names its session; its model calls name none.
    trace = document(
        span(1, {"session.id": "A"}, 1, name="conversation"),
        span(2, genai(user("hi"), assistant("x")), 2, parent=1),
        span(3, {"session.id": "B"}, 10, name="conversation"),
        span(4, genai([*user("hi"), *assistant("x"), *user("more")], assistant("y")), 11,
             parent=3),
    )
    error = refused(trace)
    assert where(error) == ("ambiguous_trace", None, None, "otel")
    assert "session_id=A |" in str(error)
    assert str(error).endswith("session_id=B [ambiguous_trace]")
    assert otel.to_messages(trace, session_id="A") == [
        HumanMessage(content="hi"), AIMessage(content="x")
    ]
    assert otel.to_messages(trace, session_id="B") == [
        HumanMessage(content="hi"), AIMessage(content="x"), HumanMessage(content="more"),
        AIMessage(content="y"),
    ]
    # A trace that names one session only, on a span that is no ancestor of the calls: as
    # before, the whole trace is that session's.
    trace = document(
        span(1, genai(user("hi"), assistant("x")), 1),
        span(2, genai([*user("hi"), *assistant("x"), *user("more")], assistant("y")), 5),
        span(3, {"session.id": "S"}, 9, name="marker"),
    )
    assert otel.to_messages(trace, session_id="S") == otel.to_messages(trace) == [
        HumanMessage(content="hi"), AIMessage(content="x"), HumanMessage(content="more"),
        AIMessage(content="y"),
    ]


# --- 2. a tool retried with success (Traceloop LangChain, LangGraph RetryPolicy) -----------

RETRY = load("traceloop_langgraph_tool_retry")
RETRY_CUT = load("traceloop_langgraph_tool_retry_cut")
CALL = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")
FINISH = {"fields": {"finish_reason": ""}}


def tool_spans(trace: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    found = []
    for s in trace["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        values = {a["key"]: a["value"] for a in s["attributes"]}
        if values.get("gen_ai.operation.name") == {"stringValue": "execute_tool"}:
            recorded = json.loads(values["gen_ai.tool.call.arguments"]["stringValue"])
            found.append((s["name"], s.get("status"), recorded["kwargs"]["tool_call_id"]))
    return found


def test_a_retried_tool_that_succeeded_is_no_error() -> None:
    assert tool_spans(RETRY["trace"]) == [
        ("execute_tool get_weather",
         {"message": "weather service timed out", "code": "STATUS_CODE_ERROR"}, "call_1"),
        ("execute_tool get_weather", {}, "call_1"),
    ]
    assert tool_spans(RETRY_CUT["trace"]) == tool_spans(RETRY["trace"])
    [result] = [m for m in RETRY["history"] if m["type"] == "tool"]
    assert (result["data"]["status"], result["data"]["content"]) == ("success", "18 C, sunny")
    messages = otel.to_messages(RETRY["trace"])
    assert messages == [
        HumanMessage(content="Paris?"),
        AIMessage(content="", tool_calls=[CALL], metadata={"otel": {"output": FINISH}}),
        ToolMessage(content="18 C, sunny", tool_call_id="call_1",
                    metadata={"otel": {"failed_attempts": 1}}),
        AIMessage(content="Paris: 18 C, sunny.", metadata={"otel": FINISH}),
    ]
    assert [m.model_dump(mode="json") for m in messages] == RETRY["expected"]
    assert not messages[2].is_error  # type: ignore[union-attr]
    assert messages[2].metadata == {"otel": {"failed_attempts": 1}}
    assert otel.to_messages(otel.from_messages(messages)) == messages  # (written, read back)


@pytest.mark.parametrize("allow_pending", [False, True])
def test_a_run_cut_after_a_retried_tool_reads(allow_pending: bool) -> None:
    expected = [
        HumanMessage(content="Paris?"),
        AIMessage(content="", tool_calls=[CALL], metadata={"otel": FINISH}),
        ToolMessage(content="18 C, sunny", tool_call_id="call_1", name="get_weather",
                    metadata={"otel": {"failed_attempts": 1}}),
    ]
    messages = otel.to_messages(RETRY_CUT["trace"], allow_pending=allow_pending)
    assert [m.model_dump(exclude={"id"}) for m in messages] == [
        m.model_dump(exclude={"id"}) for m in expected
    ]
    typed = get_adapter("langchain").to_messages(RETRY_CUT["history"])
    assert transcript_hash(messages) == transcript_hash(typed)


@pytest.mark.parametrize("allow_pending", [False, True])
def test_the_retry_trace_without_its_last_model_call_reads(allow_pending: bool) -> None:
    # The audit's cut variant: the last model call's span left out.
    cut = copy.deepcopy(RETRY["trace"])
    scopes = cut["resourceSpans"][0]["scopeSpans"]
    chats = [
        s for scope in scopes for s in scope["spans"]
        if any(a["key"] == "gen_ai.operation.name" and a["value"].get("stringValue") == "chat"
               for a in s["attributes"])
    ]
    last = max(chats, key=lambda s: int(s["startTimeUnixNano"]))
    for scope in scopes:
        scope["spans"] = [s for s in scope["spans"] if s is not last]
    messages = otel.to_messages(cut, allow_pending=allow_pending)
    assert [(type(m).__name__, m.text, getattr(m, "is_error", None), m.metadata) for m in messages
            ] == [
        ("HumanMessage", "Paris?", None, {}),
        ("AIMessage", "", None, {"otel": FINISH}),
        ("ToolMessage", "18 C, sunny", False, {"otel": {"failed_attempts": 1}}),
    ]


# --- 3. NaN and infinities ------------------------------------------------------------------


def sdk_spans(build: Any) -> list[Any]:
    return recorded_spans(build, "test.scope")


ASK = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
CALLING = [{"role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}}]}]


def tool_loop(result: Any) -> list[Any]:
    """The audit's sdk.py: a chat span that calls f, and f's tool span with ``result``."""
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            current.set_attribute("gen_ai.operation.name", "chat")
            current.set_attribute("gen_ai.input.messages", json.dumps(ASK))
            current.set_attribute("gen_ai.output.messages", json.dumps(CALLING))
        with tracer.start_as_current_span("execute_tool f") as current:
            current.set_attribute("gen_ai.operation.name", "execute_tool")
            current.set_attribute("gen_ai.tool.name", "f")
            current.set_attribute("gen_ai.tool.call.id", "c1")
            current.set_attribute("gen_ai.tool.call.result", result)

    return sdk_spans(build)


RESULT = "[1].attributes['gen_ai.tool.call.result']"


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_result_on_an_sdk_span_is_unserializable(number: float) -> None:
    spans = tool_loop(number)
    error = refused(spans)
    assert where(error) == ("unserializable_value", 1, RESULT, "otel")
    assert str(error) == (
        f"otel: {RESULT}: the double {number!r} has no JSON number (its OTLP export is "
        "refused alike) [unserializable_value]"
    )
    dicts = [json.loads(s.to_json()) for s in spans]  # (json.loads reads NaN and Infinity)
    assert where(refused(dicts)) == ("unserializable_value", 1, RESULT, "otel")


def test_a_non_finite_value_inside_an_sdk_attribute_is_unserializable() -> None:
    spans = tool_loop([1.0, float("nan")])
    assert where(refused(spans)) == ("unserializable_value", 1, RESULT, "otel")
    dicts = [json.loads(s.to_json()) for s in spans]
    assert where(refused(dicts)) == ("unserializable_value", 1, RESULT, "otel")


def test_a_nan_result_is_refused_in_every_input_form() -> None:
    spans = tool_loop(float("nan"))
    assert where(refused(spans)) == ("unserializable_value", 1, RESULT, "otel")
    # The SDK's own encoder's output for those spans (MessageToDict(encode_spans(spans))),
    # refused as before.
    exported = document(
        span(1, genai(ASK, CALLING), 1),
        {**span(2, {}, 5, name="execute_tool f"), "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "f"}},
            {"key": "gen_ai.tool.call.id", "value": {"stringValue": "c1"}},
            {"key": "gen_ai.tool.call.result", "value": {"doubleValue": "NaN"}},
        ]},
    )
    assert where(refused(exported)) == (
        "unserializable_value", 1, f"{SPANS}[1].attributes[3].value.doubleValue", "otel"
    )


@pytest.mark.parametrize("text", ["Infinity", "-Infinity", "NaN", "[1, NaN]", '{"a": Infinity}'])
def test_the_writer_refuses_a_non_finite_value(text: str) -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f", args={}, id="c1")]),
        ToolMessage(content=text, tool_call_id="c1", metadata={"otel": {"response": "value"}}),
    ]
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages)
    error = caught.value
    spelled = "NaN" if "NaN" in text else ("-Infinity" if "-" in text else "Infinity")
    assert where(error) == ("not_representable", 2, "messages[2].metadata.otel.response", "otel")
    assert str(error) == (
        f"otel: messages[2].metadata.otel.response: the number {spelled} is no JSON number: "
        "an OTLP/JSON doubleValue cannot hold it [not_representable]"
    )


# --- 4. bytes on SDK spans ------------------------------------------------------------------


@pytest.mark.parametrize("value", [b"\xff\x00", {"a": b"x"}])
def test_bytes_on_an_sdk_span_are_unserializable(value: Any) -> None:
    spans = tool_loop(value)
    assert spans[1].attributes["gen_ai.tool.call.result"] == value  # the SDK kept them
    error = refused(spans)
    assert where(error) == ("unserializable_value", 1, RESULT, "otel")
    held = b"\xff\x00" if isinstance(value, bytes) else b"x"
    assert str(error) == (
        f"otel: {RESULT}: bytes ({held!r}) have no JSON value to be kept as (exported, they "
        "are a bytesValue; as text they would be written back as a stringValue) "
        "[unserializable_value]"
    )


# --- 5. a flat key that is a value and starts another key -----------------------------------

OUT = [("llm.output_messages.0.message.role", "assistant"),
       ("llm.output_messages.0.message.content", "ok")]
KIND = ("openinference.span.kind", "LLM")
FLAT = "llm.input_messages.0.message"


def at(key: str, prefix: str = f"{SPANS}[0]") -> str:
    return f"{prefix}.attributes[{key!r}]"


@pytest.mark.parametrize("deeper_first", [True, False])
def test_a_value_hidden_by_a_deeper_key_is_refused_in_either_order(deeper_first: bool) -> None:
    deeper = (f"{FLAT}.content.foo", "SECRET")
    value = (f"{FLAT}.content", "hi")
    pairs = [deeper, value] if deeper_first else [value, deeper]
    attributes = [KIND, (f"{FLAT}.role", "user"), *pairs, *OUT]
    error = refused(document(span(1, attributes, 1)))
    assert where(error) == ("malformed_event", 0, at(f"{FLAT}.content"), "otel")
    assert str(error) == (
        f"otel: {at(f'{FLAT}.content')}: the attribute '{FLAT}.content' holds a value and is "
        f"the start of the attribute '{FLAT}.content.foo': one would hide the other (each "
        "attribute of a flat message holds one field) [malformed_event]"
    )


@pytest.mark.parametrize("name_first", [True, False])
def test_a_kvlist_message_beside_its_flat_fields_is_refused_in_either_order(
    name_first: bool,
) -> None:
    name = (f"{FLAT}.name", "bob")
    whole = (FLAT, {"role": "user", "content": "hi"})
    attributes = [KIND, *([name, whole] if name_first else [whole, name]), *OUT]
    error = refused(document(span(1, attributes, 1)))
    assert where(error) == ("malformed_event", 0, at(FLAT), "otel")
    assert str(error) == (
        f"otel: {at(FLAT)}: the attribute '{FLAT}' holds a value and is the start of the "
        f"attribute '{FLAT}.name': one would hide the other (each attribute of a flat message "
        "holds one field) [malformed_event]"
    )
    # A kvlist message alone still reads.
    alone = [KIND, (FLAT, {"role": "user", "content": "hi", "name": "bob"}), *OUT]
    assert otel.to_messages(document(span(1, alone, 1))) == [
        HumanMessage(content="hi", name="bob"), AIMessage(content="ok")
    ]


def test_a_to_json_dict_is_refused_and_left_as_it_was() -> None:
    inner = {"role": "user", "content": "hi"}
    given = {
        "name": "chat", "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "01" * 8},
        "parent_id": None, "start_time": "2024-01-01T00:00:00.000000Z",
        "end_time": "2024-01-01T00:00:01.000000Z", "status": {"status_code": "UNSET"},
        "instrumentation_scope": {"name": "x"},
        "attributes": {"openinference.span.kind": "LLM", FLAT: inner, f"{FLAT}.name": "bob",
                       **dict(OUT)},
    }
    before = copy.deepcopy(given)
    assert where(refused([given])) == ("malformed_event", 0, at(FLAT, "[0]"), "otel")
    assert given == before
    assert inner == {"role": "user", "content": "hi"}


def test_a_real_sdk_span_is_refused_and_left_as_it_was() -> None:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("ChatCompletion") as current:
            current.set_attribute("openinference.span.kind", "LLM")
            current.set_attribute(FLAT, {"role": "user", "content": "hi"})
            current.set_attribute(f"{FLAT}.name", "bob")
            for key, value in OUT:
                current.set_attribute(key, value)

    spans = sdk_spans(build)
    assert where(refused(spans)) == ("malformed_event", 0, at(FLAT, "[0]"), "otel")
    assert dict(spans[0].attributes[FLAT]) == {"role": "user", "content": "hi"}


# --- 6. structured GenAI messages on SDK spans ----------------------------------------------


def structured() -> list[Any]:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            current.set_attribute("gen_ai.operation.name", "chat")
            current.set_attribute(
                "gen_ai.input.messages",
                [{"role": "user", "parts": [{"type": "text", "content": "q"}]}],
            )
            current.set_attribute(
                "gen_ai.output.messages",
                [{"role": "assistant", "parts": [{"type": "text", "content": "a"}],
                  "finish_reason": "stop"}],
            )

    return sdk_spans(build)


def test_structured_genai_messages_on_sdk_spans_read_as_their_export() -> None:
    spans = structured()
    held = spans[0].attributes["gen_ai.input.messages"]
    assert held == ({"role": "user", "parts": ({"type": "text", "content": "q"},)},)
    expected = [
        HumanMessage(content="q"),
        AIMessage(content="a", metadata={"otel": {"fields": {"finish_reason": "stop"}}}),
    ]
    assert otel.to_messages(spans) == expected
    assert otel.to_messages([json.loads(s.to_json()) for s in spans]) == expected
    exported = document(span(1, [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.input.messages", [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]),
        ("gen_ai.output.messages", [{"role": "assistant", "finish_reason": "stop",
                                     "parts": [{"type": "text", "content": "a"}]}]),
    ], 1))
    assert otel.to_messages(exported) == expected
    assert spans[0].attributes["gen_ai.input.messages"] is held  # (read, not changed)
    assert held == ({"role": "user", "parts": ({"type": "text", "content": "q"},)},)


# --- seen on the way: a model call whose parents loop ----------------------------------------


def test_a_call_whose_parents_loop_is_refused_not_dropped() -> None:
    # The second call's parent is a span whose parent is the call: it was taken for a call
    # nested in itself, and dropped; the first call was read as the whole conversation.
    trace = document(
        span(5, genai(user("hi"), assistant("x")), 1),
        span(1, genai([*user("hi"), *assistant("x"), *user("more")], assistant("y")), 3,
             parent=2),
        span(2, {"x": 1}, 0, parent=1, name="loop"),
    )
    error = refused(trace)
    assert where(error) == ("malformed_event", 1, f"{SPANS}[1]", "otel")
    assert str(error) == (
        f"otel: {SPANS}[1]: the span's parents loop: span 0000000000000001 is its own ancestor "
        "(parentSpanId) [malformed_event]"
    )
