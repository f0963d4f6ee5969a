"""Errors raised by tracebridge.

Hierarchy::

    Exception
    ├── TraceError                  the trace is wrong; carries code, index, path, source
    │     code: unknown_role | orphan_tool_result | unanswered_tool_call
    │           | duplicate_tool_call_id | empty_conversation | malformed_event
    │           | conflicting_fields | streaming_chunk | unserializable_value
    │           | not_representable | content_not_captured | truncated_trace
    │           | ambiguous_trace
    ├── ValueError
    │   └── FormatError             the caller asked for something that does not exist:
    │                               an unknown adapter name, or a trace whose format
    │                               cannot be detected (none or several formats match)
    └── ImportError
        └── MissingExtraError       an adapter's framework package is not installed

A ``TraceError`` is about the evidence (the trace); the other two are about the request.
``TraceError`` deliberately does not derive from ``ValueError``: pydantic wraps a
``ValueError`` raised inside a validator into its own ``ValidationError``, and a
``TraceError`` must reach the caller as itself.

Two ``unserializable_value`` refusals derive from ``ValueError`` too, on purpose: the one
``canonical_json`` raises (it stands where ``json.dumps`` would raise a ``ValueError`` or
``TypeError``), and the one a ``MetricResult``'s non-JSON ``details`` raise inside its
validator (so it reaches the caller as a ``ValidationError`` carrying the ``TraceError``,
like any other field's problem: the ``TraceError`` is that error's ``ctx["error"]``).
Pickling keeps an error's class, so they stay ``ValueError``s in another process.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

__all__ = [
    "CODES",
    "ErrorCode",
    "FormatError",
    "MissingExtraError",
    "TraceError",
    "short_repr",
    "with_article",
]

ErrorCode = Literal[
    "unknown_role",
    "orphan_tool_result",
    "unanswered_tool_call",
    "duplicate_tool_call_id",
    "empty_conversation",
    "malformed_event",
    "conflicting_fields",
    "streaming_chunk",
    "unserializable_value",
    "not_representable",
    "content_not_captured",
    "truncated_trace",
    "ambiguous_trace",
]

CODES: tuple[str, ...] = get_args(ErrorCode)

_REPR_LIMIT = 120


def short_repr(value: Any, limit: int = _REPR_LIMIT) -> str:
    """``repr`` of a found value, cut to ``limit`` characters so that an error message stays
    one readable line; a value nested too deep for ``repr`` is named, not shown."""
    try:
        text = repr(value)
    except RecursionError:
        return f"<a {type(value).__name__} nested too deep to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


_INITIAL_SAID_WITH_A_VOWEL = "AEFHILMNORSX"
"""Letters whose names start with a vowel (a, ee, eff, aitch, el, em, ...): an AIMessage,
an HTTP, an LLM, an SDK; not a URL, a JSON."""

_LOWERCASE_INITIALS = re.compile(r"[b-df-hj-np-tv-xz]+_")
"""A snake_case name whose first word has no vowel, said letter by letter: an mcp_call."""

_NUMBER = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+")
"""The number a noun starts with: ``8``, ``1800``, ``11,000``."""

_SILENT_H = ("heir", "honest", "honor", "honour", "hour")
"""Words said without their ``h``, which take ``an``: an hour, an honest."""

_ONE = re.compile(r"[Oo]n(?:e|ce)(?![a-z])")
"""``one`` and ``once``, said with a "w": a one, a one_of, a oneOf (not onerous)."""

_SAID_WITH_A_Y = ("eu", "uni", "uri", "url", "usa", "use", "usu", "utf", "uti", "uuid")
"""Starts of words said with a "y", which take ``a``: a euro, a unique, a url, a user, a usual,
a utility; any other ``u`` is said as a vowel: an unknown, an upload."""

_UN_BEFORE_I = ("unid", "unim", "unin")
"""``un-`` before an ``i`` is said as a vowel all the same: an unimplemented, an uninitialized."""


def with_article(noun: object) -> str:
    """``noun`` after its indefinite article, for error messages that name a kind found in
    a trace: ``an image``, ``a user``, ``an AIMessage``, ``a URL``, ``an hour``, ``a one``,
    ``an 8``, ``an 11``, ``a 110``, ``an 18000``."""
    text = str(noun)
    return f"{'an' if _said_with_a_vowel(text) else 'a'} {text}"


def _said_with_a_vowel(text: str) -> bool:
    """Whether ``text`` is said starting with a vowel sound."""
    number = _NUMBER.match(text)
    if number is not None:
        return _number_said_with_a_vowel(number.group().replace(",", ""))
    if text[:2].isupper() or _LOWERCASE_INITIALS.match(text):  # said letter by letter
        return text[0].upper() in _INITIAL_SAID_WITH_A_VOWEL
    word = text.lower()
    if word.startswith(_SILENT_H) or word.startswith(_UN_BEFORE_I):
        return True
    if _ONE.match(text) or word.startswith(_SAID_WITH_A_Y):
        return False
    return word[:1] in ("a", "e", "i", "o", "u")


def _number_said_with_a_vowel(digits: str) -> bool:
    """Whether a number is said from eight, eleven or eighteen: 8, 80, 800, 8000, 11, 11000,
    18, 18000; not 1, 110, 180 or 1800 (one hundred ..., one thousand ...)."""
    said_first = digits[: len(digits) % 3 or 3]  # what comes before "thousand", "million"
    return said_first.startswith("8") or said_first in ("11", "18")


class TraceError(Exception):
    """A trace that cannot be converted or validated without losing or inventing something.

    ``code`` is stable (tests and users match on it); ``index`` is the position of the
    offending element in the source trace (None when the problem has no single position);
    ``path`` is the field path inside the trace, e.g.
    ``messages[3].tool_calls[1].function.arguments``; ``source`` names the adapter.
    """

    code: ErrorCode
    detail: str
    index: int | None
    path: str | None
    source: str | None

    def __init__(
        self,
        code: ErrorCode,
        detail: str,
        *,
        index: int | None = None,
        path: str | None = None,
        source: str | None = None,
    ) -> None:
        if code not in CODES:
            raise ValueError(f"unknown TraceError code {code!r}; known codes: {', '.join(CODES)}")
        self.code = code
        self.detail = detail
        self.index = index
        self.path = path
        self.source = source
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path if self.path is not None else (
            f"messages[{self.index}]" if self.index is not None else "trace"
        )
        prefix = f"{self.source}: " if self.source else ""
        return f"{prefix}{where}: {self.detail} [{self.code}]"

    def __str__(self) -> str:
        return self._format()

    def __reduce__(self) -> tuple[Any, ...]:
        # the class too, so a subclass (one that is a ValueError as well) comes back as
        # itself; any other attribute (a note added to the error, a subclass's own) as state
        fields = (type(self), self.code, self.detail, self.index, self.path, self.source)
        others = {k: v for k, v in self.__dict__.items() if k not in _FIELDS}
        return (_rebuilt_as, fields, others) if others else (_rebuilt_as, fields)

    def relocated(
        self,
        *,
        index: int | None = None,
        path: str | None = None,
        source: str | None = None,
    ) -> TraceError:
        """A copy pointing at another place (an adapter maps typed positions back to its source)."""
        return TraceError(
            self.code,
            self.detail,
            index=self.index if index is None else index,
            path=self.path if path is None else path,
            source=self.source if source is None else source,
        )


_FIELDS = frozenset({"code", "detail", "index", "path", "source"})
"""The attributes ``TraceError.__init__`` sets, which pickling passes as its arguments."""


def _rebuilt_as(
    cls: type[TraceError],
    code: ErrorCode,
    detail: str,
    index: int | None,
    path: str | None,
    source: str | None,
) -> TraceError:
    """An unpickled ``TraceError`` of class ``cls``, made as ``TraceError`` makes itself: a
    subclass's own ``__init__`` may take other arguments, and its attributes come as state."""
    error = cls.__new__(cls)
    TraceError.__init__(error, code, detail, index=index, path=path, source=source)
    return error


def _rebuild(
    code: ErrorCode, detail: str, index: int | None, path: str | None, source: str | None
) -> TraceError:
    """An error pickled before pickling kept its class (always a plain ``TraceError``)."""
    return TraceError(code, detail, index=index, path=path, source=source)


class FormatError(ValueError):
    """An unknown adapter name, or a trace whose format cannot be told from its shape."""


class MissingExtraError(ImportError):
    """An adapter needs a framework package that is not installed."""
