"""The order-free pairing's shortcuts against its plain forms: indexed scores (calls sharing
their argument names) give the same pairs as scoring every cell, a lone call pairs as the
assignment would, and classes of alike calls pair as well as the assignment; the
cell-by-cell form is checked against brute force in test_metrics_tool_calls.py."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import ToolCall
from tracebridge.metrics import _assignment, _matching
from tracebridge.metrics._matching import Calls, order_free_pairs

values = st.sampled_from([0, 1, 1.0, True, False, "s", None, [1], [True], {"k": 1}])
same_shape_calls = st.builds(
    ToolCall,
    name=st.sampled_from(["a", "b"]),
    args=st.fixed_dictionaries({"x": values, "y": st.integers(0, 2), "z": values}),
)


def every_cell(left: Calls, rows: list[int], right: Calls, columns: list[int]) -> Any:
    scores = [
        [(len(left.items[i] & right.items[k]), len(left.keys[i] | right.keys[k])) for k in columns]  # type: ignore[operator]
        for i in rows
    ]
    scale = math.lcm(*{u for row in scores for _, u in row})
    return [[e * (scale // u) for e, u in row] for row in scores], scale


def sides(calls: st.SearchStrategy[ToolCall], size: int) -> dict[str, Any]:
    """``predicted`` and ``reference``: one to ``size`` calls each."""
    one_side = st.lists(calls, min_size=1, max_size=size)
    return {"predicted": one_side, "reference": one_side}


@given(**sides(same_shape_calls, 8))
def test_indexed_scores_pair_as_every_cell_does(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assignment, "_SMALLER", 10**9)  # the assignment, never classes
        indexed = order_free_pairs(Calls(predicted), Calls(reference))
        patch.setattr(_matching, "_spare_scores", every_cell)
        assert order_free_pairs(Calls(predicted), Calls(reference)) == indexed


@given(
    lone=same_shape_calls.map(lambda c: c.model_copy(update={"name": "a"})),
    many=st.lists(same_shape_calls.map(lambda c: c.model_copy(update={"name": "a"})),
                  min_size=1, max_size=8),
    lone_predicted=st.booleans(),
)
def test_a_lone_call_pairs_as_the_assignment_would(
    lone: ToolCall, many: list[ToolCall], lone_predicted: bool
) -> None:
    predicted, reference = ([lone], many) if lone_predicted else (many, [lone])
    left, right = Calls(predicted), Calls(reference)
    rows = [i for i in range(len(predicted))]
    columns = [k for k in range(len(reference))]
    scaled, scale = every_cell(left, rows, right, columns)
    expected = [
        (rows[a], columns[b], _matching.pair_score(left, rows[a], right, columns[b]))
        for a, b in _assignment.hungarian(scaled, scale)
    ]
    assert _matching._one_to_many(left, rows, right, columns) == expected


few_values = st.sampled_from([0, 1, 1.0, True, "s", [1]])
few_value_calls = st.builds(
    ToolCall,
    name=st.just("a"),
    args=st.dictionaries(st.sampled_from(["x", "y", "z"]), few_values, max_size=3),
)


def total(pairs: list[tuple[int, int, tuple[int, int]]]) -> Fraction:
    return sum((Fraction(e, u) for _, _, (e, u) in pairs), Fraction(0))


@given(**sides(few_value_calls, 9))
def test_classes_of_alike_calls_pair_as_well_as_the_assignment(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    left, right = Calls(predicted), Calls(reference)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assignment, "_SMALLER", 10**9)  # never through classes
        assigned = order_free_pairs(left, right)
        patch.setattr(_assignment, "_SMALLER", 0)  # always through classes
        patch.setattr(_assignment, "_WORTH", 0)
        through_classes = order_free_pairs(left, right)
    assert total(through_classes) == total(assigned)
    assert len(through_classes) == len(assigned)
    assert len({i for i, _, _ in through_classes}) == len(through_classes)
    assert len({k for _, k, _ in through_classes}) == len(through_classes)
    for i, k, score in through_classes:
        assert score == _matching.pair_score(left, i, right, k)


def test_many_alike_calls_of_one_tool_pair_through_classes() -> None:
    # 400 calls of one tool with two small-valued arguments and an id no partner shares:
    # 16 classes a side; the pairing is the assignment's total (checked on its value)
    predicted = [
        ToolCall(name="t", args={"a": k % 4, "b": k // 4 % 4, "id": k}) for k in range(400)
    ]
    reference = [
        ToolCall(name="t", args={"a": k % 4, "b": k % 3, "id": -k - 1}) for k in range(400)
    ]
    pairs = order_free_pairs(Calls(predicted), Calls(reference))
    assert len(pairs) == 400
    # every reference call has b in {0, 1, 2}: 300 of 400 predicted calls can match a
    # and b (2/3), the 100 with b == 3 only a (1/3)
    assert total(pairs) == Fraction(2, 3) * 300 + Fraction(1, 3) * 100
