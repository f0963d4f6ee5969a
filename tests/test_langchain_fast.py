"""The reader's fast path (``_fast.py``) gives exactly what the general reader gives: the
same typed messages for every law-kit trace and golden trace, the same error (code, index,
path) for every broken one, and copies rather than the source's own dicts."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.adapters.langchain import _fast, _read

from law_kits.langchain import KIT

GOLDEN = sorted(
    (Path(__file__).resolve().parents[1] / "golden_traces" / "langchain").rglob("*.json")
)


@contextmanager
def general_only() -> Iterator[None]:
    """The reader with its fast path off."""
    with mock.patch.object(_read, "_fast_plans", return_value={}):
        yield


@contextmanager
def generic_only() -> Iterator[None]:
    """The fast path read from each class's plan (``typed_fast``), as it is for a LangChain
    version whose classes declare other fields than the written-out readers know."""
    import langchain_core.messages as lc

    generic = _fast.plans(lc, _read._field_defaults, _read._MAPPED, _read._REQUIRED,
                          langchain.NAME, special=False)
    with mock.patch.object(_read, "_fast_plans", return_value=generic):
        yield


def outcome(trace: Any) -> Any:
    try:
        return langchain.to_messages(trace)
    except TraceError as error:
        return (error.code, error.index, error.path, str(error))


def both(trace: Any) -> tuple[Any, Any]:
    """What the fast path and the general reader give; the fast path read from the plans
    must give what the written-out readers give."""
    fast = outcome(trace)
    with generic_only():
        assert outcome(trace) == fast
    with general_only():
        general = outcome(trace)
    return fast, general


@given(KIT.traces)
def test_every_law_kit_trace_reads_the_same_on_both_paths(trace: Any) -> None:
    fast, general = both(trace)
    assert fast == general


@given(KIT.broken)
def test_every_broken_trace_is_refused_the_same_on_both_paths(broken: Any) -> None:
    fast, general = both(broken.trace)
    assert fast == general
    assert type(fast) is tuple


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_every_golden_trace_reads_the_same_on_both_paths(path: Path) -> None:
    trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
    fast, general = both(trace)
    assert fast == general


RAW = [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"c": ["P"]}'}}]
PLAIN = [
    SystemMessage("be brief", id="s1"),
    HumanMessage("weather?", additional_kwargs={"lang": ["en"]}),
    AIMessage(
        "",
        tool_calls=[{"name": "w", "args": {"c": ["P"]}, "id": "c1"}],
        additional_kwargs={"tool_calls": RAW, "refusal": None},
        response_metadata={"model_name": "m", "logprobs": None},
        usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    ),
    ToolMessage("18C", tool_call_id="c1", status="error", artifact={"raw": [18]}),
    AIMessage("18C.", name="agent"),
]


def test_plain_objects_take_the_fast_path() -> None:
    with mock.patch.object(_read, "_typed", side_effect=AssertionError("general reader used")):
        typed = langchain.to_messages(PLAIN)
    with general_only():
        assert typed == langchain.to_messages(PLAIN)
    assert typed[3].is_error is True
    assert typed[2].metadata["langchain"]["additional_kwargs"]["tool_calls"] == RAW


def test_the_installed_classes_get_the_written_out_readers() -> None:
    import langchain_core.messages as lc

    readers = _read._fast_plans(lc)
    assert set(readers) == {lc.HumanMessage, lc.AIMessage, lc.ToolMessage, lc.SystemMessage}
    assert all(reader.__qualname__ == "_special.<locals>.read" for reader in readers.values())


def test_a_class_with_another_field_is_read_from_its_plan() -> None:
    import langchain_core.messages as lc

    def defaults(cls: type) -> dict[str, Any]:
        found = dict(_read._field_defaults(cls))
        return found | {"example": False} if cls is lc.HumanMessage else found

    readers = _fast.plans(lc, defaults, _read._MAPPED, _read._REQUIRED, langchain.NAME)
    generic = readers[lc.HumanMessage]
    assert isinstance(generic, functools.partial)
    assert generic.func is _fast.typed_fast
    assert readers[lc.AIMessage].__qualname__ == "_special.<locals>.read"
    message = HumanMessage("hi", name="u", additional_kwargs={"k": [1]})
    message.__dict__["example"] = True  # what a version declaring the field would hold
    typed = generic(message)
    assert typed is not None
    assert typed.metadata == {"langchain": {"additional_kwargs": {"k": [1]}, "example": True}}
    message.__dict__["example"] = False
    typed = generic(message)
    assert typed is not None
    assert typed.metadata == {"langchain": {"additional_kwargs": {"k": [1]}}}


def test_what_the_fast_path_keeps_is_a_copy() -> None:
    typed = langchain.to_messages(PLAIN)
    PLAIN[1].additional_kwargs["lang"].append("fr")
    PLAIN[2].additional_kwargs["tool_calls"][0]["function"]["name"] = "x"
    PLAIN[2].tool_calls[0]["args"]["c"].append("R")
    try:
        assert typed[1].metadata["langchain"]["additional_kwargs"] == {"lang": ["en"]}
        assert (
            typed[2].metadata["langchain"]["additional_kwargs"]["tool_calls"][0]["function"]["name"]
            == "w"
        )
        assert typed[2].tool_calls[0].args == {"c": ["P"]}
    finally:
        PLAIN[1].additional_kwargs["lang"].pop()
        PLAIN[2].additional_kwargs["tool_calls"][0]["function"]["name"] = "w"
        PLAIN[2].tool_calls[0]["args"]["c"].pop()


@pytest.mark.parametrize(
    ("message", "code", "path"),
    [
        (
            HumanMessage("hi", additional_kwargs={"t": (1, 2)}),
            "unserializable_value",
            "messages[0].additional_kwargs.t",
        ),
        (
            HumanMessage("hi", response_metadata={"x": float("nan")}),
            "unserializable_value",
            "messages[0].response_metadata.x",
        ),
    ],
)
def test_a_value_that_is_not_json_falls_to_the_general_reader_and_its_error(
    message: Any, code: str, path: str
) -> None:
    fast, general = both([message])
    assert fast == general
    assert fast[:3] == (code, 0, path)


def _decoded(text: str) -> Any:
    """What ``parse_arguments`` is defined as: ``json.loads(text, strict=False)``, an object
    kept, a falsy value read as ``{}``, anything else (or text that is not JSON) None."""
    if not text:
        return {}
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return None
    if type(value) is dict:
        return value
    return None if value else {}


_JSONISH = st.text(alphabet='{}[]":,. \t\n\\-0123456789eEaftrunlNIy', max_size=24)


@given(text=st.one_of(_JSONISH, st.builds(json.dumps, st.dictionaries(st.text(), st.integers()))))
def test_parse_arguments_reads_what_json_loads_reads(text: str) -> None:
    from tracebridge.adapters.langchain._call_blocks import parse_arguments

    assert parse_arguments(text) == _decoded(text)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}', '{"a":1} ', '{"a":1}x', '{"a":', "{", '{"a": NaN}', "[1]", "0", '{"a": 1, }',
     "{x}", ' {"a": 1}', '{"a": "\n"}', "{}"],
)
def test_parse_arguments_on_edge_texts(text: str) -> None:
    from tracebridge.adapters.langchain._call_blocks import parse_arguments

    # compared as JSON text: NaN is unequal to itself
    assert json.dumps(parse_arguments(text)) == json.dumps(_decoded(text))


class _Text(str):
    """A string of another class (equal to the plain one, but not plain JSON)."""


def _raw(call_id: Any = "c1", name: Any = "w", arguments: Any = '{"c": ["P"]}', **more: Any) -> Any:
    entry: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not _NO_ID:
        entry["id"] = call_id
    return entry | more


_NO_ID = object()


@pytest.mark.parametrize(
    ("raw", "call_id", "code"),
    [
        ([_raw()], "c1", None),
        ([_raw(arguments='{"c":["P"]}')], "c1", None),  # another spelling of the same arguments
        ([_raw(call_id=None)], None, None),
        ([_raw(call_id=_NO_ID)], None, None),
        ([_raw(call_id=_Text("c1"))], "c1", "unserializable_value"),
        ([_raw(name=_Text("w"))], "c1", "unserializable_value"),
        ([_raw(index=0)], "c1", None),
        ([{**_raw(), "function": {"name": "w", "arguments": '{"c": ["P"]}', "x": 1}}], "c1", None),
        # a raw call naming the call by id with other arguments or another name, or the raw
        # call of a call taken out of tool_calls, is a stale copy (read, kept as it is)
        ([_raw(arguments='{"c": ["Q"]}')], "c1", None),
        ([_raw(arguments=None)], "c1", None),
        ([_raw(call_id="c2")], "c1", "conflicting_fields"),
        ([_raw(name="v")], "c1", None),
        ([_raw(), _raw(call_id="c2")], "c1", None),
        ([_raw(call_id=None)], "c1", "conflicting_fields"),
        (["not a call"], "c1", "conflicting_fields"),
    ],
)
def test_raw_provider_calls_beside_the_parsed_ones_read_the_same_on_both_paths(
    raw: list[Any], call_id: str | None, code: str | None
) -> None:
    message = AIMessage(
        "", tool_calls=[{"name": "w", "args": {"c": ["P"]}, "id": call_id}],
        additional_kwargs={"tool_calls": raw},
    )
    trace = [HumanMessage("weather?"), message]  # the call left pending: ids may be None

    def read() -> Any:
        try:
            return langchain.to_messages(trace, allow_pending=True)
        except TraceError as error:
            return (error.code, error.index, error.path, str(error))

    fast = read()
    with generic_only():
        assert read() == fast
    with general_only():
        assert read() == fast
    if code is None:
        assert type(fast) is list
        assert fast[1].metadata == {"langchain": {"additional_kwargs": {"tool_calls": raw}}}
    else:
        assert fast[:2] == (code, 1)


def test_the_usual_raw_calls_take_the_fast_path() -> None:
    trace = [
        HumanMessage("weather?"),
        AIMessage("", tool_calls=[{"name": "w", "args": {"c": ["P"]}, "id": "c1"}],
                  additional_kwargs={"tool_calls": [_raw()]}),
        ToolMessage("18C", tool_call_id="c1"),
    ]
    with mock.patch.object(_read, "_typed", side_effect=AssertionError("general reader used")):
        typed = langchain.to_messages(trace)
    raw = typed[1].metadata["langchain"]["additional_kwargs"]["tool_calls"]
    assert raw == [_raw()]
    assert raw[0] is not trace[1].additional_kwargs["tool_calls"][0]
    assert raw[0]["function"] is not trace[1].additional_kwargs["tool_calls"][0]["function"]
