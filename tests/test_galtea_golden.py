"""Golden Galtea traces: every file in golden_traces/galtea/ is a test.

Valid files hold a trace (pairs or role turns) and the typed messages it must read as; files
with ``source`` also hold the richer conversation it was written from, the options that
accepted the loss, and what was left out. Invalid files hold a trace and its error.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from tracebridge import Message, TraceError
from tracebridge.adapters import galtea

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "galtea"
VALID = sorted(FOLDER.glob("*.json"))
INVALID = sorted((FOLDER / "invalid").glob("*.json"))
MESSAGES = TypeAdapter(list[Message])


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_folder_has_both_shapes_and_invalid_cases() -> None:
    shapes = {load(path)["shape"] for path in VALID}
    assert shapes == {"pairs", "roles"}
    assert len(INVALID) >= 5


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_reads_as_expected(path: Path) -> None:
    case = load(path)
    assert galtea.detect(case["trace"]) is True
    assert galtea.to_messages(case["trace"]) == MESSAGES.validate_python(case["expected"])


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_trace_lossless_roundtrip(path: Path) -> None:
    trace = load(path)["trace"]
    assert galtea.from_messages(galtea.to_messages(trace)) == trace


@pytest.mark.parametrize(
    "path", [p for p in VALID if "source" in load(p)], ids=lambda p: p.stem
)
def test_golden_trace_is_written_from_its_source_with_the_loss_recorded(path: Path) -> None:
    case = load(path)
    source = case["source"]
    omitted: list[galtea.Omission] = []
    trace = galtea.from_messages(
        MESSAGES.validate_python(source["messages"]),
        shape=case["shape"],
        omitted=omitted,
        **source["options"],
    )
    assert trace == case["trace"]
    assert [dataclasses.asdict(omission) for omission in omitted] == source["omitted"]


@pytest.mark.parametrize(
    "path", [p for p in VALID if "source" in load(p)], ids=lambda p: p.stem
)
def test_golden_source_is_refused_without_its_options(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(
            MESSAGES.validate_python(case["source"]["messages"]), shape=case["shape"]
        )
    assert caught.value.code == "not_representable"
    assert caught.value.index == case["source"]["omitted"][0]["index"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_golden_invalid_trace_is_rejected(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(case["trace"])
    assert caught.value.source == "galtea"
    assert {"code": caught.value.code, "index": caught.value.index} == case["error"]
