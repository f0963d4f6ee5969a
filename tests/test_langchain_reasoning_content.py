"""The model's reasoning that LangChain chat models keep in
``AIMessage.additional_kwargs["reasoning_content"]`` (ChatDeepSeek, ChatOllama with
``reasoning=True``, ChatGroq, ChatXAI; langchain-core's ``content_blocks`` reads it as a
``reasoning`` block before the others) has its typed home: a ``ReasoningPart``, first in the
content, so that it renders, is hashed and goes to other formats, or is refused by those
with no place for reasoning. The way back puts it where it was read from, byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from llama_index.core.base.llms.types import ChatMessage as LlamaMessage
from llama_index.core.base.llms.types import TextBlock, ThinkingBlock

import tracebridge as tb
from tracebridge import TraceError, transcript_hash
from tracebridge.adapters import galtea, langchain, llama_index, openai_chat, openai_responses
from tracebridge.adapters.langchain import _read

from law_kits.langchain import KIT, canonical, in_some_form, native_conversations

LC = "langchain"
FROM = {LC: {"from": "reasoning_content"}}
FROM_STRING = {LC: {"from": "reasoning_content", "content": "string"}}


@contextmanager
def general_only() -> Iterator[None]:
    """The reader with its fast path off."""
    with mock.patch.object(_read, "_fast_plans", return_value={}):
        yield


def outcome(trace: Any) -> Any:
    try:
        return langchain.to_messages(trace)
    except TraceError as error:
        return (error.code, error.index, error.path, str(error))


def read_both_ways(trace: Any) -> list[tb.Message]:
    """The typed messages, which the general reader gives too."""
    typed = langchain.to_messages(trace)
    with general_only():
        assert langchain.to_messages(trace) == typed
    return typed


def lossless(trace: list[BaseMessage]) -> None:
    """Back to equal LangChain objects, from each form the trace can take."""
    for form in (trace, messages_to_dict(trace), [m.model_dump() for m in trace]):
        back = langchain.from_messages(read_both_ways(form))
        assert messages_to_dict(back) == messages_to_dict(trace)
    dumps = [m.model_dump() for m in trace]
    assert langchain.from_messages(langchain.to_messages(dumps), form="model_dump") == dumps


def deepseek_stream() -> AIMessageChunk:
    """A deepseek-reasoner reply streamed by ChatDeepSeek and summed: the first delta carries
    ``reasoning_content: ""``, then the reasoning, then the answer."""
    pieces = [
        AIMessageChunk(content="", additional_kwargs={"reasoning_content": ""}, id="lc_run--1"),
        AIMessageChunk(
            content="", additional_kwargs={"reasoning_content": "Paris is "}, id="lc_run--1"
        ),
        AIMessageChunk(
            content="", additional_kwargs={"reasoning_content": "the capital."}, id="lc_run--1"
        ),
        AIMessageChunk(content="Paris", id="lc_run--1"),
        AIMessageChunk(
            content=".",
            id="lc_run--1",
            response_metadata={"finish_reason": "stop", "model_name": "deepseek-reasoner"},
            chunk_position="last",
        ),
    ]
    summed = pieces[0]
    for piece in pieces[1:]:
        summed = summed + piece
    return summed


QUESTION = HumanMessage("Capital of France?", id="h1")
THINKING = AIMessage(
    "Paris.", additional_kwargs={"reasoning_content": "Paris is the capital."}, id="a1"
)


# --- reading -------------------------------------------------------------------------------


TYPED = [
    tb.HumanMessage(content="Capital of France?", id="h1"),
    tb.AIMessage(
        content=[
            tb.ReasoningPart(text="Paris is the capital.", metadata=FROM_STRING),
            tb.TextPart(text="Paris."),
        ],
        id="a1",
    ),
]


def test_reasoning_content_is_a_reasoning_part_before_the_answer() -> None:
    assert read_both_ways([QUESTION, THINKING]) == TYPED
    lossless([QUESTION, THINKING])


def test_reasoning_content_is_read_as_langchain_cores_content_blocks_read_it() -> None:
    [typed] = langchain.to_messages([THINKING])
    assert THINKING.content_blocks == [
        {"type": "reasoning", "reasoning": "Paris is the capital."},
        {"type": "text", "text": "Paris."},
    ]
    assert isinstance(typed.content, list)
    assert [(p.type, p.text) for p in typed.content] == [  # type: ignore[union-attr]
        ("reasoning", "Paris is the capital."),
        ("text", "Paris."),
    ]


def test_a_summed_deepseek_stream_reads_with_its_reasoning_first() -> None:
    summed = deepseek_stream()
    assert summed.additional_kwargs == {"reasoning_content": "Paris is the capital."}
    assert read_both_ways([QUESTION, summed])[1] == tb.AIMessage(
        content=[
            tb.ReasoningPart(text="Paris is the capital.", metadata=FROM_STRING),
            tb.TextPart(text="Paris."),
        ],
        id="lc_run--1",
        metadata={
            LC: {
                "response_metadata": {"finish_reason": "stop", "model_name": "deepseek-reasoner"},
                "chunk_position": "last",
                "class": "AIMessageChunk",
            }
        },
    )
    lossless([QUESTION, summed])


@pytest.mark.parametrize(
    "form",
    ["dicts", "model_dump", "state"],
)
def test_every_form_reads_the_reasoning(form: str) -> None:
    trace: Any = {
        "dicts": messages_to_dict([QUESTION, THINKING]),
        "model_dump": [QUESTION.model_dump(), THINKING.model_dump()],
        "state": {"messages": [QUESTION, THINKING]},
    }[form]
    assert read_both_ways(trace) == TYPED


@pytest.mark.parametrize(
    ("content", "typed"),
    [
        ("", [tb.ReasoningPart(text="hmm", metadata=FROM_STRING)]),
        ([], [tb.ReasoningPart(text="hmm", metadata=FROM)]),
        (
            [{"type": "text", "text": "yo"}],
            [tb.ReasoningPart(text="hmm", metadata=FROM), tb.TextPart(text="yo")],
        ),
        (
            [{"type": "reasoning", "reasoning": "block"}, "yo"],
            [
                tb.ReasoningPart(text="hmm", metadata=FROM),
                tb.ReasoningPart(text="block"),
                tb.TextPart(text="yo", metadata={LC: {"shape": "string"}}),
            ],
        ),
    ],
    ids=["empty-string", "empty-list", "text-block", "beside-a-reasoning-block"],
)
def test_each_content_shape_reads_with_the_reasoning_first_and_goes_back_as_it_was(
    content: Any, typed: list[Any]
) -> None:
    trace = [AIMessage(content=content, additional_kwargs={"reasoning_content": "hmm"})]
    assert read_both_ways(trace) == [tb.AIMessage(content=typed)]
    lossless(trace)


def test_empty_reasoning_text_is_reasoning_as_langchain_core_reads_it() -> None:
    trace = [AIMessage("yo", additional_kwargs={"reasoning_content": ""})]
    assert trace[0].content_blocks[0] == {"type": "reasoning", "reasoning": ""}
    assert read_both_ways(trace) == [
        tb.AIMessage(
            content=[tb.ReasoningPart(text="", metadata=FROM_STRING), tb.TextPart(text="yo")]
        )
    ]
    lossless(trace)


def test_reasoning_beside_a_refusal_and_other_kwargs() -> None:
    trace = [
        AIMessage(
            "",
            additional_kwargs={"reasoning_content": "not allowed", "refusal": "No.", "k": 1},
        ),
        AIMessage(
            "Partly.",
            additional_kwargs={"reasoning_content": "hmm", "refusal": "Not all."},
        ),
    ]
    assert read_both_ways(trace) == [
        tb.AIMessage(
            content=[
                tb.ReasoningPart(text="not allowed", metadata=FROM),
                tb.RefusalPart(text="No."),
            ],
            metadata={LC: {"additional_kwargs": {"k": 1}}},
        ),
        tb.AIMessage(
            content=[
                tb.ReasoningPart(text="hmm", metadata=FROM),
                tb.TextPart(text="Partly."),
                tb.RefusalPart(text="Not all.", metadata={LC: {"content": "string"}}),
            ]
        ),
    ]
    lossless(trace)


def deepseek_tool_step() -> list[BaseMessage]:
    """deepseek-reasoner calling a tool (thinking mode): ChatOpenAI's raw calls beside the
    parsed ones, and the reasoning beside both."""
    raw = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    ai = AIMessage(
        "",
        additional_kwargs={"tool_calls": raw, "reasoning_content": "I need the weather."},
        tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}],
        id="a1",
    )
    return [HumanMessage("Weather?"), ai, ToolMessage("18C", tool_call_id="call_1")]


def test_reasoning_beside_raw_provider_calls() -> None:
    trace = deepseek_tool_step()
    raw = trace[1].additional_kwargs["tool_calls"]
    assert read_both_ways(trace)[1] == tb.AIMessage(
        content=[tb.ReasoningPart(text="I need the weather.", metadata=FROM_STRING)],
        tool_calls=[tb.ToolCall(name="weather", args={"city": "Paris"}, id="call_1")],
        id="a1",
        metadata={LC: {"additional_kwargs": {"tool_calls": raw}}},
    )
    lossless(trace)


def test_an_assistant_chat_message_reads_its_reasoning_too() -> None:
    trace = [
        ChatMessage(content="yo", role="assistant", additional_kwargs={"reasoning_content": "r"})
    ]
    assert read_both_ways(trace) == [
        tb.AIMessage(
            content=[tb.ReasoningPart(text="r", metadata=FROM_STRING), tb.TextPart(text="yo")],
            metadata={LC: {"class": "chat", "role": "assistant"}},
        )
    ]
    lossless(trace)


@pytest.mark.parametrize(
    "value",
    [None, {"text": "r"}, ["r"], 3],
    ids=["none", "dict", "list", "number"],
)
def test_reasoning_content_that_is_not_text_stays_verbatim(value: Any) -> None:
    # None: what ChatDeepSeek writes when the model gave no reasoning; langchain-core reads
    # none of these as reasoning, and neither shape is one any provider documents
    trace = [AIMessage("yo", additional_kwargs={"reasoning_content": value})]
    assert trace[0].content_blocks == [{"type": "text", "text": "yo"}]
    assert read_both_ways(trace) == [
        tb.AIMessage(
            content="yo", metadata={LC: {"additional_kwargs": {"reasoning_content": value}}}
        )
    ]
    lossless(trace)


def test_reasoning_content_of_a_human_message_stays_verbatim() -> None:
    # langchain-core reads reasoning_content only on AI messages
    trace = [HumanMessage("hi", additional_kwargs={"reasoning_content": "r"})]
    assert read_both_ways(trace) == [
        tb.HumanMessage(
            content="hi", metadata={LC: {"additional_kwargs": {"reasoning_content": "r"}}}
        )
    ]
    lossless(trace)


def test_messages_without_text_reasoning_stay_on_the_fast_path() -> None:
    plain = AIMessage("yo", additional_kwargs={"reasoning_content": None})
    with mock.patch.object(_read, "_typed", side_effect=AssertionError("general reader used")):
        assert langchain.to_messages([plain]) == [
            tb.AIMessage(
                content="yo", metadata={LC: {"additional_kwargs": {"reasoning_content": None}}}
            )
        ]


# --- what the reasoning now is: rendered, hashed, carried or refused -----------------------


def test_the_reasoning_is_rendered_and_hashed() -> None:
    with_it = langchain.to_messages([QUESTION, THINKING])
    without = langchain.to_messages([QUESTION, AIMessage("Paris.", id="a1")])
    assert transcript_hash(with_it) != transcript_hash(without)
    assert "Paris is the capital." in tb.MultiTurnSample(messages=with_it).pretty_repr()


def llama_thinking() -> list[Any]:
    """The same reply as a LlamaIndex ``ThinkingBlock`` (which reads as a reasoning part)."""
    return [
        LlamaMessage(role="user", blocks=[TextBlock(text="Capital of France?")]),
        LlamaMessage(
            role="assistant",
            blocks=[ThinkingBlock(content="Paris is the capital."), TextBlock(text="Paris.")],
        ),
    ]


def refusal_of(write: Any, messages: list[Any], **options: Any) -> tuple[Any, ...]:
    with pytest.raises(TraceError) as caught:
        write(messages, **options)
    error = caught.value
    return error.code, error.index, error.path, str(error)


@pytest.mark.parametrize(
    "target",
    [openai_chat, galtea, openai_responses],
    ids=["openai_chat", "galtea", "openai_responses"],
)
def test_a_format_without_a_place_for_it_refuses_it_as_it_refuses_a_llama_thinking_block(
    target: Any,
) -> None:
    ours = refusal_of(target.from_messages, langchain.to_messages([QUESTION, THINKING]))
    theirs = refusal_of(target.from_messages, llama_index.to_messages(llama_thinking()))
    assert ours == theirs
    assert ours[:3] == ("not_representable", 1, "messages[1].content[0]")


def test_openai_chat_refuses_it_naming_the_drop_option() -> None:
    with pytest.raises(TraceError) as caught:
        tb.convert([QUESTION, THINKING], source=LC, target="openai_chat")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable",
        1,
        "messages[1].content[0]",
    )
    assert "drop=['reasoning']" in str(caught.value)
    assert tb.convert(
        [QUESTION, THINKING],
        source=LC,
        target="openai_chat",
        target_options={"drop": ["reasoning"]},
    ) == [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Paris."}]},
    ]


def test_openai_responses_refuses_it_naming_the_drop_option() -> None:
    # a Responses reasoning item needs the id the API gave it, which LangChain's text lacks
    with pytest.raises(TraceError) as caught:
        tb.convert([QUESTION, THINKING], source=LC, target="openai_responses")
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable",
        1,
        "messages[1].content[0]",
        "openai_responses: messages[1].content[0]: a reasoning item needs the id the API gave "
        "it (this reasoning part has none); pass drop=['reasoning'] to leave it out "
        "[not_representable]",
    )


def test_llama_index_gets_a_thinking_block() -> None:
    [_, reply] = tb.convert([QUESTION, THINKING], source=LC, target="llama_index")
    assert [type(block).__name__ for block in reply.blocks] == ["ThinkingBlock", "TextBlock"]
    assert reply.blocks[0].content == "Paris is the capital."
    assert reply.blocks[1].text == "Paris."


def test_a_llama_thinking_block_goes_to_langchain_as_a_reasoning_block() -> None:
    # a reasoning part from another format is written as before: a v1 reasoning block
    [_, reply] = tb.convert(llama_thinking(), source="llama_index", target=LC)
    assert reply.content == [
        {"type": "reasoning", "reasoning": "Paris is the capital."},
        {"type": "text", "text": "Paris."},
    ]
    assert reply.additional_kwargs == {}


# --- writing -------------------------------------------------------------------------------


def test_a_typed_reasoning_part_read_from_there_goes_back_into_additional_kwargs() -> None:
    [written] = langchain.from_messages(
        [
            tb.AIMessage(
                content=[tb.ReasoningPart(text="edited", metadata=FROM), tb.TextPart(text="a")]
            )
        ]
    )
    assert messages_to_dict([written]) == messages_to_dict(
        [
            AIMessage(
                [{"type": "text", "text": "a"}], additional_kwargs={"reasoning_content": "edited"}
            )
        ]
    )


def refused(messages: list[Any]) -> tuple[Any, ...]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert caught.value.source == LC
    return caught.value.code, caught.value.index, caught.value.path, str(caught.value)


def test_a_marked_reasoning_part_that_is_not_first_is_refused() -> None:
    message = tb.AIMessage(
        content=[tb.TextPart(text="a"), tb.ReasoningPart(text="r", metadata=FROM)]
    )
    assert refused([tb.HumanMessage(content="q"), message]) == (
        "not_representable",
        1,
        "messages[1].content[1].metadata",
        "langchain: messages[1].content[1].metadata: this reasoning part is marked as read "
        "from additional_kwargs.reasoning_content (metadata.langchain.from), which goes back "
        "there only from the first part of an AI message (the reader puts it first); take the "
        "marker out of its metadata to write it as a reasoning block [not_representable]",
    )


def test_a_second_marked_reasoning_part_is_refused_at_its_own_place() -> None:
    message = tb.AIMessage(
        content=[
            tb.ReasoningPart(text="r", metadata=FROM),
            tb.TextPart(text="a"),
            tb.ReasoningPart(text="s", metadata=FROM),
        ]
    )
    assert refused([message])[:3] == ("not_representable", 0, "messages[0].content[2].metadata")


def test_a_kept_text_reasoning_content_is_refused() -> None:
    # it would read back as a reasoning part the typed message does not have
    message = tb.AIMessage(
        content="a", metadata={LC: {"additional_kwargs": {"reasoning_content": "r"}}}
    )
    assert refused([message]) == (
        "not_representable",
        0,
        "messages[0].metadata.langchain.additional_kwargs.reasoning_content",
        "langchain: messages[0].metadata.langchain.additional_kwargs.reasoning_content: "
        "metadata.langchain.additional_kwargs.reasoning_content is kept as 'r', which the "
        "reader takes out of additional_kwargs into a typed field (a ReasoningPart): the way "
        "back writes that key from the typed field alone; kept, it would read back as typed "
        "data (set the typed field instead) [not_representable]",
    )


def test_a_marked_reasoning_part_beside_a_kept_value_of_its_key_is_refused() -> None:
    message = tb.AIMessage(
        content=[tb.ReasoningPart(text="r", metadata=FROM)],
        metadata={LC: {"additional_kwargs": {"reasoning_content": None}}},
    )
    assert refused([message]) == (
        "not_representable",
        0,
        "messages[0].additional_kwargs.reasoning_content",
        "langchain: messages[0].additional_kwargs.reasoning_content: "
        "additional_kwargs.reasoning_content is kept with this message as None, and the "
        "message's typed reasoning part belongs there too [not_representable]",
    )


def test_error_paths_after_the_reasoning_count_it() -> None:
    opaque = tb.AIMessage(
        content=[
            tb.ReasoningPart(text="r", metadata=FROM),
            tb.OpaquePart(kind="tool_use", value={"type": "tool_use", "id": "x"}),
        ]
    )
    assert refused([opaque])[:3] == ("not_representable", 0, "messages[0].content[1]")
    kept = tb.AIMessage(
        content=[
            tb.ReasoningPart(text="r", metadata=FROM),
            tb.TextPart(text="a", metadata={LC: {"shape": "nope"}}),
        ]
    )
    assert refused([kept])[:3] == ("not_representable", 0, "messages[0].content[1].metadata")


# --- the laws, with reasoning_content in the law kit's traces ------------------------------


def _with_reasoning(message: BaseMessage, value: Any) -> BaseMessage:
    assistant = message.type in ("ai", "AIMessageChunk") or (
        isinstance(message, ChatMessage) and message.role in ("assistant", "ai")
    )
    if value is _ABSENT or not assistant:
        return message
    kwargs = {**message.additional_kwargs, "reasoning_content": value}
    return message.model_copy(update={"additional_kwargs": kwargs})


_ABSENT = object()
reasoning_values = st.one_of(st.just(_ABSENT), st.text(max_size=20), st.none(), st.just({"r": 1}))


@st.composite
def reasoning_conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """The law kit's LangChain conversations, each AI message given a reasoning_content (text,
    ``None``, a dict) or not."""
    messages = draw(native_conversations())
    return [_with_reasoning(m, draw(reasoning_values)) for m in messages]


def _text_reasoning(item: Any) -> Any:
    """The text ``reasoning_content`` of an AI message in any form, else None."""
    loaded = messages_from_dict(canonical([item]))[0]
    reasoning = loaded.additional_kwargs.get("reasoning_content")
    return reasoning if type(reasoning) is str and loaded.type != "human" else None


@settings(max_examples=150)
@given(reasoning_conversations().flatmap(in_some_form))
def test_lossless_with_reasoning_content(trace: Any) -> None:
    typed = langchain.to_messages(trace)
    assert canonical(langchain.from_messages(typed)) == canonical(trace)
    # each text reasoning_content is the first part of its typed message (a human message
    # with tool_result blocks gives several messages; AI messages give one each)
    items = trace["messages"] if isinstance(trace, dict) else trace
    reasoning = [_text_reasoning(item) for item in items]
    expected = [r for r in reasoning if r is not None]
    found = [
        m.content[0].text  # type: ignore[union-attr]
        for m in typed
        if isinstance(m, tb.AIMessage)
        and isinstance(m.content, list)
        and m.content
        and m.content[0].metadata in (FROM, FROM_STRING)
    ]
    assert found == expected


@settings(max_examples=150)
@given(reasoning_conversations().flatmap(in_some_form))
def test_fast_path_and_general_reader_agree_with_reasoning_content(trace: Any) -> None:
    fast = outcome(trace)
    with general_only():
        assert outcome(trace) == fast


def _reasoning_first(message: tb.Message, text: str | None) -> tb.Message:
    if text is None or not isinstance(message, tb.AIMessage):
        return message
    if isinstance(message.content, str):
        rest: list[Any] = [tb.TextPart(text=message.content)] if message.content else []
        first = tb.ReasoningPart(text=text, metadata=FROM_STRING)
    else:
        rest, first = list(message.content), tb.ReasoningPart(text=text, metadata=FROM)
    return message.model_copy(update={"content": [first, *rest]})


@st.composite
def typed_with_reasoning(draw: st.DrawFn) -> list[tb.Message]:
    """The law kit's typed conversations, AI messages given reasoning as the reader gives it."""
    messages = draw(KIT.conversations)
    return [_reasoning_first(m, draw(st.none() | st.text(max_size=20))) for m in messages]


@settings(max_examples=150)
@given(typed_with_reasoning())
def test_faithful_with_reasoning_read_from_additional_kwargs(messages: list[tb.Message]) -> None:
    assert langchain.to_messages(langchain.from_messages(messages)) == messages


@settings(max_examples=100)
@given(reasoning_conversations())
def test_the_reasoning_crosses_formats_whole_or_is_refused(trace: list[BaseMessage]) -> None:
    messages = langchain.to_messages(trace)
    for target in (openai_chat, llama_index):
        written, error = _written(target, messages)
        if error is not None:
            assert error.code == "not_representable"
            continue
        assert transcript_hash(target.to_messages(written)) == transcript_hash(messages)


def _written(target: Any, messages: list[tb.Message]) -> tuple[Any, TraceError | None]:
    try:
        return target.from_messages(messages), None
    except TraceError as error:
        return None, error


# --- a marker that says more than the writer can write -------------------------------------


def _marked(marker: dict[str, Any], *rest: tb.TextPart) -> list[tb.Message]:
    return [tb.HumanMessage(content="hi"), tb.AIMessage(content=[
        tb.ReasoningPart(text="r", metadata={"langchain": marker}), *rest])]


@pytest.mark.parametrize(("marker", "rest", "key", "says"), [
    ({"from": "reasoning_content", "bogus": 1}, ["a"], "bogus",
     "'bogus' is no key the reader keeps beside 'from'"),
    ({"from": "reasoning_content", "content": "other"}, ["a"], "content",
     "'content': 'other' is kept only as 'string'"),
    ({"from": "reasoning_content", "content": "string"}, ["a", "b"], "content",
     "2 part(s) follow it here"),
], ids=["unknown key", "unknown content form", "string form before two parts"])
def test_a_marker_the_writer_cannot_honour_is_refused_at_its_key(
    marker: dict[str, Any], rest: list[str], key: str, says: str,
) -> None:
    with pytest.raises(TraceError) as raised:
        langchain.from_messages(_marked(marker, *(tb.TextPart(text=t) for t in rest)))
    error = raised.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, f"messages[1].content[0].metadata.langchain.{key}")
    assert says in error.detail


@pytest.mark.parametrize(("marker", "rest", "content"), [
    ({"from": "reasoning_content", "content": "string"}, ["a"], "a"),
    ({"from": "reasoning_content", "content": "string"}, [], ""),
    ({"from": "reasoning_content"}, ["a"], [{"type": "text", "text": "a"}]),
])
def test_a_marker_the_reader_makes_is_written_and_reads_back_the_same(
    marker: dict[str, Any], rest: list[str], content: Any,
) -> None:
    typed = _marked(marker, *(tb.TextPart(text=t) for t in rest))
    written = langchain.from_messages(typed)
    assert written[1].content == content
    assert written[1].additional_kwargs == {"reasoning_content": "r"}
    assert langchain.to_messages(written) == typed
