"""Which session each span is in, and the spans the ``trace_id`` / ``session_id`` filters keep.

A span is in the session it names (``session.id``, ``gen_ai.conversation.id``, LangSmith's
thread keys), else in the one its nearest ancestor that names one names (OpenInference's
``using_session`` names it on every span; an application may name it on its root span
only), else, when its trace names one session only, in that one. A span that names two
different sessions under two keys is ``conflicting_fields``; a session id that is not text
is ``malformed_event`` at its key (never "no session"). One trace may hold several
sessions (an evaluation loop running each case in its own session under one root span):
sessions are told apart per span, never per trace.
"""

from __future__ import annotations

from tracebridge.errors import short_repr

from ._spans import Span, fail, id_form, normalize_id

SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langsmith.metadata.thread_id",
    "langsmith.metadata.session_id",
    "langsmith.metadata.conversation_id",
)


def session_of(span: Span) -> str | None:
    """The session the span itself names. Two keys that name different sessions
    (OpenInference's ``session.id`` and a GenAI ``gen_ai.conversation.id``, say) are
    ``conflicting_fields`` at the second: the span would be read into either conversation."""
    found: tuple[str, str] | None = None
    for key in SESSION_KEYS:
        value = _session_key(span, key)
        if value is None:
            continue
        if found is None:
            found = (key, value)
        elif value != found[1]:
            span.fail(
                "conflicting_fields",
                f"the span names two sessions: {found[0]} = {found[1]!r} and {key} = "
                f"{value!r}; which conversation it is in cannot be told",
                key,
            )
    return None if found is None else found[1]


def _session_key(span: Span, key: str) -> str | None:
    """The session ``key`` names, None when the span has no such key; a value that is not
    text (``set_attribute("session.id", 7)``) is ``malformed_event`` at the key: read as no
    session, the span would be put in another session's conversation."""
    value = span.attributes.get(key)
    if value is not None and not isinstance(value, str):
        span.fail("malformed_event", f"{key} must be a string (a session id is text), got "
                  f"{short_repr(value)}", key)
    return value


def span_sessions(spans: list[Span]) -> dict[int, str]:
    """``id(span)`` -> the session the span is in (see the module's docstring); spans in
    none are left out."""
    named = {id(span): own for span in spans if (own := session_of(span)) is not None}
    if not named:
        return named
    by_id = {(span.trace_id, span.span_id): span for span in spans}
    found: dict[int, str | None] = {}
    for span in spans:
        walked: dict[int, None] = {}  # (a parent cycle ends the walk)
        node: Span | None = span
        session: str | None = None
        while node is not None and id(node) not in walked:
            if id(node) in found:
                session = found[id(node)]
                break
            walked[id(node)] = None
            session = named.get(id(node))
            if session is not None:
                break
            parent = node.parent_id
            node = None if parent is None else by_id.get((node.trace_id, parent))
        for key in walked:
            found[key] = session
    traces: dict[str, set[str]] = {}
    for span in spans:
        if id(span) in named:
            traces.setdefault(span.trace_id, set()).add(named[id(span)])
    sessions: dict[int, str] = {}
    for span in spans:
        session = found[id(span)]
        if session is None and len(traces.get(span.trace_id, ())) == 1:
            (session,) = traces[span.trace_id]
        if session is not None:
            sessions[id(span)] = session
    return sessions


def selected(
    spans: list[Span], trace_id: str | None, session_id: str | None, sessions: dict[int, str]
) -> list[Span]:
    """The spans the filters keep: ``session_id`` keeps the traces that hold spans of that
    session, less their spans of other sessions (``sessions``: ``span_sessions``)."""
    if trace_id is not None:
        wanted = normalize_id(trace_id, 16)
        spans = [span for span in spans if span.trace_id == wanted]
        if not spans:
            fail("ambiguous_trace",
                 f"no span has trace_id {trace_id!r}{id_form(trace_id, 16)}")
    if session_id is not None:
        traces = {span.trace_id for span in spans if sessions.get(id(span)) == session_id}
        if not traces:
            keys = ", ".join(SESSION_KEYS)
            fail("ambiguous_trace", f"no span has session id {session_id!r} ({keys})")
        spans = [
            span for span in spans
            if span.trace_id in traces and sessions.get(id(span), session_id) == session_id
        ]
    return spans
