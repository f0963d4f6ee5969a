"""Whose a tool span is, when model calls outside the conversation could have made its call.

A tool span that is in the session read (it names it, or its parent or its trace tells it:
``_sessions``) is the session's, whatever other sessions did. Otherwise its call id says
whose it is: a call id only the conversation made is its own, one only calls outside it made
is theirs. An id both made is told by time: the span ran a call made before it started and
not yet answered; when calls of both made it so, time cannot tell, and the span is
``ambiguous_trace``. So is a span whose call another session's model call may have made,
when that call's output cannot be read. A span answers the call it ran, unless it failed
and another span with its call id started before the next model call of the side it ran
for (the conversation, or the calls outside it): that one is a retry, and answers (the
framework gives the model the error of a failed span it does not retry). Another
session's model call recorded twice, nested (two instrumentations), counts once.
A span without a call id is the conversation's up to the ``horizon`` (when the next model
call outside it started). So is one whose call id no call read made, unless the call may be
another's (``_held_elsewhere``): a model call read outside the conversation holds the id in
its input (a call a graph node made, which no model call's output holds), another session's
model call whose output cannot be read started before it, or, for a span no session places
in the conversation, it ran before the conversation's first call and after a model call
outside it (each call's input holds the conversation so far: a call of its own would be
there).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from tracebridge.errors import TraceError

from ._calls import Call, ToolRun, read_call, read_output
from ._placing import call_ids
from ._spans import Span


@dataclass(frozen=True)
class Outside:
    """The model calls outside the conversation, as far as they tell whose a tool span is.

    ``made``: call id -> when each outside call that made it started; ``starts``: when each
    outside model call started; ``horizon``: when the next outside model call started
    (``same_``: of this session's, or of all calls without ``session_id``); ``unread``:
    other sessions' model calls whose output could not be read, with why; ``claimed``:
    ``id()`` of the tool spans the session read holds (by name, parent or trace), for which
    other sessions do not count; ``held``: the call ids outside model calls hold in their
    input or output (``same_``: of this session's)."""

    made: dict[str, list[int]] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)
    horizon: int | None = None
    same_made: dict[str, list[int]] = field(default_factory=dict)
    same_starts: list[int] = field(default_factory=list)
    same_horizon: int | None = None
    unread: list[tuple[Span, TraceError]] = field(default_factory=list)
    claimed: frozenset[int] = frozenset()
    held: frozenset[str] = frozenset()
    same_held: frozenset[str] = frozenset()


Theirs = list[tuple[Span, Span | None]]
"""Other sessions' model-call spans, each with the one of them it is nested in (``nested``)."""


def nested(theirs: list[Span], spans: list[Span]) -> Theirs:
    """Each of ``theirs`` with the nearest of them above it in ``spans`` (None: none)."""
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    among = {id(span) for span in theirs}
    return [(span, _enclosing(span, by_id, among)) for span in theirs]


def _enclosing(span: Span, by_id: dict[tuple[str, str], Span], among: set[int]) -> Span | None:
    """The nearest span of ``among`` above ``span``; None at a loop of parents (another
    session's span: what is wrong with it is not this session's to tell)."""
    seen = {span.span_id}
    parent = span.parent_id
    while parent is not None and parent not in seen:
        seen.add(parent)
        above = by_id.get((span.trace_id, parent))
        if above is None or id(above) in among:
            return above
        parent = above.parent_id
    return None


def outside(
    last: Call, others: list[Call], theirs: Theirs, runs: list[ToolRun],
    claimed: frozenset[int],
) -> Outside:
    """``Outside`` for the conversation whose last call is ``last``: ``others``, the model
    calls read that are not the conversation's; ``theirs``, other sessions' model-call spans
    (their messages read only when a tool span names a call id, and never refused)."""
    same_made = _made([(call.span, call_ids(call.output)) for call in others])
    named = any(run.call_id is not None for run in runs)
    read, unread = _their_calls(theirs) if named else ([], [])
    made = _made([(call.span, call_ids(call.output)) for call in others] + read)
    held, same_held = _held(last, others, theirs, runs, made)
    same_starts = [call.span.start for call in others]
    starts = same_starts + [span.start for span, outer in theirs if outer is None]
    return Outside(
        made=made,
        starts=starts,
        horizon=_next(starts, last.span.start),
        same_made=same_made,
        same_starts=same_starts,
        same_horizon=_next(same_starts, last.span.start),
        unread=unread,
        claimed=claimed,
        held=held,
        same_held=same_held,
    )


def _held(
    last: Call, others: list[Call], theirs: Theirs, runs: list[ToolRun],
    made: dict[str, list[int]],
) -> tuple[frozenset[str], frozenset[str]]:
    """The call ids model calls outside the conversation hold in their input or output: all
    of them (``made``: what their outputs hold), and ``others``' only. Other sessions'
    inputs are read only when a tool span's call id is held nowhere else."""
    same_held = frozenset(call_ids([m for call in others for m in (*call.input, *call.output)]))
    unknown = {run.call_id for run in runs if run.call_id is not None} - (
        call_ids([*last.input, *last.output]) | same_held | made.keys())
    their_inputs = [_input_ids(span) for span, _ in theirs] if unknown else []
    return same_held.union(made, *their_inputs), same_held


def _their_calls(
    theirs: Theirs,
) -> tuple[list[tuple[Span, set[str]]], list[tuple[Span, TraceError]]]:
    """The call ids each of ``theirs`` made, and those whose output cannot be read, with
    why. A span nested in one that made the same calls records that call again (two
    instrumentations, as ``model_calls`` drops for the session read): it is not counted."""
    outputs = {id(span): _output_ids(span) for span, _ in theirs}
    read: list[tuple[Span, set[str]]] = []
    unread: list[tuple[Span, TraceError]] = []
    for span, outer in theirs:
        found = outputs[id(span)]
        if isinstance(found, TraceError):
            unread.append((span, found))
        elif outer is None or outputs[id(outer)] != found:
            read.append((span, found))
    return read, unread


def _output_ids(span: Span) -> set[str] | TraceError:
    try:
        return call_ids(read_output(span))
    except TraceError as error:
        return error


def _input_ids(span: Span) -> set[str]:
    """The call ids another session's model call holds in its input; none when its messages
    cannot be read: it is never refused, and a tool span only its input could place stays
    the conversation's, refused as such."""
    try:
        return call_ids(read_call(span).input)
    except TraceError:
        return set()


def _made(found: list[tuple[Span, set[str]]]) -> dict[str, list[int]]:
    made: dict[str, list[int]] = {}
    for span, ids in found:
        for call_id in ids:
            made.setdefault(call_id, []).append(span.start)
    return made


def _next(starts: list[int], after: int) -> int | None:
    """The first of ``starts`` after ``after`` (None: none is)."""
    ordered = sorted(starts)
    k = bisect_right(ordered, after)
    return ordered[k] if k < len(ordered) else None


def owned_runs(
    runs: list[ToolRun], own: dict[str, int], starts: list[int], found: Outside
) -> list[ToolRun]:
    """The tool spans that are the conversation's (``own``: the conversation's call ids ->
    when the call that made each started; ``starts``: when each of its model calls
    started), in the order given."""
    answers = _Answers()
    chosen: set[int] = set()
    ordered = sorted(runs, key=lambda run: (run.span.start, run.span.index))
    again = _next_with_id(ordered)
    sides = {id(starts): sorted(starts), id(found.starts): sorted(found.starts),
             id(found.same_starts): sorted(found.same_starts)}
    first = min(starts, default=None)
    for k, run in enumerate(ordered):
        claimed = id(run.span) in found.claimed
        if claimed:  # other sessions do not count
            mine = _ours(run, own, found.same_made, [], found.same_horizon, answers)
            theirs = found.same_starts
        else:
            mine = _ours(run, own, found.made, found.unread, found.horizon, answers)
            theirs = found.starts
        mine = mine and not _held_elsewhere(run, own, found, first, claimed)
        if mine:
            chosen.add(id(run))
        side = sides[id(starts if mine else theirs)]
        if not (run.error and _retried(run, again[k], side)):
            answers.count(run, mine)
    return [run for run in runs if id(run) in chosen]


def _next_with_id(ordered: list[ToolRun]) -> list[ToolRun | None]:
    """For each span (in time order), the next span with its call id (None: none, or no id)."""
    following: list[ToolRun | None] = [None] * len(ordered)
    seen: dict[str, ToolRun] = {}
    for k in range(len(ordered) - 1, -1, -1):
        call_id = ordered[k].call_id
        if call_id is not None:
            following[k] = seen.get(call_id)
            seen[call_id] = ordered[k]
    return following


def _retried(run: ToolRun, again: ToolRun | None, starts: list[int]) -> bool:
    """Whether the next span with the failed span's call id (``again``) ran it before the
    next model call of its side (``starts``, in order) started: the span was an attempt, not
    the answer."""
    if again is None:
        return False
    k = bisect_right(starts, run.span.start)
    return k == len(starts) or again.span.start < starts[k]


@dataclass
class _Answers:
    """The tool spans that answered a call so far, by call id: whether one answered the
    conversation's call, and how many answered outside calls."""

    ours: set[str] = field(default_factory=set)
    theirs: dict[str, int] = field(default_factory=dict)

    def count(self, run: ToolRun, mine: bool) -> None:
        """``run`` answered its call: the conversation's (``mine``) or one outside it."""
        if run.call_id is None:
            return
        if mine:
            self.ours.add(run.call_id)
        else:
            self.theirs[run.call_id] = self.theirs.get(run.call_id, 0) + 1


def _ours(
    run: ToolRun, own: dict[str, int], made: dict[str, list[int]],
    unread: list[tuple[Span, TraceError]], horizon: int | None, answers: _Answers,
) -> bool:
    """Whether the span ran a call of the conversation (see the module's docstring)."""
    call_id = run.call_id
    if call_id is None or (call_id not in own and call_id not in made):
        return horizon is None or run.span.start < horizon
    if call_id not in own:
        return False
    start = run.span.start
    rivals = sum(1 for made_at in made.get(call_id, ()) if made_at <= start)
    ours_open = own[call_id] <= start and call_id not in answers.ours
    theirs_open = rivals - answers.theirs.get(call_id, 0)
    if ours_open and theirs_open > 0:
        _refuse_shared(run, call_id, rivals, "")
    if not ours_open and theirs_open <= 0 and rivals and own[call_id] <= start:
        _refuse_shared(run, call_id, rivals, " and tool spans before it answered")
    if ours_open:
        _refuse_unread(run, call_id, unread)
    return ours_open or not rivals


def _held_elsewhere(
    run: ToolRun, own: dict[str, int], found: Outside, first: int | None, claimed: bool
) -> bool:
    """Whether the span's call id, which names no call of the conversation, may be another's
    call (see the module's docstring): then the span is not the conversation's orphan."""
    call_id = run.call_id
    if call_id is None or call_id in own:
        return False
    if claimed:
        return call_id in found.same_held
    start = run.span.start
    return (
        call_id in found.held
        or any(span.start <= start for span, _ in found.unread)
        or (first is not None and start < first and any(at <= start for at in found.starts))
    )


_NAMES_NO_SESSION = (
    "the span names no session (session.id, gen_ai.conversation.id, on it or a parent span)"
)


def _refuse_shared(run: ToolRun, call_id: str, rivals: int, said: str) -> None:
    run.span.fail(
        "ambiguous_trace",
        f"the tool span ran call {call_id!r}, which this conversation and {rivals} model "
        f"call(s) outside it made before the span started{said}, and {_NAMES_NO_SESSION}: "
        "whose call it ran cannot be told (record the session on the tool span, or give "
        "each call its own id)",
    )


def _refuse_unread(run: ToolRun, call_id: str, unread: list[tuple[Span, TraceError]]) -> None:
    """A model call of another session that started before the span and whose output cannot
    be read may have made its call too."""
    for span, error in unread:
        if span.start <= run.span.start:
            run.span.fail(
                "ambiguous_trace",
                f"the tool span ran call {call_id!r} of this conversation, but the model call "
                f"of another session at {span.path}, which started before it, may have made "
                f"that call too, and its output cannot be read ({error.code}: "
                f"{error.detail}); {_NAMES_NO_SESSION}: whose call it ran cannot be told",
            )
