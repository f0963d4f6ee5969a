"""Spans the otel reader does not count as model calls or tool results, from real runs
(scripts/golden/otel.py): LlamaIndex LLM methods that only wrap a model call, the workflow
``Context`` LlamaIndex injects into a tool, and Traceloop's record of a LangChain tool run
made for no tool call. Capture off is still refused as ``content_not_captured``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import otel

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
MESSAGE_KEYS = ("llm.input_messages.", "llm.output_messages.")


def load(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))
    return case


def output_cls_trace() -> dict[str, Any]:
    """The ``FunctionAgent(output_cls=...)`` run (refused without a filter: golden invalid)."""
    trace: dict[str, Any] = load("invalid/llama_index_output_cls")["trace"]
    return trace


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def refused(document: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(document, **options)
    return caught.value


def without_messages(document: dict[str, Any], indexes: set[int] | None = None) -> dict[str, Any]:
    """The document with no message attributes on the spans at ``indexes`` (all: None), as
    ``OPENINFERENCE_HIDE_INPUT_MESSAGES`` / ``_OUTPUT_MESSAGES`` leave them out."""
    document = copy.deepcopy(document)
    for k, span in enumerate(spans(document)):
        if indexes is None or k in indexes:
            span["attributes"] = [
                a for a in span["attributes"] if not a["key"].startswith(MESSAGE_KEYS)
            ]
    return document


def attribute(span: dict[str, Any], key: str) -> Any:
    return next(a["value"]["stringValue"] for a in span["attributes"] if a["key"] == key)


def set_attribute(span: dict[str, Any], key: str, text: str | None) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key]
    if text is not None:
        span["attributes"].append({"key": key, "value": {"stringValue": text}})


# --- LlamaIndex: LLM methods that wrap a model call -------------------------------------------


def test_predict_spans_wrap_the_chat_they_make() -> None:
    case = load("openinference_llama_index_predict")
    names = [span["name"] for span in spans(case["trace"])]
    assert names == [
        "MockFunctionCallingLLM.chat", "MockFunctionCallingLLM.achat",
        "MockFunctionCallingLLM.apredict", "MockFunctionCallingLLM.chat",
        "MockFunctionCallingLLM.predict",
    ]
    messages = otel.to_messages(case["trace"])
    assert [m.model_dump(mode="json") for m in messages] == case["expected"]
    assert [m.type for m in messages] == ["system", "human", "ai", "human", "ai"]
    assert [view.span_id for view in otel.calls(case["trace"])] == [
        "0000000000001002", "0000000000001005"
    ]


def test_predict_with_capture_off_is_content_not_captured_at_the_first_chat() -> None:
    case = load("openinference_llama_index_predict")
    error = refused(without_messages(case["trace"]))
    assert (error.code, error.index, error.path) == (
        "content_not_captured", 0, "resourceSpans[0].scopeSpans[0].spans[0]"
    )


def test_output_cls_wrappers_are_no_calls_and_structured_llm_is_its_own_conversation() -> None:
    trace = output_cls_trace()
    names = [span["name"] for span in spans(trace)]
    assert names[19:22] == [
        "MockFunctionCallingLLM.apredict_and_call",
        "MockFunctionCallingLLM.astructured_predict",
        "StructuredLLM.achat",
    ]
    error = refused(trace)
    assert (error.code, error.index, error.path) == ("ambiguous_trace", None, None)
    assert "span_id=000000000000100f" in str(error)  # the agent's last call
    assert "span_id=0000000000001012 (its last call, at resourceSpans[0].scopeSpans[0]." \
        "spans[21], LlamaIndex's StructuredLLM" in str(error)
    # the agent's, StructuredLLM's, and the model call below StructuredLLM's; no wrapper
    views = list(otel.calls(trace))
    assert [view.span_id for view in views] == [
        "0000000000001006", "000000000000100f", "0000000000001012", "0000000000001016"
    ]
    assert views[2].output[0].text == '{"text":"18 C, sunny"}'
    assert views[3].output[0].tool_calls[0].name == "Answer"


def test_output_cls_agent_conversation_reads_with_its_last_call() -> None:
    messages = otel.to_messages(output_cls_trace(), span_id="000000000000100f")
    assert [(m.type, m.text) for m in messages] == [
        ("system", "You are a travel assistant."), ("human", "Weather in Paris?"),
        ("ai", ""), ("tool", "18 C, sunny"), ("ai", "Paris is 18 C and sunny."),
    ]
    assert messages[2].tool_calls[0].id == "call_1"


def test_a_wrapper_with_capture_off_is_still_content_not_captured() -> None:
    error = refused(without_messages(output_cls_trace()))
    assert (error.code, error.index) == ("content_not_captured", 3)  # the first chat span
    assert error.path == "resourceSpans[0].scopeSpans[0].spans[3]"


def test_a_wrapper_with_no_messaged_call_below_it_is_read_and_refused() -> None:
    trace = output_cls_trace()
    # The model calls below apredict_and_call (chat 16, achat 17) lose their messages: the
    # first of them is refused, as with capture off; the wrapper is not skipped past.
    error = refused(without_messages(trace, {16, 17}))
    assert (error.code, error.index) == ("content_not_captured", 16)
    chat_only = without_messages(trace, {16, 17, 21})
    names = [span["name"] for span in spans(chat_only)]
    for k in (16, 17, 21):  # not LLM spans any more: apredict_and_call is the first refused
        set_attribute(spans(chat_only)[k], "openinference.span.kind", "CHAIN")
    error = refused(chat_only)
    assert (error.code, error.index, names[error.index]) == (
        "content_not_captured", 19, "MockFunctionCallingLLM.apredict_and_call"
    )


def test_a_text_completion_is_not_representable_not_content_not_captured() -> None:
    document = without_messages(load("openinference_llama_index_predict")["trace"])
    first = spans(document)[0]
    first["name"] = "MockLLM.complete"
    first["attributes"].append({"key": "llm.prompts", "value": {"arrayValue": {"values": [
        {"stringValue": "Capital of France?"}
    ]}}})
    error = refused(document)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "resourceSpans[0].scopeSpans[0].spans[0].attributes['llm.prompts']"
    )
    # masked (OPENINFERENCE_HIDE_INPUTS / _PROMPTS): capture was off
    first["attributes"][-1] = {"key": "llm.prompts", "value": {"stringValue": "__REDACTED__"}}
    assert refused(document).code == "content_not_captured"


# --- LlamaIndex: the injected workflow Context ------------------------------------------------


def test_injected_context_is_left_out_of_the_arguments() -> None:
    case = load("openinference_llama_index_context_tool")
    tool = spans(case["trace"])[7]
    assert '"ctx": "<workflows.context.context.Context object at 0x0>"' in attribute(
        tool, "input.value"
    )
    messages = otel.to_messages(case["trace"])
    assert [m.model_dump(mode="json") for m in messages] == case["expected"]
    assert [(m.tool_call_id, m.is_error) for m in messages if m.type == "tool"] == [
        ("call_1", True), ("call_2", False)
    ]


@pytest.mark.parametrize("schema", [
    None,  # no schema: nothing says ctx is not an argument
    '{"properties": {"city": {"type": "string"}, "ctx": {"type": "string"}}, "type": "object"}',
], ids=["no_schema", "declared"])
def test_a_context_key_the_schema_does_not_leave_out_is_kept(schema: str | None) -> None:
    case = load("openinference_llama_index_context_tool")
    document = copy.deepcopy(case["trace"])
    for k in (7, 10):
        set_attribute(spans(document)[k], "tool.parameters", schema)
    error = refused(document)
    # kept, the argument matches no call: the failed span (no call id) cannot be placed
    assert (error.code, error.index) == ("ambiguous_trace", 7)


# --- Traceloop: a LangChain tool run made for no tool call ----------------------------------


def test_nested_and_later_tool_runs_for_no_call_are_not_placed() -> None:
    case = load("traceloop_langgraph_tool_for_no_call")
    records = [
        json.loads(attribute(span, "gen_ai.tool.call.arguments"))["kwargs"]["tool_call_id"]
        for span in spans(case["trace"]) if span["name"].startswith("execute_tool")
    ]
    assert records == [None, "call_1", "call_2", None]
    messages = otel.to_messages(case["trace"])
    assert [m.model_dump(mode="json") for m in messages] == case["expected"]
    assert [(m.tool_call_id, m.is_error) for m in messages if m.type == "tool"] == [
        ("call_1", False), ("call_2", False)
    ]


def test_a_run_after_the_last_call_for_no_call_is_no_result() -> None:
    case = load("traceloop_langgraph_tool_after_cut")
    messages = otel.to_messages(case["trace"])
    assert [m.model_dump(mode="json") for m in messages] == case["expected"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "tool"]


def test_only_a_null_call_id_in_the_record_says_no_call() -> None:
    case = load("traceloop_langgraph_tool_after_cut")
    document = copy.deepcopy(case["trace"])
    last = spans(document)[13]
    record = json.loads(attribute(last, "gen_ai.tool.call.arguments"))
    del record["kwargs"]["tool_call_id"]  # no word on the call: placed, as before
    set_attribute(last, "gen_ai.tool.call.arguments", json.dumps(record))
    error = refused(document)
    assert (error.code, error.index) == ("orphan_tool_result", 13)
