"""Golden LangChain traces: every file in golden_traces/langchain/ is a test.

Valid files hold ``messages_to_dict(state["messages"])`` of a real LangGraph ReAct agent run
(scripts/golden/langchain.py) and the typed messages it must read as; each is checked in all
four accepted forms (dicts, objects, flat ``model_dump()`` dicts, state) and round-tripped
back to each. Invalid files hold a trace
and the ``{code, index}`` it must be rejected with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import messages_from_dict, messages_to_dict
from pydantic import TypeAdapter

from tracebridge import Message, TraceError
from tracebridge.adapters import langchain

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"
VALID = sorted(FOLDER.glob("*.json"))
INVALID = sorted((FOLDER / "invalid").glob("*.json"))
MESSAGES = TypeAdapter(list[Message])


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


FORMS = ["dicts", "objects", "model_dump", "state"]


def forms(trace: list[dict[str, Any]]) -> dict[str, Any]:
    objects = messages_from_dict(trace)
    dumps = [message.model_dump() for message in objects]
    return {"dicts": trace, "objects": objects, "model_dump": dumps, "state": {"messages": objects}}


def test_the_folder_has_the_issue_cases() -> None:
    assert {path.stem for path in VALID} >= {
        "parallel_tool_calls",
        "tool_error",
        "two_user_turns",
        "system_prompt_in_state",
        "anthropic_content_blocks",
        "invalid_tool_call",
        "developer_prompt",
        "refusal_in_additional_kwargs",
        "image_with_detail",
        "anthropic_history",
    }
    assert len(INVALID) >= 5


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_reads_as_expected(path: Path, form: str) -> None:
    case = load(path)
    trace = forms(case["trace"])[form]
    assert langchain.detect(trace) is True
    typed = langchain.to_messages(trace, **case.get("to_options", {}))
    assert typed == MESSAGES.validate_python(case["expected"])


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_lossless_roundtrip(path: Path) -> None:
    case = load(path)
    typed = langchain.to_messages(case["trace"], **case.get("to_options", {}))
    assert messages_to_dict(langchain.from_messages(typed)) == case["trace"]
    assert langchain.from_messages(typed, form="dicts") == case["trace"]
    state = langchain.from_messages(typed, form="state")
    assert messages_to_dict(state["messages"]) == case["trace"]
    assert langchain.from_messages(typed, form="model_dump") == forms(case["trace"])["model_dump"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_golden_trace_is_rejected(path: Path, form: str) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(forms(case["trace"])[form])
    error = caught.value
    assert {"code": error.code, "index": error.index, "path": error.path} == case["error"]
    assert caught.value.source == "langchain"
