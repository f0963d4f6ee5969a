"""The order-preserving pairing of ``ToolCallAccuracy(strict_order=True)``.

The pairing is defined by a dynamic programme over suffixes: ``best(i, j)`` is the highest
(total, count) — compared as a pair — of an order-preserving pairing of ``predicted[i:]``
with ``reference[j:]``; a forward walk from (0, 0) then pairs (i, j) when that keeps the
best, else passes predicted[i] when that keeps the best, else passes reference[j]. That
walk is the definition the tests check against.

Computing the whole table costs O(n·m). Most of it is not needed when the calls mostly
follow the reference, so the walk first takes the steps it provably takes from the front
and from the back (each proved below by an exchange argument, using only cheap bounds on
the scores of the other calls), and runs the programme on what is left in the middle.

Before any of that, ``forced_front`` takes the same front steps on the calls as they are,
without preparing them (see its docstring): on a trajectory that follows its reference it
is the whole pairing.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import attrgetter
from typing import Any

from ..messages import ToolCall
from ._matching import (
    Calls,
    Items,
    Pair,
    Score,
    above,
    argument_items,
    at_least,
    equal_keys,
    pair_score,
)

__all__ = ["forced_front", "ordered_pairs"]

_ONE: Score = (1, 1)
_INDEXED = 8
"""From this many same-name columns on, a row's equal arguments are counted through an
index of the columns' argument items rather than one set intersection per cell."""


def ordered_pairs(left: Calls, right: Calls) -> list[Pair]:
    """The order-preserving pairing with the highest total (a weighted longest common
    subsequence); among equal totals, the one with the most pairs; among those, the one
    the forward walk of the module docstring takes."""
    i, j, front = _front(left, right)
    n, m, back = _back(left, right, i, j)
    return front + _programme(left, right, i, j, n, m) + back


def _dominates(
    score: Score, side: Calls, k: int, other: Calls, start: int, stop: int, strict: bool
) -> bool:
    """Whether ``score`` is >= (``strict``: >) every score of call ``side[k]`` with a
    call of ``other[start:stop]``: by a bound when it can, else by computing them."""
    if not strict and score == (1, 1):
        return True  # nothing scores above 1
    name, items = side.names[k], side.items[k]
    if items is None:
        return True
    positions = other.by_name.get(name)  # other.has_partner, inline
    if not positions:
        return True
    first = bisect_left(positions, start)
    if first == len(positions) or positions[first] >= stop:
        return True
    beats = above if strict else at_least
    if not other.has_twin(name, items, start, stop) and beats(
        score, other.best_other(name, side.keys[k])
    ):
        return True
    return all(
        beats(score, pair_score(side, k, other, c))
        for c in positions[first : bisect_left(positions, stop, first)]
    )


def _front(left: Calls, right: Calls) -> tuple[int, int, list[Pair]]:
    """The pairs the walk takes first, and where it stands after them.

    At (i, j):
    * predicted[i] with no partner in ``reference[j:]`` is in no pairing from here: the
      walk passes it.
    * A same-name pair scoring >= every other score in its row (to the end of the
      reference) and its column (to the end of the predicted calls) is in some best
      pairing from (i, j): a best pairing pairs predicted[i] with a later reference call,
      or reference[j] with a later predicted call (not both: they would cross), or
      neither; swapping in (i, j) never lowers the total and never the count. So
      ``best(i, j) = best(i+1, j+1) + the pair``, and the walk pairs them.
    * reference[j] with no partner in ``predicted[i:]``, when the next reference call
      that has one, reference[k], pairs with predicted[i] with a score >= every other in
      its row and > every other in its column: then every best pairing from (i, k) uses
      predicted[i] (one pairing reference[k] with a later call could swap it for a
      strictly higher total), so passing predicted[i] loses and the walk passes
      reference[j].
    Anything else stops the front walk.
    """
    names, items, keys = left.names, left.items, left.keys
    r_names, r_items, r_keys = right.names, right.items, right.keys
    n, m = len(left), len(right)
    i = j = 0
    pairs: list[Pair] = []
    while i < n and j < m:
        p_items, o_items = items[i], r_items[j]
        if p_items is not None and o_items is not None and names[i] == r_names[j]:
            if p_items == o_items:  # identical: the pair scores 1
                pairs.append((i, j, _ONE))
                i, j = i + 1, j + 1
                continue
            score = (len(p_items & o_items), len(keys[i] | r_keys[j]))
            if _dominates(score, left, i, right, j + 1, m, False) and _dominates(
                score, right, j, left, i + 1, n, False
            ):
                pairs.append((i, j, score))
                i, j = i + 1, j + 1
                continue
            break
        if not right.has_partner(names[i], items[i], j, m):
            i += 1
            continue
        if left.has_partner(r_names[j], r_items[j], i, n):
            break
        k = j + 1
        while k < m and not left.has_partner(r_names[k], r_items[k], i, n):
            k += 1
        if k == m or r_names[k] != names[i]:
            break
        score = pair_score(left, i, right, k)
        if _dominates(score, left, i, right, k + 1, m, False) and _dominates(
            score, right, k, left, i + 1, n, True
        ):
            j += 1
            continue
        break
    return i, j, pairs


def _back(left: Calls, right: Calls, i0: int, j0: int) -> tuple[int, int, list[Pair]]:
    """The pairs at the end that the walk takes last, from ``predicted[i0:]`` and
    ``reference[j0:]``.

    A last call with no partner left is in no pairing; the walk passes it at the end. A
    last same-name pair scoring strictly above every other score in its row and column is
    in every best pairing of every suffix that holds both calls (any pairing without it
    could swap it in for a strictly higher total or add it for one more pair), so each
    ``best`` value there is the trimmed one plus this pair, the walk makes the same
    choices on the trimmed problem, and then takes the pair.
    """
    names, items = left.names, left.items
    r_names, r_items = right.names, right.items
    n, m = len(left), len(right)
    pairs: list[Pair] = []
    while n > i0 and m > j0:
        if not right.has_partner(names[n - 1], items[n - 1], j0, m):
            n -= 1
            continue
        if not left.has_partner(r_names[m - 1], r_items[m - 1], i0, n):
            m -= 1
            continue
        if names[n - 1] != r_names[m - 1]:
            break
        score = pair_score(left, n - 1, right, m - 1)
        if _dominates(score, left, n - 1, right, j0, m - 1, True) and _dominates(
            score, right, m - 1, left, i0, n - 1, True
        ):
            pairs.append((n - 1, m - 1, score))
            n, m = n - 1, m - 1
            continue
        break
    pairs.reverse()
    return n, m, pairs


def _programme(left: Calls, right: Calls, i0: int, j0: int, n: int, m: int) -> list[Pair]:
    """The dynamic programme and its walk on ``predicted[i0:n]`` against
    ``reference[j0:m]``.

    ``best[i][j]`` holds (total, count) as one integer ``total * scale * width + count``
    (count < width), so comparing two is one comparison. Every row is non-increasing, and
    a row is the row below where no same-name cell reaches: ``best[i][j]`` is the larger
    of ``best[i+1][j]`` and ``top(j)``, the best ``best[i+1][c+1] + weight(i, c)`` over the
    cells ``c >= j``. Going through the cells from the right, ``top`` changes only at a
    cell that beats every cell to its right (a record); a record whose value is above the
    row below at its own column holds from there leftwards as far as the row below stays
    under it, or up to the next such record, which holds the rest (its value is higher);
    each stretch is copied in at once, found by bisection (the row below is sorted) only
    when it ends before the next record. A record under the row below at its column
    changes nothing, nor does a cell that beats nothing to its right: the positions they
    reach hold a higher value already, or the row below is no lower than them.
    """
    rows, columns = n - i0, m - j0
    if rows <= 0 or columns <= 0:
        return []
    weights = _weights(left, right, i0, j0, n, m)
    # each row held negated (``low[i][j] = -best[i][j]``): non-decreasing, so a stretch's
    # end is a plain bisection, with no key to call on every probe
    low: list[list[int]] = [[]] * rows + [[0] * (columns + 1)]
    for i in range(rows - 1, -1, -1):
        below = low[i + 1]
        offsets, row = weights[i]
        if not offsets:
            low[i] = below
            continue
        raised: list[int] | None = None
        top = 1
        held = -1  # the column of the last record whose stretch is not written yet
        kept = 0  # its (negated) value
        # one length by construction; a keyword to zip() is parsed on every row
        for j, weight in zip(offsets, row):  # noqa: B905
            value = below[j + 1] - weight
            if value >= top:
                continue
            top = value
            if value >= below[j]:
                continue
            if raised is None:
                raised = below[:]
            else:
                start = j + 1 if below[j + 1] > kept else bisect_right(below, kept, j + 1, held + 1)
                if start == held:  # the usual stretch: one column
                    raised[held] = kept
                else:
                    raised[start : held + 1] = [kept] * (held + 1 - start)
            kept, held = value, j
        if raised is None:
            low[i] = below
            continue
        start = bisect_right(below, kept, 0, held + 1)
        raised[start : held + 1] = [kept] * (held + 1 - start)
        low[i] = raised
    pairs: list[Pair] = []
    i = j = 0
    here, down = low[0], low[1]
    l_names, r_names = left.names, right.names
    while True:
        # a cell needs the same name (then its weight is looked up: it may still have none)
        if l_names[i + i0] == r_names[j + j0]:
            offsets, row = weights[i]
            if j in offsets and here[j] == down[j + 1] - row[offsets.index(j)]:
                pairs.append((i + i0, j + j0, pair_score(left, i + i0, right, j + j0)))
                i, j = i + 1, j + 1
                if i == rows or j == columns:
                    break
                here, down = down, low[i + 1]
                continue
        if here[j] == down[j]:
            i += 1
            if i == rows:
                break
            here, down = down, low[i + 1]
        else:
            j += 1
            if j == columns:
                break
    return pairs


Cells = tuple[list[int], list[int]]
"""A row's same-name cells: their columns (window offsets, last first, the order the
programme reads them in) and their weights."""

_NO_CELLS: Cells = ([], [])


def _weights(left: Calls, right: Calls, i0: int, j0: int, n: int, m: int) -> list[Cells]:
    """Per row of the window, its same-name cells with the weights
    ``score * scale * width + 1``, ``scale`` the common denominator of every score there.

    A score's denominator is the size of the union of the two calls' argument names, so
    the common denominator comes from the distinct name sets alone (found by comparing the
    calls' key views, which compare as sets: no set is made per call when all reference
    calls of a name have the same argument names). In that case a row counts its equal
    arguments through an index of those calls' argument items: only the columns sharing an
    item with the row are touched (an item every column holds counts for all at once).
    """
    l_names, l_keys, l_items = left.names, left.keys, left.items
    r_keys, r_items = right.keys, right.items
    # per name of a row: its columns, and the distinct argument-name sets among them
    columns_of: dict[str, tuple[list[int], list[frozenset[str]]]] = {}
    for name in set(l_names[i0:n]):
        columns = right.partners(name, j0, m)
        if columns:
            sets = list(map(r_keys.__getitem__, columns))
            if sets.count(sets[0]) == len(sets):  # dict views compare as sets
                columns_of[name] = (columns, [frozenset(sets[0])])
            else:
                columns_of[name] = (columns, list(set(map(frozenset, sets))))
    unions = {1}
    row_unions: list[int] = []  # a row's union with its name's only set (else -1)
    for i in range(i0, n):
        entry = columns_of.get(l_names[i])
        if entry is None:
            row_unions.append(-1)
            continue
        keys, shapes = l_keys[i], entry[1]
        if len(shapes) == 1:
            shape = shapes[0]
            union = len(shape) if keys == shape else len(keys | shape)
            row_unions.append(union)
            unions.add(union or 1)
            continue
        row_unions.append(-1)
        for shape in shapes:
            unions.add(len(keys | shape) or 1)
    scale = math.lcm(*unions)
    width = min(n - i0, m - j0) + 1
    whole = scale * width + 1
    indexes: dict[str, tuple[list[int], dict[Any, list[int]]]] = {}
    weights: list[Cells] = []
    for i in range(i0, n):
        items, name = l_items[i], l_names[i]
        entry = columns_of.get(name)
        if items is None or entry is None:
            weights.append(_NO_CELLS)
            continue
        union = row_unions[i - i0]
        if union >= 0:
            found = indexes.get(name)
            if found is None:
                found = indexes[name] = _item_index(entry[0], r_items, j0)
            offsets, index = found
            if union == 0:  # no arguments on either side: every pair scores 1
                weights.append((offsets, [whole] * len(offsets)))
                continue
            factor = scale // union * width
            if len(offsets) < _INDEXED:
                row = []
                for k in offsets:  # a loop, not a comprehension: no frame made per row
                    row.append(len(items & r_items[k + j0]) * factor + 1)  # type: ignore[operator]
                weights.append((offsets, row))
                continue
            # identical calls need no special case: all union keys are equal, e / u = 1
            everywhere = 0
            postings = []
            for item in items:
                positions = index.get(item)
                if positions is not None:
                    if len(positions) == len(offsets):
                        everywhere += 1
                    else:
                        postings.append(positions)
            row = [everywhere * factor + 1] * len(offsets)
            for positions in postings:
                for b in positions:
                    row[b] += factor
            weights.append((offsets, row))
            continue
        row = []
        for k in reversed(entry[0]):
            e, u = pair_score(left, i, right, k)
            row.append(e * (scale // u) * width + 1)
        weights.append(([k - j0 for k in reversed(entry[0])], row))
    return weights


def _item_index(
    columns: list[int], r_items: list[Items | None], j0: int
) -> tuple[list[int], dict[Any, list[int]]]:
    """The window offsets of ``columns``, last first, and per argument item the places
    (in that list) of the columns holding it (only when there are enough columns for the
    index to pay)."""
    columns = columns[::-1]
    offsets = [k - j0 for k in columns] if j0 else columns
    if len(offsets) < _INDEXED:
        return offsets, {}
    index: dict[Any, list[int]] = {}
    for b, k in enumerate(columns):
        for item in r_items[k]:  # type: ignore[union-attr]
            positions = index.get(item)
            if positions is None:
                index[item] = [b]
            else:
                positions.append(b)
    return offsets, index


def forced_front(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> tuple[int, int, list[Pair], dict[int, list[str]]]:
    """The steps ``_front`` takes, on the calls as they are, and where they stop; with the
    equal argument names (``equal_keys``) of each pair taken that is not identical, by its
    predicted position.

    The same three rules as ``_front``, with bounds that need no preparation of the calls
    beyond their names and lengths, so a step costs about one comparison of two argument
    dicts (identical pairs at the start need none at all: they are read off the calls
    before their names and arguments are listed). A best pairing from the stopping point
    is the rest (the walk's later choices depend only on the ``best`` values of later
    suffixes): ``ordered_pairs`` on the two remainders, shifted.

    * Names: a call has a partner in the rest of the other side when the last position of
      its name there is not before the start (no call here has ``invalid_args``: the
      caller takes the general route for those).
    * Identical pairs: the dicts are equal in Python (which JSON-equal dicts always are)
      and every value has the same class on both sides and is not an array or object (so
      no ``True == 1`` and no nested one); otherwise the exact score decides.
    * A bound on the score of a call with argument names ``K`` and any call of the other
      side that is not identical to it, whose calls have at most ``L`` argument names: 0
      when ``K`` is empty (the other has a name ``K`` lacks); else ``(|K| - 1) / |K|`` when
      ``L <= |K|`` (a different set of at most ``|K|`` names misses one of ``K``; the same
      set has an unequal value); else ``|K| / (|K| + 1)``.
    * Identical calls ahead (a twin, scoring 1) are ruled out by Python equality, which
      JSON-equal calls always have: by a scan of the rest when few calls are left, else
      through the last position of each value of one argument and, only when that
      alarms, of each (name, arguments) as a hashable key. A false alarm only stops the
      walk. The bound is asked first: when it already beats the pair, no twin is looked
      for (either one stops the walk).
    """
    n, m = len(predicted), len(reference)
    # the identical pairs at the start, read off the calls themselves
    i, stop = 0, min(n, m)
    while i < stop:
        call, wanted = predicted[i], reference[i]
        left, right = call.args, wanted.args
        if call.name != wanted.name or left != right:
            break
        for key, value in left.items():
            kind = value.__class__
            if kind is not right[key].__class__ or kind is list or kind is dict:
                break
        else:
            i += 1
            continue
        break
    pairs: list[Pair] = [(k, k, _ONE) for k in range(i)]
    sames: dict[int, list[str]] = {}
    if i == stop:
        return i, i, pairs, sames
    append = pairs.append
    j = i
    p_names = list(map(_NAME, predicted))
    r_names = list(map(_NAME, reference))
    name = p_names[i]
    if name != r_names[j] and name in r_names[j:] and r_names[j] in p_names[i:]:
        return i, j, pairs, sames  # both have partners ahead: no rule passes either
    p_args = list(map(_ARGS, predicted))
    r_args = list(map(_ARGS, reference))
    sides = (_Ahead(p_names, p_args), _Ahead(r_names, r_args))
    p_last, r_last = sides[0].last, sides[1].last
    while i < n and j < m:
        name = p_names[i]
        if name == r_names[j]:
            left, right = p_args[i], r_args[j]
            if left == right:
                for key, value in left.items():
                    kind = value.__class__
                    if kind is not right[key].__class__ or kind is list or kind is dict:
                        break
                else:
                    append((i, j, _ONE))
                    i, j = i + 1, j + 1
                    continue
            same = equal_keys(left, right)
            union = len(left) if left.keys() == right.keys() else len(left.keys() | right.keys())
            if len(same) == union:
                append((i, j, _ONE))
                i, j = i + 1, j + 1
                continue
            score = (len(same), union)
            if sides[1].rival(sides[0], i, j, score, False) or sides[0].rival(
                sides[1], j, i, score, False
            ):
                break
            append((i, j, score))
            sames[i] = same
            i, j = i + 1, j + 1
            continue
        if r_last.get(name, -1) < j:
            i += 1
            continue
        if p_last.get(r_names[j], -1) >= i:
            break
        k = j + 1
        while k < m and p_last.get(r_names[k], -1) < i:
            k += 1
        if k == m or r_names[k] != name:
            break
        left, right = p_args[i], r_args[k]
        union = len(left.keys() | right.keys())
        equal = len(equal_keys(left, right))
        score = _ONE if equal == union else (equal, union)
        # reference[k]'s row may tie (>=); its column must lose (>), twins included
        if sides[1].rival(sides[0], i, k, score, False) or sides[0].rival(
            sides[1], k, i, score, True
        ):
            break
        j += 1
    return i, j, pairs, sames


_NAME = attrgetter("name")
_ARGS = attrgetter("args")

_SCAN = 24
"""Up to this many calls ahead, an identical call is looked for by a scan of the rest;
beyond, through indexes of every call of the side (made once)."""

_ABSENT = object()
"""The glance of a call without the glanced-at argument."""


class _Ahead:
    """One side's calls as ``forced_front`` sees them: names, argument dicts, the last
    position of each name, the most arguments a call has, and (made on first use) two
    indexes of the last position of each call: by one argument's value (a glance, cheap
    to make, with false alarms when the value is shared) and by the whole
    call as a hashable key (asked only after an alarm)."""

    __slots__ = ("_index", "_keys", "_seen", "args", "glanced", "last", "most", "names")

    def __init__(self, names: list[str], args: list[dict[str, Any]]) -> None:
        self.names, self.args = names, args
        self.last = dict(zip(names, range(len(names)), strict=True))
        self.most = max(map(len, args)) if args else 0
        self.glanced = ""  # the argument glanced at (chosen with the index)
        self._seen: dict[Any, int] | None = None
        self._keys: list[Any] | None = None
        self._index: dict[Any, int] | None = None

    def rival(self, other: _Ahead, k: int, after: int, score: Score, strict: bool) -> bool:
        """Whether a call of this side after position ``after`` may score more than
        ``score`` (``strict``: as much) with the call at ``k`` of the ``other`` side, by the
        bounds of ``forced_front``."""
        if self.last[other.names[k]] <= after or (score is _ONE and not strict):
            return False  # no call of the name ahead; nothing scores above 1
        # the bound on a call that is not identical, cross-multiplied with the score
        size = len(other.args[k])
        e, u = score
        if size == 0:  # (0, 1): it has an argument the call lacks
            high, low = 0, e
        elif self.most <= size:  # (size - 1, size)
            high, low = (size - 1) * u, e * size
        else:  # (size, size + 1)
            high, low = size * u, e * (size + 1)
        if high > low or (strict and high == low):
            return True
        # an identical call ahead (a twin, scoring 1): one equal in Python, as JSON-equal
        # calls always are
        seen = self._seen
        if seen is None:
            names = self.names
            if len(names) - after <= _SCAN:  # few to look at: a scan in C, then one by one
                args, mine = other.args[k], self.args
                if args not in mine[after + 1 :]:
                    return False
                name = other.names[k]
                for c in range(after + 1, len(names)):
                    if names[c] == name and mine[c] == args:
                        return True
                return False
            seen = self._seen = self._glances()
        glance = other.args[k].get(self.glanced, _ABSENT)  # by this side's argument
        if glance.__class__ is list or glance.__class__ is dict:
            glance = _ABSENT
        if seen.get(glance, -1) <= after:
            return False
        if self._index is None:
            self._index = dict(zip(self.keys(), range(len(self.names)), strict=True))
        return self._index.get(other.keys()[k], -1) > after

    def _glances(self) -> dict[Any, int]:
        """The last position of each call's value of its argument ``glanced`` (``_ABSENT``
        when it has none, or an array or object there: those are not hashable).

        Any argument name serves (a twin has the same values): one the calls have glances
        best, the first of the first call that has one."""
        self.glanced = next((next(iter(args)) for args in self.args if args), "")
        values = map(dict.get, self.args, repeat(self.glanced), repeat(_ABSENT))
        try:
            return dict(zip(values, range(len(self.args)), strict=True))
        except TypeError:  # an array or object: all such values glance alike
            return dict(
                zip(
                    [
                        _ABSENT if type(v) is list or type(v) is dict else v
                        for v in map(dict.get, self.args, repeat(self.glanced), repeat(_ABSENT))
                    ],
                    range(len(self.args)),
                    strict=True,
                )
            )

    def keys(self) -> list[Any]:
        """Each call as a hashable key (``_hashable``), made on first use."""
        if self._keys is None:
            self._keys = _hashable(self.names, self.args)
        return self._keys


def _hashable(names: list[str], args: list[dict[str, Any]]) -> list[Any]:
    """(name, arguments) keys that are equal for JSON-equal calls (and maybe for others)."""
    try:
        return list(zip(names, map(frozenset, map(dict.items, args)), strict=True))
    except TypeError:  # an array or object among the values: not hashable as it is
        # a call JSON-equal to one with such a value has one too, so it is keyed alike
        return [
            (name, _items_key(arguments)) for name, arguments in zip(names, args, strict=True)
        ]


def _items_key(args: dict[str, Any]) -> Any:
    try:
        return frozenset(args.items())
    except TypeError:
        return argument_items(args)
