"""Run every ``benchmarks/bench_*.py`` and print one table.

    .venv/bin/python benchmarks/run_all.py [--quick]

Each benchmark module returns its rows from ``run(quick)``; a benchmark that fails is shown
as a failed row (with the error) and makes the exit status 1, so none rots unnoticed. The
side-by-side comparison with Ragas is separate (``side_by_side.py``): it needs Ragas's own
virtualenv and about five minutes.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from _table import quick_flag, render

HERE = Path(__file__).resolve().parent


def benchmark_names() -> list[str]:
    return sorted(path.stem for path in HERE.glob("bench_*.py"))


def main() -> int:
    quick = quick_flag(__doc__ or "")
    rows: list[tuple[str, str, str]] = [("benchmark", "case", "figure")]
    failed = 0
    for name in benchmark_names():
        start = time.perf_counter()
        try:
            results = importlib.import_module(name).run(quick)
        except Exception as error:  # reported in the table and in the exit status
            failed += 1
            rows.append((name, "FAILED", f"{type(error).__name__}: {error}"[:200]))
            continue
        for case, figure in results:
            rows.append((name, case, figure))
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(render(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
