"""Golden traces of the openai_responses adapter: one test per file in the folder.

A valid file holds the item list the real openai client sent and received
(``scripts/golden/openai_responses.py``) and the typed messages we expect; an invalid one holds a
broken list and the ``{code, index}`` it must be rejected with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_responses
from tracebridge.registry import detect_format

from law_kits.openai_responses import as_sdk_object, canonical

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "openai_responses"
VALID = sorted(FOLDER.glob("*.json"))
INVALID = sorted((FOLDER / "invalid").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_converts_to_the_expected_messages(path: Path) -> None:
    golden = load(path)
    messages = openai_responses.to_messages(golden["trace"])
    assert [m.model_dump(mode="json") for m in messages] == golden["expected"]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_lossless_roundtrip(path: Path) -> None:
    golden = load(path)
    back = openai_responses.from_messages(openai_responses.to_messages(golden["trace"]))
    assert back == golden["trace"]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_reads_the_same_as_sdk_objects(path: Path) -> None:
    # The application holds response.output as the SDK's objects until it stores them.
    trace = load(path)["trace"]
    objects = [as_sdk_object(item) for item in trace]
    assert any(not isinstance(item, dict) for item in objects)
    assert openai_responses.to_messages(objects) == openai_responses.to_messages(trace)
    assert canonical(openai_responses.from_messages(openai_responses.to_messages(objects))) == (
        canonical(objects)
    )


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_is_detected_as_its_own_format_only(path: Path) -> None:
    assert detect_format(load(path)["trace"]) == "openai_responses"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_golden_invalid_trace_is_rejected_with_code_and_index(path: Path) -> None:
    golden = load(path)
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages(golden["trace"])
    error = golden["error"]
    assert (caught.value.code, caught.value.index, caught.value.source) == (
        error["code"],
        error["index"],
        "openai_responses",
    )


def test_the_golden_folders_hold_every_case_the_issue_lists() -> None:
    assert [p.stem for p in VALID] == [
        "attachments",
        "computer_and_shell",
        "custom_tool",
        "hosted_tools",
        "malformed_arguments",
        "multi_turn",
        "parallel_calls",
        "refusal",
        "web_search_citations",
    ]
    assert [p.stem for p in INVALID] == [
        "arguments_as_object",
        "duplicate_call_ids",
        "non_dict_element",
        "orphan_output",
        "output_twice",
        "removed_output",
        "streaming_event",
        "unknown_item_type",
    ]


def test_every_item_type_of_the_goldens_is_one_the_adapter_reads() -> None:
    seen = {
        item.get("type", "message") for path in VALID for item in load(path)["trace"]
    }
    assert seen == {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_list_tools",
        "mcp_call",
    }
