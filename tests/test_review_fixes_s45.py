"""What the review of this stop's fixes found: a kept list of the keys a Chat Completions
url_citation left out is written only when it is the one the reader keeps for the citation."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, Citation, HumanMessage, TraceError
from tracebridge.adapters import openai_chat, swarm

ADAPTERS = {"openai_chat": openai_chat, "swarm": swarm}


def _cited(citation: Citation) -> list[Any]:
    return [HumanMessage(content="q"), AIMessage(content="hi", citations=[citation])]


def _read_without_title(name: str) -> Citation:
    annotation = {"type": "url_citation",
                  "url_citation": {"url": "u", "start_index": 0, "end_index": 1}}
    read = ADAPTERS[name].to_messages(
        [{"role": "user", "content": "q"},
         {"role": "assistant", "content": "hi", "annotations": [annotation]}]
    )
    citation = read[1].citations[0]
    assert citation.metadata == {name: {"absent": ["title"]}}
    return citation


def _kept(name: str, absent: Any, **fields: Any) -> Citation:
    inner = fields.pop("inner", None)
    namespace = {"absent": absent} | ({} if inner is None else {"inner": inner})
    return Citation(**{"url": "u", "start_index": 0, "end_index": 1, **fields},
                    metadata={name: namespace})


CASES = {
    "a title filled in since": (
        lambda name: _read_without_title(name).model_copy(update={"title": "T"}),
        "['title']", "title has a value now"),
    "out of order": (
        lambda name: _kept(name, ["end_index", "title"], end_index=None),
        "['end_index', 'title']", "the reader lists them once each, in the annotation's order"),
    "listed twice": (
        lambda name: _kept(name, ["title", "title"]),
        "['title', 'title']", "the reader lists them once each, in the annotation's order"),
    "null in inner too": (
        lambda name: _kept(name, ["title"], inner={"title": None}),
        "['title']", "title is kept as null in inner too"),
    "empty": (
        lambda name: _kept(name, [], title="T"),
        "[]", "the reader keeps no empty list"),
}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_kept_absent_list_the_reader_would_not_keep_is_refused(name: str, case: str) -> None:
    build, shown, why = CASES[case]
    with pytest.raises(TraceError) as caught:
        ADAPTERS[name].from_messages(_cited(build(name)))
    path = f"messages[1].citations[0].metadata.{name}.absent"
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable", 1, path,
        f"{name}: {path}: the kept list of keys the source's url_citation left out ({shown}) "
        f"is not what this format's reader keeps for this citation ({why}): written, it "
        "would read back otherwise [not_representable]",
    )


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_the_list_the_reader_kept_still_round_trips(name: str) -> None:
    messages = _cited(_read_without_title(name))
    written = ADAPTERS[name].from_messages(messages)
    assert written[1]["annotations"] == [
        {"type": "url_citation", "url_citation": {"url": "u", "start_index": 0, "end_index": 1}}
    ]
    assert ADAPTERS[name].to_messages(written) == messages
