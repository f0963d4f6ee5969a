"""langchain: a legacy ``function_call`` kept as a copy beside parsed calls (Gemini, GigaChat),
raw call arguments that are not JSON text, and the field a dict message's validation refuses.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)

from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.messages import ToolCall

LC = "langchain"


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


def rejected(trace: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace, **options)
    return caught.value


def written(trace: list[BaseMessage]) -> list[dict[str, Any]]:
    return messages_to_dict(langchain.from_messages(langchain.to_messages(trace)))


# --- a legacy function_call beside parsed calls is a copy ------------------------------------

PARIS = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
ROME = {"name": "get_weather", "arguments": '{"city": "Rome"}'}
TWO_CALLS = [
    {"name": "get_weather", "args": {"city": "Paris"}, "id": "a-1"},
    {"name": "get_weather", "args": {"city": "Rome"}, "id": "a-2"},
]


def gemini(function_call: Any, calls: list[dict[str, Any]]) -> AIMessage:
    """A ChatGoogleGenerativeAI reply: every call in tool_calls, the last one in
    additional_kwargs["function_call"] as well."""
    return AIMessage("", additional_kwargs={"function_call": function_call}, tool_calls=calls)


def answered(ai: BaseMessage) -> list[BaseMessage]:
    return [
        HumanMessage("Weather?"),
        ai,
        ToolMessage("18C", tool_call_id="a-1", name="get_weather"),
        ToolMessage("20C", tool_call_id="a-2", name="get_weather"),
        AIMessage("Done."),
    ]


def test_a_function_call_copy_of_the_one_call_reads_as_that_call() -> None:
    ai = gemini(PARIS, TWO_CALLS[:1])
    trace = [HumanMessage("Weather?"), ai, ToolMessage("18C", tool_call_id="a-1"), AIMessage("18C")]
    typed = langchain.to_messages(trace)
    assert typed[1].tool_calls == [ToolCall(name="get_weather", args={"city": "Paris"}, id="a-1")]
    assert typed[1].metadata == {LC: {"additional_kwargs": {"function_call": PARIS}}}
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_a_function_call_copy_of_the_last_parallel_call_reads_as_the_parallel_calls() -> None:
    trace = answered(gemini(ROME, TWO_CALLS))
    typed = langchain.to_messages(trace)
    assert [(c.name, c.args, c.id, c.metadata) for c in typed[1].tool_calls] == [
        ("get_weather", {"city": "Paris"}, "a-1", {}),
        ("get_weather", {"city": "Rome"}, "a-2", {}),
    ]
    assert written(trace) == messages_to_dict(trace)
    assert langchain.to_messages(messages_to_dict(trace)) == typed


def test_a_copy_of_an_earlier_call_is_a_copy_too() -> None:
    trace = answered(gemini(PARIS, TWO_CALLS))
    assert len(langchain.to_messages(trace)[1].tool_calls) == 2
    assert written(trace) == messages_to_dict(trace)


def test_a_pending_gemini_reply_has_only_its_parsed_calls() -> None:
    typed = langchain.to_messages([HumanMessage("Weather?"), gemini(ROME, TWO_CALLS)],
                                  allow_pending=True)
    assert [c.id for c in typed[1].tool_calls] == ["a-1", "a-2"]


def streamed_gemini() -> AIMessageChunk:
    """Two chunks of one call each, summed: LangChain joins the function_call strings."""
    first = AIMessageChunk(
        "",
        additional_kwargs={"function_call": PARIS},
        tool_call_chunks=[{"name": "get_weather", "args": '{"city": "Paris"}', "id": "a-1",
                           "index": 0}],
    )
    second = AIMessageChunk(
        "",
        additional_kwargs={"function_call": {"name": "get_time", "arguments": '{"tz": "CET"}'}},
        tool_call_chunks=[{"name": "get_time", "args": '{"tz": "CET"}', "id": "a-2",
                           "index": 1}],
        chunk_position="last",
    )
    summed = first + second
    assert summed.additional_kwargs["function_call"] == {
        "name": "get_weatherget_time", "arguments": '{"city": "Paris"}{"tz": "CET"}'}
    return summed


def test_a_summed_stream_s_joined_function_call_is_a_copy_of_its_calls() -> None:
    trace = answered(streamed_gemini())
    typed = langchain.to_messages(trace)
    assert [(c.name, c.args, c.id) for c in typed[1].tool_calls] == [
        ("get_weather", {"city": "Paris"}, "a-1"),
        ("get_time", {"tz": "CET"}, "a-2"),
    ]
    assert written(trace) == messages_to_dict(trace)


def test_a_joined_copy_in_another_order_than_the_calls_is_conflicting_fields() -> None:
    joined = {"name": "get_timeget_weather", "arguments": '{"tz": "CET"}{"city": "Paris"}'}
    calls = [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "a-1"},
        {"name": "get_time", "args": {"tz": "CET"}, "id": "a-2"},
    ]
    error = rejected(answered(gemini(joined, calls)))
    assert where(error) == ("conflicting_fields", 1, "messages[1].additional_kwargs.function_call")


def test_a_function_call_naming_no_parsed_call_is_conflicting_fields() -> None:
    other = {"name": "get_time", "arguments": "{}"}
    error = rejected(answered(gemini(other, TWO_CALLS)))
    assert where(error) == ("conflicting_fields", 1, "messages[1].additional_kwargs.function_call")
    assert str(error) == (
        "langchain: messages[1].additional_kwargs.function_call: function_call 'get_time' with "
        "arguments '{}' names none of the message's parsed calls; beside tool_calls it is a "
        "copy of one of them (the last one, as Gemini and GigaChat write it), not another call "
        "[conflicting_fields]"
    )


def test_a_function_call_with_other_arguments_than_the_last_call_is_its_stale_copy() -> None:
    # the last call's args edited in tool_calls (a human-in-the-loop edit) after Gemini
    # copied it: the call is read from tool_calls, the copy kept as it is
    trace = answered(gemini({**ROME, "arguments": '{"city": "Oslo"}'}, TWO_CALLS))
    typed = langchain.to_messages(trace)
    assert [(c.args, c.metadata) for c in typed[1].tool_calls] == [
        ({"city": "Paris"}, {}),
        ({"city": "Rome"}, {LC: {"stale": ["additional_kwargs.function_call"]}}),
    ]
    assert written(trace) == messages_to_dict(trace)


def test_a_function_call_with_other_arguments_than_an_earlier_call_only_is_conflicting() -> None:
    calls = [TWO_CALLS[0], {"name": "get_time", "args": {}, "id": "a-2"}]
    error = rejected(answered(gemini({**PARIS, "arguments": '{"city": "Oslo"}'}, calls)))
    assert where(error) == ("conflicting_fields", 1, "messages[1].additional_kwargs.function_call")


def test_a_malformed_function_call_beside_parsed_calls_is_malformed_event() -> None:
    error = rejected(answered(gemini({"name": "get_weather", "arguments": {}}, TWO_CALLS)))
    assert where(error) == ("malformed_event", 1, "messages[1].additional_kwargs.function_call")


def test_a_function_call_copy_of_an_invalid_call_reads_as_that_call() -> None:
    ai = AIMessage(
        "",
        additional_kwargs={"function_call": {"name": "f", "arguments": "{bad"}},
        invalid_tool_calls=[{"name": "f", "args": "{bad", "id": "c1", "error": None}],
    )
    trace = [HumanMessage("q"), ai, ToolMessage("no", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    assert typed[1].tool_calls == [ToolCall(name="f", invalid_args="{bad", id="c1")]
    assert written(trace) == messages_to_dict(trace)


def edited_last_call(trace: list[BaseMessage], args: dict[str, Any]) -> list[Any]:
    typed = langchain.to_messages(trace)
    calls = list(typed[1].tool_calls)
    calls[-1] = calls[-1].model_copy(update={"args": args})
    typed[1] = typed[1].model_copy(update={"tool_calls": calls})
    return typed


def test_the_copy_follows_an_edit_of_the_last_call() -> None:
    typed = edited_last_call(answered(gemini(ROME, TWO_CALLS)), {"city": "Oslo"})
    back = langchain.from_messages(typed)
    assert back[1].additional_kwargs == {
        "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    assert back[1].tool_calls[1]["args"] == {"city": "Oslo"}
    assert langchain.to_messages(back)[1].tool_calls == typed[1].tool_calls


def test_a_copy_of_an_unedited_call_is_written_as_it_was_kept() -> None:
    typed = edited_last_call(answered(gemini(PARIS, TWO_CALLS)), {"city": "Oslo"})
    assert langchain.from_messages(typed)[1].additional_kwargs == {"function_call": PARIS}


def test_the_joined_copy_of_a_stream_follows_an_edit_as_a_copy_of_the_last_call() -> None:
    typed = edited_last_call(answered(streamed_gemini()), {"tz": "UTC"})
    back = langchain.from_messages(typed)
    assert back[1].additional_kwargs == {
        "function_call": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}
    assert langchain.to_messages(back)[1].tool_calls == typed[1].tool_calls


def test_a_call_marked_as_the_function_call_beside_listed_calls_is_not_representable() -> None:
    typed = langchain.to_messages(answered(gemini(ROME, TWO_CALLS)))
    calls = list(typed[1].tool_calls)
    calls[1] = calls[1].model_copy(update={"id": None, "metadata": {LC: {"from": "function_call"}}})
    typed[1] = typed[1].model_copy(update={"tool_calls": calls})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed[:2])
    assert where(caught.value) == ("not_representable", 1, "messages[1].tool_calls[1]")


def test_a_function_call_without_parsed_calls_is_still_one_more_call() -> None:
    ai = AIMessage("", additional_kwargs={"function_call": PARIS})
    typed = langchain.to_messages([HumanMessage("q"), ai], allow_pending=True)
    assert typed[1].tool_calls == [
        ToolCall(name="get_weather", args={"city": "Paris"},
                 metadata={LC: {"from": "function_call"}})
    ]


# --- raw call arguments that are not JSON text ----------------------------------------------


def test_raw_call_arguments_given_as_an_object_are_malformed_event() -> None:
    raw = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    ai = AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}],
                   additional_kwargs={"tool_calls": [raw]})
    error = rejected([HumanMessage("q"), ai, ToolMessage("r", tool_call_id="c1")])
    assert where(error) == (
        "malformed_event", 1, "messages[1].additional_kwargs.tool_calls[0].function.arguments")
    assert str(error) == (
        "langchain: messages[1].additional_kwargs.tool_calls[0].function.arguments: arguments "
        "must be JSON text, got dict {'a': 1} [malformed_event]"
    )


def test_raw_call_arguments_given_as_a_number_are_malformed_event_before_any_disagreement() -> None:
    raw = {"id": "other", "type": "function", "function": {"name": "g", "arguments": 5}}
    ai = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
                   additional_kwargs={"tool_calls": [raw]})
    error = rejected([HumanMessage("q"), ai, ToolMessage("r", tool_call_id="c1")])
    assert where(error) == (
        "malformed_event", 1, "messages[1].additional_kwargs.tool_calls[0].function.arguments")


# --- the field a dict message's validation refuses -------------------------------------------

BASE = [HumanMessage("q"), AIMessage("a")]


def dict_form(key: str, value: Any) -> list[Any]:
    forms = messages_to_dict(BASE)
    forms[1]["data"][key] = value
    return forms


def flat_form(key: str, value: Any) -> list[Any]:
    forms = [m.model_dump() for m in BASE]
    forms[1][key] = value
    return forms


@pytest.mark.parametrize(
    ("form", "key", "value", "path"),
    [
        (dict_form, "name", 5, "messages[1].data.name"),
        (flat_form, "name", 5, "messages[1].name"),
        (dict_form, "content", None, "messages[1].data.content"),
        (flat_form, "content", None, "messages[1].content"),
        (dict_form, "tool_calls", [{"name": "f", "args": 5, "id": "c"}],
         "messages[1].data.tool_calls[0].args"),
    ],
    ids=["dict-name", "flat-name", "dict-content", "flat-content", "dict-call-args"],
)
def test_a_dict_message_s_refused_field_is_the_path(
    form: Any, key: str, value: Any, path: str
) -> None:
    assert where(rejected(form(key, value))) == ("malformed_event", 1, path)


def test_the_dict_and_object_forms_name_the_same_field() -> None:
    changed = [m.model_copy() for m in BASE]
    changed[1].name = 5  # type: ignore[assignment]
    assert where(rejected(changed)) == ("malformed_event", 1, "messages[1].name")
    assert where(rejected(flat_form("name", 5))) == ("malformed_event", 1, "messages[1].name")


def test_a_json_dumped_function_call_copy_round_trips() -> None:
    trace = answered(gemini(ROME, TWO_CALLS))
    text = json.dumps(messages_to_dict(trace))
    typed = langchain.to_messages(json.loads(text))
    assert len(typed[1].tool_calls) == 2
