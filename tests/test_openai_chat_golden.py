"""Golden traces of the openai_chat and swarm adapters: one test per file in the folders.

A valid file holds the history the real framework produced (``trace``) and the typed
messages we expect; an invalid one holds a broken history and the ``{code, index}`` it must
be rejected with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_chat, swarm
from tracebridge.registry import detect_format

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
ADAPTERS = {"openai_chat": openai_chat, "swarm": swarm}


def cases(kind: str) -> list[Any]:
    found = []
    for name in ADAPTERS:
        folder = GOLDEN / name / ("invalid" if kind == "invalid" else "")
        for path in sorted(folder.glob("*.json")):
            found.append(pytest.param(name, path, id=f"{name}/{kind}/{path.stem}"))
    return found


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize(("name", "path"), cases("valid"))
def test_golden_trace_converts_to_the_expected_messages(name: str, path: Path) -> None:
    golden = load(path)
    messages = ADAPTERS[name].to_messages(golden["trace"])
    assert [m.model_dump(mode="json") for m in messages] == golden["expected"]


@pytest.mark.parametrize(("name", "path"), cases("valid"))
def test_golden_trace_lossless_roundtrip(name: str, path: Path) -> None:
    golden = load(path)
    adapter = ADAPTERS[name]
    assert adapter.from_messages(adapter.to_messages(golden["trace"])) == golden["trace"]


@pytest.mark.parametrize(("name", "path"), cases("valid"))
def test_golden_trace_is_detected_as_its_own_format_only(name: str, path: Path) -> None:
    assert detect_format(load(path)["trace"]) == name


@pytest.mark.parametrize(("name", "path"), cases("invalid"))
def test_golden_invalid_trace_is_rejected_with_code_index_and_path(name: str, path: Path) -> None:
    golden = load(path)
    with pytest.raises(TraceError) as caught:
        ADAPTERS[name].to_messages(golden["trace"])
    error = caught.value
    assert {"code": error.code, "index": error.index, "path": error.path} == golden["error"]
    assert error.source == name


def test_the_golden_folders_hold_every_case_the_issue_lists() -> None:
    assert sorted(p.stem for p in (GOLDEN / "openai_chat").glob("*.json")) == [
        "attachments",
        "audio_reply",
        "custom_tool",
        "developer_prompt",
        "empty_arguments",
        "image_detail",
        "image_input",
        "legacy_function_call",
        "malformed_arguments",
        "multi_turn",
        "parallel_calls",
        "refusal",
        "tool_error",
        "url_citations",
    ]
    assert sorted(p.stem for p in (GOLDEN / "openai_chat" / "invalid").glob("*.json")) == [
        "arguments_as_object",
        "duplicate_call_ids",
        "duplicated_tool_result",
        "galtea_pirate_history",
        "non_dict_element",
        "removed_tool_result",
        "streamed_deltas",
        "tool_before_assistant",
        "unknown_role",
    ]


def test_swarm_golden_handoffs_end_at_the_final_agent() -> None:
    for path in sorted((GOLDEN / "swarm").glob("*.json")):
        golden = load(path)
        found = swarm.handoffs(swarm.to_messages(golden["trace"]))
        assert [vars(h) for h in found] == golden["handoffs"]
        assert found[-1].to_agent == golden["final_agent"]
