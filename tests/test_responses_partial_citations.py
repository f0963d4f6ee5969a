"""A Responses ``url_citation`` annotation read without one of its four fields (absent, or
null) is written back as it was read; a citation that never had the field is still refused
(the API needs all four)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.messages import Citation
from tracebridge.registry import get_adapter

ROOT = Path(__file__).resolve().parents[1]
TRACE = json.loads((ROOT / "golden_traces" / "openai_responses" / "web_search_citations.json")
                   .read_text(encoding="utf-8"))["trace"]
KEYS = ("url", "title", "start_index", "end_index")


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("how", ["absent", "null"])
def test_a_citation_read_without_a_field_is_written_back_as_it_was(key: str, how: str) -> None:
    trace: list[Any] = copy.deepcopy(TRACE)
    annotation = trace[2]["content"][0]["annotations"][0]
    assert annotation["type"] == "url_citation"
    assert key in annotation
    if how == "absent":
        del annotation[key]
    else:
        annotation[key] = None
    adapter = get_adapter("openai_responses")
    messages = adapter.to_messages(trace)
    cited = [m for m in messages if isinstance(m, AIMessage) and m.citations]
    assert len(cited) == 1
    assert getattr(cited[0].citations[0], key) is None
    assert adapter.from_messages(messages) == trace


@pytest.mark.parametrize("key", KEYS)
def test_a_citation_without_a_field_from_elsewhere_is_refused(key: str) -> None:
    fields: dict[str, Any] = {"url": "https://example.com", "title": "Example",
                              "start_index": 0, "end_index": 2, key: None}
    messages = [HumanMessage(content="hi"), AIMessage(content="ok", citations=[Citation(**fields)])]
    with pytest.raises(TraceError) as caught:
        get_adapter("openai_responses").from_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].citations[0]"
    )
    assert f"a url_citation annotation needs {key}; pass drop=['citations']" in str(error)
