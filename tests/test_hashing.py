"""Canonical JSON and the transcript hash: stable, sensitive to content, blind to metadata."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.hashing import canonical_json, hashed_messages

from strategies import conversations

SAMPLE = MultiTurnSample(
    messages=[
        HumanMessage(content="Wetter in München?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "München"}, id="c1")]),
        {"type": "tool", "content": "12 C", "tool_call_id": "c1"},  # type: ignore[list-item]
        AIMessage(content="12 C."),
    ]
)
# What the hash covers, written out: no metadata, no message ids, keys sorted, compact.
# A change here means every stored hash (and any judge cache keyed by it) changes too.
HASHED_BODY = (
    '[{"content":"Wetter in München?","name":null,"type":"human"},'
    '{"content":"","name":null,"tool_calls":[{"args":{"city":"München"},"id":"c1",'
    '"invalid_args":null,"name":"get_weather"}],"type":"ai"},'
    '{"content":"12 C","is_error":false,"name":null,"tool_call_id":"c1","type":"tool"},'
    '{"content":"12 C.","name":null,"tool_calls":[],"type":"ai"}]'
)
PINNED = "tb1:" + hashlib.sha256(HASHED_BODY.encode("utf-8")).hexdigest()


def test_canonical_json_sorts_keys_and_is_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'.encode()


def test_canonical_json_refuses_nan() -> None:
    # unserializable_value, as the core refuses any value that is not JSON (DESIGN.md's
    # error table), and still a ValueError, as json.dumps's refusal was
    with pytest.raises(ValueError, match=r"^x: nan is not a finite number") as caught:
        canonical_json({"x": float("nan")})
    error = caught.value
    assert isinstance(error, TraceError)
    assert (error.code, error.path) == ("unserializable_value", "x")


def test_the_hash_is_the_same_in_another_process() -> None:
    code = (
        "import sys, json; from tracebridge import MultiTurnSample;"
        "print(MultiTurnSample.model_validate_json(sys.stdin.read()).transcript_hash())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], input=SAMPLE.model_dump_json(), capture_output=True,
        text=True, check=True, env={"PYTHONHASHSEED": "12345"},
    )
    assert other.stdout.strip() == SAMPLE.transcript_hash() == PINNED


def test_the_sample_and_its_messages_hash_alike() -> None:
    assert transcript_hash(SAMPLE) == transcript_hash(SAMPLE.messages) == SAMPLE.transcript_hash()


def _strip(value: object) -> object:
    """The same JSON without any metadata and without message ids."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "metadata"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


@given(conversations())
def test_metadata_and_message_ids_do_not_change_the_hash(messages: list) -> None:
    dumped = [m.model_dump(mode="json") for m in messages]
    bare = [_strip(m) | {"id": None} for m in dumped]
    stripped = MultiTurnSample.model_validate({"messages": bare}).messages
    assert transcript_hash(stripped) == transcript_hash(messages)


@given(conversations(), st.data())
def test_changing_any_content_changes_the_hash(messages: list, data: st.DataObject) -> None:
    position = data.draw(st.integers(0, len(messages) - 1))
    message = messages[position]
    edits: list[dict] = [{"content": "edited " + message.text + " ~"}]
    if isinstance(message, AIMessage) and message.tool_calls:
        call = message.tool_calls[0]
        edits.append({"tool_calls": [call.model_copy(update={"name": call.name + "_x"}),
                                     *message.tool_calls[1:]]})
        if call.invalid_args is None:
            changed_args = {**call.args, "__extra__": 1}
            edits.append({"tool_calls": [call.model_copy(update={"args": changed_args}),
                                         *message.tool_calls[1:]]})
    for edit in edits:
        changed = [*messages[:position], message.model_copy(update=edit), *messages[position + 1 :]]
        assert transcript_hash(changed) != transcript_hash(messages)


def test_one_text_part_hashes_as_its_string() -> None:
    # Frameworks store the same words either way (LlamaIndex always as blocks).
    as_string = [HumanMessage(content="hi"), AIMessage(content="hello")]
    as_part = [HumanMessage(content=[TextPart(text="hi")]), AIMessage(content="hello")]
    two_parts = [HumanMessage(content=[TextPart(text="h"), TextPart(text="i")]),
                 AIMessage(content="hello")]
    assert transcript_hash(as_part) == transcript_hash(as_string)
    assert transcript_hash(two_parts) != transcript_hash(as_string)
    assert hashed_messages(as_part)[0]["content"] == "hi"
    assert hashed_messages(two_parts)[0]["content"] == [
        {"type": "text", "text": "h"},
        {"type": "text", "text": "i"},
    ]


def test_typed_homes_at_their_defaults_keep_the_pinned_body() -> None:
    # role, detail, citations and audio came after the first scheme: absent, they add nothing.
    assert hashed_messages(SAMPLE.messages) == json.loads(HASHED_BODY)
    system = hashed_messages([SystemMessage(content="be brief")])
    assert system == [{"content": "be brief", "name": None, "type": "system"}]
    # an image without a detail hashes without the key; a text part never had one
    looked = hashed_messages(
        [HumanMessage(content=[TextPart(text="look"), ImagePart(url="https://x.test/a.png")])]
    )
    assert looked == [
        {
            "type": "human",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "url": "https://x.test/a.png", "data": None, "mime_type": None},
            ],
            "name": None,
        }
    ]


@pytest.mark.parametrize(
    ("plain", "changed"),
    [
        (SystemMessage(content="be brief"), SystemMessage(content="be brief", role="developer")),
        (AIMessage(content=""), AIMessage(content=[RefusalPart(text="")])),
        (AIMessage(content=[RefusalPart(text="no")]), AIMessage(content=[TextPart(text="no")])),
        (
            HumanMessage(content=[ImagePart(url="https://x/a.png"), TextPart(text="?")]),
            HumanMessage(
                content=[ImagePart(url="https://x/a.png", detail="low"), TextPart(text="?")]
            ),
        ),
        (AIMessage(content="a"), AIMessage(content="a", citations=[Citation(url="https://x")])),
        (
            AIMessage(content="a", citations=[Citation(url="https://x", start_index=0)]),
            AIMessage(content="a", citations=[Citation(url="https://x", start_index=1)]),
        ),
        (AIMessage(content="a"), AIMessage(content="a", audio=AudioReference(id="audio_1"))),
        (
            AIMessage(content="a", audio=AudioReference(id="audio_1")),
            AIMessage(content="a", audio=AudioReference(id="audio_1", transcript="a")),
        ),
    ],
    ids=["developer", "refusal", "refusal-vs-text", "detail", "citation", "citation-span",
         "audio-reply", "audio-transcript"],
)
def test_every_typed_home_is_in_the_hash(plain: Any, changed: Any) -> None:
    assert transcript_hash([plain]) != transcript_hash([changed])


def test_typed_homes_hash_without_their_metadata() -> None:
    bare = AIMessage(content="a", citations=[Citation(url="https://x")],
                     audio=AudioReference(id="audio_1"))
    kept = AIMessage(content="a", citations=[Citation(url="https://x", metadata={"a": {"k": 1}})],
                     audio=AudioReference(id="audio_1", metadata={"a": {"k": 2}}))
    assert transcript_hash([bare]) == transcript_hash([kept])


def test_audio_mime_aliases_hash_as_the_table_spelling() -> None:
    def clip(mime: str) -> list[HumanMessage]:
        return [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime),
                                      TextPart(text="transcribe")])]

    assert transcript_hash(clip("audio/mp3")) == transcript_hash(clip("audio/mpeg"))
    assert transcript_hash(clip("audio/x-wav")) == transcript_hash(clip("audio/wav"))
    assert transcript_hash(clip("audio/ogg")) != transcript_hash(clip("audio/wav"))


def test_a_sample_hashes_once_and_a_copy_with_other_messages_hashes_anew() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="hi")])
    first = sample.transcript_hash()
    assert sample.transcript_hash() is first  # kept, not computed again
    other = sample.model_copy(update={"messages": [HumanMessage(content="bye")]})
    assert other.transcript_hash() == transcript_hash([HumanMessage(content="bye")]) != first
    same = sample.model_copy(update={"reference": "greet"})
    assert same.transcript_hash() == first
    assert same == sample.model_copy(update={"reference": "greet"})  # the cache is not a field


@given(conversations(max_turns=4))
def test_fields_read_off_a_message_hash_as_its_json_dump_does(messages: list[Any]) -> None:
    from tracebridge.hashing import _dumped_fields, _hashed_fields

    for message in messages:
        assert canonical_json(_hashed_fields(message)) == canonical_json(_dumped_fields(message))


@pytest.mark.parametrize(
    "message",
    [
        SystemMessage(content="be brief", role="developer", name="ops", id="s1"),
        AIMessage(content="", tool_calls=[
            ToolCall(name="f", args={"n": 1.0, "b": True, "l": [1, {"x": None}]}, id="c1"),
            ToolCall(name="g", args={}, invalid_args="{oops", id="c2"),
            ToolCall(name="h", args={"input": "free text"}, kind="custom", id="c3"),
        ], name="agent", metadata={"k": [1]}),
        AIMessage(content="see",
                  citations=[Citation(url="https://x.test", start_index=0, end_index=3)]),
        AIMessage(content="hear", audio=AudioReference(id="a1")),
        ToolMessage(content="err", tool_call_id="c1", is_error=True, name="f", id="t1"),
        HumanMessage(content=[TextPart(text="one part")], name="u"),
    ],
)
def test_each_kind_of_message_hashes_its_fields_as_its_dump(message: Any) -> None:
    from tracebridge.hashing import _dumped_fields, _hashed_fields

    assert canonical_json(_hashed_fields(message)) == canonical_json(_dumped_fields(message))


def test_a_lone_surrogate_hashes_as_its_code_points_bytes() -> None:
    # JSON text may hold one as an escape; Python reads it into the string as it is
    lone = HumanMessage(content=json.loads('"a\\ud800b"'))
    assert canonical_json(lone.content) == b'"a\xed\xa0\x80b"'
    assert transcript_hash([lone]) == transcript_hash([HumanMessage(content="a\ud800b")])
    assert transcript_hash([lone]) != transcript_hash([HumanMessage(content="a\ufffdb")])
    assert transcript_hash([lone]) != transcript_hash([HumanMessage(content="ab")])
