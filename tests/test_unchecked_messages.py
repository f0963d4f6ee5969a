"""A message made with ``model_construct`` or changed with ``model_copy(update=...)`` is not
checked by pydantic, so it may hold a field of another type than its model declares. Every
writer, the rules, the hash and rendering fell on such a field with a raw ``TypeError``,
``AttributeError`` or ``KeyError``; now they raise ``malformed_event`` at the field (found
only after the fall, so valid messages cost nothing more), and a fall of their own on valid
messages still shows as it is."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

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
    TraceError,
    check,
    render,
    transcript_hash,
    validate,
)
from tracebridge import hashing as hashing_module
from tracebridge import validation as validation_module
from tracebridge._shape import UNCHECKED, unchecked_field
from tracebridge.messages import Message
from tracebridge.metrics import ToolCallAccuracy, ToolCallF1
from tracebridge.registry import ADAPTER_NAMES, get_adapter

render_module = importlib.import_module("tracebridge.render")  # the package exports render()
GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
ASK = HumanMessage(content="q")

CASES: dict[str, list[Any]] = {
    "content=5": [HumanMessage.model_construct(content=5)],
    "content=None": [HumanMessage.model_construct(content=None)],
    "dict part": [HumanMessage.model_construct(content=[{"type": "text", "text": "x"}])],
    "metadata=5": [HumanMessage.model_construct(content="x", metadata=5)],
    "tool_calls=None": [ASK, AIMessage.model_construct(content="x", tool_calls=None)],
    "call dict": [
        ASK,
        AIMessage.model_construct(content="x", tool_calls=[{"name": "a", "args": {}, "id": "c"}]),
    ],
    "part text=5": [HumanMessage(content=[TextPart.model_construct(text=5)])],
    "not a message": ["hello"],
}
"""Messages of fields of another type than declared that made something raise a raw
exception before."""

WHERE = {
    "content=5": (0, "messages[0].content"),
    "content=None": (0, "messages[0].content"),
    "dict part": (0, "messages[0].content[0]"),
    "metadata=5": (0, "messages[0].metadata"),
    "tool_calls=None": (1, "messages[1].tool_calls"),
    "call dict": (1, "messages[1].tool_calls[0]"),
    "part text=5": (0, "messages[0].content[0].text"),
    "not a message": (0, "messages[0]"),
}

RAISED_RAW = ("content=5", "content=None", "dict part", "metadata=5", "tool_calls=None",
              "call dict")
"""What every writer raised a raw exception on (galtea also on ``part text=5``)."""

WRITER_TABLE = [
    *[(writer, case) for writer in ADAPTER_NAMES for case in RAISED_RAW],
    ("galtea", "part text=5"),
]


@pytest.mark.parametrize(("writer", "case"), WRITER_TABLE)
def test_a_writer_refuses_a_field_of_another_type_at_its_path(writer: str, case: str) -> None:
    with pytest.raises(TraceError) as caught:
        get_adapter(writer).from_messages(CASES[case])
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", *WHERE[case], writer,
    )
    assert "model_construct or model_copy(update=...) is not checked when made" in error.detail
    assert error.__cause__ is None
    assert error.__suppress_context__


def _validated(messages: list[Any]) -> None:
    validate(messages, allow_pending=True)


def _sampled(messages: list[Any]) -> None:
    MultiTurnSample(messages=messages)


def _checked(messages: list[Any]) -> None:
    raise check(messages, allow_pending=True)[-1]


READER_TABLE = [
    *[(name, reader, case) for name, reader in (
        ("validate", _validated), ("check", _checked), ("MultiTurnSample", _sampled),
        ("transcript_hash", transcript_hash),
    ) for case in ("tool_calls=None", "call dict")],
    ("transcript_hash", transcript_hash, "not a message"),
    *[("render", render, case) for case in (*RAISED_RAW, "part text=5", "not a message")
      if case != "metadata=5"],
]


@pytest.mark.parametrize(("name", "reader", "case"), [
    pytest.param(name, reader, case, id=f"{name}-{case}") for name, reader, case in READER_TABLE
])
def test_the_rules_the_hash_and_rendering_refuse_it_at_its_path(
    name: str, reader: Any, case: str
) -> None:
    with pytest.raises(TraceError) as caught:
        reader(CASES[case])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", *WHERE[case],
    )


@pytest.mark.parametrize("case", [c for c in RAISED_RAW if c != "metadata=5"] + ["part text=5"])
def test_pretty_repr_refuses_it_at_the_field(case: str) -> None:
    message = CASES[case][-1]
    with pytest.raises(TraceError) as caught:
        message.pretty_repr()
    path = WHERE[case][1].split(".", 1)[1]
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", None, path,
    )


@pytest.mark.parametrize("case", ["content=5", "content=None", "part text=5"])
def test_text_refuses_it_at_the_field(case: str) -> None:
    message = CASES[case][-1]
    with pytest.raises(TraceError) as caught:
        _ = message.text
    path = WHERE[case][1].split(".", 1)[1]
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", None, path,
    )


def test_text_of_a_message_missing_its_content_names_it() -> None:
    message = HumanMessage.model_construct(metadata={})  # type: ignore[call-arg]
    with pytest.raises(TraceError) as caught:
        _ = message.text
    assert (caught.value.code, caught.value.path) == ("malformed_event", "content")


def test_trace_error_is_none_of_the_exceptions_caught() -> None:
    assert not issubclass(TraceError, UNCHECKED)


# --- a fall of our own on valid messages is not blamed on them -----------------------------

VALID = [
    ASK,
    AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")]),
    ToolMessage(content="r", tool_call_id="c"),
    AIMessage(content="done"),
]


def _falls(*args: Any, **kwargs: Any) -> Any:
    raise TypeError("a bug of ours")


def _patches() -> list[Any]:
    from tracebridge.adapters import llama_index, openai_agents
    from tracebridge.adapters.galtea import _turns
    from tracebridge.adapters.langchain import _write as langchain_write
    from tracebridge.adapters.openai_chat import _write as chat_write
    from tracebridge.adapters.openai_responses import _write as responses_write
    from tracebridge.adapters.otel import _write as otel_write

    return [
        pytest.param(lambda: get_adapter("openai_chat").from_messages(VALID),
                     chat_write, "_write_all", _falls, id="openai_chat"),
        pytest.param(lambda: get_adapter("swarm").from_messages(VALID),
                     chat_write, "_write_all", _falls, id="swarm"),
        pytest.param(lambda: get_adapter("langchain").from_messages(VALID),
                     langchain_write, "native", _falls, id="langchain"),
        pytest.param(lambda: llama_index.from_messages(VALID),
                     llama_index, "writer", lambda: _falls, id="llama_index"),
        pytest.param(lambda: get_adapter("galtea").from_messages(VALID, fold_tools=True),
                     _turns, "_written", _falls, id="galtea"),
        pytest.param(lambda: get_adapter("openai_responses").from_messages(VALID),
                     responses_write, "_written", _falls, id="openai_responses"),
        pytest.param(lambda: openai_agents.from_messages(VALID),
                     openai_agents, "write", _falls, id="openai_agents"),
        pytest.param(lambda: get_adapter("otel").from_messages(VALID),
                     otel_write, "_document", _falls, id="otel"),
        pytest.param(lambda: validate(VALID[:2]), validation_module, "_violations", _falls,
                     id="validate"),
        pytest.param(lambda: transcript_hash(VALID), hashing_module, "_hashed_fields", _falls,
                     id="transcript_hash"),
        pytest.param(lambda: render(VALID), render_module, "_rendered", _falls, id="render"),
        pytest.param(lambda: VALID[0].pretty_repr(), render_module, "_rendered", _falls,
                     id="pretty_repr"),
    ]


@pytest.mark.parametrize(("call", "module", "name", "replacement"), _patches())
def test_a_fall_of_ours_on_valid_messages_shows_as_it_is(
    monkeypatch: pytest.MonkeyPatch, call: Any, module: Any, name: str, replacement: Any
) -> None:
    monkeypatch.setattr(module, name, replacement)
    with pytest.raises(TypeError, match="a bug of ours"):
        call()


# --- every field of every model is checked --------------------------------------------------


def _homes() -> dict[type[BaseModel], tuple[Any, str]]:
    """Each model, with a valid instance placed where it lives: (wrap, path prefix)."""
    call = ToolCall(name="f", args={"a": 1}, id="c", metadata={"k": 1})

    def in_content(part: Any) -> tuple[list[Any], str]:
        # made unchecked: a part with an odd tag would not pass the message's discriminator
        made = HumanMessage.model_construct(content=[TextPart(text="t"), part])
        return [made], "messages[0].content[1]"

    return {
        HumanMessage: (lambda m: ([m], "messages[0]"), HumanMessage(content="x", name="n")),
        SystemMessage: (lambda m: ([m], "messages[0]"), SystemMessage(content="s")),
        AIMessage: (lambda m: ([ASK, m], "messages[1]"), AIMessage(content="x")),
        ToolMessage: (lambda m: ([ASK, AIMessage(tool_calls=[call]), m], "messages[2]"),
                      ToolMessage(content="r", tool_call_id="c")),
        ToolCall: (lambda c: ([ASK, AIMessage(tool_calls=[c])], "messages[1].tool_calls[0]"),
                   call),
        Citation: (lambda c: ([AIMessage(content="x", citations=[c])],
                              "messages[0].citations[0]"), Citation(url="u", title="t")),
        AudioReference: (lambda a: ([AIMessage(audio=a)], "messages[0].audio"),
                         AudioReference(id="a", transcript="t")),
        TextPart: (in_content, TextPart(text="t")),
        ImagePart: (in_content, ImagePart(url="https://x/i.png")),
        AudioPart: (in_content, AudioPart(data="AAAA", mime_type="audio/wav")),
        FilePart: (in_content, FilePart(file_id="f")),
        ReasoningPart: (in_content, ReasoningPart(text="r")),
        RefusalPart: (in_content, RefusalPart(text="no")),
        OpaquePart: (in_content, OpaquePart(kind="k", value={"a": [1]})),
    }  # type: ignore[dict-item]


def _models_reachable() -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in found:
                found.add(annotation)
                for field in annotation.model_fields.values():
                    walk(field.annotation)
            return
        for inner in get_args(annotation):
            walk(inner)

    walk(Message)
    return found


class _Odd:
    """A value no field declares."""

    def __repr__(self) -> str:
        return "<odd>"


def test_every_model_of_the_messages_has_a_home_here() -> None:
    assert _models_reachable() == set(_homes())


@pytest.mark.parametrize(
    ("model", "field"),
    [(model, field) for model in _homes() for field in model.model_fields],
    ids=lambda x: x.__name__ if isinstance(x, type) else x,
)
def test_every_field_of_every_model_is_checked(model: type[BaseModel], field: str) -> None:
    place, valid = _homes()[model]
    messages, prefix = place(valid)
    assert unchecked_field(messages) is None
    odd, _ = place(valid.model_copy(update={field: _Odd()}))
    found = unchecked_field(odd, "x")
    assert found is not None
    code = "unserializable_value" if (model, field) == (OpaquePart, "value") else "malformed_event"
    assert (found.code, found.path, found.source) == (code, f"{prefix}.{field}", "x")
    if code == "malformed_event":
        assert "got _Odd <odd>" in found.detail


def found_in(messages: list[Any]) -> TraceError:
    found = unchecked_field(messages)
    assert found is not None
    return found


def test_a_missing_field_a_value_that_is_not_json_and_a_broken_model_rule() -> None:
    missing = found_in([HumanMessage.model_construct(name=None)])
    assert (missing.path, missing.detail.split(" (")[0]) == (
        "messages[0].content", "content is missing",
    )
    not_json = found_in([ASK.model_copy(update={"metadata": {"k": {1, 2}}})])
    assert (not_json.code, not_json.index, not_json.path) == (
        "unserializable_value", 0, "messages[0].metadata.k",
    )
    custom = ToolCall(name="f", kind="custom", args={"input": "x"}, id="c")
    broken = custom.model_copy(update={"args": {}})
    found = found_in([ASK, AIMessage(tool_calls=[broken])])
    assert (found.code, found.index, found.path) == (
        "malformed_event", 1, "messages[1].tool_calls[0].kind",
    )
    assert "a custom call's args must be {'input': <text>}" in found.detail
    image = ImagePart(url="u").model_copy(update={"url": None})
    found = found_in([HumanMessage.model_construct(content=[image])])
    assert found.path == "messages[0].content[0]"
    assert "needs one of: url, data" in found.detail


def test_a_literal_and_a_bool_are_held_to_their_values() -> None:
    role = found_in([SystemMessage(content="s").model_copy(update={"role": "critic"})])
    assert role.path == "messages[0].role"
    assert "role must be 'system' | 'developer', got str 'critic'" in role.detail
    flag = ToolMessage(content="r", tool_call_id="c").model_copy(update={"is_error": 1})
    found = found_in([ASK, AIMessage(tool_calls=[ToolCall(name="f", id="c")]), flag])
    assert found.path == "messages[2].is_error"
    index = Citation(start_index=0).model_copy(update={"start_index": True})
    found = found_in([AIMessage(content="x", citations=[index])])
    assert found.path == "messages[0].citations[0].start_index"


# --- valid messages: nothing found ----------------------------------------------------------


def _golden() -> list[Any]:
    return [
        pytest.param(path, id=f"{path.parent.name}/{path.stem}")
        for path in sorted(GOLDEN.glob("*/*.json"))
    ]


@pytest.mark.parametrize("path", _golden())
def test_nothing_is_found_in_golden_traces(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    trace = case.get("trace", case.get("records", case.get("input_list")))
    messages = get_adapter(path.parent.name).to_messages(trace, **case.get("to_options", {}))
    assert messages
    assert unchecked_field(messages) is None


def _unchecked_call(**fields: Any) -> ToolCall:
    given = {"name": "a", "args": {}, "id": "c", "invalid_args": None, "kind": "function",
             "metadata": {}}
    return ToolCall.model_construct(**{**given, **fields})  # type: ignore[arg-type]


def _sample(call: ToolCall, reference: list[ToolCall]) -> MultiTurnSample:
    return MultiTurnSample(
        messages=[ASK, AIMessage(tool_calls=[call]), ToolMessage(content="r", tool_call_id="c")],
        reference_tool_calls=reference,
    )


@pytest.mark.parametrize("metric", [ToolCallAccuracy(), ToolCallAccuracy(strict_order=False),
                                    ToolCallF1()], ids=lambda m: m.name)
@pytest.mark.parametrize(
    ("sample", "where"),
    [
        pytest.param(_sample(_unchecked_call(args=None), [ToolCall(name="a")]),
                     (1, "messages[1].tool_calls[0].args"), id="predicted args=None"),
        pytest.param(_sample(ToolCall(name="a", id="c"), [_unchecked_call(args=None)]),
                     (None, "reference_tool_calls[0].args"), id="reference args=None"),
        pytest.param(_sample(ToolCall(name="a", id="c"), [_unchecked_call(args=5)]),
                     (None, "reference_tool_calls[0].args"), id="reference args=5"),
    ],
)
def test_the_tool_call_metrics_name_a_call_field_of_another_type(
    metric: Any, sample: MultiTurnSample, where: tuple[int | None, str]
) -> None:
    with pytest.raises(TraceError) as caught:
        metric.score(sample)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", *where,
    )


def test_a_bad_drop_option_is_its_value_error_whatever_the_messages_hold() -> None:
    # the id would be written as it is; the option is refused before anything is looked at
    odd = [HumanMessage.model_construct(content="hi", name=None, id=5, metadata={})]
    for name in ("openai_responses", "openai_agents"):
        with pytest.raises(ValueError, match="names nothing droppable") as caught:
            get_adapter(name).from_messages(odd, drop=["no_such_thing"])
        assert not isinstance(caught.value, TraceError)
