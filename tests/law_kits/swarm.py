"""Law kit for Swarm histories: OpenAI message dicts with ``sender`` and ``tool_name``.

Traces come in Swarm's two real shapes (see ``golden_traces/swarm/``): non-streaming, where
assistant messages carry every ``ChatCompletionMessage`` field with nulls, and streaming,
where they carry ``content`` ("" rather than null), ``sender``, ``role``, ``function_call``
and ``tool_calls`` only; plus the generic re-spellings of the openai_chat kit.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tracebridge import AIMessage, Message, ToolMessage
from tracebridge.adapters import swarm

from law_kits import LawKit
from law_kits.openai_chat import broken, expressible, respelled, rules

NON_STREAMING_NULLS = ("refusal", "annotations", "audio", "function_call", "tool_calls")


@st.composite
def agent_conversations(draw: st.DrawFn) -> list[Message]:
    """Conversations as Swarm records them: every agent turn named, every result too."""
    messages = draw(expressible(swarm.NAME))
    agents = st.sampled_from(["Front Desk", "Billing Agent", "Triage"])
    named: list[Message] = []
    calls: dict[str | None, str] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            calls.update({call.id: call.name for call in message.tool_calls})
            message = message.model_copy(update={"name": draw(agents)})
        elif isinstance(message, ToolMessage) and message.tool_call_id is not None:
            message = message.model_copy(update={"name": calls[message.tool_call_id]})
        named.append(message)
    return named


@st.composite
def swarm_shaped(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A history in the non-streaming or the streaming shape of ``Swarm.run``."""
    streaming = draw(st.booleans())
    history: list[dict[str, Any]] = swarm.from_messages(draw(agent_conversations()))
    for message in history:
        if message["role"] != "assistant" or "function_call" in message:
            continue
        if streaming:
            if message.get("content") is None:
                message["content"] = ""
            message.setdefault("function_call", None)
            message.setdefault("tool_calls", None)
        else:
            if message.get("content") == "" and message.get("tool_calls"):
                message["content"] = None
            for key in NON_STREAMING_NULLS:
                message.setdefault(key, None)
    return history


KIT = LawKit(
    traces=st.one_of(swarm_shaped(), respelled(swarm)),
    conversations=expressible(swarm.NAME),
    broken=broken(swarm),
    rules=rules(swarm),
)
