"""Timing shared by both sides of the side-by-side benchmark (standard library only: the
peer's side imports it inside the peer's virtualenv)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Coroutine
from typing import Any


def seconds_per_call(work: Callable[[], object], budget: float) -> float:
    """Run ``work`` back to back for at least ``budget`` seconds of this process's CPU time
    (at least twice: the first call is not timed, so lazy imports and caches fill before)
    and return the mean CPU time of a call.

    CPU time rather than wall time: on a shared machine a process waiting for a core is not
    charged for the wait, so the other work running there moves the figures less.
    """
    work()
    loops, start = 0, time.process_time()
    while True:
        work()
        loops += 1
        elapsed = time.process_time() - start
        if elapsed >= budget:
            return elapsed / loops


def finish(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits to its end, as an ``await`` inside a running event
    loop would, without an event loop's own cost (the same for both sides)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the coroutine waited for something; it cannot be timed this way")


def freeze() -> None:
    """Move every object alive now out of the garbage collector's sight (``gc.freeze``):
    timed work then pays for collecting its own objects, not for the data set up before."""
    gc.collect()
    gc.freeze()
