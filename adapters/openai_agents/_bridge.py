"""Reading and writing Responses items through the ``openai_responses`` adapter.

The items of a run are Responses items, so ``openai_responses`` maps them, in this adapter's
metadata namespace (``metadata["openai_agents"]``) and naming this adapter in its errors. Two
things are this adapter's own: errors point at the position in this adapter's input, and the
``run_items`` key of the namespace (the RunItem wrappers) is not the Responses writer's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from tracebridge.errors import TraceError
from tracebridge.messages import Message

from ..openai_responses import read_items, write_items
from ..openai_responses._read import read_placed

if TYPE_CHECKING:
    from ._run import Entry

NAME = "openai_agents"
RUN_ITEMS = "run_items"
"""The key of this adapter's namespace that holds a message's RunItem wrappers."""

_LEADING_INDEX = re.compile(r"^[A-Za-z_]*\[\d+\]")
_ITEM_MENTION = re.compile(r"\bitems\[(\d+)\]")


def read(entries: Sequence[Entry], *, allow_pending: bool) -> list[Message]:
    """Typed messages of the entries' items; errors point at the entries' places in the source
    (a field of a RunItem's item under its ``raw_item``)."""
    try:
        return read_items([entry.item for entry in entries], source=NAME,
                          allow_pending=allow_pending)
    except TraceError as error:
        raise _moved(error, entries) from None


def count_read(items: list[Any]) -> list[Message]:
    """The messages ``items`` alone read as (calls may stay unanswered)."""
    return read_items(items, source=NAME, allow_pending=True)


def placed_read(items: list[Any]) -> tuple[list[Message], list[int]]:
    """``count_read``, and for each item the index of the message it was first read into."""
    return read_placed(items, source=NAME, allow_pending=True)


def write(
    messages: list[Message], drop: Collection[str], drop_names: bool
) -> list[dict[str, Any]]:
    """Responses input items for ``messages`` (the RunItem wrappers are not written)."""
    return write_items(
        [_without_run_items(m) for m in messages], source=NAME, drop=drop, drop_names=drop_names
    )


def _without_run_items(message: Message) -> Message:
    space = message.metadata.get(NAME)
    if not isinstance(space, dict) or RUN_ITEMS not in space:
        return message
    rest = {key: value for key, value in space.items() if key != RUN_ITEMS}
    metadata = {key: value for key, value in message.metadata.items() if key != NAME}
    if rest:
        metadata[NAME] = rest
    return message.model_copy(update={"metadata": metadata})


def _moved(error: TraceError, entries: Sequence[Entry]) -> TraceError:
    """``error`` at the source's own position (the reader counted the items it was given)."""
    index, path = error.index, error.path
    if index is None or not 0 <= index < len(entries):
        if path == "":  # no place at all (an empty list): no path, rather than an empty one
            return TraceError(error.code, error.detail, index=index, source=NAME)
        return error
    where = entries[index].item_path
    if path is None:
        path = where
    elif _LEADING_INDEX.match(path):
        path = _LEADING_INDEX.sub(where, path, count=1)
    else:
        path = f"{where}.{path}"
    # The detail names other items by the reader's count too (``has no result before
    # items[5]``): the same positions, spelled as this trace's.
    detail = _ITEM_MENTION.sub(
        lambda found: entries[int(found[1])].path if int(found[1]) < len(entries) else found[0],
        error.detail,
    )
    return TraceError(error.code, detail, index=entries[index].index, path=path, source=NAME)
