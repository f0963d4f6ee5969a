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

from ._run import HANDOFF_OUTPUT, NAME, Entry

SUMMARY_PREAMBLE = (
    "For context, here is the conversation so far between the user and the previous agent:"
)
"""The first line of the SDK's nested-history summary (``agents.handoffs.history``)."""


def refuse_overlap(found: list[Entry]) -> None:
    """``ambiguous_trace`` at a RunItem whose item may be a copy the SDK nested: one equal to
    an input item after the input's first nested-history summary, and listed before a handoff
    of this run (for RunItems read with their input, not from a result; checked once the items
    read, so that what is wrong with an item itself is said first).

    The SDK copies into the next agent's input only items of the run that come before the
    handoff; items after a run's last handoff are never moved, and a run with no handoff (one
    that continues a nested history) moved none: an equal item there is a repeat (a model that
    gives every message one placeholder id). Without a summary an input item equal to a new
    item is no sign of a rewrite either; and where the nested input holds no copy, the input
    followed by the items is what ``to_input_list()`` gives."""
    handoff = next((entry for entry in reversed(found) if _is_handoff(entry)), None)
    if handoff is None:
        return
    given: list[Entry] = []
    summary: Entry | None = None
    for entry in found:
        if entry is handoff:
            return
        if entry.approval:
            continue
        if entry.record is None:
            if summary is None and _is_summary(entry.item):
                summary = entry  # the copies follow it (among the later summaries)
            elif summary is not None:
                given.append(entry)
            continue
        copy = next((before for before in given if before.item == entry.item), None)
        if summary is not None and copy is not None:
            raise _ambiguous(entry, copy, summary, handoff)


def _is_handoff(entry: Entry) -> bool:
    return entry.record is not None and entry.record.get("type") == HANDOFF_OUTPUT


def _ambiguous(entry: Entry, copy: Entry, summary: Entry, handoff: Entry) -> TraceError:
    return TraceError(
        "ambiguous_trace",
        f"this RunItem's item ({short_repr(entry.item)}) is also in the run's input, at "
        f"{copy.path}, after the SDK's nested-history summary at {summary.path}, and this "
        f"run hands off after the item, at {handoff.path}: a handoff with "
        "RunConfig(nest_handoff_history=True) copies the items before it into the next "
        "agent's input, so nothing here tells whether the input holds a copy of this item or "
        "the same item said again, nor which copy the run's history keeps; read the run "
        "result itself (to_messages(result)), or its to_input_list()",
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
