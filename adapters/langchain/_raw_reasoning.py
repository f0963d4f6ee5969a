"""The raw reasoning text of an OpenAI Responses reasoning item that also has a summary.

An item's raw reasoning (``content``: ``reasoning_text`` entries, as gpt-oss and other
open-weight models served through the Responses API return it) is a reasoning part of its
own, as the ``openai_responses`` adapter reads it. An item whose summary is empty is the one
part of that text (``_shapes.RawReasoningShape``). An item with both is two parts: the
summary's, then the raw text's, marked ``metadata.langchain.from = "content"`` (with
``block = {"content": [...]}`` when one ``reasoning_text`` entry of its text would not give
the list back). That holds in ChatOpenAI's layouts (a ``reasoning`` content block with
``summary``, ``additional_kwargs["reasoning"]``) and in langchain-core's v1 standard block
(``{"type": "reasoning", "reasoning", "content": [...]}``: its translation puts the item's
other keys on the first block of the summary). The way back writes the marked part into the
item of the part before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import ReasoningPart

from ._classes import NAME
from ._kept_places import refuse_unknown
from ._shapes import BlockShape, raw_reasoning_text, with_raw_entries

__all__ = [
    "CONTENT_MARK",
    "SPLIT_SHAPES",
    "check_no_raw",
    "continues",
    "merged",
    "split_block_part",
    "split_item",
]

CONTENT_MARK = "content"
"""``metadata.langchain.from`` of a part holding the raw text of the item before it."""

SPLIT_SHAPES = frozenset(("responses_reasoning", "reasoning"))
"""The content-block layouts of reasoning whose kept block may hold a raw reasoning list."""

_MARK_KEYS = frozenset(("from", "block"))
"""What the reader keeps on a part holding an item's raw text."""


def split_item(
    text: str, block: dict[str, Any]
) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]] | None]:
    """The summary's text and the rest of the item (``block``), and the raw text and its
    mark when the item holds a raw reasoning list beside its summary (else None)."""
    raw = raw_reasoning_text(block.get("content"))
    if raw is None:
        return (text, block), None
    rest = {key: value for key, value in block.items() if key != "content"}
    return (text, rest), (raw, _mark(raw, block["content"]))


def _mark(raw: str, listed: list[Any]) -> dict[str, Any]:
    if listed == [{"type": "reasoning_text", "text": raw}]:
        return {"from": CONTENT_MARK}
    return {"from": CONTENT_MARK, "block": {"content": listed}}


def split_block_part(part: ReasoningPart) -> list[ReasoningPart]:
    """A reasoning part read from a content block; one whose kept block holds a raw
    reasoning list beside the summary's text is two parts (the raw text's after)."""
    kept = part.metadata.get(NAME)
    if type(kept) is not dict or kept.get("shape") not in SPLIT_SHAPES:
        return [part]
    (_, rest), raw = split_item(part.text, kept["block"])
    if raw is None:
        return [part]
    if kept["shape"] == "reasoning" and _without_part_id(rest, part) == {"type": "reasoning"}:
        first = part.model_copy(update={"metadata": {}})  # the block written without metadata
    else:
        first = part.model_copy(update={"metadata": {NAME: {**kept, "block": rest}}})
    return [first, ReasoningPart(text=raw[0], metadata={NAME: raw[1]})]


def _without_part_id(block: dict[str, Any], part: ReasoningPart) -> dict[str, Any]:
    """``block`` without an ``id`` kept in its place that is the part's own (the way back
    writes the part's id anyway)."""
    if part.id is None or block.get("id") != part.id:
        return block
    return {key: value for key, value in block.items() if key != "id"}


def check_no_raw(block: dict[str, Any], at: str) -> None:
    """A summary's kept item (``block``, at ``at``) holds no raw reasoning list: the reader
    reads one as a part of its own after the summary's, so the part written would read back
    as two; ``not_representable``."""
    if raw_reasoning_text(block.get("content")) is None:
        return
    raise TraceError(
        "not_representable",
        f"the reasoning item kept for this part holds raw reasoning text in its content "
        f"{short_repr(block['content'])}, which reads back as a reasoning part of its own "
        "after this one; take 'content' out of it and give its text to a reasoning part "
        "marked from: 'content' right after this one",
        path=f"{at}.content",
        source=NAME,
    )


def continues(part: Any) -> bool:
    """Whether ``part`` is marked as holding the raw text of the item before it."""
    if not isinstance(part, ReasoningPart):
        return False
    kept = part.metadata.get(NAME)
    return type(kept) is dict and kept.get("from") == CONTENT_MARK


def merged(
    element: Any,
    part: ReasoningPart,
    reading: Callable[[dict[str, Any]], tuple[BlockShape, dict[str, str]] | None],
    where: str,
) -> dict[str, Any]:
    """``element`` (the item written for the part before ``part``, which ``reading`` reads)
    with ``part``'s raw text as its ``content``; ``not_representable`` when it would not read
    back as the same item and then ``part`` (``where``: ``part``'s path). The part has no
    id of its own: the item's is on the part before it."""
    if part.id is not None:
        raise TraceError(
            "not_representable",
            f"a reasoning part marked from: 'content' is written into the reasoning item of "
            f"the part before it, which holds that item's id: a layout without id of its own; "
            f"the part has id {part.id!r}",
            path=f"{where}.id",
            source=NAME,
        )
    listed = _entries(part, where)
    found = reading(element) if type(element) is dict else None
    if found is None or found[0].name not in SPLIT_SHAPES or "content" in element:
        _refuse_place(where)
    block = with_raw_entries(element, listed)
    if reading(block) != found:
        _refuse_place(where)
    return block


def _entries(part: ReasoningPart, where: str) -> list[Any]:
    """The raw reasoning list for ``part``: the kept one while it still joins to the part's
    text, else one ``reasoning_text`` entry of it."""
    kept = part.metadata[NAME]
    at = f"{where}.metadata.{NAME}"
    refuse_unknown(kept, _MARK_KEYS, "a part holding the raw text of the item before it", at)
    block = kept.get("block")
    if block is None:
        return [{"type": "reasoning_text", "text": part.text}]
    if type(block) is not dict or set(block) != {"content"} or raw_reasoning_text(
        block["content"]
    ) is None:
        raise TraceError(
            "malformed_event",
            f"metadata.langchain.block of a part holding the raw text of the item before it "
            f"is {{'content': <a list of reasoning_text entries>}}, as to_messages writes it; "
            f"got {short_repr(block)}",
            path=f"{at}.block",
            source=NAME,
        )
    if raw_reasoning_text(block["content"]) != part.text:
        raise TraceError(
            "not_representable",
            f"the raw reasoning kept for this part {short_repr(block['content'])} does not "
            f"join to the part's text {part.text!r}: written, the part would read back with "
            "other metadata; take 'block' out of metadata.langchain to write the text as one "
            "reasoning_text entry, or give the part the text the list joins to",
            path=at,
            source=NAME,
        )
    return list(block["content"])


def _refuse_place(where: str) -> None:
    raise TraceError(
        "not_representable",
        "a reasoning part marked from: 'content' holds the raw reasoning text of the reasoning "
        "item right before it, written with a summary and no content of its own, as "
        "to_messages reads an item with both; there is none before it (take the mark out of "
        "metadata.langchain to write it as a reasoning block of its own)",
        path=f"{where}.metadata.{NAME}.from",
        source=NAME,
    )
