"""The worker process each side of the side-by-side benchmark runs in (standard library only:
the peer's side imports it inside the peer's virtualenv).

A worker reads one JSON request per line on standard input and answers one JSON line on
standard output:
    {"op": "load", "case": ID, "kind": KIND, "path": FILE}  -> {"ok": true, "produced": N}
        (N: the messages one call produced, ``messages_in``; null for a score)
    {"op": "time", "case": ID, "budget": SECONDS}           -> {"seconds": S}
    {"op": "freeze"}                                        -> {"ok": true} (``_timing.freeze``)
A request that fails is answered ``{"error": "..."}`` and the worker goes on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import freeze, seconds_per_call

Work = Callable[[], Any]


def serve(prepare: Callable[[str, Any], Work]) -> None:
    """Answer requests until standard input ends; ``prepare(kind, data)`` makes a case's work."""
    works: dict[str, Work] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "freeze":
                freeze()
                answer: dict[str, Any] = {"ok": True}
            elif request["op"] == "load":
                with open(request["path"], encoding="utf-8") as file:
                    data = json.load(file)
                work = prepare(request["kind"], data)
                result = work()
                works[request["case"]] = work
                answer = {"ok": True, "produced": messages_in(result)}
            else:
                answer = {"seconds": seconds_per_call(works[request["case"]], request["budget"])}
        except Exception as error:  # reported in the table, the run goes on
            answer = {"error": f"{type(error).__name__}: {error}"[:200]}
        print(json.dumps(answer), flush=True)


def messages_in(result: Any) -> int | None:
    """How many messages a case's work produced: a list's length, or a sample's (ours holds
    them in ``messages``, Ragas's in ``user_input``); None for anything else (a score)."""
    for name in ("messages", "user_input"):
        result = getattr(result, name, result)
    return len(result) if isinstance(result, list) else None


class Worker:
    """A side's script (``_ragas_side.py``, ``_tracebridge_side.py``) running as a worker
    under ``python``, one JSON line per request."""

    def __init__(self, python: Path | str, script: Path) -> None:
        self.process = subprocess.Popen(
            [str(python), str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
