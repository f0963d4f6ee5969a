"""The LangChain adapter: exact behaviour on objects built by langchain_core itself."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.registry import detect_format

LC = {"langchain": {}}


def roundtrip(trace: list[BaseMessage], **options: Any) -> list[dict[str, Any]]:
    return messages_to_dict(langchain.from_messages(langchain.to_messages(trace, **options)))


def rejected_at(trace: Any, **options: Any) -> tuple[str, int | None, str | None]:
    """The code, index and path ``to_messages`` rejects ``trace`` with."""
    error = rejected(trace, **options)
    return error.code, error.index, error.path


def rejected(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, **options)
    assert caught.value.source == "langchain"
    return caught.value


# --- the peer failure ----------------------------------------------------------------------


def test_tool_calls_given_as_a_field_are_all_kept_with_ids_and_the_system_prompt_too() -> None:
    """Ragas reads calls only from additional_kwargs: a current LangGraph trace loses them all
    (then fails validation) and drops the system message. We keep every call, with its id."""
    trace = [
        SystemMessage("You are a weather bot."),
        HumanMessage("Paris and Rome?"),
        AIMessage(
            "",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
                {"name": "get_weather", "args": {"city": "Rome"}, "id": "call_2"},
            ],
        ),
        ToolMessage("18C", tool_call_id="call_1"),
        ToolMessage("24C", tool_call_id="call_2"),
        AIMessage("Paris 18C, Rome 24C."),
    ]
    assert trace[2].additional_kwargs == {}
    assert langchain.to_messages(trace) == [
        tb.SystemMessage(content="You are a weather bot."),
        tb.HumanMessage(content="Paris and Rome?"),
        tb.AIMessage(
            tool_calls=[
                tb.ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1"),
                tb.ToolCall(name="get_weather", args={"city": "Rome"}, id="call_2"),
            ]
        ),
        tb.ToolMessage(content="18C", tool_call_id="call_1"),
        tb.ToolMessage(content="24C", tool_call_id="call_2"),
        tb.AIMessage(content="Paris 18C, Rome 24C."),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


# --- forms and detection -------------------------------------------------------------------

SIMPLE = [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]
SIMPLE_TYPED = [tb.HumanMessage(content="hi", id="h1"), tb.AIMessage(content="hello", id="a1")]


@pytest.mark.parametrize(
    "trace",
    [
        SIMPLE,
        messages_to_dict(SIMPLE),
        {"messages": SIMPLE},
        {"messages": messages_to_dict(SIMPLE)},
        [SIMPLE[0], messages_to_dict(SIMPLE)[1]],
    ],
    ids=["objects", "dicts", "state", "state-of-dicts", "mixed"],
)
def test_every_accepted_form_reads_the_same(trace: Any) -> None:
    assert langchain.detect(trace) is True
    assert detect_format(trace) == "langchain"
    assert langchain.to_messages(trace) == SIMPLE_TYPED


def test_from_messages_forms() -> None:
    objects = langchain.from_messages(SIMPLE_TYPED)
    assert [type(m) for m in objects] == [HumanMessage, AIMessage]
    assert messages_to_dict(objects) == messages_to_dict(SIMPLE)
    assert langchain.from_messages(SIMPLE_TYPED, form="dicts") == messages_to_dict(SIMPLE)
    state = langchain.from_messages(SIMPLE_TYPED, form="state")
    assert list(state) == ["messages"]
    assert messages_to_dict(state["messages"]) == messages_to_dict(SIMPLE)


@pytest.mark.parametrize(
    "trace",
    [
        [],
        {"messages": []},
        [{"role": "user", "content": "hi"}],
        [{"type": "human", "content": "hi"}],
        [{"type": "human", "data": {"content": "hi"}, "extra": 1}],
        "hi",
        [tb.HumanMessage(content="hi")],
    ],
)
def test_detect_refuses_other_shapes(trace: Any) -> None:
    assert langchain.detect(trace) is False


def test_detect_does_not_import_langchain() -> None:
    code = (
        "import sys\n"
        "from tracebridge.adapters import langchain\n"
        "assert langchain.detect([{'type': 'human', 'data': {'content': 'hi'}}])\n"
        "assert 'langchain_core' not in sys.modules, 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_langchain_core_the_error_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None  # as if it were not installed\n"
        "from tracebridge.adapters import langchain\n"
        "from tracebridge.errors import MissingExtraError\n"
        "try:\n"
        "    langchain.to_messages([{'type': 'human', 'data': {'content': 'hi'}}])\n"
        "except MissingExtraError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.strip() == (
        "the langchain adapter needs langchain-core, which is not installed: "
        'pip install "tracebridge[langchain]"'
    )


def test_a_state_with_other_keys_is_refused_naming_them() -> None:
    error = rejected({"messages": SIMPLE, "remaining_steps": 3})
    assert error.code == "malformed_event"
    assert "['remaining_steps']" in str(error)
    assert "state['messages']" in str(error)


@pytest.mark.parametrize(
    ("item", "code"),
    [
        ("hi", "malformed_event"),
        ({"type": "human", "data": "hi"}, "malformed_event"),
        ({"type": "human", "data": {"content": 3}}, "malformed_event"),
        ({"type": "robot", "data": {"content": "beep"}}, "unknown_role"),
        (RemoveMessage(id="h1"), "unknown_role"),
        (ChatMessage("beep", role="robot"), "unknown_role"),
    ],
)
def test_items_that_are_not_messages_are_rejected_at_their_index(item: Any, code: str) -> None:
    error = rejected([HumanMessage("hi"), item])
    assert (error.code, error.index) == (code, 1)


def test_unknown_message_class_is_unknown_role() -> None:
    class CriticMessage(HumanMessage):
        type: str = "critic"  # type: ignore[assignment]

    assert rejected_at([CriticMessage("too long")]) == ("unknown_role", 0, "messages[0].type")


# --- message classes -----------------------------------------------------------------------


def test_chat_message_roles_map_and_keep_the_role() -> None:
    trace = [
        ChatMessage("be brief", role="developer"),
        ChatMessage("hi", role="user"),
        ChatMessage("hello", role="assistant"),
    ]
    assert langchain.to_messages(trace) == [
        tb.SystemMessage(
            content="be brief",
            role="developer",
            metadata={"langchain": {"role": "developer", "class": "chat"}},
        ),
        tb.HumanMessage(content="hi", metadata={"langchain": {"role": "user", "class": "chat"}}),
        tb.AIMessage(
            content="hello", metadata={"langchain": {"role": "assistant", "class": "chat"}}
        ),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_developer_system_message_is_the_developer_role() -> None:
    """ChatOpenAI marks a developer message with additional_kwargs["__openai_role__"]; the
    typed home is SystemMessage.role, so the marker needs no metadata of its own."""
    trace = [SystemMessage("be brief", additional_kwargs={"__openai_role__": "developer"})]
    [typed] = langchain.to_messages(trace)
    assert typed == tb.SystemMessage(content="be brief", role="developer")
    assert roundtrip(trace) == messages_to_dict(trace)


def test_legacy_function_call_and_function_message_pair_by_position() -> None:
    trace = [
        HumanMessage("weather?"),
        AIMessage(
            "",
            additional_kwargs={
                "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
            },
        ),
        FunctionMessage("3C", name="get_weather"),
    ]
    typed = langchain.to_messages(trace)
    assert typed[1:] == [
        tb.AIMessage(
            tool_calls=[
                tb.ToolCall(
                    name="get_weather",
                    args={"city": "Oslo"},
                    metadata={"langchain": {"from": "function_call"}},
                )
            ],
            metadata={"langchain": {"additional_kwargs": trace[1].additional_kwargs}},
        ),
        tb.ToolMessage(content="3C", name="get_weather"),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_aggregated_chunks_are_complete_messages_and_keep_their_class() -> None:
    first = AIMessageChunk(
        "Check",
        id="run-1",
        tool_call_chunks=[{"name": "f", "args": '{"a"', "id": "c1", "index": 0}],
    )
    rest = AIMessageChunk(
        "ing.",
        id="run-1",
        tool_call_chunks=[{"name": None, "args": ": 1}", "id": None, "index": 0}],
    )
    summed = first + rest
    trace = [HumanMessageChunk("go"), summed, ToolMessage("ok", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    assert typed[0] == tb.HumanMessage(
        content="go", metadata={"langchain": {"class": "HumanMessageChunk"}}
    )
    assert typed[1].tool_calls == [tb.ToolCall(name="f", args={"a": 1}, id="c1")]
    assert typed[1].content == "Checking."
    assert typed[1].metadata["langchain"]["class"] == "AIMessageChunk"
    assert roundtrip(trace) == messages_to_dict(trace)
    for piece, path in [
        (first, "messages[1].tool_call_chunks[0].args"),
        (rest, "messages[1].tool_call_chunks[0]"),
    ]:
        assert rejected_at([HumanMessage("go"), piece]) == ("streaming_chunk", 1, path)


# --- tool calls ----------------------------------------------------------------------------

VALID_CALL = {"name": "f", "args": {"x": 1}, "id": "c1"}
INVALID_CALL = {"name": "g", "args": '{"x": ', "id": "c2", "error": None}


def test_invalid_calls_come_after_valid_ones_without_raw_order() -> None:
    trace = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[VALID_CALL], invalid_tool_calls=[INVALID_CALL]),
    ]
    [_, ai] = langchain.to_messages(trace, allow_pending=True)
    assert ai.tool_calls == [
        tb.ToolCall(name="f", args={"x": 1}, id="c1"),
        tb.ToolCall(name="g", invalid_args='{"x": ', id="c2"),
    ]
    assert roundtrip(trace, allow_pending=True) == messages_to_dict(trace)


def test_raw_provider_calls_give_the_order_of_invalid_and_valid_calls() -> None:
    raw = [
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": '{"x": '}},
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
    ]
    trace = [HumanMessage("go"), AIMessage("", additional_kwargs={"tool_calls": raw})]
    # LangChain itself parsed the raw form into its two lists:
    assert [c["id"] for c in trace[1].tool_calls] == ["c1"]
    assert [c["id"] for c in trace[1].invalid_tool_calls] == ["c2"]
    [_, ai] = langchain.to_messages(trace, allow_pending=True)
    assert [(c.id, c.invalid_args) for c in ai.tool_calls] == [("c2", '{"x": '), ("c1", None)]
    assert ai.metadata == {"langchain": {"additional_kwargs": {"tool_calls": raw}}}
    assert roundtrip(trace, allow_pending=True) == messages_to_dict(trace)


def test_invalid_call_without_name_or_args_keeps_them_as_none() -> None:
    broken = {"name": None, "args": None, "id": "c9", "error": "no function"}
    trace = [HumanMessage("go"), AIMessage("", invalid_tool_calls=[broken])]
    [_, ai] = langchain.to_messages(trace, allow_pending=True)
    assert ai.tool_calls == [
        tb.ToolCall(
            name="",
            invalid_args="",
            id="c9",
            metadata={
                "langchain": {
                    "invalid_tool_call": {
                        "type": "invalid_tool_call",
                        "error": "no function",
                        "name": None,
                        "args": None,
                    }
                }
            },
        )
    ]
    assert roundtrip(trace, allow_pending=True) == messages_to_dict(trace)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (
            [
                {
                    "id": "other",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"x": 1}'},
                }
            ],
            "messages[1].additional_kwargs.tool_calls[0].id",
        ),
        (
            [{"type": "function", "function": {"name": "h", "arguments": '{"x": 1}'}}],
            "messages[1].additional_kwargs.tool_calls[0].id",
        ),
        ([], "messages[1].additional_kwargs.tool_calls"),
    ],
    ids=["id", "no-id", "count"],
)
def test_raw_provider_calls_that_disagree_are_conflicting_fields(raw: list[Any], path: str) -> None:
    # a raw call naming a call by id with another name or arguments is a stale copy
    # (tests/test_langchain_stale_fixes_s47.py)
    trace = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[VALID_CALL], additional_kwargs={"tool_calls": raw}),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert rejected_at(trace) == ("conflicting_fields", 1, path)


TOOL_USE = {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}}


def test_tool_use_blocks_move_onto_their_call_and_come_back_in_place() -> None:
    content = [{"type": "text", "text": "Let me see."}, TOOL_USE, {"type": "text", "text": "Done."}]
    trace = [
        HumanMessage("go"),
        AIMessage(content, tool_calls=[VALID_CALL]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    [_, ai, _] = langchain.to_messages(trace)
    assert ai.content == [tb.TextPart(text="Let me see."), tb.TextPart(text="Done.")]
    assert ai.tool_calls == [
        tb.ToolCall(
            name="f",
            args={"x": 1},
            id="c1",
            metadata={"langchain": {"content_block": {"at": 1, "block": {"type": "tool_use"}}}},
        )
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_streamed_tool_use_block_compares_its_partial_json() -> None:
    block = {
        "type": "tool_use",
        "id": "c1",
        "name": "f",
        "input": {},
        "partial_json": '{"x": 1}',
        "index": 0,
    }
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[VALID_CALL]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


@pytest.mark.parametrize(
    ("block", "path"),
    [
        ({**TOOL_USE, "id": "c7"}, "messages[1].content[0].id"),
        ({"type": "tool_call", "id": "c1", "name": "h", "args": {"x": 1}},
         "messages[1].content[0].name"),
        ({"type": "tool_call", "id": "c1", "name": "f", "args": {}}, "messages[1].content[0].args"),
    ],
    ids=["id", "v1-tool-call-name", "v1-tool-call-args"],
)
def test_call_blocks_that_disagree_with_tool_calls_are_conflicting(
    block: dict[str, Any], path: str
) -> None:
    # a tool_use block naming a call by id with another name or input is a stale copy
    # (tests/test_langchain_stale_fixes_s47.py)
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[VALID_CALL]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert rejected_at(trace) == ("conflicting_fields", 1, path)


def test_a_second_block_for_the_same_call_is_conflicting() -> None:
    trace = [
        HumanMessage("go"),
        AIMessage([TOOL_USE, TOOL_USE], tool_calls=[VALID_CALL]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert rejected_at(trace) == (
        "conflicting_fields",
        1,
        "messages[1].content[1].id",
    )


# --- tool messages -------------------------------------------------------------------------


def test_tool_message_fields() -> None:
    trace = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[VALID_CALL]),
        ToolMessage(
            "boom",
            tool_call_id="c1",
            name="f",
            status="error",
            artifact={"trace": [1, 2]},
            id="t1",
            response_metadata={"ms": 3},
            additional_kwargs={"k": True},
            run="r1",
        ),
    ]
    assert langchain.to_messages(trace)[2] == tb.ToolMessage(
        content="boom",
        tool_call_id="c1",
        name="f",
        is_error=True,
        id="t1",
        metadata={
            "langchain": {
                "additional_kwargs": {"k": True},
                "response_metadata": {"ms": 3},
                "artifact": {"trace": [1, 2]},
                "extra": {"run": "r1"},
            }
        },
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_an_artifact_that_is_not_json_is_refused_unless_dropped_by_name() -> None:
    trace = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[VALID_CALL]),
        ToolMessage("ok", tool_call_id="c1", artifact={1, 2}),
    ]
    assert rejected_at(trace) == (
        "unserializable_value",
        2,
        "messages[2].artifact",
    )
    typed = langchain.to_messages(trace, drop_artifacts=True)
    assert typed[2].metadata == {"langchain": {"artifact_dropped": "set"}}
    back = langchain.from_messages(typed)[2]
    assert back.artifact is None


def test_unserializable_metadata_points_at_its_field() -> None:
    assert rejected_at([HumanMessage("go", response_metadata={"at": object()})]) == (
        "unserializable_value",
        0,
        "messages[0].response_metadata.at",
    )


def test_usage_and_response_metadata_and_extras_are_kept() -> None:
    usage = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    trace = [
        HumanMessage("go", name="ann", example=True),
        AIMessage("hi", usage_metadata=usage, response_metadata={"model_name": "m"}, name="bot"),
    ]
    assert langchain.to_messages(trace) == [
        tb.HumanMessage(
            content="go", name="ann", metadata={"langchain": {"extra": {"example": True}}}
        ),
        tb.AIMessage(
            content="hi",
            name="bot",
            metadata={
                "langchain": {"response_metadata": {"model_name": "m"}, "usage_metadata": usage}
            },
        ),
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


# --- content blocks ------------------------------------------------------------------------

PNG = "iVBORw0KGgo="
BLOCKS = [
    ("plain text", {"type": "text", "text": "hi"}, tb.TextPart(text="hi")),
    ("bare string", "hi", tb.TextPart(text="hi", metadata={"langchain": {"shape": "string"}})),
    (
        "openai image_url",
        {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}},
        tb.ImagePart(url="https://x/a.png", detail="low"),
    ),
    (
        "v1 image url",
        {"type": "image", "url": "https://x/a.png"},
        tb.ImagePart(url="https://x/a.png"),
    ),
    (
        "v1 image base64",
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
        tb.ImagePart(data=PNG, mime_type="image/png"),
    ),
    (
        "anthropic image",
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        tb.ImagePart(
            data=PNG,
            mime_type="image/png",
            metadata={
                "langchain": {
                    "shape": "anthropic_image_base64",
                    "block": {"type": "image", "source": {"type": "base64"}},
                }
            },
        ),
    ),
    (
        "v0 image",
        {"type": "image", "source_type": "base64", "data": PNG, "mime_type": "image/png"},
        tb.ImagePart(
            data=PNG,
            mime_type="image/png",
            metadata={
                "langchain": {
                    "shape": "image_source_base64",
                    "block": {"type": "image", "source_type": "base64"},
                }
            },
        ),
    ),
    ("reasoning", {"type": "reasoning", "reasoning": "think"}, tb.ReasoningPart(text="think")),
    (
        "thinking",
        {"type": "thinking", "thinking": "think", "signature": "sig"},
        tb.ReasoningPart(
            text="think",
            metadata={
                "langchain": {
                    "shape": "thinking",
                    "block": {"type": "thinking", "signature": "sig"},
                }
            },
        ),
    ),
    (
        "v1 file",
        {"type": "file", "file_id": "f1"},
        tb.FilePart(file_id="f1"),
    ),
    (
        "Chat Completions file",
        {
            "type": "file",
            "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "r"},
        },
        tb.FilePart(
            data="JVBE",
            mime_type="application/pdf",
            filename="r",
            metadata={"langchain": {"shape": "openai_file", "block": {"type": "file", "file": {}}}},
        ),
    ),
    (
        "Chat Completions file, data not a base64 data URL",
        {"type": "file", "file": {"file_data": "JVBE"}},
        tb.FilePart(
            data="JVBE",
            metadata={"langchain": {"shape": "openai_file", "block": {"type": "file", "file": {}}}},
        ),
    ),
    (
        "Chat Completions file by id",
        {"type": "file", "file": {"file_id": "f1"}},
        tb.FilePart(
            file_id="f1",
            metadata={"langchain": {"shape": "openai_file", "block": {"type": "file", "file": {}}}},
        ),
    ),
    (
        "v0 file by id",
        {"type": "file", "source_type": "id", "id": "f1"},
        tb.FilePart(
            file_id="f1",
            metadata={
                "langchain": {
                    "shape": "file_source_id",
                    "block": {"type": "file", "source_type": "id"},
                }
            },
        ),
    ),
    (
        "v1 audio",
        {"type": "audio", "base64": "UklG", "mime_type": "audio/wav"},
        tb.AudioPart(data="UklG", mime_type="audio/wav"),
    ),
    (
        "refusal",
        {"type": "refusal", "refusal": "no"},
        tb.RefusalPart(text="no"),
    ),
    (
        "image by file id",
        {"type": "image", "file_id": "f2"},
        tb.OpaquePart(kind="image", value={"type": "image", "file_id": "f2"}),
    ),
]


@pytest.mark.parametrize(("block", "part"), [b[1:] for b in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_content_block_maps_to_part_and_back(block: Any, part: Any) -> None:
    trace = [HumanMessage([block])]
    assert langchain.to_messages(trace) == [tb.HumanMessage(content=[part])]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_block_without_type_is_malformed() -> None:
    assert rejected_at([HumanMessage("go"), AIMessage([{"text": "hi"}])]) == (
        "malformed_event",
        1,
        "messages[1].content[0].type",
    )


def test_content_that_was_a_string_stays_a_string() -> None:
    [typed] = langchain.to_messages([HumanMessage("hi")])
    assert typed.content == "hi"
    [empty] = langchain.to_messages([HumanMessage([])])
    assert empty.content == []


# --- from_messages on typed conversations from elsewhere -----------------------------------


def test_typed_messages_without_langchain_metadata_become_plain_langchain_messages() -> None:
    typed = [
        tb.SystemMessage(content="sys"),
        tb.HumanMessage(
            content=[tb.TextPart(text="see"), tb.ImagePart(url="https://x/a.png")],
            metadata={"openai_chat": {"role": "user"}},
        ),
        tb.AIMessage(
            tool_calls=[
                tb.ToolCall(name="f", args={"x": 1}, id="c1"),
                tb.ToolCall(name="g", invalid_args="{", id="c2"),
            ]
        ),
        tb.ToolMessage(content="ok", tool_call_id="c1", is_error=True),
        tb.ToolMessage(content="bad", tool_call_id="c2", name="g"),
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(
        [
            SystemMessage("sys"),
            HumanMessage(
                [{"type": "text", "text": "see"}, {"type": "image", "url": "https://x/a.png"}]
            ),
            AIMessage(
                "",
                tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}],
                invalid_tool_calls=[{"name": "g", "args": "{", "id": "c2", "error": None}],
            ),
            ToolMessage("ok", tool_call_id="c1", status="error"),
            ToolMessage("bad", tool_call_id="c2", name="g"),
        ]
    )


_ID_LESS_CALL = tb.AIMessage(tool_calls=[tb.ToolCall(name="f")])
"""A call without id, which the id-less result after it answers by position."""


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (tb.ToolMessage(content="x"), "messages[1].tool_call_id"),
        (tb.ToolMessage(content="x", name="f", is_error=True), "messages[1].is_error"),
        (
            tb.AIMessage(
                tool_calls=[
                    tb.ToolCall(name="g", invalid_args="{", id="c2"),
                    tb.ToolCall(name="f", id="c1"),
                ]
            ),
            "messages[0].tool_calls",
        ),
        (
            tb.AIMessage(content=[tb.OpaquePart(kind="refusal", value="no")]),
            "messages[0].content[0]",
        ),
        (
            tb.HumanMessage(
                content=[tb.OpaquePart(kind="text", value={"type": "text", "text": "x"})]
            ),
            "messages[0].content[0]",
        ),
        (
            tb.AIMessage(
                content=[
                    tb.TextPart(text="a"),
                    tb.OpaquePart(
                        kind="tool_use",
                        value={"type": "tool_use", "id": "c1", "name": "f", "input": {}},
                    ),
                ]
            ),
            "messages[0].content[1]",
        ),
        (
            tb.HumanMessage(
                content=[
                    tb.OpaquePart(
                        kind="tool_result", value={"type": "tool_result", "tool_use_id": "c1"}
                    )
                ]
            ),
            "messages[0].content[0]",
        ),
    ],
    ids=[
        "tool-result-without-id-or-name",
        "function-result-error",
        "invalid-call-first",
        "opaque-not-a-block",
        "opaque-block-langchain-maps",
        "opaque-call-block-in-a-reply",
        "opaque-tool-result-in-a-human-message",
    ],
)
def test_what_langchain_cannot_hold_is_not_representable(message: Any, path: str) -> None:
    # a tool result follows the call it answers (the writer checks the conversation rules)
    messages = [_ID_LESS_CALL, message] if isinstance(message, tb.ToolMessage) else [message]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        len(messages) - 1,
        path,
    )


def test_golden_json_of_typed_messages_is_plain_json() -> None:
    typed = langchain.to_messages(
        [HumanMessage([{"type": "thinking", "thinking": "t", "signature": "s"}])]
    )
    dumped = [m.model_dump(mode="json") for m in typed]
    assert json.loads(json.dumps(dumped)) == dumped


def test_a_block_that_is_not_json_points_at_its_own_path() -> None:
    assert rejected_at([HumanMessage([{"type": "image", "base64": b"\x89PNG"}])]) == (
        "unserializable_value",
        0,
        "messages[0].content[0].base64",
    )


def test_a_function_call_without_string_arguments_is_malformed() -> None:
    trace = [
        HumanMessage("go"),
        AIMessage("", additional_kwargs={"function_call": {"name": "f", "arguments": {"x": 1}}}),
    ]
    assert rejected_at(trace) == (
        "malformed_event",
        1,
        "messages[1].additional_kwargs.function_call",
    )


def test_a_call_block_cannot_go_back_into_string_content() -> None:
    [_, ai, _] = langchain.to_messages(
        [
            HumanMessage("go"),
            AIMessage([TOOL_USE], tool_calls=[VALID_CALL]),
            ToolMessage("ok", tool_call_id="c1"),
        ]
    )
    edited = ai.model_copy(update={"content": "now a string"})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([edited])
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[0].content")


def test_a_tool_use_block_naming_an_invalid_call_is_conflicting() -> None:
    block = {"type": "tool_use", "id": "c2", "name": "g", "input": {}}
    trace = [HumanMessage("go"), AIMessage([block], invalid_tool_calls=[INVALID_CALL])]
    assert rejected_at(trace, allow_pending=True) == (
        "conflicting_fields",
        1,
        "messages[1].content[0].name",
    )


def test_an_id_less_tool_result_with_a_name_becomes_a_function_message() -> None:
    """An OpenAI legacy function-call history, read by another adapter, fits LangChain."""
    typed = [
        tb.HumanMessage(content="weather?"),
        tb.AIMessage(tool_calls=[tb.ToolCall(name="get_weather", args={"city": "Oslo"})]),
        tb.ToolMessage(content="3C", name="get_weather"),
    ]
    back = langchain.from_messages(typed)
    assert messages_to_dict(back[1:]) == messages_to_dict(
        [
            AIMessage(
                "", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": None}]
            ),
            FunctionMessage("3C", name="get_weather"),
        ]
    )
    assert langchain.to_messages(back)[2] == typed[2]
