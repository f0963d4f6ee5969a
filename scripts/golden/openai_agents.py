"""Write golden_traces/openai_agents/ by running the real OpenAI Agents SDK offline.

Usage: ``python scripts/golden/openai_agents.py`` (rewrites the folder; output is deterministic).

Each case runs ``Runner.run`` on real ``Agent``s, function tools, handoffs and (for one case) a
``SQLiteSession``; the only stand-in is the model: ``ScriptModel``, a ``Model`` of our own that
answers each call with the next scripted output (``openai.types.responses`` objects with fixed
ids), so nothing random is left and nothing reaches the network (tracing export is off).

What each file records, all of it as the SDK produced it:

* ``trace``: ``result.to_input_list()`` -- the Responses input items that continue the run
  (for the session case, the session's ``get_items()``, which is the same list);
* ``input``: ``result.input``, the run's input as given to ``Runner.run``;
* ``new_items``: ``result.new_items``, each as ``RunState.to_json()`` serializes an item
  (``type`` = the item class, ``raw_item``, ``agent: {"name"}``, and the class's own fields);
* ``session_items`` (session case): ``await session.get_items()`` after the second run;
* ``final_agent``: ``result.last_agent.name``; ``handoffs``: what ``handoffs()`` lists;
* ``expected``: the adapter's typed reading of ``trace`` (no agent names: input items have none);
  ``expected_named``: its reading of ``new_items`` with ``input`` (agent names set).

``expected*`` are the adapter's output at generation time: review a diff before committing.
Invalid cases are valid traces broken on purpose, with the code and index written by hand.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import agents
from agents import Agent, RunContextWrapper, Runner, SQLiteSession, function_tool
from agents.exceptions import ModelRefusalError
from agents.items import ModelResponse, TResponseInputItem, TResponseOutputItem
from agents.models.interface import Model
from agents.result import RunResult, RunResultStreaming
from agents.run_error_handlers import RunErrorHandlerInput, RunErrorHandlerResult
from agents.run_state import RunState
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseStreamEvent,
)
from openai.types.responses.response_reasoning_item import Summary

from tracebridge.adapters import openai_agents

OUT = Path(__file__).resolve().parents[2] / "golden_traces" / "openai_agents"
MODEL = "scripted"

agents.set_tracing_disabled(True)


# --- the scripted model ---------------------------------------------------------------------


class ScriptModel(Model):
    """A ``Model`` that answers the n-th call with the n-th scripted output list.

    ``inputs`` records what the SDK sent on each call (the proof that a written history is
    what ``Runner.run`` takes: it reaches the model as given).
    """

    def __init__(self, steps: list[list[TResponseOutputItem]]) -> None:
        self.steps = [list(step) for step in steps]
        self.inputs: list[str | list[TResponseInputItem]] = []

    def _next(self, given: str | list[TResponseInputItem]) -> list[TResponseOutputItem]:
        self.inputs.append(copy.deepcopy(given))
        if not self.steps:
            raise AssertionError("the script has no answer left for this model call")
        return self.steps.pop(0)

    async def get_response(  # type: ignore[override]
        self, system_instructions: str | None, input: str | list[TResponseInputItem],
        *args: Any, **kwargs: Any,
    ) -> ModelResponse:
        return ModelResponse(output=self._next(input), usage=Usage(), response_id=None)

    async def stream_response(  # type: ignore[override]
        self, system_instructions: str | None, input: str | list[TResponseInputItem],
        *args: Any, **kwargs: Any,
    ) -> AsyncIterator[ResponseStreamEvent]:
        output = self._next(input)
        response = Response(
            id=f"resp_{len(self.inputs)}", created_at=0, model=MODEL, object="response",
            output=output, parallel_tool_calls=True, tool_choice="auto", tools=[],
        )
        yield ResponseCompletedEvent(type="response.completed", response=response,
                                     sequence_number=0)


def message(item_id: str, text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def refusal(item_id: str, text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", status="completed",
        content=[ResponseOutputRefusal(type="refusal", refusal=text)],
    )


def call(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}", call_id=call_id, type="function_call", name=name,
        arguments=arguments, status="completed",
    )


def reasoning(item_id: str, summary: str) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=item_id, type="reasoning", summary=[Summary(type="summary_text", text=summary)],
    )


# --- tools and agents -----------------------------------------------------------------------


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C, sunny", "Rome": "24 C, clear"}[city]


@function_tool
def get_time(city: str) -> str:
    """Local time in a city."""
    return {"Paris": "14:05", "Rome": "14:05"}[city]


def order_service_failed(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model is told when the order service fails: the application's own text, so
    that the run does not depend on the SDK's default (which changed in openai-agents 0.25)."""
    return "An error occurred while running the tool. Please try again."


@function_tool(failure_error_function=order_service_failed)
def lookup_order(order_id: str) -> str:
    """Status of an order."""
    raise ConnectionError(f"order service unreachable while looking up {order_id}")


@function_tool
def get_balance(account_id: str) -> str:
    """Balance of an account."""
    return f"Balance of {account_id}: 120.50 EUR"


@function_tool
def remember(fact: str) -> str:
    """Store a fact about the user."""
    return f"stored: {fact}"


def weather_agent(model: Model) -> Agent[Any]:
    return Agent(name="Weather Bot", instructions="Answer weather questions.",
                 tools=[get_weather, get_time], model=model)


def support_agents(model: Model) -> Agent[Any]:
    billing = Agent(name="Billing Agent", instructions="Answer billing questions.",
                    tools=[get_balance], model=model,
                    handoff_description="Balances and invoices.")
    return Agent(name="Front Desk", instructions="Route the user.", handoffs=[billing],
                 model=model)


# --- cases ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Finished:
    """A finished run, and what its session stored (when it had one)."""

    result: RunResult | RunResultStreaming
    session_items: list[TResponseInputItem] | None = None


@dataclasses.dataclass
class Case:
    description: str
    run: Callable[[], Awaitable[Finished]]


def recorded(finished: Finished) -> dict[str, Any]:
    """What a finished run leaves for an application to store."""
    result = finished.result
    record = {
        "trace": result.to_input_list(),
        "input": copy.deepcopy(result.input),
        # Each item as RunState.to_json() stores it (to_state() itself leaves out approvals
        # already granted, which new_items keeps).
        "new_items": [RunState._serialize_item(cast(Any, None), item) for item in result.new_items],
        "final_agent": result.last_agent.name,
    }
    if finished.session_items is not None:
        record["trace"] = record["session_items"] = finished.session_items
    return record


def tool_calling_steps() -> list[list[TResponseOutputItem]]:
    return [
        [reasoning("rs_1", "The user wants the weather; call get_weather."),
         call("call_w1", "get_weather", '{"city":"Paris"}')],
        [message("msg_w2", "It is 18 C and sunny in Paris.")],
    ]


async def tool_calling() -> Finished:
    agent = weather_agent(ScriptModel(tool_calling_steps()))
    return Finished(await Runner.run(agent, "What's the weather in Paris?"))


async def tool_calling_streamed() -> Finished:
    agent = weather_agent(ScriptModel(tool_calling_steps()))
    result = Runner.run_streamed(agent, "What's the weather in Paris?")
    async for _ in result.stream_events():
        pass
    return Finished(result)


async def parallel_tool_calls() -> Finished:
    model = ScriptModel([
        [message("msg_p1", "Checking both cities."),
         call("call_p1", "get_weather", '{"city":"Paris"}'),
         call("call_p2", "get_weather", '{"city":"Rome"}'),
         call("call_p3", "get_time", '{"city":"Rome"}')],
        [message("msg_p2", "Paris: 18 C, sunny. Rome: 24 C, clear, and it is 14:05 there.")],
    ])
    given: list[TResponseInputItem] = [
        {"role": "developer", "content": "Answer in one sentence."},
        {"role": "user", "content": "Weather in Paris and Rome, and the time in Rome?"},
    ]
    return Finished(await Runner.run(weather_agent(model), given))


async def tool_raises() -> Finished:
    model = ScriptModel([
        [call("call_o1", "lookup_order", '{"order_id":"A-17"}')],
        [message("msg_o2", "I could not reach the order service; please try again later.")],
    ])
    agent = Agent(name="Order Desk", instructions="Look up orders.", tools=[lookup_order],
                  model=model)
    return Finished(await Runner.run(agent, "Where is order A-17?"))


async def handoff() -> Finished:
    model = ScriptModel([
        [message("msg_h1", "Let me pass you to billing."),
         call("call_h1", "transfer_to_billing_agent", "{}")],
        [call("call_h2", "get_balance", '{"account_id":"ACC-77"}')],
        [message("msg_h3", "Your balance is 120.50 EUR.")],
    ])
    return Finished(await Runner.run(support_agents(model), "Balance of ACC-77?"))


def keep_the_refusal(given: RunErrorHandlerInput[Any]) -> RunErrorHandlerResult:
    """The refusal text is the final output; history keeps the model's own refusal message."""
    assert isinstance(given.error, ModelRefusalError)
    return RunErrorHandlerResult(final_output=given.error.refusal, include_in_history=False)


async def refusal_without_guardrail() -> Finished:
    model = ScriptModel([[refusal("msg_r1", "I can't help with breaking into a car.")]])
    agent = Agent(name="Helper", instructions="Be helpful and safe.", model=model)
    result = await Runner.run(agent, "How do I break into a car?",
                              error_handlers={"model_refusal": keep_the_refusal})
    return Finished(result)


async def session_resumed() -> Finished:
    model = ScriptModel([
        [call("call_s1", "remember", '{"fact":"name is Ana"}')],
        [message("msg_s2", "Nice to meet you, Ana.")],
        [message("msg_s3", "Your name is Ana.")],
    ])
    agent = Agent(name="Memory Bot", instructions="Remember the user.", tools=[remember],
                  model=model)
    with tempfile.TemporaryDirectory() as folder:
        session = SQLiteSession("conversation-1", str(Path(folder) / "history.db"))
        await Runner.run(agent, "Hi, I'm Ana.", session=session)
        # A new session object on the same file: the run resumes from what was stored.
        resumed = SQLiteSession("conversation-1", str(Path(folder) / "history.db"))
        result = await Runner.run(agent, "What's my name?", session=resumed)
        stored = await resumed.get_items()
        session.close()
        resumed.close()
    return Finished(result, stored)


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (asks for approval first)."""
    return f"deleted {path}"


def approval_steps() -> list[list[TResponseOutputItem]]:
    return [
        [message("msg_a1", "I will delete it once you approve."),
         call("call_a1", "delete_file", '{"path":"/tmp/report.txt"}')],
        [message("msg_a2", "Deleted /tmp/report.txt.")],
    ]


async def approval_pending() -> Finished:
    agent = Agent(name="File Clerk", instructions="Manage files.", tools=[delete_file],
                  model=ScriptModel(approval_steps()))
    result = await Runner.run(agent, "Delete /tmp/report.txt")
    assert [type(item).__name__ for item in result.interruptions] == ["ToolApprovalItem"]
    return Finished(result)


async def approval_granted() -> Finished:
    agent = Agent(name="File Clerk", instructions="Manage files.", tools=[delete_file],
                  model=ScriptModel(approval_steps()))
    first = await Runner.run(agent, "Delete /tmp/report.txt")
    state = first.to_state()
    state.approve(first.interruptions[0])
    return Finished(await Runner.run(agent, state))


@function_tool
def list_files() -> str:
    """Files in the working folder."""
    return "report.txt"


async def approval_after_other_call() -> Finished:
    model = ScriptModel([
        [call("call_l1", "list_files", "{}"),
         call("call_d1", "delete_file", '{"path":"/tmp/report.txt"}')],
        [message("msg_d2", "I listed the files; the deletion was not approved.")],
    ])
    agent = Agent(name="File Clerk", instructions="Manage files.",
                  tools=[list_files, delete_file], model=model)
    first = await Runner.run(agent, "List the files, then delete /tmp/report.txt")
    assert [type(item).__name__ for item in first.new_items] == [
        "ToolCallItem", "ToolCallItem", "ToolCallOutputItem", "ToolApprovalItem"]
    state = first.to_state()
    state.reject(first.interruptions[0])
    return Finished(await Runner.run(agent, state))


CASES: dict[str, Case] = {
    "tool_calling": Case(
        "Weather Bot reasons, calls get_weather and answers (Runner.run, string input).",
        tool_calling),
    "tool_calling_streamed": Case(
        "The same run through Runner.run_streamed, read after the stream is consumed.",
        tool_calling_streamed),
    "parallel_tool_calls": Case(
        "One model response with text and three calls (two tools); the input is a developer "
        "and a user message.", parallel_tool_calls),
    "tool_raises": Case(
        "The tool raises; the SDK records its default error text as the call's output.",
        tool_raises),
    "handoff": Case(
        "Front Desk hands off to Billing Agent (a function call and its output), which calls "
        "get_balance and answers.", handoff),
    "refusal": Case(
        "The model refuses (a refusal content part); no guardrail. Runner.run raises "
        "ModelRefusalError on a refusal unless a model_refusal error handler is given; this "
        "one makes the refusal text the final output and adds nothing to history, so the "
        "run's items end with the model's own refusal message.",
        refusal_without_guardrail),
    "session_resumed": Case(
        "Two runs on one SQLiteSession file, the second on a new session object: trace is the "
        "session's get_items(); new_items and input are the second run's.", session_resumed),
    "approval_pending": Case(
        "delete_file needs approval: the run stops with the call unanswered and a "
        "tool_approval_item after it (read with allow_pending). The input list is stored as "
        "input_list, not trace: it ends with an unanswered call, which Runner.run input "
        "cannot hold.", approval_pending),
    "approval_granted": Case(
        "The same run resumed from its RunState after approve(): the approval item stays in "
        "new_items, the call is answered.", approval_granted),
    "approval_after_other_call": Case(
        "One model response calls list_files, then delete_file, which needs approval: the SDK "
        "runs list_files at once, so its output comes before the tool_approval_item. The "
        "approval is rejected and the run resumed: the SDK answers the call with its "
        "rejection text, and the model answers.", approval_after_other_call),
}

TO_OPTIONS = {"approval_pending": {"allow_pending": True}}
UNWRITABLE = {"approval_pending"}
"""Cases whose input list ends with an unanswered call: ``Runner.run`` input cannot hold it
(``from_messages`` refuses it unless ``drop=["unanswered_calls"]``), so the list is stored as
``input_list`` rather than ``trace`` and the write-back laws do not apply."""


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def golden(name: str, case: Case, record: dict[str, Any]) -> dict[str, Any]:
    options = TO_OPTIONS.get(name, {})
    typed = openai_agents.to_messages(record["trace"], **options)
    named = openai_agents.to_messages(record["new_items"], input=record["input"], **options)
    content: dict[str, Any] = {"description": case.description}
    if options:
        content["to_options"] = options
    content |= record
    content["handoffs"] = [dataclasses.asdict(h) for h in openai_agents.handoffs(named)]
    content["expected"] = [m.model_dump(mode="json") for m in typed]
    content["expected_named"] = [m.model_dump(mode="json") for m in named]
    if name in UNWRITABLE:
        content = {("input_list" if key == "trace" else key): v for key, v in content.items()}
    return content


def edited(items: list[Any], edit: Callable[[list[Any]], object]) -> list[Any]:
    broken = copy.deepcopy(items)
    edit(broken)
    return broken


def invalid_cases(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Valid traces broken on purpose; code and index written by hand."""
    handoff, parallel = records["handoff"], records["parallel_tool_calls"]
    approval = records["approval_pending"]
    # handoff trace: [user, message, transfer call, handoff output, get_balance call, output,
    # message]; new_items: the same without the user message.
    return {
        "handoff_output_removed": {
            "description": "The handoff's output removed: transfer_to_billing_agent is "
            "unanswered (reported at its call item).",
            "trace": edited(handoff["trace"], lambda t: t.pop(3)),
            "error": {"code": "unanswered_tool_call", "index": 2},
        },
        "output_before_its_call": {
            "description": "get_balance's output moved before the call it answers.",
            "trace": edited(handoff["trace"], lambda t: t.insert(4, t.pop(5))),
            "error": {"code": "orphan_tool_result", "index": 4},
        },
        "duplicate_call_ids": {
            "description": "Two parallel calls with one call_id.",
            "trace": edited(parallel["trace"], lambda t: t[4].update(call_id="call_p1")),
            "error": {"code": "duplicate_tool_call_id", "index": 4},
        },
        "unknown_item_type": {
            "description": "An input item of a type the Responses API does not have.",
            "trace": edited(handoff["trace"], lambda t: t[1].update(type="agent_message")),
            "error": {"code": "unknown_role", "index": 1},
        },
        "unknown_run_item_type": {
            "description": "A RunItem dict whose type is no RunItem class of the SDK.",
            "input": handoff["input"],
            "trace": edited(handoff["new_items"], lambda t: t[0].update(type="guardrail_item")),
            "error": {"code": "unknown_role", "index": 0},
        },
        "run_item_without_agent": {
            "description": "A RunItem dict with no agent.",
            "input": handoff["input"],
            "trace": edited(handoff["new_items"], lambda t: t[3].pop("agent")),
            "error": {"code": "malformed_event", "index": 3},
        },
        "approval_before_its_call": {
            "description": "The tool_approval_item moved before the call it waits on.",
            "input": approval["input"],
            "trace": edited(approval["new_items"], lambda t: t.insert(0, t.pop(2))),
            "error": {"code": "malformed_event", "index": 0},
        },
        "approval_unanswered": {
            "description": "The interrupted run read without allow_pending: its call is "
            "unanswered.",
            "input": approval["input"],
            "trace": approval["new_items"],
            "error": {"code": "unanswered_tool_call", "index": 1},
        },
    }


def main() -> None:
    records = {name: recorded(asyncio.run(case.run())) for name, case in CASES.items()}
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "invalid").mkdir(parents=True)
    for name, case in CASES.items():
        write(OUT / f"{name}.json", golden(name, case, records[name]))
    for name, content in invalid_cases(records).items():
        write(OUT / "invalid" / f"{name}.json", content)


if __name__ == "__main__":
    sys.exit(main())
