"""The order-free assignment over the cells above 0 (``_sparse``): its heaviest matching is
the brute-force optimum on small weights with many ties and empty rows, whichever way its
free rows are searched (rounds from all at once, or one at a time); through
``order_free_pairs`` it gives the brute-force total and pair count on small call lists and
the Hungarian method's total on mid-size ones, items every call of a side holds left out or
not."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_metrics_tool_calls import brute_best, tie_calls

from tracebridge import ToolCall
from tracebridge.metrics import _assignment, _matching, _sparse
from tracebridge.metrics._matching import Calls, order_free_pairs

weights = st.integers(1, 6).flatmap(
    lambda width: st.lists(
        st.lists(st.integers(0, 3), min_size=width, max_size=width), min_size=1, max_size=6
    )
)


def adjacency_of(matrix: list[list[int]]) -> _sparse.Adjacency:
    """The cells above 0, heaviest first, then by column (as ``nonzero_cells`` lists them)."""
    return [
        sorted(((b, w) for b, w in enumerate(row) if w), key=lambda cell: (-cell[1], cell[0]))
        for row in matrix
    ]


def brute_heaviest(matrix: list[list[int]]) -> int:
    rows, width = len(matrix), len(matrix[0])
    padded = [row + [0] * rows for row in matrix]  # a row may pair with nothing
    return max(
        sum(padded[r][c] for r, c in enumerate(perm))
        for perm in itertools.permutations(range(width + rows), rows)
    )


def matched_total(matrix: list[list[int]], column_of: list[int]) -> int:
    taken = [b for b in column_of if b >= 0]
    assert len(taken) == len(set(taken))
    assert all(matrix[a][b] > 0 for a, b in enumerate(column_of) if b >= 0)
    return sum(matrix[a][b] for a, b in enumerate(column_of) if b >= 0)


@pytest.mark.parametrize("few", [0, 8, 10**9])  # one at a time, as shipped, rounds only
@given(matrix=weights)
def test_the_heaviest_matching_is_the_brute_force_optimum(
    matrix: list[list[int]], few: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_sparse, "_FEW", few)
        column_of = _sparse.heaviest_matching(adjacency_of(matrix), len(matrix[0]))
    assert matched_total(matrix, column_of) == brute_heaviest(matrix)


def test_a_row_can_give_way_and_pair_with_nothing() -> None:
    # row 0 takes column 0 (3); row 1 is better off there (3 against row 0's 2 elsewhere
    # nothing): row 0 moves to column 1 (2) and row 1 takes column 0; total 5
    matrix = [[3, 2], [3, 0]]
    assert _sparse.heaviest_matching(adjacency_of(matrix), 2) == [1, 0]
    # with nowhere else to go, row 0 keeps its 3 and row 1 pairs with nothing
    assert _sparse.heaviest_matching(adjacency_of([[3, 0], [2, 0]]), 2) == [0, -1]


def total(pairs: list[tuple[int, int, tuple[int, int]]]) -> Fraction:
    return sum((Fraction(e, u) for _, _, (e, u) in pairs), Fraction(0))


def through_cells(predicted: list[ToolCall], reference: list[ToolCall]) -> list[Any]:
    """``order_free_pairs`` with every assignment over the cells above 0."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_matching, "_SPARSE", 0)
        patch.setattr(_assignment, "_SMALLER", 10**9)  # never through classes
        return order_free_pairs(Calls(predicted), Calls(reference))


def through_hungarian(predicted: list[ToolCall], reference: list[ToolCall]) -> list[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_matching, "_SPARSE", 10**18)
        patch.setattr(_assignment, "_SMALLER", 10**9)
        return order_free_pairs(Calls(predicted), Calls(reference))


def check_pairing(pairs: list[Any], predicted: list[ToolCall], reference: list[ToolCall]) -> None:
    assert len({i for i, _, _ in pairs}) == len(pairs) == len({k for _, k, _ in pairs})
    left, right = Calls(predicted), Calls(reference)
    for i, k, score in pairs:
        assert score == _matching.pair_score(left, i, right, k)


@given(
    predicted=st.lists(tie_calls, max_size=6),
    reference=st.lists(tie_calls, max_size=6),
)
def test_the_pairing_over_cells_above_0_is_the_brute_force_optimum(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> None:
    pairs = through_cells(predicted, reference)
    check_pairing(pairs, predicted, reference)
    assert (total(pairs), len(pairs)) == brute_best(predicted, reference, ordered=False)


def one_tool_calls(rng: random.Random, count: int, tag: str, spec: dict[str, Any]) -> list[Any]:
    """Calls of one tool: arguments a, b, c from ``spec["values"]`` values, some left out
    with ``spec["drop"]``, a flag on every call of the side when ``spec["flag"]`` is this
    side, and an id no other call has."""
    calls = []
    for k in range(count):
        args: dict[str, Any] = {
            key: rng.randrange(spec["values"]) for key in "abc" if rng.random() >= spec["drop"]
        }
        if spec["flag"] in (tag, "both"):
            args["flag"] = True
        args["id"] = f"{tag}{k}"
        calls.append(ToolCall(name="t", args=args))
    return calls


@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    values=st.integers(1, 6),
    drop=st.sampled_from([0.0, 0.0, 0.3]),
    flag=st.sampled_from([None, "p", "r", "both"]),
)
def test_the_pairing_over_cells_above_0_totals_as_the_hungarian_method(
    seed: int, sizes: tuple[int, int], values: int, drop: float, flag: str | None
) -> None:
    rng = random.Random(seed)
    spec = {"values": values, "drop": drop, "flag": flag}
    predicted = one_tool_calls(rng, sizes[0], "p", spec)
    reference = one_tool_calls(rng, sizes[1], "r", spec)
    pairs = through_cells(predicted, reference)
    check_pairing(pairs, predicted, reference)
    expected = through_hungarian(predicted, reference)
    assert total(pairs) == total(expected)
    assert len(pairs) == len(expected) == min(sizes)


def test_an_item_every_call_holds_is_left_out_of_the_cells() -> None:
    # every call holds flag=True: it adds as much to every pairing, so only a and b count
    # (p0-r0 shares a; nothing else is shared but the flag)
    predicted = [
        ToolCall(name="t", args={"a": 1, "b": 1, "flag": True}),
        ToolCall(name="t", args={"a": 2, "b": 2, "flag": True}),
    ]
    reference = [
        ToolCall(name="t", args={"a": 1, "b": 3, "flag": True}),
        ToolCall(name="t", args={"a": 4, "b": 4, "flag": True}),
    ]
    left, right = Calls(predicted), Calls(reference)
    found = (left.items, right.items), (left.keys, right.keys)
    assert _sparse.nonzero_cells([0, 1], [0, 1], *found) == [[(0, 1)], []]
    # one reference call more: the flag of the predicted side now counts (not every
    # column gets a partner), the reference side's flag still does not
    reference.append(ToolCall(name="t", args={"a": 5, "b": 5}))
    left, right = Calls(predicted), Calls(reference)
    found = (left.items, right.items), (left.keys, right.keys)
    assert _sparse.nonzero_cells([0, 1], [0, 1, 2], *found) == [
        [(0, 2), (1, 1)],
        [(0, 1), (1, 1)],
    ]
    pairs = through_cells(predicted, reference)
    assert pairs == [(0, 0, (2, 3)), (1, 1, (1, 3))]
    assert total(pairs) == total(through_hungarian(predicted, reference))


def test_many_calls_of_one_tool_with_overlapping_arguments_pair_over_cells_above_0() -> None:
    # 300 calls a side, arguments from 10 values and a unique id: most cells are 0, and
    # the classes of alike calls are too many; the total is the Hungarian method's
    rng = random.Random(11)
    spec = {"values": 10, "drop": 0.0, "flag": None}
    predicted = one_tool_calls(rng, 300, "p", spec)
    reference = one_tool_calls(rng, 300, "r", spec)
    pairs = order_free_pairs(Calls(predicted), Calls(reference))
    assert len(pairs) == 300
    assert total(pairs) == total(through_hungarian(predicted, reference))
