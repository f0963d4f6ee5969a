"""The LangChain adapter reads, writes or refuses exactly; regressions from a fourth audit:

* argument text holding an integer of more than 4,300 digits (legal JSON that Python's ``json``
  refuses to convert), or nested past Python's depth, raised a raw ``ValueError`` /
  ``RecursionError`` in each place LangChain keeps raw argument text; it reads as that place
  reads other text that does not parse (a call with ``invalid_args``, or
  ``conflicting_fields`` where LangChain's own lists leave the call out);
* ``from_messages`` built a stream's last v1 ``AIMessageChunk`` whose content LangChain's
  validators then rewrote (a ``tool_call_chunk`` block into a ``tool_call``, a
  ``server_tool_call_chunk`` into a ``server_tool_call``): ``not_representable`` at the part;
* ``to_messages(drop_artifacts=...)`` took any truthy value; ``allow_pending`` was checked
  only after reading;
* ``to_json`` returned raw ``bytes`` (not JSON), and the command line crashed on them;
* ``detect`` said False for a user's subclass of a message class, which the reader reads;
* a ``tool_result`` block's ``is_error`` that is no bool (``1``, ``"true"``) read as success;
* OpenAI Responses reasoning (``additional_kwargs["reasoning"]`` of a v0 reply, a
  ``reasoning`` block with a summary) and Bedrock ``reasoning_content`` blocks had no typed
  home (kept in metadata, not rendered nor hashed, or opaque); each is a ``ReasoningPart``
  that goes back where it came from.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from cli_helpers import run
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
    messages_to_dict,
)
from test_langchain_fast import general_only

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.hashing import transcript_hash

LC = langchain.NAME

warnings.filterwarnings("ignore", category=UserWarning)

HUGE = '{"n": 1' + "0" * 5000 + "}"
"""Legal JSON whose integer Python's ``json`` refuses (more than 4,300 digits)."""
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
"""Legal JSON nested past Python's depth (its ``json`` raises ``RecursionError``)."""


def refused(trace: Any, **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, **options)
    return caught.value.code, caught.value.index, caught.value.path


def forms(trace: list[BaseMessage]) -> list[Any]:
    """The objects, their ``messages_to_dict`` JSON and their flat dumps."""
    dicts = json.loads(json.dumps(messages_to_dict(trace)))
    return [trace, dicts, [message.model_dump() for message in trace]]


def raw_call(text: str) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}}


# --- 1. argument text Python's json cannot convert ------------------------------------------


def read_as_invalid() -> list[tuple[str, Any, tb.ToolCall]]:
    """(place, the AI message, the call it reads as) for each place that reads unparsed text
    as a call with ``invalid_args``."""
    cases = []
    for text in (HUGE, DEEP):
        cases += [
            (
                "raw tool_calls beside an invalid_tool_calls entry",
                AIMessage(
                    "",
                    additional_kwargs={"tool_calls": [raw_call(text)]},
                    invalid_tool_calls=[{"name": "f", "args": text, "id": "c1", "error": "big"}],
                ),
                tb.ToolCall(
                    name="f", id="c1", invalid_args=text,
                    metadata={LC: {"invalid_tool_call": {"type": "invalid_tool_call",
                                                         "error": "big"}}},
                ),
            ),
            (
                "a summed stream's tool_call_chunks",
                AIMessageChunk(
                    content="", chunk_position="last",
                    tool_call_chunks=[{"name": "f", "args": text, "id": "c1", "index": 0}],
                ),
                tb.ToolCall(name="f", id="c1", invalid_args=text),
            ),
            (
                "a legacy function_call",
                AIMessage("", additional_kwargs={"function_call": {"name": "f",
                                                                   "arguments": text}}),
                tb.ToolCall(name="f", invalid_args=text, metadata={LC: {"from": "function_call"}}),
            ),
            (
                "a Responses function_call block",
                AIMessage([{"type": "function_call", "call_id": "c1", "name": "f",
                            "arguments": text}]),
                tb.ToolCall(
                    name="f", id="c1", invalid_args=text,
                    metadata={LC: {"in_content": True, "content_block": {
                        "at": 0, "block": {"type": "function_call", "arguments": text}}}},
                ),
            ),
        ]
    return cases


@pytest.mark.parametrize(
    ("message", "call"),
    [(message, call) for _, message, call in read_as_invalid()],
    ids=[f"{place}-{'huge' if call.invalid_args == HUGE else 'deep'}"
         for place, _, call in read_as_invalid()],
)
def test_text_python_cannot_convert_reads_as_an_invalid_call(
    message: BaseMessage, call: tb.ToolCall
) -> None:
    trace = [HumanMessage("q"), message]
    for form in forms(trace):
        typed = langchain.to_messages(form, allow_pending=True)
        assert typed[1].tool_calls == [call]
        assert typed[1].content == ""
    # and it goes back as it came (the writer asks the same parsers)
    written = langchain.from_messages(langchain.to_messages(trace, allow_pending=True))
    assert messages_to_dict(written) == messages_to_dict(trace)


@pytest.mark.parametrize("text", [HUGE, DEEP], ids=["huge", "deep"])
def test_raw_calls_langchain_left_out_of_its_lists_conflict(text: str) -> None:
    # LangChain's own parser gives up on the raw call and leaves both lists empty (as it
    # files other unparsable text in invalid_tool_calls, the lists then disagree with it)
    message = AIMessage("", additional_kwargs={"tool_calls": [raw_call(text)]})
    assert message.tool_calls == []
    assert message.invalid_tool_calls == []
    for form in forms([HumanMessage("q"), message]):
        assert refused(form, allow_pending=True) == (
            "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls"
        )


@pytest.mark.parametrize("text", [HUGE, DEEP], ids=["huge", "deep"])
def test_a_raw_call_beside_a_parsed_call_reads_the_same_on_the_fast_path_too(text: str) -> None:
    # the raw call names the parsed call by id: a stale copy (the call is read from
    # tool_calls, as LangChain reads it), on both paths
    message = AIMessage(
        "",
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
        additional_kwargs={"tool_calls": [raw_call(text)]},
    )
    stale = tb.ToolCall(name="f", args={}, id="c1",
                        metadata={LC: {"stale": ["additional_kwargs.tool_calls"]}})
    for form in forms([HumanMessage("q"), message]):
        for read in (langchain.to_messages, general_only_read):
            typed = read(form, allow_pending=True)
            assert typed[1].tool_calls == [stale]
            kept = {"additional_kwargs": {"tool_calls": [raw_call(text)]}}
            assert typed[1].metadata == {LC: kept}


def general_only_read(trace: Any, **options: Any) -> list[tb.Message]:
    with general_only():
        return langchain.to_messages(trace, **options)


@pytest.mark.parametrize("text", [HUGE, DEEP, "]"], ids=["huge", "deep", "not-json"])
def test_a_streamed_tool_use_whose_partial_json_does_not_parse_conflicts(text: str) -> None:
    message = AIMessage(
        [{"type": "tool_use", "id": "c1", "name": "f", "input": {}, "partial_json": text}]
    )
    for form in forms([HumanMessage("q"), message]):
        assert refused(form, allow_pending=True) == (
            "conflicting_fields", 1, "messages[1].content[0].partial_json"
        )


def test_an_un_summed_chunk_with_such_text_is_read_as_langchain_files_it() -> None:
    # not cut off mid-JSON (LangChain's partial parser does not read it as an object)
    chunk = AIMessageChunk(
        content="", tool_call_chunks=[{"name": "f", "args": HUGE, "id": "c1", "index": 0}]
    )
    assert chunk.invalid_tool_calls[0]["args"] == HUGE
    typed = langchain.to_messages([HumanMessage("q"), chunk], allow_pending=True)
    assert typed[1].tool_calls == [tb.ToolCall(name="f", id="c1", invalid_args=HUGE)]


# --- 2. a stream's last v1 chunk whose content LangChain rewrites ---------------------------

V1 = {"output_version": "v1", "model_provider": "openai"}


def v1_stream() -> list[BaseMessage]:
    """A ChatOpenAI(output_version="v1") stream summed into one chunk: one valid call, one
    whose arguments do not parse (its tool_call_chunk block stays in the content)."""
    chunk = AIMessageChunk(
        content=[
            {"type": "text", "text": "hi", "index": 0},
            {"type": "tool_call_chunk", "id": "c1", "name": "f", "args": '{"a": 1}', "index": 1},
            {"type": "tool_call_chunk", "id": "c2", "name": "g", "args": "]", "index": 2},
        ],
        tool_call_chunks=[
            {"id": "c1", "name": "f", "args": '{"a": 1}', "index": 1},
            {"id": "c2", "name": "g", "args": "]", "index": 2},
        ],
        chunk_position="last",
        response_metadata=V1,
    )
    return [HumanMessage("q"), chunk, ToolMessage("r", tool_call_id="c1")]


def test_a_v1_last_chunk_reads_and_goes_back_as_it_came() -> None:
    trace = v1_stream()
    typed = langchain.to_messages(trace, allow_pending=True)
    assert typed[1].content == [
        tb.TextPart(text="hi", metadata={LC: {"shape": "text", "block": {"type": "text",
                                                                          "index": 0}}}),
        tb.OpaquePart(kind="tool_call_chunk", value={
            "type": "tool_call_chunk", "id": "c2", "name": "g", "args": "]", "index": 2}),
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_a_repaired_call_whose_chunk_block_langchain_would_rewrite_is_refused() -> None:
    typed = langchain.to_messages(v1_stream(), allow_pending=True)
    calls = list(typed[1].tool_calls)
    calls[1] = calls[1].model_copy(update={"invalid_args": None, "args": {"b": 2}})
    edited = [typed[0], typed[1].model_copy(update={"tool_calls": calls}), typed[2]]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[1]"
    )


def last_v1_chunk_with(part: tb.OpaquePart) -> list[tb.Message]:
    metadata = {LC: {"class": "AIMessageChunk", "chunk_position": "last",
                     "response_metadata": {"output_version": "v1"}}}
    return [tb.HumanMessage(content="q"),
            tb.AIMessage(content=[tb.TextPart(text="a"), part], metadata=metadata)]


@pytest.mark.parametrize("kind", ["server_tool_call_chunk", "server_tool_call"])
def test_a_server_tool_call_block_langchain_would_parse_is_refused(kind: str) -> None:
    typed = last_v1_chunk_with(tb.OpaquePart(kind=kind, value={
        "type": kind, "id": "s1", "name": "web_search", "args": '{"q": "x"}'}))
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[1]"
    )


def test_a_server_tool_call_chunk_langchain_leaves_alone_is_written() -> None:
    typed = last_v1_chunk_with(tb.OpaquePart(kind="server_tool_call_chunk", value={
        "type": "server_tool_call_chunk", "id": "s1", "name": "web_search", "args": '{"q": '}))
    back = langchain.to_messages(langchain.from_messages(typed))
    assert back == typed
    assert transcript_hash(back) == transcript_hash(typed)


# --- 4. the reader's flags --------------------------------------------------------------------

ARTIFACT_TRACE = [
    HumanMessage("q"),
    AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]),
    ToolMessage("r", tool_call_id="c1", artifact=object()),
]


@pytest.mark.parametrize("value", ["no", "false", 1, 0, None, []])
def test_drop_artifacts_must_be_true_or_false(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^drop_artifacts must be") as caught:
        langchain.to_messages(ARTIFACT_TRACE, drop_artifacts=value)
    assert str(caught.value) == f"drop_artifacts must be True or False, got {value!r}"


@pytest.mark.parametrize("option", ["allow_pending", "drop_artifacts"])
def test_a_flag_is_checked_before_the_trace_is_read(option: str) -> None:
    broken = [HumanMessage("q"), RemoveMessage(id="x")]  # unknown_role when read
    with pytest.raises(ValueError, match=rf"^{option} must be") as caught:
        langchain.to_messages(broken, **{option: "no"})
    assert str(caught.value) == f"{option} must be True or False, got 'no'"


# --- 5. to_json is JSON, or refused -----------------------------------------------------------


def bedrock_image() -> list[tb.Message]:
    """A Bedrock Converse image block with raw bytes, read."""
    message = HumanMessage([
        {"type": "image", "image": {"format": "png", "source": {"bytes": b"\x89PNG"}}},
        {"type": "text", "text": "what is this?"},
    ])
    return langchain.to_messages([message])


@pytest.mark.parametrize(
    ("form", "path"),
    [
        ("messages", "messages[0].data.content[0].image.source.bytes"),
        ("dicts", "messages[0].data.content[0].image.source.bytes"),
        ("model_dump", "messages[0].content[0].image.source.bytes"),
        ("state", "messages[0].data.content[0].image.source.bytes"),
    ],
)
def test_to_json_refuses_raw_bytes(form: str, path: str) -> None:
    written = langchain.from_messages(bedrock_image(), form=form)  # type: ignore[arg-type]
    with pytest.raises(TraceError) as caught:
        langchain.to_json(written)
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "not_representable", 0, path, LC
    )


def test_to_json_of_the_part_without_its_bytes_marker_is_json_that_reads_back() -> None:
    typed = bedrock_image()
    image = typed[0].content[0]
    assert isinstance(image, tb.ImagePart)
    assert isinstance(typed[0].content, list)
    plain = [typed[0].model_copy(update={
        "content": [image.model_copy(update={"metadata": {}}), typed[0].content[1]]})]
    dumped = json.loads(json.dumps(langchain.to_json(langchain.from_messages(plain))))
    assert langchain.to_messages(dumped) == plain


def test_the_command_line_refuses_raw_bytes_with_a_trace_error(tmp_path: Any) -> None:
    saved = tmp_path / "typed.json"
    saved.write_text(json.dumps([m.model_dump(mode="json") for m in bedrock_image()]))
    code, out, err = run("convert", "--from", "tracebridge", "--to", "langchain", str(saved))
    assert (code, out) == (1, "")
    assert err.startswith(
        "tracebridge: cannot write langchain: langchain: "
        "messages[0].data.content[0].image.source.bytes: the JSON form of this LangChain "
        "message holds raw bytes (b'\\x89PNG')"
    )
    assert err.endswith("[not_representable]\n")
    assert "internal error" not in err


# --- 6. a user's subclass of a message class ------------------------------------------------


class TaggedHuman(HumanMessage):  # the docs' own example
    channel: str = "web"


def test_a_subclass_of_a_message_class_is_detected() -> None:
    trace = [TaggedHuman("hi"), AIMessage("hello")]
    assert langchain.detect(trace) is True
    assert langchain.detect({"messages": trace}) is True
    auto = tb.convert(trace, source="auto", target="openai_chat")
    assert auto == tb.convert(trace, source="langchain", target="openai_chat")
    assert auto == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


# --- 7. a tool_result block's is_error --------------------------------------------------------

CALLING = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "t1"}])


def with_result(is_error: Any) -> list[BaseMessage]:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": is_error}
    return [HumanMessage("q"), CALLING, HumanMessage([result])]


@pytest.mark.parametrize("is_error", [1, 0, "true", "false", [], {}])
def test_an_is_error_that_is_no_bool_is_malformed(is_error: Any) -> None:
    for form in forms(with_result(is_error)):
        assert refused(form) == ("malformed_event", 2, "messages[2].content[0].is_error")


@pytest.mark.parametrize("is_error", [1, "yes", []])
def test_the_writer_refuses_a_kept_is_error_that_is_no_bool(is_error: Any) -> None:
    # the reader refuses it: written beside the typed flag, it would say what the flag may not
    messages = langchain.to_messages(with_result(False))
    kept = messages[2].metadata["langchain"]
    block = {**kept["tool_result"]["block"], "is_error": is_error}
    edited = messages[2].model_copy(
        update={"metadata": {"langchain": {**kept, "tool_result": {**kept["tool_result"],
                                                                   "block": block}}}}
    )
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([*messages[:2], edited])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata"
    )
    # null (not set) and the booleans are written, the typed flag winning
    for flag in (None, True):
        block = {**kept["tool_result"]["block"], "is_error": flag}
        same = messages[2].model_copy(update={"metadata": {"langchain": {
            **kept, "tool_result": {**kept["tool_result"], "block": block}}}})
        back = langchain.to_messages(langchain.from_messages([*messages[:2], same]))
        assert back[2].is_error is False


# --- 3. OpenAI Responses and Bedrock reasoning has its typed home --------------------------

RS = {"id": "rs_1", "type": "reasoning",
      "summary": [{"type": "summary_text", "text": "I thought hard."}]}
OPENAI = {"model_provider": "openai", "id": "resp_1"}


def v0_reply() -> AIMessage:
    """ChatOpenAI on the Responses API, output_version="v0" (what a LangGraph run keeps)."""
    return AIMessage([{"type": "text", "text": "Answer.", "annotations": []}],
                     additional_kwargs={"reasoning": RS}, response_metadata=OPENAI, id="msg_1")


def responses_v1_reply() -> AIMessage:
    """The same reply with output_version="responses/v1": the item is a content block."""
    return AIMessage([RS, {"type": "text", "text": "Answer.", "annotations": [], "id": "msg_1"}],
                     response_metadata=OPENAI, id="resp_1")


def bedrock_reply() -> AIMessage:
    """ChatBedrockConverse's reasoning block."""
    return AIMessage(
        [{"type": "reasoning_content",
          "reasoning_content": {"text": "I thought hard.", "signature": "sig"}},
         {"type": "text", "text": "Answer."}],
        response_metadata={"model_provider": "bedrock_converse"},
    )


def lossless(trace: list[BaseMessage]) -> list[tb.Message]:
    """Read in each form (both reader paths), and back to equal LangChain objects."""
    typed = langchain.to_messages(trace)
    for form in forms(trace):
        assert langchain.to_messages(form) == typed
        with general_only():
            assert langchain.to_messages(form) == typed
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)
    dumps = [m.model_dump() for m in trace]
    assert langchain.from_messages(typed, form="model_dump") == dumps
    return typed


ANSWER_BLOCK = {LC: {"shape": "text", "block": {"type": "text", "annotations": []}}}


def test_the_v0_reasoning_item_is_a_reasoning_part_first() -> None:
    typed = lossless([HumanMessage("q"), v0_reply()])
    assert typed[1] == tb.AIMessage(
        content=[
            tb.ReasoningPart(text="I thought hard.", id="rs_1", metadata={LC: {
                "from": "reasoning", "block": {"type": "reasoning"}}}),
            tb.TextPart(text="Answer.", metadata=ANSWER_BLOCK),
        ],
        id="msg_1",
        metadata={LC: {"response_metadata": OPENAI}},
    )
    assert "I thought hard." in typed[1].pretty_repr()


def test_the_responses_v1_reasoning_block_is_a_reasoning_part() -> None:
    typed = lossless([HumanMessage("q"), responses_v1_reply()])
    assert typed[1].content == [
        tb.ReasoningPart(text="I thought hard.", id="rs_1", metadata={LC: {
            "shape": "responses_reasoning", "block": {"type": "reasoning"}}}),
        tb.TextPart(text="Answer.", metadata={LC: {"shape": "text", "block": {
            "type": "text", "annotations": [], "id": "msg_1"}}}),
    ]


def test_the_bedrock_reasoning_content_block_is_a_reasoning_part() -> None:
    typed = lossless([HumanMessage("q"), bedrock_reply()])
    assert typed[1].content == [
        tb.ReasoningPart(text="I thought hard.", metadata={LC: {
            "shape": "bedrock_reasoning",
            "block": {"type": "reasoning_content", "reasoning_content": {"signature": "sig"}}}}),
        tb.TextPart(text="Answer."),
    ]


@pytest.mark.parametrize("reply", [v0_reply, responses_v1_reply, bedrock_reply])
def test_the_reasoning_goes_to_formats_with_a_place_for_it_or_is_refused(reply: Any) -> None:
    trace = [HumanMessage("q"), reply()]
    written = tb.convert(trace, source="langchain", target="llama_index")
    assert [block.content for block in written[1].blocks if block.block_type == "thinking"] == [
        "I thought hard."
    ]
    if reply is bedrock_reply:  # no id: the Responses API would not take the item back
        with pytest.raises(TraceError) as caught:
            tb.convert(trace, source="langchain", target="openai_responses")
        error = caught.value
        assert (error.code, error.index, error.path) == (
            "not_representable", 1, "messages[1].content[0]"
        )
        return
    # the OpenAI item's id is the part's: the item goes to the Responses API as it came
    assert tb.convert(trace, source="langchain", target="openai_responses")[1] == RS


def test_the_reasoning_is_in_the_transcript_hash() -> None:
    without = AIMessage([{"type": "text", "text": "Answer.", "annotations": []}],
                        response_metadata=OPENAI, id="msg_1")
    assert transcript_hash(langchain.to_messages([HumanMessage("q"), v0_reply()])) != (
        transcript_hash(langchain.to_messages([HumanMessage("q"), without]))
    )


SUMMARIES = [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]


@pytest.mark.parametrize(
    ("kwargs", "content", "parts"),
    [
        (  # a string content: it goes back as the string
            {"reasoning": RS}, "Answer.",
            [tb.ReasoningPart(text="I thought hard.", id="rs_1", metadata={LC: {
                "from": "reasoning", "block": {"type": "reasoning"},
                "content": "string"}}),
             tb.TextPart(text="Answer.")],
        ),
        (  # reasoning_content first, then the item
            {"reasoning": RS, "reasoning_content": "rc"}, "Answer.",
            [tb.ReasoningPart(text="rc", metadata={LC: {"from": "reasoning_content",
                                                       "content": "string"}}),
             tb.ReasoningPart(text="I thought hard.", id="rs_1", metadata={LC: {
                 "from": "reasoning", "block": {"type": "reasoning"}}}),
             tb.TextPart(text="Answer.")],
        ),
        (  # two summary entries, an encrypted item: kept, with its id (typed, it would go
            # to the Responses API without the encrypted content)
            {"reasoning": {**RS, "summary": SUMMARIES, "encrypted_content": "gAAA"}}, "",
            [tb.ReasoningPart(text="a\n\nb", metadata={LC: {
                "from": "reasoning", "content": "string",
                "block": {"id": "rs_1", "type": "reasoning", "summary": SUMMARIES,
                          "encrypted_content": "gAAA"}}})],
        ),
        (  # an empty summary (what a model asked for no summary gives): kept, with its id
            # (typed, it would go to the Responses API as a summary of one empty entry)
            {"reasoning": {**RS, "summary": []}}, "",
            [tb.ReasoningPart(text="", metadata={LC: {
                "from": "reasoning", "content": "string",
                "block": {"id": "rs_1", "type": "reasoning", "summary": []}}})],
        ),
    ],
    ids=["string", "after-reasoning-content", "two-entries", "empty-summary"],
)
def test_the_reasoning_item_reads_and_goes_back_exactly(
    kwargs: dict[str, Any], content: str, parts: list[tb.Part]
) -> None:
    typed = lossless([HumanMessage("q"), AIMessage(content, additional_kwargs=kwargs)])
    assert typed[1].content == parts


@pytest.mark.parametrize(
    "value", [None, {"effort": "high"}, {"type": "reasoning", "id": "rs_1"}, "text"]
)
def test_another_reasoning_value_stays_in_additional_kwargs(value: Any) -> None:
    typed = lossless([HumanMessage("q"), AIMessage("x", additional_kwargs={"reasoning": value})])
    assert typed[1].content == "x"
    assert typed[1].metadata == {LC: {"additional_kwargs": {"reasoning": value}}}


def test_a_redacted_bedrock_reasoning_block_stays_opaque() -> None:
    block = {"type": "reasoning_content", "reasoning_content": {"redacted_content": "abc"}}
    typed = lossless([HumanMessage("q"), AIMessage([block])])
    assert typed[1].content == [tb.OpaquePart(kind="reasoning_content", value=block)]


def test_edited_reasoning_text_goes_back_as_the_summary() -> None:
    trace = [HumanMessage("q"), AIMessage("A", additional_kwargs={
        "reasoning": {**RS, "summary": SUMMARIES}})]
    typed = langchain.to_messages(trace)
    content = typed[1].content
    assert isinstance(content, list)
    kept = content[0].metadata[LC]
    with pytest.raises(TraceError) as caught:  # the kept summary no longer joins to the text
        langchain.from_messages([typed[0], typed[1].model_copy(update={
            "content": [content[0].model_copy(update={"text": "redacted"}), content[1]]})])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain")
    # the id stays in the item beside the kept summary; with the summary out, it is the part's
    assert content[0].id is None
    unkept = {**kept, "block": {k: v for k, v in kept["block"].items()
                                if k not in ("summary", "id")}}
    edited = [typed[0], typed[1].model_copy(update={"content": [content[0].model_copy(
        update={"text": "redacted", "id": "rs_1", "metadata": {LC: unkept}}), content[1]]})]
    written = langchain.from_messages(edited)
    assert written[1].additional_kwargs == {"reasoning": {
        "id": "rs_1", "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "redacted"}]}}
    back = langchain.to_messages(written)
    assert back[1].content[0] == tb.ReasoningPart(text="redacted", id="rs_1", metadata={LC: {
        "from": "reasoning", "block": {"type": "reasoning"}, "content": "string"}})
    assert transcript_hash(back) == transcript_hash(edited)
    assert back == edited


def marked(**mark: Any) -> tb.ReasoningPart:
    return tb.ReasoningPart(text="r", metadata={LC: {"from": "reasoning", **mark}})


ITEM = {"id": "rs_1", "type": "reasoning"}


@pytest.mark.parametrize(
    ("content", "code", "path"),
    [
        ([tb.TextPart(text="a"), marked(block=ITEM)],
         "not_representable", "messages[1].content[1].metadata"),
        ([marked(block=ITEM, extra=1)],
         "not_representable", "messages[1].content[0].metadata.langchain.extra"),
        ([tb.ReasoningPart(text="s", metadata={LC: {"from": "reasoning_content"}}),
          marked(block=ITEM, content="string")],
         "not_representable", "messages[1].content[1].metadata.langchain.content"),
        ([marked(block=None)],
         "malformed_event", "messages[1].content[0].metadata.langchain.block"),
        ([marked(block={"type": "thinking"})],
         "not_representable", "messages[1].content[0].metadata.langchain.block"),
    ],
    ids=["not-first", "unknown-key", "content-on-second", "block-not-object", "block-type"],
)
def test_a_reasoning_mark_the_writer_cannot_follow_is_refused(
    content: list[tb.Part], code: str, path: str
) -> None:
    typed = [tb.HumanMessage(content="q"), tb.AIMessage(content=content)]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    error = caught.value
    assert (error.code, error.index, error.path) == (code, 1, path)


def test_a_kept_reasoning_item_in_additional_kwargs_is_refused() -> None:
    typed = [tb.HumanMessage(content="q"), tb.AIMessage(
        content="x", metadata={LC: {"additional_kwargs": {"reasoning": RS}}})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].metadata.langchain.additional_kwargs.reasoning"
    )


def test_an_opaque_part_holding_a_reasoning_block_is_refused() -> None:
    # it would read back as a reasoning part
    typed = [tb.HumanMessage(content="q"),
             tb.AIMessage(content=[tb.OpaquePart(kind="reasoning", value=RS)])]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[0]"
    )
