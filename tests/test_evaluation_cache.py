"""The result cache: a key that names every input that can change the answer, and a SQLite
file that several processes share, that never serves an error or a value that does not
validate, and that says in one line when it is damaged."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracebridge
from tracebridge import HumanMessage, MultiTurnSample
from tracebridge.evaluation.cache import (
    DEFAULT_PATH,
    CacheError,
    NoCache,
    ResultCache,
    cache_key,
)
from tracebridge.metrics import (
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
    ConversationRelevancy,
    Metric,
    MetricResult,
    OpenAIJudge,
    ToolCallF1,
    TopicAdherence,
    Usage,
)

SAMPLE = MultiTurnSample(messages=[HumanMessage(content="hi")])
RESULT = MetricResult(
    name="agent_goal_accuracy_with_reference",
    value=1.0,
    reason="the ticket exists",
    details={"user_goal": "a ticket", "end_state": "ticket T-1"},
    metric_version="1+prompt.1+render.2",
    judge="judge-model @ http://127.0.0.1/v1/",
    usage=Usage(requests=1, prompt_tokens=100, completion_tokens=20, total_tokens=120),
    transcript_hash=SAMPLE.transcript_hash(),
)
KEY = "a" * 64
STORED_AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


class _Scored(Metric):
    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        return self.scored(sample, 1.0, {})


def metric_of(name: str, version: str, base: type[Metric] = _Scored, **config: Any) -> Metric:
    """A metric of a new class (named for ``base``) with that name, version and configuration."""
    qualname = f"KeyMetric{base.__name__}"
    kind = type(qualname, (base,), {"name": name, "version": version, "__qualname__": qualname})
    metric = kind()
    for field, value in config.items():
        setattr(metric, field, value)
    return metric


class _Other(_Scored):
    """Another class, to give a metric of another class name."""


# --- the key ---------------------------------------------------------------------------------

JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8),
                        st.floats(allow_nan=False, allow_infinity=False, width=32))
COMPONENTS = st.fixed_dictionaries({
    "name": st.text(min_size=1, max_size=12),
    "version": st.text(min_size=1, max_size=12),
    "config": st.dictionaries(st.sampled_from(["window", "mode", "strict_order"]), JSON_SCALAR,
                              max_size=2),
    "judge": st.dictionaries(st.text(max_size=8), JSON_SCALAR, max_size=4),
    "transcript": st.text(max_size=20),
    "references": st.dictionaries(
        st.sampled_from(["reference", "reference_topics", "reference_tool_calls", "rubrics"]),
        st.none() | st.text(max_size=20), max_size=4),
})
CHANGES = [
    "class", "name", "version", "config", "tracebridge", "judge value", "judge setting added",
    "transcript", "reference value", "reference absent or read", "reference None or empty",
]


def key_of(parts: dict[str, Any], base: type[Metric] = _Scored) -> str:
    metric = metric_of(parts["name"], parts["version"], base, **parts["config"])
    return cache_key(metric, parts["judge"], parts["transcript"], parts["references"])


def changed(parts: dict[str, Any], change: str, data: st.DataObject) -> dict[str, Any]:
    """``parts`` with the one component ``change`` names given another value."""
    new = json.loads(json.dumps(parts))
    if change in ("name", "version", "transcript"):
        new[change] = data.draw(st.text(max_size=20).filter(lambda t: t and t != parts[change]))
    elif change == "config":
        field = data.draw(st.sampled_from(["window", "mode", "strict_order"]))
        value = data.draw(JSON_SCALAR.filter(
            lambda v: field not in parts["config"] or json.dumps(v) != json.dumps(
                parts["config"][field])))
        new["config"][field] = value
    elif change == "judge value":
        field = data.draw(st.text(max_size=8))
        new["judge"][field] = data.draw(JSON_SCALAR.filter(
            lambda v: field not in parts["judge"] or json.dumps(v) != json.dumps(
                parts["judge"][field])))
    elif change == "judge setting added":
        field = data.draw(st.text(max_size=8).filter(lambda f: f not in parts["judge"]))
        new["judge"][field] = None
    elif change == "reference value":
        field = data.draw(st.sampled_from(["reference", "reference_topics"]))
        new["references"][field] = data.draw(
            st.text(max_size=20).filter(lambda t: t != parts["references"].get(field)))
    elif change == "reference absent or read":
        field = data.draw(st.sampled_from(["reference", "rubrics"]))
        if field in new["references"]:
            del new["references"][field]
        else:
            new["references"][field] = None
    elif change == "reference None or empty":
        field = "reference"
        new["references"][field] = "" if parts["references"].get(field) is None else None
    return new


@given(parts=COMPONENTS, change=st.sampled_from(CHANGES), data=st.data())
def test_changing_any_one_component_changes_the_key(
    parts: dict[str, Any], change: str, data: st.DataObject
) -> None:
    before = key_of(parts)
    assert re.fullmatch(r"[0-9a-f]{64}", before)
    assert key_of(json.loads(json.dumps(parts))) == before  # the same inputs, the same key
    if change == "class":
        after = key_of(parts, _Other)
    elif change == "tracebridge":
        saved = tracebridge.__version__
        tracebridge.__version__ = saved + ".post1"
        try:
            after = key_of(parts)
        finally:
            tracebridge.__version__ = saved
    else:
        after = key_of(changed(parts, change, data))
    assert after != before, change


def test_a_without_reference_result_never_answers_a_with_reference_request() -> None:
    judge = OpenAIJudge(client=None, model="judge-model")
    settings = {"model": "judge-model", "temperature": 0}
    without = AgentGoalAccuracyWithoutReference(judge)
    with_reference = AgentGoalAccuracyWithReference(judge)
    hashed = SAMPLE.transcript_hash()
    keys = {
        cache_key(without, settings, hashed, {}),
        cache_key(without, settings, hashed, {"reference": None}),
        cache_key(with_reference, settings, hashed, {"reference": None}),
        cache_key(with_reference, settings, hashed, {"reference": '"One ticket."'}),
        cache_key(with_reference, settings, hashed, {"reference": '"Two tickets."'}),
    }
    assert len(keys) == 5


def test_the_metrics_own_settings_are_in_the_key() -> None:
    judge = OpenAIJudge(client=None, model="m")
    hashed = SAMPLE.transcript_hash()
    assert cache_key(ConversationRelevancy(judge, window=5), {}, hashed, {}) != cache_key(
        ConversationRelevancy(judge, window=3), {}, hashed, {})
    assert cache_key(ConversationRelevancy(judge), {}, hashed, {}) == cache_key(
        ConversationRelevancy(OpenAIJudge(client=None, model="another")), {}, hashed, {})
    refs = {"reference_topics": '["billing"]'}
    assert cache_key(TopicAdherence(judge, "recall"), {}, hashed, refs) != cache_key(
        TopicAdherence(judge, "precision"), {}, hashed, refs)


def test_a_judge_setting_that_is_not_json_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a cache key is built from JSON values only: "):
        cache_key(metric_of("m", "1"), {"timeout": object()}, "tb1:00", {})


# --- the database ----------------------------------------------------------------------------


def test_a_stored_result_comes_back_validated_and_marked(tmp_path: Path) -> None:
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        assert cache.get(KEY) is None
        assert cache.put(KEY, RESULT) is True
        got = cache.get(KEY)
    assert got is not None
    mark = got.details["cached"]
    assert isinstance(mark, dict)
    assert mark["key"] == KEY
    assert isinstance(mark["stored_at"], str)
    assert STORED_AT.match(mark["stored_at"])
    assert got.model_copy(update={"details": RESULT.details}) == RESULT
    assert got.details == {**RESULT.details, "cached": mark}


def test_the_first_value_for_a_key_stays(tmp_path: Path) -> None:
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        assert cache.put(KEY, RESULT)
        assert cache.put(KEY, RESULT.model_copy(update={"value": 0.0})) is False
        got = cache.get(KEY)
    assert got is not None
    assert got.value == 1.0


def test_errors_are_never_cached(tmp_path: Path) -> None:
    failed = RESULT.model_copy(update={"value": None, "error": "the judge request failed: x"})
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        assert cache.put(KEY, failed) is False
        assert cache.get(KEY) is None
    rows = sqlite3.connect(tmp_path / "cache.sqlite").execute("SELECT * FROM results")
    assert rows.fetchall() == []


def test_a_cached_result_is_stored_without_its_mark(tmp_path: Path) -> None:
    with ResultCache(tmp_path / "a.sqlite") as first, ResultCache(tmp_path / "b.sqlite") as second:
        first.put(KEY, RESULT)
        hit = first.get(KEY)
        assert hit is not None
        assert second.put(KEY, hit)
    stored = sqlite3.connect(tmp_path / "b.sqlite").execute("SELECT value FROM results")
    assert MetricResult.model_validate_json(stored.fetchone()[0]) == RESULT


def test_the_default_file_is_under_dot_tracebridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with ResultCache() as cache:
        assert cache.path == Path(DEFAULT_PATH)
        cache.put(KEY, RESULT)
    assert (tmp_path / ".tracebridge" / "cache.sqlite").is_file()
    mode = sqlite3.connect(tmp_path / DEFAULT_PATH).execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)


def test_no_cache_keeps_nothing() -> None:
    with NoCache() as cache:
        assert cache.put(KEY, RESULT) is False
        assert cache.get(KEY) is None
    assert cache.path is None


def tamper(path: Path, sql: str, *args: Any) -> None:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("stored", "problem"),
    [
        ("not json", "does not validate (the value: Invalid JSON: expected ident at line 1 "
                     "column 2); delete the file"),
        ('{"name": "m", "value": 2.0, "metric_version": "1", "transcript_hash": "h"}',
         "does not validate (value: Input should be less than or equal to 1); delete the file"),
        ('{"name": "m", "value": null, "error": "boom", "metric_version": "1", '
         '"transcript_hash": "h"}', "holds an error, which is never cached; delete the file"),
    ],
)
def test_a_stored_value_that_does_not_validate_is_an_error_never_a_value(
    tmp_path: Path, stored: str, problem: str
) -> None:
    path = tmp_path / "cache.sqlite"
    ResultCache(path).close()
    tamper(path, "INSERT INTO results VALUES (?, ?, '2026-01-01T00:00:00+00:00')", KEY, stored)
    with ResultCache(path) as cache, pytest.raises(CacheError) as raised:
        cache.get(KEY)
    assert str(raised.value) == f"cache {path}: the stored result for key {KEY} {problem}"


def test_a_stored_value_that_is_not_text_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResultCache(path).close()
    tamper(path, "INSERT INTO results VALUES (?, ?, 'now')", KEY, b"\x00\x01")
    with ResultCache(path) as cache, pytest.raises(CacheError) as raised:
        cache.get(KEY)
    assert str(raised.value) == (
        f"cache {path}: the stored result for key {KEY} is not text (the file is damaged; "
        "delete it)"
    )


def damaged(path: Path, reason: str) -> str:
    return (f"cache {path}: cannot open it: {reason} "
            "(the file is damaged or unreadable; delete it or give another path)")


def test_a_file_of_garbage_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(CacheError) as raised:
        ResultCache(path)
    assert str(raised.value) == damaged(path, "file is not a database")


def test_a_truncated_database_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with ResultCache(path) as cache:
        for i in range(300):
            cache.put(f"{i:064x}", RESULT.model_copy(update={"reason": "x" * 400}))
    data = path.read_bytes()
    assert len(data) > 100_000  # checkpointed into the file when the cache closed
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheError) as raised:
        ResultCache(path)
    assert str(raised.value) == damaged(path, "database disk image is malformed")


def test_another_programs_database_is_not_taken_for_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    tamper(path, "CREATE TABLE notes (text TEXT)")
    with pytest.raises(CacheError) as raised:
        ResultCache(path)
    assert str(raised.value) == (
        f"cache {path}: not a tracebridge result cache (an SQLite database of something "
        "else); give another path"
    )


def test_a_cache_of_another_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResultCache(path).close()
    tamper(path, "PRAGMA user_version = 7")
    with pytest.raises(CacheError) as raised:
        ResultCache(path)
    assert str(raised.value) == (
        f"cache {path}: made by another tracebridge (layout 7, this one reads 1); "
        "give another path"
    )


def test_a_folder_that_cannot_be_made_is_a_cache_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CacheError, match=f"^cache {re.escape(str(blocker))}/c.sqlite: "
                                         "cannot create its folder: "):
        ResultCache(blocker / "c.sqlite")


# --- several processes and threads -----------------------------------------------------------

WRITER = """
import sys
from tracebridge.evaluation.cache import ResultCache
from tracebridge.metrics import MetricResult
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with ResultCache(path) as cache:
    for i in range(first, first + count):
        result = MetricResult(name="m", value=(i % 100) / 100, metric_version="1",
                              transcript_hash=f"tb1:{i}")
        assert cache.put(f"{i:064x}", result)
"""

READER = """
import json, sys
from tracebridge.evaluation.cache import ResultCache
with ResultCache(sys.argv[1]) as cache:
    got = cache.get(sys.argv[2])
print(json.dumps(None if got is None else got.model_dump(mode="json")))
"""


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, timeout=120)


def test_a_result_one_process_stores_another_reads(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    run_python(WRITER, str(path), "7", "1")
    with ResultCache(path) as cache:
        got = cache.get(f"{7:064x}")
        assert got is not None
        assert (got.value, got.transcript_hash) == (0.07, "tb1:7")
        cache.put(KEY, RESULT)
    out = json.loads(run_python(READER, str(path), KEY).stdout)
    assert out["details"]["cached"]["key"] == KEY
    assert out["value"] == 1.0
    assert json.loads(run_python(READER, str(path), "f" * 64).stdout) is None


def test_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n * 100), "100"],
                         stderr=subprocess.PIPE, text=True)
        for n in range(4)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with ResultCache(path) as cache:
        for i in range(400):
            got = cache.get(f"{i:064x}")
            assert got is not None
            assert got.transcript_hash == f"tb1:{i}"


def test_threads_share_one_cache(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        def work(n: int) -> None:
            try:
                for i in range(n * 50, n * 50 + 50):
                    cache.put(f"{i:064x}", RESULT)
                    assert cache.get(f"{i:064x}") is not None
            except BaseException as exc:  # reported below, not lost in the thread
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        count = cache._db.execute("SELECT count(*) FROM results").fetchone()[0]
    assert failures == []
    assert count == 400


def test_the_docstring_examples_run() -> None:
    import doctest

    from tracebridge.evaluation import cache

    failed, attempted = doctest.testmod(cache)
    assert (failed, attempted > 0) == (0, True)


def test_a_reference_with_a_lone_surrogate_has_a_key_of_its_own() -> None:
    metric = ToolCallF1()
    lone = cache_key(metric, {}, "tb1:00", {"reference": '"a\ud800"'})
    assert len(lone) == 64
    assert lone != cache_key(metric, {}, "tb1:00", {"reference": '"a\ufffd"'})
