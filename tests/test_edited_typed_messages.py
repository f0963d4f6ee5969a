"""Typed messages edited after they were read, then written back to their own format.

What an adapter kept under ``metadata[<adapter>]`` describes the message as it was read. After
an edit to a typed field, the writer writes the edit or refuses; it never writes the kept form
in its place (the edit would come back undone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracebridge import TraceError
from tracebridge.registry import get_adapter

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("golden", "index", "name"),
    [
        ("computer_and_shell", 1, "computer"),
        ("computer_and_shell", 3, "local_shell"),
        ("hosted_tools", 1, "file_search"),
        ("hosted_tools", 5, "mcp"),
    ],
)
def test_a_renamed_call_of_an_item_that_names_its_tool_is_refused(
    golden: str, index: int, name: str
) -> None:
    trace = json.loads((ROOT / "golden_traces" / "openai_responses" / f"{golden}.json")
                       .read_text(encoding="utf-8"))["trace"]
    adapter = get_adapter("openai_responses")
    messages = list(adapter.to_messages(trace))
    call = messages[index].tool_calls[0]
    assert call.name == name
    assert adapter.from_messages(messages) == trace  # unedited, it is written as it was read
    messages[index] = messages[index].model_copy(
        update={"tool_calls": [call.model_copy(update={"name": "renamed"}),
                               *messages[index].tool_calls[1:]]}
    )
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", index, f"messages[{index}].tool_calls[0].name"
    )
    assert f"names its tool by its type ({name!r}); this call is named 'renamed'" in str(error)


@pytest.mark.parametrize("name", [None, "renamed"])
def test_a_hosted_call_result_renamed_after_reading_is_refused(name: str | None) -> None:
    # A hosted item holds its call and its result; the result reads back named for the call.
    trace = json.loads((ROOT / "golden_traces" / "openai_responses" / "hosted_tools.json")
                       .read_text(encoding="utf-8"))["trace"]
    adapter = get_adapter("openai_responses")
    messages = list(adapter.to_messages(trace))
    index = next(k for k, m in enumerate(messages) if m.type == "tool")
    result = messages[index]
    caller, call = next((k, c) for k, m in enumerate(messages) if m.type == "ai"
                        for c in m.tool_calls if c.id == result.tool_call_id)
    assert result.name == call.name
    messages[index] = result.model_copy(update={"name": name})
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", index, f"messages[{index}].name")
    assert caller == index - 1
    assert f"is named for its call ({call.name!r}), not {name!r}" in str(error)
