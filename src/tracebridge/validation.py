"""The conversation rules, in one place.

A *tool-result block* is the run of ``ToolMessage``s right after an ``AIMessage``.

1. A ToolMessage must have an AIMessage somewhere before it.
2. A ToolMessage must come right after an AIMessage or another ToolMessage.
3. The AIMessage that opens a tool-result block must have tool calls.
4. With ids: each result's ``tool_call_id`` must name a call of the opening AIMessage that no
   earlier result answered. Without ids: results pair with calls by position (a result with no
   id answers the first call not answered yet), never more results than calls.
5. Tool-call ids are unique across the whole conversation.
6. Every call of an AIMessage is answered inside its block (``allow_pending`` permits
   unanswered calls only in a block still open when the conversation ends: a trace cut
   mid-tool). A call with ``invalid_args`` may go unanswered: its arguments did not parse,
   so frameworks (LangGraph's ToolNode, for one) never run it; when one is answered, the
   result pairs with it as usual.
7. A conversation has at least one message.

A result that breaks 1-4 is an orphan tool result. Checking is one linear pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ._conversation import messages_of
from ._shape import UNCHECKED, unchecked_field
from .errors import TraceError, short_repr, with_article
from .messages import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage

__all__ = ["check", "validate"]

SourcePaths = Callable[[int, str], str | None]
"""For an adapter: the source path of a field of a typed message, when not the usual one."""


def validate(
    messages: Iterable[Any],
    *,
    allow_pending: bool = False,
    source: str | None = None,
    origin: Sequence[int] | None = None,
    paths: SourcePaths | None = None,
) -> None:
    """Raise the first rule violation as a ``TraceError``; return None when all rules hold.

    ``source``, ``origin`` and ``paths`` are for adapters: ``origin[i]`` is the position in
    the source trace that typed message ``i`` came from, so errors point into the source;
    ``paths(i, field)`` is the source path of ``field`` (``".tool_call_id"``,
    ``".tool_calls[k]"``, ``".tool_calls[k].id"``) of typed message ``i`` where the source
    keeps it elsewhere than ``messages[origin[i]]<field>``, else None (asked only for an
    error).

    >>> from tracebridge import HumanMessage, ToolMessage, validate
    >>> validate([HumanMessage(content="hi"), ToolMessage(content="x", tool_call_id="a")])
    Traceback (most recent call last):
    ...
    tracebridge.errors.TraceError: messages[1].tool_call_id: ... [orphan_tool_result]

    ``messages`` is read as ``transcript_hash`` reads it: a ``MultiTurnSample`` stands for
    its messages, any other iterable of messages is taken, and anything else (a string, a
    dict, ``None``) is ``malformed_event`` at ``messages``.
    """
    # a list, the common case, costs this one check
    listed = messages if type(messages) is list else _listed(messages, source)
    if _surely_valid(listed, allow_pending):
        if allow_pending is not False and allow_pending is not True:
            _not_a_bool(allow_pending)
        return
    _checked_flag(allow_pending)
    try:
        for violation in _violations(listed, allow_pending, source, origin, paths):
            raise violation
    except UNCHECKED:
        refused = unchecked_field(listed, source, origin)
        if refused is None:
            raise
        raise refused from None


def check(
    messages: Iterable[Any],
    *,
    allow_pending: bool = False,
    source: str | None = None,
    origin: Sequence[int] | None = None,
) -> list[TraceError]:
    """Every rule violation, in the order one pass over the conversation finds them (the
    pass stops at a field of a type its model does not declare, the last error then).
    ``messages`` is read as ``validate`` reads it; what holds no messages is the one error."""
    _checked_flag(allow_pending)
    try:
        listed = messages if type(messages) is list else _listed(messages, source)
    except TraceError as error:
        return [error]
    if _surely_valid(listed, allow_pending):
        return []
    found: list[TraceError] = []
    try:
        found.extend(_violations(listed, allow_pending, source, origin))
    except UNCHECKED:
        refused = unchecked_field(listed, source, origin)
        if refused is None:
            raise
        found.append(refused)
    return found


def _listed(messages: Any, source: str | None) -> list[Any]:
    """``messages`` as a list, read as ``transcript_hash`` reads its argument (a sample's
    messages; ``malformed_event`` at ``messages`` for what holds no messages)."""
    try:
        return messages_of(messages)
    except TraceError as error:
        raise error.relocated(source=source) from None


def _checked_flag(allow_pending: Any) -> None:
    if allow_pending is not False and allow_pending is not True:
        _not_a_bool(allow_pending)


def _not_a_bool(allow_pending: Any) -> None:
    # a string such as "false" is true: taken as it is, it would let calls go unanswered
    raise ValueError(f"allow_pending must be True or False, got {allow_pending!r}")


def _surely_valid(messages: Sequence[Any], allow_pending: bool) -> bool:
    """A quick pass for the common cases: every call of a block has an id and is answered
    by id, or no call and no result of a block has one (results pair by position).

    True means every rule holds. False means "look closer": the full pass below decides
    (it also handles blocks mixing both, calls with invalid arguments, and ids that are no
    strings, which only a message made with ``model_construct`` or ``model_copy`` holds).
    """
    try:
        return _quick_pass(messages, allow_pending)
    except UNCHECKED:  # an id that is no string and no key of a set, a dict for a call, ...:
        return False  # the full pass names it


def _quick_pass(messages: Sequence[Any], allow_pending: bool) -> bool:
    if len(messages) == 0:
        return False
    seen: set[str] = set()
    unanswered: set[str] | None = None  # ids of the open block's calls not answered yet
    waiting = 0  # calls of the open block not answered yet
    for message in messages:
        kind = type(message)
        if kind is ToolMessage:
            if not waiting:
                return False
            call_id = message.tool_call_id
            if unanswered is None:  # a block of id-less calls
                if call_id is not None:
                    return False
            elif call_id not in unanswered:
                return False
            else:
                unanswered.discard(call_id)
            waiting -= 1
        elif kind is AIMessage:
            if waiting:
                return False
            calls = message.tool_calls
            waiting = len(calls)
            if not waiting:
                continue
            if calls[0].id is None:
                unanswered = None
                for call in calls:
                    if call.id is not None or call.invalid_args is not None:
                        return False
            else:
                unanswered = set()
                for call in calls:
                    call_id = call.id
                    if type(call_id) is not str or call_id in seen:
                        return False
                    seen.add(call_id)
                    unanswered.add(call_id)
        elif kind is HumanMessage or kind is SystemMessage:
            if waiting:
                return False
        else:
            return False
    return not waiting or allow_pending


surely_valid = _surely_valid
"""The quick pass alone, for readers that check more of their own only when it cannot vouch
for the conversation (a True is what ``validate`` returns silently on)."""


def _describe(call: ToolCall) -> str:
    return f"{call.name!r}" + (f" (id {call.id!r})" if call.id is not None else "")


class _Block:
    """The tool-result block opened by one AIMessage."""

    __slots__ = ("answered_by", "by_id", "call_ids", "calls", "next_free", "opener")

    def __init__(self, opener: int, calls: list[ToolCall]) -> None:
        self.opener = opener
        self.calls = calls
        self.answered_by: list[int | None] = [None] * len(calls)
        self.by_id: dict[str, int] = {}
        self.next_free = 0
        self.call_ids: str | None = None  # _call_ids' text, made for the first orphan only


_CALL_IDS_SHOWN = 10
"""How many of a block's call ids an ``orphan_tool_result`` names, each cut as ``short_repr``
cuts it: when every result of a big block names no call of it, errors that each repeated
every id would make checking quadratic in time and memory."""


def _call_ids(block: _Block) -> str:
    """The block's call ids as an error names them, the first ``_CALL_IDS_SHOWN`` and how
    many more: ``['a', 'b']``, ``['c0', ..., 'c9'] … and 5 more``; made once per block.

    >>> from tracebridge import ToolCall
    >>> _call_ids(_Block(1, [ToolCall(name="f", id=f"c{k}") for k in range(12)]))
    "['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9'] … and 2 more"
    """
    if block.call_ids is None:
        ids = [call.id for call in block.calls if call.id is not None]
        shown = "[" + ", ".join(short_repr(x) for x in ids[:_CALL_IDS_SHOWN]) + "]"
        more = len(ids) - _CALL_IDS_SHOWN
        block.call_ids = shown if more <= 0 else f"{shown} … and {more} more"
    return block.call_ids


def _violations(
    messages: Sequence[Any],
    allow_pending: bool,
    source: str | None,
    origin: Sequence[int] | None,
    paths: SourcePaths | None = None,
) -> Iterator[TraceError]:
    def where(i: int, suffix: str) -> tuple[int, str]:
        at = origin[i] if origin is not None else i
        placed = paths(i, suffix) if paths is not None and suffix else None
        return at, placed or f"messages[{at}]{suffix}"

    def error(code: Any, detail: str, i: int, suffix: str) -> TraceError:
        index, path = where(i, suffix)
        return TraceError(code, detail, index=index, path=path, source=source)

    def close(block: _Block, closed_by: int | None) -> Iterator[TraceError]:
        for k, answer in enumerate(block.answered_by):
            if answer is None and block.calls[k].invalid_args is None:
                until = (
                    f"before messages[{where(closed_by, '')[0]}]"
                    if closed_by is not None
                    else "before the conversation ends "
                    "(allow_pending=True accepts a trace cut mid-tool)"
                )
                yield error(
                    "unanswered_tool_call",
                    f"tool call {_describe(block.calls[k])} has no result {until}",
                    block.opener,
                    f".tool_calls[{k}]",
                )

    if len(messages) == 0:
        yield TraceError(
            "empty_conversation", "a conversation needs at least one message", source=source
        )
        return

    seen_ids: dict[str, int] = {}
    block: _Block | None = None  # the open block, while the previous message is AI or tool
    seen_ai = False
    previous = "start"

    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if block is None:
                reason = (
                    "no AIMessage comes before it"
                    if not seen_ai
                    else "it must follow an AIMessage or a ToolMessage, not "
                         f"{with_article(previous)} message"
                )
                detail = f"tool result answers nothing: {reason}"
                yield error("orphan_tool_result", detail, i, ".tool_call_id")
            elif not block.calls:
                yield error(
                    "orphan_tool_result",
                    f"tool result answers nothing: the AIMessage at messages"
                    f"[{where(block.opener, '')[0]}] has no tool calls",
                    i,
                    ".tool_call_id",
                )
            else:
                yield from _pair_result(block, message, i, error, where)
            previous = "tool"
        elif isinstance(message, AIMessage):
            if block is not None:
                yield from close(block, i)
            block = _Block(i, message.tool_calls)
            seen_ai = True
            yield from _register_calls(block, seen_ids, error, where)
            previous = "ai"
        elif isinstance(message, (HumanMessage, SystemMessage)):
            if block is not None:
                yield from close(block, i)
                block = None
            previous = message.type
        else:
            yield error(
                "malformed_event",
                f"expected a tracebridge message (human, ai, tool or system), "
                f"got {type(message).__name__}",
                i,
                "",
            )
            if block is not None:
                yield from close(block, i)
                block = None
            previous = "unknown"

    if block is not None and not allow_pending:
        yield from close(block, None)


def _register_calls(
    block: _Block,
    seen_ids: dict[str, int],
    error: Any,
    where: Any,
) -> Iterator[TraceError]:
    """Make the block's calls answerable by id, and report an id used before.

    A call whose id an earlier message used is reported once, as a duplicate, and still
    pairs with its own block's result: that result answers it, and nothing else is wrong.
    Of one id twice in the same message, the first call is the one a result answers.
    """
    i = block.opener
    for k, call in enumerate(block.calls):
        if call.id is None:
            continue  # id-less calls pair by position; nothing to register
        if type(call.id) is not str:
            yield _not_text(error, call.id, "tool call id", i, f".tool_calls[{k}].id")
            continue
        first = seen_ids.get(call.id)
        if first is None:
            seen_ids[call.id] = i
        else:
            yield error(
                "duplicate_tool_call_id",
                f"tool call id {call.id!r} is already used at messages[{where(first, '')[0]}]",
                i,
                f".tool_calls[{k}].id",
            )
        if call.id not in block.by_id:
            block.by_id[call.id] = k


def _not_text(error: Any, value: Any, what: str, i: int, suffix: str) -> TraceError:
    """An id that is no string: pydantic checks none when a message is made with
    ``model_construct`` or changed with ``model_copy(update=...)``."""
    return error(  # type: ignore[no-any-return]
        "malformed_event",
        f"{what} must be a string, got {short_repr(value)} (a message made with "
        "model_construct or model_copy(update=...) is not checked when made)",
        i,
        suffix,
    )


def _pair_result(
    block: _Block,
    result: ToolMessage,
    i: int,
    error: Any,
    where: Any,
) -> Iterator[TraceError]:
    """Mark the call that ``result`` answers, or report why it answers none."""
    opener_at = where(block.opener, "")[0]
    call_id = result.tool_call_id
    if call_id is not None and type(call_id) is not str:
        yield _not_text(error, call_id, "tool_call_id", i, ".tool_call_id")
        return
    if call_id is None:
        while block.next_free < len(block.calls) and block.answered_by[block.next_free] is not None:
            block.next_free += 1
        if block.next_free == len(block.calls):
            yield error(
                "orphan_tool_result",
                f"tool result has no id and all {len(block.calls)} call(s) of "
                f"messages[{opener_at}] are already answered",
                i,
                ".tool_call_id",
            )
        else:
            block.answered_by[block.next_free] = i
        return
    k = block.by_id.get(call_id)
    if k is None:
        yield error(
            "orphan_tool_result",
            f"tool_call_id {call_id!r} names no call of messages[{opener_at}] "
            f"(its call ids: {_call_ids(block)})",
            i,
            ".tool_call_id",
        )
        return
    earlier = block.answered_by[k]
    if earlier is not None:
        yield error(
            "orphan_tool_result",
            f"tool_call_id {call_id!r} was already answered at messages[{where(earlier, '')[0]}]",
            i,
            ".tool_call_id",
        )
        return
    block.answered_by[k] = i
