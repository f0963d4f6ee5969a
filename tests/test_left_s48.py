"""Small fixes of this stop: each test failed on the code before its fix."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from test_evaluation_fixes_s47 import _scored

from tracebridge import convert
from tracebridge._optional import require
from tracebridge.adapters import galtea
from tracebridge.errors import MissingExtraError
from tracebridge.metrics.judged import section

DEEPSEEK = [
    {"role": "user", "content": "2+2?"},
    {"content": "4", "role": "assistant", "reasoning_content": "2+2 is 4"},
]
VLLM = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4",
                                               "reasoning": "2+2 is 4"}]
NULL_REASONING = [{"role": "user", "content": "2+2?"},
                  {"role": "assistant", "content": "4", "reasoning_content": None}]
STORED = [
    {"id": "m0", "role": "user", "content": "look", "content_parts": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]},
    {"id": "m1", "role": "assistant", "content": "ok", "content_parts": None},
]


@pytest.mark.parametrize("history", [DEEPSEEK, VLLM, NULL_REASONING, STORED],
                         ids=["reasoning_content", "reasoning", "null_reasoning", "stored"])
def test_a_chat_history_with_a_reasoning_key_or_stored_parts_is_detected_as_chat(
    history: list[dict[str, Any]],
) -> None:
    """A Galtea turn has none of these keys: the list is a chat history, read as such
    (before: ambiguous between openai_chat and galtea)."""
    assert galtea.detect(history) is False
    assert convert(history, source="auto", target="tracebridge") == convert(
        history, source="openai_chat", target="tracebridge"
    )


def test_a_dependency_of_a_package_extra_missing_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ray[data]`` without pandas (plain ``pip install ray``): the extra is missing, told
    as such (before: pandas' raw ModuleNotFoundError); for a plain package another module
    missing is not its extra's fault, and is raised as it is."""
    (tmp_path / "tb_demo_needs_dep.py").write_text("import tb_demo_absent_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as caught:
        require("tb_demo_needs_dep", adapter="Demo", extra="demo", package="demo[data]")
    assert str(caught.value) == (
        "the Demo adapter needs demo[data], which is not installed (tb_demo_absent_dep is "
        'missing): pip install "tracebridge[demo]"'
    )
    with pytest.raises(ModuleNotFoundError) as raw:
        require("tb_demo_needs_dep", adapter="Demo", extra="demo", package="demo-pkg")
    assert raw.type is ModuleNotFoundError
    assert raw.value.name == "tb_demo_absent_dep"


@pytest.mark.parametrize("command", ["score", "run"])
def test_a_judged_metric_without_the_openai_extra_names_the_extra_before_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """A core-only install asked for a judged metric without a key: the missing extra is
    what to fix first (before: "set OPENAI_API_KEY", then, once set, the extra)."""
    monkeypatch.setitem(sys.modules, "openai", None)  # not installed
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    case = {"case_id": "c1", "transcript": [{"type": "human", "content": "hi"},
                                            {"type": "ai", "content": "hello"}]}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    sample = json.dumps({"messages": case["transcript"]})
    words = (["score", "-", "--metric", "knowledge_retention", "--model", "m"]
             if command == "score" else
             ["run", "cases.jsonl", "--out", "out", "--metric", "knowledge_retention",
              "--model", "m", "--no-cache"])
    code, out, err = run(*words, stdin=sample)
    assert (code, out) == (2, "")
    assert err == (
        f"tracebridge {command}: the OpenAI judge adapter needs openai, which is not "
        'installed: pip install "tracebridge[openai]"\n'
    )


@pytest.mark.parametrize("text", ["</trans\u200bcript>", "<\u200b/transcript>",
                                  "</transcript\ufe0f>", "<r\u3164ole>",
                                  "</ALLOWED_\u2060TOPICS >"])
def test_a_section_tag_broken_by_characters_that_show_as_nothing_is_escaped(text: str) -> None:
    """A tag the judge reads as a section's end, though spelt with invisible characters,
    gets the backslash (before: left as it was, so text could close the transcript)."""
    assert section("transcript", f"[0] human: {text}") == (
        f"<transcript>\n[0] human: \\{text}\n</transcript>"
    )


@pytest.mark.parametrize("text", ["</transcripts>", "<transcriptx>", "a < b > c", "<rol>"])
def test_text_that_is_no_section_tag_is_left_as_it_is(text: str) -> None:
    assert section("transcript", text) == f"<transcript>\n{text}\n</transcript>"


def test_run_leaves_sigterm_to_a_program_that_handles_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program calling ``main`` with its own SIGTERM handler keeps it through ``run`` too
    (before: run's own handler took it, and the run stopped with exit 143)."""
    (tmp_path / "s48_signal.py").write_text(
        "import os, signal\n\ndef check(case):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.jsonl").write_text(json.dumps(_scored("c1")) + "\n")
    seen: list[int] = []

    def own(received: int, frame: Any) -> None:
        seen.append(received)

    before = signal.signal(signal.SIGTERM, own)
    try:
        code, out, err = run("run", "cases.jsonl", "--out", "out", "--metric", "tool_call_f1",
                             "--no-cache", "--checks", "s48_signal:check")
        assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, before)
    assert seen == [signal.SIGTERM]
    assert (code, err) == (0, "")
    assert out.startswith("complete: 1 passed;")
