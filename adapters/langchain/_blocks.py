"""LangChain content blocks <-> tracebridge parts (used by the ``langchain`` adapter).

A LangChain ``content`` is a string or a list of strings and dicts ("blocks"). Each block
layout we understand is described once, as data, in ``_shapes``. Reading a block takes the
typed fields out; what is left (the *template*) is stored under ``metadata["langchain"]``
only when the block is not exactly what the way back would write for the part anyway, so
typed parts from other sources stay free of metadata and every source block is rebuilt exactly.

Bedrock Converse and Vertex AI blocks may hold raw ``bytes`` (``image.source.bytes``, a
``media`` block's ``data``). Those are read as base64 text and the paths are kept under
``metadata.langchain.bytes``, so the way back gives the same bytes again.

A block with no matching shape becomes an ``OpaquePart`` holding the block verbatim.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import OpaquePart, ReasoningPart, RefusalPart, TextPart

from ._classes import NAME
from ._kept_places import OPAQUE_PART_KEYS, PART_KEYS, STRING_PART_KEYS, refuse_unknown
from ._raw_reasoning import SPLIT_SHAPES, check_no_raw
from ._shapes import (
    SHAPES,
    SHAPES_BY_NAME,
    BlockShape,
    MappedPart,
    SummaryShape,
    default_shape,
    first_reading,
    get,
    typed_values,
)

__all__ = ["STRING_SHAPE", "AnyPart", "block_of", "part_of"]

AnyPart = MappedPart | OpaquePart

STRING_SHAPE = "string"
"""The shape name recorded for a bare string inside a content list."""

_BYTES_PATHS: tuple[tuple[str, ...], ...] = (
    ("image", "source", "bytes"),
    ("document", "source", "bytes"),
    ("video", "source", "bytes"),
)
"""Where Bedrock Converse blocks hold raw bytes (a Vertex ``media`` block: its ``data``)."""


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
    item, raw = _bytes_as_base64(item)
    check_json(item, path)
    tag = item.get("type")
    if type(tag) is not str and not (tag is None and "type" not in item and raw):
        raise TraceError(
            "malformed_event",
            f"a content block needs a 'type' string, got {short_repr(tag)} in {short_repr(item)}",
            path=f"{path}.type",
        )
    kept_bytes = {"bytes": raw} if raw else {}
    for shape in SHAPES:
        values = shape.read(item)
        if values is None:
            continue  # not this layout; the next shape (or OpaquePart) takes the block
        plain = shape.part(**values)
        if not raw and _default_block(plain, path) == item:
            return plain
        kept = {"shape": shape.name, "block": shape.template(item, values), **kept_bytes}
        return shape.part(**values, metadata={NAME: kept})
    kind = tag if type(tag) is str else _untyped_kind(item)
    return OpaquePart(kind=kind, value=item, metadata={NAME: kept_bytes} if raw else {})


def _default_block(part: MappedPart, path: str) -> dict[str, Any] | None:
    """The block the way back writes for ``part`` when it carries no metadata; None when
    that way cannot write it (an image by a ``data:`` URL with a detail, which the default
    ``image_url`` block would read back as inline data): the block read is kept instead."""
    default = default_shape(part)
    try:
        return default.write({"type": default.tag}, part, path)
    except TraceError as error:
        if error.code != "not_representable":
            raise
        return None


def _untyped_kind(block: dict[str, Any]) -> str:
    """A Bedrock Converse block has no ``type``: its one key says what it is."""
    return next(iter(block))


def _bytes_as_base64(block: dict[str, Any]) -> tuple[dict[str, Any], list[list[str]]]:
    """``block`` with its Bedrock / Vertex raw bytes as base64 text, and where they were."""
    paths = [path for path in _BYTES_PATHS if type(get(block, path)) is bytes]
    if block.get("type") == "media" and type(block.get("data")) is bytes:
        paths.append(("data",))
    if not paths:
        return block, []
    copied = copy.deepcopy(block)
    for found in paths:
        parent = get(copied, found[:-1]) if len(found) > 1 else copied
        parent[found[-1]] = base64.b64encode(parent[found[-1]]).decode("ascii")
    return copied, [list(found) for found in paths]


def _base64_as_bytes(block: dict[str, Any], paths: Any, at: str) -> dict[str, Any]:
    if type(paths) is not list or not all(
        type(found) is list and found and all(type(key) is str for key in found) for found in paths
    ):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.bytes must list key paths, got {short_repr(paths)}",
            path=f"{at}.metadata",
            source=NAME,
        )
    for found in paths:
        parent = get(block, tuple(found[:-1])) if len(found) > 1 else block
        text = parent.get(found[-1]) if type(parent) is dict else None
        try:
            if type(text) is not str:
                raise TypeError(text)
            parent[found[-1]] = base64.b64decode(text, validate=True)
        except (TypeError, binascii.Error):
            raise TraceError(
                "not_representable",
                f"the block held raw bytes at {'.'.join(found)}, but the part's value there "
                f"{short_repr(text)} is not base64",
                path=at,
                source=NAME,
            ) from None
    return block


def _check_part_keys(part: AnyPart, kept: dict[str, Any], path: str) -> None:
    """A part's kept keys are the ones the reader keeps on a part of its kind written as a
    content element (``from`` and ``content`` go back only from a reasoning or refusal part
    written into ``additional_kwargs``, which does not come here)."""
    if isinstance(part, OpaquePart):
        known, what = OPAQUE_PART_KEYS, "an opaque part"
    elif kept.get("shape") == STRING_SHAPE and isinstance(part, TextPart):
        known, what = STRING_PART_KEYS, "a text part read from a bare string"
    else:
        known, what = PART_KEYS, "a part written as a content block"
    if not known.issuperset(kept):
        refuse_unknown(kept, known, what, f"{path}.metadata.{NAME}")


def block_of(part: AnyPart, path: str, *, last_of_reply: bool = False) -> str | dict[str, Any]:
    """The LangChain content-list element for ``part`` (the inverse of ``part_of``);
    ``last_of_reply``: the part is the last of an AI message's content with no
    ``additional_kwargs.refusal``, where the reader marks a plain refusal block as a content
    block (``_read._ai_parts``)."""
    kept = part.metadata.get(NAME)
    if kept and type(kept) is dict:
        _check_part_keys(part, kept, path)
    if isinstance(part, OpaquePart):
        value = part.value
        raw = kept.get("bytes") if kept else None
        if type(value) is dict and (
            value.get("type") == part.kind or (raw and "type" not in value and part.kind in value)
        ):
            if any(shape.read(value) is not None for shape in SHAPES):
                raise TraceError(
                    "not_representable",
                    f"an opaque {part.kind!r} part holds a block LangChain content gives a "
                    f"meaning of its own ({short_repr(value)}); written there it would read "
                    f"back as another part",
                    path=path,
                    source=NAME,
                )
            block = copy.deepcopy(value)
            return _base64_as_bytes(block, raw, path) if raw else block
        raise TraceError(
            "not_representable",
            f"an opaque part goes into LangChain content as its block dict with 'type' == kind "
            f"({part.kind!r}); got {short_repr(value)}",
            path=path,
            source=NAME,
        )
    if kept is None:
        default = default_shape(part)
        return default.write({"type": default.tag}, part, path)
    name = kept.get("shape")
    if name == STRING_SHAPE and isinstance(part, TextPart):
        return part.text
    shape = SHAPES_BY_NAME.get(name) if type(name) is str else None
    if shape is None or type(kept.get("block")) is not dict:
        raise TraceError(
            "not_representable",
            f"metadata.langchain of a part needs 'shape' (one of {', '.join(SHAPES_BY_NAME)}, "
            f"or {STRING_SHAPE!r} for a text part) and a 'block' dict; got {short_repr(kept)}",
            path=f"{path}.metadata",
            source=NAME,
        )
    if not isinstance(part, shape.part):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.shape is {name!r}, {with_article(shape.part.__name__)} layout, "
            f"but the part is {with_article(type(part).__name__)}",
            path=path,
            source=NAME,
        )
    _check_kept_values(shape, kept["block"], part, path)
    block = shape.write(kept["block"], part, path)
    if "bytes" not in kept:
        _check_reads_back(block, None, part, name, path)
        if not (last_of_reply and isinstance(part, RefusalPart)):
            _check_keeps_metadata(block, part, name, path)
        return block
    written = _base64_as_bytes(block, kept["bytes"], path)
    # read back as the reader reads it: the bytes it finds where Bedrock / Vertex keep them
    _check_reads_back(*_bytes_as_base64(written), part, name, path)
    return written


def _check_reads_back(
    block: dict[str, Any], raw: list[list[str]] | None, part: MappedPart, shape: str, path: str
) -> None:
    """A block written from a kept template must read back as the part: the template may
    hold another ``type``, a ``source.type`` of another layout, or a value at a typed
    field's place that the part does not have (which would read back as typed data).
    ``block`` is as the reader sees it (raw bytes as base64), ``raw`` where it found bytes."""
    found = first_reading(block)
    if (
        found is not None
        and found[0].part is type(part)
        and ("type" in block or raw)  # the reader refuses an untyped block without bytes
        and found[1] == typed_values(part)
    ):
        _check_same_layout(found[0], part, shape, path)
        return
    if found is None or not ("type" in block or raw):
        reads = "an opaque part, or not at all"
    else:
        reads = f"{found[0].part.__name__} {short_repr(found[1])}"
    raise TraceError(
        "not_representable",
        f"the block kept for this part (metadata.langchain.block, shape {shape!r}) makes the "
        f"written block {short_repr(block)}, which reads back as {reads}, not as "
        f"{type(part).__name__} {short_repr(typed_values(part))}",
        path=f"{path}.metadata",
        source=NAME,
    )


def _check_same_layout(found: BlockShape, part: MappedPart, shape: str, path: str) -> None:
    """A block that reads back as the part must read back in its kept layout too: one that
    holds a field only where langchain-core's converters look for it (a file name under
    ``extras``) needs that field, or the block reads back in the plain layout."""
    if found.name == shape:
        return
    missing = [field for field in SHAPES_BY_NAME[shape].requires if getattr(part, field) is None]
    needs = f", a layout for a part with {' and '.join(missing)}," if missing else ""
    give = f"give the part {' and '.join(missing)}, or " if missing else ""
    raise TraceError(
        "not_representable",
        f"metadata.langchain.shape is {shape!r}{needs} but the written block reads back in "
        f"the {found.name!r} layout; {give}take metadata.langchain off the part to write it "
        "in the layout the way back picks",
        path=f"{path}.metadata.{NAME}.shape",
        source=NAME,
    )


def _check_keeps_metadata(block: dict[str, Any], part: MappedPart, shape: str, path: str) -> None:
    """A block written from a kept template must not be the block the way back writes for
    the part without metadata: the reader keeps no metadata for that one, so the part would
    read back without its ``metadata.langchain`` (an image read from an ``image_url`` block
    without a detail and given one after reading: that block is what a part with a detail
    gets anyway)."""
    if _default_block(part, path) != block:  # (it writes the typed fields alone)
        return
    raise TraceError(
        "not_representable",
        f"the block kept for this part (metadata.langchain, shape {shape!r}) makes the "
        f"written block {short_repr(block)}, the block the way back writes for this part "
        "without metadata, which reads back without metadata.langchain; take "
        "metadata.langchain off the part (the same block is written)",
        path=f"{path}.metadata.{NAME}",
        source=NAME,
    )


def _check_kept_values(
    shape: BlockShape, template: dict[str, Any], part: MappedPart, path: str
) -> None:
    """A kept block holds a value at a typed field's place only where the way back would
    not write it so (an ``input_audio`` block's ``format`` ``"mpeg"`` or ``"x-wav"``, which
    it spells ``"mp3"`` and ``"wav"``): that value is written as kept while it still spells
    the part's field. When the field says something else, writing it would drop the kept
    value and the part would read back with other metadata: not_representable. (A kept
    reasoning summary goes back as kept while it still joins to the part's text, and a kept
    reasoning item id while it is the part's id.)"""
    if isinstance(part, ReasoningPart) and shape.name in SPLIT_SHAPES:
        check_no_raw(template, f"{path}.metadata.{NAME}.block")
    if isinstance(shape, SummaryShape):
        if isinstance(part, ReasoningPart):  # (any other part is refused by the shape)
            shape.check_summary(template, part.text, f"{path}.metadata.{NAME}")
            shape.check_id(template, part.id, f"{path}.metadata.{NAME}")
        return
    codecs = dict(shape.codecs)
    for field, at in shape.fields:
        value = getattr(part, field)
        if value is None or not _holds(template, at):
            continue
        kept = get(template, at)
        codec = codecs.get(field)
        if type(kept) is str and (codec.read(kept) if codec else kept) == value:
            continue
        raise TraceError(
            "not_representable",
            f"the block kept for this part (metadata.langchain, shape {shape.name!r}) holds "
            f"{short_repr(kept)} at {'.'.join(at)}, which does not say the part's {field} "
            f"{value!r}: written, the part would read back with other metadata; take "
            "metadata.langchain off the part, or give it the block as it should be written",
            path=f"{path}.metadata.{NAME}",
            source=NAME,
        )


def _holds(block: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``block`` has a value (null too) at ``path``."""
    parent = get(block, path[:-1]) if len(path) > 1 else block
    return type(parent) is dict and path[-1] in parent
