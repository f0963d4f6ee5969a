"""Write ``golden_traces/galtea/`` by running the real Galtea SDK against a local fake API.

Every role-turn case goes through the SDK (``galtea.Galtea(api_key=..., base_url=...)`` talking
to ``tests/fake_galtea_server.py`` on 127.0.0.1, never the internet) and records what it really
does:

* ``create_batch_*``: a typed conversation written by ``from_messages``, sent by
  ``traces.create_batch``; the file holds the ``conversationTurns`` that left the client (they
  must equal what we wrote) and the messages they must read as;
* ``test_cases_create_conversation_history``: the same through
  ``test_cases.create(conversation_history=...)`` (shape ``history``);
* ``generate_*`` and ``simulate_*``: what ``traces.generate`` / ``simulator.simulate`` hand to each
  kind of agent (a ``list[dict]`` function, a ``str`` function, an ``AgentInput`` function, an
  ``Agent`` subclass) on a session whose earlier turns carry files and structured input;
* ``traces_list_*``: what ``traces.list`` returns (the SDK's ``Trace`` dumps and the API's JSON)
  for answered, failed, pending and file-only turns.

The ``pairs_*`` cases are the turn format of Galtea's earlier evaluation-task API, which the
SDK no longer has a call for; they are written by ``from_messages`` from hand-made
conversations. Expected messages are written here by hand, never computed from the reading
under test. Re-runnable and deterministic (the fake API numbers ids and fixes latencies):
``.venv/bin/python scripts/golden/galtea.py`` rewrites the folder.
"""

# No ``from __future__ import annotations`` here: the SDK picks an agent function's input by
# testing its first parameter's annotation with ``is str`` / ``is AgentInput``, and postponed
# annotations are strings, so every agent below would silently get the list[dict] history.

import contextlib
import dataclasses
import json
import shutil
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

# This file is named after the SDK: run as a script, its folder must not shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
import galtea  # noqa: E402

from tracebridge import (  # noqa: E402
    AIMessage,
    FilePart,
    HumanMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.adapters import galtea as adapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: golden_errors
from golden_errors import error_of as raised  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "golden_traces" / "galtea"
sys.path.insert(0, str(REPO / "tests"))
from fake_galtea_server import FakeGaltea, galtea_api  # noqa: E402

SDK = f"galtea {version('galtea')}"
PAIRS = {"galtea": {"shape": "pairs"}}


def ns(**fields: Any) -> dict[str, Any]:
    return {"galtea": fields}


def pdf(name: str, **namespace: Any) -> FilePart:
    return FilePart(url=f"gs://galtea-files/{name}", filename=name, mime_type="application/pdf",
                    metadata=ns(**namespace) if namespace else {})


def attached(name: str, mime_type: str = "application/pdf") -> dict[str, Any]:
    """A file part as the API stores it in an input/output envelope (camelCase)."""
    return {"type": "file", "uri": f"gs://galtea-files/{name}", "filename": name,
            "mimeType": mime_type}


def dump(messages: list[Any]) -> list[dict[str, Any]]:
    return [message.model_dump(mode="json") for message in messages]


# --- traces.create_batch and test_cases.create --------------------------------------------

SAVINGS = [
    HumanMessage(content="Which savings options carry little risk?"),
    AIMessage(content="Government bonds, insured deposits and broad index funds."),
    HumanMessage(content="Should that change as I get older?"),
    AIMessage(content="Usually yes: the mix moves towards bonds near retirement."),
]
HOURS = [
    HumanMessage(content="When does the shop open on Saturday?",
                 metadata=ns(retrieval_context="The user asked from the Paris page.")),
    AIMessage(content="From 10:00 to 14:00.",
              metadata=ns(retrieval_context="Opening hours: Sat 10-14, Sun closed.")),
]
DEED = [
    HumanMessage(content=[TextPart(text="Who holds this deed?"), pdf("deed.pdf")],
                 metadata=ns(metadata={"chat_type": "support"})),
    AIMessage(content=[TextPart(text="Marta Ruiz. A summary is attached."), pdf("summary.pdf")]),
    HumanMessage(content=[FilePart(url="gs://galtea-files/scan.png", filename="scan.png",
                                   mime_type="image/png")]),
    AIMessage(content="The scan shows the same deed."),
]
WEATHER_RUN = [
    SystemMessage(content="You answer weather questions."),
    HumanMessage(content="Weather in Paris?"),
    AIMessage(content="", tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"},
                                               id="call_1")]),
    ToolMessage(content="18 C, sunny", tool_call_id="call_1", name="get_weather"),
    AIMessage(content="It is 18 C and sunny in Paris."),
]
BATCHES: list[dict[str, Any]] = [
    {"name": "create_batch_savings_advice", "expected": SAVINGS,
     "description": "Plain role turns, as traces.create_batch sends them."},
    {"name": "create_batch_retrieval_context", "expected": HOURS,
     "description": "retrieval_context on an assistant turn and on a user turn: "
     "ConversationMessage takes it on any turn and create_batch sends it as given."},
    {"name": "create_batch_files_and_metadata", "expected": DEED,
     "description": "A turn's metadata, input files on user turns and output files on "
     "assistant turns (FileParts by uri), and a file-only user turn (content '')."},
    {"name": "create_batch_consecutive_user_turns", "expected": [
        HumanMessage(content="Is the order shipped?"), HumanMessage(content="Order 4411, I mean."),
        AIMessage(content="Order 4411 left the warehouse yesterday.")],
     "description": "Two user turns in a row: role turns express them as they are."},
    {"name": "create_batch_agent_with_tools_folded", "source": WEATHER_RUN,
     "options": {"skip_system": True, "fold_tools": True},
     "expected": [HumanMessage(content="Weather in Paris?"),
                  AIMessage(content="It is 18 C and sunny in Paris.")],
     "description": "An agent run with a system prompt and a tool call: skip_system=True and "
     "fold_tools=True leave them out, and the losses are recorded."},
]


def _batch_case(client: galtea.Galtea, api: FakeGaltea, case: dict[str, Any]) -> dict[str, Any]:
    omitted: list[adapter.Omission] = []
    written = adapter.from_messages(case.get("source", case["expected"]), omitted=omitted,
                                    **case.get("options", {}))
    session = api.add_session()
    client.traces.create_batch(session_id=session, conversation_turns=written)
    sent = api.bodies("POST", "inferenceResults/batch")[-1]["conversationTurns"]
    if sent != written:
        raise SystemExit(f"{case['name']}: create_batch sent {sent}, we wrote {written}")
    out = {"description": case["description"], "made_by": f"{SDK}: traces.create_batch",
           "shape": "roles", "trace": sent, "expected": dump(case["expected"])}
    if "source" in case:
        out["source"] = {"messages": dump(case["source"]), "options": case["options"],
                         "omitted": [dataclasses.asdict(o) for o in omitted]}
    return out


def _message_dumps(client: galtea.Galtea, api: FakeGaltea, by_alias: bool) -> dict[str, Any]:
    """Turns that are the SDK's own ConversationMessage dumps, sent through create_batch."""
    file = galtea.AttachedFile(uri="gs://galtea-files/deed.pdf", filename="deed.pdf",
                               mime_type="application/pdf")
    turns = [
        galtea.ConversationMessage(role="user", content="Who holds this deed?",
                                   metadata={"chat_type": "support"}, input_files=[file]),
        galtea.ConversationMessage(role="assistant", content="Marta Ruiz.",
                                   retrieval_context="Deed 4411: holder Marta Ruiz."),
    ]
    dumps = [turn.model_dump(by_alias=by_alias) for turn in turns]
    client.traces.create_batch(session_id=api.add_session(), conversation_turns=dumps)
    sent = api.bodies("POST", "inferenceResults/batch")[-1]["conversationTurns"]
    spelled = ["retrievalContext", "inputFiles", "outputFiles"] if by_alias else None
    aliases = {"aliases": spelled} if spelled else {}
    deed = pdf("deed.pdf", **({"aliases": ["mimeType"]} if by_alias else {}))
    expected = [
        HumanMessage(content=[TextPart(text="Who holds this deed?"), deed], metadata=ns(
            retrieval_context=None, metadata={"chat_type": "support"},
            empty_files=["output_files"], **aliases)),
        AIMessage(content="Marta Ruiz.", metadata=ns(
            retrieval_context="Deed 4411: holder Marta Ruiz.", metadata=None,
            empty_files=["input_files", "output_files"], **aliases)),
    ]
    spelling = "model_dump(by_alias=True)" if by_alias else "model_dump()"
    return {"description": f"ConversationMessage.{spelling} of two turns, as create_batch sends "
            "them: every field present, nulls and empty file lists included.",
            "made_by": f"{SDK}: ConversationMessage.{spelling}, traces.create_batch",
            "shape": "roles", "trace": sent, "expected": dump(expected)}


def _history_case(client: galtea.Galtea, api: FakeGaltea) -> dict[str, Any]:
    source = [HOURS[0], HOURS[1], HumanMessage(content="And on Sunday?"),
              AIMessage(content="Closed.", metadata=ns(metadata={"latency_ms": 812}))]
    options: dict[str, Any] = {"drop": ["retrieval_context", "turn_metadata"]}
    omitted: list[adapter.Omission] = []
    written = adapter.from_messages(source, shape="history", omitted=omitted, **options)
    client.test_cases.create(dataset_id="dataset_1", conversation_history=written)
    sent = api.bodies("POST", "testCases")[-1]["conversationHistory"]
    if sent != written:
        raise SystemExit(f"test_cases.create sent {sent}, we wrote {written}")
    expected = [HumanMessage(content=HOURS[0].text), AIMessage(content=HOURS[1].text),
                HumanMessage(content="And on Sunday?"), AIMessage(content="Closed.")]
    return {"description": "A predefined conversation for test_cases.create: role and text only; "
            "the retrieval contexts and the turn metadata are left out by name, and recorded.",
            "made_by": f"{SDK}: test_cases.create(conversation_history=...)", "shape": "history",
            "trace": sent, "expected": dump(expected),
            "source": {"messages": dump(source), "options": options,
                       "omitted": [dataclasses.asdict(o) for o in omitted]}}


# --- what agents receive: traces.generate and simulator.simulate ---------------------------

RECEIVED: dict[str, Any] = {}


def list_agent(messages: list[dict]) -> str:
    RECEIVED["list_agent"] = messages
    return "Yes, in the land registry."


def str_agent(user_message: str) -> str:
    RECEIVED["str_agent"] = user_message
    return "Yes, in the land registry."


def input_agent(input_data: galtea.AgentInput) -> galtea.AgentResponse:
    RECEIVED["agent_input_function"] = input_data
    return galtea.AgentResponse(content="Yes, in the land registry.",
                                retrieval_context="Registry entry 4411: registered 2019.")


class ClassAgent(galtea.Agent):
    def call(self, input_data: galtea.AgentInput) -> galtea.AgentResponse:
        RECEIVED["agent_class"] = input_data
        return galtea.AgentResponse(content="Yes, in the land registry.")


def failing_agent(messages: list[dict]) -> str:
    raise RuntimeError("the registry lookup timed out")


def _seed(client: galtea.Galtea, api: FakeGaltea) -> galtea.Session:
    """A production session whose two answered turns carry structured input and files."""
    session = client.sessions.get(api.add_session())
    client.traces.create(session_id=session.id, output={
        "assistant_message": "Marta Ruiz. A summary is attached.",
        "content": [attached("summary.pdf")]},
        input={"user_message": "Who holds this deed?", "chat_type": "support",
               "content": [attached("deed.pdf")]})
    client.traces.create(session_id=session.id, input={"content": [attached("scan.png",
                                                                            "image/png")]},
                         output="The scan shows the same deed.")
    return session


QUESTION = "Is it registered?"
# The turns of the seeded session as an AgentInput agent receives them (ConversationMessages).
SEEN = [
    HumanMessage(content=[TextPart(text="Who holds this deed?"), pdf("deed.pdf")], metadata=ns(
        retrieval_context=None,
        metadata={"chat_type": "support", "content": [attached("deed.pdf")]},
        empty_files=["output_files"])),
    AIMessage(content=[TextPart(text="Marta Ruiz. A summary is attached."), pdf("summary.pdf")],
              metadata=ns(retrieval_context=None, metadata=None, empty_files=["input_files"])),
    HumanMessage(content=[FilePart(url="gs://galtea-files/scan.png", filename="scan.png",
                                   mime_type="image/png")],
                 metadata=ns(retrieval_context=None,
                             metadata={"content": [attached("scan.png", "image/png")]},
                             empty_files=["output_files"])),
    AIMessage(content="The scan shows the same deed.", metadata=ns(
        retrieval_context=None, metadata=None, empty_files=["input_files", "output_files"])),
    HumanMessage(content=QUESTION, metadata=ns(
        retrieval_context=None, metadata=None, empty_files=["input_files", "output_files"])),
]


def _generate_cases(client: galtea.Galtea, api: FakeGaltea) -> list[tuple[str, dict[str, Any]]]:
    for agent in (list_agent, str_agent, input_agent, ClassAgent()):
        client.traces.generate(agent=agent, session=_seed(client, api), input=QUESTION)
    made_by = f"{SDK}: traces.generate"
    texts = [HumanMessage(content="Who holds this deed?"),
             AIMessage(content="Marta Ruiz. A summary is attached."),
             HumanMessage(content=""), AIMessage(content="The scan shows the same deed."),
             HumanMessage(content=QUESTION)]
    cases = [("generate_list_agent", {
        "description": "What a (messages: list[dict]) -> str agent receives: role and text only; "
        "the files and the structured input do not reach it (the file-only turn is '').",
        "made_by": made_by, "shape": "roles", "trace": RECEIVED["list_agent"],
        "str_agent_received": RECEIVED["str_agent"], "expected": dump(texts)})]
    for kind, noun in (("agent_input_function", "an (input_data: AgentInput) function"),
                       ("agent_class", "an Agent subclass")):
        received = RECEIVED[kind]
        cases.append((f"generate_{kind}", {
            "description": f"What {noun} receives: ConversationMessages with the input's other "
            "keys as metadata, input and output files, retrieval_context never filled.",
            "made_by": made_by, "shape": "roles",
            "trace": [message.model_dump() for message in received.messages],
            "agent_input": received.model_dump(), "expected": dump(SEEN)}))
    return cases


def _simulate_case(client: galtea.Galtea, api: FakeGaltea) -> dict[str, Any]:
    session = api.add_session(test_case={"input": {"user_message": "I want to move my flight."},
                                         "scenario": "A traveller changes a booking."},
                              dataset_type="SCENARIOS")
    api.user_script[session] = ["I want to move my flight.", "To Friday, please."]
    client.simulator.simulate(session_id=session, agent=input_agent, max_turns=2)
    received = RECEIVED["agent_input_function"]
    blank = {"retrieval_context": None, "metadata": None,
             "empty_files": ["input_files", "output_files"]}
    expected = [HumanMessage(content="I want to move my flight.", metadata=ns(**blank)),
                AIMessage(content="Yes, in the land registry.", metadata=ns(**blank)),
                HumanMessage(content="To Friday, please.", metadata=ns(**blank))]
    return {"description": "What an AgentInput agent receives on the second simulated turn: the "
            "retrieval_context it answered with on the first turn is not handed back.",
            "made_by": f"{SDK}: simulator.simulate", "shape": "roles",
            "trace": [message.model_dump() for message in received.messages],
            "agent_input": received.model_dump(), "expected": dump(expected)}


# --- what traces.list returns --------------------------------------------------------------

def record(trace_id: str, index: int, session: str, status: str, **fields: Any) -> dict[str, Any]:
    """The fields of a Trace the reading keeps under metadata["galtea"]["trace"]."""
    kept: dict[str, Any] = dict.fromkeys(
        ["input_tokens", "output_tokens", "cache_read_input_tokens", "tokens",
         "cost_per_input_token", "cost_per_output_token", "cost_per_cache_read_input_token",
         "cost"])
    kept.update(session_id=session, status=status, error=None, latency=None,
                conversation_simulator_version=None, id=trace_id, index=index,
                actual_output_data=None)
    return {**kept, **fields}


def _traces_list_case(client: galtea.Galtea, api: FakeGaltea) -> dict[str, Any]:
    session = _seed(client, api)
    with contextlib.suppress(RuntimeError):  # the SDK marks the turn FAILED, then re-raises
        client.traces.generate(agent=failing_agent, session=session, input="Who signed it?")
    client.traces.create(session_id=session.id, input="And the tax?", status="PENDING")
    traces = client.traces.list(session_id=session.id, sort_by_created_at="asc")
    ids = [trace.id for trace in traces]
    # the first answer is read from its output envelope (actual_output_data), which is not
    # left with the record: its keys besides the text and files are the answer's metadata ({})
    answered = record(ids[0], 0, session.id, "GENERATED")
    del answered["actual_output_data"]
    trace_ns = [
        answered,
        record(ids[1], 1, session.id, "GENERATED"),
        record(ids[2], 2, session.id, "FAILED", error=traces[2].error),
        record(ids[3], 3, session.id, "PENDING"),
    ]
    blank = {"retrieval_context": None, "metadata": None,
             "empty_files": ["input_files", "output_files"]}

    def first(namespace: dict[str, Any], k: int) -> dict[str, Any]:
        return {"galtea": {**namespace, "trace": trace_ns[k]}}

    enveloped = ns(**{**SEEN[1].metadata["galtea"], "metadata": {}})
    expected = [
        SEEN[0].model_copy(update={"metadata": first(SEEN[0].metadata["galtea"], 0)}),
        SEEN[1].model_copy(update={"metadata": enveloped}),
        SEEN[2].model_copy(update={"metadata": first(SEEN[2].metadata["galtea"], 1)}),
        SEEN[3], HumanMessage(content="Who signed it?", metadata=first(blank, 2)),
        HumanMessage(content="And the tax?", metadata=first(blank, 3)),
    ]
    return {"description": "traces.list after two answered turns (structured input, files, a "
            "file-only input), a turn whose agent failed and a pending turn: read as the SDK "
            "rebuilds the conversation, each record kept on its turn's first message.",
            "made_by": f"{SDK}: traces.create, traces.generate, traces.list",
            "records": [trace.model_dump(mode="json") for trace in traces],
            "api_records": api.traces[session.id], "expected": dump(expected)}


# --- pairs: the earlier evaluation-task API (written by hand) ------------------------------

PAIRED: list[dict[str, Any]] = [
    {"name": "pairs_legacy",
     "description": "Pairs: each {input, actual_output} is one finished exchange.",
     "expected": [
         HumanMessage(content="Hi, what is Galtea?", metadata=PAIRS),
         AIMessage(content="A platform for evaluating AI products.", metadata=PAIRS),
         HumanMessage(content="Which metrics does it have?", metadata=PAIRS),
         AIMessage(content="Relevancy, faithfulness, role adherence and more.", metadata=PAIRS)]},
    {"name": "pairs_with_retrieval_context_and_extra_keys",
     "description": "A pair's retrieval_context and unknown keys, kept on its AIMessage.",
     "expected": [
         HumanMessage(content="What is the refund window?", metadata=PAIRS),
         AIMessage(content="30 days from delivery.", metadata=ns(
             shape="pairs", retrieval_context="Refunds: within 30 days of delivery.",
             extra={"latency_ms": 812, "tags": ["refunds"]}))]},
    {"name": "pirate_pairs_from_openai_history",
     "description": "The pirate history of Galtea's page as pairs: the system prompt is left "
     "out by skip_system=True, and recorded.",
     "source": [
         SystemMessage(content="You are a pirate."),
         HumanMessage(content="Can you teach me to swim?"),
         AIMessage(content="Sure thing, matey! Then ye go swim with the shark."),
         HumanMessage(content="I am not sure if I can swim with the shark."),
         AIMessage(content="Ye can do it!")],
     "options": {"skip_system": True},
     "expected": [
         HumanMessage(content="Can you teach me to swim?", metadata=PAIRS),
         AIMessage(content="Sure thing, matey! Then ye go swim with the shark.", metadata=PAIRS),
         HumanMessage(content="I am not sure if I can swim with the shark.", metadata=PAIRS),
         AIMessage(content="Ye can do it!", metadata=PAIRS)]},
]


def _pair_case(case: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"description": case["description"],
                           "made_by": "by hand: the earlier evaluation-task API's turns",
                           "shape": "pairs"}
    omitted: list[adapter.Omission] = []
    trace = adapter.from_messages(case.get("source", case["expected"]), shape="pairs",
                                  omitted=omitted, **case.get("options", {}))
    if "source" in case:
        out["source"] = {"messages": dump(case["source"]), "options": case["options"],
                         "omitted": [dataclasses.asdict(o) for o in omitted]}
    out["trace"], out["expected"] = trace, dump(case["expected"])
    return out


INVALID: list[tuple[str, str, Any, str, int | None]] = [
    ("pirate_history_without_role", "The first entry of the pirate example on Galtea's page has "
     "no 'role' ('system': 'system'): neither a role turn nor a pair.",
     [{"system": "system", "content": "You are a pirate."},
      {"role": "user", "content": "Can you teach me to swim?"}], "malformed_event", 0),
    ("system_role_turn", "Galtea role turns are user or assistant; a system turn is unknown.",
     [{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "Ahoy?"}],
     "unknown_role", 0),
    ("tool_role_turn", "A tool message is not a Galtea turn.",
     [{"role": "user", "content": "Weather in Paris?"},
      {"role": "tool", "content": "18 C", "tool_call_id": "call_1"}], "unknown_role", 1),
    ("mixed_shapes", "A pair after a role turn: one list holds one shape.",
     [{"role": "user", "content": "hi"}, {"input": "hi", "actual_output": "hello"}],
     "malformed_event", 1),
    ("retrieval_context_spelled_twice", "retrieval_context and retrievalContext on one turn.",
     [{"role": "assistant", "content": "9 to 5.", "retrieval_context": "a",
       "retrievalContext": "b"}], "malformed_event", 0),
    ("attached_file_without_uri", "An attached file needs its uri.",
     [{"role": "user", "content": "see file", "input_files": [{"filename": "a.pdf"}]}],
     "malformed_event", 0),
    ("trace_with_nothing_to_read", "A trace opened before its agent answered, with no input.",
     [{"id": "t1", "index": 0, "session_id": "s1", "status": "PENDING", "input": None,
       "actual_output": None}], "malformed_event", 0),
    ("pair_missing_actual_output", "A pair needs both input and actual_output.",
     [{"input": "hi", "actual_output": "hello"}, {"input": "and then?"}], "malformed_event", 1),
    ("content_as_parts", "Galtea content is a string, not a list of OpenAI content parts.",
     [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "malformed_event", 0),
    ("empty", "No turns at all.", [], "empty_conversation", None),
]


def _write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _checked(name: str, case: dict[str, Any]) -> dict[str, Any]:
    read = adapter.to_messages(case["trace"] if "trace" in case else case["records"])
    if dump(read) != case["expected"]:
        raise SystemExit(f"{name}: the trace does not read back as expected:\n{dump(read)}")
    return case


def error_of(trace: Any, code: str, index: int | None) -> dict[str, Any]:
    """The error reading ``trace`` raises: the code and index given here, and its path."""
    return raised(adapter.to_messages, trace, code, index)


def main() -> None:
    cases: list[tuple[str, dict[str, Any]]] = []
    with galtea_api() as api:
        api.fixed_latency = 812.0
        client = galtea.Galtea(api_key="golden", base_url=api.base_url,
                               suppress_updatable_version_message=True)
        cases += [(case["name"], _batch_case(client, api, case)) for case in BATCHES]
        cases.append(("create_batch_conversation_message_dumps",
                      _message_dumps(client, api, by_alias=False)))
        cases.append(("create_batch_conversation_message_camel_dumps",
                      _message_dumps(client, api, by_alias=True)))
        cases.append(("test_cases_create_conversation_history", _history_case(client, api)))
        cases += _generate_cases(client, api)
        cases.append(("simulate_agent_input", _simulate_case(client, api)))
        cases.append(("traces_list_pending_failed_and_files", _traces_list_case(client, api)))
        client.shutdown()
    cases += [(case["name"], _pair_case(case)) for case in PAIRED]
    if ROOT.exists():
        shutil.rmtree(ROOT)
    (ROOT / "invalid").mkdir(parents=True)
    for name, case in cases:
        _write(ROOT / f"{name}.json", _checked(name, case))
    for name, description, trace, code, index in INVALID:
        _write(ROOT / "invalid" / f"{name}.json", {"description": description, "trace": trace,
                                                   "error": error_of(trace, code, index)})
    print(f"wrote {len(cases)} valid and {len(INVALID)} invalid cases to {ROOT}")


if __name__ == "__main__":
    main()
