"""One model call per inference span: its input and output messages, read from whichever
convention the span carries, after checking nothing was lost on the way."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from tracebridge._json import RepeatedKey, unique_keys
from tracebridge.errors import short_repr
from tracebridge.messages import Message, SystemMessage

from ..openai_chat._read import dumps
from . import _traceloop as traceloop
from ._agreement import Reading, agreed
from ._agreement import same as same  # (read from here by the rebuild and the writer)
from ._flat import (
    IMAGE_SWITCHES,
    LEGACY_INPUT,
    LEGACY_OUTPUT,
    OPENINFERENCE_INPUT,
    OPENINFERENCE_OUTPUT,
    RESPONSES_SCOPES,
    flat_messages,
    flat_read,
    has_flat,
)
from ._genai import (
    INPUT,
    OUTPUT,
    SYSTEM,
    genai_messages,
    genai_read,
    reads_as_parts,
    response_key,
    system_instructions,
)
from ._llama_index import (
    PROMPTS,
    builds_request,
    is_completion,
    prepares_only,
    tool_arguments,
)
from ._origins import Origin
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


@dataclass(frozen=True)
class Call:
    """One model call: the span, what it was sent and what it answered."""

    span: Span
    input: list[Message]
    output: list[Message]
    input_from: list[Origin] = field(default_factory=list)
    """Where each input message was recorded (``_origins``)."""
    output_from: list[Origin] = field(default_factory=list)

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
    and holds message attributes, or a tool span's (``TOOL_KEYS``), is ``truncated_trace``:
    the SDK's limit drops the oldest attributes, and instrumentations set the one that makes
    a span a model call or a tool run (``gen_ai.operation.name``, ``openinference.span.kind``)
    first. A span that still says what it is (a chain, a tool) is left to what it says."""
    attributes = span.attributes
    if not span.dropped_attributes or any(key in attributes for key in _KINDS):
        return
    held = next((key for key in attributes if key in (INPUT, OUTPUT, SYSTEM)
                 or key.startswith(_FLAT)), None)
    if held is not None:
        _refuse_cut(span, f"holds messages ({held})", "the model call it records")
    ran = next((key for key in TOOL_KEYS if key in attributes), None)
    if ran is not None:
        _refuse_cut(span, f"holds a tool run's {ran}", "the tool run it records (its result "
                    "or error, for a call of the conversation)")


def _refuse_cut(span: Span, holds: str, lost: str) -> NoReturn:
    span.fail(
        "truncated_trace",
        f"the span dropped {span.dropped_attributes} attribute(s) "
        f"(droppedAttributesCount) and {holds} but no attribute that says "
        f"what it is ({', '.join(_KINDS)}): the SDK's attribute limit (128 by default, "
        "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut the oldest attributes, which instrumentations "
        f"set first, so {lost} cannot be read",
    )


TOOL_KEYS = ("gen_ai.tool.call.id", "gen_ai.tool.call.result", "gen_ai.tool.call.arguments",
             "gen_ai.tool.name", "tool_call.id", "tool.id", "tool.name")
"""Attributes only tool spans record: GenAI's and OpenInference's call id, result, input
and tool name."""

_KINDS = ("gen_ai.operation.name", "openinference.span.kind")


def is_tool(span: Span) -> bool:
    attributes = span.attributes
    return (
        attributes.get("openinference.span.kind") == "TOOL"
        or attributes.get("gen_ai.operation.name") == "execute_tool"
    )


def read_call(span: Span) -> Call:
    """The call's messages; refuses a span that lost or never recorded them."""
    _refuse_dropped(span)
    _refuse_content_in_events(span)
    _refuse_redacted(span)
    readings = _readings(span)
    if not readings:
        _refuse_unrecorded(span)
    key = readings[0][0]
    given, answered = agreed(span, readings)
    _refuse_choices(span, readings)
    if given is None:
        _refuse_inputless(span, key)
    if answered is None or not answered[0]:  # (GenAI's output list may be "[]")
        _refuse_hidden_output(span)
    output, output_from = answered or ([], [])
    return Call(span, given[0], output, given[1], output_from)


def _refuse_inputless(span: Span, key: str) -> NoReturn:
    """A model call whose output was recorded without its input: OpenInference's switch that
    hides input messages, or Traceloop's dropping of an input that holds a base64 image."""
    if key == OPENINFERENCE_INPUT:
        span.fail(
            "content_not_captured",
            "the model call's output was recorded without its input: OpenInference leaves "
            "the input messages out when OPENINFERENCE_HIDE_INPUT_MESSAGES (or "
            "OPENINFERENCE_HIDE_INPUTS) is set; unset it to record them",
            key,
        )
    span.fail(
        "truncated_trace",
        "the model call's output was recorded without its input (Traceloop drops the "
        "input of a call that holds a base64 image)",
        key,
    )


ANSWER_EVIDENCE = ("output.value", "llm.token_count.completion", "llm.finish_reason",
                   "gen_ai.response.finish_reasons", "gen_ai.usage.output_tokens",
                   "gen_ai.usage.completion_tokens", "gen_ai.response.finish_reason",
                   "llm.response.finish_reason")
"""Attributes that say a model call answered when its output messages are not recorded:
OpenInference's ``output.value`` (the response), output token count and finish reason, GenAI's
finish reasons and output token count, and those of Traceloop's older convention (the one of
``gen_ai.prompt.{i}``: ``gen_ai.usage.completion_tokens``, and the finish reason as
``llm.response.finish_reason``, later ``gen_ai.response.finish_reason``)."""


def _refuse_hidden_output(span: Span) -> None:
    """A model call that recorded its input but no output messages (no output attribute, or
    an empty ``gen_ai.output.messages``, as an instrumentation that records no message for
    the reply's items writes it), did not fail, and says it answered (``ANSWER_EVIDENCE``;
    not a LlamaIndex span that only builds a request): its output messages were not recorded
    (a switch hid them, or the reply held only items the instrumentation records no message
    for), and reading the call as one that answered nothing would lose its reply."""
    found = next((key for key in ANSWER_EVIDENCE if key in span.attributes), None)
    if span.error or found is None or builds_request(span):
        return
    if has_flat(span, OPENINFERENCE_INPUT):
        hint = ("OpenInference records no output messages when "
                "OPENINFERENCE_HIDE_OUTPUT_MESSAGES (or OPENINFERENCE_HIDE_OUTPUTS, which "
                "hides output.value too) is set, nor for a Responses API reply made only of "
                "items it does not map to messages (MCP tool lists and approval requests, "
                "image generation or code interpreter calls); if a switch is set, unset it")
    else:
        hint = CAPTURE_SWITCHES
    span.fail(
        "content_not_captured",
        f"the model call recorded its input and no output messages, but {found} says it "
        "answered: its output messages were not recorded (a hide switch, or reply items "
        f"the instrumentation does not record as messages). {hint}",
        found,
    )


def _readings(span: Span) -> list[Reading]:
    """The span's input and output in each convention it records them in."""
    readings: list[Reading] = []
    if INPUT in span.attributes or OUTPUT in span.attributes or SYSTEM in span.attributes:
        systems = system_instructions(span)
        given = genai_read(span, INPUT)
        if systems is not None:
            listed, origins = given or ([], [])
            given = [*systems[0], *listed], [*systems[1], *origins]
        readings.append((INPUT, given, genai_read(span, OUTPUT)))
    for input_key, output_key, openinference in (
        (OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT, True), (LEGACY_INPUT, LEGACY_OUTPUT, False)
    ):
        if has_flat(span, input_key) or has_flat(span, output_key):
            readings.append((
                input_key,
                flat_read(span, input_key, openinference=openinference),
                flat_read(span, output_key, openinference=openinference),
            ))
    return readings


def _refuse_unrecorded(span: Span) -> NoReturn:
    """A model call that recorded no messages in any convention."""
    if is_completion(span):
        span.fail(
            "not_representable",
            "a LlamaIndex text completion: the model call recorded its prompt as one "
            f"formatted string ({PROMPTS}) and its text as output.value, no messages (content "
            "capture was on); a completion is no conversation of messages, and no role of "
            "the prompt's text is recorded",
            PROMPTS,
        )
    _refuse_details_event(span)
    ref = [key for key in (f"{INPUT}.ref", f"{OUTPUT}.ref") if key in span.attributes]
    where = f" (only a reference to uploaded content: {ref[0]})" if ref else ""
    span.fail(
        "content_not_captured",
        f"a model call recorded no message content{where}: content capture was off. "
        + CAPTURE_SWITCHES,
    )


def read_output(span: Span) -> list[Message]:
    """What the model call answered, in every convention the span records it in, without
    reading its input: enough to tell which calls it made. Refused as ``read_call`` refuses
    a span that lost it, or recorded no messages at all (its output is not known)."""
    _refuse_dropped(span)
    _refuse_content_in_events(span)
    if not (INPUT in span.attributes or OUTPUT in span.attributes or SYSTEM in span.attributes
            or any(has_flat(span, prefix) for prefix in _FLAT_PREFIXES)):
        _refuse_unrecorded(span)
    found: list[Message] = []
    if OUTPUT in span.attributes:
        found += genai_messages(span, OUTPUT) or []
    for prefix, openinference in ((OPENINFERENCE_OUTPUT, True), (LEGACY_OUTPUT, False)):
        if has_flat(span, prefix):
            found += flat_messages(span, prefix, openinference=openinference) or []
    if not found:  # no output attribute, or GenAI's "[]"
        _refuse_hidden_output(span)
    return found


_FLAT_PREFIXES = (OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT, LEGACY_INPUT, LEGACY_OUTPUT)


def _refuse_dropped(span: Span) -> None:
    if span.dropped_attributes:
        span.fail(
            "truncated_trace",
            f"the span dropped {span.dropped_attributes} attribute(s) "
            "(droppedAttributesCount): the SDK's attribute limit (128 by default, "
            "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut messages out of it",
        )


def _refuse_content_in_events(span: Span) -> None:
    """A model call with messages in span events, as the GenAI convention recorded them
    before ``gen_ai.input.messages`` (``gen_ai.content.prompt`` / ``gen_ai.content.completion``,
    ``gen_ai.user.message`` / ``gen_ai.choice``): content capture was on, but span events are
    not read. Refused whatever else the span records: the messages in its events (a reply,
    a system prompt) would be lost."""
    found = [name for name in span.events if is_content_event(name)]
    if found:
        span.fail(
            "content_not_captured",
            f"the model call has messages in span events ({', '.join(sorted(set(found)))}), "
            "as the GenAI convention recorded them before gen_ai.input.messages; span events "
            "are not read. " + _AS_ATTRIBUTES,
        )


DETAILS_EVENT = "gen_ai.client.inference.operation.details"
"""The GenAI convention's event for a model call's details, its messages among them (as
``gen_ai.input.messages`` / ``gen_ai.output.messages``) when content capture sends them to
events; some SDKs record it as a span event. With the messages in span attributes too, the
event adds nothing that is read."""

_AS_ATTRIBUTES = (
    "Instrumentations record messages as span attributes with "
    "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only)"
)


def _refuse_details_event(span: Span) -> None:
    """A model call that records no messages in attributes and has a ``DETAILS_EVENT``: its
    messages are in that event, which is not read (capture was on, not off)."""
    if DETAILS_EVENT in span.events:
        span.fail(
            "content_not_captured",
            f"the model call has messages in a span event ({DETAILS_EVENT}) and none in its "
            "attributes; span events are not read. " + _AS_ATTRIBUTES,
        )


def is_content_event(name: str) -> bool:
    """Whether a span event's name is one the GenAI convention gave message content."""
    return name.startswith("gen_ai.") and (
        name.startswith("gen_ai.content.") or name.endswith(".message")
        or name == "gen_ai.choice"
    )


def _refuse_choices(span: Span, readings: list[Reading]) -> None:
    """Several output messages that are the call's choices (``n`` > 1): alternatives, not
    turns, and nothing says which one the conversation went on with. GenAI's output
    messages and Traceloop's ``gen_ai.completion.{i}`` are one per choice; OpenInference's
    ``llm.output_messages.{i}`` are too, except from its Responses API readers (one per
    output item), unless the request asked for several choices."""
    key, _, answered = readings[0]
    if answered is None or len(answered[0]) < 2:
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
        f"the model call returned {len(answered[0])} choices{said}: each is an alternative "
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
    loose: bool = False
    """The input is JSON text that is not plain JSON (a key given twice, ``NaN``, a number
    past the largest double): read only to place the span on its call (the call keeps its
    own arguments), it does not tell which call that is; the tool name alone does."""


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
    args, wrapped_id = traceloop.tool_input(span, json_or_text(given), given)
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
    if output is not None or is_tool_message(parsed):  # read as a value, not kept as text
        refuse_loose_json(span, where, result)
    if isinstance(output, str):
        result, parsed = output, json_or_text(output)
    elif output is not None:
        parsed = output
    loose = _loose_json(given) is not None
    if is_tool_message(parsed):
        run = _tool_message(span, parsed, where, name, call_id, args, given)
        return replace(run, for_no_call=no_call, loose=loose)
    return ToolRun(span, name, call_id, args, result, span.error, given=given,
                   for_no_call=no_call, loose=loose)


CALL_ID_KEYS = ("gen_ai.tool.call.id", "tool_call.id", "tool.id")


def id_attribute(span: Span) -> str | None:
    """The attribute a tool span records its call id in, None when it has none of them."""
    return next((key for key in CALL_ID_KEYS if key in span.attributes), None)


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


class _NoNumber(ValueError):
    """A number JSON text spells that no double holds (``1e999``), or ``NaN`` / ``Infinity``."""


def _no_number(text: str) -> NoReturn:
    raise _NoNumber(f"{text}, which no JSON number holds (it has no NaN or infinity)")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        _no_number(text)
    return number


_STRICT = json.JSONDecoder(
    object_pairs_hook=unique_keys, parse_constant=_no_number, parse_float=_finite
)


def refuse_loose_json(span: Span, attribute: str, text: Any) -> None:
    """A tool span's JSON text that is read as a value of the output (a result's
    ``ToolMessage`` JSON), not kept as text, where ``json_or_text`` would read silently what
    it cannot: a key given twice (``malformed_event``: which value was meant is not known),
    or ``NaN``, ``Infinity`` or a number past the largest double (``unserializable_value``).
    Text that is no JSON is left to the reader (it is kept as text)."""
    error = _loose_json(text)
    if isinstance(error, RepeatedKey):
        span.fail("malformed_event", f"{attribute}: {error}", attribute)
    if error is not None:
        span.fail("unserializable_value", f"{attribute} holds {error}", attribute)


def _loose_json(text: Any) -> ValueError | None:
    """What JSON text holds that ``json_or_text`` reads silently (a ``RepeatedKey``, or a
    ``_NoNumber``); None for plain JSON, and for what is no JSON text."""
    if not isinstance(text, str) or text[:1] not in ("{", "["):
        return None
    try:
        _STRICT.decode(text)
    except (RepeatedKey, _NoNumber) as error:
        return error
    except (ValueError, RecursionError):  # no JSON: read as the text it is
        return None
    return None


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
