"""Law kit for OpenTelemetry span documents (OTLP/JSON, GenAI convention).

* ``conversations``: typed conversations one synthetic model-call span expresses: no message
  ids, no citations, audio replies or custom calls (the convention has no place for them), no
  empty part lists, no text that is exactly ``__REDACTED__``; a lone text part is the plain
  string (how the reader gives it); results after the last call are text (a tool span's
  result is text).
* ``traces``: the documents ``from_messages`` writes. The lossless law holds for them, not
  for any span document: a trace of N model calls is rebuilt into one conversation, which is
  written back as one call (the golden traces of tests/test_otel_golden.py check what real
  instrumentations write against the histories their applications held).
* ``broken``: the rule mutations of ``strategies`` written as the input of one span (index 0,
  the span's position), and span documents that cannot be trusted: content capture off,
  dropped attributes, a message without parts, ``__REDACTED__`` content, output without input,
  an unknown role, and two conversations in one document (no index).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tracebridge import AIMessage, Message, TextPart, ToolMessage
from tracebridge.adapters import otel
from tracebridge.adapters.otel._write import _Writer

from law_kits import BrokenTrace, LawKit
from strategies import Broken, Shape, conversations, mutate_unknown_role, mutations

SHAPE = Shape(
    metadata=False, message_ids=False, citations=False, audio_replies=False, custom_calls=False
)


def expressible(messages: list[Message]) -> list[Message]:
    out: list[Message] = []
    last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    trailing = last_ai >= 0 and all(isinstance(m, ToolMessage) for m in messages[last_ai + 1:])
    for i, message in enumerate(messages):
        content = message.content
        if isinstance(content, list) and not content:
            content = ""
        if (
            not isinstance(message, ToolMessage)
            and isinstance(content, list)
            and len(content) == 1
            and isinstance(content[0], TextPart)
        ):
            content = content[0].text
        if isinstance(message, ToolMessage) and trailing and i > last_ai:
            content = message.text
        out.append(message.model_copy(update={"content": content}))
    return out


def unmasked(messages: list[Message]) -> bool:
    """No text is exactly ``__REDACTED__`` (the masking marker, refused both ways)."""
    return '"__REDACTED__"' not in json.dumps([m.model_dump(mode="json") for m in messages])


OTEL_CONVERSATIONS = conversations(SHAPE).map(expressible).filter(unmasked)


def attribute(key: str, value: Any) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value)
    return {"key": key, "value": {"stringValue": text}}


def document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}


def span(number: int, attributes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "traceId": f"{number:032x}",
        "spanId": f"{number:016x}",
        "name": "chat",
        "startTimeUnixNano": str(number),
        "endTimeUnixNano": str(number),
        "attributes": [attribute("gen_ai.operation.name", "chat"), *attributes],
        **extra,
    }


def as_input(messages: list[Any]) -> list[dict[str, Any]]:
    """Each message written on its own (the writer refuses a broken conversation whole)."""
    written = []
    for i, message in enumerate(messages):
        if isinstance(message, dict):  # mutate_unknown_role's dumped message: a role we
            # do not know ("developer" is one GenAI messages have, so it is spelled otherwise)
            role = f"{message['type']}_bot"
            written.append({"role": role, "parts": [{"type": "text", "content": ""}]})
        else:
            written.extend(_Writer(i, otel.DROPPABLE).message(expressible([message])[0]))
    return written


def rule_broken(broken: Broken) -> BrokenTrace:
    given = attribute("gen_ai.input.messages", as_input(broken.messages))
    index = None if broken.index is None else 0
    return BrokenTrace(document(span(1, [given])), broken.code, index)


@st.composite
def untrustworthy(draw: st.DrawFn) -> BrokenTrace:
    messages = draw(OTEL_CONVERSATIONS)
    written = otel.from_messages(messages)
    first = written["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    kind = draw(st.sampled_from(
        ["capture_off", "dropped", "no_parts", "redacted", "no_input", "two_conversations"]
    ))
    code = "truncated_trace"
    index: int | None = 0
    given = next(a for a in first["attributes"] if a["key"] == "gen_ai.input.messages")
    if kind == "capture_off":
        first["attributes"] = first["attributes"][:1]
        code = "content_not_captured"
    elif kind == "dropped":
        first["droppedAttributesCount"] = draw(st.integers(1, 50))
    elif kind == "no_parts":
        listed = json.loads(given["value"]["stringValue"])
        listed.append({"role": "user", "parts": []})
        given["value"]["stringValue"] = json.dumps(listed)
    elif kind == "redacted":
        listed = json.loads(given["value"]["stringValue"])
        listed.append({"role": "user", "parts": [{"type": "text", "content": "__REDACTED__"}]})
        given["value"]["stringValue"] = json.dumps(listed)
        code = "content_not_captured"
    elif kind == "no_input":
        first["attributes"] = [  # (an attribute key is listed once)
            a for a in first["attributes"]
            if a is not given and a["key"] != "gen_ai.output.messages"
        ]
        first["attributes"].append(attribute("gen_ai.output.messages", [
            {"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}
        ]))
    else:
        other = span(9, [attribute("gen_ai.input.messages", [
            {"role": "user", "parts": [{"type": "text", "content": "another conversation"}]},
            {"role": "user", "parts": [{"type": "text", "content": "and its second turn"}]},
        ])])
        written["resourceSpans"][0]["scopeSpans"][0]["spans"].append(other)
        code, index = "ambiguous_trace", None
    return BrokenTrace(written, code, index)


KIT = LawKit(
    traces=OTEL_CONVERSATIONS.map(otel.from_messages),
    conversations=OTEL_CONVERSATIONS,
    broken=st.one_of(
        mutations(SHAPE).map(rule_broken),
        mutate_unknown_role(SHAPE).map(rule_broken),
        untrustworthy(),
    ),
)
