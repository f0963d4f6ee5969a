"""Optimal assignments for the order-free pairing, on exact integer scores.

``hungarian``: the Hungarian method with potentials, O(n^2 m), for any score matrix.

``class_assignment``: when many calls are interchangeable. Two calls left for the
assignment (same name, none identical to a partner) score ``len(I & J) / len(K | L)``
(``I``, ``J`` their argument items, ``K``, ``L`` their argument names). An item of a
predicted call that no reference call of the name holds can never be equal, so a call's
score with every partner depends only on its argument names and the items the other side
holds too: calls alike in those are interchangeable. Many calls of one tool with arguments
from small sets (flags, enums, small numbers) and unique ids fall into few such classes,
and the assignment becomes a transportation problem between the classes, solved exactly by
successive shortest paths on integer costs. The class flows are handed out to calls in
order.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import chain
from typing import Any

__all__ = ["best_assignment", "class_assignment", "hungarian"]

_SMALLER = 1
"""Classes are used when row classes * column classes * the fewer of the two * this is at
most twice the (row, column, equal item) triples the matching over the cells above 0
(``_sparse``) would count, plus the calls: the transportation problem's paths cost about
row classes * column classes each, and there are about as many as the fewer classes; both
sides' costs per unit were measured alike within a factor of 2."""
_WORTH = 40_000
"""Below this many (row, column) cells the assignment (which first gives every row a free
column of its best score) is cheap enough: classes are not tried."""


def class_assignment(
    rows: list[int],
    columns: list[int],
    items: tuple[list[Any], list[Any]],
    keys: tuple[list[Any], list[Any]],
) -> list[tuple[int, int]] | None:
    """(row, column) positions of a maximum-total pairing of ``min(len(rows),
    len(columns))`` pairs, found through classes of interchangeable calls; None when the
    classes are not much fewer than the calls. ``items`` and ``keys`` hold each side's
    argument items and names by position."""
    if len(rows) * len(columns) < _WORTH:
        return None
    (l_items, r_items), (l_keys, r_keys) = items, keys
    held_right = frozenset().union(*[r_items[k] for k in columns])
    held_left = frozenset().union(*[l_items[i] for i in rows])
    row_classes = _classes(rows, l_items, l_keys, held_right)
    column_classes = _classes(columns, r_items, r_keys, held_left)
    fewer = min(len(row_classes), len(column_classes))
    paths = len(row_classes) * len(column_classes) * fewer
    if paths * _SMALLER > 2 * _counted(rows, columns, items) + len(rows) + len(columns):
        return None
    scores = [
        [(len(items & other), len(names | other_names)) for other_names, other in column_classes]
        for names, items in row_classes
    ]
    scale = math.lcm(*{u for row in scores for _, u in row if u})
    # no argument names on either side: the calls are identical, the pair scores 1
    cost = [[scale - (e * (scale // u) if u else scale) for e, u in row] for row in scores]
    flow = _transport(
        [len(members) for members in row_classes.values()],
        [len(members) for members in column_classes.values()],
        cost,
        min(len(rows), len(columns)),
    )
    pairs: list[tuple[int, int]] = []
    handed = [0] * len(column_classes)
    column_members = list(column_classes.values())
    for a, members in enumerate(row_classes.values()):
        taken = 0
        for b, amount in enumerate(flow[a]):
            if amount:
                given = handed[b]
                pairs += zip(
                    members[taken : taken + amount],
                    column_members[b][given : given + amount],
                    strict=True,
                )
                taken += amount
                handed[b] = given + amount
    return pairs


def _counted(rows: list[int], columns: list[int], items: tuple[list[Any], list[Any]]) -> int:
    """About how many (row, column, equal item) triples the matching over the cells above 0
    would count: an item held by every call of a side adds as much to every pairing, and is
    left out."""
    l_items, r_items = items
    in_rows = Counter(chain.from_iterable([l_items[i] for i in rows]))
    in_columns = Counter(chain.from_iterable([r_items[k] for k in columns]))
    n, m = len(rows), len(columns)
    return sum(
        count * in_columns[item]
        for item, count in in_rows.items()
        if count < n and 0 < in_columns.get(item, 0) < m
    )


def _classes(
    positions: list[int], items: list[Any], keys: list[Any], held: frozenset[Any]
) -> dict[tuple[frozenset[str], frozenset[Any]], list[int]]:
    """Positions by (argument names, the items the other side holds too), in order."""
    classes: dict[tuple[frozenset[str], frozenset[Any]], list[int]] = {}
    for k in positions:
        kind = (frozenset(keys[k]), items[k] & held)
        members = classes.get(kind)
        if members is None:
            classes[kind] = [k]
        else:
            members.append(k)
    return classes


def _transport(
    supply: list[int], demand: list[int], cost: list[list[int]], amount: int
) -> list[list[int]]:
    """A flow of ``amount`` units from rows (``supply`` each) to columns (``demand`` each)
    of least total ``cost`` (non-negative integers), as ``flow[row][column]``.

    Successive shortest paths: each round finds, by label correcting from every row with
    supply left, the cheapest way to send one more unit to a column with demand left
    (through columns and back along flows already sent, at minus their cost) and sends
    as much as the path allows. Every round keeps the flow the cheapest of its size, so
    the last is the cheapest of ``amount`` units. The choice among equal paths is fixed by
    the order of rows and columns.
    """
    rows, columns = len(supply), len(demand)
    flow = [[0] * columns for _ in range(rows)]
    supply, demand = supply[:], demand[:]
    sent = 0
    while sent < amount:
        row_cost: list[float] = [0 if s else math.inf for s in supply]
        column_cost: list[float] = [math.inf] * columns
        row_from = [-1] * rows  # the column a row was reached from (-1: a source)
        column_from = [-1] * columns
        changed = [a for a in range(rows) if supply[a]]
        while changed:
            reached = []
            for a in changed:
                base, costs = row_cost[a], cost[a]
                for b in range(columns):
                    value = base + costs[b]
                    if value < column_cost[b]:
                        column_cost[b], column_from[b] = value, a
                        reached.append(b)
            changed = []
            for b in sorted(set(reached)):
                base = column_cost[b]
                for a in range(rows):
                    if flow[a][b]:
                        value = base - cost[a][b]
                        if value < row_cost[a]:
                            row_cost[a], row_from[a] = value, b
                            changed.append(a)
            changed = sorted(set(changed))
        target = min((b for b in range(columns) if demand[b]), key=column_cost.__getitem__)
        # the path back from the target: forward steps (row, column); each row but the
        # last (a source) was reached back along the flow it sends to row_from[row]
        path = []
        b = target
        while True:
            a = column_from[b]
            path.append((a, b))
            if row_from[a] == -1:
                break
            b = row_from[a]
        source = path[-1][0]
        push = min(supply[source], demand[target], amount - sent)
        for a, _ in path[:-1]:
            push = min(push, flow[a][row_from[a]])
        for a, b in path:
            flow[a][b] += push
        for a, _ in path[:-1]:
            flow[a][row_from[a]] -= push
        supply[source] -= push
        demand[target] -= push
        sent += push
    return flow


def best_assignment(scores: list[list[Fraction]]) -> list[tuple[int, int]]:
    """Row/column pairs of a maximum-total assignment of ``min(rows, columns)`` pairs."""
    scale = math.lcm(*{s.denominator for row in scores for s in row})
    return hungarian([[int(s * scale) for s in row] for row in scores], scale)


def hungarian(scaled: list[list[int]], scale: int) -> list[tuple[int, int]]:
    """Row/column pairs of a maximum-total assignment of ``min(rows, columns)`` pairs,
    for scores given as integers out of ``scale``.

    The Hungarian method with potentials, O(n^2 m), on the integer cost ``scale - score``
    (exact). Rows first take the first free column of their best score (the potentials
    start at the row maxima), so only the rows left over search; when none is left over,
    that start is the answer and no cost matrix is made.
    """
    transposed = len(scaled) > len(scaled[0])
    if transposed:
        scaled = [list(column) for column in zip(*scaled, strict=True)]
    m = len(scaled[0])
    owner = [0] * (m + 1)  # owner[j]: the row (1-based) assigned to column j; 0 = free
    spare: list[int] = []
    tops = list(map(max, scaled))
    for row, scores in enumerate(scaled, 1):
        top = tops[row - 1]
        # the first free column of the row's best score (a cell of the least cost)
        j = scores.index(top) + 1
        try:  # each look starts where the last stopped: one pass over the row at most
            while owner[j]:
                j = scores.index(top, j) + 1
        except ValueError:  # every column of its best score is taken
            j = 0
        if j:
            owner[j] = row
        else:
            spare.append(row)
    if not spare:  # every row has its best: nothing to search
        return _listed(owner, transposed)
    cost = [[scale - s for s in row] for row in scaled]
    # potentials are integers; typed float only because the slack starts at infinity
    u: list[float] = [0, *(scale - top for top in tops)]
    v: list[float] = [0] * (m + 1)
    way = [0] * (m + 1)
    spare = _tight_augment(spare, cost, u, owner, scale)
    for row in spare:
        # One search, with its potential changes applied lazily: ``lifted`` is the sum of
        # the steps so far; a column's slack is kept as slack + lifted, and a column
        # reached when the sum was ``reached[j]`` has its potentials moved by the rest of
        # the sum when the search ends (the eager form updates every column every step).
        owner[0] = row
        column = 0
        slack: list[float] = [math.inf] * (m + 1)
        unreached = list(range(1, m + 1))
        reached: list[tuple[int, float]] = []
        lifted: float = 0
        while owner[column] != 0:
            reached.append((column, lifted))
            current = owner[column]
            costs, shift = cost[current - 1], lifted - u[current]
            least: float = math.inf
            next_column = 0
            for j in unreached:
                value = costs[j - 1] + shift - v[j]
                if value < slack[j]:
                    slack[j] = value
                    way[j] = column
                    if value < least:
                        least, next_column = value, j
                elif slack[j] < least:
                    least, next_column = slack[j], j
            lifted = least
            unreached.remove(next_column)
            column = next_column
        for j, since in reached:
            u[owner[j]] += lifted - since
            v[j] -= lifted - since
        while column != 0:
            previous = way[column]
            owner[column] = owner[previous]
            column = previous
    return _listed(owner, transposed)


def _listed(owner: list[int], transposed: bool) -> list[tuple[int, int]]:
    """The (row, column) pairs of ``owner`` (1-based, 0 for a free column), sorted; in the
    caller's orientation when the matrix was transposed."""
    assignment = [(row - 1, j) for j, row in enumerate(owner[1:]) if row]
    if transposed:
        assignment = [(c, r) for r, c in assignment]
    return sorted(assignment)


_TIGHT_WORK = 64
"""``_tight_augment`` looks for paths only while the tight cells it has listed and looked
at stay under this many per row and column (the searches that follow do the rest)."""


def _tight_augment(
    spare: list[int], cost: list[list[int]], u: list[float], owner: list[int], scale: int
) -> list[int]:
    """The spare rows that are still spare after augmenting paths on tight cells.

    With the starting potentials (each row's least cost, columns 0) a cell is tight when it
    holds its row's best score. The first pass gave each row the first free tight column; a
    row left without one may still get one by moving earlier rows to other tight columns of
    theirs (Kuhn's augmenting paths). Every pair stays tight, so the potentials stay valid and
    the Hungarian searches that follow (one per row still spare, each with its own potential
    changes) reach the same optimum total; only fewer of them are needed. ``owner`` is
    updated in place (1-based columns). A row with no score above 0 anywhere has every cell
    tight: it moves to any free column. The search stops where the tight cells would be too
    many to list cheaply, leaving the rest to the Hungarian searches.
    """
    m = len(owner) - 1
    free = {j for j in range(1, m + 1) if owner[j] == 0}
    tight: dict[int, list[int] | None] = {}
    budget = _TIGHT_WORK * (len(cost) + m)

    def tight_of(row: int) -> list[int] | None:
        """The row's tight columns (1-based), or None when every column is tight."""
        nonlocal budget
        if row not in tight:
            floor = u[row]
            if floor == scale:
                tight[row] = None
            else:
                listed = [j for j, c in enumerate(cost[row - 1], 1) if c == floor]
                budget -= len(listed)
                tight[row] = listed
        return tight[row]

    left: list[int] = []
    for root in spare:
        if budget < 0:
            left.append(root)
            continue
        # depth-first over tight cells: stack[k] is a row, path[k] the column it would take
        seen: set[int] = set()
        stack = [root]
        path: list[int] = []
        iterators = [iter(tight_of(root) or ())]
        found = 0
        while stack:
            row = stack[-1]
            if tight_of(row) is None and free:
                found = min(free)
                break
            for j in iterators[-1]:
                budget -= 1  # each cell looked at counts too: no root walks the whole graph
                if j in seen:
                    continue
                seen.add(j)
                if owner[j] == 0:
                    found = j
                    break
                stack.append(owner[j])
                path.append(j)
                iterators.append(iter(tight_of(owner[j]) or ()))
                break
            else:
                stack.pop()
                iterators.pop()
                if path:
                    path.pop()
                continue
            if found:
                break
        if not found:
            left.append(root)
            continue
        path.append(found)
        free.discard(found)
        for row, column in zip(stack, path, strict=True):
            owner[column] = row
    return left
