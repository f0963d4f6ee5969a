"""Tool-call metrics and ``tracebridge score``: a reference call's args that go into
``details`` are checked as JSON there, ``score -o -`` is standard output, and a JSON array
dataset that is empty, or whose elements are not samples, is told as such."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.metrics import MetricResult, ToolCallAccuracy, ToolCallF1
from tracebridge.metrics.base import Metric
from tracebridge.metrics.cli import configure, run
from tracebridge.sample import MultiTurnSample

METRICS = {
    "strict": ToolCallAccuracy(),
    "unordered": ToolCallAccuracy(strict_order=False),
    "f1": ToolCallF1(),
}


def _unmatched_reference(args: dict[str, object]) -> MultiTurnSample:
    """A sample whose one reference call pairs with no predicted call (another name)."""
    return MultiTurnSample(
        messages=[
            HumanMessage(content="hi"),
            AIMessage(content="", tool_calls=[ToolCall(name="search", args={"q": "x"},
                                                       id="c1")]),
            ToolMessage(content="ok", tool_call_id="c1"),
        ],
        reference_tool_calls=[ToolCall(name="lookup", args=args)],
    )


def _refusal(metric: Metric, sample: MultiTurnSample) -> TraceError:
    with pytest.raises(TraceError) as raised:
        metric.score(sample)
    return raised.value


# --- a reference call's args in details ---------------------------------------------------


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize(
    ("bad", "detail"),
    [
        (float("nan"), "nan is not a finite number"),
        (float("inf"), "inf is not a finite number"),
        ({1, 2}, "expected a JSON value (dict, list, str, int, float, bool, None), got set "
                 "{1, 2}"),
        (b"x", "expected a JSON value (dict, list, str, int, float, bool, None), got bytes "
               "b'x'"),
        ((1, 2), "expected a JSON value (dict, list, str, int, float, bool, None), got tuple "
                 "(1, 2)"),
        (10**4300, "an integer of more than 4,300 digits: JSON readers refuse it"),
        (-(10**4300), "an integer of more than 4,300 digits: JSON readers refuse it"),
    ],
    ids=["nan", "inf", "set", "bytes", "tuple", "huge-int", "huge-negative-int"],
)
def test_a_value_put_into_an_unmatched_reference_call_is_refused_by_every_metric_alike(
    name: str, bad: object, detail: str,
) -> None:
    sample = _unmatched_reference({"q": "x"})
    assert sample.reference_tool_calls is not None
    sample.reference_tool_calls[0].args["q"] = bad
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index, error.path) == (
        "unserializable_value", None, "reference_tool_calls[0].args.q")
    assert str(error) == f"reference_tool_calls[0].args.q: {detail} [unserializable_value]"


@pytest.mark.parametrize("name", list(METRICS))
def test_a_value_nested_in_an_unmatched_reference_call_is_refused_where_it_is(
    name: str,
) -> None:
    sample = _unmatched_reference({"q": {"when": [1, 2]}})
    assert sample.reference_tool_calls is not None
    sample.reference_tool_calls[0].args["q"]["when"][1] = float("nan")
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index, error.path) == (
        "unserializable_value", None, "reference_tool_calls[0].args.q.when[1]")


@pytest.mark.parametrize("name", list(METRICS))
def test_a_reference_call_made_with_a_key_that_is_not_a_string_is_refused_by_every_metric(
    name: str,
) -> None:
    sample = _unmatched_reference({})
    sample = sample.model_copy(update={"reference_tool_calls": [
        ToolCall.model_construct(name="lookup", args={1: 2}, id=None, invalid_args=None)]})
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index, error.path) == (
        "unserializable_value", None, "reference_tool_calls[0].args")
    assert str(error) == ("reference_tool_calls[0].args: object keys must be strings, got int 1 "
                          "[unserializable_value]")


@pytest.mark.parametrize("name", list(METRICS))
def test_an_unmatched_reference_call_whose_args_were_not_parsed_is_refused_too(
    name: str,
) -> None:
    sample = _unmatched_reference({})
    call = ToolCall(name="lookup", invalid_args="{oops")
    sample = sample.model_copy(update={"reference_tool_calls": [call]})
    call.args["x"] = float("nan")
    error = _refusal(METRICS[name], sample)
    assert (error.code, error.index, error.path) == (
        "unserializable_value", None, "reference_tool_calls[0].args.x")


@pytest.mark.parametrize(
    "args",
    [{"q": "x", "n": 3, "on": True, "none": None}, {"t": 0.5}, {"q": {"a": [1, {"b": 2.5}]}}, {}],
    ids=["scalars", "float", "nested", "empty"],
)
def test_missing_reference_calls_are_whole_copies_and_read_back_equal(
    args: dict[str, object],
) -> None:
    sample = _unmatched_reference(args)
    f1 = ToolCallF1().score(sample)
    strict = ToolCallAccuracy().score(sample)
    assert f1.details["missing"] == [{"reference": 0, "name": "lookup", "args": args}]
    assert strict.details["unmatched_reference"] == [
        {"reference": 0, "name": "lookup", "args": args}]
    for result in (f1, strict):
        assert MetricResult.from_json(result.to_json()) == result
    f1.details["missing"][0]["args"]["added"] = 1
    assert sample.reference_tool_calls is not None
    assert sample.reference_tool_calls[0].args == args


def test_missing_reference_calls_keep_their_order_and_invalid_args() -> None:
    sample = _unmatched_reference({})
    sample = sample.model_copy(update={"reference_tool_calls": [
        ToolCall(name="search", args={"q": "x"}),
        ToolCall(name="a", args={"k": 1.5}),
        ToolCall(name="b", invalid_args="{oops"),
        ToolCall(name="search", args={"q": "x"}),
        ToolCall(name="c", args={"k": [1]}),
    ]})
    result = ToolCallF1().score(sample)
    assert result.details["missing"] == [
        {"reference": 1, "name": "a", "args": {"k": 1.5}},
        {"reference": 2, "name": "b", "args": {}, "invalid_args": "{oops"},
        {"reference": 3, "name": "search", "args": {"q": "x"}},
        {"reference": 4, "name": "c", "args": {"k": [1]}},
    ]
    assert (result.details["true_positives"], result.value) == (1, 2 / 6)


# --- tracebridge score ---------------------------------------------------------------------

SAMPLE = MultiTurnSample(
    messages=[
        HumanMessage(content="weather in Paris?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")]),
        ToolMessage(content="18 C", tool_call_id="c1"),
        AIMessage(content="18 C"),
    ],
    reference_tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
)
SUMMARY = (
    "metric        scored  unscorable  errors    mean     min     max\n"
    "tool_call_f1       1           0       0  1.0000  1.0000  1.0000\n"
)
HINT = "; make samples from traces with: tracebridge sample FILE [--references REFS.jsonl]\n"


def score(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tracebridge score")
    configure(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_output_dash_is_standard_output_and_no_file_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(SAMPLE.model_dump_json() + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = score(str(path), "-m", "tool_call_f1", "-o", "-")
    assert (code, err) == (0, SUMMARY)
    [row] = [json.loads(line) for line in out.splitlines()]
    assert (row["line"], row["name"], row["value"]) == (1, "tool_call_f1", 1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]


def _array(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "data.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("text", ["[]", "[ ]", "[\n]"])
def test_an_empty_array_holds_no_samples(tmp_path: Path, text: str) -> None:
    path = _array(tmp_path, text)
    assert score(str(path), "-m", "tool_call_f1") == (
        2, "", f"tracebridge score: {path} holds no samples: expected one MultiTurnSample "
        "JSON per line\n")


@pytest.mark.parametrize(
    ("text", "kind"), [("[1]", "an int"), ('["x", 2]', "a str"), ("[[1]]", "a list")],
)
def test_an_array_whose_first_element_is_no_object_tells_that_element(
    tmp_path: Path, text: str, kind: str,
) -> None:
    path = _array(tmp_path, text)
    assert score(str(path), "-m", "tool_call_f1") == (
        1, "", f"tracebridge score: invalid sample: {path}: element 1 (line 1): expected a "
        f"MultiTurnSample object, got {kind}" + HINT)


def test_an_element_after_a_sample_that_is_no_object_is_named_with_its_article(
    tmp_path: Path,
) -> None:
    path = _array(tmp_path, f"[{SAMPLE.model_dump_json()}, 1]")
    code, out, err = score(str(path), "-m", "tool_call_f1")
    assert code == 1
    assert err == (f"tracebridge score: invalid sample: {path}: element 2 (line 1): expected "
                   "a MultiTurnSample object, got an int" + HINT + SUMMARY)
    [row] = [json.loads(line) for line in out.splitlines()]
    assert (row["line"], row["element"], row["value"]) == (1, 1, 1.0)


def test_keep_going_scores_the_samples_after_a_first_element_that_is_no_object(
    tmp_path: Path,
) -> None:
    path = _array(tmp_path, f"[1, {SAMPLE.model_dump_json()}]")
    out_path = tmp_path / "out.jsonl"
    code, out, err = score(str(path), "-m", "tool_call_f1", "--keep-going", "-o", str(out_path))
    assert (code, out) == (1, SUMMARY + "1 invalid sample(s) skipped\n")
    assert err == (f"tracebridge score: invalid sample: {path}: element 1 (line 1): expected "
                   "a MultiTurnSample object, got an int" + HINT)
    [row] = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert (row["line"], row["element"], row["value"]) == (1, 2, 1.0)


def test_an_array_of_messages_is_still_told_as_a_conversation_not_a_sample(
    tmp_path: Path,
) -> None:
    path = _array(tmp_path, json.dumps([{"type": "human", "content": "hi"}]))
    assert score(str(path), "-m", "tool_call_f1") == (
        1, "", f"tracebridge score: invalid sample: {path}: line 1: expected a MultiTurnSample "
        "object, got a list" + HINT)


def test_the_score_synopsis_in_the_docs_names_every_option() -> None:
    parser = argparse.ArgumentParser(prog="tracebridge score")
    configure(parser)
    docs = (Path(__file__).parent.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    synopsis = docs.split("    tracebridge score DATASET.jsonl ", 1)[1].split("\n\n", 1)[0]
    left_out = [
        action.option_strings for action in parser._actions
        if action.option_strings and action.dest != "help"
        and not any(f"{option} " in synopsis or f"{option}]" in synopsis
                    for option in action.option_strings)
    ]
    assert left_out == []
    assert "[--allow-pending]" in synopsis
