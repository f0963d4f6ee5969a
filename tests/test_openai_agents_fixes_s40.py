"""Agents runs read in linear time; OpenAI SDK objects in item and part positions; RunItem
wrappers that contradict their raw item."""

from __future__ import annotations

import asyncio
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    ApplyPatchTool,
    CodeInterpreterTool,
    Computer,
    ComputerTool,
    CustomTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    LocalShellTool,
    Runner,
    WebSearchTool,
    function_tool,
    handoff,
)
from agents import items as sdk_items
from agents.items import HandoffOutputItem, MessageOutputItem, ToolCallItem
from openai.types.conversations import Message as ConversationMessage
from openai.types.conversations import conversation_item
from openai.types.responses import (
    ResponseCodeInterpreterToolCall,
    ResponseComputerToolCall,
    ResponseCustomToolCall,
    ResponseFileSearchToolCall,
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseInputText,
    ResponseOutputRefusal,
    ResponseOutputText,
)
from openai.types.responses.response_computer_tool_call import ActionClick
from openai.types.responses.response_function_web_search import ActionSearch
from openai.types.responses.response_output_item import (
    ImageGenerationCall,
    LocalShellCall,
    LocalShellCallAction,
    McpApprovalRequest,
    McpCall,
    McpListTools,
)
from openai.types.responses.response_output_text import (
    AnnotationFileCitation,
    AnnotationURLCitation,
)
from openai.types.responses.response_reasoning_item import Summary
from pydantic import BaseModel
from test_openai_agents import generator

from tracebridge import AIMessage, HumanMessage, ReasoningPart, ToolMessage, TraceError
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.adapters.openai_agents._raw_items import RAW_ITEM_TYPES
from tracebridge.adapters.openai_responses import _read

ROOT = Path(__file__).resolve().parents[1]


GENERATOR = generator()
CODER = {"name": "Coder"}


# -- reading a run is linear in its items ----------------------------------------------------


def hosted_run(n: int) -> list[dict[str, Any]]:
    """One agent's RunItems: [reasoning, code interpreter call] * n, then a message (the
    shape of a deep-research response: reasoning between hosted calls)."""
    items: list[dict[str, Any]] = []
    for k in range(n):
        items.append({"type": "reasoning_item", "agent": CODER, "raw_item": {
            "type": "reasoning", "id": f"rs_{k}",
            "summary": [{"type": "summary_text", "text": "step"}]}})
        items.append({"type": "tool_call_item", "agent": CODER, "raw_item": {
            "type": "code_interpreter_call", "id": f"ci_{k}", "code": "print(1)",
            "container_id": "c", "outputs": [{"type": "logs", "logs": "1"}],
            "status": "completed"}})
    items.append({"type": "message_output_item", "agent": CODER, "raw_item": {
        "type": "message", "role": "assistant", "id": "m", "status": "completed",
        "content": [{"type": "output_text", "text": "done", "annotations": []}]}})
    return items


def items_read(monkeypatch: pytest.MonkeyPatch, n: int) -> int:
    """How many items the Responses reader reads to read ``hosted_run(n)``."""
    count = 0
    item = _read._Conversation.item

    def counted(self: Any, j: int, given: Any) -> None:
        nonlocal count
        count += 1
        item(self, j, given)

    with monkeypatch.context() as patch:
        patch.setattr(_read._Conversation, "item", counted)
        openai_agents.to_messages(hosted_run(n), input="go")
    return count


def test_a_run_of_many_hosted_calls_reads_each_item_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The whole run (the input and 2n + 1 items) once, the agent's items once more (to
    # learn which message each wrapper goes on): 4n + 3, not a read of each item's prefix.
    assert {n: items_read(monkeypatch, n) for n in (10, 40, 160)} == {
        10: 43, 40: 163, 160: 643,
    }


def test_each_wrapper_of_a_run_of_hosted_calls_is_on_its_own_turn() -> None:
    read = openai_agents.to_messages(hosted_run(2), input="go")
    assert [type(m).__name__ for m in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage",
    ]
    wrappers = [m.metadata.get("openai_agents", {}).get("run_items") for m in read]
    assert wrappers == [
        None,
        [{"type": "reasoning_item", "agent": CODER}, {"type": "tool_call_item", "agent": CODER}],
        None,
        [{"type": "reasoning_item", "agent": CODER}, {"type": "tool_call_item", "agent": CODER}],
        None,
        [{"type": "message_output_item", "agent": CODER}],
    ]
    assert [m.name for m in read if isinstance(m, AIMessage)] == ["Coder"] * 3


def test_a_message_before_each_call_keeps_all_wrappers_on_one_turn() -> None:
    calls = [
        {"type": "reasoning_item", "agent": CODER, "raw_item": {
            "type": "reasoning", "id": "rs_1", "summary": []}},
        {"type": "message_output_item", "agent": CODER, "raw_item": {
            "type": "message", "role": "assistant", "id": "m1", "status": "completed",
            "content": [{"type": "output_text", "text": "First.", "annotations": []}]}},
        {"type": "tool_call_item", "agent": CODER, "raw_item": {
            "type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}},
        {"type": "reasoning_item", "agent": CODER, "raw_item": {
            "type": "reasoning", "id": "rs_2", "summary": []}},
        {"type": "tool_call_item", "agent": CODER, "raw_item": {
            "type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}},
        {"type": "tool_call_output_item", "agent": CODER, "output": "a", "raw_item": {
            "type": "function_call_output", "call_id": "c1", "output": "a"}},
        {"type": "tool_call_output_item", "agent": CODER, "output": "b", "raw_item": {
            "type": "function_call_output", "call_id": "c2", "output": "b"}},
    ]
    read = openai_agents.to_messages(calls, input="go")
    assert [type(m).__name__ for m in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage",
    ]
    assert [r["type"] for r in read[1].metadata["openai_agents"]["run_items"]] == [
        "reasoning_item", "message_output_item", "tool_call_item", "reasoning_item",
        "tool_call_item",
    ]


def test_the_placed_reading_gives_each_item_the_message_it_was_read_into() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "message", "role": "assistant", "content": "found"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r"},
    ]
    messages, places = _read.read_placed(items, source="openai_responses")
    assert messages == openai_responses.to_messages(items)
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage",
    ]
    assert places == [0, 1, 1, 3, 3, 4]


# -- OpenAI SDK objects in item and part positions -------------------------------------------


def dumped(model: BaseModel) -> dict[str, Any]:
    dump: dict[str, Any] = model.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return dump


def conversation_items() -> list[Any]:
    """What ``client.conversations.items.list()`` yields (the Conversations API's classes)."""
    return [
        ConversationMessage(id="msg_1", type="message", role="user", status="completed",
                            content=[{"type": "input_text", "text": "hi"}]),
        conversation_item.McpCall(id="mc_1", type="mcp_call", server_label="s", name="t",
                                  arguments="{}", output="ok"),
        conversation_item.ImageGenerationCall(id="ig_1", type="image_generation_call",
                                              result=None, status="completed"),
        conversation_item.LocalShellCall(
            id="ls_1", call_id="c1", type="local_shell_call", status="completed",
            action={"type": "exec", "command": ["ls"], "env": {}}),
        conversation_item.LocalShellCallOutput(id="c1", type="local_shell_call_output",
                                               output="a.txt", status="completed"),
        ConversationMessage(id="msg_2", type="message", role="assistant", status="completed",
                            content=[{"type": "output_text", "text": "hello", "annotations": []}]),
    ]


def test_conversation_items_read_as_their_dumps_and_write_back_as_them() -> None:
    objects = conversation_items()
    plain = [dumped(item) for item in objects]
    read = openai_responses.to_messages(objects)
    assert read == openai_responses.to_messages(plain)
    assert [type(m).__name__ for m in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "ToolMessage", "AIMessage",
    ]
    assert openai_responses.from_messages(read) == plain
    assert openai_responses.detect(objects) is True


def test_a_history_dict_holding_a_responses_parts_reads_as_it_is_sent() -> None:
    cited = ResponseOutputText(type="output_text", text="Paris is nice.", annotations=[
        AnnotationURLCitation(type="url_citation", url="https://p", title="P",
                              start_index=0, end_index=5)])
    filed = {"type": "output_text", "text": "See the file.", "annotations": [
        AnnotationFileCitation(type="file_citation", file_id="f_1", filename="a.pdf",
                               index=0)]}
    history = [
        {"role": "user", "content": [ResponseInputText(type="input_text", text="hi")]},
        {"type": "reasoning", "id": "rs_1",
         "summary": [Summary(type="summary_text", text="thinking")]},
        {"role": "assistant",
         "content": [cited, ResponseOutputRefusal(type="refusal", refusal="no")]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1",
         "output": [ResponseInputText(type="input_text", text="done")]},
        {"role": "assistant", "content": [filed]},
    ]
    plain = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "reasoning", "id": "rs_1",
         "summary": [{"type": "summary_text", "text": "thinking"}]},
        {"role": "assistant", "content": [dumped(cited), {"type": "refusal", "refusal": "no"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1",
         "output": [{"type": "input_text", "text": "done"}]},
        {"role": "assistant", "content": [{**filed, "annotations": [
            {"type": "file_citation", "file_id": "f_1", "filename": "a.pdf", "index": 0}]}]},
    ]
    read = openai_responses.to_messages(history)
    assert read == openai_responses.to_messages(plain)
    assert read[0] == HumanMessage(content=[{"type": "text", "text": "hi"}])
    assert openai_responses.from_messages(read) == plain
    assert openai_agents.to_messages(history) == openai_agents.to_messages(plain)


def test_a_conversation_message_is_read_by_the_agents_adapter_too() -> None:
    objects = conversation_items()
    assert openai_agents.to_messages(objects) == openai_agents.to_messages(
        [dumped(item) for item in objects]
    )


def test_an_sdk_part_changed_into_another_kind_in_a_dict_item_is_refused_at_its_type() -> None:
    part = ResponseOutputText(type="output_text", text="x", annotations=[])
    part.type = "input_text"  # type: ignore[assignment]
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages([{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": [part]}])
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", 1, "items[1].content[0].type", "openai_responses"
    )
    assert error.detail == (
        "this ResponseOutputText holds what the OpenAI SDK does not make (was a field changed "
        "after it was made?): Input should be 'output_text'"
    )


def test_an_object_of_no_openai_class_is_still_no_item() -> None:
    class Other:
        type = "message"

    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages([Other()])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 0, "items[0]"
    )


# -- a RunItem wrapper must hold the kind of item its class wraps ----------------------------

A = {"name": "A"}
CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "id": "fc_1"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "r"}


def handoff_output(output: str) -> dict[str, Any]:
    return {"type": "handoff_output_item", "agent": A, "source_agent": A,
            "target_agent": {"name": "B"},
            "raw_item": {"type": "function_call_output", "call_id": "c1", "output": output}}


CONTRADICTIONS = {
    "a message_output_item holding a function_call": (
        [{"type": "message_output_item", "agent": A, "raw_item": CALL},
         {"type": "tool_call_output_item", "agent": A, "raw_item": OUTPUT, "output": "r"}],
        0, "items[0].raw_item.type",
    ),
    "a handoff_output_item holding an ordinary tool output": (
        [{"type": "tool_call_item", "agent": A, "raw_item": CALL}, handoff_output("r")],
        1, "items[1].raw_item.output",
    ),
    "a handoff_output_item naming another agent than its target_agent": (
        [{"type": "handoff_call_item", "agent": A, "raw_item": CALL},
         handoff_output('{"assistant": "C"}')],
        1, "items[1].raw_item.output",
    ),
    "a tool_call_output_item holding a user message": (
        [{"type": "tool_call_item", "agent": A, "raw_item": CALL},
         {"type": "tool_call_output_item", "agent": A, "output": "x",
          "raw_item": {"role": "user", "content": "x"}}],
        1, "items[1].raw_item.role",
    ),
    "a message_output_item holding a user message item": (
        [{"type": "message_output_item", "agent": A, "raw_item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}}],
        0, "items[0].raw_item.role",
    ),
    "a reasoning_item holding an assistant message": (
        [{"type": "reasoning_item", "agent": A, "raw_item": {
            "type": "message", "role": "assistant", "content": "x"}}],
        0, "items[0].raw_item.type",
    ),
    "a handoff_call_item holding a function_call_output": (
        [{"type": "handoff_call_item", "agent": A, "raw_item": OUTPUT}],
        0, "items[0].raw_item.type",
    ),
}


@pytest.mark.parametrize("name", sorted(CONTRADICTIONS))
def test_a_wrapper_contradicting_its_raw_item_is_conflicting_fields(name: str) -> None:
    items, index, path = CONTRADICTIONS[name]
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(items, input="go", allow_pending=True)
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "conflicting_fields", index, path, "openai_agents"
    )


def test_the_conflicts_say_what_the_wrapper_wraps() -> None:
    details = {}
    for name in ("a tool_call_output_item holding a user message",
                 "a handoff_output_item holding an ordinary tool output",
                 "a message_output_item holding a function_call"):
        with pytest.raises(TraceError) as caught:
            openai_agents.to_messages(CONTRADICTIONS[name][0], input="go", allow_pending=True)
        details[name] = caught.value.detail
    assert details == {
        "a tool_call_output_item holding a user message":
            "a tool_call_output_item wraps an item of type 'function_call_output', "
            "'custom_tool_call_output', 'computer_call_output', 'local_shell_call_output', "
            "'shell_call_output', 'apply_patch_call_output' or 'program_output', not a user "
            "message",
        "a handoff_output_item holding an ordinary tool output":
            "a handoff_output_item wraps the output the SDK writes for a handoff to its "
            "target_agent, {\"assistant\": \"B\"}, not 'r'",
        "a message_output_item holding a function_call":
            "a message_output_item wraps an assistant message, not an item of type "
            "'function_call'",
    }


def test_a_wrapper_object_contradicting_its_raw_item_is_conflicting_fields() -> None:
    agent, target = Agent(name="A"), Agent(name="B")
    call = ResponseFunctionToolCall(type="function_call", call_id="c1", name="f",
                                    arguments="{}", id="fc_1")
    for items, path in [
        ([MessageOutputItem(agent=agent, raw_item=call)], "items[0].raw_item.type"),  # type: ignore[arg-type]
        ([ToolCallItem(agent=agent, raw_item=call),
          HandoffOutputItem(agent=agent, raw_item=dict(OUTPUT),  # type: ignore[arg-type]
                            source_agent=agent, target_agent=target)],
         "items[1].raw_item.output"),
    ]:
        with pytest.raises(TraceError) as caught:
            openai_agents.to_messages(items, input="go", allow_pending=True)
        assert (caught.value.code, caught.value.path) == ("conflicting_fields", path)


def test_the_sdk_transfer_message_to_a_non_ascii_agent_is_a_handoff() -> None:
    read = openai_agents.to_messages(
        [{"type": "handoff_call_item", "agent": A, "raw_item": CALL},
         {**handoff_output('{"assistant": "Caf\\u00e9"}'), "target_agent": {"name": "Café"}}],
        input="go",
    )
    assert [(h.index, h.from_agent, h.to_agent) for h in openai_agents.handoffs(read)] == [
        (2, "A", "Café")
    ]


def _literal_types(annotation: Any) -> set[str]:
    """The ``type`` values the SDK classes of a raw item annotation declare (dicts aside)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_literal_types(arg) for arg in typing.get_args(annotation)))
    if origin is typing.Annotated:
        return _literal_types(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _literals(annotation.model_fields["type"].annotation)
    if isinstance(annotation, type) and "type" in getattr(annotation, "__annotations__", {}):
        return _literals(typing.get_type_hints(annotation)["type"])
    return set()


def _literals(annotation: Any) -> set[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    args = typing.get_args(annotation)
    return set().union(*(_literals(arg) for arg in args)) if args else set()


def test_the_table_holds_every_raw_item_type_the_sdk_declares_for_each_wrapper() -> None:
    declared = {}
    for cls in typing.get_args(sdk_items.RunItem):
        kind = cls.__dataclass_fields__["type"].default
        annotation = cls.__annotations__.get("raw_item")
        if kind not in RAW_ITEM_TYPES or kind == "handoff_output_item" or annotation is None:
            continue  # (a handoff output is declared as any input item; the SDK makes one kind)
        if isinstance(annotation, str):
            annotation = eval(annotation, vars(sdk_items))  # the SDK's own names
        declared[kind] = _literal_types(annotation)
    assert sorted(declared) == [
        "handoff_call_item", "mcp_approval_request_item", "mcp_approval_response_item",
        "mcp_list_tools_item", "message_output_item", "reasoning_item", "tool_call_item",
        "tool_call_output_item", "tool_search_call_item", "tool_search_output_item",
    ]
    for kind, found in declared.items():
        assert found <= set(RAW_ITEM_TYPES[kind]), kind


# -- real runs of the SDK's less common items still read by every route ----------------------


class FakeComputer(Computer):
    @property
    def environment(self) -> Any:
        return "linux"

    @property
    def dimensions(self) -> tuple[int, int]:
        return (800, 600)

    def screenshot(self) -> str:
        return "aGVsbG8="

    def click(self, x: int, y: int, button: Any) -> None:
        return None

    def double_click(self, x: int, y: int) -> None:
        return None

    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        return None

    def type(self, text: str) -> None:
        return None

    def wait(self) -> None:
        return None

    def move(self, x: int, y: int) -> None:
        return None

    def keypress(self, keys: list[str]) -> None:
        return None

    def drag(self, path: list[tuple[int, int]]) -> None:
        return None


class Editor:
    def create_file(self, operation: Any) -> None:
        return None

    def update_file(self, operation: Any) -> None:
        return None

    def delete_file(self, operation: Any) -> None:
        return None


async def grammar(context: Any, text: str) -> str:
    return f"got {text}"


@function_tool(needs_approval=True)
def remove(path: str) -> str:
    """Remove a file (asks for approval first)."""
    return f"removed {path}"


PATCH = {"type": "apply_patch_call", "id": "ap_1", "call_id": "apc_1", "status": "completed",
         "operation": {"type": "create_file", "path": "a.txt", "diff": "+hi"}}


def run_agents() -> dict[str, tuple[Agent[Any], list[str]]]:
    """Per case: the agent to run, and the RunItem types its run makes."""
    model, say = GENERATOR.ScriptModel, GENERATOR.message
    mcp = {"type": "mcp", "server_label": "srv", "server_url": "https://x",
           "require_approval": "always"}
    billing = Agent(name="Billing Agent", model=model([[say("m2", "Billing here.")]]))
    claims = Agent(name="Claims é", model=model([[say("m3", "Claims here.")]]))
    hosted = [CodeInterpreterTool(tool_config={"type": "code_interpreter",
                                               "container": {"type": "auto"}}),
              ImageGenerationTool(tool_config={"type": "image_generation"}),
              WebSearchTool(), FileSearchTool(vector_store_ids=["vs"])]
    return {
        "computer": (Agent(name="C", tools=[ComputerTool(FakeComputer())], model=model([
            [ResponseComputerToolCall(
                id="cu_1", call_id="cc_1", type="computer_call", status="completed",
                pending_safety_checks=[], action=ActionClick(type="click", x=1, y=2,
                                                             button="left"))],
            [say("m1", "Clicked.")]])),
            ["tool_call_item", "tool_call_output_item", "message_output_item"]),
        "local_shell": (Agent(name="L", tools=[LocalShellTool(executor=lambda _: "a.txt")],
                              model=model([
            [LocalShellCall(id="ls_1", call_id="lc_1", type="local_shell_call",
                            status="completed",
                            action=LocalShellCallAction(type="exec", command=["ls"], env={}))],
            [say("m1", "Listed.")]])),
            ["tool_call_item", "tool_call_output_item", "message_output_item"]),
        "apply_patch": (Agent(name="P", tools=[ApplyPatchTool(editor=Editor())], model=model([
            [dict(PATCH)], [say("m1", "Patched.")]])),
            ["tool_call_item", "tool_call_output_item", "message_output_item"]),
        "custom_tool": (Agent(name="X", tools=[CustomTool(
            name="grammar", description="d", on_invoke_tool=grammar)], model=model([
                [ResponseCustomToolCall(id="ct_1", call_id="cst_1", type="custom_tool_call",
                                        name="grammar", input="abc")],
                [say("m1", "Done.")]])),
            ["tool_call_item", "tool_call_output_item", "message_output_item"]),
        "hosted_with_reasoning": (Agent(name="H", tools=hosted, model=model([[
            GENERATOR.reasoning("rs_1", "think"),
            ResponseCodeInterpreterToolCall(id="ci_1", type="code_interpreter_call", code="1",
                                            container_id="c", outputs=None,
                                            status="completed"),
            GENERATOR.reasoning("rs_2", "think more"),
            ImageGenerationCall(id="ig_1", type="image_generation_call", result=None,
                                status="completed"),
            ResponseFunctionWebSearch(id="ws_1", type="web_search_call", status="completed",
                                      action=ActionSearch(type="search", query="q")),
            ResponseFileSearchToolCall(id="fs_1", type="file_search_call", queries=["q"],
                                       status="completed", results=None),
            say("m1", "Done.")]])),
            ["reasoning_item", "tool_call_item", "reasoning_item", "tool_call_item",
             "tool_call_item", "tool_call_item", "message_output_item"]),
        "hosted_mcp": (Agent(name="M", tools=[HostedMCPTool(
            tool_config=mcp, on_approval_request=lambda _: {"approve": True})], model=model([
                [McpListTools(id="ml_1", type="mcp_list_tools", server_label="srv", tools=[]),
                 McpApprovalRequest(id="mr_1", type="mcp_approval_request",
                                    server_label="srv", name="t", arguments="{}")],
                [McpCall(id="mc_1", type="mcp_call", server_label="srv", name="t",
                         arguments="{}", output="ok"),
                 say("m1", "Done.")]])),
            ["mcp_list_tools_item", "mcp_approval_request_item", "mcp_approval_response_item",
             "tool_call_item", "message_output_item"]),
        "hosted_mcp_waiting": (Agent(name="M2", tools=[HostedMCPTool(tool_config=mcp)],
                                     model=model([[McpApprovalRequest(
                                         id="mr_1", type="mcp_approval_request",
                                         server_label="srv", name="t", arguments="{}")]])),
            ["mcp_approval_request_item", "tool_approval_item"]),
        "two_handoffs": (Agent(name="Front Desk", handoffs=[
            billing, handoff(claims, tool_name_override="go_claims")], model=model([[
                GENERATOR.reasoning("rs_h", "hand over"),
                GENERATOR.call("h1", "transfer_to_billing_agent", "{}"),
                GENERATOR.call("h2", "go_claims", "{}")]])),
            ["reasoning_item", "handoff_call_item", "handoff_call_item",
             "tool_call_output_item", "handoff_output_item", "message_output_item"]),
        "handoff_by_override_to_non_ascii_name": (Agent(name="Front", handoffs=[
            handoff(claims, tool_name_override="go_claims")], model=model([[
                GENERATOR.call("h2", "go_claims", "{}")]])),
            ["handoff_call_item", "handoff_output_item", "message_output_item"]),
        "function_approval": (Agent(name="F", tools=[remove], model=model([[
            GENERATOR.call("a1", "remove", '{"path": "x"}')]])),
            ["tool_call_item", "tool_approval_item"]),
        "custom_tool_approval": (Agent(name="X2", tools=[CustomTool(
            name="grammar", description="d", on_invoke_tool=grammar, needs_approval=True)],
            model=model([[ResponseCustomToolCall(id="ct_1", call_id="cst_1",
                                                 type="custom_tool_call", name="grammar",
                                                 input="abc")]])),
            ["tool_call_item", "tool_approval_item"]),
        "apply_patch_approval": (Agent(name="P2", tools=[ApplyPatchTool(
            editor=Editor(), needs_approval=True)], model=model([[dict(PATCH)]])),
            ["tool_call_item", "tool_approval_item"]),
    }


RUNS = sorted(run_agents())


@pytest.mark.parametrize("name", RUNS)
def test_a_run_of_the_sdks_less_common_items_reads_alike_by_every_route(name: str) -> None:
    agent, made = run_agents()[name]
    result = asyncio.run(Runner.run(agent, "go"))
    assert [item.type for item in result.new_items] == made
    pending = {"allow_pending": bool(result.interruptions)}
    read = openai_agents.to_messages(result, **pending)
    assert openai_agents.to_messages(result.new_items, input=result.input, **pending) == read
    state = result.to_state().to_json()
    assert openai_agents.to_messages(
        state["generated_items"], input=state["original_input"], **pending
    ) == read
    if name == "two_handoffs":
        assert [(h.index, h.from_agent, h.to_agent) for h in openai_agents.handoffs(read)] == [
            (3, "Front Desk", "Billing Agent")
        ]


def test_a_run_of_hosted_calls_keeps_reasoning_and_calls_on_their_turns() -> None:
    agent, _ = run_agents()["hosted_with_reasoning"]
    read = openai_agents.to_messages(asyncio.run(Runner.run(agent, "go")))
    turns = [m for m in read if isinstance(m, AIMessage)]
    assert [[r["type"] for r in m.metadata["openai_agents"]["run_items"]] for m in turns] == [
        ["reasoning_item", "tool_call_item"],
        ["reasoning_item", "tool_call_item", "tool_call_item", "tool_call_item"],
        ["message_output_item"],
    ]
    assert turns[0].content == [ReasoningPart(text="think",
                                              id="rs_1")]
    assert [c.id for c in turns[0].tool_calls] == ["ci_1"]
    assert [c.id for c in turns[1].tool_calls] == ["ig_1", "ws_1", "fs_1"]
    results = [m for m in read if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == ["ci_1", "ig_1", "ws_1", "fs_1"]
    assert [type(m).__name__ for m in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "ToolMessage",
        "ToolMessage", "AIMessage",
    ]


def test_a_history_dict_holding_sdk_parts_is_told_as_responses() -> None:
    from openai.types.responses import ResponseOutputText as OutputText

    from tracebridge import convert
    from tracebridge.adapters import openai_chat
    from tracebridge.registry import detect_format

    items = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": [OutputText(type="output_text", text="hello",
                                                          annotations=[])]}]
    assert (openai_chat.detect(items), openai_responses.detect(items)) == (False, True)
    assert detect_format(items) == "openai_responses"
    assert convert(items, target="openai_chat") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
    ]
