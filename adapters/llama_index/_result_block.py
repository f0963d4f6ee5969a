"""The results of one reply's calls, in the order the model was given them.

``FunctionAgent`` runs a reply's calls as concurrent steps: each writes its
``ToolCallResult`` to the stream, then hands it to the step that gathers them, which puts
them in the scratchpad (and so in the next ``AgentInput``, and at the end of the run in
memory) in the order they were gathered. That order can differ from the order they were
streamed: three or more calls to plain (sync) tools often make it differ, at random.

The results read from the stream since the reply that made the calls are one block. When
the next input holds the same results of the same calls in another order, the block is read
in the input's order: what the model was given, and what memory holds
(``Inputs.input_order`` checks each result and the reply before them). A stream that ends
after the block keeps the stream's order. Anything else is left to ``Inputs.continued``.
"""

from __future__ import annotations

from typing import Any

from tracebridge import AIMessage, Message, ToolMessage

from ._blocks import Llama


def result_block(messages: list[Message], origin: list[int], taken: dict[int, Any],
                 unheld: list[int]) -> int:
    """Where the block of results read from ``ToolCallResult`` events since the last reply
    (read from an ``AgentOutput``) begins in ``messages``, when it holds two results or more
    and memory holds them all (none is ``unheld``); else -1."""
    start = len(messages)
    while start and type(messages[start - 1]) is ToolMessage and origin[start - 1] not in taken:
        start -= 1
    if (len(messages) - start < 2 or not start or type(messages[start - 1]) is not AIMessage
            or origin[start - 1] in taken or (unheld and unheld[-1] >= start)):
        return -1
    return start


def in_read_order(block: list[Message], items: list[Any], lead: int, last: int) -> bool:
    """Whether the input ``items`` up to ``last`` (where the last message read should be; its
    history begins at ``lead``) end with the ``block``'s call ids in the order read, as
    ``FunctionAgent`` writes them (``additional_kwargs["tool_call_id"]``), looked at without
    reading the items. False says nothing more: the items are then read."""
    first = last - len(block) + 1
    if first <= lead or last >= len(items):
        return True  # no room for the reply and its results: ``Inputs.continued`` decides
    for message, item in zip(block, items[first:first + len(block)], strict=True):
        if not isinstance(message, ToolMessage) or _given_id(item) != message.tool_call_id:
            return False
    return True


def reordered_ids(block: list[Message], items: list[Any]) -> bool:
    """Whether the ``items`` give the call ids of the ``block``'s results (as ``FunctionAgent``
    writes them, looked at without reading the items) in another order: only then are they
    read to be put in it. Anything else is left to ``Inputs.continued``, which does not read
    the items before the last message read."""
    ids = [message.tool_call_id for message in block if isinstance(message, ToolMessage)]
    given = list(map(_given_id, items))
    return len(ids) == len(block) == len(given) and given != ids and sorted(
        given, key=str) == sorted(ids, key=str) and None not in given


def _given_id(item: Any) -> str | None:
    """An input item's ``additional_kwargs["tool_call_id"]`` when it is a string, else None
    (compared only once its type is known)."""
    kind = type(item)
    if kind is Llama.chat_message:
        extra = item.__dict__.get("additional_kwargs")
    elif kind is dict:
        extra = item.get("additional_kwargs")
    else:
        return None
    found = extra.get("tool_call_id") if type(extra) is dict else None
    return found if type(found) is str else None


def given_order(block: list[Message], given: list[Message]) -> list[int] | None:
    """Where each of the ``given`` messages (an input's, read) is in the ``block``, matched by
    call id, when they are results of the same calls in another order; else None."""
    places = {message.tool_call_id: k for k, message in enumerate(block)
              if isinstance(message, ToolMessage)}
    ids = [message.tool_call_id for message in given if isinstance(message, ToolMessage)]
    if (len(places) != len(block) or len(ids) != len(block) or set(ids) != places.keys()
            or None in places):
        return None
    order = [places[tool_id] for tool_id in ids]
    return None if order == list(range(len(block))) else order
