"""Write golden_traces/swarm/ from the reference Swarm histories in ../shared/samples/swarm/.

Usage: ``python scripts/golden/swarm.py`` (rewrites the folder; output is deterministic).

Swarm is not on PyPI, so its histories cannot be produced here: the samples were made by
Swarm's own run loop (``Swarm.run``, non-streaming and ``stream=True``) with a scripted
chat-completions client. Each sample's ``messages`` is copied verbatim as ``trace``, next
to its ``final_agent`` and ``context_variables``; ``expected`` (the adapter's typed output
at generation time: review a diff before committing) and ``handoffs`` are added. Invalid
cases are the samples broken on purpose, with the code and index written here by hand.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from tracebridge.adapters import swarm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: golden_errors
from golden_errors import error_of as raised

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(os.environ.get("SWARM_SAMPLES", ROOT.parent / "shared" / "samples" / "swarm"))
OUT = ROOT / "golden_traces" / "swarm"

DESCRIPTIONS = {
    "billing_handoff_nonstreaming": "Swarm.run: Front Desk sets the account and hands off to "
    "Billing Agent, which calls get_balance; every ChatCompletionMessage field, nulls included.",
    "billing_handoff_streaming": "The same run with stream=True: fewer keys, content '' rather "
    "than null, and sender stays 'Front Desk' after the handoff.",
}


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def invalid_cases(history: list[Any]) -> dict[str, tuple[str, Any, str, int | None]]:
    """[user, assistant(set_account, transfer), tool, tool(handoff), assistant, tool, assistant]"""

    def edited(edit: Any) -> list[Any]:
        broken = copy.deepcopy(history)
        edit(broken)
        return broken

    return {
        "removed_handoff_result": (
            "The handoff result removed: transfer_to_billing is unanswered.",
            edited(lambda h: h.pop(3)),
            "unanswered_tool_call",
            1,
        ),
        "unknown_role": (
            "An agent turn with Swarm's agent name as its role.",
            edited(lambda h: h[4].update(role="Billing Agent")),
            "unknown_role",
            4,
        ),
        "tool_without_call_id": (
            "A tool result with tool_name but no tool_call_id.",
            edited(lambda h: h[5].pop("tool_call_id")),
            "malformed_event",
            5,
        ),
        "response_wrapper": (
            "The {messages, final_agent, context_variables} record itself: pass its messages.",
            {"messages": history, "final_agent": "Billing Agent", "context_variables": {}},
            "malformed_event",
            None,
        ),
    }


def error_of(trace: Any, code: str, index: int | None) -> dict[str, Any]:
    """The error reading ``trace`` raises: the code and index given here, and its path."""
    return raised(swarm.to_messages, trace, code, index)


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "invalid").mkdir(parents=True)
    for sample in sorted(SAMPLES.glob("*.json")):
        recorded = json.loads(sample.read_text(encoding="utf-8"))
        trace = recorded["messages"]
        messages = swarm.to_messages(trace)
        write(
            OUT / sample.name,
            {
                "description": DESCRIPTIONS[sample.stem],
                "trace": trace,
                "final_agent": recorded["final_agent"],
                "context_variables": recorded["context_variables"],
                "expected": [m.model_dump(mode="json") for m in messages],
                "handoffs": [dataclasses.asdict(h) for h in swarm.handoffs(messages)],
            },
        )
    first = json.loads((SAMPLES / "billing_handoff_nonstreaming.json").read_text("utf-8"))
    for name, (description, trace, code, index) in invalid_cases(first["messages"]).items():
        write(
            OUT / "invalid" / f"{name}.json",
            {
                "description": description,
                "trace": trace,
                "error": error_of(trace, code, index),
            },
        )
    print(f"wrote golden_traces/swarm from {SAMPLES}")


if __name__ == "__main__":
    main()
