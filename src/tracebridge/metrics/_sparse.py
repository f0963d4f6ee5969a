"""The order-free assignment over the cells that score above 0.

Two calls of a name that share no equal argument score 0, and every same-name pair is
allowed, so a best pairing of ``min(rows, columns)`` pairs is a heaviest matching over the
cells above 0 (``heaviest_matching``), completed with pairs at 0 between the calls it leaves
over: no call is left without a partner the other side still has, and the total is the same.
With many calls of one tool whose arguments overlap only in part, most cells are 0, and the
work follows the cells above 0 rather than rows * columns.

``nonzero_cells`` lists those cells through an index of the columns' argument items, so a
row touches only the columns it shares an item with.
"""

from __future__ import annotations

import math
from collections import Counter
from heapq import heapify, heappop, heappush
from operator import itemgetter, mul
from typing import Any

__all__ = ["heaviest_matching", "nonzero_cells", "sparse_assignment"]

Adjacency = list[list[tuple[int, int]]]
"""Per row, its cells above 0 as (column, weight), heaviest first, then by column."""

_ALONE = -2
"""``column_of`` of a row that pairs with no cell above 0 (it is paired at 0 afterwards)."""

_HEAVIEST_FIRST = itemgetter(1)
_LONG = 4
"""A row whose postings hold more than this many columns per column counts first and sorts
the columns it reached (else it sorts the postings, which is faster on short ones)."""
_FEW = 8
"""Rounds from all free rows at once go on while each pairs at least one free row in this
many (see ``heaviest_matching``)."""


def sparse_assignment(
    rows: list[int],
    columns: list[int],
    items: tuple[list[Any], list[Any]],
    keys: tuple[list[Any], list[Any]],
) -> list[tuple[int, int]]:
    """(row, column) positions of a maximum-total pairing of ``min(len(rows),
    len(columns))`` pairs (see ``class_assignment`` for ``items`` and ``keys``): a heaviest
    matching over the cells above 0, then the rows it leaves over paired in order with
    the columns it leaves over."""
    if len(rows) > len(columns):
        flipped = sparse_assignment(columns, rows, (items[1], items[0]), (keys[1], keys[0]))
        return sorted((i, k) for k, i in flipped)
    adjacency = nonzero_cells(rows, columns, items, keys)
    column_of = heaviest_matching(adjacency, len(columns))
    taken = set(column_of)
    leftover = iter([b for b in range(len(columns)) if b not in taken])
    return [
        (i, columns[b if b >= 0 else next(leftover)]) for i, b in zip(rows, column_of, strict=True)
    ]


def nonzero_cells(
    rows: list[int],
    columns: list[int],
    items: tuple[list[Any], list[Any]],
    keys: tuple[list[Any], list[Any]],
) -> Adjacency:
    """Each row's cells above 0, as integer weights proportional to the pair scores up to a
    shift that every pairing of ``len(rows) <= len(columns)`` pairs shares (rows are the
    smaller side).

    A cell scores ``equal / union`` (none of these calls is identical to a partner), and its
    weight is ``equal * (scale // union)`` on the least common multiple of the unions. When
    every pair has the same union (as when all calls have the same argument names), the
    weight is the count of equal items; then an item every column holds adds 1 to each cell
    of its row, and every row gets a partner, so it is left out (and an item every row
    holds, when the sides are as long: every column gets one too).
    """
    (l_items, r_items), (l_keys, r_keys) = items, keys
    width = len(columns)
    index: dict[Any, list[int]] = {}
    for b, k in enumerate(columns):
        for item in r_items[k]:
            positions = index.get(item)
            if positions is None:
                index[item] = [b]
            else:
                positions.append(b)
    one_union = _one_union([l_keys[i] for i in rows], [r_keys[k] for k in columns])
    dropped: set[Any] = set()
    if one_union:
        dropped = {item for item, positions in index.items() if len(positions) == width}
        if len(rows) == width:  # the items every row holds, among those of the columns
            held = l_items[rows[0]].intersection(*[l_items[i] for i in rows[1:]])
            dropped.update(item for item in held if item in index)
    counted: list[dict[int, int]] = []  # per row: equal items by column, columns in order
    long = _LONG * width
    for i in rows:
        reached: list[int] = []
        for item in l_items[i]:
            positions = index.get(item)
            if positions is not None and item not in dropped:
                reached += positions
        # columns in order, so that the cells' order never depends on how items hash
        if len(reached) <= long:
            reached.sort()
            counts: dict[int, int] = {}
            for b in reached:  # a loop costs less than a Counter on a few columns
                counts[b] = counts.get(b, 0) + 1
            counted.append(counts)
        else:  # sorting the columns reached costs less than sorting every posting
            many = Counter(reached)
            order = sorted(many)
            counted.append(dict(zip(order, map(many.__getitem__, order), strict=True)))
    if one_union:
        return [sorted(counts.items(), key=_HEAVIEST_FIRST, reverse=True) for counts in counted]
    bits: dict[str, int] = {}
    row_masks = [_mask(l_keys[i], bits) for i in rows]
    column_masks = [_mask(r_keys[k], bits) for k in columns]
    union_rows = [
        list(map(int.bit_count, map(mask.__or__, map(column_masks.__getitem__, counts))))
        for mask, counts in zip(row_masks, counted, strict=True)
    ]
    scale = math.lcm(*set().union(*union_rows))
    share = {union: scale // union for union in range(1, len(bits) + 1)}
    return [
        sorted(
            zip(counts, map(mul, counts.values(), map(share.__getitem__, unions)), strict=True),
            key=_HEAVIEST_FIRST,
            reverse=True,
        )
        for counts, unions in zip(counted, union_rows, strict=True)
    ]


def _mask(names: Any, bits: dict[str, int]) -> int:
    """Argument names as a bit set (``bits`` gives each name seen its bit)."""
    mask = 0
    for name in names:
        bit = bits.get(name)
        if bit is None:
            bit = bits[name] = 1 << len(bits)
        mask |= bit
    return mask


_SHAPE_PAIRS = 4_096
"""``_one_union`` compares the argument-name sets pairwise only up to this many pairs
(beyond, it answers False: weights on a common scale are always right)."""


def _one_union(row_keys: list[Any], column_keys: list[Any]) -> bool:
    """Whether every (row, column) pair has the same number of argument names in all."""
    # dict key views compare as sets: one name set a side, no set made
    if row_keys.count(row_keys[0]) == len(row_keys) and column_keys.count(
        column_keys[0]
    ) == len(column_keys):
        return True
    row_shapes = set(map(frozenset, row_keys))
    column_shapes = set(map(frozenset, column_keys))
    if len(row_shapes) * len(column_shapes) > _SHAPE_PAIRS:
        return False
    return len({len(r | c) for r in row_shapes for c in column_shapes}) == 1


def heaviest_matching(adjacency: Adjacency, width: int) -> list[int]:
    """The column of each row (-1: none) in a matching of greatest total weight.

    Primal-dual, on exact integers: a row may also stay alone at weight 0, so the duals
    are ``u[row] >= 0`` and ``v[column] >= 0`` with ``u + v >= weight`` on every cell,
    equal on every pair, 0 for a column left free and for a row left alone. The rows start
    at their heaviest weight (every such cell tight) and take tight cells along augmenting
    paths (``_augment``). Then rounds: one Dijkstra search from all free rows at once lowers
    their duals by the length of the shortest way to a free column or to going alone
    (``_lower``), and augmenting paths on tight cells follow. Each round lowers every free
    row's dual by at least 1, so with light weights (few argument names) a few rounds end
    it. Once a round pairs fewer than one free row in ``_FEW``, the rows still free search
    one at a time (``_search``: the Hungarian method's step, over the cells above 0 only).
    """
    n = len(adjacency)
    u = [cells[0][1] if cells else 0 for cells in adjacency]
    v = [0] * width
    row_of = [-1] * width
    column_of = [-1 if u[i] else _ALONE for i in range(n)]
    free = [i for i in range(n) if u[i]]
    free = _augment(free, adjacency, u, v, row_of, column_of)
    while free:
        _lower(free, adjacency, u, v, row_of)
        before = len(free)
        free = _augment(free, adjacency, u, v, row_of, column_of)
        if (before - len(free)) * _FEW < before:
            break
    for root in free:
        _search(root, adjacency, u, v, row_of, column_of)
    return [b if b >= 0 else -1 for b in column_of]


def _augment(
    free: list[int],
    adjacency: Adjacency,
    u: list[int],
    v: list[int],
    row_of: list[int],
    column_of: list[int],
) -> list[int]:
    """The free rows left after augmenting along tight paths until none is left.

    Each sweep searches depth-first from every free row in turn, a column looked at by one
    search closed to the rest of the sweep (so the paths found are disjoint); sweeps repeat
    while one finds a path. A cell ``(row, column)`` is tight when ``weight == u[row] +
    v[column]``: cells are heaviest first, so a row's scan stops at a weight below its ``u``.
    """
    while True:
        seen: set[int] = set()
        left: list[int] = []
        for root in free:
            stack = [root]
            path: list[int] = []  # path[k]: the column stack[k] would take
            scans = [iter(adjacency[root])]
            found = -1
            while stack:
                row = stack[-1]
                floor = u[row]
                if floor == 0:
                    found = _ALONE
                    break
                step = -1
                for column, weight in scans[-1]:
                    if weight < floor:
                        break  # lighter cells follow: none tight
                    if v[column] == weight - floor and column not in seen:
                        seen.add(column)
                        step = column
                        break
                if step < 0:  # no tight cell left from this row: step back
                    stack.pop()
                    scans.pop()
                    if path:
                        path.pop()
                    continue
                owner = row_of[step]
                if owner < 0:
                    found = step
                    break
                stack.append(owner)
                path.append(step)
                scans.append(iter(adjacency[owner]))
            if found == -1:
                left.append(root)
                continue
            path.append(found)
            for row, column in zip(stack, path, strict=True):
                column_of[row] = column
                if column >= 0:
                    row_of[column] = row
        if len(left) == len(free):
            return left
        free = left


def _lower(
    sources: list[int], adjacency: Adjacency, u: list[int], v: list[int], row_of: list[int]
) -> tuple[int, int, dict[int, int]]:
    """One Dijkstra search from the free rows ``sources`` at once over the slacks ``u[row]
    + v[column] - weight`` (a column leads on to its row at no cost; a row reached at ``d``
    can go alone at ``d + u[row]``), up to the nearest end at ``delta``; then every row and
    column reached at ``d < delta`` moves its dual by ``delta - d``, which keeps every slack
    >= 0 and every pair tight and makes the shortest paths tight.

    Returns that end, as the row that gets a column and the column (``_ALONE``: the row
    goes alone), and the row each reached column was reached from.
    """
    best = min(u[i] for i in sources)
    end_row = next(i for i in sources if u[i] == best)
    end_column = _ALONE
    row_distance = dict.fromkeys(sources, 0)
    heap = [(0, i) for i in sources]
    heapify(heap)
    settled: list[tuple[int, int]] = []
    column_distance: dict[int, int] = {}
    came: dict[int, int] = {}
    while heap:
        d, row = heappop(heap)
        if d >= best:
            break
        if d > row_distance[row]:
            continue
        settled.append((row, d))
        base = d + u[row]
        if base < best:
            best, end_row, end_column = base, row, _ALONE
        for column, weight in adjacency[row]:
            reach = base - weight
            if reach >= best:
                break  # lighter cells follow: all farther
            reach += v[column]
            if reach < best and reach < column_distance.get(column, best):
                column_distance[column] = reach
                came[column] = row
                owner = row_of[column]
                if owner < 0:
                    best, end_row, end_column = reach, row, column
                elif reach < row_distance.get(owner, best):
                    row_distance[owner] = reach
                    heappush(heap, (reach, owner))
    for row, d in settled:
        if d < best:
            u[row] -= best - d
    for column, d in column_distance.items():
        if d < best:
            v[column] += best - d
    return end_row, end_column, came


def _search(
    root: int,
    adjacency: Adjacency,
    u: list[int],
    v: list[int],
    row_of: list[int],
    column_of: list[int],
) -> None:
    """The Hungarian method's step for one free row: ``_lower`` from it alone, then the
    shortest path to its end flipped (each row on it takes the column after it)."""
    row, column, came = _lower([root], adjacency, u, v, row_of)
    while True:
        previous = column_of[row]
        column_of[row] = column
        if column >= 0:
            row_of[column] = row
        if row == root:
            return
        column = previous
        row = came[column]
