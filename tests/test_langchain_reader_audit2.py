"""The LangChain reader keeps, refuses or reads exactly; regressions from a second audit of
``to_messages``:

* an extra attribute named like a field another class maps (a ``HumanMessage``'s
  ``tool_call_id``, a ``FunctionMessage``'s ``status``, a ``ChatMessage``'s ``tool_calls``)
  was dropped, or read as typed data its class does not have; it is kept verbatim under
  ``metadata.langchain.extra`` and written back;
* a message made with ``model_construct()`` without a required field raised a raw
  ``KeyError`` (from the fast path, and for a ``ToolMessage`` without content from the
  general reader); it is ``malformed_event`` at the missing field;
* the fast path took ``usage_metadata`` that LangChain and the general reader refuse (a dict
  as a count, a number as token details);
* the pieces of a streamed text reply (``AIMessageChunk``s with one id) read as one reply
  per piece; the later piece is ``streaming_chunk``;
* ``from_messages(drop=...)`` with a value that is not a list of names raised a raw
  ``TypeError``, or listed a string's characters.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from pydantic import ValidationError
from test_langchain_fast import general_only, generic_only

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.hashing import transcript_hash

LC = langchain.NAME
CALL = {"name": "f", "args": {}, "id": "c1"}
TYPED_CALL = tb.ToolCall(name="f", args={}, id="c1")
FUNCTION_CALL = {"function_call": {"name": "f", "arguments": "{}"}}


def refused(trace: Any, **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, **options)
    return caught.value.code, caught.value.index, caught.value.path


def extra(values: dict[str, Any], **kept: Any) -> dict[str, Any]:
    return {LC: {**kept, "extra": values}}


# --- extra attributes named like a mapped field ----------------------------------------------

EXTRAS_NAMED_LIKE_FIELDS: list[tuple[str, list[BaseMessage], int, tb.Message]] = [
    (
        "human tool_call_id",
        [HumanMessage("hi", tool_call_id="abc")],
        0,
        tb.HumanMessage(content="hi", metadata=extra({"tool_call_id": "abc"})),
    ),
    (
        "human invalid_tool_calls",
        [HumanMessage("hi", invalid_tool_calls=[{"name": "g"}])],
        0,
        tb.HumanMessage(content="hi", metadata=extra({"invalid_tool_calls": [{"name": "g"}]})),
    ),
    (
        "system status",
        [SystemMessage("be brief", status="error")],
        0,
        tb.SystemMessage(content="be brief", metadata=extra({"status": "error"})),
    ),
    (
        "ai status",
        [HumanMessage("q"), AIMessage("a", status="error")],
        1,
        tb.AIMessage(content="a", metadata=extra({"status": "error"})),
    ),
    (
        "ai tool_call_id",
        [HumanMessage("q"), AIMessage("a", tool_call_id="c9")],
        1,
        tb.AIMessage(content="a", metadata=extra({"tool_call_id": "c9"})),
    ),
    (
        "tool tool_calls",
        [AIMessage("", tool_calls=[CALL]), ToolMessage("r", tool_call_id="c1", tool_calls=["x"])],
        1,
        tb.ToolMessage(content="r", tool_call_id="c1", metadata=extra({"tool_calls": ["x"]})),
    ),
    (
        "function tool_call_id",
        [HumanMessage("q"), AIMessage("", tool_calls=[CALL]),
         FunctionMessage(name="f", content="x", tool_call_id="c1")],
        2,
        tb.ToolMessage(content="x", name="f",
                       metadata=extra({"tool_call_id": "c1"})),
    ),
    (
        "function status",
        [HumanMessage("q"), AIMessage("", additional_kwargs=FUNCTION_CALL),
         FunctionMessage(name="f", content="x", status="error")],
        2,
        tb.ToolMessage(content="x", name="f",
                       metadata=extra({"status": "error"})),
    ),
    (
        "chat assistant tool_calls",
        [HumanMessage("q"), ChatMessage(role="assistant", content="hi", tool_calls=[CALL])],
        1,
        tb.AIMessage(
            content="hi",
            metadata=extra({"tool_calls": [CALL]}, role="assistant", **{"class": "chat"}),
        ),
    ),
    (
        "chat user status and tool_call_id",
        [ChatMessage(role="user", content="hi", status="error", tool_call_id="c2")],
        0,
        tb.HumanMessage(
            content="hi",
            metadata=extra({"status": "error", "tool_call_id": "c2"}, role="user",
                           **{"class": "chat"}),
        ),
    ),
]


@pytest.mark.parametrize(
    ("trace", "index", "expected"),
    [case[1:] for case in EXTRAS_NAMED_LIKE_FIELDS],
    ids=[case[0] for case in EXTRAS_NAMED_LIKE_FIELDS],
)
def test_an_extra_attribute_named_like_a_mapped_field_is_kept_as_extra_roundtrip(
    trace: list[BaseMessage], index: int, expected: tb.Message
) -> None:
    typed = langchain.to_messages(trace)
    assert typed[index] == expected
    with general_only():
        assert langchain.to_messages(trace) == typed
    back = langchain.from_messages(typed)
    assert messages_to_dict(back) == messages_to_dict(trace)
    again = langchain.to_messages(back)
    assert again == typed
    assert transcript_hash(again) == transcript_hash(typed)


@pytest.mark.parametrize(
    ("trace", "index", "expected"),
    [case[1:] for case in EXTRAS_NAMED_LIKE_FIELDS],
    ids=[case[0] for case in EXTRAS_NAMED_LIKE_FIELDS],
)
def test_an_extra_attribute_in_the_dict_forms_is_kept_as_extra_roundtrip(
    trace: list[BaseMessage], index: int, expected: tb.Message
) -> None:
    dumps = [message.model_dump() for message in trace]
    typed = langchain.to_messages(dumps)
    assert typed[index] == expected
    assert langchain.from_messages(typed, form="model_dump") == dumps
    dicts = messages_to_dict(trace)
    assert langchain.to_messages(dicts) == typed
    assert langchain.from_messages(typed, form="dicts") == dicts


def test_a_function_message_with_a_tool_call_id_attribute_is_still_an_id_less_result() -> None:
    # LangChain sends a FunctionMessage as {"role": "function", "name": ...}: no call id
    trace = [HumanMessage("q"), AIMessage("", additional_kwargs=FUNCTION_CALL),
             FunctionMessage(name="f", content="x", tool_call_id="zz")]
    result = langchain.to_messages(trace)[2]
    assert isinstance(result, tb.ToolMessage)
    assert (result.tool_call_id, result.is_error) == (None, False)


# --- model_construct() without a required field ----------------------------------------------


@pytest.mark.parametrize(
    ("trace", "expected"),
    [
        ([AIMessage("", tool_calls=[CALL]), ToolMessage.model_construct(content="x")],
         ("malformed_event", 1, "messages[1].tool_call_id")),
        ([AIMessage("", tool_calls=[CALL]), ToolMessage.model_construct(tool_call_id="c1")],
         ("malformed_event", 1, "messages[1].content")),
        ([HumanMessage.model_construct()], ("malformed_event", 0, "messages[0].content")),
        ([SystemMessage.model_construct()], ("malformed_event", 0, "messages[0].content")),
        ([HumanMessage("q"), AIMessage.model_construct(name="a")],
         ("malformed_event", 1, "messages[1].content")),
    ],
    ids=["tool without tool_call_id", "tool without content", "human", "system", "ai"],
)
def test_a_message_made_without_a_required_field_is_malformed_event(
    trace: list[BaseMessage], expected: tuple[str, int, str]
) -> None:
    assert refused(trace) == expected
    with general_only():
        assert refused(trace) == expected
    with generic_only():
        assert refused(trace) == expected


# --- usage_metadata on the fast path ---------------------------------------------------------

USAGE = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
@pytest.mark.parametrize(
    ("usage", "path"),
    [
        ({**USAGE, "input_tokens": {"text": 1}}, "messages[1].usage_metadata.input_tokens"),
        ({**USAGE, "output_tokens": {"text": 2}}, "messages[1].usage_metadata.output_tokens"),
        ({**USAGE, "total_tokens": {}}, "messages[1].usage_metadata.total_tokens"),
        ({**USAGE, "input_token_details": 5},
         "messages[1].usage_metadata.input_token_details"),
        ({**USAGE, "output_token_details": 0},
         "messages[1].usage_metadata.output_token_details"),
    ],
    ids=["input_tokens dict", "output_tokens dict", "total_tokens dict",
         "input_token_details int", "output_token_details int"],
)
def test_usage_metadata_langchain_refuses_is_refused_on_every_path(
    usage: dict[str, Any], path: str
) -> None:
    ai = AIMessage("ok", usage_metadata=USAGE)
    ai.usage_metadata = usage  # type: ignore[assignment]  # pydantic does not validate this
    trace = [HumanMessage("hi"), ai]
    with pytest.raises(ValidationError) as said:
        AIMessage("ok", usage_metadata=usage)  # what LangChain says of it
    assert type(said.value) is ValidationError
    assert refused(trace) == ("malformed_event", 1, path)
    with general_only():
        assert refused(trace) == ("malformed_event", 1, path)
    with generic_only():
        assert refused(trace) == ("malformed_event", 1, path)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_usage_metadata_the_fast_path_takes_is_what_langchain_makes_and_no_more() -> None:
    usage = {**USAGE, "input_token_details": {"cache_read": 1, "audio": 0},
             "output_token_details": {"reasoning": 2}, "by_model": {"m": 3}, "calls": 1}
    trace = [HumanMessage("hi"), AIMessage("ok", usage_metadata=usage)]
    expected = tb.AIMessage(content="ok", metadata={LC: {"usage_metadata": usage}})
    wrong = AIMessage("ok", usage_metadata=usage)
    wrong.usage_metadata = {**usage, "output_token_details": 2}  # type: ignore[assignment]
    for reader in (nullcontext(), general_only(), generic_only()):
        with reader:
            assert langchain.to_messages(trace)[1] == expected
            assert refused([HumanMessage("hi"), wrong]) == (
                "malformed_event", 1, "messages[1].usage_metadata.output_token_details"
            )


# --- the pieces of a streamed reply ----------------------------------------------------------


def streamed_pieces() -> list[BaseMessage]:
    """What ``stream()`` yields for one text reply: a chunk per token, one id, the last
    marked ``chunk_position="last"``."""
    model = GenericFakeChatModel(messages=iter([AIMessage("Hello there world", id="run-1")]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pieces: list[BaseMessage] = list(model.stream("hi"))
    assert [(p.content, p.id) for p in pieces] == [
        ("Hello", "run-1"), (" ", "run-1"), ("there", "run-1"), (" ", "run-1"),
        ("world", "run-1"),
    ]
    return pieces


def test_the_pieces_of_a_streamed_text_reply_are_streaming_chunk_their_sum_reads() -> None:
    pieces = streamed_pieces()
    trace = [HumanMessage("hi"), *pieces]
    assert refused(trace) == ("streaming_chunk", 2, "messages[2].id")
    assert refused(messages_to_dict(trace)) == ("streaming_chunk", 2, "messages[2].id")
    assert refused([m.model_dump() for m in trace]) == ("streaming_chunk", 2, "messages[2].id")
    assert refused({"messages": trace}) == ("streaming_chunk", 2, "messages[2].id")
    # the last piece alone after another: still a piece
    assert refused([HumanMessage("hi"), pieces[3], pieces[4]]) == (
        "streaming_chunk", 2, "messages[2].id"
    )
    summed = pieces[0]
    for piece in pieces[1:]:
        summed = summed + piece
    trace = [HumanMessage("hi"), summed]
    typed = langchain.to_messages(trace)
    assert typed == [
        tb.HumanMessage(content="hi"),
        tb.AIMessage(
            content="Hello there world",
            id="run-1",
            metadata={LC: {"chunk_position": "last", "class": "AIMessageChunk"}},
        ),
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_interleaved_pieces_are_streaming_chunk_summed_chunks_apart_are_two_replies() -> None:
    first = [AIMessageChunk("a", id="run-a"), AIMessageChunk("b", id="run-a")]
    other = AIMessageChunk("x", id="run-b")
    assert refused([HumanMessage("hi"), first[0], other, first[1]]) == (
        "streaming_chunk", 3, "messages[3].id"
    )
    calls = AIMessageChunk(
        "", id="run-1",
        tool_call_chunks=[{"name": "f", "args": "{}", "id": "c1", "index": 0}],
        chunk_position="last",
    )
    answer = AIMessageChunk("done", id="run-1", chunk_position="last")
    trace = [HumanMessage("go"), calls, ToolMessage("ok", tool_call_id="c1"), answer]
    typed = langchain.to_messages(trace)
    assert [m.type for m in typed] == ["human", "ai", "tool", "ai"]
    assert typed[3] == tb.AIMessage(
        content="done", id="run-1",
        metadata={LC: {"chunk_position": "last", "class": "AIMessageChunk"}},
    )
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_two_chunks_the_reader_would_take_for_pieces_are_not_written() -> None:
    chunk = {LC: {"class": "AIMessageChunk"}}
    messages = [
        tb.HumanMessage(content="q"),
        tb.AIMessage(content="a", id="x", metadata=chunk),
        tb.AIMessage(content="b", id="x", metadata=chunk),
    ]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].id"
    )
    with_other_id = [*messages[:2], messages[2].model_copy(update={"id": "y"})]
    assert langchain.to_messages(langchain.from_messages(with_other_id)) == with_other_id


# --- drop= values ----------------------------------------------------------------------------

HI = [tb.HumanMessage(content="hi")]


@pytest.mark.parametrize("drop", [None, 5, 1.5, "is_error", b"citations"])
def test_a_drop_that_is_not_a_list_of_names_is_a_value_error_saying_so(drop: Any) -> None:
    with pytest.raises(ValueError, match=r"^drop= takes a list of names") as caught:
        langchain.from_messages(HI, drop=drop)
    assert str(caught.value) == (
        f"drop= takes a list of names from ('custom_calls', 'citations'), got {drop!r}"
    )


@pytest.mark.parametrize(
    ("drop", "named"),
    [(["nope", 1], "['nope', 1]"), ([["x"]], "[['x']]"), (("citations", "refusals"),
                                                        "['refusals']")],
)
def test_a_name_that_is_not_droppable_is_named(drop: Any, named: str) -> None:
    with pytest.raises(ValueError, match="names nothing droppable") as caught:
        langchain.from_messages(HI, drop=drop)
    assert str(caught.value) == (
        f"drop={named} names nothing droppable; drop= takes a list of names from "
        f"('custom_calls', 'citations')"
    )


def test_drop_takes_a_collection_of_names_never_one_string() -> None:
    for drop in (["citations"], ("custom_calls",), {"citations", "custom_calls"}, ()):
        assert messages_to_dict(langchain.from_messages(HI, drop=drop)) == messages_to_dict(
            [HumanMessage("hi")]
        )
    with pytest.raises(ValueError, match=r"^drop= takes a list of names") as caught:
        langchain.from_messages(HI, drop="citations")
    assert str(caught.value).endswith("got 'citations'")
