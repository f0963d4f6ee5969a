"""OpenAIJudge against the real ``openai`` client and a scripted server on 127.0.0.1: token
counts read as the server sent them, every try counted when the last body is not JSON, and
a ``Retry-After`` HTTP date honoured by the judge's own (gated) retries."""

from __future__ import annotations

import email.utils
import json
from collections.abc import Iterator
from types import SimpleNamespace

import openai
import pytest
from judge_requests import GOOD, REQUEST, OpenGate, Verdict
from scripted_openai import ERROR_500, Scripted, Server, scripted_server

from tracebridge.metrics import JudgeError, OpenAIJudge, Usage
from tracebridge.metrics import judge as judge_module


def completion(usage: object) -> str:
    """A 200 body answering GOOD whose ``usage`` member is ``usage``, verbatim."""
    return json.dumps({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "judge-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": GOOD, "refusal": None},
            "finish_reason": "stop",
            "logprobs": None,
        }],
        "usage": usage,
    })


@pytest.fixture
def server() -> Iterator[Server]:
    with scripted_server() as state:
        yield state


def make_judge(server: Server, client_retries: int) -> OpenAIJudge:
    client = openai.AsyncOpenAI(
        base_url=server.base_url, api_key="test", max_retries=client_retries, timeout=10.0
    )
    return OpenAIJudge(client=client, model="judge-model", max_retries=0)


WITHOUT_USAGE = Usage(requests=1, requests_without_usage=1)


@pytest.mark.parametrize("gated", [False, True], ids=["ungated", "gated"])
@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": True, "completion_tokens": 20, "total_tokens": 120},
        {"prompt_tokens": "100", "completion_tokens": "20", "total_tokens": "120"},
        {"prompt_tokens": 100.0, "completion_tokens": 20.0, "total_tokens": 120.0},
        {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120.0},
    ],
    ids=["bool", "strings", "whole-floats", "one-float"],
)
async def test_a_count_that_is_not_a_json_integer_is_no_usage(
    server: Server, usage: dict[str, object], gated: bool
) -> None:
    server.script.append(Scripted(200, completion(usage)))
    judge = make_judge(server, client_retries=0)
    gate = OpenGate()
    try:
        reply = await judge.ask(REQUEST, gate=gate if gated else None)
    finally:
        await judge.aclose()
    assert reply.answer == Verdict(reason="fine", ok=True)
    assert reply.usage == WITHOUT_USAGE
    assert server.requests == 1
    assert gate.costs == ([WITHOUT_USAGE] if gated else [])


async def test_a_body_not_json_after_client_retries_counts_every_try(server: Server) -> None:
    retry_soon = Scripted(500, ERROR_500.body, {"retry-after-ms": "1"})  # the client waits 1 ms
    server.script.extend([retry_soon, retry_soon, Scripted(200, "<html>bad gateway</html>")])
    judge = make_judge(server, client_retries=2)
    try:
        with pytest.raises(JudgeError) as caught:
            await judge.ask(REQUEST)
    finally:
        await judge.aclose()
    assert server.requests == 3
    assert str(caught.value) == (
        "the judge request failed: JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    )
    assert caught.value.usage == Usage(requests=3, requests_without_usage=3)


NOW = 1_700_000_000.0  # the judge's clock in the Retry-After tests


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the judge asks for between gated tries (not slept), its clock at NOW."""
    asked: list[float] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(judge_module, "asyncio", SimpleNamespace(sleep=sleep))
    monkeypatch.setattr(judge_module, "time", SimpleNamespace(time=lambda: NOW), raising=False)
    return asked


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [
        (email.utils.formatdate(NOW + 4, usegmt=True), 4.0),
        (email.utils.formatdate(NOW + 60, usegmt=True), 60.0),
        ("Tue, 14 Nov 2023 22:13:50 +0000", 30.0),  # NOW + 30 s, as a numeric zone
    ],
    ids=["4s", "60s", "numeric-zone"],
)
async def test_a_gated_retry_waits_for_a_retry_after_date(
    server: Server, waits: list[float], retry_after: str, wait: float
) -> None:
    rate_limited = Scripted(429, '{"error": {"message": "rate limited"}}',
                            {"Retry-After": retry_after})
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    server.script.extend([rate_limited, Scripted(200, completion(usage))])
    judge = make_judge(server, client_retries=2)
    judge.first_retry_delay = 0.25
    gate = OpenGate()
    try:
        reply = await judge.ask(REQUEST, gate=gate)
    finally:
        await judge.aclose()
    assert waits == [wait]
    assert server.requests == 2
    # the 429 is the server's answer with no usage: one request, no tokens (not billed)
    assert reply.usage == Usage(
        requests=2, prompt_tokens=100, completion_tokens=20, total_tokens=120,
    )
    assert gate.costs == [Usage(requests=1), Usage(requests=1, prompt_tokens=100,
                                                   completion_tokens=20, total_tokens=120)]
