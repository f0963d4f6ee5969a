"""A value that holds itself, or one nested past Python's depth, has no JSON form here: every
reader refuses it as ``unserializable_value`` where it is. Before, the JSON check walked a
cycle forever (a reader never returned), and LangChain's fast path let a RecursionError out."""

from __future__ import annotations

from typing import Any

import langchain_core.messages as lc
import pytest

from tracebridge import TraceError
from tracebridge._json import NotPlainJson, check_json, json_copy_checked
from tracebridge.adapters import langchain, openai_chat


def _cyclic(kind: str) -> Any:
    if kind == "list":
        value: Any = []
        value.append(["inner", value])
        return value
    value = {}
    value["inner"] = {"again": value}
    return value


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def _refused(read: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        read()
    return caught.value.code, caught.value.index, caught.value.path


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_value_that_holds_itself_is_not_json(kind: str) -> None:
    assert _refused(lambda: check_json({"a": _cyclic(kind)}, "here")) == (
        "unserializable_value", None, "here.a")
    with pytest.raises(NotPlainJson):
        json_copy_checked({"a": _cyclic(kind)})


def test_a_value_nested_past_the_bound_is_refused_where_it_is() -> None:
    # JSON, but deeper than JSON readers go (tracebridge._json.MAX_DEPTH; see
    # test_json_depth_bound.py): refused at the value
    assert _refused(lambda: check_json({"a": _deep(5000)}, "here")) == (
        "unserializable_value", None, "here.a")


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_openai_chat_refuses_a_value_that_holds_itself(kind: str) -> None:
    trace = [{"role": "user", "content": "x", "vendor": _cyclic(kind)}]
    assert _refused(lambda: openai_chat.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].vendor")


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_langchain_refuses_a_value_that_holds_itself_where_it_is(kind: str) -> None:
    kwargs = [lc.HumanMessage(content="x", additional_kwargs={"vendor": _cyclic(kind)})]
    assert _refused(lambda: langchain.to_messages(kwargs)) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.vendor")
    calls = [
        lc.HumanMessage(content="x"),
        lc.AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": _cyclic(kind)},
                                              "id": "c1"}]),
        lc.ToolMessage(content="ok", tool_call_id="c1"),
    ]
    assert _refused(lambda: langchain.to_messages(calls)) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a")


def test_langchain_refuses_a_value_nested_past_pythons_depth() -> None:
    trace = [lc.HumanMessage(content="x", additional_kwargs={"vendor": _deep(5000)})]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.vendor")
