"""Judges: the ``Judge`` protocol and ``OpenAIJudge``, a Chat Completions client with
strict JSON-schema output.

A judge gets instructions, a prompt (holding the rendered transcript) and a pydantic
model describing the answer; it returns the parsed answer and the tokens it spent, or
raises ``JudgeError`` (which carries the tokens spent so far). ``openai`` is imported only
when an ``OpenAIJudge`` is built or asked, so ``import tracebridge.metrics`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .._optional import require
from .base import Usage

__all__ = [
    "Judge",
    "JudgeError",
    "JudgeReply",
    "JudgeRequest",
    "OpenAIJudge",
    "strict_json_schema",
]

M = TypeVar("M", bound=BaseModel)


class JudgeError(Exception):
    """The judge gave no usable answer (HTTP error, timeout, refusal, invalid output)."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage
        """Tokens spent before the failure."""


@dataclass(frozen=True)
class JudgeRequest(Generic[M]):
    """What a metric asks a judge."""

    instructions: str
    """The task (sent as the system message)."""
    prompt: str
    """The material to judge, transcript included (sent as the user message)."""
    answer: type[M]
    """The answer's shape; the judge must return an instance of it."""
    check: Callable[[M], None] | None = None
    """Extra checks on a parsed answer; a ``ValueError`` makes the answer invalid (retried)."""


@dataclass(frozen=True)
class JudgeReply(Generic[M]):
    """A judge's parsed answer and what it cost."""

    answer: M
    usage: Usage


class Judge(Protocol):
    """Anything that answers a ``JudgeRequest`` with a ``JudgeReply`` or a ``JudgeError``."""

    @property
    def name(self) -> str:
        """The judge's identity, stored in every result it produced (model and endpoint)."""
        ...

    async def ask(self, request: JudgeRequest[M]) -> JudgeReply[M]:
        """The parsed answer; raises ``JudgeError`` when there is none."""
        ...


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form strict structured output accepts.

    References are inlined, every object lists all its properties as required and forbids
    others, and ``default``/``title`` keywords are dropped.
    """
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def strict(node: Any) -> Any:
        if isinstance(node, list):
            return [strict(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = definitions[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return strict(merged)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("default", "title"):
                continue
            if key == "properties":
                out[key] = {name: strict(sub) for name, sub in value.items()}
            else:
                out[key] = strict(value)
        if out.get("type") == "object":
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out

    result: dict[str, Any] = strict(schema)
    return result


class OpenAIJudge:
    """A judge behind any OpenAI-compatible Chat Completions endpoint.

    It asks for strict JSON-schema output built from the answer model, parses it, and on
    invalid output asks again (at most ``max_retries`` more times), telling the model what
    was wrong. Token usage is summed over every request. HTTP errors and timeouts are
    not retried here (the client's own ``max_retries`` covers those, and each of its tries
    is counted in ``Usage.requests``); they become a ``JudgeError``.

    >>> import openai  # doctest: +SKIP
    >>> judge = OpenAIJudge(  # doctest: +SKIP
    ...     client=openai.AsyncOpenAI(base_url="http://localhost:8000/v1", api_key="-"),
    ...     model="qwen2.5-7b-instruct",
    ... )
    """

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        temperature: float | None = 0,
        max_retries: int = 2,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.client = client
        """An ``openai.AsyncOpenAI`` (or a client with the same ``chat.completions``)."""
        self.model = model
        self.temperature = temperature
        """Sent with every request; None leaves it to the server (some models refuse it)."""
        self.max_retries = max_retries

    @classmethod
    def connect(
        cls,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        **options: Any,
    ) -> OpenAIJudge:
        """A judge with a new ``openai.AsyncOpenAI`` client (API key from OPENAI_API_KEY)."""
        openai = require("openai", adapter="OpenAI judge", extra="openai", package="openai")
        client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout)
        return cls(client, model, **options)

    @property
    def name(self) -> str:
        return f"{self.model} @ {self.client.base_url}"

    async def ask(self, request: JudgeRequest[M]) -> JudgeReply[M]:
        openai = require("openai", adapter="OpenAI judge", extra="openai", package="openai")
        messages: list[dict[str, str]] = [
            {"role": "system", "content": request.instructions},
            {"role": "user", "content": request.prompt},
        ]
        response_format = {
            "type": "json_schema",
            "json_schema": {
                "name": request.answer.__name__,
                "schema": strict_json_schema(request.answer),
                "strict": True,
            },
        }
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        usage = Usage()
        problem = ""
        for _attempt in range(1 + self.max_retries):
            try:
                response, retried = await self._create(
                    model=self.model,
                    messages=messages,
                    response_format=response_format,
                    **options,
                )
            except (openai.APIError, ValueError) as exc:
                # ValueError: a body that is not JSON at all (json.JSONDecodeError)
                sent = 1 + _retries_before(exc)
                usage += Usage(requests=sent, requests_without_usage=sent)
                raise JudgeError(
                    f"the judge request failed: {type(exc).__name__}: {exc}", usage
                ) from exc
            usage += _usage_of(response) + Usage(requests=retried, requests_without_usage=retried)
            content, problem = _content_of(response, usage)
            if content is not None:
                try:
                    answer = request.answer.model_validate_json(content)
                    if request.check is not None:
                        request.check(answer)
                except ValueError as exc:
                    problem = _describe_invalid(exc)
                else:
                    return JudgeReply(answer=answer, usage=usage)
            messages.append({"role": "assistant", "content": content or ""})
            messages.append(
                {
                    "role": "user",
                    "content": f"That answer is not valid: {problem}. "
                    "Answer again with JSON that follows the schema exactly.",
                }
            )
        raise JudgeError(
            f"the judge gave no valid answer in {1 + self.max_retries} attempts; "
            f"last problem: {problem}",
            usage,
        )

    async def _create(self, **request: Any) -> tuple[Any, int]:
        """The completion, and how many failed tries the client retried before it.

        The client retries some HTTP errors and timeouts on its own; each of those tries
        is a request sent, and is counted.
        """
        completions = self.client.chat.completions
        raw_api = getattr(completions, "with_raw_response", None)
        if raw_api is None:  # a client with only ``chat.completions.create``
            return await completions.create(**request), 0
        raw = await raw_api.create(**request)
        retried = getattr(raw, "retries_taken", 0)
        return raw.parse(), retried if isinstance(retried, int) else 0

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.close()

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.name!r})"


def _usage_of(response: Any) -> Usage:
    reported = getattr(response, "usage", None)
    counts = [getattr(reported, field, None) for field in _USAGE_FIELDS]
    if not all(isinstance(count, int) for count in counts):
        return Usage(requests=1, requests_without_usage=1)
    prompt, completion, total = counts
    return Usage(
        requests=1, prompt_tokens=prompt, completion_tokens=completion, total_tokens=total
    )


_USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _retries_before(exc: Exception) -> int:
    """How many tries the client made before the one that failed for good."""
    request = getattr(exc, "request", None)
    count = getattr(request, "headers", {}).get("x-stainless-retry-count", "0")
    return int(count) if isinstance(count, str) and count.isdigit() else 0


def _content_of(response: Any, usage: Usage) -> tuple[str | None, str]:
    """The reply text, or None and what is wrong with the reply.

    The client does not validate replies, so a server that is only roughly compatible
    can send any shape; each step is checked rather than assumed.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return None, "the reply has no choices"
    message = getattr(choices[0], "message", None)
    if message is None:
        return None, "the reply's first choice has no message"
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise JudgeError(f"the judge refused to answer: {refusal}", usage)
    if getattr(choices[0], "finish_reason", None) == "length":
        return None, "the reply was cut off at the token limit"
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content:
        return None, "the reply has no text content"
    return content, ""


def _describe_invalid(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "the answer"
            problems.append(f"{where}: {error['msg']}")
        return "; ".join(problems)
    return str(exc)
