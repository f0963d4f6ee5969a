"""Write golden_traces/otel/ by running real OpenTelemetry instrumentations on real applications.

Usage: ``.otel-venv/bin/python scripts/golden/otel.py`` (rewrites the folder; deterministic),
or ``... otel.py --only NAME...`` to write only those files (a valid or invalid case's name,
or ``openai_v2_tool_loop_json_lines``), running only the cases they come from.
The instrumentations are in the ``otel-golden`` extra, installed in their own virtualenv::

    python -m venv .otel-venv && .otel-venv/bin/pip install -e ".[otel-golden]"

Each case runs in its own subprocess (instrumentations patch the ``openai`` client and the
frameworks process-wide, so two must never meet by accident): this script calls itself with
``--case NAME``, the child instruments, runs the application against a scripted model served
on 127.0.0.1 (a loopback HTTP server answering ``/chat/completions`` and ``/responses`` with
the next scripted body), and prints ``{"trace": <OTLP/JSON>, "history": ...}``.

The applications:

* the real ``openai`` client in the tool loop the OpenAI docs show (send the history, append
  the reply, run each call, append a ``tool`` message per call, repeat);
* a LangGraph ``create_react_agent`` whose model is a scripted ``BaseChatModel`` (also
  interrupted after its tools, ``interrupt_after=["tools"]``);
* an Agents SDK run (``Runner.run``) with a function tool and a handoff, on
  ``OpenAIResponsesModel`` over an ``AsyncOpenAI`` client pointed at the server;
* a LlamaIndex ``FunctionAgent`` on llama-index-core's ``MockFunctionCallingLLM`` (scripted
  replies; no server), two turns sharing one ``Memory``, one of two parallel tools raising.

The instrumentations: OpenInference (``openinference-instrumentation-openai``, ``-langchain``,
``-openai-agents``, ``-llama-index``), OpenTelemetry's
``opentelemetry-instrumentation-openai-v2`` (with
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only``) and Traceloop's
``opentelemetry-instrumentation-openai`` and ``opentelemetry-instrumentation-langchain``.

Export: the SDK's own OTLP encoder (``opentelemetry.exporter.otlp.proto.common``) turns the
finished spans into an ``ExportTraceServiceRequest``, and protobuf's JSON mapping writes it
(``MessageToDict``: camelCase keys, ids in base64, 64-bit integers as strings). Ids come from
a sequential ``IdGenerator``; each span's start and end times are replaced by ordinals (1, 2,
3, ... in the order of the original times), so nothing random or clock-bound is left.
Some cases are also written as hex-id OTLP/JSON lines (the file exporter's form).

What is stored beside the spans is the application's own final history: the message list
the tool loop holds, ``messages_to_dict(state["messages"])`` of the LangGraph state, the
Agents SDK's ``result.to_input_list()`` with the last agent's instructions. The test
rebuilds the conversation from the spans and compares it with that history. Invalid cases
are real runs whose spans cannot be trusted (content capture off, attributes dropped, input
dropped, ``fc_``/``call_`` ids), plus real spans edited by hand where the defect needs it;
their code and index are written here.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "golden_traces" / "otel"
MODEL = "gpt-4o-2024-08-06"
sys.path.insert(0, str(ROOT / "tests"))

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
WEATHER = {"Paris": "18 C, sunny", "Rome": "24 C, clear"}


# --- the scripted model ------------------------------------------------------------------


def completion(number: int, message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "refusal": None}


def calling(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for call_id, name, args in calls
        ],
    }


def response(number: int, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1700000000,
        "model": MODEL,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 120,
        },
    }


def r_said(number: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def r_call(number: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{number}",
        "call_id": f"call_{number}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


@contextmanager
def scripted_server(replies: list[dict[str, Any]]) -> Iterator[str]:
    """The next body of ``replies`` for each POST; 500 when they run out."""
    from local_server import serving

    queue = list(replies)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            sent = json.loads(self.rfile.read(length) or b"{}")
            status, body = (200, queue.pop(0)) if queue else (500, {"error": {"message": "out"}})
            if self.path.endswith("/responses") and status == 200:
                # A Responses server echoes the request's instructions and tools.
                body = {**body, "instructions": sent.get("instructions"),
                        "tools": sent.get("tools", [])}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Handler) as base_url:
        yield f"{base_url}/v1"


# --- tracing, exported deterministically ---------------------------------------------------


class Tracing:
    """A tracer provider with sequential ids and an in-memory exporter."""

    def __init__(self, attribute_limit: int | None = None) -> None:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        from opentelemetry.sdk.trace.id_generator import IdGenerator

        class Sequential(IdGenerator):
            def __init__(self) -> None:
                self.spans = 0
                self.traces = 0

            def generate_span_id(self) -> int:
                self.spans += 1
                return 0x1000 + self.spans

            def generate_trace_id(self) -> int:
                self.traces += 1
                return 0xA000 + self.traces

        limits = SpanLimits(max_span_attributes=attribute_limit) if attribute_limit else None
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(id_generator=Sequential(), span_limits=limits)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        trace.set_tracer_provider(self.provider)

    def spans(self) -> list[Any]:
        self.provider.force_flush()
        return list(self.exporter.get_finished_spans())

    def otlp_json(self) -> dict[str, Any]:
        """The finished spans as protobuf's JSON mapping of an OTLP export request."""
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        document: dict[str, Any] = MessageToDict(encode_spans(self.spans()))
        ordinal_times(document)
        fixed: dict[str, Any] = json.loads(fixed_text(json.dumps(document)))
        return fixed


def ordinal_times(document: dict[str, Any]) -> None:
    """Replace span times by ordinals, keeping their order (ties broken by span id)."""
    spans = [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    stamps = sorted(
        {(int(span[key]), span["spanId"], key) for span in spans for key in _TIMES},
    )
    order = {stamp: position + 1 for position, stamp in enumerate(stamps)}
    for span in spans:
        for key in _TIMES:
            span[key] = str(order[(int(span[key]), span["spanId"], key)])
        for event in span.get("events", []):
            event["timeUnixNano"] = span["startTimeUnixNano"]
    for resource in document["resourceSpans"]:
        attributes = resource.get("resource", {}).get("attributes", [])
        for attribute in attributes:
            if attribute["key"] in ("telemetry.sdk.version", "service.instance.id"):
                attribute["value"] = {"stringValue": "fixed"}


_TIMES = ("startTimeUnixNano", "endTimeUnixNano")
_PORT = re.compile(r"127\.0\.0\.1:\d+")
_REPO_LINE = re.compile(r'(<repo>[^"\\]*\\", line )\d+')
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ADDRESS = re.compile(r" object at 0x[0-9a-f]+>")
_RUN_ID = re.compile(r'(llamaindex\.run_id\\*": \\*")([A-Za-z0-9]+)')


def fixed_text(text: str) -> str:
    """The loopback server's port, the paths in tracebacks and the uuids frameworks make
    (LangGraph's checkpoint namespaces), replaced by fixed values: uuids numbered in order of
    first appearance."""
    text = _PORT.sub("127.0.0.1:8000", text)
    # Tracebacks in exception events name the files: the virtualenv and the checkout.
    text = text.replace(json.dumps(sys.prefix)[1:-1], "<venv>")
    text = text.replace(json.dumps(str(ROOT))[1:-1], "<repo>")
    text = _REPO_LINE.sub(r"\1<n>", text)  # editing this script moves its line numbers
    # LlamaIndex's spans record reprs of objects (its workflow Context, the tools): their
    # memory addresses change from run to run.
    text = _ADDRESS.sub(" object at 0x0>", text)
    runs: dict[str, str] = {}  # and each workflow run gets a random run id: numbered in order
    text = _RUN_ID.sub(
        lambda found: found[1] + runs.setdefault(found[2], f"run{len(runs) + 1}"), text
    )
    seen: dict[str, str] = {}

    def number(found: re.Match[str]) -> str:
        return seen.setdefault(found[0], f"00000000-0000-4000-8000-{len(seen) + 1:012d}")

    return _UUID.sub(number, text)


def hex_lines(document: dict[str, Any]) -> str:
    """The document as OTLP JSON lines with hex ids: one resource-spans batch per line."""
    lines = []
    for resource in document["resourceSpans"]:
        batch = copy.deepcopy({"resourceSpans": [resource]})
        for scope in batch["resourceSpans"][0]["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
        lines.append(json.dumps(batch))
    return "\n".join(lines) + "\n"


# --- applications --------------------------------------------------------------------------


def run_tool(name: str, args: dict[str, Any]) -> str:
    if name == "get_weather":
        return WEATHER.get(args["city"], "unknown city")
    raise AssertionError(name)


def tool_loop(base_url: str, history: list[Any], tools: list[Any] | None = None) -> list[Any]:
    """The OpenAI docs' loop: ask, append the reply, answer each call, until no call is made."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    while True:
        reply = client.chat.completions.create(
            model=MODEL, messages=history, tools=tools or [WEATHER_TOOL]
        )
        message = reply.choices[0].message
        history.append(message.model_dump(mode="json", exclude_unset=True))
        if not message.tool_calls:
            return history
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            history.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": run_tool(call.function.name, args),
                }
            )


WEATHER_SCRIPT = [
    completion(1, calling(("call_1", "get_weather", {"city": "Paris"})), "tool_calls"),
    completion(2, said("It is 18 C and sunny in Paris."), "stop"),
]


def weather_history() -> list[Any]:
    return [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]


def openai_chat_case(instrument: Callable[[], None], limit: int | None = None) -> dict[str, Any]:
    tracing = Tracing(limit)
    instrument()
    with scripted_server(WEATHER_SCRIPT) as url:
        history = tool_loop(url, weather_history())
    return {"trace": tracing.otlp_json(), "history": history}


def instrument_openinference_openai() -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


def instrument_openai_v2() -> None:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


def instrument_traceloop() -> None:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


CASES: dict[str, tuple[dict[str, str], Callable[[], dict[str, Any]]]] = {}


def case(name: str, **env: str) -> Callable[[Callable[[], dict[str, Any]]], Any]:
    def register(run: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        CASES[name] = (env, run)
        return run

    return register


GENAI_ENV = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
}


@case("openinference_openai_tool_loop")
def _openinference_openai() -> dict[str, Any]:
    return openai_chat_case(instrument_openinference_openai)


@case("openai_v2_tool_loop", **GENAI_ENV)
def _openai_v2() -> dict[str, Any]:
    return openai_chat_case(instrument_openai_v2)


@case("openai_v2_content_off", OTEL_SEMCONV_STABILITY_OPT_IN="gen_ai_latest_experimental")
def _openai_v2_off() -> dict[str, Any]:
    return openai_chat_case(instrument_openai_v2)


@case("traceloop_openai_tool_loop")
def _traceloop() -> dict[str, Any]:
    return openai_chat_case(instrument_traceloop)


@case("traceloop_events_mode")
def _traceloop_events() -> dict[str, Any]:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    def events_instead() -> None:  # content goes to log events, not to the spans
        OpenAIInstrumentor(use_attributes=False).instrument()

    return openai_chat_case(events_instead)


@case("openinference_attribute_limit", OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT="24")
def _attribute_limit() -> dict[str, Any]:
    return openai_chat_case(instrument_openinference_openai)


@case("openinference_hidden_text", OPENINFERENCE_HIDE_INPUT_TEXT="true")
def _hidden_text() -> dict[str, Any]:
    return openai_chat_case(instrument_openinference_openai)


@case("openai_v2_two_conversations", **GENAI_ENV)
def _two_conversations() -> dict[str, Any]:
    tracing = Tracing()
    instrument_openai_v2()
    from opentelemetry import trace

    tracer = trace.get_tracer("app")
    histories = []
    with scripted_server(WEATHER_SCRIPT + WEATHER_SCRIPT) as url:
        for session in ("session-a", "session-b"):
            with tracer.start_as_current_span("conversation") as span:
                span.set_attribute("session.id", session)
                histories.append(tool_loop(url, weather_history()))
    return {"trace": tracing.otlp_json(), "history": histories[-1]}


@case("openinference_openai_sessions_one_trace")
def _sessions_one_trace() -> dict[str, Any]:
    """An evaluation loop that runs two conversations, each in its own session
    (OpenInference's ``using_session``: ``session.id`` on the spans inside it), under one
    root span, so both are in one trace. Conversation conv-A asks one question; conv-B is an
    evaluation case whose prior turns are conv-A's exchange, then a follow-up: A's model call
    is a prefix of B's, but in another session. Each session's history is kept. Its reading
    takes ``session_id``, which the golden files' cross-format test cannot pass to other
    readers: no file is written; ``--raw`` prints it (tests/test_otel_audit_s38.py holds a
    copy)."""
    tracing = Tracing()
    instrument_openinference_openai()
    import openai
    from openinference.instrumentation import using_session
    from opentelemetry import trace

    tracer = trace.get_tracer("eval")
    script = [completion(1, said("Hello! How can I help?"), "stop"),
              completion(2, said("It is sunny in Paris."), "stop")]
    prior: dict[str, list[dict[str, Any]]] = {
        "conv-A": [],
        "conv-B": [{"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "Hello! How can I help?"}],
    }
    histories = {}
    with scripted_server(script) as url:
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
        with tracer.start_as_current_span("evaluation run"):
            for name, turns in (("conv-A", ["Hi"]), ("conv-B", ["Weather in Paris?"])):
                with using_session(name):
                    history = list(prior[name])
                    for turn in turns:
                        history.append({"role": "user", "content": turn})
                        reply = client.chat.completions.create(model=MODEL, messages=history)
                        history.append(
                            {"role": "assistant", "content": reply.choices[0].message.content}
                        )
                    histories[name] = history
    return {"trace": tracing.otlp_json(), "histories": histories}


IMAGE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4D"
    "wABBAEAwS2OUAAAAABJRU5ErkJggg=="
)


@case("traceloop_base64_image")
def _traceloop_image() -> dict[str, Any]:
    tracing = Tracing()
    instrument_traceloop()
    history: list[Any] = [{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": IMAGE}},
    ]}]
    with scripted_server([completion(1, said("A single white pixel."), "stop")]) as url:
        history = tool_loop(url, history)
    return {"trace": tracing.otlp_json(), "history": history}


RESPONSES_TOOL = {"type": "function", **WEATHER_TOOL["function"]}


def responses_loop(instrument: Callable[[], None]) -> dict[str, Any]:
    """The Responses API's tool loop: send the items, append the output items, answer each
    function call with a function_call_output item, until no call is made."""
    import openai

    tracing = Tracing()
    instrument()
    items: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    script = [
        response(1, [r_call(1, "get_weather", {"city": "Paris"})]),
        response(2, [r_said(2, "It is 18 C and sunny in Paris.")]),
    ]
    with scripted_server(script) as url:
        client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
        while True:
            reply = client.responses.create(model=MODEL, input=items, tools=[RESPONSES_TOOL])
            calls = [item for item in reply.output if item.type == "function_call"]
            items += [item.model_dump(mode="json", exclude_none=True) for item in reply.output]
            if not calls:
                break
            for call in calls:
                result = run_tool(call.name, json.loads(call.arguments))
                items.append(
                    {"type": "function_call_output", "call_id": call.call_id, "output": result}
                )
    from agents.models.chatcmpl_converter import Converter

    # The items spelled as Chat Completions messages by the Agents SDK's own converter.
    return {"trace": tracing.otlp_json(), "history": Converter.items_to_messages(items)}


@case("traceloop_responses_tool_loop")
def _traceloop_responses() -> dict[str, Any]:
    return responses_loop(instrument_traceloop)


@case("openinference_openai_responses_tool_loop")
def _openinference_responses() -> dict[str, Any]:
    return responses_loop(instrument_openinference_openai)


# --- LangGraph ----------------------------------------------------------------------------


def scripted_chat_model(script: list[Any]) -> Any:
    """A LangChain chat model that answers each call with the next message of ``script``
    (tools bound to it change nothing: the script already holds the calls)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        script: list[AIMessage]
        position: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            reply = self.script[self.position]
            self.position += 1
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return ScriptedChatModel(script=script)


def langgraph_case() -> dict[str, Any]:
    """A LangGraph ReAct agent with a scripted chat model, traced by OpenInference."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, messages_to_dict
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode, create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor

    tracing = Tracing()
    LangChainInstrumentor().instrument()

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER.get(city, "unknown city")

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount of euros into another currency."""
        if currency not in {"USD", "GBP"}:
            raise ValueError(f"unsupported currency {currency!r}; supported: USD, GBP")
        return f"{amount * 1.1:.2f} {currency}"

    script = [
        AIMessage(content="", id="ai-1", tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
            {"name": "convert_currency", "args": {"amount": 10, "currency": "JPY"}, "id": "call_2"},
        ]),
        AIMessage(content="Paris is 18 C and sunny; I cannot convert to JPY.", id="ai-2"),
    ]
    agent = create_react_agent(
        scripted_chat_model(script),
        ToolNode([get_weather, convert_currency], handle_tool_errors=True),
    )
    state = agent.invoke({"messages": [
        SystemMessage(content="You are a travel assistant.", id="system-0"),
        HumanMessage(content="Weather in Paris, and 10 EUR in JPY?", id="human-1"),
    ]}, config={"max_concurrency": 1})  # the two tool calls one after the other: fixed span order
    history = messages_to_dict(state["messages"])
    for position, message in enumerate(history):
        if len(message["data"].get("id") or "") == 36:  # a uuid4 LangGraph gave it
            message["data"]["id"] = f"{message['type']}-{position}"
    return {"trace": tracing.otlp_json(), "history": history}


@case("openinference_langgraph_agent")
def _langgraph() -> dict[str, Any]:
    return langgraph_case()


def langgraph_run(
    instrument: Callable[[], None], script: list[Any], messages: list[Any],
    cut_after_tools: bool = False,
) -> dict[str, Any]:
    """A LangGraph ReAct agent (``create_react_agent``, a ``ToolNode`` that turns a tool's
    exception into an error ``ToolMessage``) on a scripted chat model, its tools run one
    after the other. ``cut_after_tools``: the graph is interrupted after its first tools
    step (``interrupt_after=["tools"]``, a checkpointer), so no model call follows the
    tools; the history is then the checkpointed state."""
    from langchain_core.messages import messages_to_dict
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    tracing = Tracing()
    instrument()

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ValueError(f"no such city: {city}")
        return WEATHER[city]

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount of euros into another currency."""
        if currency not in {"USD", "GBP"}:
            raise ValueError(f"unsupported currency {currency!r}; supported: USD, GBP")
        return f"{amount * 1.1:.2f} {currency}"

    config: dict[str, Any] = {"max_concurrency": 1}  # tools one after the other: fixed order
    extra: dict[str, Any] = {}
    if cut_after_tools:
        extra = {"checkpointer": InMemorySaver(), "interrupt_after": ["tools"]}
        config["configurable"] = {"thread_id": "thread-1"}
    agent = create_react_agent(
        scripted_chat_model(script),
        ToolNode([get_weather, convert_currency], handle_tool_errors=True),
        **extra,
    )
    state = agent.invoke({"messages": messages}, config=config)
    if cut_after_tools:
        state = agent.get_state(config).values
    history = messages_to_dict(state["messages"])
    for position, message in enumerate(history):
        if len(message["data"].get("id") or "") == 36:  # a uuid4 LangGraph gave it
            message["data"]["id"] = f"{message['type']}-{position}"
    return {"trace": tracing.otlp_json(), "history": history}


def instrument_openinference_langchain() -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument()


def instrument_traceloop_langchain() -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument()


@case("openinference_langgraph_cut_after_tools")
def _langgraph_cut() -> dict[str, Any]:
    """The model's one call turn runs two tools, one of which fails, and the run stops
    there: OpenInference records no output on the failed tool span, and no model call
    after it records the error text ToolNode made (truncated_trace at that span)."""
    from langchain_core.messages import AIMessage, HumanMessage

    script = [AIMessage(content="", id="ai-1", tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
        {"name": "convert_currency", "args": {"amount": 10, "currency": "JPY"}, "id": "call_2"},
    ])]
    return langgraph_run(
        instrument_openinference_langchain, script,
        [HumanMessage(content="Weather in Paris, and 10 EUR in JPY?", id="human-1")],
        cut_after_tools=True,
    )


@case("traceloop_langgraph_agent")
def _traceloop_langgraph() -> dict[str, Any]:
    """Traceloop's LangChain instrumentation on the ReAct agent: a failing tool called in
    two turns with the same arguments (the second time beside a call that succeeds). Its
    tool spans have no gen_ai.tool.call.id; the id is in its own record of the callback's
    arguments. Its GenAI messages name no tool on a result (``history_unrecorded``)."""
    from langchain_core.messages import AIMessage, HumanMessage

    script = [
        AIMessage(content="", id="ai-1", tool_calls=[
            {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_1"},
        ]),
        AIMessage(content="", id="ai-2", tool_calls=[
            {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_2"},
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_3"},
        ]),
        AIMessage(content="Atlantis is unknown; Paris is 18 C and sunny.", id="ai-3"),
    ]
    run = langgraph_run(
        instrument_traceloop_langchain, script,
        [HumanMessage(content="Weather in Atlantis, then Paris?", id="human-1")],
    )
    return {**run, "history_unrecorded": ["ToolMessage.name"]}


@case("traceloop_langgraph_tool_for_no_call")
def _traceloop_tool_for_no_call() -> dict[str, Any]:
    return tool_for_no_call_run(cut_after_tools=False)


@case("traceloop_langgraph_tool_after_cut")
def _traceloop_tool_after_cut() -> dict[str, Any]:
    return tool_for_no_call_run(cut_after_tools=True)


def tool_for_no_call_run(cut_after_tools: bool) -> dict[str, Any]:
    """Traceloop's LangChain instrumentation on a ReAct agent whose tool ``plan`` runs the
    tool ``get_weather`` itself (which fails; ``plan`` catches it), and application code that
    calls ``get_weather.invoke`` after the run: with arguments that fail, or (``cut_after_tools``:
    the run interrupted after its tools, ``interrupt_after=["tools"]``) with the arguments of
    the call the model made last. Those ``get_weather`` runs were made for no tool call:
    Traceloop records ``kwargs.tool_call_id = null``. The history is the graph's final state."""
    import contextlib

    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    tracing = Tracing()
    instrument_traceloop_langchain()

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ValueError(f"no such city: {city}")
        return WEATHER[city]

    @tool
    def plan(city: str) -> str:
        """Plan a trip to a city (looks its weather up first)."""
        try:
            return f"plan for {city}: " + get_weather.invoke({"city": city})
        except ValueError:
            return f"plan for {city}: weather unknown"

    script = [
        AIMessage(content="", id="ai-1", tool_calls=[
            {"name": "plan", "args": {"city": "Atlantis"}, "id": "call_1"},
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_2"},
        ]),
        AIMessage(content="No weather for Atlantis; Paris is 18 C and sunny.", id="ai-2"),
    ]
    config: dict[str, Any] = {"max_concurrency": 1}
    extra: dict[str, Any] = {}
    if cut_after_tools:
        extra = {"checkpointer": InMemorySaver(), "interrupt_after": ["tools"]}
        config["configurable"] = {"thread_id": "thread-1"}
    agent = create_react_agent(
        scripted_chat_model(script), ToolNode([get_weather, plan], handle_tool_errors=True),
        **extra,
    )
    state = agent.invoke(
        {"messages": [HumanMessage(content="Plan Atlantis; weather in Paris?", id="human-1")]},
        config=config,
    )
    if cut_after_tools:  # the application, after the run
        state = agent.get_state(config).values
        get_weather.invoke({"city": "Paris"})
    else:
        with contextlib.suppress(ValueError):
            get_weather.invoke({"city": "Rome?"})
    history = messages_to_dict(state["messages"])
    for position, message in enumerate(history):
        if len(message["data"].get("id") or "") == 36:  # a uuid4 LangGraph gave it
            message["data"]["id"] = f"{message['type']}-{position}"
    # Results read from the model call's GenAI messages name no tool; those read from tool
    # spans after the last call (the cut run) do.
    unrecorded = {} if cut_after_tools else {"history_unrecorded": ["ToolMessage.name"]}
    return {"trace": tracing.otlp_json(), "history": history, **unrecorded}


@case("traceloop_langgraph_tool_retry")
def _traceloop_tool_retry() -> dict[str, Any]:
    return tool_retry_run(cut_after_tools=False)


@case("traceloop_langgraph_tool_retry_cut")
def _traceloop_tool_retry_cut() -> dict[str, Any]:
    return tool_retry_run(cut_after_tools=True)


def tool_retry_run(cut_after_tools: bool) -> dict[str, Any]:
    """Traceloop's LangChain instrumentation on a LangGraph graph whose tools node has a
    ``RetryPolicy``: the tool fails once (a ``ConnectionError``, which the policy retries),
    the node runs again and the tool succeeds. Traceloop records the call id
    (``kwargs.tool_call_id``) on both tool spans: the failed one is an earlier attempt.
    ``cut_after_tools``: the graph is interrupted after its tools node, so no model call
    follows the tools; the history is then the checkpointed state."""
    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import RetryPolicy

    tracing = Tracing()
    instrument_traceloop_langchain()
    attempts = {"made": 0}

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        attempts["made"] += 1
        if attempts["made"] == 1:
            raise ConnectionError("weather service timed out")
        return WEATHER[city]

    model = scripted_chat_model([
        AIMessage(content="", id="ai-1", tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
        ]),
        AIMessage(content="Paris: 18 C, sunny.", id="ai-2"),
    ])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node(
        "tools", ToolNode([get_weather], handle_tool_errors=False),
        retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01,
                                 retry_on=ConnectionError),
    )
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    graph.add_edge("agent", END)
    config: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if cut_after_tools:
        extra = {"checkpointer": InMemorySaver(), "interrupt_after": ["tools"]}
        config["configurable"] = {"thread_id": "thread-1"}
    compiled = graph.compile(**extra)
    state = compiled.invoke(
        {"messages": [HumanMessage(content="Paris?", id="human-1")]}, config=config
    )
    if cut_after_tools:
        state = compiled.get_state(config).values
    history = messages_to_dict(state["messages"])
    for position, message in enumerate(history):
        if len(message["data"].get("id") or "") == 36:  # a uuid4 LangGraph gave it
            message["data"]["id"] = f"{message['type']}-{position}"
    # Results read from the model call's GenAI messages name no tool; those read from tool
    # spans after the last call (the cut run) do.
    unrecorded = {} if cut_after_tools else {"history_unrecorded": ["ToolMessage.name"]}
    return {"trace": tracing.otlp_json(), "history": history, **unrecorded}


# --- Agents SDK ----------------------------------------------------------------------------

AGENT_SCRIPT = [
    response(1, [r_call(1, "transfer_to_weather_agent", {})]),
    response(2, [r_call(2, "get_weather", {"city": "Rome"})]),
    response(3, [r_said(3, "Rome is 24 C and clear.")]),
]


def agents_case(also_client: bool) -> dict[str, Any]:
    """An Agents SDK run with a handoff and a function tool, traced by OpenInference."""
    import asyncio

    import agents
    import openai
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    tracing = Tracing()
    agents.set_trace_processors([])  # nothing leaves for the OpenAI platform
    OpenAIAgentsInstrumentor().instrument()
    if also_client:
        instrument_openinference_openai()

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER.get(city, "unknown city")

    with scripted_server(AGENT_SCRIPT) as url:
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0)
        model = agents.OpenAIResponsesModel(model=MODEL, openai_client=client)
        weather = agents.Agent(
            name="Weather agent",
            instructions="You answer weather questions with get_weather.",
            tools=[get_weather],
            model=model,
        )
        triage = agents.Agent(
            name="Triage agent",
            instructions="You hand weather questions to the weather agent.",
            handoffs=[weather],
            model=model,
        )
        result = asyncio.run(agents.Runner.run(triage, "Weather in Rome?"))
    from agents.models.chatcmpl_converter import Converter

    # The application's history is the run's input list; the SDK's own converter spells it
    # as Chat Completions messages, after the instructions the last agent ran with.
    history = Converter.items_to_messages(result.to_input_list())
    system = {"role": "system", "content": result.last_agent.instructions}
    return {"trace": tracing.otlp_json(), "history": [system, *history]}


@case("openinference_agents_handoff")
def _agents() -> dict[str, Any]:
    return agents_case(also_client=False)


@case("openinference_agents_and_client")
def _agents_and_client() -> dict[str, Any]:
    return agents_case(also_client=True)


# --- LlamaIndex ----------------------------------------------------------------------------

LLAMA_INDEX_PACKAGES = ("llama-index-core", "openinference-instrumentation-llama-index")


def llama_index_case(variant: str = "agent") -> dict[str, Any]:
    """A LlamaIndex ``FunctionAgent`` (system prompt, two user turns sharing one ``Memory``, two
    parallel tool calls of which one tool raises), traced by OpenInference. The model is
    llama-index-core's ``MockFunctionCallingLLM`` answering from a script (its ``achat`` calls
    its ``chat``: two nested LLM spans per call). ``llama-index-llms-openai`` cannot be used
    here: it needs ``openai<3``, the Agents SDK ``openai>=3``.

    The history is the memory's messages (``memory.aget_all()``) after the system prompt, which
    ``FunctionAgent`` puts before them in every model call and never stores; a ``ChatMessage``
    has no error flag, so the call ids whose ``ToolCallResult`` event said ``is_error`` (the
    application's own events) are stored beside it as ``history_errors``.

    ``variant``: ``agent`` as above; ``context_tool``: one turn, the two parallel calls of a
    tool that takes the workflow's injected ``Context`` (one raises); ``output_cls``: one turn
    of one call, with ``FunctionAgent(output_cls=...)``, whose ``StructuredLLM`` then asks the
    model for the answer as the schema's tool call (``apredict_and_call`` spans)."""
    import asyncio

    # This script's folder holds llama_index.py (the LlamaIndex generator): off the import
    # path, so that ``import llama_index`` finds the package.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from pydantic import BaseModel

    tracing = Tracing()
    LlamaIndexInstrumentor().instrument()

    def call(call_id: str, name: str, **kwargs: Any) -> ToolCallBlock:
        return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)

    script = [
        ChatMessage(role="assistant", blocks=[
            call("call_1", "get_weather", city="Paris"),
            call("call_2", "convert_currency", amount=10, currency="JPY"),
        ]),
        ChatMessage(role="assistant", content="Paris is 18 C and sunny; I cannot convert to JPY."),
        ChatMessage(role="assistant", content="You are welcome."),
    ]
    turns = ["Weather in Paris, and 10 EUR in JPY?", "Thanks!"]
    if variant == "context_tool":
        script = [
            ChatMessage(role="assistant", blocks=[
                call("call_1", "get_weather", city="Atlantis"),
                call("call_2", "get_weather", city="Paris"),
            ]),
            ChatMessage(role="assistant", content="Atlantis is unknown; Paris is 18 C and sunny."),
        ]
        turns = ["Weather in Atlantis and Paris?"]
    elif variant == "output_cls":
        script = [
            ChatMessage(role="assistant", blocks=[call("call_1", "get_weather", city="Paris")]),
            ChatMessage(role="assistant", content="Paris is 18 C and sunny."),
            ChatMessage(role="assistant", blocks=[call("call_9", "Answer", text="18 C, sunny")]),
        ]
        turns = ["Weather in Paris?"]

    def respond(messages: Any, **kwargs: Any) -> ChatMessage:
        return script.pop(0)

    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER.get(city, "unknown city")

    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount of euros into another currency."""
        if currency not in {"USD", "GBP"}:
            raise ValueError(f"unsupported currency {currency!r}; supported: USD, GBP")
        return f"{amount * 1.1:.2f} {currency}"

    async def get_weather_in(ctx: Context, city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ValueError(f"no such city: {city}")
        return WEATHER[city]

    # This module's annotations are text (``from __future__ import annotations``), and
    # FunctionTool finds the Context parameter to inject by its annotation's type.
    get_weather_in.__annotations__ = {"ctx": Context, "city": str, "return": str}

    class Answer(BaseModel):
        """The answer."""

        text: str

    tools: list[Any] = [get_weather, convert_currency]
    if variant == "context_tool":
        tools = [FunctionTool.from_defaults(fn=get_weather_in, name="get_weather")]
    agent = FunctionAgent(
        name="travel",
        description="Answers travel questions.",
        tools=tools,
        llm=MockFunctionCallingLLM(response_generator=respond),
        system_prompt="You are a travel assistant.",
        streaming=False,
        **({"output_cls": Answer} if variant == "output_cls" else {}),
    )
    failed: list[str] = []

    async def run() -> list[ChatMessage]:
        memory = Memory.from_defaults(session_id="golden", token_limit=1_000_000)
        for turn in turns:
            handler = agent.run(user_msg=turn, memory=memory)
            async for event in handler.stream_events():
                if isinstance(event, ToolCallResult) and event.tool_output.is_error:
                    failed.append(event.tool_id)
            await handler
        messages: list[ChatMessage] = await memory.aget_all()
        return messages

    stored = asyncio.run(run())
    system = ChatMessage(role="system", content=agent.system_prompt)
    return {
        "trace": tracing.otlp_json(),
        "history": [m.model_dump(mode="json") for m in [system, *stored]],
        "history_errors": failed,
    }


@case("openinference_llama_index_agent")
def _llama_index() -> dict[str, Any]:
    return llama_index_case()


@case(
    "openinference_llama_index_hidden",
    OPENINFERENCE_HIDE_INPUTS="true",
    OPENINFERENCE_HIDE_OUTPUTS="true",
)
def _llama_index_hidden() -> dict[str, Any]:
    return llama_index_case()


@case("openinference_llama_index_context_tool")
def _llama_index_context_tool() -> dict[str, Any]:
    return llama_index_case("context_tool")


@case("openinference_llama_index_output_cls")
def _llama_index_output_cls() -> dict[str, Any]:
    return llama_index_case("output_cls")


@case("openinference_llama_index_predict")
def _openinference_llama_index_predict() -> dict[str, Any]:
    """``LLM.apredict`` and ``LLM.predict`` with a chat prompt template on a chat model
    (llama-index-core's ``MockFunctionCallingLLM(is_chat_model=True)``): each call's
    ``apredict`` / ``predict`` span only wraps the ``achat`` / ``chat`` span below it. The
    application keeps its own history: the template's messages, then each answer and the
    next question."""
    import asyncio

    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.prompts import ChatPromptTemplate
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    tracing = Tracing()
    LlamaIndexInstrumentor().instrument()
    answers = ["Paris is 18 C and sunny.", "Rome is 24 C and clear."]

    def respond(messages: Any, **kwargs: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content=answers.pop(0))

    llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
    first = ChatPromptTemplate.from_messages([
        ("system", "You are a travel assistant."), ("user", "Weather in {city}?"),
    ])
    history = first.format_messages(city="Paris")
    said = asyncio.run(llm.apredict(first, city="Paris"))
    history.append(ChatMessage(role="assistant", content=said))
    history.append(ChatMessage(role="user", content="And in Rome?"))
    said = llm.predict(ChatPromptTemplate(message_templates=history))
    history.append(ChatMessage(role="assistant", content=said))
    return {"trace": tracing.otlp_json(), "history": [m.model_dump(mode="json") for m in history]}


# --- the child -----------------------------------------------------------------------------


def child(name: str) -> None:
    _, run = CASES[name]
    result = run()
    sys.stdout.write(json.dumps(result))


def run_case(name: str) -> dict[str, Any]:
    env_extra, _ = CASES[name]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_", "TRACELOOP_", "OPENAI_"))
    }
    env.update(env_extra)
    env["OPENAI_AGENTS_DISABLE_TRACING"] = env_extra.get("OPENAI_AGENTS_DISABLE_TRACING", "0")
    done = subprocess.run(
        [sys.executable, __file__, "--case", name],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"case {name} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


VALID: dict[str, tuple[str, str, dict[str, Any]]] = {
    # case: (instrumentation, history format, to_options)
    "openinference_openai_tool_loop": ("openinference-instrumentation-openai", "openai_chat", {}),
    "openai_v2_tool_loop": ("opentelemetry-instrumentation-openai-v2", "openai_chat", {}),
    "traceloop_openai_tool_loop": ("opentelemetry-instrumentation-openai", "openai_chat", {}),
    "openinference_openai_responses_tool_loop": (
        "openinference-instrumentation-openai", "openai_chat", {}
    ),
    "openinference_langgraph_agent": ("openinference-instrumentation-langchain", "langchain", {}),
    "openinference_agents_handoff": (
        "openinference-instrumentation-openai-agents", "openai_chat", {}
    ),
    "openinference_agents_and_client": (
        "openinference-instrumentation-openai-agents + openinference-instrumentation-openai",
        "openai_chat",
        {},
    ),
    "openinference_llama_index_agent": (
        "openinference-instrumentation-llama-index", "llama_index", {}
    ),
    "traceloop_langgraph_agent": ("opentelemetry-instrumentation-langchain", "langchain", {}),
    "traceloop_langgraph_tool_for_no_call": (
        "opentelemetry-instrumentation-langchain", "langchain", {}
    ),
    "traceloop_langgraph_tool_after_cut": (
        "opentelemetry-instrumentation-langchain", "langchain", {}
    ),
    "openinference_llama_index_context_tool": (
        "openinference-instrumentation-llama-index", "llama_index", {}
    ),
    "openinference_llama_index_predict": (
        "openinference-instrumentation-llama-index", "llama_index", {}
    ),
    "traceloop_langgraph_tool_retry": ("opentelemetry-instrumentation-langchain", "langchain", {}),
    "traceloop_langgraph_tool_retry_cut": (
        "opentelemetry-instrumentation-langchain", "langchain", {}
    ),
}

# case: (the run it comes from, code, index, what is edited by hand or None)
INVALID: dict[str, tuple[str, str, int | None, str | None]] = {
    "content_capture_off": ("openai_v2_content_off", "content_not_captured", 0, None),
    "content_in_log_events": ("traceloop_events_mode", "content_not_captured", 0, None),
    "attribute_limit": ("openinference_attribute_limit", "truncated_trace", 1, None),
    "redacted_text": ("openinference_hidden_text", "content_not_captured", 0, None),
    "two_conversations": ("openai_v2_two_conversations", "ambiguous_trace", None, None),
    "base64_image_input_dropped": ("traceloop_base64_image", "truncated_trace", 0, None),
    "responses_item_ids": ("traceloop_responses_tool_loop", "orphan_tool_result", 1, None),
    "index_gap": ("openinference_openai_tool_loop", "truncated_trace", 1, "index_gap"),
    "empty_parts": ("openai_v2_tool_loop", "truncated_trace", 1, "empty_parts"),
    "nested_calls_disagree": (
        "openinference_agents_and_client", "conflicting_fields", 2, "nested_disagree"
    ),
    "llama_index_content_off": (
        "openinference_llama_index_hidden", "content_not_captured", 3, None
    ),
    "failed_tool_after_last_call": (
        "openinference_langgraph_cut_after_tools", "truncated_trace", 8, None
    ),
    "llama_index_output_cls": (
        "openinference_llama_index_output_cls", "ambiguous_trace", None, None
    ),
}


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def edited(document: dict[str, Any], edit: str) -> dict[str, Any]:
    document = copy.deepcopy(document)
    second = spans(document)[1]
    if edit == "index_gap":
        # A message lost from the middle of the input, its neighbours kept.
        second["attributes"] = [
            a for a in second["attributes"] if not a["key"].startswith("llm.input_messages.1.")
        ]
    elif edit == "empty_parts":
        for attribute in second["attributes"]:
            if attribute["key"] == "gen_ai.input.messages":
                messages = json.loads(attribute["value"]["stringValue"])
                messages[1]["parts"] = []
                attribute["value"]["stringValue"] = json.dumps(messages)
    elif edit == "nested_disagree":
        # The client's span of the last call says another answer than the agent's span.
        last = [span for span in spans(document) if span["name"] == "Response"][-1]
        for attribute in last["attributes"]:
            if attribute["key"] == (
                "llm.output_messages.0.message.contents.0.message_content.text"
            ):
                attribute["value"]["stringValue"] = "Rome is 30 C."
    else:
        raise AssertionError(edit)
    return document


def write(path: Path, content: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def versions(*more: str) -> dict[str, str]:
    """The versions of the packages that made the files (and of ``more``, for one case)."""
    from importlib.metadata import version

    names = [
        "openai", "openai-agents", "langchain-core", "langgraph", "opentelemetry-sdk",
        "openinference-instrumentation-openai", "openinference-instrumentation-langchain",
        "openinference-instrumentation-openai-agents", "opentelemetry-instrumentation-openai-v2",
        "opentelemetry-util-genai", "opentelemetry-instrumentation-openai", *more,
    ]
    return {name: version(name) for name in names}


MORE_VERSIONS = {
    "openinference_llama_index_agent": LLAMA_INDEX_PACKAGES,
    "traceloop_langgraph_agent": ("opentelemetry-instrumentation-langchain",),
    "traceloop_langgraph_tool_for_no_call": ("opentelemetry-instrumentation-langchain",),
    "traceloop_langgraph_tool_after_cut": ("opentelemetry-instrumentation-langchain",),
    "openinference_llama_index_context_tool": LLAMA_INDEX_PACKAGES,
    "openinference_llama_index_predict": LLAMA_INDEX_PACKAGES,
    "traceloop_langgraph_tool_retry": ("opentelemetry-instrumentation-langchain",),
    "traceloop_langgraph_tool_retry_cut": ("opentelemetry-instrumentation-langchain",),
}
"""Packages a case's file names beside the common ones."""


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        child(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--raw":  # one case's spans and history, to look at
        print(json.dumps(run_case(sys.argv[2]), indent=1))
        return
    if len(sys.argv) >= 3 and sys.argv[1] == "--only":  # these files only, the rest untouched
        write_files(sys.argv[2:])
        return
    write_files([*VALID, "openai_v2_tool_loop_json_lines", *INVALID], fresh=True)


def write_files(wanted: list[str], fresh: bool = False) -> None:
    """Run the cases the files ``wanted`` (valid case names, ``openai_v2_tool_loop_json_lines``,
    invalid case names) come from, and write those files (``fresh``: into an emptied folder,
    once every case has run)."""
    from tracebridge import TraceError
    from tracebridge.adapters import otel

    unknown = sorted(set(wanted) - {*VALID, "openai_v2_tool_loop_json_lines", *INVALID})
    if unknown:
        raise SystemExit(f"unknown golden file(s): {', '.join(unknown)}")
    sources = {INVALID[name][0] if name in INVALID else name for name in wanted}
    sources = {"openai_v2_tool_loop" if n.endswith("_json_lines") else n for n in sources}
    runs = {name: run_case(name) for name in CASES if name in sources}
    if fresh:
        shutil.rmtree(OUT, ignore_errors=True)
    for name, (instrumentation, history_format, options) in VALID.items():
        if name not in wanted:
            continue
        run = runs[name]
        expected = otel.to_messages(run["trace"], **options)
        case = {
            "instrumentation": instrumentation,
            "versions": versions(*MORE_VERSIONS.get(name, ())),
            "trace": run["trace"],
            "to_options": options,
            "history_format": history_format,
            "history": run["history"],
            **({"history_errors": run["history_errors"]} if "history_errors" in run else {}),
            **({"history_unrecorded": run["history_unrecorded"]}
               if "history_unrecorded" in run else {}),
            "expected": [message.model_dump(mode="json") for message in expected],
        }
        write(OUT / f"{name}.json", case)
    if "openai_v2_tool_loop_json_lines" in wanted:
        # The file exporter's form: hex ids, one batch per line, as text.
        lines = hex_lines(runs["openai_v2_tool_loop"]["trace"])
        case = json.loads((OUT / "openai_v2_tool_loop.json").read_text(encoding="utf-8"))
        write(OUT / "openai_v2_tool_loop_json_lines.json", {**case, "trace": lines})
    for name, (source, code, index, edit) in INVALID.items():
        if name not in wanted:
            continue
        document = runs[source]["trace"]
        if edit is not None:
            document = edited(document, edit)
        try:
            otel.to_messages(document)
        except TraceError as error:
            if (error.code, error.index) != (code, index):
                raise AssertionError(f"{name}: expected {code} at {index}, got {error}") from None
            write(OUT / "invalid" / f"{name}.json", {
                "from": source, "edited": edit, "trace": document,
                "code": code, "index": index, "path": error.path,
            })
        else:
            raise AssertionError(f"{name} was read")


if __name__ == "__main__":
    main()
