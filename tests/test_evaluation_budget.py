"""The judge's budget: estimates, limits and reservations, and BudgetedJudge against a real
HTTP server speaking Chat Completions on 127.0.0.1 (the real ``AsyncOpenAI`` client)."""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from fake_openai_server import FakeOpenAI, Reply
from judge_requests import GOOD, REQUEST, Verdict
from pydantic import BaseModel

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.evaluation._estimate import (
    CHARS_PER_TOKEN,
    LITERAL_ALLOWANCE,
    MESSAGE_OVERHEAD,
    REPLY_OVERHEAD,
    SCHEMA_OVERHEAD,
    STRING_ALLOWANCE,
)
from tracebridge.evaluation.budget import (
    Budget,
    BudgetedJudge,
    BudgetExhausted,
    Estimate,
    Price,
    Remaining,
    Spent,
    estimate,
    exhausted_reason,
    parse_price,
)
from tracebridge.metrics import (
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
    ConversationCompleteness,
    ConversationRelevancy,
    JudgedMetric,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    KnowledgeRetention,
    OpenAIJudge,
    RoleAdherence,
    TopicAdherence,
    Usage,
    strict_json_schema,
)

PER_REQUEST = 120  # the fake server's usage: 100 prompt + 20 completion tokens
ESTIMATE = estimate(REQUEST, "judge-model")


@pytest.fixture
async def judge(server: FakeOpenAI) -> AsyncIterator[OpenAIJudge]:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=2)
    judge = OpenAIJudge(client=client, model="judge-model", max_retries=2)
    judge.first_retry_delay = 0.0
    yield judge
    await judge.aclose()


def dollars(value: float) -> str:
    """Dollars as messages spell them: at most six decimals, no trailing zeros."""
    return "$" + f"{value:.6f}".rstrip("0").rstrip(".")


async def ask_all(judge: BudgetedJudge, times: int) -> list[str]:
    """Ask ``times`` requests one after another: "ok" or the BudgetExhausted message."""
    outcomes = []
    for _ in range(times):
        try:
            await judge.ask(REQUEST)
        except BudgetExhausted as exc:
            outcomes.append(str(exc))
        else:
            outcomes.append("ok")
    return outcomes


# --- prices ----------------------------------------------------------------------------------


def test_a_price_is_model_equals_input_comma_output() -> None:
    assert parse_price("gpt-4o-mini=0.15,0.60") == ("gpt-4o-mini", Price(0.15, 0.6))
    assert parse_price("org/model:v1=0,2") == ("org/model:v1", Price(0.0, 2.0))
    assert parse_price("a=b=1,2") == ("a=b", Price(1.0, 2.0))


@pytest.mark.parametrize(
    "text", ["gpt-4o", "=1,2", " =1,2", "m=1", "m=1,2,3", "m=one,2", "m=1,", "m="]
)
def test_a_malformed_price_is_one_line(text: str) -> None:
    message = (
        "a price is MODEL=INPUT,OUTPUT in dollars per million input and output tokens "
        f"(e.g. gpt-4o-mini=0.15,0.60), got {text!r}"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_price(text)


@pytest.mark.parametrize("text", ["m=-1,2", "m=1,nan", "m=inf,1"])
def test_a_price_is_finite_and_not_negative(text: str) -> None:
    with pytest.raises(ValueError, match=r"^[^\n]*: both prices must be finite and 0 or more$"):
        parse_price(text)


def test_price_checks_its_fields() -> None:
    with pytest.raises(ValueError, match=r"output_per_million is -0\.5$"):
        Price(1.0, -0.5)
    assert Price(0.1, 0.2).cost(10, 5) * 1_000_000 == 2  # exact: 0.1 * 10 + 0.2 * 5


# --- the estimate ----------------------------------------------------------------------------


def test_the_estimate_follows_the_documented_rule() -> None:
    def tokens(text: str) -> int:
        ascii_chars = sum(ch.isascii() for ch in text)
        return math.ceil(ascii_chars / CHARS_PER_TOKEN) + len(text) - ascii_chars

    schema = json.dumps({"name": "Verdict", "schema": strict_json_schema(Verdict)})
    expected_input = (
        REPLY_OVERHEAD + SCHEMA_OVERHEAD + tokens(schema)
        + 2 * MESSAGE_OVERHEAD + tokens("system") + tokens("user")
        + tokens(REQUEST.instructions) + tokens(REQUEST.prompt)
    )
    # {"reason": <string>, "ok": <boolean>}: braces, and per key its tokens, ':' and ','
    expected_output = REPLY_OVERHEAD + 2 + (3 + 2 + STRING_ALLOWANCE) + (2 + 2 + LITERAL_ALLOWANCE)
    assert Estimate(1, expected_input, expected_output, None) == ESTIMATE
    assert ESTIMATE.tokens == expected_input + expected_output
    priced = estimate(REQUEST, "judge-model", Price(2.0, 8.0))
    assert priced.cost == (expected_input * 2.0 + expected_output * 8.0) / 1_000_000


def test_a_non_ascii_character_counts_as_a_token_of_its_own() -> None:
    ascii_only = estimate(JudgeRequest("x", "abc" * 10, Verdict), "m")
    accented = estimate(JudgeRequest("x", "abé" * 10, Verdict), "m")
    cjk = estimate(JudgeRequest("x", "票" * 30, Verdict), "m")
    assert accented.input_tokens - ascii_only.input_tokens == 10 - 3  # 20 ASCII: 7, 10 é: 10
    assert cjk.input_tokens - ascii_only.input_tokens == 30 - 10


def test_a_list_in_the_answer_allows_one_item_per_numbered_message() -> None:
    class Items(BaseModel):
        items: list[bool]

    one = estimate(JudgeRequest("x", "no transcript", Items), "m")
    five = estimate(JudgeRequest("x", "\n".join(f"[{i}] ai: a" for i in range(5)), Items), "m")
    assert one.output_tokens == REPLY_OVERHEAD + 2 + 3 + 2 + 2 + 1 * (1 + LITERAL_ALLOWANCE)
    assert five.output_tokens - one.output_tokens == 4 * (1 + LITERAL_ALLOWANCE)


SAMPLE = MultiTurnSample(
    messages=[
        HumanMessage(content="Open a billing ticket for the double charge, please."),
        AIMessage(content="Opening it now.", tool_calls=[
            ToolCall(name="create_ticket", args={"category": "billing"}, id="call-1")]),
        ToolMessage(content="Creation failed: service unavailable.", tool_call_id="call-1"),
        AIMessage(content="Your ticket was created."),
        HumanMessage(content="Thanks! Is it about billing?"),
        AIMessage(content="Yes, billing."),
    ],
    reference="One billing ticket is created and its ID is returned.",
    reference_topics=["billing"],
    rubrics={"role": "A polite support agent."},
)


class Recorder:
    """Passes requests on and keeps them."""

    def __init__(self, inner: BudgetedJudge) -> None:
        self.inner = inner
        self.requests: list[JudgeRequest[Any]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        self.requests.append(request)
        return await self.inner.ask(request)


def judged_metrics(judge: Recorder) -> list[tuple[JudgedMetric, list[str]]]:
    """Each judged metric and the valid answers it gets for SAMPLE."""
    goal = '{"user_goal": "a ticket", "end_state": "none", "reason": "failed", "achieved": false}'

    def verdicts(*indexes: int) -> str:
        return json.dumps({"verdicts": [
            {"message_index": i, "reason": "ok", "verdict": True} for i in indexes]})

    topics = json.dumps({"questions": [{"message_index": 0, "question": "ticket",
                                        "topic": "billing", "topic_allowed": True,
                                        "answered": True}]})
    intentions = json.dumps({"intentions": [{"message_index": 0, "intention": "ticket",
                                             "reason": "failed", "satisfied": False}]})
    relevant = '{"reason": "on topic", "relevant": true}'
    return [
        (AgentGoalAccuracyWithoutReference(judge), [goal]),
        (AgentGoalAccuracyWithReference(judge), [goal]),
        (TopicAdherence(judge), [topics]),
        (RoleAdherence(judge), [verdicts(1, 3, 5)]),
        (KnowledgeRetention(judge), [verdicts(1, 3, 5)]),
        (ConversationCompleteness(judge), [intentions]),
        (ConversationRelevancy(judge), [relevant, relevant, relevant]),
    ]


async def test_the_estimate_covers_what_each_judged_metric_really_sends(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget()
    recorder = Recorder(BudgetedJudge(judge, budget, "judge-model"))
    for metric, answers in judged_metrics(recorder):
        recorder.requests.clear()
        before = len(server.requests)
        server.add(*answers)
        result = await metric.ascore(SAMPLE)
        assert result.error is None, (metric.name, result.error)
        sent = server.requests[before:]
        assert len(sent) == len(recorder.requests) == len(answers)
        for request, body in zip(recorder.requests, sent, strict=True):
            planned = estimate(request, "judge-model")
            # what the fake server reports ...
            assert planned.input_tokens >= 100
            assert planned.output_tokens >= 20
            # ... and a typical tokenizer's 4 characters a token over all that was sent
            payload = json.dumps([body["messages"], body["response_format"]], ensure_ascii=False)
            assert planned.input_tokens >= len(payload) / 4, metric.name
    assert budget.spent.requests == 9


# --- the budget ------------------------------------------------------------------------------


def test_fits_says_why_the_planned_work_does_not_fit() -> None:
    work = [Estimate(1, 1000, 200, 0.5)] * 4
    assert Budget().fits(work) is None
    assert Budget(max_requests=4, max_tokens=4800, max_cost=2.0).fits(work) is None
    assert Budget(max_requests=3).fits(work) == (
        "the planned work needs 4 judge requests; 3 of the limit of 3 are left"
    )
    assert Budget(max_tokens=4799).fits(work) == (
        "the planned work needs an estimated 4,800 tokens; 4,799 of the limit of 4,799 are left"
    )
    assert Budget(max_cost=1.99).fits(work) == (
        "the planned work costs an estimated $2; $1.99 of the limit of $1.99 is left"
    )
    assert Budget(max_cost=10.0).fits([*work, Estimate(1, 1, 1, None)]) == (
        "the planned work's cost is unknown (1 of 5 requests are to a model without a price) "
        "and a cost limit is set"
    )
    assert Budget(max_cost=10.0).fits([]) is None


def test_fits_counts_what_is_spent_and_in_flight() -> None:
    budget = Budget(max_requests=5)
    first = budget.reserve(Estimate(1, 10, 10, None))
    assert first is not None
    budget.settle(first, Usage(requests=1, prompt_tokens=5, completion_tokens=5, total_tokens=10))
    assert budget.reserve(Estimate(1, 10, 10, None)) is not None
    assert budget.fits([Estimate(1, 1, 1, None)] * 3) is None
    assert budget.fits([Estimate(1, 1, 1, None)] * 4) == (
        "the planned work needs 4 judge requests; 3 of the limit of 5 are left"
    )
    assert budget.spent == Spent(1, 10, None)
    assert budget.reserved == Spent(1, 20, 0.0)
    assert budget.remaining == Remaining(3, None, None)


def test_a_limit_is_zero_or_more() -> None:
    with pytest.raises(ValueError, match="max_requests must be 0 or more, got -1"):
        Budget(max_requests=-1)
    with pytest.raises(ValueError, match="max_cost must be 0 or more, got nan"):
        Budget(max_cost=float("nan"))


def test_a_reservation_is_settled_once() -> None:
    budget = Budget(max_requests=1)
    held = budget.reserve(Estimate(1, 1, 1, None))
    assert held is not None
    assert budget.reserve(Estimate(1, 1, 1, None)) is None
    budget.settle(held, Usage(requests=1, requests_without_usage=1))
    assert budget.spent == Spent(1, 2, None)  # tokens unknown: charged at the estimate
    with pytest.raises(ValueError, match=f"reservation {held.number} is already settled"):
        budget.settle(held, Usage(requests=1))


def test_a_cost_limit_needs_a_priced_model() -> None:
    budget = Budget(max_cost=1.0)
    with pytest.raises(ValueError, match="a cost limit is set and the model 'm' has no price"):
        budget.reserve(Estimate(1, 1, 1, None), "m")
    message = (
        "a cost limit needs the price of the judge model judge-model: "
        "give it as judge-model=INPUT,OUTPUT (dollars per million tokens)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        BudgetedJudge(OpenAIJudge(client=None, model="judge-model"), budget)
    priced = Budget(max_cost=1.0, prices={"judge-model": Price(1, 1)})
    assert BudgetedJudge(OpenAIJudge(client=None, model="judge-model"), priced).model == (
        "judge-model"
    )


def test_reservations_from_many_threads_never_overrun_the_limit() -> None:
    budget = Budget(max_requests=100, max_tokens=100 * 30)
    granted: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    def work() -> None:
        start.wait()
        for _ in range(20):
            held = budget.reserve(Estimate(1, 20, 10, None))
            if held is not None:
                with lock:
                    granted.append(held.number)
                budget.settle(held, Usage(requests=1, prompt_tokens=20, completion_tokens=10,
                                          total_tokens=30))

    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == len(set(granted)) == 100
    assert budget.spent == Spent(100, 3000, None)
    assert budget.reserved == Spent(0, 0, 0.0)


# --- BudgetedJudge against the server --------------------------------------------------------


async def test_n_requests_allowed_means_n_sent_and_the_next_refused_unsent(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=3)
    server.add(GOOD, GOOD, GOOD, GOOD)
    outcomes = await ask_all(BudgetedJudge(judge, budget, "judge-model"), 4)
    assert outcomes == ["ok", "ok", "ok", "budget exhausted: the limit of 3 judge requests "
                        "is reached (3 sent, 0 in flight)"]
    assert len(server.requests) == 3
    assert budget.spent == Spent(3, 3 * PER_REQUEST, None)
    assert budget.remaining == Remaining(0, None, None)


async def test_concurrent_requests_share_the_boundary_exactly(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=3)
    budgeted = BudgetedJudge(judge, budget, "judge-model")
    server.add(*[Reply(content=GOOD, sleep=0.2)] * 8)
    results = await asyncio.gather(*(budgeted.ask(REQUEST) for _ in range(8)),
                                   return_exceptions=True)
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert len(refused) == 5
    assert {r.reason for r in refused} == {
        "the limit of 3 judge requests is reached (0 sent, 3 in flight)"}
    assert len(server.requests) == 3
    assert budget.spent == Spent(3, 3 * PER_REQUEST, None)


async def test_an_http_retry_is_a_request_of_its_own(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=3)
    budgeted = BudgetedJudge(judge, budget, "judge-model")
    server.add(Reply(status=500), GOOD, GOOD)
    reply = await budgeted.ask(REQUEST)
    assert reply.usage == Usage(requests=2, prompt_tokens=100, completion_tokens=20,
                                total_tokens=120, requests_without_usage=1)
    assert len(server.requests) == 2
    # the failed try's tokens are unknown: it is charged its estimate
    assert budget.spent == Spent(2, PER_REQUEST + ESTIMATE.tokens, None)
    assert await ask_all(budgeted, 2) == [
        "ok", "budget exhausted: the limit of 3 judge requests is reached (3 sent, 0 in flight)"]
    assert len(server.requests) == 3


async def test_a_retry_the_budget_cannot_cover_is_not_sent(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=1)
    server.add(Reply(status=503), GOOD)
    with pytest.raises(BudgetExhausted) as raised:
        await BudgetedJudge(judge, budget, "judge-model").ask(REQUEST)
    assert str(raised.value) == (
        "budget exhausted: the limit of 1 judge requests is reached (1 sent, 0 in flight)"
    )
    assert raised.value.usage == Usage(requests=1, requests_without_usage=1)
    assert len(server.requests) == 1


async def test_a_re_ask_after_an_invalid_answer_is_a_request_too(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=1)
    server.add("{", GOOD)
    with pytest.raises(BudgetExhausted) as raised:
        await BudgetedJudge(judge, budget, "judge-model").ask(REQUEST)
    assert raised.value.usage == Usage(requests=1, prompt_tokens=100, completion_tokens=20,
                                       total_tokens=120)
    assert len(server.requests) == 1


async def test_the_judge_makes_the_clients_retries_itself_one_request_each(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget()
    server.add(Reply(status=500), Reply(status=500), Reply(status=500), GOOD)
    with pytest.raises(JudgeError) as raised:
        await BudgetedJudge(judge, budget, "judge-model").ask(REQUEST)
    assert not isinstance(raised.value, BudgetExhausted)
    # the client's max_retries=2: three tries in all, the same error as without a budget
    assert str(raised.value) == (
        "the judge request failed: InternalServerError: Error code: 500 - scripted failure"
    )
    assert raised.value.usage == Usage(requests=3, requests_without_usage=3)
    assert len(server.requests) == 3
    assert budget.spent == Spent(3, 3 * ESTIMATE.tokens, None)


async def test_an_error_the_client_would_not_retry_is_not_retried(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(Reply(status=400), GOOD)
    with pytest.raises(JudgeError) as raised:
        await BudgetedJudge(judge, Budget(), "judge-model").ask(REQUEST)
    assert str(raised.value) == (
        "the judge request failed: BadRequestError: Error code: 400 - scripted failure"
    )
    assert len(server.requests) == 1


async def test_the_token_limit_stops_at_its_boundary(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_tokens=ESTIMATE.tokens + PER_REQUEST)
    server.add(GOOD, GOOD, GOOD)
    outcomes = await ask_all(BudgetedJudge(judge, budget, "judge-model"), 3)
    # the 2nd fits exactly (120 spent + its estimate = the limit); the 3rd does not
    assert outcomes[:2] == ["ok", "ok"]
    assert outcomes[2] == (
        f"budget exhausted: the next request needs up to {ESTIMATE.tokens:,} tokens "
        f"(estimated) and {ESTIMATE.tokens - PER_REQUEST:,} of the limit of "
        f"{ESTIMATE.tokens + PER_REQUEST:,} are left"
    )
    assert len(server.requests) == 2
    assert budget.spent == Spent(2, 2 * PER_REQUEST, None)


async def test_the_cost_limit_stops_at_its_boundary(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    price = Price(1.5, 6.0)
    actual = (100 * 1.5 + 20 * 6.0) / 1_000_000  # what one request of the fake server costs
    planned = estimate(REQUEST, "judge-model", price)
    assert planned.cost is not None
    limit = float(price.cost(ESTIMATE.input_tokens, ESTIMATE.output_tokens)
                  + price.cost(100, 20))
    budget = Budget(max_cost=limit, prices={"judge-model": price})
    server.add(GOOD, GOOD, GOOD)
    outcomes = await ask_all(BudgetedJudge(judge, budget, "judge-model"), 3)
    assert outcomes[:2] == ["ok", "ok"]
    assert outcomes[2] == (
        f"budget exhausted: the next request may cost up to {dollars(planned.cost)} "
        f"(estimated) and {dollars(limit - 2 * actual)} of the limit of {dollars(limit)} is left"
    )
    assert len(server.requests) == 2
    assert budget.spent == Spent(2, 2 * PER_REQUEST, 2 * actual)


async def test_a_reply_without_usage_is_charged_its_estimate(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(prices={"judge-model": Price(1.0, 1.0)})
    server.add(Reply(content=GOOD, usage=False))
    await BudgetedJudge(judge, budget, "judge-model").ask(REQUEST)
    assert budget.spent == Spent(1, ESTIMATE.tokens, ESTIMATE.tokens / 1_000_000)


async def test_a_cancelled_request_gives_its_reservation_back(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=5)
    server.add(Reply(content=GOOD, sleep=5.0))
    task = asyncio.create_task(BudgetedJudge(judge, budget, "judge-model").ask(REQUEST))
    while not server.requests:
        await asyncio.sleep(0.01)
    assert budget.reserved.requests == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert budget.reserved == Spent(0, 0, 0.0)
    assert budget.spent == Spent(1, ESTIMATE.tokens, None)


async def test_a_metric_stopped_by_the_budget_says_so(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    budget = Budget(max_requests=0)
    metric = AgentGoalAccuracyWithoutReference(BudgetedJudge(judge, budget, "judge-model"))
    result = await metric.ascore(SAMPLE)
    assert result.value is None
    assert exhausted_reason(result) == (
        "the limit of 0 judge requests is reached (0 sent, 0 in flight)"
    )
    assert result.usage == Usage()
    assert server.requests == []
    assert exhausted_reason(metric.failed(SAMPLE, "the judge request failed: ...")) is None


class Counting:
    """A judge that is not an OpenAIJudge: it reports one request per ask."""

    name = "counting"

    def __init__(self) -> None:
        self.asked = 0

    async def ask(self, request: JudgeRequest[Any]) -> JudgeReply[Any]:
        self.asked += 1
        answer = request.answer.model_validate_json(GOOD)
        return JudgeReply(answer=answer, usage=Usage(requests=1, prompt_tokens=7,
                                                     completion_tokens=3, total_tokens=10))


async def test_any_other_judge_is_reserved_one_request_per_ask() -> None:
    inner = Counting()
    budget = Budget(max_requests=2)
    budgeted = BudgetedJudge(inner, budget)
    assert budgeted.model is None
    assert budgeted.name == "counting"
    assert budgeted.settings == {"judge": "counting"}
    outcomes = await ask_all(budgeted, 3)
    assert outcomes[2] == (
        "budget exhausted: the limit of 2 judge requests is reached (2 sent, 0 in flight)"
    )
    assert inner.asked == 2
    assert budget.spent == Spent(2, 20, None)


async def test_settings_name_what_a_request_is_sent_with(judge: OpenAIJudge) -> None:
    expected = {
        "judge": "OpenAIJudge",
        "base_url": str(judge.client.base_url),
        "model": "judge-model",
        "temperature": 0,
        "response_format": "json_schema (strict)",
    }
    assert judge.settings == expected
    assert BudgetedJudge(judge, Budget()).settings == expected
    judge.temperature = None
    assert "temperature" not in judge.settings


def test_the_docstring_examples_run() -> None:
    import doctest

    from tracebridge.evaluation import _estimate

    failed, attempted = doctest.testmod(_estimate)
    assert (failed, attempted > 0) == (0, True)


@pytest.mark.parametrize(
    ("status", "headers", "retried", "wait"),
    [
        (503, {}, True, None),
        (429, {"retry-after": "2"}, True, 2.0),
        (429, {"retry-after-ms": "250"}, True, 0.25),
        (429, {"retry-after": "600"}, True, None),  # longer than 60 s: the judge's own delay
        (408, {}, True, None),
        (409, {}, True, None),
        (400, {}, False, None),
        (400, {"x-should-retry": "true"}, True, None),
        (500, {"x-should-retry": "false"}, False, None),
    ],
)
def test_the_judge_retries_what_the_client_would_retry(
    status: int, headers: dict[str, str], retried: bool, wait: float | None
) -> None:
    from tracebridge.metrics.judge import _retried, _retry_after

    httpx = pytest.importorskip("httpx2")  # the HTTP library openai 3 is built on
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    error = openai.APIStatusError("scripted", response=response, body=None)
    assert _retried(openai, error) is retried
    assert _retry_after(error) == wait
    assert _retried(openai, openai.APIConnectionError(request=request)) is True
    assert _retried(openai, ValueError("Expecting value")) is False
