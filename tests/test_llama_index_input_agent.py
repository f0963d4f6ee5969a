"""LlamaIndex event streams: an ``AgentInput`` names the agent it is for
(``current_agent_name``), and the ``AgentOutput`` that answers it is that agent's.

The input's name was not read: a stream whose output came from another agent than the one
its input went to (a handoff that did not happen, events of two runs mixed) passed without a
word. Now the output's agent must be the input's, else ``conflicting_fields`` at the output.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_llama_index_event_calls import FORMS, Form
from test_llama_index_stop_event import _golden

from tracebridge import TraceError
from tracebridge.adapters import llama_index

HANDOFF = _golden("multi_agent_handoff")


def _agents(events: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return [(e, event["event"], event["data"]["current_agent_name"])
            for e, event in enumerate(events) if event["event"] in ("AgentInput", "AgentOutput")]


def test_the_handoff_golden_hands_over_between_an_input_and_its_output() -> None:
    assert [(kind, agent) for _, kind, agent in _agents(HANDOFF)[:4]] == [
        ("AgentInput", "triage"), ("AgentOutput", "triage"),
        ("AgentInput", "math"), ("AgentOutput", "math")]
    names = [m.name for m in llama_index.events_to_messages(HANDOFF) if m.type == "ai"]
    assert names[:2] == ["triage", "math"]


@pytest.mark.parametrize("form", FORMS)
def test_an_output_of_another_agent_than_its_input_conflicts(form: Form) -> None:
    events = copy.deepcopy(HANDOFF)
    e = _agents(events)[2][0]  # the input handed over to math
    events[e]["data"]["current_agent_name"] = "triage"
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(form(events))
    output = _agents(events)[3][0]
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", output, f"events[{output}].data.current_agent_name")


@pytest.mark.parametrize("empty", ["", {}, set()])
def test_blocks_set_to_an_empty_non_list_are_malformed(empty: Any) -> None:
    # LlamaIndex refuses them; they were read as no content (a tool's result as empty)
    from llama_index.core.llms import ChatMessage

    message = ChatMessage(role="user", content="hi")
    message.__dict__["blocks"] = empty
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages([message])
    assert (caught.value.code, caught.value.path) == ("malformed_event", "messages[0].blocks")
