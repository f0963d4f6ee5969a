"""Core audit (s39): each test pins one finding of the audit of the sample, the rules, the hash
and the ``tracebridge`` format.

1. a ``MultiTurnSample`` whose messages were changed after it was built was read and written
   without the conversation rules;
2. of several faults in one input, a later value that is not JSON was told instead of the
   first fault pydantic met;
3. ``validate`` and ``check`` read a sample, a string, a dict, ``None`` or a generator
   otherwise than ``transcript_hash`` does (or raised a bare ``TypeError``);
4. ``canonical_json`` wrote a tuple as a list, ``{1: "a"}`` as ``{"1": "a"}`` and an
   ``IntEnum`` as its int (two values, one canonical form), and raised a bare ``TypeError``
   on mixed key types;
5. every writer's ``from_messages(sample)`` left the sample's references out without a word,
   where ``convert`` refuses the same loss.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    OpaquePart,
    ToolCall,
    ToolMessage,
    TraceError,
    check,
    convert,
    native,
    transcript_hash,
    validate,
)
from tracebridge.adapters import galtea
from tracebridge.hashing import canonical_json, hashed_messages
from tracebridge.registry import ADAPTER_NAMES, get_adapter

NAN = float("nan")
NOT_A_LIST = "expected a list of tracebridge messages or a MultiTurnSample, got"
NOT_JSON = "expected a JSON value (dict, list, str, int, float, bool, None), got"


def _refused(work: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        work()
    return caught.value


def _told(error: TraceError) -> tuple[str, int | None, str | None, str, str | None]:
    return error.code, error.index, error.path, error.detail, error.source


# --- 1. a sample changed after it was built is checked again when read ------------------------

ORPHAN = ("orphan_tool_result", 2, "messages[2].tool_call_id",
          "tool result answers nothing: the AIMessage at messages[1] has no tool calls",
          "tracebridge")


def _appended_orphan() -> MultiTurnSample:
    sample = MultiTurnSample(messages=[HumanMessage(content="hi"), AIMessage(content="ok")])
    sample.messages.append(ToolMessage(content="x", tool_call_id="zz"))
    return sample


@pytest.mark.parametrize("read", [
    native.to_messages,
    native.to_sample,
    lambda s: convert(s, source="tracebridge", target="tracebridge"),
    lambda s: convert(s, target="tracebridge"),
    lambda s: convert(s, source="tracebridge", target="langchain"),
    lambda s: convert(s, source="tracebridge", target="openai_chat"),
], ids=["to_messages", "to_sample", "to_tracebridge", "auto_to_tracebridge", "to_langchain",
        "to_openai_chat"])
def test_a_sample_with_a_message_appended_after_it_was_built_is_read_as_its_json(
    read: Any,
) -> None:
    sample = _appended_orphan()
    assert _told(_refused(lambda: read(sample))) == ORPHAN
    # what its own JSON says
    error = _refused(lambda: MultiTurnSample.model_validate_json(sample.model_dump_json()))
    assert _told(error)[:4] == ORPHAN[:4]


def test_a_sample_whose_messages_were_replaced_with_model_copy_is_checked() -> None:
    calls = [ToolCall(name="f", id="c1"), ToolCall(name="g", id="c1")]
    sample = MultiTurnSample(messages=[HumanMessage(content="hi")]).model_copy(update={
        "messages": [HumanMessage(content="hi"), AIMessage(tool_calls=calls)],
    })
    expected = ("duplicate_tool_call_id", 1, "messages[1].tool_calls[1].id",
                "tool call id 'c1' is already used at messages[1]", "tracebridge")
    assert _told(_refused(lambda: native.to_messages(sample))) == expected
    assert _told(_refused(lambda: native.to_sample(sample))) == expected
    assert _told(_refused(lambda: convert(sample, target="tracebridge"))) == expected


def test_a_sample_whose_messages_were_replaced_by_no_list_is_malformed() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="hi")]).model_copy(
        update={"messages": "hi"})
    assert _told(_refused(lambda: native.to_messages(sample))) == (
        "malformed_event", None, "messages", f"{NOT_A_LIST} str", "tracebridge")


PENDING = {"messages": [{"type": "human", "content": "hi"},
                        {"type": "ai", "tool_calls": [{"name": "f", "id": "c1"}]}]}


def test_a_sample_built_with_allow_pending_is_read_with_the_callers_allow_pending() -> None:
    sample = native.to_sample(PENDING, allow_pending=True)
    unanswered = ("unanswered_tool_call", 1, "messages[1].tool_calls[0]",
                  "tool call 'f' (id 'c1') has no result before the conversation ends "
                  "(allow_pending=True accepts a trace cut mid-tool)", "tracebridge")
    assert _told(_refused(lambda: native.to_messages(sample))) == unanswered
    assert _told(_refused(lambda: native.to_sample(sample))) == unanswered
    assert native.to_messages(sample, allow_pending=True) == sample.messages
    assert native.to_sample(sample, allow_pending=True) is sample
    assert convert(sample, source="tracebridge", target="tracebridge",
                   source_options={"allow_pending": True}) == sample.model_dump()


def test_an_unchanged_sample_reads_as_it_did() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="hi"), AIMessage(content="ok")],
                             reference="ok")
    assert native.to_messages(sample) == sample.messages
    assert native.to_sample(sample) is sample


# --- 2. the first fault pydantic meets is told, also before a value that is not JSON ------------

FIRST_NAME = ("malformed_event", 0, "messages[0].name",
              "Input should be a valid string (got int 5)")
FIRST_CONTENT = ("malformed_event", 0, "messages[0].content",
                 "content must be a string or a list of parts (got int 5)")
NOT_FINITE = "nan is not a finite number"


def _sample_error(data: dict[str, Any], *, strict: bool = True) -> tuple[Any, ...]:
    return _told(_refused(lambda: MultiTurnSample.model_validate(data, strict=strict)))[:4]


ACROSS = [{"type": "human", "content": "hi", "name": 5},
          {"type": "ai", "content": "ok"},
          {"type": "human", "content": "x", "metadata": {"score": NAN}}]


def test_a_mistyped_field_before_a_value_that_is_not_json_is_told_first() -> None:
    assert _sample_error({"messages": ACROSS}) == FIRST_NAME
    assert _sample_error({"user_input": ACROSS}) == FIRST_NAME
    assert _told(_refused(lambda: MultiTurnSample(messages=ACROSS)))[:4] == FIRST_NAME
    assert _told(_refused(lambda: native.to_messages(ACROSS))) == (*FIRST_NAME, "tracebridge")
    # as it is told without the later fault
    assert _sample_error({"messages": ACROSS[:2]}) == FIRST_NAME


@pytest.mark.parametrize(("message", "expected"), [
    ({"type": "ai", "content": 5, "tool_calls": [{"name": "f", "args": {"a": NAN}}]},
     FIRST_CONTENT),
    ({"type": "human", "content": [{"type": "text", "text": 7}], "metadata": {"a": NAN}},
     ("malformed_event", 0, "messages[0].content[0].text",
      "Input should be a valid string (got int 7)")),
    ({"type": "human", "content": [{"type": "opaque", "kind": 5, "value": NAN}]},
     ("malformed_event", 0, "messages[0].content[0].kind",
      "Input should be a valid string (got int 5)")),
    ({"type": "ai", "tool_calls": [{"name": 5}, {"name": "g", "args": {"a": NAN}}]},
     ("malformed_event", 0, "messages[0].tool_calls[0].name",
      "Input should be a valid string (got int 5)")),
    ({"type": "ai", "citations": [{"url": 5, "start_index": 10**5000}]},
     ("malformed_event", 0, "messages[0].citations[0].url",
      "Input should be a valid string (got int 5)")),
    ({"type": "ai", "audio": {"id": 5, "expires_at": 10**5000}},
     ("malformed_event", 0, "messages[0].audio.id",
      "Input should be a valid string (got int 5)")),
], ids=["content-then-args", "text-then-metadata", "kind-then-value", "call-then-call",
        "url-then-index", "id-then-expires_at"])
def test_in_one_message_the_first_field_in_declared_order_is_told(
    message: dict[str, Any], expected: tuple[Any, ...],
) -> None:
    assert _sample_error({"messages": [message]}) == expected
    assert _told(_refused(lambda: native.to_messages([message]))) == (*expected, "tracebridge")


@pytest.mark.parametrize(("data", "expected"), [
    ({"messages": [{"type": "human", "content": 5}],
      "reference_tool_calls": [{"name": "f", "args": {"a": NAN}}]}, FIRST_CONTENT),
    ({"messages": [{"type": "human", "content": 5}], "metadata": {"a": NAN}}, FIRST_CONTENT),
    ({"messages": [{"type": "human", "content": "x"}], "reference": 5,
      "reference_tool_calls": [{"name": "f", "args": {"a": NAN}}]},
     ("malformed_event", None, "reference", "Input should be a valid string (got int 5)")),
], ids=["message-then-reference-call", "message-then-sample-metadata", "reference-then-call"])
def test_a_fault_of_an_earlier_field_of_the_sample_is_told_first(
    data: dict[str, Any], expected: tuple[Any, ...],
) -> None:
    assert _sample_error(data) == expected


@pytest.mark.parametrize(("data", "expected"), [
    ({"messages": [{"type": "human", "content": [{"type": "text", "metadata": {"a": {1, 2}},
                                                   "extra": 1}]}]},
     ("malformed_event", 0, "messages[0].content[0].text",
      "Field required (got dict {'type': 'text', 'metadata': {'a': {1, 2}}, 'extra': 1})")),
    ({"messages": [{"type": "ai", "content": "x", "tool_calls": [{"args": {"a": {1}},
                                                                  "id": "c1"}]}]},
     ("malformed_event", 0, "messages[0].tool_calls[0].name",
      "Field required (got dict {'args': {'a': {1}}, 'id': 'c1'})")),
    ({"messages": [{"type": "human", "content": "x"}],
      "reference_tool_calls": [{"args": {"a": {1}}, "id": "c1"}]},
     ("malformed_event", None, "reference_tool_calls[0].name",
      "Field required (got dict {'args': {'a': {1}}, 'id': 'c1'})")),
    ({"messages": [{"type": "human", "content": "x"}], "rubrics": {"a": 1, "b": "2"},
      "metadata": {"a": {1}}},
     ("malformed_event", None, "rubrics.a", "Input should be a valid string (got int 1)")),
], ids=["missing-text", "missing-name", "missing-reference-call-name", "rubric-then-metadata"])
def test_an_earlier_fault_quotes_the_input_as_given(
    data: dict[str, Any], expected: tuple[Any, ...],
) -> None:
    # told from a second validation of the data cut at the value that is not JSON: what the
    # message quotes is the caller's own value, whole, not the cut one. The first three faults
    # hold that value (in a message, in a field beside the messages); the rubric's is told
    # ahead of it, in another field, and quotes a value the cut leaves as it was
    assert _sample_error(data) == expected


def test_a_value_that_is_not_json_before_a_mistyped_field_is_still_told_first() -> None:
    data = {"messages": [{"type": "human", "content": "x", "metadata": {"a": NAN}},
                         {"type": "human", "content": 5}]}
    assert _sample_error(data) == ("unserializable_value", 0, "messages[0].metadata.a",
                                   NOT_FINITE)
    opaque = {"type": "human", "content": [
        {"type": "opaque", "kind": "k", "value": NAN, "metadata": 5}]}
    assert _sample_error({"messages": [opaque]}) == (
        "unserializable_value", 0, "messages[0].content[0].value", NOT_FINITE)
    part = {"type": "ai", "content": [{"type": "text", "text": "x", "metadata": {"a": NAN}}],
            "tool_calls": [{"name": 5}]}
    assert _sample_error({"messages": [part]}) == (
        "unserializable_value", 0, "messages[0].content[0].metadata.a", NOT_FINITE)


def test_the_first_fault_is_the_one_of_the_callers_strictness() -> None:
    data = {"messages": [
        {"type": "human", "content": "x"},
        {"type": "ai", "tool_calls": [{"name": "f", "id": "c"}]},
        {"type": "tool", "content": "r", "tool_call_id": "c", "is_error": 1},
        {"type": "human", "content": "x", "metadata": {"a": NAN}},
    ]}
    assert _sample_error(data) == ("malformed_event", 2, "messages[2].is_error",
                                   "Input should be a valid boolean (got int 1)")
    assert _sample_error(data, strict=False) == (
        "unserializable_value", 3, "messages[3].metadata.a", NOT_FINITE)


def test_a_message_object_before_the_faults_keeps_their_order() -> None:
    data = {"messages": [HumanMessage(content="a"), {"type": "human", "content": 5},
                         {"type": "human", "content": "x", "metadata": {"a": NAN}}]}
    assert _sample_error(data) == (
        "malformed_event", 1, "messages[1].content",
        "content must be a string or a list of parts (got int 5)")


# --- 3. validate and check read their argument as transcript_hash does -------------------------

HI = HumanMessage(content="hi")


def test_validate_and_check_take_a_sample_as_its_messages() -> None:
    sample = MultiTurnSample(messages=[HI, AIMessage(content="ok")])
    assert validate(sample) is None
    assert check(sample) == []
    sample.messages.append(ToolMessage(content="x", tool_call_id="zz"))
    expected = (*ORPHAN[:4], None)
    assert _told(_refused(lambda: validate(sample))) == expected
    assert [_told(error) for error in check(sample)] == [expected]


@pytest.mark.parametrize(("value", "found"), [
    ("", "str"), ("hi", "str"), (b"hi", "bytes"), ({"a": 1}, "dict"), (None, "NoneType"),
    (5, "int"),
])
def test_validate_and_check_refuse_what_holds_no_messages_at_messages(
    value: Any, found: str,
) -> None:
    expected = ("malformed_event", None, "messages", f"{NOT_A_LIST} {found}", None)
    assert _told(_refused(lambda: validate(value))) == expected
    assert [_told(error) for error in check(value)] == [expected]
    assert _told(_refused(lambda: validate(value, source="openai_chat"))) == (
        *expected[:4], "openai_chat")
    assert _told(_refused(lambda: transcript_hash(value)))[:4] == expected[:4]


def test_validate_and_check_take_any_iterable_of_messages() -> None:
    assert validate(m for m in [HI, AIMessage(content="ok")]) is None
    assert check((HI, AIMessage(content="ok"))) == []
    orphan = (m for m in [HI, ToolMessage(content="x", tool_call_id="a")])
    assert _told(_refused(lambda: validate(orphan))) == (
        "orphan_tool_result", 1, "messages[1].tool_call_id",
        "tool result answers nothing: no AIMessage comes before it", None)
    assert [_told(e) for e in check(iter([HI, ToolMessage(content="x", tool_call_id="a")]))] == [
        ("orphan_tool_result", 1, "messages[1].tool_call_id",
         "tool result answers nothing: no AIMessage comes before it", None)]


# --- 4. canonical_json refuses what is not plain JSON, before writing anything -----------------


class Level(IntEnum):
    HIGH = 1


_CYCLE: dict[str, Any] = {}
_CYCLE["self"] = _CYCLE


@pytest.mark.parametrize(("value", "path", "detail"), [
    ((1, 2), None, f"{NOT_JSON} tuple (1, 2)"),
    ({"x": (1, 2)}, "x", f"{NOT_JSON} tuple (1, 2)"),
    ({1: "a"}, None, "object keys must be strings, got int 1"),
    ({"a": {1: "a", "b": 2}}, "a", "object keys must be strings, got int 1"),
    (Level.HIGH, None, f"{NOT_JSON} Level <Level.HIGH: 1>"),
    ({"x": [0, Level.HIGH]}, "x[1]", f"{NOT_JSON} Level <Level.HIGH: 1>"),
    ({"a": [1, {"b": NAN}]}, "a[1].b", "nan is not a finite number"),
    ({"x": 10**5000}, "x", "an integer of more than 4,300 digits: JSON readers refuse it"),
    ({"x": {1, 2}}, "x", f"{NOT_JSON} set {{1, 2}}"),
    (_CYCLE, None, "a value nested past Python's depth, or one that holds itself (a dict or "
                   "list inside its own contents)"),
], ids=["tuple", "tuple-inside", "int-key", "mixed-keys", "int-enum", "int-enum-inside", "nan",
        "huge-int", "set", "cycle"])
def test_canonical_json_refuses_what_is_not_plain_json(
    value: Any, path: str | None, detail: str,
) -> None:
    error = _refused(lambda: canonical_json(value))
    assert _told(error) == ("unserializable_value", None, path, detail, None)
    assert isinstance(error, ValueError)  # as json.dumps's own refusals are


def test_canonical_json_writes_plain_json_as_before() -> None:
    assert canonical_json({"b": [1, 2.0, None, True], "a": {"c": "é"}}) == (
        '{"a":{"c":"é"},"b":[1,2.0,null,true]}'.encode())


def test_canonical_json_of_the_hashed_messages_is_what_is_hashed_even_at_the_deepest() -> None:
    deep: Any = "x"
    for _ in range(127):  # 128 levels with the list around it: the deepest a value holds
        deep = [deep]
    messages = [HumanMessage(content=[OpaquePart(kind="k", value=[deep]), OpaquePart(
        kind="k", value=1)])]
    digest = hashlib.sha256(canonical_json(hashed_messages(messages))).hexdigest()
    assert transcript_hash(messages) == f"tb1:{digest}"


# --- 5. from_messages(sample) refuses what it cannot write, as convert does --------------------

TWO = [HumanMessage(content="2+2?"), AIMessage(content="4")]


def _no_place(fields: str, writer: str, path: str) -> tuple[Any, ...]:
    one = "," not in fields
    return ("not_representable", None, path,
            f"the sample's {fields} {'has' if one else 'have'} no place in {writer}: convert "
            f"to tracebridge to keep {'it' if one else 'them'}, or pass sample.messages to "
            f"write the conversation alone", writer)


@pytest.mark.parametrize("name", ADAPTER_NAMES)
def test_every_writer_refuses_a_sample_with_references_as_convert_does(name: str) -> None:
    writer = get_adapter(name)
    sample = MultiTurnSample(messages=TWO, reference="4", rubrics={"score1": "wrong"},
                             metadata={"case": "c1"})
    assert _told(_refused(lambda: writer.from_messages(sample))) == _no_place(
        "reference, rubrics, metadata", name, "reference")
    converted = _refused(lambda: convert(sample, source="tracebridge", target=name))
    assert (converted.code, converted.path, converted.source) == (
        "not_representable", "reference", name)
    # the conversation alone is written, as a sample holding nothing else is
    assert writer.from_messages(sample.messages) == writer.from_messages(
        MultiTurnSample(messages=TWO))


@pytest.mark.parametrize(("fields", "path"), [
    ({"metadata": {"case": "c1"}}, "metadata"),
    ({"reference_tool_calls": [ToolCall(name="f")]}, "reference_tool_calls"),
    ({"reference_topics": ["math"]}, "reference_topics"),
])
def test_a_writer_names_the_first_field_the_sample_sets(
    fields: dict[str, Any], path: str,
) -> None:
    sample = MultiTurnSample(messages=TWO, **fields)
    writer = get_adapter("openai_chat")
    assert _told(_refused(lambda: writer.from_messages(sample))) == _no_place(
        path, "openai_chat", path)


def test_the_galtea_split_reads_a_sample_as_its_writer_does() -> None:
    sample = MultiTurnSample(messages=TWO, reference="4")
    assert _told(_refused(lambda: galtea.split_current_turn(sample))) == _no_place(
        "reference", "galtea", "reference")


def test_the_tracebridge_writer_writes_a_samples_messages_and_convert_keeps_the_rest() -> None:
    sample = MultiTurnSample(messages=TWO, reference="4")
    assert native.from_messages(sample) == native.from_messages(TWO)
    assert convert(sample, target="tracebridge") == sample.model_dump()


def test_a_single_field_is_told_in_the_singular() -> None:
    sample = MultiTurnSample(messages=TWO, reference="4")
    assert _told(_refused(lambda: get_adapter("openai_chat").from_messages(sample))) == (
        "not_representable", None, "reference",
        "the sample's reference has no place in openai_chat: convert to tracebridge to keep "
        "it, or pass sample.messages to write the conversation alone", "openai_chat")


def test_swarm_handoffs_read_a_sample_with_references() -> None:
    from tracebridge import ToolCall, ToolMessage
    from tracebridge.adapters import swarm

    messages = [
        HumanMessage(content="balance?"),
        AIMessage(content="", name="Front Desk",
                  tool_calls=[ToolCall(id="c1", name="transfer_to_billing", args={})]),
        ToolMessage(content='{"assistant": "Billing Agent"}', tool_call_id="c1",
                    name="transfer_to_billing"),
    ]
    sample = MultiTurnSample(messages=messages, reference="billing")
    assert swarm.handoffs(sample) == swarm.handoffs(messages) == [
        swarm.Handoff(index=2, from_agent="Front Desk", to_agent="Billing Agent")]
