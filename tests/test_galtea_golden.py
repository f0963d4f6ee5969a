"""Golden Galtea traces: every file in golden_traces/galtea/ is a test.

The files are made by ``scripts/golden/galtea.py``, most of them by running the Galtea SDK
against a local fake API (``made_by`` says which call). A file with ``trace`` holds turns (what
``traces.create_batch`` or ``test_cases.create`` sent, what an agent received, or pairs of the
earlier evaluation-task API) and the typed messages they must read as; with ``source``, also the
richer conversation they were written from, the options that accepted the loss and what was
left out. ``agent_input`` is the whole ``AgentInput`` an agent received; ``records`` are the
``Trace`` dumps ``traces.list`` returned and ``api_records`` the API's JSON behind them. Invalid
files hold a trace and its error.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import galtea as sdk
import pytest
from pydantic import TypeAdapter

from tracebridge import Message, TraceError, transcript_hash
from tracebridge.adapters import galtea

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "galtea"
VALID = sorted(FOLDER.glob("*.json"))
INVALID = sorted((FOLDER / "invalid").glob("*.json"))
MESSAGES = TypeAdapter(list[Message])


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def having(key: str) -> list[Path]:
    return [path for path in VALID if key in load(path)]


def expected(case: dict[str, Any]) -> list[Message]:
    return MESSAGES.validate_python(case["expected"])


def without_namespace(messages: list[Message], key: str) -> list[Message]:
    def strip(message: Message) -> Message:
        namespace = {k: v for k, v in message.metadata.get("galtea", {}).items() if k != key}
        return message.model_copy(update={"metadata": {"galtea": namespace} if namespace else {}})

    return [strip(message) for message in messages]


def test_the_folder_has_every_kind_of_case() -> None:
    assert {load(path).get("shape") for path in having("trace")} == {"pairs", "roles", "history"}
    calls = " ".join(load(path)["made_by"] for path in VALID)
    for call in ("traces.create_batch", "traces.generate", "simulator.simulate",
                 "traces.list", "test_cases.create(conversation_history=...)"):
        assert call in calls
    assert having("records")
    assert having("agent_input")
    assert len(INVALID) >= 5


@pytest.mark.parametrize("path", having("trace"), ids=lambda p: p.stem)
def test_golden_trace_reads_as_expected(path: Path) -> None:
    case = load(path)
    assert galtea.detect(case["trace"]) is True
    assert galtea.to_messages(case["trace"]) == expected(case)


@pytest.mark.parametrize("path", having("trace"), ids=lambda p: p.stem)
def test_golden_trace_lossless_roundtrip(path: Path) -> None:
    trace = load(path)["trace"]
    assert galtea.from_messages(galtea.to_messages(trace)) == trace


@pytest.mark.parametrize("path", having("source"), ids=lambda p: p.stem)
def test_golden_trace_is_written_from_its_source_with_the_loss_recorded(path: Path) -> None:
    case = load(path)
    source = case["source"]
    omitted: list[galtea.Omission] = []
    trace = galtea.from_messages(
        MESSAGES.validate_python(source["messages"]),
        shape=case["shape"],
        omitted=omitted,
        **source["options"],
    )
    assert trace == case["trace"]
    assert [dataclasses.asdict(omission) for omission in omitted] == source["omitted"]


@pytest.mark.parametrize("path", having("source"), ids=lambda p: p.stem)
def test_golden_source_is_refused_without_its_options(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(
            MESSAGES.validate_python(case["source"]["messages"]), shape=case["shape"]
        )
    assert caught.value.code == "not_representable"
    assert caught.value.index == case["source"]["omitted"][0]["index"]


@pytest.mark.parametrize("path", having("agent_input"), ids=lambda p: p.stem)
def test_what_an_agent_input_agent_received_reads_as_its_messages(path: Path) -> None:
    case = load(path)
    dumped = case["agent_input"]
    context = {key: value for key, value in dumped.items()
               if key not in ("messages", "input_files")}
    messages = expected(case)
    last = messages[-1]
    with_context = [*messages[:-1], last.model_copy(update={"metadata": {
        "galtea": {**last.metadata["galtea"], "agent_input": context}}})]
    assert galtea.to_messages(dumped) == with_context
    rebuilt = sdk.AgentInput.model_validate(dumped)  # the SDK's object, as the agent had it
    assert galtea.to_messages(rebuilt) == with_context
    camel = galtea.to_messages(rebuilt.model_dump(by_alias=True))  # the camelCase spelling
    assert transcript_hash(camel) == transcript_hash(messages)
    assert set(camel[-1].metadata["galtea"]["agent_input"]) == {
        "sessionId", "contextData", "metadata", "inferenceResultId"}
    assert galtea.from_messages(with_context, drop=["agent_context"]) == case["trace"]


@pytest.mark.parametrize("path", having("str_agent_received"), ids=lambda p: p.stem)
def test_a_str_agent_receives_the_last_user_message_text(path: Path) -> None:
    case = load(path)
    assert case["str_agent_received"] == [m for m in expected(case) if m.type == "human"][-1].text


@pytest.mark.parametrize("path", having("records"), ids=lambda p: p.stem)
def test_trace_records_read_in_every_form_the_sdk_gives_them(path: Path) -> None:
    case = load(path)
    traces = [sdk.Trace(**record) for record in case["api_records"]]
    for form in (
        case["records"],  # model_dump(mode="json")
        traces,  # the objects traces.list returns
        [trace.model_dump() for trace in traces],  # python mode: status is a TraceStatus
    ):
        messages = galtea.to_messages(form)
        assert without_namespace(messages, "trace") == without_namespace(expected(case), "trace")
    assert galtea.to_messages(case["records"]) == expected(case)
    camel = [trace.model_dump(by_alias=True, mode="json") for trace in traces]
    assert transcript_hash(galtea.to_messages(camel)) == transcript_hash(expected(case))


@pytest.mark.parametrize("path", having("records"), ids=lambda p: p.stem)
def test_the_apis_own_trace_json_reads_alike_and_keeps_every_other_key(path: Path) -> None:
    case = load(path)
    messages = galtea.to_messages(case["api_records"])
    # an answer read from an actualOutput envelope of text (and files) has the metadata {}
    # (the envelope's keys besides them), as from the dump's actual_output_data
    assert sum(message.type == "ai" and message.metadata["galtea"]["metadata"] == {}
               for message in messages) == sum(
        type(record.get("actualOutput")) is dict for record in case["api_records"])
    assert without_namespace(messages, "trace") == without_namespace(expected(case), "trace")
    kept = [m.metadata["galtea"]["trace"] for m in messages if "trace" in m.metadata["galtea"]]
    assert kept == [
        {key: value for key, value in record.items() if key not in ("input", "actualOutput")}
        for record in case["api_records"]
    ]


@pytest.mark.parametrize("path", having("records"), ids=lambda p: p.stem)
def test_trace_records_read_as_what_the_sdk_hands_an_agent_input_agent(path: Path) -> None:
    # The SDK rebuilds an agent's history from the same records (TraceService._execute_agent).
    records = load(path)["records"]
    answered = [record for record in records if record["status"] == "GENERATED"]
    received = load(FOLDER / "generate_agent_class.json")["trace"]
    from_records = without_namespace(galtea.to_messages(answered), "trace")
    # but the SDK hands the agent an answer's text and files alone, leaving out the output
    # envelope they were read from, whose other keys the reader keeps as the answer's metadata
    # ({} for an envelope of text and files)
    unenveloped = [
        message.model_copy(update={"metadata": {"galtea": {
            **message.metadata["galtea"], "metadata": None}}})
        if message.type == "ai" and message.metadata["galtea"]["metadata"] == {} else message
        for message in from_records
    ]
    assert sum(a != b for a, b in zip(from_records, unenveloped, strict=True)) == sum(
        type(record["actual_output_data"]) is dict for record in answered)
    assert unenveloped == galtea.to_messages(received)[: len(from_records)]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_golden_invalid_trace_is_rejected(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        galtea.to_messages(case["trace"])
    assert caught.value.source == "galtea"
    error = caught.value
    assert {"code": error.code, "index": error.index, "path": error.path} == case["error"]
