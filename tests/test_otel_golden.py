"""Golden OpenTelemetry traces: real instrumentations on real applications
(scripts/golden/otel.py). The conversation rebuilt from the spans equals the history the
application really held; broken or untrustworthy span documents are refused exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import AIMessage, Message, ToolMessage, TraceError, transcript_hash
from tracebridge.adapters import otel
from tracebridge.registry import get_adapter

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
VALID = sorted(FOLDER.glob("*.json"))
INVALID = sorted((FOLDER / "invalid").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def history_of(case: dict[str, Any]) -> list[Message]:
    """The application's history, typed. A LlamaIndex memory cannot say two things its model
    calls (and so the spans) say: a ``ChatMessage`` has no error flag (the run's own
    ``ToolCallResult`` events name the failed calls: ``history_errors``), and a reply that only
    calls tools has no blocks, read as ``content=[]`` where a Chat Completions message without
    content reads as ``""`` (docs/adapters/llama_index.md, "No content"). What the spans do
    not record is named in ``history_unrecorded`` (Traceloop's LangChain instrumentation
    writes GenAI messages whose results name no tool: ``ToolMessage.name``)."""
    history = get_adapter(case["history_format"]).to_messages(case["history"])
    failed = set(case.get("history_errors", ()))
    unrecorded = case.get("history_unrecorded", [])
    assert set(unrecorded) <= {"ToolMessage.name"}
    typed: list[Message] = []
    for message in history:
        if isinstance(message, ToolMessage) and message.tool_call_id in failed:
            message = message.model_copy(update={"is_error": True})
        if isinstance(message, ToolMessage) and "ToolMessage.name" in unrecorded:
            message = message.model_copy(update={"name": None})
        if isinstance(message, AIMessage) and message.content == [] and message.tool_calls:
            message = message.model_copy(update={"content": ""})
        typed.append(message)
    return typed


def test_every_instrumentation_has_a_golden_trace() -> None:
    made_by = {load(path)["instrumentation"] for path in VALID}
    assert made_by == {
        "openinference-instrumentation-openai",
        "opentelemetry-instrumentation-openai-v2",
        "opentelemetry-instrumentation-openai",
        "openinference-instrumentation-langchain",
        "openinference-instrumentation-openai-agents",
        "openinference-instrumentation-openai-agents + openinference-instrumentation-openai",
        "openinference-instrumentation-llama-index",
        "opentelemetry-instrumentation-langchain",
    }


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_rebuilt_conversation_is_the_applications_history(path: Path) -> None:
    case = load(path)
    rebuilt = otel.to_messages(case["trace"], **case["to_options"])
    history = history_of(case)
    assert transcript_hash(rebuilt) == transcript_hash(history)
    assert [m.model_dump(mode="json") for m in rebuilt] == case["expected"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_untrustworthy_spans_are_refused(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        otel.to_messages(case["trace"])
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        case["code"], case["index"], case["path"], "otel"
    )


def test_the_expected_refusals_are_all_there() -> None:
    assert {path.stem: load(path)["code"] for path in INVALID} == {
        "attribute_limit": "truncated_trace",
        "base64_image_input_dropped": "truncated_trace",
        "content_capture_off": "content_not_captured",
        "content_in_log_events": "content_not_captured",
        "empty_parts": "truncated_trace",
        "failed_tool_after_last_call": "truncated_trace",
        "index_gap": "truncated_trace",
        "llama_index_content_off": "content_not_captured",
        "llama_index_output_cls": "ambiguous_trace",
        "nested_calls_disagree": "conflicting_fields",
        "redacted_text": "content_not_captured",
        "responses_item_ids": "orphan_tool_result",
        "two_conversations": "ambiguous_trace",
    }


def test_content_capture_off_names_the_switch() -> None:
    case = load(FOLDER / "invalid" / "content_capture_off.json")
    with pytest.raises(TraceError) as caught:
        otel.to_messages(case["trace"])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "content_not_captured", 0, "resourceSpans[0].scopeSpans[0].spans[0]")
    assert caught.value.detail == (
        "a model call recorded no message content: content capture was off. OpenTelemetry's "
        "instrumentations record it with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="
        "span_only (and OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), Traceloop's "
        "with TRACELOOP_TRACE_CONTENT=true and use_attributes=True (False sends it to log "
        "events), OpenInference's unless OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS "
        "(or OPENINFERENCE_HIDE_INPUT_MESSAGES / OPENINFERENCE_HIDE_OUTPUT_MESSAGES) are set"
    )


def test_ambiguity_lists_what_selects_each_conversation() -> None:
    case = load(FOLDER / "invalid" / "two_conversations.json")
    with pytest.raises(TraceError) as caught:
        otel.to_messages(case["trace"])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "ambiguous_trace", None, None)
    assert caught.value.detail == (
        "the spans hold 2 conversations (in different sessions, or whose calls are not prefixes "
        "of one another); choose one with a filter: span_id=0000000000001003 (its last call, at "
        "resourceSpans[0].scopeSpans[0].spans[1]); trace_id=0000000000000000000000000000a001; "
        "session_id=session-a | span_id=0000000000001006 (its last call, at "
        "resourceSpans[0].scopeSpans[0].spans[3]); trace_id=0000000000000000000000000000a002; "
        "session_id=session-b"
    )
    one = otel.to_messages(case["trace"], session_id="session-a")
    other = otel.to_messages(case["trace"], trace_id="0000000000000000000000000000a001")
    assert one == other
    # Both runs are the tool loop of openai_v2_tool_loop: each session is its history.
    loop = load(FOLDER / "openai_v2_tool_loop.json")
    history = get_adapter("openai_chat").to_messages(loop["history"])
    second = otel.to_messages(case["trace"], session_id="session-b")
    assert transcript_hash(second) == transcript_hash(history)


def test_a_nested_duplicate_is_dropped_once_it_agrees() -> None:
    both = load(FOLDER / "openinference_agents_and_client.json")
    agents_only = load(FOLDER / "openinference_agents_handoff.json")
    assert otel.to_messages(both["trace"]) == otel.to_messages(agents_only["trace"])
    assert len(list(otel.calls(both["trace"]))) == 3


def test_each_agent_keeps_its_own_instructions() -> None:
    case = load(FOLDER / "openinference_agents_handoff.json")
    messages = otel.to_messages(case["trace"])
    assert messages[0].text == "You answer weather questions with get_weather."
    triage_call = messages[2]
    assert triage_call.metadata["otel"]["instructions"][0]["content"] == (
        "You hand weather questions to the weather agent."
    )


def test_calls_gives_each_model_calls_own_view() -> None:
    case = load(FOLDER / "openai_v2_tool_loop.json")
    views = list(otel.calls(case["trace"]))
    assert [(len(v.input), len(v.output)) for v in views] == [(2, 1), (4, 1)]
    assert [v.span_id for v in views] == ["0000000000001001", "0000000000001002"]
    one = otel.to_messages(case["trace"], span_id="AAAAAAAAEAE=")
    assert one == [*views[0].input, *views[0].output]


def test_ids_in_hex_or_base64_and_json_lines_read_alike() -> None:
    document = load(FOLDER / "openai_v2_tool_loop.json")
    lines = load(FOLDER / "openai_v2_tool_loop_json_lines.json")
    assert isinstance(lines["trace"], str)
    assert otel.to_messages(lines["trace"]) == otel.to_messages(document["trace"])


def test_tool_error_comes_from_the_tool_span() -> None:
    case = load(FOLDER / "openinference_langgraph_agent.json")
    messages = otel.to_messages(case["trace"])
    assert [m.is_error for m in messages if m.type == "tool"] == [False, True]
