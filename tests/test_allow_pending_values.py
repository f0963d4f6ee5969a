"""``allow_pending`` is True or False: any other value (the text "false", 1, None) is a
``ValueError``, from every reader and from the rules themselves. Before, it was taken for its
truth: ``allow_pending="false"`` let calls go unanswered."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tracebridge import HumanMessage, check, validate
from tracebridge.registry import get_adapter

HELLO: dict[str, Any] = {
    "openai_chat": [{"role": "user", "content": "hi"}],
    "swarm": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello",
                                                  "sender": "Agent"}],
    "galtea": [{"role": "user", "content": "hi"}],
    "openai_responses": [{"role": "user", "content": "hi"}],
    "openai_agents": [{"role": "user", "content": "hi"}],
    "llama_index": [{"role": "user", "blocks": [{"block_type": "text", "text": "hi"}]}],
    "langchain": [{"type": "human", "content": "hi"}],
}
ODD = ["false", "no", 1, 0, None]
MESSAGE = r"^allow_pending must be True or False, got "


@pytest.mark.parametrize("value", ODD)
@pytest.mark.parametrize("name", sorted(HELLO))
def test_a_reader_refuses_an_allow_pending_that_is_not_a_bool(name: str, value: Any) -> None:
    adapter = get_adapter(name)
    assert len(adapter.to_messages(HELLO[name], allow_pending=False)) >= 1
    with pytest.raises(ValueError, match=MESSAGE + re.escape(repr(value)) + "$"):
        adapter.to_messages(HELLO[name], allow_pending=value)


@pytest.mark.parametrize("value", ODD)
def test_the_rules_refuse_an_allow_pending_that_is_not_a_bool(value: Any) -> None:
    messages = [HumanMessage(content="hi")]
    with pytest.raises(ValueError, match=MESSAGE):
        validate(messages, allow_pending=value)
    with pytest.raises(ValueError, match=MESSAGE):
        check(messages, allow_pending=value)
    assert validate(messages, allow_pending=True) is None
    assert check(messages, allow_pending=True) == []
