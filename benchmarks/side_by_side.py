"""tracebridge side by side with Ragas 0.4.3 (and pydantic floors), in one run.

    .venv/bin/python benchmarks/side_by_side.py            # about 2-3 minutes on 2 cores
    .venv/bin/python benchmarks/side_by_side.py --quick    # tiny sizes, seconds
    .venv/bin/python benchmarks/side_by_side.py --no-ragas # our side and the floors only

Ragas cannot share our virtualenv (its langchain-openai needs openai<3), so it runs in its
own, ``benchmarks/.ragas-venv`` (created on first use from PyPI: ragas 0.4.3 and the
langchain-core and llama-index-core versions we have, so both sides build the same framework
objects), as a worker process; where Ragas is the peer, our side runs as a worker of its own
too, holding the same inputs. The inputs are written once as JSON to a temporary folder
(deleted at the end) and each side loads the same files. Rounds are interleaved (every case,
ours then the peer's, alternating who goes first), and each figure is the median of the
rounds; a round's figure is the CPU time per call of the process that ran it (other work on
a shared machine moves it less than wall time), the import's the CPU time of the import in
a fresh interpreter. Where Ragas has no converter for a format, the peer is a bare pydantic
``TypeAdapter`` of an equivalent minimal model (``_floors.py``), timed with the cycle
collector paused during each call as ours pauses it.

Prints one table: path, n (the messages both sides produced, checked equal), tracebridge,
peer, ratio (peer time / our time: > 1 means tracebridge is faster), then the per-message
cost growth of each of our paths measured at 100 and 10,000 messages. Exits 1 when one of
our paths failed or the two sides produced different numbers of messages.
"""

from __future__ import annotations

import argparse
import json
import shutil
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
from _worker import Worker, messages_in

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
    messages: int | None = None  # what our call produced (unit "msgs")
    peer_messages: int | None = None  # what the peer's produced
    ours: list[float] = field(default_factory=list)
    theirs: list[float] = field(default_factory=list)
    error: str | None = None
    peer_error: str | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}@{self.n}@{self.file.stem}"


LANGGRAPH_PATHS = {
    "1.x": "langchain to_messages (LangGraph, ChatOpenAI replies of langchain-openai 1.x)",
    "0.3": "langchain to_messages (LangGraph, langchain-openai 0.3 replies: raw calls kept)",
}
METRIC_PATHS = (  # label, metric (``_tracebridge_side._metric``), order of the calls
    ("ToolCallAccuracy strict (trajectory)", "accuracy", "trajectory"),
    ("ToolCallAccuracy strict (shuffled: worst case)", "accuracy", "shuffled"),
    ("ToolCallAccuracy strict_order=False (shuffled)", "accuracy_unordered", "shuffled"),
    ("ToolCallF1 (trajectory)", "f1", "trajectory"),
)
SCORED_BEFORE = "sample scored before (hash computed once per sample)"
FIRST_SCORE = "first score of a sample (hash included)"
LEGEND = f"""\
metric rows: every score carries the sample's transcript hash, computed once per sample.
  "{SCORED_BEFORE}": the same sample scored again
    each call, as a second metric on a sample (its hash computed by an earlier score);
  "{FIRST_SCORE}": a new model_copy of the sample scored each call,
    as the first metric on a sample (its hash computed in the call; the copy timed too).
  Ragas computes no hash: its work is the same in both rows."""


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
    for openai_version in ("1.x", "0.3"):
        for n in sizes:
            out.append((Case(LANGGRAPH_PATHS[openai_version], n, "langgraph", "ragas", "msgs"),
                        _inputs.langgraph_dicts(n, openai_version)))
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
    for label, name, order in METRIC_PATHS:
        for prefix, how in (("metric_", SCORED_BEFORE), ("first_metric_", FIRST_SCORE)):
            for n in calls:
                out.append((Case(f"{label}, {how}", n, prefix + name, "ragas", "sample"),
                            _inputs.tool_calls(n, order)))
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


IMPORT_TIMER = (
    "import time; start = time.process_time(); import {module}; "
    "print(time.process_time() - start)"
)


def import_seconds(python: Path | str, module: str) -> float:
    """The CPU time of ``import module`` in a fresh interpreter, timed inside it (the
    interpreter's own start-up is not counted)."""
    done = subprocess.run([str(python), "-c", IMPORT_TIMER.format(module=module)],
                          check=True, capture_output=True, text=True)
    return float(done.stdout.splitlines()[-1])


def run(
    quick: bool, rounds: int, ragas_python: Path | None, only: str | None = None
) -> list[Case]:
    budget = 0.01 if quick else 0.15
    folder = Path(tempfile.mkdtemp(prefix="side_by_side_"))
    try:
        return _run_in(folder, quick, rounds, ragas_python, only, budget)
    finally:
        shutil.rmtree(folder)  # the inputs: up to 53 MB


def _run_in(
    folder: Path, quick: bool, rounds: int, ragas_python: Path | None, only: str | None,
    budget: float,
) -> list[Case]:
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
                _load_in_workers(case, ours, peer)
            else:
                _load_here(case, work, floors)
            case.error = case.error or count_error(case)
        # Every input of every case stays loaded for the whole run; frozen, the garbage
        # collector leaves them alone, so a case pays for collecting its own objects only
        # (not for the others' inputs). Our calls and the floors' pause the collector while
        # they run; Ragas's calls run with it on, as Ragas ships.
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
        all_cases.append(_time_imports(rounds, ragas_python))
    finally:
        for worker in (ours, peer):
            if worker is not None:
                worker.close()
    return all_cases


def _load_in_workers(case: Case, ours: Worker, peer: Worker | None) -> None:
    load = {"op": "load", "case": case.key, "kind": case.kind, "path": str(case.file)}
    answer = ours.ask(**load)
    case.error, case.messages = answer.get("error"), answer.get("produced")
    if peer is None:
        case.peer_error = "not run (--no-ragas)"
        return
    answer = peer.ask(**load)
    case.peer_error, case.peer_messages = answer.get("error"), answer.get("produced")


def _load_here(case: Case, work: dict[str, Any], floors: dict[str, Any]) -> None:
    loaded = json.loads(case.file.read_text(encoding="utf-8"))
    try:
        work[case.key] = prepare(case.kind, loaded)
        case.messages = messages_in(work[case.key]())
    except Exception as error:  # shown in the table; the exit status says it
        case.error = f"{type(error).__name__}: {error}"[:160]
    if case.peer == "floor":
        floors[case.key] = prepare_floor(case.kind, loaded)
        case.peer_messages = messages_in(floors[case.key]())


def count_error(case: Case) -> str | None:
    """Why a case's rate cannot be given: our call produced no count of messages, or the
    peer produced another number of messages than ours (so the two did not do the same
    work); None when the counts are there and agree."""
    if case.unit != "msgs" or case.error is not None:
        return None
    if case.messages is None:
        return "our call gave no list of messages to count"
    if case.peer != "none" and case.peer_error is None and case.peer_messages is None:
        return f"{PEER_NAMES[case.peer]} gave no list of messages to count"
    if case.peer_messages is not None and case.peer_messages != case.messages:
        return (f"messages produced differ: tracebridge {case.messages:,}, "
                f"{PEER_NAMES[case.peer]} {case.peer_messages:,}")
    return None


def _time_imports(rounds: int, ragas_python: Path | None) -> Case:
    """The import row: each round both imports, who goes first alternating."""
    imports = Case("import (fresh interpreter, CPU time)", 0, "import", "ragas", "import")
    if not ragas_python:
        imports.peer_error = "not run (--no-ragas)"
    for round_number in range(rounds):
        steps = [lambda: imports.ours.append(import_seconds(sys.executable, "tracebridge"))]
        if ragas_python:
            steps.append(lambda: imports.theirs.append(import_seconds(ragas_python, "ragas")))
        for step in steps if round_number % 2 == 0 else reversed(steps):
            step()
    return imports


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


def _figure(case: Case, seconds: float, messages: int | None) -> str:
    if case.unit == "msgs":
        if messages is None:
            return f"{seconds * 1e6:,.1f} µs per call (messages not counted)"
        rate = messages / seconds
        return f"{rate / 1e6:.2f}M msgs/s" if rate >= 1e6 else f"{rate / 1e3:.1f}k msgs/s"
    if case.unit == "import":
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.1f} ms"


PEER_NAMES = {"ragas": "Ragas 0.4.3", "floor": "floor", "none": "(none)"}


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
        peer_name = PEER_NAMES[case.peer]
        ratio = theirs / ours if ours and theirs else None
        wanted = bar(case)
        verdict = "" if wanted is None else (
            f">= {wanted:.1f}" + ("" if ratio is None else " ok" if ratio >= wanted else " BELOW")
        )
        rows.append((
            case.path,
            _size(case),
            _figure(case, ours, case.messages) if ours else f"ERROR {case.error}",
            peer_name if case.peer == "none"
            else f"{peer_name}: "
            f"{_figure(case, theirs, case.peer_messages) if theirs else case.peer_error}",
            f"{ratio:.2f}" if ratio is not None else "-",
            verdict,
        ))
    return render(rows)


def _size(case: Case) -> str:
    """The n column: the messages produced (a rate's divisor), the calls of a metric."""
    if case.unit == "msgs" and case.messages is not None:
        return f"{case.messages:,}"
    return f"{case.n:,}" if case.n else ""


def _per_message(seconds: list[float], messages: int) -> float:
    return statistics.median(seconds) / messages


def growth(all_cases: list[Case]) -> str:
    """Per-message cost at n = 10,000 over the cost at n = 100, per path (or at the largest
    and smallest sizes measured, where those two are not)."""
    by_path: dict[str, dict[int, Case]] = {}
    for case in all_cases:
        if case.unit == "msgs" and case.ours and case.messages is not None:
            by_path.setdefault(case.path, {})[case.n] = case
    lines = ["per-message cost growth (tracebridge; bar: within 1.5x):"]
    for path, group in by_path.items():
        if len(group) < 2:
            continue
        small_n = 100 if 100 in group and max(group) > 100 else min(group)
        small, large = group[small_n], group[max(group)]
        ours = _per_message(large.ours, large.messages) / _per_message(small.ours, small.messages)
        verdict = "ok" if ours <= 1.5 else "OVER"
        peer = ""
        if small.theirs and large.theirs:
            theirs = _per_message(large.theirs, large.messages) / _per_message(
                small.theirs, small.messages
            )
            peer = f"; {'Ragas' if large.peer == 'ragas' else 'floor'} {theirs:.2f}x"
        lines.append(f"  {path}: {ours:.2f}x  ({small.messages:,} -> {large.messages:,} "
                     f"messages) {verdict}{peer}")
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
    if any(case.unit == "sample" for case in all_cases):
        print(LEGEND)
    print(growth(all_cases))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 1 if any(case.error for case in all_cases) else 0


if __name__ == "__main__":
    sys.exit(main())
