"""LangChain content blocks <-> tracebridge parts (used by the ``langchain`` adapter).

A LangChain ``content`` is a string or a list of strings and dicts ("blocks"). Each block
shape we understand is described once, as data (:class:`BlockShape`): its ``type`` tag,
the typed fields it carries and where they sit in the block. Reading a block takes those
fields out; what is left (the *template*) is stored under ``metadata["langchain"]`` only
when the block is not exactly what the way back would write for the part anyway, so typed
parts from other sources stay free of metadata and every source block is rebuilt exactly.

A block with no matching shape becomes an ``OpaquePart`` holding the block verbatim.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import (
    AudioPart,
    FilePart,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    TextPart,
)

from ._classes import NAME

__all__ = ["block_of", "part_of"]

Path = tuple[str, ...]
MappedPart = TextPart | ImagePart | AudioPart | FilePart | ReasoningPart
AnyPart = MappedPart | OpaquePart

STRING_SHAPE = "string"
"""The shape name recorded for a bare string inside a content list."""


@dataclass(frozen=True)
class BlockShape:
    """One block layout: its ``type`` tag, which typed field sits at which path."""

    name: str
    part: type[MappedPart]
    tag: str
    fields: tuple[tuple[str, Path], ...]
    sources: tuple[str, ...]
    """At least one of these typed fields must be present for the shape to match."""
    when: tuple[tuple[Path, str], ...] = ()
    """Other paths that must hold these exact values (``source.type == "base64"``)."""

    def read(self, block: dict[str, Any]) -> dict[str, str] | None:
        """The typed field values, or None when ``block`` does not have this shape."""
        if block.get("type") != self.tag:
            return None
        if any(_get(block, path) != value for path, value in self.when):
            return None
        values = {}
        for field, path in self.fields:
            value = _get(block, path)
            if type(value) is str:
                values[field] = value
        if not any(source in values for source in self.sources):
            return None
        return values

    def template(self, block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        """``block`` without the values that were read into typed fields."""
        rest = copy.deepcopy(block)
        for field, path in self.fields:
            if field in values:
                parent = _get(rest, path[:-1]) if len(path) > 1 else rest
                del parent[path[-1]]
        return rest

    def write(self, template: dict[str, Any], part: MappedPart) -> dict[str, Any]:
        """The block for ``part``: ``template`` with the part's fields put back in place."""
        block = copy.deepcopy(template)
        for field, path in self.fields:
            value = getattr(part, field)
            if value is not None:
                _put(block, path, value)
        return block


def _data_shapes(part: type[MappedPart], tag: str, *, file_id: bool = False) -> list[BlockShape]:
    """The v1 standard block (url/base64) and the v0 ``source_type`` block for one media."""
    v1_fields: list[tuple[str, Path]] = [
        ("url", ("url",)),
        ("data", ("base64",)),
        ("mime_type", ("mime_type",)),
    ]
    sources = ["url", "data"]
    if file_id:
        v1_fields += [("file_id", ("file_id",)), ("filename", ("filename",))]
        sources.append("file_id")
    v0_fields: tuple[tuple[str, Path], ...] = (("data", ("data",)), ("mime_type", ("mime_type",)))
    return [
        BlockShape(tag, part, tag, tuple(v1_fields), tuple(sources)),
        BlockShape(
            f"{tag}_source_base64",
            part,
            tag,
            v0_fields,
            ("data",),
            when=((("source_type",), "base64"),),
        ),
    ]


SHAPES: tuple[BlockShape, ...] = (
    BlockShape("text", TextPart, "text", (("text", ("text",)),), ("text",)),
    BlockShape("reasoning", ReasoningPart, "reasoning", (("text", ("reasoning",)),), ("text",)),
    BlockShape("thinking", ReasoningPart, "thinking", (("text", ("thinking",)),), ("text",)),
    *_data_shapes(ImagePart, "image"),
    BlockShape(
        "anthropic_image_base64",
        ImagePart,
        "image",
        (("data", ("source", "data")), ("mime_type", ("source", "media_type"))),
        ("data",),
        when=((("source", "type"), "base64"),),
    ),
    BlockShape(
        "anthropic_image_url",
        ImagePart,
        "image",
        (("url", ("source", "url")),),
        ("url",),
        when=((("source", "type"), "url"),),
    ),
    BlockShape("image_url", ImagePart, "image_url", (("url", ("image_url", "url")),), ("url",)),
    BlockShape("image_url_string", ImagePart, "image_url", (("url", ("image_url",)),), ("url",)),
    *_data_shapes(AudioPart, "audio"),
    BlockShape(
        "input_audio", AudioPart, "input_audio", (("data", ("input_audio", "data")),), ("data",)
    ),
    *_data_shapes(FilePart, "file", file_id=True),
)
"""Tried in order; the first shape that reads a block wins."""

_BY_NAME = {shape.name: shape for shape in SHAPES}
_DEFAULT: dict[type[MappedPart], BlockShape] = {
    TextPart: _BY_NAME["text"],
    ReasoningPart: _BY_NAME["reasoning"],
    ImagePart: _BY_NAME["image"],
    AudioPart: _BY_NAME["audio"],
    FilePart: _BY_NAME["file"],
}
"""The block the way back writes for a part that carries no LangChain metadata."""


def part_of(item: Any, path: str) -> AnyPart:
    """The typed part for one element of a content list (a string or a block dict)."""
    if type(item) is str:
        return TextPart(text=item, metadata={NAME: {"shape": STRING_SHAPE}})
    if type(item) is not dict:
        raise TraceError(
            "malformed_event",
            f"a content list holds strings and block dicts, got {type(item).__name__} "
            f"{short_repr(item)}",
            path=path,
        )
    check_json(item, path)
    tag = item.get("type")
    if type(tag) is not str:
        raise TraceError(
            "malformed_event",
            f"a content block needs a 'type' string, got {short_repr(tag)} in {short_repr(item)}",
            path=f"{path}.type",
        )
    for shape in SHAPES:
        values = shape.read(item)
        if values is None:
            continue  # not this layout; the next shape (or OpaquePart) takes the block
        plain = shape.part(**values)
        if _DEFAULT[shape.part].write({"type": _DEFAULT[shape.part].tag}, plain) == item:
            return plain
        kept = {"shape": shape.name, "block": shape.template(item, values)}
        return shape.part(**values, metadata={NAME: kept})
    return OpaquePart(kind=tag, value=item)


def block_of(part: AnyPart, path: str) -> str | dict[str, Any]:
    """The LangChain content-list element for ``part`` (the inverse of ``part_of``)."""
    if isinstance(part, OpaquePart):
        value = part.value
        if type(value) is dict and value.get("type") == part.kind:
            return copy.deepcopy(value)
        raise TraceError(
            "not_representable",
            f"an opaque part goes into LangChain content as its block dict with 'type' == kind "
            f"({part.kind!r}); got {short_repr(value)}",
            path=path,
            source=NAME,
        )
    kept = part.metadata.get(NAME)
    if kept is None:
        default = _DEFAULT[type(part)]
        return default.write({"type": default.tag}, part)
    name = kept.get("shape")
    if name == STRING_SHAPE and isinstance(part, TextPart):
        return part.text
    shape = _BY_NAME.get(name) if type(name) is str else None
    if shape is None or type(kept.get("block")) is not dict:
        raise TraceError(
            "not_representable",
            f"metadata.langchain of a part needs 'shape' (one of {', '.join(_BY_NAME)}, or "
            f"{STRING_SHAPE!r} for a text part) and a 'block' dict; got {short_repr(kept)}",
            path=f"{path}.metadata",
            source=NAME,
        )
    if not isinstance(part, shape.part):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.shape is {name!r}, a {shape.part.__name__} layout, "
            f"but the part is a {type(part).__name__}",
            path=path,
            source=NAME,
        )
    return shape.write(kept["block"], part)


def _get(block: Any, path: Path) -> Any:
    for key in path:
        if type(block) is not dict:
            return None
        block = block.get(key)
    return block


def _put(block: dict[str, Any], path: Path, value: str) -> None:
    for key in path[:-1]:
        block = block.setdefault(key, {})
    block[path[-1]] = value
