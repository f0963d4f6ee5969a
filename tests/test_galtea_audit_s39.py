"""Galtea: what the fifth audit found (``/tmp/audit_galtea_5``), now read, written or refused.

1. ``split_current_turn`` in roles (and ``shape=None``) refused the current exchange of a
   conversation read from the SDK's objects (a null ``retrieval_context`` / ``metadata``, empty
   file lists) and an answer spelling ``retrievalContext``: they say nothing, as in pairs.
2. ``join_consecutive`` refused two messages read from the SDK's objects in every shape:
   nulls, empty file lists and spellings counted as Galtea fields both carried.
3. A ``Trace``'s ``actualOutput`` envelope of text and files read as the plain text with
   ``actualOutputFiles``: the envelope was kept nowhere. It reads as ``{}`` now, as an envelope
   of its text alone does.
4. A ``str`` enum at the top of a record or an ``AgentInput`` (``input``, ``error``,
   ``session_id``, an added key, ...) was read as its value; only ``status`` is (the
   ``TraceStatus`` of a python-mode dump): anything else is refused where it is.
5. The writer took ``empty_files`` / ``aliases`` (and a file's ``absent``) in any order, and the
   turn read back gave them in its own: now ``malformed_event`` where they are.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest

from tracebridge import AIMessage, FilePart, HumanMessage, TextPart, TraceError
from tracebridge.adapters import galtea
from tracebridge.hashing import transcript_hash

pytest.importorskip("galtea")
from galtea.domain.models.trace import Trace
from galtea.utils.agent import ConversationMessage

SDK_NULLS = {"retrieval_context": None, "metadata": None, "input_files": [], "output_files": []}
FILE_PART = {"type": "file", "uri": "gs://b/o.pdf", "filename": "o.pdf",
             "mimeType": "application/pdf"}
FILE = {"uri": "gs://b/o.pdf", "filename": "o.pdf", "mime_type": "application/pdf",
        "type": "file"}
SUMMARY = FilePart(url="gs://b/o.pdf", filename="o.pdf", mime_type="application/pdf")


def _where(
    call: Any, *args: Any, **kwargs: Any
) -> tuple[str, int | None, str | None, str]:
    """The ``(code, index, path, detail)`` of the Galtea TraceError ``call`` raises."""
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    assert caught.value.source == "galtea"
    return caught.value.code, caught.value.index, caught.value.path, caught.value.detail


# --- 1. split_current_turn in roles: nulls, empty file lists and spellings say nothing --------

def _conversation_messages() -> list[Any]:
    return galtea.to_messages([
        ConversationMessage(role="user", content="q1"),
        ConversationMessage(role="assistant", content="a1"),
        ConversationMessage(role="user", content="q2"),
        ConversationMessage(role="assistant", content="a2", retrieval_context="doc"),
    ])


@pytest.mark.parametrize("shape", ["roles", None])
def test_split_in_roles_takes_a_conversation_of_sdk_conversation_messages(
    shape: str | None,
) -> None:
    split = galtea.split_current_turn(_conversation_messages(), shape=shape)
    assert split == ([{"role": "user", "content": "q1", **SDK_NULLS},
                      {"role": "assistant", "content": "a1", **SDK_NULLS}], "q2", "a2")
    assert split.retrieval_context == "doc"
    everything: list[galtea.Omission] = []
    dropping = galtea.split_current_turn(
        _conversation_messages(), shape=shape, drop=list(galtea.DROPPABLE), skip_system=True,
        fold_tools=True, drop_non_text=True, drop_names=True, omitted=everything)
    assert dropping == split
    assert dropping.retrieval_context == "doc"
    assert everything == []


def test_split_in_roles_takes_a_conversation_of_sdk_trace_records() -> None:
    records = [Trace(id="t1", index=0, session_id="s", input="q1", actual_output="a1"),
               Trace(id="t2", index=1, session_id="s", input="q2", actual_output="a2")]
    messages = galtea.to_messages(records)
    split = galtea.split_current_turn(messages, shape="roles", drop=["trace_records"])
    assert split == ([{"role": "user", "content": "q1", **SDK_NULLS},
                      {"role": "assistant", "content": "a1", **SDK_NULLS}], "q2", "a2")
    assert split.retrieval_context is None


def test_split_in_roles_reads_a_retrieval_context_spelled_in_camel_case() -> None:
    turns = [ConversationMessage(role="user", content="q").model_dump(by_alias=True),
             ConversationMessage(role="assistant", content="a",
                                 retrieval_context="doc").model_dump(by_alias=True)]
    assert turns[1] == {"role": "assistant", "content": "a", "retrievalContext": "doc",
                        "metadata": None, "inputFiles": [], "outputFiles": []}
    messages = galtea.to_messages(turns)
    for shape in ("roles", None, "pairs"):
        split = galtea.split_current_turn(messages, shape=shape)
        assert split == ([], "q", "a")
        assert split.retrieval_context == "doc"
    plain = galtea.to_messages([{"role": "user", "content": "q"},
                                {"role": "assistant", "content": "a", "retrievalContext": "doc"}])
    split = galtea.split_current_turn(plain, shape="roles")
    assert (split, split.retrieval_context) == (([], "q", "a"), "doc")


def _no_place(fields: list[str]) -> str:
    return (f"the current exchange carries Galtea fields {fields}: the evaluation-task call "
            "(input, actual_output, retrieval_context) had no place for them; "
            "drop=['turn_metadata'] leaves it out (recorded in omitted)")


def _not_the_questions(fields: list[str]) -> str:
    return (f"the current exchange carries Galtea fields {fields}: the call's retrieval_context "
            "is the answer's, not the question's; drop=['retrieval_context'] leaves it out "
            "(recorded in omitted)")


def test_split_in_roles_still_refuses_what_the_current_exchange_says_besides() -> None:
    messages = galtea.to_messages([
        ConversationMessage(role="user", content="q"),
        ConversationMessage(role="assistant", content="a", metadata={"k": 1}),
    ])
    assert _where(galtea.split_current_turn, messages, shape="roles") == (
        "not_representable", 1, "messages[1].metadata.galtea", _no_place(["metadata"]))
    empty = galtea.to_messages([
        ConversationMessage(role="user", content="q", metadata={}),
        ConversationMessage(role="assistant", content="a"),
    ])  # {} is not null
    assert _where(galtea.split_current_turn, empty, shape="roles") == (
        "not_representable", 0, "messages[0].metadata.galtea", _no_place(["metadata"]))
    camel = galtea.to_messages([{"role": "user", "content": "q", "retrievalContext": "r"},
                                {"role": "assistant", "content": "a"}])
    # (the question has no retrieval context of its own: the call's is the answer's)
    assert _where(galtea.split_current_turn, camel, shape="roles") == (
        "not_representable", 0, "messages[0].metadata.galtea",
        _not_the_questions(["retrievalContext"]))


# --- 2. join_consecutive: nulls, empty file lists and spellings do not block a join ----------

JOINED = [  # "hi" and "are you there?" joined, answered "yes", in each shape
    ("pairs", [{"input": "hi\nare you there?", "actual_output": "yes",
                "retrieval_context": None}]),
    ("history", [{"role": "user", "content": "hi\nare you there?"},
                 {"role": "assistant", "content": "yes"}]),
    ("roles", [{"role": "user", "content": "hi\nare you there?", **SDK_NULLS},
               {"role": "assistant", "content": "yes", **SDK_NULLS}]),
]


def _failed_then_answered() -> list[Any]:
    return galtea.to_messages([
        Trace(id="t1", index=0, session_id="s", input="hi", status="FAILED", error="timeout"),
        Trace(id="t2", index=1, session_id="s", input="are you there?", actual_output="yes"),
    ])


@pytest.mark.parametrize(("shape", "expected"), JOINED)
def test_a_failed_trace_joins_the_next_one(shape: str, expected: list[dict[str, Any]]) -> None:
    omitted: list[galtea.Omission] = []
    turns = galtea.from_messages(_failed_then_answered(), shape=shape, join_consecutive="\n",
                                 drop=["trace_records"], omitted=omitted)
    assert turns == expected
    assert [(o.index, o.what, o.option) for o in omitted] == [
        (0, "trace_record", "drop=trace_records"), (1, "trace_record", "drop=trace_records"),
        (1, "joined", "join_consecutive")]


@pytest.mark.parametrize(("shape", "expected"), JOINED)
def test_two_sdk_user_messages_in_a_row_join(shape: str, expected: list[dict[str, Any]]) -> None:
    messages = galtea.to_messages([
        ConversationMessage(role="user", content="hi"),
        ConversationMessage(role="user", content="are you there?"),
        ConversationMessage(role="assistant", content="yes"),
    ])
    omitted: list[galtea.Omission] = []
    assert galtea.from_messages(messages, shape=shape, join_consecutive="\n",
                                omitted=omitted) == expected
    assert [(o.index, o.what) for o in omitted] == [(1, "joined")]
    plain = galtea.to_messages([{"role": "user", "content": "hi"},
                                {"role": "user", "content": "are you there?"},
                                {"role": "assistant", "content": "yes"}])
    assert transcript_hash(messages) == transcript_hash(plain)


def test_a_join_takes_the_fields_of_the_message_that_says_something() -> None:
    says = ConversationMessage(role="user", content="more", metadata={"k": 1})
    nothing = ConversationMessage(role="user", content="hi")
    answer = ConversationMessage(role="assistant", content="yes")
    for first, second, text in ((nothing, says, "hi\nmore"), (says, nothing, "more\nhi")):
        messages = galtea.to_messages([first, second, answer])
        assert galtea.from_messages(messages, join_consecutive="\n")[0] == {
            "role": "user", "content": text, **SDK_NULLS, "metadata": {"k": 1}}


def test_a_spelling_says_nothing_in_a_join() -> None:
    # one message read from an SDK object, the other from its camel-case dump: neither says
    # anything, so the join keeps the first one's fields, in its spelling
    snake = ConversationMessage(role="user", content="hi")
    camel = ConversationMessage(role="user", content="are you there?").model_dump(by_alias=True)
    answer = ConversationMessage(role="assistant", content="yes")
    assert galtea.from_messages(galtea.to_messages([snake, camel, answer]),
                                join_consecutive="\n")[0] == {
        "role": "user", "content": "hi\nare you there?", **SDK_NULLS}
    camel = ConversationMessage(role="user", content="hi").model_dump(by_alias=True)
    snake = ConversationMessage(role="user", content="are you there?")
    assert galtea.from_messages(galtea.to_messages([camel, snake, answer]),
                                join_consecutive="\n")[0] == {
        "role": "user", "content": "hi\nare you there?", "retrievalContext": None,
        "metadata": None, "inputFiles": [], "outputFiles": []}

def test_a_join_merges_two_messages_that_say_the_same_in_roles() -> None:
    same = ConversationMessage(role="user", content="hi", metadata={"k": 1})
    messages = galtea.to_messages([same, same, ConversationMessage(role="assistant",
                                                                   content="yes")])
    turns = galtea.from_messages(messages, join_consecutive="\n")
    assert turns[0] == {"role": "user", "content": "hi\nhi", **SDK_NULLS, "metadata": {"k": 1}}
    assert galtea.to_messages(turns)[0] == HumanMessage(
        content="hi\nhi", metadata=messages[0].metadata)


CANNOT_JOIN = ("cannot join messages[0] and messages[1]: both carry Galtea fields "
               "(retrieval_context, metadata, files or extra keys) and one turn holds one set")


def test_a_join_still_refuses_two_messages_that_say_different_things() -> None:
    messages = galtea.to_messages([
        ConversationMessage(role="user", content="hi", metadata={"k": 1}),
        ConversationMessage(role="user", content="more", metadata={"k": 2}),
        ConversationMessage(role="assistant", content="yes"),
    ])
    for shape in ("roles", "pairs", "history"):
        assert _where(galtea.from_messages, messages, shape=shape, join_consecutive="\n",
                      drop=list(galtea.DROPPABLE)) == (
            "not_representable", 1, "messages[1].metadata.galtea", CANNOT_JOIN)
    files = galtea.to_messages([
        {"role": "user", "content": "hi", "input_files": [FILE]},
        {"role": "user", "content": "", "input_files": [FILE]},
    ])
    assert _where(galtea.from_messages, files, join_consecutive="\n") == (
        "not_representable", 1, "messages[1].metadata.galtea", CANNOT_JOIN)


# --- 3. an actualOutput envelope of text and files is not the plain text with files ----------

BASE = {"id": "t1", "index": 0, "sessionId": "s", "input": {"user_message": "q"}}


def test_an_output_envelope_of_text_and_files_reads_as_an_envelope() -> None:
    envelope = {**BASE, "actualOutput": {"assistant_message": "a", "content": [FILE_PART]}}
    plain = {**BASE, "actualOutput": "a", "actualOutputFiles": [FILE]}
    # the SDK tells them apart
    assert Trace.model_validate(dict(envelope)).actual_output_data == envelope["actualOutput"]
    assert Trace.model_validate(dict(plain)).actual_output_data is None
    messages = galtea.to_messages([envelope])
    assert messages[1] == AIMessage(content=[TextPart(text="a"), SUMMARY], metadata={"galtea": {
        "retrieval_context": None, "metadata": {}, "empty_files": ["input_files"]}})
    assert galtea.to_messages([plain])[1] == AIMessage(
        content=[TextPart(text="a"), SUMMARY], metadata={"galtea": {
            "retrieval_context": None, "metadata": None, "empty_files": ["input_files"]}})
    # written, the answer says it was an envelope, and reads back so
    turns = galtea.from_messages(messages, drop=["trace_records"])
    assert turns[1] == {"role": "assistant", "content": "a", "retrieval_context": None,
                        "metadata": {}, "input_files": [], "output_files": [FILE]}
    assert galtea.to_messages(turns)[1] == messages[1]


def test_an_output_envelope_of_files_alone_still_reads_with_null_metadata() -> None:
    # documented: an envelope of files alone has no text that it could be told apart from
    messages = galtea.to_messages([{**BASE, "actualOutput": {"content": [FILE_PART]}}])
    assert messages[1] == AIMessage(content=[SUMMARY], metadata={"galtea": {
        "retrieval_context": None, "metadata": None, "empty_files": ["input_files"]}})


# --- 4. an enum at the top of a record or an AgentInput is not its value ---------------------

class Label(str, enum.Enum):
    A = "hello"


def _record(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "index": 0, "session_id": "s", "input": "q", "actual_output": "ok",
            **fields}


ENUM = "Label <Label.A: 'hello'>"
NOT_JSON = f"expected a JSON value (dict, list, str, int, float, bool, None), got {ENUM}"


@pytest.mark.parametrize(("fields", "expected"), [
    ({"input": Label.A}, ("malformed_event", 0, "traces[0].input",
                          f"expected the input as a string (or an input object), got {ENUM}")),
    ({"actual_output": Label.A}, ("malformed_event", 0, "traces[0].actual_output",
                                  f"expected the output as a string, got {ENUM}")),
    ({"id": Label.A}, ("malformed_event", 0, "traces[0].id",
                       "expected the trace's id as a string, got <Label.A: 'hello'>")),
    ({"error": Label.A}, ("unserializable_value", 0, "traces[0].error", NOT_JSON)),
    ({"session_id": Label.A}, ("unserializable_value", 0, "traces[0].session_id", NOT_JSON)),
    ({"channel": Label.A}, ("unserializable_value", 0, "traces[0].channel", NOT_JSON)),
], ids=["input", "actual_output", "id", "error", "session_id", "added-key"])
def test_an_enum_in_a_record_is_refused_where_it_is(
    fields: dict[str, Any], expected: tuple[str, int, str, str]
) -> None:
    assert _where(galtea.to_messages, [_record(**fields)]) == expected


def test_an_enum_in_an_agent_input_is_refused_where_it_is() -> None:
    turns = [{"role": "user", "content": "q"}]
    assert _where(galtea.to_messages, {"messages": turns, "session_id": Label.A}) == (
        "unserializable_value", None, "session_id", NOT_JSON)
    assert _where(galtea.to_messages, {"messages": turns, "session_id": "s",
                                       "channel": Label.A}) == (
        "unserializable_value", None, "channel", NOT_JSON)


def test_the_status_of_a_python_mode_dump_is_still_read_as_its_value() -> None:
    dump = Trace(id="t1", index=0, session_id="s", input="q", actual_output="ok",
                 status="FAILED").model_dump()
    assert type(dump["status"]) is not str
    [question, _] = galtea.to_messages([dump])
    assert question.metadata["galtea"]["trace"]["status"] == "FAILED"


# --- 5. the writer refuses namespace lists out of the order a turn is read in ----------------

@pytest.mark.parametrize(("message", "path", "shapes", "detail"), [
    (HumanMessage(content="q", metadata={"galtea": {
        "empty_files": ["output_files", "input_files"]}}),
     "messages[0].metadata.galtea.empty_files", ("roles", "pairs", "history"),
     "expected empty_files in the order a turn is read in (['input_files', 'output_files']), "
     "got ['output_files', 'input_files']"),
    (AIMessage(content="a", metadata={"galtea": {
        "retrieval_context": "r", "empty_files": ["input_files", "output_files"],
        "aliases": ["outputFiles", "retrievalContext", "inputFiles"]}}),
     "messages[0].metadata.galtea.aliases", ("roles", "pairs", "history"),
     "expected aliases in the order a turn is read in (['retrievalContext', 'inputFiles', "
     "'outputFiles']), got ['outputFiles', 'retrievalContext', 'inputFiles']"),
    # (pairs and history attach no file: drop_non_text leaves it out, namespace and all)
    (HumanMessage(content=[FilePart(url="gs://x", metadata={"galtea": {
        "absent": ["type", "filename", "mime_type"]}})]),
     "messages[0].content[0].metadata.galtea.absent", ("roles",),
     "expected absent in the order a file is read in (['filename', 'mime_type', 'type']), "
     "got ['type', 'filename', 'mime_type']"),
], ids=["empty_files", "aliases", "absent"])
def test_a_namespace_list_out_of_order_is_malformed(
    message: Any, path: str, shapes: tuple[str, ...], detail: str
) -> None:
    for shape in shapes:
        assert _where(galtea.from_messages, [message], shape=shape,
                      drop=list(galtea.DROPPABLE), drop_non_text=True) == (
            "malformed_event", 0, path, detail)


def test_a_namespace_list_out_of_order_names_the_order_wanted() -> None:
    message = HumanMessage(content="q", metadata={"galtea": {
        "empty_files": ["output_files", "input_files"]}})
    with pytest.raises(TraceError) as caught:
        galtea.from_messages([message])
    assert caught.value.detail == (
        "expected empty_files in the order a turn is read in (['input_files', 'output_files']), "
        "got ['output_files', 'input_files']")


def test_namespace_lists_in_the_order_read_are_written_and_read_back() -> None:
    messages = [
        HumanMessage(content="q", metadata={"galtea": {
            "empty_files": ["input_files", "output_files"]}}),
        AIMessage(content="a", metadata={"galtea": {
            "retrieval_context": "r", "empty_files": ["input_files", "output_files"],
            "aliases": ["retrievalContext", "inputFiles", "outputFiles"]}}),
        HumanMessage(content=[FilePart(url="gs://x", metadata={"galtea": {
            "absent": ["filename", "mime_type", "type"]}})]),
    ]
    turns = galtea.from_messages(messages)
    assert turns == [
        {"role": "user", "content": "q", "input_files": [], "output_files": []},
        {"role": "assistant", "content": "a", "retrievalContext": "r", "inputFiles": [],
         "outputFiles": []},
        {"role": "user", "content": "", "input_files": [{"uri": "gs://x"}]},
    ]
    assert galtea.to_messages(turns) == messages
