"""The calls of one reply that have no id, and the results that answer them.

A model may give calls without an id (a ``ToolCallBlock`` with ``tool_call_id=None``).
``FunctionAgent`` names such a call ``""`` wherever it names it, runs a reply's calls at
once, and streams each ``ToolCallResult`` when its tool finishes: the results of calls
without an id come in the order their tools finished, each naming its call by its tool name
and arguments alone. A result answers the first call of the reply without an id, not
answered yet, that it agrees with (``IdlessCalls.answer``). The typed conversation pairs a
result without an id with the first call not answered yet, so each such result is put after
the results of the calls before its own and before those of the calls after it
(``IdlessCalls.slot``), whatever order the tools finished in.

Memory has no more than the order: ``FunctionAgent`` writes those results there as it
gathers them, in the order the tools finished, naming no call (``{"tool_call_id": ""}``).
Two or more of them after one reply pair with its calls in no way the history tells, so a
history holding them is refused (``check_gathered``); the run's events tell it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

from tracebridge import AIMessage, Message, ToolCall, ToolMessage, TraceError

from ._blocks import NAME

Agrees = Callable[[ToolCall], bool]
"""Whether an event's copy of a call (its tool name and arguments) is that call."""


class IdlessCalls:
    """The calls of the last reply read, looked up by their place, and which of those
    without an id the results read answer. Built once per reply; each lookup in the usual
    case (events in call order) takes one step."""

    __slots__ = ("answered", "calls", "empty_id", "idless", "next_named", "open_from",
                 "places", "read")

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = calls
        self.idless: list[int] | None = None
        """The places of the calls without an id (made when first asked)."""
        self.empty_id = False  # whether a call's id is "" (then "" names it): with ``idless``
        self.places: dict[int, int] | None = None
        """Each call's place, by ``id(call)`` (made when first asked)."""
        self.answered: set[int] = set()  # the places of the id-less calls answered
        self.open_from = 0  # in ``idless``: no call before it is unanswered
        self.next_named = 0  # in ``idless``: the call the next ToolCall event should name
        self.read: list[tuple[int, int]] = []
        """The call place and message position of each result of an id-less call read, in
        the order of their calls (which is their order in the messages)."""

    def without_id(self) -> list[int]:
        if self.idless is None:
            self.idless = [k for k, call in enumerate(self.calls) if call.id is None]
            self.empty_id = any(call.id == "" for call in self.calls)
        return self.idless

    def names_empty_id(self) -> bool:
        """Whether a call has the id ``""``: then ``""`` names it, not an id-less call."""
        self.without_id()
        return self.empty_id

    def place(self, call: ToolCall) -> int:
        """Where ``call`` (one of ``calls``, the object itself) is among them."""
        if self.places is None:
            self.places = {id(mine): k for k, mine in enumerate(self.calls)}
        return self.places[id(call)]

    def named(self, agrees: Agrees) -> ToolCall | None:
        """The id-less call a ToolCall event or a selection naming ``""`` names: the one
        after the last so named when it agrees (ToolCall events come in call order), else
        the first it agrees with, else the first (to be told it disagrees); None when every
        call has an id."""
        idless, calls = self.without_id(), self.calls
        if not idless:
            return None
        n = self.next_named
        if n < len(idless) and agrees(calls[idless[n]]):
            self.next_named = n + 1
            return calls[idless[n]]
        for n, k in enumerate(idless):
            if agrees(calls[k]):
                self.next_named = n + 1
                return calls[k]
        return calls[idless[0]]

    def answer(self, agrees: Agrees) -> tuple[ToolCall, int | None] | None:
        """The id-less call a result naming ``""`` answers, and its place: the first not
        answered yet that it agrees with, now answered; else the first not answered yet and
        None (to be told it disagrees); None when none is left (the rules refuse it)."""
        idless, answered, calls = self.without_id(), self.answered, self.calls
        n = self.open_from
        while n < len(idless) and idless[n] in answered:
            n += 1
        self.open_from = n
        for k in idless[n:]:
            if k not in answered and agrees(calls[k]):
                answered.add(k)
                return calls[k], k
        return (calls[idless[n]], None) if n < len(idless) else None

    def slot(self, place: int | None) -> int | None:
        """Where the result of call ``place`` goes among the messages: before the first
        result of an id-less call after it read so far (the results of the calls before an
        id-less call must come before its own); None: after the last message."""
        read = self.read
        if place is None or not read or read[-1][0] < place:
            return None
        return read[bisect_right(read, (place, -1))][1]

    def settled(self, place: int, position: int) -> None:
        """The result of id-less call ``place`` is at message ``position`` (where ``slot``
        said); the results at or after it moved one on."""
        read = self.read
        n = bisect_right(read, (place, -1))
        for m in range(n, len(read)):
            read[m] = (read[m][0], read[m][1] + 1)
        read.insert(n, (place, position))

    def moved_on(self, position: int) -> None:
        """A result of a call with an id was put at message ``position``: those at or after
        it moved one on."""
        read = self.read
        for m in range(len(read)):
            if read[m][1] >= position:
                read[m] = (read[m][0], read[m][1] + 1)


def check_gathered(messages: list[Message]) -> None:
    """Refuse two or more results after one reply that are tool messages as
    ``FunctionAgent`` writes the results of calls without an id (``{"tool_call_id": ""}``,
    no tool name): it writes them in the order the tools finished, so their order does not
    say which call each answers."""
    opener, first = 0, -1
    for i, message in enumerate(messages):
        if type(message) is not ToolMessage:
            if type(message) is AIMessage:
                opener = i
            first = -1  # (a block of results ends here)
            continue
        if message.tool_call_id is not None or message.name is not None or not _gathered(
                message):
            continue
        if first < 0:
            first = i
            continue
        raise TraceError(
            "ambiguous_trace",
            f"messages[{first}] and messages[{i}] are results of calls without an id of "
            f"messages[{opener}], as FunctionAgent writes them (additional_kwargs "
            f"{{'tool_call_id': ''}}, naming no call): it runs a reply's calls at once and "
            f"writes their results in the order the tools finished, so that order does not "
            f"say which call each answers, and the results would pair with the calls by "
            f"position. Read the run's events (events_to_messages): each result there names "
            f"its tool and arguments",
            index=i, path=f"messages[{i}].additional_kwargs.tool_call_id", source=NAME)


def _gathered(message: ToolMessage) -> bool:
    kept = message.metadata.get(NAME)
    extra = kept.get("additional_kwargs") if type(kept) is dict else None
    return type(extra) is dict and extra.get("tool_call_id") == ""
