"""Every golden trace, converted to every format: the conversation arrives whole, or the
conversion says what it cannot carry. Nothing the transcript hash covers is lost on the way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError, transcript_hash
from tracebridge.cli import to_json
from tracebridge.registry import ADAPTER_NAMES, FORMATS, get_adapter

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted(
    path
    for name in ADAPTER_NAMES
    for path in (ROOT / "golden_traces" / name).glob("*.json")
    if "trace" in json.loads(path.read_text(encoding="utf-8"))
)


def read(path: Path) -> tuple[list[Any], dict[str, Any]]:
    """The golden trace's typed messages, and the options it is read with."""
    case = json.loads(path.read_text(encoding="utf-8"))
    options = case.get("to_options", {})
    return get_adapter(path.parent.name).to_messages(case["trace"], **options), options


def write(target: str, messages: list[Any]) -> tuple[Any, TraceError | None]:
    try:
        return get_adapter(target).from_messages(messages), None
    except TraceError as error:
        return None, error


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_conversion_carries_the_whole_conversation_or_refuses(path: Path, target: str) -> None:
    messages, options = read(path)
    written, refused = write(target, messages)
    if refused is not None:
        assert (refused.code, refused.index is not None) == ("not_representable", True), refused
        assert target not in ("tracebridge", path.parent.name)
        return
    # Through JSON, as a file would carry it, and back.
    stored = json.loads(json.dumps(to_json(target, written)))
    again = get_adapter(target).to_messages(stored, **options)
    assert transcript_hash(again) == transcript_hash(messages)
