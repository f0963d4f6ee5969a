"""The assignment's start on tight cells (``_assignment._tight_augment``): rows the first
pass left without a free column of their best score get one through augmenting paths, and
the Hungarian method still reaches the optimum; checked against brute force on small integer
scores with many ties and rows that score 0 everywhere."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge.metrics import _assignment

small_scores = st.integers(1, 6).flatmap(
    lambda width: st.lists(
        st.lists(st.integers(0, 2), min_size=width, max_size=width), min_size=1, max_size=6
    )
)


def brute_total(scaled: list[list[int]]) -> int:
    rows, width = len(scaled), len(scaled[0])
    if rows <= width:
        return max(
            sum(scaled[r][c] for r, c in enumerate(perm))
            for perm in itertools.permutations(range(width), rows)
        )
    return max(
        sum(scaled[r][c] for c, r in enumerate(perm))
        for perm in itertools.permutations(range(rows), width)
    )


def checked_total(scaled: list[list[int]], pairs: list[tuple[int, int]]) -> int:
    assert len(pairs) == min(len(scaled), len(scaled[0]))
    assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
    return sum(scaled[r][c] for r, c in pairs)


@given(scaled=small_scores)
def test_the_assignment_with_the_tight_start_is_optimal(scaled: list[list[int]]) -> None:
    assert checked_total(scaled, _assignment.hungarian(scaled, 2)) == brute_total(scaled)


@given(scaled=small_scores)
def test_the_tight_start_changes_no_total(scaled: list[list[int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assignment, "_tight_augment", lambda spare, *rest: spare)
        without = checked_total(scaled, _assignment.hungarian(scaled, 2))
    assert checked_total(scaled, _assignment.hungarian(scaled, 2)) == without


def test_a_row_left_spare_gets_a_column_through_an_augmenting_path() -> None:
    # row 1 takes column 1 first (its first best); row 2's only best is column 1: moving
    # row 1 to column 2 (also its best) frees it, with no potential change
    cost = [[0, 0, 2], [0, 2, 2]]  # scale 2 - score
    u: list[float] = [0, 0, 0]
    owner = [0, 1, 0, 0]
    assert _assignment._tight_augment([2], cost, u, owner, 2) == []
    assert owner == [0, 2, 1, 0]


def test_a_row_that_scores_nothing_moves_to_any_free_column() -> None:
    # row 1 (no score above 0: every cell tight) holds column 1, row 2's only best
    cost = [[2, 2, 2], [0, 2, 2]]
    u: list[float] = [0, 2, 0]
    owner = [0, 1, 0, 0]
    assert _assignment._tight_augment([2], cost, u, owner, 2) == []
    assert owner == [0, 2, 1, 0]


def test_a_row_with_no_path_stays_spare() -> None:
    # both rows' only best is column 1: no tight path frees it
    cost = [[0, 2], [0, 2]]
    u: list[float] = [0, 0, 0]
    owner = [0, 1, 0]
    assert _assignment._tight_augment([2], cost, u, owner, 2) == [2]
    assert owner == [0, 1, 0]
