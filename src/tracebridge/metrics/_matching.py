"""Comparing tool calls: JSON-typed equality, pair scores and the two pairings.

Arithmetic is exact: a pair scores ``equal / union`` (two integers), totals are sums of
such fractions scaled by a common denominator, so the pairing that maximises the total is
found without rounding and ties are broken the same way on every machine.

Cost. Each call is prepared once (its arguments as a set of JSON-typed items, so that
equality is a set comparison). Only calls with the same name can pair, so work is spent on
same-name pairs only. The ordered pairing first walks in from both ends while the next pair
is provably the one the full dynamic programme would take (see ``_front``/``_back``), which
is linear on a trajectory that mostly follows its reference; what is left in the middle is
solved by the dynamic programme, O(n·m) with the inner scans in C. The order-free pairing
pairs identical calls first (provably optimal, see ``order_free_pairs``) and solves an
assignment only for the calls left over, per name: between classes of interchangeable calls
when there are few (``_assignment``), else as a heaviest matching over the pairs that score
above 0 (``_sparse``; most pairs of many calls of one tool share no equal argument), or, for
a few calls, by the Hungarian method over every pair.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from itertools import islice
from typing import Any

from ..messages import ToolCall
from ._assignment import class_assignment, hungarian
from ._sparse import sparse_assignment

__all__ = [
    "Calls",
    "Items",
    "Pair",
    "Score",
    "above",
    "argument_items",
    "args_equal",
    "at_least",
    "equal_keys",
    "json_key",
    "order_free_pairs",
    "pair_score",
]

Score = tuple[int, int]
"""``(equal, union)``: a pair scores ``equal / union``; two calls without arguments (1, 1)."""

Pair = tuple[int, int, Score]
"""(predicted index, reference index, score of the pair)."""

_ONE: Score = (1, 1)
_SPARSE = 1_000
"""From this many (row, column) cells on, the assignment follows the cells above 0
(``_sparse``) rather than every cell (the Hungarian method)."""


class _JsonBool:
    """``true``/``false`` in a key: unequal to every number (Python's ``True == 1``)."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "true" if self.value else "false"


_TRUE, _FALSE = _JsonBool(True), _JsonBool(False)
_PLAIN = frozenset({str, int, float, type(None)})


def json_key(value: Any) -> Any:
    """A hashable form of a JSON value under which equal means JSON-equal.

    Numbers compare by value (``1`` and ``1.0`` get one key; Python compares ints and
    floats exactly), booleans never equal numbers, objects ignore key order (a frozenset
    of items), arrays keep it (a tuple). No two kinds share a Python type, so no key of
    one kind equals a key of another.

    >>> json_key({"a": [1, True]}) == json_key({"a": [1.0, True]})
    True
    >>> json_key(True) == json_key(1)
    False
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is list:
        return tuple([json_key(item) for item in value])
    if kind is dict:
        return frozenset([(key, json_key(item)) for key, item in value.items()])
    raise TypeError(f"not a JSON value: {kind.__name__}")  # args are checked JSON on construction


def args_equal(left: Any, right: Any) -> bool:
    """Whether two JSON values are equal under JSON typing (see ``json_key``)."""
    return bool(json_key(left) == json_key(right))


Items = frozenset[tuple[str, Any, bool]]
"""A call's arguments as (key, value key, is a boolean) items: equal sets mean JSON-equal
arguments. For a scalar the value key is the value itself and the flag tells a boolean
from a number (Python's ``True == 1``); for an array or object it is ``json_key(value)``.
"""


def argument_items(args: dict[str, Any]) -> Items:
    """The items of a JSON object's arguments."""
    try:
        return frozenset([(key, value, value.__class__ is bool) for key, value in args.items()])
    except TypeError:  # an array or object among the values: not hashable as it is
        return frozenset(
            [
                (key, json_key(value), False)
                if type(value) is list or type(value) is dict
                else (key, value, type(value) is bool)
                for key, value in args.items()
            ]
        )


def equal_keys(left: dict[str, Any], right: dict[str, Any]) -> list[str]:
    """The argument names two calls share with JSON-equal values (as ``argument_items``
    compares them: a scalar by value and by being a boolean or not, an array or object by
    ``json_key``), in ``left``'s order."""
    same = []
    for key, value in left.items():
        if key in right:
            other = right[key]
            if value is other:
                same.append(key)
                continue
            kind, other_kind = value.__class__, other.__class__
            if kind is list or kind is dict or other_kind is list or other_kind is dict:
                if json_key(value) == json_key(other):
                    same.append(key)
            elif value == other and (kind is bool) is (other_kind is bool):
                same.append(key)
    return same


class Calls:
    """One side's calls made ready for comparison: names, arguments as items, positions
    by name (``by_name=True``: the ordered pairing uses them) and (built on first use)
    positions by identical arguments."""

    __slots__ = ("_by_items", "_key_sets", "_twins", "by_name", "items", "keys", "names")

    def __init__(self, calls: Sequence[ToolCall], *, by_name: bool = False) -> None:
        self.names = [call.name for call in calls]
        arguments = [call.args for call in calls]
        self.keys = list(map(dict.keys, arguments))
        # every call's items in one list, then each call's share of it: one comprehension
        # for all the calls rather than one per call
        flat = iter(
            [
                (key, value, value.__class__ is bool)
                for args in arguments
                for key, value in args.items()
            ]
        )
        try:  # the common case: every value a scalar
            items: list[Items | None] = [frozenset(islice(flat, len(args))) for args in arguments]
        except TypeError:  # an array or object among the values: not hashable as it is
            items = [argument_items(args) for args in arguments]
        raw = [call.invalid_args for call in calls]
        if raw.count(None) != len(raw):
            for k, text in enumerate(raw):
                if text is not None:
                    items[k] = None
        self.items = items
        """None for a call whose arguments did not parse: it pairs with nothing."""
        self._by_items: dict[tuple[str, Items], list[int]] | None = None
        self._twins: set[tuple[str, Items | None]] | None = None
        self._key_sets: dict[str, set[frozenset[str]]] = {}
        if by_name:
            self.by_name = self._positions_by_name()
            """Positions of the calls that can pair, by name, in order."""

    def __len__(self) -> int:
        return len(self.names)

    def _positions_by_name(self) -> dict[str, list[int]]:
        by_name: dict[str, list[int]] = {}
        for index, name in enumerate(self.names):
            positions = by_name.get(name)
            if positions is None:
                by_name[name] = [index]
            else:
                positions.append(index)
        items = self.items
        if None in items:
            by_name = {
                name: kept
                for name, positions in by_name.items()
                if (kept := [k for k in positions if items[k] is not None])
            }
        return by_name

    @property
    def by_items(self) -> dict[tuple[str, Items], list[int]]:
        """Positions of the calls that can pair, by name and arguments, in order."""
        if self._by_items is None:
            self._by_items = {}
            for index, key in enumerate(zip(self.names, self.items, strict=True)):
                if key[1] is not None:
                    self._by_items.setdefault(key, []).append(index)  # type: ignore[arg-type]
        return self._by_items

    @staticmethod
    def _any_between(positions: list[int] | None, start: int, stop: int) -> bool:
        """Whether a position lies in ``[start, stop)``."""
        if not positions:
            return False
        k = bisect_left(positions, start)
        return k < len(positions) and positions[k] < stop

    def partners(self, name: str, start: int, stop: int) -> list[int]:
        """Positions in ``[start, stop)`` of calls named ``name`` that can pair."""
        positions = self.by_name.get(name)
        if not positions:
            return []
        return positions[bisect_left(positions, start) : bisect_left(positions, stop)]

    def has_partner(self, name: str, items: Items | None, start: int, stop: int) -> bool:
        """Whether a call (``name``, ``items``) can pair with one in ``[start, stop)``."""
        return items is not None and self._any_between(self.by_name.get(name), start, stop)

    def has_twin(self, name: str, items: Items, start: int, stop: int) -> bool:
        """Whether ``[start, stop)`` holds a call identical to (``name``, ``items``)."""
        if self._twins is None:
            self._twins = set(zip(self.names, self.items, strict=True))
        if (name, items) not in self._twins:
            return False
        return self._any_between(self.by_items.get((name, items)), start, stop)

    def best_other(self, name: str, keys: Any) -> Score:
        """An upper bound of the score of a call (``name``, argument ``keys``) with any
        call of this side that is not identical to it."""
        key_sets = self._key_sets.get(name)
        if key_sets is None:
            key_sets = {frozenset(self.keys[k]) for k in self.by_name[name]}
            self._key_sets[name] = key_sets
        best: Score = (0, 1)
        for other in key_sets:
            if other == keys:
                # the same argument names, not identical: at least one value differs
                bound = (len(other) - 1, len(other)) if other else (0, 1)
            else:
                bound = (len(other & keys), len(other | keys))
            if above(bound, best):
                best = bound
        return best


def pair_score(left: Calls, i: int, right: Calls, j: int) -> Score:
    """The share of the union of argument keys whose values are equal; (1, 1) when equal.

    Only for calls that can pair (same name, both arguments parsed).
    """
    p_items, r_items = left.items[i], right.items[j]
    if p_items == r_items:
        return (1, 1)
    # callers pass pairable calls only (items not None); no assert on this hot path
    return (len(p_items & r_items), len(left.keys[i] | right.keys[j]))  # type: ignore[operator]


def at_least(left: Score, right: Score) -> bool:
    """``left >= right`` for two scores."""
    return left[0] * right[1] >= right[0] * left[1]


def above(left: Score, right: Score) -> bool:
    """``left > right`` for two scores."""
    return left[0] * right[1] > right[0] * left[1]


def order_free_pairs(left: Calls, right: Calls) -> list[Pair]:
    """A one-to-one pairing with the highest total, in any order, and the most pairs.

    Only calls with the same name can pair, so each name is its own problem. Within a
    name, identical calls are paired first, in order (the k-th predicted call of a kind
    with the k-th reference call of that kind): some best pairing pairs them (``1 - score``
    obeys the triangle inequality, so trading a partner for an identical one never lowers
    the total). The calls left over get an optimal assignment in which every call of the
    smaller side gets a partner (scores are never negative, so that is also the most
    pairs); a call alone with its name on one side takes the first of its best partners.
    Which of several equally good pairings is listed is otherwise fixed by the positions,
    not documented.
    """
    l_names, l_items = left.names, left.items
    r_names, r_items = right.names, right.items
    # the reference positions of each kind of call, last first: pop() gives the earliest
    waiting: dict[tuple[str, Items], list[int]] = {}
    for k in range(len(r_names) - 1, -1, -1):
        items = r_items[k]
        if items is not None:
            kind = (r_names[k], items)
            queue = waiting.get(kind)
            if queue is None:
                waiting[kind] = [k]
            else:
                queue.append(k)
    pairs: list[Pair] = []
    spare_rows: dict[str, list[int]] = {}
    for i, items in enumerate(l_items):
        if items is None:
            continue
        name = l_names[i]
        queue = waiting.get((name, items))
        if queue:
            pairs.append((i, queue.pop(), _ONE))
        else:
            rows = spare_rows.get(name)
            if rows is None:
                spare_rows[name] = [i]
            else:
                rows.append(i)
    if spare_rows:
        spare_columns: dict[str, list[int]] = {}
        for (name, _), queue in waiting.items():
            if queue and name in spare_rows:
                columns = spare_columns.get(name)
                if columns is None:
                    spare_columns[name] = queue
                else:
                    columns += queue
        for name, columns in spare_columns.items():
            columns.sort()
            rows = spare_rows[name]
            if len(rows) == 1 or len(columns) == 1:
                pairs += _one_to_many(left, rows, right, columns)
                continue
            sides = (l_items, r_items), (left.keys, right.keys)
            found = class_assignment(rows, columns, *sides)
            if found is None and len(rows) * len(columns) >= _SPARSE:
                found = sparse_assignment(rows, columns, *sides)
            elif found is None:
                scaled, scale = _spare_scores(left, rows, right, columns)
                found = [(rows[a], columns[b]) for a, b in hungarian(scaled, scale)]
            # pair_score without its test for identical calls: none is left over here
            l_keys, r_keys = left.keys, right.keys
            pairs += [
                (i, k, (len(l_items[i] & r_items[k]), len(l_keys[i] | r_keys[k])))  # type: ignore[operator]
                for i, k in found
            ]
    pairs.sort()
    return pairs


def _one_to_many(left: Calls, rows: list[int], right: Calls, columns: list[int]) -> list[Pair]:
    """The best pair when one side has a single call: its first best partner."""
    best: Pair | None = None
    for i in rows:
        for k in columns:
            score = pair_score(left, i, right, k)
            if best is None or above(score, best[2]):
                best = (i, k, score)
    assert best is not None  # both lists are non-empty
    return [best]


def _spare_scores(
    left: Calls, rows: list[int], right: Calls, columns: list[int]
) -> tuple[list[list[int]], int]:
    """The scores of the calls left over after identical ones paired, as integers out of
    a common scale. None is identical to another (it would have paired), so a score is
    ``equal / union``.

    When every one of these calls has the same argument names (the usual case), the union
    is that one size and a row counts its equal arguments through an index of the
    columns' arguments, touching only the columns that share an argument with it (an
    argument every column shares counts for all at once).
    """
    r_items, r_keys = right.items, right.keys
    # dict key views compare as sets: no set is made when every call has the same names
    shapes = [left.keys[i] for i in rows]
    shapes += [r_keys[k] for k in columns]
    if shapes.count(shapes[0]) != len(shapes):
        scores = [
            [(len(left.items[i] & r_items[k]), len(left.keys[i] | r_keys[k])) for k in columns]  # type: ignore[operator]
            for i in rows
        ]
        scale = math.lcm(*{u for row in scores for _, u in row})
        return [[e * (scale // u) for e, u in row] for row in scores], scale
    index: dict[Any, list[int]] = {}
    for b, k in enumerate(columns):
        for item in r_items[k]:  # type: ignore[union-attr]
            positions = index.get(item)
            if positions is None:
                index[item] = [b]
            else:
                positions.append(b)
    width = len(columns)
    scaled: list[list[int]] = []
    for i in rows:
        shared = 0
        postings = []
        for item in left.items[i]:  # type: ignore[union-attr]
            positions = index.get(item)
            if positions is None:
                continue
            if len(positions) == width:
                shared += 1
            else:
                postings.append(positions)
        counts = [shared] * width
        for positions in postings:
            for b in positions:
                counts[b] += 1
        scaled.append(counts)
    return scaled, len(shapes[0])
