"""Core fixes (s42): each test pins one repaired behaviour of the model, the rules or the schema.

1. ``audio/pcm16`` (a subtype spelled as the table's format name ``pcm16``) was written as
   format ``pcm16`` and read back as ``audio/pcm``: the mime type and the hash changed;
2. ``check`` told a false ``orphan_tool_result`` and ``unanswered_tool_call`` after a call id
   reused in a later turn, besides the one real fault (``duplicate_tool_call_id``);
3. the JSON Schema left the ``type`` tag optional and ``messages`` without ``minItems``, so it
   accepted documents the reader refuses;
4. constructors converted mistyped values (``is_error="off"``, ``start_index=True``, bytes
   for text) that ``model_validate`` refuses.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tracebridge import (
    AIMessage,
    AudioPart,
    Citation,
    HumanMessage,
    MultiTurnSample,
    OpaquePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    check,
    validate,
)
from tracebridge.media import (
    AUDIO_MIME_ALIASES,
    AUDIO_MIME_TYPES,
    audio_format,
    audio_mime_type,
    canonical_audio_mime_type,
)


def _refused(work: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        work()
    return caught.value


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- 1. every audio mime type writes back as itself ---------------------------------------------


@pytest.mark.parametrize("name", sorted(AUDIO_MIME_TYPES))
def test_a_format_name_as_a_subtype_reads_back_as_its_canonical_mime_type(name: str) -> None:
    mime_type = f"audio/{name}"
    assert audio_mime_type(audio_format(mime_type) or "") == canonical_audio_mime_type(mime_type)


@pytest.mark.parametrize(
    "mime_type",
    sorted({*AUDIO_MIME_TYPES.values(), *AUDIO_MIME_ALIASES,
            "audio/PCM16", "audio/pcm16;rate=24000", "audio/l16", "audio/ogg"}),
)
def test_every_audio_mime_type_reads_back_as_its_canonical_spelling(mime_type: str) -> None:
    assert audio_mime_type(audio_format(mime_type) or "") == canonical_audio_mime_type(mime_type)


def test_audio_pcm16_is_audio_pcm() -> None:
    assert canonical_audio_mime_type("audio/pcm16") == "audio/pcm"
    assert canonical_audio_mime_type("AUDIO/PCM16") == "audio/pcm"
    assert audio_format("audio/pcm16") == "pcm16"
    assert audio_format("audio/pcm16;rate=24000") == "pcm;rate=24000"


def test_audio_pcm16_hashes_as_what_it_reads_back_as() -> None:
    def sample(mime_type: str) -> MultiTurnSample:
        part = AudioPart(data="AAAA", mime_type=mime_type)
        return MultiTurnSample(messages=[HumanMessage(content=[part])])

    read_back = audio_mime_type(audio_format("audio/pcm16") or "")
    assert read_back == "audio/pcm"
    assert sample("audio/pcm16").transcript_hash() == sample(read_back).transcript_hash()


# --- 2. a call id reused in a later turn is one fault --------------------------------------------

H, A, T, C = HumanMessage, AIMessage, ToolMessage, ToolCall


def test_an_id_reused_in_a_later_turn_is_only_a_duplicate() -> None:
    conversation = [
        H(content="q"), A(tool_calls=[C(name="f", id="a")]), T(content="r", tool_call_id="a"),
        H(content="again"), A(tool_calls=[C(name="f", id="a")]), T(content="r2", tool_call_id="a"),
    ]
    assert [_where(error) for error in check(conversation)] == [
        ("duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id"),
    ]
    assert _where(_refused(lambda: validate(conversation))) == (
        "duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id")


def test_a_reused_id_answered_twice_is_a_duplicate_and_an_orphan() -> None:
    conversation = [
        H(content="q"), A(tool_calls=[C(name="f", id="a")]), T(content="r", tool_call_id="a"),
        H(content="again"), A(tool_calls=[C(name="f", id="a")]), T(content="r2", tool_call_id="a"),
        T(content="r3", tool_call_id="a"),
    ]
    errors = check(conversation)
    assert [_where(error) for error in errors] == [
        ("duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id"),
        ("orphan_tool_result", 6, "messages[6].tool_call_id"),
    ]
    assert errors[1].detail == "tool_call_id 'a' was already answered at messages[5]"


def test_a_reused_id_left_unanswered_is_a_duplicate_and_unanswered() -> None:
    conversation = [
        H(content="q"), A(tool_calls=[C(name="f", id="a")]), T(content="r", tool_call_id="a"),
        H(content="again"), A(tool_calls=[C(name="f", id="a")]), H(content="hello?"),
    ]
    assert [_where(error) for error in check(conversation)] == [
        ("duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id"),
        ("unanswered_tool_call", 4, "messages[4].tool_calls[0]"),
    ]


def test_an_id_twice_in_one_message_pairs_its_first_call() -> None:
    conversation = [
        A(tool_calls=[C(name="f", id="a"), C(name="g", id="a")]),
        T(content="r", tool_call_id="a"),
        T(content="r2", tool_call_id="a"),
    ]
    errors = check(conversation)
    assert [_where(error) for error in errors] == [
        ("duplicate_tool_call_id", 0, "messages[0].tool_calls[1].id"),
        ("orphan_tool_result", 2, "messages[2].tool_call_id"),
        ("unanswered_tool_call", 0, "messages[0].tool_calls[1]"),
    ]
    assert errors[1].detail == "tool_call_id 'a' was already answered at messages[1]"
    assert _where(_refused(lambda: validate(conversation))) == (
        "duplicate_tool_call_id", 0, "messages[0].tool_calls[1].id")


# --- 3. the JSON Schema requires what the reader requires ----------------------------------------

REQUIRED = {
    "AIMessage": ["type"],
    "AudioPart": ["type"],
    "AudioReference": ["id"],
    "Citation": None,
    "FilePart": ["type"],
    "HumanMessage": ["type", "content"],
    "ImagePart": ["type"],
    "OpaquePart": ["type", "kind", "value"],
    "ReasoningPart": ["type", "text"],
    "RefusalPart": ["type", "text"],
    "SystemMessage": ["type", "content"],
    "TextPart": ["type", "text"],
    "ToolCall": ["name"],
    "ToolMessage": ["type", "content"],
}

NO_TAG_DOCUMENTS = [
    {"messages": [{"tool_calls": []}]},
    {"messages": [{"content": "x", "tool_call_id": "1"}]},
    {"messages": [{"type": "human", "content": [{"kind": "k", "value": 1}]}]},
    {"messages": [{"type": "human", "content": [{"text": "x"}]}]},
]


def test_the_schema_requires_the_type_tag_of_every_message_and_part() -> None:
    definitions = MultiTurnSample.model_json_schema()["$defs"]
    assert {name: model.get("required") for name, model in definitions.items()} == REQUIRED


def test_the_schema_requires_at_least_one_message() -> None:
    schema = MultiTurnSample.model_json_schema()
    assert schema["required"] == ["messages"]
    assert schema["properties"]["messages"]["minItems"] == 1


def test_the_schema_in_serialization_mode_requires_the_tag_too() -> None:
    definitions = MultiTurnSample.model_json_schema(mode="serialization")["$defs"]
    tagged = [name for name, model in definitions.items() if "type" in model["properties"]]
    assert len(tagged) == 11
    assert all(definitions[name]["required"][0] == "type" for name in tagged)


@pytest.mark.parametrize("document", [*NO_TAG_DOCUMENTS, {"messages": []}])
def test_a_document_the_reader_refuses_is_not_valid_by_the_schema(
    document: dict[str, Any],
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(MultiTurnSample.model_json_schema())
    assert validator.is_valid(document) is False
    with pytest.raises(TraceError):
        MultiTurnSample.model_validate(document)


def test_a_dumped_sample_is_valid_by_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(MultiTurnSample.model_json_schema())
    sample = MultiTurnSample(messages=[
        HumanMessage(content=[TextPart(text="hi"), OpaquePart(kind="k", value=None)]),
        AIMessage(tool_calls=[ToolCall(name="f", id="c")], citations=[Citation(start_index=1)]),
        ToolMessage(content="r", tool_call_id="c", is_error=True),
    ])
    assert validator.is_valid(sample.model_dump(mode="json")) is True


def test_the_reader_still_tells_an_untagged_message_and_an_empty_conversation() -> None:
    assert _where(_refused(lambda: MultiTurnSample.model_validate(NO_TAG_DOCUMENTS[0]))) == (
        "malformed_event", 0, "messages[0]")
    assert _where(_refused(lambda: MultiTurnSample.model_validate({"messages": []}))) == (
        "empty_conversation", None, None)


@pytest.mark.parametrize("option", ["exclude_unset", "exclude_defaults"])
def test_dumps_that_leave_the_tag_out_do_not_read_back(option: str) -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="x")])
    options: dict[str, Any] = {option: True}
    assert sample.model_dump(**options)["messages"] == [{"content": "x"}]
    text = sample.model_dump_json(**options)
    assert _where(_refused(lambda: MultiTurnSample.model_validate_json(text))) == (
        "malformed_event", 0, "messages[0]")


# --- 4. constructors refuse what model_validate refuses ------------------------------------------

MISTYPED: dict[str, Any] = {"messages": [
    {"type": "human", "content": "q"},
    {"type": "ai", "tool_calls": [{"name": "f", "id": "1"}],
     "citations": [{"start_index": "5", "end_index": True}]},
    {"type": "tool", "content": "x", "tool_call_id": "1", "is_error": "off"},
]}


def test_the_constructor_refuses_what_model_validate_refuses() -> None:
    built = _refused(lambda: MultiTurnSample(**MISTYPED))
    read = _refused(lambda: MultiTurnSample.model_validate(MISTYPED))
    assert _where(built) == _where(read) == (
        "malformed_event", 1, "messages[1].citations[0].start_index")
    assert built.detail == read.detail == "Input should be a valid integer (got str '5')"


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("is_error", "off", "messages[2].is_error"),
        ("is_error", 1, "messages[2].is_error"),
        ("content", b"x", "messages[2].content"),
        ("tool_call_id", 1, "messages[2].tool_call_id"),
    ],
)
def test_a_mistyped_tool_message_field_is_refused_by_the_constructor(
    field: str, value: Any, path: str,
) -> None:
    tool = {"type": "tool", "content": "x", "tool_call_id": "1", field: value}
    asked = {"type": "ai", "tool_calls": [{"name": "f", "id": "1"}]}
    data: dict[str, Any] = {"messages": [{"type": "human", "content": "q"}, asked, tool]}
    assert _where(_refused(lambda: MultiTurnSample(**data))) == ("malformed_event", 2, path)


@pytest.mark.parametrize(
    ("make", "refused"),
    [
        (lambda: Citation(start_index=True), [("int_type", "start_index")]),
        (lambda: Citation(end_index="5"), [("int_type", "end_index")]),
        (lambda: Citation(start_index=3.0), [("int_type", "start_index")]),
        (lambda: ToolMessage(content="x", is_error="yes"), [("bool_type", "is_error")]),
        # content is a string or a list of parts: pydantic tells both branches
        (lambda: ToolMessage(content=b"x"), [("string_type", "content"), ("list_type", "content")]),
        (lambda: AIMessage(tool_calls=(ToolCall(name="f"),)), [("list_type", "tool_calls")]),
    ],
)
def test_a_message_or_citation_constructor_converts_nothing(
    make: Any, refused: list[tuple[str, str]],
) -> None:
    with pytest.raises(ValidationError) as caught:
        make()
    assert [(e["type"], e["loc"][0]) for e in caught.value.errors()] == refused


def test_model_validate_converts_when_asked_to() -> None:
    sample = MultiTurnSample.model_validate(MISTYPED, strict=False)
    assert sample.messages[1].citations == [Citation(start_index=5, end_index=1)]  # type: ignore[union-attr]
    assert sample.messages[2].is_error is False  # type: ignore[union-attr]


def test_a_tuple_where_a_list_belongs_is_refused_by_the_constructor() -> None:
    call = ToolCall(name="f", id="1")
    with_tuple: list[Any] = [HumanMessage(content="q"), {"type": "ai", "tool_calls": (call,)}]
    refused = _refused(lambda: MultiTurnSample(messages=with_tuple))
    assert _where(refused) == ("malformed_event", 1, "messages[1].tool_calls")
    with pytest.raises(ValidationError) as caught:
        MultiTurnSample(messages=(HumanMessage(content="q"),))  # type: ignore[arg-type]
    assert [(e["type"], e["loc"]) for e in caught.value.errors()] == [("list_type", ("messages",))]


def test_a_dict_is_still_taken_as_a_model() -> None:
    fields: dict[str, Any] = {"tool_calls": [{"name": "f", "id": "1"}]}
    message = AIMessage(**fields)
    assert message.tool_calls == [ToolCall(name="f", id="1")]
