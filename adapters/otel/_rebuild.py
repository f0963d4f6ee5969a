"""One conversation from the model calls of a trace.

Every instrumentation writes one span per model call, each holding the whole input history.
The conversation is the last call's input plus its output, once every earlier call is shown
to be a prefix of it; tool results recorded after the last call are appended from tool spans.

The prefix rule: leading system messages are set aside on both sides (in a multi-agent run
each agent sends its own instructions), and what follows them — the call's input, then its
output — must equal the start of what follows the last call's leading system messages,
message by message, on everything the transcript hash covers. The conversation starts with
the last call's system messages; an AI message produced by a call whose system messages were
different keeps them under ``metadata["otel"]["instructions"]`` (their JSON dump).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable
from typing import Any

from tracebridge._json_model import same_record
from tracebridge.errors import TraceError
from tracebridge.messages import AIMessage, Message, TextPart, ToolMessage
from tracebridge.validation import validate

from ..openai_chat._read import dumps
from ._calls import (
    CAPTURE_SWITCHES,
    REDACTED,
    Call,
    ToolRun,
    id_attribute,
    is_inference,
    is_tool,
    json_or_text,
    read_call,
    read_tool,
    refuse_cut_call,
    same,
)
from ._llama_index import SCOPE as LLAMA_INDEX_SCOPE
from ._llama_index import STRUCTURED, is_structured, structures, wrapper_spans
from ._origins import Origin, moved
from ._owners import Outside, owned_runs
from ._placing import Slot, call_ids, place, result_of, slots
from ._spans import SOURCE, Span, fail
from ._traceloop import is_wrapped_output


def model_calls(
    spans: list[Span], join: Callable[[list[Message]], list[Message]] = list
) -> list[Call]:
    """The model calls in time order, nested duplicates dropped once shown to agree: after
    ``join`` (``join_calls``), since the client's span lists each call of a Responses API
    reply as a message of its own where the agents span records one message with them all."""
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    wrappers = wrapper_spans(spans)
    for span in spans:
        if not is_inference(span):
            refuse_cut_call(span)
    calls = {
        id(span): read_call(span)
        for span in spans
        if is_inference(span) and id(span) not in wrappers
    }
    kept: list[Call] = []
    for call in calls.values():
        outer = _inference_ancestor(call.span, by_id, calls)
        if outer is None:
            kept.append(call)
            continue
        if same(join(outer.input)) != same(join(call.input)) or same(
            join(outer.output)
        ) != same(join(call.output)):
            if structures(outer.span, call.span) and same(join(outer.input)) == same(
                join(call.input)
            ):
                kept.append(call)  # the model's own reply, which the outer one parsed
                continue
            call.span.fail(
                "conflicting_fields",
                f"this model call is nested in the model call at {outer.span.path} (two "
                "instrumentations recorded the same call) but their messages differ",
            )
    kept.sort(key=lambda call: _time_order(call, join))
    return kept


def _time_order(call: Call, join: Callable[[list[Message]], list[Message]]) -> tuple[int, ...]:
    """Where a call goes in time order: by start time; calls that started together (times
    rounded by an exporter or a backend, a coarse or frozen clock) by the length of the
    history they hold (the input without its leading system messages, and the output: a
    call whose input holds another's input and output comes after it), then by end time.
    The position in the input decides only between calls none of these tells apart (an
    exporter writes spans in the order they end, or in batches, so it says nothing)."""
    history = len(join(call.input[call.systems:])) + len(join(call.output))
    return call.span.start, history, call.span.end, call.span.index


def _inference_ancestor(
    span: Span, by_id: dict[tuple[str, str], Span], calls: dict[int, Call]
) -> Call | None:
    """The nearest model call above ``span``. Parents that loop back (a span its own
    ancestor) are ``malformed_event``: the call would be dropped as nested in itself."""
    seen = {span.span_id}
    parent = span.parent_id
    while parent is not None:
        if parent in seen:
            span.fail("malformed_event", f"the span's parents loop: span {parent} is its own "
                      "ancestor (parentSpanId)")
        seen.add(parent)
        above = by_id.get((span.trace_id, parent))
        if above is None:
            return None
        if id(above) in calls:
            return calls[id(above)]
        parent = above.parent_id
    return None


def body(call: Call) -> list[Message]:
    """The call's conversation after its leading system messages: input, then output."""
    return [*call.input[call.systems:], *call.output]


def chains(calls: list[Call], sessions: dict[int, str]) -> list[list[Call]]:
    """Calls grouped into conversations: each call extends the last call of its chain (a
    longer history that starts with it), in the same session when the spans name sessions
    (``sessions``: ``_sessions.span_sessions``, each call span's own). A call that repeats
    another starts a new chain; a call that several chains could take goes to the first.

    Only chains of the call's session whose last call starts with the same message (or has
    no message at all) can take it: the chains are looked up by those, so many
    conversations read in time linear in their calls."""
    found: list[list[Call]] = []
    lasts: list[list[str]] = []  # per chain, what ``same`` makes of each message of its last
    heads: dict[tuple[str | None, str | None], list[int]] = {}  # (session, first) -> chains
    for call in calls:
        mine = [same([m]) for m in body(call)]
        session = sessions.get(id(call.span))
        taker = _taker(mine, lasts, heads.get((session, mine[0] if mine else None), []),
                       heads.get((session, None), []) if mine else [])
        if taker is None:
            taker = len(found)
            found.append([call])
            lasts.append(mine)
            heads.setdefault((session, mine[0] if mine else None), []).append(taker)
            continue
        found[taker].append(call)
        if not lasts[taker]:  # its first message is known now: looked up by it from here
            heads[(session, None)].remove(taker)
            insort(heads.setdefault((session, mine[0]), []), taker)
        lasts[taker] = mine
    return found


def _taker(mine: list[str], lasts: list[list[str]], *candidates: list[int]) -> int | None:
    """The first chain of ``candidates`` (ascending lists of chain numbers) whose last call's
    messages (``lasts``) are a shorter start of ``mine``; None when there is none."""
    groups = [group for group in candidates if group]
    for chain in groups[0] if len(groups) == 1 else sorted(chain for g in groups for chain in g):
        theirs = lasts[chain]
        if len(mine) > len(theirs) and mine[: len(theirs)] == theirs:
            return chain
    return None


def refuse_ambiguous(groups: list[list[Call]], named: dict[int, str]) -> None:
    described = []
    for chain in groups:
        last = chain[-1].span
        sessions = sorted({s for c in chain if (s := named.get(id(c.span))) is not None})
        traces = sorted({c.span.trace_id for c in chain})
        said = f"span_id={last.span_id} (its last call, at {last.path}"
        said += f", {STRUCTURED}); " if is_structured(last) else "); "
        said += f"trace_id={', '.join(traces)}"
        if sessions:
            said += f"; session_id={', '.join(sessions)}"
        described.append(said)
    fail(
        "ambiguous_trace",
        f"the spans hold {len(groups)} conversations (in different sessions, or whose calls "
        f"are not prefixes of one another); choose one with a filter: {' | '.join(described)}",
    )


def conversation(
    calls: list[Call], tools: list[ToolRun], *, allow_pending: bool,
    outside: Outside | None = None, view: bool = False,
) -> list[Message]:
    """The last call's input and output, earlier calls proven prefixes, tool results added.
    ``outside``: the model calls outside ``calls``, which tell whose a tool span is
    (``_owners``; none when not given). ``view``: one call's
    view (``span_id``), where a failed tool span that recorded no result leaves its call
    unanswered (the result the framework made of the error is in the next call's input,
    outside the view)."""
    last = calls[-1]
    rest = body(last)
    systems = last.input[: last.systems]
    origin = recorded(last)
    produced: dict[int, Call] = {}
    for call in calls:
        start = len(call.input) - call.systems
        for k in range(len(call.output)):
            produced.setdefault(start + k, call)
    for call in calls[:-1]:
        _refuse_other_inputs(call, rest)
    messages = list(systems)
    for position, message in enumerate(rest):
        maker = produced.get(position)
        if maker is not None and maker is not last:
            message = _as_made(message, maker, position, systems)
        messages.append(message)
    first = calls[0].span.start
    made = {  # each id's first maker last: its start is kept
        call_id: call.span.start for call in reversed(calls) for call_id in call_ids(call.output)
    }
    own = {call_id: made.get(call_id, first) for call_id in call_ids(messages)}
    owned = owned_runs(tools, own, [call.span.start for call in calls], outside or Outside())
    refuse_orphan_runs(owned, own)
    refuse_misnamed_runs(owned, messages)
    runs = [run for run in owned if run.span.start >= first]
    found = slots(messages, {len(systems) + k: call for k, call in produced.items()})
    unsent = unsent_failures(messages, runs, found, calls)  # (of the earlier turns' results)
    messages = with_results(messages, runs, origin, last, found, calls, view)
    messages = with_errors(messages, runs, found, calls, unsent)
    try:
        validate(messages, allow_pending=allow_pending, source=SOURCE)
    except TraceError as error:
        raise moved(error, origin) from None
    return messages


def refuse_orphan_runs(runs: list[ToolRun], own: dict[str, int]) -> None:
    """A tool span of the conversation (``owned_runs``: not another conversation's) whose
    call id names no call the conversation's messages hold answers nothing: its result would
    be dropped, wherever it ran, whether it failed, whatever the last call made. A model-call
    span lost on the way (sampled out, or dropped from a full export queue) leaves one."""
    for run in sorted(runs, key=lambda run: (run.span.start, run.span.index)):
        if run.call_id is not None and run.call_id not in own:
            run.span.fail(
                "orphan_tool_result",
                f"the tool span ran call {run.call_id!r}, which names no call of the "
                f"conversation (its calls: {', '.join(map(repr, own)) or 'none with an id'}): "
                "its result would be dropped (a model-call span lost to sampling or to a "
                "full export queue leaves such a tool span)",
            )


def refuse_misnamed_runs(runs: list[ToolRun], messages: list[Message]) -> None:
    """A tool span placed by its call id that names another tool than its call is
    ``conflicting_fields`` at the name: its result would say another tool made it (a span's
    arguments only place it, the call keeps its own; a name is carried to the result). A call
    id several calls have is left to ``validate`` (``duplicate_tool_call_id``): which of them
    the span ran is not known."""
    names = _call_names(messages)
    for run in runs:
        wanted = names.get(run.call_id) if run.call_id is not None else None
        if wanted is not None and isinstance(run.name, str) and run.name != wanted:
            run.span.fail(
                "conflicting_fields",
                f"the tool span ran call {run.call_id!r}, a call of {wanted!r}, but names "
                f"the tool {run.name!r}",
                next((key for key in _NAME_KEYS if key in run.span.attributes), None),
            )


def _call_names(messages: list[Message]) -> dict[str, str | None]:
    """Each call id's tool name; None for an id that several calls have."""
    names: dict[str, str | None] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.id is not None:
                    names[call.id] = None if call.id in names else call.name
    return names


_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "gen_ai.tool.call.result", "output.value")
"""Where a tool span records its tool's name: GenAI's or OpenInference's attribute, or the
``ToolMessage`` JSON of its result."""


def _as_made(message: Message, maker: Call, position: int, systems: list[Message]) -> Message:
    """The message as the last call was sent it, keeping what the earlier call that made it
    said otherwise: its other system messages (``instructions``) and its output's own
    ``metadata["otel"]`` (``output``: a ``finish_reason``, say). The rest must agree, as
    JSON (``same_record``: ``1`` and ``1.0`` disagree, ``-0.0`` and ``0.0`` agree)."""
    made = _spelled_as(maker.output[position - (len(maker.input) - maker.systems)], message)
    own = dict(message.metadata.get(SOURCE, {}))
    if isinstance(message, AIMessage) and same(maker.input[: maker.systems]) != same(systems):
        own["instructions"] = [m.model_dump(mode="json") for m in maker.input[: maker.systems]]
    if not same_record(made, message):
        if not same_record(made.model_copy(update={"metadata": message.metadata}), message):
            maker.span.fail(
                "conflicting_fields",
                f"the call's output[{position - (len(maker.input) - maker.systems)}] and a "
                "later call's input record that message with different fields",
            )
        own["output"] = made.metadata.get(SOURCE, {})
    if own == message.metadata.get(SOURCE, {}):
        return message
    return message.model_copy(update={"metadata": {**message.metadata, SOURCE: own}})


def _refuse_other_inputs(call: Call, rest: list[Message]) -> None:
    """An earlier call's input must record each message as the last call's does, metadata
    included (the prefix rule compares what the transcript hash covers only): what only the
    earlier record says (a message's or part's other keys, how a call's arguments were
    spelled) would be lost. One text spelled two ways (``_spelled_as``) is one record; the
    two are compared as JSON (``same_record``: ``1`` and ``1.0`` are two records, ``-0.0``
    and ``0.0`` one)."""
    for k, given in enumerate(call.input[call.systems:]):
        if not same_record(_spelled_as(given, rest[k]), rest[k]):
            call.span.fail(
                "conflicting_fields",
                f"the call's input[{call.systems + k}] and a later call's input record that "
                "message with different fields",
            )


def _spelled_as(made: Message, message: Message) -> Message:
    """``made`` with ``message``'s content when the two spell one text differently: a plain
    string and a single text part without metadata (OpenInference's openai-agents
    instrumentation records an output text as ``content`` and ``contents.0``, the same
    message in a later call's input as ``contents.0`` only). The later call's form is kept."""
    if made.content != message.content and _plain_text(made.content) is not None and (
        _plain_text(made.content) == _plain_text(message.content)
    ):
        return made.model_copy(update={"content": message.content})
    return made


def _plain_text(content: Any) -> str | None:
    """A message's content as text when it is a string or one text part without metadata;
    else None."""
    if isinstance(content, str):
        return content
    if len(content) == 1 and isinstance(content[0], TextPart) and not content[0].metadata:
        return content[0].text
    return None


def recorded(call: Call) -> list[tuple[Span, Origin]]:
    """Where the call's span recorded each message of its input and output (``_origins``);
    a message whose place is not known is named by the span alone."""
    listed = [*call.input_from, *call.output_from]
    if len(listed) != len(call.input) + len(call.output):
        listed = [Origin()] * (len(call.input) + len(call.output))
    return [(call.span, where) for where in listed]


def with_results(
    messages: list[Message], runs: list[ToolRun], origin: list[tuple[Span, Origin]], last: Call,
    found: list[Slot], calls: list[Call], view: bool = False,
) -> list[Message]:
    """The results of the last output's calls, from the tool spans that ran after it (by
    call id, or placed by ``_placing``), in the order they ran; results of calls without ids
    in their calls' order (``in_call_order``); one that ran an earlier call is left to
    ``with_errors`` (one that names no call was refused: ``refuse_orphan_runs``). In a
    ``view``, a failed one that recorded no result leaves its call unanswered."""
    closing = messages[-1] if messages else None
    if not isinstance(closing, AIMessage) or not closing.tool_calls:
        return messages
    after = [
        run for run in sorted(runs, key=lambda run: (run.span.start, run.span.index))
        if run.span.start >= last.span.start
    ]
    wanted = {call.id: call for call in closing.tool_calls if call.id is not None}
    results: list[tuple[int | None, ToolRun, ToolMessage]] = []
    attempts = earlier_attempts(runs, found, calls)
    for run in after:
        call_id = run.call_id
        position: int | None = None
        if id(run) in attempts:
            continue  # a failed attempt of a call retried with success: counted by with_errors
        if call_id is None:
            slot = place(run, runs, found, calls)
            if slot.message != len(messages) - 1:
                continue  # it ran an earlier turn's call: read for its error flag only
            call_id = slot.call.id
            position = slot.position if call_id is None else None
        elif call_id not in wanted:
            continue  # an earlier turn's call (this writer's error spans come last)
        if run.span.scope == LLAMA_INDEX_SCOPE and run.result is not None:
            run.span.fail(
                "truncated_trace",
                f"the LlamaIndex tool span that ran call {call_id!r} after the last model call "
                "records the ToolOutput's JSON, not the result LlamaIndex stores and sends the "
                "model (nor, for a return_direct tool, the answer it ends the run with): no "
                "model call's messages hold that result",
            )
        if is_wrapped_output(run.span, json_or_text(run.result)):
            run.span.fail(
                "truncated_trace",
                f"the Traceloop LangChain tool span that ran call {call_id!r} after the last "
                "model call records LangChain's callback output, which is not a serialized "
                "ToolMessage (the str() of another object, a LangGraph Command say): no "
                "model call's messages hold the result the model was sent",
            )
        if run.result is None:
            if view and run.error:
                _refuse_answered_twice(run, call_id, results)
                continue
            if run.error and recorded_input(run):
                run.span.fail(
                    "truncated_trace",
                    f"the tool span that ran call {call_id!r} after the last model call "
                    "failed; instrumentations record no result on a failed tool span (its "
                    "input is recorded: content capture was on), and the trace ends before a "
                    "model call's input records the text the framework made of the error "
                    "(not a pending call, with allow_pending too: the tool ran and failed)",
                )
            run.span.fail(
                "content_not_captured",
                f"the tool span that ran call {call_id!r} recorded no result "
                "(gen_ai.tool.call.result, or OpenInference's output.value): "
                + CAPTURE_SWITCHES,
            )
        namespace = dict(run.namespace)
        if not isinstance(run.result, str):  # a number, a list...: its JSON, marked so
            namespace["response"] = "value"
        result = ToolMessage(
            content=_text(run.result),
            tool_call_id=call_id,
            name=run.name if isinstance(run.name, str) else None,
            is_error=run.error,
            metadata={SOURCE: namespace} if namespace else {},
        )
        results.append((position, run, result))
    ordered = in_call_order(results)
    origin.extend((run.span, Origin(result_id=id_attribute(run.span))) for run, _ in ordered)
    return [*messages, *(result for _, result in ordered)]


def _refuse_answered_twice(
    run: ToolRun, call_id: str | None,
    results: list[tuple[int | None, ToolRun, ToolMessage]],
) -> None:
    """In a view, a failed tool span that recorded no result answers its call with the
    error text the next model call's input holds; when a tool span before it already
    answered that call (with success, say), the call has two answers
    (``orphan_tool_result``, as outside a view): keeping the earlier result alone would give
    the call a result it did not end with, flagged or not."""
    for _, earlier, result in results:
        if call_id is not None and result.tool_call_id == call_id:
            run.span.fail(
                "orphan_tool_result",
                f"the tool span ran call {call_id!r} and failed after the tool span at "
                f"{earlier.span.path} answered it: the call has two answers (the failed "
                "span's error text is in the next model call's input, outside this call's "
                "view)",
                id_attribute(run.span),
            )


def in_call_order(
    results: list[tuple[int | None, ToolRun, ToolMessage]],
) -> list[tuple[ToolRun, ToolMessage]]:
    """The results in the order they ran; when every one answers a call without an id
    (``int``: its position among the closing message's calls), in the order of their calls,
    since results without ids answer calls by position. When the k-th result does not answer
    the k-th call (an earlier call has no result, or two spans ran one call), it would answer
    another call: ``ambiguous_trace`` at its tool span."""
    positions = [position for position, _, _ in results]
    placed = [position for position in positions if position is not None]
    if not results or len(placed) != len(results):
        return [(run, result) for _, run, result in results]
    ordered = sorted(results, key=lambda found: found[0] or 0)
    for place_in_block, (position, run, _) in enumerate(ordered):
        if position != place_in_block:
            run.span.fail(
                "ambiguous_trace",
                f"the tool span ran the last model call's call at position {position}; "
                "those calls record no ids, so results answer them by position, and the "
                f"tool spans after the call ran the calls at positions {sorted(placed)} "
                "(a call before it has no result, or two spans ran one call): its result "
                "cannot be placed at its call",
            )
    return [(run, result) for _, run, result in ordered]


def recorded_input(run: ToolRun) -> bool:
    """Whether the tool span recorded its input (``gen_ai.tool.call.arguments``, or
    OpenInference's ``input.value``), unmasked: content capture was on for it."""
    return run.given is not None and run.given != REDACTED


def _text(result: Any) -> str:
    return result if isinstance(result, str) else dumps(result)


def earlier_attempts(
    runs: list[ToolRun], found: list[Slot], calls: list[Call]
) -> dict[int, str]:
    """The failed tool spans that ran a call another tool span answered with success after
    them (a retry, as LangGraph's ``RetryPolicy`` makes), by their call id (Traceloop's
    LangChain record gives each attempt the call's id) or placed (``_placing``) when they
    have none: ``id(run)`` -> call id. A failed span with no success after it answers with
    its error: it was the last attempt."""
    succeeded = _last_successes(runs)
    attempts: dict[int, str] = {}
    for run in runs:
        if not run.error:
            continue
        call_id = _call_of(run, runs, found, calls)
        if call_id in succeeded and _ran_at(run) < _ran_at(succeeded[call_id]):
            attempts[id(run)] = call_id
    return attempts


def unsent_failures(
    messages: list[Message], runs: list[ToolRun], found: list[Slot], calls: list[Call]
) -> dict[int, str]:
    """The failed tool spans that ran after their call's last success in a turn whose result
    a model call's input holds (``messages``: before the last call's results are added),
    when that result is the text the success recorded and not one the failed span did: the
    model was sent the success, never their error, so they did not answer the call:
    ``id(run)`` -> call id. Otherwise the last failed span answered (``is_error``)."""
    succeeded = _last_successes(runs)
    sent = _sent_texts(messages)
    unsent: dict[int, str] = {}
    if not succeeded or not sent:
        return unsent
    for run in runs:
        if not run.error:
            continue
        call_id = _call_of(run, runs, found, calls)
        success = succeeded.get(call_id) if call_id is not None else None
        if call_id is None or success is None or _ran_at(run) < _ran_at(success):
            continue
        said = sent.get(call_id)
        if said is not None and _recorded_text(success) == said != _recorded_text(run):
            unsent[id(run)] = call_id
    return unsent


def _sent_texts(messages: list[Message]) -> dict[str, str]:
    """The text of each call id's result in ``messages``, when it is plain text (a string, or
    text parts without metadata: their texts joined by newlines, as a message's ``text``)."""
    sent: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id is not None:
            said = _joined_text(message.content)
            if said is not None:
                sent.setdefault(message.tool_call_id, said)
    return sent


def _joined_text(content: Any) -> str | None:
    """A result's content as text when it is a string or text parts without metadata (their
    texts joined by newlines); else None."""
    if isinstance(content, str):
        return content
    if content and all(isinstance(part, TextPart) and not part.metadata for part in content):
        return "\n".join(part.text for part in content)
    return None


def _recorded_text(run: ToolRun) -> str | None:
    """The result the tool span recorded, as a result's text; None when it recorded none."""
    return None if run.result is None else _text(run.result)


def _call_of(run: ToolRun, runs: list[ToolRun], found: list[Slot], calls: list[Call]) -> str | None:
    """The id of the call the tool span ran: its own, or its placed call's (``_placing``)."""
    if run.call_id is not None:
        return run.call_id
    return place(run, runs, found, calls).call.id


def _last_successes(runs: list[ToolRun]) -> dict[str, ToolRun]:
    """Each call id's last successful tool span, by when it started (``_ran_at``)."""
    last: dict[str, ToolRun] = {}
    for run in runs:
        if run.call_id is not None and not run.error and (
            run.call_id not in last or _ran_at(last[run.call_id]) < _ran_at(run)
        ):
            last[run.call_id] = run
    return last


def _ran_at(run: ToolRun) -> tuple[int, int]:
    """When the tool span started; spans that started together in the order given."""
    return run.span.start, run.span.index


def with_errors(
    messages: list[Message], runs: list[ToolRun], found: list[Slot], calls: list[Call],
    unsent: dict[int, str],
) -> list[Message]:
    """``is_error`` from the failed tool spans of results the message lists recorded
    without it: by call id, or placed (``_placing``) when the span has none. A failed span
    that did not answer a call answered with success (``earlier_attempts``, and those whose
    error the model was not sent, ``unsent``) does not flag the result: it is counted in its
    ``metadata["otel"]["failed_attempts"]``. A result that is an error keeps no count: its
    call's last failed span answered it, and no run before that one did."""
    failed = [run for run in runs if run.error]
    if not failed:
        return messages
    attempts = {**earlier_attempts(runs, found, calls), **unsent}
    counts: dict[str, int] = {}
    for call_id in attempts.values():
        counts[call_id] = counts.get(call_id, 0) + 1
    by_id = {
        run.call_id for run in failed if run.call_id is not None and id(run) not in attempts
    }
    flagged: set[int] = set()
    for run in failed:
        if run.call_id is None and id(run) not in attempts:
            where = result_of(messages, place(run, runs, found, calls))
            if where is not None:
                flagged.add(where)
    out: list[Message] = []
    for k, message in enumerate(messages):
        if (
            isinstance(message, ToolMessage)
            and (message.tool_call_id in by_id or k in flagged)
            and not message.is_error
        ):
            message = message.model_copy(update={"is_error": True})
        if (
            isinstance(message, ToolMessage)
            and message.tool_call_id in counts
            and not message.is_error
        ):
            own = {**message.metadata.get(SOURCE, {}),
                   "failed_attempts": counts[message.tool_call_id]}
            message = message.model_copy(update={"metadata": {**message.metadata, SOURCE: own}})
        out.append(message)
    return out


def tool_runs(spans: Iterable[Span]) -> list[ToolRun]:
    """The tool spans' runs. OpenInference's openai-agents handoff span is no tool run: it
    records which agent took over (``is_handoff``); the transfer call and its output are in
    the model calls' own messages. A run that says it was made for no tool call
    (``ToolRun.for_no_call``) is read, then left out of placing: it answers no call."""
    runs = [read_tool(span) for span in spans if is_tool(span) and not is_handoff(span)]
    return [run for run in runs if not run.for_no_call]


def is_handoff(span: Span) -> bool:
    """OpenInference's openai-agents ``HandoffSpanData`` span: kind TOOL, named
    ``handoff to <agent>``, its output the agent taken over to (its input the one handing
    off), with no tool name and no call id."""
    attributes = span.attributes
    to = attributes.get("output.value")
    return (
        attributes.get("openinference.span.kind") == "TOOL"
        and isinstance(to, str)
        and span.name == f"handoff to {to}"
        and isinstance(attributes.get("input.value"), str)
        and not any(
            key in attributes
            for key in ("tool.name", "gen_ai.tool.name", "tool_call.id", "tool.id",
                        "gen_ai.tool.call.id")
        )
    )
