"""An int of more than 4,300 digits has no JSON text here: Python's ``json`` (at its default
``sys.get_int_max_str_digits``) and pydantic's JSON reader refuse it. Every reader refuses
it where it is, as ``unserializable_value``. Before, it was taken in, and only the transcript
hash or a writer's ``json.dumps`` failed on it later, with a raw ValueError."""

from __future__ import annotations

from typing import Any

import langchain_core.messages as lc
import pytest

from tracebridge import HumanMessage, MultiTurnSample, ToolCall, TraceError
from tracebridge._json import NotPlainJson, check_json, json_copy_checked
from tracebridge.adapters import langchain, openai_chat, swarm

LONGEST = 10**4300 - 1  # 4,300 nines: the longest int JSON readers take
TOO_LONG = 10**4300  # 4,301 digits


def _refused(read: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        read()
    return caught.value.code, caught.value.index, caught.value.path


@pytest.mark.parametrize("value", [TOO_LONG, -TOO_LONG], ids=["positive", "negative"])
def test_the_check_refuses_an_int_too_long_for_json_where_it_is(value: int) -> None:
    assert _refused(lambda: check_json({"a": [1, {"b": value}]}, "here")) == (
        "unserializable_value", None, "here.a[1].b")
    assert _refused(lambda: check_json(value, "here")) == ("unserializable_value", None, "here")
    with pytest.raises(NotPlainJson):
        json_copy_checked({"a": [value]})


def test_the_message_says_why() -> None:
    with pytest.raises(TraceError) as caught:
        check_json([TOO_LONG], "x")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", None, "x[0]")
    assert caught.value.detail == "an integer of more than 4,300 digits: JSON readers refuse it"


def test_a_deep_value_with_a_long_int_at_the_bottom_is_refused() -> None:
    value: Any = [TOO_LONG]
    for _ in range(5000):
        value = [value]
    assert _refused(lambda: check_json(value, "here"))[0] == "unserializable_value"


@pytest.mark.parametrize("value", [LONGEST, -LONGEST, 0, 2**64, True],
                         ids=["longest", "negative-longest", "zero", "u64", "bool"])
def test_ints_json_readers_take_pass(value: int) -> None:
    check_json({"a": [value]}, "here")
    assert json_copy_checked({"a": [value]}) == {"a": [value]}


def test_a_sample_with_the_longest_int_hashes_and_reads_back() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="x", metadata={"n": LONGEST})])
    assert sample.transcript_hash().startswith("tb1:")
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample


def test_the_typed_model_refuses_a_too_long_int() -> None:
    assert _refused(lambda: ToolCall(name="f", args={"n": [1, TOO_LONG]})) == (
        "unserializable_value", None, "args.n[1]")
    assert _refused(lambda: HumanMessage(content="x", metadata={"a": -TOO_LONG})) == (
        "unserializable_value", None, "metadata.a")


def test_langchain_refuses_a_too_long_int_in_a_tool_call() -> None:
    trace = [
        lc.HumanMessage(content="factor it"),
        lc.AIMessage(content="", tool_calls=[{"name": "factor", "args": {"n": TOO_LONG},
                                              "id": "c1"}]),
        lc.ToolMessage(content="done", tool_call_id="c1"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.n")


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_dict_readers_refuse_a_too_long_int_they_would_keep(adapter: Any) -> None:
    trace = [{"role": "user", "content": "x", "vendor": {"n": TOO_LONG}}]
    assert _refused(lambda: adapter.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].vendor.n")


def test_argument_text_with_a_too_long_int_is_kept_as_invalid_args() -> None:
    text = '{"n": ' + "1" * 5000 + "}"
    trace = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    call = openai_chat.to_messages(trace)[1].tool_calls[0]
    assert (call.args, call.invalid_args) == ({}, text)
    assert openai_chat.from_messages(openai_chat.to_messages(trace))[1]["tool_calls"][0][
        "function"]["arguments"] == text
