"""Core audit (s37): each test pins one finding of the audit of the typed model, the sample,
the hash, the ``tracebridge`` format and the registry.

1. metadata / args given as a mapping of another class were never checked;
2. ``convert`` dropped a sample's references without a word;
3. a citation's indexes and an audio reply's ``expires_at`` took ints JSON cannot carry;
4. a bad content part was told at ``content`` with the wrong reason;
5. a message's error path and detail could name two different faults;
6. and 11. the hash's documented definition (the call ``kind`` rule, the canonical JSON);
7. ``hashed_messages`` handed out the messages' own dicts;
8. ``drop=`` read a dict's keys as consent;
9. a part whose ``type`` was changed made rendering raise a bare ``AssertionError``;
10. the ``tracebridge`` reader's dotted paths beside the messages, and ``MultiTurnSample(...)``
    raising pydantic's ``ValidationError`` there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections import OrderedDict, defaultdict
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import ValidationError

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    OpaquePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    native,
    render,
    transcript_hash,
)
from tracebridge import _shape as shape_module
from tracebridge import hashing as hashing_module
from tracebridge.hashing import canonical_json, hashed_messages
from tracebridge.media import canonical_audio_mime_type
from tracebridge.registry import get_adapter

ROOT = Path(__file__).resolve().parents[1]
NAN = float("nan")
BIG = 10**5000
NOT_JSON = "expected a JSON value (dict, list, str, int, float, bool, None), got"
TOO_LONG = "an integer of more than 4,300 digits: JSON readers refuse it"
H = {"type": "human", "content": "q"}


def _refused(work: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        work()
    return caught.value


def _told(error: TraceError) -> tuple[str, int | None, str | None, str]:
    return error.code, error.index, error.path, error.detail


# --- 1. a mapping of another class is checked as a dict, and kept as a plain dict ---------

OBJECT = object()


@pytest.mark.parametrize(("make", "path", "detail"), [
    (lambda: HumanMessage(content="x", metadata=json.loads(
        '{"score": NaN}', object_pairs_hook=OrderedDict)),
     "metadata.score", "nan is not a finite number"),
    (lambda: HumanMessage(content="x", metadata=OrderedDict(a=(1, 2), b={3})),
     "metadata.a", f"{NOT_JSON} tuple (1, 2)"),
    (lambda: ToolCall(name="f", args=defaultdict(list, a=OBJECT)),
     "args.a", f"{NOT_JSON} object {OBJECT!r}"),
    (lambda: HumanMessage(content="x", metadata=MappingProxyType({"a": float("inf")})),
     "metadata.a", "inf is not a finite number"),
    (lambda: TextPart(text="a", metadata=OrderedDict({1: "a"})),
     "metadata", "object keys must be strings, got int 1"),
    (lambda: Citation(metadata=OrderedDict(a=set())), "metadata.a", f"{NOT_JSON} set set()"),
    (lambda: AudioReference(id="a", metadata=defaultdict(int, a=b"x")),
     "metadata.a", f"{NOT_JSON} bytes b'x'"),
    (lambda: MultiTurnSample(messages=[HumanMessage(content="x")],
                             metadata=OrderedDict(a=NAN)),
     "metadata.a", "nan is not a finite number"),
])
def test_a_mapping_of_another_class_is_checked_as_a_dict(
    make: Any, path: str, detail: str
) -> None:
    assert _told(_refused(make)) == ("unserializable_value", None, path, detail)


def test_a_mapping_of_another_class_is_checked_inside_a_sample() -> None:
    score = json.loads('{"score": NaN}', object_pairs_hook=OrderedDict)
    refused = _refused(lambda: MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": "x", "metadata": score}]}))
    assert _told(refused) == (
        "unserializable_value", 0, "messages[0].metadata.score", "nan is not a finite number")
    call = {"name": "f", "args": OrderedDict(x=NAN), "id": "c"}
    refused = _refused(lambda: MultiTurnSample.model_validate({"messages": [
        H, {"type": "ai", "tool_calls": [call]},
        {"type": "tool", "content": "r", "tool_call_id": "c"}]}))
    assert _told(refused) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.x", "nan is not a finite number")


def test_a_good_mapping_is_kept_as_a_plain_dict_copy() -> None:
    source: OrderedDict[str, Any] = OrderedDict(a=[1], b={"c": "d"})
    message = HumanMessage(content="x", metadata=source)
    assert type(message.metadata) is dict
    assert message.metadata == {"a": [1], "b": {"c": "d"}}
    source["a"].append(2)  # the message holds a copy, not the source's lists
    assert message.metadata == {"a": [1], "b": {"c": "d"}}
    call = ToolCall(name="f", args=MappingProxyType({"x": 1}))
    assert type(call.args) is dict
    assert call.args == {"x": 1}
    sample = MultiTurnSample(messages=[message], metadata=defaultdict(list, k=["v"]))
    assert type(sample.metadata) is dict
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample


def test_an_opaque_value_is_still_only_plain_json() -> None:
    value = OrderedDict(a=1)
    refused = _refused(lambda: OpaquePart(kind="k", value=value))
    assert _told(refused) == (
        "unserializable_value", None, "value", f"{NOT_JSON} OrderedDict {value!r}")


# --- 2. convert keeps a sample whole, or refuses what the target cannot hold --------------

SAMPLE = MultiTurnSample(
    messages=[HumanMessage(content="hi"), AIMessage(content="hello")],
    reference="greets back", reference_tool_calls=[ToolCall(name="wave")],
    reference_topics=["greeting"], rubrics={"tone": "polite"}, metadata={"id": "case-7"},
)
SAMPLE_JSON: dict[str, Any] = json.loads(SAMPLE.model_dump_json())


@pytest.mark.parametrize("source", ["tracebridge", "auto"])
@pytest.mark.parametrize("trace", [SAMPLE, SAMPLE_JSON], ids=["object", "json"])
def test_a_sample_converted_to_tracebridge_stays_whole(source: str, trace: Any) -> None:
    written = convert(trace, source=source, target="tracebridge")
    assert written == SAMPLE.model_dump()
    assert list(written) == ["messages", "reference", "reference_tool_calls",
                             "reference_topics", "rubrics", "metadata"]
    assert MultiTurnSample.model_validate(written) == SAMPLE
    # messages_only accepts a loss; converting to tracebridge loses nothing (as the CLI)
    assert convert(trace, source=source, target="tracebridge", messages_only=True) == written


@pytest.mark.parametrize("source", ["tracebridge", "auto"])
@pytest.mark.parametrize("trace", [SAMPLE, SAMPLE_JSON], ids=["object", "json"])
def test_a_sample_converted_elsewhere_is_refused_unless_messages_only(
    source: str, trace: Any
) -> None:
    refused = _refused(lambda: convert(trace, source=source, target="openai_chat"))
    assert (refused.code, refused.index, refused.path, refused.source) == (
        "not_representable", None, "reference", "openai_chat")
    assert refused.detail == (
        "the sample's reference, reference_tool_calls, reference_topics, rubrics, metadata "
        "have no place in openai_chat: convert to tracebridge to keep them, or pass "
        "messages_only=True to convert the conversation alone")
    assert convert(trace, source=source, target="openai_chat", messages_only=True) == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


@pytest.mark.parametrize(("fields", "path"), [
    ({"metadata": {"id": "7"}}, "metadata"),
    ({"rubrics": {"tone": "polite"}}, "rubrics"),
    ({"reference_topics": []}, "reference_topics"),  # set, if empty: as the CLI counts it
    ({"reference": ""}, "reference"),
])
def test_the_refusal_names_the_first_field_set(fields: dict[str, Any], path: str) -> None:
    trace = {"messages": [H], **fields}
    refused = _refused(lambda: convert(trace, source="tracebridge", target="openai_chat"))
    assert (refused.code, refused.path) == ("not_representable", path)


def test_a_sample_that_sets_nothing_else_converts_its_messages() -> None:
    bare: dict[str, Any] = {"messages": [H], "rubrics": {}, "metadata": {}, "reference": None}
    assert convert(bare, source="tracebridge", target="openai_chat") == [
        {"role": "user", "content": "q"}]
    assert convert(bare, source="tracebridge", target="tracebridge") == {
        "messages": [{"type": "human", "content": "q", "name": None, "id": None,
                      "metadata": {}}],
        "reference": None, "reference_tool_calls": None, "reference_topics": None,
        "rubrics": {}, "metadata": {}}


def test_a_list_of_messages_still_converts_to_a_list() -> None:
    assert convert([H], source="tracebridge", target="tracebridge") == [
        {"type": "human", "content": "q", "name": None, "id": None, "metadata": {}}]


def test_a_sample_read_with_allow_pending_keeps_its_open_call() -> None:
    trace = {"messages": [H, {"type": "ai", "tool_calls": [{"name": "f", "id": "c"}]}],
             "reference": "r"}
    written = convert(trace, source="tracebridge", target="tracebridge",
                      source_options={"allow_pending": True})
    assert written["reference"] == "r"
    assert written["messages"][1]["tool_calls"][0]["id"] == "c"
    refused = _refused(lambda: convert(trace, source="tracebridge", target="tracebridge"))
    assert (refused.code, refused.index, refused.source) == (
        "unanswered_tool_call", 1, "tracebridge")


@pytest.mark.parametrize("flag", ["yes", 1, None])
def test_messages_only_is_true_or_false(flag: Any) -> None:
    with pytest.raises(ValueError, match=r"^messages_only must be True or False, got "):
        convert(SAMPLE, source="tracebridge", target="openai_chat", messages_only=flag)


# --- 3. the int fields of typed homes take only what JSON text carries ---------------------

@pytest.mark.parametrize(("make", "path"), [
    (lambda: Citation(url="https://x", start_index=BIG), "start_index"),
    (lambda: Citation(end_index=-BIG), "end_index"),
    (lambda: AudioReference(id="a", expires_at=BIG), "expires_at"),
    (lambda: AIMessage(content="", citations=[{"start_index": BIG}]), "start_index"),
])
def test_an_int_of_more_than_4300_digits_is_refused_at_its_field(make: Any, path: str) -> None:
    assert _told(_refused(make)) == ("unserializable_value", None, path, TOO_LONG)


@pytest.mark.parametrize(("reply", "path"), [
    ({"type": "ai", "content": "hi", "audio": {"id": "a", "expires_at": BIG}},
     "messages[1].audio.expires_at"),
    ({"type": "ai", "content": "hi", "citations": [{"url": "u"}, {"end_index": BIG}]},
     "messages[1].citations[1].end_index"),
])
def test_a_huge_int_in_a_sample_is_refused_at_its_path(reply: dict[str, Any], path: str) -> None:
    refused = _refused(lambda: MultiTurnSample.model_validate({"messages": [H, reply]}))
    assert _told(refused) == ("unserializable_value", 1, path, TOO_LONG)
    refused = _refused(lambda: native.to_messages([H, reply]))
    assert (*_told(refused), refused.source) == (
        "unserializable_value", 1, path, TOO_LONG, "tracebridge")


def test_an_int_of_4300_digits_is_kept_and_round_trips() -> None:
    longest = 10**4300 - 1
    sample = MultiTurnSample(messages=[
        HumanMessage(content="q"),
        AIMessage(content="hi", citations=[Citation(start_index=longest, end_index=-longest)],
                  audio=AudioReference(id="a", expires_at=longest)),
    ])
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample
    assert transcript_hash(sample).startswith("tb1:")


def test_a_huge_int_set_unchecked_is_told_at_its_field() -> None:
    cited = Citation(start_index=1).model_copy(update={"start_index": BIG})
    reply = AIMessage(content="hi", citations=[Citation(start_index=1)]).model_copy(
        update={"citations": [cited]})
    for work in (lambda: render([HumanMessage(content="q"), reply]),
                 lambda: transcript_hash([HumanMessage(content="q"), reply])):
        assert _told(_refused(work)) == (
            "unserializable_value", 1, "messages[1].citations[0].start_index", TOO_LONG)


# --- 4. a bad content part is told at the part, with the real reason ----------------------

PARTS = [
    ([{"type": "human", "content": [{"type": "text", "text": "a"},
                                    {"type": "image", "mime_type": "image/png"}]}],
     0, "messages[0].content[1]",
     "an ImagePart needs one of: url, data (got dict {'type': 'image', 'mime_type': "
     "'image/png'})"),
    ([{"type": "human", "content": [{"type": "text", "text": "a"},
                                    {"type": "video", "url": "u"}]}],
     0, "messages[0].content[1].type",
     "unknown part type 'video'; expected one of text, image, audio, file, reasoning, "
     "refusal, opaque"),
    ([{"type": "human", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": 5}]}],
     0, "messages[0].content[1].text", "Input should be a valid string (got int 5)"),
    ([{"type": "human", "content": [{"type": "text", "text": "a", "lang": "en"}]}],
     0, "messages[0].content[0].lang", "Extra inputs are not permitted (got str 'en')"),
    ([H, {"type": "ai", "content": [{"type": "opaque", "value": {}}]}],
     1, "messages[1].content[0].kind", "Field required (got dict {'type': 'opaque', 'value': {}})"),
    ([{"type": "human", "content": [{"type": "text", "text": "a"}, 5]}],
     0, "messages[0].content[1]",
     "Input should be a valid dictionary or object to extract fields from (got int 5)"),
    ([{"type": "human", "content": [{"type": "audio", "url": "u"}, {"text": "b"}]}],
     0, "messages[0].content[1]",
     "Unable to extract tag using discriminator 'type' (got dict {'text': 'b'})"),
]


@pytest.mark.parametrize(("messages", "index", "path", "detail"), PARTS)
def test_a_bad_part_is_told_at_the_part(
    messages: list[Any], index: int, path: str, detail: str
) -> None:
    refused = _refused(lambda: MultiTurnSample(messages=messages))
    assert _told(refused) == ("malformed_event", index, path, detail)
    refused = _refused(lambda: native.to_messages(messages))
    assert (*_told(refused), refused.source) == (
        "malformed_event", index, path, detail, "tracebridge")


@pytest.mark.parametrize(("content", "found"), [(5, "int 5"), (("a",), "tuple ('a',)")])
def test_content_that_is_no_list_is_still_told_at_content(content: Any, found: str) -> None:
    refused = _refused(lambda: MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": content}]}))
    assert _told(refused) == ("malformed_event", 0, "messages[0].content",
                              f"content must be a string or a list of parts (got {found})")


def test_an_unknown_message_type_is_still_unknown_role() -> None:
    refused = _refused(lambda: MultiTurnSample.model_validate({"messages": [{"type": "bot"}]}))
    assert _told(refused) == ("unknown_role", 0, "messages[0].type",
                              "unknown message type 'bot'; expected one of human, ai, tool, system")


# --- 5. the path and the detail describe the same fault -----------------------------------

def test_the_path_is_the_fault_the_detail_describes() -> None:
    reply = {"type": "ai",
             "content": [{"type": "opaque", "kind": "k", "value": {"when": {1, 2}}}],
             "tool_calls": [{"name": "f", "args": {"x": NAN}, "id": "c"}]}
    told = ("unserializable_value", 1, "messages[1].content[0].value.when",
            f"{NOT_JSON} set {{1, 2}}")
    assert _told(_refused(lambda: MultiTurnSample(messages=[H, reply]))) == told
    assert _told(_refused(lambda: native.to_messages([H, reply]))) == told


def test_calls_are_told_before_citations_and_the_message_metadata() -> None:
    reply = {"type": "ai", "content": "",
             "tool_calls": [{"name": "f", "args": {"x": NAN}, "id": "c"}],
             "citations": [{"metadata": {"y": {1}}}], "metadata": {"z": NAN}}
    assert _told(_refused(lambda: MultiTurnSample(messages=[H, reply]))) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.x",
        "nan is not a finite number")


# --- 6. and 11. the hash as docs/model.md defines it --------------------------------------

def _hash_section() -> str:
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    return text.split("## The transcript hash", 1)[1].split("\n## ", 1)[0]


def _documented_hash(messages: list[Any]) -> str:
    """The transcript hash computed from its documented definition only."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "metadata"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    body = []
    for message in messages:
        fields = strip(message.model_dump(exclude={"id"}))
        content = fields["content"]
        if isinstance(content, list) and len(content) == 1 and content[0]["type"] == "text":
            fields["content"] = content[0]["text"]
        elif isinstance(content, list):
            for part in content:
                if part["type"] == "image" and part["detail"] is None:
                    del part["detail"]
                if part["type"] == "audio" and part["mime_type"]:
                    part["mime_type"] = canonical_audio_mime_type(part["mime_type"])
        if fields["type"] == "system" and fields["role"] == "system":
            del fields["role"]
        if fields["type"] == "ai":
            for call in fields["tool_calls"]:
                if call["kind"] == "function":
                    del call["kind"]
            if not fields["citations"]:
                del fields["citations"]
            if fields["audio"] is None:
                del fields["audio"]
        body.append(fields)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "surrogatepass")
    return "tb1:" + hashlib.sha256(text).hexdigest()


def test_the_documented_hash_leaves_a_function_calls_kind_out() -> None:
    section = _hash_section()
    assert "call id, and `kind=\"custom\"`" in section
    assert "`audio=None`, and a tool call's\n`kind=\"function\"`) they are left out" in section
    calls = [HumanMessage(content="weather?"),
             AIMessage(tool_calls=[ToolCall(name="get", args={"city": "Oslo"}, id="c1"),
                                   ToolCall(name="sh", args={"input": "ls"}, id="c2",
                                            kind="custom")]),
             ToolMessage(content="sunny", tool_call_id="c1"),
             ToolMessage(content="a b", tool_call_id="c2"), AIMessage(content="Sunny.")]
    assert _documented_hash(calls) == transcript_hash(calls)


def test_the_documented_canonical_json_is_what_is_hashed() -> None:
    section = _hash_section()
    assert ("is exactly what Python's\n`json.dumps(value, sort_keys=True, separators=(\",\", "
            "\":\"), ensure_ascii=False,\nallow_nan=False)` writes") in section
    assert "sorted by Unicode code point (U+FFFF before U+10000" in section
    for example in ("`100.0`", "`-0.0`", "`1e+16`", "`1e-07`", "`\\u001b`"):
        assert example in section
    assert "U+FFFF before U+10000" in (canonical_json.__doc__ or "")
    # what those sentences say, as bytes
    assert canonical_json({"a": 1e16, "b": 1e-7, "c": -0.0, "d": 100.0, "e": 1}) == (
        b'{"a":1e+16,"b":1e-07,"c":-0.0,"d":100.0,"e":1}')
    assert canonical_json({"\U00010000": 2, "\uffff": 1}) == (
        b'{"\xef\xbf\xbf":1,"\xf0\x90\x80\x80":2}')
    assert canonical_json(["\x1b\b\"\\\x7f\u00e9"]) == b'["\\u001b\\b\\"\\\\\x7f\xc3\xa9"]'


# --- 7. hashed_messages hands out a copy ----------------------------------------------------

def test_editing_hashed_messages_changes_no_message() -> None:
    call = ToolCall(name="transfer", args={"eur": 100, "to": {"iban": "X"}}, id="c1")
    reply = AIMessage(content="ok", tool_calls=[call])
    messages: list[Any] = [HumanMessage(content="pay"), reply,
                           ToolMessage(content="done", tool_call_id="c1")]
    before = transcript_hash(messages)
    view = hashed_messages(messages)
    view[1]["tool_calls"][0]["args"]["eur"] = 1_000_000
    view[1]["tool_calls"][0]["args"]["to"]["iban"] = "Y"
    view[1]["tool_calls"].append({"name": "more"})
    assert call.args == {"eur": 100, "to": {"iban": "X"}}
    assert reply.tool_calls == [call]
    assert transcript_hash(messages) == before
    assert hashed_messages(messages) == [
        {"type": "human", "content": "pay", "name": None},
        {"type": "ai", "content": "ok", "name": None, "tool_calls": [
            {"name": "transfer", "args": {"eur": 100, "to": {"iban": "X"}}, "id": "c1",
             "invalid_args": None}]},
        {"type": "tool", "content": "done", "tool_call_id": "c1", "name": None,
         "is_error": False},
    ]


def test_the_hash_does_not_pay_for_the_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_copy(value: Any) -> Any:
        raise AssertionError("transcript_hash copied")

    messages = [HumanMessage(content="pay"),
                AIMessage(content="ok", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")]),
                ToolMessage(content="done", tool_call_id="c")]
    expected = transcript_hash(messages)
    monkeypatch.setattr(hashing_module, "json_copy", no_copy)
    assert transcript_hash(messages) == expected


# --- 8. drop= refuses a mapping ---------------------------------------------------------------

WRITERS = ["openai_chat", "swarm", "otel", "openai_responses", "openai_agents"]
WRITERS += [name for name, package in (("langchain", "langchain_core"),
                                       ("llama_index", "llama_index.core"))
            if importlib.util.find_spec(package.split(".")[0]) is not None]
DROP_MESSAGES = [HumanMessage(content="q"), AIMessage(tool_calls=[ToolCall(name="f", id="c")]),
                 ToolMessage(content="boom", tool_call_id="c", is_error=True)]


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("drop", [{"is_error": False}, {"is_error": None}, {},
                                  MappingProxyType({"citations": False})])
def test_a_drop_mapping_is_refused(name: str, drop: Any) -> None:
    adapter: Any = get_adapter(name)
    with pytest.raises(ValueError, match=r"^drop= takes a list of names from \(") as caught:
        adapter.from_messages(DROP_MESSAGES, drop=drop)
    assert str(caught.value) == (
        f"drop= takes a list of names from {tuple(adapter.DROPPABLE)}, got {drop!r}")


@pytest.mark.parametrize("drop", [["is_error"], ("is_error",), {"is_error"},
                                  frozenset({"is_error"}), {"is_error": 0}.keys()])
def test_a_drop_collection_of_names_is_taken(drop: Any) -> None:
    written = get_adapter("openai_chat").from_messages(DROP_MESSAGES, drop=drop)
    assert written[2] == {"role": "tool", "content": "boom", "tool_call_id": "c"}


# --- 9. a part of a changed type is malformed_event, never an AssertionError -------------

def _with_retyped_part() -> HumanMessage:
    part = ImagePart(url="https://x/a.png").model_copy(update={"type": "x"})
    return HumanMessage(content=[TextPart(text="see")]).model_copy(
        update={"content": [TextPart(text="see"), part]})


def test_rendering_a_retyped_part_names_its_type_field() -> None:
    message = _with_retyped_part()
    detail = ("content[1].type must be 'image', got str 'x' (a message made with "
              "model_construct or model_copy(update=...) is not checked when made)")
    assert _told(_refused(lambda: render([HumanMessage(content="q"), message]))) == (
        "malformed_event", 1, "messages[1].content[1].type", detail)
    assert _told(_refused(message.pretty_repr)) == (
        "malformed_event", None, "content[1].type", detail)
    assert _told(_refused(lambda: MultiTurnSample.model_construct(
        messages=[message]).pretty_repr())) == (
        "malformed_event", 0, "messages[0].content[1].type", detail)


def test_unknown_kind_raises_what_the_fallbacks_catch() -> None:
    with pytest.raises(TypeError, match=r"^no branch for ImagePart of type 'x'$"):
        shape_module.unknown_kind(_with_retyped_part().content[1])  # type: ignore[arg-type]


# --- 10. fields beside the messages: bracket paths, and a TraceError from the sample --------

@pytest.mark.parametrize(("fields", "path", "detail"), [
    ({"reference_tool_calls": [{"name": 5}]}, "reference_tool_calls[0].name",
     "Input should be a valid string (got int 5)"),
    ({"reference_tool_calls": [{"name": "f"}, {"name": "g", "what": 1}]},
     "reference_tool_calls[1].what", "Extra inputs are not permitted (got int 1)"),
    ({"reference_topics": ["a", 1]}, "reference_topics[1]",
     "Input should be a valid string (got int 1)"),
    ({"rubrics": {"tone": 1}}, "rubrics.tone", "Input should be a valid string (got int 1)"),
    ({"rubrics": {"a b": 1}}, "rubrics['a b']", "Input should be a valid string (got int 1)"),
    ({"reference": 5}, "reference", "Input should be a valid string (got int 5)"),
    ({"metadata": 5}, "metadata", "Input should be a valid dictionary (got int 5)"),
])
def test_a_field_beside_the_messages_is_told_at_its_path(
    fields: dict[str, Any], path: str, detail: str
) -> None:
    refused = _refused(lambda: MultiTurnSample(messages=[H], **fields))
    assert _told(refused) == ("malformed_event", None, path, detail)
    refused = _refused(lambda: native.to_messages({"messages": [H], **fields}))
    assert (*_told(refused), refused.source) == (
        "malformed_event", None, path, detail, "tracebridge")


def test_the_messages_are_told_before_a_field_beside_them() -> None:
    refused = _refused(lambda: MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": 5}], "reference_topics": [1]}))
    assert (refused.code, refused.path) == ("malformed_event", "messages[0].content")


@pytest.mark.parametrize(("trace", "path"), [
    ({"messages": 5}, "messages"),
    ({"messages": [H], "extra": 1}, "extra"),
    ({"reference": "r"}, "messages"),
])
def test_a_sample_of_the_wrong_shape(trace: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError):
        MultiTurnSample.model_validate(trace)
    refused = _refused(lambda: native.to_messages(trace))
    assert (refused.code, refused.index, refused.path, refused.source) == (
        "malformed_event", None, path, "tracebridge")
