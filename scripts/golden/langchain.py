"""Write golden_traces/langchain/ by running a real LangGraph ReAct agent with a scripted model.

Usage: ``python scripts/golden/langchain.py`` (rewrites the folder; output is deterministic).

The agent is ``langgraph.prebuilt.create_react_agent`` with real ``@tool`` functions and a
``ToolNode(handle_tool_errors=True)``, so a tool that raises becomes a ``ToolMessage`` with
``status="error"``. The model is ``ScriptedChatModel``: a ``BaseChatModel`` whose
``bind_tools`` returns itself and whose replies are the next ``AIMessage`` of a script (each
with a fixed message id and fixed tool-call ids); ``_stream`` cuts a reply into the chunks a
provider would stream, one text chunk and two pieces per tool call.

Determinism: LangGraph's ``add_messages`` gives every message without an id a
``uuid4`` (user inputs and the ToolNode's results). Inputs here carry fixed ids; after each
run, every message id that is still a uuid is replaced by ``<type>-<position>`` so no random
id is left in. Nothing else is rewritten.

What is stored is ``messages_to_dict(state["messages"])`` of the final state. ``expected``
is the adapter's typed output at generation time; review a diff before committing it.
Invalid cases are real traces broken on purpose (or real stream chunks), with the code and
index written here by hand.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
    messages_to_dict,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent

from tracebridge.adapters import langchain

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: golden_errors
from golden_errors import error_of as raised

OUT = Path(__file__).resolve().parents[2] / "golden_traces" / "langchain"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers with the next message of its script."""

    script: list[AIMessage]
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.script[self.position]
        self.position += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._generate(messages).generations[0].message
        assert isinstance(reply, AIMessage)
        yield ChatGenerationChunk(message=AIMessageChunk(content=reply.content, id=reply.id))
        for k, call in enumerate(reply.tool_calls):
            arguments = json.dumps(call["args"])
            half = len(arguments) // 2
            pieces = [
                {"name": call["name"], "args": arguments[:half], "id": call["id"], "index": k},
                {"name": None, "args": arguments[half:], "id": None, "index": k},
            ]
            for piece in pieces:
                chunk = AIMessageChunk(content="", id=reply.id, tool_call_chunks=[piece])
                yield ChatGenerationChunk(message=chunk)


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return {"Paris": "18C, cloudy", "Rome": "24C, sunny"}.get(city, "unknown")


@tool
def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount of euros into another currency."""
    if currency not in {"USD", "GBP"}:
        raise ValueError(f"unsupported currency {currency!r}; supported: USD, GBP")
    return f"{amount * 1.1:.2f} {currency}"


TOOLS = [get_weather, convert_currency]


def ai(message_id: str, content: Any = "", **fields: Any) -> AIMessage:
    return AIMessage(content=content, id=message_id, **fields)


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id}


def raw_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A tool call in the raw OpenAI form providers leave in ``additional_kwargs``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def run_agent(
    script: list[AIMessage], turns: list[list[BaseMessage]], *, pause_before_tools: bool = False
) -> list[BaseMessage]:
    """Run the agent once per turn on one thread; the final state's messages, ids fixed."""
    model = ScriptedChatModel(script=script)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
        agent = create_react_agent(
            model,
            ToolNode(TOOLS, handle_tool_errors=True),
            checkpointer=InMemorySaver(),
            interrupt_before=["tools"] if pause_before_tools else None,
        )
    config = {"configurable": {"thread_id": "golden"}}
    state: dict[str, Any] = {}
    for turn in turns:
        agent.invoke({"messages": turn}, config)
        state = agent.get_state(config).values
    assert model.position == len(script), "the script was not used up"
    assert set(state) == {"messages"}, f"unexpected state keys {sorted(state)}"
    messages: list[BaseMessage] = state["messages"]
    for position, message in enumerate(messages):
        if message.id is not None and UUID.match(message.id):
            message.id = f"{message.type}-{position}"
    return messages


def parallel_tool_calls() -> list[BaseMessage]:
    script = [
        ai(
            "ai-1",
            tool_calls=[
                call("get_weather", {"city": "Paris"}, "call_paris"),
                call("get_weather", {"city": "Rome"}, "call_rome"),
            ],
        ),
        ai("ai-2", "Paris is 18C and cloudy; Rome is 24C and sunny."),
    ]
    turn = [HumanMessage("Weather in Paris and Rome?", id="human-1")]
    return run_agent(script, [turn])


def tool_error() -> list[BaseMessage]:
    script = [
        ai(
            "ai-1",
            tool_calls=[call("convert_currency", {"amount": 20, "currency": "JPY"}, "call_jpy")],
        ),
        ai(
            "ai-2",
            tool_calls=[call("convert_currency", {"amount": 20, "currency": "USD"}, "call_usd")],
        ),
        ai("ai-3", "JPY is not supported; 20 EUR is 22.00 USD."),
    ]
    turn = [HumanMessage("Convert 20 EUR to JPY, or USD if you cannot.", id="human-1")]
    return run_agent(script, [turn])


def two_user_turns() -> list[BaseMessage]:
    script = [
        ai("ai-1", tool_calls=[call("get_weather", {"city": "Paris"}, "call_1")]),
        ai("ai-2", "It is 18C and cloudy in Paris."),
        ai("ai-3", tool_calls=[call("get_weather", {"city": "Rome"}, "call_2")]),
        ai("ai-4", "Rome is warmer: 24C and sunny."),
    ]
    turns = [
        [HumanMessage("Weather in Paris?", id="human-1")],
        [HumanMessage("And Rome? Is it warmer?", id="human-2")],
    ]
    return run_agent(script, turns)


def system_prompt_in_state() -> list[BaseMessage]:
    script = [
        ai("ai-1", tool_calls=[call("get_weather", {"city": "Rome"}, "call_1")]),
        ai("ai-2", "Sunny, 24C."),
    ]
    turn = [
        SystemMessage("You are terse. Use tools for facts.", id="system-1"),
        SystemMessage(
            "Answer in English.",
            id="developer-1",
            additional_kwargs={"__openai_role__": "developer"},
        ),
        HumanMessage("Rome weather?", id="human-1"),
    ]
    return run_agent(script, [turn])


def anthropic_content_blocks() -> list[BaseMessage]:
    script = [
        ai(
            "msg_01",
            [
                {
                    "type": "thinking",
                    "thinking": "The user wants Paris weather.",
                    "signature": "EqQBCgIYAh",
                },
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
            tool_calls=[call("get_weather", {"city": "Paris"}, "toolu_01")],
            response_metadata={
                "model_name": "claude-sonnet",
                "stop_reason": "tool_use",
                "model_provider": "anthropic",
            },
            usage_metadata={"input_tokens": 120, "output_tokens": 40, "total_tokens": 160},
        ),
        ai(
            "msg_02",
            [{"type": "text", "text": "18C and cloudy.", "citations": None}],
            response_metadata={
                "model_name": "claude-sonnet",
                "stop_reason": "end_turn",
                "model_provider": "anthropic",
            },
            usage_metadata={"input_tokens": 180, "output_tokens": 8, "total_tokens": 188},
        ),
    ]
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    turn = [
        HumanMessage(
            [{"type": "text", "text": "Weather where this photo was taken?"}, image], id="human-1"
        )
    ]
    return run_agent(script, [turn])


def developer_prompt() -> list[BaseMessage]:
    """The input given as OpenAI-style dicts: convert_to_messages marks the developer one."""
    script = [ai("ai-1", "Bonjour ! Il fait 18C.")]
    turn = convert_to_messages(
        [
            {"role": "developer", "content": "Answer in French.", "id": "developer-1"},
            {"role": "user", "content": "Weather?", "id": "human-1"},
        ]
    )
    return run_agent(script, [turn])


def refusal() -> list[BaseMessage]:
    """Replies as ChatOpenAI stores them: a refusal in additional_kwargs (content ""), and an
    ordinary answer with refusal None."""
    openai = {"model_name": "gpt-4o", "finish_reason": "stop", "model_provider": "openai"}
    script = [
        ai(
            "ai-1",
            "",
            additional_kwargs={"refusal": "I can't help with picking locks."},
            response_metadata=openai,
        ),
        ai(
            "ai-2",
            "Paris is 18C and cloudy.",
            additional_kwargs={"refusal": None},
            response_metadata=openai,
        ),
    ]
    turns = [
        [HumanMessage("How do I pick my neighbour's lock?", id="human-1")],
        [HumanMessage("Fine. Weather in Paris?", id="human-2")],
    ]
    return run_agent(script, turns)


def image_with_detail() -> list[BaseMessage]:
    script = [
        ai("ai-1", tool_calls=[call("get_weather", {"city": "Paris"}, "call_1")]),
        ai("ai-2", "That is Paris; it is 18C there."),
    ]
    photo = {
        "type": "image_url",
        "image_url": {"url": "https://example.com/eiffel.jpg", "detail": "low"},
    }
    turn = [HumanMessage([{"type": "text", "text": "Weather where this is?"}, photo], id="human-1")]
    return run_agent(script, [turn])


def anthropic_history() -> list[BaseMessage]:
    """An Anthropic-format history (tool_use in the reply, tool_result in the next user
    message) as convert_to_messages builds it, given to the agent, which goes on."""
    history = convert_to_messages(
        [
            {"role": "user", "content": "Weather in Paris?", "id": "human-1"},
            {
                "role": "assistant",
                "id": "msg_01",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "id": "human-2",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C, cloudy"},
                    {"type": "text", "text": "And Rome?"},
                ],
            },
        ]
    )
    script = [
        ai("ai-1", tool_calls=[call("get_weather", {"city": "Rome"}, "call_rome")]),
        ai("ai-2", "Paris is 18C and cloudy; Rome is 24C and sunny."),
    ]
    return run_agent(script, [history])


def invalid_tool_call(pause_before_tools: bool) -> list[BaseMessage]:
    script = [
        ai(
            "ai-1",
            tool_calls=[call("get_weather", {"city": "Paris"}, "call_ok")],
            invalid_tool_calls=[
                {
                    "name": "get_weather",
                    "args": '{"city": "Ro',
                    "id": "call_cut",
                    "error": "Function get_weather arguments are not valid JSON",
                }
            ],
            additional_kwargs={
                "tool_calls": [
                    raw_call("call_cut", "get_weather", '{"city": "Ro'),
                    raw_call("call_ok", "get_weather", '{"city": "Paris"}'),
                ]
            },
        ),
    ]
    if not pause_before_tools:
        script.append(ai("ai-2", "Paris is 18C. The Rome request was cut off."))
    turns = [[HumanMessage("Weather in Rome and Paris?", id="human-1")]]
    return run_agent(script, turns, pause_before_tools=pause_before_tools)


def only_invalid_tool_call() -> list[BaseMessage]:
    script = [
        ai(
            "ai-1",
            invalid_tool_calls=[
                {"name": "get_weather", "args": "city=Rome", "id": "call_bad", "error": None}
            ],
        ),
    ]
    return run_agent(script, [[HumanMessage("Weather in Rome?", id="human-1")]])


def stream_chunks() -> list[BaseMessage]:
    """Real chunks of a streamed reply (not summed), and their sum."""
    reply = ai("ai-1", "Checking.", tool_calls=[call("get_weather", {"city": "Paris"}, "call_1")])
    model = ScriptedChatModel(script=[reply, reply])
    return list(model.stream("Weather in Paris?"))


def valid_cases() -> dict[str, tuple[str, list[BaseMessage], dict[str, Any]]]:
    chunks = stream_chunks()
    summed = chunks[0]
    for chunk in chunks[1:]:
        summed = summed + chunk
    return {
        "parallel_tool_calls": (
            "Two calls in one AIMessage, answered in order.",
            parallel_tool_calls(),
            {},
        ),
        "tool_error": (
            "A tool raises; ToolNode(handle_tool_errors=True) answers status='error'.",
            tool_error(),
            {},
        ),
        "two_user_turns": ("Two invokes on one checkpointed thread.", two_user_turns(), {}),
        "system_prompt_in_state": (
            "A system and a developer message passed in the input, so kept in the state.",
            system_prompt_in_state(),
            {},
        ),
        "anthropic_content_blocks": (
            "Anthropic-style content: thinking with signature, text, tool_use; base64 image input.",
            anthropic_content_blocks(),
            {},
        ),
        "developer_prompt": (
            "A developer and a user message given as dicts; convert_to_messages marks the "
            "developer one (additional_kwargs.__openai_role__).",
            developer_prompt(),
            {},
        ),
        "refusal_in_additional_kwargs": (
            "A refusal kept as ChatOpenAI keeps it (additional_kwargs.refusal, content ''), "
            "then an answer with refusal None.",
            refusal(),
            {},
        ),
        "image_with_detail": (
            "An OpenAI image_url block with detail 'low' in the user's input.",
            image_with_detail(),
            {},
        ),
        "anthropic_history": (
            "An Anthropic-format history built by convert_to_messages (tool_use with an empty "
            "tool_calls, tool_result in a user message), continued by the agent.",
            anthropic_history(),
            {},
        ),
        "invalid_tool_call": (
            "A reply with an invalid call before a valid one (the raw provider calls give the "
            "order); the agent is paused before its tools node (interrupt_before), so both "
            "calls are pending: read with allow_pending=True.",
            invalid_tool_call(pause_before_tools=True),
            {"allow_pending": True},
        ),
        "only_invalid_tool_call": (
            "The model's only call is invalid; the agent ends with the call unanswered.",
            only_invalid_tool_call(),
            {},
        ),
        "invalid_call_never_answered": (
            "The agent runs on: ToolNode answers only the valid call, the model replies, and "
            "the invalid call stays without a result (a call whose arguments did not parse "
            "may go unanswered).",
            invalid_tool_call(pause_before_tools=False),
            {},
        ),
        "aggregated_stream_chunk": (
            "A streamed reply summed chunk by chunk (AIMessageChunk), as a complete message.",
            [HumanMessage("Weather in Paris?", id="human-1"), summed],
            {"allow_pending": True},
        ),
    }


def invalid_cases() -> dict[str, tuple[str, list[dict[str, Any]], str, int]]:
    parallel = messages_to_dict(parallel_tool_calls())
    removed = [m for k, m in enumerate(parallel) if k != 3]
    conflicting = json.loads(json.dumps(parallel))
    conflicting[1]["data"]["additional_kwargs"]["tool_calls"] = [
        raw_call("call_paris", "get_weather", '{"city": "Paris"}'),
        raw_call("call_lyon", "get_weather", '{"city": "Lyon"}'),
    ]
    anthropic = messages_to_dict(anthropic_content_blocks())
    anthropic[1]["data"]["content"][2]["id"] = "toolu_02"
    chunks = stream_chunks()
    human = messages_to_dict([HumanMessage("Weather in Paris?", id="human-1")])
    remove = json.loads(json.dumps(parallel))
    remove.insert(2, {"type": "remove", "data": {"content": "", "id": "ai-1", "type": "remove"}})
    return {
        "removed_tool_result": ("One of two results removed.", removed, "unanswered_tool_call", 1),
        "raw_tool_calls_disagree": (
            "additional_kwargs.tool_calls has no raw call for call_rome of tool_calls, and "
            "one for a call tool_calls does not have (a raw call whose id names a call but "
            "says other arguments is a stale copy LangChain left, not a disagreement).",
            conflicting,
            "conflicting_fields",
            1,
        ),
        "tool_use_block_disagrees": (
            "A tool_use content block names a call tool_calls does not have (LangChain sends "
            "it as one more call; a block whose id names a call but says other input is a "
            "stale copy LangChain left, not a disagreement).",
            anthropic,
            "conflicting_fields",
            1,
        ),
        "partial_stream_chunk": (
            "The first tool-call chunk of a stream, not summed: its arguments are cut off.",
            human + messages_to_dict([chunks[1]]),
            "streaming_chunk",
            1,
        ),
        "continuation_stream_chunk": (
            "A continuation chunk of a stream (tool call chunk without a name).",
            human + messages_to_dict([chunks[2]]),
            "streaming_chunk",
            1,
        ),
        "remove_message": ("A RemoveMessage left in the message list.", remove, "unknown_role", 2),
    }


def write(path: Path, case: dict[str, Any]) -> None:
    path.write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def error_of(trace: Any, code: str, index: int | None) -> dict[str, Any]:
    """The error reading ``trace`` raises: the code and index given here, and its path."""
    return raised(langchain.to_messages, trace, code, index)


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "invalid").mkdir(parents=True)
    for name, (description, messages, options) in valid_cases().items():
        trace = messages_to_dict(messages)
        expected = langchain.to_messages(trace, **options)
        case: dict[str, Any] = {"description": description, "trace": trace}
        if options:
            case["to_options"] = options
        case["expected"] = [m.model_dump(mode="json") for m in expected]
        write(OUT / f"{name}.json", case)
    for name, (description, trace, code, index) in invalid_cases().items():
        write(
            OUT / "invalid" / f"{name}.json",
            {"description": description, "trace": trace, "error": error_of(trace, code, index)},
        )
    print(f"wrote {len(list(OUT.rglob('*.json')))} files to {OUT}")


if __name__ == "__main__":
    main()
