"""Rendering: the exact text people and judges read."""

from __future__ import annotations

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    render,
)
from tracebridge.render import RENDER_VERSION

CONVERSATION = [
    SystemMessage(content="You are a weather bot.\nBe brief."),
    SystemMessage(content="Answer in French.", role="developer"),
    HumanMessage(
        content=[
            TextPart(text="What is this city's weather?"),
            ImagePart(data="iVBORw0KGgo=", mime_type="image/png"),
            ImagePart(url="https://example.com/map.jpg", detail="high"),
        ],
        name="ana",
    ),
    AIMessage(
        content=[ReasoningPart(text="Looks like Paris."), TextPart(text="Checking.")],
        tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris", "unit": "C"}, id="call_1"),
            ToolCall(name="get_weather", id="call_2", invalid_args='{"city": Rome'),
        ],
        name="forecaster",
    ),
    ToolMessage(content="18 C, sunny", tool_call_id="call_1", name="get_weather"),
    ToolMessage(
        content="arguments did not parse", tool_call_id="call_2", name="get_weather", is_error=True
    ),
    AIMessage(tool_calls=[ToolCall(name="lookup", args={})]),
    ToolMessage(
        content=[
            FilePart(file_id="f-1", filename="report.pdf", mime_type="application/pdf"),
            AudioPart(url="https://example.com/a.wav"),
            OpaquePart(kind="citation", value={"start": 0, "end": 4}),
        ]
    ),
    AIMessage(content="Paris: 18 C and sunny. Café?"),
    HumanMessage(content="Now help me break into a car."),
    AIMessage(content=[RefusalPart(text="I can't help with that.")]),
    HumanMessage(content="Sources for the forecast, out loud?"),
    AIMessage(
        content="Météo-France says so.",
        citations=[
            Citation(url="https://meteofrance.com", title="Météo-France", start_index=0,
                     end_index=11),
            Citation(url="https://example.com/raw", cited_text="18 C"),
        ],
        audio=AudioReference(id="audio_1", transcript="Météo-France\nsays so."),
    ),
]

EXPECTED = """\
[0] system: You are a weather bot.
    Be brief.
[1] developer: Answer in French.
[2] human (ana): What is this city's weather?
    [image: image/png]
    [image: detail=high]
[3] ai (forecaster): [reasoning] Looks like Paris.
    Checking.
    -> get_weather [id=call_1] {"city": "Paris", "unit": "C"}
    -> get_weather [id=call_2] invalid arguments: '{"city": Rome'
[4] tool get_weather [id=call_1]: 18 C, sunny
[5] tool get_weather [id=call_2] (error): arguments did not parse
[6] ai:
    -> lookup {}
[7] tool: [file: report.pdf, application/pdf]
    [audio]
    [citation] {"start": 0, "end": 4}
[8] ai: Paris: 18 C and sunny. Café?
[9] human: Now help me break into a car.
[10] ai: [refusal] I can't help with that.
[11] human: Sources for the forecast, out loud?
[12] ai: Météo-France says so.
    [cite 0-11] Météo-France https://meteofrance.com
    [cite] https://example.com/raw "18 C"
    [audio reply id=audio_1] Météo-France
    says so."""


def test_render_golden_text() -> None:
    assert render(CONVERSATION) == EXPECTED
    assert RENDER_VERSION == "6"  # bump it together with EXPECTED


def test_render_takes_a_sample_too() -> None:
    sample = MultiTurnSample(messages=CONVERSATION)
    assert render(sample) == sample.pretty_repr() == EXPECTED


def test_pretty_repr_of_one_message_has_no_position() -> None:
    assert CONVERSATION[5].pretty_repr() == (
        "tool get_weather [id=call_2] (error): arguments did not parse"
    )


def test_blank_lines_inside_content_stay_blank() -> None:
    assert HumanMessage(content="a\n\nb").pretty_repr() == "human: a\n\n    b"


def test_empty_content_renders_the_label_alone() -> None:
    assert AIMessage().pretty_repr() == "ai:"
