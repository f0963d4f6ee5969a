"""Swarm's handoffs after a caller's or a system message between streaming runs, Swarm's
streamed output read as a history, ``ToolCallAccuracy(strict_order=...)`` given a value that
is not a bool, and a validator's error in ``reference_tool_calls`` told as in a message."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tracebridge import MultiTurnSample, TraceError
from tracebridge.adapters import swarm
from tracebridge.adapters.swarm import Handoff
from tracebridge.metrics import ToolCallAccuracy

# --- swarm.handoffs(): a run starts after any message Swarm's run loop never writes in one


def _call(call_id: str, name: str) -> list[dict[str, Any]]:
    return [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]


def _streamed(content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A reply in the streaming shape: ``sender`` is the agent the run started with."""
    return {"content": content, "sender": "Triage", "role": "assistant", "function_call": None,
            "tool_calls": calls}


def _result(call_id: str, name: str, agent: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "tool_name": name,
            "content": json.dumps({"assistant": agent})}


USER = {"role": "user", "content": "billing please"}
FIRST_RUN = [  # Triage hands over to Billing, who answers
    USER,
    _streamed("", _call("c1", "transfer_to_billing")),
    _result("c1", "transfer_to_billing", "Billing"),
    _streamed("Billing here, done."),
]
SECOND_RUN = [  # started again with Triage, who hands over to Sales
    _streamed("", _call("c2", "transfer_to_sales")),
    _result("c2", "transfer_to_sales", "Sales"),
    _streamed("Sales here."),
]
CALLERS_LINE = {"role": "assistant", "content": "Operator: anything else?"}  # no sender


@pytest.mark.parametrize(
    ("between", "index"),
    [
        ([CALLERS_LINE], 6),
        ([{"role": "system", "content": "note"}], 6),
        ([{"role": "user", "content": "now sales"}, CALLERS_LINE], 7),
    ],
    ids=["callers_line", "system_message", "user_then_callers_line"],
)
def test_a_streaming_run_after_a_message_without_sender_is_credited_to_its_sender(
    between: list[dict[str, Any]], index: int
) -> None:
    history = FIRST_RUN + between + SECOND_RUN
    assert swarm.handoffs(history) == [
        Handoff(index=2, from_agent="Triage", to_agent="Billing"),
        Handoff(index=index, from_agent="Triage", to_agent="Sales"),
    ]
    assert swarm.handoffs(swarm.to_messages(history)) == swarm.handoffs(history)


# --- swarm.to_messages(): Swarm.run(stream=True)'s output is no history

FIRST_DELTA = {"content": "", "function_call": None, "refusal": None, "role": "assistant",
               "tool_calls": None, "sender": "Triage"}
NEXT_DELTA = {"content": "Hello", "function_call": None, "refusal": None, "role": None,
              "tool_calls": None}
DELIM_DETAIL = (
    "{'delim': 'start'} marks a reply's deltas in Swarm.run(stream=True)'s output, which is "
    "no history: pass the messages of the stream's last item, {'response': Response} (its "
    "response.messages)"
)
RESPONSE_DETAIL = (
    "{'response': ...} is the last item of Swarm.run(stream=True)'s output, not a message: "
    "pass its response.messages rather than the streamed items"
)


class _Response:
    """Stands in for ``swarm.types.Response`` in the stream's last item."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.agent = None
        self.context_variables: dict[str, Any] = {}


@pytest.mark.parametrize(
    ("trace", "index", "detail"),
    [
        ([{"delim": "start"}, FIRST_DELTA, NEXT_DELTA, {"delim": "end"},
          {"response": _Response()}], 0, DELIM_DETAIL),
        ([USER, {"delim": "start"}, FIRST_DELTA, {"delim": "end"}], 1, DELIM_DETAIL),
        ([USER, {"response": {"messages": [], "agent": None, "context_variables": {}}}], 1,
         RESPONSE_DETAIL),
    ],
    ids=["whole_stream", "after_the_user_message", "last_item_as_json"],
)
def test_swarms_streamed_output_is_a_streaming_chunk_at_its_first_marker(
    trace: list[Any], index: int, detail: str
) -> None:
    for read in (swarm.to_messages, swarm.handoffs):
        with pytest.raises(TraceError) as caught:
            read(trace)
        error = caught.value
        assert (error.code, error.index, error.path, error.detail, error.source) == (
            "streaming_chunk", index, f"messages[{index}]", detail, "swarm")


def test_the_end_marker_alone_points_at_the_response_too() -> None:
    with pytest.raises(TraceError) as caught:
        swarm.to_messages([USER, {"delim": "end"}])
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1]", DELIM_DETAIL.replace("'start'", "'end'"))


# --- ToolCallAccuracy(strict_order=...): True or False, as every flag


@pytest.mark.parametrize("flag", ["false", "no", 0, 1, None])
def test_strict_order_that_is_not_a_bool_is_refused(flag: Any) -> None:
    message = f"strict_order must be True or False, got {flag!r}"
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        ToolCallAccuracy(strict_order=flag)
    assert str(caught.value) == message


# --- MultiTurnSample: a validator's error in reference_tool_calls reads as in a message

HUMAN = {"type": "human", "content": "hi"}


@pytest.mark.parametrize(
    ("call", "field", "detail"),
    [
        ({"name": "f", "args": {"x": 1}, "invalid_args": "{"}, "invalid_args",
         "args must be {} when invalid_args is set (arguments did not parse) (got str '{')"),
        ({"name": "f", "args": {"a": 1}, "kind": "custom"}, "kind",
         "a custom call's args must be {'input': <text>} (got str 'custom')"),
    ],
    ids=["invalid_args_with_args", "custom_call_args"],
)
def test_a_reference_calls_validator_error_has_no_value_error_prefix(
    call: dict[str, Any], field: str, detail: str
) -> None:
    answered = [HUMAN, {"type": "ai", "tool_calls": [dict(call, id="1")]},
                {"type": "tool", "content": "r", "tool_call_id": "1"}]
    in_a_message = ({"messages": answered}, 1, f"messages[1].tool_calls[0].{field}")
    in_the_reference = ({"messages": [HUMAN], "reference_tool_calls": [call]}, None,
                        f"reference_tool_calls[0].{field}")
    for data, index, path in (in_a_message, in_the_reference):
        with pytest.raises(TraceError) as built:
            MultiTurnSample(**data)
        with pytest.raises(TraceError) as read:
            MultiTurnSample.model_validate_json(json.dumps(data))
        for error in (built.value, read.value):
            assert (error.code, error.index, error.path, error.detail) == (
                "malformed_event", index, path, detail)
