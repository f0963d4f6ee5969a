"""Streaming chunks the ``langchain`` reader refuses (``streaming_chunk``): an
``AIMessageChunk`` still in pieces, which ``stream()`` yields one per token and which must be
summed (``chunk + chunk``) into one message before it is converted."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tracebridge.errors import TraceError, short_repr

__all__ = ["ChunkRun", "continued_from", "reject_continued_chunk", "reject_partial_chunk"]


def reject_partial_chunk(data: dict[str, Any], at: str, parse_partial: Any) -> None:
    """An ``AIMessageChunk`` still in pieces (not summed into one message) is refused."""
    if data.get("chunk_position") == "last":
        return  # the stream's final, aggregated chunk: LangChain has parsed its calls
    chunks = data.get("tool_call_chunks") or []
    for k, chunk in enumerate(chunks):
        where = f"{at}.tool_call_chunks[{k}]"
        if chunk.get("name") is None:
            raise TraceError(
                "streaming_chunk",
                f"tool call chunk {short_repr(chunk)} has no name: it continues a call started in "
                f"an earlier chunk; sum the chunks (chunk + chunk) before converting",
                path=where,
            )
        args = chunk.get("args")
        if args and not _strict_json(args) and type(_partial(parse_partial, args)) is dict:
            raise TraceError(
                "streaming_chunk",
                f"tool call chunk arguments {short_repr(args)} are cut off mid-JSON; sum the "
                f"chunks (chunk + chunk) before converting",
                path=f"{where}.args",
            )
    if chunks and not data.get("tool_calls") and not data.get("invalid_tool_calls"):
        raise TraceError(
            "streaming_chunk",
            "the chunk has tool_call_chunks but no parsed tool_calls; aggregate the stream first",
            path=f"{at}.tool_call_chunks",
        )


@dataclass
class ChunkRun:
    """The run of consecutive ``AIMessageChunk``s read last: where each id was first read
    in it, and the index of its last chunk."""

    ids: dict[str, int] = field(default_factory=dict)
    last: int = -2


def continued_from(chunk_id: Any, i: int, run: ChunkRun) -> int | None:
    """Where the ``AIMessageChunk`` at ``i`` (with ``chunk_id``) is continued from: an
    earlier chunk of the same id in the same run of consecutive chunks, whose index this is;
    None when there is none.

    Such chunks are pieces of one streamed message (``stream()`` and LangGraph's
    ``stream_mode="messages"`` yield one per token, all with the message's id, only the last
    marked ``chunk_position="last"``; pieces of parallel streams interleave). Summed chunks
    that share an id apart (a tool result between them) are two messages."""
    if run.last != i - 1:
        run.ids.clear()
    run.last = i
    if type(chunk_id) is not str:
        return None
    first = run.ids.setdefault(chunk_id, i)
    return None if first == i else first


def reject_continued_chunk(chunk_id: Any, i: int, at: str, run: ChunkRun) -> None:
    """A chunk that continues an earlier one (``continued_from``) is refused at the later
    piece, as a tool call chunk that continues a call is."""
    first = continued_from(chunk_id, i, run)
    if first is not None:
        raise TraceError(
            "streaming_chunk",
            f"this AIMessageChunk has the id {short_repr(chunk_id)} of the AIMessageChunk at "
            f"messages[{first}]: both are pieces of one streamed message; sum the chunks "
            f"(chunk + chunk) before converting",
            path=f"{at}.id",
        )


def _strict_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _partial(parse_partial: Any, text: str) -> Any:
    try:
        return parse_partial(text)
    except json.JSONDecodeError:
        return None
