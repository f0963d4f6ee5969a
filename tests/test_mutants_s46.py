"""What a mutation run of this stop's fixes (7620d25..55c5dff) found unpinned: 18 mutants
survived every test and differ from the code on some input. Each test here pins that input's
exact answer (code, index, path, detail or value).

* openai_chat/swarm: role-less dicts at the start of a trace, and an empty ``tool_calls``,
  are no stream's deltas (C07, C11).
* langchain: a ``tool_calls`` that is not a list is not walked call by call (L07); a gap
  names every call that keeps no block (L19).
* llama_index: only a refusal for not agreeing with what was read (``conflicting_fields``,
  ``ambiguous_trace``) gives way to an earlier rule fault (M08, M11); a repeated call id and
  a result logged twice are told where they are although a later event is malformed (M13,
  M14, M15, M16, M17, M24); calls without an id are no repeated id (M20).
* core: ``==`` counts the sign of a zero in a float field (X02), ``same_json(...,
  zero_signs=True)`` does too (X05), and a model compared with what is no model is unequal
  (X24).
* the JSON stream: only JSON's own blanks make a document alone on its line (K05); a
  character cut by the end of a pipe is refused as in a file (K11).

The llama_index streams are real ``FunctionAgent`` runs with a scripted mock LLM, in the
three forms a stream comes in (objects, ``dump_events`` JSON, the workflow serializer's
JSON).
"""

from __future__ import annotations

import copy
import io
import os
from typing import IO, Any

import pytest
from langchain_core.messages import AIMessage as LcAIMessage
from langchain_core.messages import HumanMessage as LcHumanMessage
from llama_index.core.agent.workflow import FunctionAgent
from test_langchain_edited_calls import _text_then_block_trace
from test_llama_index_events_audit import (
    call,
    calls,
    forms,
    kinds,
    read,
    refused,
    say,
    scripted,
)
from test_llama_index_fixes_s46 import _parallel_run, add, run_turns

from tracebridge import HumanMessage, OpaquePart, TraceError
from tracebridge._json import same_json
from tracebridge._jsonstream import ESCAPE, JsonDocuments, Record
from tracebridge.adapters import langchain, llama_index, openai_chat, swarm

NO_ROLE = "a message needs 'role' (one of system, developer, user, assistant, tool, function)"


def _error(read: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    with pytest.raises(TraceError) as caught:
        read(*args, **kwargs)
    error = caught.value
    return error.code, error.index, error.path, error.detail


# --- openai_chat / swarm: what is no stream's delta -----------------------------------------


@pytest.mark.parametrize("adapter", [openai_chat, swarm], ids=["openai_chat", "swarm"])
def test_role_less_dicts_that_begin_a_trace_are_malformed_not_a_stream(adapter: Any) -> None:
    # C07: no assistant message comes before them (the check must not look at trace[-1],
    # the assistant message at the end)
    trace = [{"content": "Hel"}, {"content": "lo"}, {"role": "assistant", "content": "Hello"}]
    assert _error(adapter.to_messages, trace, allow_pending=True) == (
        "malformed_event", 0, "messages[0]", f"{NO_ROLE}; found keys ['content']")


@pytest.mark.parametrize("adapter", [openai_chat, swarm], ids=["openai_chat", "swarm"])
def test_an_empty_tool_calls_list_after_an_assistant_message_is_no_delta(adapter: Any) -> None:
    # C11: a tool-call delta holds at least one call
    trace = [{"role": "user", "content": "q"}, {"role": "assistant", "content": ""},
             {"content": "a", "tool_calls": []}, {"content": "b"}]
    assert _error(adapter.to_messages, trace, allow_pending=True) == (
        "malformed_event", 2, "messages[2]", f"{NO_ROLE}; found keys ['content', 'tool_calls']")


# --- langchain ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping the changed field
def test_tool_calls_set_to_a_tuple_are_refused_as_a_whole_call_not_at_its_id() -> None:
    # L07: only a list of calls is checked key by key; a tuple's call is refused whole
    reply = LcAIMessage(content="", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
    reply.tool_calls = ({"name": "f", "args": {}},)  # type: ignore[assignment]
    assert _error(langchain.to_messages, [LcHumanMessage("q"), reply], allow_pending=True) == (
        "malformed_event", 1, "messages[1].tool_calls[0]",
        "a tool call has name, args, id and type 'tool_call'; got {'name': 'f', 'args': {}}")


def test_a_gap_names_every_call_that_keeps_no_block() -> None:
    # L19: c2 and c3 are in tool_calls only; with both text parts taken out, c1's block (at
    # 2) has no place, and the two blockless calls account for the two missing places
    messages = langchain.to_messages(_text_then_block_trace(
        {"name": "g", "args": {}, "id": "c2", "type": "tool_call"},
        {"name": "h", "args": {}, "id": "c3", "type": "tool_call"}), allow_pending=True)
    cut = [messages[0], messages[1].model_copy(update={"content": []})]
    code, index, path, detail = _error(langchain.from_messages, cut)
    assert (code, index, path) == ("not_representable", 1, "messages[1].tool_calls")
    assert detail == (
        "the calls' content blocks (metadata.langchain.content_block.at) leave a gap: the "
        "block of tool_calls[0] belongs at position 2, but only 0 content elements come "
        "before it, and tool_calls[1], tool_calls[2] keep no block: content elements before "
        "it were taken out, or a call lost its block (keep the block of a call edited to "
        "lose it, or number the later blocks' positions anew)")


# --- llama_index: the first fault of a stream is told where it is ---------------------------


def _edited(events: list[Any], at: int, key: str, value: Any) -> list[list[Any]]:
    """The stream in its three forms, with field ``key`` of event ``at`` set to ``value``
    (as an edit after the run would leave it: an object's field set without validation)."""
    objects, dumped, serialized = forms(events)
    edited = list(objects)
    event = edited[at].model_copy()
    event.__dict__[key] = value
    edited[at] = event
    dumped, serialized = copy.deepcopy(dumped), copy.deepcopy(serialized)
    dumped[at]["data"][key] = value
    serialized[at]["value"][key] = value
    return [edited, dumped, serialized]


def _refusals(streams: list[list[Any]], **options: Any) -> list[tuple[Any, ...]]:
    return [_error(llama_index.events_to_messages, stream, **options) for stream in streams]


def _cut_by_the_iteration_limit(turns: list[str]) -> list[Any]:
    agent = FunctionAgent(name="a", tools=[add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call("c0", "add", a=1, b=2)), say("gave up"),
                                        say("t2")]))
    events, _ = run_turns(agent, turns,
                          first={"max_iterations": 1, "early_stopping_method": "generate"})
    return events


UNANSWERED_C0 = ("unanswered_tool_call", 1, "events[1].data.response.tool_calls[0]",
                 "tool call 'add' (id 'c0') has no result before events[2].data.response")


def test_a_malformed_input_after_a_call_left_unanswered_is_told_as_malformed() -> None:
    # M08: a call cut by the iteration limit (events[1]) is no reason to refuse a later
    # input for what it is itself
    events = _cut_by_the_iteration_limit(["one", "two"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "AgentOutput", "StopEvent",
                             "AgentInput", "AgentOutput", "StopEvent"]
    assert refused(events) == UNANSWERED_C0  # (the stream as it ran)
    not_a_list = ("malformed_event", 4, "events[4].data.input", "'input' must be a list, found 5")
    assert _refusals(_edited(events, 4, "input", 5)) == [not_a_list] * 3
    _, dumped, serialized = forms(events)
    for stream, data in [(dumped, "data"), (serialized, "value")]:
        stream[4][data]["input"][0]["role"] = 123
        assert _error(llama_index.events_to_messages, stream) == (
            "unknown_role", 4, "events[4].data.input[0].role",
            "unknown role 123; LlamaIndex roles are system, developer, user, assistant, "
            "chatbot, model, tool, function")


def test_a_run_of_another_agent_after_a_call_left_unanswered_keeps_the_unanswered_call(
) -> None:
    # M11: the other run's input (events[4]) cannot agree with a conversation holding the
    # unanswered call: ambiguous_trace gives way to the rule fault before it
    first = _cut_by_the_iteration_limit(["one"])
    assert kinds(first) == ["AgentInput", "AgentOutput", "AgentOutput", "StopEvent"]
    other = FunctionAgent(name="b", tools=[add], system_prompt="other", streaming=False,
                          llm=scripted([say("x")]))
    second, _ = run_turns(other, ["zzz"])
    assert refused([*first, *second]) == UNANSWERED_C0


def _one_id_twice() -> list[Any]:
    agent = FunctionAgent(name="calc", tools=[add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call("c1", "add", a=1, b=2),
                                              call("c1", "add", a=2, b=2)), say("done")]))
    events, _ = run_turns(agent, ["hi"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "ToolCall", "ToolCallResult", "AgentInput", "AgentOutput",
                             "StopEvent"]
    return events


def test_a_repeated_call_id_is_told_before_a_malformed_tool_call_after_it() -> None:
    # M13, M14: the reply's second call repeats c1; the ToolCall after it is malformed
    # (a refusal of its own, which no earlier fault replaces)
    streams = _edited(_one_id_twice(), 2, "tool_kwargs", 5)
    assert _refusals(streams) == [(
        "duplicate_tool_call_id", 1, "events[1].data.response.tool_calls[1].id",
        "tool call id 'c1' is already used at events[1].data.response")] * 3


def _answered_twice() -> list[Any]:
    """A parallel run whose first result (c1, events[4]) is logged twice."""
    events = _parallel_run()
    return [*events[:5], events[4], *events[5:]]


ANSWERED_TWICE = ("orphan_tool_result", 5, "events[5].data.tool_id",
                  "tool_call_id 'c1' was already answered at events[4].data")


def test_a_result_logged_twice_is_told_before_a_malformed_result_after_it() -> None:
    # M15, M16, M24 (JSON forms), M17 (objects): the repeat at events[5], then c2's result
    # malformed at events[6]
    streams = _edited(_answered_twice(), 6, "tool_kwargs", 5)
    assert _refusals(streams) == [ANSWERED_TWICE] * 3


def _two_calls_without_ids() -> list[Any]:
    agent = FunctionAgent(name="calc", tools=[add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call(None, "add", a=1, b=2),  # type: ignore[arg-type]
                                              call(None, "add", a=2, b=2)),  # type: ignore[arg-type]
                                        say("done")]))
    events, _ = run_turns(agent, ["hi"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "ToolCall", "ToolCallResult", "AgentInput", "AgentOutput",
                             "StopEvent"]
    return events


def test_calls_without_an_id_are_no_repeated_id() -> None:
    # M20: two calls of one reply without an id pair by place; they share no id.
    events = _two_calls_without_ids()
    # The reply alone, its selections left out (what is read is the response's calls):
    streams = _edited(events[:2], 1, "tool_calls", [])
    for stream in streams:
        messages = llama_index.events_to_messages(stream, allow_pending=True)
        assert [(m.type, m.text) for m in messages] == [
            ("system", "sys"), ("human", "hi"), ("ai", "")]
        assert [(c.name, c.args, c.id) for c in messages[2].tool_calls] == [
            ("add", {"a": 1, "b": 2}, None), ("add", {"a": 2, "b": 2}, None)]
    # The whole run: the framework's selections, ToolCalls and results say id '' where the
    # response says none: each names an id-less call, and each result reads with no call id
    # (the '' kept as memory keeps it), pairing with its call by place.
    messages = read(events)
    assert [(m.type, m.text) for m in messages] == [
        ("system", "sys"), ("human", "hi"), ("ai", ""), ("tool", "3"), ("tool", "4"),
        ("ai", "done")]
    assert [(c.name, c.args, c.id) for c in messages[2].tool_calls] == [
        ("add", {"a": 1, "b": 2}, None), ("add", {"a": 2, "b": 2}, None)]
    assert [(m.tool_call_id, m.name, m.metadata) for m in messages[3:5]] == [
        (None, "add", {"llama_index": {"additional_kwargs": {"tool_call_id": ""},
                                       "event": {"raw_output": raw}}}) for raw in (3, 4)]


# --- core: == and same_json as JSON ----------------------------------------------------------


def test_a_float_field_compares_with_the_sign_of_its_zero() -> None:
    # X02: a top-level float field, not only one inside a dict or list
    assert (OpaquePart(kind="k", value=0.0) == OpaquePart(kind="k", value=-0.0)) is False
    assert (OpaquePart(kind="k", value=-0.0) == OpaquePart(kind="k", value=-0.0)) is True
    assert (OpaquePart(kind="k", value=0.0) != OpaquePart(kind="k", value=-0.0)) is True


@pytest.mark.parametrize(("a", "b"), [({"a": 0.0}, {"a": -0.0}), ([0.0], [-0.0]), (0.0, -0.0)],
                         ids=["dict", "list", "top"])
def test_same_json_with_zero_signs_tells_the_zeros_apart(a: Any, b: Any) -> None:
    # X05
    assert same_json(a, b, zero_signs=True) is False
    assert same_json(a, b) is True
    assert same_json(a, copy.deepcopy(a), zero_signs=True) is True


def test_a_message_compared_with_what_is_no_message_is_unequal() -> None:
    # X24: pydantic's NotImplemented is Python's to answer, never compared field by field
    message = HumanMessage(content="x")
    assert (message == 5) is False
    assert (message == {"content": "x"}) is False
    assert (message != "x") is True


# --- the JSON stream: a file and a pipe, byte for byte ---------------------------------------


def _is_conversation(value: Any) -> bool:
    return isinstance(value, list)


def _read_all(stream: IO[str]) -> tuple[str | None, list[Record]]:
    documents = JsonDocuments(stream, "-", _is_conversation)
    records = list(documents)
    return documents.shape, records


def _from_file(data: bytes) -> tuple[str | None, list[Record]]:
    return _read_all(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors=ESCAPE))


def _from_pipe(data: bytes) -> tuple[str | None, list[Record]]:
    """``data`` written whole to a pipe, which is closed, then read as standard input is."""
    read_end, write_end = os.pipe()
    with open(write_end, "wb", buffering=0) as writer:
        writer.write(data)
    with open(read_end, encoding="utf-8-sig", errors=ESCAPE) as stream:
        return _read_all(stream)


@pytest.mark.parametrize("read", [_from_file, _from_pipe], ids=["file", "pipe"])
@pytest.mark.parametrize("data", [b"[1]\x0c\n[2]\n", "[1]\u00a0\n[2]\n".encode()],
                         ids=["form-feed", "no-break-space"])
def test_a_line_with_a_blank_json_does_not_know_is_one_broken_record(
    data: bytes, read: Any
) -> None:
    # K05: a form feed or a no-break space is no JSON blank: [1] is not alone on its line
    assert read(data) == ("jsonl", [
        Record(1, problem="not valid JSON: Extra data: line 1 column 4 (char 3)",
               code="not_json"),
        Record(2, [2]),
    ])


@pytest.mark.parametrize("read", [_from_file, _from_pipe], ids=["file", "pipe"])
@pytest.mark.parametrize("data", [b"[1]\n[2]\xc3", b'[1]\n["\xc3'], ids=["after", "inside"])
def test_a_character_cut_by_the_end_of_the_input_is_not_utf8(data: bytes, read: Any) -> None:
    # K11: the first byte of a two-byte character, then the end: refused, never dropped
    assert read(data) == ("jsonl", [
        Record(1, [1]),
        Record(2, problem="not UTF-8 text: unexpected end of data", code="no_record"),
    ])
