"""AgentWorkflow / FunctionAgent event streams -> typed messages.

An event is the object ``handler.stream_events()`` yields, or its JSON form from
``dump_events``: ``{"event": "<class name>", "data": <model_dump(mode="json")>}``, or the
parsed output of the workflow's ``JsonSerializer`` (``qualified_name`` and ``value``).
``EVENT_TYPES`` says what each event type contributes; any other type is ``unknown_role``.

New messages of an ``AgentInput``: the input repeats the whole history each time, so only
what is new is taken, once the input is seen to go on from what was read (``_inputs``).
Rule violations are found at typed positions and pointed back at the events (``placed``):
at the end, or as soon as a reply repeats a call id or a result answers a call already
answered; and an event refused for not agreeing with what was read gives way to a rule broken
before it (``earlier_fault``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any, NoReturn

from pydantic_core import to_jsonable_python

from tracebridge import AIMessage, Message, TextPart, ToolCall, ToolMessage, TraceError, _build
from tracebridge._changed import FELL, missing_field, refusal
from tracebridge._gc import pause_gc, resume_gc
from tracebridge._json import same_json, surrogate_key_in
from tracebridge._json_model import same_record
from tracebridge._optional import module_of
from tracebridge.errors import short_repr, with_article
from tracebridge.validation import validate

from ._blocks import NAME, Llama, fail, json_checked
from ._events_fast import (
    SELECTIONS,
    distinct_ids,
    plain_input,
    read_call,
    read_input,
    read_output,
    read_result,
    result_metadata,
)
from ._fast import dump_blocks, object_blocks, read_item, response_read
from ._idless import IdlessCalls
from ._inputs import Inputs, without_event
from ._json_form import check_dumped_form, check_json_form
from ._messages import (
    blocks_dump,
    build_message,
    chat_message_dump,
    is_chat_message,
    message_fields,
    message_from_dump,
)

EVENT_TYPES: dict[str, str] = {
    "AgentInput": "the messages that are new in its input, once its history is seen to go on "
    "from what was read (see _inputs); the next AgentOutput must be of its current_agent_name",
    "AgentOutput": "one AIMessage: the response with its tool calls, named current_agent_name; "
    "a structured_response kept as metadata['llama_index']['event'] (and no_system_prompt, "
    "when its input had none where the one before had one); its tool_calls "
    "(ToolSelections) must each be one of the response's calls, and the ToolCallResults "
    "FunctionAgent appends to the final output after the run each one already read",
    "ToolCallResult": "one ToolMessage: the tool output's blocks, tool_id, tool_name, "
    "is_error from the output; return_direct, and the output's raw_output and raw_input "
    "where they say more than the result, kept as metadata['llama_index']['event']; its "
    "tool_name and tool_kwargs must be those of the call it answers (of the AgentOutput "
    "before it); when that call's text did not parse, the tool_kwargs it ran with are kept "
    "there too",
    "AgentSetup": "nothing: its input is the next AgentInput's input (system prompt included)",
    "AgentStream": "nothing: partial deltas of the response the next AgentOutput carries whole "
    "(which must follow: else truncated_trace)",
    "AgentStreamStructuredOutput": "no message: its output (a structured rendering of the "
    "final answer, made by a separate call) is the structured_response of the AgentOutput "
    "before it, kept as that reply's metadata['llama_index']['event']",
    "ToolCall": "nothing: the call is already in the AgentOutput response before it (which "
    "is checked: a ToolCall naming no call of that response is conflicting_fields); said "
    "again, the same, when its tool waited for a human (see HUMAN_INPUT)",
    "StartEvent": "nothing: user_msg and chat_history reappear in the first AgentInput",
    "AgentWorkflowStartEvent": "nothing: user_msg and chat_history reappear in the first "
    "AgentInput",
    "StopEvent": "nothing: its result (the run's AgentOutput) repeats the last AgentOutput, "
    "or (return_direct) the text of the tool output the ToolCallResult already gives; "
    "checked (conflicting_fields where it says otherwise), a structured_response kept",
    **{kind: f"no message: {what} (a tool waiting in ctx.wait_for_event). Its JSON is kept "
       "verbatim, {'event': <type>, 'data': <its dump>}, appended to the list "
       "metadata['llama_index']['event']['human_input'] of the reply whose calls were running "
       "(the last AgentOutput read; none: malformed_event)" for kind, what in (
           ("InputRequiredEvent", "a step asked a human for input"),
           ("HumanResponseEvent", "the human's answer"))},
    **{kind: f"no message: the run ended here ({why}). Its JSON fields are kept verbatim, "
       "{'event': <type>, 'data': <fields>}, appended to the list "
       "metadata['llama_index']['event']['run_ended'] of the last message read (none read: "
       "truncated_trace); a reply streamed before it with no AgentOutput is truncated_trace; "
       "the next run's input may hold the conversation without what this run had only in "
       "its scratchpad (see _inputs)" for kind, why in (
           ("WorkflowFailedEvent", "a step failed"),
           ("WorkflowCancelledEvent", "it was cancelled"),
           ("WorkflowTimedOutEvent", "it timed out"))},
}
"""Every event type ``events_to_messages`` accepts, and what it contributes."""

HUMAN_INPUT = frozenset(("InputRequiredEvent", "HumanResponseEvent"))
"""The events of a tool waiting for a human (``ctx.wait_for_event(HumanResponseEvent,
waiter_event=InputRequiredEvent(...))``), kept verbatim: what they hold is the app's own
(their ``_data``). The step that waits runs again when the answer comes, so the ToolCall event
of that call is said twice, the same both times: the second says nothing more."""

RUN_ENDS: dict[str, frozenset[str]] = {
    "WorkflowFailedEvent": frozenset(("step_name", "exception", "attempts", "elapsed_seconds")),
    "WorkflowCancelledEvent": frozenset(),
    "WorkflowTimedOutEvent": frozenset(("timeout", "active_steps")),
}
"""The events that end a run early (the workflow publishes one as a failed, cancelled or
timed-out run's last event; each a StopEvent), with the fields each declares."""

_CUT_BY = {
    "WorkflowFailedEvent": "failed mid-reply",
    "WorkflowCancelledEvent": "was cancelled mid-reply",
    "WorkflowTimedOutEvent": "timed out mid-reply",
}
"""What a run ended by each event in ``RUN_ENDS`` did to a reply it was streaming."""

_MODULES = ("llama_index.", "workflows.")


def _event_fields(event: Any, kind: str, e: int, where: str) -> dict[str, Any]:
    """The JSON of the fields that contribute, from an event object (``where``: the path of
    its data, for a value its JSON would write as another)."""
    if kind == "AgentInput":
        # The ChatMessages themselves: only those that are read are dumped (see agent_input).
        return {"input": event.input, "current_agent_name": event.current_agent_name}
    if kind == "AgentOutput":
        response = chat_message_dump(event.response, e, f"{where}.response")
        if _kwargs_hold_surrogate_key(event.tool_calls):
            _refuse_as_dumped(event, e, where)
        return {"response": response,
                "current_agent_name": event.current_agent_name,
                "tool_calls": event.tool_calls,
                "structured_response": event.structured_response}
    if kind in ("ToolCall", "ToolCallResult") and _kwargs_hold_surrogate_key([event]):
        _refuse_as_dumped(event, e, where)
    if kind == "ToolCall":
        return {"tool_id": event.tool_id, "tool_name": event.tool_name,
                "tool_kwargs": event.tool_kwargs}
    if kind == "AgentStreamStructuredOutput":
        return {"output": event.output}
    if kind == "StopEvent":
        return {"result": event.result}
    if kind in RUN_ENDS:
        check_json_form(event, e, where)
        return event.model_dump(mode="json")  # type: ignore[no-any-return]
    if kind in HUMAN_INPUT:
        return _event_dump(event, e, where)
    if kind == "ToolCallResult":
        output = event.tool_output
        return {
            "tool_id": event.tool_id,
            "tool_name": event.tool_name,
            "tool_kwargs": event.tool_kwargs,
            "tool_output": {"blocks": blocks_dump(output.blocks, e, f"{where}.tool_output.blocks"),
                            "is_error": output.is_error,
                            "tool_name": output.tool_name,
                            **_raw_dump(output, e, f"{where}.tool_output")},
            "return_direct": event.return_direct,
        }
    return {}


def dump_events(events: Iterable[Any]) -> list[dict[str, Any]]:
    """Event objects as JSON dicts ``{"event": <class name>, "data": model_dump(mode="json")}``.

    An event LlamaIndex cannot write as JSON (a media block holding a stream of bytes that
    are not UTF-8 text), or holding a NaN or an infinity (which its dump writes as null) or a
    dict key that is not a string (which it writes as its text), is ``unserializable_value``
    at its field."""
    return [{"event": type(event).__name__, "data": _event_dump(event, e, f"events[{e}].data")}
            for e, event in enumerate(events)]


def _event_dump(event: Any, e: int, where: str) -> dict[str, Any]:
    """``dump_events``' dump of the event at ``e`` (its data at ``where``), or its refusal."""
    try:
        data: dict[str, Any] = event.model_dump(mode="json")
    except FELL as exc:
        refused = refusal(event, where, "LlamaIndex", index=e, source=NAME)
        if refused is None:
            raise
        raise refused from exc
    # a field deleted from an object is left out of its dump without a word
    missing = missing_field(event, where, "LlamaIndex", index=e, source=NAME)
    if missing is not None:
        raise missing
    check_json_form(event, e, where)
    return data


def _refuse_as_dumped(event: Any, e: int, where: str) -> NoReturn:
    """Refuse an event object (its data at ``where``) holding a key its JSON dump does not
    write as itself (one that holds a lone surrogate) as ``dump_events`` refuses it."""
    _event_dump(event, e, where)
    raise AssertionError(f"{where}: dump_events wrote a key holding a lone surrogate")


def _kwargs_hold_surrogate_key(entries: Any) -> bool:
    """Whether objects with ``tool_kwargs`` (an AgentOutput's ``tool_calls``, a ToolCall or
    ToolCallResult event) hold a key holding a lone surrogate there."""
    if type(entries) is not list:
        return False
    for entry in entries:
        kwargs = getattr(entry, "tool_kwargs", None)
        if type(kwargs) is dict and surrogate_key_in(kwargs):
            return True
    return False


def _normalize(event: Any, e: int) -> tuple[str, dict[str, Any]]:
    if isinstance(event, dict):
        if "qualified_name" in event:
            return _serialized(event, e)
        kind, data = event.get("event"), event.get("data")
        if type(kind) is not str or type(data) is not dict:
            raise fail("malformed_event", f"an event dict is {{'event': <type name>, 'data': "
                       f"{{...}}}}, got {short_repr(event)}", e, f"events[{e}]")
        if len(event) != 2:  # what dump_events writes, and nothing else would be read
            key = sorted(event.keys() - {"event", "data"}, key=str)[0]
            raise fail("malformed_event", f"an event dict holds 'event' and 'data' only; "
                       f"found {key!r} too", e, f"events[{e}].{key}")
        _known(kind, e)
        return kind, data
    cls = type(event)
    kind = _KNOWN_CLASSES.get(cls)
    if kind is None:
        kind = cls.__name__
        if not module_of(cls).startswith(_MODULES):
            raise fail("unknown_role", f"{module_of(cls)}.{kind} is not a LlamaIndex workflow "
                       f"event; known: {', '.join(EVENT_TYPES)}", e, f"events[{e}]")
        _known(kind, e)
        _KNOWN_CLASSES[cls] = kind
        _OBJECT_READERS[cls] = _READERS.get(kind)
    return kind, _event_fields(event, kind, e, f"events[{e}].data")


_SERIALIZED_KEYS = frozenset({"__is_pydantic", "value", "qualified_name"})
"""The keys of an event the workflow's ``JsonSerializer`` wrote."""

_KNOWN_CLASSES: dict[type, str] = {}
"""Event classes already found to be LlamaIndex's, with their event type."""


def _serialized(event: dict[str, Any], e: int) -> tuple[str, dict[str, Any]]:
    """The parsed JSON of the workflow's ``JsonSerializer``: ``{"__is_pydantic": true,
    "value": {...}, "qualified_name": "llama_index....AgentInput"}``."""
    name, data = event["qualified_name"], event.get("value")
    if type(name) is not str or type(data) is not dict:
        raise fail("malformed_event", f"a serialized event needs 'qualified_name' and a dict "
                   f"'value', got {short_repr(event)}", e, f"events[{e}]")
    extra = event.keys() - _SERIALIZED_KEYS
    if extra or event.get("__is_pydantic", True) is not True:
        key = sorted(extra, key=str)[0] if extra else "__is_pydantic"
        raise fail("malformed_event", f"a serialized event holds "
                   f"{', '.join(sorted(_SERIALIZED_KEYS))} (__is_pydantic true) only; found "
                   f"{key!r}: {short_repr(event[key])}", e, f"events[{e}].{key}")
    module, _, kind = name.rpartition(".")
    if not (module + ".").startswith(_MODULES):
        raise fail("unknown_role", f"{name} is not a LlamaIndex workflow event; known: "
                   f"{', '.join(EVENT_TYPES)}", e, f"events[{e}].qualified_name")
    _known(kind, e)
    return kind, data


def _known(kind: str, e: int) -> None:
    if kind not in EVENT_TYPES:
        raise fail("unknown_role", f"unknown event type {kind!r}; known: "
                   f"{', '.join(EVENT_TYPES)}", e, f"events[{e}].event")


def _field(data: dict[str, Any], key: str, kind: type, e: int, path: str) -> Any:
    if key not in data or type(data[key]) is not kind:
        found = short_repr(data[key]) if key in data else "nothing"
        wanted = with_article(kind.__name__)
        raise fail("malformed_event", f"{key!r} must be {wanted}, found {found}", e,
                   f"{path}.{key}")
    return data[key]


class _Rebuild(Inputs):
    """The conversation so far, and which event each message came from (``Inputs``: what
    the AgentInputs gave)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ToolCall] = []  # the calls of the last AgentOutput
        self.parsed: dict[str | int, Any] = {}
        """The arguments LlamaIndex ran each call of the last AgentOutput with whose text did
        not parse (its own repair of the text), as the first event to say them said them; by
        ``parsed_key``."""
        self.last_output: int | None = None  # where its message is in ``messages``
        self.results: dict[str | None, tuple[str | None, Any, int]] = {}
        """The tool name, arguments and message position of each ToolCallResult read, by
        call id."""
        self.unnamed: list[tuple[str | None, Any, int]] = []
        """The same of each ToolCallResult of a call without an id (``tool_id`` ``""``, as
        FunctionAgent names such a call), in the order read."""
        self.idless = IdlessCalls([])
        """The calls of the last AgentOutput by place, and which of those without an id
        its results answer (``_idless``)."""
        self.answering: int | None = None
        """The place of the id-less call the result being read answers (``answers``)."""
        self.unnamed_from = 0
        """Where in ``unnamed`` the results read since the last AgentOutput begin."""
        self.unnamed_next = 0
        """Where ``result_named`` looks first in ``unnamed``: after the last it found (a
        run's results are said again in the order they were read)."""
        self.agent: str | None = None
        """The agent the last AgentInput was for: the next output is that agent's."""
        self.stops: list[tuple[dict[str, Any], int, int | None, list[ToolCall],
                               dict[str | None, tuple[str | None, Any, int]],
                               dict[str | int, Any], list[tuple[str | None, Any, int]]]] = []
        """Each StopEvent, with the last output, its calls (and ``parsed``) and the results
        read before it."""

    def read_blocks(self, blocks: list[Any], assistant: bool) -> tuple[Any, list[ToolCall]] | None:
        """``object_blocks``: the content and calls of an event's blocks in a common shape
        (the one place the object readers read blocks), or None."""
        return object_blocks(blocks, assistant)

    def add(self, message: Message, e: int) -> None:
        self.messages.append(message)
        self.origin.append(e)

    def moved(self, start: int) -> None:
        """``Inputs.moved``: each result's place in ``results``, and in what the StopEvents
        after its reply kept (a run that a tool ended, ``return_direct``), follows it."""
        kept, unnamed = [self.results], [self.unnamed]
        for stop in reversed(self.stops):
            if stop[2] != start - 1:
                break
            kept.append(stop[4])
            unnamed.append(stop[6])
        places = []  # where the id-less results are now, in order
        for k in range(start, len(self.messages)):
            message = self.messages[k]
            assert isinstance(message, ToolMessage)
            tool_id = message.tool_call_id
            if tool_id is None:
                places.append(k)
            for results in kept:
                seen = results.get(tool_id)
                if seen is not None and seen[2] >= start:
                    results[tool_id] = (seen[0], seen[1], k)
        for read in unnamed:
            moving = [n for n, seen in enumerate(read) if seen[2] >= start]
            for n, k in zip(moving, places, strict=False):
                read[n] = (read[n][0], read[n][1], k)

    def read_input(self, item: Any, e: int, j: int) -> Message:
        """Item ``j`` of the input of the AgentInput at ``e``, as a typed message."""
        found = read_item(item)
        if found is not None:
            return found
        at = f"events[{e}].data.input[{j}]"
        return message_from_dump(self.as_dump(item, e, at), e, at)

    def as_dump(self, item: Any, e: int, where: str) -> Any:
        """An input item as its ``model_dump(mode="json")`` (a dict as it is)."""
        return chat_message_dump(item, e, where) if is_chat_message(item) else item

    def agent_input(self, data: dict[str, Any], e: int) -> None:
        path = f"events[{e}].data"
        items = _field(data, "input", list, e, path)
        self.agent = _field(data, "current_agent_name", str, e, path)
        self.new_items(items, e)

    def input_object(self, event: Any, e: int) -> None:
        """``agent_input`` of an AgentInput object, its fields read where they are."""
        items = event.input
        agent = event.current_agent_name
        if type(items) is not list or type(agent) is not str:
            self.agent_input(_event_fields(event, "AgentInput", e, f"events[{e}].data"), e)
            return
        self.agent = agent
        self.new_items(items, e)

    def agent_output(self, data: dict[str, Any], e: int) -> None:
        path = f"events[{e}].data"
        response = _field(data, "response", dict, e, path)
        agent = _field(data, "current_agent_name", str, e, path)
        message = response_read(response, agent)
        self.add(message or self.response(response, agent, e, path), e)
        self.source, self.source_call = response, None
        self.output_extras(data.get("tool_calls"), data.get("structured_response"), e)

    def output_object(self, event: Any, e: int) -> None:
        """``agent_output`` of an AgentOutput object, its fields read where they are."""
        agent = event.current_agent_name
        if type(agent) is not str or _kwargs_hold_surrogate_key(event.tool_calls):
            self.agent_output(_event_fields(event, "AgentOutput", e, f"events[{e}].data"), e)
            return
        response = event.response
        if type(response) is Llama.chat_message:
            fields = response.__dict__  # the model's fields, read without attribute lookups
            extra, blocks = fields["additional_kwargs"], fields["blocks"]
            if (fields["role"] is Llama.assistant and type(extra) is dict and not extra
                    and type(blocks) is list):
                fast = object_blocks(blocks, True)
                if fast is not None:
                    self.add(_build.ai(fast[0], fast[1], agent), e)
                    self.source, self.source_call = response, None
                    self.output_extras(event.tool_calls, event.structured_response, e)
                    return
        dump = chat_message_dump(response, e, f"events[{e}].data.response")
        message = response_read(dump, agent)
        self.add(message or self.response(dump, agent, e, f"events[{e}].data"), e)
        self.source, self.source_call = response, None
        self.output_extras(event.tool_calls, event.structured_response, e)

    def output_extras(self, selections: Any, structured: Any, e: int) -> None:
        """What an AgentOutput says besides its response (just read, the last message):
        ``tool_calls`` checked against it, a ``structured_response`` kept."""
        message = self.messages[-1]
        assert isinstance(message, AIMessage)
        self.check_call_ids(message.tool_calls)
        if message.name != self.agent and self.agent is not None:
            raise fail("conflicting_fields", f"the output is of agent {message.name!r}, but the "
                       f"AgentInput before it is for {self.agent!r}", e,
                       f"events[{e}].data.current_agent_name")
        self.streamed = None
        if self.unprompted:  # its input had no system prompt, where the one before had one
            self.unprompted = False
            message = message.model_copy(update={"metadata": _with_event(
                message.metadata, {"no_system_prompt": True})})
            self.messages[-1] = message
        self.new_calls(message.tool_calls)
        self.last_output = len(self.messages) - 1
        if selections is not None and selections != []:  # absent or [] says nothing more
            self.selections(selections, e, f"events[{e}].data")
        if structured is not None:
            self.keep_structured(structured, e, f"events[{e}].data.structured_response")

    def new_calls(self, calls: list[ToolCall]) -> None:
        """The calls of the AgentOutput just read: those the events after it name."""
        self.calls = calls
        self.idless = IdlessCalls(calls)
        self.unnamed_from = len(self.unnamed)
        if self.parsed:
            self.parsed = {}

    def check_call_ids(self, calls: list[ToolCall]) -> None:
        """Refuse a reply (the last message read) two of whose calls share an id, before a
        ToolCall or ToolCallResult is matched to one of them by that id (``_by_id`` would
        take the first): ``duplicate_tool_call_id`` at the second, as the rules say it (or a
        rule broken before it)."""
        if len(calls) > 1 and not distinct_ids(calls):
            fault = self.rule_fault()
            assert fault is not None  # rule 5 holds it
            raise fault

    def check_answered(self, tool_id: str) -> None:
        """Refuse a result (the last message read) of a call whose result was read before
        (``results``): ``orphan_tool_result`` at it, as the rules say it (or a rule broken
        before it), rather than compare the events after it with a conversation that holds
        it twice. (A call answered in an earlier reply is answered again only by a result of
        no call of its own reply, or of a call that repeats an id: a rule fault either way.)"""
        if tool_id in self.results:
            fault = self.rule_fault()
            if fault is not None:
                raise fault

    def selections(self, selections: Any, e: int, path: str) -> None:
        """An output's ``tool_calls``: each one of the last response's calls, or a result
        already read."""
        if type(selections) is not list:
            raise fail("malformed_event", f"'tool_calls' must be a list, found "
                       f"{short_repr(selections)}", e, f"{path}.tool_calls")
        calls = self.calls
        count = len(calls)
        for k, entry in enumerate(selections):
            kind = type(entry)
            fields = entry if kind is dict else (
                entry.__dict__ if kind in SELECTIONS else None)
            if fields is not None and len(fields) == 3 and k < count:
                # the usual case: the response's call at the same place
                call = calls[k]
                if _llama_id(call) == fields.get("tool_id") and self.agrees(
                    call, fields.get("tool_name"), fields.get("tool_kwargs"), e,
                    f"{path}.tool_calls[{k}]"
                ):
                    continue
            self.selection(entry, e, f"{path}.tool_calls[{k}]")

    def keep_structured(self, structured: Any, e: int, where: str) -> None:
        """The last AgentOutput's structured response, kept with its reply; said twice (the
        output after the run, and AgentStreamStructuredOutput), it must be the same."""
        json_checked(structured, e, where)
        if self.last_output is None:
            raise fail("malformed_event", "a structured output with no AgentOutput before it",
                       e, where)
        message = self.messages[self.last_output]
        kept = message.metadata.get(NAME, {}).get("event", {})
        if "structured_response" in kept:
            if not same_json(kept["structured_response"], structured):
                raise fail("conflicting_fields", f"the structured output "
                           f"{short_repr(structured)} is not the AgentOutput's "
                           f"{short_repr(kept['structured_response'])}", e, where)
            return
        self.messages[self.last_output] = message.model_copy(update={"metadata": _with_event(
            message.metadata, {"structured_response": copy.deepcopy(structured)})})

    def structured_output(self, data: dict[str, Any], e: int) -> None:
        """An AgentStreamStructuredOutput: the structured response of the output before it."""
        if "output" not in data:
            raise fail("malformed_event", "'output' must be a dict, found nothing", e,
                       f"events[{e}].data.output")
        if data["output"] is not None:
            self.keep_structured(data["output"], e, f"events[{e}].data.output")

    def structured_object(self, event: Any, e: int) -> None:
        """``structured_output`` of an AgentStreamStructuredOutput object."""
        self.structured_output({"output": event.output}, e)

    def selection(self, entry: Any, e: int, where: str) -> None:
        """One entry of an AgentOutput's ``tool_calls`` that is not simply one of the
        response's calls: a result of the run (appended to the final output after the run;
        a dump writes it as a ToolSelection, the type the field declares), which must be one
        already read; else the error, placed."""
        fields = _entry_fields(entry)
        if fields is None:
            raise fail("malformed_event", f"an AgentOutput's tool_calls hold ToolSelections "
                       f"(and, after a run, ToolCallResults); found {short_repr(entry)}", e,
                       where)
        tool_id, name, kwargs = fields["tool_id"], fields["tool_name"], fields["tool_kwargs"]
        if "tool_output" not in fields:
            call = self.named_by(tool_id, name, kwargs, e, where)
            if call is not None:
                self.named_call(call, fields, e, where, "this AgentOutput's response")
                return
        seen = self.result_named(tool_id, name, kwargs)
        if seen is None or seen[0] != name or not same_json(seen[1], kwargs):
            raise fail("conflicting_fields", f"call {tool_id!r} is {name}({short_repr(kwargs)}) "
                       f"here, but it is neither a call of this AgentOutput's response nor a "
                       f"ToolCallResult read before it; both must agree", e, where)
        if "tool_output" in fields:  # a ToolCallResult: the result read, said again whole
            data = entry if type(entry) is dict else _event_fields(entry, "ToolCallResult",
                                                                    e, where)
            read = self.messages[seen[2]]
            ran = "tool_kwargs" in read.metadata.get(NAME, {}).get("event", {})
            repeated, _ = self.result_message(data, e, where, answering=False, ran=ran)
            if not same_record(repeated, read) and not (
                    tool_id == "" and self.alike_read(data, e, where)):
                raise fail("conflicting_fields", f"the result of call {tool_id!r} repeated "
                           f"here is not the one read at events[{self.origin[seen[2]]}] (its "
                           f"output, error flag, return_direct or raw values differ); both "
                           f"must agree", e, where)

    def named_call(self, call: ToolCall | None, fields: dict[str, Any], e: int, where: str,
                   holder: str) -> None:
        """A call named by its id, name and arguments, which must be ``call``, the one of
        ``self.calls`` they name (``named_by``); else ``conflicting_fields`` at ``where``."""
        tool_id, name, kwargs = fields["tool_id"], fields["tool_name"], fields["tool_kwargs"]
        if call is None or not self.agrees(call, name, kwargs, e, where):
            found = "no call with that id" if call is None else self.shown(call)
            raise fail("conflicting_fields", f"call {tool_id!r} is {name}({short_repr(kwargs)}) "
                       f"here, but {holder} has {found}; both must agree", e, where)

    def tool_call(self, data: dict[str, Any], e: int) -> None:
        """A ToolCall event: one of the calls of the AgentOutput before it."""
        path = f"events[{e}].data"
        for key in ("tool_id", "tool_name"):
            _field(data, key, str, e, path)
        kwargs = _field(data, "tool_kwargs", dict, e, path)
        call = self.named_by(data["tool_id"], data["tool_name"], kwargs, e, path)
        self.named_call(call, data, e, path, "the AgentOutput before it")

    def call_object(self, event: Any, e: int) -> None:
        """``tool_call`` of a ToolCall object, its fields read where they are."""
        fields = event.__dict__
        if _kwargs_hold_surrogate_key([event]):
            _refuse_as_dumped(event, e, f"events[{e}].data")
        call = self.named_by(fields.get("tool_id"), fields.get("tool_name"),
                             fields.get("tool_kwargs"), e, f"events[{e}].data")
        if call is None or not self.agrees(call, fields.get("tool_name"),
                                           fields.get("tool_kwargs"), e, f"events[{e}].data"):
            self.tool_call(_event_fields(event, "ToolCall", e, f"events[{e}].data"), e)

    def response(self, response: dict[str, Any], agent: str, e: int, path: str) -> AIMessage:
        """An AgentOutput's response (its dump) as the AIMessage it is, named ``agent``."""
        cls, fields = message_fields(response, e, f"{path}.response")
        if cls is not AIMessage:
            raise fail("malformed_event", f"an AgentOutput response is an assistant message, "
                       f"got role {response['role']!r}", e, f"{path}.response.role")
        name = fields.get("name")
        if name is not None and name != agent:
            raise fail("conflicting_fields", f"the response is named {name!r} but "
                       f"current_agent_name is {agent!r}", e, f"{path}.current_agent_name")
        fields["name"] = agent
        return build_message(AIMessage, fields)  # type: ignore[return-value]

    def tool_result(self, data: dict[str, Any], e: int) -> None:
        message, kwargs = self.result_message(data, e, f"events[{e}].data", answering=True)
        self.add(message, e)
        self.result_read(data["tool_id"], message.name, kwargs, data["tool_output"]["blocks"])

    def result_message(self, data: dict[str, Any], e: int, path: str, answering: bool,
                       ran: bool = False) -> tuple[ToolMessage, dict[str, Any]]:
        """The ToolMessage of a ToolCallResult's JSON fields at ``path``, and its
        ``tool_kwargs`` (``answering``: checked against the call it answers, and kept when
        that call's text did not parse; else kept when ``ran``)."""
        tool_id = _field(data, "tool_id", str, e, path)
        tool_name = _field(data, "tool_name", str, e, path)
        output = _field(data, "tool_output", dict, e, path)
        blocks = _field(output, "blocks", list, e, f"{path}.tool_output")
        is_error = _field(output, "is_error", bool, e, f"{path}.tool_output")
        direct = _field(data, "return_direct", bool, e, path)
        kwargs = _field(data, "tool_kwargs", dict, e, path)
        if answering:
            ran = self.answers(tool_id, tool_name, kwargs, e, path)
        if output.get("tool_name", tool_name) != tool_name:  # the output's own copy
            raise fail("conflicting_fields", f"the output is of tool "
                       f"{short_repr(output['tool_name'])} but the result is of {tool_name!r}",
                       e, f"{path}.tool_output.tool_name")
        fast = dump_blocks(blocks, False)
        if fast is not None:
            content = fast[0]
        else:
            # The same ChatMessage FunctionAgent writes to memory for this result (its
            # additional_kwargs, {"tool_call_id": tool_id}, give the call id, already checked).
            cls, fields = message_fields({"role": "tool", "blocks": blocks}, e,
                                         f"{path}.tool_output")
            assert cls is ToolMessage
            content = fields["content"]
        for key in output:
            if key not in _OUTPUT_KEYS:
                raise fail("malformed_event", f"the tool output holds {key!r} = "
                           f"{short_repr(output[key])}, a field ToolOutput does not declare",
                           e, f"{path}.tool_output.{key}")
        raw_input = output.get("raw_input")
        if raw_input is not None:
            _check_raw_input(raw_input, e, f"{path}.tool_output.raw_input")
        facts = _raw_facts(raw_input, output.get("raw_output"), content, kwargs, blocks)
        if facts:
            json_checked(facts, e, f"{path}.tool_output")
            facts = copy.deepcopy(facts)
        if ran:
            facts["tool_kwargs"] = _ran_with(kwargs, e, path)
        return _result(content, tool_id, tool_name, is_error, direct, facts), kwargs

    def result_object(self, event: Any, e: int) -> None:
        """``tool_result`` of a ToolCallResult object, its output's blocks read without a
        dump where they are text."""
        if _kwargs_hold_surrogate_key([event]):
            _refuse_as_dumped(event, e, f"events[{e}].data")
        output = event.tool_output
        blocks: Any = getattr(output, "blocks", None)
        fast = object_blocks(blocks, False) if type(blocks) is list else None
        tool_id, tool_name, direct = event.tool_id, event.tool_name, event.return_direct
        is_error = getattr(output, "is_error", None)
        kwargs = event.tool_kwargs
        if (fast is None or type(tool_id) is not str or type(tool_name) is not str
                or type(is_error) is not bool or type(direct) is not bool
                or type(kwargs) is not dict or output.tool_name != tool_name):
            self.tool_result(_event_fields(event, "ToolCallResult", e, f"events[{e}].data"), e)
            return
        raw_input = output.raw_input
        facts = _raw_facts(raw_input, output.raw_output, fast[0], kwargs, blocks)
        if facts:  # kept as LlamaIndex's JSON writes them, and asked again in that form
            if "raw_input" in facts:  # (changed after it was made: LlamaIndex refuses it)
                _check_raw_input(raw_input, e, f"events[{e}].data.tool_output.raw_input")
            dumped = _raw_dump(output, e, f"events[{e}].data.tool_output")
            facts = _raw_facts(dumped["raw_input"], dumped["raw_output"], fast[0], kwargs,
                               blocks_dump(blocks, e, f"events[{e}].data.tool_output.blocks"))
            if facts:
                json_checked(facts, e, f"events[{e}].data.tool_output")
        # (after the output is checked, as its dump is when the event is read as JSON)
        if self.answers(tool_id, tool_name, kwargs, e, f"events[{e}].data"):
            facts["tool_kwargs"] = _ran_with(kwargs, e, f"events[{e}].data")
        self.add(_result(fast[0], tool_id, tool_name, is_error, direct, facts), e)
        self.result_read(tool_id, tool_name, kwargs, blocks)

    def result_read(self, tool_id: str, name: str | None, kwargs: Any, blocks: Any) -> None:
        """Note the result just read (the last message), of the call ``tool_id`` names: by
        that id, or, ``""``, the id-less call ``answers`` found (its place in ``unnamed``);
        put where the rules pair it with that call when results of id-less calls are read
        (``placed_result``)."""
        answering, self.answering = self.answering, None
        place = len(self.messages) - 1
        if tool_id == "":
            if answering is not None:
                place = self.placed_result(answering)
                self.idless.settled(answering, place)
            self.unnamed.append((name, kwargs, place))
        else:
            self.check_answered(tool_id)
            if self.idless.read_places:
                call = _by_id(self.calls, tool_id)
                if call is not None:
                    place = self.placed_result(self.idless.place(call))
                    if place < len(self.messages) - 1:
                        self.idless.moved_on(place)
            self.results[tool_id] = (name, kwargs, place)
            self.idless.with_id.append(tool_id)
        if place == len(self.messages) - 1:
            self.source, self.source_call = blocks, tool_id

    def placed_result(self, call_place: int) -> int:
        """Where the result just read (the last message), of the call at ``call_place``
        in the last AgentOutput, goes: its tool may have finished before those of the calls
        before it (FunctionAgent runs them at once), but the rules pair a result without an
        id with the first call not answered yet, so it goes before the first result of an
        id-less call after its own (``IdlessCalls.slot``); the results after it move one
        on, and what says where they are follows them."""
        at = self.idless.slot(call_place)
        messages, origin = self.messages, self.origin
        if at is None:
            return len(messages) - 1
        messages.insert(at, messages.pop())
        origin.insert(at, origin.pop())
        results = self.results
        for tool_id in self.idless.with_id:  # (the results of this reply's calls with an id)
            seen = results[tool_id]
            if seen[2] >= at:
                results[tool_id] = (seen[0], seen[1], seen[2] + 1)
        unnamed, first = self.unnamed, self.unnamed_from
        unnamed[first:] = [(seen[0], seen[1], seen[2] + 1) if seen[2] >= at else seen
                           for seen in unnamed[first:]]
        return at

    def stop(self, data: dict[str, Any], e: int) -> None:
        """A StopEvent: checked once the conversation is (see ``stopped``), so that a fault
        of the run it repeats is told where the run has it; what it is checked against now."""
        self.stops.append((data, e, self.last_output, self.calls, dict(self.results),
                           dict(self.parsed), list(self.unnamed)))

    def stopped(self, events: list[Any]) -> None:
        """Each StopEvent's result is the run's AgentOutput, which says again what the
        stream said (the last output, or the text of the tool that returned directly)."""
        for data, e, last, calls, results, parsed, unnamed in self.stops:
            self.last_output, self.calls, self.results, self.parsed = last, calls, results, parsed
            self.unnamed, self.idless, self.unnamed_next = unnamed, IdlessCalls(calls), 0
            try:
                self.check_stop(data, e)
            except FELL as exc:
                refused = _refused(events[e], e)
                if refused is None and not isinstance(events[e], dict):
                    # a StopEvent keeps its result aside (a private attribute): asked alone
                    refused = refusal(getattr(events[e], "result", None),
                                      f"events[{e}].data.result", "LlamaIndex", index=e,
                                      source=NAME)
                if refused is None:
                    raise  # LlamaIndex accepts the event: the fault is ours, shown as it is
                raise refused from exc

    def check_stop(self, data: dict[str, Any], e: int) -> None:
        path = f"events[{e}].data.result"
        result = data.get("result")
        if result is None:
            return  # a stop with no result says nothing
        if type(result) is not dict:
            kind = type(result)
            if kind.__name__ != "AgentOutput" or not module_of(kind).startswith(_MODULES):
                raise fail("malformed_event", f"a StopEvent's result is the run's AgentOutput; "
                           f"found {short_repr(result)}", e, path)
            extra = (result.__pydantic_private__ or {}).get("_data")
            if extra:
                _refuse_extra(extra, e, ".result._data")
            result = _event_fields(result, "AgentOutput", e, path)
        else:
            _undeclared("AgentOutput", result, e, ".result")
        last = self.last_output
        if last is None:
            raise fail("malformed_event", "a StopEvent with no AgentOutput before it", e, path)
        response = _field(result, "response", dict, e, path)
        agent = _field(result, "current_agent_name", str, e, path)
        output = self.messages[last]
        if agent != output.name:
            raise fail("conflicting_fields", f"the run's result is of agent {agent!r}, its last "
                       f"output of {output.name!r}", e, f"{path}.current_agent_name")
        said = response_read(response, agent) or self.response(response, agent, e, path)
        if not (_same_reply(said, output) or self._returned_directly(said, last)):
            raise fail("conflicting_fields", "the run's result is neither its last AgentOutput "
                       "nor the text of a tool that returned directly after it", e,
                       f"{path}.response")
        if result.get("tool_calls") is not None and result["tool_calls"] != []:
            self.selections(result["tool_calls"], e, path)
        if result.get("structured_response") is not None:
            self.keep_structured(result["structured_response"], e,
                                 f"{path}.structured_response")

    def run_ended(self, kind: str, data: dict[str, Any], e: int) -> None:
        """A run-ending event (``RUN_ENDS``): no message; what it says kept with the last
        message read, the one the run ended after."""
        how = _ending(kind, data, e)
        if self.streamed is not None:
            self.cut(f"the run ended at events[{e}] ({how})", _CUT_BY[kind])
        if not self.messages:
            raise fail("truncated_trace", f"the run ended ({how}) before any message was "
                       f"read: the events hold no conversation to keep it with", e,
                       f"events[{e}]")
        json_checked(data, e, f"events[{e}].data")
        last = self.messages[-1]
        ended = last.metadata.get(NAME, {}).get("event", {}).get("run_ended", [])
        entry = {"event": kind, "data": copy.deepcopy(data)}
        self.messages[-1] = last.model_copy(update={"metadata": _with_event(
            last.metadata, {"run_ended": [*ended, entry]})})
        self.unsaved = range(self.saved, len(self.messages))
        self.ended_at = e

    def human_input(self, kind: str, data: dict[str, Any], e: int) -> None:
        """An event of a tool waiting for a human (``HUMAN_INPUT``): no message; its JSON
        kept verbatim with the reply whose calls were running (the last AgentOutput read)."""
        _check_human_input(kind, data, e)
        json_checked(data, e, f"events[{e}].data")
        if self.last_output is None:
            raise fail("malformed_event", f"{with_article(kind)} with no AgentOutput before "
                       f"it: it is kept with the reply whose tool waited for the human", e,
                       f"events[{e}]")
        reply = self.messages[self.last_output]
        said = reply.metadata.get(NAME, {}).get("event", {}).get("human_input", [])
        entry = {"event": kind, "data": copy.deepcopy(data)}
        self.messages[self.last_output] = reply.model_copy(update={"metadata": _with_event(
            reply.metadata, {"human_input": [*said, entry]})})

    def stop_object(self, event: Any, e: int) -> None:
        """``stop`` of a StopEvent object."""
        self.stop(_event_fields(event, "StopEvent", e, f"events[{e}].data"), e)

    def _returned_directly(self, said: AIMessage, last: int) -> bool:
        """Whether ``said`` is what FunctionAgent answers when a tool returned directly: the
        text of the first such result after the last output that did not fail."""
        # FunctionAgent makes it of the text alone: anything else it says is its own
        if said.tool_calls or not isinstance(said.content, str) or said.metadata:
            return False
        for message in self.messages[last + 1:]:
            if (isinstance(message, ToolMessage) and not message.is_error
                    and message.metadata.get(NAME, {}).get("event", {}).get("return_direct")):
                content = message.content
                text = content if isinstance(content, str) else "\n".join(
                    part.text for part in content if isinstance(part, TextPart))
                return said.content == text
        return False

    def agrees(self, call: ToolCall, name: Any, kwargs: Any, e: int, where: str) -> bool:
        """Whether another copy of ``call`` (a tool name and arguments, at ``where`` in
        the event at ``e``) says the same: the name, and the arguments as the same JSON; when
        the call's text did not parse, the arguments LlamaIndex repaired it to, as the first
        copy said them (``parsed``: what is kept with the result, so it must be JSON there:
        ``{"a": 1e400}`` ran with ``{"a": inf}``)."""
        if call.name != name:
            return False
        if call.invalid_args is None:
            return same_json(call.args, kwargs)
        key = self.parsed_key(call)
        if key not in self.parsed and type(kwargs) is dict:
            json_checked(kwargs, e, f"{where}.tool_kwargs")
        said = self.parsed.setdefault(key, kwargs)
        return said is kwargs or same_json(said, kwargs)

    def parsed_key(self, call: ToolCall) -> str | int:
        """Where ``parsed`` holds a call's repaired arguments: under its id, or, id-less,
        under its place among the last AgentOutput's calls."""
        if call.id is not None:
            return call.id
        return self.idless.place(call)

    def answers(self, tool_id: str, name: str, kwargs: dict[str, Any], e: int, path: str) -> bool:
        """A result's own copy of its call (``tool_name``, ``tool_kwargs``) must be the call
        of the last AgentOutput it answers (one that answers none is left to the rules).
        True when that call's text did not parse: the arguments it ran with are kept with
        the result."""
        call = self.answered_call(tool_id, name, kwargs, e, path)
        if call is None:
            return False
        if self.answering is None and not self.agrees(call, name, kwargs, e, path):
            raise fail("conflicting_fields", f"the result of call {tool_id!r} names "
                       f"{name}({short_repr(kwargs)}), but the call is {self.shown(call)}; "
                       f"both must agree", e, path)
        return call.invalid_args is not None

    def named_by(self, tool_id: Any, name: Any, kwargs: Any, e: int,
                 where: str) -> ToolCall | None:
        """The call of the last AgentOutput an event names: the one with id ``tool_id``, or,
        named ``""`` (FunctionAgent's ``tool_id`` of a call without one), the first id-less
        call it agrees with (else the first id-less call, to be told it disagrees)."""
        if tool_id != "" or self.idless.names_empty_id():
            return _by_id(self.calls, tool_id)
        return self.idless.named(lambda call: self.agrees(call, name, kwargs, e, where))

    def answered_call(self, tool_id: str, name: str, kwargs: dict[str, Any], e: int,
                      path: str) -> ToolCall | None:
        """The call of the last AgentOutput a result of call ``tool_id`` answers: the one
        with that id, or, for ``""``, the first id-less call not answered yet that it agrees
        with, whatever order the tools finished in (its place then in ``answering``; when
        none agrees, the first not answered yet, to be told it disagrees)."""
        if tool_id != "" or self.idless.names_empty_id():
            return _by_id(self.calls, tool_id)
        found = self.idless.answer(name, kwargs,
                                   lambda call: self.agrees(call, name, kwargs, e, path))
        if found is None:
            return None
        call, self.answering = found
        return call

    def result_named(self, tool_id: Any, name: Any,
                     kwargs: Any) -> tuple[str | None, Any, int] | None:
        """The result read that a repeated ToolCallResult or ToolSelection (after a run)
        names: by its call id, or, ``""``, the first id-less one of that tool and arguments."""
        if type(tool_id) is not str:
            return None
        if tool_id != "":
            return self.results.get(tool_id)
        unnamed, start = self.unnamed, self.unnamed_next
        for n in chain(range(start, len(unnamed)), range(min(start, len(unnamed)))):
            seen = unnamed[n]
            if seen[0] == name and same_json(seen[1], kwargs):
                self.unnamed_next = n + 1
                return seen
        return None

    def alike_read(self, data: dict[str, Any], e: int, where: str) -> bool:
        """Whether a repeated result of an id-less call is one read of a call of the same
        tool and arguments: the run's result lists such results in the order they ended,
        which need not be the order read."""
        name, kwargs = data["tool_name"], data["tool_kwargs"]
        for seen in self.unnamed:
            if seen[0] == name and same_json(seen[1], kwargs):
                read = self.messages[seen[2]]
                ran = "tool_kwargs" in read.metadata.get(NAME, {}).get("event", {})
                repeated, _ = self.result_message(data, e, where, answering=False, ran=ran)
                if same_record(repeated, read):
                    return True
        return False

    def shown(self, call: ToolCall) -> str:
        """A call as the events said it: its arguments, or its text that did not parse and
        what LlamaIndex ran it with."""
        if call.invalid_args is None:
            return f"{call.name}({call.args})"
        key = self.parsed_key(call)
        if key in self.parsed:
            return (f"{call.name}({call.invalid_args}), run with "
                    f"{short_repr(self.parsed[key])}")
        return f"{call.name}({call.invalid_args})"


def _ending(kind: str, data: dict[str, Any], e: int) -> str:
    """How a run ended, as its run-ending event (at ``e``) says it; its fields checked."""
    path = f"events[{e}].data"
    if kind == "WorkflowFailedEvent":
        step = _field(data, "step_name", str, e, path)
        exception = _field(data, "exception", dict, e, path)
        name = _field(exception, "exception_type", str, e, f"{path}.exception")
        said = _field(exception, "exception_message", str, e, f"{path}.exception")
        return f"{kind}: step {step!r} failed with {name}: {said}"
    if kind == "WorkflowTimedOutEvent":
        timeout = _field(data, "timeout", float, e, path)
        steps = _field(data, "active_steps", list, e, path)
        return f"{kind}: timed out after {timeout} seconds, in {short_repr(steps)}"
    return kind


def _check_human_input(kind: str, data: dict[str, Any], e: int) -> None:
    """A human-input event's JSON is what ``dump_events`` writes of it: the fields it was made
    with under ``_data`` (it declares none), or nothing; else ``malformed_event`` there."""
    for key, value in data.items():
        if key != "_data" or type(value) is not dict:
            raise fail("malformed_event", f"{with_article(kind)}'s JSON is {{'_data': {{...}}}} "
                       f"(the fields it was made with, as dump_events writes them); found "
                       f"{key!r} = {short_repr(value)}", e, f"events[{e}].data.{key}")


def _ran_with(kwargs: dict[str, Any], e: int, path: str) -> dict[str, Any]:
    """A result's ``tool_kwargs`` (at ``path``), kept: what the tool ran with, when its call's
    text did not parse (LlamaIndex repairs it, ``parse_partial_json``, and runs the tool with
    what it made of it)."""
    json_checked(kwargs, e, f"{path}.tool_kwargs")
    return copy.deepcopy(kwargs)


def _same_reply(said: AIMessage, output: Message) -> bool:
    """Whether a result's response is the output read: all but what the stream's events
    kept beside it (``metadata["llama_index"]["event"]``), as JSON (``same_record``)."""
    return same_record(said, output.model_copy(update={"metadata": without_event(output.metadata)}))


_SELECTION_KEYS = frozenset({"tool_id", "tool_name", "tool_kwargs"})
_RESULT_KEYS = frozenset({*_SELECTION_KEYS, "tool_output", "return_direct"})



def _llama_id(call: ToolCall) -> str:
    """The ``tool_id`` FunctionAgent gives a call: its id, ``""`` when it has none."""
    return "" if call.id is None else call.id


def _result(content: Any, tool_id: str, name: str, is_error: bool, direct: bool,
            facts: dict[str, Any]) -> ToolMessage:
    """The ToolMessage of a ToolCallResult: of call ``tool_id``, or, ``""`` (the result of a
    call without an id), with no call id and the ``""`` kept as the history keeps it."""
    metadata = result_metadata(direct, facts)
    if tool_id != "":
        return _build.tool(content, tool_id, name, is_error, None, metadata)
    kept = {"additional_kwargs": {"tool_call_id": ""}, **(metadata or {}).get(NAME, {})}
    return _build.tool(content, None, name, is_error, None, {NAME: kept})


def _by_id(calls: list[ToolCall], tool_id: Any) -> ToolCall | None:
    if type(tool_id) is not str:
        return None
    for call in calls:
        if call.id == tool_id:
            return call
    return None


def _entry_fields(entry: Any) -> dict[str, Any] | None:
    """The fields of a ToolSelection or ToolCallResult (an object or its dump); None when
    the entry is neither."""
    if type(entry) is dict:
        keys = entry.keys()
        return entry if keys in (_SELECTION_KEYS, _RESULT_KEYS) else None
    kind = type(entry)
    name = kind.__name__
    if name in ("ToolSelection", "ToolCallResult") and module_of(kind).startswith(_MODULES):
        fields = {key: getattr(entry, key) for key in _SELECTION_KEYS}
        if name == "ToolCallResult":
            fields["tool_output"] = entry.tool_output
        else:
            SELECTIONS.add(kind)
        return fields
    return None


def _with_event(metadata: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with ``facts`` added under ``metadata["llama_index"]["event"]``."""
    kept = dict(metadata.get(NAME, {}))
    kept["event"] = {**kept.get("event", {}), **facts}
    return {**metadata, NAME: kept}


_OUTPUT_KEYS = frozenset(("blocks", "tool_name", "raw_input", "raw_output", "is_error"))
"""The fields of a ToolOutput's JSON."""


def _raw_facts(raw_input: Any, raw_output: Any, content: Any, kwargs: dict[str, Any],
               blocks: list[Any]) -> dict[str, Any]:
    """What a tool output's ``raw_input`` and ``raw_output`` say beyond its result: nothing
    when the output is the text of its blocks (a tool that returned that text), or those
    blocks (one that returned blocks), or None (no value), and the input is the call's
    arguments (``{"args": [], "kwargs": <tool_kwargs>}``, as ``FunctionTool`` records them,
    or the arguments themselves, as a failed call's output does) or None (none recorded);
    else the value that says more."""
    facts: dict[str, Any] = {}
    if raw_output is not None and not (
        (type(raw_output) is str and raw_output == _text(content))
        or _same_items(raw_output, blocks)
        or (len(blocks) == 1 and _same_items([raw_output], blocks))
    ):
        facts["raw_output"] = raw_output
    if raw_input is not None and not plain_input(raw_input, kwargs):
        facts["raw_input"] = raw_input
    return facts


def _text(content: Any) -> str:
    """A result's text as LlamaIndex's ``ToolOutput.content`` gives it: its text parts, one
    per line."""
    if type(content) is str:
        return content
    return "\n".join([part.text for part in content if isinstance(part, TextPart)])


def _named_values(raw_input: Any) -> bool:
    """Whether ``raw_input`` is what a ToolOutput holds there: a dict of named values
    (``Dict[str, Any]``)."""
    return type(raw_input) is dict and all(type(key) is str for key in raw_input)


def _check_raw_input(raw_input: Any, e: int, where: str) -> None:
    if not _named_values(raw_input):
        raise fail("malformed_event", f"a tool output's 'raw_input' is a dict with text keys, "
                   f"found {short_repr(raw_input)}", e, where)


def _same_items(items: Any, blocks: list[Any]) -> bool:
    """Whether ``items`` is a list of the ``blocks`` (the same objects, or the same JSON)."""
    if type(items) is not list or len(items) != len(blocks):
        return False
    return all(a is b or same_json(a, b) for a, b in zip(items, blocks, strict=True))


_SCALARS = frozenset({str, int, bool, float, type(None)})
"""Raw values that the JSON dump writes as they are, or that the JSON check refuses (NaN)."""


def _raw_dump(output: Any, e: int, where: str) -> dict[str, Any]:
    """A ToolOutput's ``raw_input`` and ``raw_output`` as its JSON dump writes them (a model by
    its field names, not their aliases, as ``model_dump(mode="json")`` and ``dump_events``
    write it), but for a NaN or an infinity, which stays as it is (the dump would write null)
    to be refused by the JSON check. What the dump would write as another value (a key that
    is not a string, written over any key of its text) is ``unserializable_value`` where it
    is (``where``: the output's path), as ``dump_events`` refuses it; a value it cannot write
    falls, and is told where by the reader's refusal."""
    raw_input, raw_output = output.raw_input, output.raw_output
    # one LlamaIndex does not make (changed after it was made) is left as it is, for the
    # reader to refuse where it is, rather than mended by the dump (int keys as text)
    named = _named_values(raw_input)
    checked = {"raw_output"} if type(raw_output) not in _SCALARS else set()
    if named and raw_input:
        checked.add("raw_input")
    if checked:  # (a container or an object: asked as dump_events asks it)
        dumped = output.model_dump(include=checked)
        if any(surrogate_key_in(dumped[key]) for key in checked):
            _written_as_json(output, checked, e, where)  # a nested one: the dump falls
        for key in sorted(checked):
            check_dumped_form(dumped[key], e, f"{where}.{key}")
    return {"raw_input": to_jsonable_python(raw_input, by_alias=False, inf_nan_mode="constants")
            if named else raw_input,
            "raw_output": to_jsonable_python(raw_output, by_alias=False,
                                             inf_nan_mode="constants")}


def _written_as_json(output: Any, checked: set[str], e: int, where: str) -> None:
    """Refuse a ToolOutput (at ``where``) whose ``checked`` fields its JSON dump cannot write
    (a key holding a lone surrogate inside them) where and as ``dump_events`` refuses it; one
    it writes goes on to the JSON check (such a key at their top, rewritten)."""
    try:
        output.model_dump(mode="json", include=checked)
    except FELL as exc:
        refused = refusal(output, where, "LlamaIndex", index=e, source=NAME)
        if refused is None:
            raise
        raise refused from exc


_READERS: dict[str, Callable[[_Rebuild, Any, int], None]] = {
    "AgentInput": read_input,  # (each of the commonest shape; else the _Rebuild method)
    "AgentOutput": read_output,
    "ToolCall": read_call,
    "ToolCallResult": read_result,
    "AgentStreamStructuredOutput": _Rebuild.structured_object,
    "StopEvent": _Rebuild.stop_object,
}
_DATA_READERS: dict[str, Callable[[_Rebuild, dict[str, Any], int], None]] = {
    "AgentInput": _Rebuild.agent_input,
    "AgentOutput": _Rebuild.agent_output,
    "ToolCall": _Rebuild.tool_call,
    "ToolCallResult": _Rebuild.tool_result,
    "AgentStreamStructuredOutput": _Rebuild.structured_output,
    "StopEvent": _Rebuild.stop,
}
"""What reads each event type's JSON fields (``_READERS``: its objects)."""


def _run_end_readers(kind: str) -> tuple[Callable[[_Rebuild, dict[str, Any], int], None],
                                         Callable[[_Rebuild, Any, int], None]]:
    """What reads a run-ending event's JSON fields, and its objects."""

    def read_data(rebuild: _Rebuild, data: dict[str, Any], e: int) -> None:
        rebuild.run_ended(kind, data, e)

    def read_object(rebuild: _Rebuild, event: Any, e: int) -> None:
        rebuild.run_ended(kind, _event_fields(event, kind, e, f"events[{e}].data"), e)

    return read_data, read_object


for _kind in RUN_ENDS:
    _DATA_READERS[_kind], _READERS[_kind] = _run_end_readers(_kind)


def _human_input_readers(kind: str) -> tuple[Callable[[_Rebuild, dict[str, Any], int], None],
                                             Callable[[_Rebuild, Any, int], None]]:
    """What reads a human-input event's JSON, and its objects (as ``dump_events`` dumps
    them)."""

    def read_data(rebuild: _Rebuild, data: dict[str, Any], e: int) -> None:
        rebuild.human_input(kind, data, e)

    def read_object(rebuild: _Rebuild, event: Any, e: int) -> None:
        rebuild.human_input(kind, _event_dump(event, e, f"events[{e}].data"), e)

    return read_data, read_object


_VERBATIM: set[Callable[[_Rebuild, Any, int], None]] = set()
"""The readers of events kept verbatim, extras (``_data``) and all."""
for _kind in HUMAN_INPUT:
    _DATA_READERS[_kind], _READERS[_kind] = _human_input_readers(_kind)
    _VERBATIM.add(_READERS[_kind])

_OBJECT_READERS: dict[type, Callable[[_Rebuild, Any, int], None] | None] = {}
"""The event classes in ``_KNOWN_CLASSES``, with what reads one (None: it contributes nothing)."""
_UNSEEN: Any = object()
_STREAMS: set[type] = set()
"""The AgentStream classes met (LlamaIndex's): each is a reply being streamed, which its
AgentOutput must follow."""


def events_to_messages(events: Any, *, allow_pending: bool = False) -> list[Message]:
    """The conversation an AgentWorkflow event stream shows, validated.

    Errors point at the event: ``index`` is its position in ``events``.
    """
    if not isinstance(events, list):
        raise TraceError("malformed_event", f"expected a list of events, got "
                         f"{type(events).__name__}", path="events", source=NAME)
    rebuild = _Rebuild()
    paused = pause_gc()
    e = 0
    try:
        try:
            for e, event in enumerate(events):
                read = _OBJECT_READERS.get(type(event), _UNSEEN)
                if read is not _UNSEEN:  # an event object of a type seen before: read in place
                    if read is not None:
                        if event.__pydantic_private__["_data"] and read not in _VERBATIM:
                            _refuse_extra(event.__pydantic_private__["_data"], e, "._data")
                        read(rebuild, event, e)
                    elif rebuild.streamed is None and type(event) in _STREAMS:
                        rebuild.streamed = e  # a reply being streamed: its output must follow
                    continue  # every other known type contributes nothing (see EVENT_TYPES)
                kind, data = _normalize(event, e)  # (an unknown type is refused there)
                read_data = _DATA_READERS.get(kind)
                if read_data is not None:
                    if kind in HUMAN_INPUT:  # kept verbatim, extras and all
                        pass
                    elif isinstance(event, dict):
                        _undeclared(kind, data, e)
                    elif event.__pydantic_private__["_data"]:
                        _refuse_extra(event.__pydantic_private__["_data"], e, "._data")
                    read_data(rebuild, data, e)
                elif kind == "AgentStream":
                    if not isinstance(event, dict):
                        _STREAMS.add(type(event))
                    if rebuild.streamed is None:
                        rebuild.streamed = e
                # every other known type contributes nothing, for the reason EVENT_TYPES gives
        except FELL as exc:
            refused = _refused(events[e], e)
            if refused is None:
                raise  # LlamaIndex accepts the event: the fault is ours, shown as it is
            raise refused from exc
        except TraceError as error:
            earlier = rebuild.earlier_fault(error)
            if earlier is None:
                raise
            raise earlier from None
        if rebuild.streamed is not None:
            rebuild.cut("the events end")
        try:
            validate(rebuild.messages, allow_pending=allow_pending, source=NAME)
        except TraceError as error:
            raise rebuild.placed(error) from None
        rebuild.stopped(events)
    finally:
        resume_gc(paused)
    return rebuild.messages


_DECLARED: dict[str, frozenset[str]] = {
    "AgentInput": frozenset(("input", "current_agent_name")),
    "AgentOutput": frozenset(("response", "structured_response", "current_agent_name", "raw",
                              "tool_calls", "retry_messages")),
    "ToolCall": frozenset(("tool_name", "tool_kwargs", "tool_id")),
    "ToolCallResult": frozenset(("tool_name", "tool_kwargs", "tool_id", "tool_output",
                                 "return_direct")),
    "AgentStreamStructuredOutput": frozenset(("output",)),
    "StopEvent": frozenset(("result",)),
    **{kind: fields | {"result"} for kind, fields in RUN_ENDS.items()},  # (a StopEvent's)
}
"""The fields each event type that is read declares (and its dump writes)."""


def _undeclared(kind: str, data: dict[str, Any], e: int, where: str = "") -> None:
    """Refuse what an event's JSON (at ``events[e].data<where>``) holds beside its declared
    fields: the extras it was made with (``_data``, which its dump writes when there are
    any) or a key of no field."""
    declared = _DECLARED[kind]
    for key in data:
        if key not in declared:
            if key == "_data" and type(data[key]) is dict:
                if data[key]:
                    _refuse_extra(data[key], e, f"{where}._data")
                continue
            _refuse_extra({key: data[key]}, e, where)


def _refuse_extra(extra: dict[str, Any], e: int, where: str) -> NoReturn:
    key = sorted(extra, key=str)[0]
    raise fail(
        "malformed_event",
        f"the event holds {key!r} = {short_repr(extra[key])}, a field its type does not declare "
        "(an extra it was made with): AgentWorkflow makes none, and no message has a place "
        "for it",
        e,
        f"events[{e}].data{where}.{key}",
    )


def _refused(event: Any, e: int) -> TraceError | None:
    """What LlamaIndex finds wrong with an event (its objects, or those in its dict) on which
    the reader fell with an exception of its own: a field changed after it was made."""
    at = f"events[{e}]" if isinstance(event, dict) else f"events[{e}].data"
    return refusal(event, at, "LlamaIndex", index=e, source=NAME)
