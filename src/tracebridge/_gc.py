"""Pausing Python's cycle collector while one trace is built."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["gc_paused", "pause_gc", "resume_gc"]

P = ParamSpec("P")
T = TypeVar("T")


def pause_gc() -> bool:
    """Pause the cycle collector while a whole trace is built; True when this call paused it
    (the caller calls ``resume_gc`` with that value in ``finally``).

    Building a trace allocates many small objects (messages, calls, dicts) and none of them
    form reference cycles, so a collection can find nothing to free; yet the collections that
    thousands of allocations trigger walk every live object, and each one takes longer as the
    trace grows: per-message cost would grow with the length of the trace. Cycles made
    elsewhere meanwhile are collected as soon as it is enabled again. If the application has
    paused the collector itself, it is left paused.
    """
    if not gc.isenabled():
        return False
    gc.disable()
    return True


def resume_gc(paused: bool) -> None:
    """Undo ``pause_gc`` (only when that call paused the collector)."""
    if paused:
        gc.enable()


def gc_paused(function: Callable[P, T]) -> Callable[P, T]:
    """``function`` with the cycle collector paused while it runs (see ``pause_gc``)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> T:
        was_running = pause_gc()
        try:
            return function(*args, **kwargs)
        finally:
            resume_gc(was_running)

    return paused
