"""The Galtea adapter against the real Galtea SDK, offline (a fake API on 127.0.0.1).

What ``from_messages`` writes is what the SDK's calls send, unchanged, and is valid for the
SDK's own models; what the SDK hands agents and what ``traces.list`` returns, read live.
"""

# No ``from __future__ import annotations``: the SDK picks an agent function's input with
# ``annotation is str`` / ``is AgentInput``, which a postponed (string) annotation never is.

from collections.abc import Iterator
from typing import Any

import galtea as sdk
import pytest
from fake_galtea_server import FakeGaltea, serve
from hypothesis import given, settings

from tracebridge import (
    AIMessage,
    FilePart,
    HumanMessage,
    Message,
    TextPart,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters import galtea

from law_kits.galtea import role_conversations


@pytest.fixture(scope="module")
def api() -> Iterator[FakeGaltea]:
    yield from serve()


@pytest.fixture(scope="module")
def client(api: FakeGaltea) -> Iterator[sdk.Galtea]:
    client = sdk.Galtea(api_key="test", base_url=api.base_url,
                        suppress_updatable_version_message=True)
    yield client
    client.shutdown()


DEED = [
    HumanMessage(content=[TextPart(text="Who holds this deed?"),
                          FilePart(url="gs://f/deed.pdf", filename="deed.pdf",
                                   mime_type="application/pdf")],
                 metadata={"galtea": {"metadata": {"chat_type": "support"},
                                      "retrieval_context": "asked from the deeds page"}}),
    AIMessage(content="Marta Ruiz.", metadata={"galtea": {"retrieval_context": "Deed 4411."}}),
]


def batch_sent(client: sdk.Galtea, api: FakeGaltea, turns: list[dict[str, Any]]) -> Any:
    client.traces.create_batch(session_id=api.add_session(), conversation_turns=turns)
    return api.bodies("POST", "inferenceResults/batch")[-1]["conversationTurns"]


def test_create_batch_sends_our_turns_as_we_wrote_them(client: sdk.Galtea,
                                                       api: FakeGaltea) -> None:
    turns = galtea.from_messages(DEED)
    assert turns == [
        {"role": "user", "content": "Who holds this deed?",
         "retrieval_context": "asked from the deeds page", "metadata": {"chat_type": "support"},
         "input_files": [{"uri": "gs://f/deed.pdf", "filename": "deed.pdf",
                          "mime_type": "application/pdf", "type": "file"}]},
        {"role": "assistant", "content": "Marta Ruiz.", "retrieval_context": "Deed 4411."},
    ]
    assert batch_sent(client, api, turns) == turns


@settings(max_examples=25)
@given(messages=role_conversations)
def test_any_role_conversation_is_valid_for_the_sdk_and_sent_unchanged(
    client: sdk.Galtea, api: FakeGaltea, messages: list[Message]
) -> None:
    turns = galtea.from_messages(messages)
    for turn in turns:
        sdk.ConversationMessage.model_validate(turn)  # the SDK's own turn model takes it
    assert batch_sent(client, api, turns) == turns


def test_the_sdks_turn_model_reads_our_files_as_attached_files() -> None:
    turn = galtea.from_messages(DEED)[0]
    message = sdk.ConversationMessage.model_validate(turn)
    assert message.input_files == [sdk.AttachedFile(uri="gs://f/deed.pdf", filename="deed.pdf",
                                                    mime_type="application/pdf")]
    assert galtea.to_messages([message]) == galtea.to_messages([message.model_dump()])
    assert transcript_hash(galtea.to_messages([message])) == transcript_hash(DEED[:1])


def test_conversation_history_for_test_cases_create_is_text_only_and_sent_as_written(
    client: sdk.Galtea, api: FakeGaltea
) -> None:
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(DEED, shape="history")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[1]")
    omitted: list[galtea.Omission] = []
    turns = galtea.from_messages(DEED, shape="history", drop_non_text=True,
                                 drop=["retrieval_context", "turn_metadata"], omitted=omitted)
    assert turns == [{"role": "user", "content": "Who holds this deed?"},
                     {"role": "assistant", "content": "Marta Ruiz."}]
    assert [(o.index, o.what) for o in omitted] == [
        (0, "non_text_part"), (0, "retrieval_context"), (0, "turn_metadata"),
        (1, "retrieval_context")]
    client.test_cases.create(dataset_id="dataset_1", conversation_history=turns)
    assert api.bodies("POST", "testCases")[-1]["conversationHistory"] == turns


RECEIVED: dict[str, Any] = {}


def agent_input_agent(input_data: sdk.AgentInput) -> sdk.AgentResponse:
    RECEIVED["agent_input"] = input_data
    return sdk.AgentResponse(content="Yes.", retrieval_context="Registry 4411.")


def str_agent(user_message: str) -> str:
    RECEIVED["str"] = user_message
    return "Yes."


def test_an_agent_input_agent_gets_objects_we_read_directly(client: sdk.Galtea,
                                                            api: FakeGaltea) -> None:
    session = client.sessions.get(api.add_session())
    client.traces.create_batch(session_id=session.id,
                               conversation_turns=galtea.from_messages(DEED))
    client.traces.generate(agent=agent_input_agent, session=session, input="Registered?")
    received: sdk.AgentInput = RECEIVED["agent_input"]
    messages = galtea.to_messages(received)
    assert [m.text for m in messages] == ["Who holds this deed?", "Marta Ruiz.", "Registered?"]
    assert messages[-1].metadata["galtea"]["agent_input"] == {
        "session_id": session.id, "context_data": None, "metadata": None,
        "trace_id": received.trace_id}
    alone = galtea.to_messages(received.messages)  # the ConversationMessage objects
    assert alone[:-1] == messages[:-1]
    assert "agent_input" not in alone[-1].metadata["galtea"]


def test_traces_list_objects_read_with_the_pending_turn(client: sdk.Galtea,
                                                        api: FakeGaltea) -> None:
    session = api.add_session()
    client.traces.create(session_id=session, input="Hi", output="Hello")
    client.traces.create(session_id=session, input="Still there?", status="PENDING")
    traces = client.traces.list(session_id=session)
    messages = galtea.to_messages(traces)
    assert [(m.type, m.text) for m in messages] == [
        ("human", "Hi"), ("ai", "Hello"), ("human", "Still there?")]
    assert messages[2].metadata["galtea"]["trace"]["status"] == "PENDING"


POSTPONED = '''
from __future__ import annotations

def str_agent(user_message: str) -> str:
    RECEIVED["postponed"] = user_message
    return "Yes."
'''


def test_a_str_agent_under_postponed_annotations_gets_the_history_list(
    client: sdk.Galtea, api: FakeGaltea
) -> None:
    # The SDK tests the annotation with `is str`; under `from __future__ import annotations`
    # it is the string 'str', so the agent silently receives the list[dict] history instead.
    scope: dict[str, Any] = {"RECEIVED": RECEIVED}
    exec(compile(POSTPONED, "agent_module", "exec"), scope)
    for agent in (str_agent, scope["str_agent"]):
        client.traces.generate(agent=agent, session=client.sessions.get(api.add_session()),
                               input="Registered?")
    assert RECEIVED["str"] == "Registered?"
    assert RECEIVED["postponed"] == [{"role": "user", "content": "Registered?"}]
    assert galtea.to_messages(RECEIVED["postponed"]) == [HumanMessage(content="Registered?")]
