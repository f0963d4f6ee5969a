"""ToolCallAccuracy and ToolCallF1: the exact values of docs/metrics.md, and properties."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics import ToolCallAccuracy, ToolCallF1
from tracebridge.metrics._matching import args_equal, best_assignment

from strategies import Shape, conversations, json_objects

# --- helpers -----------------------------------------------------------------------------


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args)


def sample_with(predicted: list[ToolCall], reference: list[ToolCall] | None) -> MultiTurnSample:
    """A conversation where the agent makes ``predicted`` calls, one per AIMessage."""
    messages: list[Any] = [HumanMessage(content="please")]
    for k, made in enumerate(predicted):
        messages.append(AIMessage(tool_calls=[made.model_copy(update={"id": f"c{k}"})]))
        messages.append(ToolMessage(content="done", tool_call_id=f"c{k}"))
    messages.append(AIMessage(content="finished"))
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def accuracy(predicted: list[ToolCall], reference: list[ToolCall], strict: bool = True) -> float:
    value = ToolCallAccuracy(strict_order=strict).score(sample_with(predicted, reference)).value
    assert value is not None
    return value


def f1(predicted: list[ToolCall], reference: list[ToolCall]) -> float:
    value = ToolCallF1().score(sample_with(predicted, reference)).value
    assert value is not None
    return value


SEARCH_10 = call("search", query="python", limit=10)
SEARCH_5 = call("search", query="python", limit=5)
WEATHER = call("get_weather", city="Paris")
UV = call("get_uv_index", city="Paris")

# --- argument equality -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, True),
        (0, -0.0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        ("1", 1, False),
        (None, None, True),
        (None, "null", False),
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1.0}, True),
        ([1, 2], [2, 1], False),
        ({"a": {"b": True}}, {"a": {"b": 1}}, False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ("Paris", "paris", False),
        (2**53 + 1, float(2**53), False),
    ],
)
def test_arguments_compare_as_typed_json(left: Any, right: Any, equal: bool) -> None:
    assert args_equal(left, right) is equal
    assert args_equal(right, left) is equal


# --- ToolCallAccuracy: exact values ------------------------------------------------------


def test_one_different_argument_out_of_two_scores_half() -> None:
    assert accuracy([SEARCH_10], [SEARCH_5]) == 0.5


def test_numbers_compare_by_value_not_by_text() -> None:
    assert accuracy([call("search", limit=10)], [call("search", limit=10.0)]) == 1.0
    assert accuracy([call("toggle", on=True)], [call("toggle", on=1)]) == 0.0


def test_argument_keys_are_a_union() -> None:
    # keys {query, limit, lang}: query equal, limit equal, lang only on one side -> 2/3
    predicted = call("search", query="python", limit=10, lang="en")
    assert accuracy([predicted], [SEARCH_10]) == 2 / 3


def test_calls_without_arguments_match_fully() -> None:
    assert accuracy([call("ping")], [call("ping")]) == 1.0


def test_an_extra_call_costs_its_share() -> None:
    assert accuracy([SEARCH_10, WEATHER], [SEARCH_10]) == 0.5


def test_a_missing_call_costs_its_share() -> None:
    assert accuracy([WEATHER], [WEATHER, UV]) == 0.5


def test_a_swapped_pair_scores_half_in_order_and_full_without_order() -> None:
    assert accuracy([UV, WEATHER], [WEATHER, UV], strict=True) == 0.5
    assert accuracy([UV, WEATHER], [WEATHER, UV], strict=False) == 1.0


def test_different_names_never_pair() -> None:
    assert accuracy([call("a", x=1)], [call("b", x=1)]) == 0.0


def test_both_empty_scores_one() -> None:
    assert accuracy([], []) == 1.0


def test_calls_but_none_expected_scores_zero() -> None:
    assert accuracy([WEATHER], []) == 0.0
    assert accuracy([], [WEATHER]) == 0.0


def test_invalid_arguments_match_nothing() -> None:
    broken = ToolCall(name="search", invalid_args='{"query": "python"')
    assert accuracy([broken], [call("search", query="python")]) == 0.0
    assert accuracy([broken], [broken]) == 0.0


def test_ordered_pairing_maximises_the_total_not_the_count_of_names() -> None:
    # In order, predicted[0] may pair with reference[0] (score 1/2) or predicted[1] with
    # reference[0] (score 1); the second leaves reference[1] unpaired but totals more.
    predicted = [call("s", q="a", n=2), call("s", q="a", n=1)]
    reference = [call("s", q="a", n=1), call("t")]
    assert accuracy(predicted, reference, strict=True) == 0.5


def test_order_free_pairing_maximises_the_total() -> None:
    # p0-r0 = 1/2, p0-r1 = 1, p1-r0 = 1/2, p1-r1 = 0: the best total is p0-r1 + p1-r0 = 3/2
    # (pairing p0-r0 first would leave p1-r1 = 0 and total 1/2).
    predicted = [call("s", a=1, b=1), call("s", a=2, b=2)]
    reference = [call("s", a=1, b=2), call("s", a=1, b=1)]
    result = ToolCallAccuracy(strict_order=False).score(sample_with(predicted, reference))
    assert result.value == 0.75
    assert [(p["predicted"], p["reference"], p["score"]) for p in result.details["pairs"]] == [
        (0, 1, 1.0),
        (1, 0, 0.5),
    ]


def test_details_list_each_pairing_and_its_score() -> None:
    result = ToolCallAccuracy().score(sample_with([SEARCH_10, WEATHER], [SEARCH_5, UV]))
    assert result.value == 0.25
    assert result.details == {
        "strict_order": True,
        "total": 0.5,
        "predicted_count": 2,
        "reference_count": 2,
        "pairs": [
            {
                "predicted": 0,
                "reference": 0,
                "message_index": 1,
                "name": "search",
                "score": 0.5,
                "equal_args": ["query"],
                "different_args": ["limit"],
            }
        ],
        "unmatched_predicted": [
            {"predicted": 1, "message_index": 3, "name": "get_weather", "args": {"city": "Paris"}}
        ],
        "unmatched_reference": [
            {"reference": 1, "name": "get_uv_index", "args": {"city": "Paris"}}
        ],
    }
    assert result.name == "tool_call_accuracy"
    assert result.metric_version == "1"
    assert result.judge is None
    assert result.usage is None
    assert result.error is None


def test_predicted_calls_come_from_every_ai_message_in_order() -> None:
    messages = [
        HumanMessage(content="weather and uv"),
        AIMessage(tool_calls=[WEATHER.model_copy(update={"id": "a"}), UV.model_copy(
            update={"id": "b"})]),
        ToolMessage(content="18 C", tool_call_id="a"),
        ToolMessage(content="UV 3", tool_call_id="b"),
        AIMessage(content="18 C and UV 3"),
    ]
    sample = MultiTurnSample(messages=messages, reference_tool_calls=[WEATHER, UV])
    result = ToolCallAccuracy().score(sample)
    assert result.value == 1.0
    assert [p["message_index"] for p in result.details["pairs"]] == [1, 1]


def test_no_reference_is_an_error_not_a_number() -> None:
    sample = sample_with([WEATHER], None)
    for metric in (ToolCallAccuracy(), ToolCallF1()):
        result = metric.score(sample)
        assert result.value is None
        assert result.error == (
            "the sample has no reference_tool_calls (None); give [] to expect no calls"
        )
        assert result.transcript_hash == sample.transcript_hash()


# --- ToolCallF1: exact values ------------------------------------------------------------


def test_f1_one_of_two_expected_calls() -> None:
    assert f1([WEATHER], [WEATHER, UV]) == 2 / 3


def test_f1_counts_a_repeated_call_twice() -> None:
    result = ToolCallF1().score(sample_with([WEATHER, WEATHER], [WEATHER]))
    assert result.value == 2 / 3
    assert result.details["true_positives"] == 1
    assert result.details["false_positives"] == 1
    assert result.details["precision"] == 0.5
    assert result.details["recall"] == 1.0


def test_f1_both_empty_scores_one() -> None:
    result = ToolCallF1().score(sample_with([], []))
    assert result.value == 1.0
    assert result.details["precision"] is None
    assert result.details["recall"] is None


def test_f1_requires_exact_arguments_under_json_typing() -> None:
    assert f1([call("search", limit=10.0)], [call("search", limit=10)]) == 1.0
    assert f1([SEARCH_10], [SEARCH_5]) == 0.0
    assert f1([call("toggle", on=True)], [call("toggle", on=1)]) == 0.0


def test_f1_nothing_called_when_calls_were_expected() -> None:
    result = ToolCallF1().score(sample_with([], [WEATHER]))
    assert result.value == 0.0
    assert result.details["precision"] is None
    assert result.details["recall"] == 0.0
    assert result.details["missing"] == [
        {"reference": 0, "name": "get_weather", "args": {"city": "Paris"}}
    ]


def test_f1_invalid_arguments_match_nothing() -> None:
    broken = ToolCall(name="get_weather", invalid_args="city=Paris")
    result = ToolCallF1().score(sample_with([broken], [WEATHER]))
    assert result.value == 0.0
    assert result.details["unexpected"] == [
        {
            "predicted": 0,
            "message_index": 1,
            "name": "get_weather",
            "args": {},
            "invalid_args": "city=Paris",
        }
    ]


# --- the assignment against brute force --------------------------------------------------


@given(
    st.integers(1, 5).flatmap(
        lambda rows: st.lists(
            st.lists(st.fractions(0, 1, max_denominator=6), min_size=rows, max_size=rows),
            min_size=1,
            max_size=5,
        )
    )
)
def test_best_assignment_matches_brute_force(columns: list[list[Fraction]]) -> None:
    scores = [list(row) for row in zip(*columns, strict=True)]
    rows, width = len(scores), len(scores[0])
    pairs = best_assignment(scores)
    assert len(pairs) == min(rows, width)
    assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
    total = sum((scores[r][c] for r, c in pairs), Fraction(0))
    if rows <= width:
        best = max(
            sum((scores[r][c] for r, c in enumerate(perm)), Fraction(0))
            for perm in itertools.permutations(range(width), rows)
        )
    else:
        best = max(
            sum((scores[r][c] for c, r in enumerate(perm)), Fraction(0))
            for perm in itertools.permutations(range(rows), width)
        )
    assert total == best


# --- properties --------------------------------------------------------------------------

names = st.sampled_from(["search", "get_weather", "book"])
calls = st.builds(ToolCall, name=names, args=json_objects)
invalid_calls = st.builds(ToolCall, name=names, invalid_args=st.just("{oops"))
any_calls = st.lists(st.one_of(calls, calls, invalid_calls), max_size=5)


@given(predicted=any_calls, reference=any_calls, strict=st.booleans())
def test_values_lie_in_zero_one(
    predicted: list[ToolCall], reference: list[ToolCall], strict: bool
) -> None:
    sample = sample_with(predicted, reference)
    for metric in (ToolCallAccuracy(strict_order=strict), ToolCallF1()):
        value = metric.score(sample).value
        assert value is not None
        assert 0.0 <= value <= 1.0


@given(messages=conversations(Shape(invalid_args=False)), strict=st.booleans())
def test_a_sample_scored_against_its_own_calls_is_one(messages: list[Any], strict: bool) -> None:
    own = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    sample = MultiTurnSample(messages=messages, reference_tool_calls=own)
    assert ToolCallAccuracy(strict_order=strict).score(sample).value == 1.0
    assert ToolCallF1().score(sample).value == 1.0


@given(predicted=any_calls, reference=any_calls, data=st.data())
def test_order_free_scores_do_not_change_when_calls_are_shuffled(
    predicted: list[ToolCall], reference: list[ToolCall], data: st.DataObject
) -> None:
    shuffled_predicted = data.draw(st.permutations(predicted))
    shuffled_reference = data.draw(st.permutations(reference))
    before = sample_with(predicted, reference)
    after = sample_with(shuffled_predicted, shuffled_reference)
    unordered = ToolCallAccuracy(strict_order=False)
    assert unordered.score(after).value == unordered.score(before).value
    assert ToolCallF1().score(after).value == ToolCallF1().score(before).value


@given(predicted=st.lists(calls, max_size=4), reference=st.lists(calls, max_size=4))
def test_strict_order_never_scores_above_order_free(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    sample = sample_with(predicted, reference)
    ordered = ToolCallAccuracy(strict_order=True).score(sample).value
    unordered = ToolCallAccuracy(strict_order=False).score(sample).value
    assert ordered is not None
    assert unordered is not None
    assert ordered <= unordered


def test_the_docstring_examples_run() -> None:
    import doctest

    from tracebridge.metrics import _matching, tool_calls

    for module in (tool_calls, _matching):
        failed, attempted = doctest.testmod(module)
        assert (failed, attempted > 0) == (0, True)
