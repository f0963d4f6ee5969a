"""Shared test setup: hypothesis profiles (CI runs derandomized); a local fake OpenAI server
(``server``) and a judge asking it (``judge``), which a test file may define otherwise."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import openai
import pytest
from fake_openai_server import FakeOpenAI, serve
from hypothesis import HealthCheck, settings

from tracebridge.metrics import OpenAIJudge

# CI runs derandomized (which also means no example database). Hypothesis 6.170 still draws,
# now and then, literal constants it collects from the loaded modules of the package's own
# source, and no setting or environment variable turns that off: the examples a property
# draws can change with the source and with which test modules were loaded. So a mutation a
# law must check is never left to a draw (test_adapter_laws.py runs each named mutation of
# each format as its own case).
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "thorough",  # HYPOTHESIS_PROFILE=thorough pytest ...: a long hunt before a release
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    """A fake OpenAI server on 127.0.0.1, shut down after the test."""
    yield from serve()


@pytest.fixture
async def judge(server: FakeOpenAI) -> AsyncIterator[OpenAIJudge]:
    """A judge asking ``server``: no client retries, a 5 s timeout."""
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0,
                                timeout=5.0)
    judge = OpenAIJudge(client=client, model="judge-model")
    yield judge
    await judge.aclose()
