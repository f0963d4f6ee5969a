"""One model call per inference span: its input and output messages, read from whichever
convention the span carries, after checking nothing was lost on the way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from tracebridge.errors import short_repr
from tracebridge.hashing import hashed_messages
from tracebridge.messages import Message, SystemMessage

from ..openai_chat._read import dumps
from . import _traceloop as traceloop
from ._flat import (
    LEGACY_INPUT,
    LEGACY_OUTPUT,
    OPENINFERENCE_INPUT,
    OPENINFERENCE_OUTPUT,
    RESPONSES_SCOPES,
    flat_messages,
    has_flat,
)
from ._genai import (
    INPUT,
    OUTPUT,
    SYSTEM,
    genai_messages,
    reads_as_parts,
    response_key,
    system_instructions,
)
from ._llama_index import PROMPTS, is_completion, prepares_only, tool_arguments
from ._spans import Span

INFERENCE_OPERATIONS = frozenset(("chat", "text_completion", "generate_content"))
REDACTED = "__REDACTED__"

CAPTURE_SWITCHES = (
    "OpenTelemetry's instrumentations record it with "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (and "
    "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), Traceloop's with "
    "TRACELOOP_TRACE_CONTENT=true and use_attributes=True (False sends it to log events), "
    "OpenInference's unless OPENINFERENCE_HIDE_INPUTS / "
    "OPENINFERENCE_HIDE_OUTPUTS (or OPENINFERENCE_HIDE_INPUT_MESSAGES / "
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES) are set"
)


IMAGE_SWITCHES = (
    "OpenInference masks an image when OPENINFERENCE_HIDE_INPUT_IMAGES is set, and a base64 "
    "image longer than OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH (32,000 characters unless raised)"
)


@dataclass(frozen=True)
class Call:
    """One model call: the span, what it was sent and what it answered."""

    span: Span
    input: list[Message]
    output: list[Message]

    @property
    def systems(self) -> int:
        """How many messages at the start of the input are system messages."""
        count = 0
        for message in self.input:
            if not isinstance(message, SystemMessage):
                break
            count += 1
        return count


def is_inference(span: Span) -> bool:
    attributes = span.attributes
    if attributes.get("openinference.span.kind") == "LLM":
        return not prepares_only(span)
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in INFERENCE_OPERATIONS:
        return True
    return has_flat(span, LEGACY_INPUT) or has_flat(span, LEGACY_OUTPUT)


def refuse_cut_call(span: Span) -> None:
    """A span that is not read as a model call but dropped attributes (``dropped_attributes``)
    and holds message attributes is ``truncated_trace``: the SDK's limit drops the oldest
    attributes, and instrumentations set the one that makes a span a model call
    (``gen_ai.operation.name``, ``openinference.span.kind``) first. A span that still says it
    is something else (a chain, a tool) is left to what it says."""
    attributes = span.attributes
    if not span.dropped_attributes or any(key in attributes for key in _KINDS):
        return
    held = next((key for key in attributes if key in (INPUT, OUTPUT, SYSTEM)
                 or key.startswith(_FLAT)), None)
    if held is not None:
        span.fail(
            "truncated_trace",
            f"the span dropped {span.dropped_attributes} attribute(s) "
            f"(droppedAttributesCount) and holds messages ({held}) but no attribute that says "
            f"what it is ({', '.join(_KINDS)}): the SDK's attribute limit (128 by default, "
            "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut the oldest attributes, which instrumentations "
            "set first, so the model call it records cannot be read",
        )


_KINDS = ("gen_ai.operation.name", "openinference.span.kind")


def is_tool(span: Span) -> bool:
    attributes = span.attributes
    return (
        attributes.get("openinference.span.kind") == "TOOL"
        or attributes.get("gen_ai.operation.name") == "execute_tool"
    )


def read_call(span: Span) -> Call:
    """The call's messages; refuses a span that lost or never recorded them."""
    if span.dropped_attributes:
        span.fail(
            "truncated_trace",
            f"the span dropped {span.dropped_attributes} attribute(s) "
            "(droppedAttributesCount): the SDK's attribute limit (128 by default, "
            "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut messages out of it",
        )
    _refuse_redacted(span)
    readings: list[tuple[str, list[Message] | None, list[Message] | None]] = []
    if INPUT in span.attributes or OUTPUT in span.attributes or SYSTEM in span.attributes:
        systems = system_instructions(span)
        given = genai_messages(span, INPUT)
        if systems is not None:
            given = [*systems, *(given or [])]
        readings.append((INPUT, given, genai_messages(span, OUTPUT)))
    if has_flat(span, OPENINFERENCE_INPUT) or has_flat(span, OPENINFERENCE_OUTPUT):
        readings.append((
            OPENINFERENCE_INPUT,
            flat_messages(span, OPENINFERENCE_INPUT, openinference=True),
            flat_messages(span, OPENINFERENCE_OUTPUT, openinference=True),
        ))
    if has_flat(span, LEGACY_INPUT) or has_flat(span, LEGACY_OUTPUT):
        readings.append((
            LEGACY_INPUT,
            flat_messages(span, LEGACY_INPUT, openinference=False),
            flat_messages(span, LEGACY_OUTPUT, openinference=False),
        ))
    if not readings and is_completion(span):
        span.fail(
            "not_representable",
            "a LlamaIndex text completion: the model call recorded its prompt as one "
            f"formatted string ({PROMPTS}) and its text as output.value, no messages (content "
            "capture was on); a completion is no conversation of messages, and no role of "
            "the prompt's text is recorded",
            PROMPTS,
        )
    if not readings:
        _refuse_content_in_events(span)
        ref = [key for key in (f"{INPUT}.ref", f"{OUTPUT}.ref") if key in span.attributes]
        where = f" (only a reference to uploaded content: {ref[0]})" if ref else ""
        span.fail(
            "content_not_captured",
            f"a model call recorded no message content{where}: content capture was off. "
            + CAPTURE_SWITCHES,
        )
    key, given, answered = readings[0]
    for other, other_input, other_output in readings[1:]:
        if same(other_input or []) != same(given or []) or same(other_output or []) != same(
            answered or []
        ):
            span.fail(
                "conflicting_fields",
                f"the span's {key}* and {other}* attributes record different messages",
                other,
            )
    _refuse_choices(span, readings)
    if given is None:
        span.fail(
            "truncated_trace",
            "the model call's output was recorded without its input (Traceloop drops the "
            "input of a call that holds a base64 image)",
            key,
        )
    return Call(span=span, input=given, output=answered or [])


def _refuse_content_in_events(span: Span) -> None:
    """A model call whose messages are in span events, as the GenAI convention recorded them
    before ``gen_ai.input.messages`` (``gen_ai.content.prompt`` / ``gen_ai.content.completion``,
    ``gen_ai.user.message`` / ``gen_ai.choice``): content capture was on, but span events are
    not read."""
    found = [name for name in span.events if is_content_event(name)]
    if found:
        span.fail(
            "content_not_captured",
            f"the model call's messages are in span events ({', '.join(sorted(set(found)))}), "
            "as the GenAI convention recorded them before gen_ai.input.messages; span events "
            "are not read. Instrumentations record messages as span attributes with "
            "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (and "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only)",
        )


def is_content_event(name: str) -> bool:
    """Whether a span event's name is one the GenAI convention gave message content."""
    return name.startswith("gen_ai.") and (
        name.startswith("gen_ai.content.") or name.endswith(".message")
        or name == "gen_ai.choice"
    )


def _refuse_choices(
    span: Span, readings: list[tuple[str, list[Message] | None, list[Message] | None]]
) -> None:
    """Several output messages that are the call's choices (``n`` > 1): alternatives, not
    turns, and nothing says which one the conversation went on with. GenAI's output
    messages and Traceloop's ``gen_ai.completion.{i}`` are one per choice; OpenInference's
    ``llm.output_messages.{i}`` are too, except from its Responses API readers (one per
    output item), unless the request asked for several choices."""
    key, _, answered = readings[0]
    if answered is None or len(answered) < 2:
        return
    asked = _choice_count(span)
    items = key == OPENINFERENCE_INPUT and span.scope in RESPONSES_SCOPES
    if items and (asked is None or asked < 2):
        return
    attribute = {INPUT: OUTPUT, OPENINFERENCE_INPUT: f"{OPENINFERENCE_OUTPUT}.1",
                 LEGACY_INPUT: f"{LEGACY_OUTPUT}.1"}[key]
    said = f" (n = {asked})" if asked is not None else ""
    span.fail(
        "ambiguous_trace",
        f"the model call returned {len(answered)} choices{said}: each is an alternative "
        "reply, not a later turn, and the span does not say which one the conversation "
        "went on with (request one choice, n=1)",
        attribute,
    )


def _choice_count(span: Span) -> int | None:
    """How many choices the request asked for: GenAI ``gen_ai.request.choice.count``, or
    ``n`` in OpenInference's ``llm.invocation_parameters`` (JSON text)."""
    count = span.attributes.get("gen_ai.request.choice.count")
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    parameters = span.attributes.get("llm.invocation_parameters")
    if isinstance(parameters, str):
        parameters = _parsed(parameters)
    if isinstance(parameters, dict):
        n = parameters.get("n")
        if isinstance(n, int) and not isinstance(n, bool):
            return n
    return None


def same(messages: list[Message]) -> str:
    """What the transcript hash covers, as text: two readings agree when this does."""
    return json.dumps(hashed_messages(messages), sort_keys=True)


def _refuse_redacted(span: Span) -> None:
    """OpenInference's masking (``OPENINFERENCE_HIDE_*``) leaves ``__REDACTED__`` where a
    message's text was; a text that is exactly that is refused (the writer refuses it too)."""
    for key, value in span.attributes.items():
        if key in (INPUT, OUTPUT, SYSTEM):
            found = _holds_redacted(value if not isinstance(value, str) else _parsed(value))
        elif key.startswith(_FLAT) and key.endswith(_MASKABLE):
            found = value == REDACTED
        elif key.startswith(_FLAT) and key.endswith(".url") and value == REDACTED:
            span.fail(
                "content_not_captured",
                f"{key} holds {REDACTED!r}: the instrumentation masked the image. "
                + IMAGE_SWITCHES,
                key,
            )
        else:
            continue
        if found:
            span.fail(
                "content_not_captured",
                f"{key} holds {REDACTED!r}: the instrumentation masked the content. "
                + CAPTURE_SWITCHES,
                key,
            )


_MASKABLE = (".content", ".text", ".arguments", ".function_call_arguments_json")
_FLAT = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # (nested past Python's depth: not read as JSON)
        return None  # the reader says what is wrong with it


def _holds_redacted(value: Any) -> bool:
    """Whether a GenAI message list (or ``gen_ai.system_instructions``' part list) holds a
    message text that is the marker: a text, reasoning or refusal part's ``content``, or a
    tool result's ``response`` (or a text part of it). Nothing else is looked into: a
    call's arguments, an opaque part's value or a kept field may say anything."""
    if not isinstance(value, list):
        return False
    parts: list[Any] = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("parts"), list):
            parts.extend(item["parts"])  # a message
        else:
            parts.append(item)  # a part of the system instructions
    while parts:
        part = parts.pop()
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "reasoning", "refusal") and part.get("content") == REDACTED:
            return True
        if kind == "tool_call_response":
            key = response_key(part)
            response = part[key] if key is not None else None
            if response == REDACTED:
                return True
            if reads_as_parts(response):
                parts.extend(response)
    return False


@dataclass(frozen=True)
class ToolRun:
    """A tool span: the call it ran (by id, or by name and arguments), its result, its status;
    ``namespace``: what the result says beyond those, for ``metadata["otel"]``."""

    span: Span
    name: str | None
    call_id: str | None
    args: Any
    result: Any
    error: bool
    namespace: dict[str, Any] = field(default_factory=dict)
    given: Any = None
    """The input as recorded (``args`` is it parsed when it is JSON text)."""
    for_no_call: bool = False
    """The span says it ran for no tool call (Traceloop's LangChain record,
    ``traceloop.for_no_call``): it answers and flags nothing."""


TOOL_MESSAGE_DEFAULTS: dict[str, Any] = {
    "id": None, "artifact": None, "additional_kwargs": {}, "response_metadata": {}
}
"""Fields of LangChain's ``ToolMessage`` JSON that say nothing when they hold these values."""

TOOL_MESSAGE_OWN = ("type", "content", "tool_call_id", "status", "name")
"""Fields of that JSON the tool message itself holds (the rest is kept verbatim)."""


def read_tool(span: Span) -> ToolRun:
    attributes = span.attributes
    name = _text_or_none(span, "gen_ai.tool.name", "tool.name")
    call_id = _call_id(span)
    given = _one_of(span, "gen_ai.tool.call.arguments", "input.value")
    no_call = traceloop.for_no_call(span, json_or_text(given))
    args, wrapped_id = traceloop.tool_input(span, json_or_text(given))
    args = tool_arguments(span, args)
    if wrapped_id is not None:
        if call_id is not None and call_id != wrapped_id:
            span.fail("conflicting_fields", f"the span's call id {call_id!r} and the one its "
                      f"LangChain tool input records {wrapped_id!r} differ", traceloop.ARGUMENTS)
        call_id = wrapped_id
    result = _one_of(span, "gen_ai.tool.call.result", "output.value")
    where = "gen_ai.tool.call.result" if "gen_ai.tool.call.result" in attributes else "output.value"
    if result == REDACTED:  # OPENINFERENCE_HIDE_OUTPUTS masks a tool's output too
        span.fail("content_not_captured", f"{where} holds {REDACTED!r}: the instrumentation "
                  "masked the tool's output. " + CAPTURE_SWITCHES, where)
    parsed = json_or_text(result)
    output = traceloop.tool_output(span, parsed, call_id)
    if isinstance(output, str):
        result, parsed = output, json_or_text(output)
    elif output is not None:
        parsed = output
    if is_tool_message(parsed):
        run = _tool_message(span, parsed, where, name, call_id, args, given)
        return replace(run, for_no_call=no_call)
    return ToolRun(span, name, call_id, args, result, span.error, given=given,
                   for_no_call=no_call)


def _call_id(span: Span) -> str | None:
    """The call id: GenAI ``gen_ai.tool.call.id``, OpenInference ``tool_call.id`` or its
    ``tool.id`` (``SpanAttributes.TOOL_ID``); two that disagree are ``conflicting_fields``."""
    call_id = _text_or_none(span, "gen_ai.tool.call.id", "tool_call.id")
    other = _text_or_none(span, "tool.id", "tool.id")
    if call_id is not None and other is not None and other != call_id:
        span.fail("conflicting_fields", f"the span's call id {call_id!r} and its tool.id "
                  f"{other!r} differ", "tool.id")
    return call_id if call_id is not None else other


def is_tool_message(value: Any) -> bool:
    """Whether a tool span's result (parsed when it is JSON text) is LangChain's
    ``ToolMessage`` JSON, ``{"type": "tool", "data": {...}}``."""
    return (
        isinstance(value, dict)
        and value.keys() == {"type", "data"}
        and value["type"] == "tool"
        and isinstance(value["data"], dict)
    )


def _tool_message(
    span: Span, parsed: dict[str, Any], where: str, name: str | None, call_id: str | None,
    args: Any, given: Any,
) -> ToolRun:
    """A result that is LangChain's ``ToolMessage`` JSON, as OpenInference's LangChain
    instrumentation records it: its content, call id and status read; every other field
    that says something (an artifact, an id, kwargs, a name other than the span's) kept."""
    data = parsed["data"]
    given_id = data.get("tool_call_id")
    if given_id is not None and not isinstance(given_id, str):
        span.fail("malformed_event", f"the ToolMessage's tool_call_id must be a string, "
                  f"got {given_id!r}", where)
    if call_id is not None and given_id is not None and given_id != call_id:
        span.fail("conflicting_fields", f"the span runs call {call_id!r}, its ToolMessage "
                  f"answers {given_id!r}", where)
    status = data.get("status", "success")
    if status not in ("success", "error"):
        span.fail("malformed_event", "the ToolMessage's status is 'success' or 'error', got "
                  f"{status!r}", where)
    if data.get("type", "tool") != "tool":
        span.fail("malformed_event", f"the ToolMessage's data has type {data['type']!r}", where)
    content = data.get("content")
    if not isinstance(content, (str, list)):
        span.fail("malformed_event", "a ToolMessage's content is a string or a list of blocks, "
                  f"got {content!r}", where)
    given_name = data.get("name")
    if given_name is not None and not isinstance(given_name, str):
        span.fail("malformed_event", f"the ToolMessage's name must be a string, got "
                  f"{given_name!r}", where)
    kept = {
        key: value
        for key, value in data.items()
        if key not in TOOL_MESSAGE_OWN
        and not (key in TOOL_MESSAGE_DEFAULTS and value == TOOL_MESSAGE_DEFAULTS[key])
    }
    if name is None:
        name = given_name
    elif given_name is not None and given_name != name:
        kept["name"] = given_name
    namespace: dict[str, Any] = {"tool_message": kept} if kept else {}
    if isinstance(content, list):  # content blocks: their JSON text, written back as the list
        content = dumps(content)
        namespace["response"] = "json"
    return ToolRun(
        span, name, call_id or given_id, args, content, span.error or status == "error",
        namespace, given,
    )


def _one_of(span: Span, key: str, other: str) -> Any:
    """The value of ``key`` (GenAI) or ``other`` (OpenInference), whichever the span has;
    when it has both they must agree (``conflicting_fields`` at ``other``)."""
    attributes = span.attributes
    if key in attributes and other in attributes and attributes[key] != attributes[other]:
        span.fail("conflicting_fields", f"the span's {key} and {other} record different "
                  f"values ({short_repr(attributes[key])} and {short_repr(attributes[other])})",
                  other)
    return attributes.get(key, attributes.get(other))


def _text_or_none(span: Span, key: str, fallback: str) -> str | None:
    """The text of the first of two attributes the span has; a value that is not text is
    malformed there (it would pair a tool run with no call, or with the wrong one)."""
    value = _one_of(span, key, fallback)
    if value is not None and not isinstance(value, str):  # (None: an empty value)
        attribute = key if key in span.attributes else fallback
        span.fail("malformed_event", f"{attribute} must be a string, got {value!r}", attribute)
    return value


def json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # the text, as it is
            return value
    return value
