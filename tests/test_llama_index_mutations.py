"""Golden LlamaIndex traces with one field replaced by a value of another type.

Each replacement is refused with its code, the index of the event (or message) and the path
of the field, by ``events_to_messages`` and by ``to_messages`` alike: never a Python error
from inside the adapter, never a conversation read past it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from tracebridge import Message, TraceError
from tracebridge.adapters import llama_index

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"
TWO_TURNS = json.loads((GOLDEN / "function_agent_two_turns.json").read_text(encoding="utf-8"))
MEDIA = json.loads((GOLDEN / "developer_prompt_and_media.json").read_text(encoding="utf-8"))


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    mutated = copy.deepcopy(document)
    *head, last = path
    holder = mutated
    for step in head:
        holder = holder[step]
    holder[last] = value
    return mutated


def refusal(convert: Any, trace: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        convert(trace)
    return caught.value.code, caught.value.index, caught.value.path


def test_the_unmutated_goldens_read() -> None:
    messages = TypeAdapter(list[Message])
    expected_events = messages.validate_python(TWO_TURNS["expected_events"])
    assert llama_index.events_to_messages(TWO_TURNS["events"]) == expected_events
    assert len(expected_events) == 10
    expected = messages.validate_python(TWO_TURNS["expected"])
    assert llama_index.to_messages(TWO_TURNS["trace"]) == expected
    assert len(expected) == 9


@pytest.mark.parametrize(
    ("at", "value", "expected"),
    [
        # a role that is not a string, in the first input (all of it new) ...
        ((0, "data", "input", 1, "role"), [[]],
         ("unknown_role", 0, "events[0].data.input[1].role")),
        ((0, "data", "input", 0, "role"), {"a": {"b": None}},
         ("unknown_role", 0, "events[0].data.input[0].role")),
        # ... in the new user turn of a later input ...
        ((9, "data", "input", 6, "role"), ["user"],
         ("unknown_role", 9, "events[9].data.input[6].role")),
        # ... and in the last assistant message of an input, which then is no longer the
        # boundary of what is new: it is read, and refused
        ((9, "data", "input", 5, "role"), [None],
         ("unknown_role", 9, "events[9].data.input[5].role")),
        ((13, "data", "input", 0, "role"), [],
         ("unknown_role", 13, "events[13].data.input[0].role")),
        # an input item that is not a ChatMessage dict
        ((0, "data", "input", 1), ["x"], ("malformed_event", 0, "events[0].data.input[1]")),
        ((9, "data", "input", 6), 2.5, ("malformed_event", 9, "events[9].data.input[6]")),
        # the event's own fields
        ((0, "event"), ["AgentInput"], ("malformed_event", 0, "events[0]")),
        ((1, "event"), {"type": "x"}, ("malformed_event", 1, "events[1]")),
        ((0, "data"), [{}], ("malformed_event", 0, "events[0]")),
        ((0, "data", "input"), {"role": ["user"]}, ("malformed_event", 0, "events[0].data.input")),
        ((0, "data", "current_agent_name"), ["x"],
         ("malformed_event", 0, "events[0].data.current_agent_name")),
        ((1, "data", "response"), [], ("malformed_event", 1, "events[1].data.response")),
        ((1, "data", "response", "role"), {"role": ["user"]},
         ("unknown_role", 1, "events[1].data.response.role")),
        ((1, "data", "response", "blocks", 0, "block_type"), [[]],
         ("malformed_event", 1, "events[1].data.response.blocks[0]")),
        ((4, "data", "tool_id"), [None], ("malformed_event", 4, "events[4].data.tool_id")),
        ((4, "data", "tool_output", "blocks"), {},
         ("malformed_event", 4, "events[4].data.tool_output.blocks")),
        ((4, "data", "tool_output", "is_error"), "x",
         ("malformed_event", 4, "events[4].data.tool_output.is_error")),
        ((4, "data", "return_direct"), None,
         ("malformed_event", 4, "events[4].data.return_direct")),
        ((4, "data", "tool_output", "blocks", 0, "text"), [{}],
         ("malformed_event", 4, "events[4].data.tool_output.blocks[0].text")),
    ],
)
def test_a_mutated_event_stream_is_refused_where_it_is_wrong(
    at: tuple[Any, ...], value: Any, expected: tuple[str, int, str]
) -> None:
    mutated = replaced(TWO_TURNS["events"], at, value)
    assert refusal(llama_index.events_to_messages, mutated) == expected


@pytest.mark.parametrize(
    ("document", "at", "value", "expected"),
    [
        (TWO_TURNS, (0, "role"), [[]], ("unknown_role", 0, "messages[0].role")),
        (TWO_TURNS, (1, "role"), {"role": ["user"]}, ("unknown_role", 1, "messages[1].role")),
        (TWO_TURNS, (1,), ["x"], ("malformed_event", 1, "messages[1]")),
        (TWO_TURNS, (1, "blocks"), {"type": "x"}, ("malformed_event", 1, "messages[1].blocks")),
        (TWO_TURNS, (1, "blocks", 0), [{}], ("malformed_event", 1, "messages[1].blocks[0]")),
        (TWO_TURNS, (1, "blocks", 0, "block_type"), ["x"],
         ("malformed_event", 1, "messages[1].blocks[0]")),
        (TWO_TURNS, (0, "blocks", 0, "text"), 10**30,
         ("malformed_event", 0, "messages[0].blocks[0].text")),
        (TWO_TURNS, (0, "additional_kwargs"), [None],
         ("malformed_event", 0, "messages[0].additional_kwargs")),
        (TWO_TURNS, (2, "additional_kwargs", "tool_call_id"), [],
         ("malformed_event", 2, "messages[2].additional_kwargs.tool_call_id")),
        (MEDIA, (2, "role"), [[]], ("unknown_role", 2, "messages[2].role")),
        (MEDIA, (1, "blocks", 1, "url"), ["x"],
         ("malformed_event", 1, "messages[1].blocks[1].url")),
        (MEDIA, (1, "blocks", 1, "detail"), {},
         ("malformed_event", 1, "messages[1].blocks[1].detail")),
    ],
)
def test_a_mutated_chat_history_is_refused_where_it_is_wrong(
    document: dict[str, Any], at: tuple[Any, ...], value: Any, expected: tuple[str, int, str]
) -> None:
    mutated = replaced(document["trace"], at, value)
    assert refusal(llama_index.to_messages, mutated) == expected


@pytest.mark.parametrize(
    ("block", "expected_path"),
    [
        ({"block_type": "text", "text": "hi", "style": "bold"}, "messages[0].blocks[0].style"),
        ({"block_type": "image", "url": "https://example.com/a.png", "alt": "a"},
         "messages[0].blocks[0].alt"),
        ({"block_type": "audio", "audio": "UklGRg==", "format": "wav", "voice": "x"},
         "messages[0].blocks[0].voice"),
    ],
)
def test_a_block_key_llama_index_would_drop_is_refused(block: dict[str, Any],
                                                       expected_path: str) -> None:
    # LlamaIndex's own ChatMessage.model_validate drops such a key without a word.
    trace = [{"role": "user", "blocks": [block]}]
    assert refusal(llama_index.to_messages, trace) == ("malformed_event", 0, expected_path)
