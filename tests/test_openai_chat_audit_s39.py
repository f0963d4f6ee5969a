"""Chat Completions (``openai_chat``, and ``swarm``, the same reader and writer), audit s39.

* A tool call holding the other call type's key (a function call with a ``custom`` key, null
  included; a custom call with a ``function`` key) is read with the key kept in the call's
  ``fields``, as any unknown key: the writer refused its own reader's output there, as if the
  key were the call's own object.
* A legacy ``function`` message takes its content only as a string or null
  (``ChatCompletionFunctionMessageParam``): parts there were written (and read), a history
  the API refuses. Now ``not_representable`` / ``malformed_event`` at ``messages[i].content``.
* The conversation rules' errors on the legacy shapes named keys the source message does not
  have (``tool_calls[0]`` of a ``function_call`` message, the ``tool_call_id`` of a
  ``function`` message): they point at ``function_call`` / the message now.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import FunctionMessage
from langchain_core.messages import HumanMessage as LangChainHuman

from tracebridge import (
    AIMessage,
    HumanMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import langchain, openai_chat, swarm

from law_kits.openai_chat import api_problems

ADAPTERS = pytest.mark.parametrize("adapter", [openai_chat, swarm], ids=["openai_chat", "swarm"])

USER = {"role": "user", "content": "q"}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "r"}
LEGACY = {"role": "assistant", "content": None,
          "function_call": {"name": "f", "arguments": "{}"}}
FUNCTION_RESULT = {"role": "function", "name": "f", "content": "r"}


def _read_refused(adapter: ModuleType, trace: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(trace, **options)
    return caught.value


def _write_refused(adapter: ModuleType, messages: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    return caught.value


def _where(error: TraceError) -> tuple[str, int | None, str | None, str | None]:
    return error.code, error.index, error.path, error.source


# --- a call holding the other call type's key ---------------------------------------------

FUNCTION = {"name": "f", "arguments": "{}"}
CUSTOM = {"name": "g", "input": "x"}


@ADAPTERS
@pytest.mark.parametrize(
    ("call", "typed"),
    [
        ({"id": "c1", "type": "function", "function": FUNCTION, "custom": None},
         ToolCall(name="f", id="c1", metadata={"@": {"fields": {"custom": None}}})),
        ({"id": "c1", "type": "function", "function": FUNCTION, "custom": CUSTOM},
         ToolCall(name="f", id="c1", metadata={"@": {"fields": {"custom": CUSTOM}}})),
        ({"id": "c1", "type": "custom", "custom": CUSTOM, "function": FUNCTION},
         ToolCall(name="g", args={"input": "x"}, id="c1", kind="custom",
                  metadata={"@": {"fields": {"function": FUNCTION}}})),
        ({"id": "c1", "type": "custom", "custom": CUSTOM, "function": None},
         ToolCall(name="g", args={"input": "x"}, id="c1", kind="custom",
                  metadata={"@": {"fields": {"function": None}}})),
    ],
    ids=["function+custom:null", "function+custom", "custom+function", "custom+function:null"],
)
def test_a_call_with_the_other_types_key_roundtrips(
    adapter: ModuleType, call: dict[str, Any], typed: ToolCall
) -> None:
    trace = [USER, {"role": "assistant", "content": None, "tool_calls": [call]}, RESULT]
    messages = adapter.to_messages(trace)
    expected = typed.model_copy(update={"metadata": {adapter.NAME: typed.metadata["@"]}})
    assert messages[1].tool_calls == [expected]
    assert adapter.from_messages(messages) == trace


@ADAPTERS
def test_a_typed_call_keeping_the_other_types_key_is_written_with_it(
    adapter: ModuleType,
) -> None:
    ns = adapter.NAME
    function = ToolCall(name="f", id="c1", metadata={ns: {"fields": {"custom": None}}})
    custom = ToolCall(name="g", args={"input": "x"}, id="c2", kind="custom",
                      metadata={ns: {"fields": {"function": FUNCTION}}})
    messages = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[function, custom]),
        ToolMessage(content="r1", tool_call_id="c1"),
        ToolMessage(content="r2", tool_call_id="c2"),
    ]
    written = adapter.from_messages(messages)
    assert written[1]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": FUNCTION, "custom": None},
        {"id": "c2", "type": "custom", "custom": CUSTOM, "function": FUNCTION},
    ]
    assert adapter.to_messages(written) == messages
    # a call's own object kept in its fields is still refused: it would replace the typed one
    own = custom.model_copy(update={"metadata": {ns: {"fields": {"custom": CUSTOM}}}})
    assert _where(_write_refused(adapter, [*messages[:1], AIMessage(tool_calls=[function, own]),
                                            *messages[2:]])) == (
        "not_representable", 1, f"messages[1].tool_calls[1].metadata.{ns}.fields.custom", ns)


# --- a function message takes no parts ------------------------------------------------------

PARTS_DETAIL = (
    "Chat Completions takes a function message's content only as a string (or null), not as "
    "a list of parts (found {n} part(s)); a result with a tool_call_id (answering a call with "
    "an id) is a tool message, which takes text parts"
)


def _legacy_answered_by(content: Any) -> list[Any]:
    return [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="lookup")]),
        ToolMessage(content=content, name="lookup"),
    ]


@ADAPTERS
@pytest.mark.parametrize(
    "content",
    [[TextPart(text="part 1"), TextPart(text="part 2")], [TextPart(text="only")], []],
    ids=["two-text-parts", "one-text-part", "no-parts"],
)
def test_a_function_result_with_parts_is_not_representable(
    adapter: ModuleType, content: list[Any]
) -> None:
    error = _write_refused(adapter, _legacy_answered_by(content))
    assert _where(error) == ("not_representable", 2, "messages[2].content", adapter.NAME)
    assert error.detail == PARTS_DETAIL.format(n=len(content))


@ADAPTERS
def test_a_function_result_with_text_is_still_written(adapter: ModuleType) -> None:
    written = adapter.from_messages(_legacy_answered_by("part 1"))
    assert written[2] == {"role": "function", "content": "part 1", "name": "lookup"}
    assert api_problems([*written, {"role": "assistant", "content": "done"}]) == []
    # the same result with parts, once refused, is not written in any other way
    assert _where(_write_refused(adapter, _legacy_answered_by([TextPart(text="part 1")]))) == (
        "not_representable", 2, "messages[2].content", adapter.NAME)


def test_a_langchain_function_message_with_blocks_is_not_written_as_parts() -> None:
    history = [
        LangChainHuman(content="q"),
        LangChainAI(content="", additional_kwargs={
            "function_call": {"name": "lookup", "arguments": "{}"}}),
        FunctionMessage(name="lookup", content=[{"type": "text", "text": "part 1"},
                                                {"type": "text", "text": "part 2"}]),
    ]
    messages = langchain.to_messages(history)
    assert messages[2].content == [TextPart(text="part 1"), TextPart(text="part 2")]
    error = _write_refused(openai_chat, messages)
    assert _where(error) == ("not_representable", 2, "messages[2].content", "openai_chat")
    assert error.detail == PARTS_DETAIL.format(n=2)


@ADAPTERS
@pytest.mark.parametrize(
    ("content", "found"),
    [([{"type": "text", "text": "r"}], "list [{'type': 'text', 'text': 'r'}]"),
     ([], "list []")],
    ids=["text-part", "empty-list"],
)
def test_a_function_message_with_parts_is_malformed(
    adapter: ModuleType, content: list[Any], found: str
) -> None:
    trace = [USER, LEGACY, {"role": "function", "name": "f", "content": content}]
    error = _read_refused(adapter, trace)
    assert _where(error) == ("malformed_event", 2, "messages[2].content", adapter.NAME)
    assert error.detail == (
        f"a function message's content is a string or null, not a list of parts; got {found}"
    )


# --- rule errors on the legacy shapes point at keys the message has --------------------------


@ADAPTERS
@pytest.mark.parametrize(
    ("trace", "options", "expected"),
    [
        ([USER, LEGACY, USER], {},
         ("unanswered_tool_call", 1, "messages[1].function_call",
          "tool call 'f' has no result before messages[2]")),
        ([USER, LEGACY], {},
         ("unanswered_tool_call", 1, "messages[1].function_call",
          "tool call 'f' has no result before the conversation ends (allow_pending=True "
          "accepts a trace cut mid-tool)")),
        ([USER, LEGACY, USER, LEGACY], {"allow_pending": True},
         ("unanswered_tool_call", 1, "messages[1].function_call",
          "tool call 'f' has no result before messages[2]")),
        ([USER, LEGACY, FUNCTION_RESULT, FUNCTION_RESULT], {},
         ("orphan_tool_result", 3, "messages[3]",
          "tool result has no id and all 1 call(s) of messages[1] are already answered")),
        ([USER, FUNCTION_RESULT], {},
         ("orphan_tool_result", 1, "messages[1]",
          "tool result answers nothing: no AIMessage comes before it")),
        ([USER, {"role": "assistant", "content": "hi"}, FUNCTION_RESULT], {},
         ("orphan_tool_result", 2, "messages[2]",
          "tool result answers nothing: the AIMessage at messages[1] has no tool calls")),
        ([USER, LEGACY, FUNCTION_RESULT, USER, FUNCTION_RESULT], {},
         ("orphan_tool_result", 4, "messages[4]",
          "tool result answers nothing: it must follow an AIMessage or a ToolMessage, not a "
          "human message")),
    ],
    ids=["unanswered-then-user", "unanswered-at-end", "unanswered-pending-not-last",
         "two-results", "no-call-before", "after-a-text-reply", "after-a-user-message"],
)
def test_legacy_rule_errors_point_at_keys_the_message_has(
    adapter: ModuleType, trace: list[Any], options: dict[str, Any],
    expected: tuple[str, int, str, str],
) -> None:
    error = _read_refused(adapter, trace, **options)
    assert (error.code, error.index, error.path, error.detail) == expected
    assert error.source == adapter.NAME
    assert str(error) == f"{adapter.NAME}: {expected[2]}: {expected[3]} [{expected[0]}]"


@ADAPTERS
def test_rule_errors_on_calls_with_ids_keep_their_paths(adapter: ModuleType) -> None:
    assert _where(_read_refused(adapter, [USER, LEGACY, USER])) == (
        "unanswered_tool_call", 1, "messages[1].function_call", adapter.NAME)
    # what a message with tool_calls / a tool message has: as before
    calls = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": FUNCTION}]}
    assert _where(_read_refused(adapter, [USER, calls, USER])) == (
        "unanswered_tool_call", 1, "messages[1].tool_calls[0]", adapter.NAME)
    assert _where(_read_refused(adapter, [USER, RESULT])) == (
        "orphan_tool_result", 1, "messages[1].tool_call_id", adapter.NAME)
    assert _where(_read_refused(adapter, [USER, LEGACY, RESULT])) == (
        "orphan_tool_result", 2, "messages[2].tool_call_id", adapter.NAME)
