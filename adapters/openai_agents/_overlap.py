"""RunItems read with their input, where the SDK nested the history into that input.

With ``RunConfig(nest_handoff_history=True)`` (and the SDK's default history mapper), a
handoff rewrites the next agent's input: the turns before it become one assistant message,
the summary (``For context, here is the conversation so far between the user and the previous
agent:`` then the turns between history markers), followed by the items the summary does not
cover, copied verbatim (the handing-off response's assistant message, for one). The result's
``input`` is then that rewritten input, and its ``new_items`` still hold the copied items: the
input followed by the items holds them twice. The result object tells which copy the history
keeps (``to_input_list()`` leaves the new item out); an item list and its input do not.
"""

from __future__ import annotations

from typing import Any

from tracebridge.errors import TraceError, short_repr

from ._run import NAME, Entry

SUMMARY_PREAMBLE = (
    "For context, here is the conversation so far between the user and the previous agent:"
)
"""The first line of the SDK's nested-history summary (``agents.handoffs.history``)."""


def refuse_overlap(found: list[Entry]) -> None:
    """``ambiguous_trace`` at a RunItem whose item is a copy of an input item before it, when
    that input holds the SDK's nested-history summary (for RunItems read with their input, not
    from a result; checked once the items read, so that what is wrong with an item itself is
    said first).

    Without the summary an input item equal to a new item is no sign of a rewrite (a typed
    conversation may repeat a message); and where the nested input holds no copy, the input
    followed by the items is what ``to_input_list()`` gives."""
    given: list[Entry] = []
    summary: Entry | None = None
    for entry in found:
        if entry.approval:
            continue
        if entry.record is None:
            given.append(entry)
            if summary is None and _is_summary(entry.item):
                summary = entry
            continue
        if summary is None:
            continue
        copy = next((before for before in given if before.item == entry.item), None)
        if copy is not None:
            raise TraceError(
                "ambiguous_trace",
                f"this RunItem's item ({short_repr(entry.item)}) is also in the run's input, "
                f"at {copy.path}: that input is a history the SDK nested (its summary is at "
                f"{summary.path}; RunConfig(nest_handoff_history=True)), which copies the "
                "item into it, and nothing here tells which copy the run's history keeps; "
                "read the run result itself (to_messages(result)), or its to_input_list()",
                index=entry.index,
                path=entry.path,
                source=NAME,
            )


def _is_summary(item: Any) -> bool:
    """True for the assistant message the SDK writes as a nested history's summary."""
    if not isinstance(item, dict) or item.get("role") != "assistant":
        return False
    content = item.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        content = content[0].get("text")  # as RunState stores it: one output_text part
    return isinstance(content, str) and content.startswith(SUMMARY_PREAMBLE + "\n")
