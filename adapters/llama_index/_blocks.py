"""LlamaIndex content blocks -> tracebridge content parts (the JSON form of each block).

Each of the ten block types of ``llama_index.core.base.llms.types.ContentBlock`` is handled on
purpose. What a block holds that the part has no field for stays under the part's
``metadata["llama_index"]``; a block that no part describes stays whole as an ``OpaquePart``
whose ``kind`` is the block type. ``tool_call`` blocks are not parts: the message converter
turns them into ``ToolCall``s. The way back is in ``_parts``.

Every block but text and thinking blocks is read as LlamaIndex holds it (``_held``): what
LlamaIndex would refuse, drop or change (data that is not base64 text, an empty mimetype it
replaces by its guess, a path that names no file, a key it has no field for, also in a nested
block) is ``malformed_event`` where it is, and what it fills in (a missing ``url``, the title
``"input_document"``, a derived mimetype) is read filled in.

Two values LlamaIndex fills in itself are read so that they mean what a user means:

* an ``ImageBlock`` without data whose ``image_mimetype`` is exactly what LlamaIndex derives
  from its URL (or path) reads as ``mime_type=None``: the type was never given, and writing
  the part back lets LlamaIndex derive it again. A block whose mimetype is null although one
  would be derived keeps ``image_mimetype: null`` in the part's metadata;
* ``AudioBlock.format`` is a format name (``"wav"``); it maps to ``AudioPart.mime_type``
  through ``tracebridge.media``, and a spelling the table writes differently (``"mpeg"``) is
  kept as ``format`` in the part's metadata.

A media block without data whose URL is a base64 ``data:`` URL (``tracebridge.media
.split_data_url``) holds inline data, as every other format's inline media does: it reads as
the part's ``data`` and ``mime_type`` (the URL's), with ``data_url: true`` in the part's
metadata so that it is written back as that URL. The block's own type field (its mimetype, or
an audio block's format) is kept there verbatim when it is not what the URL says.
"""

from __future__ import annotations

from functools import cache, lru_cache
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
from tracebridge._optional import require
from tracebridge.errors import short_repr, with_article
from tracebridge.media import audio_format, audio_mime_type, split_data_url
from tracebridge.messages import Part

from ._held import Difference, hold, located

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

TYPE_FIELDS = {**MIME_FIELDS, "audio": "format"}
"""The field in which each media block names the type of what it holds."""

DATA_URL = "data_url"
"""The part metadata key that says a block gave its inline data as a base64 ``data:`` URL."""


@lru_cache(maxsize=1)
def llama_types() -> Any:
    """``llama_index.core.base.llms.types``, imported on first use."""
    return require("llama_index.core.base.llms.types", adapter=NAME, extra="llama-index",
                   package="llama-index-core")


class Llama:
    """The LlamaIndex classes the fast paths compare with, looked up on first use."""

    chat_message: Any = None
    text_block: Any = None
    tool_call_block: Any = None
    role_type: Any = None
    assistant: Any = None
    user: Any = None
    tool: Any = None
    roles: dict[str, Any] = {}  # noqa: RUF012 (class-level constants, set once)

    @classmethod
    def loaded(cls) -> type[Llama]:
        """The class, its attributes set (importing llama_index on first use)."""
        if cls.chat_message is None:
            types = llama_types()
            cls.text_block = types.TextBlock
            cls.tool_call_block = types.ToolCallBlock
            cls.role_type = types.MessageRole
            cls.assistant = types.MessageRole.ASSISTANT
            cls.user = types.MessageRole.USER
            cls.tool = types.MessageRole.TOOL
            cls.roles = {member.value: member for member in types.MessageRole}
            cls.chat_message = types.ChatMessage  # last: the others are set once this is
        return cls


def fail(code: Any, detail: str, index: int, path: str) -> TraceError:
    return TraceError(code, detail, index=index, path=path, source=NAME)


def not_representable(detail: str, where: str) -> TraceError:
    return TraceError("not_representable", detail, path=where, source=NAME)


def json_checked(value: Any, index: int, path: str, *, is_object: bool = False) -> Any:
    """``value`` when it is JSON (a JSON object with ``is_object``); else the error, placed.

    A non-dict where LlamaIndex has a dict field is ``malformed_event``; a dict holding what
    is not JSON is ``unserializable_value``.
    """
    if is_object and type(value) is not dict:
        raise fail("malformed_event", f"expected a dict, got {type(value).__name__} "
                   f"{short_repr(value)}", index, path)
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
    """The non-null fields of ``block`` among ``keys``."""
    return {key: block[key] for key in keys if block.get(key) is not None}


def _namespaced(kept: dict[str, Any]) -> dict[str, Any]:
    return {NAME: kept} if kept else {}


@lru_cache(maxsize=1024)
def derived_image_mimetype(url: str | None, path: str | None) -> str | None:
    """The ``image_mimetype`` LlamaIndex itself gives an ImageBlock without data.

    Asked of LlamaIndex's own validator, so that the rule (the URL's or path's extension, or
    the type a ``data:`` URL names) is exactly the installed version's.
    """
    if url is None and path is None:
        return None
    probe = llama_types().ImageBlock.model_construct(
        image=None, path=path, url=url, image_mimetype=None, detail=None
    )
    mimetype: str | None = probe.image_to_base64().image_mimetype
    return mimetype


BLOCK_CLASSES = {
    "text": "TextBlock",
    "image": "ImageBlock",
    "audio": "AudioBlock",
    "video": "VideoBlock",
    "document": "DocumentBlock",
    "cache": "CachePoint",
    "citable": "CitableBlock",
    "citation": "CitationBlock",
    "thinking": "ThinkingBlock",
    "tool_call": "ToolCallBlock",
}
"""The LlamaIndex class of each ``block_type``."""


@cache
def block_class(kind: str) -> Any:
    """The installed LlamaIndex's class for blocks of this kind."""
    return getattr(llama_types(), BLOCK_CLASSES[kind])


@cache
def block_fields(kind: str) -> frozenset[str]:
    """The fields the installed LlamaIndex gives a block of this kind (``block_type`` too)."""
    fields: frozenset[str] = frozenset(block_class(kind).model_fields)
    return fields


def held_block(block: dict[str, Any], index: int, path: str) -> dict[str, Any]:
    """The block as LlamaIndex holds it (``_held``); where LlamaIndex would refuse, drop or
    change what it gives is ``malformed_event`` at that place."""
    found = hold(block, block_class(block["block_type"]))
    if isinstance(found, Difference):
        raise fail("malformed_event", found.detail, index, located(path, found.at))
    return found


def no_unknown_fields(block: dict[str, Any], kind: str, index: int, path: str) -> None:
    """A key the block's class does not have would be dropped by LlamaIndex: refuse it."""
    unknown = block.keys() - block_fields(kind)
    if unknown:
        key = sorted(unknown, key=str)[0]
        raise fail(
            "malformed_event",
            f"{with_article(kind)} block has no field {key!r} (LlamaIndex would drop it); its "
            f"fields: {', '.join(sorted(block_fields(kind)))}",
            index,
            f"{path}.{key}",
        )


def block_to_part(block: dict[str, Any], index: int, path: str) -> Part:
    """One block (not a ``tool_call``) as a content part."""
    kind = block["block_type"]
    if kind in BLOCK_CLASSES and (kind != "text" or len(block) != 2):
        no_unknown_fields(block, kind, index, path)
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
        return OpaquePart(kind=kind, value=held_block(block, index, path))
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
    fps = block.get("fps")
    if fps is not None:
        if type(fps) is not int:
            raise fail("malformed_event", f"'fps' must be an int or null, got {fps!r}", index,
                       f"{path}.fps")
        json_checked(fps, index, f"{path}.fps")  # kept: one too long for JSON is refused here
    block = held_block(block, index, path)  # data, path, mimetypes as LlamaIndex holds them
    if data is None and url is None:
        # A local path (or nothing at all): no part field says "a file on this machine".
        return OpaquePart(kind=kind, value=block)
    if data is None and url is not None and url.startswith("data:"):
        found = split_data_url(url)
        if found is not None:
            return _inline_part(block, *found)
    if kind == "image":
        return _image_part(block, url, data)
    if kind == "audio":
        return _audio_part(block, url, data)
    if kind == "video":
        extras = {"block_type": "video", **_extras(block, ("path", "detail", "fps"))}
        return FilePart(
            url=url, data=data, mime_type=block.get("video_mimetype"), metadata={NAME: extras}
        )
    title = block.get("title")
    return FilePart(
        url=url,
        data=data,
        mime_type=block.get("document_mimetype"),
        filename=None if title == DEFAULT_DOCUMENT_TITLE else title,
        metadata=_namespaced(_extras(block, ("path",))),
    )


def type_said_by(kind: str, mime_type: str) -> str | None:
    """What a ``kind`` block's type field says when it agrees with ``mime_type`` (the type a
    data: URL names): the type itself, or an audio block's format name for it."""
    return audio_format(mime_type) if kind == "audio" else mime_type


def _inline_part(block: dict[str, Any], mime_type: str, data: str) -> Part:
    """A media block whose URL is a base64 data: URL, as the inline data the URL holds."""
    kind = block["block_type"]
    field = TYPE_FIELDS[kind]
    kept: dict[str, Any] = _extras(block, ("path",))
    if kind == "video":
        kept = {"block_type": "video", **_extras(block, ("path", "detail", "fps"))}
    kept[DATA_URL] = True
    if block.get(field) != type_said_by(kind, mime_type):
        kept[field] = block.get(field)  # the block says another type than its URL: verbatim
    metadata = {NAME: kept}
    if kind == "image":
        return ImagePart(data=data, mime_type=mime_type, detail=block.get("detail"),
                         metadata=metadata)
    if kind == "audio":
        return AudioPart(data=data, mime_type=mime_type, metadata=metadata)
    if kind == "video":
        return FilePart(data=data, mime_type=mime_type, metadata=metadata)
    title = block.get("title")
    return FilePart(data=data, mime_type=mime_type, metadata=metadata,
                    filename=None if title == DEFAULT_DOCUMENT_TITLE else title)


def _image_part(block: dict[str, Any], url: str | None, data: str | None) -> ImagePart:
    kept = _extras(block, ("path",))
    mime_type = block.get("image_mimetype")
    if data is None:
        derived = derived_image_mimetype(url, block.get("path"))
        if mime_type == derived:
            mime_type = None  # LlamaIndex derived it: the source never said it
        elif mime_type is None:
            kept["image_mimetype"] = None  # LlamaIndex would derive one; this block has none
    return ImagePart(url=url, data=data, mime_type=mime_type, detail=block.get("detail"),
                     metadata=_namespaced(kept))


def _audio_part(block: dict[str, Any], url: str | None, data: str | None) -> AudioPart:
    kept = _extras(block, ("path",))
    name = block.get("format")
    mime_type = audio_mime_type(name) if name else None
    if name == "" or (mime_type is not None and audio_format(mime_type) != name):
        kept["format"] = name  # a spelling the media table would not write back
    return AudioPart(url=url, data=data, mime_type=mime_type, metadata=_namespaced(kept))


def _reasoning_part(block: dict[str, Any], index: int, path: str) -> ReasoningPart:
    content = optional_str(block, "content", index, path)
    tokens = block.get("num_tokens")
    if tokens is not None:
        if type(tokens) is not int:
            raise fail("malformed_event", f"'num_tokens' must be an int or null, got "
                       f"{tokens!r}", index, f"{path}.num_tokens")
        json_checked(tokens, index, f"{path}.num_tokens")  # (as fps, above)
    info = json_checked(block.get("additional_information", {}), index,
                        f"{path}.additional_information", is_object=True)
    kept: dict[str, Any] = {}
    if content is None:
        kept["content_is_null"] = True
    if tokens is not None:
        kept["num_tokens"] = tokens
    if info:
        kept["additional_information"] = info
    return ReasoningPart(text=content or "", metadata=_namespaced(kept))
