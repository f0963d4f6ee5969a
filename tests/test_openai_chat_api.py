"""openai_chat writes what the Chat Completions API accepts, or refuses by name.

The oracle (``law_kits.openai_chat.api_problems``, shared with the swarm tests) is the openai
SDK's own request types (``ChatCompletionMessageParam``: which part types each role takes) plus
the API's ordering rule (an assistant message's ``tool_calls`` are each answered by a ``tool``
message right after it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    AudioPart,
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

from law_kits.openai_chat import api_problems
from strategies import Shape, conversations, tool_conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "openai_chat"


def _call(call_id: str, arguments: str, name: str = "get_weather") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_the_oracle_accepts_what_the_real_client_sent() -> None:
    for path in sorted(GOLDEN.glob("*.json")):
        trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
        assert api_problems(trace) == [], path.name


@pytest.mark.parametrize(
    ("history", "problem"),
    [
        (
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "tool_calls": [_call("c1", "{}")]},
            ],
            "calls ['c1'] are never answered",
        ),
        (
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "tool_calls": [_call("c1", "{}")]},
                {"role": "user", "content": "Hello?"},
                {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
            ],
            "[2] comes before calls ['c1'] are answered",
        ),
        ([{"role": "tool", "tool_call_id": "c1", "content": "3 C"}], "[0] answers no open call"),
        ([{"role": "user", "content": None}], "validation errors for"),
        (
            [{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}],
            "validation error",
        ),
        ([{"role": "user", "content": [{"type": "json", "json": {}}]}], "validation error"),
        ([{"role": "assistant", "content": None}], "[0] an assistant message with nothing in it"),
    ],
    ids=[
        "unanswered",
        "user-inside-a-block",
        "orphan",
        "user-content-null",
        "assistant-image",
        "foreign-part",
        "empty-assistant",
    ],
)
def test_the_oracle_rejects_what_the_api_rejects(
    history: list[dict[str, Any]], problem: str
) -> None:
    problems = api_problems(history)
    assert problems
    assert problem in problems[0]


def _written_or_refused(messages: list[Any], drop: tuple[str, ...] = ()) -> Any:
    """The written history, or the code it was refused with."""
    try:
        return from_messages(messages, drop=drop)
    except TraceError as error:
        return error.code


@given(messages=conversations())
def test_whatever_is_written_the_api_accepts(messages: list[Any]) -> None:
    written = _written_or_refused(messages)
    if written == "not_representable":
        return
    assert api_problems(written) == []


@given(messages=conversations())
def test_whatever_is_written_with_every_loss_accepted_the_api_accepts(
    messages: list[Any],
) -> None:
    written = _written_or_refused(messages, drop=openai_chat.DROPPABLE)
    if written == "not_representable":
        return
    assert len(written) == len(messages)
    assert api_problems(written) == []


@st.composite
def unanswered(draw: st.DrawFn) -> list[Any]:
    """A conversation with results taken away: those of calls whose arguments did not parse
    (frameworks never run them), or every result after the last call (a trace cut mid-tool).
    Text content only, and ids on every call: nothing else is refused first."""
    messages: list[Any] = draw(tool_conversations(Shape(parts=False)))
    if draw(st.booleans()):
        last = max(i for i, m in enumerate(messages) if isinstance(m, ToolMessage))
        while isinstance(messages[last], ToolMessage):
            last -= 1
        return messages[: last + 1]
    invalid = {
        call.id
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call.invalid_args is not None
    }
    assume(invalid)
    return [
        m
        for m in messages
        if not (isinstance(m, ToolMessage) and m.tool_call_id in invalid and m.tool_call_id)
    ]


@given(messages=unanswered())
def test_an_unanswered_call_is_refused_by_name_or_left_out(messages: list[Any]) -> None:
    with pytest.raises(TraceError) as caught:
        from_messages(messages, drop=[o for o in openai_chat.DROPPABLE if o != "unanswered_calls"])
    assert caught.value.code == "not_representable"
    assert "pass drop=['unanswered_calls']" in str(caught.value)
    written = _written_or_refused(messages, drop=openai_chat.DROPPABLE)
    if written == "not_representable":
        return
    assert api_problems(written) == []


# --- part types by role --------------------------------------------------------------------

IMAGE = ImagePart(url="https://example.com/a.png")
AUDIO = AudioPart(data="UklGRg==", mime_type="audio/wav")
FILE = FilePart(file_id="file-1")


@pytest.mark.parametrize(
    ("message", "option"),
    [
        (AIMessage(content=[TextPart(text="Here:"), IMAGE]), None),
        (AIMessage(content=[TextPart(text="Here:"), AUDIO]), None),
        (AIMessage(content=[TextPart(text="Here:"), FILE]), None),
        (AIMessage(content=[TextPart(text="Here:"), ReasoningPart(text="hmm")]), "reasoning"),
        (SystemMessage(content=[TextPart(text="Look:"), IMAGE]), None),
        (SystemMessage(content=[TextPart(text="Look:"), FILE], role="developer"), None),
        (HumanMessage(content=[TextPart(text="No:"), RefusalPart(text="no")]), "refusals"),
        (
            HumanMessage(content=[TextPart(text="x"), OpaquePart(kind="video", value={"u": 1})]),
            "opaque_parts",
        ),
    ],
    ids=[
        "assistant-image",
        "assistant-audio",
        "assistant-file",
        "assistant-reasoning",
        "system-image",
        "developer-file",
        "user-refusal",
        "user-foreign-block",
    ],
)
def test_a_part_the_role_does_not_take_is_refused(message: Any, option: str | None) -> None:
    with pytest.raises(TraceError) as caught:
        from_messages([message])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable",
        0,
        "messages[0].content[1]",
    )
    if option is None:
        assert "drop=" not in str(error)
        return
    assert f"pass drop=['{option}']" in str(error)
    (written,) = from_messages([message], drop=[option])
    assert written["content"] == [{"type": "text", "text": message.content[0].text}]


def test_a_tool_result_takes_text_only() -> None:
    messages = [
        HumanMessage(content="Chart?"),
        AIMessage(tool_calls=[ToolCall(name="chart", id="c1")]),
        ToolMessage(content=[IMAGE], tool_call_id="c1"),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        2,
        "messages[2].content[0]",
    )
    assert str(caught.value) == (
        "openai_chat: messages[2].content[0]: Chat Completions takes only text parts in tool "
        "content, not image_url [not_representable]"
    )


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (
            {
                "role": "assistant",
                "content": [{"type": "image_url", "image_url": {"url": "https://a.example/x.png"}}],
            },
            "image_url",
        ),
        (
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "image_url", "image_url": {"url": "https://a.example/x.png"}}],
            },
            "image_url",
        ),
        ({"role": "system", "content": [{"type": "refusal", "refusal": "no"}]}, "refusal"),
        ({"role": "user", "content": [{"type": "x_video", "video": {"id": "v1"}}]}, "x_video"),
    ],
    ids=["assistant-image", "tool-image", "system-refusal", "user-vendor-block"],
)
def test_a_part_read_where_the_api_takes_none_is_kept_whole_and_written_back(
    message: dict[str, Any], kind: str
) -> None:
    # Some compatible servers take these (an image in a tool result, for vLLM); the API
    # does not, so they are not typed: kept whole, and written back only by this adapter.
    before = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "{}")]},
    ]
    trace = [*before, message] if message["role"] == "tool" else [message]
    typed = to_messages(trace)[-1]
    assert typed.content == [
        OpaquePart(
            kind=kind, value=message["content"][0], metadata={"openai_chat": {"verbatim": True}}
        )
    ]
    assert from_messages(to_messages(trace)) == trace
    # The same block handed over by another format (no mark) is refused by name.
    foreign = HumanMessage(content=[OpaquePart(kind=kind, value=message["content"][0])])
    with pytest.raises(TraceError) as caught:
        from_messages([foreign])
    assert caught.value.code == "not_representable"
    assert "pass drop=['opaque_parts']" in str(caught.value)


def test_a_verbatim_part_of_another_adapter_is_not_written() -> None:
    part = OpaquePart(
        kind="x_video", value={"type": "x_video"}, metadata={"swarm": {"verbatim": True}}
    )
    with pytest.raises(TraceError) as caught:
        from_messages([HumanMessage(content=[part])])
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[0].content[0]")
    assert from_messages([HumanMessage(content=[part])], drop=["opaque_parts"]) == [
        {"role": "user", "content": ""}
    ]


# --- unanswered calls ----------------------------------------------------------------------


NEVER_RUN = [
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c1", '{"city": ')]},
    {"role": "user", "content": "Hello?"},
    {"role": "assistant", "content": "Sorry, it is 3 C in Oslo."},
]


def test_an_unanswered_call_that_did_not_parse_is_read_but_not_written() -> None:
    messages = to_messages(NEVER_RUN)  # rule 6: frameworks never run such a call
    assert messages[1].tool_calls == [  # type: ignore[union-attr]
        ToolCall(name="get_weather", id="c1", invalid_args='{"city": ')
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        1,
        "messages[1].tool_calls[0]",
    )
    assert "pass drop=['unanswered_calls']" in str(caught.value)
    written = from_messages(messages, drop=["unanswered_calls"])
    # Left out; an assistant message with no call left needs content, so it gets "".
    assert written[1] == {"role": "assistant", "content": ""}
    assert api_problems(written) == []


def test_dropping_unanswered_calls_keeps_the_answered_ones() -> None:
    trace = [
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [_call("c1", '{"city": "Oslo"}'), _call("c2", '{"city": Rome}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3 C"},
        {"role": "assistant", "content": "Oslo: 3 C."},
    ]
    written = from_messages(to_messages(trace), drop=["unanswered_calls"])
    assert written[1] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [_call("c1", '{"city": "Oslo"}')],
    }
    assert api_problems(written) == []


def test_an_answered_call_that_did_not_parse_is_written() -> None:
    trace = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", '{"city": ')]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: bad JSON"},
    ]
    assert from_messages(to_messages(trace)) == trace


def test_an_unanswered_legacy_function_call_that_did_not_parse_is_refused_too() -> None:
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", invalid_args="{")]),
        HumanMessage(content="Hello?"),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls[0]")
    assert from_messages(messages, drop=["unanswered_calls"])[1] == {
        "role": "assistant",
        "content": "",
    }


# --- order --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "code", "path"),
    [
        (
            [
                HumanMessage(content="Weather?"),
                AIMessage(tool_calls=[ToolCall(name="get_weather", id="c1")]),
                HumanMessage(content="Hello?"),
                ToolMessage(content="3 C", tool_call_id="c1"),
            ],
            "unanswered_tool_call",
            "messages[1].tool_calls[0]",
        ),
        (
            [
                HumanMessage(content="Weather?"),
                AIMessage(tool_calls=[ToolCall(name="get_weather", id="c1")]),
                SystemMessage(content="Be brief."),
                ToolMessage(content="3 C", tool_call_id="c1"),
            ],
            "unanswered_tool_call",
            "messages[1].tool_calls[0]",
        ),
        (
            [HumanMessage(content="Weather?"), ToolMessage(content="3 C", tool_call_id="c1")],
            "orphan_tool_result",
            "messages[1].tool_call_id",
        ),
        (
            [
                HumanMessage(content="Weather?"),
                AIMessage(tool_calls=[ToolCall(name="get_weather", id="c1")]),
                ToolMessage(content="3 C", tool_call_id="c1"),
                ToolMessage(content="3 C", tool_call_id="c1"),
            ],
            "orphan_tool_result",
            "messages[3].tool_call_id",
        ),
        ([], "empty_conversation", None),
    ],
    ids=["user-inside-a-block", "system-inside-a-block", "orphan", "answered-twice", "empty"],
)
def test_a_conversation_out_of_the_api_order_is_refused_by_its_rule(
    messages: list[Any], code: str, path: str | None
) -> None:
    with pytest.raises(TraceError) as caught:
        from_messages(messages, drop=openai_chat.DROPPABLE)
    assert (caught.value.code, caught.value.path) == (code, path)


def test_a_call_the_conversation_ends_in_is_refused_by_name() -> None:
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(content="Checking.", tool_calls=[ToolCall(name="get_weather", id="c1")]),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert str(caught.value) == (
        "openai_chat: messages[1].tool_calls[0]: tool call 'get_weather' has no result (the "
        "conversation ends before it is answered): the API rejects an assistant message whose "
        "tool calls are not each followed by their result; pass drop=['unanswered_calls'] to "
        "leave it out [not_representable]"
    )
    assert from_messages(messages, drop=["unanswered_calls"]) == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking."},
    ]


def test_a_result_without_id_after_a_call_with_one_is_refused() -> None:
    # The rules pair it by position; the API takes only tool messages after tool_calls.
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", id="c1")]),
        ToolMessage(content="3 C", name="get_weather"),
    ]
    with pytest.raises(TraceError) as caught:
        from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        2,
        "messages[2].tool_call_id",
    )


def test_a_legacy_function_call_is_answered_by_a_function_message() -> None:
    messages = [
        HumanMessage(content="Weather?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Oslo"})]),
        ToolMessage(content="3 C", name="get_weather"),
    ]
    assert from_messages(messages)[1:] == [
        {
            "role": "assistant",
            "content": "",
            "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        },
        {"role": "function", "content": "3 C", "name": "get_weather"},
    ]


def test_the_droppable_losses_are_named() -> None:
    assert openai_chat.DROPPABLE == (
        "is_error",
        "reasoning",
        "mime_types",
        "refusals",
        "citations",
        "custom_calls",
        "unanswered_calls",
        "opaque_parts",
        "audio_parts",
    )


@pytest.mark.parametrize(
    ("source", "form"),
    [
        ({"role": "assistant", "content": "", "refusal": ""}, None),
        ({"role": "assistant", "content": None, "refusal": ""}, "null"),
        ({"role": "assistant", "content": "", "refusal": "No."}, "empty"),
        ({"role": "assistant", "content": None, "refusal": "No."}, None),
    ],
)
def test_an_empty_refusal_is_written_with_content(source: dict[str, Any], form: Any) -> None:
    # Beside an empty refusal a null content leaves nothing in the message, which the API
    # refuses: a typed empty refusal is written with "" (and read back the same), while a
    # source that did send null keeps it.
    typed = AIMessage(content=[RefusalPart(text="")])
    assert from_messages([typed]) == [{"role": "assistant", "content": "", "refusal": ""}]
    assert api_problems(from_messages([HumanMessage(content=""), typed])) == []
    read = to_messages([source])[0]
    assert read.metadata == ({} if form is None else {"openai_chat": {"refusal": form}})
    assert from_messages([read]) == [source]
