"""Comparing tool calls: JSON-typed equality, per-pair scores and the two pairings.

Arithmetic is exact: pair scores are fractions, scaled by their common denominator to
integers for the search, so the pairing that maximises the total is found without rounding
and ties are broken the same way on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..messages import ToolCall

__all__ = [
    "Pair",
    "args_equal",
    "best_assignment",
    "json_key",
    "order_free_pairs",
    "ordered_pairs",
    "score_matrix",
]

Pair = tuple[int, int, Fraction]
"""(predicted index, reference index, score of the pair)."""


def json_key(value: Any) -> Any:
    """A hashable form of a JSON value under which equal means JSON-equal.

    Numbers compare by value (``1`` and ``1.0`` get one key), booleans never equal numbers,
    objects ignore key order, arrays keep it.

    >>> json_key({"a": [1, True]}) == json_key({"a": [1.0, True]})
    True
    >>> json_key(True) == json_key(1)
    False
    """
    kind = type(value)
    if kind is bool:
        return ("bool", value)
    if kind is int or kind is float:
        return ("number", Fraction(value))
    if kind is str:
        return ("string", value)
    if value is None:
        return ("null",)
    if kind is list:
        return ("array", tuple(json_key(item) for item in value))
    if kind is dict:
        return ("object", tuple(sorted((key, json_key(item)) for key, item in value.items())))
    raise TypeError(f"not a JSON value: {kind.__name__}")  # args are checked JSON on construction


def args_equal(left: Any, right: Any) -> bool:
    """Whether two JSON values are equal under JSON typing (see ``json_key``)."""
    return bool(json_key(left) == json_key(right))


def _argument_keys(call: ToolCall) -> dict[str, Any] | None:
    if call.invalid_args is not None:
        return None
    return {key: json_key(value) for key, value in call.args.items()}


def score_matrix(
    predicted: Sequence[ToolCall], reference: Sequence[ToolCall]
) -> list[list[Fraction | None]]:
    """The score of every predicted/reference pair; None where the two cannot pair.

    Calls pair only when their names are equal and neither has ``invalid_args`` (a call
    whose arguments did not parse matches nothing). A pair scores the share of the union
    of their argument keys whose values are equal; two calls without arguments score 1.
    """
    left = [_argument_keys(call) for call in predicted]
    right = [_argument_keys(call) for call in reference]
    matrix: list[list[Fraction | None]] = []
    for p_call, p_args in zip(predicted, left, strict=True):
        row: list[Fraction | None] = []
        for r_call, r_args in zip(reference, right, strict=True):
            if p_call.name != r_call.name or p_args is None or r_args is None:
                row.append(None)
                continue
            keys = p_args.keys() | r_args.keys()
            if not keys:
                row.append(Fraction(1))
                continue
            equal = sum(
                1 for key in keys if key in p_args and key in r_args and p_args[key] == r_args[key]
            )
            row.append(Fraction(equal, len(keys)))
        matrix.append(row)
    return matrix


def _as_integers(matrix: list[list[Fraction | None]]) -> tuple[list[list[int | None]], int]:
    """The matrix scaled by the common denominator: exact, and fast to add and compare."""
    scale = math.lcm(*(s.denominator for row in matrix for s in row if s is not None))
    scaled = [[None if s is None else int(s * scale) for s in row] for row in matrix]
    return scaled, scale


def ordered_pairs(matrix: list[list[Fraction | None]]) -> list[Pair]:
    """The order-preserving pairing with the highest total (a weighted longest common
    subsequence); among equal totals, the one with the most pairs."""
    scores, _ = _as_integers(matrix)
    n, m = len(scores), len(scores[0]) if scores else 0
    # best[i][j]: (total, pairs) for predicted[i:] against reference[j:]
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below, here = scores[i], best[i + 1], best[i]
        for j in range(m - 1, -1, -1):
            candidate = max(below[j], here[j + 1])
            s = row[j]
            if s is not None:
                total, count = below[j + 1]
                candidate = max(candidate, (total + s, count + 1))
            here[j] = candidate
    pairs: list[Pair] = []
    i = j = 0
    while i < n and j < m:
        s = scores[i][j]
        if s is not None:
            total, count = best[i + 1][j + 1]
            if best[i][j] == (total + s, count + 1):
                pairs.append((i, j, matrix[i][j] or Fraction(0)))
                i, j = i + 1, j + 1
                continue
        if best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def order_free_pairs(
    predicted: Sequence[ToolCall],
    reference: Sequence[ToolCall],
    matrix: list[list[Fraction | None]],
) -> list[Pair]:
    """The one-to-one pairing with the highest total, in any order.

    Only calls with the same name can pair, so each name is its own assignment problem:
    every call of the smaller side gets a partner, chosen by the Hungarian method.
    """
    groups: dict[str, tuple[list[int], list[int]]] = {}
    for i, call in enumerate(predicted):
        if call.invalid_args is None:
            groups.setdefault(call.name, ([], []))[0].append(i)
    for j, call in enumerate(reference):
        if call.invalid_args is None and call.name in groups:
            groups[call.name][1].append(j)
    pairs: list[Pair] = []
    for rows, columns in groups.values():
        if not columns:
            continue
        scores = [[matrix[i][j] or Fraction(0) for j in columns] for i in rows]
        for r, c in best_assignment(scores):
            pairs.append((rows[r], columns[c], scores[r][c]))
    return sorted(pairs)


def best_assignment(scores: list[list[Fraction]]) -> list[tuple[int, int]]:
    """Row/column pairs of a maximum-total assignment of ``min(rows, columns)`` pairs.

    The Hungarian method with potentials, O(n^2 m), on the integer cost
    ``scale - score * scale`` (exact).
    """
    transposed = len(scores) > len(scores[0])
    if transposed:
        scores = [list(column) for column in zip(*scores, strict=True)]
    scaled, scale = _as_integers([list(row) for row in scores])
    n, m = len(scores), len(scores[0])
    cost = [[scale - (s or 0) for s in row] for row in scaled]
    u = [0] * (n + 1)
    v = [0] * (m + 1)
    owner = [0] * (m + 1)  # owner[j]: the row (1-based) assigned to column j; 0 = free
    way = [0] * (m + 1)
    for row in range(1, n + 1):
        owner[0] = row
        column = 0
        slack: list[int | None] = [None] * (m + 1)
        used = [False] * (m + 1)
        while owner[column] != 0:
            used[column] = True
            current = owner[column]
            delta: int | None = None
            next_column = 0
            for j in range(1, m + 1):
                if used[j]:
                    continue
                reduced = cost[current - 1][j - 1] - u[current] - v[j]
                slack_j = slack[j]
                if slack_j is None or reduced < slack_j:
                    slack[j] = slack_j = reduced
                    way[j] = column
                if delta is None or slack_j < delta:
                    delta, next_column = slack_j, j
            assert delta is not None  # some column is free while a row is unassigned
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    slack_j = slack[j]
                    if slack_j is not None:
                        slack[j] = slack_j - delta
            column = next_column
        while column != 0:
            previous = way[column]
            owner[column] = owner[previous]
            column = previous
    assignment = [(owner[j] - 1, j - 1) for j in range(1, m + 1) if owner[j] != 0]
    if transposed:
        assignment = [(c, r) for r, c in assignment]
    return sorted(assignment)
