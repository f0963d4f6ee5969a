"""The inputs of the side-by-side benchmark, written once as JSON files both sides load.

Every trace is built from one typed conversation through our adapters' public writers and
the frameworks themselves (langchain-core, llama-index-core), or taken from the golden
traces that the real frameworks produced, so the inputs follow the adapters as they change.
The LangGraph messages then get what a ChatOpenAI reply and LangGraph's ``add_messages``
give them: ids, ``response_metadata``, ``usage_metadata`` and ``additional_kwargs``, in the
shapes langchain-openai 1.x leaves them (raw calls are not kept there) or, for the second
row, 0.3 (raw calls kept in ``additional_kwargs["tool_calls"]``, which Ragas reads).
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from pathlib import Path
from typing import Any

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage
from tracebridge.messages import AnyMessage

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"


def conversation(size: int) -> list[AnyMessage]:
    """``size`` messages: a question, then steps of (tool call, result, answer, question)."""
    messages: list[AnyMessage] = [HumanMessage(content="Plan my trip to Lisbon.")]
    step = 0
    while len(messages) < size:
        call = ToolCall(name="search", args={"query": f"lisbon {step}", "limit": 5}, id=f"c{step}")
        messages += [
            AIMessage(content=f"Looking up step {step}.", tool_calls=[call]),
            ToolMessage(content=f"result {step}", tool_call_id=f"c{step}", name="search"),
            AIMessage(content=f"Step {step} is done."),
            HumanMessage(content=f"And step {step + 1}?"),
        ]
        step += 1
    messages = messages[:size]
    while isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
        messages.pop()  # never end on an unanswered call
    return messages


def chat(size: int) -> list[AnyMessage]:
    """``size`` messages of plain questions and answers (what Galtea turns hold)."""
    return [
        HumanMessage(content=f"Question {k // 2}?")
        if k % 2 == 0
        else AIMessage(content=f"Answer {k // 2}.")
        for k in range(size)
    ]


def sample_dicts(size: int) -> list[dict[str, Any]]:
    """JSON messages both ``MultiTurnSample`` models read (results pair with calls by place)."""
    out: list[dict[str, Any]] = []
    for message in conversation(size):
        if isinstance(message, HumanMessage):
            out.append({"type": "human", "content": message.content})
        elif isinstance(message, AIMessage):
            calls = [{"name": c.name, "args": c.args} for c in message.tool_calls]
            out.append({"type": "ai", "content": message.content, "tool_calls": calls})
        else:
            out.append({"type": "tool", "content": message.content})
    return out


def langgraph_dicts(size: int, openai_version: str = "1.x") -> list[dict[str, Any]]:
    """LangGraph state messages (``messages_to_dict``) as an agent on ChatOpenAI leaves them
    with langchain-openai ``openai_version`` ("1.x" or "0.3"): every message with the id
    ``add_messages`` or ChatOpenAI gives it, each reply with the metadata ChatOpenAI reads
    from a chat completion."""
    from langchain_core.messages import messages_to_dict

    from tracebridge.adapters import langchain

    ids = random.Random(size)
    objects = []
    for number, message in enumerate(langchain.from_messages(conversation(size))):
        if message.type == "ai":
            message = _chat_openai_reply(message, number, ids, openai_version)
        else:  # add_messages gives a message without an id a uuid4
            message = message.model_copy(update={"id": str(_uuid4(ids))})
        objects.append(message)
    return messages_to_dict(objects)


def _uuid4(ids: random.Random) -> uuid.UUID:
    return uuid.UUID(int=ids.getrandbits(128), version=4)


def _chat_openai_reply(message: Any, number: int, ids: random.Random, version: str) -> Any:
    """``message`` with the fields ChatOpenAI ``invoke`` sets on a reply of this version."""
    from langchain_core.messages import convert_to_openai_messages

    finish = "tool_calls" if message.tool_calls else "stop"
    metadata: dict[str, Any] = {
        "token_usage": {
            "completion_tokens": 20, "prompt_tokens": 300, "total_tokens": 320,
            "completion_tokens_details": {
                "accepted_prediction_tokens": 0, "audio_tokens": 0, "reasoning_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
            "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 0},
        },
        "model_provider": "openai",
        "model_name": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_0ba0d124f1",
        "id": f"chatcmpl-{number:06d}",
        "service_tier": "default",
        "finish_reason": finish,
        "logprobs": None,
    }
    kwargs: dict[str, Any] = {"refusal": None}
    run_id = f"lc_run--{_uuid4(ids)}-0"
    if version == "0.3":
        del metadata["model_provider"]  # 1.0 added it, and the "lc_run-" id prefix
        run_id = run_id.replace("lc_run--", "run-")
        if message.tool_calls:
            kwargs = {"tool_calls": convert_to_openai_messages(message)["tool_calls"], **kwargs}
    elif version != "1.x":
        raise ValueError(f"unknown langchain-openai version {version!r}")
    usage = {
        "input_tokens": 300, "output_tokens": 20, "total_tokens": 320,
        "input_token_details": {"audio": 0, "cache_read": 0},
        "output_token_details": {"audio": 0, "reasoning": 0},
    }
    return message.model_copy(update={
        "id": run_id, "additional_kwargs": kwargs, "response_metadata": metadata,
        "usage_metadata": usage,
    })


def repeated_golden(folder: str, size: int) -> list[dict[str, Any]]:
    """Whole copies of the golden runs in ``golden_traces/<folder>`` up to ``size`` messages,
    call ids made unique."""
    return repeated(sorted((GOLDEN / folder).glob("*.json")), size)


def repeated(paths: list[Path], size: int) -> list[dict[str, Any]]:
    """Whole copies of the golden histories until ``size`` messages, call ids made unique."""
    pieces = [json.loads(path.read_text(encoding="utf-8"))["trace"] for path in paths]
    trace: list[dict[str, Any]] = []
    copy_number = 0
    while len(trace) < size:
        for piece in pieces:
            copy_number += 1
            for message in copy.deepcopy(piece):
                for call in message.get("tool_calls") or []:
                    call["id"] = f"{call['id']}_{copy_number}"
                if "tool_call_id" in message:
                    message["tool_call_id"] = f"{message['tool_call_id']}_{copy_number}"
                trace.append(message)
    return trace


def llama_events(size: int) -> list[dict[str, Any]]:
    """The events a FunctionAgent streams for a conversation of ``size`` messages: before
    each model call an ``AgentInput`` holding the whole history, then ``AgentOutput`` (and a
    ``ToolCall`` and ``ToolCallResult`` per call). Each is ``{"event", "data"}`` with the
    event's ``model_dump(mode="json")``."""
    from llama_index.core.agent.workflow import AgentInput, AgentOutput, ToolCallResult
    from llama_index.core.agent.workflow import ToolCall as ToolCallEvent
    from llama_index.core.tools import ToolOutput, ToolSelection

    from tracebridge.adapters import llama_index

    typed = conversation(size)
    history = llama_index.from_messages(typed)
    arguments = {c.id: c.args for m in typed if isinstance(m, AIMessage) for c in m.tool_calls}
    events: list[Any] = []
    for k, (message, chat_message) in enumerate(zip(typed, history, strict=True)):
        if isinstance(message, AIMessage):
            events.append(AgentInput(input=history[:k], current_agent_name="planner"))
            selections = [
                ToolSelection(tool_id=c.id or "", tool_name=c.name, tool_kwargs=c.args)
                for c in message.tool_calls
            ]
            events.append(
                AgentOutput(
                    response=chat_message, tool_calls=selections, raw=None,
                    current_agent_name="planner",
                )
            )
            events += [
                ToolCallEvent(tool_name=s.tool_name, tool_kwargs=s.tool_kwargs, tool_id=s.tool_id)
                for s in selections
            ]
        elif isinstance(message, ToolMessage):
            output = ToolOutput(  # raw_input and raw_output as FunctionTool records them
                content=message.text, tool_name=message.name or "",
                raw_input={"args": [], "kwargs": arguments[message.tool_call_id]},
                raw_output=message.text,
            )
            events.append(
                ToolCallResult(
                    tool_name=message.name or "",
                    tool_kwargs=arguments[message.tool_call_id],
                    tool_id=message.tool_call_id or "",
                    tool_output=output, return_direct=False,
                )
            )
    return [{"event": type(e).__name__, "data": e.model_dump(mode="json")} for e in events]


def tool_calls(size: int, order: str, seed: int = 7) -> dict[str, Any]:
    """Predicted and reference calls over 5 tools with 3 arguments each.

    ``trajectory``: the agent follows the reference in order; every third call has one
    argument different, the agent makes one extra call and misses one. ``shuffled``: the
    reference is the same calls with every third changed, in random order (the worst case
    for the ordered pairing: repeated identical calls far apart, no common order).
    """
    rng = random.Random(seed)
    if order == "trajectory":
        predicted = [
            {"name": f"tool_{rng.randrange(5)}",
             "args": {"query": f"q{k}", "limit": rng.randrange(3), "exact": True}}
            for k in range(size)
        ]
    else:
        predicted = [
            {"name": f"tool_{rng.randrange(5)}",
             "args": {"query": f"q{rng.randrange(20)}", "limit": rng.randrange(3), "exact": True}}
            for _ in range(size)
        ]
    reference = [
        {"name": c["name"], "args": {**c["args"], "limit": 99} if k % 3 == 0 else c["args"]}
        for k, c in enumerate(predicted)
    ]
    if order == "trajectory":
        reference.insert(size // 2, {"name": "confirm", "args": {"id": size}})
        predicted.insert(size // 3, {"name": "think", "args": {"note": "check the dates"}})
    else:
        rng.shuffle(reference)
    return {"predicted": predicted, "reference": reference}


def write(folder: Path, name: str, data: Any) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
