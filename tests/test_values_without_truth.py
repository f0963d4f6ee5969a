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


# The keys with which each adapter's detect still says yes (wherever the value stands): the
# rest of the trace is an OpenAI Chat conversation, and the odd value is not looked at.
DETECTED = {
    "galtea": {"id", "status", "call_id", "arguments", "output", "sender"},
    "openai_chat": {"content", "name", "id", "tool_call_id", "tool_calls", "input",
                    "actual_output", "status", "call_id", "arguments", "output"},
    "swarm": {"sender"},
}

MALFORMED, UNSERIALIZABLE, UNKNOWN_ROLE = "malformed_event", "unserializable_value", "unknown_role"


def refusal(name: str, key: str, at: int) -> tuple[str, int | None, str]:
    """The (code, index, path) each adapter refuses ``trace(key, at)`` with."""
    if name in ("langchain", "tracebridge"):  # no "type": the first message is not theirs
        if (key, at) == ("type", 0):
            return UNKNOWN_ROLE, 0, "messages[0].type"
        return MALFORMED, 0, "messages[0]"
    if name == "llama_index":
        return MALFORMED, 0, "messages[0].blocks"
    if name == "otel":
        return MALFORMED, None, "[0]"
    if name == "galtea":
        if key in ("input", "actual_output"):
            return MALFORMED, at, f"conversation_turns[{at}]"
        code = MALFORMED if key in ("role", "content") else UNSERIALIZABLE
        return code, at, f"conversation_turns[{at}].{key}"
    if name in ("openai_agents", "openai_responses"):
        code = {"role": UNKNOWN_ROLE, "type": MALFORMED, "content": MALFORMED,
                "id": MALFORMED}.get(key, UNSERIALIZABLE)
        return code, at, f"items[{at}].{key}"
    # openai_chat and swarm: the fields of a chat message are checked; the rest is kept
    checked = {("role", 0): UNKNOWN_ROLE, ("role", 1): UNKNOWN_ROLE,
               ("content", 0): MALFORMED, ("content", 1): MALFORMED,
               ("name", 0): MALFORMED, ("tool_calls", 1): MALFORMED}
    if name == "openai_chat":
        checked["name", 1] = MALFORMED
    else:
        checked["sender", 1] = MALFORMED
    return checked.get((key, at), UNSERIALIZABLE), at, f"messages[{at}].{key}"


@pytest.mark.parametrize("at", [0, 1])
@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", ADAPTERS)
def test_no_adapter_compares_its_way_into_a_raw_exception(name: str, key: str, at: int) -> None:
    adapter = get_adapter(name)
    given = trace(key, at)
    assert adapter.detect(given) is (key in DETECTED.get(name, set()))
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(given)
    assert (caught.value.code, caught.value.index, caught.value.path) == refusal(name, key, at)


@pytest.mark.parametrize("key", ["role", "type"])
def test_detect_format_finds_no_format(key: str) -> None:
    with pytest.raises(FormatError):
        detect_format(trace(key, 0))
