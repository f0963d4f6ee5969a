"""A user message the model was given with more around it, and a later input gives plain.

Two things add to the user message that starts a run, in what the model is given only:
memory blocks inserted into the user message (``Memory(insert_method="user")``) go before
its blocks, in every input of that run, as the parts of the memory's template (by default
text that opens with ``<memory>`` and closes with ``</memory>``, an image or other media
block of a memory block between its texts); and a state prompt (``initial_state``) wraps its
last text block in the run's first input (the default
``"Current state:\\n{state}\\n\\nCurrent message:\\n{msg}\\n"``), which is the memory
template's last text when the message has no text of its own. Memory stores the message
plain. When the run ended early, before it saved its replies, that message is the last one
memory holds, and the next run's input, a retry on the same memory, holds it plain where it
should be and adds the same to its own new user message.

``wrapping`` says how a message read is a plain one with exactly that around it (nothing
else counts: other text around it, a custom template, is no wrapping); ``wrapped_alike``
whether another message has the same around it. Both are exact (parts compared whole, texts
character by character) and cost the length of the messages.
"""

from __future__ import annotations

from typing import NamedTuple

from tracebridge import HumanMessage, TextPart
from tracebridge.messages import Part

_MEMORY_OPEN, _MEMORY_CLOSE = "<memory>\n", "\n</memory>"
"""How the text of LlamaIndex's default memory-blocks template begins and ends."""
_STATE_HEAD, _STATE_TAIL, _STATE_AFTER = "Current state:\n", "\n\nCurrent message:\n", "\n"
"""LlamaIndex's default state prompt: the text before the state, between the state and the
message, and after the message."""


class Wrapping(NamedTuple):
    """What a user message was given with: parts before its own (memory blocks), and text
    before and after its last text part (a state prompt)."""

    lead: list[Part]
    before: str
    after: str
    in_state: bool = False
    """Whether the lead's last text is in a state prompt (the message has no text), as the
    lead given plain tells, or the same lead before a message without text (``wrapped_alike``)."""


def parts_of(message: HumanMessage) -> list[Part]:
    """A user message's content as parts (a text alone is one text part)."""
    content = message.content
    return [TextPart(text=content)] if isinstance(content, str) else list(content)


def _last_text(parts: list[Part]) -> int | None:
    """Where the last text part is (what a state prompt wraps), or None."""
    for at in range(len(parts) - 1, -1, -1):
        if isinstance(parts[at], TextPart):
            return at
    return None


def _memory_blocks(lead: list[Part]) -> bool:
    """Whether parts are the memory blocks' parts: the default template's text first and
    last (one text part when the blocks are text alone)."""
    first, last = lead[0], lead[-1]
    return (isinstance(first, TextPart) and first.text.startswith(_MEMORY_OPEN)
            and isinstance(last, TextPart) and last.text.endswith(_MEMORY_CLOSE))


def _stated_blocks(lead: list[Part]) -> bool:
    """Whether parts are the memory blocks' parts with the default state prompt around their
    last text: the template's text first (in the state prompt when it is the only text), and
    the last one ending the template, then the prompt. Which of it is the state is told by
    the blocks given plain."""
    first, last = lead[0], lead[-1]
    return (isinstance(last, TextPart) and last.text.startswith(_STATE_HEAD)
            and last.text.endswith(_MEMORY_CLOSE + _STATE_AFTER)
            and (len(lead) == 1 or (isinstance(first, TextPart)
                                    and first.text.startswith(_MEMORY_OPEN))))


def _blocks_alone(lead: list[Part]) -> Wrapping | None:
    """How parts before a message without text are memory blocks: as they are, or with the
    state prompt around their last text; None when they are neither (or none)."""
    if lead and _memory_blocks(lead):
        return Wrapping(lead, "", "")
    if lead and _stated_blocks(lead):
        return Wrapping(lead, "", "", in_state=True)
    return None


def _state_before(text: str, plain: str) -> str | None:
    """The text before ``plain`` when ``text`` is ``plain`` in the default state prompt (a
    state of any text), else None."""
    at = len(text) - len(plain) - len(_STATE_AFTER)
    if (at < len(_STATE_HEAD) + len(_STATE_TAIL) or not text.endswith(_STATE_AFTER)
            or not text.startswith(plain, at) or not text.startswith(_STATE_HEAD)
            or not text.endswith(_STATE_TAIL, 0, at)):
        return None
    return text[:at]


def wrapping(read: HumanMessage, plain: HumanMessage) -> Wrapping | None:
    """How ``read`` is ``plain`` given with memory blocks before its parts, or its last text
    part in a state prompt, or both (in the blocks' last text when it has none); None when it
    is not (or when nothing is around it)."""
    mine, theirs = parts_of(read), parts_of(plain)
    extra = len(mine) - len(theirs)
    if extra < 0:
        return None
    lead, rest = mine[:extra], mine[extra:]
    wrapped = _last_text(theirs)
    if any(got != want for at, (got, want) in enumerate(zip(rest, theirs, strict=True))
           if at != wrapped):
        return None
    if wrapped is None:
        return _blocks_alone(lead)
    if lead and not _memory_blocks(lead):
        return None
    blocks = Wrapping(lead, "", "") if lead else None
    got, want = rest[wrapped], theirs[wrapped]
    assert isinstance(want, TextPart)
    if not isinstance(got, TextPart) or got.metadata != want.metadata:
        return None
    if got.text == want.text:
        return blocks
    before = _state_before(got.text, want.text)
    return None if before is None else Wrapping(lead, before, _STATE_AFTER)


def described(way: Wrapping) -> str:
    """What ``way`` put around a message, as a refusal says it."""
    blocks = "with memory blocks put before it" if way.lead else ""
    state = ("their last text in a state prompt" if way.in_state
             else "in a state prompt" if way.before else "")
    return " and ".join(said for said in (blocks, state) if said)


def wrapped_alike(message: HumanMessage, way: Wrapping) -> bool:
    """Whether ``message`` has ``way`` around it: the same parts first (given plain, when the
    way's state prompt is in their last text and the message has text of its own), then its
    own, the last text part of which (when the way has a state prompt) has the same text
    around its own."""
    parts = parts_of(message)
    size = len(way.lead)
    if len(parts) <= size:
        return False
    if way.in_state:
        return _textless_alike(parts, way.lead) or _unstated_alike(parts, way.lead)
    return parts[:size] == way.lead and _last_wrapped(parts, way)


def _textless_alike(parts: list[Part], lead: list[Part]) -> bool:
    """Whether ``parts`` are ``lead`` (memory blocks with the state prompt in their last text)
    then parts of their own without text: the message has none either, and the same blocks
    in the same state prompt around them."""
    return parts[:len(lead)] == lead and _last_text(parts) == len(lead) - 1


def _unstated_alike(parts: list[Part], lead: list[Part]) -> bool:
    """Whether ``parts`` begin with memory blocks that are ``lead`` but for its last text,
    which is theirs in a state prompt, and their own last text is in that state prompt."""
    size = len(lead)
    blocks, given, stated = parts[:size], parts[size - 1], lead[-1]
    if (blocks[:-1] != lead[:-1] or not _memory_blocks(blocks)
            or not isinstance(given, TextPart) or not isinstance(stated, TextPart)
            or given.metadata != stated.metadata):
        return False
    before = _state_before(stated.text, given.text)
    return before is not None and _last_wrapped(parts, Wrapping(blocks, before, _STATE_AFTER))


def _last_wrapped(parts: list[Part], way: Wrapping) -> bool:
    """Whether the last text part of ``parts``, after ``way``'s lead, has ``way``'s text
    around it (always, when the way has none)."""
    if not (way.before or way.after):
        return True
    wrapped = _last_text(parts)
    if wrapped is None or wrapped < len(way.lead):
        return False
    text = parts[wrapped]
    assert isinstance(text, TextPart)
    return (len(text.text) >= len(way.before) + len(way.after)
            and text.text.startswith(way.before) and text.text.endswith(way.after))
