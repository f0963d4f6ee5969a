"""Core audit: the hash, the sample's JSON, the ``tracebridge`` reader and writer, media types.

Each test pins one finding: a lone surrogate in a dict key (hashed by both routines as its
code point, kept by ``model_dump_json``), a lone *high* surrogate read back, mistyped JSON
values refused rather than converted, where a non-JSON value is reported, ``allow_pending``
checking the rest of a sample all the same, the ``tracebridge`` writer's refusals, a sample's
hash after a message is replaced, and audio mime types in any case.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    OpaquePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    native,
    transcript_hash,
)
from tracebridge import sample as sample_module
from tracebridge.hashing import _dumped_fields, _hashed_fields, canonical_json
from tracebridge.media import audio_format, canonical_audio_mime_type
from tracebridge.registry import get_adapter

NAN = float("nan")
LONE_KEY: dict[str, Any] = json.loads('{"\\ud800": 1}')  # legal JSON text, read by Python
FFFD_KEY = {"\ufffd\ufffd\ufffd": 1}
H = {"type": "human", "content": "q"}
AI = {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c"}]}


def _refused(work: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        work()
    return caught.value


def _calls(message: Any) -> list[ToolCall]:
    assert isinstance(message, AIMessage)
    return message.tool_calls


def _where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


# --- 1. a lone surrogate in a dict key, hashed ------------------------------------------


def _called(args: dict[str, Any], cited: bool) -> AIMessage:
    citations = [Citation(url="https://x")] if cited else []
    return AIMessage(content="x", tool_calls=[ToolCall(name="f", args=args, id="1")],
                     citations=citations)


def test_a_lone_surrogate_key_hashes_as_its_code_point_on_both_paths() -> None:
    plain = _called(LONE_KEY, cited=False)  # read straight from the fields
    assert canonical_json(_dumped_fields(plain)) == canonical_json(_hashed_fields(plain)) == (
        b'{"content":"x","name":null,"tool_calls":[{"args":{"\xed\xa0\x80":1},"id":"1",'
        b'"invalid_args":null,"name":"f"}],"type":"ai"}')


def test_a_lone_surrogate_key_and_three_replacement_characters_hash_apart() -> None:
    # a cited message is hashed from its dump: that dump wrote the key as U+FFFD x3
    assert transcript_hash([_called(LONE_KEY, cited=True)]) != transcript_hash(
        [_called(FFFD_KEY, cited=True)])


def test_a_lone_surrogate_key_in_an_opaque_value_is_hashed_not_raised() -> None:
    message = HumanMessage(content=[OpaquePart(kind="x", value=LONE_KEY), TextPart(text="t")])
    body = [{"type": "human", "name": None, "content": [
        {"type": "opaque", "kind": "x", "value": {"\ud800": 1}}, {"type": "text", "text": "t"}]}]
    expected = "tb1:" + hashlib.sha256(canonical_json(body)).hexdigest()
    assert transcript_hash([message]) == expected
    assert MultiTurnSample(messages=[message]).transcript_hash() == expected


def test_openai_chat_arguments_with_an_escaped_lone_surrogate_key_hash_as_themselves() -> None:
    def chat(key_json: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "see x",
                 "annotations": [{"type": "url_citation", "url_citation": {
                     "url": "https://x", "title": "t", "start_index": 0, "end_index": 1}}],
                 "tool_calls": [{"id": "c1", "type": "function", "function": {
                     "name": "f", "arguments": '{"' + key_json + '": 1}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"}]

    reader = get_adapter("openai_chat").to_messages
    lone, fffd = reader(chat("\\ud800")), reader(chat("\\ufffd\\ufffd\\ufffd"))
    assert _calls(lone[1])[0].args == {"\ud800": 1}
    assert transcript_hash(lone) != transcript_hash(fffd)


def test_a_conversation_without_surrogate_keys_keeps_its_hash() -> None:
    # every typed home hashed from the dump: the value the scheme gave before the fix
    messages = [
        SystemMessage(content="be brief", role="developer"),
        HumanMessage(content=[TextPart(text="what is this?"),
                              ImagePart(url="https://x/cat.png", detail="high"),
                              AudioPart(data="UklGRg==", mime_type="audio/x-wav"),
                              OpaquePart(kind="k", value={"é": [1, 2.5, None, "\ufffd"]})]),
        AIMessage(content="A cat.",
                  citations=[Citation(url="https://c", title="Cats", start_index=0, end_index=5)],
                  audio=AudioReference(id="audio_1", transcript="A cat.", expires_at=1700000000),
                  tool_calls=[ToolCall(name="look", args={"q": "cat", "ü": True}, id="c1")]),
        ToolMessage(content=[TextPart(text="a cat"), TextPart(text="!")], tool_call_id="c1",
                    is_error=True),
    ]
    assert transcript_hash(messages) == (
        "tb1:aa078ced3c1500ed608b641fb31834bdf011c053a58717a236713fa71bda7681")


# --- 2. a lone surrogate in a dict key, written by model_dump_json ----------------------

NAME = "report-\udcff.txt"  # b"report-\xff.txt" decoded with surrogateescape
KEYED = {
    "message metadata key": dict(messages=[HumanMessage(content="hi", metadata={NAME: 1})]),
    "tool call args key": dict(messages=[
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="open", args={NAME: True}, id="c1")]),
        ToolMessage(content="ok", tool_call_id="c1")]),
    "sample metadata key": dict(messages=[HumanMessage(content="hi")], metadata={NAME: "x"}),
    "reference_tool_calls args key": dict(
        messages=[HumanMessage(content="hi")],
        reference_tool_calls=[ToolCall(name="open", args={NAME: True})]),
    "rubrics key": dict(messages=[HumanMessage(content="hi")], rubrics={NAME: "be nice"}),
    "opaque value key": dict(messages=[HumanMessage(
        content=[OpaquePart(kind="x", value={"a": [{NAME: 1}]}), TextPart(text="t")])]),
}


@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("case", sorted(KEYED))
def test_a_lone_surrogate_key_survives_the_json_round_trip(case: str, ensure_ascii: bool) -> None:
    sample = MultiTurnSample(**KEYED[case])  # type: ignore[arg-type]
    text = sample.model_dump_json(ensure_ascii=ensure_ascii)
    assert '"report-\\udcff.txt"' in text
    assert "\ufffd" not in text
    assert "\\ufffd" not in text
    back = MultiTurnSample.model_validate_json(text)
    assert back == sample
    assert back.transcript_hash() == sample.transcript_hash()


def test_a_replacement_character_of_its_own_is_written_by_pydantic() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="\ufffd", metadata={"\ufffd": 1})])
    for ensure_ascii in (False, True):
        text = sample.model_dump_json(ensure_ascii=ensure_ascii)
        assert text == BaseModel.model_dump_json(sample, ensure_ascii=ensure_ascii)
        assert MultiTurnSample.model_validate_json(text) == sample


# --- 3. a lone high surrogate read back -------------------------------------------------


@pytest.mark.parametrize("lone", [chr(0xD800), chr(0xDBFF), chr(0xDCFF)])
def test_a_lone_surrogate_of_either_half_reads_back(lone: str) -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="a" + lone + "b")])
    text = sample.model_dump_json()
    assert f'"a\\u{ord(lone):x}b"' in text
    assert MultiTurnSample.model_validate_json(text) == sample
    assert MultiTurnSample.model_validate_json(text.encode("ascii")) == sample


def test_a_lone_high_surrogate_key_of_tool_arguments_reads_back() -> None:
    call = ToolCall(name="f", args={"\ud800": 1}, id="c")
    sample = MultiTurnSample(messages=[HumanMessage(content="q"), AIMessage(tool_calls=[call]),
                                       ToolMessage(content="r", tool_call_id="c")])
    back = MultiTurnSample.model_validate_json(sample.model_dump_json())
    assert list(_calls(back.messages[1])[0].args) == ["\ud800"]
    assert back == sample
    assert back.transcript_hash() == sample.transcript_hash()


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "Invalid JSON: expected ident at line 1 column 2"),
    # pydantic's reader stops at the escaped surrogate; Python's at the missing brace
    ('{"messages": [{"type": "human", "content": "a\\ud800b"}]', "Invalid JSON: unexpected "
     "end of hex escape at line 1 column 52"),
    (b'{"messages": [{"type": "human", "content": "\xff"}]}', "Invalid JSON: invalid unicode "
     "code point at line 1 column 45"),
])
def test_text_that_is_not_json_keeps_pydantics_error(text: str | bytes, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        MultiTurnSample.model_validate_json(text)
    (error,) = caught.value.errors()
    assert (error["type"], error["msg"]) == ("json_invalid", message)


# --- 5. mistyped JSON values are refused, not converted ---------------------------------

MISTYPED = [
    ([H, AI, {"type": "tool", "content": "x", "tool_call_id": "c", "is_error": "off"}],
     2, "messages[2].is_error", "Input should be a valid boolean (got str 'off')"),
    ([H, AI, {"type": "tool", "content": "x", "tool_call_id": "c", "is_error": 1}],
     2, "messages[2].is_error", "Input should be a valid boolean (got int 1)"),
    ([H, {"type": "ai", "content": "hello", "citations": [{"url": "u", "start_index": "5"}]}],
     1, "messages[1].citations[0].start_index", "Input should be a valid integer (got str '5')"),
    ([H, {"type": "ai", "content": "hello", "citations": [{"url": "u", "end_index": 3.0}]}],
     1, "messages[1].citations[0].end_index", "Input should be a valid integer (got float 3.0)"),
    ([H, {"type": "ai", "content": "hi", "audio": {"id": "a1", "expires_at": "1700000000"}}],
     1, "messages[1].audio.expires_at",
     "Input should be a valid integer (got str '1700000000')"),
]


@pytest.mark.parametrize(("trace", "index", "path", "detail"), MISTYPED)
def test_the_tracebridge_reader_refuses_a_mistyped_value(
    trace: list[dict[str, Any]], index: int, path: str, detail: str
) -> None:
    trace = json.loads(json.dumps(trace))
    for given in (trace, {"messages": trace}):
        for allow_pending in (False, True):
            error = _refused(lambda given=given, allow_pending=allow_pending: native.to_messages(
                given, allow_pending=allow_pending))
            assert _where(error) == ("malformed_event", index, path, "tracebridge")
            assert error.detail == detail


@pytest.mark.parametrize(("trace", "index", "path", "detail"), MISTYPED)
def test_a_sample_read_from_json_or_a_dict_refuses_a_mistyped_value(
    trace: list[dict[str, Any]], index: int, path: str, detail: str
) -> None:
    text = json.dumps({"messages": trace})
    for work in (lambda: MultiTurnSample.model_validate_json(text),
                 lambda: MultiTurnSample.model_validate(json.loads(text))):
        error = _refused(work)
        assert _where(error) == ("malformed_event", index, path, None)
        assert error.detail == detail


def test_bytes_are_no_content_to_the_tracebridge_reader() -> None:
    error = _refused(lambda: native.to_messages([{"type": "human", "content": b"hi"}]))
    assert _where(error) == ("malformed_event", 0, "messages[0].content", "tracebridge")
    assert error.detail == "content must be a string or a list of parts (got bytes b'hi')"


def test_well_typed_json_still_reads() -> None:
    trace = [H, {"type": "ai", "content": "hello", "tool_calls": [
        {"name": "f", "args": {"x": 1, "y": 1.5}, "id": "c"}],
        "citations": [{"url": "u", "start_index": 0, "end_index": 5}],
        "audio": {"id": "a1", "expires_at": 1700000000}},
        {"type": "tool", "content": "x", "tool_call_id": "c", "is_error": True}]
    typed = native.to_messages(json.loads(json.dumps(trace)))
    assert native.from_messages(typed)[2]["is_error"] is True
    sample = MultiTurnSample.model_validate_json(json.dumps({"messages": trace}))
    assert sample.messages == typed


# --- 6. where a value that is not JSON is reported --------------------------------------

CITED = {"type": "ai", "content": "x", "citations": [{"url": "u", "metadata": {"a": NAN}}]}
AUDIO = {"type": "ai", "content": "x", "audio": {"id": "a1", "metadata": {"a": NAN}}}
OPAQUE = {"type": "human", "content": [{"type": "opaque", "kind": "k", "value": {"v": [NAN]}}]}
NOTED = {"type": "human", "content": "x", "metadata": {"a": NAN}}


@pytest.mark.parametrize(("message", "path"), [
    (CITED, "messages[1].citations[0].metadata.a"),
    (AUDIO, "messages[1].audio.metadata.a"),
    (OPAQUE, "messages[1].content[0].value.v[0]"),
    (NOTED, "messages[1].metadata.a"),
])
def test_a_non_json_value_is_reported_where_it_is(message: dict[str, Any], path: str) -> None:
    error = _refused(lambda: MultiTurnSample(messages=[H, message]))
    assert _where(error) == ("unserializable_value", 1, path, None)
    for given, allow_pending in (([H, message], False), ([H, message], True),
                                 ({"messages": [H, message]}, False),
                                 ({"messages": [H, message]}, True)):
        error = _refused(lambda given=given, allow_pending=allow_pending: native.to_messages(
            given, allow_pending=allow_pending))
        assert _where(error) == ("unserializable_value", 1, path, "tracebridge")


def test_a_non_json_value_in_a_reference_tool_call_is_reported_there() -> None:
    error = _refused(lambda: MultiTurnSample(
        messages=[H], reference_tool_calls=[{"name": "g"}, {"name": "f", "args": {"a": NAN}}]))
    assert _where(error) == ("unserializable_value", None, "reference_tool_calls[1].args.a", None)
    assert error.detail == "nan is not a finite number"


# --- 7. allow_pending checks the rest of a sample all the same --------------------------

ONE = [{"type": "human", "content": "hi"}]


@pytest.mark.parametrize(("trace", "path"), [
    ({"messages": ONE, "bogus": 1}, "bogus"),
    ({"messages": ONE, "reference": 5}, "reference"),
    ({"messages": ONE, "rubrics": ["x"]}, "rubrics"),
    ({"messages": ONE, "user_input": [{"type": "ai", "content": "other"}]}, "user_input"),
    ({"reference": "r"}, "messages"),
])
def test_allow_pending_refuses_a_malformed_sample_as_without_it(
    trace: dict[str, Any], path: str
) -> None:
    refusals = [_refused(lambda allow_pending=allow_pending: native.to_messages(
        trace, allow_pending=allow_pending)) for allow_pending in (False, True)]
    assert [_where(error) for error in refusals] == [
        ("malformed_event", None, path, "tracebridge")] * 2
    assert refusals[0].detail == refusals[1].detail


def test_allow_pending_still_lets_a_sample_end_mid_tool() -> None:
    trace = {"messages": [H, AI], "reference": "r"}
    assert _calls(native.to_messages(trace, allow_pending=True)[1])[0].id == "c"
    error = _refused(lambda: native.to_messages(trace))
    assert _where(error) == (
        "unanswered_tool_call", 1, "messages[1].tool_calls[0]", "tracebridge")


@pytest.mark.parametrize("value", ["false", 0, None])
def test_the_tracebridge_reader_takes_only_a_bool_for_allow_pending(value: Any) -> None:
    for trace in ({"messages": ONE}, ONE, MultiTurnSample(messages=[HumanMessage(content="hi")])):
        with pytest.raises(ValueError, match=r"^allow_pending must be True or False, got "):
            native.to_messages(trace, allow_pending=value)


# --- 8. the tracebridge writer refuses what is not messages -----------------------------


@pytest.mark.parametrize("given", [None, 5, "hi", {"type": "human", "content": "hi"}])
def test_the_tracebridge_writer_refuses_what_is_no_list_of_messages(given: Any) -> None:
    error = _refused(lambda: native.from_messages(given))
    assert _where(error) == ("malformed_event", None, "messages", "tracebridge")


@pytest.mark.parametrize("item", [None, {"type": "ai", "content": "x"}])
def test_the_tracebridge_writer_refuses_an_item_that_is_no_message(item: Any) -> None:
    error = _refused(lambda: native.from_messages([HumanMessage(content="hi"), item]))
    assert _where(error) == ("malformed_event", 1, "messages[1]", "tracebridge")


def test_the_tracebridge_writer_writes_a_sample_as_its_messages() -> None:
    messages: list[Any] = [HumanMessage(content="hi"), AIMessage(content="hello")]
    written = native.from_messages(messages)
    assert native.from_messages(MultiTurnSample(messages=messages)) == written
    assert written[1] == {"type": "ai", "content": "hello", "tool_calls": [], "name": None,
                          "citations": [], "audio": None, "id": None, "metadata": {}}


# --- 9. a sample's hash after a message is replaced -------------------------------------


def test_a_replaced_message_is_seen_by_the_samples_hash() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="q"), AIMessage(content="a")])
    before = sample.transcript_hash()
    sample.messages[1] = AIMessage(content="something else entirely")
    assert sample.transcript_hash() == transcript_hash(sample.messages) != before
    sample.messages.append(HumanMessage(content="more"))
    assert sample.transcript_hash() == transcript_hash(sample.messages)


def test_a_replacement_equal_to_python_but_not_to_json_is_seen() -> None:
    call = ToolCall(name="f", args={"a": 1}, id="c")
    sample = MultiTurnSample(messages=[HumanMessage(content="q"), AIMessage(tool_calls=[call]),
                                       ToolMessage(content="r", tool_call_id="c")])
    before = sample.transcript_hash()
    other = AIMessage(tool_calls=[ToolCall(name="f", args={"a": True}, id="c")])
    assert other.model_dump() == sample.messages[1].model_dump()  # Python's ==: 1 == True
    assert other != sample.messages[1]  # a message's == is JSON's
    sample.messages[1] = other
    assert sample.transcript_hash() == transcript_hash(sample.messages) != before


def test_the_samples_hash_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="q"), AIMessage(content="a")])
    calls: list[Any] = []

    def counted(conversation: Any) -> str:
        calls.append(conversation)
        return transcript_hash(conversation)

    monkeypatch.setattr(sample_module, "transcript_hash", counted)
    first = sample.transcript_hash()
    assert [sample.transcript_hash() for _ in range(3)] == [first] * 3
    assert len(calls) == 1


# --- 10. audio mime types in any case ---------------------------------------------------


@pytest.mark.parametrize(("mime", "canonical", "name"), [
    ("AUDIO/MPEG", "audio/mpeg", "mp3"),
    ("AUDIO/MP3", "audio/mpeg", "mp3"),
    ("AUDIO/WAV", "audio/wav", "wav"),
    ("Audio/Wav", "audio/wav", "wav"),
    ("audio/WAV", "audio/wav", "wav"),
    ("AUDIO/X-WAV", "audio/wav", "wav"),
    ("Audio/OGG", "audio/ogg", "ogg"),
    ("Audio/L16;rate=8000", "audio/l16;rate=8000", "l16;rate=8000"),
])
def test_an_audio_mime_type_is_read_in_any_case(mime: str, canonical: str, name: str) -> None:
    assert canonical_audio_mime_type(mime) == canonical
    assert audio_format(mime) == name


def _clip(mime: str) -> list[HumanMessage]:
    return [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime), TextPart(text="t")])]


@pytest.mark.parametrize(("mime", "same"), [("AUDIO/MPEG", "audio/mpeg"),
                                            ("Audio/WAV", "audio/wav")])
def test_an_audio_mime_type_hashes_in_the_tables_spelling_in_any_case(
    mime: str, same: str
) -> None:
    assert transcript_hash(_clip(mime)) == transcript_hash(_clip(same))


def test_openai_chat_writes_an_upper_case_wav_and_keeps_an_upper_case_format() -> None:
    chat = get_adapter("openai_chat")
    written = chat.from_messages(_clip("AUDIO/WAV"))
    assert written[0]["content"][0] == {"type": "input_audio",
                                        "input_audio": {"data": "UklGRg==", "format": "wav"}}
    trace = [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "WAV"}}]}]
    assert chat.from_messages(chat.to_messages(trace)) == trace
