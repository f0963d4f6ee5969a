"""tracebridge side by side with Ragas 0.4.3 (and pydantic floors), in one run.

    .venv/bin/python benchmarks/side_by_side.py            # about 2-3 minutes on 2 cores
    .venv/bin/python benchmarks/side_by_side.py --quick    # tiny sizes, seconds
    .venv/bin/python benchmarks/side_by_side.py --no-ragas # our side and the floors only

Ragas cannot share our virtualenv (its langchain-openai needs openai<3), so it runs in its
own, ``benchmarks/.ragas-venv`` (created on first use from PyPI: ragas 0.4.3 and the
langchain-core and llama-index-core versions we have, so both sides build the same framework
objects), as a worker process; where Ragas is the peer, our side runs as a worker of its own
too, holding the same inputs. The inputs are written once to a temporary folder as JSON and
each side loads the same files. Rounds are interleaved (every case, ours then the peer's,
alternating who goes first), and each figure is the median of the rounds; a round's figure
is the CPU time per call of the process that ran it (other work on a shared machine moves
it less than wall time). Where Ragas has
no converter for a format, the peer is a bare pydantic ``TypeAdapter`` of an equivalent
minimal model (``_floors.py``).

Prints one table: path, n, tracebridge, peer, ratio (peer time / our time: > 1 means
tracebridge is faster), then the per-message cost growth of each of our paths measured at
100 and 10,000 messages. Exits 1 when one of our paths failed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import _inputs
from _table import render
from _timing import freeze, seconds_per_call
from _tracebridge_side import prepare, prepare_floor
from _worker import Worker

HERE = Path(__file__).resolve().parent
RAGAS_VENV = HERE / ".ragas-venv"


def ragas_requirements() -> list[str]:
    return [
        "ragas==0.4.3",
        "langchain-community<0.3.30",
        f"langchain-core=={version('langchain-core')}",
        f"pydantic=={version('pydantic')}",
        f"llama-index-core=={version('llama-index-core')}",
    ]


@dataclass
class Case:
    path: str
    n: int
    kind: str
    peer: str  # "ragas", "floor" or "none" (our figure alone)
    unit: str  # "msgs" (rate per message) or "sample" (time per scored sample)
    file: Path = Path()
    ours: list[float] = field(default_factory=list)
    theirs: list[float] = field(default_factory=list)
    error: str | None = None
    peer_error: str | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}@{self.n}@{self.file.stem}"


def cases(quick: bool) -> list[tuple[Case, Any]]:
    """Every case with its input data."""
    sizes = (10, 40) if quick else (10, 100, 1_000, 10_000)
    events = (10, 20) if quick else (10, 100, 1_000)  # each AgentInput holds the history
    calls = (10, 30) if quick else (10, 100, 1_000)
    from tracebridge.adapters import galtea, llama_index, openai_chat

    out: list[tuple[Case, Any]] = []
    for n in sizes:
        out.append((Case("MultiTurnSample from dicts", n, "sample_dicts", "ragas", "msgs"),
                    _inputs.sample_dicts(n)))
    for n in sizes:
        out.append((Case("MultiTurnSample from objects", n, "sample_objects", "ragas", "msgs"),
                    _inputs.sample_dicts(n)))
    for n in sizes:
        out.append((Case("rules alone (validate, sample objects)", n, "rules", "none", "msgs"),
                    _inputs.sample_dicts(n)))
    for n in sizes:
        out.append((Case("langchain to_messages (LangGraph objects)", n, "langgraph", "ragas",
                         "msgs"), _inputs.langgraph_dicts(n)))
    for n in sizes:
        out.append((Case("swarm to_messages", n, "read_swarm", "ragas", "msgs"),
                    _inputs.repeated_golden("swarm", n)))
    for n in events:
        out.append((Case("llama_index events_to_messages", n, "llama_events", "ragas", "msgs"),
                    _inputs.llama_events(n)))
    for n in sizes:
        openai = openai_chat.from_messages(_inputs.conversation(n))
        roles = galtea.from_messages(_inputs.chat(n), shape="roles")
        history = llama_index.from_messages(_inputs.conversation(n))
        dumps = [m.model_dump(mode="json") for m in history]
        swarm_trace = _inputs.repeated_golden("swarm", n)
        out += [
            (Case("openai_chat to_messages", n, "read_openai_chat", "floor", "msgs"), openai),
            (Case("openai_chat from_messages", n, "write_openai_chat", "floor", "msgs"), openai),
            (Case("swarm from_messages", n, "write_swarm", "floor", "msgs"), swarm_trace),
            (Case("galtea to_messages (role turns)", n, "read_galtea", "floor", "msgs"), roles),
            (Case("galtea from_messages", n, "write_galtea", "floor", "msgs"), roles),
            (Case("llama_index to_messages (ChatMessage dumps)", n, "read_llama_index", "floor",
                  "msgs"), dumps),
            (Case("llama_index from_messages", n, "write_llama_index", "floor", "msgs"), dumps),
        ]
    for n in calls:
        out.append((Case("ToolCallAccuracy strict (trajectory)", n, "metric_accuracy", "ragas",
                         "sample"), _inputs.tool_calls(n, "trajectory")))
    for n in calls:
        out.append((Case("ToolCallAccuracy strict (shuffled: worst case)", n, "metric_accuracy",
                         "ragas", "sample"), _inputs.tool_calls(n, "shuffled")))
    for n in calls:
        out.append((Case("ToolCallAccuracy strict_order=False (shuffled)", n,
                         "metric_accuracy_unordered", "ragas", "sample"),
                    _inputs.tool_calls(n, "shuffled")))
    for n in calls:
        out.append((Case("ToolCallF1 (trajectory)", n, "metric_f1", "ragas", "sample"),
                    _inputs.tool_calls(n, "trajectory")))
    return out


def ensure_ragas_venv(folder: Path) -> Path:
    """The Ragas virtualenv's python, creating the virtualenv when it is missing."""
    python = folder / "bin" / "python"
    probe = "import ragas, llama_index.core, langchain_core"
    if python.exists() and subprocess.run([str(python), "-c", probe],
                                          capture_output=True).returncode == 0:
        return python
    print(f"creating the Ragas virtualenv in {folder} (a few minutes, once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *ragas_requirements()],
                   check=True)
    return python


def import_seconds(python: Path | str, module: str) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", f"import {module}"], check=True)
    return time.perf_counter() - start


def run(
    quick: bool, rounds: int, ragas_python: Path | None, only: str | None = None
) -> list[Case]:
    budget = 0.01 if quick else 0.15
    folder = Path(tempfile.mkdtemp(prefix="side_by_side_"))
    work: dict[str, Any] = {}
    floors: dict[str, Any] = {}
    all_cases: list[Case] = []
    # Where the peer is Ragas, each side runs in a worker process of its own holding the
    # same inputs (the cases Ragas is timed on); the rest (ours beside a floor, ours alone)
    # runs here, both sides in this one process.
    ours = Worker(sys.executable, HERE / "_tracebridge_side.py")
    peer = Worker(ragas_python, HERE / "_ragas_side.py") if ragas_python else None
    try:
        for number, (case, data) in enumerate(cases(quick)):
            if only is not None and only not in case.path:
                continue
            case.file = _inputs.write(folder, f"{number:02d}_{case.kind}_{case.n}", data)
            all_cases.append(case)
            if case.peer == "ragas":
                load = {"op": "load", "case": case.key, "kind": case.kind, "path": str(case.file)}
                case.error = ours.ask(**load).get("error")
                if peer is None:
                    case.peer_error = "not run (--no-ragas)"
                else:
                    case.peer_error = peer.ask(**load).get("error")
                continue
            loaded = json.loads(case.file.read_text(encoding="utf-8"))
            try:
                work[case.key] = prepare(case.kind, loaded)
                work[case.key]()
            except Exception as error:  # shown in the table; the exit status says it
                case.error = f"{type(error).__name__}: {error}"[:160]
            if case.peer == "floor":
                floors[case.key] = prepare_floor(case.kind, loaded)
        # Every input of every case stays loaded for the whole run; frozen, the garbage
        # collector leaves them alone, so a case pays for collecting its own objects only
        # (not for the others' inputs), on both sides alike.
        freeze()
        for worker in (ours, peer):
            if worker is not None:
                worker.ask(op="freeze")
        for round_number in range(rounds):
            for case in all_cases:
                steps = [lambda c=case: _time_ours(c, work, ours, budget),
                         lambda c=case: _time_peer(c, peer, floors, budget)]
                for step in steps if round_number % 2 == 0 else reversed(steps):
                    step()
        imports = Case("import (fresh interpreter)", 0, "import", "ragas", "import")
        if not ragas_python:
            imports.peer_error = "not run (--no-ragas)"
        for _ in range(rounds):
            imports.ours.append(import_seconds(sys.executable, "tracebridge"))
            if ragas_python:
                imports.theirs.append(import_seconds(ragas_python, "ragas"))
        all_cases.append(imports)
    finally:
        for worker in (ours, peer):
            if worker is not None:
                worker.close()
    return all_cases


def _time_ours(case: Case, work: dict[str, Any], ours: Worker, budget: float) -> None:
    if case.error is not None:
        return
    if case.peer != "ragas":
        case.ours.append(seconds_per_call(work[case.key], budget))
        return
    answer = ours.ask(op="time", case=case.key, budget=budget)
    if "error" in answer:
        case.error = answer["error"]
    else:
        case.ours.append(answer["seconds"])


def _time_peer(case: Case, peer: Worker | None, floors: dict[str, Any], budget: float) -> None:
    if case.peer == "none":
        return
    if case.peer == "floor":
        case.theirs.append(seconds_per_call(floors[case.key], budget))
    elif peer is not None and case.peer_error is None:
        answer = peer.ask(op="time", case=case.key, budget=budget)
        if "error" in answer:
            case.peer_error = answer["error"]
        else:
            case.theirs.append(answer["seconds"])


def _figure(case: Case, seconds: float) -> str:
    if case.unit == "msgs":
        rate = case.n / seconds
        return f"{rate / 1e6:.2f}M msgs/s" if rate >= 1e6 else f"{rate / 1e3:.1f}k msgs/s"
    if case.unit == "import":
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.1f} ms"


def bar(case: Case) -> float | None:
    """The ratio a path must reach (issue 11), None where none is set."""
    if case.unit == "import" or case.peer == "none":
        return None
    if case.peer == "floor":
        return 0.5
    if case.unit == "sample" and case.n > 100:  # the metrics' bar is set at 10 and 100 calls
        return None
    return 1.0


def table(all_cases: list[Case]) -> str:
    rows = [("path", "n", "tracebridge", "peer", "ratio", "bar")]
    for case in all_cases:
        ours = statistics.median(case.ours) if case.ours else None
        theirs = statistics.median(case.theirs) if case.theirs else None
        peer_name = {"ragas": "Ragas 0.4.3", "floor": "floor", "none": "(none)"}[case.peer]
        ratio = theirs / ours if ours and theirs else None
        wanted = bar(case)
        verdict = "" if wanted is None else (
            f">= {wanted:.1f}" + ("" if ratio is None else " ok" if ratio >= wanted else " BELOW")
        )
        rows.append((
            case.path,
            f"{case.n:,}" if case.n else "",
            _figure(case, ours) if ours else f"ERROR {case.error}",
            peer_name if case.peer == "none"
            else f"{peer_name}: {_figure(case, theirs) if theirs else case.peer_error}",
            f"{ratio:.2f}" if ratio is not None else "-",
            verdict,
        ))
    return render(rows)


def _per_message(seconds: list[float], n: int) -> float:
    return statistics.median(seconds) / n


def growth(all_cases: list[Case]) -> str:
    """Per-message cost at n = 10,000 over the cost at n = 100, per path (or at the largest
    and smallest sizes measured, where those two are not)."""
    by_path: dict[str, dict[int, Case]] = {}
    for case in all_cases:
        if case.unit == "msgs" and case.ours:
            by_path.setdefault(case.path, {})[case.n] = case
    lines = ["per-message cost growth (tracebridge; bar: within 1.5x):"]
    for path, group in by_path.items():
        if len(group) < 2:
            continue
        small_n = 100 if 100 in group and max(group) > 100 else min(group)
        small, large = group[small_n], group[max(group)]
        ours = _per_message(large.ours, large.n) / _per_message(small.ours, small.n)
        verdict = "ok" if ours <= 1.5 else "OVER"
        peer = ""
        if small.theirs and large.theirs:
            theirs = _per_message(large.theirs, large.n) / _per_message(small.theirs, small.n)
            peer = f"; {'Ragas' if large.peer == 'ragas' else 'floor'} {theirs:.2f}x"
        lines.append(f"  {path}: {ours:.2f}x  (n = {small.n:,} -> {large.n:,}) {verdict}{peer}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--no-ragas", action="store_true", help="our side and the floors only")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 1)")
    parser.add_argument("--only", default=None, help="only the paths whose name holds this text")
    parser.add_argument("--ragas-venv", type=Path, default=RAGAS_VENV,
                        help=f"the Ragas virtualenv (default {RAGAS_VENV})")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    ragas_python = None if args.no_ragas else ensure_ragas_venv(args.ragas_venv)
    start = time.perf_counter()
    all_cases = run(args.quick, rounds, ragas_python, args.only)
    print(f"side by side, median of {rounds} interleaved round(s); ratio = peer time / "
          "tracebridge time (> 1: tracebridge faster)")
    print(table(all_cases))
    print(growth(all_cases))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 1 if any(case.error for case in all_cases) else 0


if __name__ == "__main__":
    sys.exit(main())
