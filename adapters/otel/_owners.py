"""Whose a tool span is, when model calls outside the conversation could have made its call.

A tool span that is in the session read (it names it, or its parent or its trace tells it:
``_sessions``) is the session's, whatever other sessions did. Otherwise its call id says
whose it is: a call id only the conversation made is its own, one only calls outside it made
is theirs. An id both made is told by time: the span ran a call made before it started and
not yet answered (a span that did not fail answers the call it ran); when calls of both
made it so, time cannot tell, and the span is ``ambiguous_trace``. So is a span whose call
another session's model call may have made, when that call's output cannot be read.
A span without a call id is the conversation's up to the ``horizon`` (when the next model
call outside it started).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracebridge.errors import TraceError

from ._calls import Call, ToolRun, read_output
from ._placing import call_ids
from ._spans import Span


@dataclass(frozen=True)
class Outside:
    """The model calls outside the conversation, as far as they tell whose a tool span is.

    ``made``: call id -> when each outside call that made it started; ``horizon``: when
    the next outside model call started (``same_horizon``: of this session's, or of all
    calls without ``session_id``); ``unread``: other sessions' model calls whose output
    could not be read, with why; ``claimed``: ``id()`` of the tool spans the session read
    holds (by name, parent or trace), for which other sessions do not count."""

    made: dict[str, list[int]] = field(default_factory=dict)
    horizon: int | None = None
    same_made: dict[str, list[int]] = field(default_factory=dict)
    same_horizon: int | None = None
    unread: list[tuple[Span, TraceError]] = field(default_factory=list)
    claimed: frozenset[int] = frozenset()


def outside(
    last: Call, others: list[Call], theirs: list[Span], runs: list[ToolRun],
    claimed: frozenset[int],
) -> Outside:
    """``Outside`` for the conversation whose last call is ``last``: ``others``, the model
    calls read that are not the conversation's; ``theirs``, other sessions' model-call spans
    (their output read only when a tool span names a call id, and never refused)."""
    same_made = _made([(call.span, call_ids(call.output)) for call in others])
    named = any(run.call_id is not None for run in runs)
    read: list[tuple[Span, set[str]]] = []
    unread: list[tuple[Span, TraceError]] = []
    for span in theirs if named else []:
        try:
            read.append((span, call_ids(read_output(span))))
        except TraceError as error:
            unread.append((span, error))
    made = _made([(call.span, call_ids(call.output)) for call in others] + read)
    same_starts = [call.span.start for call in others]
    return Outside(
        made=made,
        horizon=_next(same_starts + [span.start for span in theirs], last.span.start),
        same_made=same_made,
        same_horizon=_next(same_starts, last.span.start),
        unread=unread,
        claimed=claimed,
    )


def _made(found: list[tuple[Span, set[str]]]) -> dict[str, list[int]]:
    made: dict[str, list[int]] = {}
    for span, ids in found:
        for call_id in ids:
            made.setdefault(call_id, []).append(span.start)
    return made


def _next(starts: list[int], after: int) -> int | None:
    later = [start for start in starts if start > after]
    return min(later) if later else None


def owned_runs(runs: list[ToolRun], own: dict[str, int], found: Outside) -> list[ToolRun]:
    """The tool spans that are the conversation's (``own``: the conversation's call ids ->
    when the call that made each started), in the order given."""
    answers = _Answers()
    chosen: set[int] = set()
    for run in sorted(runs, key=lambda run: (run.span.start, run.span.index)):
        if id(run.span) in found.claimed:  # other sessions do not count
            mine = _ours(run, own, found.same_made, [], found.same_horizon, answers)
        else:
            mine = _ours(run, own, found.made, found.unread, found.horizon, answers)
        if mine:
            chosen.add(id(run))
    return [run for run in runs if id(run) in chosen]


@dataclass
class _Answers:
    """The tool spans that did not fail so far, by call id: whether one answered the
    conversation's call, and how many answered outside calls."""

    ours: set[str] = field(default_factory=set)
    theirs: dict[str, int] = field(default_factory=dict)


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
    mine = ours_open or not rivals
    if not run.error:
        if mine:
            answers.ours.add(call_id)
        else:
            answers.theirs[call_id] = answers.theirs.get(call_id, 0) + 1
    return mine


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
