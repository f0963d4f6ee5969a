"""Values put into a message after validation, and the places that meet them: the hash names
a value it covers, ``==`` answers (or says why not) without a ``RecursionError``, the
lone-surrogate ``model_dump_json`` writes what the call dumps as Python's ``json`` always
did, the ``tracebridge`` writer refuses what ``json`` cannot write, and the OTel and
LlamaIndex readers compare two records of one message as JSON with the zero signs as one."""

from __future__ import annotations

import copy
import datetime
import json
import math
from pathlib import Path
from typing import Any

import pytest
from test_core_fixes_s46 import AN_OBJECT, TOO_DEEP, nested
from test_otel import ANSWER, ASK, CALL, CALLING, RESULT, document, genai

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    native,
    transcript_hash,
)
from tracebridge.adapters import llama_index, otel
from tracebridge.hashing import hashed_messages
from tracebridge.metrics import ToolCallAccuracy, ToolCallF1

NOT_COMPARED = (
    "a value nested past Python's depth, or one that holds itself (a dict or list inside its "
    "own contents), at the same place in both: == cannot compare them"
)
def holding_itself() -> dict[str, Any]:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def conversation(args_value: Any = 1, metadata_value: Any = 0) -> list[Any]:
    """A call and its result, the call's ``args["a"]`` and the question's
    ``metadata["ts"]`` set after validation (a dict inside a frozen message edited)."""
    ask = HumanMessage(content="q", metadata={"ts": 0})
    call = ToolCall(name="f", args={"a": 1}, id="c")
    ask.metadata["ts"] = metadata_value
    call.args["a"] = args_value
    return [ask, AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="r", tool_call_id="c")]


def calls_of(message: Any) -> list[ToolCall]:
    assert isinstance(message, AIMessage)
    return message.tool_calls


def told(error: TraceError) -> tuple[str, int | None, str | None, str | None, str]:
    return (error.code, error.index, error.path, error.source, error.detail)


def refusal(reading: Any, *args: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        reading(*args)
    return caught.value


# --- 1. the hash names a value it covers, not a metadata value it never reads ---------------

WHEN = datetime.datetime(2026, 1, 1)
A_SET = ("unserializable_value", 1, "messages[1].tool_calls[0].args.a", None,
         "expected a JSON value (dict, list, str, int, float, bool, None), got set {1, 2}")


def test_the_hash_is_not_stopped_by_a_metadata_value() -> None:
    messages = conversation(metadata_value=WHEN)
    assert transcript_hash(messages) == transcript_hash(conversation())


@pytest.mark.parametrize("bad_metadata", [WHEN, float("nan"), {1: "x"}, object()],
                         ids=["datetime", "nan", "int-key", "object"])
def test_the_hash_names_the_set_in_args_not_the_metadata_before_it(bad_metadata: Any) -> None:
    messages = conversation(args_value={1, 2}, metadata_value=bad_metadata)
    assert told(refusal(transcript_hash, messages)) == A_SET


def test_a_tool_call_metric_names_the_set_in_args_not_the_metadata() -> None:
    sample = MultiTurnSample(messages=conversation(),
                             reference_tool_calls=[ToolCall(name="f", args={"a": 1})])
    sample.messages[0].metadata["ts"] = WHEN
    calls_of(sample.messages[1])[0].args["a"] = {1, 2}
    assert told(refusal(ToolCallAccuracy().score, sample)) == A_SET


@pytest.mark.parametrize("reading", [transcript_hash, hashed_messages])
def test_the_hash_names_a_value_holding_itself_not_nan_in_metadata(reading: Any) -> None:
    messages = conversation(args_value=holding_itself(), metadata_value=float("nan"))
    assert told(refusal(reading, messages)) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a", None, TOO_DEEP
    )


def test_the_hash_of_a_message_with_parts_names_its_deep_args_not_earlier_metadata() -> None:
    """A message whose content is parts is hashed from its dump, which stops on the deep
    value: the value is named, not the question's metadata."""
    ask, _, result = conversation(metadata_value=WHEN)
    call = ToolCall(name="f", args={"a": 1}, id="c")
    parted = AIMessage(content=[TextPart(text="a"), TextPart(text="b")], tool_calls=[call])
    call.args["a"] = nested(100_000)
    assert told(refusal(transcript_hash, [ask, parted, result])) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a", None, TOO_DEEP
    )


# --- 2. == answers, or raises unserializable_value: never a RecursionError ---------------------


def self_holding_message() -> HumanMessage:
    message = HumanMessage(content="hi", metadata={"a": {}})
    message.metadata["a"]["self"] = message.metadata["a"]
    return message


def call_with_args(value: Any) -> ToolCall:
    call = ToolCall(name="f", args={"x": 1, "l": 1}, id="c")
    call.args["l"] = value
    return call


def sample_with_args(value: Any) -> MultiTurnSample:
    return MultiTurnSample(messages=[
        HumanMessage(content="h"),
        AIMessage(content="", tool_calls=[call_with_args(value)]),
        ToolMessage(content="r", tool_call_id="c"),
    ])


def test_a_model_holding_itself_is_equal_to_itself_and_its_copy() -> None:
    message = self_holding_message()
    assert message == message
    assert message.model_copy() == message
    assert message == message.model_copy()
    assert not message != message  # noqa: SIM202 (the != operator is what is tested)
    sample = MultiTurnSample(messages=[message])
    assert sample == sample
    assert sample.model_copy() == sample


def test_a_call_with_args_past_pythons_depth_is_equal_to_itself_and_its_copy() -> None:
    call = call_with_args(nested(3000))
    assert call == call
    assert call.model_copy() == call
    assert not call != call  # noqa: SIM202


@pytest.mark.parametrize("value", [lambda: nested(3000), holding_itself],
                         ids=["past-pythons-depth", "holding-itself"])
def test_two_samples_with_values_that_cannot_be_compared_raise_at_the_value(value: Any) -> None:
    first, second = sample_with_args(value()), sample_with_args(value())
    expected = ("unserializable_value", 1, "messages[1].tool_calls[0].args.l", None,
                NOT_COMPARED)
    assert told(refusal(lambda: first == second)) == expected
    assert told(refusal(lambda: first != second)) == expected


def test_two_messages_and_two_calls_that_cannot_be_compared_raise_at_the_value() -> None:
    first, second = sample_with_args(nested(3000)), sample_with_args(nested(3000))
    assert told(refusal(lambda: first.messages[1] == second.messages[1])) == (
        "unserializable_value", None, "tool_calls[0].args.l", None, NOT_COMPARED
    )
    call, other = calls_of(first.messages[1])[0], calls_of(second.messages[1])[0]
    assert told(refusal(lambda: call == other)) == (
        "unserializable_value", None, "args.l", None, NOT_COMPARED
    )


def test_a_deep_value_and_a_shallow_one_are_simply_unequal() -> None:
    assert (sample_with_args(nested(3000)) == sample_with_args(nested(2))) is False
    assert (sample_with_args(nested(3000)) != sample_with_args(nested(2))) is True


def test_values_deeper_than_json_allows_but_within_pythons_depth_still_compare() -> None:
    assert sample_with_args(nested(600)) == sample_with_args(nested(600))
    assert sample_with_args(nested(600)) != sample_with_args([nested(599), -0.0])
    assert sample_with_args([nested(600), -0.0]) != sample_with_args([nested(600), 0.0])


# --- 3. model_dump_json with a lone surrogate: what the call dumps, written as json writes it --

LONE = "lone \udcff"


def with_metadata_value(text: str, value: Any) -> HumanMessage:
    message = HumanMessage(content=text, metadata={"a": 1})
    message.metadata["a"] = value
    return message


def python_json(data: Any, indent: int | None = None) -> str:
    """What the lone-surrogate path always wrote: Python's ``json`` of ``model_dump()``."""
    return json.dumps(data, indent=indent, separators=None if indent is not None else (",", ":"))


def test_a_lone_surrogate_dump_leaves_out_an_excluded_object() -> None:
    message = with_metadata_value(LONE, object())
    assert message.model_dump_json(exclude={"metadata"}) == (
        '{"type":"human","content":"lone \\udcff","name":null,"id":null}'
    )
    assert message.model_dump_json(include={"content"}) == '{"content":"lone \\udcff"}'


def test_an_excluded_metadata_key_is_not_looked_at() -> None:
    message = HumanMessage(content=LONE, metadata={"a": 1, "b": 2})
    message.metadata["a"] = {1, 2}
    assert message.model_dump_json(exclude={"metadata": {"a"}}) == (
        '{"type":"human","content":"lone \\udcff","name":null,"id":null,"metadata":{"b":2}}'
    )


@pytest.mark.parametrize(
    ("value", "written"),
    [
        pytest.param((1, 2), "[1,2]", id="tuple"),
        pytest.param({1: "x"}, '{"1":"x"}', id="int-key"),
        pytest.param(nested(300), json.dumps(nested(300), separators=(",", ":")),
                     id="300-deep"),
    ],
)
def test_a_lone_surrogate_dump_writes_what_json_writes(value: Any, written: str) -> None:
    message = with_metadata_value(LONE, value)
    assert message.model_dump_json() == (
        '{"type":"human","content":"lone \\udcff","name":null,"id":null,"metadata":{"a":'
        + written + "}}"
    )
    plain = with_metadata_value("plain", value)  # pydantic's writer: the same values
    assert json.loads(plain.model_dump_json())["metadata"] == json.loads(
        message.model_dump_json())["metadata"]


def test_a_lone_surrogate_sample_is_written_byte_for_byte_as_before() -> None:
    sample = MultiTurnSample(messages=[
        HumanMessage(content="caf\u00e9 \udcff", metadata={"k\ud800": [1.0, -0.0, 10**20]}),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": True, "b": None},
                                                   id="c")]),
        ToolMessage(content="r", tool_call_id="c"),
    ])
    calls_of(sample.messages[1])[0].args["t"] = (1, 2)
    assert sample.model_dump_json() == python_json(sample.model_dump())
    assert sample.model_dump_json(indent=2) == python_json(sample.model_dump(), indent=2)
    assert sample.model_dump_json(exclude_none=True, by_alias=True) == python_json(
        sample.model_dump(exclude_none=True, by_alias=True))


@pytest.mark.parametrize(
    ("value", "path", "detail"),
    [
        pytest.param(holding_itself(), "metadata.a", TOO_DEEP, id="holding-itself"),
        pytest.param(nested(100_000), "metadata.a", TOO_DEEP, id="past-pythons-depth"),
        pytest.param({"n": float("inf")}, "metadata.a.n", "inf is not a finite number",
                     id="infinity"),
        pytest.param({(1, 2): 1}, "metadata.a",
                     "object keys must be strings, numbers, booleans or null, got tuple (1, 2)",
                     id="tuple-key"),
        pytest.param([10**5000], "metadata.a[0]",
                     "an integer of more than 4,300 digits: JSON readers refuse it",
                     id="long-int"),
    ],
)
def test_a_lone_surrogate_dump_refuses_what_json_cannot_write(
    value: Any, path: str, detail: str
) -> None:
    message = with_metadata_value(LONE, value)
    assert told(refusal(message.model_dump_json)) == ("unserializable_value", None, path, None,
                                                      detail)
    sample = MultiTurnSample.model_construct(messages=[HumanMessage(content="h"), message])
    assert told(refusal(sample.model_dump_json)) == (
        "unserializable_value", 1, f"messages[1].{path}", None, detail
    )


def test_a_lone_surrogate_dump_refuses_an_object() -> None:
    error = refusal(with_metadata_value(LONE, [{"o": object()}]).model_dump_json)
    assert (error.code, error.index, error.path) == ("unserializable_value", None,
                                                     "metadata.a[0].o")
    assert error.detail.startswith(AN_OBJECT)


# --- 6. the tracebridge writer refuses what json cannot write -----------------------------------


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(native.from_messages, id="from_messages"),
        pytest.param(lambda messages: convert(messages, source="tracebridge",
                                              target="tracebridge"), id="convert"),
    ],
)
@pytest.mark.parametrize("value", [lambda: nested(3000), lambda: nested(100_000), holding_itself],
                         ids=["3000-deep", "100000-deep", "holding-itself"])
def test_the_tracebridge_writer_refuses_args_json_cannot_write(write: Any, value: Any) -> None:
    assert told(refusal(write, conversation(args_value=value()))) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a", "tracebridge", TOO_DEEP
    )


@pytest.mark.parametrize(
    ("value", "path", "detail"),
    [
        pytest.param(float("nan"), "messages[0].metadata.ts", "nan is not a finite number",
                     id="nan"),
        pytest.param({"x": holding_itself()}, "messages[0].metadata.ts", TOO_DEEP,
                     id="holding-itself"),
    ],
)
def test_the_tracebridge_writer_refuses_metadata_json_cannot_write(
    value: Any, path: str, detail: str
) -> None:
    assert told(refusal(native.from_messages, conversation(metadata_value=value))) == (
        "unserializable_value", 0, path, "tracebridge", detail
    )


def test_the_tracebridge_writer_refuses_an_object() -> None:
    error = refusal(native.from_messages, conversation(args_value={"o": object()}))
    assert (error.code, error.index, error.path, error.source) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a.o", "tracebridge")
    assert error.detail.startswith(AN_OBJECT)


def test_the_tracebridge_writer_still_writes_what_json_writes() -> None:
    messages = conversation(args_value=(1, 2), metadata_value={1: "x"})
    written = native.from_messages(messages)
    assert written == [message.model_dump() for message in messages]
    assert written[1]["tool_calls"][0]["args"]["a"] == (1, 2)
    assert native.from_messages(conversation(args_value=nested(300)))[1]["tool_calls"][0][
        "args"]["a"] == nested(300)


# --- 5. two records of one message: equal as JSON, the zero signs as one ------------------------


def otel_question(score: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": "Weather?", "score": score}]}


def otel_calling(score: Any) -> dict[str, Any]:
    return {"role": "assistant",
            "parts": [{"type": "text", "content": "Let me check.", "score": score}, CALL]}


def otel_inputs(earlier: Any, later: Any) -> dict[str, Any]:
    """An earlier call's input and the last call's record the question, with ``score``."""
    return document(genai(1, [otel_question(earlier)], [CALLING]),
                    genai(2, [otel_question(later), CALLING, RESULT], [ANSWER]))


def otel_output_then_input(earlier: Any, later: Any) -> dict[str, Any]:
    """The first call's output and the last call's input record the reply, with ``score``."""
    return document(genai(1, [ASK], [otel_calling(earlier)]),
                    genai(2, [ASK, otel_calling(later), RESULT], [ANSWER]))


def otel_conversation(first: HumanMessage | AIMessage) -> list[Any]:
    call = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")
    if isinstance(first, AIMessage):
        return [HumanMessage(content="Weather in Paris?"), first.model_copy(
            update={"tool_calls": [call]}), ToolMessage(content="18 C", tool_call_id="call_1"),
            AIMessage(content="18 C in Paris.")]
    return [first, AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="18 C", tool_call_id="call_1"), AIMessage(content="18 C in Paris.")]


def scored(text: str, score: float) -> list[TextPart]:
    return [TextPart(text=text, metadata={"otel": {"fields": {"score": score}}})]


@pytest.mark.parametrize(("earlier", "later"), [(-0.0, 0.0), (0.0, -0.0)])
def test_otel_inputs_differing_in_a_zero_sign_are_one_record(earlier: float,
                                                             later: float) -> None:
    messages = otel.to_messages(otel_inputs(earlier, later))
    assert messages == otel_conversation(HumanMessage(content=scored("Weather?", later)))
    kept = messages[0].content[0].metadata["otel"]["fields"]["score"]
    assert math.copysign(1.0, kept) == math.copysign(1.0, later)  # the last call's record


@pytest.mark.parametrize(("earlier", "later"), [(-0.0, 0.0), (0.0, -0.0)])
def test_an_otel_output_and_input_differing_in_a_zero_sign_are_one_record(
    earlier: float, later: float
) -> None:
    messages = otel.to_messages(otel_output_then_input(earlier, later))
    assert messages == otel_conversation(AIMessage(content=scored("Let me check.", later)))


SPAN_0 = "resourceSpans[0].scopeSpans[0].spans[0]"


@pytest.mark.parametrize(("earlier", "later"), [(1, 1.0), (1, True), (1.0, 1)])
def test_otel_inputs_differing_as_json_conflict(earlier: Any, later: Any) -> None:
    assert told(refusal(otel.to_messages, otel_inputs(earlier, later))) == (
        "conflicting_fields", 0, SPAN_0, "otel",
        "the call's input[0] and a later call's input record that message with different fields",
    )


@pytest.mark.parametrize(("earlier", "later"), [(1, 1.0), (1, True), (1.0, 1)])
def test_an_otel_output_and_input_differing_as_json_conflict(earlier: Any, later: Any) -> None:
    assert told(refusal(otel.to_messages, otel_output_then_input(earlier, later))) == (
        "conflicting_fields", 0, SPAN_0, "otel",
        "the call's output[0] and a later call's input record that message with different "
        "fields",
    )


GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"
RUN: list[dict[str, Any]] = json.loads(
    (GOLDEN / "function_agent_two_turns.json").read_text(encoding="utf-8"))["events"]
"""Two runs; [7] the first run's reply, [8] its StopEvent, whose result repeats the reply and
lists the run's results ([4] the first)."""


def llama_reply_said_again(read: Any, repeated: Any) -> list[dict[str, Any]]:
    """The reply read with ``additional_kwargs`` ``{"score": read}``, which the StopEvent's
    result repeats with ``repeated``."""
    events = copy.deepcopy(RUN)
    events[7]["data"]["response"]["additional_kwargs"] = {"score": read}
    events[9]["data"]["input"][5]["additional_kwargs"] = {"score": read}
    events[8]["data"]["result"]["response"]["additional_kwargs"] = {"score": repeated}
    return events


def llama_result_said_again(read: Any, repeated: Any) -> list[dict[str, Any]]:
    """The first result read with ``raw_output`` ``read``, which the StopEvent's result lists
    whole with ``repeated``."""
    events = copy.deepcopy(RUN)
    events[4]["data"]["tool_output"]["raw_output"] = read
    entry = {**events[8]["data"]["result"]["tool_calls"][0], "return_direct": False,
             "tool_output": {**events[4]["data"]["tool_output"], "raw_output": repeated}}
    events[8]["data"]["result"]["tool_calls"][0] = entry
    return events


@pytest.mark.parametrize(("read", "repeated"), [(-0.0, 0.0), (0.0, -0.0)])
def test_a_llama_reply_said_again_with_another_zero_sign_is_the_reply(
    read: float, repeated: float
) -> None:
    messages = llama_index.events_to_messages(llama_reply_said_again(read, repeated))
    unchanged = llama_index.events_to_messages(RUN)
    assert messages[:5] + messages[6:] == unchanged[:5] + unchanged[6:]
    assert messages[5] == unchanged[5].model_copy(
        update={"metadata": {"llama_index": {"additional_kwargs": {"score": read}}}})


@pytest.mark.parametrize(("read", "repeated"), [(-0.0, 0.0), (0.0, -0.0)])
def test_a_llama_result_said_again_with_another_zero_sign_is_the_result(
    read: float, repeated: float
) -> None:
    messages = llama_index.events_to_messages(llama_result_said_again(read, repeated))
    unchanged = llama_index.events_to_messages(RUN)
    assert messages[:3] + messages[4:] == unchanged[:3] + unchanged[4:]
    assert messages[3] == unchanged[3].model_copy(
        update={"metadata": {"llama_index": {"event": {"raw_output": read}}}})


@pytest.mark.parametrize(("read", "repeated"), [(1, 1.0), (1, True), (1.0, 1)])
def test_a_llama_reply_said_again_as_other_json_conflicts(read: Any, repeated: Any) -> None:
    error = refusal(llama_index.events_to_messages, llama_reply_said_again(read, repeated))
    assert (error.code, error.index, error.path, error.source) == (
        "conflicting_fields", 8, "events[8].data.result.response", "llama_index")


@pytest.mark.parametrize(("read", "repeated"), [(1, 1.0), (1, True), (1.0, 1)])
def test_a_llama_result_said_again_as_other_json_conflicts(read: Any, repeated: Any) -> None:
    error = refusal(llama_index.events_to_messages, llama_result_said_again(read, repeated))
    assert (error.code, error.index, error.path, error.source) == (
        "conflicting_fields", 8, "events[8].data.result.tool_calls[0]", "llama_index")


@pytest.mark.parametrize("metric", [ToolCallAccuracy(), ToolCallF1()], ids=["accuracy", "f1"])
@pytest.mark.parametrize("kind", ["set", "cycle"])
def test_a_tool_call_metric_names_the_arguments_not_metadata_it_never_reads(
    metric: ToolCallAccuracy | ToolCallF1, kind: str
) -> None:
    sample = MultiTurnSample(
        messages=[HumanMessage(content="h", metadata={"ts": 1}),
                  AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")]),
                  ToolMessage(content="r", tool_call_id="c")],
        reference_tool_calls=[ToolCall(name="f", args={"a": 1})])
    sample.messages[0].metadata["ts"] = datetime.datetime(2026, 1, 1)  # never read by it
    args = sample.messages[1].tool_calls[0].args
    args["a"] = {1, 2} if kind == "set" else args
    with pytest.raises(TraceError) as caught:
        metric.score(sample)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a")
