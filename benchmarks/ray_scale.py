"""Conversion and judged scoring at scale: one process, two processes, Ray.

    python benchmarks/ray_scale.py [--megabytes 200] [--bad-every 1000] [--samples 2000]
                                   [--input FILE] [--quick]

Conversion (OpenAI chat -> LangChain, ``convert_batch``) of one JSONL file with bad lines,
timed three ways: in this process, in two worker processes (byte ranges of the file), and on
a local Ray cluster (``read_traces`` + ``map_batches``); each run must account for every row
(converted + failed = lines, failed = the bad lines). Then judged requests/s of ``score`` on
two actors against a local fake Chat Completions server, without and with the budget actor.
The file is made by scripts/make_big_jsonl.py unless ``--input`` names one. Not part of
``run_all.py``: it needs the ``ray`` extra and starts a cluster; the test suite runs it at
``--quick`` size inside its own Ray session (tests/test_ray_data.py).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = "langchain"


def _convert_range(piece: dict[str, Any]) -> tuple[int, int]:
    """Rows and failures of one byte range, converted in this process."""
    import pyarrow as pa

    from tracebridge.ray_data import convert_batch
    from tracebridge.ray_data._cluster import _read_ranges

    table = _read_ranges(pa.Table.from_pylist([piece]))
    out = convert_batch(table, target=TARGET)
    return out.num_rows, out.num_rows - out.column("error_code").null_count


def convert_in_processes(path: str, workers: int) -> tuple[int, int]:
    from tracebridge.ray_data._cluster import _ranges

    pieces = list(_ranges(path, "openai_chat", 4 << 20))
    if workers == 1:
        counts = [_convert_range(piece) for piece in pieces]
    else:
        with concurrent.futures.ProcessPoolExecutor(workers) as pool:
            counts = list(pool.map(_convert_range, pieces))
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def convert_on_ray(path: str) -> tuple[int, int]:
    from tracebridge.ray_data import convert_batch, read_traces

    ds = read_traces(path, source="openai_chat", block_bytes=4 << 20)
    converted = ds.map_batches(convert_batch, fn_kwargs={"target": TARGET},
                               batch_format="pyarrow")
    rows = failed = 0
    for batch in converted.select_columns(["error_code"]).iter_batches(
            batch_format="pyarrow", batch_size=None):
        rows += batch.num_rows
        failed += batch.num_rows - batch.column("error_code").null_count
    return rows, failed


def judged(samples: int, budget: bool, workdir: Path) -> tuple[int, int, float, float]:
    """Requests the server received, rows scored, seconds in all, and seconds from the
    first request to the last (without the actors' start)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from ray_helpers import GOAL, goal_server, sample, write_jsonl

    from tracebridge.evaluation.budget import Budget
    from tracebridge.ray_data import OpenAIJudgeSpec, read_traces, score

    path = write_jsonl(workdir / "samples.jsonl",
                       [sample("Paris" if n % 2 else f"City{n}") for n in range(samples)])
    with goal_server() as server:
        spec = OpenAIJudgeSpec("judge-model", base_url=server.base_url)
        ds = score(read_traces(path, source="sample"), [GOAL], judge=spec, actors=2,
                   budget=Budget(max_requests=10 * samples) if budget else None,
                   batch_size=64, concurrency=16)
        start = time.perf_counter()
        scored = sum(row["state"] == "scored"
                     for row in ds.select_columns(["state"]).iter_rows())
        seconds = time.perf_counter() - start
        return len(server.requests), scored, seconds, server.times[-1] - server.times[0]


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=200.0)
    parser.add_argument("--bad-every", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--input", help="a JSONL file of OpenAI chat conversations")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (the test suite)")
    parser.add_argument("--only", choices=["convert", "judged"], help="one half only")
    args = parser.parse_args(argv)
    if args.quick:
        args.megabytes, args.bad_every, args.samples = 0.3, 50, 12
    import ray

    from tracebridge.ray_data import init_local

    started = not ray.is_initialized()
    if started:
        init_local(num_cpus=2)
    lines: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            workdir = Path(folder)
            path, bad = args.input, None
            if args.only != "judged" and path is None:
                path = str(workdir / "big.jsonl")
                made = subprocess.run(
                    [sys.executable, str(ROOT / "scripts" / "make_big_jsonl.py"), path,
                     "--megabytes", str(args.megabytes), "--bad-every", str(args.bad_every)],
                    check=True, capture_output=True, text=True)
                said = made.stderr.split("bad lines (")
                bad = int(said[1].split(")")[0]) if len(said) > 1 else 0
            conversions: tuple[tuple[str, Callable[[], tuple[int, int]]], ...] = ()
            if args.only != "judged":
                conversions = (
                    ("convert, one process", lambda: convert_in_processes(path, 1)),
                    ("convert, two processes", lambda: convert_in_processes(path, 2)),
                    ("convert, Ray", lambda: convert_on_ray(path)))
            for name, run in conversions:
                with open(path, "rb") as stream:
                    total = sum(1 for line in stream if line.strip())
                start = time.perf_counter()
                rows, failed = run()
                seconds = time.perf_counter() - start
                assert rows == total, f"{name}: {rows} rows of {total} lines"
                assert bad is None or failed == bad, f"{name}: {failed} failed, {bad} bad"
                lines.append(f"{name}  rows {rows}  failed {failed}  {seconds:.1f} s  "
                             f"{rows / seconds:,.0f} rows/s")
                print(lines[-1], flush=True)
            judgings = () if args.only == "convert" else (
                ("judged, no budget actor", False), ("judged, budget actor", True))
            for name, budget in judgings:
                requests, scored, seconds, sending = judged(args.samples, budget, workdir)
                assert requests == scored == args.samples, (requests, scored)
                lines.append(f"{name}  requests {requests}  {seconds:.1f} s  "
                             f"{requests / seconds:,.0f} requests/s  (first to last request "
                             f"{sending:.1f} s: {(requests - 1) / max(sending, 1e-9):,.0f}/s)")
                print(lines[-1], flush=True)
    finally:
        if started:
            ray.shutdown()
    return lines


if __name__ == "__main__":
    main()
