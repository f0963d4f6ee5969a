"""A field of a golden LangChain trace holding a value of another type is refused at that
field (``malformed_event``, its index and path) or, where LangChain itself takes the value,
read and kept; it never escapes as an AttributeError from LangChain's own validators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import messages_to_dict
from test_langchain import rejected_at

from tracebridge.adapters import langchain

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"


def mutated(name: str, at: tuple[Any, ...], value: Any, *, form: str = "dicts") -> list[Any]:
    """The golden trace ``name`` (``messages_to_dict`` dicts, or with ``form="model_dump"``
    their flat ``data``) with the field at ``at`` replaced by ``value``."""
    trace: list[Any] = json.loads((GOLDEN / name).read_text(encoding="utf-8"))["trace"]
    if form == "model_dump":
        trace = [item["data"] for item in trace]
    parent: Any = trace
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = value
    return trace


@pytest.mark.parametrize(
    ("name", "at", "value", "path"),
    [
        (
            "two_user_turns.json",
            (0, "data", "additional_kwargs"),
            "x",
            "messages[0].data.additional_kwargs",
        ),
        (
            "two_user_turns.json",
            (0, "data", "additional_kwargs"),
            None,
            "messages[0].data.additional_kwargs",
        ),
        (
            "two_user_turns.json",
            (1, "data", "additional_kwargs"),
            [],
            "messages[1].data.additional_kwargs",
        ),
        (
            "two_user_turns.json",
            (1, "data", "response_metadata"),
            [None],
            "messages[1].data.response_metadata",
        ),
        (
            "two_user_turns.json",
            (2, "data", "response_metadata"),
            "x",
            "messages[2].data.response_metadata",
        ),
        ("parallel_tool_calls.json", (1, "data", "tool_calls"), 0, "messages[1].data.tool_calls"),
        ("parallel_tool_calls.json", (1, "data", "tool_calls"), "x", "messages[1].data.tool_calls"),
        (
            "parallel_tool_calls.json",
            (1, "data", "tool_calls"),
            {"type": "x"},
            "messages[1].data.tool_calls",
        ),
        (
            "parallel_tool_calls.json",
            (1, "data", "tool_calls", 1),
            "tool",
            "messages[1].data.tool_calls[1]",
        ),
        (
            "parallel_tool_calls.json",
            (1, "data", "tool_calls", 0),
            [None],
            "messages[1].data.tool_calls[0]",
        ),
        (
            "invalid_tool_call.json",
            (1, "data", "invalid_tool_calls"),
            True,
            "messages[1].data.invalid_tool_calls",
        ),
        (
            "invalid_tool_call.json",
            (1, "data", "invalid_tool_calls", 0),
            "x",
            "messages[1].data.invalid_tool_calls[0]",
        ),
        (
            "aggregated_stream_chunk.json",
            (1, "data", "tool_call_chunks"),
            "x",
            "messages[1].data.tool_call_chunks",
        ),
        (
            "aggregated_stream_chunk.json",
            (1, "data", "tool_call_chunks", 0),
            [],
            "messages[1].data.tool_call_chunks[0]",
        ),
        (
            "anthropic_history.json",
            (1, "data", "content", 0, "type"),
            {"a": {"b": None}},
            "messages[1].content[0].type",
        ),
        (
            "anthropic_history.json",
            (1, "data", "content", 1, "type"),
            ["x"],
            "messages[1].content[1].type",
        ),
        (
            "anthropic_history.json",
            (1, "data", "content", 1, "id"),
            {},
            "messages[1].content[1].id",
        ),
        ("anthropic_history.json", (1, "data", "content", 1, "id"), 0, "messages[1].content[1].id"),
    ],
)
def test_a_field_of_another_type_is_malformed_at_its_path(
    name: str, at: tuple[Any, ...], value: Any, path: str
) -> None:
    index = at[0]
    assert rejected_at(mutated(name, at, value)) == ("malformed_event", index, path)


@pytest.mark.parametrize(
    ("at", "value", "path"),
    [
        ((1, "additional_kwargs"), "x", "messages[1].additional_kwargs"),
        ((1, "response_metadata"), [], "messages[1].response_metadata"),
        ((1, "tool_calls"), -1, "messages[1].tool_calls"),
        ((1, "tool_calls", 0), None, "messages[1].tool_calls[0]"),
    ],
)
def test_in_a_flat_dump_the_path_has_no_data(at: tuple[Any, ...], value: Any, path: str) -> None:
    trace = mutated("parallel_tool_calls.json", at, value, form="model_dump")
    assert rejected_at(trace) == ("malformed_event", at[0], path)


def test_an_empty_undeclared_chunk_list_on_an_ai_message_is_kept_as_langchain_keeps_it() -> None:
    """``AIMessage`` has no ``tool_call_chunks`` field: LangChain keeps a falsy one as an extra
    (its validator skips it); a non-empty one it walks as dicts, so a string is refused."""
    kept = mutated("parallel_tool_calls.json", (1, "data", "tool_call_chunks"), 0)
    typed = langchain.to_messages(kept)
    assert typed[1].metadata["langchain"]["extra"] == {"tool_call_chunks": 0}
    assert messages_to_dict(langchain.from_messages(typed)) == kept
    refused = mutated("parallel_tool_calls.json", (1, "data", "tool_call_chunks"), "x")
    assert rejected_at(refused) == ("malformed_event", 1, "messages[1].data.tool_call_chunks")


@pytest.mark.parametrize(
    ("name", "at", "value"),
    [
        # LangChain takes a string as a content element; it reads as text.
        ("anthropic_content_blocks.json", (0, "data", "content", 1), "x"),
        # Values of another type inside additional_kwargs have no typed home: kept verbatim.
        ("refusal_in_additional_kwargs.json", (1, "data", "additional_kwargs", "refusal"), ["x"]),
        ("developer_prompt.json", (0, "data", "additional_kwargs", "__openai_role__"), {}),
        ("invalid/raw_tool_calls_disagree.json", (1, "data", "additional_kwargs", "tool_calls"), 5),
        ("image_with_detail.json", (0, "data", "content", 1, "image_url"), "x"),
    ],
)
def test_a_value_langchain_takes_is_read_and_comes_back(
    name: str, at: tuple[Any, ...], value: Any
) -> None:
    trace = mutated(name, at, value)
    assert messages_to_dict(langchain.from_messages(langchain.to_messages(trace))) == trace
