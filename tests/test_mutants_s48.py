"""Exact behaviour of this stop's fixes that no other test pins: every format character (Cf)
before a call line marks it in render; a block makes its call ids once; the stop handler raises
once and never after the command; ``require`` re-raises a missing tracebridge module even for a
package extra; a refused RUN_DIR keeps the ``.lock`` it had and lets go of it; a tool_use block
whose id is no string is malformed; and in LlamaIndex streams, human-input events (JSON or
objects) are checked and kept as copies, a surrogate key after a JSON reply holding it is refused
on the fast path too, a non-string ``tool_kwargs`` key is a conflict and not a crash (and,
beside a surrogate key, refused as ``dump_events`` refuses it), and a
surrogate key in a list of tool call args is not written."""

from __future__ import annotations

import fcntl
import importlib
import signal
import sys
import unicodedata
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import pytest
from evaluation_helpers import write_cases
from langchain_core import messages as lc
from llama_index.core.agent.workflow.workflow_events import (
    AgentInput,
    AgentOutput,
    ToolCallResult,
)
from llama_index.core.agent.workflow.workflow_events import ToolCall as ToolCallEvent
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import ToolOutput
from test_evaluation_fixes_s47 import _run, _scored
from test_llama_index_fixes_s48 import LONE, _call_message, _cannot_write, _result, caught
from workflows.events import InputRequiredEvent

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge._optional import require
from tracebridge.adapters import langchain, llama_index
from tracebridge.cli import _stop_signals, _StopHandler, _Stopped
from tracebridge.evaluation.record import RecordError, RunRecord
from tracebridge.render import render_message
from tracebridge.validation import _Block, _call_ids


def test_every_format_character_before_a_call_line_marks_it() -> None:
    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    text = "x\n" + "\n".join(f"{c}-> f" for c in cf)
    lines = render_message(AIMessage(content=text)).split("\n")[1:]
    assert [f"U+{ord(line[4]):04X}" for line in lines if not line.startswith("    \\")] == []
    assert (render_message(AIMessage(content="Done.\n\u0600-> f {}"))
            == "ai: Done.\n    \\\u0600-> f {}")


def test_a_block_makes_its_call_ids_once() -> None:
    block = _Block(1, [ToolCall(name="f", id=f"c{k}") for k in range(12)])
    first = _call_ids(block)
    assert block.call_ids is first
    assert _call_ids(block) is first


def test_the_stop_handler_raises_once_and_never_after_the_command() -> None:
    handler = _StopHandler()
    with pytest.raises(_Stopped):
        handler(signal.SIGTERM, None)
    try:  # (_Stopped is a KeyboardInterrupt: caught here, or it would stop pytest)
        assert handler(signal.SIGHUP, None) is None
        assert handler.received == signal.SIGTERM
        ended = _StopHandler()
        ended.over = True
        assert ended(signal.SIGTERM, None) is None
        assert ended.received is None
        with _stop_signals() as block:
            pass
        assert block.over is True
        assert block(signal.SIGTERM, None) is None
    except _Stopped as stopped:
        pytest.fail(f"the handler raised again: {stopped}")


def test_require_reraises_a_missing_tracebridge_module_even_for_a_package_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def gone(name: str) -> NoReturn:
        raise ModuleNotFoundError("No module named 'tracebridge._gone'", name="tracebridge._gone")

    monkeypatch.setattr(importlib, "import_module", gone)
    with pytest.raises(ModuleNotFoundError) as error:
        require("ray.data", adapter="Ray Data", extra="ray", package="ray[data]")
    assert type(error.value) is ModuleNotFoundError
    assert error.value.name == "tracebridge._gone"


def test_a_refused_run_dir_keeps_the_lock_file_it_had_and_lets_go_of_it(tmp_path: Path) -> None:
    out = tmp_path / "evals"
    out.mkdir()
    (out / "cases.jsonl").write_text('{"case_id": "mine-1"}\n')
    (out / ".lock").write_text("")
    cases = write_cases(tmp_path, [_scored("c1")], "smoke.jsonl")
    code, stdout, _err = _run(cases, out)
    assert (code, stdout) == (2, "")
    assert sorted(path.name for path in out.iterdir()) == [".lock", "cases.jsonl"]
    with open(out / ".lock") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_record_refused_on_open_lets_go_of_its_lock(tmp_path: Path) -> None:
    out = tmp_path / "evals"
    out.mkdir()
    (out / "results.jsonl").write_text('{"case_id": "mine-1"}\n')
    (out / ".lock").write_text("")
    record = RunRecord(out)  # (kept alive: the caller still holds it)
    with pytest.raises(RecordError):
        record.open({})
    with open(out / ".lock") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while the record holds it
    assert sorted(path.name for path in out.iterdir()) == [".lock", "results.jsonl"]


@pytest.mark.parametrize("calls", [[], [{"name": "f", "args": {}, "id": "c1"}]])
def test_a_call_block_id_that_is_no_string_is_malformed(calls: list[dict[str, Any]]) -> None:
    block = {"type": "tool_use", "id": 5, "name": "f", "input": {}}
    messages = [lc.HumanMessage(content="q"), lc.AIMessage(content=[block], tool_calls=calls),
                lc.ToolMessage(content="r", tool_call_id="c1")]
    with pytest.raises(TraceError) as error:
        langchain.to_messages(messages)
    assert (error.value.code, error.value.index, error.value.path, error.value.detail) == (
        "malformed_event", 1, "messages[1].content[0].id",
        "a tool_use block's id must be a string, got 5")


# --- llama_index --------------------------------------------------------------------------


def _head() -> list[Any]:
    inp = AgentInput(input=[ChatMessage(role="user", content="q")], current_agent_name="a")
    out = AgentOutput(response=_call_message({"k": 1}), current_agent_name="a", tool_calls=[])
    return [inp, out]


def _read(events: list[Any]) -> partial[Any]:
    return partial(llama_index.events_to_messages, events, allow_pending=True)


FORM = ("an InputRequiredEvent's JSON is {'_data': {...}} (the fields it was made with, as "
        "dump_events writes them); found ")


@pytest.mark.parametrize(("data", "expected"), [
    ({"_data": 5}, ("malformed_event", 2, "events[2].data._data", FORM + "'_data' = 5")),
    ({"_data": {}, "x": {}}, ("malformed_event", 2, "events[2].data.x", FORM + "'x' = {}")),
    ({"_data": {"v": float("nan")}}, ("unserializable_value", 2, "events[2].data._data.v",
                                      "nan is not a finite number")),
])
def test_human_input_json_is_checked(data: dict[str, Any], expected: tuple[Any, ...]) -> None:
    events = [*llama_index.dump_events(_head()), {"event": "InputRequiredEvent", "data": data}]
    assert caught(_read(events)) == expected


def test_a_human_input_object_holding_nan_is_refused_as_dump_events_refuses_it() -> None:
    why = "nan, which JSON has no form for (LlamaIndex's dump writes null in its place)"
    assert caught(lambda: llama_index.dump_events([InputRequiredEvent(v=float("nan"))])) == (
        "unserializable_value", 0, "events[0].data._data.v", why)
    for _ in range(2):  # (the type first met, then seen before)
        events = [*_head(), InputRequiredEvent(v=float("nan"))]
        assert caught(_read(events)) == ("unserializable_value", 2, "events[2].data._data.v", why)


def test_human_input_kept_is_a_copy_of_the_json() -> None:
    data = {"_data": {"v": {"w": 1}}}
    events = [*llama_index.dump_events(_head()), {"event": "InputRequiredEvent", "data": data}]
    read = llama_index.events_to_messages(events, allow_pending=True)
    data["_data"]["v"]["w"] = 2
    assert read[1].metadata == {"llama_index": {"event": {"human_input": [
        {"event": "InputRequiredEvent", "data": {"_data": {"v": {"w": 1}}}}]}}}


def test_a_surrogate_key_event_object_after_a_json_reply_holding_it_is_refused() -> None:
    head = llama_index.dump_events(_head())
    head[1]["data"]["response"]["blocks"][0]["tool_kwargs"] = {LONE: 1}
    for make, cls in [
            (lambda k: ToolCallEvent(tool_id="c1", tool_name="f", tool_kwargs=k), "ToolCall"),
            (_result, "ToolCallResult")]:
        llama_index.events_to_messages([*_head(), make({"k": 1})], allow_pending=True)  # type seen
        assert caught(_read([*head, make({LONE: 1})])) == (
            "unserializable_value", 2, "events[2].data.tool_kwargs",
            _cannot_write(cls, "PydanticSerializationError"))


def test_a_fast_read_result_holding_a_surrogate_key_after_a_json_reply_is_refused() -> None:
    def result(kwargs: dict[str, Any]) -> ToolCallResult:
        return ToolCallResult(tool_name="f", tool_kwargs=kwargs, tool_id="c1", return_direct=False,
                              tool_output=ToolOutput(content="r", tool_name="f", raw_output="r",
                                                     raw_input={"args": (), "kwargs": kwargs}))

    llama_index.events_to_messages([*_head(), result({"k": 1})], allow_pending=True)  # type seen
    head = llama_index.dump_events(_head())
    head[1]["data"]["response"]["blocks"][0]["tool_kwargs"] = {LONE: 1}
    assert caught(_read([*head, result({LONE: 1})])) == (
        "unserializable_value", 2, "events[2].data.tool_output.raw_input",
        "LlamaIndex cannot write this ToolOutput as JSON: UnicodeEncodeError: 'utf-8' codec can't "
        "encode character '\\udc00' in position 0: surrogates not allowed")


def test_a_tool_call_event_with_a_non_string_key_is_a_conflict_not_a_crash() -> None:
    for _ in range(2):
        event = ToolCallEvent(tool_id="c1", tool_name="f", tool_kwargs={"k": 1})
        event.tool_kwargs = {1: "x"}  # (no validation on assignment)
        assert caught(_read([*_head(), event])) == (
            "conflicting_fields", 2, "events[2].data",
            "call 'c1' is f({1: 'x'}) here, but the AgentOutput before it has f({'k': 1}); "
            "both must agree")


@pytest.mark.parametrize("kwargs", [{1: "x", LONE: 1}, {LONE: float("nan")}, {LONE: (1, 2)},
                                    {"a": {1: 2}, LONE: 1}])
def test_tool_call_kwargs_not_json_and_holding_a_surrogate_key_are_refused_as_dumped(
    kwargs: dict[Any, Any],
) -> None:
    """The event object is refused where and as ``dump_events`` refuses it, whatever else its
    kwargs hold (before: conflicting_fields when they were not plain JSON too)."""
    event = ToolCallEvent(tool_id="c1", tool_name="f", tool_kwargs={"k": 1})
    event.tool_kwargs = kwargs  # (no validation on assignment)
    read = caught(_read([*_head(), event]))
    dumped = caught(partial(llama_index.dump_events, [event]))
    assert read[:3] == ("unserializable_value", 2, "events[2].data.tool_kwargs")
    assert dumped[:3] == ("unserializable_value", 0, "events[0].data.tool_kwargs")
    assert read[3] == dumped[3]
    assert read[3].startswith("LlamaIndex cannot write this ToolCall as JSON")


def test_a_surrogate_key_in_a_list_is_not_written() -> None:
    call = ToolCall(name="f", args={"a": [1, {LONE: 1}]}, id="c1")
    messages = [HumanMessage(content="q"), AIMessage(tool_calls=[call]),
                ToolMessage(content="r", tool_call_id="c1")]
    got = caught(lambda: llama_index.from_messages(messages))
    assert got[:3] == ("not_representable", 1, "messages[1].tool_calls[0].args.a[1]")
