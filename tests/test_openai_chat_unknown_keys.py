"""openai_chat and swarm writers: a key of their own namespace that no writer reads is
refused at the key, never dropped without a word (``adapters/openai_chat/_write_keys.py``).

The known keys are held to the reader: every key it keeps, over the golden traces, a trace
that keeps something at every level, and the law kits' generated traces, is one the writer
knows at that level, and the trace is written back whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.openai_chat._write_keys import (
    AUDIO_KEYS,
    CALL_KEYS,
    CITATION_KEYS,
    MESSAGE_KEYS,
    PART_KEYS,
)

from law_kits.openai_chat import KIT as CHAT_KIT
from law_kits.openai_chat import canonical
from law_kits.swarm import KIT as SWARM_KIT

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
ADAPTERS = [pytest.param(openai_chat, id="openai_chat"), pytest.param(swarm, id="swarm")]
H = HumanMessage(content="q")
KEEPS = {
    "user": "content_parts, fields, joined, joined_parts",
    "assistant": "annotations, content, content_parts, fields, joined, joined_parts, refusal",
    "tool": "content_parts, fields, joined, joined_parts",
    "function": "content, fields",
}


def refused(adapter: ModuleType, messages: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages, **options)
    assert caught.value.source == adapter.NAME
    return caught.value


def unknown_key(
    adapter: ModuleType, messages: list[Any], index: int, path: str, key: str, what: str,
    keeps: str,
) -> None:
    """``messages`` are refused as keeping ``key`` at ``path``, which no writer reads on
    ``what``."""
    error = refused(adapter, messages)
    assert (error.code, error.index, error.path) == ("not_representable", index, path)
    assert str(error) == (
        f"{adapter.NAME}: {path}: {key!r} is no key the {adapter.NAME} reader keeps on {what} "
        f"(it keeps {keeps}): nothing writes it, so it would be lost [not_representable]"
    )


# --- the finding's repro: unknown keys beside a message's fields ---------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_of_a_user_message_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    messages = [HumanMessage(content="hi", metadata={ns: {"bogus": 1}}), AIMessage(content="yo")]
    unknown_key(adapter, messages, 0, f"messages[0].metadata.{ns}.bogus", "bogus",
                "a user message", KEEPS["user"])


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_beside_fields_of_an_assistant_message_is_refused(
    adapter: ModuleType,
) -> None:
    ns = adapter.NAME
    messages = [
        HumanMessage(content="hi"),
        AIMessage(content="yo", metadata={ns: {"fields": {}, "zzz": [1]}}),
    ]
    unknown_key(adapter, messages, 1, f"messages[1].metadata.{ns}.zzz", "zzz",
                "an assistant message", KEEPS["assistant"])


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_key_that_is_no_name_is_refused_at_its_quoted_path(adapter: ModuleType) -> None:
    ns = adapter.NAME
    messages = [H, AIMessage(content="a", metadata={ns: {"finish-reason": "stop"}})]
    unknown_key(adapter, messages, 1, f"messages[1].metadata.{ns}['finish-reason']",
                "finish-reason", "an assistant message", KEEPS["assistant"])


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("message", "role", "key"),
    [
        (HumanMessage(content="q", metadata={"NS": {"annotations": []}}), "user", "annotations"),
        (HumanMessage(content="q", metadata={"NS": {"refusal": "absent"}}), "user", "refusal"),
        (SystemMessage(content="s", metadata={"NS": {"refusal": "part"}}), "system", "refusal"),
        (SystemMessage(content="s", role="developer", metadata={"NS": {"annotations": []}}),
         "developer", "annotations"),
    ],
    ids=["annotations-on-user", "refusal-on-user", "refusal-on-system",
         "annotations-on-developer"],
)
def test_an_assistant_key_on_another_role_is_refused(
    adapter: ModuleType, message: Any, role: str, key: str
) -> None:
    ns = adapter.NAME
    message = message.model_copy(update={"metadata": {ns: message.metadata["NS"]}})
    what = {"user": "a user message", "system": "a system message",
            "developer": "a developer message"}[role]
    unknown_key(adapter, [message], 0, f"messages[0].metadata.{ns}.{key}", key, what,
                KEEPS["user"])  # (a system or developer message keeps what a user one does)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_assistant_key_on_a_tool_or_function_result_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    by_id = [
        H,
        AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
        ToolMessage(content="r", tool_call_id="c1", metadata={ns: {"refusal": "absent"}}),
    ]
    unknown_key(adapter, by_id, 2, f"messages[2].metadata.{ns}.refusal", "refusal",
                "a tool message", KEEPS["tool"])
    legacy = [
        H,
        AIMessage(tool_calls=[ToolCall(name="f")]),
        ToolMessage(content="r", name="f", metadata={ns: {"annotations": []}}),
    ]
    unknown_key(adapter, legacy, 2, f"messages[2].metadata.{ns}.annotations", "annotations",
                "a function message", KEEPS["function"])


# --- parts -----------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("part", "key", "keeps"),
    [
        (TextPart(text="t", metadata={"NS": {"inner": {"x": 1}}}), "inner", "fields"),
        (ImagePart(url="https://example.com/a.png", metadata={"NS": {"format": "png"}}),
         "format", "detail, fields, inner"),
        (AudioPart(data="UklGRg==", mime_type="audio/wav", metadata={"NS": {"zzz": 1}}),
         "zzz", "fields, format, inner"),
        (FilePart(file_id="file-1", metadata={"NS": {"verbatim": True}}), "verbatim",
         "fields, inner"),
        (OpaquePart(kind="x_vendor", value={"type": "x_vendor"},
                    metadata={"NS": {"verbatim": True, "fields": {"x": 1}}}),
         "fields", "verbatim"),
    ],
    ids=["text-inner", "image-format", "audio-unknown", "file-verbatim", "opaque-fields"],
)
def test_an_unknown_key_of_a_user_part_is_refused(
    adapter: ModuleType, part: Any, key: str, keeps: str
) -> None:
    ns = adapter.NAME
    part = part.model_copy(update={"metadata": {ns: part.metadata["NS"]}})
    messages = [HumanMessage(content=[TextPart(text="a"), part])]
    unknown_key(adapter, messages, 0, f"messages[0].content[1].metadata.{ns}.{key}", key,
                f"{'an' if part.type[0] in 'aio' else 'a'} {part.type} part", keeps)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_of_a_refusal_part_in_a_reply_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    reply = AIMessage(content=[TextPart(text="a"), RefusalPart(text="no", metadata={
        ns: {"fields": {"x_cache": 1}, "inner": {"x": 1}}})])
    unknown_key(adapter, [H, reply], 1, f"messages[1].content[1].metadata.{ns}.inner", "inner",
                "a refusal part", "fields")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_part_left_out_by_name_is_not_looked_at(adapter: ModuleType) -> None:
    ns = adapter.NAME
    opaque = OpaquePart(kind="json", value={"a": 1}, metadata={ns: {"zzz": 1}})
    messages = [HumanMessage(content=[TextPart(text="a"), opaque])]
    assert adapter.from_messages(messages, drop=["opaque_parts"]) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}]}
    ]


# --- tool calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_of_a_function_call_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    call = ToolCall(name="f", id="c1", metadata={ns: {"fields": {"x": 1}, "zzz": 1}})
    messages = [H, AIMessage(tool_calls=[call]), ToolMessage(content="r", tool_call_id="c1")]
    unknown_key(adapter, messages, 1, f"messages[1].tool_calls[0].metadata.{ns}.zzz", "zzz",
                "a function tool call", "arguments, fields, inner")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_arguments_kept_on_a_custom_call_are_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    call = ToolCall(name="sql", id="c1", kind="custom", args={"input": "select 1"},
                    metadata={ns: {"arguments": "select 1"}})
    messages = [H, AIMessage(tool_calls=[call]), ToolMessage(content="r", tool_call_id="c1")]
    unknown_key(adapter, messages, 1, f"messages[1].tool_calls[0].metadata.{ns}.arguments",
                "arguments", "a custom tool call", "fields, inner")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_fields_kept_on_an_id_less_call_are_refused(adapter: ModuleType) -> None:
    # The legacy function_call is one object: the reader keeps its unknown keys as inner.
    ns = adapter.NAME
    call = ToolCall(name="f", metadata={ns: {"fields": {"x_trace": 1}}})
    messages = [H, AIMessage(tool_calls=[call]), ToolMessage(content="r", name="f")]
    unknown_key(adapter, messages, 1, f"messages[1].tool_calls[0].metadata.{ns}.fields",
                "fields", "an id-less call (the legacy function_call)", "arguments, inner")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_call_left_out_by_name_is_not_looked_at(adapter: ModuleType) -> None:
    ns = adapter.NAME
    call = ToolCall(name="f", id="c1", metadata={ns: {"zzz": 1}})
    written = adapter.from_messages([H, AIMessage(content="a", tool_calls=[call])],
                                    drop=["unanswered_calls"])
    assert written == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_argument_text_that_is_no_text_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    call = ToolCall(name="f", id="c1", args={"a": 1}, metadata={ns: {"arguments": {"a": 1}}})
    messages = [H, AIMessage(tool_calls=[call]), ToolMessage(content="r", tool_call_id="c1")]
    error = refused(adapter, messages)
    path = f"messages[1].tool_calls[0].metadata.{ns}.arguments"
    assert (error.code, error.index, error.path) == ("malformed_event", 1, path)
    assert str(error) == (
        f"{ns}: {path}: tool_calls[0].metadata.{ns}.arguments must be a string (the call's "
        f"argument text), as to_messages writes it; got dict {{'a': 1}} [malformed_event]"
    )


# --- citations and the audio reply -----------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_of_a_citation_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    cited = Citation(url="https://example.com", title="T", start_index=0, end_index=1,
                     metadata={ns: {"inner": {"x": 1}, "zzz": 2}})
    unknown_key(adapter, [H, AIMessage(content="a", citations=[cited])], 1,
                f"messages[1].citations[0].metadata.{ns}.zzz", "zzz", "a citation",
                "absent, fields, inner")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_unknown_key_of_an_audio_reply_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    audio = AudioReference(id="audio_1", metadata={ns: {"inner": {"voice": "alloy"}}})
    unknown_key(adapter, [H, AIMessage(audio=audio)], 1,
                f"messages[1].audio.metadata.{ns}.inner", "inner", "an audio reply", "fields")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_citation_dropped_for_its_text_keeps_its_kept_fields(adapter: ModuleType) -> None:
    # drop=["citations"] leaves out a citation with nothing but its text; one that keeps
    # fields of its own still says something, and is written (it was left out whole). It is
    # one read so (every url_citation key left out): another is left out for what it lacks.
    ns = adapter.NAME
    absent = ["url", "title", "start_index", "end_index"]
    cited = Citation(cited_text="x", metadata={ns: {"absent": absent, "fields": {"x_rank": 1}}})
    written = adapter.from_messages([H, AIMessage(content="a", citations=[cited])],
                                    drop=["citations"])
    assert written[1] == {"role": "assistant", "content": "a", "annotations": [
        {"type": "url_citation", "url_citation": {}, "x_rank": 1}]}
    assert adapter.to_messages(written)[1].citations == [cited.model_copy(
        update={"cited_text": None})]


# --- values of known keys the writer would not act on ----------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("content", "form", "shape", "read_back"),
    [
        ([RefusalPart(text="no")], "bogus", "1 part(s), no refusal key", "the spelling 'part'"),
        ([RefusalPart(text="no")], "null", "content null, a refusal key", "no spelling"),
        ([RefusalPart(text="")], "empty", "content '', a refusal key", "no spelling"),
        ([TextPart(text="a"), TextPart(text="b"), RefusalPart(text="no")], "after_text",
         "3 part(s), no refusal key", "no spelling"),
        ([TextPart(text="a"), RefusalPart(text="no")], "part", "2 part(s), no refusal key",
         "no spelling"),
        ("a", "absent", "content 'a', no refusal key", "no spelling"),
    ],
    ids=["unknown", "null-beside-text", "empty-beside-nothing", "after-text-beside-parts",
         "part-beside-text", "no-refusal"],
)
def test_a_refusal_spelling_the_message_is_not_written_in_is_refused(
    adapter: ModuleType, content: Any, form: str, shape: str, read_back: str
) -> None:
    ns = adapter.NAME
    reply = AIMessage(content=content, metadata={ns: {"refusal": form}})
    error = refused(adapter, [H, reply])
    path = f"messages[1].metadata.{ns}.refusal"
    assert (error.code, error.index, error.path) == ("not_representable", 1, path)
    assert str(error) == (
        f"{ns}: {path}: the kept refusal spelling {form!r} is not how this message's content "
        f"({shape}) is written: it reads back with {read_back}, so the kept one would be "
        "lost [not_representable]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_content_form_beside_a_refusal_spelling_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    reply = AIMessage(content=[RefusalPart(text="no")],
                      metadata={ns: {"content": "null", "refusal": "absent"}})
    error = refused(adapter, [H, reply])
    path = f"messages[1].metadata.{ns}.content"
    assert (error.code, error.index, error.path) == ("not_representable", 1, path)
    assert str(error) == (
        f"{ns}: {path}: the kept form 'null' of an empty content beside the refusal spelling "
        "'absent': the reader keeps only the refusal's (it names the content too), so the "
        "form would be lost [not_representable]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_annotations_kept_as_no_list_are_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    reply = AIMessage(content="a", metadata={ns: {"annotations": {"type": "file_citation"}}})
    error = refused(adapter, [H, reply])
    path = f"messages[1].metadata.{ns}.annotations"
    assert (error.code, error.index, error.path) == ("malformed_event", 1, path)
    assert str(error) == (
        f"{ns}: {path}: metadata.{ns}.annotations must be a list (one entry per annotation), "
        "as to_messages writes it; got dict {'type': 'file_citation'} [malformed_event]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_audio_format_that_is_no_text_is_refused(adapter: ModuleType) -> None:
    ns = adapter.NAME
    part = AudioPart(data="UklGRg==", mime_type="audio/mpeg", metadata={ns: {"format": 3}})
    error = refused(adapter, [HumanMessage(content=[part])])
    path = f"messages[0].content[0].metadata.{ns}.format"
    assert (error.code, error.index, error.path) == ("malformed_event", 0, path)
    assert str(error) == (
        f"{ns}: {path}: content[0].metadata.{ns}.format must be a string (the source's audio "
        "format), as to_messages writes it; got int 3 [malformed_event]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_each_refusal_spelling_the_reader_keeps_is_written(adapter: ModuleType) -> None:
    ns = adapter.NAME
    for content, form in [
        ([RefusalPart(text="")], "null"),
        ([RefusalPart(text="no")], "absent"),
        ([RefusalPart(text="no")], "empty"),
        ([TextPart(text="a"), RefusalPart(text="no")], "after_text"),
        ([TextPart(text="a"), TextPart(text="b"), RefusalPart(text="no")], "after_parts"),
        ([RefusalPart(text="no")], "part"),
    ]:
        reply = AIMessage(content=content, metadata={ns: {"refusal": form}})
        assert adapter.to_messages(adapter.from_messages([H, reply]))[1] == reply


# --- the known keys are what the reader keeps ------------------------------------------------


def kept_keys(messages: list[Any], ns: str) -> set[tuple[str, str, str]]:
    """(level, kind, key) of every key the reader kept under ``ns``."""
    found: set[tuple[str, str, str]] = set()
    for message in messages:
        role = {"human": "user", "ai": "assistant", "system": message.role if isinstance(
            message, SystemMessage) else "", "tool": "tool"}[message.type]
        if isinstance(message, ToolMessage) and message.tool_call_id is None:
            role = "function"
        found |= {("message", role, key) for key in message.metadata.get(ns, {})}
        if isinstance(message.content, list):
            for part in message.content:
                found |= {("part", part.type, key) for key in part.metadata.get(ns, {})}
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                way = call.kind if call.id is not None else "legacy"
                found |= {("call", way, key) for key in call.metadata.get(ns, {})}
            for citation in message.citations:
                found |= {("citation", "", key) for key in citation.metadata.get(ns, {})}
            if message.audio is not None:
                found |= {("audio", "", key) for key in message.audio.metadata.get(ns, {})}
    return found


KNOWN = {"message": MESSAGE_KEYS, "part": PART_KEYS, "call": CALL_KEYS,
         "citation": {"": CITATION_KEYS}, "audio": {"": AUDIO_KEYS}}


def unknown_to_the_writer(found: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    return {(level, kind, key) for level, kind, key in found if key not in KNOWN[level][kind]}


def golden(name: str) -> list[Any]:
    return [
        pytest.param(path, id=path.stem)
        for path in sorted((GOLDEN / name).glob("*.json"))
    ]


# A trace that keeps something at every level the reader keeps things at.
EVERY_LEVEL = [
    {"role": "developer", "content": "Be brief.", "x_dev": 1},
    {"role": "user", "content": [
        {"type": "text", "text": "look", "x_cache": {"mode": "explicit"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "x_q": 1},
         "x_part": 2},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "mpeg", "x": 1},
         "x_part": 3},
        {"type": "file", "file": {"file_id": "file-1", "x_size": 9}, "x_part": 4},
        {"type": "x_vendor", "payload": [1]},
    ], "name": None},
    {"role": "assistant", "content": None, "refusal": None, "x_seed": 7, "tool_calls": [
        {"id": "c1", "type": "function", "x_index": 0,
         "function": {"name": "f", "arguments": '{"a":1}', "x_strict": True}},
        {"id": "c2", "type": "custom", "x_index": 1,
         "custom": {"name": "sql", "input": "select 1", "x_grammar": "lark"}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "r1", "x_ms": 3},
    {"role": "tool", "tool_call_id": "c2", "content": "r2"},
    {"role": "assistant", "content": "see", "refusal": "no", "annotations": [
        {"type": "url_citation", "url_citation": {"url": "https://example.com", "x_score": 1},
         "x_extra": 2},
        {"type": "file_citation", "file_citation": {"file_id": "file-1"}},
    ], "audio": {"id": "audio_1", "x_voice": "alloy", "transcript": None}},
    {"role": "user", "content": "again"},
    {"role": "assistant", "content": None, "function_call": {
        "name": "g", "arguments": "", "x_legacy": True}},
    {"role": "function", "name": "g", "content": None},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
]


def test_the_every_level_trace_keeps_something_at_every_level() -> None:
    found = kept_keys(openai_chat.to_messages(EVERY_LEVEL), openai_chat.NAME)
    assert {level for level, _, _ in found} == set(KNOWN)
    assert unknown_to_the_writer(found) == set()
    assert openai_chat.from_messages(openai_chat.to_messages(EVERY_LEVEL)) == EVERY_LEVEL


@pytest.mark.parametrize(("adapter", "path"), [
    *[pytest.param(openai_chat, *p.values, id=f"openai_chat/{p.id}") for p in golden(
        "openai_chat")],
    *[pytest.param(swarm, *p.values, id=f"swarm/{p.id}") for p in golden("swarm")],
])
def test_every_key_the_reader_keeps_in_a_golden_trace_is_known(
    adapter: ModuleType, path: Path
) -> None:
    trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
    typed = adapter.to_messages(trace)
    assert unknown_to_the_writer(kept_keys(typed, adapter.NAME)) == set()
    assert adapter.from_messages(typed) == trace


@given(trace=CHAT_KIT.traces)
def test_every_key_the_reader_keeps_in_a_generated_trace_is_known(trace: Any) -> None:
    typed = openai_chat.to_messages(trace)
    assert unknown_to_the_writer(kept_keys(typed, openai_chat.NAME)) == set()
    assert canonical(openai_chat.from_messages(typed)) == canonical(trace)


@given(trace=SWARM_KIT.traces)
def test_every_key_the_reader_keeps_in_a_generated_swarm_history_is_known(trace: Any) -> None:
    typed = swarm.to_messages(trace)
    assert unknown_to_the_writer(kept_keys(typed, swarm.NAME)) == set()
    assert swarm.from_messages(typed) == trace


@given(messages=CHAT_KIT.conversations)
def test_every_key_of_a_generated_conversation_is_known(messages: Any) -> None:
    assert unknown_to_the_writer(kept_keys(messages, openai_chat.NAME)) == set()
    assert openai_chat.to_messages(openai_chat.from_messages(messages)) == messages


@given(data=st.data())
def test_the_reader_keeps_no_key_the_writer_does_not_know_after_a_swarm_write(
    data: st.DataObject,
) -> None:
    messages = data.draw(SWARM_KIT.conversations)
    written = swarm.from_messages(messages)
    assert unknown_to_the_writer(kept_keys(swarm.to_messages(written), swarm.NAME)) == set()


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_refusal_after_parts_all_left_out_by_name_is_written(adapter: ModuleType) -> None:
    # drop=["reasoning"] leaves out every part before the refusal: the spelling after_parts
    # has nothing left to come after, a loss the caller accepted by name.
    ns = adapter.NAME
    reply = AIMessage(content=[ReasoningPart(text="t"), RefusalPart(text="no")],
                      metadata={ns: {"refusal": "after_parts"}})
    assert adapter.from_messages([H, reply], drop=["reasoning"])[1] == {
        "role": "assistant", "content": "", "refusal": "no"}
