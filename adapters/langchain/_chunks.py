"""Streaming chunks the ``langchain`` reader refuses (``streaming_chunk``): an
``AIMessageChunk`` still in pieces, which ``stream()`` yields one per token and which must be
summed (``chunk + chunk``) into one message before it is converted. And the content blocks
LangChain itself rewrites when the writer builds a stream's last v1 chunk
(``not_representable``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tracebridge.errors import TraceError, short_repr

from ._call_blocks import lenient_json

__all__ = [
    "ChunkRun",
    "ContentWatch",
    "continued_from",
    "reject_continued_chunk",
    "reject_partial_chunk",
    "watch_content",
]


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
        if args and _cut_off(args, parse_partial):
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
    _reject_function_call_piece(data, at, parse_partial)


def _reject_function_call_piece(data: dict[str, Any], at: str, parse_partial: Any) -> None:
    """A legacy ``function_call`` piece of a stream: one without a name continues the call
    an earlier chunk started (OpenAI streams the name once, then pieces of the arguments,
    which ChatOpenAI names ``""``); one with a name and no arguments starts a call whose
    arguments come in later chunks (as ``GenericFakeChatModel`` streams it); arguments cut
    off mid-JSON, in a chunk with no other calls (beside them it is a copy of theirs), are
    the start of a call's arguments."""
    kwargs = data.get("additional_kwargs")
    function_call = kwargs.get("function_call") if type(kwargs) is dict else None
    if type(function_call) is not dict:
        return
    where = f"{at}.additional_kwargs.function_call"
    if function_call.get("name") in (None, ""):
        raise TraceError(
            "streaming_chunk",
            f"function_call {short_repr(function_call)} has no name: it continues a function "
            f"call started in an earlier chunk; sum the chunks (chunk + chunk) before converting",
            path=where,
        )
    if "arguments" not in function_call:
        raise TraceError(
            "streaming_chunk",
            f"function_call {short_repr(function_call)} has no arguments: they come in later "
            f"chunks; sum the chunks (chunk + chunk) before converting",
            path=where,
        )
    args = function_call["arguments"]
    if any(data.get(key) for key in ("tool_calls", "invalid_tool_calls", "tool_call_chunks")):
        return
    if type(args) is str and _cut_off(args, parse_partial):
        raise TraceError(
            "streaming_chunk",
            f"function_call arguments {short_repr(args)} are cut off mid-JSON; sum the chunks "
            f"(chunk + chunk) before converting",
            path=f"{where}.arguments",
        )


def _cut_off(args: str, parse_partial: Any) -> bool:
    """Whether argument text is the start of a JSON object: not JSON itself (as LangChain
    reads it, control characters allowed in strings), but LangChain's partial parser reads
    it as an object."""
    return bool(args) and not _whole_json(args) and type(_partial(parse_partial, args)) is dict


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


def _whole_json(text: str) -> bool:
    try:
        lenient_json(text)
    except (ValueError, RecursionError):  # JSONDecodeError, or JSON Python cannot hold
        return False
    return True


def _partial(parse_partial: Any, text: str) -> Any:
    try:
        return parse_partial(text)
    except (ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class ContentWatch:
    """The content given to an ``AIMessageChunk`` that LangChain's validators may rewrite:
    the elements given (by identity), a deep copy of them, and the part blocks among them
    (``parts[k]`` is the block of typed part ``first + k``)."""

    given: list[Any]
    copied: list[Any]
    parts: list[Any]
    first: int

    def check(self, built: Any, at: str) -> None:
        """``built`` (the content LangChain kept) must be the content given: its
        ``init_tool_calls`` turns a ``tool_call_chunk`` block naming a valid call into a
        ``tool_call`` block, and ``init_server_tool_calls`` a ``server_tool_call_chunk`` (or a
        ``server_tool_call``) with JSON text arguments into a ``server_tool_call`` with them
        parsed; either would read back as another part, or as none."""
        if built == self.copied:
            return
        p = next(
            (p for p, block in enumerate(self.copied) if p >= len(built) or built[p] != block),
            len(self.copied),
        )
        given = self.given[p] if p < len(self.given) else None
        k = next((k for k, part in enumerate(self.parts) if part is given), None)
        raise TraceError(
            "not_representable",
            f"LangChain rewrites this content block when it builds an AIMessageChunk with "
            f"chunk_position='last' and response_metadata.output_version 'v1' (its "
            f"init_tool_calls / init_server_tool_calls validators): "
            f"{short_repr(self.copied[p] if p < len(self.copied) else None)} becomes "
            f"{short_repr(built[p] if p < len(built) else None)}, which would read back as "
            f"another part or as none (kept as another class, or without chunk_position, it "
            f"stays as it is)",
            path=f"{at}.content" if k is None else f"{at}.content[{self.first + k}]",
        )


def watch_content(
    cls_name: str, fields: dict[str, Any], parts: Any, first: int
) -> ContentWatch | None:
    """A ``ContentWatch`` of ``fields["content"]`` when LangChain's validators may rewrite
    it (an ``AIMessageChunk`` marked ``chunk_position="last"`` whose ``response_metadata``
    says ``output_version`` ``"v1"``, with a content list); None otherwise (the usual
    message: nothing to compare). ``parts``: the part blocks written into the content."""
    if cls_name != "AIMessageChunk" or fields.get("chunk_position") != "last":
        return None
    metadata = fields.get("response_metadata")
    content = fields["content"]
    if type(metadata) is not dict or metadata.get("output_version") != "v1":
        return None
    if type(content) is not list:
        return None
    return ContentWatch(list(content), copy.deepcopy(content), parts, first)
