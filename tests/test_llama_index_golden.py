"""Golden LlamaIndex traces (real FunctionAgent / AgentWorkflow runs) and the two views of a run.

Every ``golden_traces/llama_index/*.json`` holds a memory history (``trace``) and the event
stream of the same run (``events``); every ``invalid/*.json`` a broken one and its error.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter
from workflows.context.serializers import JsonSerializer

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    ImagePart,
    Message,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden_traces" / "llama_index"
VALID = sorted(GOLDEN.glob("*.json"))
INVALID = sorted((GOLDEN / "invalid").glob("*.json"))
MESSAGES = TypeAdapter(list[Message])


def load(path: Path) -> dict[str, Any]:
    content: dict[str, Any] = json.loads(path.read_text())
    return content


def generator() -> ModuleType:
    """``scripts/golden/llama_index.py``, loaded under a name that does not hide the package."""
    spec = importlib.util.spec_from_file_location(
        "golden_llama_index", ROOT / "scripts" / "golden" / "llama_index.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_folder_has_the_cases_the_issue_asks_for() -> None:
    assert [p.stem for p in VALID] == [
        "developer_prompt_and_media",
        "failed_run_then_retry",
        "function_agent_two_turns",
        "history_ends_with_tool_result",
        "legacy_function_call_history",
        "multi_agent_handoff",
        "refusal_and_audio_reply",
        "return_direct_tool",
        "structured_output",
    ]
    assert len(INVALID) == 7


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_history_reads_as_expected(path: Path) -> None:
    case = load(path)
    assert llama_index.to_messages(case["trace"]) == MESSAGES.validate_python(case["expected"])


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_events_read_as_expected(path: Path) -> None:
    case = load(path)
    expected = MESSAGES.validate_python(case["expected_events"])
    assert llama_index.events_to_messages(case["events"]) == expected


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_history_lossless_roundtrip(path: Path) -> None:
    trace = load(path)["trace"]
    back = llama_index.from_messages(llama_index.to_messages(trace))
    assert [m.model_dump(mode="json") for m in back] == trace


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_events_and_history_agree_after_removing_event_extras(path: Path) -> None:
    case = load(path)
    from_events = llama_index.strip_event_extras(llama_index.events_to_messages(case["events"]))
    agree = from_events == llama_index.to_messages(case["trace"])
    assert agree == case["events_agree_with_trace"]
    assert ("why" in case) == (not agree)


def test_return_direct_output_stays_a_tool_result_in_the_events() -> None:
    case = load(GOLDEN / "return_direct_tool.json")
    from_events = llama_index.events_to_messages(case["events"])
    from_memory = llama_index.to_messages(case["trace"])
    assert [m.type for m in from_events] == ["system", "human", "ai", "tool"]
    assert from_events[-1].metadata == {"llama_index": {"event": {"return_direct": True}}}
    # Memory holds the framework's assistant copy of the output, linked to the call.
    assert [m.type for m in from_memory] == ["human", "ai", "tool", "ai"]
    assert from_memory[-1].metadata == {
        "llama_index": {"additional_kwargs": {"tool_call_id": "call_order_1"}}
    }
    assert llama_index.strip_event_extras(from_events) == from_memory[:-1]


def test_golden_image_input_keeps_base64_and_mimetype() -> None:
    case = load(GOLDEN / "function_agent_two_turns.json")
    image = llama_index.to_messages(case["trace"])[5].content[1]  # type: ignore[index]
    module = generator()
    assert (image.type, image.data, image.mime_type) == (
        "image",
        module.PIXEL_PNG.decode(),
        "image/png",
    )


def test_golden_failing_tool_is_an_error_only_in_the_events() -> None:
    case = load(GOLDEN / "function_agent_two_turns.json")
    failed = llama_index.events_to_messages(case["events"])[8]
    assert (failed.type, failed.name, failed.is_error, failed.content) == (  # type: ignore[union-attr]
        "tool",
        "describe_image",
        True,
        "image service unavailable",
    )
    assert llama_index.to_messages(case["trace"])[7].is_error is False  # type: ignore[union-attr]


def test_golden_handoff_names_each_agent_and_its_prompt() -> None:
    messages = llama_index.events_to_messages(load(GOLDEN / "multi_agent_handoff.json")["events"])
    assert [(m.type, m.name) for m in messages if m.type in ("ai", "system")] == [
        ("system", None),
        ("ai", "triage"),
        ("system", None),
        ("ai", "math"),
        ("ai", "math"),
        ("system", None),
        ("ai", "triage"),
        ("system", None),
        ("ai", "math"),
        ("ai", "math"),
    ]
    assert [m.text for m in messages if m.type == "system"] == [
        "Route every request.",
        "Compute exactly.",
        "Route every request.",
        "Compute exactly.",
    ]


def test_golden_user_message_after_tool_result_is_kept_once() -> None:
    case = load(GOLDEN / "history_ends_with_tool_result.json")
    messages = llama_index.events_to_messages(case["events"])
    assert [m.type for m in messages] == ["system", "human", "ai", "tool", "human", "ai"]
    assert [m.text for m in messages if m.type == "human"] == [
        "What is 1 + 2?",
        "Now add 3 to that.",
    ]


def test_golden_developer_prompt_image_detail_and_clip() -> None:
    module = generator()
    case = load(GOLDEN / "developer_prompt_and_media.json")
    messages = llama_index.to_messages(case["trace"])
    assert messages[0] == SystemMessage(content="Answer in French.", role="developer")
    assert case["trace"][1]["blocks"][1]["image_mimetype"] == "image/png"
    assert messages[1].content == [
        TextPart(text="What is in the picture and the clip?"),
        # LlamaIndex derived image/png from the URL; the run never gave it.
        ImagePart(url="https://example.com/skyline.png", detail="high"),
        AudioPart(data=module.WAV_HEADER.decode(), mime_type="audio/wav"),
    ]
    events = llama_index.events_to_messages(case["events"])
    assert [(m.type, getattr(m, "role", None)) for m in events[:2]] == [
        ("system", "system"), ("system", "developer")
    ]


def test_golden_refusal_and_spoken_reply() -> None:
    messages = llama_index.to_messages(load(GOLDEN / "refusal_and_audio_reply.json")["trace"])
    assert messages[1] == AIMessage(content=[RefusalPart(text="I can't help with picking locks.")])
    assert messages[3] == AIMessage(
        content=[], audio=AudioReference(id="audio_golden_1", data="UklGRiQAAABXQVZF")
    )


def test_golden_legacy_function_call_pairs_by_position() -> None:
    case = load(GOLDEN / "legacy_function_call_history.json")
    messages = llama_index.to_messages(case["trace"])
    (call,) = messages[1].tool_calls  # type: ignore[union-attr]
    assert (call.name, call.args, call.id) == ("get_weather", {"city": "Rome"}, None)
    assert (messages[2].type, messages[2].name, messages[2].tool_call_id) == (  # type: ignore[union-attr]
        "tool", "get_weather", None
    )
    assert messages[1].tool_calls == [  # type: ignore[union-attr]
        ToolCall(name="get_weather", args={"city": "Rome"},
                 metadata={"llama_index": {"function_call": {"arguments": '{"city": "Rome"}'}}})
    ]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_golden_invalid_traces_are_rejected(path: Path) -> None:
    case = load(path)
    convert = llama_index.events_to_messages if "events" in case else llama_index.to_messages
    with pytest.raises(TraceError) as caught:
        convert(case["events"] if "events" in case else case["trace"])
    error = caught.value
    assert {"code": error.code, "index": error.index, "path": error.path} == case["error"]
    assert caught.value.source == "llama_index"


def test_a_live_run_seen_two_ways_agrees() -> None:
    """Objects straight from a run (not copied, not dumped): the events and the memory."""
    module = generator()

    async def run() -> tuple[list[Any], list[Any]]:
        llm = module.scripted_llm([
            module.calls(module.call("c1", "add", a=1, b=2), module.call("c2", "boom")),
            module.say("3, and boom failed."),
            module.say("Bye."),
        ])

        def boom() -> str:
            """Always fails."""
            raise ValueError("no")

        agent = module.FunctionAgent(tools=[module.add, boom], llm=llm, system_prompt="Hi.")
        memory = module.Memory.from_defaults(session_id="live", token_limit=100_000)
        events: list[Any] = []
        for text in ["1 + 2, then boom", "thanks"]:
            handler = agent.run(user_msg=text, memory=memory)
            events += [event async for event in handler.stream_events()]
            await handler
        return events, await memory.aget_all()

    events, history = asyncio.run(run())
    from_events = llama_index.events_to_messages(events)
    assert [m.type for m in from_events] == [
        "system", "human", "ai", "tool", "tool", "ai", "human", "ai"
    ]
    # The two calls run concurrently: their results come in either order.
    errors = {m.tool_call_id: m.is_error for m in from_events if isinstance(m, ToolMessage)}
    assert errors == {"c1": False, "c2": True}
    assert {m.name for m in from_events if m.type == "ai"} == {"Agent"}
    assert llama_index.strip_event_extras(from_events) == llama_index.to_messages(history)
    dumped = json.loads(json.dumps(llama_index.dump_events(events)))
    assert llama_index.events_to_messages(dumped) == from_events
    serializer = JsonSerializer()
    serialized = [json.loads(serializer.serialize(event)) for event in events]
    assert llama_index.events_to_messages(serialized) == from_events


def test_golden_structured_output_is_kept_with_the_answer() -> None:
    case = load(GOLDEN / "structured_output.json")
    kinds = [event["event"] for event in case["events"]]
    assert kinds.index("AgentStreamStructuredOutput") == kinds.index("StopEvent") - 1
    outputs = [e["data"] for e in case["events"] if e["event"] == "AgentOutput"]
    assert [o["structured_response"] for o in outputs] == [None, None]  # set after streaming
    messages = llama_index.events_to_messages(case["events"])
    answer = messages[-1]
    assert (answer.type, answer.content) == ("ai", "40 + 2 = 42.")
    assert answer.metadata == {
        "llama_index": {"event": {"structured_response": {"sum": 42, "terms": [40, 2]}}}}
