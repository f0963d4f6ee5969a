"""The LangChain writer and a ``metadata["langchain"]`` it did not write.

Typed messages are checked when they are made, but their metadata may hold any JSON; the
writer reads its own namespace on the message, its parts, calls, citations and audio. A
namespace of another shape (None, a list, a number) let ``TypeError`` or ``AttributeError``
escape; now it is ``malformed_event`` at that namespace. And an ordinary edit, a detail
set on an image read from a block whose ``extras`` is None, made the writer fall; it is
written. A call edited to keep no content block of its own leaves the later calls' blocks
without their place: that refusal names the message's calls as a whole, whose blocks leave
the gap, and says which call's block has no place and which calls keep none.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import HumanMessage as LangChainHuman
from langchain_core.messages import ToolMessage as LangChainTool

from tracebridge import (
    AIMessage,
    Citation,
    HumanMessage,
    ImagePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import langchain

ASK = HumanMessage(content="q")


def _calling(metadata: dict[str, Any]) -> list[Any]:
    return [ASK, AIMessage(tool_calls=[ToolCall(name="f", id="c", metadata=metadata)]),
            ToolMessage(content="r", tool_call_id="c")]


@pytest.mark.parametrize(
    ("messages", "index", "path"),
    [
        ([HumanMessage(content="q", metadata={"langchain": None})], 0,
         "messages[0].metadata.langchain"),
        ([HumanMessage(content="q", metadata={"langchain": []})], 0,
         "messages[0].metadata.langchain"),
        ([HumanMessage(content=[TextPart(text="a", metadata={"langchain": 0})])], 0,
         "messages[0].content[0].metadata.langchain"),
        (_calling({"langchain": None}), 1, "messages[1].tool_calls[0].metadata.langchain"),
        ([ASK, AIMessage(content="a", citations=[Citation(url="u", metadata={"langchain": ""})])],
         1, "messages[1].citations[0].metadata.langchain"),
    ],
)
def test_a_namespace_that_is_not_an_object_is_malformed(
    messages: list[Any], index: int, path: str
) -> None:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.source) == (
        "malformed_event", index, path, "langchain")


def test_a_detail_set_on_an_image_read_from_a_block_without_extras_is_written() -> None:
    read = langchain.to_messages(
        [LangChainHuman(content=[{"type": "image", "url": "http://x/a.png", "extras": None}])])
    part = read[0].content[0]
    assert isinstance(part, ImagePart)
    edited = read[0].model_copy(update={"content": [part.model_copy(update={"detail": "high"})]})
    written = langchain.from_messages([edited])
    assert written[0].content == [
        {"type": "image", "url": "http://x/a.png", "extras": {"detail": "high"}}]
    again = langchain.to_messages(written)[0].content[0]
    assert isinstance(again, ImagePart)
    assert (again.url, again.detail) == ("http://x/a.png", "high")


def test_a_call_edited_to_keep_no_block_names_the_block_left_without_a_place() -> None:
    # The reply holds three function_call blocks; the second call is edited (made valid, its
    # kept block dropped with its metadata): the third block's place is past the content.
    # Neither the untouched third call nor the content is at fault, but the calls' blocks
    # together: the refusal names the calls, the block without a place and the blockless call.
    def block(k: int, arguments: str) -> dict[str, Any]:
        return {"type": "function_call", "id": "fc_0", "call_id": f"call_{k}", "name": "f",
                "arguments": arguments, "status": "completed"}

    reply = LangChainAI(
        content=[block(3, "{}"), block(4, "not json"), block(5, "not json")],
        tool_calls=[{"name": "f", "args": {}, "id": "call_3", "type": "tool_call"}],
        invalid_tool_calls=[{"type": "invalid_tool_call", "id": f"call_{k}", "name": "f",
                             "args": "not json", "error": None} for k in (4, 5)],
    )
    typed = langchain.to_messages(
        [LangChainHuman(content="go"), reply,
         *[LangChainTool(content="", tool_call_id=f"call_{k}") for k in (3, 4, 5)]])
    calls = list(typed[1].tool_calls)
    calls[1] = calls[1].model_copy(update={"args": {}, "invalid_args": None, "metadata": {}})
    edited = [typed[0], typed[1].model_copy(update={"tool_calls": calls}), *typed[2:]]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls")
    assert (
        "the block of tool_calls[2] belongs at position 2, but only 1 content element comes "
        "before it, and tool_calls[1] keeps no block: content elements before it were taken "
        "out, or a call lost its block"
    ) in str(caught.value)


def test_a_namespace_on_a_later_result_of_one_human_message_is_named_there() -> None:
    # Anthropic's tool results come back in one human message, written from several typed
    # results at once: the malformed namespace is on the second, not on the first
    both = [{"name": "f", "args": {}, "id": f"c{k}", "type": "tool_call"} for k in (1, 2)]
    trace = [
        LangChainHuman(content="go"),
        LangChainAI(content=[{"type": "tool_use", "id": f"c{k}", "name": "f", "input": {}}
                             for k in (1, 2)], tool_calls=both),
        LangChainHuman(content=[
            {"type": "tool_result", "tool_use_id": "c1", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "c2",
             "content": [{"type": "text", "text": "fine"}]}]),
    ]
    typed = langchain.to_messages(trace)
    assert [m.type for m in typed] == ["human", "ai", "tool", "tool"]
    assert langchain.from_messages(typed) == trace
    broken = typed[3].model_copy(
        update={"content": [TextPart(text="fine", metadata={"langchain": 5})]})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([*typed[:3], broken])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 3, "messages[3].content[0].metadata.langchain")
