"""Judged metrics and their judge: a 200 reply that is not a completion object is a failed
request; a client with only ``chat.completions``; ``tracebridge score`` counting a request
not sent as an error; a judge of one's own that answers something else; a synchronous client,
a float window or retry count refused when built; a topic holding a line break."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from fake_openai_server import FakeOpenAI
from judge_requests import OpenGate
from pydantic import BaseModel
from scripted_openai import ERROR_500, Scripted, Server, scripted_server

from tracebridge import AIMessage, HumanMessage, MultiTurnSample
from tracebridge.evaluation.budget import Budget, BudgetedJudge, Price, Spent
from tracebridge.metrics import (
    AgentGoalAccuracyWithoutReference,
    ConversationRelevancy,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    MetricResult,
    OpenAIJudge,
    TopicAdherence,
    Usage,
    evaluate,
)
from tracebridge.metrics import cli as score_cli
from tracebridge.metrics.cli import _job, configure, run
from tracebridge.metrics.conversation import RelevancyVerdict
from tracebridge.metrics.goals import GoalVerdict

SAMPLE = MultiTurnSample(messages=[HumanMessage(content="hi"), AIMessage(content="hello")])
GOAL = GoalVerdict(user_goal="greet", end_state="greeted", reason="said hello", achieved=True)
GOAL_JSON = GOAL.model_dump_json()
UNKNOWN = Usage(requests=1, requests_without_usage=1)


# --- 1. a 200 reply whose body is not a completion object is a failed request -----------


@pytest.fixture
def labelled() -> Iterator[Server]:
    with scripted_server() as state:
        yield state


def completion_json(content: str) -> str:
    return json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })


EVENT_STREAM = "data: " + json.dumps({"id": "c1", "choices": []}) + "\n\ndata: [DONE]\n\n"
NOT_A_COMPLETION = [
    ("text/html", "<html>bad gateway</html>", "a text/html body, '<html>bad gateway</html>'"),
    ("text/html; charset=utf-8", "<p>", "a text/html body, '<p>'"),
    ("text/event-stream", EVENT_STREAM,
     "a text/event-stream body, 'data: {\"id\": \"c1\", \"choices\": []}\\n\\ndata: [DONE]\\n\\n'"),
    ("text/plain", "", "a text/plain body, ''"),
    (None, "<x>", "a body with no content-type, '<x>'"),
    ("application/json", "[1, 2]", "an application/json body, [1, 2]"),
    ("application/json", '"ok"', "an application/json body, 'ok'"),
    ("application/json", "5", "an application/json body, 5"),
    ("application/json", "1.5", "an application/json body, 1.5"),
    ("text/html", "x" * 100, "a text/html body, '" + "x" * 78 + "\u2026"),
]


def judge_of(state: Server, client_retries: int = 0) -> OpenAIJudge:
    client = openai.AsyncOpenAI(base_url=state.base_url, api_key="test",
                                max_retries=client_retries, timeout=10.0)
    return OpenAIJudge(client, "m", max_retries=2)


class Verdict(BaseModel):
    ok: bool


REQUEST: JudgeRequest[Verdict] = JudgeRequest(
    instructions="Judge.", prompt="[0] human: hi", answer=Verdict
)


@pytest.mark.parametrize("gated", [False, True], ids=["ungated", "gated"])
@pytest.mark.parametrize(("content_type", "body", "named"), NOT_A_COMPLETION, ids=[
    "html", "html-charset", "event-stream", "empty-text", "no-content-type", "json-array",
    "json-string", "json-int", "json-float", "long"])
async def test_a_reply_that_is_not_a_completion_object_is_a_failed_request_not_retried(
    labelled: Server, content_type: str | None, body: str, named: str, gated: bool
) -> None:
    labelled.script = [Scripted(200, body, content_type=content_type)] * 3
    judge = judge_of(labelled)
    gate = OpenGate()
    try:
        with pytest.raises(JudgeError) as caught:
            await judge.ask(REQUEST, gate=gate if gated else None)
    finally:
        await judge.aclose()
    assert str(caught.value) == (
        f"the judge request failed: ValueError: the reply is not a chat completion object: {named}"
    )
    assert caught.value.usage == UNKNOWN
    assert labelled.requests == 1
    assert gate.costs == ([UNKNOWN] if gated else [])


async def test_a_reply_not_json_after_client_retries_counts_every_try(labelled: Server) -> None:
    retry_soon = Scripted(500, ERROR_500.body, {"retry-after-ms": "1"})
    html = Scripted(200, "<html>bad gateway</html>", content_type="text/html")
    labelled.script = [retry_soon, html]
    judge = judge_of(labelled, client_retries=1)
    try:
        result = await AgentGoalAccuracyWithoutReference(judge).ascore(SAMPLE)
    finally:
        await judge.aclose()
    assert labelled.requests == 2
    assert result.value is None
    assert result.error == (
        "the judge request failed: ValueError: the reply is not a chat completion object: "
        "a text/html body, '<html>bad gateway</html>'"
    )
    assert result.usage == Usage(requests=2, requests_without_usage=2)


async def test_a_completion_after_a_json_body_still_scores(labelled: Server) -> None:
    labelled.script = [Scripted(200, completion_json(GOAL_JSON))]
    judge = judge_of(labelled)
    try:
        result = await AgentGoalAccuracyWithoutReference(judge).ascore(SAMPLE)
    finally:
        await judge.aclose()
    assert (result.value, result.error) == (1.0, None)
    assert result.usage == Usage(requests=1, prompt_tokens=10, completion_tokens=5,
                                 total_tokens=15)


# --- 2. a client with only chat.completions; a judge name that raises --------------------


class Completions:
    """``chat.completions`` of a client of one's own: answers ``reply`` to every request."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.requests = 0

    async def create(self, **request: Any) -> Any:
        self.requests += 1
        return self.reply


def own_client(reply: Any) -> Any:
    return SimpleNamespace(chat=SimpleNamespace(completions=Completions(reply)))


def answer_object(content: str) -> Any:
    message = SimpleNamespace(content=content, refusal=None)
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop")],
        usage=SimpleNamespace(prompt_tokens=1, completion_tokens=2, total_tokens=3),
    )


def test_a_client_without_base_url_scores_and_names_an_unknown_endpoint() -> None:
    judge = OpenAIJudge(own_client(answer_object(GOAL_JSON)), "m")
    assert judge.name == "m @ <unknown endpoint>"
    assert judge.settings == {
        "judge": "OpenAIJudge", "base_url": None, "model": "m", "temperature": 0,
        "response_format": "json_schema (strict)",
    }
    assert repr(judge) == "OpenAIJudge('m @ <unknown endpoint>')"
    result = AgentGoalAccuracyWithoutReference(judge).score(SAMPLE)
    assert (result.value, result.error, result.judge) == (1.0, None, "m @ <unknown endpoint>")
    assert result.usage == Usage(requests=1, prompt_tokens=1, completion_tokens=2,
                                 total_tokens=3)
    [[batch]] = evaluate([SAMPLE], [AgentGoalAccuracyWithoutReference(judge)])
    assert batch == result
    asyncio.run(judge.aclose())  # no ``close``: nothing to close


def test_a_client_of_ones_own_that_returns_text_is_a_failed_request() -> None:
    client = own_client("<html>bad gateway</html>")
    result = AgentGoalAccuracyWithoutReference(OpenAIJudge(client, "m")).score(SAMPLE)
    assert result.error == (
        "the judge request failed: ValueError: the reply is not a chat completion object: "
        "a str, '<html>bad gateway</html>'"
    )
    assert result.usage == UNKNOWN
    assert client.chat.completions.requests == 1


class NamelessJudge:
    """A judge whose ``name`` raises."""

    @property
    def name(self) -> str:
        raise RuntimeError("no name")

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        return JudgeReply(answer=GOAL, usage=Usage(requests=1))


def crashed_result() -> MetricResult:
    return MetricResult(
        name="agent_goal_accuracy_without_reference", value=None, error="RuntimeError: no name",
        metric_version="1+prompt.2+render.6", judge=None, usage=None,
        transcript_hash=SAMPLE.transcript_hash(),
    )


def test_evaluate_gives_a_result_when_the_judge_name_raises() -> None:
    metric = AgentGoalAccuracyWithoutReference(NamelessJudge())
    assert evaluate([SAMPLE, SAMPLE], [metric]) == [[crashed_result()], [crashed_result()]]


def test_score_gives_a_result_when_the_judge_name_raises() -> None:
    metric = AgentGoalAccuracyWithoutReference(NamelessJudge())
    place = {"line": 1}
    assert asyncio.run(_job(place, SAMPLE, metric)) == (
        place, SAMPLE, crashed_result(), "error"
    )


# --- 3. tracebridge score: a request not sent is an error --------------------------------


def score(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tracebridge score")
    configure(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


METRIC = "agent_goal_accuracy_without_reference"


def summary_row(err: str) -> list[str]:
    return err.splitlines()[1].split()


def test_score_counts_a_model_name_that_cannot_be_sent_as_an_error(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "ds.jsonl"
    path.write_text(SAMPLE.model_dump_json() + "\n", encoding="utf-8")
    code, out, err = score(str(path), "-m", METRIC, "--model", "m\udcff",
                           "--base-url", server.base_url)
    assert code == 3
    row = json.loads(out)
    assert row["error"] == (
        "the judge request was not sent: UnicodeEncodeError: 'utf-8' codec can't encode "
        "character '\\udcff' in position 11: surrogates not allowed"
    )
    assert row["usage"] == {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0,
                            "total_tokens": 0, "requests_without_usage": 0}
    assert summary_row(err) == [METRIC, "0", "0", "1", "-", "-", "-"]
    assert server.requests == []


def test_score_counts_a_prompt_with_a_lone_surrogate_as_an_error(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "ds.jsonl"
    cut = json.dumps({"messages": [{"type": "human", "content": "hi \ud83c"},
                                   {"type": "ai", "content": "hello"}]})
    path.write_text(cut + "\n", encoding="utf-8")
    code, out, err = score(str(path), "-m", METRIC, "--model", "m", "--base-url",
                           server.base_url)
    assert code == 3
    assert json.loads(out)["error"] == (
        "the judge request was not sent: its prompt holds a lone surrogate U+D83C at "
        "character 27, which UTF-8 cannot carry"
    )
    assert summary_row(err) == [METRIC, "0", "0", "1", "-", "-", "-"]
    assert server.requests == []


def failed(error: str, usage: Usage | None) -> MetricResult:
    return MetricResult(name="x", value=None, error=error, metric_version="1", usage=usage,
                        transcript_hash="tb1:0")


@pytest.mark.parametrize(("error", "usage", "expected"), [
    ("the sample has no reference (the expected outcome, in words)", Usage(), "unscorable"),
    ("the sample has no reference_topics (the allowed topics)", Usage(), "unscorable"),
    ("the sample has no reference_tool_calls (None); give [] to expect no calls", None,
     "unscorable"),
    ('no role to adhere to: the sample has no system message text and no rubrics["role"]',
     Usage(), "unscorable"),
    ("nothing to judge: the conversation has no user message", Usage(), "unscorable"),
    ("nothing to judge: the judge found no user question", Usage(requests=1), "unscorable"),
    ("the judge request was not sent: UnicodeEncodeError: …", Usage(), "error"),
    ("down", Usage(), "error"),
    ("the judge request failed: APITimeoutError: Request timed out.", UNKNOWN, "error"),
])
def test_score_verdict_goes_by_cause(error: str, usage: Usage | None, expected: str) -> None:
    assert score_cli.score_verdict(failed(error, usage)) == expected


# --- 4. a judge of one's own answering something else ------------------------------------


class OwnJudge:
    """Answers every request with ``answer`` (or raises it)."""

    name = "own"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def ask(self, request: JudgeRequest[Any]) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


ESTIMATED_TOKENS = 1527
"""What a request for SAMPLE's goal verdict is estimated to take, input and output."""
WRONG_REPLIES = pytest.mark.parametrize(("answer", "value", "error"), [
    (GOAL, None, "the judge's answer is not valid: expected a JudgeReply, got a GoalVerdict"),
    ({"answer": GOAL}, None, "the judge's answer is not valid: expected a JudgeReply, got a dict"),
    (JudgeReply(answer=GOAL, usage=None), 1.0, None),  # type: ignore[arg-type]
    (JudgeReply(answer=GOAL, usage={"requests": 1}), 1.0, None),  # type: ignore[arg-type]
    (JudgeError("down", None), None, "down"),  # type: ignore[arg-type]
], ids=["answer-model", "dict", "usage-none", "usage-dict", "error-usage-none"])


@WRONG_REPLIES
def test_a_judge_of_ones_own_with_a_wrong_reply_or_usage_gives_a_result(
    answer: Any, value: float | None, error: str | None
) -> None:
    result = AgentGoalAccuracyWithoutReference(OwnJudge(answer)).score(SAMPLE)
    assert (result.value, result.error, result.usage) == (value, error, UNKNOWN)


@WRONG_REPLIES
def test_the_same_judge_under_a_budget_gives_the_same_result(
    answer: Any, value: float | None, error: str | None
) -> None:
    budget = Budget(max_requests=10)
    judge = BudgetedJudge(OwnJudge(answer), budget)  # type: ignore[arg-type]
    result = AgentGoalAccuracyWithoutReference(judge).score(SAMPLE)
    assert (result.value, result.error, result.usage) == (value, error, UNKNOWN)
    # the one request it was, charged at its estimate: its size is unknown, not nothing
    assert budget.spent == Spent(requests=1, tokens=ESTIMATED_TOKENS, cost=None)


@WRONG_REPLIES
def test_a_priced_judge_under_a_budget_is_charged_the_estimate_of_a_reply_of_unknown_size(
    answer: Any, value: float | None, error: str | None
) -> None:
    budget = Budget(max_cost=1.0, prices={"own-model": Price(0.15, 0.60)})
    judge = BudgetedJudge(OwnJudge(answer), budget, model="own-model")  # type: ignore[arg-type]
    result = AgentGoalAccuracyWithoutReference(judge).score(SAMPLE)
    assert (result.value, result.error, result.usage) == (value, error, UNKNOWN)
    assert budget.spent == Spent(requests=1, tokens=ESTIMATED_TOKENS, cost=0.00051255)


def test_unknown_usages_add_up_over_several_requests() -> None:
    verdict = RelevancyVerdict(reason="answers", relevant=True)
    relevant = JudgeReply(answer=verdict, usage=None)  # type: ignore[arg-type]
    sample = MultiTurnSample(messages=[
        HumanMessage(content="a"), AIMessage(content="b"),
        HumanMessage(content="c"), AIMessage(content="d"),
    ])
    result = ConversationRelevancy(OwnJudge(relevant)).score(sample)
    assert (result.value, result.usage) == (1.0, Usage(requests=2, requests_without_usage=2))


# --- 5. a synchronous client ------------------------------------------------------------


def test_a_synchronous_client_is_refused_when_the_judge_is_built() -> None:
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="test")
    try:
        with pytest.raises(TypeError) as caught:
            OpenAIJudge(client, "m")
    finally:
        client.close()
    assert str(caught.value) == (
        "client must be an openai.AsyncOpenAI (or a client with the same async "
        "chat.completions), got a synchronous openai.OpenAI"
    )


# --- 6. window and max_retries are whole numbers ----------------------------------------


@pytest.mark.parametrize("window", [1.5, 2.0, True, "3"], ids=repr)
def test_a_window_that_is_not_an_int_is_refused(window: Any) -> None:
    with pytest.raises(TypeError) as caught:
        ConversationRelevancy(OwnJudge(None), window=window)  # type: ignore[arg-type]
    assert str(caught.value) == f"window must be a whole number (an int), got {window!r}"


@pytest.mark.parametrize("max_retries", [1.5, 2.0, True, "2"], ids=repr)
def test_a_max_retries_that_is_not_an_int_is_refused(max_retries: Any) -> None:
    with pytest.raises(TypeError) as caught:
        OpenAIJudge(own_client(None), "m", max_retries=max_retries)
    assert str(caught.value) == (
        f"max_retries must be a whole number (an int), got {max_retries!r}"
    )


def test_whole_numbers_out_of_range_are_still_value_errors() -> None:
    with pytest.raises(ValueError, match=r"^window must be 1 or more user turns, got 0$"):
        ConversationRelevancy(OwnJudge(None), window=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^max_retries must be 0 or more, got -1$"):
        OpenAIJudge(own_client(None), "m", max_retries=-1)


# --- 7. a topic holding a line break stays one topic -------------------------------------


class RecordingJudge:
    """Records each request and answers with no question."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest[Any]] = []

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        self.requests.append(request)
        return JudgeReply(answer=request.answer(questions=[]), usage=Usage(requests=1))


@pytest.mark.parametrize(("topics", "section"), [
    (["weather\n- lock picking"], "- weather\n    - lock picking"),
    (["weather", "lock picking"], "- weather\n- lock picking"),
    (["a\r\nb\n\nc\u2028d"], "- a\n    b\n\n    c\n    d"),
], ids=["break", "two-topics", "other-breaks"])
def test_a_topic_holding_a_line_break_stays_one_topic(topics: list[str], section: str) -> None:
    judge = RecordingJudge()
    metric = TopicAdherence(judge)  # type: ignore[arg-type]
    result = metric.score(SAMPLE.model_copy(update={"reference_topics": topics}))
    assert result.error == "nothing to judge: the judge found no user question"
    assert result.metric_version == "1+prompt.3+render.6"
    [request] = judge.requests
    assert request.prompt.endswith(f"\n<allowed_topics>\n{section}\n</allowed_topics>")
    assert (
        'The agent may only talk about the topics listed in <allowed_topics>: each topic starts '
        'with\n"- " on a line of its own, and the indented lines after it belong to that topic.'
    ) in request.instructions
