"""Imported first by ``tracebridge.ray_data``: without pyarrow, one sentence naming the extra."""

from .._optional import require

require("pyarrow", adapter="Ray Data", extra="ray", package="pyarrow")
