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
from tracebridge.metrics._assignment import best_assignment
from tracebridge.metrics._matching import args_equal

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


def pairs_of(result: Any) -> list[tuple[int, int, float]]:
    return [(p["predicted"], p["reference"], p["score"]) for p in result.details["pairs"]]


def test_order_free_identical_calls_pair_in_order() -> None:
    # three identical calls against two: the k-th predicted pairs with the k-th reference
    # call of the kind, wherever they stand; the third predicted one is left over
    same = call("s", q="a")
    predicted = [same, call("t"), same, same]
    reference = [call("t"), same, call("u"), same]
    result = ToolCallAccuracy(strict_order=False).score(sample_with(predicted, reference))
    assert pairs_of(result) == [(0, 1, 1.0), (1, 0, 1.0), (2, 3, 1.0)]
    assert [u["predicted"] for u in result.details["unmatched_predicted"]] == [3]
    assert [u["reference"] for u in result.details["unmatched_reference"]] == [2]


def test_order_free_a_lone_call_takes_its_first_best_partner() -> None:
    # one predicted "s" against three reference "s" scoring 1/2, 1/2 and 0: equal totals,
    # the first of the best partners is listed; likewise one reference call against many
    predicted = [call("s", q="a", n=1)]
    reference = [call("s", q="a", n=2), call("s", q="a", n=3), call("s", q="b", n=4)]
    result = ToolCallAccuracy(strict_order=False).score(sample_with(predicted, reference))
    assert pairs_of(result) == [(0, 0, 0.5)]
    result = ToolCallAccuracy(strict_order=False).score(sample_with(reference, predicted))
    assert pairs_of(result) == [(0, 0, 0.5)]
    # a partner scoring 0 still pairs (more pairs at the same total), the first one
    result = ToolCallAccuracy(strict_order=False).score(
        sample_with([call("s", q="z")], [call("s", q="x"), call("s", q="y")])
    )
    assert pairs_of(result) == [(0, 0, 0.0)]


def test_order_free_equal_totals_keep_the_total_and_the_count() -> None:
    # p0 and p1 both score 1/2 with r0 and with r1: every one-to-one pairing totals 1;
    # whichever is listed, it has two pairs and that total, and never repeats a call
    predicted = [call("s", a=1, b=1), call("s", a=1, b=2)]
    reference = [call("s", a=1, b=3), call("s", a=1, b=4)]
    result = ToolCallAccuracy(strict_order=False).score(sample_with(predicted, reference))
    assert result.value == 0.5
    assert result.details["total"] == 1.0
    assert sorted(p for p, _, _ in pairs_of(result)) == [0, 1]
    assert sorted(r for _, r, _ in pairs_of(result)) == [0, 1]
    assert [score for _, _, score in pairs_of(result)] == [0.5, 0.5]


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


def test_f1_a_missing_call_with_invalid_arguments_keeps_them() -> None:
    broken = ToolCall(name="get_weather", invalid_args="city=Paris")
    result = ToolCallF1().score(sample_with([], [broken]))
    assert result.value == 0.0
    assert result.details["missing"] == [
        {"reference": 0, "name": "get_weather", "args": {}, "invalid_args": "city=Paris"}
    ]


@pytest.mark.parametrize("strict", [True, False])
def test_unmatched_calls_with_invalid_arguments_keep_them(strict: bool) -> None:
    predicted = ToolCall(name="get_weather", invalid_args="city=Paris")
    reference = ToolCall(name="search", invalid_args='{"query"')
    result = ToolCallAccuracy(strict_order=strict).score(
        sample_with_broken([predicted], [reference])
    )
    assert result.value == 0.0
    assert result.details["pairs"] == []
    assert result.details["unmatched_predicted"] == [
        {
            "predicted": 0,
            "message_index": 1,
            "name": "get_weather",
            "args": {},
            "invalid_args": "city=Paris",
        }
    ]
    assert result.details["unmatched_reference"] == [
        {"reference": 0, "name": "search", "args": {}, "invalid_args": '{"query"'}
    ]


def test_f1_lists_the_unmatched_calls_in_their_order() -> None:
    # each matched prediction uses up the first equal reference call not used yet: the
    # reference calls left over are the later ones, listed in reference order
    result = ToolCallF1().score(
        sample_with([WEATHER, WEATHER, UV], [WEATHER, SEARCH_10, WEATHER, WEATHER])
    )
    assert result.value == 4 / 7
    assert result.details == {
        "true_positives": 2,
        "false_positives": 1,
        "false_negatives": 2,
        "precision": 2 / 3,
        "recall": 0.5,
        "matched": [
            {"predicted": 0, "message_index": 1, "name": "get_weather", "args": {"city": "Paris"}},
            {"predicted": 1, "message_index": 3, "name": "get_weather", "args": {"city": "Paris"}},
        ],
        "unexpected": [
            {"predicted": 2, "message_index": 5, "name": "get_uv_index", "args": {"city": "Paris"}}
        ],
        "missing": [
            {"reference": 1, "name": "search", "args": {"query": "python", "limit": 10}},
            {"reference": 3, "name": "get_weather", "args": {"city": "Paris"}},
        ],
    }


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


# --- the fast pairings against slow, obviously correct references ------------------------
#
# The references below follow docs/metrics.md word by word, with Fractions and no shortcut:
# typed JSON equality by recursion, the pair score by its formula, the ordered pairing by
# the dynamic programme over suffixes and its forward walk (checked against brute force
# over every order-preserving pairing), the order-free optimum by brute force over every
# one-to-one pairing, and F1 by removing matches one by one from a list.


def json_equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return Fraction(left) == Fraction(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def slow_score(p: ToolCall, r: ToolCall) -> Fraction | None:
    if p.name != r.name or p.invalid_args is not None or r.invalid_args is not None:
        return None
    keys = p.args.keys() | r.args.keys()
    if not keys:
        return Fraction(1)
    same = [k for k in keys if k in p.args and k in r.args and json_equal(p.args[k], r.args[k])]
    return Fraction(len(same), len(keys))


def slow_ordered(predicted: list[ToolCall], reference: list[ToolCall]) -> list[tuple[int, int]]:
    """best[i][j]: the best (total, count) for predicted[i:] and reference[j:]; then the walk."""
    n, m = len(predicted), len(reference)
    score = [[slow_score(p, r) for r in reference] for p in predicted]
    zero = (Fraction(0), 0)
    best = [[zero] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            options = [best[i + 1][j], best[i][j + 1]]
            s = score[i][j]
            if s is not None:
                total, count = best[i + 1][j + 1]
                options.append((total + s, count + 1))
            best[i][j] = max(options)
    pairs = []
    i = j = 0
    while i < n and j < m:
        s = score[i][j]
        if s is not None and best[i][j] == (best[i + 1][j + 1][0] + s, best[i + 1][j + 1][1] + 1):
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def matchings(n: int, m: int, ordered: bool) -> Any:
    """Every one-to-one pairing of range(n) with range(m) (order-preserving if asked)."""
    for size in range(min(n, m) + 1):
        for rows in itertools.combinations(range(n), size):
            columns_choices = (
                itertools.combinations(range(m), size)
                if ordered
                else itertools.permutations(range(m), size)
            )
            for columns in columns_choices:
                yield list(zip(rows, columns, strict=True))


def brute_best(
    predicted: list[ToolCall], reference: list[ToolCall], ordered: bool
) -> tuple[Fraction, int]:
    score = [[slow_score(p, r) for r in reference] for p in predicted]
    best = (Fraction(0), 0)
    for pairing in matchings(len(predicted), len(reference), ordered):
        if all(score[i][j] is not None for i, j in pairing):
            total = sum((score[i][j] for i, j in pairing), Fraction(0))  # type: ignore[misc]
            best = max(best, (total, len(pairing)))
    return best


def slow_f1(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> tuple[list[int], list[int], list[int]]:
    """The matched and unexpected predicted indexes, and the missing reference indexes."""
    left = list(enumerate(reference))
    matched, unexpected = [], []
    for i, call in enumerate(predicted):
        for k, (_, wanted) in enumerate(left):
            if (
                call.invalid_args is None
                and wanted.invalid_args is None
                and call.name == wanted.name
                and json_equal(call.args, wanted.args)
            ):
                del left[k]
                matched.append(i)
                break
        else:
            unexpected.append(i)
    return matched, unexpected, [j for j, _ in left]


# ties everywhere: few names, few keys, values that are equal under JSON and not in Python
# (1 / 1.0 / True), nested values, calls without arguments, and broken calls
tie_values = st.sampled_from([0, 1, 1.0, True, False, "1", None, [1], [True], {"a": 1}])
tie_args = st.dictionaries(st.sampled_from(["a", "b", "c"]), tie_values, max_size=3)
tie_calls = st.one_of(
    st.builds(ToolCall, name=st.sampled_from(["s", "t"]), args=tie_args),
    st.builds(ToolCall, name=st.sampled_from(["s", "t"]), invalid_args=st.just("{")),
)


@st.composite
def call_lists(draw: st.DrawFn, size: int) -> tuple[list[ToolCall], list[ToolCall]]:
    """A predicted list, and a reference that is either unrelated or the same calls edited
    (some changed, dropped or inserted): the shape the front and back walks shortcut."""
    predicted = draw(st.lists(tie_calls, max_size=size))
    if draw(st.booleans()):
        return predicted, draw(st.lists(tie_calls, max_size=size))
    reference = list(predicted)
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["change", "drop", "insert"]))
        if action == "insert" or not reference:
            reference.insert(draw(st.integers(0, len(reference))), draw(tie_calls))
        elif action == "drop":
            del reference[draw(st.integers(0, len(reference) - 1))]
        else:
            reference[draw(st.integers(0, len(reference) - 1))] = draw(tie_calls)
    return predicted, reference


def sample_with_broken(predicted: list[ToolCall], reference: list[ToolCall]) -> MultiTurnSample:
    """Like sample_with, but a call whose arguments did not parse goes unanswered."""
    messages: list[Any] = [HumanMessage(content="please")]
    for k, made in enumerate(predicted):
        messages.append(AIMessage(tool_calls=[made.model_copy(update={"id": f"c{k}"})]))
        if made.invalid_args is None:
            messages.append(ToolMessage(content="done", tool_call_id=f"c{k}"))
    return MultiTurnSample(messages=messages, reference_tool_calls=reference)


def check_pairs(
    details: dict[str, Any], predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    """Each listed pair is real: one-to-one, pairable, with its true score and arguments."""
    pairs = details["pairs"]
    assert len({p["predicted"] for p in pairs}) == len(pairs)
    assert len({p["reference"] for p in pairs}) == len(pairs)
    for pair in pairs:
        p, r = predicted[pair["predicted"]], reference[pair["reference"]]
        exact = slow_score(p, r)
        assert exact is not None
        assert pair["score"] == float(exact)
        keys = sorted(p.args.keys() | r.args.keys())
        assert pair["equal_args"] == [
            k for k in keys if k in p.args and k in r.args and json_equal(p.args[k], r.args[k])
        ]
        assert pair["different_args"] == [k for k in keys if k not in pair["equal_args"]]
    listed = sum((Fraction(pair["score"]) for pair in pairs), Fraction(0))
    assert abs(float(listed) - details["total"]) < 1e-9


def assert_is_the_programme(predicted: list[ToolCall], reference: list[ToolCall]) -> None:
    result = ToolCallAccuracy().score(sample_with_broken(predicted, reference))
    expected = slow_ordered(predicted, reference)
    assert [(p["predicted"], p["reference"]) for p in result.details["pairs"]] == expected
    total = sum((slow_score(predicted[i], reference[j]) for i, j in expected), Fraction(0))  # type: ignore[misc]
    longest = max(len(predicted), len(reference))
    assert result.value == (float(total / longest) if longest else 1.0)
    assert result.details["total"] == float(total)
    check_pairs(result.details, predicted, reference)
    if len(predicted) <= 6 and len(reference) <= 6:
        assert (total, len(expected)) == brute_best(predicted, reference, ordered=True)


@given(lists=call_lists(6))
def test_strict_order_is_the_programme_and_its_walk(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    assert_is_the_programme(*lists)


@given(lists=call_lists(30))
def test_strict_order_on_long_edited_trajectories_is_the_programme(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    # long enough for the walks from both ends and the programme in the middle to meet
    assert_is_the_programme(*lists)


@given(lists=call_lists(5))
def test_order_free_is_the_brute_force_optimum(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    predicted, reference = lists
    result = ToolCallAccuracy(strict_order=False).score(sample_with_broken(predicted, reference))
    total, count = brute_best(predicted, reference, ordered=False)
    longest = max(len(predicted), len(reference))
    assert result.value == (float(total / longest) if longest else 1.0)
    assert result.details["total"] == float(total)
    assert len(result.details["pairs"]) == count
    check_pairs(result.details, predicted, reference)
    paired = {p["predicted"] for p in result.details["pairs"]}
    assert [u["predicted"] for u in result.details["unmatched_predicted"]] == [
        i for i in range(len(predicted)) if i not in paired
    ]


@given(lists=call_lists(8))
def test_f1_is_the_multiset_count(lists: tuple[list[ToolCall], list[ToolCall]]) -> None:
    predicted, reference = lists
    result = ToolCallF1().score(sample_with_broken(predicted, reference))
    matched, unexpected, missing = slow_f1(predicted, reference)
    tp, fp, fn = len(matched), len(unexpected), len(missing)
    details = result.details
    assert (details["true_positives"], details["false_positives"], details["false_negatives"]) == (
        tp,
        fp,
        fn,
    )
    assert [entry["predicted"] for entry in details["matched"]] == matched
    assert [entry["predicted"] for entry in details["unexpected"]] == unexpected
    assert [entry["reference"] for entry in details["missing"]] == missing
    assert result.value == (1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
