"""What the OpenTelemetry adapter's tests share: the refusal of a trace, where it points, and
a GenAI message of one text part."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import otel


def refused(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **options)
    return caught.value


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


def text(role: str, said: str) -> dict[str, Any]:
    """A GenAI convention message of one text part."""
    return {"role": role, "parts": [{"type": "text", "content": said}]}
