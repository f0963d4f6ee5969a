"""What ``tracebridge.ray_data`` checks of a request, and when: a ``record`` column that is
not text is refused before any row; ``score`` refuses at once a judge it cannot send to its
actors; a cost limit works with any judge function once its model's price is given; and a
judge that cannot be built in an actor surfaces as one line naming the factory and why,
not as an actor's death.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from ray_helpers import GOAL, goal_server, sample, time_limited, write_jsonl

from tracebridge.evaluation.budget import Budget, Price
from tracebridge.metrics.judge import Judge, OpenAIJudge
from tracebridge.ray_data import OpenAIJudgeSpec, convert_batch, init_local, score_batch
from tracebridge.ray_data._lease import Allowances, Lease, Limits

LIMIT_SECONDS = 180
"""No Ray test here may take longer (the first one starts the cluster's workers)."""
NO_KEY = "TRACEBRIDGE_TEST_UNSET_API_KEY"
"""An API key variable no environment sets."""
GOOD = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]'


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    pytest.importorskip("ray")
    init_local(num_cpus=2)
    import ray

    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def time_limit() -> Iterator[None]:
    with time_limited(LIMIT_SECONDS):
        yield


def exactly(message: str) -> str:
    """A ``match`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def samples(tmp_path: Path, cities: list[str]) -> Any:
    from tracebridge.ray_data import read_traces

    path = write_jsonl(tmp_path / "samples.jsonl", [sample(city) for city in cities])
    return read_traces(path, source="sample")


# --- the record column -----------------------------------------------------------------------


NOT_TEXT = [
    (pa.array([GOOD.encode(), b"\xff not utf-8"], pa.binary()), "binary"),
    (pa.array([[GOOD], []], pa.list_(pa.string())), "list<item: string>"),
    (pa.array([1, 2], pa.int64()), "int64"),
]


@pytest.mark.parametrize(("column", "kind"), NOT_TEXT)
def test_convert_batch_refuses_a_record_column_that_is_not_text(column: pa.Array,
                                                                 kind: str) -> None:
    message = (f"the batch's 'record' column must be text (string), got {kind} (the JSON "
               "text of each trace)")
    with pytest.raises(ValueError, match=exactly(message)):
        convert_batch(pa.table({"record": column}), source="openai_chat", target="tracebridge")


@pytest.mark.parametrize(("column", "kind"), NOT_TEXT)
def test_score_batch_refuses_a_record_column_that_is_not_text(column: pa.Array,
                                                              kind: str) -> None:
    message = (f"the batch's 'record' column must be text (string), got {kind} (the JSON "
               "text of each record)")
    with pytest.raises(ValueError, match=exactly(message)):
        score_batch(pa.table({"record": column}), metrics=["tool_call_f1"],
                    source="openai_chat")


def test_a_record_column_of_large_strings_or_nulls_is_read() -> None:
    rows = pa.table({"record": pa.array([GOOD, None], pa.large_string())})
    out = convert_batch(rows, source="openai_chat", target="tracebridge")
    assert out.column("error_code").to_pylist() == [None, "no_record"]
    nulls = convert_batch(pa.table({"record": pa.nulls(1)}), source="openai_chat",
                          target="tracebridge")
    assert nulls.column("error_code").to_pylist() == ["no_record"]


def test_a_record_column_of_string_views_is_read() -> None:
    rows = pa.table({"record": pa.array([GOOD, None], pa.string_view())})
    out = convert_batch(rows, source="openai_chat", target="tracebridge")
    assert out.column("error_code").to_pylist() == [None, "no_record"]
    plain = convert_batch(pa.table({"record": [GOOD]}), source="openai_chat",
                          target="tracebridge")
    assert out.column("output").to_pylist()[0] == plain.column("output").to_pylist()[0]


def test_a_dictionary_encoded_record_column_is_read_as_its_text() -> None:
    # what Parquet written from a pandas categorical gives back
    rows = pa.table({"record": pa.array([GOOD, GOOD, None]).dictionary_encode()})
    out = convert_batch(rows, source="openai_chat", target="tracebridge")
    assert out.column("error_code").to_pylist() == [None, None, "no_record"]
    plain = convert_batch(pa.table({"record": [GOOD]}), source="openai_chat",
                          target="tracebridge")
    assert out.column("output").to_pylist()[:2] == plain.column("output").to_pylist() * 2
    scored = score_batch(pa.table({"record": pa.array(
        ['{"messages": [{"type": "human", "content": "hi"}]}']).dictionary_encode()}),
        metrics=["tool_call_f1"])
    assert scored.column("state").to_pylist() == ["unscorable"]


# --- the judge -------------------------------------------------------------------------------


def test_an_openai_judge_spec_without_its_key_names_the_variable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_KEY, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    message = (f"set {NO_KEY} to the API key where the judge is built (on a cluster: in the "
               "workers' environment), or give base_url for a server that needs none")
    with pytest.raises(ValueError, match=exactly(message)):
        OpenAIJudgeSpec("judge-model", api_key_env=NO_KEY)()


@pytest.mark.ray
def test_score_refuses_a_judge_it_cannot_send_to_its_actors(
        tmp_path: Path, cluster: None, time_limit: None) -> None:
    from tracebridge.ray_data import score

    ds = samples(tmp_path, ["Paris"])
    lock = threading.Lock()

    def locked() -> Judge:
        with lock:
            return OpenAIJudge.connect("judge-model", base_url="http://127.0.0.1:9/v1",
                                       api_key="x")

    instance = OpenAIJudge.connect("judge-model", base_url="http://127.0.0.1:9/v1", api_key="x")
    refused: list[tuple[Any, str]] = [
        (instance, "judge: score() needs what builds a judge in each actor (an "
                   "OpenAIJudgeSpec(...) or a function returning a judge), got an OpenAIJudge"),
        ("judge-model", "judge: score() needs what builds a judge in each actor (an "
                        "OpenAIJudgeSpec(...) or a function returning a judge), got a str"),
        (locked, "judge: test_score_refuses_a_judge_it_cannot_send_to_its_actors.<locals>."
                 "locked cannot be sent to the actors: TypeError: cannot pickle "
                 "'_thread.lock' object; build what it holds inside it, or give an "
                 "OpenAIJudgeSpec(...)"),
    ]
    for judge, message in refused:
        with pytest.raises(ValueError, match=exactly(message)):
            score(ds, [GOAL], judge=judge)


@pytest.mark.ray
def test_a_cost_limit_works_with_any_judge_function_once_its_price_is_given(
        tmp_path: Path, cluster: None, time_limit: None) -> None:
    from tracebridge.ray_data import score

    ds = samples(tmp_path, ["Paris", "Rome", "Oslo"])
    budget = Budget(max_cost=1.0, prices={"judge-model": Price(0.15, 0.60)})
    with goal_server() as server:
        url = server.base_url

        def connect() -> Judge:
            return OpenAIJudge.connect("judge-model", base_url=url, api_key="x")

        partial = functools.partial(OpenAIJudge.connect, "judge-model", base_url=url,
                                    api_key="x")
        for judge in (connect, partial):
            rows = score(ds, [GOAL], judge=judge, budget=budget).take_all()
            assert sorted((row["line"], row["state"], row["value"]) for row in rows) == [
                (1, "scored", 1.0), (2, "scored", 0.0), (3, "scored", 0.0)]
        assert len(server.requests) == 6


def unbuilt(kind: str) -> Callable[[], Judge]:
    """A judge factory that fails in an actor (defined here, so that it pickles by value:
    the workers cannot import this module)."""

    def broken() -> Judge:
        raise RuntimeError("no judge\nhere")

    def unpriced() -> Judge:
        return OpenAIJudge.connect("unpriced-model", base_url="http://127.0.0.1:9/v1",
                                   api_key="x")

    factories: dict[str, Callable[[], Judge]] = {
        "spec": OpenAIJudgeSpec("judge-model", api_key_env=NO_KEY), "broken": broken,
        "unpriced": unpriced}
    return factories[kind]


UNBUILT: list[tuple[str, Budget | None, str]] = [
    ("spec", None,
     f"RuntimeError: judge: OpenAIJudgeSpec('judge-model') could not build a judge in a "
     f"scoring actor: ValueError: set {NO_KEY} to the API key where the judge is built (on a "
     f"cluster: in the workers' environment), or give base_url for a server that needs none"),
    ("broken", None,
     "RuntimeError: judge: unbuilt.<locals>.broken could not build a judge in a scoring "
     "actor: RuntimeError: no judge here"),
    ("unpriced", Budget(max_cost=1.0, prices={"judge-model": Price(0.15, 0.60)}),
     "ValueError: judge: unbuilt.<locals>.unpriced: a cost limit needs the price of the "
     "judge model unpriced-model: give it as Budget(..., prices={'unpriced-model': "
     "Price(INPUT, OUTPUT)})"),
]


@pytest.mark.ray
@pytest.mark.parametrize(("kind", "budget", "line"), UNBUILT)
def test_a_judge_not_built_in_an_actor_raises_one_line_naming_it(
        tmp_path: Path, cluster: None, time_limit: None, kind: str, budget: Budget | None,
        line: str) -> None:
    import ray.exceptions

    from tracebridge.ray_data import score

    scores = score(samples(tmp_path, ["Paris"]), [GOAL], judge=unbuilt(kind), budget=budget)
    with pytest.raises(ray.exceptions.RayTaskError) as raised:
        scores.take_all()
    assert not isinstance(raised.value, ray.exceptions.ActorDiedError)
    assert line in str(raised.value).splitlines()


# --- score_batch's rows say what tracebridge score says ---------------------------------------


class _Achieved:
    """A chat completions client whose judge finds every goal achieved."""

    async def create(self, **body: Any) -> Any:
        from types import SimpleNamespace

        verdict = '{"user_goal": "g", "end_state": "e", "reason": "r", "achieved": true}'
        message = SimpleNamespace(content=verdict, refusal=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")],
                               usage=None)


def _judge() -> OpenAIJudge:
    from types import SimpleNamespace

    client = SimpleNamespace(chat=SimpleNamespace(completions=_Achieved()),
                             base_url="http://127.0.0.1:1/v1")
    return OpenAIJudge(client, "fake")  # type: ignore[arg-type]


def _goal_record(text: str) -> str:
    human = '{"type": "human", "content": "' + text + '"}'
    return '{"messages": [' + human + ', {"type": "ai", "content": "done"}]}'


def test_a_judge_request_that_could_not_be_sent_is_an_errored_row() -> None:
    out = score_batch(pa.table({"record": [_goal_record("book it"),
                                           _goal_record("cut \\ud83c")]}),
                      metrics=["agent_goal_accuracy_without_reference"],
                      judge=_judge())
    rows = out.to_pylist()
    assert [row["state"] for row in rows] == ["scored", "errored"]
    assert rows[1]["value"] is None
    assert rows[1]["error"] == ("the judge request was not sent: its prompt holds a lone "
                                "surrogate U+D83C at character 28, which UTF-8 cannot carry")


class _Raising:
    """A judge whose every request raises; its ``name`` raises from its second read on when
    ``named_once`` (the scorer reads it once, for the cache keys; the failed result again)."""

    def __init__(self, *, named_once: bool = False) -> None:
        self.named_once = named_once
        self.reads = 0

    @property
    def name(self) -> str:
        self.reads += 1
        if self.named_once and self.reads > 1:
            raise RuntimeError("no name")
        return "raising-judge"

    async def ask(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize(("named_once", "named"), [(False, "raising-judge"), (True, None)])
def test_a_judge_that_raises_is_an_errored_row_as_tracebridge_score_says(
        named_once: bool, named: str | None) -> None:
    import json

    out = score_batch(pa.table({"record": [_goal_record("book it")]}),
                      metrics=["agent_goal_accuracy_without_reference"],
                      judge=_Raising(named_once=named_once))
    rows = out.to_pylist()
    assert [(row["state"], row["value"], row["error"], row["error_code"]) for row in rows] == [
        ("errored", None, "RuntimeError: boom", None)]
    result = json.loads(rows[0]["result"])
    assert (result["value"], result["error"], result["judge"]) == (
        None, "RuntimeError: boom", named)


# --- what the driver and the actors check of a judge factory (no cluster) ---------------------


class CallableJudge:
    """A judge instance that can also be called (it returns itself)."""

    async def ask(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("never asked")

    def __call__(self) -> CallableJudge:
        return self


def test_check_factory_refuses_a_callable_judge_instance_and_takes_a_judge_class() -> None:
    from tracebridge.ray_data._factory import check_factory

    with pytest.raises(ValueError, match=exactly(
            "judge: score() needs what builds a judge in each actor (an OpenAIJudgeSpec(...) "
            "or a function returning a judge), got a CallableJudge")):
        check_factory(CallableJudge())
    check_factory(CallableJudge)  # a class that builds a judge is welcome


@pytest.mark.parametrize(("returned", "what"), [("judge-model", "a str"), (None, "None")])
def test_a_factory_returning_no_judge_is_refused_naming_what_it_returned(
        returned: object, what: str) -> None:
    from tracebridge.ray_data._factory import build_judge

    def factory() -> Any:
        return returned

    refused = build_judge(factory, None)
    assert type(refused) is ValueError
    assert str(refused) == (f"judge: test_a_factory_returning_no_judge_is_refused_naming_what_"
                            f"it_returned.<locals>.factory returned {what}, not a judge")


def _connect(model: str, api_key: str) -> Judge:
    raise RuntimeError("no judge here")


def test_a_partial_factory_is_named_by_its_function_never_by_its_arguments() -> None:
    from tracebridge.ray_data._factory import build_judge, factory_name

    secret = functools.partial(_connect, "judge-model", api_key="sk-secret")
    assert factory_name(secret) == "partial(_connect, ...)"
    assert factory_name(functools.partial(secret)) == "partial(_connect, ...)"
    refused = build_judge(secret, None)
    assert type(refused) is RuntimeError
    assert str(refused) == ("judge: partial(_connect, ...) could not build a judge in a "
                            "scoring actor: RuntimeError: no judge here")


@pytest.mark.ray
def test_score_refuses_an_unpriced_spec_under_a_cost_limit_before_anything_runs(
        tmp_path: Path, cluster: None, time_limit: None) -> None:
    from tracebridge.ray_data import score

    ds = samples(tmp_path, ["Paris"])
    budget = Budget(max_cost=1.0, prices={"judge-model": Price(0.15, 0.60)})
    message = ("a cost limit needs the price of the judge model unpriced-model: give it as "
               "Budget(..., prices={'unpriced-model': Price(INPUT, OUTPUT)})")
    with pytest.raises(ValueError, match=exactly(message)):
        score(ds, [GOAL], judge=OpenAIJudgeSpec("unpriced-model", api_key_env=NO_KEY),
              budget=budget)



# --- the keeper's cost refusal prints its amounts as a run's budget does ----------------------


def test_the_keepers_cost_refusal_tells_the_request_from_the_limit() -> None:
    books = Allowances(Limits(max_cost=0.0000105), workers=1)
    assert books.lease(10, 0.00001, chunk=1) == Lease(1, 10, 0.00001)
    said = books.lease(10, 0.00001, chunk=1)
    assert said == ("the next request may cost up to $0.00001 (estimated) and $0.0000005 of "
                    "the limit of $0.0000105 is left")
