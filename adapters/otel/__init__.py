"""OpenTelemetry spans (GenAI conventions and OpenInference) <-> tracebridge messages.

``to_messages`` takes what an observability stack exports: an OTLP/JSON ``TracesData``
document, a list of them, OTLP JSON lines (one batch per line; a trace may spread over
lines), SDK ``ReadableSpan`` objects or their ``to_json()`` dicts; ids in hex or base64. No
OpenTelemetry package is imported.

Each model-call span (OpenInference ``LLM``; GenAI ``chat`` / ``text_completion`` /
``generate_content``; Traceloop's ``gen_ai.prompt.{i}`` / ``gen_ai.completion.{i}``) holds
that call's whole input and its output. One conversation is rebuilt: the last call's input
plus its output, after proving every earlier call is a prefix of it (see ``_rebuild``: leading
system messages are set aside, since each agent of a run sends its own). Nested duplicate
calls (a framework and the client both instrumented) are dropped once shown to agree.
Assistant messages that only call tools, one after another (the Responses API's items),
are joined into one turn. Results of the last call's tool calls come from tool spans,
matched by call id; ``is_error`` comes from tool spans with status ERROR.

Refused with the span's index and path: no content captured (``content_not_captured``,
naming the switch), dropped attributes or gaps in message indexes and messages with no parts
(``truncated_trace``), ``__REDACTED__`` values (``content_not_captured``), output without
input (``truncated_trace``; ``content_not_captured`` when OpenInference hid it), input with
no output messages from a call that says it answered (``content_not_captured``), several
conversations and no filter (``ambiguous_trace``, with the ids that select each), a span id
repeated with another record, a span naming two sessions, a tool span naming another tool
than its call (``conflicting_fields``), and every conversation rule (Traceloop's ``fc_`` call
ids answered by ``call_`` results are orphan results; so is any tool span whose call id names
no call of the conversation). A span delivered twice with the same record is read once.

What the typed fields do not hold is kept under ``metadata["otel"]``: ``fields`` (a
message's or part's other keys, such as ``finish_reason``), ``arguments`` (how a call's
arguments were spelled when recorded as text), ``response: "json"`` (a tool response that
was JSON, not text), ``system_instructions`` (read from ``gen_ai.system_instructions``),
``instructions`` (an AI message made under other system messages than the last call's),
``output`` (what an earlier call's output said in ``metadata["otel"]`` that the later call's
input does not, such as its ``finish_reason``),
``modality`` (of a file part), ``response_key: "result"`` (a tool result under Pydantic AI's
key), ``role: "user"`` (a tool result sent in a user message, as Pydantic AI does),
``failed_attempts`` (on a result that is not an error, how many failed tool spans of its
call did not answer it: earlier attempts, which another span answered with success after
them, and, in an earlier turn, failures after that success whose error the model was not
sent), and what
the ``openai_chat`` reader keeps for flat messages.

>>> from tracebridge.adapters import otel
>>> from tracebridge import HumanMessage, AIMessage
>>> spans = otel.from_messages([HumanMessage(content="hi"), AIMessage(content="hello")])
>>> [m.text for m in otel.to_messages(spans)]
['hi', 'hello']
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tracebridge._drop import check_flag
from tracebridge.messages import AIMessage, Message
from tracebridge.options import AdapterOptions

from ._calls import Call, is_inference
from ._origins import Origin, joined
from ._owners import Theirs, nested, outside
from ._rebuild import chains, conversation, model_calls, refuse_ambiguous, tool_runs
from ._sessions import selected, span_sessions
from ._spans import (
    SOURCE,
    Span,
    fail,
    id_form,
    is_sdk_span,
    normalize_id,
    once,
    spans_of,
)
from ._write import DROPPABLE, write_document

__all__ = [
    "DROPPABLE",
    "NAME",
    "CallView",
    "calls",
    "detect",
    "from_messages",
    "options",
    "to_messages",
]

NAME = SOURCE
options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""


def to_messages(
    trace: Any,
    *,
    trace_id: str | None = None,
    session_id: str | None = None,
    span_id: str | None = None,
    allow_pending: bool = False,
) -> list[Message]:
    """The conversation the spans record, or with ``span_id`` that one call's view (its
    input and output; calls it made may be unanswered there)."""
    check_flag("allow_pending", allow_pending)  # before the spans: "false" or None is no answer
    traced = once(selected(spans_of(trace), trace_id, None, {}))
    sessions = span_sessions(traced)  # (per trace: other traces' spans are not looked at)
    spans = selected(traced, None, session_id, sessions)
    found = everything = _joined(model_calls(spans, join_calls))
    if span_id is not None:
        wanted = normalize_id(span_id, 8)
        chosen = [call for call in found if call.span.span_id == wanted]
        if not chosen:
            fail("ambiguous_trace",
                 f"no model-call span has span_id {span_id!r}{id_form(span_id, 8)}")
        found = chosen
    if not found:
        fail(
            "malformed_event",
            "no model-call span: expected OpenInference 'LLM' spans or GenAI "
            "chat / text_completion / generate_content spans",
        )
    groups = chains(found, sessions)
    if len(groups) > 1:
        refuse_ambiguous(groups, sessions)
    # One call's view ends where that call did: its own calls may still be unanswered.
    pending = allow_pending or span_id is not None
    chosen_calls = groups[0]
    mine = {id(call) for call in chosen_calls}
    others = [call for call in everything if id(call) not in mine]
    theirs = _other_sessions_calls(traced, spans, sessions, session_id)
    runs = tool_runs(spans)
    claimed = frozenset(
        id(span) for span in spans
        if session_id is not None and sessions.get(id(span)) == session_id
    )
    return conversation(
        chosen_calls, runs, allow_pending=pending, view=span_id is not None,
        outside=outside(chosen_calls[-1], others, theirs, runs, claimed),
    )


def _other_sessions_calls(
    traced: list[Span], spans: list[Span], sessions: dict[int, str], session_id: str | None
) -> Theirs:
    """The model-call spans of other sessions in the traces ``session_id`` selects
    (``spans``' traces; none without it), not read, each with the one it is nested in: a
    tool span that names no session (GenAI's ``execute_tool`` names none) may have run one
    of their calls (``_owners``)."""
    if session_id is None:
        return []
    chosen = {span.trace_id for span in spans}
    theirs = [
        span for span in traced
        if span.trace_id in chosen and is_inference(span)
        and sessions.get(id(span), session_id) != session_id
    ]
    return nested(theirs, traced)


@dataclass(frozen=True)
class CallView:
    """One model call as its span recorded it."""

    trace_id: str
    span_id: str
    input: list[Message]
    output: list[Message]


def calls(
    trace: Any, *, trace_id: str | None = None, session_id: str | None = None
) -> Iterator[CallView]:
    """Each model call's own (input, output), in time order, for per-turn metrics."""
    traced = once(selected(spans_of(trace), trace_id, None, {}))
    spans = selected(traced, None, session_id, span_sessions(traced))
    for call in _joined(model_calls(spans, join_calls)):
        yield CallView(call.span.trace_id, call.span.span_id, call.input, call.output)


def from_messages(
    messages: Any,
    *,
    drop: Collection[str] = (),
    convention: Literal["auto", "genai", "openinference"] = "auto",
) -> dict[str, Any]:
    """One synthetic model-call span in OTLP/JSON (plus tool spans for results after the
    last call and failed results, and a call for each AI message made under other system
    messages, ``metadata["otel"]["instructions"]``).

    ``convention``: ``genai`` writes ``gen_ai.input.messages`` / ``gen_ai.output.messages``;
    ``openinference`` writes OpenInference's flat ``llm.input_messages.{i}.message.*``
    attributes (content parts: text and image URLs; function calls only); ``auto`` writes
    OpenInference when a message keeps what the reader takes from flat messages only (a
    reply whose content was left out or null, a refusal's place, a function's other fields,
    an own key GenAI spells itself: a message's ``parts``, a call's ``name`` or
    ``arguments``), GenAI otherwise. What the reader keeps from the other convention only is
    refused.

    ``drop`` accepts, by name, what GenAI cannot hold (see ``DROPPABLE``): ``citations``
    (in OpenInference, a citation's cited text), ``audio_replies``, ``custom_calls`` (written
    as a function call with args ``{"input": text}``) and ``is_error`` (on a result without
    ``tool_call_id``). A key of ``metadata["otel"]`` the reader never keeps where it is, and
    what no OTLP ``AnyValue`` holds, are refused (``not_representable``). Message ids are
    not written."""
    return write_document(messages, drop=drop, convention=convention)


def detect(trace: Any) -> bool:
    """True for an OTLP/JSON document, a list of them or of span dicts, JSON lines text with
    ``resourceSpans``, or SDK spans; a tuple as a list (the SDK's in-memory exporter gives
    its finished spans as one). Text is told by its opening, not read whole: ``{`` first
    after whitespace, and ``"resourceSpans"`` within the 200 characters from there (a
    document whose first object has longer keys before it is not detected), so the JSON
    text of an array of documents (which ``to_messages`` reads) is not detected."""
    if isinstance(trace, dict):
        return isinstance(trace.get("resourceSpans"), list)
    if isinstance(trace, str):
        opening = _FIRST_CHARACTER.search(trace)
        return opening is not None and opening.group() == "{" and (
            '"resourceSpans"' in trace[opening.start() : opening.start() + 200]
        )
    if isinstance(trace, (list, tuple)) and trace:
        first = trace[0]
        if isinstance(first, dict):
            return isinstance(first.get("resourceSpans"), list) or (
                isinstance(first.get("context"), dict) and "attributes" in first
            )
        return is_sdk_span(first)
    return False


_FIRST_CHARACTER = re.compile(r"\S")
"""The first character of a document's text after its leading whitespace, however long
that is: found without copying the text."""


def _joined(found: list[Call]) -> list[Call]:
    """Each call with its runs of call-only assistant messages joined to the message before
    (and where each was recorded, ``_origins``, joined alike)."""
    joined: list[Call] = []
    for call in found:
        given, given_from = joined_calls(call.input, call.input_from)
        output, output_from = joined_calls(call.output, call.output_from)
        joined.append(Call(call.span, given, output, given_from, output_from))
    return joined


_EMPTY_CONTENT = ({SOURCE: {"content": "absent"}}, {SOURCE: {"content": "null"}})


def join_calls(messages: list[Message]) -> list[Message]:
    """``[AI(call a), AI(call b)]`` -> ``[AI(calls a, b)]``: the Responses API lists each call
    as an item of its own, and instrumentations record each as an assistant message; the
    conversation rules want one turn's calls on one message. Only a call-only message right
    after a message whose calls are all well-formed is joined: such a pair breaks the rules
    otherwise (those calls would be unanswered), so no valid conversation is changed."""
    return joined_calls(messages, [])[0]


def joined_calls(
    messages: list[Message], origins: list[Origin]
) -> tuple[list[Message], list[Origin]]:
    """``join_calls``, with where each message was recorded (``origins``, when given for
    each message) joined alike: a joined message keeps each call's own."""
    out: list[Message] = []
    out_from: list[Origin] = []
    given = len(origins) == len(messages)
    for k, message in enumerate(messages):
        before = out[-1] if out else None
        if isinstance(message, AIMessage) and isinstance(before, AIMessage) and _joins(
            before, message
        ):
            out[-1] = before.model_copy(
                update={"tool_calls": [*before.tool_calls, *message.tool_calls]}
            )
            if given:
                out_from[-1] = joined(out_from[-1], origins[k])
            continue
        out.append(message)
        if given:
            out_from.append(origins[k])
    return out, out_from


def _joins(before: AIMessage, message: AIMessage) -> bool:
    """Whether ``message`` only calls tools, and its calls join those of ``before``."""
    return (
        bool(before.tool_calls)
        and all(call.invalid_args is None for call in before.tool_calls)
        and message.content == ""
        and bool(message.tool_calls)
        and not message.citations
        and message.audio is None
        and message.name == before.name
        and message.metadata in ({}, *_EMPTY_CONTENT)
    )
