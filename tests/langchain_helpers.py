"""What the LangChain writer's tests share: a trace in each form the reader takes, and the
refusal of writing typed messages back."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage, messages_to_dict

from tracebridge import TraceError
from tracebridge.adapters import langchain


def forms(trace: list[BaseMessage]) -> list[list[Any]]:
    """The objects, their ``messages_to_dict`` dicts and their ``model_dump()`` dicts."""
    return [trace, messages_to_dict(trace), [m.model_dump() for m in trace]]


def rejected_write(typed: list[Any]) -> TraceError:
    """The error ``langchain.from_messages(typed)`` raises."""
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    return caught.value
