"""The commonest AgentWorkflow events, each read in one step.

A FunctionAgent run streams, per model call, an ``AgentInput`` (the whole history again), an
``AgentOutput`` and, per call, a ``ToolCall`` and a ``ToolCallResult``. The general readers
(``_events._Rebuild``) take any event; most of their cost on such a stream is bookkeeping
around a few comparisons. Each reader here takes an event object of the shape FunctionAgent
makes, does the same checks as the general reader on it, with the fields read once from the
models' own ``__dict__`` (an attribute lookup on a pydantic model costs a few times a dict
lookup), and leaves the reader in the same state. Whatever does not hold its preconditions
goes, untouched, to the general reader, which reads it (or refuses it) as always: a fast
reader changes nothing before it has seen that the event is in its shape, so the general
reader starts from the state it would have had.

Why each is the general reader's answer:

* ``AgentOutput``: an assistant response without ``additional_kwargs`` whose blocks
  ``_fast.object_blocks`` reads (text, then tool calls, no two with one id), as
  ``output_object`` reads it; the output's ``tool_calls`` (ToolSelections) each the
  response's call at its place, as ``selections`` finds in its usual case; no structured
  response, no prompt change to note, and the agent the input before it was for.
* ``ToolCall``: the call of the last output with its id, the same name and the same JSON
  arguments (a call whose text parsed: ``agrees``).
* ``ToolCallResult``: a LlamaIndex ``ToolOutput`` whose blocks read as text
  (``object_blocks``), of a call no result read answers (``check_answered``), the call it
  answers agreeing (``answers``), and raw values that say nothing more than the result
  (``_raw_facts`` finds no fact: the output's text and the call's arguments as
  ``FunctionTool`` records them, or nothing).
* ``AgentInput``: the prompt (its leading system messages) is the last input's (the same
  objects, or plain text messages of the same role and text, whose dumps ``same_prompt``
  would find equal), or there is none in either; the item where the last message read
  should be holds it, as ``held_as`` says of the message that item reads as
  (``plainly_held``; ``Inputs.continued`` finds the same), and when the last messages read
  are two results or more of one reply, the items before it give their call ids in the
  order read (``in_read_order``: else ``Inputs.input_order`` may read them in the input's
  order); the items after it are read by the general item reader, in order.

Comparisons are made in the order the general reader makes them, and only between values
whose types are checked first, so that one that would fall (an object's own ``__eq__``)
falls where it falls on the general road.

``tests/test_llama_events_speed_paths.py`` holds each to the general reader, inside and just
outside its shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracebridge import AIMessage, HumanMessage, Message, ToolCall, ToolMessage, _build
from tracebridge._json import same_json, surrogate_key_in
from tracebridge._optional import module_of

from ._blocks import NAME, Llama
from ._inputs import PROMPT_ROLES, without_event
from ._result_block import in_read_order, result_block

if TYPE_CHECKING:
    from ._events import _Rebuild

_MODULES = ("llama_index.", "workflows.")

SELECTIONS: set[type] = set()
"""The ToolSelection classes met (LlamaIndex's), whose objects' fields are read in place."""

_ABSENT: Any = object()
"""What a model's ``__dict__`` gives for a field it does not hold (changed after it was
made): the general reader then asks for it, and LlamaIndex says what is wrong."""

_OUTPUTS: set[type] = set()
"""The ToolOutput classes met (LlamaIndex's), whose objects' fields are read in place."""


def result_metadata(direct: bool, facts: dict[str, Any]) -> dict[str, Any] | None:
    """The metadata of a result: ``return_direct`` when its tool returned directly, and what
    its output's raw values say beyond it (``_raw_facts``)."""
    if not direct and not facts:
        return None
    return {NAME: {"event": {"return_direct": True, **facts} if direct else facts}}


def plain_input(raw_input: Any, kwargs: dict[str, Any]) -> bool:
    """Whether a tool output's ``raw_input`` is its call's arguments: as ``FunctionTool``
    records them (``{"args": [], "kwargs": <tool_kwargs>}``), or the arguments themselves."""
    if type(raw_input) is not dict:
        return False
    if len(raw_input) == 2 and "kwargs" in raw_input:
        args = raw_input.get("args")
        if type(args) in (list, tuple) and not args:
            return same_json(raw_input["kwargs"], kwargs)
    return same_json(raw_input, kwargs)


def read_output(rebuild: _Rebuild, event: Any, e: int) -> None:
    """An AgentOutput object (see the module docstring); else ``output_object``."""
    data = event.__dict__
    agent, response = data.get("current_agent_name"), data.get("response")
    selections = data.get("tool_calls", _ABSENT)
    if (type(agent) is not str or type(response) is not Llama.chat_message
            or (type(selections) is not list and selections is not None)
            or data.get("structured_response", _ABSENT) is not None or rebuild.unprompted
            or (agent != rebuild.agent and rebuild.agent is not None)):
        rebuild.output_object(event, e)
        return
    fields = response.__dict__
    blocks, extra = fields.get("blocks"), fields.get("additional_kwargs")
    read = (rebuild.read_blocks(blocks, True)
            if (fields.get("role") is Llama.assistant and type(extra) is dict and not extra
                and type(blocks) is list) else None)
    if read is None or (selections and not _own_calls(selections, read[1])) or (
            len(read[1]) > 1 and not distinct_ids(read[1])):
        rebuild.output_object(event, e)  # (which refuses a repeated id)
        return
    content, calls = read
    messages = rebuild.messages
    messages.append(_build.ai(content, calls, agent))
    rebuild.origin.append(e)
    rebuild.source, rebuild.source_call = response, None
    rebuild.streamed = None
    rebuild.new_calls(calls)  # (the message's tool_calls: these, or an empty list as they are)
    rebuild.last_output = len(messages) - 1


def distinct_ids(calls: list[ToolCall]) -> bool:
    """Whether no two of a reply's calls share an id (calls without one pair by place)."""
    ids = [call.id for call in calls if call.id is not None]
    return len(set(ids)) == len(ids)


def _own_calls(selections: list[Any], calls: list[ToolCall]) -> bool:
    """Whether an output's ``tool_calls`` are ToolSelection objects, each the response's
    call at its place (``selections``'s usual case, which reads nothing more)."""
    if len(selections) > len(calls):
        return False
    for entry, call in zip(selections, calls, strict=False):
        if type(entry) not in SELECTIONS:
            return False
        fields, mine = entry.__dict__, call.__dict__
        tool_id, name = fields.get("tool_id"), fields.get("tool_name")
        if not (len(fields) == 3 and type(tool_id) is str and mine["id"] == tool_id
                and type(name) is str and mine["name"] == name
                and same_json(mine["args"], fields.get("tool_kwargs"))):
            return False
    return True


def read_call(rebuild: _Rebuild, event: Any, e: int) -> None:
    """A ToolCall object (see the module docstring); else ``call_object``."""
    fields = event.__dict__
    tool_id, name = fields.get("tool_id"), fields.get("tool_name")
    if type(tool_id) is str and tool_id and type(name) is str:  # ("": a call without an id)
        for call in rebuild.calls:
            mine = call.__dict__
            if mine["id"] == tool_id:  # (the first with that id is the one it names)
                if (mine["invalid_args"] is None and mine["name"] == name
                        and same_json(mine["args"], fields.get("tool_kwargs"))
                        and not surrogate_key_in(mine["args"])):
                    return
                break
    rebuild.call_object(event, e)


def read_result(rebuild: _Rebuild, event: Any, e: int) -> None:
    """A ToolCallResult object (see the module docstring); else ``result_object``."""
    fields = event.__dict__
    output = fields.get("tool_output")
    kind = type(output)
    if kind not in _OUTPUTS and not _is_tool_output(kind):
        rebuild.result_object(event, e)
        return
    out = output.__dict__
    tool_id, name, kwargs = fields.get("tool_id"), fields.get("tool_name"), fields.get(
        "tool_kwargs")
    direct, is_error, named = fields.get("return_direct"), out.get("is_error"), out.get(
        "tool_name")
    blocks, raw_input, raw_output = out.get("blocks"), out.get("raw_input", _ABSENT), out.get(
        "raw_output", _ABSENT)
    if (type(tool_id) is not str or type(name) is not str or type(kwargs) is not dict
            or type(direct) is not bool or type(is_error) is not bool
            or type(named) is not str or named != name or type(blocks) is not list
            or raw_input is _ABSENT or raw_output is _ABSENT or tool_id in rebuild.results
            or tool_id == ""  # (a call without an id)
            or rebuild.idless.read_places):  # (it may go before id-less calls' results)
        rebuild.result_object(event, e)  # (which refuses a call answered twice)
        return
    for call in rebuild.calls:  # the call it answers, when it is the last output's (answers)
        mine = call.__dict__
        if mine["id"] == tool_id:
            if not (mine["invalid_args"] is None and mine["name"] == name
                    and same_json(mine["args"], kwargs) and not surrogate_key_in(kwargs)):
                rebuild.result_object(event, e)  # (which refuses it, or keeps what it ran with)
                return
            break
    read = rebuild.read_blocks(blocks, False)
    content = read[0] if read is not None else None
    if type(content) is not str or not (
            (raw_output is None or (type(raw_output) is str and raw_output == content))
            and (raw_input is None or plain_input(raw_input, kwargs))):
        rebuild.result_object(event, e)  # (which keeps what they say)
        return
    messages = rebuild.messages
    messages.append(_build.tool(content, tool_id, name, is_error, None,
                                result_metadata(direct, {}) if direct else None))
    rebuild.origin.append(e)
    rebuild.source, rebuild.source_call = blocks, tool_id
    rebuild.results[tool_id] = (name, kwargs, len(messages) - 1)
    rebuild.idless.with_id.append(tool_id)  # (moved on when an id-less call's result goes before)


def _is_tool_output(kind: type) -> bool:
    """Whether ``kind`` is LlamaIndex's ToolOutput (then kept in ``_OUTPUTS``)."""
    if kind.__name__ != "ToolOutput" or not module_of(kind).startswith(_MODULES):
        return False
    _OUTPUTS.add(kind)
    return True


def read_input(rebuild: _Rebuild, event: Any, e: int) -> None:
    """An AgentInput object (see the module docstring); else ``input_object``."""
    data = event.__dict__
    items, agent = data.get("input"), data.get("current_agent_name")
    messages, before = rebuild.messages, rebuild.prompt
    if (type(items) is list and type(agent) is str and messages and rebuild.streamed is None
            and items):
        # how many system messages lead it: none, after an input without them, at once
        first = items[0]
        role = first.__dict__.get("role") if type(first) is Llama.chat_message else None
        if not before and type(role) is Llama.role_type and role not in PROMPT_ROLES:
            lead = 0
        else:
            lead = _prompt_length(items)
        if lead >= 0 and ((not lead and not before) or _same_prompt(items, lead, before)):
            # the last message read should be where it is in the history read
            # (Inputs.continued), the history starting after the prompt
            visible = len(messages) - len(rebuild.unheld) - rebuild.dropped
            last = lead + visible - 1
            if lead <= last < len(items):
                k = rebuild.dropped + visible - 1
                read = messages[rebuild.position(k) if rebuild.unheld else k]
                start = result_block(messages, rebuild.origin, rebuild.taken, rebuild.unheld)
                if (start < 0 or in_read_order(messages[start:], items, lead, last)) and (
                        plainly_held(read, items[last])):
                    rebuild.agent = agent
                    rebuild.prompt = items[:lead]
                    rebuild.read_items(items, range(last + 1, len(items)), e, lead)
                    return
    rebuild.input_object(event, e)


def _prompt_length(items: list[Any]) -> int:
    """How many system messages lead the input (``role_of`` on each), when a ChatMessage of
    another role follows them; else -1."""
    chat, role_type = Llama.chat_message, Llama.role_type
    for lead, item in enumerate(items):
        if type(item) is not chat:
            return -1
        role = item.__dict__.get("role")
        if type(role) is not role_type:
            return -1
        if role not in PROMPT_ROLES:
            return lead
    return -1


def _same_prompt(items: list[Any], lead: int, before: list[Any] | None) -> bool:
    """Whether the input's prompt (its ``lead`` first items) is the last input's, as
    ``Inputs.same_prompt`` says: no prompt in either, or the same messages (their dumps
    equal: for plain text messages, the same role and text)."""
    if not lead:
        return not before
    if before is None or len(before) != lead:
        return False
    for item, seen in zip(items, before, strict=False):
        if item is not seen and not _same_plain_message(item, seen):
            return False
    return True


def _same_plain_message(given: Any, seen: Any) -> bool:
    """Whether two ChatMessages of one ``TextBlock`` and no ``additional_kwargs`` have the
    same role and text (their ``chat_message_dump``s are then equal)."""
    chat = Llama.chat_message
    if type(given) is not chat or type(seen) is not chat:
        return False
    mine, theirs = given.__dict__, seen.__dict__
    role, extra, other = mine.get("role"), mine.get("additional_kwargs"), theirs.get(
        "additional_kwargs")
    if (type(role) is not Llama.role_type or role is not theirs.get("role")
            or type(extra) is not dict or extra or type(other) is not dict or other):
        return False
    text = _lone_text(mine.get("blocks"))
    return text is not None and text == _lone_text(theirs.get("blocks"))


def _lone_text(blocks: Any) -> str | None:
    """The text of blocks that are one ``TextBlock`` holding a string, else None."""
    if type(blocks) is list and len(blocks) == 1:
        block = blocks[0]
        if type(block) is Llama.text_block:
            text = block.__dict__.get("text")
            if type(text) is str:
                return text
    return None


def plainly_held(read: Message, item: Any) -> bool:
    """``held_as(read, <item read>)`` for an input item of the commonest shape, decided
    without reading it: a ChatMessage (user, assistant or tool) of one ``TextBlock`` and no
    ``additional_kwargs`` (a tool's: a string ``tool_call_id``, and a string ``name`` at
    most), which ``_fast.read_item`` reads as that text's plain message
    (``_build.human(text)``, ``_build.ai(text)``, ``_build.tool(text, tool_call_id, name)``).
    False says nothing: the item is then compared the general way."""
    if type(item) is not Llama.chat_message:
        return False
    fields = item.__dict__
    extra, blocks = fields.get("additional_kwargs"), fields.get("blocks")
    if type(extra) is not dict or type(blocks) is not list or len(blocks) != 1:
        return False
    block = blocks[0]
    text = block.__dict__.get("text") if type(block) is Llama.text_block else None
    if type(text) is not str:
        return False
    role, kind, mine = fields.get("role"), type(read), read.__dict__
    # each field of the message the item reads as, compared as held_as compares it
    if kind is HumanMessage:
        same = (role is Llama.user and not extra and mine["name"] is None
                and mine["content"] == text)
    elif kind is AIMessage:  # (its name is the event's)
        same = (role is Llama.assistant and not extra and mine["content"] == text
                and not mine["tool_calls"] and not mine["citations"]
                and mine["audio"] is None)
    elif kind is ToolMessage:  # (its name and error flag are the event's)
        call_id, size = extra.get("tool_call_id"), len(extra)
        same = (role is Llama.tool and type(call_id) is str
                and (size == 1 or (size == 2 and type(extra.get("name")) is str))
                and mine["content"] == text and mine["tool_call_id"] == call_id)
    else:
        return False
    metadata = mine["metadata"]
    return same and mine["id"] is None and (not metadata or not without_event(metadata))
