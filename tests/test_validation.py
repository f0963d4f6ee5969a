"""The conversation rules (validation.py), as examples and as properties."""

from __future__ import annotations

import pytest
from hypothesis import example, given

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    SystemMessage,
    ToolCall,
    ToolMessage,
    TraceError,
    check,
    validate,
)

from strategies import (
    Broken,
    Shape,
    conversations,
    mutate_duplicate_id,
    mutate_duplicated_result,
    mutate_orphan_result,
    mutate_removed_result,
    mutate_unknown_role,
)

H = HumanMessage(content="weather in Paris and Rome?")


def ai(*ids: str | None, name: str = "get_weather") -> AIMessage:
    return AIMessage(tool_calls=[ToolCall(name=name, id=i) for i in ids])


def tool(call_id: str | None, content: str = "18C") -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call_id)


def error_of(messages: list, **options: bool) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        validate(messages, **options)
    return caught.value.code, caught.value.index, caught.value.path


def test_a_tool_result_right_after_a_human_message_is_an_orphan() -> None:
    assert error_of([H, tool("a")]) == ("orphan_tool_result", 1, "messages[1].tool_call_id")


def test_a_tool_result_before_any_ai_message_is_an_orphan_even_first() -> None:
    assert error_of([tool("a")]) == ("orphan_tool_result", 0, "messages[0].tool_call_id")


def test_a_tool_result_after_a_human_that_follows_the_call_is_an_orphan() -> None:
    messages = [H, ai("a"), tool("a"), H, tool("a")]
    assert error_of(messages) == ("orphan_tool_result", 4, "messages[4].tool_call_id")


def test_the_block_opener_must_have_tool_calls() -> None:
    assert error_of([H, AIMessage(content="sure"), tool("a")]) == (
        "orphan_tool_result",
        2,
        "messages[2].tool_call_id",
    )


def test_a_call_left_unanswered_when_the_agent_speaks_again() -> None:
    messages = [H, ai("a", "b"), tool("a"), AIMessage(content="done")]
    assert error_of(messages) == ("unanswered_tool_call", 1, "messages[1].tool_calls[1]")


def test_a_second_result_for_the_same_call_is_an_orphan_at_its_index() -> None:
    messages = [H, ai("a", "b"), tool("a"), tool("a"), tool("b")]
    assert error_of(messages) == ("orphan_tool_result", 3, "messages[3].tool_call_id")


def test_a_result_naming_a_call_of_another_message_is_an_orphan() -> None:
    messages = [H, ai("a"), tool("a"), H, ai("b"), tool("a")]
    assert error_of(messages) == ("orphan_tool_result", 5, "messages[5].tool_call_id")


def test_two_calls_and_one_result_is_rejected() -> None:
    assert error_of([H, ai("a", "b"), tool("a")]) == (
        "unanswered_tool_call",
        1,
        "messages[1].tool_calls[1]",
    )


def test_one_call_and_three_results_is_rejected() -> None:
    assert error_of([H, ai(None), tool(None), tool(None), tool(None)]) == (
        "orphan_tool_result",
        3,
        "messages[3].tool_call_id",
    )


def test_id_less_calls_pair_with_results_by_position() -> None:
    messages = [H, ai(None, None), tool(None), tool(None), AIMessage(content="both done")]
    validate(messages)
    assert check(messages) == []
    # one result for two calls: the first call is answered, the second is not
    assert [(e.code, e.index, e.path) for e in check([H, ai(None, None), tool(None)])] == [
        ("unanswered_tool_call", 1, "messages[1].tool_calls[1]")
    ]


def test_a_result_without_id_answers_the_first_call_not_yet_answered() -> None:
    messages = [H, ai("a", "b"), tool("b"), tool(None)]
    validate(messages)
    assert check(messages) == []
    # the id-less result answered "a", the first free call: "c" is what is left unanswered
    three_calls = [H, ai("a", "b", "c"), tool("b"), tool(None)]
    assert [(e.code, e.index, e.path) for e in check(three_calls)] == [
        ("unanswered_tool_call", 1, "messages[1].tool_calls[2]")
    ]
    # and a later result for "a" finds it answered by the id-less one
    assert [
        (e.code, e.index, e.path, e.detail)
        for e in check([H, ai("a", "b"), tool(None), tool("a"), tool("b")])
    ] == [
        (
            "orphan_tool_result",
            3,
            "messages[3].tool_call_id",
            "tool_call_id 'a' was already answered at messages[2]",
        )
    ]


def test_a_result_with_an_id_cannot_answer_an_id_less_call() -> None:
    assert error_of([H, ai(None), tool("a")]) == (
        "orphan_tool_result",
        2,
        "messages[2].tool_call_id",
    )


def test_tool_call_ids_are_unique_across_the_conversation() -> None:
    messages = [H, ai("a"), tool("a"), H, ai("a"), tool("a")]
    assert error_of(messages) == ("duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id")


def test_a_duplicate_id_inside_one_message_is_rejected() -> None:
    assert error_of([H, ai("a", "a"), tool("a"), tool("a")]) == (
        "duplicate_tool_call_id",
        1,
        "messages[1].tool_calls[1].id",
    )


def test_an_empty_conversation_is_rejected() -> None:
    assert error_of([]) == ("empty_conversation", None, None)


def test_pending_calls_are_allowed_only_at_the_very_end() -> None:
    validate([H, ai("a", "b"), tool("a")], allow_pending=True)
    with pytest.raises(TraceError) as caught:
        validate([H, ai("a"), H, ai("b"), tool("b")], allow_pending=True)
    assert (caught.value.code, caught.value.index) == ("unanswered_tool_call", 1)


def test_something_that_is_not_a_message_is_malformed() -> None:
    assert error_of([H, {"role": "user"}]) == ("malformed_event", 1, "messages[1]")


def test_check_returns_every_violation_in_pass_order() -> None:
    messages = [tool("x"), H, ai("a", "b"), tool("a"), tool("a"), SystemMessage(content="s")]
    assert [(e.code, e.index) for e in check(messages)] == [
        ("orphan_tool_result", 0),
        ("orphan_tool_result", 4),
        ("unanswered_tool_call", 2),
    ]


def test_errors_name_the_source_position_through_origin() -> None:
    with pytest.raises(TraceError) as caught:
        validate([H, tool("a")], source="openai_chat", origin=[3, 7])
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.source) == (
        "orphan_tool_result",
        7,
        "messages[7].tool_call_id",
        "openai_chat",
    )
    assert str(caught.value) == (
        "openai_chat: messages[7].tool_call_id: tool result answers nothing: "
        "no AIMessage comes before it [orphan_tool_result]"
    )


def test_the_sample_raises_the_trace_error_itself() -> None:
    with pytest.raises(TraceError) as caught:
        MultiTurnSample(messages=[H, tool("a")])
    assert type(caught.value) is TraceError
    assert (caught.value.code, caught.value.index) == ("orphan_tool_result", 1)


@given(conversations())
def test_every_generated_conversation_is_valid(messages: list) -> None:
    validate(messages)
    assert check(messages) == []
    assert MultiTurnSample(messages=messages).messages == messages


@given(conversations(Shape(ids=False)))
def test_every_generated_id_less_conversation_is_valid(messages: list) -> None:
    validate(messages)
    assert check(messages) == []


def assert_rejected(broken: Broken) -> None:
    with pytest.raises(TraceError) as caught:
        validate(broken.messages)
    assert (caught.value.code, caught.value.index) == (broken.code, broken.index)
    assert (broken.code, broken.index) in [(e.code, e.index) for e in check(broken.messages)]


@given(mutate_orphan_result())
@example(Broken([H, tool("a")], "orphan_tool_result", 1))
def test_orphan_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_orphan_result(Shape(ids=False)))
def test_id_less_orphan_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_removed_result())
def test_removed_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_removed_result(Shape(ids=False)))
def test_removed_id_less_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_duplicated_result())
def test_duplicated_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_duplicated_result(Shape(ids=False)))
def test_duplicated_id_less_results_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_duplicate_id())
def test_duplicate_ids_are_rejected(broken: Broken) -> None:
    assert_rejected(broken)


@given(mutate_unknown_role())
def test_unknown_message_types_are_rejected_by_the_sample(broken: Broken) -> None:
    with pytest.raises(TraceError) as caught:
        MultiTurnSample.model_validate({"messages": broken.messages})
    assert (caught.value.code, caught.value.index) == (broken.code, broken.index)


def test_a_call_whose_arguments_did_not_parse_may_go_unanswered() -> None:
    # LangGraph's ToolNode runs only parsed calls; the agent goes on without a result.
    broken_call = ToolCall(name="get_weather", id="bad", invalid_args='{"city": ')
    messages = [
        H,
        AIMessage(tool_calls=[broken_call, ToolCall(name="get_weather", id="ok")]),
        tool("ok"),
        AIMessage(content="Paris is 18C; I could not read the other city."),
    ]
    validate(messages)
    answered = [*messages[:3], tool("bad", "error: bad arguments"), messages[3]]
    validate(answered)
    assert error_of([*answered[:3], tool("bad"), tool("bad"), answered[4]]) == (
        "orphan_tool_result",
        4,
        "messages[4].tool_call_id",
    )


def test_a_parsed_call_beside_an_invalid_one_still_needs_its_result() -> None:
    calls = [ToolCall(name="f", id="bad", invalid_args="[1]"), ToolCall(name="f", id="ok")]
    messages = [H, AIMessage(tool_calls=calls), tool("bad"), AIMessage(content="done")]
    assert error_of(messages) == ("unanswered_tool_call", 1, "messages[1].tool_calls[1]")
