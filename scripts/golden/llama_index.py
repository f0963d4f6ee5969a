"""Write ``golden_traces/llama_index/``: real FunctionAgent and AgentWorkflow runs.

Each case runs llama-index-core's own agents with its ``MockFunctionCallingLLM``, whose
response generator is a script of assistant ``ChatMessage``s (tool calls as
``ToolCallBlock``s with fixed ids), and a ``Memory`` passed to every ``run`` so that turns
share their history. A file stores both views of the run:

* ``trace``: the memory's history (``memory.aget_all()``), each ``model_dump(mode="json")``;
* ``events``: everything ``handler.stream_events()`` yielded, through ``dump_events``;
* ``expected`` / ``expected_events``: what ``to_messages`` / ``events_to_messages`` give;
* ``events_agree_with_trace``: whether ``strip_event_extras(expected_events) == expected``
  (false only where the framework itself writes something else to memory, with ``why``).

Invalid cases are real traces with one thing broken, and the ``{code, index}`` expected.

The scripted model answers the way LlamaIndex's OpenAI integration stores answers: a refusal
in ``additional_kwargs["refusal"]`` (``from_openai_message_dict``), a spoken reply as
``reference_audio_id`` with its data in an mp3 ``AudioBlock`` (``OpenAI.chat``). Histories
given to a run (``chat_history``) are built with llama-index-core's own ``ChatMessage``.
Legacy ``additional_kwargs["images"]`` cannot be recorded: ``Memory`` stores a message's dump
and rebuilds it, and llama-index-core itself fails on the rebuilt ``images`` (its validator
calls ``resolve_image`` on each dict), so no run keeps them.

Deterministic: call ids are fixed in the script, the memory's session id is fixed, and
nothing else in the stored dumps carries an id or a time but one wall-clock field: a
``WorkflowFailedEvent``'s ``elapsed_seconds`` (how long the failing step ran), which the
generator writes as ``0.0`` in the dumped events (``fixed_clock``; the case's description
says so). Re-run with
``.venv/bin/python scripts/golden/llama_index.py``; it rewrites the folder.
"""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# This file is named like the framework: keep its folder off the import path so that
# ``import llama_index`` finds the package, not this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import (  # noqa: E402
    AudioBlock,
    ImageBlock,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms import ChatMessage  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from tracebridge.adapters import llama_index  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: golden_errors
from golden_errors import error_of as raised  # noqa: E402

ROOT = Path(__file__).resolve().parents[2] / "golden_traces" / "llama_index"

# A 1x1 transparent PNG, base64: the image input of the second turn.
PIXEL_PNG = (
    b"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
# The first bytes of a WAV file, base64: a sound clip input, and a spoken reply.
WAV_HEADER = b"UklGRiQAAABXQVZF"


def call(call_id: str, name: str, **kwargs: Any) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)


def say(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def calls(*blocks: ToolCallBlock) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=list(blocks))


def scripted_llm(script: Sequence[ChatMessage | Exception]) -> MockFunctionCallingLLM:
    """A mock LLM that answers each chat with the next scripted message, or raises the next
    scripted exception (a model call that failed)."""
    remaining = list(script)

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        answer = remaining.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return MockFunctionCallingLLM(response_generator=respond)


# --- tools --------------------------------------------------------------------------------


# Parallel calls run as concurrent workflow steps. The tools are coroutines that pause for
# different times so that both calls have started (ToolCall events) before either ends, and
# ``add`` always ends first: the stored event order is then the same on every run.


async def add(a: int, b: int) -> int:
    """Add two integers."""
    await asyncio.sleep(0.05)
    return a + b


async def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    await asyncio.sleep(0.2)
    return a * b


def describe_image(detail: str) -> str:
    """Describe the last image the user sent."""
    raise RuntimeError("image service unavailable")


def lookup_order(order_id: str) -> str:
    """Look an order up; the answer goes straight to the user."""
    return f"Order {order_id} shipped on Monday."


ORDER_TOOL = FunctionTool.from_defaults(fn=lookup_order, return_direct=True)


# --- running ------------------------------------------------------------------------------


async def run_turns(
    workflow: Any, turns: list[Any], chat_history: list[ChatMessage] | None = None,
    failing: frozenset[int] = frozenset(),
) -> tuple[list[ChatMessage], list[Any]]:
    """Every event of each turn's run, all runs sharing one memory, and the memory's history
    after the last. The runs of the turns in ``failing`` must fail (a ``ConnectionError``
    scripted for the model), and the next turn is run on the same memory."""
    memory = Memory.from_defaults(session_id="golden", token_limit=1_000_000)
    events: list[Any] = []
    for k, user_msg in enumerate(turns):
        extra = {"chat_history": chat_history} if chat_history and k == 0 else {}
        handler = workflow.run(user_msg=user_msg, memory=memory, **extra)
        async for event in handler.stream_events():
            events.append(copy.deepcopy(event))  # the framework mutates some events later
        if k in failing:
            await run_failed(handler, k)
        else:
            await handler
    return await memory.aget_all(), events


async def run_failed(handler: Any, k: int) -> None:
    """Await the run of turn ``k``, which must fail with the scripted ``ConnectionError``."""
    try:
        await handler
    except ConnectionError:
        return
    raise AssertionError(f"turn {k}'s run was scripted to fail, and it did not")


def fixed_clock(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dumped events with every ``WorkflowFailedEvent``'s ``elapsed_seconds`` (wall-clock
    time, the one field that differs from run to run) written as ``0.0``."""
    for event in events:
        if event["event"] == "WorkflowFailedEvent":
            event["data"]["elapsed_seconds"] = 0.0
    return events


def function_agent_two_turns() -> tuple[list[ChatMessage], list[Any]]:
    llm = scripted_llm([
        calls(call("call_add_1", "add", a=2, b=3), call("call_mul_1", "multiply", a=4, b=5)),
        say("2 + 3 = 5 and 4 * 5 = 20."),
        calls(call("call_img_1", "describe_image", detail="high")),
        say("I could not look at the picture: the image service is down."),
    ])
    agent = FunctionAgent(
        name="calculator",
        description="Does arithmetic.",
        tools=[add, multiply, describe_image],
        llm=llm,
        system_prompt="You are a careful calculator.",
        streaming=False,
    )
    image_turn = ChatMessage(role="user", blocks=[
        TextBlock(text="And what is in this picture?"),
        ImageBlock(image=PIXEL_PNG, image_mimetype="image/png"),
    ])
    return asyncio.run(run_turns(agent, ["What are 2 + 3 and 4 * 5?", image_turn]))


def multi_agent_handoff() -> tuple[list[ChatMessage], list[Any]]:
    triage_llm = scripted_llm([
        calls(call("call_handoff_1", "handoff", to_agent="math",
                   reason="The user asks for arithmetic.")),
        calls(call("call_handoff_2", "handoff", to_agent="math",
                   reason="Arithmetic again.")),
    ])
    math_llm = scripted_llm([
        calls(call("call_add_2", "add", a=20, b=22)),
        say("20 + 22 = 42."),
        calls(call("call_add_3", "add", a=1, b=1), call("call_mul_2", "multiply", a=6, b=7)),
        say("1 + 1 = 2 and 6 * 7 = 42."),
    ])
    triage = FunctionAgent(name="triage", description="Routes requests.", llm=triage_llm,
                           system_prompt="Route every request.", can_handoff_to=["math"])
    math = FunctionAgent(name="math", description="Does arithmetic.", llm=math_llm,
                         tools=[add, multiply], system_prompt="Compute exactly.",
                         can_handoff_to=[])
    workflow = AgentWorkflow(agents=[triage, math], root_agent="triage")
    return asyncio.run(run_turns(workflow, ["What is 20 + 22?", "And 1 + 1, and 6 * 7?"]))


def return_direct_tool() -> tuple[list[ChatMessage], list[Any]]:
    llm = scripted_llm([calls(call("call_order_1", "lookup_order", order_id="A-17"))])
    agent = FunctionAgent(tools=[ORDER_TOOL], llm=llm, system_prompt="Help with orders.",
                          streaming=False)
    return asyncio.run(run_turns(agent, ["Where is order A-17?"]))


def history_ends_with_tool_result() -> tuple[list[ChatMessage], list[Any]]:
    """A run resumed from a history cut right after a tool result: the new user message
    follows the tool result directly."""
    history = [
        ChatMessage(role="user", content="What is 1 + 2?"),
        calls(call("call_add_0", "add", a=1, b=2)),
        ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "call_add_0"}),
    ]
    llm = scripted_llm([say("1 + 2 = 3, and 3 + 3 = 6.")])
    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="Add numbers.", streaming=False)
    return asyncio.run(run_turns(agent, ["Now add 3 to that."], chat_history=history))


def developer_prompt_and_media() -> tuple[list[ChatMessage], list[Any]]:
    """A developer message in the history; an image by URL with detail, and a clip."""
    history = [ChatMessage(role="developer", content="Answer in French.")]
    turn = ChatMessage(role="user", blocks=[
        TextBlock(text="What is in the picture and the clip?"),
        ImageBlock(url="https://example.com/skyline.png", detail="high"),
        AudioBlock(audio=WAV_HEADER, format="wav"),
    ])
    llm = scripted_llm([say("Une image vide, et le début d'un fichier WAV.")])
    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="You describe media.",
                          streaming=False)
    return asyncio.run(run_turns(agent, [turn], chat_history=history))


def refusal_and_audio_reply() -> tuple[list[ChatMessage], list[Any]]:
    llm = scripted_llm([
        ChatMessage(role="assistant", blocks=[],
                    additional_kwargs={"refusal": "I can't help with picking locks."}),
        ChatMessage(role="assistant", blocks=[AudioBlock(audio=WAV_HEADER, format="mp3")],
                    additional_kwargs={"reference_audio_id": "audio_golden_1"}),
    ])
    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="Be safe.", streaming=False)
    return asyncio.run(run_turns(agent, ["How do I pick my neighbour's lock?",
                                         "Then say hello out loud."]))


def legacy_function_call_history() -> tuple[list[ChatMessage], list[Any]]:
    """A history in OpenAI's deprecated function calling, as ``from_openai_message_dicts``
    keeps it (``function_call`` in the kwargs, a ``function`` message), then a new turn."""
    history = [
        ChatMessage(role="user", content="Weather in Rome?"),
        ChatMessage(role="assistant", content=None, additional_kwargs={
            "function_call": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}),
        ChatMessage(role="function", content="24 C, clear",
                    additional_kwargs={"name": "get_weather"}),
        ChatMessage(role="assistant", content="It is 24 C and clear in Rome."),
    ]
    llm = scripted_llm([say("I can only look up the weather in Rome for now.")])
    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="Weather.", streaming=False)
    return asyncio.run(run_turns(agent, ["And in Paris?"], chat_history=history))


def structured_output() -> tuple[list[ChatMessage], list[Any]]:
    """A FunctionAgent with a structured output function: the structured response is
    streamed (AgentStreamStructuredOutput) after the final output, whose own field is set
    only after it was streamed."""
    llm = scripted_llm([calls(call("call_add_9", "add", a=40, b=2)), say("40 + 2 = 42.")])
    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="Add, then report.",
                          streaming=False,
                          structured_output_fn=lambda messages: {"sum": 42, "terms": [40, 2]})
    return asyncio.run(run_turns(agent, ["What is 40 + 2?"]))


def failed_run_then_retry() -> tuple[list[ChatMessage], list[Any]]:
    """A run whose model call fails after a tool round (its log ends with the
    WorkflowFailedEvent), then the user's retry on the same memory."""
    llm = scripted_llm([
        calls(call("call_add_7", "add", a=1, b=2)),
        ConnectionError("connection reset by peer"),
        say("1 + 2 = 3."),
    ])
    agent = FunctionAgent(name="calculator", tools=[add], llm=llm,
                          system_prompt="You are a careful calculator.", streaming=False)
    return asyncio.run(run_turns(agent, ["What is 1 + 2?", "Please try again."],
                                 failing=frozenset({0})))


CASES: dict[str, tuple[str, Callable[[], tuple[list[ChatMessage], list[Any]]], str | None]] = {
    "function_agent_two_turns": (
        "FunctionAgent, two user turns: parallel calls, then an image input and a tool that "
        "raises (is_error in the events; memory has no error flag).",
        function_agent_two_turns,
        None,
    ),
    "multi_agent_handoff": (
        "AgentWorkflow triage -> math with the handoff tool, streaming on (AgentStream events), "
        "two user turns, parallel calls in the second.",
        multi_agent_handoff,
        None,
    ),
    "return_direct_tool": (
        "A return_direct tool ends the run with its output.",
        return_direct_tool,
        "FunctionAgent writes a copy of a return_direct tool's output to memory as an "
        "assistant message; the events keep it as the tool result's return_direct flag.",
    ),
    "history_ends_with_tool_result": (
        "chat_history ending in a tool result, then a new user message right after it.",
        history_ends_with_tool_result,
        None,
    ),
    "developer_prompt_and_media": (
        "A developer message in chat_history; a user turn with an image by URL (detail high, "
        "mimetype derived by LlamaIndex from the URL) and a WAV clip.",
        developer_prompt_and_media,
        None,
    ),
    "refusal_and_audio_reply": (
        "A refusal (additional_kwargs refusal), then a spoken reply (reference_audio_id and "
        "its mp3 AudioBlock), as LlamaIndex's OpenAI integration stores them.",
        refusal_and_audio_reply,
        None,
    ),
    "legacy_function_call_history": (
        "chat_history in OpenAI's deprecated function calling (function_call, then a function "
        "message), then a new turn.",
        legacy_function_call_history,
        None,
    ),
    "structured_output": (
        "FunctionAgent with structured_output_fn: a call, the answer, then the structured "
        "response streamed as AgentStreamStructuredOutput (kept with the answer).",
        structured_output,
        None,
    ),
    "failed_run_then_retry": (
        "FunctionAgent: the model call after a tool round raises ConnectionError, the run "
        "fails (WorkflowFailedEvent, kept with the tool result as run_ended; its "
        "elapsed_seconds, wall-clock time, written as 0.0 by the generator), then the user "
        "retries on the same memory.",
        failed_run_then_retry,
        "A run that ended early did not save its replies and tool results to memory "
        "(FunctionAgent saves them when a run finishes): the events have the failed run's "
        "call and result, memory only its user message.",
    ),
}


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")


def typed(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def write_valid() -> dict[str, list[dict[str, Any]]]:
    traces = {}
    for name, (description, run, why) in CASES.items():
        history, events = run()
        trace = [m.model_dump(mode="json") for m in history]
        dumped = fixed_clock(llama_index.dump_events(events))
        expected = llama_index.to_messages(trace)
        expected_events = llama_index.events_to_messages(dumped)
        agree = llama_index.strip_event_extras(expected_events) == expected
        assert agree == (why is None), name
        content: dict[str, Any] = {
            "description": description,
            "trace": trace,
            "expected": typed(expected),
            "events": dumped,
            "expected_events": typed(expected_events),
            "events_agree_with_trace": agree,
        }
        if why is not None:
            content["why"] = why
        write(ROOT / f"{name}.json", content)
        traces[name] = trace
        traces[f"{name}.events"] = dumped
    return traces


def broken(trace: list[dict[str, Any]], change: Callable[[list[Any]], int]) -> tuple[Any, int]:
    copied = copy.deepcopy(trace)
    return copied, change(copied)


def error_of(trace: Any, code: str, index: int | None, key: str) -> dict[str, Any]:
    """The error reading ``trace`` (messages, or ``key`` "events") raises: the code and index
    given here, and its path."""
    read = llama_index.events_to_messages if key == "events" else llama_index.to_messages
    return raised(read, trace, code, index)


def write_invalid(traces: dict[str, list[dict[str, Any]]]) -> None:
    two_turns = traces["function_agent_two_turns"]
    handoff_events = traces["multi_agent_handoff.events"]

    def unknown_role(t: list[Any]) -> int:
        t[4]["role"] = "robot"
        return 4

    def conflicting(t: list[Any]) -> int:
        t[1]["additional_kwargs"]["tool_calls"] = [{
            "id": "call_add_1", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 4}'},
        }]
        return 1

    def orphan(t: list[Any]) -> int:
        del t[1]  # the AIMessage with the calls: its results now follow the user message
        return 1

    def unanswered(t: list[Any]) -> int:
        del t[3]
        return 1

    def malformed(t: list[Any]) -> int:
        t[1]["blocks"][0]["tool_kwargs"] = 7
        return 1

    def unknown_event(t: list[Any]) -> int:
        t.insert(3, {"event": "ApprovalRequested", "data": {"prefix": "Continue?"}})
        return 3

    def lost_result_event(t: list[Any]) -> int:
        at = next(i for i, e in enumerate(t) if e["event"] == "ToolCallResult")
        del t[at]
        opener = max(i for i, e in enumerate(t[:at]) if e["event"] == "AgentOutput")
        return opener

    invalid = {
        "unknown_role": ("trace", two_turns, unknown_role, "unknown_role"),
        "conflicting_tool_calls": ("trace", two_turns, conflicting, "conflicting_fields"),
        "orphan_tool_results": ("trace", two_turns, orphan, "orphan_tool_result"),
        "unanswered_tool_call": ("trace", two_turns, unanswered, "unanswered_tool_call"),
        "tool_kwargs_not_dict_or_text": ("trace", two_turns, malformed, "malformed_event"),
        "unknown_event_type": ("events", handoff_events, unknown_event, "unknown_role"),
        "event_stream_lost_a_result": ("events", handoff_events, lost_result_event,
                                       "unanswered_tool_call"),
    }
    (ROOT / "invalid").mkdir()
    for name, (key, source, change, code) in invalid.items():
        trace, index = broken(source, change)
        write(ROOT / "invalid" / f"{name}.json",
              {key: trace, "error": error_of(trace, code, index, key)})


def main() -> None:
    if ROOT.exists():
        shutil.rmtree(ROOT)
    ROOT.mkdir(parents=True)
    write_invalid(write_valid())


if __name__ == "__main__":
    main()
