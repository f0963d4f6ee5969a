"""``nonzero_cells`` (the cells above 0 the order-free matching works on) against its
definition: per row, each column with at least one equal argument item that is not left
out, weighted by that count (one union for every pair) or by ``equal * scale // union`` on
the least common multiple of the unions of those cells, heaviest first, then by column.
Items every column holds are left out when every pair has one union, and then, when the
sides are as long, also the items of the columns that every row holds. Rows with many
equal items (more columns reached than the short-row count handles) are drawn too."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracebridge import ToolCall
from tracebridge.metrics import _sparse
from tracebridge.metrics._matching import Calls

values = st.sampled_from([0, 1, True, "s", [1]])
names = ["a", "b", "c", "d", "e", "f"]
full = st.fixed_dictionaries({name: values for name in names})
some = st.dictionaries(st.sampled_from(names), values, min_size=1, max_size=6)
calls = st.builds(ToolCall, name=st.just("t"), args=st.one_of(full, some))


def definition(left: Calls, right: Calls) -> list[list[tuple[int, int]]]:
    rows, columns = range(len(left)), range(len(right))
    unions = {len(left.keys[i] | right.keys[k]) for i in rows for k in columns}
    dropped: frozenset[Any] = frozenset()
    if len(unions) == 1:
        held = [right.items[k] for k in columns]
        dropped = frozenset.intersection(*held)  # type: ignore[arg-type]
        if len(rows) == len(columns):
            every_row = frozenset.intersection(*[left.items[i] for i in rows])  # type: ignore[arg-type]
            dropped |= every_row & frozenset().union(*held)  # type: ignore[arg-type]
    equal = [
        [len((left.items[i] & right.items[k]) - dropped) for k in columns]  # type: ignore[operator]
        for i in rows
    ]
    union = [[len(left.keys[i] | right.keys[k]) for k in columns] for i in rows]
    reached = {union[i][k] for i in rows for k in columns if equal[i][k]}
    scale = math.lcm(*reached)
    return [
        sorted(
            (
                (k, equal[i][k] if len(unions) == 1 else equal[i][k] * (scale // union[i][k]))
                for k in columns
                if equal[i][k]
            ),
            key=lambda cell: (-cell[1], cell[0]),
        )
        for i in rows
    ]


@settings(max_examples=300)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(calls, min_size=n, max_size=n),
            st.lists(calls, min_size=n, max_size=n + 6),
        )
    )
)
def test_the_cells_above_0_are_their_definition(
    sides: tuple[list[ToolCall], list[ToolCall]],
) -> None:
    left, right = Calls(sides[0]), Calls(sides[1])
    cells = _sparse.nonzero_cells(
        list(range(len(left))),
        list(range(len(right))),
        (left.items, right.items),
        (left.keys, right.keys),
    )
    assert cells == definition(left, right)
