"""Typed messages as one synthetic model-call span in OTLP/JSON.

The last ``AIMessage`` (when the conversation ends with it, or with the tool results that
answer it) is the call's output, everything before it the input, in the GenAI convention
here or OpenInference's flat attributes (``_write_flat``). Tool results after it, and
results whose ``is_error`` is set, become tool spans (``gen_ai.tool.call.id`` /
``tool_call.id``, the result, status ERROR for a failed one): that is where the reader finds
them, since message parts have no error flag. An AI message made under other system messages
(``metadata["otel"]["instructions"]``) gets the model call that made it, before the last.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterator
from typing import Any

from pydantic import ValidationError

from tracebridge._drop import check_drop
from tracebridge._json import same_json
from tracebridge._shape import UNCHECKED, unchecked_field, unknown_kind
from tracebridge.errors import TraceError, short_repr
from tracebridge.hashing import canonical_json
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    AudioPart,
    Content,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    Part,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    messages_of,
)
from tracebridge.validation import validate

from ..openai_chat._parts import PartWriter
from ..openai_chat._read import dumps, parse_arguments, read_arguments
from ._calls import REDACTED, TOOL_MESSAGE_OWN, is_tool_message, json_or_text, same
from ._genai import (
    _PART_KEYS,
    INPUT,
    KNOWN_PART_TYPES,
    OUTPUT,
    RESPONSE_KEYS,
    SYSTEM,
    reads_as_parts,
)
from ._placing import could_run
from ._spans import SOURCE
from ._write_flat import (
    FLAT_MARKERS,
    GENAI_MARKERS,
    LONE_TEXT,
    attribute,
    check_storable,
    flat_attributes,
    flat_only_in,
    is_lone_text,
    markers_in,
)
from ._write_keys import check_namespaces

DROPPABLE = ("is_error", "citations", "audio_replies", "custom_calls")
"""What ``from_messages(drop=...)`` may leave out: the GenAI convention has no place for them."""

SCOPE = "tracebridge"


CONVENTIONS = ("auto", "genai", "openinference")


def write_document(
    messages: Any, *, drop: Collection[str] = (), convention: str = "auto"
) -> dict[str, Any]:
    check_drop(drop, DROPPABLE)
    if convention not in CONVENTIONS:
        raise ValueError(f"convention={convention!r} is none of {CONVENTIONS}")
    typed = messages_of(messages, SOURCE)
    validate(typed, allow_pending=True, source=SOURCE)
    try:
        return _document(typed, drop, convention)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, SOURCE)
        if refused is None:
            raise
        raise refused from None


def _document(typed: list[AnyMessage], drop: Collection[str], convention: str) -> dict[str, Any]:
    split = _output_position(typed)
    end = split if split is not None else len(typed)
    sent = [_as_sent(message) for message in typed]
    earlier = _earlier_calls(typed, sent, end)
    if convention != "auto":
        return _written(typed, sent, earlier, split, drop, convention)
    kept = next(_flat_only(typed, earlier), None)
    if kept is None:
        return _written(typed, sent, earlier, split, drop, "genai")
    try:
        return _written(typed, sent, earlier, split, drop, "openinference")
    except TraceError as error:
        raise _with_kept(error, kept) from None


def _written(
    typed: list[AnyMessage],
    sent: list[AnyMessage],
    earlier: list[tuple[int, list[AnyMessage]]],
    split: int | None,
    drop: Collection[str],
    convention: str,
) -> dict[str, Any]:
    """The document of the conversation in one convention."""
    end = split if split is not None else len(typed)
    openinference = convention == "openinference"
    instructed = {i: made[: len(_own(typed[i].metadata).get("instructions", ()))]
                  for i, made in earlier}
    check_namespaces(typed, instructed, not openinference, drop)
    markers = GENAI_MARKERS if openinference else FLAT_MARKERS
    _refuse_markers(typed, earlier, markers, convention, split)
    write = flat_attributes if openinference else _genai_attributes
    last = write(sent, end, split, drop)  # first: a fault of the conversation is told there
    made_calls = [_made_call(typed, i, made, write, drop) for i, made in earlier]
    spans = [_span(number, "chat", call, error=False)
             for number, call in enumerate([*made_calls, last], 1)]
    spans += _tool_spans(typed, split, drop, len(spans) + 1, openinference)
    _identify(spans, SESSION_KEYS[openinference])
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}],
            }
        ]
    }


def _with_kept(error: TraceError, kept: tuple[int, str, str]) -> TraceError:
    """A refusal of the OpenInference writing ``convention="auto"`` chose for ``kept``: one
    that sends to GenAI also names what GenAI would not keep, so that it names both sides."""
    if error.code != "not_representable" or "convention='genai'" not in error.detail:
        return error
    i, path, what = kept
    detail = (f"{error.detail}; but convention='auto' chose openinference for "
              f"messages[{i}]{path} ({what}), which convention='genai' would not keep: no "
              "convention holds both")
    return TraceError(error.code, detail, index=error.index, path=error.path,
                      source=error.source)


SESSION_KEYS = {False: "gen_ai.conversation.id", True: "session.id"}
"""Where each convention names the conversation (the reader's ``_rebuild.SESSION_KEYS``)."""


def _identify(spans: list[dict[str, Any]], key: str) -> None:
    """Ids of the conversation's own, so that documents written for several conversations
    and kept together (an evaluation set) stay apart: the trace id, the span ids and a
    session id, derived from the spans as written before them (the same conversation is
    always written alike; two that read back differently are written differently, so they
    never share them: every ``metadata["otel"]``, of parts and calls too, is in the spans)."""
    digest = hashlib.sha256(canonical_json(spans)).hexdigest()
    for span in spans:
        number = int(span["spanId"], 16)
        span["traceId"] = digest[:32]
        span["spanId"] = hashlib.sha256(f"{digest}:{number}".encode()).hexdigest()[:16]
        span["attributes"].append(_attr(key, digest[:32]))


_MADE = ("instructions", "output")
"""What the reader keeps of the earlier call that made a message (``_rebuild._as_made``)."""


def _as_sent(message: AnyMessage) -> AnyMessage:
    """The message as the last call was sent it: without what its maker said otherwise."""
    own = _own(message.metadata)
    if not any(key in own for key in _MADE):
        return message
    left = {key: value for key, value in own.items() if key not in _MADE}
    metadata = {key: value for key, value in message.metadata.items() if key != SOURCE}
    if left:
        metadata[SOURCE] = left
    return message.model_copy(update={"metadata": metadata})


def _genai_attributes(
    typed: list[AnyMessage], end: int, split: int | None, drop: Collection[str]
) -> list[dict[str, Any]]:
    """The GenAI attributes of one call: input ``typed[:end]``, output ``typed[split]``."""
    attributes: list[dict[str, Any]] = [_attr("gen_ai.operation.name", "chat")]
    first = 0
    for i, message in enumerate(typed):
        if "system_instructions" in _own(message.metadata):
            _system_instructions(message, i)
    if typed and isinstance(typed[0], SystemMessage) and _marked(typed[0], "system_instructions"):
        writer = _Writer(0, drop)
        parts = writer.parts(typed[0].content, "")
        attributes.append(_attr(SYSTEM, json.dumps(parts)))
        first = 1
    given = [_Writer(i, drop).message(typed[i]) for i in range(first, end)]
    attributes.append(_attr(INPUT, json.dumps([m for ms in given for m in ms])))
    if split is not None:
        answered = _Writer(split, drop).message(typed[split])
        attributes.append(_attr(OUTPUT, json.dumps(answered)))
    return attributes


_INSTRUCTED = {SOURCE: {"system_instructions": True}}


def _system_instructions(message: AnyMessage, i: int) -> None:
    """A message marked as read from ``gen_ai.system_instructions``, which holds the parts of
    one system message, first, with nothing else: refused when it says more, or is elsewhere."""
    if i == 0 and isinstance(message, SystemMessage) and message.role == "system" and (
        message.name is None and message.metadata == _INSTRUCTED
    ):
        return
    _Writer(i, ()).refuse(
        f"gen_ai.system_instructions holds the parts of a first system message and nothing "
        f"else (no name, no developer role, no other metadata, {_INSTRUCTED} as its "
        f"metadata): this one would be read back otherwise; remove "
        f"metadata.{SOURCE}.system_instructions to write it in the message list",
        f".metadata.{SOURCE}.system_instructions",
    )


def _markers(
    typed: list[AnyMessage],
    earlier: list[tuple[int, list[AnyMessage]]],
    markers: dict[str, tuple[str, ...]],
) -> Iterator[tuple[int, str, str]]:
    """``(index, path, key)`` of each of ``markers`` kept on a message, or on what an earlier
    call that made it said: its system messages (``instructions``), its output's ``output``."""
    yield from markers_in(typed, markers)
    for i, made in earlier:
        own = _own(typed[i].metadata)
        instructions = made[: len(own["instructions"])] if "instructions" in own else []
        for position, path, key in markers_in(instructions, markers):
            yield i, f".metadata.{SOURCE}.instructions[{position}]{path}", key
        output = _own(made[-1].metadata) if "output" in own else {}
        for key in markers.get("message", ()):
            if key in output:
                yield i, f".metadata.{SOURCE}.output.{key}", key


def _flat_only(
    typed: list[AnyMessage], earlier: list[tuple[int, list[AnyMessage]]]
) -> Iterator[tuple[int, str, str]]:
    """``(index, path below the message, what)`` of each thing only OpenInference (flat)
    messages keep that a message holds, or what an earlier call that made it said (its
    system messages, its output): a marker (``FLAT_MARKERS``), a key GenAI spells itself
    (``FLAT_ONLY_FIELDS``), content of one text part alone."""
    for i, path, key in _markers(typed, earlier, FLAT_MARKERS):
        yield i, path, f"metadata.{SOURCE}.{key}, kept from OpenInference (flat) messages"
    yield from flat_only_in(typed)
    for i, made in earlier:
        own = _own(typed[i].metadata)
        instructions = made[: len(own["instructions"])] if "instructions" in own else []
        for position, path, what in flat_only_in(instructions):
            yield i, f".metadata.{SOURCE}.instructions[{position}]{path}", what
        output = made[-1:] if "output" in own else []
        for _, path, what in flat_only_in(output):
            namespace = f".metadata.{SOURCE}"
            if path.startswith(f"{namespace}."):  # (its calls are the message's)
                path = f"{namespace}.output{path[len(namespace):]}"
            yield i, path, what


_TOOL_SPAN_MARKERS = ("response", "tool_message")


def _refuse_markers(
    typed: list[AnyMessage],
    earlier: list[tuple[int, list[AnyMessage]]],
    markers: dict[str, tuple[str, ...]],
    convention: str,
    split: int | None,
) -> None:
    """Refuse what the reader keeps from the other convention only: written in this one,
    it would be lost. (A result after the last call is written in a tool span, which keeps
    its ``response`` and ``tool_message`` in either.)"""
    for i, path, key in _markers(typed, earlier, markers):
        if split is not None and i > split and key in _TOOL_SPAN_MARKERS:
            continue
        other = "GenAI" if convention == "openinference" else "OpenInference (flat)"
        _Writer(i, ()).refuse(
            f"metadata.{SOURCE}.{key} was kept from {other} messages and has no place in "
            f"the {convention} convention; write convention="
            f"{'genai' if convention == 'openinference' else 'openinference'!r}, or "
            "remove it",
            path,
        )


def _own(metadata: dict[str, Any]) -> dict[str, Any]:
    own = metadata.get(SOURCE)
    return own if isinstance(own, dict) else {}


def _earlier_calls(
    typed: list[AnyMessage], sent: list[AnyMessage], end: int
) -> list[tuple[int, list[AnyMessage]]]:
    """The model call that made each message the reader marked with what that call said
    otherwise (``_MADE``): its system messages (``instructions``, else the conversation's),
    the conversation before the message (after the leading system messages), and the
    message as it answered (its ``output`` namespace, when kept). The reader proves each a
    prefix of the last call and keeps what it said again."""
    systems = 0
    while systems < len(sent) and isinstance(sent[systems], SystemMessage):
        systems += 1
    calls = []
    for i, message in enumerate(typed):
        own = _own(message.metadata)
        found = [key for key in _MADE if key in own]
        if not found:
            continue
        writer = _Writer(i, ())
        if i >= end or i < systems:
            writer.refuse(
                f"metadata.{SOURCE}.{found[0]} says what an earlier model call that made this "
                "message said otherwise; "
                + ("the last call's reply is made by the last call" if i >= end else
                   "the system messages the conversation starts with are not made by a call"),
                f".metadata.{SOURCE}.{found[0]}",
            )
        given = list(sent[:systems])
        if "instructions" in own:
            where = f".metadata.{SOURCE}.instructions"
            if not isinstance(message, AIMessage):
                writer.malformed("only an AI message is made under instructions", where)
            given = _instructions(own["instructions"], writer, where)
            if same(given) == same(list(sent[:systems])):
                writer.malformed(
                    f"{where[1:]} names the system messages the conversation starts with: "
                    "the reader keeps only others",
                    where,
                )
        calls.append((i, [*given, *sent[systems:i], _as_output(sent[i], own, writer)]))
    return calls


def _as_output(message: AnyMessage, own: dict[str, Any], writer: _Writer) -> AnyMessage:
    """The message as the call that made it answered: its ``output`` namespace, if kept."""
    if "output" not in own:
        return message
    kept = own["output"]
    where = f".metadata.{SOURCE}.output"
    if not isinstance(message, AIMessage):
        writer.malformed("only an AI message is a model call's output", where)
    if isinstance(kept, dict):
        for key in _MADE:
            if key in kept:
                writer.malformed(f"{where[1:]} holds {key!r}: what the call that made the "
                                 "message said is kept beside it, not in it",
                                 f"{where}.{key}")
    if not isinstance(kept, dict) or kept == _own(message.metadata):
        writer.malformed(
            f"{where[1:]} is the metadata.{SOURCE} of the call's output when it differs from "
            f"the message's, as to_messages keeps it; got {short_repr(kept)}",
            where,
        )
    metadata = {key: value for key, value in message.metadata.items() if key != SOURCE}
    if kept:
        metadata[SOURCE] = kept
    return message.model_copy(update={"metadata": metadata})


def _made_call(
    typed: list[AnyMessage],
    i: int,
    made: list[AnyMessage],
    write: Callable[[list[AnyMessage], int, int | None, Collection[str]], list[dict[str, Any]]],
    drop: Collection[str],
) -> list[dict[str, Any]]:
    """The attributes of the earlier call that made ``typed[i]`` (``made``: its input, then
    it), with a fault told at the conversation's message: its kept instructions, or it."""
    kept = _own(typed[i].metadata).get("instructions")
    instructions = len(kept) if isinstance(kept, list) else 0  # (checked: a list, when kept)
    for k in range(instructions):  # a lone text part would come back as the plain text
        if write is _genai_attributes and is_lone_text(made[k].content):
            _Writer(i, drop).refuse(LONE_TEXT, f".metadata.{SOURCE}.instructions[{k}].content")
    try:
        return write(made, len(made) - 1, len(made) - 1, drop)
    except TraceError as error:
        if error.index is None or error.path is None:
            raise
        at = f"messages[{error.index}]"
        suffix = error.path[len(at):] if error.path.startswith(at) else ""
        if error.index < instructions:
            path = f"messages[{i}].metadata.{SOURCE}.instructions[{error.index}]{suffix}"
        else:
            path = f"messages[{i}]{suffix}"
        raise error.relocated(index=i, path=path) from None


def _instructions(kept: Any, writer: _Writer, where: str) -> list[AnyMessage]:
    if not isinstance(kept, list):
        writer.malformed(f"{where[1:]} must be a list of system messages, as to_messages "
                         "writes it", where)
    found: list[AnyMessage] = []
    for k, item in enumerate(kept):
        try:
            system = SystemMessage.model_validate(item)
        except ValidationError:
            system = None
        if (
            system is None
            or system.model_dump(mode="json") != item
            or system.id is not None  # (never written: the reader gives none)
            or set(system.metadata) - {SOURCE}
        ):
            writer.malformed(f"{where[1:]}[{k}] must be a system message's JSON, as "
                             "to_messages writes it (every field, as it dumps itself; no id, "
                             f"no metadata but metadata.{SOURCE})",
                             f"{where}[{k}]")
        found.append(system)
    return found


def _output_position(typed: list[AnyMessage]) -> int | None:
    """The last AIMessage when only its tool results follow it; else None (no output)."""
    for i in range(len(typed) - 1, -1, -1):
        message = typed[i]
        if isinstance(message, AIMessage):
            return i
        if not isinstance(message, ToolMessage):
            return None
    return None


def _tool_spans(
    typed: list[AnyMessage],
    split: int | None,
    drop: Collection[str],
    start: int,
    openinference: bool,
) -> list[dict[str, Any]]:
    spans = []
    number = start
    names = _call_names(typed)
    for i, message in enumerate(typed):
        if not isinstance(message, ToolMessage):
            continue
        trailing = split is not None and i > split
        writer = _Writer(i, drop)
        attempts = _failed_attempts(typed, i, writer)
        if not (trailing or message.is_error or attempts):
            continue
        if message.tool_call_id is None:
            if trailing:
                writer.refuse(
                    "a tool result after the last model call needs its tool_call_id: the "
                    "reader finds it in a tool span by id",
                    ".tool_call_id",
                )
            writer.lose("an error flag on a result without tool_call_id", ".is_error", "is_error")
            continue
        keys = _OPENINFERENCE_TOOL if openinference else _GENAI_TOOL
        if attempts:
            call = attempts[0]
            failed = [_attr(keys[0], keys[1]), _attr(keys[3], call.name),
                      _attr(_ARGUMENTS[openinference], dumps(call.args))]
            for _ in range(attempts[1]):
                spans.append(_span(number, "execute_tool", list(failed), error=True))
                number += 1
        attributes = [
            _attr(keys[0], keys[1]),
            _attr(keys[2], writer.utf8(message.tool_call_id, ".tool_call_id")),
        ]
        if message.name is not None:
            _refuse_other_tool(names, message, writer)
            attributes.append(_attr(keys[3], writer.utf8(message.name, ".name")))
        if trailing:
            attributes.append(attribute(keys[4], writer.tool_result(message)))
        spans.append(_span(number, "execute_tool", attributes, error=message.is_error))
        number += 1
    return spans


_ARGUMENTS = {False: "gen_ai.tool.call.arguments", True: "input.value"}


def _call_names(typed: list[AnyMessage]) -> dict[str, str]:
    """Each call id's tool name, from the first call that has the id."""
    names: dict[str, str] = {}
    for message in typed:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.id is not None:
                    names.setdefault(call.id, call.name)
    return names


def _refuse_other_tool(names: dict[str, str], message: ToolMessage, writer: _Writer) -> None:
    """A result written as a tool span (its name there) that names another tool than the
    call it answers (``names``: ``_call_names``): the reader refuses a span that does
    (``conflicting_fields``)."""
    made = names.get(message.tool_call_id) if message.tool_call_id is not None else None
    if made is not None and made != message.name:
        writer.refuse(f"a result named {message.name!r} answering a call of {made!r}: "
                      "its tool span would name another tool than its call", ".name")


def _failed_attempts(
    typed: list[AnyMessage], i: int, writer: _Writer
) -> tuple[ToolCall, int] | None:
    """The call a result answers and how many failed attempts of it the reader counted
    (``metadata["otel"]["failed_attempts"]``): each is written as a failed tool span without
    a call id, holding the tool's name and arguments, which the reader places on that call."""
    message = typed[i]
    own = _own(message.metadata)
    if "failed_attempts" not in own:
        return None
    count = own["failed_attempts"]
    where = f".metadata.{SOURCE}.failed_attempts"
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        writer.malformed(f"metadata.{SOURCE}.failed_attempts is a count of at least 1 when "
                         f"to_messages keeps it; got {count!r}", where)
    assert isinstance(message, ToolMessage)
    if message.is_error or message.tool_call_id is None:
        writer.refuse("failed attempts are kept on a result answered with success, by "
                      "tool_call_id: the reader counts them only there", where)
    calls = [(j, k, call) for j, m in enumerate(typed) if isinstance(m, AIMessage)
             for k, call in enumerate(m.tool_calls)]
    # the rules were checked: a result with a tool_call_id answers a call of that id
    j, k, call = next(found for found in calls if found[2].id == message.tool_call_id)
    given = dumps(call.args)  # the span's input, as written
    # the calls the reader would place the span on (by the arguments, or one text argument)
    alike = [other for _, _, other in calls
             if could_run(call.name, given, json_or_text(given), other)]
    if call.invalid_args is not None or len(alike) != 1:
        writer.refuse("a failed attempt is written as a tool span without a call id, placed "
                      "by its tool name and arguments (as an object, or a tool's one text "
                      "argument alone); another call matches them too (or its arguments did "
                      "not parse), so it would not read back on this call",
                      where)
    _Writer(j, ()).utf8(call.name, f".tool_calls[{k}].name")  # (a span attribute of its own)
    return call, count


_GENAI_TOOL = ("gen_ai.operation.name", "execute_tool", "gen_ai.tool.call.id", "gen_ai.tool.name",
               "gen_ai.tool.call.result")
_OPENINFERENCE_TOOL = ("openinference.span.kind", "TOOL", "tool_call.id", "tool.name",
                       "output.value")


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _span(number: int, name: str, attributes: list[dict[str, Any]], error: bool) -> dict[str, Any]:
    return {
        "traceId": "",  # set by _identify
        "spanId": f"{number:016x}",
        "name": name,
        "kind": "SPAN_KIND_CLIENT" if name == "chat" else "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": str(2 * number - 1),
        "endTimeUnixNano": str(2 * number),
        "attributes": attributes,
        "status": {"code": "STATUS_CODE_ERROR"} if error else {},
    }


def _marked(message: AnyMessage, key: str) -> bool:
    own = message.metadata.get(SOURCE)
    return isinstance(own, dict) and own.get(key) is True


class _Writer(PartWriter):
    """Writes the typed message at one index as GenAI message dicts."""

    def __init__(self, index: int, drop: Collection[str]) -> None:
        super().__init__(SOURCE, index, drop)

    def message(self, message: AnyMessage) -> list[dict[str, Any]]:
        namespace = self.namespace(message.metadata)
        out: dict[str, Any]
        if isinstance(message, SystemMessage):
            out = {"role": message.role, "parts": self.parts(message.content, "")}
        elif isinstance(message, HumanMessage):
            out = {"role": "user", "parts": self.parts(message.content, "")}
        elif isinstance(message, AIMessage):
            out = {"role": "assistant", "parts": self.reply(message)}
        elif isinstance(message, ToolMessage):
            role = namespace.get("role", "tool")
            if role not in ("tool", "user"):
                self.malformed(f"metadata.{SOURCE}.role is 'user' when to_messages keeps it "
                               f"(a result sent in a user message); got {role!r}",
                               f".metadata.{SOURCE}.role")
            out = {"role": role, "parts": [self.result(message, namespace)]}
        else:
            unknown_kind(message)
        if message.name is not None:
            out["name"] = message.name
        self.extra(out, namespace.get("fields", {}), ("role", "parts", "name"), "fields")
        return [out]

    def extra(
        self, out: dict[str, Any], kept: dict[str, Any], taken: Collection[str], key: str,
        path: str = "",
    ) -> None:
        """Write the kept keys beside ``out``'s own; one the reader gives a meaning (``taken``)
        would be read back as that, not kept, so it is refused."""
        for name, value in kept.items():
            if name in taken or name in out:
                self.refuse(
                    f"metadata.{SOURCE}.{key} holds {name!r}, a key GenAI gives a meaning of "
                    "its own: it would be read back as that, not kept",
                    f"{path}.metadata.{SOURCE}.{key}.{name}",
                )
            out[name] = value

    def reply(self, message: AIMessage) -> list[dict[str, Any]]:
        if message.citations:
            self.lose("GenAI messages have no place for citations", ".citations", "citations")
        if message.audio is not None:
            self.lose("GenAI messages have no place for an audio reply", ".audio", "audio_replies")
        calls = [self.call(call, k) for k, call in enumerate(message.tool_calls)]
        if message.content == "" and calls:
            return calls
        return [*self.parts(message.content, ""), *calls]

    def parts(self, content: Content, path: str) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": "text", "content": self.text(content, f"{path}.content")}]
        if content == []:  # (None, in a message made unchecked, falls below and is named)
            self.refuse("a message with an empty part list (GenAI messages need parts)", ".content")
        return [self.part(part, f"{path}.content[{j}]") for j, part in enumerate(content)]

    def part(  # no role: GenAI messages take every part in every role
        self, part: Part, path: str, role: str = ""
    ) -> dict[str, Any]:
        fields = self.namespace(part.metadata).get("fields", {})
        out: dict[str, Any]
        if isinstance(part, TextPart):
            out = {"type": "text", "content": self.text(part.text, path)}
        elif isinstance(part, ReasoningPart):
            out = {"type": "reasoning", "content": self.text(part.text, path)}
        elif isinstance(part, RefusalPart):
            out = {"type": "refusal", "content": self.text(part.text, path)}
        elif isinstance(part, (ImagePart, AudioPart, FilePart)):
            out = self.media(part, path)
        elif isinstance(part, OpaquePart):
            if "verbatim" in self.namespace(part.metadata):
                self.refuse(
                    f"metadata.{SOURCE}.verbatim marks a part kept whole from a Chat "
                    "Completions part list (Traceloop's content), which neither GenAI nor "
                    "OpenInference messages hold: GenAI would read it back unmarked",
                    f"{path}.metadata.{SOURCE}.verbatim",
                )
            if fields:
                self.refuse(
                    f"metadata.{SOURCE}.fields on an opaque part: the reader keeps a part of "
                    "a type it does not know whole, as the part's value",
                    f"{path}.metadata.{SOURCE}.fields",
                )
            value = part.value
            if (
                isinstance(value, dict)
                and value.get("type") == part.kind
                and part.kind not in KNOWN_PART_TYPES
            ):
                return dict(value)
            return {"type": "opaque", "kind": part.kind, "value": value}
        else:
            unknown_kind(part)
        taken = _PART_KEYS.get(out["type"], {"type"})
        if not isinstance(part, ImagePart):  # the reader keeps their detail beside them
            taken = taken - {"detail"}
        self.extra(out, fields, taken, "fields", path)
        return out

    def utf8(self, text: str, path: str) -> str:
        """``text`` as a span attribute's own string, refused when it has no UTF-8 form."""
        check_storable(self, text, path)
        return text

    def text(self, text: str, path: str) -> str:
        if text == REDACTED:
            self.refuse(
                f"the text {REDACTED!r} is how instrumentations mark masked content: the "
                "reader would refuse it as content not captured",
                path,
            )
        return text

    def media(self, part: ImagePart | AudioPart | FilePart, path: str) -> dict[str, Any]:
        file_id = part.file_id if isinstance(part, FilePart) else None
        given = [name for name, value in (("file_id", file_id), ("url", part.url),
                                          ("data", part.data)) if value is not None]
        if len(given) > 1:
            # a GenAI part is a file id, a URI or a blob: one source, never two
            self.refuse(
                f"a GenAI media part holds one of a file id, a URI or inline data; this "
                f"{part.type} part has {' and '.join(given)}",
                path,
            )
        if isinstance(part, ImagePart):
            modality = "image"
        elif isinstance(part, AudioPart):
            modality = "audio"
        else:
            modality = self.namespace(part.metadata).get("modality", "file")
            if (modality == "file" and "modality" in self.namespace(part.metadata)) or not (
                isinstance(modality, str)
            ):
                self.malformed(
                    f"metadata.{SOURCE}.modality must be a modality other than 'file' (text), "
                    f"as to_messages keeps it; got {modality!r}",
                    f"{path}.metadata.{SOURCE}.modality",
                )
        out: dict[str, Any]
        if isinstance(part, FilePart) and part.file_id is not None:
            out = {"type": "file", "modality": modality, "file_id": part.file_id}
        elif part.url is not None:
            out = {"type": "uri", "modality": modality, "uri": part.url}
        else:
            out = {"type": "blob", "modality": modality, "content": part.data}
        if part.mime_type is not None:
            out["mime_type"] = part.mime_type
        if isinstance(part, ImagePart) and part.detail is not None:
            out["detail"] = part.detail
        if isinstance(part, FilePart) and (
            part.filename is not None or (part.file_id is None and modality in ("image", "audio"))
        ):
            out["filename"] = part.filename  # (a null one keeps it a file when read back)
        return out

    def call(self, call: ToolCall, k: int) -> dict[str, Any]:
        namespace = self.namespace(call.metadata)
        if call.kind == "custom":
            self.lose(
                "GenAI tool calls have no custom (free-text) kind; it would be written as a "
                "function call with args {'input': text}",
                f".tool_calls[{k}]",
                "custom_calls",
            )
        out: dict[str, Any] = {"type": "tool_call"}
        if call.id is not None:
            out["id"] = call.id
        out["name"] = call.name
        arguments = _arguments(call, namespace.get("arguments"), "arguments" in namespace)
        if call.invalid_args is not None:
            # What the reader makes of them: an object is the arguments, text is parsed.
            read_back = arguments if isinstance(arguments, dict) else (
                read_arguments(arguments) if isinstance(arguments, str) else None
            )
            if read_back is not None:
                self.refuse_read_back(call, read_back, f".tool_calls[{k}].invalid_args")
        out["arguments"] = arguments
        self.extra(out, namespace.get("fields", {}), ("type", "id", "name", "arguments"),
                   "fields", f".tool_calls[{k}]")
        return out

    def tool_result(self, message: ToolMessage) -> Any:
        """A tool span's result: the text, the value a non-text result was (``"response":
        "value"``: its JSON is the content), or LangChain's ``ToolMessage`` JSON when the
        reader kept fields of one (``metadata["otel"]["tool_message"]``), read content blocks
        (``"response": "json"``), or would take the text for such JSON."""
        content = message.content
        if not isinstance(content, str):
            self.refuse("a tool span's result is text; this result has content parts", ".content")
        content = self.text(content, ".content")
        namespace = self.namespace(message.metadata)
        if namespace.get("response") == "value":
            return self.result_value(content, namespace)
        kept = namespace.get("tool_message", {})
        where = f".metadata.{SOURCE}.tool_message"
        if not isinstance(kept, dict):
            self.malformed(f"{where[1:]} must be an object, as to_messages writes it", where)
        for key in ("fields", "part_fields", "response_key", "role", "content"):
            if key in namespace:
                self.refuse(f"a tool span's result has no place for metadata.{SOURCE}.{key} "
                            "(a result after the last model call is read from its tool span)",
                            f".metadata.{SOURCE}.{key}")
        blocks = json_or_text(content) if namespace.get("response") == "json" else None
        if "response" in namespace and not isinstance(blocks, list):
            self.refuse(
                "a tool span's result is text: it keeps a JSON response only as the content "
                "blocks of LangChain's ToolMessage (a result after the last model call is "
                "read from its tool span)",
                f".metadata.{SOURCE}.response",
            )
        if not (kept or isinstance(blocks, list) or is_tool_message(json_or_text(content))):
            return self.utf8(content, ".content")  # (in JSON text, escaped: as it is here)
        for key in TOOL_MESSAGE_OWN:
            if key in kept and key != "name":
                self.malformed(f"{where[1:]}.{key} is a field the tool message itself holds",
                               f"{where}.{key}")
        if "name" in kept and message.name is None:
            self.refuse(
                "the ToolMessage JSON's own name is kept, and the message has none: the "
                "reader would take the kept name for the message's",
                ".name",
            )
        data: dict[str, Any] = {
            "content": blocks if isinstance(blocks, list) else content,
            "type": "tool",
            "tool_call_id": message.tool_call_id,
            "status": "error" if message.is_error else "success",
        }
        if message.name is not None:
            data["name"] = message.name
        data.update(kept)
        return json.dumps({"type": "tool", "data": data})

    def result_value(self, content: str, namespace: dict[str, Any]) -> Any:
        """The non-text value a tool span's result held, from its JSON (the content)."""
        where = f".metadata.{SOURCE}.response"
        if set(namespace) != {"response"}:
            others = sorted(set(namespace) - {"response"})
            self.refuse(f"a tool span's result that was a value holds nothing else; "
                        f"metadata.{SOURCE} also keeps {others}", where)
        value = _json_value(content, self, "a value that is not text")
        if is_tool_message(value):
            self.refuse("this value is LangChain's ToolMessage JSON: the reader would take it "
                        "for one", where)
        if value is None:
            self.refuse("a null value is an empty AnyValue, which the reader takes for a tool "
                        "span that recorded no result", where)
        check_storable(self, value, where)
        return value

    def result(self, message: ToolMessage, namespace: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_call_response"}
        if message.tool_call_id is not None:
            out["id"] = message.tool_call_id
        if "tool_message" in namespace:
            self.refuse(
                "the kept fields of LangChain's ToolMessage are written in a tool span's "
                "result, which is read only for a result after the last model call; remove "
                f"metadata.{SOURCE}.tool_message to write the result without them",
                f".metadata.{SOURCE}.tool_message",
            )
        content = message.content
        if isinstance(content, str):
            response: Any = self.text(content, ".content")
            if "response" in namespace:
                response = _json_response(content, namespace["response"], self)
                if reads_as_parts(response):
                    self.refuse(
                        "this JSON output is a list of what GenAI reads as content parts: "
                        "in a message list it would read back as parts, not as its text (a "
                        "tool span's result keeps it only after the last model call)",
                        ".content",
                    )
        else:
            # a list with a part type the reader does not know reads as a tool's JSON output:
            # an opaque part that would be written as its own value is wrapped instead
            response = [
                {"type": "opaque", "kind": part.kind, "value": part.value}
                if isinstance(part, OpaquePart) and written.get("type") not in KNOWN_PART_TYPES
                else written
                for part, written in zip(content, self.parts(content, ""), strict=True)
            ]
        key = namespace.get("response_key", "response")
        if key not in RESPONSE_KEYS:
            self.malformed(f"metadata.{SOURCE}.response_key is one of {list(RESPONSE_KEYS)} when "
                           f"to_messages keeps it; got {key!r}",
                           f".metadata.{SOURCE}.response_key")
        out[key] = response
        # a key read before this one would be read as the response instead
        taken = ("type", "id", *RESPONSE_KEYS[: RESPONSE_KEYS.index(key) + 1])
        self.extra(out, namespace.get("part_fields", {}), taken, "part_fields")
        return out


def _json_response(content: str, marker: Any, writer: _Writer) -> Any:
    """The JSON value a result's text spells (``"response": "json"``): refused when the
    reader would give other text back (a string, which reads as text, or another spelling)."""
    where = f".metadata.{SOURCE}.response"
    if marker == "value":
        writer.refuse("a result that was a value, not text, is kept only in the tool span of "
                      "a result after the last model call", where)
    if marker != "json":
        writer.malformed(f"metadata.{SOURCE}.response is 'json' when to_messages keeps it; got "
                         f"{marker!r}", where)
    return _json_value(content, writer, "a JSON response")


def _json_value(content: str, writer: _Writer, what: str) -> Any:
    """The value whose JSON ``content`` is, as the reader writes JSON: refused when the
    reader would give other text back (not JSON, a string, which reads as text, or another
    spelling)."""
    where = f".metadata.{SOURCE}.response"
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        writer.refuse(f"the result is marked as {what}, but its text is not JSON", where)
    if isinstance(value, str) or dumps(value) != content:
        writer.refuse(
            f"the result is marked as {what}, which the reader gives back as "
            f"{short_repr(dumps(value) if not isinstance(value, str) else value)}, not as "
            "this text",
            where,
        )
    return value


def _arguments(call: ToolCall, spelled: Any, kept: bool) -> Any:
    """The arguments as the span holds them: an object, or the text that was recorded."""
    if call.invalid_args is not None:
        recorded = kept and not isinstance(spelled, str)
        if recorded and dumps(spelled) == call.invalid_args:
            return spelled
        return call.invalid_args
    if spelled == "text":
        return dumps(call.args)
    if isinstance(spelled, str) and same_json(parse_arguments(spelled), call.args, zero_signs=True):
        return spelled
    return call.args
