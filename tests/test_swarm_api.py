"""swarm writes histories that Swarm can send on to the Chat Completions API, or refuses.

``Swarm.run`` sends its history to ``chat.completions.create`` as it is (``sender`` and
``tool_name`` included, which the API ignores), so a written Swarm history must pass the same
oracle as openai_chat's output (``law_kits.openai_chat.api_problems``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tracebridge import AIMessage, HumanMessage, OpaquePart, ToolCall, TraceError
from tracebridge.adapters import openai_chat, swarm

from law_kits.openai_chat import api_problems
from strategies import conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "swarm"


def test_what_swarm_sent_passes_the_oracle() -> None:
    paths = sorted(GOLDEN.glob("*.json"))
    assert len(paths) == 2
    for path in paths:
        trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
        assert api_problems(trace) == [], path.name


@given(messages=conversations())
def test_whatever_is_written_the_api_accepts(messages: list[Any]) -> None:
    try:
        written = swarm.from_messages(messages, drop=openai_chat.DROPPABLE)
    except TraceError as error:
        code = error.code
    else:
        assert api_problems(written) == []
        return
    assert code == "not_representable"


def test_an_unanswered_call_is_refused_by_name() -> None:
    messages = [
        HumanMessage(content="Balance?"),
        AIMessage(
            content="",
            name="Front Desk",
            tool_calls=[ToolCall(name="lookup", id="c1", invalid_args='{"account": ')],
        ),
        HumanMessage(content="Hello?"),
    ]
    with pytest.raises(TraceError) as caught:
        swarm.from_messages(messages)
    assert (caught.value.code, caught.value.source, caught.value.path) == (
        "not_representable",
        "swarm",
        "messages[1].tool_calls[0]",
    )
    assert "pass drop=['unanswered_calls']" in str(caught.value)
    assert swarm.from_messages(messages, drop=["unanswered_calls"])[1] == {
        "role": "assistant",
        "content": "",
        "sender": "Front Desk",
    }


@pytest.mark.parametrize("kind", ["json", "video", "guard_content"])
def test_a_block_from_another_format_is_refused_by_name(kind: str) -> None:
    # What LangChain's json/video/guard_content blocks arrive as.
    messages = [HumanMessage(content=[OpaquePart(kind=kind, value={"type": kind})])]
    with pytest.raises(TraceError) as caught:
        swarm.from_messages(messages)
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[0].content[0]")
    assert str(caught.value) == (
        f"swarm: messages[0].content[0]: an opaque {kind!r} block from another format is not a "
        "Chat Completions part (only parts read from a Swarm history are written back "
        "verbatim); pass drop=['opaque_parts'] to leave it out [not_representable]"
    )
    assert swarm.from_messages(messages, drop=["opaque_parts"]) == [
        {"role": "user", "content": ""}
    ]
