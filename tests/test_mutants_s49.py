"""Exact behaviour of this stop's fixes that no other test pins: the overflow refusal's count
of requests, the notice of ``convert --keep-going -o -`` naming standard output, Galtea's
separator beside whitespace-only text and ``CurrentTurn`` compared with what is no tuple,
which named tuples LangChain takes for a LangGraph ``StateSnapshot`` and the hint each
snapshot gets, ``load_results`` over several folders and with Arrow's text on one line, a NUL
in a name ``sample`` checks against standard input, a case's list option as a tuple, and in
LlamaIndex: where results that finish out of call order are placed, which result
``taken_by_position`` names, and calls whose id is ``""``."""

from __future__ import annotations

import asyncio
import json
import os
from collections import namedtuple
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from cli_helpers import CALL, CHAT, run
from langchain_core.messages import HumanMessage as LcHumanMessage
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from test_llama_fixes_s49 import AllAtOnce
from test_llama_index_events_audit import read
from test_llama_index_fixes2_s47 import block
from test_llama_index_fixes_s47 import calls, say, scripted
from test_llama_index_fixes_s47 import run as agent_run

from tracebridge import AIMessage, HumanMessage, ToolCall, TraceError
from tracebridge._cli_sample import _reads_standard_input
from tracebridge.adapters import galtea, llama_index
from tracebridge.adapters import langchain as lc
from tracebridge.evaluation._estimate import Estimate
from tracebridge.evaluation.budget import Budget
from tracebridge.evaluation.cases import _option_value
from tracebridge.options import Option

ORPHAN = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "?"}]


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- the overflow refusal counts the overflowing requests -------------------------------------


@pytest.mark.parametrize("cost", [0.01, None], ids=["priced", "unpriced"])
def test_a_limit_refusal_counts_only_the_requests_beyond_a_float(cost: float | None) -> None:
    planned = [Estimate(1, 10, 10, cost), Estimate(1, 10, 10, None, overflow=True)]
    assert Budget(max_cost=1).fits(planned) == (
        "the planned work costs more dollars than a number here holds (1 of 2 requests, at "
        "their price) and a cost limit is set")


# --- convert --keep-going -o - names standard output ------------------------------------------


def test_convert_keep_going_to_dash_names_standard_output_in_its_notice() -> None:
    stdin = "".join(json.dumps(trace) + "\n" for trace in (CHAT, ORPHAN, CALL))
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going", "-o", "-", stdin=stdin)
    assert code == 1
    assert [json.loads(line) for line in stdout.splitlines()] == [CHAT, CALL]
    assert err.splitlines()[-1].startswith("tracebridge: standard output ")  # OUT, named


# --- Galtea: whitespace is text; CurrentTurn and what is no tuple -----------------------------


def test_whitespace_only_text_is_joined_with_its_separator() -> None:
    trace = [HumanMessage(content="a"), HumanMessage(content=" "), AIMessage(content="M")]
    assert galtea.from_messages(trace, join_consecutive="\n") == [
        {"role": "user", "content": "a\n "}, {"role": "assistant", "content": "M"}]


def test_a_current_turn_leaves_comparison_with_a_non_tuple_to_the_other_side() -> None:
    turn = galtea.split_current_turn([HumanMessage(content="q"), AIMessage(content="a")])
    assert (turn == mock.ANY, turn != mock.ANY) == (True, False)


# --- LangChain: only LangGraph's StateSnapshot is one, and its hints --------------------------


def test_a_named_tuple_with_values_not_named_state_snapshot_is_read_as_a_tuple() -> None:
    Row = namedtuple("Row", ["values"])
    row = Row(values={"messages": [LcHumanMessage("q")]})
    assert lc.detect(row) is False
    with pytest.raises(TraceError) as caught:
        lc.to_messages(row)
    assert _where(caught.value) == ("malformed_event", 0, "messages[0]")
    assert "named tuple" not in caught.value.detail
    assert caught.value.detail.startswith("expected a BaseMessage")


def test_a_named_tuple_named_state_snapshot_without_values_is_no_snapshot() -> None:
    StateSnapshot = namedtuple("StateSnapshot", ["messages"])
    snapshot = StateSnapshot(messages=[LcHumanMessage("q")])
    assert lc.detect(snapshot) is False
    with pytest.raises(TraceError) as caught:
        lc.to_messages(snapshot)
    assert _where(caught.value) == ("malformed_event", 0, "messages[0]")
    assert "named tuple" not in caught.value.detail


StateSnapshot = namedtuple("StateSnapshot", ["values", "next"])


@pytest.mark.parametrize(
    ("values", "hint"),
    [
        ({"history": [LcHumanMessage("q")]}, "pass the messages its values hold"),
        ((LcHumanMessage("q"),), "pass snapshot.values"),
        ([LcHumanMessage("q")], "pass snapshot.values"),
    ],
    ids=["state-without-messages", "tuple-state", "list-state"],
)
def test_a_snapshot_hint_fits_what_its_values_hold(values: Any, hint: str) -> None:
    with pytest.raises(TraceError) as caught:
        lc.to_messages(StateSnapshot(values=values, next=()))
    assert _where(caught.value) == ("malformed_event", None, None)
    assert caught.value.detail == (
        "expected a list of messages or a state {'messages': [...]}, got a StateSnapshot (a "
        f"named tuple of values, next): {hint}")


# --- load_results: several folders; Arrow's text on one line ----------------------------------


def _results_folder(folder: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracebridge.metrics.base import MetricResult

    result = MetricResult(name="goal", value=1.0, metric_version="v1", judge="j",
                          transcript_hash="h")
    folder.mkdir()
    pq.write_table(pa.table({"key": ["k1"], "state": ["scored"], "result": [result.to_json()],
                             "scored_at": ["2026-01-01T00:00:00Z"]}), folder / "part.parquet")
    return folder


def test_earlier_results_load_beside_an_empty_folder(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from tracebridge.ray_data import load_results

    empty = tmp_path / "empty"
    empty.mkdir()
    results = _results_folder(tmp_path / "results")
    alone = load_results(results)
    assert list(alone) == ["k1"]
    assert load_results([empty, results]) == alone
    assert load_results([results, empty]) == alone


def test_a_parquet_file_that_holds_no_results_is_told_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracebridge.evaluation.cache import CacheError
    from tracebridge.ray_data import load_results

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(CacheError) as caught:
        load_results(path)
    message = str(caught.value)
    assert message.startswith(f"earlier results ['{path}']: cannot read them: No match for ")
    assert "\n" not in message


# --- sample: a NUL in a name is no name of standard input -------------------------------------


def test_a_name_holding_nul_is_not_standard_input() -> None:
    read, write = os.pipe()
    try:
        assert _reads_standard_input("a\x00b", os.fstat(read)) is False
    finally:
        os.close(read)
        os.close(write)


# --- a case's list option reaches the reader as a tuple ---------------------------------------


def test_a_list_source_option_is_given_as_a_tuple() -> None:
    value = _option_value(Option("drop", "list", (), ("x", "y")), ["y", "x"])
    assert (type(value), value) == (tuple, ("y", "x"))


# --- LlamaIndex: results that finish out of call order ----------------------------------------


def finishing_in(order: list[int]) -> Any:
    """``add``, its calls (``a`` says which) finishing in ``order``."""
    done: dict[int, asyncio.Event] = {}

    async def add(a: int, b: int) -> int:
        """Add."""
        place = order.index(a)
        if place > 0:
            await done.setdefault(order[place - 1], asyncio.Event()).wait()
            await asyncio.sleep(0.002)
        done.setdefault(a, asyncio.Event()).set()
        return a + b

    return add


def out_of_order_run(order: list[int], ids: dict[int, str]) -> list[Any]:
    """The events of calls ``add(k, 1)`` (with the id ``ids[k]``, if any), finishing in
    ``order``."""
    blocks = [ToolCallBlock(tool_name="add", tool_call_id=ids.get(k), tool_kwargs={"a": k, "b": 1})
              for k in range(len(order))]
    script = [calls(*blocks), say("done")]
    events, _ = agent_run(script, ["q"],
                          AllAtOnce(tools=[finishing_in(order)], llm=scripted(script)))
    assert [event.tool_kwargs["a"] for event in events
            if type(event).__name__ == "ToolCallResult"] == order
    return events


def test_results_without_ids_finishing_out_of_order_are_placed_in_call_order() -> None:
    messages = read(out_of_order_run([2, 0, 1], {}))
    assert [(m.content, m.tool_call_id) for m in messages[2:5]] == [
        ("1", None), ("2", None), ("3", None)]


def test_a_result_with_an_id_moves_the_idless_results_after_it_on() -> None:
    messages = read(out_of_order_run([2, 1, 0], {1: "c1"}))
    assert [(m.content, m.tool_call_id) for m in messages[2:5]] == [
        ("2", "c1"), ("1", None), ("3", None)]


# --- LlamaIndex: which result took a call by position ----------------------------------------


def _tool(content: str, call_id: str) -> ChatMessage:
    return ChatMessage(role="tool", content=content, additional_kwargs={"tool_call_id": call_id})


@pytest.mark.parametrize(
    "first_id", ["", "c1"], ids=["two-idless-results", "a-result-with-an-id-first"])
def test_the_result_that_took_a_call_by_position_is_the_one_named(first_id: str) -> None:
    history = [ChatMessage(role="user", content="q"),
               calls(block("add", 1, 2, "c1"), block("add", 5, 2, "c2")),
               _tool("3", first_id), _tool("7", ""), _tool("7", "c2")]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    assert _where(caught.value) == ("orphan_tool_result", 4, "messages[4].tool_call_id")
    assert caught.value.detail.startswith(
        "messages[3] took call 'c2' before its own result here: messages[3] names no call ")


# --- LlamaIndex: calls whose id is "" ---------------------------------------------------------


def test_an_empty_id_of_a_call_kept_with_its_entry_stays_the_calls_id() -> None:
    entry = {"id": "", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'},
             "extra": 1}
    reply = ChatMessage(role="assistant",
                        blocks=[ToolCallBlock(tool_call_id="", tool_name="add",
                                              tool_kwargs={"a": 1})],
                        additional_kwargs={"tool_calls": [entry]})
    messages = llama_index.to_messages([ChatMessage(role="user", content="q"), reply],
                                       allow_pending=True)
    assert [(call.id, call.metadata) for call in messages[1].tool_calls] == [
        ("", {"llama_index": {"entry": {"type": "function", "function": {"arguments": '{"a": 1}'},
                                        "extra": 1}, "entry_index": 0}})]


def test_a_kept_empty_id_beside_calls_written_as_entries_is_refused() -> None:
    custom = ToolCall(kind="custom", name="c", id="c0", args={"input": "x"})
    idless = ToolCall(name="add", args={"a": 1}, metadata={"llama_index": {"tool_call_id": ""}})
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages([HumanMessage(content="q"),
                                   AIMessage(content="", tool_calls=[custom, idless])])
    assert _where(caught.value) == (
        "not_representable", 1, "messages[1].tool_calls[1].metadata.llama_index.tool_call_id")
    assert ("keeps the \"\" of the call's ToolCallBlock, but the message's calls are written as "
            "additional_kwargs entries (so that they read back in order), which have no block: "
            "it would be lost") in caught.value.detail


def test_a_kept_empty_id_beside_a_kept_function_call_is_refused() -> None:
    call = ToolCall(name="add", args={"a": 1},
                    metadata={"llama_index": {"tool_call_id": "", "function_call": {}}})
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages([HumanMessage(content="q"),
                                   AIMessage(content="", tool_calls=[call])])
    assert _where(caught.value) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.llama_index.tool_call_id")
    assert caught.value.detail.endswith(
        "keeps the \"\" of the ToolCallBlock of a call without an id; the call is written as "
        "an additional_kwargs entry, which has no block: nothing writes it, so it would be lost")


# --- LlamaIndex: alike calls, one whose text did not parse ------------------------------------


def counting_add() -> Any:
    """``add`` answering 1, then 2, ... (whatever it is given), in the order it is called."""
    answers = iter(range(1, 100))

    async def add(a: int, b: int) -> int:
        """Add."""
        return next(answers)

    return add


@pytest.mark.parametrize("unparsed_first", [True, False], ids=["unparsed-first", "parsed-first"])
def test_alike_calls_one_unparsed_each_take_their_own_result(unparsed_first: bool) -> None:
    unparsed = ToolCallBlock(tool_name="add", tool_kwargs='{"a": 1, "b": 1')
    parsed = ToolCallBlock(tool_name="add", tool_kwargs={"a": 1, "b": 1})
    script = [calls(*([unparsed, parsed] if unparsed_first else [parsed, unparsed])),
              say("done")]
    events, _ = agent_run(script, ["q"], AllAtOnce(tools=[counting_add()], llm=scripted(script)))
    messages = read(events)
    kept = {"a": 1, "b": 1}
    assert [(m.content, m.metadata["llama_index"]["event"].get("tool_kwargs"))
            for m in messages[2:4]] == (
        [("1", kept), ("2", None)] if unparsed_first else [("1", None), ("2", kept)])
