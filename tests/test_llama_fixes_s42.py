"""LlamaIndex objects holding values that are not JSON where LlamaIndex takes any value.

``ToolCallBlock.tool_kwargs``, ``ChatMessage.additional_kwargs``, a ThinkingBlock's
``additional_information`` and the tool events' ``tool_kwargs`` take anything. LlamaIndex's
JSON dump writes what is not JSON there as some JSON (bytes as their text, or as base64 text
in ``additional_kwargs``; a tuple or a set as a list; a date as its ISO text; a complex
number, a Decimal, a UUID, an enum, a path as text): read through that dump, the value would
change without a word. Each is ``unserializable_value`` at the value, as the same value in a
LangChain message's arguments is, on the message road and the event road (fast and general
paths alike) and in ``dump_events``; JSON values in the same places still read exactly.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import pathlib
import uuid
import warnings
from typing import Any

import pytest
from llama_index.core.agent import workflow
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools import ToolOutput
from llama_index.core.workflow import StopEvent
from test_llama_index_changed_objects import both, events

from tracebridge import (
    AIMessage,
    HumanMessage,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index


class Color(enum.Enum):
    RED = "red"


class Size(str, enum.Enum):
    BIG = "big"


class Level(enum.IntEnum):
    HIGH = 2


_ANY = "expected a JSON value (dict, list, str, int, float, bool, None), got"

# (the value, where it is refused below the field that holds it, what the error says there)
NOT_JSON: list[tuple[Any, str, str]] = [
    (b"x", "", f"{_ANY} bytes b'x' (LlamaIndex's dump writes it as 'x')"),
    (bytearray(b"x"), "", f"{_ANY} bytearray bytearray(b'x') (LlamaIndex's dump writes it "
                          "as 'x')"),
    ((1, 2), "", f"{_ANY} tuple (1, 2) (LlamaIndex's dump writes it as [1, 2])"),
    ({1, 2}, "", f"{_ANY} set {{1, 2}} (LlamaIndex's dump writes it as [1, 2])"),
    (frozenset({3}), "", f"{_ANY} frozenset frozenset({{3}}) (LlamaIndex's dump writes it as "
                         "[3])"),
    (datetime.date(2024, 1, 1), "", f"{_ANY} date datetime.date(2024, 1, 1) (LlamaIndex's "
                                    "dump writes it as '2024-01-01')"),
    (datetime.datetime(2024, 1, 1, 9, 30), "", f"{_ANY} datetime datetime.datetime(2024, 1, "
                                               "1, 9, 30) (LlamaIndex's dump writes it as "
                                               "'2024-01-01T09:30:00')"),
    (datetime.time(9, 30), "", f"{_ANY} time datetime.time(9, 30) (LlamaIndex's dump writes it "
                               "as '09:30:00')"),
    (datetime.timedelta(days=1), "", f"{_ANY} timedelta datetime.timedelta(days=1) "
                                     "(LlamaIndex's dump writes it as 'P1D')"),
    (1 + 2j, "", f"{_ANY} complex (1+2j) (LlamaIndex's dump writes it as '1+2j')"),
    (decimal.Decimal("1.50"), "", f"{_ANY} Decimal Decimal('1.50') (LlamaIndex's dump writes "
                                  "it as '1.50')"),
    (uuid.UUID(int=1), "", f"{_ANY} UUID UUID('00000000-0000-0000-0000-000000000001') "
                           "(LlamaIndex's dump writes it as "
                           "'00000000-0000-0000-0000-000000000001')"),
    (Color.RED, "", f"{_ANY} Color <Color.RED: 'red'> (LlamaIndex's dump writes it as 'red')"),
    (Size.BIG, "", f"{_ANY} Size <Size.BIG: 'big'> (LlamaIndex's dump writes it as 'big')"),
    (Level.HIGH, "", f"{_ANY} Level <Level.HIGH: 2> (LlamaIndex's dump writes it as 2)"),
    (pathlib.PosixPath("/tmp/a"), "", f"{_ANY} PosixPath PosixPath('/tmp/a') (LlamaIndex's "
                                      "dump writes it as '/tmp/a')"),
    ([1, (2,)], "[1]", f"{_ANY} tuple (2,) (LlamaIndex's dump writes it as [2])"),
    ({"at": datetime.date(2024, 1, 1)}, ".at", f"{_ANY} date datetime.date(2024, 1, 1) "
                                               "(LlamaIndex's dump writes it as '2024-01-01')"),
]
IDS = [type(value).__name__ + inner for value, inner, _ in NOT_JSON]

# What LlamaIndex's serializer of additional_kwargs writes of bytes: base64 text, in both
# dumps (other values are written as in tool_kwargs)
KWARGS_BYTES = {
    b"x": f"{_ANY} bytes b'x' (LlamaIndex's dump writes it as its base64 text, 'eA==')",
}


def refused(read: Any, trace: Any) -> tuple[str, int | None, str | None, str]:
    """The code, index, path and detail of the TraceError ``read`` raises, once the fast and
    the general paths are seen to agree on where."""
    where = both(read, trace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns when dumping a changed field
        with pytest.raises(TraceError) as caught:
            read(trace)
    error = caught.value
    assert (error.code, error.index, error.path) == where
    return error.code, error.index, error.path, error.detail


def history(kwargs: Any = None, extra: Any = None, info: Any = None) -> list[Any]:
    reply = [ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"a": 1})]
    if info is not None:
        reply.insert(0, ThinkingBlock(content="hm", additional_information={"i": info}))
    trace = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", blocks=reply),
        ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c1"}),
    ]
    if kwargs is not None:
        reply[-1].tool_kwargs["a"] = kwargs
    if extra is not None:
        trace[0].additional_kwargs["k"] = extra
    return trace


@pytest.mark.parametrize(("value", "inner", "detail"), NOT_JSON, ids=IDS)
def test_a_tool_argument_that_is_not_json_is_refused_at_it(
    value: Any, inner: str, detail: str
) -> None:
    assert refused(llama_index.to_messages, history(kwargs=value)) == (
        "unserializable_value", 1, f"messages[1].blocks[0].tool_kwargs.a{inner}", detail)


@pytest.mark.parametrize(("value", "inner", "detail"), NOT_JSON, ids=IDS)
def test_an_additional_kwarg_that_is_not_json_is_refused_at_it(
    value: Any, inner: str, detail: str
) -> None:
    if type(value) is bytes:  # (a bytearray is written as its text, as in tool_kwargs)
        detail = KWARGS_BYTES[value]
    assert refused(llama_index.to_messages, history(extra=value)) == (
        "unserializable_value", 0, f"messages[0].additional_kwargs.k{inner}", detail)


@pytest.mark.parametrize(("value", "inner", "detail"), NOT_JSON, ids=IDS)
def test_a_thinking_blocks_information_that_is_not_json_is_refused_at_it(
    value: Any, inner: str, detail: str
) -> None:
    assert refused(llama_index.to_messages, history(info=value)) == (
        "unserializable_value", 1,
        f"messages[1].blocks[0].additional_information.i{inner}", detail)


def test_bytes_deep_in_additional_kwargs_are_refused_where_they_are() -> None:
    """LlamaIndex's serializer writes bytes in the dicts and lists of ``additional_kwargs``
    as base64 text; in a model there (a ToolSelection) as their text."""
    trace = history(extra={"seen": [1, {"raw": b"\x00"}]})
    assert refused(llama_index.to_messages, trace) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.k.seen[1].raw",
        f"{_ANY} bytes b'\\x00' (LlamaIndex's dump writes it as its base64 text, 'AA==')")
    selection = ToolSelection(tool_id="c1", tool_name="f", tool_kwargs={"a": b"x"})
    trace = history()
    trace[1].additional_kwargs["tool_calls"] = [selection]
    assert refused(llama_index.to_messages, trace) == (
        "unserializable_value", 1, "messages[1].additional_kwargs.tool_calls[0].tool_kwargs.a",
        f"{_ANY} bytes b'x' (LlamaIndex's dump writes it as 'x')")


def test_json_values_in_the_same_places_still_read_exactly() -> None:
    trace = history(kwargs={"when": "2024-01-01", "pair": [1, 2], "n": None, "x": -0.5},
                    extra={"tags": ["a", {"b": True}], "n": 3}, info={"sig": [1.5, "s"]})
    assert both(llama_index.to_messages, trace) == [
        HumanMessage(content="go", metadata={"llama_index": {"additional_kwargs": {
            "k": {"tags": ["a", {"b": True}], "n": 3}}}}),
        AIMessage(content=[ReasoningPart(text="hm", metadata={"llama_index": {
            "additional_information": {"i": {"sig": [1.5, "s"]}}}})], tool_calls=[
            ToolCall(name="f", id="c1",
                     args={"a": {"when": "2024-01-01", "pair": [1, 2], "n": None, "x": -0.5}}),
        ]),
        ToolMessage(content="r", tool_call_id="c1"),
    ]
    dumps = [message.model_dump(mode="json") for message in trace]
    assert llama_index.to_messages(dumps) == llama_index.to_messages(trace)


def stream(value: Any) -> list[Any]:
    """A FunctionAgent run whose one call carries ``value`` in every copy of its arguments
    (the response's block, the ToolCall event, the result), as a real run does."""
    trace = events()
    trace[1].response.blocks[0].tool_kwargs["k"] = value
    trace[1].tool_calls = [ToolSelection(tool_id="c0", tool_name="f",
                                         tool_kwargs={"k": value})]
    trace.insert(2, workflow.ToolCall(tool_name="f", tool_kwargs={"k": value}, tool_id="c0"))
    trace[3].tool_kwargs["k"] = value
    return trace


@pytest.mark.parametrize(("value", "inner", "detail"), NOT_JSON, ids=IDS)
def test_an_events_tool_argument_that_is_not_json_is_refused_at_it(
    value: Any, inner: str, detail: str
) -> None:
    where = f"events[1].data.response.blocks[0].tool_kwargs.k{inner}"
    assert refused(llama_index.events_to_messages, stream(value)) == (
        "unserializable_value", 1, where, detail)
    assert refused(llama_index.dump_events, stream(value)) == (
        "unserializable_value", 1, where, detail)


@pytest.mark.parametrize(
    ("event", "where"),
    [(1, "events[1].data.tool_calls[0].tool_kwargs.k"), (2, "events[2].data.tool_kwargs.k"),
     (3, "events[3].data.tool_kwargs.k")],
    ids=["ToolSelection", "ToolCall", "ToolCallResult"],
)
def test_an_event_copy_of_arguments_that_is_not_json_is_refused_in_dump_events(
    event: int, where: str
) -> None:
    """Each copy on its own: ``dump_events`` refuses it where it wrote ``'2024-01-01'``."""
    trace = stream({"n": 1})
    holder = trace[1].tool_calls[0] if event == 1 else trace[event]
    holder.tool_kwargs["k"] = datetime.date(2024, 1, 1)
    assert refused(llama_index.dump_events, trace) == (
        "unserializable_value", event, where, f"{_ANY} date datetime.date(2024, 1, 1) "
        "(LlamaIndex's dump writes it as '2024-01-01')")


def test_copies_of_arguments_that_did_not_parse_are_refused_at_the_first() -> None:
    """The response's arguments are JSON text that did not parse, so the copies are the
    arguments the tool ran with: the first must be JSON (the others are compared with it)."""
    trace = stream(datetime.date(2024, 1, 1))
    trace[1].response.blocks[0].tool_kwargs = '{"k": '
    where = "events[1].data.tool_calls[0].tool_kwargs.k"
    assert both(llama_index.events_to_messages, trace) == ("unserializable_value", 1, where)
    assert refused(llama_index.dump_events, trace)[:3] == ("unserializable_value", 1, where)


def test_an_events_message_holding_what_is_not_json_is_refused_at_it() -> None:
    trace = events()
    trace[1].response.additional_kwargs["z"] = (1, 2)
    assert refused(llama_index.events_to_messages, trace) == (
        "unserializable_value", 1, "events[1].data.response.additional_kwargs.z",
        f"{_ANY} tuple (1, 2) (LlamaIndex's dump writes it as [1, 2])")
    trace = events()
    trace[3].input[4].additional_kwargs["z"] = b"x"
    bytes_detail = KWARGS_BYTES[b"x"]
    assert refused(llama_index.events_to_messages, trace) == (
        "unserializable_value", 3, "events[3].data.input[4].additional_kwargs.z", bytes_detail)
    assert refused(llama_index.dump_events, trace) == (
        "unserializable_value", 3, "events[3].data.input[4].additional_kwargs.z", bytes_detail)
    trace = events()
    trace[2].tool_output = ToolOutput(tool_name="f", raw_input={}, raw_output="r0",
                                      blocks=[TextBlock(text="r0")])
    trace[2].tool_output.blocks.append(
        ThinkingBlock(content="t", additional_information={"at": {3}}))
    assert refused(llama_index.dump_events, trace) == (
        "unserializable_value", 2,
        "events[2].data.tool_output.blocks[1].additional_information.at",
        f"{_ANY} set {{3}} (LlamaIndex's dump writes it as [3])")


def test_an_event_stream_of_json_values_still_reads_exactly() -> None:
    value = {"when": "2024-01-01", "pair": [1, 2]}
    trace = stream(value)
    trace[1].response.additional_kwargs["z"] = [1, {"y": None}]
    expected = [
        HumanMessage(content="go"),
        AIMessage(content=[], name="a", tool_calls=[ToolCall(name="f", id="c0",
                                                              args={"k": value})],
                  metadata={"llama_index": {"additional_kwargs": {"z": [1, {"y": None}]}}}),
        ToolMessage(content="r0", tool_call_id="c0", name="f",
                    metadata={"llama_index": {"event": {"raw_input": {}}}}),
        HumanMessage(content="next"),
        AIMessage(content="done", name="a"),
    ]
    got = both(llama_index.events_to_messages, trace)
    assert got[1:] == expected
    assert llama_index.events_to_messages(llama_index.dump_events(trace))[1:] == expected


def test_text_parts_are_untouched() -> None:
    assert llama_index.to_messages([ChatMessage(role="user", blocks=[
        TextBlock(text="a"), TextBlock(text="b")])]) == [
        HumanMessage(content=[TextPart(text="a"), TextPart(text="b")])]


def test_a_run_results_message_holding_bytes_is_refused_on_both_roads() -> None:
    """A StopEvent keeps its result apart from its fields; its dump writes it as one."""
    trace = events()
    reply = ChatMessage(role="assistant", content="done", additional_kwargs={"z": b"x"})
    trace.append(StopEvent(result=workflow.AgentOutput(
        response=reply, tool_calls=[], raw=None, current_agent_name="a")))
    where = ("unserializable_value", 5, "events[5].data.result.response.additional_kwargs.z")
    assert both(llama_index.events_to_messages, trace) == where
    assert refused(llama_index.dump_events, trace) == (*where, KWARGS_BYTES[b"x"])


# The rule is that of the fields of LlamaIndex's models, not of a dict key of the same name:
# a tool output's raw values are kept as LlamaIndex's JSON writes them, whatever they hold.


def with_raw_output(raw_output: Any) -> list[Any]:
    """``events()`` whose tool returned ``raw_output``."""
    trace = events()
    trace[2].tool_output = ToolOutput(content="r0", tool_name="f", raw_input={},
                                      raw_output=raw_output)
    return trace


def kept_raw_output(trace: list[Any]) -> Any:
    """The ``raw_output`` kept with the tool result, once the event road and the road
    through ``dump_events`` are seen to read the same."""
    read = both(llama_index.events_to_messages, trace)
    assert llama_index.events_to_messages(llama_index.dump_events(trace)) == read
    assert read[3] == ToolMessage(content="r0", tool_call_id="c0", name="f", metadata={
        "llama_index": {"event": {"raw_input": {}, "raw_output": read[3].metadata[
            "llama_index"]["event"]["raw_output"]}}})
    return read[3].metadata["llama_index"]["event"]["raw_output"]


def test_a_key_named_as_a_free_form_field_in_raw_output_is_only_a_key() -> None:
    trace = with_raw_output({"query": "x", "tool_kwargs": ("a", "b"),
                             "additional_kwargs": {"when": datetime.date(2024, 1, 1)}})
    assert kept_raw_output(trace) == {"query": "x", "tool_kwargs": ["a", "b"],
                                      "additional_kwargs": {"when": "2024-01-01"}}


def test_a_chat_message_in_raw_output_is_kept_as_its_json_writes_it() -> None:
    trace = with_raw_output(ChatMessage(role="assistant", content="x",
                                        additional_kwargs={"pair": (1, 2)}))
    assert kept_raw_output(trace) == {"role": "assistant", "additional_kwargs": {"pair": [1, 2]},
                                      "blocks": [{"block_type": "text", "text": "x"}]}


def test_a_chat_response_with_bytes_in_raw_output_is_read_on_both_roads() -> None:
    """LlamaIndex's JSON writes the bytes as base64 text, and that is what is kept."""
    reply = ChatMessage(role="assistant", content="x", additional_kwargs={"audio": b"\x00\x01"})
    raw = ChatResponse(message=reply)
    kept = kept_raw_output(with_raw_output(raw))
    assert kept["message"]["additional_kwargs"] == {"audio": "AAE="}
    assert kept == raw.model_dump(mode="json")


def test_raw_output_is_still_refused_where_its_json_would_change_it() -> None:
    trace = with_raw_output({"tool_kwargs": {1: "a", "1": "b"}})
    assert refused(llama_index.events_to_messages, trace)[:3] == (
        "unserializable_value", 2, "events[2].data.tool_output.raw_output.tool_kwargs")
    assert refused(llama_index.dump_events, trace)[:3] == (
        "unserializable_value", 2, "events[2].data.tool_output.raw_output.tool_kwargs")


def test_a_model_in_a_free_form_field_is_still_asked_for_its_own() -> None:
    """A ToolSelection in ``additional_kwargs`` is one of LlamaIndex's models there."""
    trace = history()
    trace[1].additional_kwargs["tool_calls"] = [
        ToolSelection(tool_id="c1", tool_name="f", tool_kwargs={"a": (1, 2)})]
    assert refused(llama_index.to_messages, trace) == (
        "unserializable_value", 1, "messages[1].additional_kwargs.tool_calls[0].tool_kwargs.a",
        f"{_ANY} tuple (1, 2) (LlamaIndex's dump writes it as [1, 2])")


# A dict or list of a subclass in an object is read as the dict or list LlamaIndex's dump
# writes, in additional_kwargs and in tool_kwargs alike; in a dict it is refused.

SUBCLASSED: list[Any] = [
    collections.OrderedDict(a=1),
    collections.defaultdict(list, a=1),
    type("Attributed", (dict,), {})(a=1),
    type("Listed", (list,), {})([1]),
]
SUBCLASS_IDS = ["OrderedDict", "defaultdict", "dict_subclass", "list_subclass"]


@pytest.mark.parametrize("value", SUBCLASSED, ids=SUBCLASS_IDS)
def test_a_dict_or_list_subclass_in_an_object_is_read_as_its_json(value: Any) -> None:
    plain = list(value) if isinstance(value, list) else dict(value)
    read = both(lambda t: llama_index.to_messages(t), history(kwargs=value, extra=value))
    assert read[0] == HumanMessage(content="go", metadata={"llama_index": {
        "additional_kwargs": {"k": plain}}})
    assert read[1] == AIMessage(content=[], tool_calls=[ToolCall(name="f", id="c1",
                                                                  args={"a": plain})])


@pytest.mark.parametrize("value", SUBCLASSED, ids=SUBCLASS_IDS)
def test_a_dict_or_list_subclass_in_a_dict_is_refused(value: Any) -> None:
    dumps = [message.model_dump(mode="json") for message in history()]
    dumps[0]["additional_kwargs"]["k"] = value
    assert refused(llama_index.to_messages, dumps)[:3] == (
        "unserializable_value", 0, "messages[0].additional_kwargs.k")
