"""OpenAIJudge against a real HTTP server speaking Chat Completions on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator

import openai
import pytest
from fake_openai_server import FakeOpenAI, Reply
from pydantic import BaseModel, ConfigDict

from tracebridge.metrics import JudgeError, JudgeRequest, OpenAIJudge, Usage, strict_json_schema


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    title: str
    """A property called title must survive the removal of title keywords."""
    score: int = 3


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str
    ok: bool
    items: list[Inner]


GOOD = '{"reason": "fine", "ok": true, "items": [{"title": "t", "score": 1}]}'


@pytest.fixture
async def judge(server: FakeOpenAI) -> AsyncIterator[OpenAIJudge]:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client=client, model="judge-model", temperature=0, max_retries=2)
    yield judge
    await judge.aclose()


def request(check: object = None) -> JudgeRequest[Answer]:
    return JudgeRequest(instructions="Judge it.", prompt="<transcript/>", answer=Answer,
                        check=check)  # type: ignore[arg-type]


def test_the_schema_is_strict_and_inlined() -> None:
    assert strict_json_schema(Answer) == {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "ok": {"type": "boolean"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {
                            "type": "string",
                            "description": "A property called title must survive the removal "
                            "of title keywords.",
                        },
                        "score": {"type": "integer"},
                    },
                    "required": ["title", "score"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["reason", "ok", "items"],
        "additionalProperties": False,
    }


async def test_the_request_asks_for_strict_json_schema_output(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(Reply(content=GOOD, prompt_tokens=321, completion_tokens=12))
    reply = await judge.ask(request())
    assert reply.answer == Answer(reason="fine", ok=True, items=[Inner(title="t", score=1)])
    assert reply.usage == Usage(requests=1, prompt_tokens=321, completion_tokens=12,
                                total_tokens=333)
    [sent] = server.requests
    assert sent == {
        "model": "judge-model",
        "messages": [
            {"role": "system", "content": "Judge it."},
            {"role": "user", "content": "<transcript/>"},
        ],
        "temperature": 0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Answer", "schema": strict_json_schema(Answer), "strict": True},
        },
    }
    assert judge.name == f"judge-model @ {server.base_url}/"


async def test_invalid_output_is_retried_with_the_problem_and_usage_is_summed(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add("not json at all", '{"reason": "fine", "ok": "maybe", "items": []}', GOOD)
    reply = await judge.ask(request())
    assert reply.answer.ok is True
    assert reply.usage == Usage(requests=3, prompt_tokens=300, completion_tokens=60,
                                total_tokens=360)
    assert len(server.requests) == 3
    retry = server.requests[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "not json at all"}
    assert retry[3]["role"] == "user"
    assert retry[3]["content"].startswith("That answer is not valid: the answer: Invalid JSON")
    second = server.requests[2]["messages"]
    assert len(second) == 6
    assert second[5]["content"] == (
        "That answer is not valid: ok: Input should be a valid boolean. Answer again with "
        "JSON that follows the schema exactly."
    )


async def test_retries_are_bounded(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add("{", "{", "{", GOOD)
    with pytest.raises(JudgeError) as raised:
        await judge.ask(request())
    assert str(raised.value).startswith("the judge gave no valid answer in 3 attempts; last "
                                        "problem: the answer: Invalid JSON")
    assert raised.value.usage.requests == 3
    assert raised.value.usage.total_tokens == 360
    assert len(server.requests) == 3


async def test_a_failing_check_counts_as_invalid_output(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    def check(answer: Answer) -> None:
        if not answer.items:
            raise ValueError("list at least one item")

    server.add('{"reason": "r", "ok": true, "items": []}', GOOD)
    reply = await judge.ask(request(check))
    assert len(reply.answer.items) == 1
    assert server.requests[1]["messages"][3]["content"].startswith(
        "That answer is not valid: list at least one item."
    )


async def test_a_reply_cut_at_the_token_limit_is_invalid(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(Reply(content='{"reason": "fi', finish_reason="length"), GOOD)
    reply = await judge.ask(request())
    assert reply.answer.reason == "fine"
    assert server.requests[1]["messages"][3]["content"].startswith(
        "That answer is not valid: the reply was cut off at the token limit."
    )


async def test_missing_usage_is_counted_not_invented(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(Reply(content=GOOD, usage=False))
    reply = await judge.ask(request())
    assert reply.usage == Usage(requests=1, requests_without_usage=1)


async def test_http_500_is_a_judge_error(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(Reply(status=500))
    with pytest.raises(JudgeError) as raised:
        await judge.ask(request())
    assert str(raised.value) == (
        "the judge request failed: InternalServerError: Error code: 500 - scripted failure"
    )
    assert raised.value.usage == Usage(requests=1, requests_without_usage=1)


async def test_a_body_that_is_not_json_is_a_judge_error(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(Reply(body="<html>gateway</html>"))
    with pytest.raises(JudgeError) as raised:
        await judge.ask(request())
    assert str(raised.value) == (
        "the judge request failed: JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    )


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('{"id": "x"}', "the reply has no choices"),
        ('{"choices": "all of them"}', "the reply has no choices"),
        ('{"choices": [{"index": 0}]}', "the reply's first choice has no message"),
        ('{"choices": [{"message": {"role": "assistant", "content": null}}]}',
         "the reply has no text content"),
    ],
)
async def test_a_reply_of_the_wrong_shape_is_invalid_output(
    server: FakeOpenAI, judge: OpenAIJudge, body: str, problem: str
) -> None:
    server.add(Reply(body=body), GOOD)
    reply = await judge.ask(request())
    assert reply.answer.ok is True
    assert reply.usage == Usage(requests=2, prompt_tokens=100, completion_tokens=20,
                                total_tokens=120, requests_without_usage=1)
    assert server.requests[1]["messages"][3]["content"] == (
        f"That answer is not valid: {problem}. "
        "Answer again with JSON that follows the schema exactly."
    )


async def test_a_refusal_is_not_retried(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    refusal = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": None, "refusal": "I can't help with that."}}]}
    server.add(Reply(body=json.dumps(refusal)), GOOD)
    with pytest.raises(JudgeError) as raised:
        await judge.ask(request())
    assert str(raised.value) == "the judge refused to answer: I can't help with that."
    assert len(server.requests) == 1


async def test_a_timeout_is_a_judge_error(server: FakeOpenAI) -> None:
    client = openai.AsyncOpenAI(
        base_url=server.base_url, api_key="test", max_retries=0, timeout=0.3
    )
    judge = OpenAIJudge(client=client, model="judge-model")
    server.add(Reply(content=GOOD, sleep=2.0))
    try:
        with pytest.raises(JudgeError) as raised:
            await judge.ask(request())
    finally:
        await judge.aclose()
    assert str(raised.value) == "the judge request failed: APITimeoutError: Request timed out."


def test_temperature_none_is_left_out() -> None:
    judge = OpenAIJudge(client=None, model="m", temperature=None)
    assert judge.temperature is None
    with pytest.raises(ValueError, match="max_retries must be 0 or more, got -1"):
        OpenAIJudge(client=None, model="m", max_retries=-1)


async def test_temperature_none_sends_no_temperature(server: FakeOpenAI) -> None:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client=client, model="m", temperature=None)
    server.add(GOOD)
    await judge.ask(request())
    await judge.aclose()
    assert "temperature" not in server.requests[0]


async def test_connect_builds_a_client_for_the_base_url(server: FakeOpenAI) -> None:
    judge = OpenAIJudge.connect("m", base_url=server.base_url, api_key="k", max_retries=0)
    server.add(GOOD)
    reply = await judge.ask(request())
    await judge.aclose()
    assert reply.answer.ok is True
    assert judge.max_retries == 0


def test_importing_the_metrics_does_not_import_openai() -> None:
    code = "import sys, tracebridge.metrics; print(json.dumps('openai' in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code],
        capture_output=True, text=True, check=True, timeout=60,
    )
    assert json.loads(out.stdout) is False


@pytest.mark.parametrize("part", ["instructions", "prompt"])
async def test_a_lone_surrogate_is_refused_before_anything_is_sent(
    server: FakeOpenAI, judge: OpenAIJudge, part: str
) -> None:
    texts = {"instructions": "Judge it.", "prompt": "<transcript/>"}
    texts[part] = "ab\udc80c"
    with pytest.raises(JudgeError) as raised:
        await judge.ask(JudgeRequest(answer=Answer, **texts))
    assert str(raised.value) == (
        f"the judge request was not sent: its {part} holds a lone surrogate U+DC80 at "
        "character 2, which UTF-8 cannot carry")
    assert (raised.value.usage, server.requests) == (Usage(), [])
