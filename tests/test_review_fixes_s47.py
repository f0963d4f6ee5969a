"""Regressions of this round's fixes, found by review, each pinned: a transcript written by
``tracebridge sample`` loads as a case's transcript; a ``phase`` beside chat-only keys leaves
a history to ``openai_chat``; ``--no-cache`` with an empty ``--cache`` runs; an SDK object in
tuple content of an Agents run's input names no route that would fail too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agents import Agent, Runner
from cli_helpers import run
from evaluation_helpers import case, write_cases
from openai.types.responses import ResponseOutputText
from test_openai_agents import GENERATOR

from tracebridge import TraceError
from tracebridge.adapters import galtea, openai_agents
from tracebridge.registry import detect_format

CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_transcript_written_by_tracebridge_sample_is_read(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(CHAT))
    code, sample, _ = run("sample", str(tmp_path / "chat.json"), "--from", "openai_chat")
    assert (code, json.loads(sample)["metadata"]) == (0, {"id": 1})
    cases = write_cases(tmp_path, [case("c1", transcript=json.loads(sample))])
    code, _, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                       "tool_call_f1", "--no-cache")
    assert (code, "bad case" in err) == (0, False)
    results = (tmp_path / "run" / "summary.json").read_text()
    assert json.loads(results)["counts"]["blocked"] == 1  # (no reference calls: not scored)


PHASED_CHAT = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None, "phase": "commentary", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    {"role": "assistant", "content": "done", "phase": "final_answer"},
]


def test_a_phase_beside_chat_only_keys_stays_a_chat_history() -> None:
    named = [{"role": "user", "content": "hi", "name": "bob"},
             {"role": "assistant", "content": "x", "phase": "final_answer"}]
    assert [detect_format(PHASED_CHAT), detect_format(named)] == ["openai_chat", "openai_chat"]
    responses = [{"role": "user", "content": "hi"},
                 {"role": "assistant", "content": "x", "phase": "final_answer"}]
    assert detect_format(responses) == "openai_responses"
    assert not galtea.detect(responses)


def test_no_cache_with_an_empty_cache_flag_runs(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    code, stdout, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                            "tool_call_f1", "--no-cache", "--cache", "")
    assert (code, err) == (0, "")
    assert stdout.startswith("complete: 1 blocked;")


def test_an_sdk_object_in_tuple_content_names_no_route() -> None:
    given = [{"role": "user", "content": "a"},
             {"role": "assistant", "content": (
                 ResponseOutputText(type="output_text", text="prev", annotations=[]),)},
             {"role": "user", "content": "b"}]
    model = GENERATOR.ScriptModel([[GENERATOR.message("msg_2", "ok")]])
    result = asyncio.run(Runner.run(Agent(name="N", model=model), given))
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(result)
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "malformed_event", 1, "to_input_list()[1].content[0]",
        "expected a content part (an object), got list [['annotations', []], "
        "['text', 'prev'], ['type', 'output_text'], ['logprobs', None]]")
