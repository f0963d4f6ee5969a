"""The boundaries of openai_chat's (and so swarm's) fast reader and fast writer.

``_FastReader`` takes a message only when every key is one the general reader maps with no
error possible; ``_FastWriter`` writes a message only when nothing in it can be refused.
These tests put inputs just inside and just outside each precondition and hold the fast path
to the general one: the same typed message (``model_fields_set`` and metadata key order
included, so ``model_dump_json`` agrees too), the same dict (key order included), and where
the fast path hands a message back, the same result or the same ``TraceError`` from the whole
adapter as from the general code alone.
"""

from __future__ import annotations

import copy
import json
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, TraceError
from tracebridge._json import MAX_DEPTH
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.openai_chat import _read, _write
from tracebridge.validation import validate

from law_kits.swarm import swarm_shaped
from strategies import conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
OPENAI = openai_chat.OPENAI
SWARM = swarm.SWARM
DIALECTS = (OPENAI, SWARM)


class Key(str):
    """A str subclass, as an Enum member or a library's own string type would be."""


class Role(str, Enum):
    DEVELOPER = "developer"
    FUNCTION = "function"


# --- the general paths alone ---------------------------------------------------------------


def _outcome(run: Any) -> Any:
    """What ``run()`` gives: its result, or the TraceError as (code, index, path, text)."""
    try:
        return run()
    except TraceError as error:
        return ("error", error.code, error.index, error.path, str(error))


def _general_read(item: Any, dialect: Any, index: int = 0) -> Any:
    return _outcome(lambda: _read._Reader(dialect, index).message(copy.deepcopy(item)))


def _general_trace(trace: list[Any], dialect: Any) -> Any:
    """``read_trace`` without the fast reader: every element by ``_Reader``, then the rules."""

    def run() -> Any:
        messages = [_read._Reader(dialect, i).message(item) for i, item in enumerate(trace)]
        validate(messages, source=dialect.source, origin=range(len(messages)))
        _read._function_results_answer_function_calls(messages, dialect.source)
        return messages

    return _outcome(run)


def _general_write(messages: list[Any], dialect: Any) -> Any:
    """``write_trace`` without the fast writer."""

    def run() -> Any:
        validate(messages, allow_pending=True, source=dialect.source)
        unanswered = _write.unanswered_calls(messages)
        return [
            _write._OwnWriter(dialect, i, (), unanswered.get(i, ())).message(message)
            for i, message in enumerate(messages)
        ]

    return _outcome(run)


def _same_messages(ours: Any, general: Any) -> None:
    assert ours == general
    if isinstance(general, list):
        for mine, theirs in zip(ours, general, strict=True):
            _same_message(mine, theirs)


def _same_message(ours: Any, general: Any) -> None:
    assert ours == general
    assert ours.model_fields_set == general.model_fields_set
    assert ours.model_dump_json() == general.model_dump_json()  # metadata key order too
    for mine, theirs in zip(ours.tool_calls if isinstance(ours, AIMessage) else [],
                            general.tool_calls if isinstance(general, AIMessage) else [],
                            strict=True):
        assert mine.model_fields_set == theirs.model_fields_set


def _same_dicts(ours: Any, general: Any) -> None:
    assert ours == general
    if isinstance(general, list):
        assert [list(d) for d in ours] == [list(d) for d in general]  # key order too


def _check_fast_read(item: Any, dialect: Any) -> bool:
    """Whether the fast reader took ``item``; what it took equals the general reader's
    message, and it takes nothing the general reader refuses."""
    given_item = copy.deepcopy(item)
    fast = _read._FastReader(dialect).message(given_item)
    assert given_item == item  # the input is left alone
    general = _general_read(item, dialect)
    if fast is None:
        return False
    assert not (isinstance(general, tuple) and general[0] == "error"), general
    _same_message(fast, general)
    return True


# --- reader: the simple roles --------------------------------------------------------------

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("item", "dialect", "taken"),
    [
        ({"role": "user", "content": "hi"}, OPENAI, True),
        ({"role": "user", "content": "hi", "name": "ann"}, OPENAI, True),
        ({"role": "user", "content": "hi", "name": None}, OPENAI, False),  # kept in fields
        ({"role": "user", "content": "hi", "name": 3}, OPENAI, False),  # malformed_event
        ({"role": "user", "content": "hi", "x_extra": "ann"}, OPENAI, False),
        ({"role": "user", "content": "hi", "name": "ann", "x": 1}, OPENAI, False),
        ({"role": "user", "content": None}, OPENAI, False),
        ({"role": "user"}, OPENAI, False),
        ({"role": "system", "content": "be brief"}, OPENAI, True),
        ({"role": "developer", "content": "be brief", "name": "ops"}, SWARM, True),
        ({"role": Role.DEVELOPER, "content": "be brief"}, OPENAI, False),  # stored as str
        ({"role": "system", "content": "s", "sender": "ops"}, SWARM, False),
        ({"role": "tool", "content": "r", "tool_call_id": "c1"}, OPENAI, True),
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "name": "f"}, OPENAI, True),
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "tool_name": "f"}, SWARM, True),
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "tool_name": "f"}, OPENAI, False),
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "name": "f"}, SWARM, False),
        ({"role": "tool", "content": "r", "name": "f"}, OPENAI, False),  # no tool_call_id
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "name": None}, OPENAI, False),
        ({"role": "tool", "content": "r", "tool_call_id": 7}, OPENAI, False),
        ({"role": "tool", "content": "r", "tool_call_id": "c1", "name": "f", "x": 1}, OPENAI,
         False),
        ({"role": "tool", "content": [{"type": "text", "text": "r"}], "tool_call_id": "c1"},
         OPENAI, False),
        ({"role": "function", "content": "r", "name": "f"}, OPENAI, False),
        ({"role": Role.FUNCTION, "content": "r", "name": "f"}, OPENAI, False),
        ({"role": "critic", "content": "r"}, OPENAI, False),  # unknown_role
        ({"role": None, "content": "r"}, OPENAI, False),  # streaming_chunk
        ({"content": "r"}, OPENAI, False),  # no role
    ],
)
def test_the_simple_roles_are_taken_exactly_within_their_shapes(
    item: dict[str, Any], dialect: Any, taken: bool
) -> None:
    assert _check_fast_read(item, dialect) is taken


# --- reader: assistant messages ------------------------------------------------------------

NULLS = ("refusal", "annotations", "audio", "function_call", "tool_calls")


@pytest.mark.parametrize(
    ("item", "dialect", "taken"),
    [
        ({"role": "assistant", "content": "hi"}, OPENAI, True),
        ({"role": "assistant"}, OPENAI, True),  # content absent
        ({"role": "assistant", "content": None}, OPENAI, True),
        ({"content": None, **dict.fromkeys(NULLS), "role": "assistant", "sender": "A"},
         SWARM, True),
        ({"role": "assistant", "sender": None, "content": "", "tool_calls": None}, SWARM, True),
        ({"role": "assistant", "content": "x", "name": None}, OPENAI, True),  # kept in fields
        ({"role": "assistant", "content": "x", "name": None}, SWARM, False),  # a foreign key
        ({"role": "assistant", "content": "x", "sender": "A"}, OPENAI, False),
        ({"role": "assistant", "content": "x", "sender": 3}, SWARM, False),
        ({"role": "assistant", "content": "x", "x_extra": None}, OPENAI, False),
        ({"role": "assistant", "content": "x", Key("refusal"): None}, OPENAI, False),
        ({"role": "assistant", "content": "x", "annotations": []}, OPENAI, True),
        ({"role": "assistant", "content": None, "annotations": [], "audio": None}, OPENAI, True),
        ({"role": "assistant", "annotations": [], "refusal": None}, OPENAI, True),
        ({"role": "assistant", "content": "x", "annotations": [{"type": "file"}]}, OPENAI, False),
        ({"role": "assistant", "content": "x", "refusal": "no"}, OPENAI, False),
        ({"role": "assistant", "content": "x", "tool_calls": []}, OPENAI, False),
        ({"role": "assistant", "content": "x", "tool_calls": {}}, OPENAI, False),
        ({"role": "assistant", "content": 3}, OPENAI, False),
        ({"role": "assistant", "content": "x", "tool_calls": [CALL], "function_call": None},
         SWARM, True),
        ({"role": "assistant", "content": "x", "tool_calls": [CALL],
          "function_call": {"name": "f", "arguments": "{}"}}, OPENAI, False),
    ],
)
def test_assistant_messages_are_taken_exactly_within_their_shape(
    item: dict[str, Any], dialect: Any, taken: bool
) -> None:
    assert _check_fast_read(item, dialect) is taken


def test_kept_nulls_keep_the_source_order_beside_the_other_kept_forms() -> None:
    item: dict[str, Any] = {"audio": None, "role": "assistant", "refusal": None,
                            "annotations": [], "content": None, "function_call": None}
    read = _read._FastReader(OPENAI).message(item)
    assert read is not None
    assert list(read.metadata["openai_chat"]) == ["content", "annotations", "fields"]
    assert list(read.metadata["openai_chat"]["fields"]) == ["audio", "refusal", "function_call"]
    assert _check_fast_read(item, OPENAI)


def _with_call(call: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _function(arguments: Any, **more: Any) -> dict[str, Any]:
    return {**CALL, "function": {"name": "f", "arguments": arguments, **more}}


DEEP = "[" * MAX_DEPTH + "]" * MAX_DEPTH


@pytest.mark.parametrize(
    ("call", "taken"),
    [
        (CALL, True),
        (_function(""), True),
        (_function('{"a": 1}'), True),
        (_function('{"a":1}'), True),  # kept spelling
        (_function('{"a": 1.50}'), True),  # kept spelling
        (_function('{"a": "\\u00e9"}'), True),
        (_function('{"a": "é"}'), True),  # kept spelling (dumps escapes it)
        (_function('{"a": 1, "a": 2}'), True),  # kept spelling
        (_function('{"a": ' + DEEP[2:-2] + "}"), True),  # just inside the depth
        (_function('{"a": ' + DEEP + "}"), False),  # one level deeper: invalid_args
        (_function(" {}"), False),
        (_function("{} "), False),
        (_function("{"), False),
        (_function("[]"), False),
        (_function('"{}"'), False),
        (_function('{"a": NaN}'), False),
        (_function('{"a": 1e999}'), False),
        (_function({"a": 1}), False),
        (_function("{}", strict=True), False),  # kept in inner
        ({"id": "c1", "type": "function", "function": {"name": "f"}}, False),
        ({"id": "c1", "type": "function", "function": {"name": "f", "x": "{}"}}, False),
        ({"id": "c1", "type": "function", "function": {"arguments": "{}", "x": "f"}}, False),
        ({"id": "c1", "type": "function", "function": {"name": 3, "arguments": "{}"}}, False),
        ({"id": "c1", "type": "function", "x": {"name": "f", "arguments": "{}"}}, False),
        ({"id": "c1", "kind": "function", "function": {"name": "f", "arguments": "{}"}}, False),
        ({"x": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}, False),
        ({**CALL, "id": None}, False),
        ({**CALL, "id": 7}, False),
        ({**CALL, "type": "custom"}, False),
        ({**CALL, "type": Key("function")}, False),
        ({**CALL, "function": ["f", "{}"]}, False),
        ({**CALL, "index": 0}, False),  # a streaming delta's key
        ({"id": "c1", "function": {"name": "f", "arguments": "{}"}}, False),
        (["c1", "function"], False),
    ],
)
def test_calls_are_taken_exactly_within_their_shape(call: Any, taken: bool) -> None:
    for dialect in DIALECTS:
        assert _check_fast_read(_with_call(call), dialect) is taken


def test_one_call_the_fast_reader_cannot_take_sends_the_whole_message_to_the_general_one() -> None:
    item = {"role": "assistant", "content": "", "tool_calls": [CALL, {**CALL, "id": None}]}
    assert _read._FastReader(OPENAI).message(item) is None
    trace = [item, {"role": "tool", "tool_call_id": "c1", "content": "r"}]
    assert _outcome(lambda: openai_chat.to_messages(trace)) == _general_trace(trace, OPENAI)


# --- reader: generated messages and traces -------------------------------------------------

_TEXT = st.sampled_from(["", "hi", "Front Desk", "{}", "é"])
_RAW_ARGUMENTS = st.sampled_from(
    ["{}", "", '{"a": 1}', '{"a":1}', '{"a": [1, {"b": null}]}', " {}", "[]", "{", "1",
     '{"a": 1.0}', '{"a": 1.50}', '{"a": "\\u00e9"}', '{"a": 1, "a": 2}', "{ }"]
)


@st.composite
def _calls(draw: st.DrawFn) -> Any:
    call: dict[str, Any] = {
        "id": draw(st.sampled_from(["c1", "c2", None, 7])),
        "type": draw(st.sampled_from(["function", "function", "custom", None])),
        "function": {"name": draw(st.sampled_from(["f", "g", 3])),
                     "arguments": draw(_RAW_ARGUMENTS)},
    }
    for key in draw(st.lists(st.sampled_from(["id", "type", "function"]), max_size=1)):
        del call[key]
    if draw(st.integers(0, 5)) == 0:
        call[draw(st.sampled_from(["index", "x_extra"]))] = 0
    if "function" in call and draw(st.integers(0, 5)) == 0:
        call["function"]["x_extra"] = True
    return call


@st.composite
def _assistant_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """Assistant dicts around the fast reader's shape: keys in any order, nulls anywhere."""
    entries: list[tuple[Any, Any]] = [("role", "assistant")]
    content = draw(st.sampled_from(["absent", "null", "text", "parts"]))
    if content != "absent":
        entries.append(("content", {"null": None, "text": draw(_TEXT),
                                    "parts": [{"type": "text", "text": "hi"}]}[content]))
    for key in draw(st.lists(st.sampled_from(
            [*NULLS, "name", "sender", "x_extra", Key("audio"), "role", "delta"]),
            unique=True, max_size=4)):
        if key in ("role",):
            continue
        entries.append((key, draw(st.sampled_from([None, None, "A", 3, [], {}]))))
    if draw(st.booleans()):
        entries = [(k, v) for k, v in entries if k != "tool_calls"]
        entries.append(("tool_calls", draw(st.lists(_calls(), min_size=1, max_size=3))))
    order = draw(st.permutations(range(len(entries))))
    return {entries[k][0]: entries[k][1] for k in order}


@st.composite
def _simple_dicts(draw: st.DrawFn) -> dict[str, Any]:
    item: dict[str, Any] = {
        "role": draw(st.sampled_from(["user", "system", "developer", "tool", "function"])),
        "content": draw(st.sampled_from(["hi", None, 3, [{"type": "text", "text": "hi"}]])),
    }
    for key in draw(st.lists(st.sampled_from(["name", "tool_name", "tool_call_id", "sender",
                                              "x_extra", "content"]), unique=True, max_size=3)):
        item[key] = draw(st.sampled_from(["c1", None, 3]))
    return item


@given(item=st.one_of(_assistant_dicts(), _simple_dicts()))
def test_the_fast_reader_takes_only_what_the_general_reader_reads_the_same(
    item: dict[str, Any],
) -> None:
    for dialect in DIALECTS:
        _check_fast_read(item, dialect)


@given(trace=swarm_shaped())
def test_swarm_histories_read_the_same_as_by_the_general_reader(trace: list[Any]) -> None:
    _same_messages(swarm.to_messages(trace), _general_trace(trace, SWARM))


def _golden(folder: str) -> list[list[Any]]:
    return [json.loads(path.read_text(encoding="utf-8"))["trace"]
            for path in sorted((GOLDEN / folder).glob("*.json"))]


@pytest.mark.parametrize(("folder", "adapter"), [("openai_chat", openai_chat), ("swarm", swarm)])
def test_golden_traces_read_and_write_the_same_as_by_the_general_paths(
    folder: str, adapter: Any
) -> None:
    dialect = OPENAI if adapter is openai_chat else SWARM
    for trace in _golden(folder):
        typed = adapter.to_messages(trace)
        _same_messages(typed, _general_trace(trace, dialect))
        _same_dicts(adapter.from_messages(typed), _general_write(typed, dialect))


# --- writer --------------------------------------------------------------------------------

_KEY_UNIVERSE = sorted(
    {"content", "role", "name", "sender", "tool_name", "tool_call_id", "tool_calls",
     "function_call", "refusal", "audio", "annotations", "delta", "choices", "object",
     "index", "x_extra", "type", "id", "metadata", ""}
)


@given(extra=st.text(max_size=8))
def test_the_nulls_the_fast_writer_refuses_are_the_ones_the_reader_maps(extra: str) -> None:
    for dialect in DIALECTS:
        for role, name_key in dialect.name_keys.items():
            maps = _write.reader_maps(role, name_key)
            for key in [*_KEY_UNIVERSE, extra]:
                assert maps(key, None) is (key in _write.MAPPED_WHEN_NULL), (role, key)


def _fast_write(message: Any, dialect: Any) -> Any:
    return _write._FastWriter(dialect).message(message)


def _check_fast_write(message: Any, dialect: Any) -> bool:
    """Whether the fast writer wrote ``message``; what it wrote is the general writer's dict
    (key order included), and it writes nothing the general writer refuses."""
    fast = _fast_write(message, dialect)
    general = _outcome(lambda: _write._OwnWriter(dialect, 0, (), ()).message(message))
    if fast is None:
        return False
    assert not (isinstance(general, tuple) and general[0] == "error"), general
    assert fast == general
    assert list(fast) == list(general)
    return True


def _ai(**namespace: Any) -> AIMessage:
    return AIMessage(content="", metadata={"openai_chat": namespace} if namespace else {})


@pytest.mark.parametrize(
    ("message", "taken"),
    [
        (_ai(fields={"refusal": None, "audio": None, "function_call": None}), True),
        (_ai(content="null", fields={"tool_calls": None, "name": None}), True),
        (_ai(content="absent"), True),
        (_ai(annotations=[], fields={"refusal": None}), True),
        (_ai(fields={"x_extra": {"a": [1, None]}}), True),
        (_ai(fields={"x_extra": None}), True),
        (_ai(fields={"tool_calls": []}), True),  # read as [] kept: written back as it was
        (_ai(fields={"content": None}), False),
        (_ai(fields={"role": None}), False),
        (_ai(fields={"delta": None}), False),
        (_ai(fields={"choices": None}), False),
        (_ai(fields={"object": "chat.completion.chunk"}), False),
        (_ai(fields={"refusal": "no"}), False),
        (_ai(fields={"tool_calls": [CALL]}), False),
        (_ai(fields=[]), False),
        (_ai(annotations=[{"type": "file"}]), False),
        (_ai(content="weird"), False),
        (_ai(refusal="absent"), False),
        (AIMessage(content="x", metadata={"openai_chat": {"content": "null"}}), False),
        (HumanMessage(content="hi", metadata={"openai_chat": {"fields": {"x_extra": None}}}),
         True),
        (HumanMessage(content="hi", metadata={"openai_chat": {"fields": {"name": None}}}),
         True),
        (HumanMessage(content="hi", metadata={"openai_chat": {"fields": {"name": "x"}}}),
         False),
        (HumanMessage(content="hi", metadata={"openai_chat": {"annotations": []}}), False),
        (ToolMessage(content="r", tool_call_id="c1",
                     metadata={"openai_chat": {"fields": {"x_extra": None}}}), True),
        (ToolMessage(content="r", tool_call_id="c1",
                     metadata={"openai_chat": {"fields": {"tool_call_id": None}}}), False),
        (ToolMessage(content="r", tool_call_id="c1",
                     metadata={"openai_chat": {"fields": {"tool_call_id": "c2"}}}), False),
        (SystemMessage(content="s", role="developer",
                       metadata={"openai_chat": {"fields": {"x_extra": 1}}}), True),
    ],
)
def test_kept_fields_are_written_fast_exactly_within_their_shape(
    message: Any, taken: bool
) -> None:
    assert _check_fast_write(message, OPENAI) is taken


class _Note(AIMessage):
    """A subclass of a message class (an application's own)."""


class _Call(ToolCall):
    """A subclass of ToolCall."""


class _Prompt(SystemMessage):
    """A subclass of another message class."""


class _Question(HumanMessage):
    """And of another."""


def test_subclasses_are_written_by_the_general_writer() -> None:
    call = _Call(name="f", id="c1")
    typed = [
        _Prompt(content="be brief"),
        _Question(content="go"),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage(content="r", tool_call_id="c1"),
        _Note(content="done"),
    ]
    for k in (0, 1, 2, 4):
        assert _fast_write(typed[k], OPENAI) is None
    assert _fast_write(AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1")]),
                       OPENAI) is not None
    for dialect, adapter in ((OPENAI, openai_chat), (SWARM, swarm)):
        _same_dicts(_outcome(lambda a=adapter: a.from_messages(typed)),
                    _general_write(typed, dialect))


def test_a_message_missing_a_field_fails_as_the_general_writer_fails() -> None:
    # model_construct skips validation: the field is not there at all
    broken = HumanMessage.model_construct(metadata={})  # type: ignore[call-arg]
    assert _fast_write(broken, OPENAI) is None
    with pytest.raises(AttributeError):
        _write._OwnWriter(OPENAI, 0, (), ()).message(broken)
    with pytest.raises(TraceError) as ours:  # the writer's entry names the missing field
        openai_chat.from_messages([broken])
    assert (ours.value.code, ours.value.path) == ("malformed_event", "messages[0].content")
    call = ToolCall.model_construct(  # type: ignore[call-arg]  # no name
        id="c1", args={}, invalid_args=None, kind="function", metadata={}
    )
    reply = AIMessage.model_construct(content="", tool_calls=[call], name=None, citations=[],
                                      audio=None, id=None, metadata={})
    assert _fast_write(reply, OPENAI) is None


def test_a_role_no_dialect_has_is_left_to_the_general_writer_when_fields_are_kept() -> None:
    odd = SystemMessage.model_construct(
        content="s", role="critic", name=None, id=None,  # type: ignore[arg-type]
        metadata={"openai_chat": {"fields": {"x": None}}},
    )
    assert _fast_write(odd, OPENAI) is None


@st.composite
def _kept_fields(draw: st.DrawFn) -> dict[str, Any]:
    keys = st.sampled_from(_KEY_UNIVERSE) | st.text(max_size=3)
    values = st.sampled_from([None, None, 1, "x", [], {}, [None], {"a": None}])
    return draw(st.dictionaries(keys, values, max_size=4))


@given(messages=conversations(), fields=st.lists(_kept_fields(), max_size=4),
       form=st.sampled_from([None, "null", "absent"]))
def test_the_fast_writer_writes_only_what_the_general_writer_writes_the_same(
    messages: list[Any], fields: list[dict[str, Any]], form: str | None
) -> None:
    for dialect in DIALECTS:
        for k, message in enumerate(messages):
            namespace: dict[str, Any] = {}
            if form is not None and k % 2:
                namespace["content"] = form
            if fields:
                namespace["fields"] = fields[k % len(fields)]
            edited = message.model_copy(
                update={"metadata": {**message.metadata, dialect.source: namespace}}
            )
            _check_fast_write(message, dialect)
            _check_fast_write(edited, dialect)


@given(messages=conversations())
def test_whole_conversations_write_the_same_as_by_the_general_writer(
    messages: list[Any],
) -> None:
    for dialect, adapter in ((OPENAI, openai_chat), (SWARM, swarm)):
        _same_dicts(_outcome(lambda a=adapter: a.from_messages(messages)),
                    _general_write(messages, dialect))
