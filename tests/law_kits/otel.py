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
  the span's position; the path names the message and part in ``gen_ai.input.messages``),
  and span documents that cannot be trusted: content capture off, dropped attributes, a
  message without parts, ``__REDACTED__`` content, output without input, an unknown role,
  and two conversations in one document (no index).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st
from pydantic import TypeAdapter

from tracebridge import AIMessage, Message, TextPart, ToolMessage
from tracebridge.adapters import otel
from tracebridge.adapters.otel._write import _Writer

from law_kits import BrokenTrace, LawKit
from strategies import Broken, Shape, conversations, mutate_unknown_role, rule_mutations

MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
SHAPE = Shape(
    metadata=False, message_ids=False, citations=False, audio_replies=False, custom_calls=False
)
"""What one GenAI model-call span holds.

No generated metadata (``metadata=False``): the faithful law needs ``to_messages`` to give back
all of ``m``, and the format carries only the keys of ``metadata["otel"]`` its writer owns, each
with its own meaning; a namespace of any keys (what ``strategies.metadata`` draws) is another
adapter's or a wrong one, which the writer leaves out by design
(``test_from_messages_reads_only_its_own_namespace``). The owned keys are built by the example
and golden tests, from what instrumentations write."""


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


def written_each(broken: Broken) -> list[list[dict[str, Any]]]:
    """Each message written on its own (the writer refuses a broken conversation whole)."""
    written = []
    for i, message in enumerate(broken.messages):
        if broken.code == "unknown_role" and i == broken.index:  # mutate_unknown_role's
            # message: a role we do not know ("developer" is one GenAI messages have, so it
            # is spelled otherwise)
            role = f"{message['type']}_bot"
            written.append([{"role": role, "parts": [{"type": "text", "content": ""}]}])
        else:  # (mutate_unknown_role gives the others dumped too)
            typed = MESSAGE.validate_python(message) if isinstance(message, dict) else message
            written.append(_Writer(i, otel.DROPPABLE).message(expressible([typed])[0]))
    return written


FIELD = re.compile(r"\.(tool_call_id|type|tool_calls\[(\d+)\])(\.id)?$")


def input_path(written: list[list[dict[str, Any]]], broken: Broken) -> str:
    """Where the span reports ``broken``'s field: in its message of ``gen_ai.input.messages``,
    a call or result by its part (``.type`` is the GenAI message's role)."""
    assert broken.index is not None
    match = FIELD.fullmatch(broken.field)
    assert match is not None, broken.field
    at = sum(len(each) for each in written[: broken.index])
    (message,) = written[broken.index]
    if match[1] == "type":
        field = ".role"
    elif match[1] == "tool_call_id":
        field = f".parts[{_part(message, 'tool_call_response', 0)}].id"
    else:
        field = f".parts[{_part(message, 'tool_call', int(match[2]))}]{match[3] or ''}"
    span_at = "resourceSpans[0].scopeSpans[0].spans[0]"
    return f"{span_at}.attributes['gen_ai.input.messages[{at}]{field}']"


def _part(message: dict[str, Any], kind: str, k: int) -> int:
    """The position of the ``k``-th part of type ``kind``."""
    return [j for j, part in enumerate(message["parts"]) if part["type"] == kind][k]


def rule_broken(broken: Broken) -> BrokenTrace:
    written = written_each(broken)
    given = attribute("gen_ai.input.messages", [m for each in written for m in each])
    path = input_path(written, broken)
    return BrokenTrace(document(span(1, [given])), broken.code, 0, path)


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


RULES = {
    "unknown_role": mutate_unknown_role(SHAPE).map(rule_broken),
    **{code: mutation.map(rule_broken) for code, mutation in rule_mutations(SHAPE).items()},
}

KIT = LawKit(
    traces=OTEL_CONVERSATIONS.map(otel.from_messages),
    conversations=OTEL_CONVERSATIONS,
    broken=st.one_of(*RULES.values(), untrustworthy()),
    rules=RULES,
)
