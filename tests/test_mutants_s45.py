"""Tests that kill the survivors of the s45 mutation audit of the day's fixes (swarm handoffs,
langchain function_call copies, judge RecursionError, the cache's read, galtea kept values,
partial citations, otel error texts). Each pins the exact behaviour its mutant changes."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from evaluation_helpers import case, rows, run_cases, write_cases
from fake_openai_server import FakeOpenAI
from judge_requests import REQUEST, OpenGate
from langchain_core.messages import (
    AIMessage as LCAIMessage,
)
from langchain_core.messages import (
    BaseMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.messages import (
    HumanMessage as LCHumanMessage,
)
from scripted_openai import Scripted, Server, scripted_server
from test_otel_fixes_s45 import openinference, two_sessions
from test_otel_fixes_s45 import refused as otel_refused

from tracebridge import AIMessage, Citation, HumanMessage, TraceError
from tracebridge.adapters import galtea, langchain, openai_chat, otel, swarm
from tracebridge.adapters.swarm import Handoff
from tracebridge.evaluation.cache import ResultCache
from tracebridge.metrics import AgentGoalAccuracyWithReference, JudgeError, OpenAIJudge, Usage
from tracebridge.metrics.base import MetricResult
from tracebridge.sample import MultiTurnSample


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- SW3: a run starts after a message Swarm's run loop never writes inside one --------------


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_a_system_message_between_runs_starts_another_run() -> None:
    # Swarm writes only replies with a sender and their results inside a run: the system
    # message is the caller's, and the streamed sender after it names the new run's agent
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "sender": "Triage",
         "tool_calls": [_call("c1", "to_sales")]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "to_sales",
         "content": '{"assistant": "Sales"}'},
        {"role": "system", "content": "note"},
        {"role": "assistant", "content": "", "sender": "Triage",
         "tool_calls": [_call("c2", "to_billing")]},
        {"role": "tool", "tool_call_id": "c2", "tool_name": "to_billing",
         "content": '{"assistant": "Billing"}'},
        {"role": "assistant", "content": "ok", "sender": "Triage"},
    ]
    assert swarm.handoffs(history) == [
        Handoff(index=2, from_agent="Triage", to_agent="Sales"),
        Handoff(index=5, from_agent="Triage", to_agent="Billing"),
    ]


# --- langchain: a legacy function_call copy beside parsed calls ------------------------------

PARIS_CALL = {"name": "get_weather", "args": {"city": "Paris"}, "id": "a-1"}
ROME_CALL = {"name": "get_weather", "args": {"city": "Rome"}, "id": "a-2"}
BAD = {"name": "f", "args": "{bad", "id": "c1", "error": None}
WORSE = {"name": "g", "args": "{worse", "id": "c2", "error": None}
FUNCTION_CALL = "messages[1].additional_kwargs.function_call"


def with_copy(function_call: Any, calls: list[dict[str, Any]] | None = None,
              invalid: list[dict[str, Any]] | None = None) -> list[BaseMessage]:
    """A question, a reply with ``calls`` / ``invalid`` and ``function_call`` beside them, a
    result for each call and a final answer."""
    calls = [PARIS_CALL] if calls is None else calls
    invalid = invalid or []
    ai = LCAIMessage("", additional_kwargs={"function_call": function_call}, tool_calls=calls,
                     invalid_tool_calls=invalid)
    results: list[BaseMessage] = [ToolMessage("x", tool_call_id=c["id"]) for c in calls + invalid]
    return [LCHumanMessage("W?"), ai, *results, LCAIMessage("done")]


def lc_refused(trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    return caught.value


def test_a_copy_of_the_first_of_two_invalid_calls_is_a_copy() -> None:
    trace = with_copy({"name": "f", "arguments": "{bad"}, calls=[], invalid=[BAD, WORSE])
    typed = langchain.to_messages(trace)
    assert [(c.name, c.invalid_args) for c in typed[1].tool_calls] == [
        ("f", "{bad"), ("g", "{worse")]


def test_a_function_call_of_blank_name_and_arguments_is_conflicting_fields() -> None:
    error = lc_refused(with_copy({"name": "", "arguments": ""}))
    assert where(error) == ("conflicting_fields", 1, FUNCTION_CALL)


def test_other_arguments_beside_an_invalid_call_are_conflicting_fields() -> None:
    error = lc_refused(with_copy({"name": "f", "arguments": "{}"}, calls=[], invalid=[BAD]))
    assert where(error) == ("conflicting_fields", 1, FUNCTION_CALL)
    assert str(error) == (
        f"langchain: {FUNCTION_CALL}: function_call 'f' with arguments '{{}}' names none of the "
        "message's parsed calls; beside tool_calls it is a copy of one of them (the last one, "
        "as Gemini and GigaChat write it), not another call [conflicting_fields]"
    )


@pytest.mark.parametrize("name", ["get_wxather", "get_weatherX"],
                         ids=["same-length", "longer"])
def test_a_copy_naming_another_function_is_conflicting_fields(name: str) -> None:
    error = lc_refused(with_copy({"name": name, "arguments": '{"city": "Paris"}'}))
    assert where(error) == ("conflicting_fields", 1, FUNCTION_CALL)


def test_raw_call_arguments_of_none_disagree_with_the_parsed_call() -> None:
    # without ids the raw call is matched by its place and must agree (with ids it would be
    # a stale copy, read from tool_calls)
    raw = {"id": None, "type": "function",
           "function": {"name": "get_weather", "arguments": None}}
    ai = LCAIMessage("", additional_kwargs={"tool_calls": [raw]},
                     tool_calls=[{"name": "get_weather", "args": {}, "id": None}])
    error = lc_refused([LCHumanMessage("W?"), ai])
    path = "messages[1].additional_kwargs.tool_calls[0].function.arguments"
    assert where(error) == ("conflicting_fields", 1, path)
    assert error.detail == "arguments None disagree with the parsed call None ({})"


def test_a_dict_message_with_two_refused_fields_is_at_the_first() -> None:
    forms = messages_to_dict([LCHumanMessage("hi"), LCAIMessage("yo")])
    forms[1]["data"]["content"] = 5
    forms[1]["data"]["name"] = 1
    assert where(lc_refused(forms)) == ("malformed_event", 1, "messages[1].data.content")


def edited(trace: list[BaseMessage], **update: Any) -> list[Any]:
    """``trace`` read, its reply's last call updated with ``update``."""
    typed = langchain.to_messages(trace)
    calls = list(typed[1].tool_calls)
    calls[-1] = calls[-1].model_copy(update=update)
    typed[1] = typed[1].model_copy(update={"tool_calls": calls})
    return typed


def test_the_rewritten_copy_keeps_the_function_call_s_other_keys() -> None:
    kept = {"name": "get_weather", "arguments": '{"city": "Rome"}', "thought": "t"}
    typed = edited(with_copy(kept, calls=[PARIS_CALL, ROME_CALL]), args={"city": "Oslo"})
    assert langchain.from_messages(typed)[1].additional_kwargs == {
        "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}', "thought": "t"}}


def test_the_copy_of_an_edited_invalid_call_has_its_arguments_text() -> None:
    trace = with_copy({"name": "f", "arguments": "{bad"}, invalid=[BAD])
    typed = edited(trace, invalid_args="{worse")
    assert langchain.from_messages(typed)[1].additional_kwargs == {
        "function_call": {"name": "f", "arguments": "{worse"}}


def test_a_kept_function_call_with_object_arguments_is_rewritten_from_the_call() -> None:
    typed = langchain.to_messages(
        with_copy({"name": "get_weather", "arguments": '{"city": "Paris"}'}))
    kept = {"function_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    typed[1] = typed[1].model_copy(update={"metadata": {"langchain": {"additional_kwargs": kept}}})
    assert langchain.from_messages(typed)[1].additional_kwargs == {
        "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


# --- EV1-EV3: RecursionError from the judge's client --------------------------------------------

DEEP = '{"id": "x", "choices": ' + "[" * 100_000
WITHOUT_USAGE = Usage(requests=1, requests_without_usage=1)


class _Completions:
    async def create(self, **body: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")


class _Chat:
    completions = _Completions()


class TooDeepClient:
    """A client with only ``chat.completions.create`` (no ``with_raw_response``), which fails
    as a body nested too deep to read does."""

    chat = _Chat()


@pytest.mark.parametrize("gated", [False, True], ids=["ungated", "gated"])
async def test_a_plain_client_s_recursion_error_is_a_failed_request(gated: bool) -> None:
    judge = OpenAIJudge(client=TooDeepClient(), model="m", max_retries=0)
    gate = OpenGate()
    with pytest.raises(JudgeError) as caught:
        await judge.ask(REQUEST, gate=gate if gated else None)
    assert str(caught.value) == (
        "the judge request failed: RecursionError: maximum recursion depth exceeded")
    assert caught.value.usage == WITHOUT_USAGE
    assert gate.costs == ([WITHOUT_USAGE] if gated else [])


@pytest.fixture
def scripted() -> Iterator[Server]:
    with scripted_server() as state:
        yield state


async def test_a_reply_too_deep_after_a_client_retry_counts_both_requests(
    scripted: Server,
) -> None:
    scripted.script += [Scripted(500, '{"error": {"message": "x"}}'), Scripted(200, DEEP)]
    client = openai.AsyncOpenAI(base_url=scripted.base_url, api_key="test", max_retries=1,
                                timeout=10.0)
    judge = OpenAIJudge(client=client, model="m", max_retries=0)
    try:
        with pytest.raises(JudgeError) as caught:
            await judge.ask(REQUEST)
    finally:
        await judge.aclose()
    assert str(caught.value) == (
        "the judge request failed: RecursionError: maximum recursion depth exceeded while "
        "decoding a JSON array from a unicode string")
    assert caught.value.usage == Usage(requests=2, requests_without_usage=2)
    assert scripted.requests == 2


# --- EV6: a judged metric that crashes before its first request ---------------------------------


def test_a_judged_metric_that_crashes_before_any_request_has_no_usage(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[None] = []
    judged = AgentGoalAccuracyWithReference.judged

    async def crashing(self: Any, sample: MultiTurnSample) -> MetricResult:
        calls.append(None)
        if len(calls) > 1:  # the first call plans the run's budget; the second is the job
            raise RuntimeError("boom")
        return await judged(self, sample)

    monkeypatch.setattr(AgentGoalAccuracyWithReference, "judged", crashing)
    path = write_cases(tmp_path, [case("a")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0, err  # sent nothing: a metric that gave no value, not a judge that failed
    assert server.requests == []
    [result] = rows(out, "results.jsonl")
    assert (result["error"], result["usage"]) == ("RuntimeError: boom", None)
    assert [(row["state"], row["reasons"]) for row in rows(out, "cases.jsonl")] == [
        ("review", ["agent_goal_accuracy_with_reference gave no value: RuntimeError: boom"])]


# --- EV15: a read waits for a locked cache ------------------------------------------------------


class LockedFor:
    """The cache's connection, its statements refused as SQLite refuses them while another
    connection holds the database (``database is locked``) until ``seconds`` have passed."""

    def __init__(self, db: sqlite3.Connection, seconds: float) -> None:
        self.db = db
        self.until = time.monotonic() + seconds
        self.refused = 0

    def execute(self, *args: Any) -> Any:
        if time.monotonic() < self.until:
            self.refused += 1
            raise sqlite3.OperationalError("database is locked")
        return self.db.execute(*args)

    def close(self) -> None:
        self.db.close()


def test_a_read_of_a_locked_cache_waits_for_the_lock(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache.sqlite", timeout=5.0)
    locked = LockedFor(cache._db, 0.5)
    cache._db = locked  # type: ignore[assignment]
    started = time.monotonic()
    try:
        assert cache.get("0" * 64) is None
    finally:
        cache.close()
    assert 0.5 <= time.monotonic() - started < 4.0
    assert locked.refused >= 1


# --- galtea: the message of a kept value that is not plain JSON ---------------------------------


def galtea_refusal(metadata: Any) -> tuple[str, int | None, str | None, str]:
    trace = [{"role": "user", "content": "Who?"},
             {"role": "assistant", "content": "Marta", "metadata": metadata}]
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(trace)
    error = caught.value
    return error.code, error.index, error.path, error.detail


def test_a_nan_before_an_ordered_dict_is_refused_as_the_nan() -> None:
    assert galtea_refusal({"a": float("nan"), "b": OrderedDict(k=1)}) == (
        "unserializable_value", 1, "conversation_turns[1].metadata.a",
        "nan is not a finite number")


def test_of_two_ordered_dicts_the_first_is_refused() -> None:
    assert galtea_refusal({"a": OrderedDict(x=1), "b": OrderedDict(y=2)}) == (
        "unserializable_value", 1, "conversation_turns[1].metadata.a",
        "a kept value must be plain JSON (a plain dict), got OrderedDict "
        "OrderedDict([('x', 1)])")


# --- citations: otel's flat messages take a partial citation; a kept absent not a list -----------

URL_ONLY = [HumanMessage(content="q"), AIMessage(content="a",
                                                 citations=[Citation(url="https://x")])]


def test_otel_writes_a_url_only_citation() -> None:
    written = otel.from_messages(URL_ONLY, convention="openinference")
    doc = json.loads(json.dumps(written))
    assert otel.to_messages(doc, allow_pending=True)[1].citations == [Citation(url="https://x")]


def test_otel_reads_a_partial_citation_with_nothing_kept() -> None:
    doc = json.loads(json.dumps(otel.from_messages(URL_ONLY, convention="openinference")))
    reply = otel.to_messages(doc, allow_pending=True)[1]
    assert isinstance(reply, AIMessage)
    assert [(c.url, c.metadata) for c in reply.citations] == [("https://x", {})]


def test_a_kept_absent_dict_is_malformed() -> None:
    citation = Citation(url="https://x.example", start_index=0, end_index=5,
                        metadata={"openai_chat": {"absent": {"title": None}}})
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages([HumanMessage(content="q"),
                                   AIMessage(content="hello", citations=[citation])])
    path = "messages[1].citations[0].metadata.openai_chat.absent"
    assert where(caught.value) == ("malformed_event", 1, path)
    assert str(caught.value) == (
        f"openai_chat: {path}: citations[0].metadata.openai_chat.absent must be a list of "
        "url_citation keys (the keys the source's url_citation left out), as to_messages "
        "writes it; got dict {'title': None} [malformed_event]"
    )


# --- otel: the texts of two refusals ------------------------------------------------------------


def test_a_session_id_that_is_not_text_says_its_key() -> None:
    error = otel_refused(two_sessions(7), session_id="A")
    assert where(error) == ("malformed_event", 1, "[1].attributes['session.id']")
    assert error.detail == "session.id must be a string (a session id is text), got 7"


def test_an_index_past_18_digits_says_what_an_index_is() -> None:
    index = "1" * 19
    error = otel_refused(openinference((f"llm.input_messages.{index}.message.role", "user")))
    assert where(error) == ("malformed_event", 0, "[0].attributes['llm.input_messages']")
    assert error.detail == (
        "expected numbered attributes under llm.input_messages (indexes 0, 1, 2...: digits "
        "without a leading zero, at most 18)")
