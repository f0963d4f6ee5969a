"""Judges: the ``Judge`` protocol and ``OpenAIJudge``, a Chat Completions client with
strict JSON-schema output.

A judge gets instructions, a prompt (holding the rendered transcript) and a pydantic
model describing the answer; it returns the parsed answer and the tokens it spent, or
raises ``JudgeError`` (which carries the tokens spent so far). ``openai`` is imported only
when an ``OpenAIJudge`` is built or asked, so ``import tracebridge.metrics`` stays light.

A ``RequestGate`` passed to ``OpenAIJudge.ask`` sees every request before it is sent (each
retry included) and what it cost; a budget uses it to refuse requests it cannot cover.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .._json import RepeatedKey, read_json
from .._optional import require
from ..errors import with_article
from .base import Usage, on_runner_loop

__all__ = [
    "Judge",
    "JudgeError",
    "JudgeReply",
    "JudgeRequest",
    "OpenAIJudge",
    "RequestGate",
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


class RequestGate(Protocol):
    """Consulted around each request a judge sends, every retry included.

    ``enter`` runs just before the request goes out and may stop it by raising ``JudgeError``
    (the judge adds the usage spent so far and raises it on, class unchanged); ``leave`` gets
    its ticket back with what that one request cost, whatever became of it (a request that
    failed or was cancelled: one request, tokens unknown; one the server refused with a
    client-error status and no usage, as a 429 is: one request, no tokens, not billed). A gate may
    also have a ``refused(ticket)`` method, called before ``leave`` for such an error reply,
    to count those apart.
    """

    async def enter(self, messages: Sequence[dict[str, str]], answer: type[BaseModel]) -> Any:
        """Allow the request about to send ``messages`` (answer shape ``answer``): a ticket."""
        ...

    def leave(self, ticket: Any, usage: Usage) -> None:
        """The request ``ticket`` was given for is over; it cost ``usage``."""
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
    is counted in ``Usage.requests``); they become a ``JudgeError``. A reply with a
    client-error status (a 429, a 400) is one request with no tokens (not billed; the usage its
    body reports, if any); a server error (5xx) or a request with no reply (a timeout, a
    connection cut) is one of unknown tokens (``requests_without_usage``), and so are the tries
    the client retried on its own, whose cause it does not tell.

    With a ``RequestGate`` (``ask(request, gate=...)``) every request passes the gate, so the
    client's own retries are turned off for it and the judge makes them itself: as many as the
    client's ``max_retries``, for the errors the client retries (connection errors, timeouts,
    408, 409, 429, 5xx, or as ``x-should-retry`` says), waiting as ``Retry-After`` asks (in
    seconds, milliseconds or as an HTTP date; up to 60 s) or else ``first_retry_delay`` seconds
    doubled each time (at most 8 s). A longer ``Retry-After`` does not stop a retry: the judge
    waits its own delay (the client would wait up to 120 s, and not retry past that).

    Requests are sent from the background loop ``score()`` runs on, whatever loop awaits
    ``ask`` (the client's pooled connections belong to one loop), so one judge serves
    ``score()`` and any number of ``asyncio.run`` calls; its client is its own.

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
        if type(max_retries) is not int:
            raise TypeError(f"max_retries must be a whole number (an int), got {max_retries!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        _refuse_sync_client(client)
        self.client = client
        """An ``openai.AsyncOpenAI`` (or a client with the same ``chat.completions``)."""
        self.model = model
        self.temperature = temperature
        """Sent with every request; None leaves it to the server (some models refuse it)."""
        self.max_retries = max_retries

    first_retry_delay: float = 0.5
    """Seconds before the first HTTP retry the judge makes itself (gated requests only)."""

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
        return f"{self.model} @ {_endpoint(self.client) or '<unknown endpoint>'}"

    @property
    def settings(self) -> dict[str, Any]:
        """Everything sent with a request that can change the answer, besides the request
        itself: the endpoint, the model, the sampling options and the output format."""
        return {
            "judge": type(self).__name__,
            "base_url": _endpoint(self.client),
            "model": self.model,
            **self._options(),
            "response_format": "json_schema (strict)",
        }

    def _options(self) -> dict[str, Any]:
        """The sampling options every request carries."""
        return {} if self.temperature is None else {"temperature": self.temperature}

    async def ask(
        self, request: JudgeRequest[M], gate: RequestGate | None = None
    ) -> JudgeReply[M]:
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
        _check_sendable(request)
        options = self._options()
        usage = Usage()
        problem = ""
        for _attempt in range(1 + self.max_retries):
            body = {
                "model": self.model,
                "messages": messages,
                "response_format": response_format,
                **options,
            }
            try:
                if gate is None:
                    response, spent = await self._send(body)
                else:
                    response, spent = await self._send_through(gate, request.answer, body)
            except JudgeError as exc:
                exc.usage = usage + exc.usage
                raise
            usage += spent
            content, problem = _content_of(response, usage)
            if content is not None:
                try:
                    _refuse_repeated_keys(content)
                    # strict: JSON's own types only ("no" or 1 is not a boolean, true not
                    # an index), as the schema sent asks
                    answer = request.answer.model_validate_json(content, strict=True)
                    if request.check is not None:
                        request.check(answer)
                except ValueError as exc:
                    problem = _describe_invalid(exc)
                else:
                    return JudgeReply(answer=answer, usage=usage)
            # what is echoed back must be sendable: a lone surrogate in the reply (a JSON
            # escape such as \ud800) cannot go out as UTF-8, so it is sent back as U+FFFD
            messages = [
                *messages,
                {"role": "assistant", "content": _sendable(content or "")},
                {
                    "role": "user",
                    "content": f"That answer is not valid: {_sendable(problem)}. "
                    "Answer again with JSON that follows the schema exactly.",
                },
            ]
        raise JudgeError(
            f"the judge gave no valid answer in {1 + self.max_retries} attempts; "
            f"last problem: {problem}",
            usage,
        )

    async def _send(self, body: dict[str, Any]) -> tuple[Any, Usage]:
        """The completion and its usage, the client's own retries counted."""
        openai = require("openai", adapter="OpenAI judge", extra="openai", package="openai")
        try:
            return await self._create(self.client, body)
        except UnicodeEncodeError as exc:  # the body could not be written: nothing was sent
            raise _not_sent(exc) from exc
        except (openai.APIError, ValueError, RecursionError) as exc:
            # ValueError, RecursionError: a body that is not JSON at all
            # (json.JSONDecodeError) or nested too deep to read, from a client without
            # ``with_raw_response`` (``_create`` counts the real client's).
            # The tries the client retried on its own failed for reasons it does not tell:
            # their cost is unknown.
            before = _retries_before(exc)
            last = _failure_cost(openai, exc)[0]
            spent = Usage(requests=before, requests_without_usage=before) + last
            raise _request_failed(exc, spent) from exc

    async def _send_through(
        self, gate: RequestGate, answer: type[BaseModel], body: dict[str, Any]
    ) -> tuple[Any, Usage]:
        """The completion and its usage, each try (retries included) let through by ``gate``."""
        openai = require("openai", adapter="OpenAI judge", extra="openai", package="openai")
        with_options = getattr(self.client, "with_options", None)
        client = self.client if with_options is None else with_options(max_retries=0)
        retries = getattr(self.client, "max_retries", 0) if with_options is not None else 0
        usage = Usage()
        for attempt in range(1 + retries):
            try:
                ticket = await gate.enter(body["messages"], answer)
            except JudgeError as exc:
                exc.usage = usage + exc.usage
                raise
            cost = Usage(requests=1, requests_without_usage=1)  # unless a reply says otherwise
            try:
                response, cost = await self._create(client, body)
            except JudgeError as exc:  # a reply that is not JSON: not retried
                cost = exc.usage
                exc.usage = usage + cost
                raise
            except UnicodeEncodeError as exc:  # the body could not be written: nothing sent
                cost = Usage()
                raise _not_sent(exc, usage) from exc
            except (openai.APIError, ValueError, RecursionError) as exc:
                cost, unbilled = _failure_cost(openai, exc)
                if unbilled:
                    _tell_refused(gate, ticket)
                usage += cost
                if attempt == retries or not _retried(openai, exc):
                    raise _request_failed(exc, usage) from exc
                delay = _retry_after(exc)
            else:
                return response, usage + cost
            finally:
                gate.leave(ticket, cost)
            await asyncio.sleep(
                min(self.first_retry_delay * 2**attempt, 8.0) if delay is None else delay
            )
        raise AssertionError("unreachable: the last try returns or raises")

    async def _create(self, client: Any, request: dict[str, Any]) -> tuple[Any, Usage]:
        """The completion and what it cost, sent from the loop ``score()`` runs on (see
        ``_create_here``), whatever loop awaits it."""
        return await on_runner_loop(self._create_here(client, request))

    async def _create_here(self, client: Any, request: dict[str, Any]) -> tuple[Any, Usage]:
        """The completion and what it cost, the tries the client retried before it included.

        The client retries some HTTP errors and timeouts on its own; each of those tries is
        a request sent, and is counted (also when the last reply is not JSON: a
        ``JudgeError`` then carries them all). The token counts are read from the reply's
        body as sent: the client's model coerces them (``"100"``, ``true`` and ``100.0``
        would read as 100, 1 and 100).
        """
        completions = client.chat.completions
        raw_api = getattr(completions, "with_raw_response", None)
        if raw_api is None:  # a client with only ``chat.completions.create``
            response = await completions.create(**request)
            _refuse_not_a_completion(response, with_article(type(response).__name__), Usage())
            return response, _reply_usage(getattr(response, "usage", None), Usage())
        raw = await raw_api.create(**request)
        retries_taken = getattr(raw, "retries_taken", 0)
        retried = retries_taken if isinstance(retries_taken, int) else 0
        before = Usage(requests=retried, requests_without_usage=retried)
        try:
            response = raw.parse()
            reported = _sent_usage(raw)
        except (ValueError, RecursionError) as exc:  # the body is not JSON
            # (json.JSONDecodeError), or JSON nested too deep to read
            sent = before + Usage(requests=1, requests_without_usage=1)
            raise _request_failed(exc, sent) from exc
        _refuse_not_a_completion(response, _body_kind(raw), before)
        return response, _reply_usage(reported, before)

    async def aclose(self) -> None:
        """Close the client's connections (on the loop that opened them); a client with no
        ``close`` has none to close."""
        close = getattr(self.client, "close", None)
        if close is not None:
            await on_runner_loop(close())

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.name!r})"


def _refuse_sync_client(client: Any) -> None:
    """A ``TypeError`` for a synchronous ``openai.OpenAI`` client, whose requests cannot be
    awaited. (A client of that class means ``openai`` is imported already: nothing is
    imported here.)"""
    openai = sys.modules.get("openai")
    sync_client = getattr(openai, "OpenAI", None)
    if isinstance(sync_client, type) and isinstance(client, sync_client):
        raise TypeError(
            f"client must be an openai.AsyncOpenAI (or a client with the same async "
            f"chat.completions), got a synchronous openai.{type(client).__name__}"
        )


def _endpoint(client: Any) -> str | None:
    """The client's ``base_url`` as text, or None when it has none (a client of one's own
    with only ``chat.completions``)."""
    base_url = getattr(client, "base_url", None)
    return None if base_url is None else str(base_url)


_NOT_A_COMPLETION = (str, bytes, bytearray, list, int, float)
"""What a client gives for a reply body that is not a JSON object: text (a body that is
not JSON, an HTML page from a proxy, an event stream), a JSON array or number."""


def _refuse_not_a_completion(response: Any, came: str, before: Usage) -> None:
    """A failed request (``JudgeError``, not retried) when the reply is not a completion
    object (``came`` says what came back): nothing in it is an answer to send back. It cost
    one request of unknown tokens, after the ``before`` ones the client retried."""
    if response is not None and not isinstance(response, _NOT_A_COMPLETION):
        return
    problem = ValueError(
        f"the reply is not a chat completion object: {came}, {_preview(response)}"
    )
    raise _request_failed(problem, before + Usage(requests=1, requests_without_usage=1))


def _body_kind(raw: Any) -> str:
    """A raw reply's body named by its media type: ``a text/html body``."""
    headers = getattr(getattr(raw, "http_response", None), "headers", None)
    value = None if headers is None else headers.get("content-type")
    media_type = value.split(";")[0].strip() if isinstance(value, str) else ""
    return with_article(f"{media_type} body") if media_type else "a body with no content-type"


def _preview(value: Any) -> str:
    """``repr(value)``, cut at 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "\u2026"


def _sent_usage(raw: Any) -> Any:
    """The ``usage`` member of a raw reply's JSON body as the server sent it, or None (a
    body nested too deep to read raises ``RecursionError``)."""
    try:
        body = raw.http_response.json()
    except ValueError:  # not JSON (the client parsed it as text)
        return None
    return body.get("usage") if isinstance(body, dict) else None


MAX_TOKEN_COUNT = 2**53
"""The most tokens a reply's ``usage`` may count in any field (9,007,199,254,740,992): no
request comes near it, and past it a count is no longer a float exactly, so a cost made of
it could not be written."""


def _reply_usage(reported: Any, before: Usage) -> Usage:
    """What a completion cost (``_usage_of``), after the ``before`` tries the client retried.
    A count past ``MAX_TOKEN_COUNT`` makes the reply unusable: a failed request
    (``JudgeError``, not retried) of unknown tokens, as a reply that is no completion is."""
    too_large = _count_too_large(_counts_of(reported))
    if too_large is not None:
        failed = before + Usage(requests=1, requests_without_usage=1)
        raise _request_failed(ValueError(too_large), failed)
    return _usage_of(reported) + before


def _count_too_large(counts: list[tuple[str, Any]]) -> str | None:
    """Why a reply's token counts cannot be believed (one past ``MAX_TOKEN_COUNT``), or None."""
    for field, count in counts:
        if type(count) is int and count > MAX_TOKEN_COUNT:
            shown = f"{count:,}" if count < 10**30 else "a number of more than 30 digits"
            return (f"the reply's usage.{field} is {shown}, more than any request uses "
                    f"(at most {MAX_TOKEN_COUNT:,} tokens are counted)")
    return None


def _counts_of(reported: Any) -> list[tuple[str, Any]]:
    """Each usage field and its count in ``reported`` (None where it has none)."""
    if isinstance(reported, dict):
        return [(field, reported.get(field)) for field in _USAGE_FIELDS]
    return [(field, getattr(reported, field, None)) for field in _USAGE_FIELDS]


def _usage_of(reported: Any) -> Usage:
    """What one reply says it cost, given its ``usage`` (a JSON object as sent, or the
    client's model of it); a count that is not a whole number from 0 to ``MAX_TOKEN_COUNT``
    (a bool, a float, a string, a negative number, one too large) is no usage at all: the
    request's tokens are unknown."""
    counts = [count for _, count in _counts_of(reported)]
    if not all(type(count) is int and 0 <= count <= MAX_TOKEN_COUNT for count in counts):
        return Usage(requests=1, requests_without_usage=1)
    prompt, completion, total = counts
    return Usage(
        requests=1, prompt_tokens=prompt, completion_tokens=completion, total_tokens=total
    )


_USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _check_sendable(request: JudgeRequest[Any]) -> None:
    """Refuse, before anything is sent, a prompt that UTF-8 cannot carry.

    A transcript read from JSON may hold a lone surrogate (an escaped half of a pair that a
    producer cut). The request body goes out as UTF-8, which has no spelling for it; rather
    than send a prompt with the character changed, the case errors and says where.
    """
    for part, text in (("instructions", request.instructions), ("prompt", request.prompt)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JudgeError(
                f"the judge request was not sent: its {part} holds a lone surrogate "
                f"U+{ord(text[exc.start]):04X} at character {exc.start}, which UTF-8 "
                "cannot carry",
                Usage(),
            ) from None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _sendable(text: str) -> str:
    """``text`` with each lone surrogate (all a ``str`` can hold of the range U+D800 to U+DFFF)
    replaced by U+FFFD, so UTF-8 can carry it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _not_sent(exc: UnicodeEncodeError, usage: Usage | None = None) -> JudgeError:
    """A request whose body could not be encoded: it never left, so it costs nothing."""
    return JudgeError(
        f"the judge request was not sent: {type(exc).__name__}: {exc}",
        Usage() if usage is None else usage,
    )


def _failure_cost(openai: Any, exc: Exception) -> tuple[Usage, bool]:
    """What a request that raised ``exc`` cost, and whether it was an error reply not billed.

    A reply with a client-error status (``APIStatusError`` 4xx: a 429 rate limit, a 400) is
    the server refusing the request before any completion: the usage its body reports when it
    reports one, else one request with no tokens, not billed. A server error (5xx: the request
    may have been worked on, a gateway's 504 after the model answered), or a request that got
    no reply (a connection cut, a timeout, a body the client could not read), cost an unknown
    amount.
    """
    if not isinstance(exc, openai.APIStatusError) or not 400 <= exc.status_code < 500:
        return Usage(requests=1, requests_without_usage=1), False
    reported = _error_body_usage(exc.response)
    if reported is None:
        return Usage(requests=1), True
    return _usage_of(reported), False


def _error_body_usage(response: Any) -> Any:
    """The ``usage`` member of an error reply's JSON body, or None (no such member, or a
    body that is not a JSON object: an HTML page from a proxy, JSON nested too deep to read)."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return None
    return body.get("usage") if isinstance(body, dict) else None


def _tell_refused(gate: RequestGate, ticket: Any) -> None:
    """Tell a gate that counts them that the request ``ticket`` was given for got an error
    reply with no usage (``RequestGate``)."""
    refused = getattr(gate, "refused", None)
    if callable(refused):
        refused(ticket)


def _request_failed(exc: Exception, usage: Usage) -> JudgeError:
    return JudgeError(f"the judge request failed: {type(exc).__name__}: {exc}", usage)


def _retried(openai: Any, exc: Exception) -> bool:
    """Whether the judge retries a gated request after ``exc``: for the errors the ``openai``
    client retries (its rules, as of 2.x), whatever ``Retry-After`` says. (The client itself
    does not retry when ``Retry-After`` asks for more than 120 s; the judge then retries after
    its own delay, as ``_retry_after`` gives it none.)"""
    if isinstance(exc, openai.APIConnectionError):  # timeouts included
        return True
    if not isinstance(exc, openai.APIStatusError):
        return False
    said = exc.response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return bool(said == "true")
    status = exc.status_code
    return status in (408, 409, 429) or status >= 500


def _retry_after(exc: Exception) -> float | None:
    """The wait a server asked for, if it is more than 0 and at most 60 s: ``retry-after-ms``,
    else ``Retry-After`` in seconds or as an HTTP date (read as the ``openai`` client reads it).
    """
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds: float | None = float(value) * scale
        except ValueError:
            seconds = _seconds_until(value) if header == "retry-after" else None
        if seconds is not None and 0 < seconds <= 60:
            return seconds
    return None


def _seconds_until(http_date: str) -> float | None:
    """Seconds from now until an HTTP date (``Wed, 21 Oct 2015 07:28:00 GMT``), or None."""
    try:
        parsed = email.utils.parsedate_tz(http_date)
        if parsed is None:
            return None
        moment = email.utils.mktime_tz(parsed)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return float(moment - time.time())


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


def _refuse_repeated_keys(content: str) -> None:
    """A ``ValueError`` when an object of the answer has a key twice: which value was meant
    is not known (a parser keeps the last, and false then true would read as true)."""
    try:
        read_json(content)
    except RepeatedKey as exc:
        raise ValueError(f"the answer has the key {exc.key!r} twice") from None
    except RecursionError:
        raise ValueError("the answer is nested too deeply to read") from None
    except json.JSONDecodeError:
        return  # not JSON: the answer's own validation says so


def _describe_invalid(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "the answer"
            problems.append(f"{where}: {error['msg']}")
        return "; ".join(problems)
    return str(exc)
