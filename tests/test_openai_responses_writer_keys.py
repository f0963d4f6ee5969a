"""The Responses writer refuses what its own reader would read back as something else.

A call item holds its input as fields beside its own (``type``, ``id`` / ``call_id``,
``status``), and a hosted item holds its result there too. Input holding one of those keys,
a result holding a key of the input, a result or output read as JSON and now spelled
otherwise (or a JSON string), a custom call marked as an item of input fields, and other
metadata on a hosted call or result were written as they stood: the call came back with
another input or id, the text with another spelling, the call as a function call, the
metadata gone, and one such document was refused by the reader. Now each is
``not_representable`` where it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import openai_responses

NS = "openai_responses"
ASK = HumanMessage(content="hi")
SEARCH = {"action": {"type": "search", "query": "paris"}}


def _searched(args: dict[str, Any], result: str, **more: Any) -> list[Any]:
    call = ToolCall(name="web_search", args=args, id="ws_1",
                    metadata={NS: {"item": "web_search_call", **more.pop("call_ns", {})}})
    return [ASK, AIMessage(tool_calls=[call]),
            ToolMessage(content=result, tool_call_id="ws_1", name="web_search", **more)]


def _clicked(args: dict[str, Any], text: str = "shot", **output_ns: Any) -> list[Any]:
    call = ToolCall(name="computer", args=args, id="c1", metadata={NS: {"item": "computer_call"}})
    return [ASK, AIMessage(tool_calls=[call]),
            ToolMessage(content=text, tool_call_id="c1",
                        metadata={NS: output_ns} if output_ns else {})]


def _refused(messages: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        openai_responses.from_messages(messages)
    return caught.value.code, caught.value.index, caught.value.path


@pytest.mark.parametrize("result", [
    '{"status": "completed", "action": {"type": "search", "query": "rome"}}',
    '{"status": "completed", "id": "ws_other"}',
    '{"status":"completed"}',
])
def test_a_hosted_result_the_item_would_read_otherwise_is_refused(result: str) -> None:
    assert _refused(_searched(SEARCH, result)) == (
        "not_representable", 2, "messages[2].content")


def test_a_hosted_call_input_holding_a_result_key_is_refused() -> None:
    assert _refused(_searched({**SEARCH, "status": "x"}, '{"status": "completed"}')) == (
        "not_representable", 1, "messages[1].tool_calls[0].args.status")


def test_other_metadata_on_a_hosted_call_or_result_is_refused() -> None:
    on_call = _searched(SEARCH, '{"status": "completed"}', call_ns={"fields": {"caller": "x"}})
    assert _refused(on_call) == ("not_representable", 1, "messages[1].tool_calls[0]")
    on_result = _searched(SEARCH, '{"status": "completed"}', metadata={NS: {"fields": {"a": 1}}})
    assert _refused(on_result) == (
        "not_representable", 2, "messages[2].metadata.openai_responses")


@pytest.mark.parametrize("key", ["status", "call_id", "type", "id"])
def test_a_computer_call_input_holding_an_item_key_is_refused(key: str) -> None:
    args = {"action": {"type": "wait"}, key: "x"}
    assert _refused(_clicked(args)) == (
        "not_representable", 1, f"messages[1].tool_calls[0].args.{key}")


@pytest.mark.parametrize("output", [
    '"done"', '{"type":"computer_screenshot","image_url":"https://s"}'])
def test_an_output_read_as_json_and_now_otherwise_is_refused(output: str) -> None:
    assert _refused(_clicked({"action": {"type": "wait"}}, output, output="json")) == (
        "not_representable", 2, "messages[2].content")


def test_a_custom_call_marked_as_an_item_of_input_fields_is_refused() -> None:
    call = ToolCall(name="computer", args={"input": "x"}, id="c1", kind="custom",
                    metadata={NS: {"item": "computer_call"}})
    messages = [ASK, AIMessage(tool_calls=[call]), ToolMessage(content="ok", tool_call_id="c1")]
    assert _refused(messages) == ("not_representable", 1, "messages[1].tool_calls[0].kind")


def test_what_the_reader_wrote_is_still_written() -> None:
    items = [{"role": "user", "content": "hi"},
             {"type": "web_search_call", "id": "ws_1", "status": "completed", **SEARCH},
             {"type": "computer_call", "call_id": "c1", "status": "completed",
              "action": {"type": "wait"}, "pending_safety_checks": []},
             {"type": "computer_call_output", "call_id": "c1",
              "output": {"type": "computer_screenshot", "image_url": "https://s"}}]
    messages = openai_responses.to_messages(items)
    assert openai_responses.to_messages(openai_responses.from_messages(messages)) == messages
