"""Conversion and scoring at cluster scale on Ray Data (``pip install "tracebridge[ray]"``).

The batch functions take and return Arrow tables and need no Ray, so any engine can call
them; they never raise for bad data and account for every row:

* ``convert_batch(batch, *, source, target)``: the input columns, plus ``output`` and the
  error columns ``error_code``, ``error_index``, ``error_path``, ``error_message``.
* ``score_batch(batch, *, metrics, judge=None, budget=None)``: one row per record and metric
  with ``state`` (``scored``, ``unscorable``, ``errored``, ``unrun``), ``value``, ``error``
  and the ``MetricResult`` as JSON.

With Ray: ``read_traces(paths, *, source="auto")`` gives ``record``/``file``/``line``/
``element`` rows (read and numbered by us; ``element`` is a record's place in a JSON array of
traces, null elsewhere), and ``score(ds, metrics, *, judge=None, actors=2, budget=None)``
scores on an actor pool under one budget actor, answering from earlier results (``cache=``)
what they already hold. See docs/ray.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._optional import require
from . import _requires  # noqa: F401 - first: names the extra when pyarrow is missing
from ._convert import CONVERT_COLUMNS, convert_batch
from ._lease import Limits
from ._local import init_local
from ._scoring import SCORE_COLUMNS, STATES, OpenAIJudgeSpec, Scorer, score_batch

if TYPE_CHECKING:
    from ._cluster import load_results, read_traces, score

__all__ = [
    "CONVERT_COLUMNS",
    "SCORE_COLUMNS",
    "STATES",
    "Limits",
    "OpenAIJudgeSpec",
    "Scorer",
    "convert_batch",
    "init_local",
    "load_results",
    "read_traces",
    "score",
    "score_batch",
]

_WITH_RAY = ("load_results", "read_traces", "score")


def __getattr__(name: str) -> Any:
    """``read_traces``, ``score`` and ``load_results`` import Ray on first use."""
    if name in _WITH_RAY:
        require("ray.data", adapter="Ray Data", extra="ray", package="ray[data]")
        from . import _cluster

        return getattr(_cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
