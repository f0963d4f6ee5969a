"""Dollar amounts in one-line messages: a limit as it was given, and the amounts beside it with
the digits that keep them apart from it and from each other."""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from itertools import combinations

from ._estimate import exact

__all__ = ["dollars", "finite"]

_FEWEST, _MOST = 4, 40
"""Significant digits of an amount: 4 at least; more while two numbers that differ would read
the same or in the wrong order."""


def dollars(limit: float, *amounts: Fraction | float) -> tuple[str, ...]:
    """``limit`` as it was given, then each of ``amounts``, in dollars. An amount has as many
    significant digits (4 at least) as it takes for every two of the numbers to read in the
    order they are in: one that differs from the limit never reads as the limit, and one
    equal to it reads as it.

    >>> dollars(0.0015399, 0.00154)
    ('$0.0015399', '$0.00154')
    >>> dollars(0.0066369, Fraction(6637, 10**6), 0.0066369)
    ('$0.0066369', '$0.006637', '$0.0066369')
    """
    values = [exact(limit), *(_exact(amount) for amount in amounts)]
    given = _plain(Decimal(repr(limit)))
    shown = [given]
    for digits in range(_FEWEST, _MOST + 1):
        shown = [given, *(given if value == values[0] else _rounded(value, digits)
                          for value in values[1:])]
        if _in_order(values, [Fraction(text) for text in shown]):
            break
    return tuple(f"${text}" for text in shown)


def finite(amount: Fraction) -> float | None:
    """``amount`` as a float, or None when it is past what a float holds (a price of
    ``1e300`` dollars per million tokens): such a cost cannot be written as a number."""
    try:
        return float(amount)
    except OverflowError:
        return None


def _exact(amount: Fraction | float) -> Fraction:
    return amount if isinstance(amount, Fraction) else exact(amount)


def _rounded(value: Fraction, digits: int) -> str:
    with localcontext() as context:
        context.prec = digits
        return _plain(Decimal(value.numerator) / Decimal(value.denominator))


def _plain(value: Decimal) -> str:
    """``value`` written out without an exponent or trailing zeros (``0.00003``, ``2``;
    ``-0`` is ``0``)."""
    text = format(value.copy_abs() if value.is_zero() else value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _in_order(values: list[Fraction], shown: list[Fraction]) -> bool:
    """Whether every two of ``shown`` compare as the ``values`` they stand for do."""
    return all((a > b) - (a < b) == (c > d) - (c < d)
               for (a, c), (b, d) in combinations(zip(values, shown, strict=True), 2))
