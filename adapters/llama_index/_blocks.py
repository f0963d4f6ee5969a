"""LlamaIndex content blocks <-> tracebridge content parts (the JSON form of each block).

Each of the ten block types of ``llama_index.core.base.llms.types.ContentBlock`` is handled on
purpose. What a block holds that the part has no field for stays under the part's
``metadata["llama_index"]``; a block that no part describes stays whole as an ``OpaquePart``
whose ``kind`` is the block type. ``tool_call`` blocks are not parts: the message converter
turns them into ``ToolCall``s.
"""

from __future__ import annotations

from typing import Any

from tracebridge import (
    AudioPart,
    FilePart,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    TextPart,
    TraceError,
)
from tracebridge._json import check_json, check_json_object
from tracebridge.errors import short_repr
from tracebridge.messages import Part

NAME = "llama_index"

BLOCK_TYPES = (
    "text",
    "image",
    "audio",
    "video",
    "document",
    "cache",
    "citable",
    "citation",
    "thinking",
    "tool_call",
)
"""Every ``block_type`` of llama-index-core 0.14's ``ContentBlock`` union."""

OPAQUE_BLOCKS = ("cache", "citable", "citation")
"""Blocks no content part describes: kept whole as ``OpaquePart(kind=block_type)``."""

DEFAULT_DOCUMENT_TITLE = "input_document"
"""The title ``DocumentBlock`` gives a document that has none; it maps to ``filename=None``."""

MIME_FIELDS = {
    "image": "image_mimetype",
    "video": "video_mimetype",
    "document": "document_mimetype",
}
"""Blocks whose mimetype llama-index guesses when it is missing (kept as given instead)."""


def fail(code: Any, detail: str, index: int, path: str) -> TraceError:
    return TraceError(code, detail, index=index, path=path, source=NAME)


def json_checked(value: Any, index: int, path: str, *, is_object: bool = False) -> Any:
    """``value`` when it is JSON (a JSON object with ``is_object``); else the error, placed."""
    try:
        return check_json_object(value, path) if is_object else check_json(value, path)
    except TraceError as error:
        raise error.relocated(index=index, source=NAME) from None


def optional_str(block: dict[str, Any], key: str, index: int, path: str) -> str | None:
    value = block.get(key)  # optional in every block that has it
    if value is not None and type(value) is not str:
        raise fail(
            "malformed_event",
            f"{key!r} must be a string or null, got {type(value).__name__} {short_repr(value)}",
            index,
            f"{path}.{key}",
        )
    return value


def _extras(block: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The non-null fields of ``block`` among ``keys``, under the adapter's namespace."""
    kept = {key: block[key] for key in keys if block.get(key) is not None}
    return {NAME: kept} if kept else {}


def block_to_part(block: dict[str, Any], index: int, path: str) -> Part:
    """One block (not a ``tool_call``) as a content part."""
    kind = block["block_type"]
    if kind == "text":
        text = block.get("text")
        if type(text) is not str:
            raise fail(
                "malformed_event",
                f"a text block needs 'text' as a string, got {short_repr(text)}",
                index,
                f"{path}.text",
            )
        return TextPart(text=text)
    if kind in ("image", "audio", "video", "document"):
        return _media_part(block, index, path)
    if kind == "thinking":
        return _reasoning_part(block, index, path)
    if kind in OPAQUE_BLOCKS or kind == "tool_call":
        json_checked(block, index, path)
        return OpaquePart(kind=kind, value=block)
    raise fail(
        "malformed_event",
        f"unknown block_type {kind!r}; known: {', '.join(BLOCK_TYPES)}",
        index,
        f"{path}.block_type",
    )


def _media_part(block: dict[str, Any], index: int, path: str) -> Part:
    kind = block["block_type"]
    data_key = {"image": "image", "audio": "audio", "video": "video", "document": "data"}[kind]
    data = optional_str(block, data_key, index, path)
    url = optional_str(block, "url", index, path)
    for key in ("path", "detail", "format", "title", *MIME_FIELDS.values()):
        optional_str(block, key, index, path)
    if data is None and url is None:
        # A local path (or nothing at all): no part field says "a file on this machine".
        json_checked(block, index, path)
        return OpaquePart(kind=kind, value=block)
    if kind == "image":
        return ImagePart(
            url=url,
            data=data,
            mime_type=block.get("image_mimetype"),
            metadata=_extras(block, ("path", "detail")),
        )
    if kind == "audio":
        # AudioBlock.format is a format name ("wav"), not a mimetype: kept, never translated.
        return AudioPart(url=url, data=data, metadata=_extras(block, ("path", "format")))
    if kind == "video":
        fps = block.get("fps")
        if fps is not None and type(fps) is not int:
            raise fail("malformed_event", f"'fps' must be an int or null, got {fps!r}", index,
                       f"{path}.fps")
        extras = {"block_type": "video", **_extras(block, ("path", "detail", "fps")).get(NAME, {})}
        return FilePart(
            url=url, data=data, mime_type=block.get("video_mimetype"), metadata={NAME: extras}
        )
    title = block.get("title")
    return FilePart(
        url=url,
        data=data,
        mime_type=block.get("document_mimetype"),
        filename=None if title == DEFAULT_DOCUMENT_TITLE else title,
        metadata=_extras(block, ("path",)),
    )


def _reasoning_part(block: dict[str, Any], index: int, path: str) -> ReasoningPart:
    content = optional_str(block, "content", index, path)
    tokens = block.get("num_tokens")
    if tokens is not None and type(tokens) is not int:
        raise fail("malformed_event", f"'num_tokens' must be an int or null, got {tokens!r}",
                   index, f"{path}.num_tokens")
    info = json_checked(block.get("additional_information", {}), index,
                        f"{path}.additional_information", is_object=True)
    kept: dict[str, Any] = {}
    if content is None:
        kept["content_is_null"] = True
    if tokens is not None:
        kept["num_tokens"] = tokens
    if info:
        kept["additional_information"] = info
    return ReasoningPart(text=content or "", metadata={NAME: kept} if kept else {})


# --- the way back -------------------------------------------------------------------------


def not_representable(detail: str, where: str) -> TraceError:
    return TraceError("not_representable", detail, path=where, source=NAME)


def part_to_block(part: Part, where: str) -> dict[str, Any]:
    """One content part as a block dict (``ChatMessage.model_validate`` builds the object)."""
    kept: dict[str, Any] = part.metadata.get(NAME, {})
    if isinstance(part, TextPart):
        return {"block_type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {
            "block_type": "image",
            "image": part.data,
            "url": part.url,
            "path": kept.get("path"),
            "image_mimetype": part.mime_type,
            "detail": kept.get("detail"),
        }
    if isinstance(part, AudioPart):
        if part.mime_type is not None:
            raise not_representable(
                f"an AudioBlock has a format name, not a mimetype; got mime_type "
                f"{part.mime_type!r} (set it to None and put the format in "
                f"metadata['llama_index']['format'])",
                f"{where}.mime_type",
            )
        return {
            "block_type": "audio",
            "audio": part.data,
            "url": part.url,
            "path": kept.get("path"),
            "format": kept.get("format"),
        }
    if isinstance(part, FilePart):
        return _file_block(part, kept, where)
    if isinstance(part, ReasoningPart):
        return {
            "block_type": "thinking",
            "content": None if kept.get("content_is_null") else part.text,
            "num_tokens": kept.get("num_tokens"),
            "additional_information": kept.get("additional_information", {}),
        }
    if isinstance(part, OpaquePart):
        value = part.value
        is_block = type(value) is dict and value.get("block_type") == part.kind
        if part.kind in BLOCK_TYPES and is_block:
            block: dict[str, Any] = value
            return block
        raise not_representable(
            f"an OpaquePart of kind {part.kind!r} is not a LlamaIndex block; only the kinds "
            f"{', '.join(BLOCK_TYPES)} whose value is that block's dict can be written back",
            where,
        )
    raise not_representable(f"unknown part type {type(part).__name__}", where)


def _file_block(part: FilePart, kept: dict[str, Any], where: str) -> dict[str, Any]:
    if part.file_id is not None:
        raise not_representable(
            f"LlamaIndex blocks cannot refer to a provider file id ({part.file_id!r}); "
            f"a document needs data, a url or a path",
            f"{where}.file_id",
        )
    if kept.get("block_type") == "video":
        return {
            "block_type": "video",
            "video": part.data,
            "url": part.url,
            "path": kept.get("path"),
            "video_mimetype": part.mime_type,
            "detail": kept.get("detail"),
            "fps": kept.get("fps"),
        }
    return {
        "block_type": "document",
        "data": part.data,
        "url": part.url,
        "path": kept.get("path"),
        "title": part.filename,
        "document_mimetype": part.mime_type,
    }


def restore_mimetypes(built: Any, blocks: list[dict[str, Any]]) -> None:
    """Undo llama-index's mimetype guessing: the mimetype stays exactly what the part said."""
    for obj, block in zip(built.blocks, blocks, strict=True):
        field = MIME_FIELDS.get(block["block_type"])
        if field is not None and field in block:
            setattr(obj, field, block[field])
        elif block["block_type"] == "audio" and "format" in block:
            obj.format = block["format"]
