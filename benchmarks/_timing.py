"""Timing shared by both sides of the side-by-side benchmark (standard library only: the
peer's side imports it inside the peer's virtualenv)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Coroutine
from typing import Any


def seconds_per_call(work: Callable[[], object], budget: float) -> float:
    """Run ``work`` back to back for at least ``budget`` seconds (at least twice: the first
    call is not timed, so lazy imports and caches fill before) and return the mean time."""
    work()
    loops, start = 0, time.perf_counter()
    while True:
        work()
        loops += 1
        elapsed = time.perf_counter() - start
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
