"""A value whose ``==`` answers something with no truth value (a numpy array does) where an
adapter looks for a role or a type tag: ``detect`` says no, ``detect_format`` finds no format,
``to_messages`` refuses with a ``TraceError``; no raw ``ValueError`` from the comparison."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.errors import FormatError
from tracebridge.registry import detect_format, get_adapter

ADAPTERS = ["galtea", "langchain", "llama_index", "openai_agents", "openai_chat",
            "openai_responses", "otel", "swarm", "tracebridge"]
KEYS = ["role", "type", "content", "name", "id", "tool_call_id", "tool_calls", "input",
        "actual_output", "status", "call_id", "arguments", "output", "sender"]


class _NoTruth:
    def __bool__(self) -> bool:
        raise ValueError("the truth value of this answer is ambiguous")


class Ambiguous:
    """Compares like a numpy array: to an answer that cannot be used as a bool."""

    def __eq__(self, other: object) -> Any:
        return _NoTruth()

    def __ne__(self, other: object) -> Any:
        return _NoTruth()

    __hash__ = None  # type: ignore[assignment]


def trace(key: str, at: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": "yo"}]
    messages[at][key] = Ambiguous()
    return messages


def test_the_stand_in_fails_as_a_numpy_array_does() -> None:
    with pytest.raises(ValueError, match="ambiguous"):
        _ = Ambiguous() in ("user", "assistant")


@pytest.mark.parametrize("at", [0, 1])
@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", ADAPTERS)
def test_no_adapter_compares_its_way_into_a_raw_exception(name: str, key: str, at: int) -> None:
    adapter = get_adapter(name)
    given = trace(key, at)
    if key == "role":
        assert adapter.detect(given) is False
    else:
        assert adapter.detect(given) in (True, False)
    with pytest.raises(TraceError):
        adapter.to_messages(given)


@pytest.mark.parametrize("key", ["role", "type"])
def test_detect_format_finds_no_format(key: str) -> None:
    with pytest.raises(FormatError):
        detect_format(trace(key, 0))
