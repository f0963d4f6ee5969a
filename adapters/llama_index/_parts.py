"""Typed content parts -> LlamaIndex content blocks (the dicts ``ChatMessage.model_validate``
builds blocks from), and what LlamaIndex does to a block once it is built.

Each part becomes the block ``_blocks`` reads back as the same part. A key left out of an
image block (``image_mimetype``) is one LlamaIndex fills in itself; ``restore_mimetypes`` undoes
its guessing wherever the part said the type. A URL that LlamaIndex would rewrite, a mimetype
it would derive although the part says it was given, an audio mime type that names no format,
a file named only by a provider id, a filename a document block cannot hold (``""``,
``"input_document"``), a media block LlamaIndex would not hold as written (``held_as_given``:
data that is not base64 text, an empty mimetype it would replace, a path it refuses) and an
``OpaquePart`` that is not a LlamaIndex block reading back as itself are refused by name, or
left out when ``drop`` names them.

A part read from a block that gave its data as a base64 ``data:`` URL (``data_url`` in its
metadata) is written as that URL again, its block's type field as it was; a part whose
``url`` is a base64 data: URL is refused: a block holding it would read back as inline data.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from tracebridge import (
    AudioPart,
    FilePart,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    TextPart,
    TraceError,
)
from tracebridge._json import json_copy
from tracebridge.errors import short_repr
from tracebridge.media import (
    audio_format,
    audio_mime_type,
    canonical_audio_mime_type,
    data_url,
    split_data_url,
)
from tracebridge.messages import Part

from ._blocks import (
    BLOCK_TYPES,
    DATA_URL,
    DEFAULT_DOCUMENT_TITLE,
    MIME_FIELDS,
    NAME,
    TYPE_FIELDS,
    block_class,
    block_to_part,
    derived_image_mimetype,
    llama_types,
    not_representable,
    type_said_by,
)
from ._held import KEPT_NULL, Difference, hold, located
from ._json_form import refuse_surrogate_key
from ._kept import check_part_kept, own, usual_reasoning_kept


@lru_cache(maxsize=1024)
def kept_url(url: str) -> str | None:
    """The URL as an image, audio or video block keeps it (pydantic's ``AnyUrl`` rewrites
    some: ``https://a.com`` becomes ``https://a.com/``), or None when it is no URL at all."""
    try:
        return str(llama_types().AudioBlock(url=url).url)
    except ValidationError:
        return None


def check_url(url: str | None, where: str) -> None:
    if url is not None and kept_url(url) != url:
        found = kept_url(url)
        raise not_representable(
            f"LlamaIndex cannot hold the URL {url!r} as given"
            + ("" if found is None else f": it rewrites it as {found!r}"),
            f"{where}.url",
        )


def check_not_data_url(url: str | None, where: str) -> None:
    """Refuse a URL that is a base64 data: URL: a block holding it reads back as inline data
    with its mime type (a part spelled so by LlamaIndex says ``data_url`` in its metadata)."""
    if url is not None and url.startswith("data:") and split_data_url(url) is not None:
        raise not_representable(
            f"the part's url is a base64 data: URL ({short_repr(url)}), which a LlamaIndex "
            f"block's url reads back as inline data with its mime type, not as that URL",
            f"{where}.url",
        )


def part_to_block(
    part: Part, where: str, drop: Collection[str], *, in_ai: bool
) -> dict[str, Any] | None:
    """One content part as a block dict (``ChatMessage.model_validate`` builds the object),
    or None for a part ``drop`` leaves out.

    A key left out of an image block (``image_mimetype``) is one LlamaIndex fills in itself.
    """
    kept = own(part.metadata, where)
    if isinstance(part, TextPart):
        if kept:
            check_part_kept(part, kept, where)
        return {"block_type": "text", "text": part.text}
    # (a part left out whole is not looked at: the key checks follow the drops)
    if isinstance(part, ImagePart):
        if kept:
            check_part_kept(part, kept, where)
        return _image_block(part, kept, where, drop)
    if isinstance(part, AudioPart):
        if kept:
            check_part_kept(part, kept, where)
        return _audio_block(part, kept, where, drop)
    if isinstance(part, FilePart):
        if part.file_id is not None and part.data is None and part.url is None and (
            "file_ids" in drop
        ):
            return None
        if kept:
            check_part_kept(part, kept, where)
        return _file_block(part, kept, where, drop)
    if isinstance(part, ReasoningPart):
        if kept and not usual_reasoning_kept(kept):
            check_part_kept(part, kept, where)
        return _thinking_block(part, kept, where)
    if isinstance(part, RefusalPart):
        if "refusals" in drop:
            return None
        raise not_representable(
            "a ChatMessage holds one refusal, on an assistant message, after its content "
            "(additional_kwargs['refusal']); drop=['refusals'] leaves refusals out",
            where,
        )
    if isinstance(part, OpaquePart):
        if _is_own_block(part, in_ai):
            if kept:
                check_part_kept(part, kept, where)
            block: dict[str, Any] = json_copy(part.value)  # LlamaIndex keeps nested values
            return block
        if "opaque_parts" in drop:
            return None
        raise not_representable(
            f"an OpaquePart of kind {part.kind!r} is not a LlamaIndex block that reads back as "
            f"itself here; only the kinds {', '.join(BLOCK_TYPES)} whose value is that block's "
            f"dict can be written; drop=['opaque_parts'] leaves it out",
            where,
        )
    raise not_representable(f"unknown part type {type(part).__name__}", where)


def _thinking_block(part: ReasoningPart, kept: dict[str, Any], where: str) -> dict[str, Any]:
    """A ThinkingBlock; ``content_is_null`` (a block whose content was None, read as the text
    ``""``) is honoured for that text only: any other text is typed data it cannot hold."""
    null = kept.get("content_is_null") is True
    if null and part.text != "":
        raise not_representable(
            f"metadata['{NAME}']['content_is_null'] says the ThinkingBlock had no content, "
            f"but the part's text is {short_repr(part.text)}: a block holds one or the other",
            f"{where}.metadata.{NAME}.content_is_null",
        )
    information = kept.get("additional_information", {})
    refuse_surrogate_key(information, f"{where}.metadata.{NAME}.additional_information")
    return {
        "block_type": "thinking",
        "content": None if null else part.text,
        "num_tokens": kept.get("num_tokens"),
        "additional_information": json_copy(information),
    }


def _is_own_block(part: OpaquePart, in_ai: bool) -> bool:
    """Whether the part's value is a block this adapter reads back as the same part."""
    value = part.value
    if type(value) is not dict or value.get("block_type") != part.kind:
        return False
    if part.kind not in BLOCK_TYPES or (in_ai and part.kind == "tool_call"):
        return False
    try:
        return block_to_part(value, 0, "") == OpaquePart(kind=part.kind, value=value)
    except TraceError:
        return False


def _image_block(
    part: ImagePart, kept: dict[str, Any], where: str, drop: Collection[str]
) -> dict[str, Any]:
    if kept.get(DATA_URL) is True:
        return _inline_url_block(part, "image", kept, where, drop, {"detail": part.detail})
    check_url(part.url, where)
    check_not_data_url(part.url, where)
    block = {"block_type": "image", "image": part.data, "url": part.url,
             "path": kept.get("path"), "detail": part.detail}
    if part.data is not None or part.mime_type is not None:
        derived = None if part.data is not None else derived_image_mimetype(
            part.url, kept.get("path")
        )
        if part.mime_type is not None and part.mime_type == derived and "mime_types" not in drop:
            raise not_representable(
                f"LlamaIndex derives {derived!r} from this image's URL itself, so a ChatMessage "
                f"cannot say it was given: it reads back as mime_type=None; "
                f"drop=['mime_types'] accepts that",
                f"{where}.mime_type",
            )
        block["image_mimetype"] = part.mime_type
    elif "image_mimetype" in kept:
        if derived_image_mimetype(part.url, kept.get("path")) is None:
            raise not_representable(
                "metadata['llama_index']['image_mimetype'] = None says the block has no "
                "mimetype where LlamaIndex would derive one from its URL or path, but it "
                "derives none from these: no block reads back with it",
                f"{where}.metadata.llama_index.image_mimetype",
            )
        block["image_mimetype"] = None
    return held_as_given(block, where, drop)


def _audio_block(
    part: AudioPart, kept: dict[str, Any], where: str, drop: Collection[str]
) -> dict[str, Any]:
    if kept.get(DATA_URL) is True:
        return _inline_url_block(part, "audio", kept, where, drop, {})
    check_url(part.url, where)
    check_not_data_url(part.url, where)
    stored = kept.get("format")
    name: str | None = "" if stored == "" else None
    if part.mime_type is not None:
        name = audio_format(part.mime_type)
        if name is None and "mime_types" not in drop:
            raise not_representable(
                f"an AudioBlock names its format ('wav', 'mp3', ...), and {part.mime_type!r} "
                f"is not an audio type; drop=['mime_types'] leaves it out",
                f"{where}.mime_type",
            )
        if type(stored) is str and stored and canonical_audio_mime_type(
            audio_mime_type(stored)
        ) == canonical_audio_mime_type(part.mime_type):
            name = stored
    return held_as_given({"block_type": "audio", "audio": part.data, "url": part.url,
                          "path": kept.get("path"), "format": name}, where, drop)


def _file_block(
    part: FilePart, kept: dict[str, Any], where: str, drop: Collection[str]
) -> dict[str, Any]:
    if part.file_id is not None:
        raise not_representable(
            f"LlamaIndex blocks cannot refer to a provider file id ({part.file_id!r}); "
            f"a document needs data, a url or a path; drop=['file_ids'] leaves out a file "
            f"part that only a file id names",
            f"{where}.file_id",
        )
    is_video = kept.get("block_type") == "video"
    filename = _filename(part, is_video, where, drop)
    if kept.get(DATA_URL) is True:
        others = {"detail": kept.get("detail"), "fps": kept.get("fps")} if is_video else {
            "title": filename}
        return _inline_url_block(part, "video" if is_video else "document", kept, where, drop,
                                 others)
    check_not_data_url(part.url, where)
    if is_video:
        check_url(part.url, where)
        return held_as_given({
            "block_type": "video",
            "video": part.data,
            "url": part.url,
            "path": kept.get("path"),
            "video_mimetype": part.mime_type,
            "detail": kept.get("detail"),
            "fps": kept.get("fps"),
        }, where, drop)
    return held_as_given({
        "block_type": "document",
        "data": part.data,
        "url": part.url,
        "path": kept.get("path"),
        "title": filename,
        "document_mimetype": part.mime_type,
    }, where, drop)


_DATA_KEYS = {"image": "image", "audio": "audio", "video": "video", "document": "data"}


def _inline_url_block(
    part: ImagePart | AudioPart | FilePart, kind: str, kept: dict[str, Any], where: str,
    drop: Collection[str], others: dict[str, Any],
) -> dict[str, Any]:
    """The block of a part that LlamaIndex gave as a base64 data: URL (``data_url`` in its
    metadata), written as that URL again, with the block's own type field as it was: the
    URL's type, or what the metadata kept of a block that said another."""
    mime_type, data = part.mime_type, part.data
    if data is None or mime_type is None or part.url is not None:
        raise not_representable(
            f"metadata['{NAME}']['{DATA_URL}'] says the block gave its data as a base64 data: "
            f"URL, which needs the part's data and mime_type and no url (found "
            f"url={part.url!r}, data set: {data is not None}, mime_type={mime_type!r})",
            f"{where}.metadata.{NAME}.{DATA_URL}",
        )
    url = data_url(mime_type, data)
    if split_data_url(url) != (mime_type, data):
        raise not_representable(
            f"the mime type {mime_type!r} has a comma, which ends a data: URL's header: it "
            f"would read back cut there",
            f"{where}.mime_type",
        )
    field = TYPE_FIELDS[kind]
    said = type_said_by(kind, mime_type)
    given = kept.get(field, said)
    if field in kept and (given == said or (given is not None and type(given) is not str)):
        raise not_representable(
            f"metadata['{NAME}']['{field}'] keeps the {field} of a block that says another "
            f"type than its data: URL ({said!r}), as a string or null; found "
            f"{short_repr(given)}, which no block reads back with",
            f"{where}.metadata.{NAME}.{field}",
        )
    block = {"block_type": kind, _DATA_KEYS[kind]: None, "url": url, "path": kept.get("path"),
             field: given, **others}
    at = f"metadata.{NAME}.{field}" if field in kept else "mime_type"
    return held_as_given(block, where, drop, {"url": "data", field: at, "detail": "detail",
                                              "title": "filename"})


def _filename(part: FilePart, is_video: bool, where: str, drop: Collection[str]) -> str | None:
    """The title a document block is written with: the part's filename, unless it would not
    read back as itself (None then, when ``drop`` names ``filenames``)."""
    filename = part.filename
    if filename is None or not (is_video or filename in ("", DEFAULT_DOCUMENT_TITLE)):
        return filename
    if "filenames" in drop:
        return None
    if is_video:
        detail = "a VideoBlock has no field for a file name"
    else:
        detail = (
            f"a DocumentBlock cannot hold the filename {filename!r}: LlamaIndex titles a "
            f"document without a title (also one titled '') {DEFAULT_DOCUMENT_TITLE!r}, and "
            f"that title reads back as filename=None"
        )
    raise not_representable(f"{detail}; drop=['filenames'] writes no filename",
                            f"{where}.filename")


_PART_FIELDS = {
    "image": {"image": "data", "url": "url", "image_mimetype": "mime_type", "detail": "detail"},
    "audio": {"audio": "data", "url": "url", "format": "mime_type"},
    "video": {"video": "data", "url": "url", "video_mimetype": "mime_type"},
    "document": {"data": "data", "url": "url", "title": "filename",
                 "document_mimetype": "mime_type"},
}
"""The part field each field of a media block is written from (the others come from the
part's metadata)."""


def held_as_given(
    block: dict[str, Any], where: str, drop: Collection[str],
    fields: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``block`` when LlamaIndex holds it as given (``_held``), so that it reads back as the
    part it was written from. An empty mimetype or audio format that LlamaIndex would replace
    by its guess is ``not_representable`` unless ``drop`` names ``mime_types`` (then it is
    written as null); anything else LlamaIndex would refuse or change (data that is not base64
    text, a path that names no file here, ...) is ``not_representable`` at the part's field
    (``fields`` maps block fields to part fields; by default those of ``_PART_FIELDS``)."""
    kind = block["block_type"]
    found = hold(block, block_class(kind))
    if not isinstance(found, Difference):
        return block
    key = found.at[0] if found.at else None
    names = _PART_FIELDS[kind] if fields is None else fields
    field = names.get(key) if type(key) is str else None
    at = where if field is None else f"{where}.{field}"
    detail = f"the {kind} block's {located('', found.at)[1:] or 'fields'}: {found.detail}"
    if key in KEPT_NULL and found.given == "":
        if "mime_types" in drop:
            return held_as_given({**block, key: None}, where, drop, fields)
        raise not_representable(f"{detail}; drop=['mime_types'] writes no mimetype", at)
    raise not_representable(f"{detail}; a ChatMessage cannot hold the part as it is", at)


def restore_mimetypes(built: Any, blocks: list[dict[str, Any]]) -> None:
    """Undo llama-index's guessing where the part said the type (or said there was none)."""
    for obj, block in zip(built.blocks, blocks, strict=True):
        field = MIME_FIELDS.get(block["block_type"])
        if field is not None and field in block:
            setattr(obj, field, block[field])
        elif block["block_type"] == "audio" and "format" in block:
            obj.format = block["format"]
