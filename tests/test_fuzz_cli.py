"""No tracebacks, ever: mutated golden traces and random JSON through the API and the command.

Every field of every golden trace (its ``trace``, and a LlamaIndex file's ``events``) is
replaced, in turn, by a value of another type (seeded, so a failure is the same failure on
every run). Each mutated trace goes through the Python API (its reader, one writer, format
detection) and, as one JSONL line among its siblings, through ``tracebridge convert
--keep-going`` in process. The only outcomes allowed: success, a ``TraceError`` (or, for
detection, a ``FormatError``), and on the command line one-line errors with exit 0, 1 or 2.
Random JSON documents (nested, huge, odd strings) go through every reader the same way.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.cli import main
from tracebridge.errors import FormatError
from tracebridge.registry import FORMATS, detect_format, get_adapter

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted(ROOT.glob("golden_traces/**/*.json"))
SEED = 20240611
REPLACEMENTS: list[Any] = [
    None, True, False, 0, -1, 2.5, "", "x", "tool", [], {}, [None], ["x"], [[]], [{}],
    {"type": "x"}, {"role": ["user"]}, {"a": {"b": None}}, 10**30, "\ud800",
]
"""Values of every JSON type, including shapes that look like parts of a trace."""


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _paths(item, (*path, position))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, new) if k == head else v) for k, v in enumerate(value)]


def _cases(path: Path) -> list[tuple[str, Any]]:
    """(format, mutated trace) for every field of the golden file, one replacement each."""
    document = json.loads(path.read_text(encoding="utf-8"))
    name = path.relative_to(ROOT / "golden_traces").parts[0]
    rng = random.Random(f"{SEED}:{path.relative_to(ROOT)}")
    cases = []
    for key, reader in (("trace", name), ("events", "llama_index_events")):
        if key not in document:
            continue
        for at in _paths(document[key]):
            replacement = rng.choice(REPLACEMENTS)
            cases.append((reader, _replaced(document[key], at, replacement)))
    return cases


def _read(reader: str, trace: Any) -> Any:
    if reader == "llama_index_events":
        return get_adapter("llama_index").events_to_messages(trace)  # type: ignore[attr-defined]
    return get_adapter(reader).to_messages(trace)


def _api_outcome(reader: str, trace: Any, target: str, detect: bool = True) -> str | None:
    """None when the API behaved; otherwise what escaped, in one line."""
    try:
        messages = _read(reader, trace)
    except TraceError:
        messages = None
    except Exception as exc:
        return f"{reader}.to_messages: {type(exc).__name__}: {exc}"
    if messages is not None:
        try:
            get_adapter(target).from_messages(messages)
        except TraceError:
            pass
        except Exception as exc:
            return f"{target}.from_messages: {type(exc).__name__}: {exc}"
    if not detect:
        return None
    try:
        detect_format(trace)
    except (TraceError, FormatError):
        pass
    except Exception as exc:
        return f"detect_format: {type(exc).__name__}: {exc}"
    return None


MOVED = ("tracebridge: standard output has no line for a failed record or a blank line of "
         "standard input: a record after one has another line number there than in standard "
         "input, so ids by line number (as "
         "sample --references matches them) do not carry over; run sample on standard input")


def _cli(argv: list[str], stdin: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _cli_problems(code: int, err: str, allowed: set[int]) -> list[str]:
    problems = [] if code in allowed else [f"exit {code}"]
    for line in err.splitlines():
        if "internal error" in line or "Traceback" in line:
            problems.append(line)
        elif not (line.startswith("tracebridge: ") or line.endswith(" failed")):
            problems.append(f"not a one-line error: {line!r}")
    return problems


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: str(p.relative_to(ROOT / "golden_traces")))
def test_mutated_golden_traces_are_read_or_refused(path: Path) -> None:
    cases = _cases(path)
    rng = random.Random(f"{SEED}:targets:{path.name}")
    escaped = []
    for reader, trace in cases:
        outcome = _api_outcome(reader, trace, rng.choice(FORMATS))
        if outcome is not None:
            escaped.append(f"{outcome} <- {json.dumps(trace)[:300]}")
    by_reader: dict[str, list[str]] = {}
    for reader, trace in cases:
        by_reader.setdefault(reader, []).append(json.dumps(trace))
    for reader, lines in by_reader.items():
        target = rng.choice(FORMATS)
        code, _, err = _cli(["convert", "-", "--from", reader, "--to", target, "--keep-going"],
                            "\n".join(lines) + "\n")
        escaped += [f"convert --from {reader} --to {target}: {p}"
                    for p in _cli_problems(code, err, {0, 1})]
        told = err.splitlines()
        moved = told[-1].startswith("tracebridge: standard output has no line ")
        counted = told[-2 if moved else -1].split()  # N ok, M failed: every line accounted for
        # (an otel file is one trace, whatever its number of lines: its spans spread over them)
        assert int(counted[0]) + int(counted[2]) == (1 if reader == "otel" else len(lines))
        if moved:  # a record was written after a failed one: the line that says so follows
            assert told[-1] == MOVED
    assert escaped == [], f"{len(escaped)} of {len(cases)} escaped; first: {escaped[:3]}"


def _random_json(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -7, 2**63, 1e308, 0.5])
    if kind == 3:
        return rng.choice(["", "user", "assistant", "tool", "ai", "human", "text", "\ud83d",
                           "\u2028", "x" * 300])
    if kind == 4:
        return rng.choice(["role", "type", "content", "messages"])
    if kind in (5, 6):
        keys = ["role", "type", "content", "tool_calls", "data", "messages", "id", "name",
                "tool_call_id", "blocks", "event", "input", "actual_output", "args"]
        return {rng.choice(keys): _random_json(rng, depth - 1) for _ in range(rng.randrange(4))}
    return [_random_json(rng, depth - 1) for _ in range(rng.randrange(4))]


RANDOM = [_random_json(random.Random(f"{SEED}:{n}"), 4) for n in range(400)]
DEEP = ["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, "1" * 5000, "NaN",
        '"\\ud800"', "[" * 200000]


@pytest.mark.parametrize("reader", [*FORMATS, "llama_index_events"])
def test_random_json_is_read_or_refused(reader: str) -> None:
    escaped = []
    for document in RANDOM:
        for trace in (document, [document], [document, document]):
            outcome = _api_outcome(reader, trace, "tracebridge", detect=reader == "tracebridge")
            if outcome is not None:
                escaped.append(f"{outcome} <- {json.dumps(trace)[:200]}")
    lines = [json.dumps(document) for document in RANDOM] + DEEP
    for argv in (["validate", "-", "--from", reader, "--keep-going"],
                 ["show", "-", "--keep-going"]):
        code, _, err = _cli(argv, "\n".join(lines) + "\n")
        escaped += [f"{' '.join(argv)}: {p}" for p in _cli_problems(code, err, {1, 2})]
    assert escaped == [], f"{len(escaped)} escaped; first: {escaped[:3]}"


@pytest.mark.parametrize("text", DEEP)
def test_one_odd_document_is_one_line_on_the_command_line(text: str) -> None:
    code, _, err = _cli(["convert", "-", "--to", "openai_chat"], text)
    assert _cli_problems(code, err, {1, 2}) == []
    assert len(err.splitlines()) == 1
