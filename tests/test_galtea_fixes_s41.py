"""Galtea: one record read alike in every form, the current answer's context, the losses the
options accept, the AgentInput's own paths and the SDK's subclassed models.

1. A ``Trace`` object (or its dump) read its output envelope into the record
   (``actual_output_data``) and left the answer's ``metadata`` null, where the same record as
   the API's JSON put the envelope's other keys (a voice reply's audio part) on the answer; so
   ``drop=["trace_records"]`` took the audio away. Both read it onto the answer now.
2. An API ``actualOutput`` envelope whose ``assistant_message`` is not a string was
   ``malformed_event``; the SDK reads it as no text (``actual_output`` None), as the object
   and dump forms did: it is read so in every form.
3. ``split_current_turn(shape="history")`` refused (or dropped) the current answer's
   ``retrieval_context``, which the result has a place for whatever the shape.
4. A user message's ``metadata`` (a Trace's structured input) could not be written as pairs
   or split, whatever the options: ``drop=["turn_metadata"]`` accepts that loss now (and
   ``drop=["retrieval_context"]`` a user message's retrieval context there).
5. An ``AgentInput`` field's error path began with ``agent_input.``, a key the AgentInput
   does not have: it is the field's own key now (``context_data.opened``).
6. Subclasses of the SDK's models were refused as "not a dict"; a single ``Trace`` was
   described as a dict. Subclasses are read as the model they derive from, and one ``Trace``
   is refused by name, asking for ``[trace]``.
"""

from __future__ import annotations

import copy
import datetime
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, TextPart, TraceError
from tracebridge.adapters import galtea
from tracebridge.hashing import transcript_hash

sdk = pytest.importorskip("galtea")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_galtea_server import FakeGaltea, galtea_api  # noqa: E402

FILE_PART = {"type": "file", "uri": "gs://f/deed.pdf", "filename": "deed.pdf",
             "mimeType": "application/pdf"}
DEED = FilePart(url="gs://f/deed.pdf", filename="deed.pdf", mime_type="application/pdf")
AUDIO = {"type": "audio", "uri": "gs://v/reply.wav", "transcript": "It is 4411."}
VOICE = {"assistant_message": "It is 4411.", "content": [AUDIO]}
BOTH_EMPTY = ["input_files", "output_files"]


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    assert caught.value.source == "galtea"
    return caught.value.code, caught.value.index, caught.value.path, caught.value.detail


def _api_record(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "index": 0, "sessionId": "s1", "status": "GENERATED", **fields}


def _forms(record: dict[str, Any]) -> dict[str, Any]:
    """One record in every form a Galtea user holds it: the API's JSON, the SDK's object and
    its dumps (the camel one apart: its files spell ``mimeType``, which their parts record)."""
    trace = sdk.Trace(**copy.deepcopy(record))
    return {"api": [record], "object": [trace], "python": [trace.model_dump()],
            "json": [trace.model_dump(mode="json")]}


def _without_records(messages: list[Any]) -> list[Any]:
    """The messages without the record each was read from (kept as each form spells it)."""
    def strip(message: Any) -> Any:
        namespace = {k: v for k, v in message.metadata["galtea"].items() if k != "trace"}
        return message.model_copy(update={"metadata": {"galtea": namespace}})
    return [strip(message) for message in messages]


# --- 1. the output envelope of a Trace object reads as that of the API's JSON -------------------

@pytest.fixture(scope="module")
def api() -> Iterator[FakeGaltea]:
    with galtea_api() as fake:
        yield fake


def test_a_voice_answer_logged_by_the_sdk_keeps_its_audio_on_the_answer_in_every_form(
    api: FakeGaltea,
) -> None:
    client = sdk.Galtea(api_key="t", base_url=api.base_url,
                        suppress_updatable_version_message=True)
    session = api.add_session()
    client.traces.create(session_id=session, input="Which deed?", output=VOICE)
    objects = client.traces.list(session_id=session)
    client.shutdown()
    answer = AIMessage(content="It is 4411.", metadata={"galtea": {
        "retrieval_context": None, "metadata": {"content": [AUDIO]}, "empty_files": BOTH_EMPTY}})
    written = {"role": "assistant", "content": "It is 4411.", "retrieval_context": None,
               "metadata": {"content": [AUDIO]}, "input_files": [], "output_files": []}
    for records in (objects, json.loads(json.dumps(api.traces[session]))):
        messages = galtea.to_messages(records)
        assert messages[1] == answer
        assert "actual_output_data" not in messages[0].metadata["galtea"]["trace"]
        assert galtea.from_messages(messages, drop=["trace_records"])[1] == written


ENVELOPES = [
    "plain",
    "",
    VOICE,
    {"assistant_message": "yo"},
    {"assistant_message": "yo", "content": [FILE_PART]},
    {"assistant_message": "", "content": [FILE_PART]},
    {"assistant_message": None, "content": [FILE_PART]},
    {"assistant_message": 42, "content": [FILE_PART]},
    {"content": [FILE_PART]},
    {"assistant_message": "yo", "content": [{**FILE_PART, "size": 3}]},
    {"assistant_message": None, "voice": "alloy"},
    {"assistant_message": 42, "voice": "gs://v.wav"},
]


@pytest.mark.parametrize("question", ["q", {"user_message": "q", "chat_type": "support"},
                                      {"user_message": "q", "content": [FILE_PART]}],
                         ids=["text", "object", "files"])
@pytest.mark.parametrize("output", ENVELOPES, ids=range(len(ENVELOPES)))
def test_every_form_of_a_record_reads_as_the_same_messages(question: Any, output: Any) -> None:
    forms = _forms(_api_record(input=question, actualOutput=output))
    read = {name: galtea.to_messages(records) for name, records in forms.items()}
    expected = _without_records(read["api"])
    for name, messages in read.items():
        assert _without_records(messages) == expected, name
        assert galtea.from_messages(messages, drop=["trace_records"]) == galtea.from_messages(
            read["api"], drop=["trace_records"]), name
    camel = galtea.to_messages([forms["object"][0].model_dump(mode="json", by_alias=True)])
    assert transcript_hash(camel) == transcript_hash(read["api"])
    assert [m.metadata["galtea"]["metadata"] for m in camel] == [
        m.metadata["galtea"]["metadata"] for m in read["api"]]


def test_a_dumps_envelope_of_text_and_files_is_the_answers_not_the_records() -> None:
    [dump] = _forms(_api_record(input="q", actualOutput={"assistant_message": "yo",
                                                         "content": [FILE_PART]}))["json"]
    question, answer = galtea.to_messages([dump])
    assert answer == AIMessage(content=[TextPart(text="yo"), DEED],
                               metadata={"galtea": {"retrieval_context": None, "metadata": {},
                                                    "empty_files": ["input_files"]}})
    assert "actual_output_data" not in question.metadata["galtea"]["trace"]


def test_a_dumps_envelope_that_gave_no_answer_stays_with_the_record() -> None:
    envelope = {"assistant_message": None, "voice": "alloy"}
    [dump] = _forms(_api_record(input="q", actualOutput=envelope))["json"]
    [question] = galtea.to_messages([dump])
    assert question.metadata["galtea"]["trace"]["actual_output_data"] == envelope
    [plain] = _forms(_api_record(input="q", actualOutput="a"))["json"]
    assert galtea.to_messages([plain])[0].metadata["galtea"]["trace"][
        "actual_output_data"] is None


def test_a_value_that_is_not_json_in_a_dumps_envelope_is_refused_where_it_is() -> None:
    when = datetime.date(2026, 1, 1)
    trace = sdk.Trace(id="t1", index=0, session_id="s1", input="q",
                      actual_output={"assistant_message": "a", "at": when})
    assert _refused(galtea.to_messages, [trace])[:3] == (
        "unserializable_value", 0, "traces[0].actual_output_data.at")


# --- 2. a non-text assistant_message is no text, in the API's JSON too -------------------------

def test_an_api_envelope_whose_assistant_message_is_not_text_has_no_answer() -> None:
    envelope = {"assistant_message": 42, "voice": "gs://v.wav"}
    record = _api_record(input="How long is the call?", actualOutput=envelope)
    assert sdk.Trace(**copy.deepcopy(record)).actual_output is None
    assert galtea.to_messages([record]) == [HumanMessage(
        content="How long is the call?",
        metadata={"galtea": {"retrieval_context": None, "metadata": None,
                             "empty_files": BOTH_EMPTY,
                             "trace": {"id": "t1", "index": 0, "sessionId": "s1",
                                       "status": "GENERATED", "actualOutput": envelope}}})]


def test_an_api_envelope_whose_assistant_message_is_not_text_keeps_it_beside_files() -> None:
    envelope = {"assistant_message": 42, "content": [FILE_PART]}
    [_, answer] = galtea.to_messages([_api_record(input="q", actualOutput=envelope)])
    assert answer == AIMessage(content=[DEED], metadata={"galtea": {
        "retrieval_context": None, "metadata": envelope, "empty_files": ["input_files"]}})


# --- 3. the current answer's retrieval context, whatever the shape -----------------------------

CONTEXT = "Deed 4411: Marta Ruiz"


def _with_context(*prior: dict[str, Any]) -> list[Any]:
    return galtea.to_messages([
        *prior,
        {"role": "user", "content": "Who holds deed 4411?"},
        {"role": "assistant", "content": "Marta Ruiz.", "retrieval_context": CONTEXT},
    ])


@pytest.mark.parametrize("shape", ["history", "roles", "pairs"])
def test_split_gives_the_current_answers_retrieval_context_in_every_shape(shape: str) -> None:
    omitted: list[galtea.Omission] = []
    split = galtea.split_current_turn(_with_context(), shape=shape, omitted=omitted)
    assert (split, split.retrieval_context) == (
        ([], "Who holds deed 4411?", "Marta Ruiz."), CONTEXT)
    assert omitted == []


def test_split_in_history_keeps_the_current_context_when_the_prior_ones_are_dropped() -> None:
    messages = _with_context({"role": "user", "content": "Hi"},
                             {"role": "assistant", "content": "Hello.", "retrieval_context": "c0"})
    assert _refused(galtea.split_current_turn, messages, shape="history")[:3] == (
        "not_representable", 1, "messages[1].metadata.galtea.retrieval_context")
    omitted: list[galtea.Omission] = []
    split = galtea.split_current_turn(messages, shape="history", drop=["retrieval_context"],
                                      omitted=omitted)
    assert (split, split.retrieval_context) == (
        ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}],
         "Who holds deed 4411?", "Marta Ruiz."), CONTEXT)
    assert omitted == [galtea.Omission(1, "retrieval_context", "drop=retrieval_context",
                                       "retrieval_context 'c0'")]


def test_history_turns_still_hold_no_retrieval_context() -> None:
    assert _refused(galtea.from_messages, _with_context(), shape="history")[:3] == (
        "not_representable", 1, "messages[1].metadata.galtea.retrieval_context")


# --- 4. a user message's metadata in pairs and in the current exchange -------------------------

def _structured() -> list[Any]:
    trace = sdk.Trace(id="t1", index=0, session_id="s1",
                      input={"user_message": "Who holds deed 4411?", "chat_type": "support"},
                      actual_output="Marta Ruiz.")
    return galtea.to_messages([trace])


TURN_METADATA = galtea.Omission(0, "turn_metadata", "drop=turn_metadata",
                                "turn fields {'metadata': {'chat_type': 'support'}}")
IN_A_PAIR = ("the user message's metadata and other keys: a pair keeps retrieval_context and "
             "extra keys on its answer only (shape='roles' keeps them on the user turn); "
             "drop=['turn_metadata'] leaves it out (recorded in omitted)")


def test_pairs_leave_out_a_user_messages_metadata_with_drop_turn_metadata() -> None:
    messages = _structured()
    assert _refused(galtea.from_messages, messages, shape="pairs", drop=["trace_records"]) == (
        "not_representable", 0, "messages[0].metadata.galtea", IN_A_PAIR)
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, shape="pairs", drop=["trace_records", "turn_metadata"],
                                omitted=omitted) == [
        {"input": "Who holds deed 4411?", "actual_output": "Marta Ruiz.",
         "retrieval_context": None}]
    assert [o.what for o in omitted] == ["trace_record", "turn_metadata"]
    assert omitted[1] == TURN_METADATA


@pytest.mark.parametrize("shape", ["pairs", "roles"])
def test_split_leaves_out_the_current_questions_metadata_with_drop_turn_metadata(
    shape: str,
) -> None:
    messages = _structured()
    detail = IN_A_PAIR if shape == "pairs" else (
        "the current exchange carries Galtea fields ['metadata']: the evaluation-task call "
        "(input, actual_output, retrieval_context) had no place for them; "
        "drop=['turn_metadata'] leaves it out (recorded in omitted)")
    assert _refused(galtea.split_current_turn, messages, shape=shape,
                    drop=["trace_records"]) == (
        "not_representable", 0, "messages[0].metadata.galtea", detail)
    omitted: list[galtea.Omission] = []
    split = galtea.split_current_turn(messages, shape=shape,
                                      drop=["trace_records", "turn_metadata"], omitted=omitted)
    assert (split, split.retrieval_context) == (([], "Who holds deed 4411?", "Marta Ruiz."), None)
    assert omitted[1:] == [TURN_METADATA]


def test_split_leaves_out_the_current_answers_extra_keys_with_drop_turn_metadata() -> None:
    messages = galtea.to_messages([{"input": "q", "actual_output": "a", "latency": 3}])
    assert _refused(galtea.split_current_turn, messages) == (
        "not_representable", 1, "messages[1].metadata.galtea",
        "the current exchange carries Galtea fields ['latency']: the evaluation-task call "
        "(input, actual_output, retrieval_context) had no place for them; "
        "drop=['turn_metadata'] leaves it out (recorded in omitted)")
    omitted: list[galtea.Omission] = []
    assert galtea.split_current_turn(messages, drop=["turn_metadata"], omitted=omitted) == (
        [], "q", "a")
    assert omitted == [galtea.Omission(1, "turn_metadata", "drop=turn_metadata",
                                       "turn fields {'latency': 3}")]


def test_a_user_messages_retrieval_context_is_left_out_of_pairs_by_drop_retrieval_context(
) -> None:
    messages = galtea.to_messages([{"role": "user", "content": "q", "retrieval_context": "doc"},
                                   {"role": "assistant", "content": "a"}])
    assert _refused(galtea.from_messages, messages, shape="pairs") == (
        "not_representable", 0, "messages[0].metadata.galtea",
        "a user message's retrieval_context: a pair keeps retrieval_context and extra keys on "
        "its answer only (shape='roles' keeps them on the user turn); "
        "drop=['retrieval_context'] leaves it out (recorded in omitted)")
    dropped = galtea.Omission(0, "retrieval_context", "drop=retrieval_context",
                              "retrieval_context 'doc'")
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, shape="pairs", drop=["retrieval_context"],
                                omitted=omitted) == [{"input": "q", "actual_output": "a"}]
    assert omitted == [dropped]
    omitted = []
    assert galtea.split_current_turn(messages, shape="roles", drop=["retrieval_context"],
                                     omitted=omitted) == ([], "q", "a")
    assert omitted == [dropped]


def test_files_on_the_current_exchange_are_still_refused() -> None:
    messages = galtea.to_messages([
        sdk.ConversationMessage(role="user", content="Summarise this.",
                                input_files=[sdk.AttachedFile(uri="gs://f/deed.pdf")]),
        sdk.ConversationMessage(role="assistant", content="A deed."),
    ])
    assert _refused(galtea.split_current_turn, messages, shape="roles",
                    drop=["turn_metadata", "retrieval_context"]) == (
        "not_representable", 0, "messages[0].metadata.galtea",
        "the current exchange carries Galtea fields ['input_files'] that the evaluation-task "
        "call (input, actual_output, retrieval_context) had no place for")


# --- 5. an AgentInput's fields are reported at their own keys ----------------------------------

def _agent_input() -> Any:
    return sdk.AgentInput(messages=[sdk.ConversationMessage(role="user", content="q")],
                          session_id="s1", context_data={"opened": datetime.date(2026, 1, 1)})


def test_an_agent_input_fields_error_is_at_its_own_key() -> None:
    agent_input = _agent_input()
    assert _refused(galtea.to_messages, agent_input)[:3] == (
        "unserializable_value", None, "context_data.opened")
    camel = agent_input.model_dump(by_alias=True)
    assert _refused(galtea.to_messages, camel)[:3] == (
        "unserializable_value", None, "contextData.opened")


def test_an_agent_input_dict_with_a_key_that_is_not_text_is_refused_at_the_agent_input() -> None:
    agent_input = {"messages": [{"role": "user", "content": "q"}], "session_id": "s1", 5: "x"}
    assert _refused(galtea.to_messages, agent_input) == (
        "unserializable_value", None, None, "object keys must be strings, got int 5")


# --- 6. subclasses of the SDK's models, and one Trace given alone ------------------------------

class SupportMessage(sdk.ConversationMessage):  # type: ignore[misc,name-defined]
    """An application's own turn type."""


class StoredTurn(sdk.Trace):  # type: ignore[misc,name-defined]
    """An application's own record type."""


class CallInput(sdk.AgentInput):  # type: ignore[misc,name-defined]
    """An application's own agent input type."""


def test_subclasses_of_the_sdks_models_read_as_the_models_they_derive_from() -> None:
    turns = [SupportMessage(role="user", content="hi", metadata={"k": 1}),
             SupportMessage(role="assistant", content="hello")]
    base = [sdk.ConversationMessage(**turn.model_dump()) for turn in turns]
    assert galtea.detect(turns) is True
    assert galtea.to_messages(turns) == galtea.to_messages(base)
    record = {"id": "t1", "index": 0, "session_id": "s", "input": "hi", "actual_output": "ok"}
    assert galtea.detect([StoredTurn(**record)]) is True
    assert galtea.to_messages([StoredTurn(**record)]) == galtea.to_messages(
        [sdk.Trace(**record)])
    agent_input = CallInput(messages=base, session_id="s1")
    assert galtea.detect(agent_input) is True
    assert galtea.to_messages(agent_input) == galtea.to_messages(
        sdk.AgentInput(messages=base, session_id="s1"))


def test_a_single_trace_is_refused_by_its_name_asking_for_a_list() -> None:
    trace = sdk.Trace(id="t1", index=0, session_id="s", input="hi")
    code, index, path, detail = _refused(galtea.to_messages, trace)
    assert (code, index, path) == ("malformed_event", None, "conversation_turns")
    assert detail.startswith("expected a list of conversation turns or Trace records, or an "
                             "AgentInput; got Trace {")
    assert detail.endswith("; a single Trace (what traces.get returns) is read in a list: "
                           "pass [trace]")
    assert galtea.to_messages([trace]) == galtea.to_messages([trace.model_dump()])
    code, index, path, detail = _refused(galtea.to_messages, StoredTurn(**trace.model_dump()))
    assert detail.startswith("expected a list of conversation turns or Trace records, or an "
                             "AgentInput; got StoredTurn {")
    assert detail.endswith("pass [trace]")
    code, index, path, detail = _refused(galtea.to_messages, trace.model_dump(mode="json"))
    assert (code, index, path) == ("malformed_event", None, "conversation_turns")
    assert detail.endswith("; a single record (what traces.get returns) is read in a list: "
                           "pass [record]")
