"""The order-free pairing's indexed scores (calls sharing their argument names) give the
same pairs as scoring every cell; the cell-by-cell form is checked against brute force in
test_metrics_tool_calls.py."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import ToolCall
from tracebridge.metrics import _matching
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


@given(
    predicted=st.lists(same_shape_calls, min_size=1, max_size=8),
    reference=st.lists(same_shape_calls, min_size=1, max_size=8),
)
def test_indexed_scores_pair_as_every_cell_does(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    indexed = order_free_pairs(Calls(predicted), Calls(reference))
    with pytest.MonkeyPatch.context() as patch:
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
        for a, b in _matching._assignment(scaled, scale)
    ]
    assert _matching._one_to_many(left, rows, right, columns) == expected
