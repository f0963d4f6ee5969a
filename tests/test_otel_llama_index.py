"""A LlamaIndex ``FunctionAgent`` run traced by OpenInference (``openinference-instrumentation-
llama-index``; golden_traces/otel/openinference_llama_index_agent.json, made by
scripts/golden/otel.py): its ``<class>._prepare_chat_with_tools`` spans (kind LLM, no
messages) are no model calls, its ``achat`` -> ``chat`` spans are one call, its tool spans'
``{"kwargs": ...}`` inputs are the calls' arguments; content capture off is still refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters import llama_index, otel

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
GOLDEN = json.loads((FOLDER / "openinference_llama_index_agent.json").read_text("utf-8"))
HIDDEN = json.loads((FOLDER / "invalid" / "llama_index_content_off.json").read_text("utf-8"))
PREPARE = [2, 14, 22]
"""Positions of the three ``MockFunctionCallingLLM._prepare_chat_with_tools`` spans."""
FAILED_TOOL = 10
"""Position of the ``FunctionTool.acall`` span of ``convert_currency``, which raised."""

CONVERSATION = [
    SystemMessage(content="You are a travel assistant."),
    HumanMessage(content="Weather in Paris, and 10 EUR in JPY?"),
    AIMessage(
        content="",
        tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1"),
            ToolCall(name="convert_currency", args={"amount": 10, "currency": "JPY"},
                     id="call_2"),
        ],
        metadata={"otel": {"content": "absent"}},
    ),
    ToolMessage(content="18 C, sunny", tool_call_id="call_1"),
    ToolMessage(content="unsupported currency 'JPY'; supported: USD, GBP",
                tool_call_id="call_2", is_error=True),
    AIMessage(content="Paris is 18 C and sunny; I cannot convert to JPY."),
    HumanMessage(content="Thanks!"),
    AIMessage(content="You are welcome."),
]


def trace() -> dict[str, Any]:
    return copy.deepcopy(GOLDEN["trace"])  # type: ignore[no-any-return]


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def value(span: dict[str, Any], key: str) -> Any:
    found = [a["value"] for a in span["attributes"] if a["key"] == key]
    return found[0]["stringValue"] if found else None


def refused(document: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(document)
    return caught.value.code, caught.value.index, caught.value.path


# --- the golden run ----------------------------------------------------------------------


def test_the_spans_are_what_the_rules_are_about() -> None:
    names = [span["name"] for span in spans(GOLDEN["trace"])]
    assert [names[k] for k in PREPARE] == ["MockFunctionCallingLLM._prepare_chat_with_tools"] * 3
    assert names.count("MockFunctionCallingLLM.achat") == 3
    assert names.count("MockFunctionCallingLLM.chat") == 3
    failed = spans(GOLDEN["trace"])[FAILED_TOOL]
    assert failed["name"] == "FunctionTool.acall"
    assert failed["status"]["code"] == "STATUS_CODE_ERROR"
    assert value(failed, "output.value") is None
    assert value(failed, "input.value") == '{"kwargs": {"amount": 10, "currency": "JPY"}}'


def test_the_run_reads_as_the_agents_conversation() -> None:
    assert otel.to_messages(GOLDEN["trace"]) == CONVERSATION


def test_the_run_reads_as_the_memory_holds_it() -> None:
    """The memory's messages after the system prompt FunctionAgent sends before them; a
    ChatMessage has no error flag (the run's ToolCallResult events name call_2) and a reply
    of calls alone has no blocks (content ``[]``, docs/adapters/llama_index.md)."""
    memory = llama_index.to_messages(GOLDEN["history"])
    assert GOLDEN["history_errors"] == ["call_2"]
    assert memory[2].content == []
    assert [m.is_error for m in memory if isinstance(m, ToolMessage)] == [False, False]
    said = [
        m.model_copy(update={"is_error": True}) if m.type == "tool" and m.tool_call_id == "call_2"
        else m.model_copy(update={"content": ""}) if m.type == "ai" and m.content == []
        else m
        for m in memory
    ]
    assert transcript_hash(otel.to_messages(GOLDEN["trace"])) == transcript_hash(said)


def test_the_failed_tools_result_is_the_error_text_llama_index_sent_the_model() -> None:
    """The tool span recorded no output; the next model call's input holds the text the
    memory holds, and the span's ERROR status makes it an error."""
    messages = otel.to_messages(GOLDEN["trace"])
    memory = llama_index.to_messages(GOLDEN["history"])
    assert messages[4].text == memory[4].text == "unsupported currency 'JPY'; supported: USD, GBP"
    assert messages[4].is_error


def test_three_model_calls_each_a_prefix_of_the_next() -> None:
    views = list(otel.calls(GOLDEN["trace"]))
    assert [(len(v.input), len(v.output)) for v in views] == [(2, 1), (5, 1), (7, 1)]
    achat = [spans(GOLDEN["trace"])[k]["name"] for k in (4, 16, 24)]
    assert achat == ["MockFunctionCallingLLM.achat"] * 3
    assert [v.span_id for v in views] == ["0000000000001006", "0000000000001012",
                                          "000000000000101a"]


def test_the_golden_is_written_back_whole() -> None:
    messages = otel.to_messages(GOLDEN["trace"])
    assert otel.to_messages(otel.from_messages(messages)) == messages
    for view in otel.calls(GOLDEN["trace"]):  # (a view may end with unanswered calls)
        mine = [*view.input, *view.output]
        assert otel.to_messages(otel.from_messages(mine), allow_pending=True) == mine


# --- rule: a LlamaIndex `_prepare_chat_with_tools` span is no model call ----------------------


def test_prepare_spans_add_nothing() -> None:
    document = trace()
    kept = [span for k, span in enumerate(spans(document)) if k not in PREPARE]
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = kept
    assert otel.to_messages(document) == CONVERSATION


def test_prepare_span_of_another_instrumentation_is_refused_as_uncaptured() -> None:
    document = trace()
    document["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] = "my.instrumentation"
    assert refused(document) == (
        "content_not_captured", 2, "resourceSpans[0].scopeSpans[0].spans[2]"
    )


def test_another_method_without_messages_is_refused_as_uncaptured() -> None:
    document = trace()
    spans(document)[2]["name"] = "MockFunctionCallingLLM._prepare_chat"
    assert refused(document) == (
        "content_not_captured", 2, "resourceSpans[0].scopeSpans[0].spans[2]"
    )


def test_a_chat_span_without_messages_is_refused_as_uncaptured() -> None:
    """Real spans edited by hand: the second call's chat span lost its messages."""
    document = trace()
    chat = spans(document)[15]
    assert chat["name"] == "MockFunctionCallingLLM.chat"
    chat["attributes"] = [a for a in chat["attributes"] if not a["key"].startswith("llm.")]
    assert refused(document) == (
        "content_not_captured", 15, "resourceSpans[0].scopeSpans[0].spans[15]"
    )


def test_a_prepare_span_holding_messages_is_read_as_a_call() -> None:
    """The rule is for spans that record no messages; one that does is a call like any."""
    document = trace()
    prepare = spans(document)[2]
    prepare["attributes"] += [
        {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}},
        {"key": "llm.input_messages.0.message.content",
         "value": {"stringValue": "Weather in Paris, and 10 EUR in JPY?"}},
    ]
    views = list(otel.calls(document))
    first = views[0]
    assert (first.span_id, len(first.input), len(first.output)) == ("0000000000001005", 1, 0)
    assert len(views) == 4
    assert otel.to_messages(document) == CONVERSATION


# --- content capture really off: a real run with OPENINFERENCE_HIDE_INPUTS/_OUTPUTS ----------


def test_the_hidden_run_is_refused_at_its_first_chat_span() -> None:
    assert (HIDDEN["code"], HIDDEN["index"], HIDDEN["path"]) == (
        "content_not_captured", 3, "resourceSpans[0].scopeSpans[0].spans[3]"
    )
    assert refused(HIDDEN["trace"]) == (
        "content_not_captured", 3, "resourceSpans[0].scopeSpans[0].spans[3]"
    )
    assert spans(HIDDEN["trace"])[3]["name"] == "MockFunctionCallingLLM.chat"
    with pytest.raises(TraceError, match="OPENINFERENCE_HIDE_INPUTS"):
        otel.to_messages(HIDDEN["trace"])


# --- rule: a LlamaIndex tool span's input is its bound arguments, {"kwargs": {...}} ---------


def test_the_failed_tool_span_is_placed_by_its_kwargs() -> None:
    """No call id on LlamaIndex tool spans: the failed one is placed on call_2 by tool name
    and the kwargs of its input."""
    document = trace()
    for span in spans(document):
        if span["name"] == "FunctionTool.acall" and "error" in span["status"]["code"].lower():
            span["status"] = {"code": "STATUS_CODE_OK"}
    messages = otel.to_messages(document)
    assert [m.is_error for m in messages if isinstance(m, ToolMessage)] == [False, False]


def test_bound_arguments_of_another_instrumentation_are_not_unwrapped() -> None:
    document = trace()
    document["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] = "my.instrumentation"
    for k in PREPARE:  # (else these are refused first)
        spans(document)[k]["attributes"].append(
            {"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}}
        )
        spans(document)[k]["attributes"] = [
            a for a in spans(document)[k]["attributes"]
            if a["key"] != "openinference.span.kind" or a["value"]["stringValue"] == "CHAIN"
        ]
    assert refused(document) == (
        "ambiguous_trace", FAILED_TOOL, f"resourceSpans[0].scopeSpans[0].spans[{FAILED_TOOL}]"
    )


def test_kwargs_beside_other_bound_arguments_are_not_unwrapped() -> None:
    document = trace()
    failed = spans(document)[FAILED_TOOL]
    for attribute in failed["attributes"]:
        if attribute["key"] == "input.value":
            attribute["value"]["stringValue"] = (
                '{"args": [1], "kwargs": {"amount": 10, "currency": "JPY"}}'
            )
    assert refused(document) == (
        "ambiguous_trace", FAILED_TOOL, f"resourceSpans[0].scopeSpans[0].spans[{FAILED_TOOL}]"
    )


# --- rule: a LlamaIndex tool span after the last model call is refused ------------------------


def test_a_tool_result_only_a_llama_index_tool_span_holds_is_refused() -> None:
    """Real spans cut after the first turn's tools (as a return_direct tool ends a run): the
    tool span's output.value is the ToolOutput's JSON, not the text the memory holds."""
    document = trace()
    whole = spans(document)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = whole[:12]
    assert value(whole[7], "output.value").startswith('{"blocks":[{"text":"18 C, sunny"}]')
    assert refused(document) == ("truncated_trace", 7, "resourceSpans[0].scopeSpans[0].spans[7]")
