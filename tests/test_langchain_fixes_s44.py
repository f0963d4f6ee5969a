"""langchain: raw custom calls, v1 ``invalid_tool_call`` blocks, the Chat Completions blocks
written for a named file and wav/mp3 audio, v1 media by base64 ``data:`` URL, and
``langchain_core.load``'s serialized form.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.load import dumpd, dumps
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    ToolMessage,
    convert_to_openai_messages,
    messages_to_dict,
)

import tracebridge as tb
from tracebridge import TraceError, convert, transcript_hash
from tracebridge.adapters import langchain

LC = "langchain"


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# --- a raw custom call the lists lack --------------------------------------------------------

RAW_CUSTOM = {"id": "c1", "type": "custom", "custom": {"name": "grep", "input": "TODO"}}


def test_a_raw_custom_call_the_lists_lack_is_conflicting_fields() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [RAW_CUSTOM]})
    assert (ai.tool_calls, ai.invalid_tool_calls) == ([], [])  # LangChain's parsers skip it
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([HumanMessage("q"), ai], allow_pending=True)
    assert where(caught.value) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls[0]")
    assert "'custom' call without a 'function' object" in str(caught.value)


def test_a_raw_custom_call_beside_a_function_call_is_conflicting_fields_at_its_entry() -> None:
    function = {"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ai = AIMessage(
        "",
        tool_calls=[{"name": "f", "args": {}, "id": "c0"}],
        additional_kwargs={"tool_calls": [function, RAW_CUSTOM]},
    )
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([HumanMessage("q"), ai, ToolMessage("ok", tool_call_id="c0")])
    assert where(caught.value) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls[1]")


def test_a_raw_custom_call_answered_is_not_an_orphan_result() -> None:
    ai = AIMessage("", additional_kwargs={"tool_calls": [RAW_CUSTOM]})
    trace = [HumanMessage("q"), ai, ToolMessage("3 matches", tool_call_id="c1")]
    with pytest.raises(TraceError) as caught:
        convert(trace, source=LC, target="openai_chat")
    assert where(caught.value) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls[0]")


def test_a_kept_raw_custom_call_is_refused_on_the_way_back() -> None:
    message = tb.AIMessage(
        content="", metadata={LC: {"additional_kwargs": {"tool_calls": [RAW_CUSTOM]}}})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([tb.HumanMessage(content="q"), message])
    assert where(caught.value) == ("not_representable", 1, "messages[1].metadata")


# --- the v1 invalid_tool_call block -----------------------------------------------------------

INVALID = {"name": "f", "args": "{bad", "id": "c1", "error": "not JSON"}


def replies() -> tuple[AIMessage, AIMessage]:
    """A Responses reply whose call's arguments did not parse, in v0 and in v1 content."""
    v0 = AIMessage(
        content=[{"type": "text", "text": "calling"},
                 {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{bad",
                  "id": "fc_1"}],
        invalid_tool_calls=[INVALID],
        response_metadata={"model_provider": "openai"},
    )
    v1 = AIMessage(
        content=v0.content_blocks,
        invalid_tool_calls=v0.invalid_tool_calls,
        response_metadata={"model_provider": "openai", "output_version": "v1"},
    )
    return v0, v1


RESULT = ToolMessage("error: bad arguments", tool_call_id="c1", status="error")


def test_the_v1_invalid_tool_call_block_maps_onto_its_call() -> None:
    v0, v1 = replies()
    assert v1.content[1]["type"] == "invalid_tool_call"
    typed0 = langchain.to_messages([HumanMessage("q"), v0, RESULT])
    typed1 = langchain.to_messages([HumanMessage("q"), v1, RESULT])
    assert typed1[1].content == [tb.TextPart(text="calling")]
    call = typed1[1].tool_calls[0]
    assert (call.name, call.id, call.invalid_args) == ("f", "c1", "{bad")
    assert call.metadata[LC]["content_block"] == {
        "at": 1,
        "block": {"type": "invalid_tool_call", "error": "not JSON",
                  "extras": {"item_id": "fc_1"}},
    }
    assert transcript_hash(typed1) == transcript_hash(typed0)


def test_the_v1_invalid_tool_call_block_round_trips_and_converts() -> None:
    _, v1 = replies()
    trace = [HumanMessage("q"), v1, RESULT]
    back = langchain.from_messages(langchain.to_messages(trace))
    assert messages_to_dict(back) == messages_to_dict(trace)
    out = convert(trace, source=LC, target="openai_chat", target_options={"drop": ["is_error"]})
    assert out[1]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{bad"}}]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"args": "{other"}, "messages[1].content[0].args"),
        ({"name": "g"}, "messages[1].content[0].name"),
    ],
)
def test_an_invalid_tool_call_block_that_disagrees_is_conflicting_fields(
    change: dict[str, Any], path: str
) -> None:
    block = {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "{bad", **change}
    ai = AIMessage(content=[block], invalid_tool_calls=[INVALID])
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([HumanMessage("q"), ai, RESULT])
    assert where(caught.value) == ("conflicting_fields", 1, path)


def test_an_invalid_tool_call_block_naming_a_parsed_call_is_conflicting_fields() -> None:
    block = {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "{}"}
    ai = AIMessage(content=[block], tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
    with pytest.raises(TraceError) as caught:
        langchain.to_messages([HumanMessage("q"), ai, RESULT])
    assert where(caught.value) == ("conflicting_fields", 1, "messages[1].content[0].id")


def test_an_invalid_tool_call_block_alone_is_the_call() -> None:
    block = {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "{bad", "error": None}
    ai = AIMessage(content=[block])
    assert (ai.tool_calls, ai.invalid_tool_calls) == ([], [])
    trace = [HumanMessage("q"), ai, RESULT]
    typed = langchain.to_messages(trace)
    assert typed[1].content == ""
    assert typed[1].tool_calls == [
        tb.ToolCall(
            name="f", id="c1", invalid_args="{bad",
            metadata={LC: {"in_content": True, "content_block": {
                "at": 0, "block": {"type": "invalid_tool_call", "error": None}}}},
        )
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)


def test_an_invalid_tool_call_block_for_a_call_with_parsed_args_is_refused() -> None:
    _, v1 = replies()
    typed = langchain.to_messages([HumanMessage("q"), v1, RESULT])
    call = typed[1].tool_calls[0].model_copy(update={"invalid_args": None, "args": {"x": 1}})
    message = typed[1].model_copy(update={"tool_calls": [call]})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([typed[0], message, typed[2]])
    assert where(caught.value) == ("not_representable", 1, "messages[1].tool_calls[0].args")


# --- the Chat Completions blocks for a named file and wav/mp3 audio ---------------------------


def test_a_named_file_by_id_and_mp3_audio_survive_langchains_send_on() -> None:
    chat = [{"role": "user", "content": [
        {"type": "text", "text": "summarise"},
        {"type": "file", "file": {"file_id": "file-abc", "filename": "report.pdf"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
    ]}]
    ours = convert(chat, source="openai_chat", target=LC)
    assert ours[0].content[1:] == [
        {"type": "file", "file": {"file_id": "file-abc", "filename": "report.pdf"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
    ]
    assert convert_to_openai_messages(ours) == chat
    assert langchain.to_messages(ours) == [tb.HumanMessage(content=[
        tb.TextPart(text="summarise"),
        tb.FilePart(file_id="file-abc", filename="report.pdf"),
        tb.AudioPart(data="AAAA", mime_type="audio/mpeg"),
    ])]


@pytest.mark.parametrize(
    ("part", "block"),
    [
        (tb.AudioPart(data="SUQz", mime_type="audio/mpeg"),
         {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}}),
        (tb.AudioPart(data="UklG", mime_type="audio/wav"),
         {"type": "audio", "base64": "UklG", "mime_type": "audio/wav"}),  # sent on as wav
        (tb.AudioPart(data="T2dn", mime_type="audio/ogg"),
         {"type": "audio", "base64": "T2dn", "mime_type": "audio/ogg"}),
        (tb.FilePart(file_id="f1"), {"type": "file", "file_id": "f1"}),
        (tb.FilePart(file_id="f1", filename="a.pdf", mime_type="application/pdf"),
         {"type": "file", "file_id": "f1", "mime_type": "application/pdf",
          "filename": "a.pdf"}),
    ],
)
def test_the_default_block_of_a_file_or_audio_part(part: Any, block: dict[str, Any]) -> None:
    written = langchain.from_messages([tb.HumanMessage(content=[part])])
    assert written[0].content == [block]
    assert langchain.to_messages(written) == [tb.HumanMessage(content=[part])]


def test_a_v1_file_block_by_id_with_its_name_still_goes_back_as_it_was() -> None:
    trace = [HumanMessage([{"type": "file", "file_id": "f1", "filename": "a.pdf"}])]
    typed = langchain.to_messages(trace)
    assert typed[0].content[0].model_dump(exclude={"metadata"}) == tb.FilePart(
        file_id="f1", filename="a.pdf").model_dump(exclude={"metadata"})
    assert langchain.from_messages(typed) == trace


# --- v1 media by base64 data: URL -------------------------------------------------------------

URL = "data:image/png;base64,iVBORw0KGgo="


def test_a_v1_image_by_data_url_reads_as_the_image_url_form_does() -> None:
    text = {"type": "text", "text": "what is this?"}
    v1 = [HumanMessage(content=[text, {"type": "image", "url": URL}])]
    chat = [HumanMessage(content=[text, {"type": "image_url", "image_url": {"url": URL}}])]
    part = langchain.to_messages(v1)[0].content[1]
    assert (part.url, part.data, part.mime_type) == (None, "iVBORw0KGgo=", "image/png")
    assert part.metadata == {LC: {"shape": "image_data_url", "block": {"type": "image"}}}
    assert transcript_hash(langchain.to_messages(v1)) == transcript_hash(
        langchain.to_messages(chat))
    assert langchain.from_messages(langchain.to_messages(v1)) == v1
    out = convert(v1, source=LC, target="openai_chat")
    assert out[0]["content"][1] == {"type": "image_url", "image_url": {"url": URL}}


@pytest.mark.parametrize(
    ("block", "part"),
    [
        ({"type": "file", "url": "data:application/pdf;base64,JVBE", "filename": "r.pdf"},
         tb.FilePart(data="JVBE", mime_type="application/pdf", filename="r.pdf")),
        ({"type": "file", "url": "data:application/pdf;base64,JVBE",
          "extras": {"filename": "r.pdf"}},
         tb.FilePart(data="JVBE", mime_type="application/pdf", filename="r.pdf")),
        ({"type": "audio", "url": "data:audio/wav;base64,UklG"},
         tb.AudioPart(data="UklG", mime_type="audio/wav")),
    ],
)
def test_a_v1_file_or_audio_by_data_url_reads_as_inline_data(
    block: dict[str, Any], part: Any
) -> None:
    trace = [HumanMessage(content=[block])]
    typed = langchain.to_messages(trace)
    assert typed[0].content[0].model_dump(exclude={"metadata"}) == part.model_dump(
        exclude={"metadata"})
    assert langchain.from_messages(typed) == trace


# --- langchain_core.load's serialized form ----------------------------------------------------

TRACE = [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]


@pytest.mark.parametrize(
    "serialized", [dumpd(TRACE), json.loads(dumps(TRACE))], ids=["dumpd", "dumps"])
def test_the_load_form_is_refused_naming_how_to_load_it(serialized: Any) -> None:
    assert serialized[0]["type"] == "constructor"
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(serialized)
    assert where(caught.value) == ("malformed_event", 0, "messages[0]")
    message = str(caught.value)
    assert "langchain_core.load's serialized form of a HumanMessage" in message
    assert "langchain_core.load.load(obj, allowed_objects='messages')" in message


def test_convert_tells_the_load_form_and_says_how_to_load_it() -> None:
    assert langchain.detect(dumpd(TRACE)) is True
    with pytest.raises(TraceError) as caught:
        convert(dumpd(TRACE), target="openai_chat")
    assert where(caught.value) == ("malformed_event", 0, "messages[0]")
    assert "langchain_core.load.load" in str(caught.value)


def test_a_load_form_of_something_else_is_not_told_for_langchain() -> None:
    assert langchain.detect([{"lc": 1, "type": "constructor",
                              "id": ["langchain", "prompts", "PromptTemplate"],
                              "kwargs": {}}]) is False


# --- an invalid_tool_call block whose name or args is None, or missing ----------------------


def v1_reply(entry: dict[str, Any]) -> AIMessage:
    """The v1 form of a Responses reply whose one call is the ``invalid_tool_calls`` entry
    (a ``function_call`` block without ``arguments`` when its args are None)."""
    call = {"type": "function_call", "call_id": entry["id"], "name": entry["name"],
            "id": f"fc_{entry['id']}"}
    if entry["args"] is not None:
        call["arguments"] = entry["args"]
    v0 = AIMessage(content=[call], invalid_tool_calls=[entry],
                   response_metadata={"model_provider": "openai"})
    return AIMessage(content=v0.content_blocks, invalid_tool_calls=[entry],
                     response_metadata={"model_provider": "openai", "output_version": "v1"})


@pytest.mark.parametrize(
    ("entry", "kept"),
    [
        ({"name": "f", "args": None, "id": "c1", "error": "e"},
         {"type": "invalid_tool_call", "args": None, "error": "e",
          "extras": {"item_id": "fc_c1"}}),
        ({"name": None, "args": "{b", "id": "c1", "error": "e"},
         {"type": "invalid_tool_call", "name": None, "error": "e",
          "extras": {"item_id": "fc_c1"}}),
    ],
    ids=["args-None", "name-None"],
)
def test_a_v1_invalid_tool_call_block_with_a_none_comes_back_as_it_was(
    entry: dict[str, Any], kept: dict[str, Any]
) -> None:
    v1 = v1_reply(entry)
    assert v1.content[0] == {"type": "invalid_tool_call", "id": "c1", "name": entry["name"],
                             "args": entry["args"], "error": "e",
                             "extras": {"item_id": "fc_c1"}}
    trace = [HumanMessage("q"), v1, ToolMessage("r", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    call = typed[1].tool_calls[0]
    assert (call.name, call.id, call.invalid_args) == (entry["name"] or "", "c1",
                                                       entry["args"] or "")
    assert call.metadata[LC]["content_block"] == {"at": 0, "block": kept}
    back = langchain.from_messages(typed)
    assert back[1].content == v1.content
    assert messages_to_dict(back) == messages_to_dict(trace)
    assert langchain.to_messages(back) == typed


def test_an_edit_the_kept_none_no_longer_fits_is_refused_at_the_entry() -> None:
    entry = {"name": None, "args": None, "id": "c1", "error": "e"}
    trace = [HumanMessage("q"), v1_reply(entry), ToolMessage("r", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(trace)
    renamed = typed[1].tool_calls[0].model_copy(update={"name": "g"})
    message = typed[1].model_copy(update={"tool_calls": [renamed]})
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([typed[0], message, typed[2]])
    assert where(caught.value) == ("not_representable", 1, "messages[1].tool_calls[0].name")
    assert "invalid_tool_calls entry named None" in str(caught.value)


ALONE = [
    ({"type": "invalid_tool_call", "id": "c1", "name": "f", "args": None, "error": "e"},
     "f", {"type": "invalid_tool_call", "args": None, "error": "e"}, {}),
    ({"type": "invalid_tool_call", "id": "c1", "name": None, "args": "{x", "error": "e"},
     "", {"type": "invalid_tool_call", "name": None, "error": "e"}, {}),
    ({"type": "invalid_tool_call", "id": "c1", "name": "f", "error": "e"},
     "f", {"type": "invalid_tool_call", "error": "e"}, {"without_args": True}),
    # what langchain-core's stream bridge makes of an entry with name and args None
    ({"type": "invalid_tool_call", "id": "c1", "error": "e"},
     "", {"type": "invalid_tool_call", "error": "e"},
     {"without_args": True, "without_name": True}),
]


@pytest.mark.parametrize(
    ("block", "name", "kept", "marks"), ALONE,
    ids=["args-None", "name-None", "no-args", "no-name-no-args"],
)
def test_an_invalid_tool_call_block_alone_with_a_none_or_no_key_is_read(
    block: dict[str, Any], name: str, kept: dict[str, Any], marks: dict[str, Any]
) -> None:
    trace = [HumanMessage("q"), AIMessage(content=[block]), ToolMessage("r", tool_call_id="c1")]
    typed = langchain.to_messages(trace)
    assert typed[1].content == ""
    invalid_args = block["args"] if type(block.get("args")) is str else ""
    assert typed[1].tool_calls == [
        tb.ToolCall(name=name, id="c1", invalid_args=invalid_args, metadata={LC: {
            "in_content": True, "content_block": {"at": 0, "block": kept, **marks}}})
    ]
    assert langchain.to_messages(messages_to_dict(trace)) == typed
    back = langchain.from_messages(typed)
    assert back[1].content == [block]
    assert messages_to_dict(back) == messages_to_dict(trace)


@pytest.mark.parametrize(
    ("update", "written"),
    [
        ({"name": "g"}, {"id": "c1", "name": "g", "type": "invalid_tool_call", "error": "e"}),
        ({"invalid_args": "{y"},
         {"id": "c1", "type": "invalid_tool_call", "error": "e", "args": "{y"}),
    ],
    ids=["named", "given-text"],
)
def test_a_call_read_from_a_block_without_name_or_args_gets_them_once_edited(
    update: dict[str, Any], written: dict[str, Any]
) -> None:
    block = {"type": "invalid_tool_call", "id": "c1", "error": "e"}
    typed = langchain.to_messages(
        [HumanMessage("q"), AIMessage(content=[block]), ToolMessage("r", tool_call_id="c1")])
    call = typed[1].tool_calls[0].model_copy(update=update)
    message = typed[1].model_copy(update={"tool_calls": [call]})
    back = langchain.from_messages([typed[0], message, typed[2]])
    assert back[1].content == [written]
    again = langchain.to_messages(back)[1].tool_calls[0]
    assert (again.name, again.id, again.invalid_args) == (call.name, "c1", call.invalid_args)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(
        st.fixed_dictionaries({
            "name": st.sampled_from(["f", "g", None]),
            "args": st.sampled_from(["{bad", "not json", "", None]),
            "error": st.sampled_from(["e", None]),
        }),
        min_size=1,
        max_size=3,
    ),
    alone=st.booleans(),
)
def test_invalid_tool_call_blocks_of_langchain_replies_round_trip(
    entries: list[dict[str, Any]], alone: bool
) -> None:
    listed = [{**entry, "id": f"c{k}"} for k, entry in enumerate(entries)]
    blocks = [block for entry in listed for block in v1_reply(entry).content]
    ai = AIMessage(content=[{"type": "text", "text": "a"}, *blocks],
                   invalid_tool_calls=[] if alone else listed)
    trace = [HumanMessage("q"), ai,
             *(ToolMessage("r", tool_call_id=entry["id"]) for entry in listed)]
    typed = langchain.to_messages(trace)
    assert [call.id for call in typed[1].tool_calls] == [entry["id"] for entry in listed]
    back = langchain.from_messages(typed)
    assert messages_to_dict(back) == messages_to_dict(trace)
    assert langchain.to_messages(back) == typed
