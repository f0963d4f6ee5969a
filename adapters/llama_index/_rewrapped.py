"""A user message the model was given with more around it, and a later input gives plain.

Two things add to the user message that starts a run, in what the model is given only:
memory blocks inserted into the user message (``Memory(insert_method="user")``) go before
its blocks, in every input of that run, and a state prompt (``initial_state``) wraps its
last text block in the run's first input (by default
``"Current state:\\n{...}\\n\\nCurrent message:\\n<text>\\n"``). Memory stores the message
plain. When the run ended early, before it saved its replies, that message is the last one
memory holds, and the next run's input, a retry on the same memory, holds it plain where it
should be and adds the same to its own new user message.

``wrappings`` says how a message read is a plain one with more around it (every way that
fits: a state prompt's text is not known, only seen); ``wrapped_alike`` whether another
message has the same around it. Both are exact: parts are compared whole, texts character
by character.
"""

from __future__ import annotations

from typing import NamedTuple

from tracebridge import HumanMessage, TextPart
from tracebridge.messages import Part


class Wrapping(NamedTuple):
    """What a user message was given with: parts before its own (memory blocks), and text
    before and after its last text part (a state prompt)."""

    lead: list[Part]
    before: str
    after: str


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


def wrappings(read: HumanMessage, plain: HumanMessage) -> list[Wrapping]:
    """Every way ``read`` is ``plain`` with more around it: ``read``'s parts are some parts,
    then ``plain``'s, its last text part's text with text before and after it (one way for
    each place that text is found). Empty when it is not, or when nothing is around it."""
    mine, theirs = parts_of(read), parts_of(plain)
    extra = len(mine) - len(theirs)
    if extra < 0:
        return []
    lead, rest = mine[:extra], mine[extra:]
    wrapped = _last_text(theirs)
    if any(got != want for at, (got, want) in enumerate(zip(rest, theirs, strict=True))
           if at != wrapped):
        return []
    if wrapped is None:
        return [Wrapping(lead, "", "")] if lead else []
    got, want = rest[wrapped], theirs[wrapped]
    assert isinstance(want, TextPart)
    if not isinstance(got, TextPart) or got.metadata != want.metadata:
        return []
    found, text = [], got.text
    at = text.find(want.text)
    while at >= 0:
        way = Wrapping(lead, text[:at], text[at + len(want.text):])
        if lead or way.before or way.after:
            found.append(way)
        at = text.find(want.text, at + 1)
    return found


def wrapped_alike(message: HumanMessage, way: Wrapping) -> bool:
    """Whether ``message`` has ``way`` around it: the same parts first, then its own, the
    last text part of which (when the way has text around it) has the same text around
    its own."""
    parts = parts_of(message)
    size = len(way.lead)
    if len(parts) <= size or parts[:size] != way.lead:
        return False
    if not (way.before or way.after):
        return True
    wrapped = _last_text(parts)
    if wrapped is None or wrapped < size:
        return False
    text = parts[wrapped]
    assert isinstance(text, TextPart)
    return (len(text.text) >= len(way.before) + len(way.after)
            and text.text.startswith(way.before) and text.text.endswith(way.after))
