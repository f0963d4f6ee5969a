"""What a judge request costs: model prices (``Price``, ``parse_price``) and the estimate of
one request from what the judge would send (``estimate``). The rules are documented in
docs/evaluation_budget_cache.md; ``tracebridge.evaluation.budget`` re-exports ``Price``,
``parse_price``, ``Estimate`` and ``estimate``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pydantic import BaseModel

from ..metrics.judge import JudgeRequest, strict_json_schema

__all__ = [
    "CHARS_PER_TOKEN",
    "LITERAL_ALLOWANCE",
    "MESSAGE_OVERHEAD",
    "NUMBER_ALLOWANCE",
    "REPLY_OVERHEAD",
    "SCHEMA_OVERHEAD",
    "STRING_ALLOWANCE",
    "Estimate",
    "Price",
    "estimate",
    "estimate_chat",
    "exact",
    "parse_price",
]

CHARS_PER_TOKEN = 3
"""ASCII characters counted as one token (tokenizers average about 4 in English prose)."""
MESSAGE_OVERHEAD = 4
"""Tokens around each message (its role and separators)."""
REPLY_OVERHEAD = 3
"""Tokens that prime the reply."""
SCHEMA_OVERHEAD = 20
"""Tokens of the text a server wraps the answer's JSON schema in."""
STRING_ALLOWANCE = 200
"""Output tokens allowed for each string in the answer (a reason is a sentence or two)."""
NUMBER_ALLOWANCE = 8
"""Output tokens allowed for a number in the answer."""
LITERAL_ALLOWANCE = 2
"""Output tokens allowed for ``true``, ``false`` or ``null`` in the answer."""

_NUMBERED_LINE = re.compile(r"^\[\d+\] ", re.MULTILINE)


@dataclass(frozen=True)
class Price:
    """What a model costs, in dollars per million tokens."""

    input_per_million: float
    """Dollars per million input (prompt) tokens."""
    output_per_million: float
    """Dollars per million output (completion) tokens."""

    def __post_init__(self) -> None:
        for field, value in (
            ("input_per_million", self.input_per_million),
            ("output_per_million", self.output_per_million),
        ):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"a price is a finite number of dollars, 0 or more; "
                                 f"{field} is {value!r}")

    def cost(self, input_tokens: int, output_tokens: int) -> Fraction:
        """The exact cost of that many tokens, in dollars."""
        return (
            input_tokens * exact(self.input_per_million)
            + output_tokens * exact(self.output_per_million)
        ) / 1_000_000


def parse_price(text: str) -> tuple[str, Price]:
    """``"MODEL=INPUT,OUTPUT"`` (dollars per million tokens) as the model and its ``Price``.

    >>> parse_price("gpt-4o-mini=0.15,0.60")
    ('gpt-4o-mini', Price(input_per_million=0.15, output_per_million=0.6))
    """
    model, equals, numbers = text.rpartition("=")
    parts = numbers.split(",")
    usage = (
        "a price is MODEL=INPUT,OUTPUT in dollars per million input and output tokens "
        f"(e.g. gpt-4o-mini=0.15,0.60), got {text!r}"
    )
    if not equals or not model.strip() or len(parts) != 2:
        raise ValueError(usage)
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise ValueError(usage) from None
    if not all(math.isfinite(value) and value >= 0 for value in values):
        raise ValueError(f"{usage}: both prices must be finite and 0 or more")
    return model.strip(), Price(values[0], values[1])


@dataclass(frozen=True)
class Estimate:
    """What some judge requests are expected to cost at most."""

    requests: int
    """How many requests."""
    input_tokens: int
    """Estimated prompt tokens (see ``estimate``)."""
    output_tokens: int
    """Allowed completion tokens, from the answer's schema."""
    cost: float | None
    """Dollars for those tokens; None when the model has no price, or when they cost more
    dollars than a float holds (``overflow``)."""
    overflow: bool = False
    """Whether the model has a price and the tokens cost more dollars than a float holds (a
    price near ``1e308`` dollars per million tokens, a prompt of megabytes): no limit is that
    high, and the cost is None."""

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


def estimate(request: JudgeRequest[Any], model: str, price: Price | None = None) -> Estimate:
    """The estimate for sending ``request`` once to ``model`` (priced at ``price``).

    Input: the instructions, the prompt and the answer's JSON schema as the judge sends
    them, at one token per ``CHARS_PER_TOKEN`` ASCII characters and one per other character,
    plus the per-message overheads. Output: an allowance walked from the answer's schema
    (``STRING_ALLOWANCE`` per string, ``NUMBER_ALLOWANCE`` per number, ``LITERAL_ALLOWANCE``
    per boolean, the keys' own tokens, and one item per numbered transcript message in the
    prompt for each list). ``model`` names the model the estimate is for; it does not change
    the count. Without ``price`` the cost is None (unknown); more dollars than a float holds
    is None too, with ``overflow``.
    """
    messages = [
        {"role": "system", "content": request.instructions},
        {"role": "user", "content": request.prompt},
    ]
    return estimate_chat(messages, request.answer, price)


def estimate_chat(
    messages: Sequence[dict[str, str]], answer: type[BaseModel], price: Price | None
) -> Estimate:
    """The estimate for one request sending ``messages`` (a re-ask sends more than two)."""
    schema = strict_json_schema(answer)
    input_tokens = REPLY_OVERHEAD + SCHEMA_OVERHEAD + _text_tokens(
        json.dumps({"name": answer.__name__, "schema": schema})
    )
    items = 0
    for message in messages:
        input_tokens += MESSAGE_OVERHEAD + _text_tokens(message["role"])
        input_tokens += _text_tokens(message["content"])
        items += len(_NUMBERED_LINE.findall(message["content"]))
    output_tokens = REPLY_OVERHEAD + _allowance(schema, max(items, 1))
    if price is None:
        return Estimate(1, input_tokens, output_tokens, None)
    try:
        return Estimate(1, input_tokens, output_tokens,
                        float(price.cost(input_tokens, output_tokens)))
    except OverflowError:
        return Estimate(1, input_tokens, output_tokens, None, overflow=True)


def _text_tokens(text: str) -> int:
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def _allowance(schema: dict[str, Any], items: int) -> int:
    """Output tokens allowed for a JSON value of ``schema``; lists hold ``items`` items."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return max(_allowance(option, items) for option in options)
    if "enum" in schema:
        return max(_text_tokens(json.dumps(value)) for value in schema["enum"]) + 1
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]
        return max(_allowance({**schema, "type": one}, items) for one in kind)
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        return 2 + sum(
            _text_tokens(json.dumps(name)) + 2 + _allowance(value, items)
            for name, value in properties.items()
        )
    if kind == "array":
        return 2 + items * (1 + _allowance(schema.get("items", {}), items))
    if kind in ("integer", "number"):
        return NUMBER_ALLOWANCE
    if kind in ("boolean", "null"):
        return LITERAL_ALLOWANCE
    return STRING_ALLOWANCE  # a string, or a value the schema leaves open


def exact(value: float) -> Fraction:
    """``value`` as the decimal it was written as (0.1 is 1/10, not the nearest double)."""
    return Fraction(repr(value))

