"""openai_responses and openai_agents: a ``responses.parse()`` reply written as the SDK sends
it, conversion between the two adapters that write the same items (each writer reading only
its own metadata, the conversion carrying it over), faults in a hosted call's result raised at
the result, and replies of many cited parts or message items."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import openai
import pyarrow as pa
import pytest
from cli_helpers import run
from local_server import serving
from pydantic import BaseModel

from tracebridge import Citation, TraceError, convert
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.hashing import hashed_messages
from tracebridge.ray_data import convert_batch
from tracebridge.registry import carried

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
USER = {"role": "user", "content": "hi"}


def _refused(write: Any, messages: list[Any], **options: Any) -> tuple[str, int | None, str]:
    with pytest.raises(TraceError) as caught:
        write(messages, **options)
    error = caught.value
    return error.code, error.index, str(error)


# --- 1: a responses.parse() reply ------------------------------------------------------------


class _Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next of ``outputs`` as a Response's output."""

    outputs: ClassVar[list[list[dict[str, Any]]]] = []
    bodies: ClassVar[list[dict[str, Any]]] = []
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.bodies.append(json.loads(self.rfile.read(length)))
        data = json.dumps({
            "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5",
            "output": self.outputs.pop(0), "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "status": "completed",
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Answer(BaseModel):
    answer: str


_PARSED_OUTPUT = [
    {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
     "arguments": '{"a":1}', "status": "completed"},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": '{"answer":"x"}', "annotations": []}]},
]
_STRICT_TOOL = {"type": "function", "name": "f", "strict": True, "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
    "additionalProperties": False}}


@pytest.fixture
def parsed() -> Iterator[tuple[openai.OpenAI, Any]]:
    """The real client on a scripted endpoint, and a ParsedResponse it made."""
    handler = type("Handler", (_Scripted,), {"outputs": [_PARSED_OUTPUT], "bodies": []})
    with serving(handler) as base_url:
        sdk = openai.OpenAI(api_key="sk-test", base_url=f"{base_url}/v1", max_retries=0,
                            timeout=10.0)
        response = sdk.responses.parse(model="gpt-5", input="hi", text_format=_Answer,
                                       tools=[_STRICT_TOOL])  # type: ignore[list-item]
        handler.outputs.append([])
        yield sdk, response, handler.bodies


def test_a_parsed_reply_is_written_without_the_sdks_parsed_fields(parsed: Any) -> None:
    sdk, response, bodies = parsed
    call, message = response.output
    assert call.parsed_arguments == {"a": 1}
    assert message.content[0].parsed == _Answer(answer="x")
    history = [USER, *response.output,
               {"type": "function_call_output", "call_id": "c1", "output": "ok"}]
    written = openai_responses.from_messages(openai_responses.to_messages(history))
    sdk.responses.create(model="gpt-5", input=history)
    sent = bodies[-1]["input"]
    assert written == sent
    assert written[1:3] == [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a":1}',
         "id": "fc_1", "status": "completed"},
        {"role": "assistant", "type": "message", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": '{"answer":"x"}', "annotations": []}]},
    ]


def test_a_parsed_reply_keeps_no_parsed_field_in_metadata(parsed: Any) -> None:
    _, response, _ = parsed
    messages = openai_responses.to_messages([USER, *response.output], allow_pending=True)
    assert messages[1].metadata == {
        "openai_responses": {"fields": {"status": "completed"}, "calls_at": [0]}}
    assert messages[1].tool_calls[0].metadata == {
        "openai_responses": {"id": "fc_1", "arguments": '{"a":1}',
                             "fields": {"status": "completed"}}}
    assert messages[1].content[0].metadata == {}


def test_parsed_parts_in_a_history_dict_are_written_without_parsed(parsed: Any) -> None:
    _, response, _ = parsed
    message = response.output[1]
    history = [USER, {"role": "assistant", "content": message.content}]
    written = openai_agents.from_messages(openai_agents.to_messages(history))
    assert written == [USER, {"role": "assistant", "content": [
        {"type": "output_text", "text": '{"answer":"x"}', "annotations": []}]}]


# --- 2: between openai_responses and openai_agents -------------------------------------------

_ACROSS = [("openai_responses", "openai_agents"), ("openai_agents", "openai_responses")]
_SAME_ITEMS = {
    "web_search_call": [USER, {"id": "ws_1", "type": "web_search_call", "status": "completed",
                               "action": {"type": "search", "query": "oslo"}},
                        {"id": "msg_1", "type": "message", "role": "assistant",
                         "status": "completed", "content": [
                             {"type": "output_text", "text": "Sunny.", "annotations": []}]}],
    "computer_call": [USER, {"type": "computer_call", "id": "cu_1", "call_id": "c1",
                             "action": {"type": "screenshot"}, "pending_safety_checks": [],
                             "status": "completed"},
                      {"type": "computer_call_output", "call_id": "c1", "output": {
                          "type": "computer_screenshot", "image_url": "https://s/1.png"}}],
    "reasoning": [USER, {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA",
                         "summary": [{"type": "summary_text", "text": "think"}]},
                  {"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": "hi", "annotations": []}]}],
    "input_audio": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}],
    "mcp_list_tools": [USER, {"type": "mcp_list_tools", "id": "ml_1", "server_label": "s",
                              "tools": []}],
    "several messages": [USER,
                         {"type": "message", "role": "assistant", "id": "msg_a", "content": [
                             {"type": "output_text", "text": "one", "annotations": []}]},
                         {"type": "function_call", "call_id": "c", "name": "f",
                          "arguments": "{}"},
                         {"type": "message", "role": "assistant", "id": "msg_b", "content": [
                             {"type": "output_text", "text": "Paris two", "annotations": [
                                 {"type": "url_citation", "url": "u", "title": "t",
                                  "start_index": 0, "end_index": 5}]}]},
                         {"type": "function_call_output", "call_id": "c", "output": "x"}],
}


@pytest.mark.parametrize(("source", "target"), _ACROSS)
@pytest.mark.parametrize("name", sorted(_SAME_ITEMS))
def test_items_convert_between_the_two_adapters_as_they_are(
    name: str, source: str, target: str
) -> None:
    items = _SAME_ITEMS[name]
    assert convert(items, source=source, target=target) == items


def _golden(adapter: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
    found = []
    for path in sorted((GOLDEN / adapter).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "trace" in data:
            found.append((f"{adapter}/{path.stem}", data["trace"], {}))
        if "new_items" in data and "to_options" not in data:
            found.append((f"{adapter}/{path.stem}/new_items", data["new_items"],
                          {"input": data["input"]}))
    return found


_ADAPTERS = {"openai_responses": openai_responses, "openai_agents": openai_agents}


_GOLDEN = [*_golden("openai_responses"), *_golden("openai_agents")]


@pytest.mark.parametrize(
    ("source", "trace", "options"),
    [(name.split("/")[0], trace, options) for name, trace, options in _GOLDEN],
    ids=[name for name, _, _ in _GOLDEN],
)
def test_golden_traces_convert_across_and_back_with_equal_hashes(
    source: str, trace: list[Any], options: dict[str, Any]
) -> None:
    target = next(other for other in _ADAPTERS if other != source)
    nameless = {"drop_names": True}  # a Responses reply has no agent name
    across = convert(trace, source=source, target=target, source_options=options,
                     target_options=nameless)
    if not options:
        assert across == trace  # the same items: nothing to change
    back = convert(across, source=target, target=source, target_options=nameless)
    if not options:
        assert back == trace
    read = [message.model_copy(update={"name": None}) if message.type == "ai" else message
            for message in _ADAPTERS[source].to_messages(trace, **options)]
    assert hashed_messages(_ADAPTERS[source].to_messages(back)) == hashed_messages(read)
    assert hashed_messages(_ADAPTERS[target].to_messages(across)) == hashed_messages(read)


_TOOL_CALLING = json.loads((GOLDEN / "openai_agents" / "tool_calling.json").read_text("utf-8"))


def test_the_cli_converts_between_the_two_adapters_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "tool_calling.json"
    path.write_text(json.dumps(_TOOL_CALLING), encoding="utf-8")
    code, out, err = run("convert", "--from", "openai_agents", "--to", "openai_responses",
                         "--at", "trace", str(path))
    assert (code, err) == (0, "")
    assert json.loads(out) == _TOOL_CALLING["trace"]
    assert any(item.get("type") == "reasoning" for item in _TOOL_CALLING["trace"])


def test_convert_batch_converts_between_the_two_adapters_as_they_are() -> None:
    rows = pa.table({"record": [json.dumps(_TOOL_CALLING["trace"]),
                                json.dumps(_SAME_ITEMS["web_search_call"])]})
    out = convert_batch(rows, source="openai_agents", target="openai_responses").to_pylist()
    assert [row["error_code"] for row in out] == [None, None]
    assert [json.loads(row["output"]) for row in out] == [
        _TOOL_CALLING["trace"], _SAME_ITEMS["web_search_call"]]


def test_a_pending_approval_is_refused_across_for_its_unanswered_call_alone() -> None:
    data = json.loads((GOLDEN / "openai_agents" / "approval_pending.json").read_text("utf-8"))
    pending = {"allow_pending": True}
    with pytest.raises(TraceError) as caught:
        convert(data["input_list"], source="openai_agents", target="openai_responses",
                source_options=pending)
    error = caught.value
    assert (error.code, error.index, error.path, str(error)) == (
        "not_representable", 1, "messages[1].tool_calls[0]",
        "openai_responses: messages[1].tool_calls[0]: tool call 'delete_file' has no result: "
        "the API rejects a call item without its output; pass drop=['unanswered_calls'] to "
        "leave it out [not_representable]",
    )
    written = convert(data["input_list"], source="openai_agents", target="openai_responses",
                      source_options=pending, target_options={"drop": ["unanswered_calls"]})
    assert written == data["input_list"][:2]


def test_run_items_stay_the_agents_adapters_own() -> None:
    data = json.loads((GOLDEN / "openai_agents" / "handoff.json").read_text("utf-8"))
    read = openai_agents.to_messages(data["new_items"], input=data["input"])
    held = [i for i, m in enumerate(read) if "run_items" in m.metadata.get("openai_agents", {})]
    assert held == [1, 2, 3, 4, 5]
    moved = carried(read, "openai_agents", "openai_responses")
    for i in held:
        assert moved[i].metadata["openai_agents"] == {
            "run_items": read[i].metadata["openai_agents"]["run_items"]}
        assert "run_items" not in moved[i].metadata.get("openai_responses", {})
    # only the Responses reader's keys move: replies 1 and 5 hold some (their fields), the
    # others only run_items, so their metadata stays as it is
    assert [i for i, m in enumerate(moved) if "openai_responses" in m.metadata] == [1, 5]
    for i in (1, 5):
        assert moved[i].metadata == {
            "openai_agents": {"run_items": read[i].metadata["openai_agents"]["run_items"]},
            "openai_responses": {"fields": read[i].metadata["openai_agents"]["fields"]}}
        assert set(read[i].metadata["openai_agents"]) == {"run_items", "fields"}
    for i in (2, 3, 4):
        assert moved[i].metadata == read[i].metadata
    written = convert(data["new_items"], source="openai_agents", target="openai_responses",
                      source_options={"input": data["input"]},
                      target_options={"drop_names": True})
    assert written == data["trace"]


@pytest.mark.parametrize(("source", "target"), _ACROSS)
def test_carried_renames_the_sources_namespace_as_the_targets(source: str, target: str) -> None:
    read = _ADAPTERS[source].to_messages(_SAME_ITEMS["reasoning"])
    # the item holds fields its part alone does not give back: its id stays beside them
    kept = {"id": "rs_1", "fields": {"encrypted_content": "gAAA"}}
    assert read[1].content[0].metadata == {source: kept}
    assert read[1].content[0].id is None
    moved = carried(read, source, target)
    assert moved[1].content[0].metadata == {target: kept}
    assert moved[1].content[0].id is None
    assert moved[0] is read[0]  # nothing kept: as it is
    assert read[1].content[0].metadata == {source: kept}  # the messages read are unchanged


def test_carried_leaves_other_formats_messages_as_they_are() -> None:
    read = openai_responses.to_messages(_SAME_ITEMS["reasoning"])
    for source, target in [("openai_responses", "langchain"), ("langchain", "openai_agents"),
                           ("openai_responses", "openai_responses")]:
        assert all(new is old for new, old in zip(carried(read, source, target), read,
                                                  strict=True))


_NOT_READ = {
    "input_audio": (0, "messages[0].content[0]", "a Responses message takes no audio part "
                    "(only an input_audio part read from {origin} is written back); "
                    "pass drop=['audio_parts'] to leave it out"),
    "mcp_list_tools": (1, "messages[1].content[0]", "an opaque 'mcp_list_tools' block from "
                       "another format is not a Responses part (only parts read from "
                       "{origin} are written back verbatim); pass drop=['opaque_parts'] "
                       "to leave it out"),
}

_ORIGINS = {"openai_responses": "a Responses trace", "openai_agents": "an Agents SDK run"}
"""How a writer's refusal names what its own reader reads."""


@pytest.mark.parametrize(("source", "target"), _ACROSS)
@pytest.mark.parametrize("name", sorted(_NOT_READ))
def test_a_writer_does_not_read_the_other_adapters_metadata(
    name: str, source: str, target: str
) -> None:
    read = _ADAPTERS[source].to_messages(_SAME_ITEMS[name])
    index, path, said = _NOT_READ[name]
    said = said.replace("{origin}", _ORIGINS[target])
    with pytest.raises(TraceError) as caught:
        _ADAPTERS[target].from_messages(read)
    error = caught.value
    assert (error.code, error.index, error.path, str(error)) == (
        "not_representable", index, path, f"{target}: {path}: {said} [not_representable]")
    assert convert(_SAME_ITEMS[name], source=source, target=target) == _SAME_ITEMS[name]


@pytest.mark.parametrize(("source", "target"), _ACROSS)
def test_reasoning_read_by_the_other_adapter_is_written_with_its_id_alone(
    source: str, target: str
) -> None:
    # an item holding fields (encrypted_content) keeps its id beside them, in the other's
    # namespace, which this writer does not read: refused, not written without those fields
    items = _SAME_ITEMS["reasoning"]
    read = _ADAPTERS[source].to_messages(items)
    assert _refused(_ADAPTERS[target].from_messages, read) == (
        "not_representable", 1,
        f"{target}: messages[1].content[0]: a reasoning item needs the id the API gave it "
        "(this reasoning part has none); pass drop=['reasoning'] to leave it out "
        "[not_representable]",
    )
    plain = [items[0], {"type": "reasoning", "id": "rs_1",
                        "summary": [{"type": "summary_text", "text": "think"}]}, *items[2:]]
    written = _ADAPTERS[target].from_messages(_ADAPTERS[source].to_messages(plain))
    assert written == plain  # the part alone gives this item back: its id is typed
    assert convert(items, source=source, target=target) == items


@pytest.mark.parametrize(("source", "target"), _ACROSS)
def test_a_hosted_call_read_by_the_other_adapter_is_written_as_a_function_call(
    source: str, target: str
) -> None:
    items = _SAME_ITEMS["web_search_call"]
    written = _ADAPTERS[target].from_messages(_ADAPTERS[source].to_messages(items))
    assert written[1:3] == [
        {"type": "function_call", "call_id": "ws_1", "name": "web_search",
         "arguments": '{"action": {"type": "search", "query": "oslo"}}'},
        {"type": "function_call_output", "call_id": "ws_1", "output": '{"status": "completed"}',
         "name": "web_search"},
    ]
    assert convert(items, source=source, target=target) == items


def test_the_other_adapters_malformed_metadata_is_not_read() -> None:
    items = [USER, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]
    read = openai_responses.to_messages(items)
    edited = read[1].model_copy(update={"metadata": {"openai_responses": {"calls_at": [5]}}})
    assert openai_agents.from_messages([read[0], edited, read[2]]) == items


def test_an_error_in_carried_metadata_names_it_as_the_targets() -> None:
    # the carried messages are internal to a conversion: the path names the target's namespace
    items = [USER, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]
    read = openai_responses.to_messages(items)
    edited = read[1].model_copy(update={"metadata": {"openai_responses": {"calls_at": [5]}}})
    moved = carried([read[0], edited, read[2]], "openai_responses", "openai_agents")
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(moved)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "messages[1].metadata.openai_agents.calls_at")
    assert str(error) == (
        "openai_agents: messages[1].metadata.openai_agents.calls_at: "
        "metadata.openai_agents.calls_at lists, for each of the reply's 1 calls, how many of "
        "its 0 content items come before it (rising), as to_messages writes it; got [5] "
        "[malformed_event]")


def test_the_targets_own_metadata_is_kept_over_the_carried() -> None:
    items = [USER, {"type": "reasoning", "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "think"}]},
             {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "hi", "annotations": []}]}]
    read = openai_responses.to_messages(items)
    part = read[1].content[0]
    both = part.model_copy(update={"metadata": {
        "openai_responses": {"fields": {"encrypted_content": "A"}},
        "openai_agents": {"fields": {"encrypted_content": "B"}},
    }})
    message = read[1].model_copy(update={"content": [both, *read[1].content[1:]]})
    assert openai_responses.from_messages([read[0], message])[1]["encrypted_content"] == "A"
    assert openai_agents.from_messages([read[0], message])[1]["encrypted_content"] == "B"
    moved = carried([read[0], message], "openai_responses", "openai_agents")
    assert moved[1].content[0] is both
    assert openai_agents.from_messages(moved)[1]["encrypted_content"] == "B"


def test_another_formats_reasoning_is_still_refused() -> None:
    read = openai_responses.to_messages(_SAME_ITEMS["reasoning"])
    part = read[1].content[0]
    other = part.model_copy(update={"id": None, "metadata": {"langchain": {"id": "rs_1"}}})
    message = read[1].model_copy(update={"content": [other, *read[1].content[1:]]})
    assert _refused(openai_agents.from_messages, [read[0], message]) == (
        "not_representable", 1,
        "openai_agents: messages[1].content[0]: a reasoning item needs the id the API gave it "
        "(this reasoning part has none); pass drop=['reasoning'] to leave it out "
        "[not_representable]",
    )


# --- 3: a fault in a hosted call's result ----------------------------------------------------

_SEARCH = [USER, {"id": "ws_1", "type": "web_search_call", "status": "completed",
                  "action": {"type": "search", "query": "q"}}]


@pytest.mark.parametrize("adapter", ["openai_responses", "openai_agents"])
@pytest.mark.parametrize(("update", "path"), [
    ({"content": '{"status": "failed", "foo": 1}'}, "messages[2].content"),
    ({"content": '{"status": NaN}'}, "messages[2].content"),
    ({"content": "[1]"}, "messages[2].content"),
    ({"is_error": True}, "messages[2].is_error"),
    ({"name": "other"}, "messages[2].name"),
    ({"metadata": {"x": {"fields": {"a": 1}}}}, "messages[2].metadata.{ns}"),
])
def test_a_fault_in_a_hosted_result_is_raised_at_the_result(
    adapter: str, update: dict[str, Any], path: str
) -> None:
    module = _ADAPTERS[adapter]
    read = module.to_messages(_SEARCH)
    if "metadata" in update:
        update = {"metadata": {adapter: update["metadata"]["x"]}}
    with pytest.raises(TraceError) as caught:
        module.from_messages([read[0], read[1], read[2].model_copy(update=update)])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, path.format(ns=adapter))


def test_a_hosted_results_is_error_is_dropped_by_name() -> None:
    read = openai_responses.to_messages(_SEARCH)
    failed = read[2].model_copy(update={"is_error": True})
    assert openai_responses.from_messages([*read[:2], failed], drop=["is_error"]) == _SEARCH


def test_the_faults_message_says_what_is_wrong_with_the_result() -> None:
    read = openai_responses.to_messages(_SEARCH)
    kept = read[2].model_copy(update={"metadata": {"openai_responses": {"fields": {"a": 1}}}})
    assert _refused(openai_responses.from_messages, [*read[:2], kept]) == (
        "not_representable", 2,
        "openai_responses: messages[2].metadata.openai_responses: a web_search_call item keeps "
        "its result as it is: there is no place for openai_responses metadata on it "
        "[not_representable]",
    )


# --- 4: many parts --------------------------------------------------------------------------


def _cited_parts(n: int) -> list[dict[str, Any]]:
    part = {"type": "output_text", "text": "Paris " * 10, "annotations": [
        {"type": "url_citation", "url": "u", "title": "t", "start_index": 0, "end_index": 5}]}
    return [USER, {"type": "message", "role": "assistant", "content": [part] * n}]


def _preambles(n: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [USER]
    for i in range(n):
        items += [{"type": "message", "role": "assistant", "id": f"msg_{i}",
                   "content": [{"type": "output_text", "text": "pre", "annotations": []}]},
                  {"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"}]
    return items + [{"type": "function_call_output", "call_id": f"c{i}", "output": "x"}
                    for i in range(n)]


def test_many_cited_parts_are_written_back_each_with_its_citation() -> None:
    # how the time grows with the parts: benchmarks/bench_openai_responses.py
    items = _cited_parts(2000)
    read = openai_responses.to_messages(items)
    assert openai_responses.from_messages(read) == items


def test_many_message_items_of_a_reply_are_read_and_written_back() -> None:
    # how the time grows with the items: benchmarks/bench_openai_responses.py
    items = _preambles(2000)
    read = openai_responses.to_messages(items)
    assert [message.type for message in read] == ["human", "ai"] + ["tool"] * 2000
    assert openai_responses.from_messages(read) == items


_TEXTS = ["ab", "", "cd", "e"]  # in the reply's text: "ab\n\ncd\ne"


def _with_citation(start: int, end: int) -> list[Any]:
    """A reply of the four text parts of ``_TEXTS``, citing ``start`` to ``end`` of its text."""
    content = [{"type": "output_text", "text": text, "annotations": []} for text in _TEXTS]
    read = openai_responses.to_messages([USER, {"type": "message", "role": "assistant",
                                                "content": content}])
    citation = Citation(url="u", title="t", start_index=start, end_index=end)
    return [read[0], read[1].model_copy(update={"citations": [citation]})]


@pytest.mark.parametrize(("start", "end", "part"), [
    (0, 2, 0), (2, 2, 0), (3, 3, 1), (4, 4, 2), (4, 6, 2), (6, 6, 2), (7, 7, 3), (7, 8, 3),
])
def test_a_citation_goes_on_the_part_its_span_falls_in(start: int, end: int, part: int) -> None:
    written = openai_responses.from_messages(_with_citation(start, end))
    placed = [k for k, item in enumerate(written[1]["content"]) if item["annotations"]]
    assert placed == [part]
    begins = sum(len(text) + 1 for text in _TEXTS[:part])
    assert written[1]["content"][part]["annotations"] == [{
        "type": "url_citation", "url": "u", "title": "t", "start_index": start - begins,
        "end_index": end - begins}]


@pytest.mark.parametrize(("start", "end"), [(1, 4), (2, 3), (5, 8), (9, 9), (3, 2)])
def test_a_span_no_one_part_holds_is_refused(start: int, end: int) -> None:
    assert _refused(openai_responses.from_messages, _with_citation(start, end)) == (
        "not_representable", 1,
        f"openai_responses: messages[1].citations[0]: the cited span ({start} to {end} of the "
        "reply's text) falls inside no one output_text part, and an annotation counts "
        "characters of its own part; pass drop=['citations'] to leave it out "
        "[not_representable]",
    )


def test_a_later_message_items_citation_without_indexes_goes_back_on_that_item() -> None:
    # a citation missing its indexes is put back on the reply's first text part unless it
    # says otherwise: the first text part of a later message item is not the reply's first
    items = [USER,
             {"type": "message", "role": "assistant", "id": "msg_a", "content": [
                 {"type": "output_text", "text": "one", "annotations": []}]},
             {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "message", "role": "assistant", "id": "msg_b", "content": [
                 {"type": "output_text", "text": "Paris two", "annotations": [
                     {"type": "url_citation", "url": "u", "title": "t"}]}]},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]
    read = openai_responses.to_messages(items)
    assert read[1].citations == [Citation(url="u", title="t", metadata={"openai_responses": {
        "absent": ["start_index", "end_index"], "message": 1}})]
    assert openai_responses.from_messages(read) == items


def test_a_later_message_items_citation_counts_the_earlier_string_content() -> None:
    items = [USER, {"role": "assistant", "content": "one"},
             {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "message", "role": "assistant", "id": "msg_b", "content": [
                 {"type": "output_text", "text": "Paris two", "annotations": [
                     {"type": "url_citation", "url": "u", "title": "t", "start_index": 0,
                      "end_index": 5}]}]},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]
    read = openai_responses.to_messages(items)
    assert read[1].citations == [Citation(url="u", title="t", start_index=4, end_index=9)]
    assert openai_responses.from_messages(read) == items
