"""LlamaIndex event objects read as their dump_events JSON form: results of tools that
return text, of id-less and id'd calls finishing in any order, and a run's repeated
results of id-less calls of the same tool and arguments."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from test_llama_index_fixes_s47 import calls, run, say, scripted

from tracebridge.adapters import llama_index


async def slow(a: int) -> str:
    """Slow."""
    await asyncio.sleep(0.06)
    return str(a)


async def fast(a: int) -> str:
    """Fast."""
    return str(a)


async def mid(a: int) -> str:
    """Mid."""
    await asyncio.sleep(0.03)
    return str(a)


def shown(messages: list[Any]) -> list[tuple[str, Any, Any]]:
    """Each message's type, call id (tool messages) and content."""
    return [(m.type, getattr(m, "tool_call_id", None), m.content) for m in messages]


def both_forms(script: list[Any], tools: list[Any]) -> list[tuple[str, Any, Any]]:
    """The messages of a real run read from its event objects, which must be those of
    its dump_events JSON form."""
    events, _ = run(script, ["q"], FunctionAgent(tools=tools, llm=scripted(script)))
    objects = llama_index.events_to_messages(events)
    dumped = llama_index.events_to_messages(json.loads(json.dumps(
        llama_index.dump_events(events))))
    assert shown(objects) == shown(dumped)
    return shown(objects)


def test_idless_result_placed_before_an_id_call_text_result() -> None:
    script = [calls(ToolCallBlock(tool_name="slow", tool_kwargs={"a": 1}),
                    ToolCallBlock(tool_name="fast", tool_kwargs={"a": 2}),
                    ToolCallBlock(tool_call_id="c", tool_name="mid", tool_kwargs={"a": 3})),
              say("done")]
    assert both_forms(script, [slow, fast, mid]) == [
        ("human", None, "q"), ("ai", None, []), ("tool", None, "1"), ("tool", None, "2"),
        ("tool", "c", "3"), ("ai", None, "done")]


def test_id_call_text_result_after_a_later_idless_result() -> None:
    script = [calls(ToolCallBlock(tool_call_id="c", tool_name="mid", tool_kwargs={"a": 1}),
                    ToolCallBlock(tool_name="fast", tool_kwargs={"a": 2})),
              say("done")]
    assert both_forms(script, [mid, fast]) == [
        ("human", None, "q"), ("ai", None, []), ("tool", "c", "1"), ("tool", None, "2"),
        ("ai", None, "done")]


def test_id_call_text_result_first_then_idless() -> None:
    script = [calls(ToolCallBlock(tool_name="mid", tool_kwargs={"a": 1}),
                    ToolCallBlock(tool_call_id="c", tool_name="fast", tool_kwargs={"a": 2})),
              say("done")]
    assert both_forms(script, [mid, fast]) == [
        ("human", None, "q"), ("ai", None, []), ("tool", "c", "2"), ("tool", None, "1"),
        ("ai", None, "done")]


def test_idless_same_tool_and_arguments_one_run_with_text_that_did_not_parse() -> None:
    counter = iter(range(10))

    async def t2(b: float) -> str:
        """T2."""
        n = next(counter)
        await asyncio.sleep(0.03 if n == 0 else 0)
        return f"t2:{n}"

    script = [calls(ToolCallBlock(tool_name="t2", tool_kwargs={"b": 1.0}),
                    ToolCallBlock(tool_name="t2", tool_kwargs='{"b": 1.0')),
              say("done")]
    messages = both_forms(script, [t2])
    assert [m[0] for m in messages] == ["human", "ai", "tool", "tool", "ai"]
    assert sorted(m[2] for m in messages[2:4]) == ["t2:0", "t2:1"]
