"""What an ``AgentInput`` adds to the conversation read from an event stream, checked.

An input is what the model was given: the agent's system prompt, then what the run's memory
gives (the conversation so far, whose oldest messages a token limit may have dropped), then
the run's scratchpad. Everything of the first input of a stream is new. After that, the
input's history (what follows its leading system messages) must go on from the conversation
read so far (all but the prompts): it holds the messages read, in order, and what follows
them is new — the next user turn, and anything else the framework gave the model (the copy of
a ``return_direct`` tool's output that ``FunctionAgent`` adds as an assistant message). The
leading system messages (role ``system``: a developer message is history) are new when they
differ from the previous input's (a handoff to an agent with other instructions); when they
are gone (a handoff to an agent without a prompt), the next reply says so in its metadata.
After a run that ended early (failed, cancelled, timed out), the next input may hold the
conversation without what that run had only in its scratchpad (its replies and results,
which the framework saves to memory when a run finishes): those messages stay read. The last
message it holds may be plain where the run gave the model its user message with more around
it (memory blocks, a state prompt: see ``_rewrapped``): read on when the input's new user
message has the same around it.

The results of one reply's calls are the exception to "in order": the input may give them in
another order than they were streamed, and they are then read in its order (``input_order``,
``_result_block``).

Only the last message read is compared where the input should hold it: a stream costs the
length of its conversation, not its square. When it is not there, the input is looked at
whole: a shorter tail of the conversation read is a memory that dropped its oldest messages
(read on, from that tail); anything else is refused where the input departs from what was
read (``conflicting_fields``), or, for an input holding none of it, as a second conversation
in the same list (``ambiguous_trace``), unless what was read broke a conversation rule before
it (``earlier_fault``): that fault is raised, where the events have it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from tracebridge import AIMessage, HumanMessage, Message, TextPart, ToolMessage, TraceError
from tracebridge._json import same_json
from tracebridge._json_model import same_record
from tracebridge.errors import short_repr, with_article
from tracebridge.messages import OpaquePart, Part
from tracebridge.validation import validate

from ._blocks import NAME, Llama, fail
from ._messages import ROLE_KIND, is_chat_message
from ._result_block import (
    given_order,
    in_read_order,
    reordered_ids,
    result_block,
)
from ._rewrapped import described, wrapped_alike, wrapping

PROMPT_ROLES = frozenset({"system"})
"""The role of the messages that lead an input as the agent's prompt. A developer message is
never an agent's prompt (``FunctionAgent`` puts its prompt first as role ``system``): only a
history holds one, so it is history wherever it is, matched as the rest of it is."""
_RELATIVE = frozenset({"conflicting_fields", "ambiguous_trace"})
"""The refusals of an event for not agreeing with what was read before it: an earlier rule
fault (``Inputs.earlier_fault``) makes what was read other than what it could agree with."""
_EVENT_ONLY = {"ai": frozenset({"name"}), "tool": frozenset({"name", "is_error"})}
"""The fields of a message read from an event that its copy in a later input does not have
(the agent's name on a reply; the tool's name and error flag on a result)."""


def role_of(item: Any) -> str | None:
    """The item's role when it is a LlamaIndex role, else None (the item is refused if read)."""
    kind = type(item)
    if kind is Llama.chat_message:  # the common case first (None until the first is read)
        role = item.role
        if type(role) is Llama.role_type:
            return role if role in ROLE_KIND else None
    elif kind is dict:
        role = item.get("role")
    elif is_chat_message(item):
        role = item.role  # a MessageRole: a str enum, equal to its value
    else:
        return None
    return role if isinstance(role, str) and role in ROLE_KIND else None


def without_event(metadata: dict[str, Any]) -> dict[str, Any]:
    kept = metadata.get(NAME)
    if not isinstance(kept, dict) or "event" not in kept:
        return metadata
    rest = {key: value for key, value in kept.items() if key != "event"}
    return {**{k: v for k, v in metadata.items() if k != NAME}, **({NAME: rest} if rest else {})}


def held_as(read: Message, given: Message) -> bool:
    """Whether ``given`` (an item of a later input) is the message ``read`` from the events,
    as the framework's memory holds it: all of it but what only the events say (an agent's
    or tool's name, a tool's error flag, ``metadata["llama_index"]["event"]``), compared as
    JSON (``same_record``: ``1`` and ``1.0`` differ, ``-0.0`` and ``0.0`` do not)."""
    if type(read) is not type(given):
        return False
    skip = _EVENT_ONLY.get(read.type, frozenset())
    theirs = given.__dict__
    for key, value in read.__dict__.items():
        if key in skip:
            continue
        if key == "metadata":
            if not same_json(without_event(value), theirs[key]):
                return False
        elif not same_record(value, theirs[key]):
            return False
    return True


def same_results(block: list[Message], given: list[Message]) -> bool:
    """Whether the ``given`` messages (an input's, read) are the ``block``'s results, one to
    one in any order, each as memory holds the one read (``held_as``); results are looked
    for among those with the same call id, or, without one, the same text."""
    if len(given) != len(block):
        return False
    candidates: dict[tuple[bool, str | None], list[int]] = {}
    for k, message in enumerate(block):
        candidates.setdefault(_result_key(message), []).append(k)
    for message in given:
        found = candidates.get(_result_key(message))
        if not found:
            return False
        for n, k in enumerate(found):
            if held_as(block[k], message):
                del found[n]
                break
        else:
            return False
    return True


def _result_key(message: Message) -> tuple[bool, str | None]:
    if not isinstance(message, ToolMessage):
        return False, None
    if message.tool_call_id is not None:
        return True, message.tool_call_id
    return False, message.text


_KIND = {"human": "a user", "ai": "an assistant", "tool": "a tool", "system": "a system"}
_NOUN = {"image": "image", "audio": "audio clip", "file": "file",
         "reasoning": "reasoning part", "refusal": "refusal"}
"""What a refusal calls a part of each type."""


def _describe(message: Message) -> str:
    """A message as a refusal names it: by its text, or by its parts when it has parts and
    no text part (``a user message of an image``)."""
    kind, content = _KIND[message.type], message.content
    if isinstance(content, str) or not content or any(
            isinstance(part, TextPart) for part in content):
        return f"{kind} message {short_repr(message.text)}"
    return f"{kind} message of {_parts_said(content)}"


def _parts_said(parts: list[Part]) -> str:
    """Parts without text, as a refusal says them, a run of the same kind counted: ``an image
    and 2 files``."""
    runs = [(noun, len(list(run))) for noun, run in groupby(map(_noun, parts))]
    said = [with_article(noun) if count == 1 else f"{count} {noun}s" for noun, count in runs]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


def _noun(part: Part) -> str:
    """What a refusal calls a part (an opaque part: a block of its own kind)."""
    return f"{part.kind} block" if isinstance(part, OpaquePart) else _NOUN[part.type]


def _unconfirming(latest: Message | None, last: bool, e: int, j: int) -> str:
    """Why the item after item ``j`` of the input at ``e`` (``latest``, None when there is
    none; ``last``: it ends the input) does not show a retry's new user message."""
    if not isinstance(latest, HumanMessage):
        return "no user message follows it to show the same around it"
    place = f"the user message after it (events[{e}].data.input[{j + 1}])"
    if last:
        return f"{place} does not have the same around it"
    return f"{place} is not the last item of the input, where a run's new user message is"


class Inputs:
    """The conversation read so far, where each message came from, and what the inputs
    gave the model."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.origin: list[int] = []
        """The event each message came from."""
        self.prompt: list[Any] | None = None
        """The leading system messages of the last input."""
        self.unheld: list[int] = []
        """Where the messages read that memory does not hold are, in order: the agents'
        prompts, and what a run that ended early had only in its scratchpad (see
        ``unsaved``)."""
        self.dropped = 0
        """How many of the oldest messages memory holds no more (a token limit)."""
        self.unprompted = False
        """The last input had no system prompt where the one before had one: the next reply
        says so."""
        self.taken: dict[int, Sequence[int]] = {}
        """The items each AgentInput gave messages, in the order they were read."""
        self.streamed: int | None = None
        """The first AgentStream since the last AgentOutput (a reply being streamed)."""
        self.source: Any = None
        """What the last message of the history was read from (see ``is_source``): an input
        item or an AgentOutput's response, or (with ``source_call``) a ToolCallResult's
        output blocks."""
        self.source_call: str | None = None
        """The call id of the ToolCallResult ``source`` is the output of; None for an item."""
        self.saved = 0
        """How many messages were read when an input last gave one: what memory holds (a
        run saves its replies and results there only when it finishes)."""
        self.unsaved: range | None = None
        """The messages a run that ended early (failed, cancelled, timed out) read after
        ``saved``, until the next input: memory may not hold them."""
        self.ended_at = -1
        """The event the last run that ended early ended with."""

    def new_items(self, items: list[Any], e: int) -> None:
        """Read the new messages of an input (see the module docstring)."""
        if self.streamed is not None:
            self.cut(f"the next AgentInput (events[{e}])")
        count = len(items)
        lead = 0
        role = role_of(items[0]) if count else None
        while role in PROMPT_ROLES:
            lead += 1
            role = role_of(items[lead]) if lead < count else None
        if lead < count and role is None:
            # No role where the prompt may go on: read it, to refuse it where it is wrong.
            self.read_input(items[lead], e, lead)
        prompt = items[:lead]
        if not self.messages:
            self.prompt = prompt
            self.unheld.extend(range(lead))
            self.read_items(items, range(count), e, lead)
            return
        start = self.continued(items, lead, e)
        changed = bool(prompt or self.prompt) and not self.same_prompt(prompt, e)
        self.prompt = prompt
        new: Sequence[int] = range(start, count)
        if changed and lead:
            size = len(self.messages)
            self.unheld.extend(range(size, size + lead))
            new = [*range(lead), *new]
            self.unprompted = False
        elif changed:
            self.unprompted = True  # another agent's prompt was read: this one has none
        self.read_items(items, new, e, lead)

    def read_input(self, item: Any, e: int, j: int) -> Message:
        """Item ``j`` of the input of the AgentInput at ``e``, as a typed message."""
        raise NotImplementedError

    def as_dump(self, item: Any, e: int, where: str) -> Any:
        """An input item as its ``model_dump(mode="json")`` (a dict as it is)."""
        raise NotImplementedError

    def same_prompt(self, items: list[Any], e: int) -> bool:
        """Whether the input's leading system messages (at ``e``) are those of the input
        before (each read when it was new: its dump says nothing new about it), or its first
        ones: the agent's prompt, without a system message of the history after it that a
        token limit dropped (nothing new was given; none at all is no prompt)."""
        before = self.prompt
        if before is None or len(items) > len(before) or (before and not items):
            return False
        dump = self.as_dump
        return all(item is seen or dump(item, e, f"events[{e}].data.input[{k}]")
                   == dump(seen, e, f"events[{e}].data.input[{k}]")
                   for k, (item, seen) in enumerate(zip(items, before[:len(items)],
                                                        strict=True)))

    def read_items(self, items: list[Any], new: Sequence[int], e: int, lead: int) -> None:
        messages, origin, read = self.messages, self.origin, self.read_input
        for j in new:
            messages.append(read(items[j], e, j))
            origin.append(e)
        self.taken[e] = new
        self.unsaved = None
        if new and new[-1] >= lead:  # (the prompt, when read, comes first)
            self.source, self.source_call = items[new[-1]], None
            self.saved = len(messages)

    def is_source(self, item: Any) -> bool:
        """Whether an input item is, as it is, what the last message of the history was read
        from (an item of an earlier input, an AgentOutput's response, a ToolCallResult's
        output as FunctionAgent gives it back): then it holds that message, unread."""
        source, tool_id = self.source, self.source_call
        if tool_id is None:
            return source is not None and (
                item is source or (type(item) is type(source) and item == source))
        if type(item) is dict:
            extra, blocks = item.get("additional_kwargs"), item.get("blocks")
            role = item.get("role")
        elif type(item) is Llama.chat_message:
            fields = item.__dict__
            extra, blocks, role = fields["additional_kwargs"], fields["blocks"], fields["role"]
        else:
            return False
        # FunctionAgent keeps only the call id; a tool's name beside it (as this adapter's
        # writer puts it) is the name the typed result has from its event, which held_as
        # does not compare either
        return (type(extra) is dict and extra.get("tool_call_id") == tool_id
                and (len(extra) == 1 or (len(extra) == 2 and type(extra.get("name")) is str))
                and role == "tool" and type(blocks) is list
                and (blocks is source or blocks == source)
                and (type(item) is not dict or len(item) == 3))

    def position(self, k: int) -> int:
        """Where message ``k`` of the history (the messages read but the unheld) is."""
        at = k
        for skipped in self.unheld:
            if skipped > at:
                break
            at += 1
        return at

    def holds(self, items: list[Any], j: int, k: int, e: int, loose: bool = False) -> bool:
        """Whether item ``j`` of the input at ``e`` is message ``k`` of the history (a user
        message, when ``loose``, whatever it says: see ``realigned``)."""
        read, given = self.messages[self.position(k)], self.read_input(items[j], e, j)
        if loose and isinstance(read, HumanMessage):
            return isinstance(given, HumanMessage)
        return held_as(read, given)

    def continued(self, items: list[Any], lead: int, e: int) -> int:
        """Where the new items of a later input begin: after the history read, which its
        items from ``lead`` on must hold (only its last message is looked at, where it
        should be; see ``realigned`` when it is not there)."""
        visible = len(self.messages) - len(self.unheld) - self.dropped
        if visible <= 0:
            return lead
        last = lead + visible - 1
        start = result_block(self.messages, self.origin, self.taken, self.unheld)
        if start >= 0 and not in_read_order(self.messages[start:], items, lead, last):
            self.input_order(items, lead, last, start, e)
        if last < len(items) and (self.is_source(items[last])
                                  or self.holds(items, last, self.dropped + visible - 1, e)):
            return last + 1
        if self.unsaved is not None and self.without_unsaved(items, lead, e):
            return lead + len(self.messages) - len(self.unheld) - self.dropped
        return self.realigned(items, lead, e)

    def input_order(self, items: list[Any], lead: int, last: int, start: int, e: int) -> None:
        """Read the block of results from message ``start`` on (``_result_block``) in the
        order of the input at ``e``, when its items up to ``last`` end with the reply that
        made the calls and then the same results of the same calls in another order, each
        as memory holds the one read (``held_as``); else leave them as read, for ``continued``
        to decide."""
        block = self.messages[start:]
        first = last - len(block) + 1
        if any(isinstance(message, ToolMessage) and message.tool_call_id is None
               for message in block):
            self.results_held(items, lead, first, block, e)
            return
        if not reordered_ids(block, items[first:last + 1]):
            return  # not the same calls' results (as their ids say): not read here
        given = [self.read_input(items[j], e, j) for j in range(first, last + 1)]
        order = given_order(block, given)
        if (order is None
                or not self.holds(items, first - 1, first - 1 - lead + self.dropped, e)
                or not all(held_as(block[k], message)
                           for k, message in zip(order, given, strict=True))):
            return
        origin = self.origin
        self.messages[start:] = [block[k] for k in order]
        origin[start:] = [origin[start + k] for k in order]
        self.source, self.source_call = items[last], None
        self.moved(start)

    def results_held(self, items: list[Any], lead: int, first: int, block: list[Message],
                     e: int) -> None:
        """``input_order`` for a block holding results of calls without an id: those stay
        in the order of their calls, where the rules pair them with their calls (the input
        gives them in the order the tools finished, see ``_idless``). When the input's items
        from ``first`` on are the same results in another order, each as memory holds the
        one read, after the reply that made the calls, the input is taken to hold the block
        (its last item is then what the history was last read from)."""
        last = first + len(block) - 1
        given = [self.read_input(items[j], e, j) for j in range(first, last + 1)]
        if (same_results(block, given)
                and self.holds(items, first - 1, first - 1 - lead + self.dropped, e)):
            self.source, self.source_call = items[last], None

    def moved(self, start: int) -> None:
        """The results from message ``start`` on were put in the order an input gave them
        (``input_order``): what else says where they are follows them."""

    def without_unsaved(self, items: list[Any], lead: int, e: int) -> bool:
        """Whether the input goes on from the conversation read without what the run that
        ended before it had only in its scratchpad (``unsaved``: the framework saves it to
        memory when the run finishes, so a retry is given the memory without it). Those
        messages then stay read, as messages a memory dropped do."""
        assert self.unsaved is not None
        before = self.unheld
        self.unheld = sorted({*before, *self.unsaved})
        visible = len(self.messages) - len(self.unheld) - self.dropped
        last = lead + visible - 1
        k = self.dropped + visible - 1
        if visible > 0 and last < len(items) and (
                self.holds(items, last, k, e) or self.retried(items, last, k, e)):
            return True
        self.unheld = before
        return False

    def retried(self, items: list[Any], j: int, k: int, e: int) -> bool:
        """Whether item ``j`` of the input at ``e`` (after a run that ended early) is user
        message ``k`` of the history, which that run gave the model with memory blocks or a
        state prompt around it (see ``_rewrapped``), given plain: the input's new user
        message, the item after it and its last, then has the same around it. When it does
        not (the blocks or the state changed between the runs, or no user message ends the
        input after it), the input may be a retry or another conversation, and nothing tells
        which: refused. A message read with nothing of that around it is no retry's: False
        (see ``realigned``)."""
        read = self.messages[self.position(k)]
        if not isinstance(read, HumanMessage):
            return False
        given = self.read_input(items[j], e, j)
        way = wrapping(read, given) if isinstance(given, HumanMessage) and held_as(
            read.model_copy(update={"content": given.content}), given) else None
        if way is None:
            return False
        latest = self.read_input(items[j + 1], e, j + 1) if j + 1 < len(items) else None
        last = j + 2 == len(items)
        if last and isinstance(latest, HumanMessage) and wrapped_alike(latest, way):
            return True
        why = _unconfirming(latest, last, e, j)
        raise self.unconfirmed(given, k, described(way), why, e, j)

    def unconfirmed(self, given: Message, k: int, how: str, after: str, e: int,
                    j: int) -> TraceError:
        """``retried``'s refusal: item ``j`` of the input at ``e`` is history message ``k``
        plain, which that one is ``how`` (with what around it), and ``after`` says why that is
        not known to be a retry's."""
        at = self.position(k)
        return fail("ambiguous_trace", f"the model was given {_describe(given)} here, where "
                    f"the conversation read has {_describe(self.messages[at])} "
                    f"(events[{self.origin[at]}]), the last message the run that ended at "
                    f"events[{self.ended_at}] gave the model: that one is this one {how}, but "
                    f"{after}. This input may be a retry on the same memory or another "
                    f"conversation, and nothing tells which. Split the list: events[:{e}] and "
                    f"events[{e}:] are each read on their own", e,
                    f"events[{e}].data.input[{j}]")

    def realigned(self, items: list[Any], lead: int, e: int) -> int:
        """``continued`` for an input that does not hold the history read where it should:
        one whose memory dropped its oldest messages goes on from a shorter tail of it (read
        on); any other is refused. In that tail, user messages are matched as user messages
        only: the framework rewrites them from one input to the next (a state prompt wraps
        the run's new message in the first input alone; a memory block may be put into the
        latest), which does not make the input another conversation."""
        count = len(items)
        total = len(self.messages) - len(self.unheld)
        first = self.dropped
        for last in range(min(count, lead + total - first - 1) - 1, lead - 1, -1):
            size = last - lead + 1
            if self.holds(items, last, total - 1, e) and all(
                self.holds(items, lead + i, total - size + i, e, loose=True)
                for i in range(size - 1)
            ):
                self.dropped = total - size
                return last + 1
        if lead < count and self.holds(items, lead, first, e):
            # It begins as the history does: where it departs from it.
            j = 1
            while (lead + j < count and first + j < total
                   and self.holds(items, lead + j, first + j, e)):
                j += 1
            if first + j == total:  # all of it, after all (as ``continued`` looks for it)
                return lead + j
            at = self.position(first + j)
            read = f"{_describe(self.messages[at])} (events[{self.origin[at]}])"
            if lead + j < count:
                given = self.read_input(items[lead + j], e, lead + j)
                raise fail("conflicting_fields", f"the model was given {_describe(given)} "
                           f"here, where the conversation read has {read}: this input does "
                           f"not go on from what was read before it", e,
                           f"events[{e}].data.input[{lead + j}]")
            raise fail("conflicting_fields", f"the input ends where the conversation read "
                       f"goes on with {read}: the model was given less than what was read "
                       f"before it", e, f"events[{e}].data.input")
        visible = total - first
        for last in range(lead + visible, count):
            if self.holds(items, last, total - 1, e) and all(
                self.holds(items, last - visible + 1 + i, first + i, e, loose=True)
                for i in range(visible - 1)
            ):
                raise fail("conflicting_fields", f"the input holds "
                           f"{last - visible + 1 - lead} message(s) before the conversation "
                           f"read, which no event before it gave: the events begin after the "
                           f"conversation did, or the memory put them there", e,
                           f"events[{e}].data.input[{lead}]")
        raise self.none_held(count - lead <= 1, e)

    def none_held(self, empty: bool, e: int) -> TraceError:
        """``realigned``'s refusal of the input at ``e``, which holds none of the conversation
        read; ``empty``: nothing but its system messages and the run's new message, as a
        fresh memory gives, and as a token-limited memory gives that flushed everything."""
        last = f"the last, {_describe(self.messages[-1])} from events[{self.origin[-1]}]"
        split = f"events[:{e}] and events[{e}:] are each read on their own"
        if not empty:
            return fail("ambiguous_trace", f"this input holds none of the conversation read "
                        f"from the events before it ({last}): it begins another conversation, "
                        f"such as another run with a memory of its own, logged in the same "
                        f"list. Split the list: {split}", e, f"events[{e}].data.input")
        return fail("ambiguous_trace", f"this input holds no history after its system "
                    f"messages, none of the conversation read from the events before it "
                    f"({last}): either it begins another conversation (another run with a "
                    f"memory of its own, logged in the same list), or its memory has a token "
                    f"limit and flushed every earlier message (a long reply can make it flush "
                    f"them all); from the events alone the two look the same. For one "
                    f"conversation, read the memory view (to_messages(await "
                    f"memory.aget_all())); otherwise split the list: {split}", e,
                    f"events[{e}].data.input")

    def cut(self, until: str,
            how: str = "stopped mid-reply (it failed, was cancelled or timed out)") -> None:
        """Refuse a reply streamed with no AgentOutput after it (``until``: what comes
        instead; ``how``: what the run did, as far as that tells)."""
        at = self.streamed
        assert at is not None
        raise fail("truncated_trace", f"a reply was streamed from here (AgentStream), but no "
                   f"AgentOutput follows it before {until}: the run {how}, and the partial "
                   f"reply is no message", at, f"events[{at}]")

    def place(self, i: int) -> str:
        """The path of the event field message ``i`` was read from."""
        e = self.origin[i]
        taken = self.taken.get(e)
        if taken is not None:
            first = i
            while first > 0 and self.origin[first - 1] == e:
                first -= 1
            return f"events[{e}].data.input[{taken[i - first]}]"
        if isinstance(self.messages[i], ToolMessage):
            return f"events[{e}].data"
        assert isinstance(self.messages[i], AIMessage)
        return f"events[{e}].data.response"

    def rule_fault(self) -> TraceError | None:
        """The first conversation rule that the messages read so far break, placed at the
        events (the last block's calls may still be answered by the events to come); None
        when they keep them all. One pass over them: asked only when the stream is refused,
        or where a fault is known to be among them (a repeated call id, a call answered
        twice), so a stream read whole costs no more."""
        if not self.messages:
            return None
        try:
            validate(self.messages, allow_pending=True, source=NAME)
        except TraceError as error:
            return self.placed(error)
        return None

    def earlier_fault(self, error: TraceError) -> TraceError | None:
        """The rule fault to raise instead of ``error``, a refusal of an event for not
        agreeing with what was read (``_RELATIVE``), when the events broke a rule before it:
        that fault is the first in the stream (a result logged twice, a call left with no
        result before the conversation went on), and what follows it cannot agree with it."""
        if error.code not in _RELATIVE or error.index is None:
            return None
        fault = self.rule_fault()
        if fault is None or fault.index is None or fault.index >= error.index:
            return None
        return fault

    def placed(self, error: TraceError) -> TraceError:
        """A rule violation found at typed message positions, pointed at the events: its
        index the event's, its path (and the places its message names) the event's field."""
        i = error.index
        if i is None or not 0 <= i < len(self.messages):
            return error
        root = f"messages[{i}]"
        path = error.path or root
        suffix = path[len(root):] if path.startswith(root) else ""
        at = self.place(i)
        if suffix == ".tool_call_id" and at.endswith("].data"):  # a ToolCallResult's own field
            suffix = ".tool_id"
        detail = re.sub(r"messages\[(\d+)\]", lambda found: self.place(int(found[1]))
                        if int(found[1]) < len(self.messages) else found[0], error.detail)
        return TraceError(error.code, detail, index=self.origin[i], path=at + suffix,
                          source=NAME)
