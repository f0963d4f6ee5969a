"""Tests that kill the mutants of today's fixes that survived the s47 mutation audit
(/tmp/s47/audit_mut/report.md, "Survivors: equivalent or real gap"). Each test pins what
the code does now for the input the audit found, and names its mutant id."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage as LCAIMessage
from langchain_core.messages import HumanMessage as LCHumanMessage
from llama_index.core.llms import ChatMessage
from otel_helpers import refused, where
from test_galtea_audit2 import _refused
from test_galtea_ray_fixes_s47 import FILE_PART, _galtea
from test_langchain_stale_fixes_s47 import refused_write
from test_llama_index_fixes_s47 import add_call, calls, run, say
from test_otel_fixes_s47 import CALLED, CUT

from tracebridge import (
    AIMessage,
    Citation,
    HumanMessage,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import galtea, langchain, llama_index, otel, swarm
from tracebridge.evaluation import cli as evaluation_cli

# --- llama_index --------------------------------------------------------------------------


def test_l02_an_idless_tool_call_event_with_other_arguments_names_the_first_idless_call(
) -> None:
    events, _ = run([calls(add_call(1, 2)), calls(add_call(5, 2)), say("done")], ["q"])
    dumped = json.loads(json.dumps(llama_index.dump_events(events)))
    assert dumped[8]["event"] == "ToolCall"  # the second run's ToolCall
    dumped[8]["data"]["tool_kwargs"] = {"a": 6, "b": 2}
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(dumped)
    error = caught.value
    assert (error.code, error.index, error.path) == ("conflicting_fields", 8, "events[8].data")
    assert error.detail == ("call '' is add({'a': 6, 'b': 2}) here, but the AgentOutput before "
                            "it has add({'a': 5, 'b': 2}); both must agree")


def test_l20_a_history_result_with_a_null_call_id_keeps_its_name_when_stripped() -> None:
    read = llama_index.to_messages([
        ChatMessage(role="user", content="q"), calls(add_call(1, 2)),
        ChatMessage(role="tool", content="3",
                    additional_kwargs={"tool_call_id": None, "name": "add"})])
    kept = {"llama_index": {"additional_kwargs": {"tool_call_id": None}}}
    assert read[2] == ToolMessage(content="3", tool_call_id=None, name="add", metadata=kept)
    stripped = llama_index.strip_event_extras(read)
    assert stripped == read
    assert stripped[2].name == "add"


# --- otel ---------------------------------------------------------------------------------


TOOL_KEYS = ("gen_ai.tool.call.id", "gen_ai.tool.call.result", "gen_ai.tool.call.arguments",
             "gen_ai.tool.name", "tool_call.id", "tool.id", "tool.name")


def test_o08_the_tool_keys_are_the_ones_the_adapter_knows() -> None:
    from tracebridge.adapters.otel import _calls

    assert _calls.TOOL_KEYS == TOOL_KEYS


@pytest.mark.parametrize("key", TOOL_KEYS)
def test_o08_a_cut_span_holding_only_one_tool_key_is_truncated(key: str) -> None:
    written = otel.from_messages(
        [*CALLED, ToolMessage(content="RESULT", tool_call_id="c1", name="f")],
        convention="genai")
    document = json.loads(json.dumps(written))
    cut = document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    cut["attributes"] = [{"key": key, "value": {"stringValue": "x"}}]
    cut["droppedAttributesCount"] = 1
    error = refused(document, allow_pending=True)
    assert where(error) == ("truncated_trace", 1, "resourceSpans[0].scopeSpans[0].spans[1]")
    assert error.detail == CUT.format(key=key)


# --- galtea -------------------------------------------------------------------------------


def test_g06_metadata_of_zero_and_minus_zero_do_not_join() -> None:
    read = galtea.to_messages([
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "metadata": {"k": 0.0}},
        {"role": "assistant", "content": "b", "metadata": {"k": -0.0}}])
    assert _refused(galtea.from_messages, read, join_consecutive="\n") == (
        "not_representable", 2, "messages[2].metadata.galtea")


def test_g08_a_files_clash_names_the_message_the_files_came_from() -> None:
    messages = [HumanMessage(content="a"), HumanMessage(content=[FILE_PART]),
                HumanMessage(content=[FILE_PART])]
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, join_consecutive="\n")
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].metadata.galtea")
    assert error.detail.startswith("cannot join messages[1] and messages[2]: ")


def test_g13_split_names_the_output_files_at_the_message_they_came_from() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="a"),
                AIMessage(content="b", metadata=_galtea(metadata={"k": 1})),
                AIMessage(content=[FILE_PART])]
    assert _refused(galtea.split_current_turn, messages, shape="roles",
                    join_consecutive="\n") == (
        "not_representable", 3, "messages[3].metadata.galtea")


def test_g15_split_of_an_unanswered_question_names_the_joined_question() -> None:
    messages = [HumanMessage(content="q"),
                HumanMessage(content="r", metadata=_galtea(metadata={"k": 1}))]
    assert _refused(galtea.split_current_turn, messages, shape="roles",
                    join_consecutive="\n") == ("not_representable", 0, "messages[0]")


# --- swarm --------------------------------------------------------------------------------


def _swarm_refused(trace: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        swarm.to_messages(trace)
    return caught.value.code, caught.value.index, caught.value.path


def test_s02_a_fault_before_the_first_stream_marker_is_told_as_it_is() -> None:
    trace = [{"role": "user", "content": 5},
             {"role": "assistant", "content": "hi", "sender": "A"}, {"delim": "start"}]
    assert _swarm_refused(trace) == ("malformed_event", 0, "messages[0].content")


def test_s04_a_response_key_beside_other_keys_is_not_a_stream_response() -> None:
    trace = [{"role": "user", "content": "hi"}, {"response": {"messages": []}, "content": "x"}]
    assert _swarm_refused(trace) == ("malformed_event", 1, "messages[1]")


def test_s05_a_delim_that_is_not_text_is_malformed() -> None:
    numpy = pytest.importorskip("numpy")
    trace = [{"role": "user", "content": "hi"}, {"delim": numpy.array([1, 2])}]
    assert _swarm_refused(trace) == ("malformed_event", 1, "messages[1]")


# --- langchain ----------------------------------------------------------------------------


def _cited(entry: dict[str, Any]) -> AIMessage:
    read = langchain.to_messages([LCHumanMessage(content="q"), LCAIMessage(
        content=[{"type": "text", "text": "x", "citations": [entry]}])])
    message = read[-1]
    assert isinstance(message, AIMessage)
    return message


def test_n08_a_web_search_result_without_url_is_no_citation() -> None:
    entry = {"type": "web_search_result_location", "cited_text": "c", "title": "T",
             "encrypted_index": "e"}
    assert _cited(entry) == AIMessage(content=[TextPart(text="x", metadata={"langchain": {
        "shape": "text", "block": {"type": "text", "citations": [entry]}}})])


def test_n11_a_web_search_results_document_title_stays_in_its_annotation() -> None:
    entry = {"type": "web_search_result_location", "cited_text": "c", "url": "https://a",
             "title": "T", "document_title": "D", "encrypted_index": "e"}
    assert _cited(entry) == AIMessage(
        content=[TextPart(text="x", metadata={"langchain": {
            "shape": "text", "block": {"type": "text", "citations": []}}})],
        citations=[Citation(url="https://a", title="T", cited_text="c", metadata={
            "langchain": {"in_block": 0, "at": 0, "in_list": "citations", "annotation": {
                "type": "web_search_result_location", "document_title": "D",
                "encrypted_index": "e"}}})])


def test_n16_a_citations_list_mark_without_its_block_is_refused() -> None:
    error = refused_write([HumanMessage(content="q"), AIMessage(content="x", citations=[
        Citation(url="https://a", metadata={"langchain": {"in_list": "citations"}})])])
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].citations[0].metadata.langchain.in_list")
    assert error.detail == (
        "metadata.langchain.in_list is kept as 'citations'; the reader keeps it only as "
        "'citations', beside in_block, on a citation read from a text block's citations: "
        "written, the citation would read back without it")


RAW = "additional_kwargs.tool_calls"
FC = "additional_kwargs.function_call"
RAW_CALLS = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]
FC1 = {"name": "f", "arguments": '{"a": 1}'}


def test_n30_a_call_stale_in_both_copies_is_marked_for_both_and_round_trips() -> None:
    message = LCAIMessage(content="", tool_calls=[{"name": "f", "args": {"a": 2}, "id": "c1"}],
                          additional_kwargs={"tool_calls": RAW_CALLS, "function_call": FC1})
    trace = [LCHumanMessage(content="q"), message]
    read = langchain.to_messages(trace, allow_pending=True)
    assert read[-1] == AIMessage(
        content="",
        tool_calls=[ToolCall(name="f", args={"a": 2}, id="c1",
                             metadata={"langchain": {"stale": [RAW, FC]}})],
        metadata={"langchain": {"additional_kwargs": {"tool_calls": RAW_CALLS,
                                                      "function_call": FC1}}})
    assert langchain.from_messages(read) == trace


def _stale_refused(messages: list[Any]) -> TraceError:
    error = refused_write(messages)
    assert (error.index, error.path) == (1, "messages[1].tool_calls[0].metadata.langchain.stale")
    return error


def _marked(stale: Any) -> list[Any]:
    return [HumanMessage(content="q"), AIMessage(content="", tool_calls=[ToolCall(
        name="f", args={}, id="c1", metadata={"langchain": {"stale": stale}})])]


def test_n42_a_stale_content_mark_without_a_kept_block_is_refused() -> None:
    error = _stale_refused(_marked(["content"]))
    assert error.code == "not_representable"
    assert error.detail == (
        "this call is marked as having a stale content block (metadata.langchain.stale names "
        "'content'), and it keeps no block (metadata.langchain.content_block): it would read "
        "back without the mark")


def test_n43_a_stale_mark_that_is_not_a_list_is_malformed() -> None:
    error = _stale_refused(_marked("content"))
    assert error.code == "malformed_event"
    assert error.detail == (
        "metadata.langchain.stale is 'content', not a list, as to_messages writes it")


def _call(name: str, args: dict[str, Any], call_id: str, stale: list[str] | None = None
          ) -> ToolCall:
    return ToolCall(name=name, args=args, id=call_id,
                    metadata={"langchain": {"stale": stale}} if stale else {})


def _reply(tool_calls: list[ToolCall], kept: dict[str, Any] | None = None) -> list[Any]:
    metadata = {"langchain": {"additional_kwargs": kept}} if kept else {}
    return [HumanMessage(content="q"), AIMessage(content="", tool_calls=tool_calls,
                                                 metadata=metadata),
            *[ToolMessage(content="r", tool_call_id=call.id) for call in tool_calls]]


def _stale_detail(copy: str, why: str) -> str:
    return (f"this call is marked as having a stale copy in {copy} (metadata.langchain.stale), "
            f"but {why}: it would read back without the mark (take '{copy}' out of the mark)")


@pytest.mark.parametrize(("mutant", "messages", "copy", "why"), [
    ("N49", _reply([_call("f", {"a": 2}, "c1", [RAW])]), RAW,
     "the message keeps no additional_kwargs.tool_calls "
     "(metadata.langchain.additional_kwargs.tool_calls)"),
    ("N46", _reply([_call("f", {"a": 2}, "c1", [FC]), _call("g", {}, "c2")],
                   {"function_call": FC1}), FC,
     "only the last call of tool_calls has its copy there"),
    ("N47", _reply([_call("f", {"a": 1}, "c1", [FC])], {"function_call": FC1}), FC,
     "the function_call kept with the message copies the calls as they are now"),
    ("N48", _reply([_call("f", {"a": 2}, "c1", [FC])],
                   {"function_call": {"name": "h", "arguments": "{}"}}), FC,
     "the function_call kept with the message no longer names the call"),
])
def test_n46_to_n49_a_stale_mark_the_message_contradicts_is_refused(
    mutant: str, messages: list[Any], copy: str, why: str
) -> None:
    error = _stale_refused(messages)
    assert error.code == "not_representable", mutant
    assert error.detail == _stale_detail(copy, why), mutant


def test_n57_a_reasoning_item_id_that_is_not_text_stays_in_the_kept_item() -> None:
    read = langchain.to_messages([LCHumanMessage(content="q"), LCAIMessage(
        content="a", additional_kwargs={"reasoning": {
            "type": "reasoning", "id": 5,
            "summary": [{"type": "summary_text", "text": "s"}]}})])
    assert read[-1].content[0] == ReasoningPart(text="s", id=None, metadata={"langchain": {
        "from": "reasoning", "block": {"type": "reasoning", "id": 5}, "content": "string"}})


def test_n64_a_kept_reasoning_item_with_another_id_than_its_part_is_refused() -> None:
    part = ReasoningPart(text="s", id="rs_2", metadata={"langchain": {
        "from": "reasoning", "block": {"type": "reasoning", "id": "rs_1"}, "content": "string"}})
    error = refused_write([HumanMessage(content="q"),
                           AIMessage(content=[part, TextPart(text="a")])])
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")
    assert error.detail.startswith(
        "the reasoning item kept for this part (metadata.langchain) holds the id 'rs_1', "
        "which is not the part's id 'rs_2'")


# --- evaluation ---------------------------------------------------------------------------


def test_e07_the_cache_is_closed_when_closing_the_judge_is_interrupted() -> None:
    closed: list[str] = []

    class Judge:
        async def aclose(self) -> None:
            raise KeyboardInterrupt

    class Cache:
        def close(self) -> None:
            closed.append("cache")

    class Runner:
        judge = Judge()
        cache = Cache()

        async def run(self) -> dict[str, Any]:
            return {"status": "complete"}

    termination = evaluation_cli._Termination()
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(evaluation_cli._go(Runner(), termination))  # type: ignore[arg-type]
    assert closed == ["cache"]
    assert termination.finished == {"status": "complete"}
