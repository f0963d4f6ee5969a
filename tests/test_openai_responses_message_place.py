"""Responses items: an assistant message keeps its place among the items of its reply.

A reply's items other than its text (reasoning, MCP tool listings and approval requests)
are parts of the typed reply, in order. A message whose content is a string was read with
its text after every item of the reply, also those that came after it; and a message with
no text (an empty part list, with an id) was written back at the end. Either way the items
were written back in another order, without an error (and some such traces were refused by
their own writer). Now the text stands where the message stood, and a message without text
keeps its place.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, OpaquePart, TextPart
from tracebridge.adapters import openai_responses

USER = {"role": "user", "content": "Delete the repo?"}
REQUEST = {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "gh",
           "name": "delete_repo", "arguments": "{}"}
LISTING = {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "gh", "tools": []}
SAID = {"role": "assistant", "content": "I will ask for approval first."}
EMPTY = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": []}


def _round_trip(items: list[Any]) -> list[Any]:
    return openai_responses.from_messages(openai_responses.to_messages(items))


@pytest.mark.parametrize("after", [REQUEST, LISTING])
def test_a_text_message_stays_before_the_items_after_it(after: dict[str, Any]) -> None:
    reply = openai_responses.to_messages([USER, SAID, after])[-1]
    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, list)
    assert [type(part) for part in reply.content] == [TextPart, OpaquePart]
    assert reply.content[0] == TextPart(text="I will ask for approval first.")
    assert _round_trip([USER, SAID, after]) == [USER, SAID, after]


def test_a_text_message_between_two_items_stays_between_them() -> None:
    items = [USER, LISTING, SAID, REQUEST]
    reply = openai_responses.to_messages(items)[-1]
    assert isinstance(reply.content, list)
    assert [type(part) for part in reply.content] == [OpaquePart, TextPart, OpaquePart]
    assert _round_trip(items) == items


@pytest.mark.parametrize("items", [
    [USER, EMPTY, REQUEST],
    [USER, LISTING, EMPTY, REQUEST],
    [USER, REQUEST, EMPTY],
])
def test_a_message_without_text_keeps_its_place(items: list[Any]) -> None:
    assert _round_trip(items) == items
