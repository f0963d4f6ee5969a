"""The tool-call metrics' fast paths against their general forms.

``forced_front`` (the ordered pairing's first steps on the calls as they are) followed by
``ordered_pairs`` on what is left gives exactly the pairs ``ordered_pairs`` gives alone, and
``equal_keys`` names exactly the arguments whose items ``argument_items`` finds equal. The
general forms are checked against the definitions in test_metrics_tool_calls.py.

The calls are drawn so that the shortcuts' traps are common: few names and argument names,
values that are equal in Python but not in JSON (``True``/``1``/``1.0``, ``[True]``/``[1]``),
nested values, calls without arguments, calls of different sizes, repeated calls (twins
ahead), broken calls, and references that are the predicted calls lightly edited.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_metrics_tool_calls import sample_with_broken, slow_ordered

from tracebridge import ToolCall
from tracebridge.metrics import ToolCallAccuracy, _assignment, _ordered, tool_calls
from tracebridge.metrics._matching import (
    Calls,
    argument_items,
    equal_keys,
    order_free_pairs,
    pair_score,
)
from tracebridge.metrics._ordered import forced_front, ordered_pairs

values = st.sampled_from(
    [0, 1, 1.0, True, False, "1", None, [1], [1.0], [True], {"a": 1}, {"a": True}, {"a": [0]}]
)
arguments = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)
plain_calls = st.builds(ToolCall, name=st.sampled_from(["s", "t"]), args=arguments)
broken_calls = st.builds(ToolCall, name=st.sampled_from(["s", "t"]), invalid_args=st.just("{"))


@st.composite
def trajectories(
    draw: st.DrawFn, calls: st.SearchStrategy[ToolCall], size: int
) -> tuple[list[ToolCall], list[ToolCall]]:
    """Predicted calls and a reference: unrelated, or the same calls edited (values
    changed, calls dropped, inserted, repeated), the shape ``forced_front`` walks far on."""
    predicted = draw(st.lists(calls, max_size=size))
    if draw(st.integers(0, 4)) == 0:
        return predicted, draw(st.lists(calls, max_size=size))
    reference = list(predicted)
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["change", "drop", "insert", "repeat", "edit"]))
        if not reference or action == "insert":
            reference.insert(draw(st.integers(0, len(reference))), draw(calls))
        elif action == "drop":
            del reference[draw(st.integers(0, len(reference) - 1))]
        elif action == "change":
            reference[draw(st.integers(0, len(reference) - 1))] = draw(calls)
        elif action == "repeat":
            reference.insert(
                draw(st.integers(0, len(reference))),
                reference[draw(st.integers(0, len(reference) - 1))],
            )
        else:  # one argument of one call changed
            k = draw(st.integers(0, len(reference) - 1))
            old = reference[k]
            if old.invalid_args is None:
                args = {**old.args, draw(st.sampled_from(["a", "b", "c"])): draw(values)}
                reference[k] = old.model_copy(update={"args": args})
    if draw(st.booleans()):
        return reference, predicted
    return predicted, reference


def general(predicted: list[ToolCall], reference: list[ToolCall]) -> Any:
    return ordered_pairs(Calls(predicted, by_name=True), Calls(reference, by_name=True))


def check_ordered(predicted: list[ToolCall], reference: list[ToolCall]) -> None:
    pairs, sames = tool_calls._ordered(predicted, reference)
    assert pairs == general(predicted, reference)
    for i, j, _ in pairs:
        if i in sames:
            assert sames[i] == equal_keys(predicted[i].args, reference[j].args)


@settings(max_examples=300)  # the shortcuts' traps need many tries
@given(lists=trajectories(plain_calls, 12))
def test_forced_front_then_the_rest_is_the_general_pairing(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    predicted, reference = lists
    check_ordered(predicted, reference)
    i, j, front, _ = forced_front(predicted, reference)
    # the front it takes is where the general pairing starts, whatever stopped it
    assert front == general(predicted, reference)[: len(front)]
    assert all(a < i and b < j for a, b, _ in front)


@settings(max_examples=300)  # the shortcuts' traps need many tries
@given(lists=trajectories(st.one_of(plain_calls, broken_calls), 12))
def test_broken_calls_take_the_general_way(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    check_ordered(*lists)


@settings(max_examples=300)  # the shortcuts' traps need many tries
@given(lists=trajectories(plain_calls, 40))
def test_long_trajectories_pair_as_the_general_pairing(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    check_ordered(*lists)


@settings(max_examples=300)  # the shortcuts' traps need many tries
@given(lists=trajectories(st.one_of(plain_calls, plain_calls, broken_calls), 12))
def test_the_indexes_of_calls_ahead_pair_as_the_general_pairing(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    # short sides are looked through one by one; here every look goes through the indexes
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_ordered, "_SCAN", -1)
        check_ordered(*lists)


@given(left=arguments, right=arguments)
def test_equal_keys_are_the_equal_items(left: dict[str, Any], right: dict[str, Any]) -> None:
    same = equal_keys(left, right)
    assert sorted(same) == sorted(k for k, _, _ in argument_items(left) & argument_items(right))
    assert same == [k for k in left if k in same]  # in left's order


def test_a_trajectory_is_walked_to_its_end() -> None:
    """The common case the shortcut is for: every third call with one argument changed,
    one extra call made and one expected call missed."""
    predicted = [
        ToolCall(name=f"t{k % 3}", args={"q": f"q{k}", "n": k % 2, "x": True}) for k in range(12)
    ]
    reference = [
        call.model_copy(update={"args": {**call.args, "n": 9}}) if k % 3 == 0 else call
        for k, call in enumerate(predicted)
    ]
    reference.insert(7, ToolCall(name="confirm", args={}))
    predicted.insert(4, ToolCall(name="think", args={"note": "x"}))
    i, j, front, sames = forced_front(predicted, reference)
    assert (i, j) == (13, 13)
    assert front == general(predicted, reference)
    assert sames == {i: ["q", "x"] for i, _, score in front if score != (1, 1)}


def test_a_twin_ahead_stops_the_walk() -> None:
    """An identical call later in the reference could take the predicted call: the walk
    stops before a pair that is not identical, and the general pairing decides."""
    a = ToolCall(name="s", args={"q": 1})
    b = ToolCall(name="s", args={"q": 2})
    i, j, front, _ = forced_front([a], [b, a])
    assert (i, j, front) == (0, 0, [])
    assert tool_calls._ordered([a], [b, a])[0] == [(0, 1, (1, 1))]


def test_true_is_not_one_in_the_walk() -> None:
    """Equal in Python, unequal in JSON: the pair is not identical."""
    predicted = [ToolCall(name="s", args={"x": True, "y": [True]})]
    reference = [ToolCall(name="s", args={"x": 1, "y": [1]})]
    assert tool_calls._ordered(predicted, reference)[0] == [(0, 0, (0, 2))]


def test_a_call_without_arguments_ties_at_zero() -> None:
    """Passing a reference call needs the next one's column to lose strictly: a call
    without arguments scores 0 with every other call of its name, a tie, so the walk stops."""
    s_empty, s_a = ToolCall(name="s", args={}), ToolCall(name="s", args={"a": 0})
    predicted = [s_empty, s_a, s_a]
    reference = [s_empty, ToolCall(name="t", args={}), s_empty]
    assert forced_front(predicted, reference)[:3] == (1, 1, [(0, 0, (1, 1))])
    assert tool_calls._ordered(predicted, reference)[0] == [(0, 0, (1, 1)), (2, 2, (0, 1))]


@settings(max_examples=300)  # the shortcuts' traps need many tries
@given(
    predicted=st.lists(plain_calls, max_size=25),
    reference=st.lists(plain_calls, max_size=25),
)
def test_the_programme_on_unrelated_calls_is_the_definition(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    """No order in common: the walks from the ends stop at once and the dynamic programme
    (rows raised only where a cell beats those to its right) decides nearly everything."""
    assert [(i, j) for i, j, _ in general(predicted, reference)] == slow_ordered(
        predicted, reference
    )


@settings(max_examples=60)  # long rows: each example walks a 60 x 60 table by Fractions
@given(
    predicted=st.lists(plain_calls, min_size=20, max_size=60),
    reference=st.lists(st.one_of(plain_calls, plain_calls, broken_calls), min_size=20, max_size=60),
)
def test_the_programme_on_long_rows_is_the_definition(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    """Rows of many same-name cells (counted through the item index, held as lists of
    columns and weights, read back by the walk only where the names agree), with broken
    reference calls among them that share a row's name but are no cell."""
    assert [(i, j) for i, j, _ in general(predicted, reference)] == slow_ordered(
        predicted, reference
    )


def first_free_best(scaled: list[list[int]]) -> list[tuple[int, int]] | None:
    """The assignment's start by its definition: each row of the shorter side in turn takes
    the first free column of its best score; None when a row finds none."""
    transposed = len(scaled) > len(scaled[0])
    rows = [list(column) for column in zip(*scaled, strict=True)] if transposed else scaled
    taken: set[int] = set()
    pairs = []
    for r, row in enumerate(rows):
        free = [c for c in range(len(row)) if c not in taken and row[c] == max(row)]
        if not free:
            return None
        taken.add(free[0])
        pairs.append((free[0], r) if transposed else (r, free[0]))
    return sorted(pairs)


@settings(max_examples=300)
@given(
    st.integers(1, 6).flatmap(
        lambda width: st.lists(
            st.lists(st.integers(0, 3), min_size=width, max_size=width), min_size=1, max_size=6
        )
    )
)
def test_the_assignment_keeps_its_start_when_every_row_finds_a_best_column(
    scaled: list[list[int]],
) -> None:
    """When every row gets a free column of its best score, that start is the assignment
    (it is optimal: each row has its best); the searches only run for rows that find none."""
    start = first_free_best(scaled)
    if start is not None:
        assert _assignment.hungarian(scaled, 3) == start


def test_the_assignment_keeps_a_start_that_is_found() -> None:
    # the property above passes when no start is ever found: here one is, and is kept
    scaled = [[3, 0, 1], [0, 3, 1]]
    assert first_free_best(scaled) == [(0, 0), (1, 1)]
    assert _assignment.hungarian(scaled, 3) == [(0, 0), (1, 1)]


@settings(max_examples=200)
@given(lists=trajectories(st.one_of(plain_calls, plain_calls, broken_calls), 12))
def test_details_list_the_differences_and_the_calls_left_over(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    """Both pairings: each pair's different arguments are the union of the names less the
    equal ones, sorted; the calls in no pair are the rest of each side, in order."""
    predicted, reference = lists
    sample = sample_with_broken(predicted, reference)
    for strict in (True, False):
        details = ToolCallAccuracy(strict_order=strict).score(sample).details
        for pair in details["pairs"]:
            p, r = predicted[pair["predicted"]].args, reference[pair["reference"]].args
            union = sorted(p.keys() | r.keys())
            assert pair["equal_args"] == sorted(equal_keys(p, r))
            assert pair["different_args"] == [k for k in union if k not in pair["equal_args"]]
        paired = {pair["predicted"] for pair in details["pairs"]}
        expected = {pair["reference"] for pair in details["pairs"]}
        assert [u["predicted"] for u in details["unmatched_predicted"]] == [
            i for i in range(len(predicted)) if i not in paired
        ]
        assert [u["reference"] for u in details["unmatched_reference"]] == [
            j for j in range(len(reference)) if j not in expected
        ]


@settings(max_examples=300)
@given(lists=trajectories(st.one_of(plain_calls, plain_calls, broken_calls), 12))
def test_order_free_pairs_carry_their_pair_scores(
    lists: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    """The pairs an assignment finds are scored without asking whether the calls are
    identical (none left over for it is): each score is still ``pair_score``'s."""
    for predicted, reference in (lists, lists[::-1]):
        left, right = Calls(predicted), Calls(reference)
        for i, k, score in order_free_pairs(left, right):
            assert score == pair_score(left, i, right, k)
