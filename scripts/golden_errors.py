"""What the golden-trace generators (``scripts/golden/*.py``) record of an invalid trace: the
error its reader raises, checked against the code and index the generator expects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracebridge import TraceError

__all__ = ["error_of"]


def error_of(
    read: Callable[[Any], Any], trace: Any, code: str, index: int | None
) -> dict[str, Any]:
    """The error ``read(trace)`` raises, as a golden file holds it: the code and index given
    here (anything else stops the generator), and the error's path."""
    try:
        read(trace)
    except TraceError as error:
        found = error
    else:
        raise AssertionError(f"expected {code} at {index}, but the trace reads")
    if (found.code, found.index) != (code, index):
        raise AssertionError(f"expected {code} at {index}, got {found}")
    return {"code": code, "index": index, "path": found.path}
