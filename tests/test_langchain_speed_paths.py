"""The boundaries of the reader's speed paths give exactly what the general reader gives.

Three paths are pinned here: the loop that reads the leading items the fast path takes
(``_read.read_trace``) before the general loop takes over; the reader written out per class
(``_fast._special``); and the usual AIMessage with ChatOpenAI's raw calls beside its parsed
ones (``_fast_calls.raw_calls_ai``), whose arguments are compared and copied in one look
(``_args_copy``). Each case just inside a path's preconditions must take the path and give
the general reader's typed messages (their JSON, key order included); each case just
outside must give the general reader's messages or its exact ``TraceError`` (code, index,
path and message).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.adapters.langchain import _read


@contextmanager
def general_only() -> Iterator[None]:
    """The reader with its fast path off."""
    with mock.patch.object(_read, "_fast_plans", return_value={}):
        yield


@contextmanager
def fast_only() -> Iterator[None]:
    """The reader that fails when an object of a class the fast path takes reaches the
    general reader (dicts are loaded first and may reach it)."""
    with mock.patch.object(_read, "_typed", side_effect=AssertionError("general reader used")):
        yield


def outcome(trace: Any, **options: Any) -> Any:
    try:
        typed = langchain.to_messages(trace, **options)
    except TraceError as error:
        return (error.code, error.index, error.path, str(error))
    return [m.model_dump_json() for m in typed]


def general(trace: Any, **options: Any) -> Any:
    with general_only():
        return outcome(trace, **options)


def assert_fast_and_same(trace: Any, **options: Any) -> None:
    """Inside the preconditions: the fast path reads it, as the general reader does."""
    with fast_only():
        fast = outcome(trace, **options)
    assert type(fast) is list
    assert fast == general(trace, **options)


def assert_same(trace: Any, **options: Any) -> Any:
    fast = outcome(trace, **options)
    assert fast == general(trace, **options)
    return fast


# --- the usual AIMessage with raw calls --------------------------------------------------


def _entry(call_id: Any = "c1", name: Any = "w", arguments: Any = '{"c": "P", "n": 2}') -> Any:
    return {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}


def _with_raw(
    raw: list[Any], calls: list[dict[str, Any]] | None = None, **more: Any
) -> list[Any]:
    if calls is None:
        calls = [{"name": "w", "args": {"c": "P", "n": 2}, "id": "c1"}]
    message = AIMessage("", tool_calls=calls, additional_kwargs={"tool_calls": raw}, **more)
    return [HumanMessage("weather?"), message]  # the calls left pending


def test_the_usual_raw_calls_are_read_on_the_fast_path() -> None:
    assert_fast_and_same(_with_raw([_entry()]), allow_pending=True)
    two = [
        {"name": "w", "args": {"c": "P", "n": 2}, "id": "c1"},
        {"name": "v", "args": {}, "id": "c2"},
    ]
    assert_fast_and_same(
        _with_raw([_entry(), _entry("c2", "v", "")], two), allow_pending=True
    )


@pytest.mark.parametrize(
    "raw",
    [
        [{**_entry(), "index": 0}],  # a fourth key
        [{**_entry(), "x": (1, 2)}],  # a fourth key, not JSON
        [{**_entry(), "function": {"name": "w", "arguments": '{"c": "P", "n": 2}', "x": (1,)}}],
        [{"type": "function", "function": _entry()["function"], "index": 0}],  # no id, 3 keys
        [{"type": "function", "id": "c1"}],  # no function
        [{**_entry(), "function": {"name": "w", "arguments": "{}", "x": 1}}],
        [{**_entry(), "function": {"name": "w", "x": '{"c": "P", "n": 2}'}}],  # 2 keys
        [{**_entry(), "type": None}],
        [{**_entry(), "type": 1}],
        [_entry(call_id=None)],
        [_entry(call_id="c2")],
        [_entry(name="v")],
        [_entry(arguments=None)],
        [_entry(arguments='{"c": "P", "n": 2.0}')],
        [_entry(arguments='{"c": "P", "n": 3}')],
        [_entry(arguments='{"c": "P"}')],
        [_entry(arguments='{"c": "P", "n": 2} x')],
        [_entry(arguments='{"c": "P", "n": 2}  ')],  # whitespace after: still the same
        [_entry(arguments='{"n": 2, "c": "P"}')],  # keys in another order: still the same
        [_entry(), _entry("c2")],  # more raw calls than parsed ones
        [["not", "a", "dict"]],
    ],
)
def test_raw_calls_just_outside_the_usual_shape_read_as_the_general_reader_reads_them(
    raw: list[Any],
) -> None:
    assert_same(_with_raw(raw), allow_pending=True)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # dumping a changed field
@pytest.mark.parametrize(
    "call",
    [
        {"name": "w", "args": {"c": "P", "n": 2}, "id": "c1", "type": "tool_call", "x": 1},
        {"name": "w", "args": {"c": "P", "n": 2}, "id": "c1", "type": "tool"},
        {"name": "w", "args": {"c": "P", "n": 2}, "id": "c1"},  # three keys
        {"name": "w", "args": {"c": "P", "n": 2}, "type": "tool_call", "x": "c1"},  # no id
        {"name": 1, "args": {"c": "P", "n": 2}, "id": "c1", "type": "tool_call"},
        {"name": "w", "args": [], "id": "c1", "type": "tool_call"},
        {"name": "w", "args": {"c": "P", "n": 2}, "id": 1, "type": "tool_call"},
        "not a dict",
    ],
)
def test_parsed_calls_changed_after_construction_read_as_the_general_reader_reads_them(
    call: Any,
) -> None:
    trace = _with_raw([_entry()])
    trace[1].tool_calls[0] = call  # LangChain does not check a change made after construction
    assert_same(trace, allow_pending=True)


def test_invalid_calls_beside_raw_ones_leave_the_fast_path() -> None:
    trace = _with_raw([_entry()])
    trace[1].invalid_tool_calls.append(
        {"name": "w", "args": "{", "id": "c9", "error": None, "type": "invalid_tool_call"}
    )
    assert_same(trace, allow_pending=True)


class _Text(str):
    """A string of another class (equal to the plain one, but not plain JSON)."""


@pytest.mark.parametrize(
    ("args", "arguments"),
    [
        ({"s": "x", "b": True, "z": None, "i": -7}, '{"s": "x", "b": true, "z": null, "i": -7}'),
        ({"f": 1.5}, '{"f": 1.5}'),
        ({"f": 0.0}, '{"f": -0.0}'),  # equal in Python, of one class: args' own value kept
        ({"f": -0.0}, '{"f": 0.0}'),
        ({"f": float("inf")}, '{"f": Infinity}'),  # equal, but not plain JSON
        ({"n": 1}, '{"n": true}'),
        ({"n": True}, '{"n": 1}'),
        ({"n": 1}, '{"n": 1.0}'),
        ({"n": 1.0}, '{"n": 1}'),
        ({"s": _Text("x")}, '{"s": "x"}'),
        ({_Text("s"): "x"}, '{"s": "x"}'),
        ({"t": ("x",)}, '{"t": ["x"]}'),
        ({"d": {"n": 1}}, '{"d": {"n": 1}}'),
        ({"d": {"n": 1}}, '{"d": {"n": 1.0}}'),
        ({"s": "x", "l": [1, {"b": False}]}, '{"s": "x", "l": [1, {"b": false}]}'),
        ({"s": "x", "l": [1, {"b": False}]}, '{"s": "x", "l": [1, {"b": 0}]}'),
        ({}, ""),
        ({}, "{}"),
        ({}, "[]"),  # a falsy value LangChain reads as {}
    ],
)
def test_arguments_compared_and_copied_in_one_look_read_as_the_general_reader_reads_them(
    args: dict[str, Any], arguments: str
) -> None:
    calls = [{"name": "w", "args": args, "id": "c1"}]
    assert_same(_with_raw([_entry(arguments=arguments)], calls), allow_pending=True)


def test_arguments_nested_to_the_depth_limit_read_as_the_general_reader_reads_them() -> None:
    for depth in (126, 127, 128, 129):
        args: dict[str, Any] = {"v": 1}
        for _ in range(depth):
            args = {"d": args}
        calls = [{"name": "w", "args": args, "id": "c1"}]
        trace = _with_raw([_entry(arguments=json.dumps(args))], calls)
        assert_same(trace, allow_pending=True)


def test_an_int_at_the_json_bound_reads_as_the_general_reader_reads_it() -> None:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # so that the arguments text of a longer one parses
    try:
        for value in (10**4300 - 1, 10**4300, -(10**4300) + 1, -(10**4300)):
            calls = [{"name": "w", "args": {"n": value}, "id": "c1"}]
            trace = _with_raw([_entry(arguments=json.dumps({"n": value}))], calls)
            assert_same(trace, allow_pending=True)
    finally:
        sys.set_int_max_str_digits(limit)


def test_the_copy_keeps_the_order_of_the_parsed_calls_args_and_none_of_their_dicts() -> None:
    calls = [{"name": "w", "args": {"b": 1, "a": "x"}, "id": "c1"}]
    trace = _with_raw([_entry(arguments='{"a": "x", "b": 1}')], calls)
    assert_fast_and_same(trace, allow_pending=True)
    typed = langchain.to_messages(trace, allow_pending=True)
    assert list(typed[1].tool_calls[0].args) == ["b", "a"]
    assert typed[1].tool_calls[0].args is not trace[1].tool_calls[0]["args"]
    kept = typed[1].metadata["langchain"]["additional_kwargs"]["tool_calls"][0]
    raw = trace[1].additional_kwargs["tool_calls"][0]
    assert kept == raw
    assert kept is not raw
    assert kept["function"] is not raw["function"]


@pytest.mark.parametrize(
    "more",
    [
        {"response_metadata": {"model_name": "m"}},
        {"usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}},
        {"id": "run-1", "name": "agent"},
    ],
)
def test_raw_calls_with_other_fields_read_as_the_general_reader_reads_them(
    more: dict[str, Any],
) -> None:
    assert_fast_and_same(_with_raw([_entry()], **more), allow_pending=True)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=4),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                   max_size=3),
    max_leaves=6,
)
_ARGS = st.dictionaries(st.text(max_size=4), _VALUES, max_size=4)


def _spellings(args: dict[str, Any]) -> st.SearchStrategy[str]:
    """Texts of the same arguments and of others close to them."""
    changed = {key: (float(value) if type(value) is int else value) for key, value in args.items()}
    return st.sampled_from(
        [
            json.dumps(args),
            json.dumps(args, separators=(",", ":")),
            json.dumps(dict(reversed(list(args.items())))),
            json.dumps(changed),
            json.dumps({**args, "extra": 1}),
            json.dumps(args) + " x",
            "",
        ]
    )


@given(data=st.data(), args=_ARGS)
@example(data=None, args={"n": 0})
def test_any_arguments_read_as_the_general_reader_reads_them(
    data: st.DataObject | None, args: dict[str, Any]
) -> None:
    text = json.dumps(args) if data is None else data.draw(_spellings(args))
    calls = [{"name": "w", "args": args, "id": "c1"}]
    assert_same(_with_raw([_entry(arguments=text)], calls), allow_pending=True)


# --- the reader written out per class ---------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("hi"),
        HumanMessage("hi", name="u", id="h1"),
        HumanMessage("hi", additional_kwargs={"k": [1]}, response_metadata={"r": None}),
        SystemMessage("be brief"),
        SystemMessage("be brief", additional_kwargs={"k": 1}, name="s"),
        AIMessage("done"),
        AIMessage("done", response_metadata={"model_name": "m"}),
        AIMessage("done", usage_metadata={"input_tokens": 1, "output_tokens": 2,
                                          "total_tokens": 3}),
        AIMessage("done", additional_kwargs={"refusal": None}),
        AIMessage("", tool_calls=[{"name": "w", "args": {"c": 1}, "id": "c1"}]),
    ],
)
def test_each_class_is_read_on_its_fast_path(message: Any) -> None:
    assert_fast_and_same([message], allow_pending=True)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # dumping a changed field
@pytest.mark.parametrize(
    ("message", "field", "value"),
    [
        (HumanMessage("hi"), "additional_kwargs", []),
        (HumanMessage("hi"), "response_metadata", None),
        (HumanMessage("hi"), "name", 1),
        (HumanMessage("hi"), "type", "ai"),
        (HumanMessage("hi"), "content", None),
        (HumanMessage("hi"), "additional_kwargs", {"t": (1, 2)}),
        (SystemMessage("s"), "additional_kwargs", {"__openai_role__": "developer"}),
        (SystemMessage("s"), "id", 7),
        (ToolMessage("r", tool_call_id="c1"), "status", "failed"),
        (ToolMessage("r", tool_call_id="c1"), "tool_call_id", None),
        (ToolMessage("r", tool_call_id="c1"), "artifact", object()),
        (ToolMessage("r", tool_call_id="c1"), "artifact", {"rows": [1]}),
        (ToolMessage("r", tool_call_id="c1"), "response_metadata", {"x": float("nan")}),
        (AIMessage("a"), "usage_metadata", {"input_tokens": "1", "output_tokens": 2,
                                            "total_tokens": 3}),
        (AIMessage("a"), "invalid_tool_calls", None),
        (AIMessage("a"), "tool_calls", None),
        (AIMessage("a"), "additional_kwargs", {"tool_calls": []}),
        (AIMessage("a"), "additional_kwargs", {"refusal": "no"}),
        (AIMessage("a"), "additional_kwargs", {"function_call": {"name": "f", "arguments": ""}}),
    ],
)
def test_each_class_changed_after_construction_reads_as_the_general_reader_reads_it(
    message: Any, field: str, value: Any
) -> None:
    changed = message.model_copy()
    changed.__dict__[field] = value  # LangChain does not check a change made after construction
    trace: list[Any] = [HumanMessage("q"), AIMessage("", tool_calls=[
        {"name": "w", "args": {}, "id": "c1"}])] if message.type == "tool" else []
    assert_same([*trace, changed])


def test_a_tool_result_is_read_on_its_fast_path() -> None:
    trace = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "w", "args": {}, "id": "c1"},
                                  {"name": "w", "args": {}, "id": "c2"}]),
        ToolMessage("r", tool_call_id="c1", name="w"),
        ToolMessage("bad", tool_call_id="c2", status="error", artifact={"a": 1}, id="t2"),
    ]
    assert_fast_and_same(trace)


# --- the loop over the leading items the fast path reads ----------------------------------


def _conversation() -> list[Any]:
    return [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "w", "args": {}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1"),
        AIMessage("a"),
    ]


def test_a_trace_the_fast_path_reads_whole_is_read_in_the_leading_loop() -> None:
    assert_fast_and_same(_conversation())


@pytest.mark.parametrize("at", [0, 1, 2, 3])
def test_the_general_reader_takes_over_at_any_item(at: int) -> None:
    """From the first item the fast path does not read (here its dict form) on."""
    trace = _conversation()
    trace[at] = langchain.to_json([trace[at]])[0]
    assert_same(trace)


@pytest.mark.parametrize("at", [0, 1, 3])
def test_an_object_missing_a_field_is_refused_at_its_index(at: int) -> None:
    trace = _conversation()
    cls = type(trace[at])
    fields = {k: v for k, v in trace[at].__dict__.items() if k != "type"}
    trace[at] = cls.model_construct(**fields)
    del trace[at].__dict__["content"]
    found = assert_same(trace)
    assert found[:3] == ("malformed_event", at, f"messages[{at}].content")


def test_a_message_giving_several_keeps_later_errors_at_their_source_index() -> None:
    """A human message with Anthropic tool_result blocks gives two messages: the indexes of
    later errors still name the source items."""
    trace = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[{"name": "w", "args": {}, "id": "c1"}]),
        HumanMessage([{"type": "tool_result", "tool_use_id": "c1", "content": "r"},
                      {"type": "text", "text": "and?"}]),
        AIMessage("a"),
        ToolMessage("orphan", tool_call_id="c9"),
    ]
    found = assert_same(trace)
    assert found[:2] == ("orphan_tool_result", 4)


def test_an_empty_trace_is_refused_as_before() -> None:
    assert assert_same([])[0] == "empty_conversation"
