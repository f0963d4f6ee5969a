"""The calls of one reply that have no id, and the results that answer them.

A model may give calls without an id (a ``ToolCallBlock`` with ``tool_call_id=None``, or
``""``, which LlamaIndex takes for none). ``FunctionAgent`` names such a call ``""``
wherever it names it, runs a reply's calls at once, and streams each ``ToolCallResult`` when
its tool finishes: the results of calls without an id come in the order their tools
finished, each naming its call by its tool name and arguments alone. A result answers the
first call of the reply without an id, not answered yet, that it agrees with
(``IdlessCalls.answer``, which asks only the calls of that tool whose arguments may be the
result's: ``json_shape``). The typed conversation pairs a result without an id with the
first call not answered yet, so each such result is put after the results of the calls
before its own and before those of the calls after it (``IdlessCalls.slot``), whatever order
the tools finished in.

Memory has no more than the order: ``FunctionAgent`` writes those results there as it
gathers them, in the order the tools finished, naming no call (``{"tool_call_id": ""}``).
Two or more of them after one reply pair with its calls in no way the history tells, so a
history holding them is refused (``check_gathered``); the run's events tell it. One of them
before the result of a call with an id takes that call, by position, when it is the first
not answered yet: the rules' refusal of the call's own result then says so
(``taken_by_position``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable
from typing import Any

from tracebridge import AIMessage, Message, ToolCall, ToolMessage, TraceError

from ._blocks import NAME

Agrees = Callable[[ToolCall], bool]
"""Whether an event's copy of a call (its tool name and arguments) is that call."""


class IdlessCalls:
    """The calls of the last reply read, looked up by their place, and which of those
    without an id the results read answer. Built once per reply; each lookup in the usual
    case (events in call order) takes one step."""

    __slots__ = ("answered", "by_args", "by_name", "calls", "empty_id", "idless", "next_named",
                 "open_from", "places", "read_places", "read_positions", "with_id")

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = calls
        self.idless: list[int] | None = None
        """The places of the calls without an id (made when first asked)."""
        self.empty_id = False  # whether a call's id is "" (then "" names it): with ``idless``
        self.places: dict[int, int] | None = None
        """Each call's place, by ``id(call)`` (made when first asked)."""
        self.answered: set[int] = set()  # the places of the id-less calls answered
        self.by_args: dict[tuple[str, Hashable], list[int]] | None = None
        self.by_name: dict[str, list[int]] | None = None
        """``_candidates``: the places of the id-less calls a result may answer."""
        self.open_from = 0  # in ``idless``: no call before it is unanswered
        self.next_named = 0  # in ``idless``: the call the next ToolCall event should name
        self.read_places: list[int] = []
        self.read_positions: list[int] = []
        """The call place and message position of each result of an id-less call read, in
        the order of their calls (which is their order in the messages)."""
        self.with_id: list[str] = []
        """The call ids of the results of calls with an id read after the reply (what
        ``placed_result`` moves on when it puts a result before them)."""

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

    def answer(self, name: str, kwargs: Any, agrees: Agrees) -> tuple[ToolCall, int | None] | None:
        """The id-less call a result naming ``""`` (of tool ``name`` run with ``kwargs``)
        answers, and its place: the first not answered yet that it agrees with, now
        answered; else the first not answered yet and None (to be told it disagrees); None
        when none is left (the rules refuse it). Only calls that may agree are asked
        (``_candidates``), so results in any order take as many steps as calls."""
        idless, answered, calls = self.without_id(), self.answered, self.calls
        n = self.open_from
        while n < len(idless) and idless[n] in answered:
            n += 1
        self.open_from = n
        if n == len(idless):
            return None
        parsed, unparsed = self._candidates()
        found = self._first_agreeing(parsed.get((name, json_shape(kwargs))), agrees,
                                     len(calls))
        # a call whose text did not parse agrees with what it ran with: asked in call order,
        # up to the one found, as every call before the answer is
        earlier = self._first_agreeing(unparsed.get(name), agrees,
                                       len(calls) if found is None else found)
        k = found if earlier is None else earlier
        if k is None:
            return calls[idless[n]], None
        answered.add(k)
        return calls[k], k

    def _candidates(self) -> tuple[dict[tuple[str, Hashable], list[int]], dict[str, list[int]]]:
        """The places of the id-less calls, in order: those whose arguments parsed by their
        tool name and ``json_shape`` (a result agrees with no other), the others by their
        tool name (made when first asked)."""
        if self.by_args is None:
            by_args: dict[tuple[str, Hashable], list[int]] = {}
            by_name: dict[str, list[int]] = {}
            for k in self.without_id():
                call = self.calls[k]
                if call.invalid_args is None:
                    by_args.setdefault((call.name, json_shape(call.args)), []).append(k)
                else:
                    by_name.setdefault(call.name, []).append(k)
            self.by_args, self.by_name = by_args, by_name
        assert self.by_name is not None
        return self.by_args, self.by_name

    def _first_agreeing(self, places: list[int] | None, agrees: Agrees,
                        before: int) -> int | None:
        """The first of ``places`` (in call order) before ``before``, not answered yet, whose
        call ``agrees``; the answered ones at its start are dropped as they are met."""
        if places is None:
            return None
        answered = self.answered
        start = 0
        while start < len(places) and places[start] in answered:
            start += 1
        if start:
            del places[:start]
        for k in places:
            if k >= before:
                return None
            if k not in answered and agrees(self.calls[k]):
                return k
        return None

    def slot(self, place: int | None) -> int | None:
        """Where the result of call ``place`` goes among the messages: before the first
        result of an id-less call after it read so far (the results of the calls before an
        id-less call must come before its own); None: after the last message."""
        places = self.read_places
        if place is None or not places or places[-1] < place:
            return None
        return self.read_positions[bisect_left(places, place)]

    def settled(self, place: int, position: int) -> None:
        """The result of id-less call ``place`` is at message ``position`` (where ``slot``
        said); the results at or after it moved one on."""
        places, positions = self.read_places, self.read_positions
        n = bisect_left(places, place)
        if n < len(positions):
            positions[n:] = [at + 1 for at in positions[n:]]
        places.insert(n, place)
        positions.insert(n, position)

    def moved_on(self, position: int) -> None:
        """A result of a call with an id was put at message ``position``: those at or after
        it moved one on."""
        self.read_positions = [at + 1 if at >= position else at for at in self.read_positions]


_SHAPE_DEPTH = 16
_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_shape(value: Any, depth: int = 0) -> Hashable:
    """A key that two values ``same_json`` takes for one always share (other values may share
    it too): each value's class, and its value where it is a number, text or null, through
    dicts (in any order), lists and tuples, to a depth."""
    kind: type = value.__class__
    if depth > _SHAPE_DEPTH:
        return kind
    if kind is dict:
        return frozenset((key, json_shape(item, depth + 1)) for key, item in value.items())
    if kind is list or kind is tuple:
        return (kind, *[json_shape(item, depth + 1) for item in value])
    if kind in _SCALARS:
        return kind, value
    return kind



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


def taken_by_position(messages: list[Message], error: TraceError) -> TraceError | None:
    """For the rules' refusal of a result whose call was already answered (``error``), when a
    result with no call id took that call by position before it: the refusal saying so
    (same code, index and path), else None. ``FunctionAgent`` writes a reply's results in the
    order its tools finished, so the result of a call without an id can come before the
    result of a call with one, and the rules pair it with that call."""
    i = error.index
    if error.code != "orphan_tool_result" or i is None or not 0 < i < len(messages):
        return None
    result = messages[i]
    if type(result) is not ToolMessage or result.tool_call_id is None:
        return None
    opener = i - 1
    while opener >= 0 and type(messages[opener]) is ToolMessage:
        opener -= 1
    reply = messages[opener] if opener >= 0 else None
    if type(reply) is not AIMessage:
        return None
    taker = _taker(reply.tool_calls, messages[opener + 1:i], result.tool_call_id)
    if taker is None:
        return None
    j = opener + 1 + taker
    said = ("additional_kwargs {'tool_call_id': ''}, as FunctionAgent writes the result of a "
            "call without an id" if _gathered(messages[j]) else "no tool_call_id")
    return TraceError(
        "orphan_tool_result",
        f"messages[{j}] took call {result.tool_call_id!r} before its own result here: "
        f"messages[{j}] names no call ({said}), so the rules pair it with the first call of "
        f"messages[{opener}] not answered yet, which is {result.tool_call_id!r}. FunctionAgent "
        f"writes a reply's results in the order its tools finished, so the result of a call "
        f"without an id may come before the result of a call with one, and then the history "
        f"does not say which call it answers. Read the run's events (events_to_messages): "
        f"each result there names its call",
        index=i, path=error.path, source=error.source)


def _taker(calls: list[ToolCall], before: list[Message], call_id: str) -> int | None:
    """Which of the results ``before`` (of the reply making ``calls``), one with no call id,
    the rules paired with the call whose id is ``call_id``, by position; else None."""
    answered = [False] * len(calls)
    places = {call.id: k for k, call in reversed(list(enumerate(calls)))}
    free = 0
    for n, message in enumerate(before):
        assert isinstance(message, ToolMessage)
        if message.tool_call_id is not None:
            k = places.get(message.tool_call_id)
            if k is not None:
                answered[k] = True
            continue
        while free < len(calls) and answered[free]:
            free += 1
        if free == len(calls):
            return None
        answered[free] = True
        if calls[free].id == call_id:
            return n
    return None


def _gathered(message: Message) -> bool:
    kept = message.metadata.get(NAME)
    extra = kept.get("additional_kwargs") if type(kept) is dict else None
    return type(extra) is dict and extra.get("tool_call_id") == ""
