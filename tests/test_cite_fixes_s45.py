"""A citation the Chat Completions API cannot take is refused, not written in part.

The API's ``url_citation`` annotation has ``url``, ``title``, ``start_index`` and
``end_index``, all four required (the OpenAI SDK's ``ChatCompletionMessage`` refuses one
without any of them). A ``Citation`` from another format that lacks one is
``not_representable`` at ``messages[i].citations[k]``, and ``drop=["citations"]`` leaves it
out; one read so from a Chat Completions trace (the key left out or null) is written back as
it was read.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from tracebridge import AIMessage, Citation, HumanMessage, TraceError, convert
from tracebridge.adapters import llama_index, openai_chat, swarm

ADAPTERS = [openai_chat, swarm]
WHOLE = {"url": "https://x.example", "title": "X", "start_index": 0, "end_index": 5}
ASKED = HumanMessage(content="q")


def cited(**missing: None) -> list[Any]:
    """A question and a reply citing ``WHOLE`` without the keys named in ``missing``."""
    fields = {key: value for key, value in WHOLE.items() if key not in missing}
    return [ASKED, AIMessage(content="hello", citations=[Citation(**fields)])]


def refused(adapter: ModuleType, messages: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    return caught.value


def valid_for_the_sdk(written: list[dict[str, Any]]) -> None:
    """Every assistant message written is one the OpenAI SDK takes, annotations included."""
    for message in written:
        if message["role"] == "assistant":
            ChatCompletionMessage.model_validate(message)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    ("missing", "named"),
    [
        (("url",), "url"),
        (("title",), "title"),
        (("start_index",), "start_index"),
        (("end_index",), "end_index"),
        (("start_index", "end_index"), "start_index, end_index"),
        (("title", "start_index", "end_index"), "title, start_index, end_index"),
        (tuple(WHOLE), "url, title, start_index, end_index"),
    ],
    ids=["url", "title", "start", "end", "indexes", "all-but-url", "all"],
)
def test_a_citation_without_a_required_key_is_not_representable(
    adapter: ModuleType, missing: tuple[str, ...], named: str
) -> None:
    error = refused(adapter, cited(**dict.fromkeys(missing)))
    assert (error.code, error.index, error.path, error.source) == (
        "not_representable", 1, "messages[1].citations[0]", adapter.NAME
    )
    assert str(error) == (
        f"{adapter.NAME}: messages[1].citations[0]: a url_citation annotation needs {named}; "
        "pass drop=['citations'] to leave it out [not_representable]"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_the_lack_is_named_before_the_cited_text(adapter: ModuleType) -> None:
    reply = AIMessage(content="hello", citations=[Citation(url="https://x.example",
                                                           cited_text="words")])
    error = refused(adapter, [ASKED, reply])
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].citations[0]"
    )
    assert "needs title, start_index, end_index" in str(error)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_drop_citations_leaves_out_only_the_citation_that_lacks_a_key(
    adapter: ModuleType,
) -> None:
    reply = AIMessage(content="hello", citations=[
        Citation(url="https://x.example", start_index=0, end_index=5),
        Citation(**WHOLE),
        Citation(title="only a title"),
    ])
    written = adapter.from_messages([ASKED, reply], drop=["citations"])
    assert written[1] == {
        "role": "assistant",
        "content": "hello",
        "annotations": [{"type": "url_citation", "url_citation": WHOLE}],
    }
    valid_for_the_sdk(written)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_drop_citations_writes_no_annotations_when_every_citation_lacks_a_key(
    adapter: ModuleType,
) -> None:
    written = adapter.from_messages(cited(title=None), drop=["citations"])
    assert written[1] == {"role": "assistant", "content": "hello"}
    valid_for_the_sdk(written)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
def test_a_whole_citation_is_written_and_the_sdk_takes_it(adapter: ModuleType) -> None:
    written = adapter.from_messages(cited())
    assert written[1]["annotations"] == [{"type": "url_citation", "url_citation": WHOLE}]
    valid_for_the_sdk(written)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.NAME)
@pytest.mark.parametrize(
    "inner",
    [
        {"url": "https://x.example"},
        {"url": "https://x.example", "title": None, "start_index": 0},
        {},
        {"title": None, "url": None, "start_index": None, "end_index": None},
    ],
    ids=["left-out", "null-and-left-out", "empty", "all-null"],
)
def test_a_partial_url_citation_read_from_this_format_comes_back_as_it_was(
    adapter: ModuleType, inner: dict[str, Any]
) -> None:
    trace = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "hello",
         "annotations": [{"type": "url_citation", "url_citation": inner}]},
    ]
    assert adapter.from_messages(adapter.to_messages(trace)) == trace


def test_the_reader_lists_the_keys_left_out() -> None:
    trace = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "hello", "annotations": [
            {"type": "url_citation", "url_citation": {"url": "https://x.example", "title": None}}
        ]},
    ]
    assert openai_chat.to_messages(trace)[1].citations == [  # type: ignore[union-attr]
        Citation(url="https://x.example", metadata={"openai_chat": {
            "absent": ["start_index", "end_index"], "inner": {"title": None}
        }})
    ]


def test_a_whole_url_citation_is_read_with_nothing_kept() -> None:
    trace = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "hello",
         "annotations": [{"type": "url_citation", "url_citation": WHOLE}]},
    ]
    assert openai_chat.to_messages(trace)[1].citations == [  # type: ignore[union-attr]
        Citation(**WHOLE)
    ]


@pytest.mark.parametrize(
    ("absent", "shown"),
    [("title", "str 'title'"), (["title", "x"], "list ['title', 'x']"), ([1], "list [1]")],
    ids=["not-a-list", "unknown-key", "not-a-key"],
)
def test_a_kept_absent_list_that_names_no_url_citation_keys_is_malformed(
    absent: Any, shown: str
) -> None:
    citation = Citation(url="https://x.example", start_index=0, end_index=5,
                        metadata={"openai_chat": {"absent": absent}})
    error = refused(openai_chat, [ASKED, AIMessage(content="hello", citations=[citation])])
    path = "messages[1].citations[0].metadata.openai_chat.absent"
    assert (error.code, error.index, error.path) == ("malformed_event", 1, path)
    assert str(error) == (
        f"openai_chat: {path}: citations[0].metadata.openai_chat.absent must be a list of "
        f"url_citation keys (the keys the source's url_citation left out), as to_messages "
        f"writes it; got {shown} [malformed_event]"
    )


def _langchain_trace() -> list[Any]:
    from langchain_core.messages import AIMessage as LangChainAI
    from langchain_core.messages import HumanMessage as LangChainHuman

    return [
        LangChainHuman("q"),
        LangChainAI(content=[{"type": "text", "text": "hello", "annotations": [
            {"type": "citation", "url": "https://x.example", "start_index": 0, "end_index": 5}
        ]}]),
    ]


def test_a_langchain_citation_without_a_title_is_refused_converting_to_chat() -> None:
    with pytest.raises(TraceError) as caught:
        convert(_langchain_trace(), source="langchain", target="openai_chat")
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "not_representable", 1, "messages[1].citations[0]", "openai_chat"
    )
    assert "a url_citation annotation needs title; pass drop=['citations']" in str(error)


def test_a_langchain_citation_without_a_title_is_left_out_by_name() -> None:
    written = convert(_langchain_trace(), source="langchain", target="openai_chat",
                      target_options={"drop": ["citations"]})
    assert written[1] == {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}


# --- LlamaIndex: OpenAI's url_citation list in additional_kwargs["annotations"] ---------------
# (its OpenAI integration sends additional_kwargs on as the message dict's keys)


@pytest.mark.parametrize(
    ("missing", "named"),
    [(("title",), "title"), (("url",), "url"), (("start_index", "end_index"),
                                                "start_index, end_index")],
    ids=["title", "url", "indexes"],
)
def test_llama_index_refuses_a_citation_without_a_required_key(
    missing: tuple[str, ...], named: str
) -> None:
    error = refused(llama_index, cited(**dict.fromkeys(missing)))
    assert (error.code, error.index, error.path, error.source) == (
        "not_representable", 1, "messages[1].citations[0]", "llama_index"
    )
    assert str(error) == (
        "llama_index: messages[1].citations[0]: an OpenAI url_citation in "
        f"additional_kwargs['annotations'] needs {named}; drop=['citations'] leaves citations "
        "out [not_representable]"
    )


def test_llama_index_drop_citations_leaves_out_only_the_citation_that_lacks_a_key() -> None:
    reply = AIMessage(content="hello", citations=[Citation(url="https://x.example"),
                                                  Citation(**WHOLE)])
    written = llama_index.from_messages([ASKED, reply], drop=["citations"])
    annotations = written[1].additional_kwargs["annotations"]
    assert annotations == [{"type": "url_citation", "url_citation": WHOLE}]
    ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": "hello", "annotations": annotations}
    )
    alone = llama_index.from_messages(cited(url=None), drop=["citations"])
    assert alone[1].additional_kwargs == {}


@pytest.mark.parametrize(
    "inner",
    [{"url": "https://x.example"}, {"url": "https://x.example", "title": None}, {}],
    ids=["left-out", "null-and-left-out", "empty"],
)
def test_llama_index_writes_a_partial_entry_read_from_it_back_as_it_was(
    inner: dict[str, Any]
) -> None:
    from llama_index.core.base.llms.types import ChatMessage

    history = [
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="hello", additional_kwargs={
            "annotations": [{"type": "url_citation", "url_citation": inner}]
        }),
    ]
    written = llama_index.from_messages(llama_index.to_messages(history))
    assert written[1].additional_kwargs == history[1].additional_kwargs
