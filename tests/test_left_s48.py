"""Items left at an earlier stop, fixed: each test failed on the code before its fix."""

from __future__ import annotations

import pytest

from tracebridge import AIMessage, HumanMessage, ReasoningPart, TextPart, TraceError
from tracebridge.adapters import openai_chat


def test_chat_reasoning_key_refuses_a_part_id() -> None:
    """``reasoning_content`` holds text only: a part with an id is refused at ``.id``
    (before: written without it)."""
    marked = ReasoningPart(
        text="think", id="rs_1", metadata={"openai_chat": {"from": "reasoning_content"}}
    )
    messages = [HumanMessage(content="hi"), AIMessage(content=[marked, TextPart(text="ok")])]
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[0].id"
    )
    assert "has id 'rs_1'" in str(error)
    unmarked = marked.model_copy(update={"id": None})
    written = openai_chat.from_messages(
        [messages[0], AIMessage(content=[unmarked, TextPart(text="ok")])]
    )
    assert written[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "reasoning_content": "think",
    }
