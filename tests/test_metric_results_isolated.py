"""A metric's result never reaches back into the sample it scored, a sample that cannot be
hashed is refused before a batch runs, and a stored result is read strictly.

* The deterministic metrics' ``details`` held the sample's own argument dicts: editing a
  result (redacting an argument before storing it) edited the scored conversation and its
  reference, and a second scoring gave another value under the same transcript hash.
* ``evaluate`` promised that one bad job does not stop the batch, but a sample whose hash
  could not be computed (NaN put in by an edit in place) raised a raw ``ValueError`` from
  the fallback result and every other result was lost.
* ``MetricResult.from_json`` (the evaluation cache, Ray's earlier results) converted
  ``"value": true`` to 1.0: a damaged cache row answered with a score.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.evaluation.cache import CacheError, ResultCache
from tracebridge.metrics import MetricResult, ToolCallAccuracy, ToolCallF1, evaluate


def _sample(args: dict[str, object], reference: dict[str, object]) -> MultiTurnSample:
    call = ToolCall(name="pay", args=args, id="c1")
    return MultiTurnSample(
        messages=[HumanMessage(content="pay"), AIMessage(tool_calls=[call]),
                  ToolMessage(content="ok", tool_call_id="c1")],
        reference_tool_calls=[ToolCall(name="pay", args=reference)],
    )


FLAT = ({"iban": "DE01", "eur": 5}, {"iban": "DE01", "eur": 7})
NESTED = ({"iban": "DE01", "split": [1, {"eur": 5}]}, {"iban": "DE01", "split": [1, {"eur": 7}]})


@pytest.mark.parametrize("args", [FLAT, NESTED], ids=["flat", "nested"])
def test_editing_f1_details_leaves_the_sample_and_its_reference_alone(
    args: tuple[dict[str, object], dict[str, object]],
) -> None:
    sample = _sample(*args)
    before = json.dumps(sample.model_dump())
    result = ToolCallF1().score(sample)
    unexpected, missing = result.details["unexpected"][0], result.details["missing"][0]
    assert (unexpected["args"], missing["args"]) == args
    unexpected["args"]["note"] = "redacted"
    missing["args"]["iban"] = "XX"
    if "split" in args[0]:
        unexpected["args"]["split"][1]["eur"] = 0
        missing["args"]["split"].append(2)
    assert json.dumps(sample.model_dump()) == before
    assert ToolCallF1().score(sample) == ToolCallF1().score(_sample(*args))


def test_editing_matched_f1_details_leaves_the_sample_alone() -> None:
    sample = _sample(FLAT[0], FLAT[0])
    result = ToolCallF1().score(sample)
    result.details["matched"][0]["args"]["eur"] = 500
    assert sample.messages[1].tool_calls[0].args == {"iban": "DE01", "eur": 5}  # type: ignore[union-attr]


def test_editing_unmatched_accuracy_details_leaves_the_sample_alone() -> None:
    sample = _sample({"iban": "DE01"}, {"iban": "DE01"})
    extra = sample.model_copy(update={"reference_tool_calls": [
        ToolCall(name="pay", args={"iban": "DE01"}), ToolCall(name="refund", args={"eur": 1})]})
    result = ToolCallAccuracy().score(extra)
    assert result.value == 0.5
    result.details["unmatched_reference"][0]["args"]["eur"] = 2
    assert extra.reference_tool_calls is not None
    assert extra.reference_tool_calls[1].args == {"eur": 1}


def test_evaluate_refuses_a_sample_it_cannot_hash_before_any_job_runs() -> None:
    good = [_sample(*FLAT) for _ in range(3)]
    bad = _sample(*FLAT)
    bad.messages[1].tool_calls[0].args["eur"] = float("nan")  # type: ignore[union-attr]
    with pytest.raises(TraceError) as caught:
        evaluate([*good, bad], [ToolCallAccuracy(), ToolCallF1()])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 1, "samples[3].messages[1].tool_calls[0].args.eur")
    assert str(error) == ("samples[3].messages[1].tool_calls[0].args.eur: nan is not a finite "
                          "number [unserializable_value]")


def test_the_transcript_hash_names_the_value_that_is_not_json() -> None:
    call = ToolCall.model_construct(name="w", args={"x": [1, float("inf")]}, id="c1",
                                    invalid_args=None, kind="function", metadata={})
    messages = [HumanMessage(content="hi"),
                AIMessage(tool_calls=[ToolCall(name="w", args={}, id="c0")]),
                ToolMessage(content="ok", tool_call_id="c0"),
                AIMessage.model_construct(type="ai", content="", tool_calls=[call], name=None,
                                          id=None, metadata={}, citations=[], audio=None)]
    with pytest.raises(TraceError) as caught:
        transcript_hash(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 3, "messages[3].tool_calls[0].args.x[1]")


BASE = {"name": "agent_goal_accuracy_with_reference", "value": 0.0, "metric_version": "1",
        "transcript_hash": "tb1:x", "judge": "m @ u",
        "usage": {"requests": 1, "prompt_tokens": 0, "completion_tokens": 0,
                  "total_tokens": 0, "requests_without_usage": 0}}


@pytest.mark.parametrize(
    ("change", "where"),
    [({"value": True}, ("value",)), ({"value": "1"}, ("value",)),
     ({"usage": {**BASE["usage"], "requests": True}}, ("usage", "requests")),  # type: ignore[dict-item]
     ({"usage": {**BASE["usage"], "total_tokens": "3"}}, ("usage", "total_tokens"))],  # type: ignore[dict-item]
    ids=["value-true", "value-string", "requests-true", "tokens-string"],
)
def test_from_json_refuses_what_it_would_have_converted(
    change: dict[str, object], where: tuple[str, ...]
) -> None:
    with pytest.raises(ValidationError) as caught:
        MetricResult.from_json(json.dumps({**BASE, **change}))
    assert caught.value.errors()[0]["loc"] == where


def test_from_json_still_reads_an_integral_value_and_what_to_json_wrote() -> None:
    assert MetricResult.from_json(json.dumps({**BASE, "value": 1})).value == 1.0
    result = MetricResult.model_validate(BASE)
    assert MetricResult.from_json(result.to_json()) == result


def test_a_cache_row_damaged_to_true_is_refused_not_scored(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with ResultCache(path) as cache:
        assert cache.put("k1", MetricResult.model_validate(BASE))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET value = replace(value, '\"value\":0.0', '\"value\":true')")
    with ResultCache(path) as cache, pytest.raises(CacheError) as caught:
        cache.get("k1")
    assert str(caught.value) == (
        f"cache {path}: the stored result for key k1 does not validate (value: Input should "
        "be a valid number); delete the file")


def test_from_json_refuses_a_key_given_twice() -> None:
    text = json.dumps(BASE)[:-1] + ', "value": 1.0}'  # 0.0, then 1.0
    with pytest.raises(ValidationError) as caught:
        MetricResult.from_json(text)
    error = caught.value.errors()[0]
    assert error["type"] == "json_invalid"
    assert error["ctx"] == {
        "error": "an object has the key 'value' twice (which value is meant is not known)"}


def test_a_cache_row_with_a_key_twice_is_refused_not_scored(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with ResultCache(path) as cache:
        assert cache.put("k1", MetricResult.model_validate(BASE))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET value = replace(value, '\"value\":0.0', "
                   "'\"value\":0.0,\"value\":1.0')")
    with ResultCache(path) as cache, pytest.raises(CacheError, match="twice"):
        cache.get("k1")
