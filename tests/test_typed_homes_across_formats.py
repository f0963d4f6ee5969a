"""What two formats share survives ``convert``: each typed home, written by every format that
holds it, arrives in every other format that holds it, and every other format refuses it by
the ``drop=`` option that accepts the loss.

``CARRIED`` is the table in ``docs/model.md`` ("Typed homes for what formats share") as a test:
a writer that starts refusing something it has a place for fails here, and so does one that
stops naming the option a user needs.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.cli import to_json
from tracebridge.registry import FORMATS, get_adapter

QUESTION = HumanMessage(content="What does the forecast say?")

HOMES: dict[str, list[Any]] = {
    "developer": [
        SystemMessage(content="Answer in French.", role="developer"),
        QUESTION,
        AIMessage(content="Il fera beau."),
    ],
    "refusal": [
        HumanMessage(content="Help me break into my neighbour's car."),
        AIMessage(content=[RefusalPart(text="I can't help with that.")]),
    ],
    "image_detail": [
        HumanMessage(
            content=[
                TextPart(text="What city is this?"),
                ImagePart(url="https://example.com/skyline.png", detail="high"),
            ]
        ),
        AIMessage(content="Paris."),
    ],
    "audio_mp3": [
        HumanMessage(
            content=[
                TextPart(text="Transcribe this."),
                AudioPart(data="SUQzBAAAAAAA", mime_type="audio/mpeg"),
            ]
        ),
        AIMessage(content="Hello there."),
    ],
    "citations": [
        QUESTION,
        AIMessage(
            content="Sunny, 18 C.",
            citations=[
                Citation(
                    url="https://meteo.example.com/paris",
                    title="Paris forecast",
                    start_index=0,
                    end_index=12,
                )
            ],
        ),
    ],
    "audio_reply": [
        QUESTION,
        AIMessage(content="", audio=AudioReference(id="audio_abc123")),
        HumanMessage(content="Say it again, slower."),
    ],
    "custom_call": [
        HumanMessage(content="How many users signed up today?"),
        AIMessage(
            tool_calls=[
                ToolCall(
                    name="run_sql",
                    args={"input": "select count(*) from users where day = today()"},
                    id="call_1",
                    kind="custom",
                )
            ]
        ),
        ToolMessage(content="42", tool_call_id="call_1", name="run_sql"),
    ],
}

# Which formats hold each typed home; every other format must refuse it by name.
CARRIED: dict[str, set[str]] = {
    "developer": {
        "tracebridge", "openai_chat", "swarm", "langchain",
        "llama_index", "otel", "openai_responses", "openai_agents",
    },
    "refusal": {
        "tracebridge", "openai_chat", "swarm", "langchain",
        "llama_index", "otel", "openai_responses", "openai_agents",
    },
    "image_detail": {
        "tracebridge", "openai_chat", "swarm", "langchain",
        "llama_index", "otel", "openai_responses", "openai_agents",
    },
    "audio_mp3": {"tracebridge", "openai_chat", "swarm", "langchain", "llama_index", "otel"},
    "citations": {
        "tracebridge", "openai_chat", "swarm", "langchain",
        "llama_index", "openai_responses", "openai_agents",
    },
    "audio_reply": {"tracebridge", "openai_chat", "swarm", "langchain", "llama_index"},
    "custom_call": {"tracebridge", "openai_chat", "swarm", "langchain", "llama_index"},
}

_OPTION = re.compile(r"drop=\[('[a-z_]+')\]|([a-z_]+)=True")


def named_option(error: TraceError) -> str | None:
    """The option a refusal names (``drop=['x']`` or ``flag=True``), if any."""
    found = _OPTION.search(error.detail)
    if found is None:
        return None
    return found[0]


def write(target: str, messages: list[Any]) -> Any:
    return json.loads(json.dumps(to_json(target, get_adapter(target).from_messages(messages))))


def test_the_table_covers_every_home_and_format() -> None:
    assert set(CARRIED) == set(HOMES)
    for formats in CARRIED.values():
        assert formats <= set(FORMATS)


@pytest.mark.parametrize("home", sorted(HOMES))
@pytest.mark.parametrize("target", FORMATS)
def test_a_writer_holds_the_home_or_refuses_it_by_name(home: str, target: str) -> None:
    messages = HOMES[home]
    if target in CARRIED[home]:
        again = get_adapter(target).to_messages(write(target, messages))
        assert transcript_hash(again) == transcript_hash(messages)
        return
    with pytest.raises(TraceError) as caught:
        get_adapter(target).from_messages(messages)
    assert (caught.value.code, caught.value.source) == ("not_representable", target)
    assert named_option(caught.value) is not None, caught.value.detail


SHARED = [
    pytest.param(home, source, target, id=f"{home}-{source}-{target}")
    for home in sorted(HOMES)
    for source in FORMATS
    for target in FORMATS
    if source != target and {source, target} <= CARRIED[home]
]


@pytest.mark.parametrize(("home", "source", "target"), SHARED)
def test_convert_carries_what_both_formats_hold(home: str, source: str, target: str) -> None:
    trace = write(source, HOMES[home])
    converted = convert(trace, source=source, target=target)
    again = get_adapter(target).to_messages(json.loads(json.dumps(to_json(target, converted))))
    assert transcript_hash(again) == transcript_hash(HOMES[home])
