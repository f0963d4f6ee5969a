"""Regression tests for the audit of the Responses adapter: each one failed before its fix.

Deep JSON is refused with a code, never a ``RecursionError``; a reply the reader would split, or
results it would reorder, are refused by the writer; ids are written only on items that have
one; a nested part whose kind was changed after it was made is refused where it is; bad
``drop=`` values, type-less item references and Response objects get their own errors.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from openai._models import construct_type
from openai.types.responses import (
    Response,
    ResponseOutputItem,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openai.types.responses.response_output_text import AnnotationURLCitation

from tracebridge import TraceError
from tracebridge.adapters import openai_responses
from tracebridge.adapters.openai_responses import from_messages, to_messages
from tracebridge.hashing import transcript_hash
from tracebridge.messages import (
    AIMessage,
    Citation,
    HumanMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.registry import FormatError, detect_format, get_adapter

NS = "openai_responses"
USER = {"role": "user", "content": "q"}


def refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


def deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


# --- 1: JSON nested past Python's depth ------------------------------------------------------


def test_a_hosted_result_nested_past_pythons_depth_is_unserializable() -> None:
    items = [USER, {"type": "web_search_call", "id": "ws_1", "status": "completed",
                    "results": deep(5000)}]
    code, index, path = refused(to_messages, items)
    # the core's depth bound (check_json) may name the key; the reader's own guard the item
    assert (code, index) == ("unserializable_value", 1)
    assert path in ("items[1]", "items[1].results")


def test_a_json_output_nested_past_pythons_depth_is_unserializable() -> None:
    items = [
        USER,
        {"type": "computer_call", "call_id": "c1", "action": {"type": "screenshot"},
         "pending_safety_checks": [], "status": "completed"},
        {"type": "computer_call_output", "call_id": "c1",
         "output": {"type": "computer_screenshot", "x": deep(5000)}},
    ]
    code, index, path = refused(to_messages, items)
    assert (code, index) == ("unserializable_value", 2)
    assert path in ("items[2].output", "items[2].output.x")


def test_writing_json_text_nested_past_pythons_depth_is_unserializable() -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="computer", args={"action": {"type": "screenshot"}},
                                       id="c1", metadata={NS: {"item": "computer_call"}})]),
        ToolMessage(content="[" * 5000 + "]" * 5000, tool_call_id="c1",
                    metadata={NS: {"output": "json"}}),
    ]
    assert refused(from_messages, messages) == ("unserializable_value", 2, "messages[2].content")


def test_a_hosted_result_text_nested_past_pythons_depth_is_unserializable() -> None:
    call = ToolCall(name="web_search", args={}, id="ws_1",
                    metadata={NS: {"item": "web_search_call"}})
    messages = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[call]),
        ToolMessage(content='{"results": ' + "[" * 5000 + "]" * 5000 + "}",
                    tool_call_id="ws_1", name="web_search"),
    ]
    assert refused(from_messages, messages) == (
        "unserializable_value", 2, "messages[2].content"
    )


# --- 2: reasoning after the reply's text ------------------------------------------------------


REASONING = ReasoningPart(text="why", id="rs_1")


def test_reasoning_after_the_text_of_a_reply_is_not_representable() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content=[TextPart(text="answer"), REASONING])]
    assert refused(from_messages, messages) == ("not_representable", 1, "messages[1].content[1]")


def test_reasoning_after_the_place_of_an_empty_message_item_is_not_representable() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content=[REASONING], id="msg_1", metadata={NS: {"message": 0}})]
    assert refused(from_messages, messages) == ("not_representable", 1, "messages[1].content[0]")


def test_reasoning_before_the_text_of_a_reply_round_trips() -> None:
    messages: list[Message] = [HumanMessage(content="q"),
                               AIMessage(content=[REASONING, TextPart(text="answer")])]
    assert to_messages(from_messages(messages)) == messages


# --- 3: hosted results out of their place -----------------------------------------------------


def _hosted(call_id: str) -> ToolCall:
    return ToolCall(name="web_search", args={"action": {"type": "search", "query": call_id}},
                    id=call_id, metadata={NS: {"item": "web_search_call"}})


def _found(call_id: str) -> ToolMessage:
    return ToolMessage(content='{"status": "completed"}', tool_call_id=call_id, name="web_search")


FUNCTION = ToolCall(name="f", args={}, id="c1")


@pytest.mark.parametrize(
    ("calls", "results", "index"),
    [
        ([FUNCTION, _hosted("ws_1")], [ToolMessage(content="r", tool_call_id="c1"), _found("ws_1")],
         3),
        ([_hosted("ws_1"), _hosted("ws_2")], [_found("ws_2"), _found("ws_1")], 3),
        ([_hosted("ws_1"), FUNCTION, _hosted("ws_2")],
         [_found("ws_1"), ToolMessage(content="r", tool_call_id="c1"), _found("ws_2")], 4),
    ],
)
def test_a_hosted_result_the_reader_would_move_is_not_representable(
    calls: list[ToolCall], results: list[ToolMessage], index: int
) -> None:
    messages = [HumanMessage(content="q"), AIMessage(tool_calls=calls), *results]
    assert refused(from_messages, messages) == ("not_representable", index, f"messages[{index}]")


def test_hosted_results_first_and_in_call_order_round_trip() -> None:
    messages: list[Message] = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[FUNCTION, _hosted("ws_1"), _hosted("ws_2")]),
        _found("ws_1"), _found("ws_2"), ToolMessage(content="r", tool_call_id="c1"),
    ]
    assert to_messages(from_messages(messages)) == messages


# --- 8: ids only where the item type has one --------------------------------------------------


def test_ids_from_another_format_are_left_off_items_without_an_id() -> None:
    messages = [
        HumanMessage(content="q", id="human-1"),
        SystemMessage(content="s", id="system-1"),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args={}, id="call_1")], id="run-abc"),
        ToolMessage(content="r", tool_call_id="call_1", id="tool-1"),
        AIMessage(content="done", id="run-def"),
        HumanMessage(content="more"),
        AIMessage(content=[TextPart(text="parts")], id="run-ghi"),
    ]
    assert from_messages(messages) == [
        {"role": "user", "content": "q"},
        {"role": "system", "content": "s"},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "r"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "more"},
        # ids are provenance: the API refuses a message item id without its prefix (msg_),
        # and an output item's id is written only when read from this format
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "parts", "annotations": []}]},
    ]


FC = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
FO = {"type": "function_call_output", "call_id": "c1", "output": "r"}
RS = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "t"}]}


@pytest.mark.parametrize(
    ("items", "typed"),
    [
        ([{"role": "user", "content": "hi", "id": "m0"}],
         [HumanMessage(content="hi", id="m0", metadata={NS: {"id": "item"}})]),
        ([{"role": "developer", "content": "be brief", "id": "m0"}],
         [SystemMessage(content="be brief", role="developer", id="m0",
                        metadata={NS: {"id": "item"}})]),
        ([USER, {"role": "assistant", "content": "hello", "id": "m1"}],
         [HumanMessage(content="q"),
          AIMessage(content="hello", id="m1", metadata={NS: {"id": "item"}})]),
        ([USER, {"role": "assistant", "content": "", "id": "m1"}, FC, FO],
         [HumanMessage(content="q"),
          AIMessage(content="", tool_calls=[FUNCTION], id="m1", metadata={NS: {"message": 0}}),
          ToolMessage(content="r", tool_call_id="c1")]),
        ([USER, RS, {"type": "message", "role": "assistant", "id": "msg_1", "content": []}],
         [HumanMessage(content="q"),
          AIMessage(content=[ReasoningPart(text="t", id="rs_1")],
                    id="msg_1", metadata={NS: {"message": 1}})]),
    ],
)
def test_ids_read_from_this_format_are_written_back(
    items: list[dict[str, Any]], typed: list[Message]
) -> None:
    assert to_messages(items) == typed
    assert from_messages(typed) == items


# --- 5: a nested part or annotation whose kind was changed ------------------------------------


def _message() -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text="Paris is sunny.", annotations=[
            AnnotationURLCitation(type="url_citation", url="https://w.example", title="W",
                                  start_index=0, end_index=5)])],
    )


@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda m: setattr(m.content[0].annotations[0], "type", "file_citation"),
         "items[1].content[0].annotations[0].type"),
        (lambda m: setattr(m.content[0], "type", "input_text"), "items[1].content[0].type"),
    ],
)
def test_a_nested_kind_changed_after_it_was_made_is_refused_where_it_is(
    change: Any, path: str
) -> None:
    message = _message()
    change(message)
    assert refused(to_messages, [USER, message]) == ("malformed_event", 1, path)


def test_an_unchanged_nested_item_reads_its_citation() -> None:
    assert to_messages([USER, _message()])[1] == AIMessage(
        content=[TextPart(text="Paris is sunny.")],
        citations=[Citation(url="https://w.example", title="W", start_index=0, end_index=5)],
        id="msg_1",
        metadata={NS: {"fields": {"status": "completed"}}},
    )


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "output_text", "text": "x", "annotations": [{"type": "new_annotation", "n": 1}]}],
        [{"type": "new_part", "text": "x"}],
    ],
)
def test_a_newer_apis_kind_the_sdk_built_as_it_could_reads_as_its_dict(
    content: list[dict[str, Any]]
) -> None:
    raw = {"type": "message", "id": "m", "role": "assistant", "status": "completed",
           "content": content}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK's own dump warns about the unknown kind
        built = construct_type(value=raw, type_=ResponseOutputItem)
        assert to_messages([USER, built]) == to_messages([USER, raw])


# --- 4: drop= values ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 5, "reasoning", b"reasoning"])
def test_a_drop_value_that_is_not_a_list_of_names_is_a_value_error(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^drop= takes a list of names from \('is_error', "):
        from_messages([HumanMessage(content="x")], drop=value)


@pytest.mark.parametrize(
    ("value", "named"),
    [([["reasoning"]], "[['reasoning']]"), (["reasoning", "typo"], "['typo']"), ([3], "[3]")],
)
def test_a_drop_name_that_is_not_droppable_is_a_value_error(value: Any, named: str) -> None:
    with pytest.raises(ValueError, match="names nothing droppable") as caught:
        from_messages([HumanMessage(content="x")], drop=value)
    assert str(caught.value) == (
        f"drop={named} names nothing droppable; drop= takes a list of names from "
        f"{openai_responses.DROPPABLE}"
    )


def test_drop_names_from_the_list_are_accepted() -> None:
    assert from_messages([HumanMessage(content="x")], drop={"reasoning"}) == [
        {"role": "user", "content": "x"}
    ]


# --- 9: an item reference without type ----------------------------------------------------------


@pytest.mark.parametrize("reference", [{"id": "msg_abc"}, {"id": "msg_abc", "type": None}])
def test_an_item_reference_without_type_is_unknown_role(reference: dict[str, Any]) -> None:
    assert refused(to_messages, [USER, reference]) == ("unknown_role", 1, "items[1]")


def test_an_item_without_type_role_or_id_stays_malformed() -> None:
    assert refused(to_messages, [USER, {"content": "x"}]) == (
        "malformed_event", 1, "items[1].type"
    )


# --- 10: a Response is not an item --------------------------------------------------------------


def _response() -> Any:
    return construct_type(
        value={"id": "resp_1", "object": "response", "created_at": 1, "model": "m",
               "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
               "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": "hi",
                                        "annotations": []}]}]},
        type_=Response,
    )


def test_a_list_holding_a_response_is_not_detected() -> None:
    response = _response()
    assert openai_responses.detect([response]) is False
    with pytest.raises(FormatError):
        detect_format([response])
    assert openai_responses.detect([USER, *response.output]) is True


def test_a_response_in_the_list_is_refused_with_the_hint() -> None:
    with pytest.raises(TraceError) as caught:
        to_messages([_response()])
    error = caught.value
    assert (error.code, error.index, error.path) == ("malformed_event", 0, "items[0]")
    assert "response.output" in str(error)


# --- the output item type kept for a result (openai_agents audit f5) --------------------------


@pytest.mark.parametrize("adapter", ["openai_responses", "openai_agents"])
@pytest.mark.parametrize("kind", ["web_search_call", "message", "function_call", "bogus", 5])
def test_a_kept_output_item_type_that_is_no_output_type_is_refused(adapter: str, kind: Any) -> None:
    # only hand-edited metadata holds one: written, it was an item no reader takes back
    messages = [HumanMessage(content="hi"),
                AIMessage(content="", tool_calls=[ToolCall(name="f", args={}, id="c1")]),
                ToolMessage(content="ok", tool_call_id="c1", metadata={adapter: {"item": kind}})]
    with pytest.raises(TraceError) as caught:
        get_adapter(adapter).from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 2, f"messages[2].metadata.{adapter}.item")


def test_a_hosted_result_reads_to_one_text_whichever_order_its_keys_came_in() -> None:
    # the server's JSON, and the SDK object the client builds from it (which orders its
    # fields otherwise): one item, so one conversation and one transcript hash
    raw = {"type": "mcp_call", "id": "mcp_1", "server_label": "docs", "name": "search",
           "arguments": "{}", "status": "completed", "output": "3 hits", "error": None,
           "approval_request_id": None}
    built = construct_type(value=raw, type_=ResponseOutputItem)
    user = {"role": "user", "content": "Docs?"}
    as_sent, as_built = to_messages([user, raw]), to_messages([user, built])
    assert as_sent[2] == ToolMessage(
        content='{"error": null, "output": "3 hits", "status": "completed"}',
        tool_call_id="mcp_1",
        name="mcp",
    )
    assert as_built == as_sent
    assert transcript_hash(as_built) == transcript_hash(as_sent)


def test_a_json_output_reads_to_its_text_with_keys_sorted_at_every_level() -> None:
    items = [
        {"role": "user", "content": "ls"},
        {"type": "shell_call", "call_id": "sh1", "action": {"commands": ["ls"]}},
        {"type": "shell_call_output", "call_id": "sh1",
         "output": [{"stdout": "", "outcome": {"type": "exit", "exit_code": 0}}]},
    ]
    messages = to_messages(items)
    assert messages[2].content == '[{"outcome": {"exit_code": 0, "type": "exit"}, "stdout": ""}]'
    assert from_messages(messages)[2]["output"] == items[2]["output"]


def test_a_json_output_text_in_another_key_order_is_not_representable() -> None:
    messages: list[Message] = [
        HumanMessage(content="shot"),
        AIMessage(tool_calls=[ToolCall(name="computer", args={"action": {"type": "screenshot"}},
                                       id="cc1", metadata={NS: {"item": "computer_call"}})]),
        ToolMessage(content='{"type": "computer_screenshot", "image_url": "https://s"}',
                    tool_call_id="cc1", metadata={NS: {"output": "json"}}),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].content")
