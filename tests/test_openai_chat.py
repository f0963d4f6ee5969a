"""openai_chat: exact behaviour on Chat Completions message dicts, both ways."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import openai_chat
from tracebridge.adapters.openai_chat import from_messages, to_messages

USER = {"role": "user", "content": "Weather in Paris?"}


def call(call_id: str, arguments: str, name: str = "get_weather") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def roundtrip(trace: list[Any]) -> list[Any]:
    return from_messages(to_messages(trace))


def rejected(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        to_messages(trace, **options)
    return caught.value


# --- roles ---------------------------------------------------------------------------------


def test_each_role_maps_to_its_message_kind() -> None:
    trace = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Use metric units."},
        {"role": "user", "content": "Weather in Paris?", "name": "ana"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", '{"city": "Paris"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "assistant", "content": "18 C and sunny.", "name": "forecaster"},
    ]
    assert to_messages(trace) == [
        SystemMessage(content="Be brief."),
        SystemMessage(content="Use metric units.", role="developer"),
        HumanMessage(content="Weather in Paris?", name="ana"),
        AIMessage(
            content="",
            tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")],
            metadata={"openai_chat": {"content": "null"}},
        ),
        ToolMessage(content="18 C", tool_call_id="c1"),
        AIMessage(content="18 C and sunny.", name="forecaster"),
    ]
    assert roundtrip(trace) == trace


def test_a_developer_message_converts_back_to_developer() -> None:
    trace = [{"role": "developer", "content": "Use metric units."}, USER]
    assert from_messages(to_messages(trace))[0] == {
        "role": "developer",
        "content": "Use metric units.",
    }


def test_a_typed_system_message_is_written_as_system() -> None:
    assert from_messages([SystemMessage(content="Be brief.")]) == [
        {"role": "system", "content": "Be brief."}
    ]


def test_legacy_function_call_pairs_with_the_function_message_by_position() -> None:
    trace = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {"role": "function", "name": "get_weather", "content": "18 C"},
    ]
    assert to_messages(trace)[1:] == [
        AIMessage(
            content="",
            tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
            metadata={"openai_chat": {"content": "null"}},
        ),
        ToolMessage(content="18 C", name="get_weather"),
    ]
    assert roundtrip(trace) == trace


def test_two_function_messages_for_one_function_call_are_an_orphan() -> None:
    trace = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": "{}"},
        },
        {"role": "function", "name": "get_weather", "content": "18 C"},
        {"role": "function", "name": "get_weather", "content": "18 C"},
    ]
    error = rejected(trace)
    assert (error.code, error.index, error.source) == ("orphan_tool_result", 3, "openai_chat")


# --- null-valued and absent keys -----------------------------------------------------------


@pytest.mark.parametrize(
    "assistant",
    [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]},
        {"role": "assistant", "tool_calls": [call("c1", "{}")]},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "{}")]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c1", "{}")],
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
        },
    ],
    ids=["content-null", "content-absent", "content-empty", "every-null"],
)
def test_empty_content_and_null_keys_come_back_exactly(assistant: dict[str, Any]) -> None:
    trace = [USER, assistant, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert roundtrip(trace) == trace
    assert to_messages(trace)[1].content == ""


@pytest.mark.parametrize("tool_calls", [None, []], ids=["null", "empty-list"])
def test_tool_calls_null_or_empty_is_kept_as_given(tool_calls: Any) -> None:
    trace = [USER, {"role": "assistant", "content": "Hi.", "tool_calls": tool_calls}]
    assert to_messages(trace)[1] == AIMessage(
        content="Hi.", metadata={"openai_chat": {"fields": {"tool_calls": tool_calls}}}
    )
    assert roundtrip(trace) == trace


def test_a_null_name_is_kept_and_not_a_name() -> None:
    trace = [{"role": "user", "content": "hi", "name": None}]
    assert to_messages(trace) == [
        HumanMessage(content="hi", metadata={"openai_chat": {"fields": {"name": None}}})
    ]
    assert roundtrip(trace) == trace


def test_unknown_keys_are_kept_verbatim() -> None:
    trace = [{"role": "user", "content": "hi", "x_session": {"turn": 1}}]
    assert to_messages(trace)[0].metadata == {"openai_chat": {"fields": {"x_session": {"turn": 1}}}}
    assert roundtrip(trace) == trace


def test_a_refusal_becomes_the_content_and_comes_back_as_the_refusal_field() -> None:
    trace = [USER, {"role": "assistant", "content": None, "refusal": "I can't help with that."}]
    assert to_messages(trace)[1] == AIMessage(
        content=[RefusalPart(text="I can't help with that.")]
    )
    assert roundtrip(trace) == trace


def test_audio_and_annotations_have_typed_homes() -> None:
    audio = {"id": "audio_1", "data": "UklGRg==", "expires_at": 1767225600, "transcript": "Hi."}
    annotations = [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://example.com",
                "title": "Example",
                "start_index": 0,
                "end_index": 3,
            },
        }
    ]
    trace = [
        USER,
        {"role": "assistant", "content": "Hi.", "audio": audio, "annotations": annotations},
    ]
    assert to_messages(trace)[1] == AIMessage(
        content="Hi.",
        audio=AudioReference(
            id="audio_1", transcript="Hi.", data="UklGRg==", expires_at=1767225600
        ),
        citations=[
            Citation(url="https://example.com", title="Example", start_index=0, end_index=3)
        ],
    )
    assert roundtrip(trace) == trace


# --- tool-call arguments -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "kept"),
    [
        ('{"city":"Paris","unit":"C"}', True),
        ('{\n  "city": "Paris",\n  "unit": "C"\n}', True),
        ('{"unit": "C", "city": "Paris"}', False),  # args keep the key order themselves
    ],
    ids=["compact", "indented", "key-order"],
)
def test_the_exact_argument_text_comes_back(arguments: str, kept: bool) -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ]
    typed = to_messages(trace)[1]
    assert isinstance(typed, AIMessage)
    assert typed.tool_calls == [
        ToolCall(
            name="get_weather",
            args={"city": "Paris", "unit": "C"},
            id="c1",
            metadata={"openai_chat": {"arguments": arguments}} if kept else {},
        )
    ]
    assert roundtrip(trace) == trace


def test_arguments_json_dumps_would_write_keep_no_metadata() -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1", '{"city": "Paris"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ]
    typed = to_messages(trace)[1]
    assert isinstance(typed, AIMessage)
    assert typed.tool_calls[0].metadata == {}


@pytest.mark.parametrize(
    "arguments",
    ['{"city": "Paris"', "[1, 2]", '"Paris"', " ", "NaN", '{"n": 1e999}'],
    ids=["truncated", "list", "string", "blank", "nan", "infinite"],
)
def test_arguments_that_are_not_a_json_object_are_kept_as_invalid_args(arguments: str) -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: bad arguments"},
    ]
    typed = to_messages(trace)[1]
    assert isinstance(typed, AIMessage)
    assert typed.tool_calls == [
        ToolCall(name="get_weather", args={}, id="c1", invalid_args=arguments)
    ]
    assert roundtrip(trace) == trace


def test_edited_args_win_over_the_kept_argument_text() -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1", '{"city":"Paris"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ]
    typed = to_messages(trace)
    ai = typed[1]
    assert isinstance(ai, AIMessage)
    edited_call = ai.tool_calls[0].model_copy(update={"args": {"city": "Rome"}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [edited_call]}), typed[2]]
    assert from_messages(edited)[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Rome"}'


def test_a_custom_tool_call_keeps_its_free_text_input() -> None:
    custom = {"id": "c1", "type": "custom", "custom": {"name": "run_sql", "input": "SELECT 1"}}
    trace = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [custom]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
    ]
    typed = to_messages(trace)[1]
    assert isinstance(typed, AIMessage)
    assert typed.tool_calls == [
        ToolCall(
            name="run_sql",
            args={"input": "SELECT 1"},
            id="c1",
            kind="custom",
        )
    ]
    assert roundtrip(trace) == trace


# --- content parts -------------------------------------------------------------------------


def test_content_parts_map_to_typed_parts() -> None:
    parts = [
        {"type": "text", "text": "Look:"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "mp3"}},
        {"type": "file", "file": {"file_id": "file-1", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x"}},
        {"type": "refusal", "refusal": "No."},
        {"type": "x_vendor_block", "payload": [1, 2]},
    ]
    trace = [{"role": "user", "content": parts}]
    # A refusal part is not one a user message takes: like a vendor block, it is kept whole.
    verbatim = {"openai_chat": {"verbatim": True}}
    assert to_messages(trace)[0].content == [
        TextPart(text="Look:"),
        ImagePart(url="https://example.com/a.png", detail="low"),
        ImagePart(data="iVBORw0KGgo=", mime_type="image/png"),
        AudioPart(data="UklGRg==", mime_type="audio/mpeg"),
        FilePart(file_id="file-1", filename="a.pdf"),
        FilePart(data="JVBERi0x", mime_type="application/pdf"),
        OpaquePart(
            kind="refusal", value={"type": "refusal", "refusal": "No."}, metadata=verbatim
        ),
        OpaquePart(
            kind="x_vendor_block",
            value={"type": "x_vendor_block", "payload": [1, 2]},
            metadata=verbatim,
        ),
    ]
    assert roundtrip(trace) == trace


def test_a_data_url_that_is_not_base64_stays_a_url() -> None:
    trace = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/svg+xml,<svg/>"}}],
        }
    ]
    assert to_messages(trace)[0].content == [ImagePart(url="data:image/svg+xml,<svg/>")]
    assert roundtrip(trace) == trace


def test_unknown_keys_of_a_part_are_kept() -> None:
    part = {"type": "text", "text": "hi", "prompt_cache_breakpoint": {"mode": "explicit"}}
    trace = [{"role": "user", "content": [part]}]
    assert to_messages(trace)[0].content == [
        TextPart(
            text="hi",
            metadata={"openai_chat": {"fields": {"prompt_cache_breakpoint": {"mode": "explicit"}}}},
        )
    ]
    assert roundtrip(trace) == trace


# --- strict --------------------------------------------------------------------------------


def test_an_unknown_role_names_the_role_found_and_the_roles_accepted() -> None:
    error = rejected([USER, {"role": "model", "content": "hi"}])
    assert (error.code, error.index, error.path) == ("unknown_role", 1, "messages[1].role")
    assert str(error) == (
        "openai_chat: messages[1].role: unknown role 'model'; accepted roles: system, "
        "developer, user, assistant, tool, function [unknown_role]"
    )


@pytest.mark.parametrize(
    ("trace", "index", "path"),
    [
        ([USER, "hello"], 1, "messages[1]"),
        ([{"content": "hi"}], 0, "messages[0]"),
        ([{"system": "system", "content": "You are a pirate."}, USER], 0, "messages[0]"),
        (
            [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]},
                {"role": "tool", "content": "ok"},
            ],
            2,
            "messages[2].tool_call_id",
        ),
        ([{"role": "user"}], 0, "messages[0].content"),
        ([{"role": "user", "content": 42}], 0, "messages[0].content"),
        ([{"role": "user", "content": [{"text": "no type"}]}], 0, "messages[0].content[0].type"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
            0,
            "messages[0].content[0].image_url.url",
        ),
        (
            [{"role": "user", "content": [{"type": "file", "file": {"filename": "a.pdf"}}]}],
            0,
            "messages[0].content[0].file",
        ),
        ([{"role": "function", "content": "18 C"}], 0, "messages[0].name"),
        ([{"role": "user", "content": "hi", "name": 7}], 0, "messages[0].name"),
        (
            [USER, {"role": "assistant", "tool_calls": [{"type": "function", "function": {}}]}],
            1,
            "messages[1].tool_calls[0].id",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": [{"id": "c", "type": "web", "web": {}}]}],
            1,
            "messages[1].tool_calls[0].type",
        ),
        ([USER, {"role": "assistant", "tool_calls": "c1"}], 1, "messages[1].tool_calls"),
        (
            [
                USER,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": {"city": "Paris"}},
                        }
                    ],
                },
            ],
            1,
            "messages[1].tool_calls[0].function.arguments",
        ),
    ],
    ids=[
        "not-a-dict",
        "no-role",
        "galtea-pirate",
        "tool-without-id",
        "no-content",
        "content-int",
        "part-without-type",
        "image-without-url",
        "file-without-data",
        "function-without-name",
        "name-int",
        "call-without-id",
        "call-type-unknown",
        "tool-calls-not-list",
        "arguments-object",
    ],
)
def test_malformed_messages_are_rejected_where_they_are(trace: Any, index: int, path: str) -> None:
    error = rejected(trace)
    assert (error.code, error.index, error.path) == ("malformed_event", index, path)


def test_arguments_given_as_an_object_say_what_was_expected() -> None:
    trace = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": {"city": "Paris"}},
                }
            ],
        },
    ]
    assert str(rejected(trace)) == (
        "openai_chat: messages[1].tool_calls[0].function.arguments: expected a JSON string, "
        "got dict {'city': 'Paris'} [malformed_event]"
    )


def test_a_trace_that_is_not_a_list_is_malformed() -> None:
    error = rejected({"messages": [USER]})
    assert (error.code, error.index) == ("malformed_event", None)


def test_tool_calls_and_function_call_together_conflict() -> None:
    trace = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "{}")],
            "function_call": {"name": "f", "arguments": "{}"},
        },
    ]
    error = rejected(trace)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields",
        1,
        "messages[1].function_call",
    )


@pytest.mark.parametrize(
    "element",
    [
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []},
        {"delta": {"content": "Hel"}, "index": 0},
        {"role": None, "content": "lo"},
        {"role": "assistant", "tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]},
    ],
    ids=["chunk", "choice", "delta", "tool-call-delta"],
)
def test_streaming_chunks_are_rejected(element: dict[str, Any]) -> None:
    error = rejected([USER, element])
    assert (error.code, error.index) == ("streaming_chunk", 1)


@pytest.mark.parametrize(
    ("trace", "code", "index"),
    [
        ([{"role": "tool", "tool_call_id": "c1", "content": "x"}, USER], "orphan_tool_result", 0),
        (
            [USER, {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]}],
            "unanswered_tool_call",
            1,
        ),
        (
            [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]},
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
                {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]},
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
            ],
            "duplicate_tool_call_id",
            3,
        ),
        ([], "empty_conversation", None),
    ],
    ids=["orphan", "unanswered", "duplicate-id", "empty"],
)
def test_conversation_rules_point_at_the_source_index(
    trace: list[Any], code: str, index: int | None
) -> None:
    error = rejected(trace)
    assert (error.code, error.index, error.source) == (code, index, "openai_chat")


def test_allow_pending_accepts_a_trace_cut_mid_tool() -> None:
    trace = [USER, {"role": "assistant", "content": None, "tool_calls": [call("c1", "{}")]}]
    assert to_messages(trace, allow_pending=True) == [
        HumanMessage(content="Weather in Paris?"),
        AIMessage(content="", tool_calls=[ToolCall(name="get_weather", args={}, id="c1")],
                  metadata={"openai_chat": {"content": "null"}}),
    ]


def test_a_non_json_value_in_an_unknown_key_is_unserializable() -> None:
    error = rejected([{"role": "user", "content": "hi", "x_when": {1, 2}}])
    assert (error.code, error.index, error.path) == (
        "unserializable_value",
        0,
        "messages[0].x_when",
    )


# --- typed conversations from elsewhere ----------------------------------------------------


def test_typed_tool_results_and_names_are_written_as_the_api_takes_them() -> None:
    messages = [
        HumanMessage(content="Weather?", name="ana"),
        AIMessage(
            content="",
            tool_calls=[ToolCall(name="get_weather", args={"city": "Oslo"}, id="c1")],
            name="forecaster",
        ),
        ToolMessage(content="3 C", tool_call_id="c1", name="get_weather"),
    ]
    assert from_messages(messages) == [
        {"role": "user", "content": "Weather?", "name": "ana"},
        {
            "role": "assistant",
            "content": "",
            "name": "forecaster",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "content": "3 C", "name": "get_weather", "tool_call_id": "c1"},
    ]
    assert to_messages(from_messages(messages)) == messages


@pytest.mark.parametrize(
    ("message", "path", "option"),
    [
        (AIMessage(content=[ReasoningPart(text="hmm")]), "messages[0].content[0]", "reasoning"),
        (HumanMessage(content=[ImagePart(data="iVBORw0KGgo=")]), "messages[0].content[0]", None),
        (
            HumanMessage(content=[AudioPart(url="https://example.com/a.wav")]),
            "messages[0].content[0]",
            None,
        ),
        (
            HumanMessage(content=[FilePart(url="https://example.com/a.pdf")]),
            "messages[0].content[0]",
            None,
        ),
        (
            HumanMessage(content=[OpaquePart(kind="citation", value="free text")]),
            "messages[0].content[0]",
            "opaque_parts",
        ),
        (
            AIMessage(tool_calls=[ToolCall(name="a"), ToolCall(name="b")]),
            "messages[0].tool_calls[0]",
            "unanswered_calls",
        ),
    ],
    ids=[
        "reasoning",
        "image-data-without-mime",
        "audio-url",
        "file-url",
        "opaque-not-a-part",
        "unanswered-calls",
    ],
)
def test_what_the_format_cannot_hold_is_not_representable(
    message: Any, path: str, option: str | None
) -> None:
    with pytest.raises(TraceError) as caught:
        from_messages([message])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        0,
        path,
    )
    if option is not None:
        assert f"pass drop=['{option}']" in str(caught.value)


def test_two_answered_id_less_calls_are_not_representable() -> None:
    # Only the legacy function_call pairs by position, and it holds one call.
    messages = [
        HumanMessage(content="Go."),
        AIMessage(tool_calls=[ToolCall(name="a"), ToolCall(name="b")]),
        ToolMessage(content="A", name="a"),
        ToolMessage(content="B", name="b"),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        1,
        "messages[1].tool_calls",
    )
    assert "drop=" not in str(caught.value)


def test_an_error_flag_is_not_representable_unless_dropped_by_name() -> None:
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", id="c1")]),
        ToolMessage(content="timeout", tool_call_id="c1", is_error=True),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[2].is_error")
    assert from_messages(messages, drop=["is_error"])[2] == {
        "role": "tool",
        "content": "timeout",
        "tool_call_id": "c1",
    }


def test_dropping_reasoning_leaves_the_other_parts() -> None:
    message = AIMessage(content=[ReasoningPart(text="hmm"), TextPart(text="42")])
    assert from_messages([message], drop=("reasoning",)) == [
        {"role": "assistant", "content": [{"type": "text", "text": "42"}]}
    ]


def test_drop_names_only_droppable_things() -> None:
    with pytest.raises(ValueError, match=r"drop=\['ids'\] names nothing droppable"):
        from_messages([HumanMessage(content="hi")], drop=["ids"])


@pytest.mark.parametrize(
    "namespace", ["developer", {"fields": ["refusal"]}], ids=["not-an-object", "fields-list"]
)
def test_a_namespace_that_to_messages_could_not_have_written_is_malformed(namespace: Any) -> None:
    message = HumanMessage(content="hi", metadata={"openai_chat": namespace})
    with pytest.raises(TraceError) as caught:
        from_messages([HumanMessage(content="ok"), message])
    assert (caught.value.code, caught.value.index) == ("malformed_event", 1)


def test_metadata_of_other_adapters_is_not_read() -> None:
    message = HumanMessage(content="hi", metadata={"swarm": {"fields": {"x": 1}}})
    assert from_messages([message]) == [{"role": "user", "content": "hi"}]


# --- detection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trace", "expected"),
    [
        ([USER, {"role": "assistant", "content": "hi"}], True),
        ([USER, {"role": "assistant", "tool_calls": [call("c1", "{}")]}], True),
        ([USER, {"role": "assistant", "content": "hi", "sender": "Agent"}], False),
        ([USER, {"role": "tool", "tool_call_id": "c", "content": "x", "tool_name": "f"}], False),
        ([{"role": "user", "blocks": [], "additional_kwargs": {}}], False),
        ([{"type": "human", "content": "hi"}], False),
        ([], False),
        ({"messages": [USER]}, False),
    ],
    ids=[
        "chat",
        "assistant-without-content",
        "swarm-sender",
        "swarm-tool-name",
        "llama-index-dump",
        "tracebridge-json",
        "empty",
        "dict",
    ],
)
def test_detect(trace: Any, expected: bool) -> None:
    assert openai_chat.detect(trace) is expected


def test_message_ids_are_provenance_and_are_not_written() -> None:
    messages = [HumanMessage(content="hi", id="m1"), AIMessage(content="hello", id="run-7")]
    assert from_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(url="https://example.com/a.png", mime_type="image/png"),
        FilePart(file_id="file-1", mime_type="application/pdf"),
    ],
    ids=["image-url", "file-id"],
)
def test_a_mime_type_the_format_cannot_hold_is_refused_unless_dropped(part: Any) -> None:
    messages = [HumanMessage(content=[part])]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[0].content[0]")
    assert "pass drop=['mime_types']" in str(caught.value)
    (written,) = from_messages(messages, drop=["mime_types"])
    assert written["content"][0] == (
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
        if isinstance(part, ImagePart)
        else {"type": "file", "file": {"file_id": "file-1"}}
    )
