"""Evaluation fixes: a cache file another connection holds locked past the timeout is
reported as held, not as damaged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tracebridge.evaluation.cache import CacheError, ResultCache


def test_a_cache_held_past_the_timeout_says_so_not_that_it_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResultCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # the write lock, as another process's put holds it
        with pytest.raises(CacheError) as caught:
            ResultCache(path, timeout=0.05)
    finally:
        holder.close()
    assert str(caught.value) == (
        f"cache {path}: cannot open it: database is locked (another connection held it for "
        "longer than the 0.05 s timeout; try again once it is released)")
    with ResultCache(path, timeout=0.05) as cache:  # released: it opens, nothing was harmed
        assert cache.get("0" * 64) is None
