"""A string holding a lone surrogate (a file name decoded with ``surrogateescape``, say) is a
Python string and JSON text can escape it (``\\udcff``), but pydantic's JSON writer refuses
it and its reader refuses the escape. A result whose details hold one (a tool call's
arguments) made the evaluation cache's ``put`` raise a raw PydanticSerializationError.
``MetricResult.to_json`` / ``from_json`` carry any string; the cache and the Ray results use
them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.evaluation.cache import ResultCache
from tracebridge.metrics import MetricResult, ToolCallAccuracy, ToolCallF1

NAME = "report-\udcff.txt"  # b"report-\xff.txt" decoded with surrogateescape


def _sample() -> MultiTurnSample:
    args = {"path": NAME, NAME: True}  # F1 details hold the values, accuracy's the names
    call = ToolCall(name="open", args=args, id="c1")
    return MultiTurnSample(
        messages=[HumanMessage(content="open it"), AIMessage(tool_calls=[call]),
                  ToolMessage(content="opened", tool_call_id="c1")],
        reference_tool_calls=[ToolCall(name="open", args=args)],
    )


@pytest.mark.parametrize("metric", [ToolCallAccuracy(), ToolCallF1()], ids=["accuracy", "f1"])
def test_a_result_holding_a_lone_surrogate_reads_back_from_its_json(metric: object) -> None:
    result = metric.score(_sample())  # type: ignore[attr-defined]
    assert result.value == 1.0
    with pytest.raises(PydanticSerializationError):
        result.model_dump_json()  # why to_json exists
    text = result.to_json()
    assert "\\udcff" in text
    assert MetricResult.from_json(text) == result


def test_to_json_is_model_dump_json_for_every_other_result() -> None:
    result = ToolCallF1().score(MultiTurnSample(messages=[HumanMessage(content="hi")],
                                                reference_tool_calls=[]))
    assert result.to_json() == result.model_dump_json()
    assert MetricResult.from_json(result.to_json().encode()) == result


@pytest.mark.parametrize("text", ["not json", '{"name": "x"}', "[1, 2"])
def test_from_json_refuses_what_is_not_a_result(text: str) -> None:
    with pytest.raises(ValidationError):
        MetricResult.from_json(text)


def test_the_evaluation_cache_stores_and_gives_back_such_a_result(tmp_path: Path) -> None:
    result = ToolCallAccuracy().score(_sample())
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        assert cache.put("k1", result)
        found = cache.get("k1")
    assert found is not None
    assert found.model_copy(update={"details": {
        k: v for k, v in found.details.items() if k != "cached"}}) == result
    assert found.details["pairs"][0]["name"] == "open"


def _nested(depth: int) -> str:
    """A result's JSON whose details nest ``depth`` arrays deep."""
    return ('{"name": "x", "value": 1.0, "metric_version": "1", "transcript_hash": "'
            + "0" * 64 + '", "details": {"a": ' + "[" * depth + "]" * depth + "}}")


@pytest.mark.parametrize("depth", [300, 100_000])
def test_from_json_refuses_nesting_too_deep_with_a_validation_error(depth: int) -> None:
    # 300: pydantic's reader stops, Python's reads it and the details check refuses it;
    # 100,000: Python's reader stops too (a RecursionError escaped before)
    with pytest.raises(ValidationError):
        MetricResult.from_json(_nested(depth))


def test_the_evaluation_cache_reports_a_stored_result_nested_too_deep(tmp_path: Path) -> None:
    import sqlite3

    from tracebridge.evaluation.cache import CacheError

    path = tmp_path / "cache.sqlite"
    with ResultCache(path) as cache:
        assert cache.put("k1", ToolCallF1().score(_sample()))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET value = ? WHERE key = 'k1'", (_nested(100_000),))
    with ResultCache(path) as cache, pytest.raises(CacheError, match="does not validate"):
        cache.get("k1")


def test_a_lone_surrogate_in_a_top_level_details_key_reads_back(tmp_path: Path) -> None:
    # pydantic's writer raises on a lone surrogate in a value or in a nested key, but writes
    # one in a key of the result's own details as U+FFFD, without an error
    result = MetricResult(name="custom", value=0.5, metric_version="1",
                          transcript_hash="tb1:a", details={NAME: 1, "plain": "ok"})
    assert "\ufffd" in result.model_dump_json()  # why to_json looks closer
    text = result.to_json()
    assert "\\udcff" in text
    back = MetricResult.from_json(text)
    assert back == result
    assert list(back.details) == [NAME, "plain"]
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        assert cache.put("k1", result)
        found = cache.get("k1")
    assert found is not None
    assert list(found.details) == [NAME, "plain", "cached"]
