"""LangChain: a typed call edited after reading, written back while the message still keeps the
provider's own copy of its calls.

The reader keeps those copies verbatim under ``metadata["langchain"]``: the raw
``additional_kwargs["tool_calls"]``, an aggregated ``AIMessageChunk``'s ``tool_call_chunks``
(from which LangChain rebuilds the calls) and a legacy ``additional_kwargs["function_call"]``.
Typed calls are authoritative: after an edit (a rename, redacted arguments, a new id, other
unparsed text) the writer rewrites the copy of that call, in the provider's spelling, so that
the message reads back as edited, or refuses where LangChain cannot hold the edit. An unedited
copy is written as it was read (the golden tests hold that, byte for byte).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)
from pydantic import ValidationError

import tracebridge as tb
from tracebridge import TraceError, transcript_hash
from tracebridge.adapters import langchain
from tracebridge.validation import check

from law_kits.langchain import bad_args, native_conversations
from strategies import json_objects, names, texts

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"
LC = "langchain"


def golden(name: str) -> tuple[list[tb.Message], dict[str, Any]]:
    """A golden trace's typed messages and the options it is read with."""
    case = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    options = case.get("to_options", {})
    return langchain.to_messages(case["trace"], **options), options


def edited(messages: list[tb.Message], i: int, k: int, **update: Any) -> list[tb.Message]:
    """``messages`` with call ``k`` of message ``i`` edited (validated, as a user's new call
    is); a tool result that answered the call by its old id answers it by the new one."""
    message = messages[i]
    assert isinstance(message, tb.AIMessage)
    calls = list(message.tool_calls)
    old = calls[k]
    calls[k] = tb.ToolCall(**{**old.model_dump(), **update})
    out = [*messages[:i], message.model_copy(update={"tool_calls": calls}), *messages[i + 1 :]]
    if "id" in update and old.id is not None:
        for j, result in enumerate(out):
            if isinstance(result, tb.ToolMessage) and result.tool_call_id == old.id:
                out[j] = result.model_copy(update={"tool_call_id": update["id"]})
    return out


def with_calls(messages: list[tb.Message], i: int, calls: list[tb.ToolCall]) -> list[tb.Message]:
    return [*messages[:i], messages[i].model_copy(update={"tool_calls": calls}), *messages[i + 1 :]]


def with_kept(messages: list[tb.Message], i: int, path: tuple[Any, ...], value: Any) -> list[Any]:
    """``messages`` with ``metadata["langchain"][path...]`` of message ``i`` set to ``value``:
    the copy the writer is expected to have brought in line, as the reader keeps it."""
    metadata = copy.deepcopy(messages[i].metadata)
    node = metadata[LC]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    message = messages[i].model_copy(update={"metadata": metadata})
    return [*messages[:i], message, *messages[i + 1 :]]


def written(messages: list[tb.Message]) -> list[dict[str, Any]]:
    """The LangChain messages written, as a file carries them (``messages_to_dict`` JSON)."""
    return stored(langchain.from_messages(messages))


def stored(lc: list[Any]) -> list[dict[str, Any]]:
    """``messages_to_dict`` dicts through JSON; as they are when a block holds raw bytes (a
    Bedrock image), which JSON cannot carry."""
    dicts = messages_to_dict(lc)
    try:
        return json.loads(json.dumps(dicts))  # type: ignore[no-any-return]
    except TypeError:
        return dicts


def read_back(messages: list[tb.Message], options: dict[str, Any]) -> list[tb.Message]:
    return langchain.to_messages(written(messages), **options)


def refused(messages: list[tb.Message]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert caught.value.source == LC
    return caught.value.code, caught.value.index, caught.value.path


def write_or_refuse(messages: list[tb.Message]) -> tuple[Any, TraceError | None]:
    try:
        return langchain.from_messages(messages), None
    except TraceError as error:
        return None, error


def as_json(calls: list[tb.ToolCall]) -> str:
    """The calls as JSON text: equal only when the values' types are equal too (1 != 1.0)."""
    return json.dumps([call.model_dump(mode="json") for call in calls], sort_keys=True)


def raw_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- additional_kwargs["tool_calls"]: ChatOpenAI's raw calls -------------------------------

# invalid_call_never_answered.json, message 1: [call_cut (invalid), call_ok (valid)], with
# the raw calls in that order; call_ok is answered by message 2.
RAW_CASE = "invalid_call_never_answered"
CUT = raw_call("call_cut", "get_weather", '{"city": "Ro')
OK = raw_call("call_ok", "get_weather", '{"city": "Paris"}')


@pytest.mark.parametrize(
    ("k", "update", "raw"),
    [
        (1, {"args": {"city": "REDACTED"}}, [CUT, raw_call("call_ok", "get_weather",
                                                           '{"city": "REDACTED"}')]),
        (1, {"args": {}}, [CUT, raw_call("call_ok", "get_weather", "{}")]),
        (1, {"name": "get_forecast"}, [CUT, raw_call("call_ok", "get_forecast",
                                                     '{"city": "Paris"}')]),
        (1, {"id": "call_new"}, [CUT, raw_call("call_new", "get_weather", '{"city": "Paris"}')]),
        (0, {"invalid_args": '{"city": "XX'}, [raw_call("call_cut", "get_weather",
                                                         '{"city": "XX'), OK]),
        (0, {"name": "get_forecast"}, [raw_call("call_cut", "get_forecast", '{"city": "Ro'),
                                       OK]),
        (0, {"id": "call_new"}, [raw_call("call_new", "get_weather", '{"city": "Ro'), OK]),
        # a valid call whose arguments no longer parse moves to invalid_tool_calls; its raw
        # call holds the text, which records its place
        (1, {"args": {}, "invalid_args": "oops"}, [CUT, raw_call("call_ok", "get_weather",
                                                                 "oops")]),
    ],
    ids=["args", "args-emptied", "name", "id", "invalid_args", "invalid-name", "invalid-id",
         "valid-to-invalid"],
)
def test_an_edited_call_rewrites_its_raw_provider_call(
    k: int, update: dict[str, Any], raw: list[dict[str, Any]]
) -> None:
    messages, options = golden(RAW_CASE)
    assert messages[1].metadata[LC]["additional_kwargs"]["tool_calls"] == [CUT, OK]
    edit = edited(messages, 1, k, **update)
    back = read_back(edit, options)
    assert back == with_kept(edit, 1, ("additional_kwargs", "tool_calls"), raw)
    assert as_json(back[1].tool_calls) == as_json(edit[1].tool_calls)


def test_redacted_arguments_leave_no_copy_in_the_written_message() -> None:
    messages, _ = golden(RAW_CASE)
    redacted = edited(messages, 1, 1, args={"city": "REDACTED"})
    ai = written(redacted)[1]
    assert "Paris" not in json.dumps(ai)
    assert ai["data"]["tool_calls"][0]["args"] == {"city": "REDACTED"}
    assert ai["data"]["additional_kwargs"]["tool_calls"][1]["function"]["arguments"] == (
        '{"city": "REDACTED"}'
    )


def test_an_unedited_raw_call_is_written_as_it_was_kept() -> None:
    messages, options = golden(RAW_CASE)
    # call_ok renamed: call_cut's raw call stays the very text the provider sent
    back = read_back(edited(messages, 1, 1, name="get_forecast"), options)
    assert back[1].metadata[LC]["additional_kwargs"]["tool_calls"][0] == CUT


def test_empty_argument_text_stays_when_a_call_is_renamed() -> None:
    trace = [
        HumanMessage("What time is it?"),
        AIMessage(
            "",
            tool_calls=[{"name": "now", "args": {}, "id": "c1"}],
            additional_kwargs={"tool_calls": [raw_call("c1", "now", "")]},
        ),
        ToolMessage("12:00", tool_call_id="c1"),
    ]
    messages = langchain.to_messages(trace)
    edit = edited(messages, 1, 0, name="clock")
    back = read_back(edit, {})
    assert back == with_kept(edit, 1, ("additional_kwargs", "tool_calls"),
                             [raw_call("c1", "clock", "")])


# invalid_tool_call.json, message 1 (the last; read with allow_pending): [call_cut (invalid,
# kept error text), call_ok (valid)].
PENDING_CASE = "invalid_tool_call"


def test_an_invalid_call_given_arguments_keeps_its_invalid_marker_and_is_refused() -> None:
    messages, _ = golden(PENDING_CASE)
    assert messages[1].tool_calls[0].metadata[LC]["invalid_tool_call"]["error"]
    fixed = edited(messages, 1, 0, invalid_args=None, args={"city": "Rome"})
    assert refused(fixed) == ("not_representable", 1, "messages[1].tool_calls[0].invalid_args")


def test_an_invalid_call_given_arguments_and_no_marker_is_a_valid_call() -> None:
    messages, options = golden(PENDING_CASE)
    fixed = edited(messages, 1, 0, invalid_args=None, args={"city": "Rome"}, metadata={})
    back = read_back(fixed, options)
    raw = [raw_call("call_cut", "get_weather", '{"city": "Rome"}'), OK]
    assert back == with_kept(fixed, 1, ("additional_kwargs", "tool_calls"), raw)
    ai = written(fixed)[1]["data"]
    assert [c["id"] for c in ai["tool_calls"]] == ["call_cut", "call_ok"]
    assert ai["invalid_tool_calls"] == []


def test_a_call_added_beside_raw_provider_calls_is_refused() -> None:
    messages, _ = golden(PENDING_CASE)
    calls = [*messages[1].tool_calls, tb.ToolCall(name="get_time", id="call_new")]
    assert refused(with_calls(messages, 1, calls)) == (
        "not_representable", 1, "messages[1].tool_calls"
    )


def test_a_call_removed_beside_raw_provider_calls_leaves_its_raw_call_as_a_stale_copy() -> None:
    # as filter_messages(exclude_tool_calls=...) leaves it: the raw calls are matched to the
    # calls by id, and the one whose id names no call is written as kept
    messages, options = golden(PENDING_CASE)
    calls = messages[1].tool_calls[1:]
    removed = with_calls(messages, 1, calls)
    ai = written(removed)[1]["data"]
    assert ai["additional_kwargs"]["tool_calls"] == [CUT, OK]
    assert [c["id"] for c in ai["tool_calls"]] == ["call_ok"]
    assert ai["invalid_tool_calls"] == []
    assert read_back(removed, options) == removed


# --- tool_call_chunks: an aggregated AIMessageChunk ----------------------------------------

CHUNK_CASE = "aggregated_stream_chunk"  # message 1: one call, call_1, chunk_position "last"
CHUNK = {"name": "get_weather", "args": '{"city": "Paris"}', "id": "call_1", "index": 0,
         "type": "tool_call_chunk"}


@pytest.mark.parametrize(
    ("update", "chunk"),
    [
        ({"args": {"city": "REDACTED"}}, {**CHUNK, "args": '{"city": "REDACTED"}'}),
        ({"name": "get_forecast"}, {**CHUNK, "name": "get_forecast"}),
        ({"id": "call_new"}, {**CHUNK, "id": "call_new"}),
        ({"args": {}, "invalid_args": "not json"}, {**CHUNK, "args": "not json"}),
    ],
    ids=["args", "name", "id", "valid-to-invalid"],
)
def test_an_edited_call_rewrites_its_tool_call_chunk(
    update: dict[str, Any], chunk: dict[str, Any]
) -> None:
    messages, options = golden(CHUNK_CASE)
    assert messages[1].metadata[LC]["tool_call_chunks"] == [CHUNK]
    edit = edited(messages, 1, 0, **update)
    back = read_back(edit, options)
    assert back == with_kept(edit, 1, ("tool_call_chunks",), [chunk])
    assert as_json(back[1].tool_calls) == as_json(edit[1].tool_calls)


def test_unparsed_text_langchain_would_parse_from_a_chunk_is_refused() -> None:
    # LangChain's partial JSON parser reads '{"city": "Ro' as {"city": "Ro"}: as a chunk it
    # would come back a valid call
    messages, _ = golden(CHUNK_CASE)
    cut = edited(messages, 1, 0, args={}, invalid_args='{"city": "Ro')
    assert refused(cut) == ("not_representable", 1, "messages[1].tool_calls[0].invalid_args")


def test_a_call_added_beside_tool_call_chunks_is_refused() -> None:
    messages, _ = golden(CHUNK_CASE)
    calls = [*messages[1].tool_calls, tb.ToolCall(name="get_time", id="call_new")]
    assert refused(with_calls(messages, 1, calls)) == (
        "not_representable", 1, "messages[1].tool_calls"
    )


def chunk_trace(*chunks: dict[str, Any]) -> list[Any]:
    return [HumanMessage("go"), AIMessageChunk(content="", tool_call_chunks=list(chunks),
                                               chunk_position="last")]


def test_a_chunk_is_rewritten_when_only_the_type_of_a_value_changed() -> None:
    messages = langchain.to_messages(
        chunk_trace({"name": "f", "args": '{"n": 1}', "id": "c1", "index": 0}), allow_pending=True
    )
    edit = edited(messages, 1, 0, args={"n": 1.0})
    back = read_back(edit, {"allow_pending": True})
    assert type(back[1].tool_calls[0].args["n"]) is float
    assert back[1].metadata[LC]["tool_call_chunks"][0]["args"] == '{"n": 1.0}'
    assert as_json(back[1].tool_calls) == as_json(edit[1].tool_calls)


def test_an_invalid_chunk_before_a_valid_one_keeps_its_place() -> None:
    messages = langchain.to_messages(
        chunk_trace(
            {"name": "f", "args": "not json", "id": "c1", "index": 0},
            {"name": "g", "args": '{"a": 1}', "id": "c2", "index": 1},
        ),
        allow_pending=True,
    )
    assert [call.invalid_args for call in messages[1].tool_calls] == ["not json", None]
    edit = edited(messages, 1, 0, invalid_args="still not json")
    back = read_back(edit, {"allow_pending": True})
    assert back == with_kept(edit, 1, ("tool_call_chunks", 0, "args"), "still not json")


# --- additional_kwargs["function_call"]: the legacy OpenAI call ----------------------------

FUNCTION_TRACE = [
    HumanMessage("Weather in Oslo?"),
    AIMessage(
        "", additional_kwargs={"function_call": {"name": "get_weather",
                                                 "arguments": '{"city": "Oslo"}'}}
    ),
    FunctionMessage("cold", name="get_weather"),
]


@pytest.mark.parametrize(
    ("update", "function_call"),
    [
        ({"args": {"city": "REDACTED"}}, {"name": "get_weather",
                                          "arguments": '{"city": "REDACTED"}'}),
        ({"name": "get_forecast"}, {"name": "get_forecast", "arguments": '{"city": "Oslo"}'}),
        ({"args": {}, "invalid_args": '{"city": "Os'}, {"name": "get_weather",
                                                         "arguments": '{"city": "Os'}),
    ],
    ids=["args", "name", "invalid_args"],
)
def test_an_edited_call_rewrites_its_legacy_function_call(
    update: dict[str, Any], function_call: dict[str, Any]
) -> None:
    messages = langchain.to_messages(FUNCTION_TRACE)
    edit = edited(messages, 1, 0, **update)
    back = read_back(edit, {})
    assert back == with_kept(edit, 1, ("additional_kwargs", "function_call"), function_call)


@pytest.mark.parametrize(
    ("update", "path"),
    [
        ({"id": "call_1"}, "messages[1].tool_calls[0].id"),
        # "null" is JSON: in function_call.arguments it reads back as args {}
        ({"args": {}, "invalid_args": "null"}, "messages[1].tool_calls[0].invalid_args"),
    ],
    ids=["id", "invalid_args-that-parse"],
)
def test_what_a_legacy_function_call_cannot_hold_is_refused(
    update: dict[str, Any], path: str
) -> None:
    messages = langchain.to_messages(FUNCTION_TRACE)
    assert refused(edited(messages, 1, 0, **update)) == ("not_representable", 1, path)


def test_a_legacy_function_call_without_its_call_is_refused() -> None:
    messages = langchain.to_messages(FUNCTION_TRACE)
    assert refused(with_calls(messages[:2], 1, [])) == (
        "not_representable", 1, "messages[1].tool_calls"
    )


def test_a_second_call_marked_as_the_function_call_is_refused() -> None:
    messages = langchain.to_messages(FUNCTION_TRACE)
    twice = [messages[1].tool_calls[0], messages[1].tool_calls[0]]
    assert refused(with_calls(messages[:2], 1, twice)) == (
        "not_representable", 1, "messages[1].tool_calls[1]"
    )


# --- an invalid_tool_calls entry's kept marker ---------------------------------------------


def test_a_call_kept_with_empty_argument_text_given_arguments_is_refused() -> None:
    # default_tool_parser files "" under invalid_tool_calls: the call is args={} with a marker
    trace = [HumanMessage("go"),
             AIMessage("", additional_kwargs={"tool_calls": [raw_call("c1", "now", "")]})]
    messages = langchain.to_messages(trace, allow_pending=True)
    assert messages[1].tool_calls[0].metadata[LC]["invalid_tool_call"]["args"] == ""
    assert refused(edited(messages, 1, 0, args={"tz": "UTC"})) == (
        "not_representable", 1, "messages[1].tool_calls[0].args"
    )


def test_a_call_kept_without_a_name_renamed_is_refused() -> None:
    trace = [HumanMessage("go"), AIMessage(
        "", invalid_tool_calls=[{"name": None, "args": "x", "id": "c1", "error": None}])]
    messages = langchain.to_messages(trace)
    assert messages[1].tool_calls[0].metadata[LC]["invalid_tool_call"] == {
        "type": "invalid_tool_call", "error": None, "name": None
    }
    assert refused(edited(messages, 1, 0, name="f")) == (
        "not_representable", 1, "messages[1].tool_calls[0].name"
    )


# --- any call of any conversation ----------------------------------------------------------

GOLDEN_CASES = sorted(
    path.stem for path in GOLDEN.glob("*.json")
    if "trace" in json.loads(path.read_text(encoding="utf-8"))
)
COPIES = (("additional_kwargs", "tool_calls"), ("additional_kwargs", "function_call"),
          ("tool_call_chunks",))


def without_copies(message: tb.Message) -> tb.Message:
    """The message without the kept provider copies of its calls, which the writer rewrites
    for an edited call: the three kept with the message, and the JSON text a Responses
    ``function_call`` block keeps on its call (``metadata.langchain.content_block``)."""
    metadata = copy.deepcopy(message.metadata)
    kept = metadata.get(LC, {})
    for path in COPIES:
        node = kept
        for key in path[:-1]:
            node = node.get(key, {})
        node.pop(path[-1], None)
    update: dict[str, Any] = {"metadata": metadata}
    if isinstance(message, tb.AIMessage):
        update["tool_calls"] = [_without_block_text(call) for call in message.tool_calls]
    return message.model_copy(update=update)


def _without_block_text(call: tb.ToolCall) -> tb.ToolCall:
    metadata = copy.deepcopy(call.metadata)
    block = metadata.get(LC, {}).get("content_block", {}).get("block", {})
    if block.get("type") == "function_call":
        block.pop("arguments", None)
    return call.model_copy(update={"metadata": metadata})


def copies(message: tb.Message) -> list[list[Any]]:
    """The entries of each kept copy (``[None]`` for a copy the message does not keep)."""
    kept = message.metadata.get(LC, {})
    found = []
    for path in COPIES:
        node: Any = kept
        for key in path:
            node = node.get(key) if type(node) is dict else None
        found.append(node if type(node) is list else [node])
    return found


@st.composite
def an_edit(draw: st.DrawFn, call: tb.ToolCall) -> dict[str, Any]:
    what = draw(st.sampled_from(["name", "args", "id", "invalid_args", "parsed"]))
    if what == "name":
        return {"name": draw(names)}
    if what == "id":
        return {"id": draw(names.map(lambda n: f"edited_{n}"))}
    if what == "invalid_args":
        return {"args": {}, "invalid_args": draw(bad_args | texts), "kind": "function"}
    if call.kind == "custom":
        return {"args": {"input": draw(texts)}}
    update: dict[str, Any] = {"args": draw(json_objects), "invalid_args": None}
    if what == "parsed" and call.invalid_args is not None and draw(st.booleans()):
        update["metadata"] = {}  # the invalid list's marker taken away with the edit
    return update


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_edited_call_reads_back_as_edited_or_is_refused(data: st.DataObject) -> None:
    case = data.draw(st.none() | st.sampled_from(GOLDEN_CASES), label="golden case")
    if case is None:
        messages = langchain.to_messages(data.draw(native_conversations(), label="trace"))
        options: dict[str, Any] = {}
    else:
        messages, options = golden(case)
    places = [(i, k) for i, m in enumerate(messages) if isinstance(m, tb.AIMessage)
              for k in range(len(m.tool_calls))]
    assume(places)
    with_copies = [(i, k) for i, k in places if copies(messages[i]) != [[None]] * len(COPIES)]
    if with_copies and data.draw(st.booleans(), label="a message keeping copies"):
        places = with_copies
    i, k = data.draw(st.sampled_from(places), label="call")
    update = data.draw(an_edit(messages[i].tool_calls[k]), label="edit")
    try:
        edit = edited(messages, i, k, **update)
    except ValidationError:
        assume(False)  # not a call (a custom call with unparsed arguments)
    # a conversation still (making an unanswered invalid call valid leaves it unanswered)
    assume(not check(edit, allow_pending=options.get("allow_pending", False)))
    kinds = [name for name, entries in zip(("raw", "function_call", "chunks"), copies(messages[i]),
                                           strict=True) if entries != [None]]
    lc, refusal = write_or_refuse(edit)
    if refusal is not None:
        event(f"refused, copies {kinds}")
        assert (refusal.code, refusal.index) == ("not_representable", i), refusal
        # at the edited call (or a field of it), or at its message's calls as a whole
        calls, the_call = f"messages[{i}].tool_calls", f"messages[{i}].tool_calls[{k}]"
        at = refusal.path or ""
        assert at in (calls, the_call) or at.startswith(f"{the_call}."), refusal
        return
    event(f"written, copies {kinds}")
    back = langchain.to_messages(stored(lc), **options)
    assert len(back) == len(edit)
    for again, was in zip(back, edit, strict=True):
        assert without_copies(again) == without_copies(was)
    calls = without_copies(back[i]).tool_calls
    assert as_json(calls) == as_json(without_copies(edit[i]).tool_calls)
    assert transcript_hash(back) == transcript_hash(edit)
    assert [back[j] for j in range(len(back)) if j != i] == [
        edit[j] for j in range(len(edit)) if j != i
    ]
    # only the edited call's copy may have been rewritten
    changed = sum(
        entry != before
        for now, then in zip(copies(back[i]), copies(edit[i]), strict=True)
        for entry, before in zip(now, then, strict=True)
    )
    assert changed <= 1
    # what was written is a conversation the writer writes as it is
    assert langchain.to_messages(written(back), **options) == back


@pytest.mark.parametrize("tag", ["tool_use", "tool_call"])
def test_a_call_kept_with_its_content_block_cannot_lose_its_id(tag: str) -> None:
    # The block repeats a call of tool_calls, which LangChain's lists link by id: a call
    # edited to have none would be written with a block that names no call.
    block = {"type": tag, "id": "c1", "name": "f", ("input" if tag == "tool_use" else "args"):
             {"a": 1}}
    ai = AIMessage(content=[{"type": "text", "text": "hi"}, block],
                   tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}])
    typed = langchain.to_messages([HumanMessage("q"), ai], allow_pending=True)
    assert langchain.from_messages(typed)[1].content == ai.content  # unedited: as it was
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited(typed, 1, 0, id=None))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].id")


# --- a Responses message whose calls keep their function_call blocks -----------------------


def responses_calls_trace() -> list[Any]:
    """Two calls whose arguments did not parse, each kept with its function_call block (at
    content positions 0 and 1), both answered."""

    def block(call_id: str) -> dict[str, Any]:
        return {"type": "function_call", "id": "fc_0", "call_id": call_id, "name": "f",
                "arguments": "not json", "status": "completed"}

    def invalid(call_id: str) -> dict[str, Any]:
        return {"type": "invalid_tool_call", "id": call_id, "name": "f", "args": "not json",
                "error": None}

    return [
        HumanMessage("go"),
        AIMessage(content=[block("c1"), block("c2")],
                  invalid_tool_calls=[invalid("c1"), invalid("c2")]),
        ToolMessage("one", tool_call_id="c1"),
        ToolMessage("two", tool_call_id="c2"),
    ]


def test_a_call_that_no_longer_keeps_its_block_before_a_kept_one_is_refused_at_the_calls() -> None:
    # The first call, given arguments and stripped of its metadata, keeps no block: the
    # second call's block, kept at content position 1, would have nothing before it and read
    # back at 0. The gap is the calls' as a whole, not the untouched second call's.
    messages = langchain.to_messages(responses_calls_trace())
    assert [call.metadata[LC]["content_block"]["at"] for call in messages[1].tool_calls] == [0, 1]
    edit = edited(messages, 1, 0, args={}, invalid_args=None, metadata={})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edit)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls")
    assert "tool_calls[0] keeps no block" in str(error)


def test_a_gap_before_the_block_of_an_earlier_typed_call_is_refused_at_the_calls() -> None:
    # Typed calls come valid first: c2 (its block at 1), then c1 (at 0) and c3 (at 2). c1,
    # given arguments and stripped of its metadata, keeps no block: c2's block, first in
    # typed order, has nothing before it.
    def block(call_id: str, arguments: str) -> dict[str, Any]:
        return {"type": "function_call", "id": "fc_0", "call_id": call_id, "name": "f",
                "arguments": arguments, "status": "completed"}

    trace = [
        HumanMessage("go"),
        AIMessage(
            content=[block("c1", "not json"), block("c2", "{}"), block("c3", "not json")],
            tool_calls=[{"name": "f", "args": {}, "id": "c2", "type": "tool_call"}],
            invalid_tool_calls=[{"type": "invalid_tool_call", "id": c, "name": "f",
                                 "args": "not json", "error": None} for c in ("c1", "c3")],
        ),
        *[ToolMessage("", tool_call_id=c) for c in ("c1", "c2", "c3")],
    ]
    messages = langchain.to_messages(trace)
    assert [(call.id, call.metadata[LC]["content_block"]["at"])
            for call in messages[1].tool_calls] == [("c2", 1), ("c1", 0), ("c3", 2)]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited(messages, 1, 1, args={}, invalid_args=None, metadata={}))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls")
    assert (
        "the block of tool_calls[0] belongs at position 1, but only 0 content elements come "
        "before it, and tool_calls[1] keeps no block: content elements before it were taken "
        "out, or a call lost its block"
    ) in str(error)


def test_a_call_without_its_block_is_written_once_the_kept_block_is_renumbered() -> None:
    # what the refusal above suggests: the second call's block numbered anew, at 0
    messages = langchain.to_messages(responses_calls_trace())
    edit = edited(messages, 1, 0, args={}, invalid_args=None, metadata={})
    second = copy.deepcopy(edit[1].tool_calls[1].metadata)
    second[LC]["content_block"]["at"] = 0
    edit = edited(edit, 1, 1, metadata=second)
    ai = written(edit)[1]["data"]
    assert ai["content"] == [{"type": "function_call", "id": "fc_0", "call_id": "c2",
                              "name": "f", "arguments": "not json", "status": "completed"}]
    assert ai["tool_calls"] == [{"name": "f", "args": {}, "id": "c1", "type": "tool_call"}]
    assert ai["invalid_tool_calls"] == [{"type": "invalid_tool_call", "id": "c2", "name": "f",
                                         "args": "not json", "error": None}]
    assert read_back(edit, {}) == edit


def test_a_kept_block_placed_past_the_content_is_refused_at_its_call() -> None:
    # every call keeps its block: the position that does not fit is the call's own
    messages = langchain.to_messages(responses_calls_trace())
    second = copy.deepcopy(messages[1].tool_calls[1].metadata)
    second[LC]["content_block"]["at"] = 5
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(edited(messages, 1, 1, metadata=second))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[1]")


def _text_then_block_trace(*extra_calls: dict[str, Any]) -> list[Any]:
    """Two text parts, then c1's tool_use block; c1 and ``extra_calls`` in tool_calls."""
    return [
        HumanMessage("q"),
        AIMessage(
            content=[{"type": "text", "text": "Let me check."},
                     {"type": "text", "text": "One moment."},
                     {"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
            tool_calls=[{"name": "f", "args": {}, "id": "c1", "type": "tool_call"},
                        *extra_calls],
        ),
    ]


def test_a_custom_call_written_after_the_content_fills_no_gap_of_a_kept_block() -> None:
    # A custom call from another format gets its own block after the content: with a text
    # part taken out, c1's block (at 2) has no place, and that is c1's own fault alone.
    messages = langchain.to_messages(_text_then_block_trace(), allow_pending=True)
    custom = tb.ToolCall(name="sh", args={"input": "ls"}, id="c9", kind="custom")
    whole = [messages[0], messages[1].model_copy(
        update={"tool_calls": [*messages[1].tool_calls, custom]})]
    written = langchain.from_messages(whole, form="dicts")[1]["data"]["content"]
    assert [block["type"] for block in written] == [
        "text", "text", "tool_use", "custom_tool_call"]
    cut = [messages[0], messages[1].model_copy(update={
        "content": messages[1].content[:1], "tool_calls": [*messages[1].tool_calls, custom]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(cut)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls[0]")
    assert caught.value.detail == (
        "this call's content block (metadata.langchain.content_block) belongs at position 2, "
        "outside the message's 1 other content elements")


def test_a_gap_wider_than_the_blockless_calls_is_the_kept_blocks_own() -> None:
    # c2 is in tool_calls only (LangChain allows that): one call without a block cannot
    # account for two places missing before c1's block
    messages = langchain.to_messages(
        _text_then_block_trace({"name": "g", "args": {}, "id": "c2", "type": "tool_call"}),
        allow_pending=True)
    assert [call.metadata for call in messages[1].tool_calls][1] == {}
    cut = [messages[0], messages[1].model_copy(update={"content": []})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(cut)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls[0]")
    one_cut = [messages[0], messages[1].model_copy(update={"content": messages[1].content[:1]})]
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(one_cut)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls")
    assert caught.value.detail == (
        "the calls' content blocks (metadata.langchain.content_block.at) leave a gap: the "
        "block of tool_calls[0] belongs at position 2, but only 1 content element comes "
        "before it, and tool_calls[1] keeps no block: content elements before it were taken "
        "out, or a call lost its block (keep the block of a call edited to lose it, or number "
        "the later blocks' positions anew)")
