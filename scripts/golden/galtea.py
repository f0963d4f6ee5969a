"""Write ``golden_traces/galtea/``: Galtea ``conversation_turns`` in both shapes.

Galtea traces are plain JSON (there is no framework object to run), so each case here is a
typed conversation written by hand; the trace is what ``from_messages`` makes of it, in the
shapes Galtea documents: legacy pairs ``{"input", "actual_output"}`` and current role turns
``{"role", "content", "retrieval_context"?}``. Cases with ``source`` start from a richer
conversation (system prompt, tool activity) and record the options that accept the loss and
what was left out. Before writing, every case is checked: the trace must read back as the
expected conversation. Invalid cases are written as literal broken traces.

Re-runnable and deterministic (no ids, no timestamps):
``/work/venv/bin/python scripts/golden/galtea.py`` rewrites the folder.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from tracebridge.adapters import galtea
from tracebridge.messages import AnyMessage

ROOT = Path(__file__).resolve().parents[2] / "golden_traces" / "galtea"

PAIRS = {"galtea": {"shape": "pairs"}}


def pairs_answer(**namespace: Any) -> dict[str, Any]:
    return {"galtea": {"shape": "pairs", **namespace}}


def roles_answer(**namespace: Any) -> dict[str, Any]:
    return {"galtea": namespace}


VALID: list[dict[str, Any]] = [
    {
        "name": "roles_savings_advice",
        "description": "Role turns as inference_results.create_batch takes them.",
        "shape": "roles",
        "expected": [
            HumanMessage(content="Which savings options carry little risk?"),
            AIMessage(content="Government bonds, insured deposits and broad index funds."),
            HumanMessage(content="Should that change as I get older?"),
            AIMessage(content="Usually yes: the mix moves towards bonds near retirement."),
            HumanMessage(content="Thanks!"),
            AIMessage(content="Glad to help."),
        ],
    },
    {
        "name": "roles_with_retrieval_context",
        "description": "retrieval_context on assistant turns, kept on the AIMessage.",
        "shape": "roles",
        "expected": [
            HumanMessage(content="When does the shop open on Saturday?"),
            AIMessage(
                content="From 10:00 to 14:00.",
                metadata=roles_answer(retrieval_context="Opening hours: Sat 10-14, Sun closed."),
            ),
            HumanMessage(content="And on Sunday?"),
            AIMessage(
                content="It is closed on Sunday.",
                metadata=roles_answer(retrieval_context="Opening hours: Sat 10-14, Sun closed."),
            ),
        ],
    },
    {
        "name": "roles_message_dump",
        "description": "Role turns dumped from Galtea's ConversationMessage: null "
        "retrieval_context on user turns and a metadata key, kept verbatim.",
        "shape": "roles",
        "expected": [
            HumanMessage(
                content="hello",
                metadata=roles_answer(
                    retrieval_context=None, extra={"metadata": {"chat_type": "support"}}
                ),
            ),
            AIMessage(
                content="Hi! How can I help?",
                metadata=roles_answer(retrieval_context=None, extra={"metadata": None}),
            ),
        ],
    },
    {
        "name": "roles_consecutive_user_turns",
        "description": "Two user turns in a row: role turns express them as they are.",
        "shape": "roles",
        "expected": [
            HumanMessage(content="Is the order shipped?"),
            HumanMessage(content="Order 4411, I mean."),
            AIMessage(content="Order 4411 left the warehouse yesterday."),
        ],
    },
    {
        "name": "pairs_legacy",
        "description": "Legacy pairs: each {input, actual_output} is one finished exchange.",
        "shape": "pairs",
        "expected": [
            HumanMessage(content="Hi, what is Galtea?", metadata=PAIRS),
            AIMessage(content="A platform for evaluating AI products.", metadata=PAIRS),
            HumanMessage(content="Which metrics does it have?", metadata=PAIRS),
            AIMessage(
                content="Relevancy, faithfulness, role adherence and more.", metadata=PAIRS
            ),
        ],
    },
    {
        "name": "pairs_with_retrieval_context_and_extra_keys",
        "description": "A pair's retrieval_context and unknown keys, kept on its AIMessage.",
        "shape": "pairs",
        "expected": [
            HumanMessage(content="What is the refund window?", metadata=PAIRS),
            AIMessage(
                content="30 days from delivery.",
                metadata=pairs_answer(
                    retrieval_context="Refunds: within 30 days of delivery.",
                    extra={"latency_ms": 812, "tags": ["refunds"]},
                ),
            ),
        ],
    },
    {
        "name": "pirate_pairs_from_openai_history",
        "description": "The pirate history of Galtea's page (with a 'role' on its system "
        "entry) as pairs: the system prompt is left out by skip_system=True, and recorded.",
        "shape": "pairs",
        "source": [
            SystemMessage(content="You are a pirate."),
            HumanMessage(content="Can you teach me to swim?"),
            AIMessage(content="Sure thing, matey! Then ye go swim with the shark."),
            HumanMessage(content="I am not sure if I can swim with the shark."),
            AIMessage(content="Ye can do it!"),
        ],
        "options": {"skip_system": True},
        "expected": [
            HumanMessage(content="Can you teach me to swim?", metadata=PAIRS),
            AIMessage(content="Sure thing, matey! Then ye go swim with the shark.", metadata=PAIRS),
            HumanMessage(content="I am not sure if I can swim with the shark.", metadata=PAIRS),
            AIMessage(content="Ye can do it!", metadata=PAIRS),
        ],
    },
    {
        "name": "agent_with_tools_folded",
        "description": "An agent run with a system prompt and a tool call, as role turns: "
        "skip_system=True and fold_tools=True leave them out, and they are recorded.",
        "shape": "roles",
        "source": [
            SystemMessage(content="You answer weather questions."),
            HumanMessage(content="Weather in Paris?"),
            AIMessage(
                content="",
                tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")],
            ),
            ToolMessage(content="18 C, sunny", tool_call_id="call_1", name="get_weather"),
            AIMessage(content="It is 18 C and sunny in Paris."),
        ],
        "options": {"skip_system": True, "fold_tools": True},
        "expected": [
            HumanMessage(content="Weather in Paris?"),
            AIMessage(content="It is 18 C and sunny in Paris."),
        ],
    },
]

INVALID: list[dict[str, Any]] = [
    {
        "name": "pirate_history_without_role",
        "description": "The first entry of the pirate example on Galtea's page has no 'role' "
        "('system': 'system'): neither a role turn nor a pair.",
        "trace": [
            {"system": "system", "content": "You are a pirate."},
            {"role": "user", "content": "Can you teach me to swim?"},
            {"role": "assistant", "content": "Sure thing, matey! Then ye go swim with the shark."},
        ],
        "error": {"code": "malformed_event", "index": 0},
    },
    {
        "name": "system_role_turn",
        "description": "Galtea role turns are user or assistant; a system turn is unknown.",
        "trace": [
            {"role": "system", "content": "You are a pirate."},
            {"role": "user", "content": "Ahoy?"},
        ],
        "error": {"code": "unknown_role", "index": 0},
    },
    {
        "name": "tool_role_turn",
        "description": "A tool message is not a Galtea turn.",
        "trace": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "tool", "content": "18 C", "tool_call_id": "call_1"},
        ],
        "error": {"code": "unknown_role", "index": 1},
    },
    {
        "name": "mixed_shapes",
        "description": "A pair after a role turn: one list holds one shape.",
        "trace": [
            {"role": "user", "content": "hi"},
            {"input": "hi", "actual_output": "hello"},
        ],
        "error": {"code": "malformed_event", "index": 1},
    },
    {
        "name": "retrieval_context_on_user_turn",
        "description": "retrieval_context belongs on assistant turns.",
        "trace": [
            {"role": "user", "content": "hours?", "retrieval_context": "Opening hours: 9-5"},
            {"role": "assistant", "content": "9 to 5."},
        ],
        "error": {"code": "malformed_event", "index": 0},
    },
    {
        "name": "pair_missing_actual_output",
        "description": "A pair needs both input and actual_output.",
        "trace": [
            {"input": "hi", "actual_output": "hello"},
            {"input": "and then?"},
        ],
        "error": {"code": "malformed_event", "index": 1},
    },
    {
        "name": "content_as_parts",
        "description": "Galtea content is a string, not a list of OpenAI content parts.",
        "trace": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "error": {"code": "malformed_event", "index": 0},
    },
    {
        "name": "empty",
        "description": "No turns at all.",
        "trace": [],
        "error": {"code": "empty_conversation", "index": None},
    },
]


def _dump(messages: list[AnyMessage]) -> list[dict[str, Any]]:
    return [message.model_dump(mode="json") for message in messages]


def _valid_case(case: dict[str, Any]) -> dict[str, Any]:
    expected: list[AnyMessage] = case["expected"]
    out: dict[str, Any] = {"description": case["description"], "shape": case["shape"]}
    if "source" in case:
        omitted: list[galtea.Omission] = []
        trace = galtea.from_messages(
            case["source"], shape=case["shape"], omitted=omitted, **case["options"]
        )
        out["source"] = {
            "messages": _dump(case["source"]),
            "options": case["options"],
            "omitted": [dataclasses.asdict(omission) for omission in omitted],
        }
    else:
        trace = galtea.from_messages(expected, shape=case["shape"])
    if galtea.to_messages(trace) != expected:
        raise SystemExit(f"{case['name']}: the trace does not read back as expected")
    out["trace"] = trace
    out["expected"] = _dump(expected)
    return out


def _write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    if ROOT.exists():
        shutil.rmtree(ROOT)
    (ROOT / "invalid").mkdir(parents=True)
    for case in VALID:
        _write(ROOT / f"{case['name']}.json", _valid_case(case))
    for case in INVALID:
        body = {key: case[key] for key in ("description", "trace", "error")}
        _write(ROOT / "invalid" / f"{case['name']}.json", body)
    print(f"wrote {len(VALID)} valid and {len(INVALID)} invalid cases to {ROOT}")


if __name__ == "__main__":
    main()
