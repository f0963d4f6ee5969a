"""Galtea turns and records read from ``json.load(..., object_pairs_hook=OrderedDict)``.

What the reader maps (a turn, a record, an attached file, an input or output envelope) is read
from any mapping as the dict it holds; what it keeps verbatim must be plain JSON, and a mapping
there that is not a plain dict is ``unserializable_value`` at its own path, with one message.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge._json import is_plain_json
from tracebridge.adapters import galtea
from tracebridge.errors import short_repr
from tracebridge.messages import FilePart

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "galtea"


def ordered(text: str) -> Any:
    return json.loads(text, object_pairs_hook=OrderedDict)


def refusal(trace: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(trace)
    error = caught.value
    return error.code, error.index, error.path, error.detail


def kept_refusal(index: int, path: str, value: str) -> tuple[str, int, str, str]:
    return ("unserializable_value", index, path,
            f"a kept value must be plain JSON (a plain dict), got OrderedDict {value}")


# --- attached files: mapped, so read as the dict they hold ---------------------------------

TURNS_WITH_FILES = (
    '[{"role": "user", "content": "Who?", "input_files": [{"uri": "gs://f/deed.pdf"}]},'
    ' {"role": "assistant", "content": "Marta", "output_files": [{"uri": "gs://f/a.pdf",'
    ' "filename": "a.pdf", "mimeType": "application/pdf", "type": "file"}]}]'
)


def test_ordered_attached_files_read_as_the_plain_ones() -> None:
    assert galtea.to_messages(ordered(TURNS_WITH_FILES)) == galtea.to_messages(
        json.loads(TURNS_WITH_FILES)
    )


def test_ordered_attached_files_write_back_as_equal_plain_dicts() -> None:
    written = galtea.from_messages(galtea.to_messages(ordered(TURNS_WITH_FILES)))
    assert written == json.loads(TURNS_WITH_FILES)
    assert is_plain_json(written)


def test_a_file_extra_key_holding_an_ordered_dict_is_unserializable_at_it() -> None:
    trace = ordered('[{"role": "user", "content": "a",'
                    ' "input_files": [{"uri": "u", "x": {"a": 1}}]}]')
    assert refusal(trace) == kept_refusal(0, "conversation_turns[0].input_files[0].x",
                                          "OrderedDict([('a', 1)])")


# --- kept values: one code and one message, wherever they are ------------------------------

def test_an_ordered_metadata_is_unserializable_value() -> None:
    trace = ordered('[{"role": "user", "content": "Who?"},'
                    ' {"role": "assistant", "content": "Marta", "metadata": {"k": 1}}]')
    assert refusal(trace) == kept_refusal(1, "conversation_turns[1].metadata",
                                          "OrderedDict([('k', 1)])")


def test_an_ordered_dict_under_an_extra_key_has_the_same_message() -> None:
    trace = [{"role": "user", "content": "a", "x": OrderedDict(a=1)}]
    assert refusal(trace) == kept_refusal(0, "conversation_turns[0].x", "OrderedDict([('a', 1)])")


def test_an_ordered_dict_nested_in_metadata_has_the_same_message() -> None:
    trace = [{"role": "user", "content": "a", "metadata": {"k": OrderedDict(a=1)}}]
    assert refusal(trace) == kept_refusal(0, "conversation_turns[0].metadata.k",
                                          "OrderedDict([('a', 1)])")


def test_a_metadata_that_is_no_mapping_stays_malformed_event() -> None:
    trace = [{"role": "user", "content": "a", "metadata": [1]}]
    assert refusal(trace) == ("malformed_event", 0, "conversation_turns[0].metadata",
                              "expected a dict (or null), got list [1]")


# --- Trace records: envelopes are mapped, what is kept of them must be plain ---------------

RECORD_INPUT_DATA = (
    '[{"id": "t", "index": 0, "session_id": "s", "input_data": {"user_message": "a"}}]'
)


def test_an_ordered_input_data_reads_as_the_plain_one() -> None:
    assert galtea.to_messages(ordered(RECORD_INPUT_DATA)) == galtea.to_messages(
        json.loads(RECORD_INPUT_DATA)
    )


def test_a_kept_key_of_an_ordered_input_data_is_unserializable_at_it() -> None:
    trace = ordered('[{"id": "t", "index": 0, "session_id": "s",'
                    ' "input_data": {"user_message": "a", "k": {"b": 1}}}]')
    assert refusal(trace) == kept_refusal(0, "traces[0].input_data.k", "OrderedDict([('b', 1)])")


def test_an_ordered_input_data_kept_under_trace_is_unserializable_at_it() -> None:
    trace = ordered('[{"id": "t", "index": 0, "session_id": "s", "input_data": {},'
                    ' "actual_output": "b"}]')
    assert refusal(trace) == kept_refusal(0, "traces[0].input_data", "OrderedDict()")


RECORD_OUTPUT_ENVELOPE = (
    '[{"id": "t", "index": 0, "session_id": "s", "input": "a", "actualOutput":'
    ' {"assistant_message": "b", "content": [{"type": "file", "uri": "gs://f/a.pdf"}]}}]'
)


def test_an_ordered_output_envelope_of_text_and_files_reads_as_the_plain_one() -> None:
    messages = galtea.to_messages(ordered(RECORD_OUTPUT_ENVELOPE))
    assert messages == galtea.to_messages(json.loads(RECORD_OUTPUT_ENVELOPE))
    assert messages[1].content[1:] == [FilePart(url="gs://f/a.pdf")]


def test_an_ordered_output_envelope_with_no_answer_is_unserializable_under_trace() -> None:
    trace = ordered('[{"id": "t", "index": 0, "session_id": "s", "input": "a",'
                    ' "actualOutput": {"content": []}}]')
    assert refusal(trace) == kept_refusal(0, "traces[0].actualOutput",
                                          "OrderedDict([('content', [])])")


def test_an_ordered_dump_envelope_reads_as_the_plain_one() -> None:
    text = ('[{"id": "t", "index": 0, "session_id": "s", "input": "a", "actual_output": "b",'
            ' "actual_output_data": {"assistant_message": "b", "n": 1}}]')
    messages = galtea.to_messages(ordered(text))
    assert messages == galtea.to_messages(json.loads(text))
    assert messages[1].metadata == {"galtea": {"retrieval_context": None, "metadata": {"n": 1},
                                               "empty_files": ["input_files", "output_files"]}}


@pytest.mark.parametrize("text", [RECORD_INPUT_DATA, RECORD_OUTPUT_ENVELOPE],
                         ids=["input_data", "output_envelope"])
def test_ordered_records_write_back_as_the_plain_ones(text: str) -> None:
    written = galtea.from_messages(galtea.to_messages(ordered(text)), drop=["trace_records"])
    assert written == galtea.from_messages(galtea.to_messages(json.loads(text)),
                                           drop=["trace_records"])
    assert is_plain_json(written)


def test_an_ordered_agent_input_context_data_is_unserializable_at_it() -> None:
    agent_input = ordered('{"messages": [{"role": "user", "content": "a"}], "session_id": "s",'
                          ' "context_data": {"a": 1}}')
    assert refusal(agent_input) == ("unserializable_value", None, "context_data",
                                    "a kept value must be plain JSON (a plain dict), got "
                                    "OrderedDict OrderedDict([('a', 1)])")


def test_ordered_output_files_that_are_not_the_envelope_files_conflict() -> None:
    trace = ordered(
        '[{"id": "t", "index": 0, "session_id": "s", "input": "a", "actual_output": "b",'
        ' "actual_output_data": {"assistant_message": "b",'
        ' "content": [{"type": "file", "uri": "gs://f/a.pdf"}]},'
        ' "actual_output_files": [{"uri": "gs://f/b.pdf", "filename": null,'
        ' "mime_type": null, "type": "file"}]}]'
    )
    assert refusal(trace) == (
        "conflicting_fields", 0, "traces[0].actual_output_files",
        "actual_output_files is [OrderedDict([('uri', 'gs://f/b.pdf'), ('filename', None), "
        "('mime_type', None), ('type', 'file')])] but the files of actual_output_data are "
        "[{'uri': 'gs://f/a.pdf', 'filename': None, 'mime_type': None, 'type': 'file'}]",
    )


# --- golden traces ------------------------------------------------------------------------

def _golden_lists() -> list[tuple[str, str]]:
    """(file stem, key) of every golden list of turns or records."""
    found = []
    for path in sorted(FOLDER.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        found += [(path.stem, key) for key in ("trace", "records", "api_records")
                  if isinstance(case.get(key), list)]
    return found


# The golden lists that keep a nested object verbatim (a turn's metadata, an input envelope's
# content), each with the index and path of the first, and how to find it in the list: read
# with the hook, that object is refused where it is.
KEEPING_NESTED: dict[tuple[str, str], tuple[int, str, Callable[[Any], Any]]] = {
    ("create_batch_conversation_message_camel_dumps", "trace"):
        (0, "conversation_turns[0].metadata", lambda trace: trace[0]["metadata"]),
    ("create_batch_conversation_message_dumps", "trace"):
        (0, "conversation_turns[0].metadata", lambda trace: trace[0]["metadata"]),
    ("create_batch_files_and_metadata", "trace"):
        (0, "conversation_turns[0].metadata", lambda trace: trace[0]["metadata"]),
    ("generate_agent_class", "trace"):
        (0, "conversation_turns[0].metadata", lambda trace: trace[0]["metadata"]),
    ("generate_agent_input_function", "trace"):
        (0, "conversation_turns[0].metadata", lambda trace: trace[0]["metadata"]),
    ("traces_list_pending_failed_and_files", "records"):
        (0, "traces[0].input_data.content[0]",
         lambda trace: trace[0]["input_data"]["content"][0]),
    ("traces_list_pending_failed_and_files", "api_records"):
        (0, "traces[0].input.content[0]", lambda trace: trace[0]["input"]["content"][0]),
}


def _golden_text(stem: str, key: str) -> str:
    case = json.loads((FOLDER / f"{stem}.json").read_text(encoding="utf-8"))
    return json.dumps(case[key])


@pytest.mark.parametrize(("stem", "key"), [c for c in _golden_lists() if c not in KEEPING_NESTED],
                         ids=str)
def test_golden_list_read_with_ordered_dicts_reads_as_the_plain_one(stem: str, key: str) -> None:
    text = _golden_text(stem, key)
    assert galtea.to_messages(ordered(text)) == galtea.to_messages(json.loads(text))


@pytest.mark.parametrize(("stem", "key"), sorted(KEEPING_NESTED), ids=str)
def test_golden_list_keeping_a_nested_object_is_refused_where_it_is(stem: str, key: str) -> None:
    trace = ordered(_golden_text(stem, key))
    index, path, nested = KEEPING_NESTED[stem, key]
    assert refusal(trace) == kept_refusal(index, path, short_repr(nested(trace)))


def test_the_golden_lists_read_with_ordered_dicts_are_these() -> None:
    assert sorted({stem for stem, key in _golden_lists()
                   if (stem, key) not in KEEPING_NESTED}) == [
        "create_batch_agent_with_tools_folded", "create_batch_consecutive_user_turns",
        "create_batch_retrieval_context", "create_batch_savings_advice", "generate_list_agent",
        "pairs_legacy", "pairs_with_retrieval_context_and_extra_keys",
        "pirate_pairs_from_openai_history", "simulate_agent_input",
        "test_cases_create_conversation_history",
    ]
