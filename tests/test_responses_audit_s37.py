"""Regression tests from the s37 audit of the openai_responses and openai_agents adapters;
each one failed before its fix.

openai_agents: a tool_approval_item that the SDK lists after the output of a call it ran at
once (one model response: a plain call, then an approval-gated one) is read, on a real
``Runner.run`` with the golden generator's scripted ``Model``; ``handoffs()`` on unchecked
messages is a ``TraceError``. openai_responses: the writer neither invents nor silently
drops what its namespace keeps (a ``url_citation`` in a text part's annotation layout, a
custom call marked as a hosted item, ``content: "string"`` or ``output: "absent"`` where the
reader never sets them, kept keys a kept item or a string content has no place for), and
writes no ``NaN`` / ``Infinity`` into an item.
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.run_state import RunState
from test_openai_agents import GENERATOR

from tracebridge import TraceError
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.hashing import transcript_hash
from tracebridge.messages import (
    AIMessage,
    Citation,
    HumanMessage,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
)

NS = "openai_responses"
HI = HumanMessage(content="q")


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def refused(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value


def placed(messages: list[Any]) -> list[tuple[str, str | None, list[str]]]:
    """Each message's type, name and the types of the RunItem wrappers kept on it."""
    return [
        (m.type, m.name,
         [record["type"] for record in m.metadata.get("openai_agents", {}).get("run_items", [])])
        for m in messages
    ]


# --- 1: an approval the SDK lists after the output of a call it ran at once ------------------


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@function_tool
def list_files() -> str:
    """List files."""
    return "a.txt"


@cache
def approval_runs() -> tuple[Any, Any]:
    """One response calls list_files (no approval), then delete_file (needs_approval=True);
    the run stops for the approval, which is rejected, and the run resumes to its end."""

    async def run() -> tuple[Any, Any]:
        model = GENERATOR.ScriptModel([
            [GENERATOR.call("c_b", "list_files", "{}"),
             GENERATOR.call("c_a", "delete_file", '{"path":"/x"}')],
            [GENERATOR.message("msg_2", "Listed; deletion was refused.")],
        ])
        agent = Agent(name="File Clerk", tools=[delete_file, list_files], model=model)
        first = await Runner.run(agent, "go")
        state = first.to_state()
        state.reject(first.interruptions[0])
        done = await Runner.run(agent, state)
        return first, done

    return asyncio.run(run())


def stored(result: Any) -> list[dict[str, Any]]:
    """The result's items as RunState.to_json() stores them."""
    dicts = [RunState._serialize_item(None, item) for item in result.new_items]  # type: ignore[arg-type]
    return json.loads(json.dumps(dicts))  # type: ignore[no-any-return]


def routes(result: Any, pending: bool) -> list[Any]:
    """The result read as itself, as its RunItem objects and as their stored dicts."""
    return [
        outcome(openai_agents.to_messages, result, allow_pending=pending),
        outcome(openai_agents.to_messages, list(result.new_items), input=result.input,
                allow_pending=pending),
        outcome(openai_agents.to_messages, stored(result), input=result.input,
                allow_pending=pending),
    ]


APPROVAL = {
    "type": "tool_approval_item", "agent": {"name": "File Clerk"}, "tool_name": "delete_file",
    "tool_lookup_key": {"kind": "bare", "name": "delete_file"},
    "tool_origin": {"type": "function"},
    "raw_item": {"arguments": '{"path":"/x"}', "call_id": "c_a", "name": "delete_file",
                 "type": "function_call", "id": "fc_c_a", "status": "completed"},
}


def test_an_approval_after_the_output_of_a_call_run_at_once_is_read_while_interrupted() -> None:
    first, _ = approval_runs()
    assert [item.type for item in first.new_items] == [
        "tool_call_item", "tool_call_item", "tool_call_output_item", "tool_approval_item",
    ]
    read = routes(first, True)
    assert read[1] == read[0]
    assert read[2] == read[0]
    messages = read[0]
    assert placed(messages) == [
        ("human", None, []),
        ("ai", "File Clerk", ["tool_call_item", "tool_call_item", "tool_approval_item"]),
        ("tool", None, ["tool_call_output_item"]),
    ]
    assert messages[1].metadata["openai_agents"]["run_items"][2] == APPROVAL
    assert [call.id for call in messages[1].tool_calls] == ["c_b", "c_a"]
    plain = openai_agents.to_messages(first.to_input_list(), allow_pending=True)
    assert [m.model_dump(exclude={"metadata", "name"}) for m in messages] == [
        m.model_dump(exclude={"metadata", "name"}) for m in plain
    ]


def test_an_approval_after_the_output_of_a_call_run_at_once_is_read_once_rejected() -> None:
    _, done = approval_runs()
    assert [item.type for item in done.new_items] == [
        "tool_call_item", "tool_call_item", "tool_call_output_item", "tool_approval_item",
        "tool_call_output_item", "message_output_item",
    ]
    read = routes(done, False)
    assert read[1] == read[0]
    assert read[2] == read[0]
    messages = read[0]
    assert placed(messages) == [
        ("human", None, []),
        ("ai", "File Clerk", ["tool_call_item", "tool_call_item", "tool_approval_item"]),
        ("tool", None, ["tool_call_output_item"]),
        ("tool", None, ["tool_call_output_item"]),
        ("ai", "File Clerk", ["message_output_item"]),
    ]
    assert messages[1].metadata["openai_agents"]["run_items"][2] == APPROVAL
    assert [m.text for m in messages[2:]] == [
        "a.txt", "Tool execution was not approved.", "Listed; deletion was refused."
    ]
    assert openai_agents.from_messages(messages, drop_names=True) == done.to_input_list()


def test_an_approval_after_a_later_model_response_is_still_malformed() -> None:
    _, done = approval_runs()
    items = stored(done)
    items.append(items.pop(3))  # after the message of the next response
    assert outcome(openai_agents.to_messages, items, input="go") == (
        "malformed_event", 5, "items[5]"
    )


def test_an_approval_of_a_call_no_earlier_response_made_is_still_malformed() -> None:
    first, _ = approval_runs()
    items = stored(first)
    items.insert(0, items.pop(3))
    assert outcome(openai_agents.to_messages, items, input="go", allow_pending=True) == (
        "malformed_event", 0, "items[0]"
    )
    items = stored(first)
    items[3]["raw_item"]["call_id"] = "c_other"
    assert outcome(openai_agents.to_messages, items, input="go", allow_pending=True) == (
        "malformed_event", 3, "items[3]"
    )


def test_an_approval_after_an_item_other_than_that_responses_outputs_is_still_malformed() -> None:
    first, _ = approval_runs()
    items = stored(first)
    items.insert(3, {"role": "user", "content": "and quickly"})  # a plain input item
    assert outcome(openai_agents.to_messages, items, input="go", allow_pending=True) == (
        "malformed_event", 4, "items[4]"
    )
    items = stored(first)
    items[2]["agent"] = {"name": "Someone Else"}  # another agent's output
    assert outcome(openai_agents.to_messages, items, input="go", allow_pending=True) == (
        "malformed_event", 3, "items[3]"
    )


def test_the_approval_message_says_what_may_come_between() -> None:
    first, _ = approval_runs()
    items = stored(first)
    items.insert(0, items.pop(3))
    error = refused(openai_agents.to_messages, items, input="go", allow_pending=True)
    assert str(error) == (
        "openai_agents: items[0]: a tool_approval_item for call 'c_a' must come after the "
        "model response of its agent that made that call, with only that response's tool "
        "outputs between [malformed_event]"
    )


# --- 2: a url_citation kept in a text part's annotation layout -------------------------------

URL_CITATION = {"type": "url_citation", "url": "https://evil", "title": "T", "start_index": 0,
                "end_index": 5}


def test_a_kept_url_citation_annotation_is_not_written_as_a_citation() -> None:
    messages = [HI, AIMessage(content=[TextPart(text="hello", metadata={NS: {
        "annotations": [URL_CITATION]}})])]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.openai_responses.annotations[0]"
    )
    assert str(error) == (
        "openai_responses: messages[1].content[0].metadata.openai_responses.annotations[0]: a "
        "url_citation annotation kept in the part's layout would read back as a typed citation "
        "(the reader keeps only other annotations there; a citation is one of "
        "AIMessage.citations) [not_representable]"
    )


def test_a_kept_annotation_that_is_no_object_is_malformed() -> None:
    messages = [HI, AIMessage(content=[TextPart(text="hello", metadata={NS: {
        "annotations": [None, "url", 5]}})])]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "messages[1].content[0].metadata.openai_responses.annotations[1]"
    )


def test_a_kept_annotation_layout_the_reader_makes_still_round_trips() -> None:
    items = [{"role": "user", "content": "q"}, {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "hello", "annotations": [
                  URL_CITATION,
                  {"type": "file_citation", "file_id": "f", "index": 0, "filename": "a"}]}]}]
    messages = openai_responses.to_messages(items)
    part = messages[1].content[0]
    assert part.metadata == {NS: {"annotations": [
        None, {"type": "file_citation", "file_id": "f", "index": 0, "filename": "a"}]}}
    assert openai_responses.from_messages(messages) == items


# --- 3: a custom call marked as a hosted item -------------------------------------------------


def test_a_custom_call_marked_as_a_hosted_item_is_not_representable() -> None:
    messages = [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[ToolCall(
            name="web_search", args={"input": "q"}, id="ws_1", kind="custom",
            metadata={NS: {"item": "web_search_call"}})]),
        ToolMessage(content='{"status": "completed"}', tool_call_id="ws_1", name="web_search"),
    ]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].kind"
    )
    assert str(error) == (
        "openai_responses: messages[1].tool_calls[0].kind: a web_search_call item holds a call "
        "with input fields, not a custom (free-text) call [not_representable]"
    )


# --- 4: content: "string" on a reply with no reasoning or kept item ---------------------------


@pytest.mark.parametrize("content", [[], [TextPart(text="yo")]], ids=["no parts", "one text"])
def test_the_string_content_flag_without_reasoning_is_not_representable(content: Any) -> None:
    messages = [HI, AIMessage(content=content, metadata={NS: {"content": "string"}})]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].metadata.openai_responses.content"
    )


def test_the_string_content_flag_the_reader_sets_still_round_trips() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1",
                 "summary": [{"type": "summary_text", "text": "r"}]}
    for said in ("", "yo"):
        items = [{"role": "user", "content": "q"}, reasoning,
                 {"role": "assistant", "content": said}]
        messages = openai_responses.to_messages(items)
        assert messages[1].metadata[NS]["content"] == "string"
        assert openai_responses.from_messages(messages) == items


# --- 5: NaN and Infinity in a JSON text -------------------------------------------------------


def test_a_hosted_result_holding_nan_is_not_representable() -> None:
    messages = [HI, AIMessage(content="", tool_calls=[ToolCall(
        name="web_search", args={}, id="ws", metadata={NS: {"item": "web_search_call"}})]),
        ToolMessage(content='{"result": NaN}', tool_call_id="ws", name="web_search")]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].content"
    )
    assert str(error) == (
        "openai_responses: messages[2].content: the output was read as JSON and "
        "is no longer JSON: '{\"result\": NaN}' [not_representable]"
    )


@pytest.mark.parametrize("text", ["Infinity", "-Infinity", "[1, NaN]", '{"a": [Infinity]}'])
def test_a_json_output_holding_infinity_is_not_representable(text: str) -> None:
    messages = [HI, AIMessage(content="", tool_calls=[ToolCall(
        name="computer", args={}, id="cc", metadata={NS: {"item": "computer_call"}})]),
        ToolMessage(content=text, tool_call_id="cc", metadata={NS: {"output": "json"}})]
    assert outcome(openai_responses.from_messages, messages) == (
        "not_representable", 2, "messages[2].content"
    )


def test_a_json_output_with_a_huge_integer_still_round_trips() -> None:
    items = [{"role": "user", "content": "q"},
             {"type": "computer_call", "call_id": "cc", "action": {}},
             {"type": "computer_call_output", "call_id": "cc", "output": {"a": 10**30}}]
    assert openai_responses.from_messages(openai_responses.to_messages(items)) == items


# --- 6: output: "absent" on an output other than apply_patch_call_output --------------------


def test_the_absent_output_flag_on_another_output_is_not_representable() -> None:
    messages = [HI, AIMessage(content="", tool_calls=[ToolCall(
        name="computer", args={"action": {"type": "click"}}, id="cc1",
        metadata={NS: {"item": "computer_call"}})]),
        ToolMessage(content="", tool_call_id="cc1", metadata={NS: {"output": "absent"}})]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].metadata.openai_responses.output"
    )
    assert str(error) == (
        "openai_responses: messages[2].metadata.openai_responses.output: output: 'absent' "
        "marks an apply_patch_call_output without output (the one output item whose output "
        "is optional); a computer_call_output item needs its output [not_representable]"
    )


def test_an_apply_patch_output_without_output_still_round_trips() -> None:
    items = [{"role": "user", "content": "q"},
             {"type": "apply_patch_call", "call_id": "ap", "status": "completed",
              "operation": {"type": "delete_file", "path": "a.txt"}},
             {"type": "apply_patch_call_output", "call_id": "ap", "status": "completed"}]
    messages = openai_responses.to_messages(items)
    assert messages[2].metadata == {NS: {"output": "absent", "fields": {"status": "completed"}}}
    assert openai_responses.from_messages(messages) == items


# --- 7: kept keys with no place in what is written --------------------------------------------


def test_kept_fields_of_a_message_holding_a_kept_approval_response_are_refused() -> None:
    kept = OpaquePart(kind="mcp_approval_response", metadata={NS: {"item": True}}, value={
        "type": "mcp_approval_response", "approval_request_id": "a", "approve": True})
    messages = [HumanMessage(content=[kept], metadata={NS: {"fields": {"x": 1}}})]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].metadata.openai_responses.fields.x"
    )
    assert str(error) == (
        "openai_responses: messages[0].metadata.openai_responses.fields.x: the "
        "mcp_approval_response item is kept whole and written as it is, with no place for the "
        "message's kept fields.x (1) [not_representable]"
    )
    # as the reader gives it: written as it was
    plain = [HumanMessage(content=[kept])]
    assert openai_responses.to_messages(openai_responses.from_messages(plain)) == plain


@pytest.mark.parametrize(("kept", "key"), [
    ({"fields": {"x": 1}, "annotations": [{"type": "file_path", "file_id": "f", "index": 0}]},
     "fields"),
    ({"annotations": [{"type": "file_path", "file_id": "f", "index": 0}]}, "annotations"),
])
def test_kept_keys_of_a_text_part_written_as_a_string_content_are_refused(
    kept: dict[str, Any], key: str
) -> None:
    messages = [HI, AIMessage(content=[
        ReasoningPart(text="r", id="rs"),
        TextPart(text="yo", metadata={NS: kept}),
    ], metadata={NS: {"content": "string"}})]
    error = refused(openai_responses.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, f"messages[1].content[1].metadata.openai_responses.{key}"
    )


def test_a_string_content_flag_with_a_citation_writes_the_parts_kept_keys() -> None:
    part = TextPart(text="yo", metadata={NS: {"fields": {"x": 1}}})
    messages = [HI, AIMessage(
        content=[ReasoningPart(text="r", id="rs"), part],
        citations=[Citation(url="https://a", title="A", start_index=0, end_index=2)],
        metadata={NS: {"content": "string"}})]
    written = openai_responses.from_messages(messages)
    assert written[2] == {"role": "assistant", "type": "message", "content": [
        {"type": "output_text", "text": "yo", "x": 1, "annotations": [
            {"type": "url_citation", "url": "https://a", "title": "A", "start_index": 0,
             "end_index": 2}]}]}
    back = openai_responses.to_messages(written)
    assert back[1].content[1] == part
    assert transcript_hash(back) == transcript_hash(messages)


# --- 8: handoffs() on unchecked messages ------------------------------------------------------


def test_handoffs_of_unchecked_messages_is_malformed_at_the_field() -> None:
    call = ToolCall(name="transfer_to_b", args={}, id="c1")
    no_calls = [
        HumanMessage(content="hi"),
        AIMessage.model_construct(content="", tool_calls=None,  # type: ignore[arg-type]
                                  metadata={}, name=None, id=None, type="ai", citations=[],
                                  audio=None),
        ToolMessage(content='{"assistant":"b"}', tool_call_id="c1"),
    ]
    no_metadata = [
        HumanMessage(content="hi"), AIMessage(content="", tool_calls=[call]),
        ToolMessage.model_construct(content='{"assistant":"b"}', tool_call_id="c1",
                                    metadata=None,  # type: ignore[arg-type]
                                    name=None, is_error=False, id=None, type="tool"),
    ]
    assert outcome(openai_agents.handoffs, no_calls) == (
        "malformed_event", 1, "messages[1].tool_calls"
    )
    assert outcome(openai_agents.handoffs, no_metadata) == (
        "malformed_event", 2, "messages[2].metadata"
    )
    # the same messages checked: one handoff, from an unnamed agent
    checked = [*no_metadata[:2], ToolMessage(content='{"assistant":"b"}', tool_call_id="c1")]
    assert [vars(h) for h in openai_agents.handoffs(checked)] == [
        {"index": 2, "from_agent": None, "to_agent": "b"}
    ]
