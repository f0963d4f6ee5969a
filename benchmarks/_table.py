"""The rows every ``bench_*.py`` returns, and how they are printed."""

from __future__ import annotations

import argparse

Row = tuple[str, str]
"""(what was measured, the figure)."""


def quick_flag(description: str) -> bool:
    """Parse the one flag every benchmark takes: ``--quick`` (tiny sizes, a smoke run)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks it runs")
    return bool(parser.parse_args().quick)


def render(rows: list[tuple[str, ...]]) -> str:
    """Rows as aligned columns, the first row as the header."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def growth_rows(rates: dict[str, list[float]], sizes: tuple[int, int], what: str,
                unit: str) -> list[Row]:
    """Per case, its rate in thousands of ``unit`` (or of what it counts, when none) per
    second at the two ``sizes`` of ``what``, then its growth: the cost of one at the larger
    size over the smaller (near 1 when the cost is linear)."""
    small, large = sizes
    per = f"k {unit}/s" if unit else "k/s"
    rows: list[Row] = []
    for case, (at_small, at_large) in rates.items():
        rows.append((f"{case}, {small}{what}", f"{at_small / 1e3:.1f} {per}"))
        rows.append((f"{case}, {large}{what}", f"{at_large / 1e3:.1f} {per}"))
        rows.append((f"{case}: growth {small} -> {large}", f"{at_small / at_large:.2f}x"))
    return rows


def show(name: str, rows: list[Row]) -> None:
    print(render([(name, "figure"), *rows]))
