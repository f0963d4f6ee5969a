"""The LlamaIndex writer refuses kept values that contradict the typed message it writes.

Three kept values of ``metadata["llama_index"]`` were read without a refusal and then not
written (docs/adapters/llama_index.md listed them): a ``role`` of another kind (the kind's
default was written), a ``layout`` whose counts do not match the message (the calls followed
the parts), and a key of the kept ``additional_kwargs`` that the reader reads into a typed
field (left out, or written over by the typed value). Each is now ``not_representable`` at the
kept key, unless it is exactly what is written anyway. What the readers keep is still written
as it was: a ChatMessage giving a tool result's call id under both keys lost its ``call_id``.
"""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    Message,
    OpaquePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index

NS = "llama_index"
H = HumanMessage(content="q")
CALL = ToolCall(name="f", args={"a": 1}, id="c1")
A = AIMessage(content="", tool_calls=[CALL])


def refusal(messages: list[Message], **options: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, **options)
    error = caught.value
    return error.code, error.index, error.path, error.detail


def dumps(messages: list[Any]) -> list[Any]:
    return [m if isinstance(m, dict) else m.model_dump(mode="json") for m in messages]


def round_trip(history: list[Any]) -> list[Any]:
    return dumps(llama_index.from_messages(llama_index.to_messages(history)))


# --- a kept role ---------------------------------------------------------------------------

ROLES = "system, developer, user, assistant, chatbot, model, tool, function"


def role_lost(stored: str, said: str, written: str) -> str:
    return (f"metadata['llama_index']['role'] {stored!r} {said}: the ChatMessage is written "
            f"with the role {written!r}, so the kept role would be lost")


@pytest.mark.parametrize(("messages", "index", "detail"), [
    ([H, AIMessage(content="a", metadata={NS: {"role": "user"}})], 1, role_lost(
        "user", "is the role of a user message, not of an assistant message", "assistant")),
    ([H, A, ToolMessage(content="r", tool_call_id="c1", metadata={NS: {"role": "assistant"}})],
     2, role_lost("assistant", "is the role of an assistant-side message, not of a tool result",
                  "tool")),
    ([HumanMessage(content="q", metadata={NS: {"role": "model"}})], 0, role_lost(
        "model", "is the role of an assistant-side message, not of a user message", "user")),
    ([H, AIMessage(content="a", metadata={NS: {"role": "bogus"}})], 1, role_lost(
        "bogus", f"is no LlamaIndex role ({ROLES})", "assistant")),
    ([SystemMessage(content="s", metadata={NS: {"role": "user"}})], 0, role_lost(
        "user", "is not the SystemMessage's role ('system')", "system")),
    ([SystemMessage(content="s", role="developer", metadata={NS: {"role": "system"}})], 0,
     role_lost("system", "is not the SystemMessage's role ('developer')", "developer")),
])
def test_a_kept_role_that_is_not_written_is_refused(
    messages: list[Message], index: int, detail: str
) -> None:
    assert refusal(messages) == ("not_representable", index,
                                 f"messages[{index}].metadata.llama_index.role", detail)


@pytest.mark.parametrize(("message", "role"), [
    (AIMessage(content="a", metadata={NS: {"role": "chatbot"}}), "chatbot"),
    (AIMessage(content="a", metadata={NS: {"role": "assistant"}}), "assistant"),
    (HumanMessage(content="a", metadata={NS: {"role": "user"}}), "user"),
    (SystemMessage(content="a", metadata={NS: {"role": "system"}}), "system"),
    (SystemMessage(content="a", role="developer", metadata={NS: {"role": "developer"}}),
     "developer"),
])
def test_a_kept_role_that_is_written_is_taken(message: Message, role: str) -> None:
    (written,) = llama_index.from_messages([message])
    assert written.role == role


def test_the_roles_the_reader_keeps_are_written_back() -> None:
    history = [ChatMessage(role="user", content="q"), ChatMessage(role="model", content="a"),
               ChatMessage(role="chatbot", blocks=[ToolCallBlock(
                   tool_call_id=None, tool_name="f", tool_kwargs={})]),
               ChatMessage(role="function", content="r", additional_kwargs={"name": "f"})]
    assert round_trip(history) == dumps(history)


# --- a kept layout -------------------------------------------------------------------------


def layout_lost(layout: list[str], parts: int, calls: int) -> str:
    return (f"metadata['llama_index']['layout'] {layout!r} does not count the message's "
            f"blocks: {parts} parts to write as blocks, {calls} calls as ToolCallBlocks (it has "
            f"{layout.count('part')} 'part', {layout.count('call')} 'call'); the calls would "
            f"follow the parts, and the kept order would be lost")


@pytest.mark.parametrize(("message", "layout", "parts", "calls"), [
    (AIMessage(content=[TextPart(text="a"), TextPart(text="b")], tool_calls=[CALL]),
     ["call", "part"], 2, 1),
    (AIMessage(content="a", tool_calls=[CALL]), ["call", "part", "call"], 1, 1),
    (AIMessage(content="a"), ["call", "part"], 1, 0),
    # a custom call is written as an entry, not as a ToolCallBlock
    (AIMessage(content="a", tool_calls=[ToolCall(name="g", args={"input": "x"}, id="c1",
                                                 kind="custom")]), ["call", "part"], 1, 0),
])
def test_a_kept_layout_whose_counts_are_not_the_messages_is_refused(
    message: AIMessage, layout: list[str], parts: int, calls: int
) -> None:
    kept = message.model_copy(update={"metadata": {NS: {"layout": layout}}})
    assert refusal([H, kept]) == ("not_representable", 1,
                                  "messages[1].metadata.llama_index.layout",
                                  layout_lost(layout, parts, calls))


def test_a_part_left_out_by_drop_keeps_the_order_of_the_others() -> None:
    # It used to make the counts differ, and the calls then followed all the parts.
    reply = AIMessage(content=[TextPart(text="a"), OpaquePart(kind="x", value={"x": 1}),
                               TextPart(text="b")], tool_calls=[CALL],
                      metadata={NS: {"layout": ["part", "call", "part", "part"]}})
    (_, written) = llama_index.from_messages([H, reply], drop=["opaque_parts"])
    assert [block.block_type for block in written.blocks] == ["text", "tool_call", "text"]
    assert [getattr(block, "text", None) for block in written.blocks] == ["a", None, "b"]


def test_the_layout_the_reader_keeps_is_written_back() -> None:
    history = [ChatMessage(role="user", content="q"), ChatMessage(role="assistant", blocks=[
        TextBlock(text="a"), ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={}),
        TextBlock(text="b")]), ChatMessage(role="tool", content="r",
                                           additional_kwargs={"tool_call_id": "c1"})]
    assert llama_index.to_messages(history)[1].metadata == {
        NS: {"layout": ["part", "call", "part"]}}
    assert round_trip(history) == dumps(history)


# --- a kept additional_kwargs key the reader reads into a typed field ----------------------


def kwargs_lost(key: str, stored: str, home: str, writes: str) -> str:
    return (f"metadata['llama_index']['additional_kwargs'][{key!r}] keeps {stored} under the "
            f"key the reader reads {home} from, where the writer writes {writes}: the kept "
            f"value contradicts the typed message, and would be lost")


def written_and_read_back(message: Message) -> tuple[Any, Message]:
    """The ChatMessage written for ``message`` (after a question, and a call it answers), and
    the typed message read from it."""
    messages = [H, A, message] if isinstance(message, ToolMessage) else [H, message]
    written = llama_index.from_messages(messages)
    return written[-1], llama_index.to_messages(written)[-1]


def kwargs(**kept: Any) -> dict[str, Any]:
    return {NS: {"additional_kwargs": kept}}


ENTRY = {"id": "c9", "type": "function", "function": {"name": "g", "arguments": "{}"}}
CUSTOM = ToolCall(name="g", args={"input": "x"}, id="c1", kind="custom")
WHOLE = {"url": "https://a.com", "title": "A", "start_index": 0, "end_index": 1}
ANNOTATION = {"type": "url_citation", "url_citation": WHOLE}
LEGACY = ToolCall(name="k", args={}, metadata={NS: {"function_call": {"arguments": "{}"}}})


@pytest.mark.parametrize(("messages", "index", "key", "detail"), [
    # the finding's shapes: left out
    ([H, AIMessage(content="a", metadata=kwargs(name="bob"))], 1, "name",
     kwargs_lost("name", "'bob'", "the message's name (name=None)", "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(refusal="no"))], 1, "refusal",
     kwargs_lost("refusal", "'no'", "the message's refusal (a last RefusalPart)", "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(tool_calls=[ENTRY]))], 1, "tool_calls",
     kwargs_lost("tool_calls", repr([ENTRY]), "the message's tool calls (0 of them)",
                 "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(function_call={"name": "g", "arguments": "{}"}))],
     1, "function_call", kwargs_lost("function_call", "{'name': 'g', 'arguments': '{}'}",
                                     "the message's tool calls (0 of them)", "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(audio={"id": "x"}))], 1, "audio",
     kwargs_lost("audio", "{'id': 'x'}", "the message's spoken reply (audio=None)", "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(reference_audio_id="x"))], 1,
     "reference_audio_id", kwargs_lost("reference_audio_id", "'x'",
                                       "the message's spoken reply (audio=None)", "nothing")),
    ([H, AIMessage(content="a", metadata=kwargs(annotations=[ANNOTATION]))], 1, "annotations",
     kwargs_lost("annotations", repr([ANNOTATION]), "the message's citations (0 of them)",
                 "nothing")),
    ([H, AIMessage(content="", tool_calls=[ToolCall(name="f", args={})]),
      ToolMessage(content="r", metadata=kwargs(tool_call_id="c1"))], 2, "tool_call_id",
     kwargs_lost("tool_call_id", "'c1'", "the result's call id (tool_call_id=None)",
                 "nothing")),
    # ... another value than the typed one, which is written
    ([H, AIMessage(content="a", name="al", metadata=kwargs(name="bob"))], 1, "name",
     kwargs_lost("name", "'bob'", "the message's name (name='al')", "'al'")),
    ([SystemMessage(content="s", name="al", metadata=kwargs(name="bob"))], 0, "name",
     kwargs_lost("name", "'bob'", "the message's name (name='al')", "'al'")),
    ([H, A, ToolMessage(content="r", tool_call_id="c1", metadata=kwargs(tool_call_id="zz"))], 2,
     "tool_call_id", kwargs_lost("tool_call_id", "'zz'",
                                 "the result's call id (tool_call_id='c1')", "'c1'")),
    ([H, A, ToolMessage(content="r", tool_call_id="c1", metadata=kwargs(call_id="zz"))], 2,
     "call_id", kwargs_lost("call_id", "'zz'", "the result's call id (tool_call_id='c1')",
                            "nothing")),
    # ... and kept values the typed one is written over (the reader keeps a null verbatim)
    ([H, AIMessage(content="a", name="al", metadata=kwargs(name=None))], 1, "name",
     kwargs_lost("name", "None", "the message's name (name='al')", "'al'")),
    ([H, A, ToolMessage(content="r", tool_call_id="c1", metadata=kwargs(tool_call_id=None))], 2,
     "tool_call_id", kwargs_lost("tool_call_id", "None",
                                 "the result's call id (tool_call_id='c1')", "'c1'")),
    ([H, AIMessage(content=[RefusalPart(text="no")], metadata=kwargs(refusal=None))], 1,
     "refusal", kwargs_lost("refusal", "None", "the message's refusal (a last RefusalPart)",
                            "'no'")),
    ([H, AIMessage(content="", tool_calls=[CUSTOM], metadata=kwargs(tool_calls=[]))], 1,
     "tool_calls", kwargs_lost("tool_calls", "[]", "the message's tool calls (1 of them)",
                               "[{'type': 'custom', 'custom': {'name': 'g', 'input': 'x'}, "
                               "'id': 'c1'}]")),
    ([H, AIMessage(content="", tool_calls=[LEGACY], metadata=kwargs(function_call=None))], 1,
     "function_call", kwargs_lost("function_call", "None",
                                  "the message's tool calls (1 of them)",
                                  "{'arguments': '{}', 'name': 'k'}")),
    ([H, AIMessage(content="a", audio=AudioReference(id="x", transcript="hi"),
                   metadata=kwargs(audio=None))], 1, "audio",
     kwargs_lost("audio", "None", "the message's spoken reply (audio=set)",
                 "{'id': 'x', 'transcript': 'hi'}")),
    ([H, AIMessage(content="a", citations=[Citation(**WHOLE)],
                   metadata=kwargs(annotations=[]))], 1, "annotations",
     kwargs_lost("annotations", "[]", "the message's citations (1 of them)",
                 "[{'type': 'url_citation', 'url_citation': {'url': 'https://a.com', "
                 "'title': 'A', 'start_index': 0, 'end_index': 1}}]")),
])
def test_a_kept_kwarg_that_contradicts_its_typed_field_is_refused(
    messages: list[Message], index: int, key: str, detail: str
) -> None:
    assert refusal(messages, drop=["is_error"]) == (
        "not_representable", index,
        f"messages[{index}].metadata.llama_index.additional_kwargs.{key}", detail)


@pytest.mark.parametrize(("message", "key", "value"), [
    (AIMessage(content="a", name="al", metadata=kwargs(name="al")), "name", "al"),
    (AIMessage(content=[RefusalPart(text="no")], metadata=kwargs(refusal="no")), "refusal", "no"),
    (AIMessage(content="a", citations=[Citation(**WHOLE)],
               metadata=kwargs(annotations=[ANNOTATION])), "annotations", [ANNOTATION]),
    (ToolMessage(content="r", tool_call_id="c1", metadata=kwargs(tool_call_id="c1")),
     "tool_call_id", "c1"),
])
def test_a_kept_kwarg_that_is_what_is_written_is_taken(
    message: Message, key: str, value: Any
) -> None:
    # The typed field writes that very value there: nothing is lost (it reads back typed).
    written, back = written_and_read_back(message)
    assert written.additional_kwargs[key] == value
    assert back == message.model_copy(update={"metadata": {}})


@pytest.mark.parametrize("message", [
    AIMessage(content="a", metadata=kwargs(name=None, refusal=None, tool_calls=[],
                                           annotations=[], audio=None, tool_call_id="x")),
    HumanMessage(content="a", metadata=kwargs(refusal="no", tool_calls=[ENTRY])),
    ToolMessage(content="r", tool_call_id="c1", metadata=kwargs(refusal="no", call_id=None)),
])
def test_a_kept_kwarg_no_typed_field_is_read_from_is_written_verbatim(message: Message) -> None:
    assert written_and_read_back(message)[1] == message


def test_a_call_id_given_under_both_keys_is_written_back() -> None:
    # It lost its call_id: the reader keeps it (tool_call_id is read), the writer left it out.
    history = [ChatMessage(role="user", content="q"),
               ChatMessage(role="assistant", blocks=[
                   ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={})]),
               ChatMessage(role="tool", content="r",
                           additional_kwargs={"tool_call_id": "c1", "call_id": "c1"})]
    assert llama_index.to_messages(history)[2].metadata == {
        NS: {"additional_kwargs": {"call_id": "c1"}}}
    assert round_trip(history) == dumps(history)


@pytest.mark.parametrize("extra", [
    {"call_id": "c1"},
    {"call_id": "c1", "tool_call_id": None},
    {"tool_call_id": "c1", "call_id": None},
    {"call_id": "c1", "name": "f", "x": 1},
])
def test_the_call_ids_the_reader_keeps_are_written_back(extra: dict[str, Any]) -> None:
    history = [ChatMessage(role="user", content="q"),
               ChatMessage(role="assistant", blocks=[
                   ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={})]),
               ChatMessage(role="tool", content="r", additional_kwargs=extra)]
    assert round_trip(history) == dumps(history)
