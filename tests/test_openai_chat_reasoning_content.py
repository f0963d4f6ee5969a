"""The model's reasoning that Chat Completions-compatible APIs return beside an assistant's
content has a typed home: a ``ReasoningPart`` first in the content.

DeepSeek (deepseek-reasoner) and vLLM before 0.11 return it as ``reasoning_content``; vLLM
since 0.11, OpenRouter and Groq (``reasoning_format="parsed"``) as ``reasoning``; vLLM in
between and OpenRouter send both with the same text. The openai SDK keeps either key as an
extra attribute of ``ChatCompletionMessage``. The part is marked in ``metadata.<adapter>``
(``from``, ``also``, ``content: "string"``) so that the writer puts the text back under its
key(s), the rest of the content in its own form. Before, the key was kept verbatim in
``fields``: not rendered, not hashed, and lost without a word on the way to LlamaIndex or
LangChain.
"""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from tracebridge import (
    AIMessage,
    HumanMessage,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import (
    galtea,
    langchain,
    llama_index,
    openai_chat,
    openai_responses,
    swarm,
)
from tracebridge.adapters.openai_chat import _read, _write

NS = "openai_chat"
USER = {"role": "user", "content": "9.11 and 9.8, which is greater?"}
H = HumanMessage(content=USER["content"])


def reasoning(text: str, **marker: Any) -> ReasoningPart:
    return ReasoningPart(text=text, metadata={NS: marker})


# --- reading: dicts -------------------------------------------------------------------------

READ_CASES = [
    pytest.param(
        {"role": "assistant", "content": "9.8", "reasoning_content": "Compare tenths."},
        AIMessage(
            content=[
                reasoning("Compare tenths.", **{"from": "reasoning_content", "content": "string"}),
                TextPart(text="9.8"),
            ]
        ),
        id="deepseek-string-content",
    ),
    pytest.param(
        {"role": "assistant", "content": "9.8", "reasoning": "Compare tenths."},
        AIMessage(
            content=[
                reasoning("Compare tenths.", **{"from": "reasoning", "content": "string"}),
                TextPart(text="9.8"),
            ]
        ),
        id="groq-openrouter-reasoning",
    ),
    pytest.param(
        {"role": "assistant", "content": "", "reasoning_content": "hm"},
        AIMessage(content=[reasoning("hm", **{"from": "reasoning_content", "content": "string"})]),
        id="empty-content",
    ),
    pytest.param(
        {"role": "assistant", "content": None, "reasoning_content": ""},
        AIMessage(
            content=[reasoning("", **{"from": "reasoning_content", "content": "string"})],
            metadata={NS: {"content": "null"}},
        ),
        id="null-content-empty-reasoning",
    ),
    pytest.param(
        {"role": "assistant", "reasoning": "r", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]},
        AIMessage(
            content=[reasoning("r", **{"from": "reasoning", "content": "string"})],
            tool_calls=[ToolCall(name="f", id="call_1")],
            metadata={NS: {"content": "absent"}},
        ),
        id="absent-content-with-calls",
    ),
    pytest.param(
        {"role": "assistant", "content": [{"type": "text", "text": "a"}], "reasoning": "r"},
        AIMessage(content=[reasoning("r", **{"from": "reasoning"}), TextPart(text="a")]),
        id="parts",
    ),
    pytest.param(
        {"role": "assistant", "content": [], "reasoning": "r"},
        AIMessage(content=[reasoning("r", **{"from": "reasoning"})]),
        id="no-parts",
    ),
    pytest.param(
        {"role": "assistant", "content": None, "refusal": "no", "reasoning_content": "r"},
        AIMessage(
            content=[reasoning("r", **{"from": "reasoning_content"}), RefusalPart(text="no")]
        ),
        id="refusal",
    ),
    pytest.param(
        {"role": "assistant", "content": "t", "refusal": "no", "reasoning_content": "r"},
        AIMessage(
            content=[
                reasoning("r", **{"from": "reasoning_content"}),
                TextPart(text="t"),
                RefusalPart(text="no"),
            ],
            metadata={NS: {"refusal": "after_text"}},
        ),
        id="refusal-after-text",
    ),
    pytest.param(
        {"role": "assistant", "content": "9.8", "reasoning": "r", "reasoning_content": "r"},
        AIMessage(
            content=[
                reasoning("r", **{"from": "reasoning", "also": "reasoning_content",
                                  "content": "string"}),
                TextPart(text="9.8"),
            ]
        ),
        id="vllm-both-keys",
    ),
    pytest.param(
        {"role": "assistant", "content": "9.8", "reasoning_content": "r", "reasoning": "r",
         "reasoning_details": [{"type": "reasoning.text", "text": "r"}]},
        AIMessage(
            content=[
                reasoning("r", **{"from": "reasoning_content", "also": "reasoning",
                                  "content": "string"}),
                TextPart(text="9.8"),
            ],
            metadata={NS: {"fields": {"reasoning_details": [{"type": "reasoning.text",
                                                             "text": "r"}]}}},
        ),
        id="openrouter-details-stay-verbatim",
    ),
]


RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "ok"}


def _results(typed: AIMessage) -> list[Any]:
    return [ToolMessage(content="ok", tool_call_id="call_1")] if typed.tool_calls else []


@pytest.mark.parametrize(("item", "typed"), READ_CASES)
def test_reasoning_text_is_a_first_reasoning_part(item: dict[str, Any], typed: AIMessage) -> None:
    messages = openai_chat.to_messages([USER, item, *([RESULT] if typed.tool_calls else [])])
    assert messages == [H, typed, *_results(typed)]
    assert messages[1].model_dump_json() == typed.model_dump_json()


@pytest.mark.parametrize(("item", "typed"), READ_CASES)
def test_lossless_round_trip(item: dict[str, Any], typed: AIMessage) -> None:
    trace = [USER, item, *([RESULT] if typed.tool_calls else [])]
    assert openai_chat.from_messages(openai_chat.to_messages(trace)) == trace


@pytest.mark.parametrize(("item", "typed"), READ_CASES)
def test_faithful_round_trip(item: dict[str, Any], typed: AIMessage) -> None:
    messages = [H, typed, *_results(typed)]
    assert openai_chat.to_messages(openai_chat.from_messages(messages)) == messages


@pytest.mark.parametrize(
    "value", [None, {"text": "r"}, ["r"], 3], ids=["null", "dict", "list", "int"]
)
@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_a_value_that_is_no_text_stays_verbatim(key: str, value: Any) -> None:
    item = {"role": "assistant", "content": "yo", key: value}
    messages = openai_chat.to_messages([USER, item])
    assert messages[1] == AIMessage(content="yo", metadata={NS: {"fields": {key: value}}})
    assert openai_chat.from_messages(messages) == [USER, item]


def test_the_key_on_another_role_stays_verbatim() -> None:
    item = {"role": "user", "content": "q", "reasoning_content": "r"}
    messages = openai_chat.to_messages([item])
    assert messages == [HumanMessage(content="q", metadata={NS: {"fields":
                                                                 {"reasoning_content": "r"}}})]
    assert openai_chat.from_messages(messages) == [item]


def test_both_keys_with_different_texts_conflict() -> None:
    item = {"role": "assistant", "content": "9.8", "reasoning": "a", "reasoning_content": "b"}
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([USER, item])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", 1, "messages[1].reasoning_content"
    )


def test_it_renders_and_is_hashed() -> None:
    with_reasoning = openai_chat.to_messages(
        [USER, {"role": "assistant", "content": "9.8", "reasoning_content": "Compare tenths."}]
    )
    without = openai_chat.to_messages([USER, {"role": "assistant", "content": "9.8"}])
    assert transcript_hash(with_reasoning) != transcript_hash(without)
    assert "Compare tenths." in with_reasoning[1].pretty_repr()


# --- reading: SDK objects -------------------------------------------------------------------


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_sdk_message_with_the_extra_attribute(key: str) -> None:
    raw = {"role": "assistant", "content": "9.8", key: "Compare tenths.", "refusal": None}
    sdk = ChatCompletionMessage.model_validate(raw)
    assert getattr(sdk, key) == "Compare tenths."
    messages = openai_chat.to_messages([USER, sdk])
    assert messages[1] == AIMessage(
        content=[reasoning("Compare tenths.", **{"from": key, "content": "string"}),
                 TextPart(text="9.8")],
        metadata={NS: {"fields": {"refusal": None}}},
    )
    assert openai_chat.from_messages(messages) == [
        USER, sdk.model_dump(mode="json", exclude_unset=True)
    ]


def test_sdk_message_with_calls_and_both_keys() -> None:
    raw = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "r",
        "reasoning": "r",
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "f", "arguments": '{"a": 1}'}}
        ],
    }
    sdk = ChatCompletionMessage.model_validate(raw)
    trace = [USER, sdk, RESULT]
    messages = openai_chat.to_messages(trace)
    assert messages[1] == AIMessage(
        content=[reasoning("r", **{"from": "reasoning_content", "also": "reasoning",
                                   "content": "string"})],
        tool_calls=[ToolCall(name="f", args={"a": 1}, id="call_1")],
        metadata={NS: {"content": "null"}},
    )
    assert openai_chat.from_messages(messages) == [USER, raw, trace[2]]


# --- speed paths ----------------------------------------------------------------------------


def test_the_fast_paths_leave_it_to_the_general_ones() -> None:
    item = {"role": "assistant", "content": "yo", "reasoning_content": "r"}
    assert _read._FastReader(openai_chat.OPENAI).message(item) is None
    typed = openai_chat.to_messages([USER, item])[1]
    assert _write._FastWriter(openai_chat.OPENAI).message(typed) is None


# --- writing: what is refused ---------------------------------------------------------------


def _refused(message: Any, drop: tuple[str, ...] = ()) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages([H, message], drop=drop)
    return caught.value.code, caught.value.index, caught.value.path


def test_an_unmarked_reasoning_part_still_needs_drop() -> None:
    message = AIMessage(content=[ReasoningPart(text="r"), TextPart(text="yo")])
    assert _refused(message) == ("not_representable", 1, "messages[1].content[0]")
    assert openai_chat.from_messages([H, message], drop=["reasoning"])[1] == {
        "role": "assistant", "content": [{"type": "text", "text": "yo"}]
    }


@pytest.mark.parametrize(
    ("message", "path"),
    [
        pytest.param(
            AIMessage(content=[TextPart(text="yo"), reasoning("r", **{"from": "reasoning"})]),
            "messages[1].content[1].metadata.openai_chat",
            id="not-first",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning"}),
                               reasoning("s", **{"from": "reasoning_content"})]),
            "messages[1].content[1].metadata.openai_chat",
            id="second-marked",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "thinking"})]),
            "messages[1].content[0].metadata.openai_chat.from",
            id="unknown-key",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", content="string")]),
            "messages[1].content[0].metadata.openai_chat.from",
            id="no-from",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning", "x_rank": 1})]),
            "messages[1].content[0].metadata.openai_chat.x_rank",
            id="unknown-marker-key",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning", "also": "reasoning"})]),
            "messages[1].content[0].metadata.openai_chat.also",
            id="also-same-key",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning", "content": "string"}),
                               TextPart(text="a"), TextPart(text="b")]),
            "messages[1].content[0].metadata.openai_chat.content",
            id="string-form-beside-parts",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning", "content": "string"}),
                               TextPart(text="")]),
            "messages[1].content[0].metadata.openai_chat.content",
            id="string-form-beside-empty-text",
        ),
        pytest.param(
            AIMessage(content=[reasoning("r", **{"from": "reasoning", "content": "list"})]),
            "messages[1].content[0].metadata.openai_chat.content",
            id="unknown-form",
        ),
        pytest.param(
            AIMessage(
                content=[reasoning("r", **{"from": "reasoning", "content": "string"})],
                metadata={NS: {"fields": {"reasoning": "other"}}},
            ),
            "messages[1].metadata.openai_chat.fields.reasoning",
            id="key-kept-too",
        ),
        pytest.param(
            AIMessage(content="yo", metadata={NS: {"fields": {"reasoning_content": "r"}}}),
            "messages[1].metadata.openai_chat.fields.reasoning_content",
            id="kept-text-would-read-back-typed",
        ),
    ],
)
def test_a_marker_that_does_not_go_back_is_refused(message: AIMessage, path: str) -> None:
    assert _refused(message) == ("not_representable", 1, path)
    assert _refused(message, ("reasoning",)) == ("not_representable", 1, path)


def test_a_marked_part_in_a_user_message_is_refused() -> None:
    message = HumanMessage(content=[reasoning("r", **{"from": "reasoning_content"})])
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages([message])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[0].metadata.openai_chat"
    )


# --- across formats -------------------------------------------------------------------------

DEEPSEEK = [USER, {"role": "assistant", "content": "9.8", "reasoning_content": "Compare tenths."}]


def test_to_llama_index_a_thinking_block() -> None:
    from llama_index.core.base.llms.types import TextBlock, ThinkingBlock

    written = convert(DEEPSEEK, source="openai_chat", target="llama_index")
    assert written[1].blocks == [ThinkingBlock(content="Compare tenths."), TextBlock(text="9.8")]
    assert llama_index.to_messages(written)[1] == AIMessage(
        content=[ReasoningPart(text="Compare tenths."), TextPart(text="9.8")]
    )


def test_to_langchain_a_reasoning_block() -> None:
    # The marker is openai_chat's: langchain's writer reads only metadata.langchain, so the
    # part is a v1 reasoning block, not additional_kwargs["reasoning_content"].
    written = convert(DEEPSEEK, source="openai_chat", target="langchain")
    assert written[1].content == [
        {"type": "reasoning", "reasoning": "Compare tenths."}, {"type": "text", "text": "9.8"}
    ]
    assert written[1].additional_kwargs == {}
    assert langchain.to_messages(written)[1] == AIMessage(
        content=[ReasoningPart(text="Compare tenths."), TextPart(text="9.8")]
    )


@pytest.mark.parametrize("target", [galtea, openai_responses])
def test_formats_without_a_home_refuse_it(target: Any) -> None:
    with pytest.raises(TraceError) as caught:
        target.from_messages(openai_chat.to_messages(DEEPSEEK))
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0]"
    )


def test_back_from_llama_index_it_needs_drop() -> None:
    typed = llama_index.to_messages(convert(DEEPSEEK, source="openai_chat", target="llama_index"))
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(typed)
    assert (caught.value.code, caught.value.path) == ("not_representable",
                                                      "messages[1].content[0]")
    assert openai_chat.from_messages(typed, drop=["reasoning"])[1] == {
        "role": "assistant", "content": [{"type": "text", "text": "9.8"}]
    }


# --- swarm ----------------------------------------------------------------------------------


def test_swarm_history_carries_it() -> None:
    history = [
        USER,
        {"role": "assistant", "content": "9.8", "reasoning_content": "Compare tenths.",
         "sender": "Math", "refusal": None, "tool_calls": None, "function_call": None},
    ]
    messages = swarm.to_messages(history)
    assert messages[1] == AIMessage(
        content=[
            ReasoningPart(text="Compare tenths.",
                          metadata={"swarm": {"from": "reasoning_content", "content": "string"}}),
            TextPart(text="9.8"),
        ],
        name="Math",
        metadata={"swarm": {"fields": {"refusal": None, "tool_calls": None,
                                       "function_call": None}}},
    )
    assert swarm.from_messages(messages) == history
    # another adapter's marker is not this one's: to openai_chat it is reasoning to drop
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(messages)
    assert (caught.value.code, caught.value.path) == ("not_representable",
                                                      "messages[1].content[0]")
