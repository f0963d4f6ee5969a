"""The LangChain content-block layouts the ``langchain`` adapter maps to typed parts, as data.

Each layout (:class:`BlockShape`) names its ``type`` tag, the typed fields it carries and
where they sit in the block. A field may be stored in another spelling than the typed model
uses (an OpenAI audio ``format`` for a mime type): a :class:`Codec` turns one into the other,
and a spelling the codec would not give back stays in the block itself, so nothing is lost.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.media import audio_format, audio_mime_type, data_url, split_data_url
from tracebridge.messages import (
    AudioPart,
    FilePart,
    ImagePart,
    ReasoningPart,
    RefusalPart,
    TextPart,
)

__all__ = [
    "RAW_REASONING_ITEM",
    "REASONING_ITEM",
    "SHAPES",
    "SHAPES_BY_NAME",
    "BlockShape",
    "MappedPart",
    "default_shape",
    "first_reading",
    "get",
    "typed_values",
    "with_raw_entries",
]

Path = tuple[str, ...]
MappedPart = TextPart | ImagePart | AudioPart | FilePart | ReasoningPart | RefusalPart


@dataclass(frozen=True)
class Codec:
    """How a typed value is spelled in a block: ``read`` and ``write`` give None when the
    other side has no spelling for it."""

    read: Callable[[str], str | None]
    write: Callable[[str], str | None]


def _image_format_to_mime(name: str) -> str | None:
    return f"image/{name}" if name else None


def _image_mime_to_format(mime: str) -> str | None:
    kind, _, name = mime.partition("/")
    return name if kind == "image" and name else None


AUDIO_FORMAT = Codec(read=audio_mime_type, write=audio_format)
"""OpenAI ``input_audio.format`` <-> ``AudioPart.mime_type``, through ``tracebridge.media``."""

IMAGE_FORMAT = Codec(read=_image_format_to_mime, write=_image_mime_to_format)
"""Bedrock Converse ``image.format`` (``jpeg``) <-> ``image/jpeg``, as LangChain reads it."""

PDF_FORMAT = Codec(
    read=lambda name: "application/pdf" if name == "pdf" else None,
    write=lambda mime: "pdf" if mime == "application/pdf" else None,
)
"""Bedrock Converse ``document.format``: only ``pdf`` has a mime type LangChain itself names."""


@dataclass(frozen=True)
class BlockShape:
    """One block layout: its ``type`` tag, which typed field sits at which path."""

    name: str
    part: type[MappedPart]
    tag: str | None
    """The block's ``type``; None for a block without one (Bedrock Converse's own layout)."""
    fields: tuple[tuple[str, Path], ...]
    sources: tuple[str, ...]
    """At least one of these typed fields must be present for the shape to match."""
    when: tuple[tuple[Path, str | None], ...] = ()
    """Other paths that must hold these exact values (``source.type == "base64"``); None:
    nothing (or null) there."""
    requires: tuple[str, ...] = ()
    """Typed fields that must all be present too for the shape to match."""
    codecs: tuple[tuple[str, Codec], ...] = ()
    """Fields stored in another spelling than the typed one."""
    mime_prefix: str | None = None
    """Only blocks whose ``mime_type`` starts with this (a Vertex ``media`` block's kind)."""
    data_url: Path | None = None
    """Where ``data`` sits as text that may be a ``data:<mime>;base64,<data>`` URL (Chat
    Completions ``file_data``): such a URL reads as ``data`` and ``mime_type``."""
    data_url_only: bool = False
    """The shape matches only when the text at ``data_url`` is a base64 ``data:`` URL (an
    ``image_url`` block holding its image inline, which Chat Completions reads as data)."""

    def _codec(self, field: str) -> Codec | None:
        return dict(self.codecs).get(field)

    def read(self, block: dict[str, Any]) -> dict[str, str] | None:
        """The typed field values, or None when ``block`` does not have this shape."""
        if self.tag is None:
            if "type" in block:
                return None
        elif block.get("type") != self.tag:
            return None
        if self.when and any(get(block, path) != value for path, value in self.when):
            return None
        if self.mime_prefix is not None:
            mime = block.get("mime_type")
            if type(mime) is not str or not mime.startswith(self.mime_prefix):
                return None
        values = {}
        codecs = dict(self.codecs) if self.codecs else None
        for field, path in self.fields:
            value = get(block, path)
            if type(value) is not str:
                continue  # absent or not text: left in the block
            codec = codecs.get(field) if codecs else None
            typed = codec.read(value) if codec else value
            if typed is not None:
                values[field] = typed
        if self.data_url is not None:
            if self.data_url_only and not _is_data_url(get(block, self.data_url)):
                return None
            _read_data_url(get(block, self.data_url), values)
        if not any(source in values for source in self.sources):
            return None
        if self.requires and not all(field in values for field in self.requires):
            return None
        return values

    def template(self, block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        """``block`` without the values that were read into typed fields (a spelling the
        way back would not reproduce stays)."""
        rest = copy.deepcopy(block)
        for field, path in self.fields:
            if field not in values:
                continue
            codec = self._codec(field)
            if codec is not None and codec.write(values[field]) != get(block, path):
                continue
            parent = get(rest, path[:-1]) if len(path) > 1 else rest
            del parent[path[-1]]
        if self.data_url is not None and "data" in values:
            del get(rest, self.data_url[:-1])[self.data_url[-1]]  # written back as it was
        return rest

    def write(self, template: dict[str, Any], part: MappedPart, at: str) -> dict[str, Any]:
        """The block for ``part``: ``template`` with the part's fields put back in place."""
        block = copy.deepcopy(template)
        for field, path in self.fields:
            value = getattr(part, field)
            if value is None:
                continue
            codec = self._codec(field)
            if codec is None:
                _put(block, path, value)
                continue
            kept = get(block, path)
            if type(kept) is str and codec.read(kept) == value:
                continue  # the source's own spelling of this value
            spelled = codec.write(value)
            if spelled is None:
                raise TraceError(
                    "not_representable",
                    f"{with_article(self.name)} block cannot spell {field} {value!r}",
                    path=f"{at}.{field}",
                )
            _put(block, path, spelled)
        held = set(dict(self.fields))
        if (
            self.data_url is not None
            and isinstance(part, FilePart | ImagePart | AudioPart)
            and part.data is not None
        ):
            mime = part.mime_type
            if mime is None and self.data_url_only:
                raise TraceError(
                    "not_representable",
                    f"{with_article(self.name)} block holds its data as a data: URL, which names "
                    "a mime type; the part has none",
                    path=f"{at}.mime_type",
                )
            if (mime is None and split_data_url(part.data) is not None) or (
                mime is not None and "," in mime
            ):
                # read back, the text would split elsewhere: other data, another mime type
                raise TraceError(
                    "not_representable",
                    f"{with_article(self.name)} block holds its data as a data: URL, which cannot "
                    "spell "
                    + (f"the mime type {mime!r} (a comma ends its header)" if mime is not None
                       else "data that is itself a data: URL, with no mime type"),
                    path=f"{at}.mime_type" if mime is not None else f"{at}.data",
                )
            _put(
                block,
                self.data_url,
                part.data if mime is None else data_url(mime, part.data),
            )
            held |= {"data", "mime_type"}
        for field in _typed_fields(part):
            if getattr(part, field) is not None and field not in held:
                raise TraceError(
                    "not_representable",
                    f"metadata.langchain.shape is {self.name!r}, a layout without {field}; "
                    f"the part has {field} {short_repr(getattr(part, field))}",
                    path=f"{at}.{field}",
                )
        if not self.data_url_only:
            for other in _DATA_URL_ONLY.get(self.tag, ()):
                # read first, that shape would take the URL for inline data
                if other.data_url is not None and _is_data_url(get(block, other.data_url)):
                    raise TraceError(
                        "not_representable",
                        f"a block of type {self.tag!r} whose URL is a base64 data: URL reads "
                        "back as inline data with its mime type, not as that URL",
                        path=f"{at}.url",
                    )
        return block


@dataclass(frozen=True)
class ReasoningBlockShape(BlockShape):
    """langchain-core's v1 ``reasoning`` block: its ``reasoning`` text, and its ``id`` (an
    OpenAI reasoning item's, which the v1 translation keeps) while the block holds nothing
    else of the item (``held_back``). The way back writes the id right after the block's
    ``type``; an id elsewhere stays in the template, in its place, so that a kept block is
    written back with its keys in their order."""

    def read(self, block: dict[str, Any]) -> dict[str, str] | None:
        values = super().read(block)
        if values is not None and "id" in values and (
            self.held_back(block) or _made_by_langchain(values["id"])
        ):
            del values["id"]  # stays in the block: no item's, or with what it would not carry
        return values

    def held_back(self, block: dict[str, Any]) -> list[str]:
        """The keys of ``block`` its part would not give back to a Responses reasoning item
        (``_keys_beyond``)."""
        return _keys_beyond(block, _V1_BLOCK_KEYS)

    def template(self, block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        if list(block)[:2] == ["type", "id"]:
            return super().template(block, values)
        return super().template(block, {k: v for k, v in values.items() if k != "id"})

    def write(self, template: dict[str, Any], part: MappedPart, at: str) -> dict[str, Any]:
        # (``at`` is the part's path: block_of and the default block call this)
        _check_item_id(self.held_back(template), template, getattr(part, "id", None),
                       f"{at}.metadata.langchain")
        block = super().write(template, part, at)
        if "id" in template or "id" not in block or "type" not in block:
            return block  # kept in its place (checked against the part's), or none
        item_id = block.pop("id")
        keys = list(block)
        after = keys.index("type") + 1
        return {**{k: block[k] for k in keys[:after]}, "id": item_id,
                **{k: block[k] for k in keys[after:]}}


def summary_text(summary: Any) -> str | None:
    """The text of an OpenAI Responses reasoning ``summary``: its ``summary_text`` entries
    joined by a blank line, as the ``openai_responses`` adapter reads the same item; None
    when it is not a list of such entries."""
    return _entries_text(summary, "summary_text")


def raw_reasoning_text(content: Any) -> str | None:
    """The raw reasoning text of an OpenAI Responses reasoning item's ``content``: its
    ``reasoning_text`` entries joined by a blank line, as the ``openai_responses`` adapter
    reads it; None when it is not a non-empty list of such entries."""
    return _entries_text(content, "reasoning_text") if content else None


def _entries_text(listed: Any, kind: str) -> str | None:
    """The texts of a list of ``{"type": kind, "text": <string>, ...}`` entries joined by a
    blank line; None when it is no such list."""
    if type(listed) is not list:
        return None
    texts = []
    for entry in listed:
        if type(entry) is not dict or entry.get("type") != kind:
            return None
        text = entry.get("text")
        if type(text) is not str:
            return None
        texts.append(text)
    return "\n\n".join(texts)


@dataclass(frozen=True)
class SummaryShape(BlockShape):
    """An OpenAI Responses reasoning item (``{"type": "reasoning", "id", "summary": [...]}``)
    as ChatOpenAI keeps it: a content block (``output_version="responses/v1"``), or
    ``additional_kwargs["reasoning"]`` (``"v0"``). Its text is the summary's; the summary
    stays in the template only when one ``summary_text`` entry of that text would not give
    it back, and goes back as kept while it still reads as the part's text (a kept summary
    that no longer does is refused: ``check_summary``). The item's ``id`` (a string) is the
    part's ``id`` while the part alone gives the item back to the Responses API (``held_back``
    is empty: one plain summary entry, nothing else) and langchain-core did not make it
    (``lc_``); else it stays in the item."""

    def read(self, block: dict[str, Any]) -> dict[str, str] | None:
        if block.get("type") != self.tag:
            return None
        text = summary_text(block.get("summary"))
        return None if text is None else self._with_item_id({"text": text}, block)

    def held_back(self, block: dict[str, Any]) -> list[str]:
        """The keys of ``block`` its part would not give back to a Responses reasoning item
        (``_keys_beyond``), and its ``summary`` when that is not the one plain entry the
        part's text is written as (several entries, extra keys, ``[]``: kept)."""
        summary = block.get("summary", _ONE_ENTRY)
        plain = summary is _ONE_ENTRY or (
            type(summary) is list and len(summary) == 1 and type(summary[0]) is dict
            and set(summary[0]) == {"type", "text"}
        )
        return [*([] if plain else ["summary"]), *_keys_beyond(block, _ITEM_KEYS)]

    def _with_item_id(self, values: dict[str, str], block: dict[str, Any]) -> dict[str, str]:
        """``values`` read from ``block``, with its ``id`` when that is a string the part
        alone gives back with the item (``held_back`` is empty), and not one langchain-core
        made; any other id stays in the block: typed, it would be written to the Responses
        API with a changed item."""
        item_id = block.get("id")
        if type(item_id) is str and not self.held_back(block) and not _made_by_langchain(item_id):
            values["id"] = item_id
        return values

    def template(self, block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        rest = _without_item_id(block, values)
        if rest["summary"] == [{"type": "summary_text", "text": values["text"]}]:
            del rest["summary"]
        return rest

    def write(self, template: dict[str, Any], part: MappedPart, at: str) -> dict[str, Any]:
        block = copy.deepcopy(template)
        text = getattr(part, "text", None)
        if type(text) is not str or not isinstance(part, ReasoningPart):
            raise TraceError(
                "not_representable",
                f"{with_article(self.name)} block holds reasoning; the part is "
                f"{with_article(type(part).__name__)}",
                path=at,
            )
        # a content block's summary is checked before, at its metadata (_blocks); the item of
        # additional_kwargs["reasoning"] comes with ``at`` = its part's metadata.langchain
        self.check_summary(block, text, at)
        self.check_id(block, part.id, at)
        if "summary" not in block:
            block["summary"] = [{"type": "summary_text", "text": text}]
        return _with_item_id_first(block, part.id)

    def check_summary(self, template: dict[str, Any], text: str, at: str) -> None:
        """A summary kept in the template must still join to the part's ``text``: written as
        one ``summary_text`` entry instead, the part would read back without the kept
        summary (other metadata), so ``not_representable`` at ``at``."""
        if "summary" not in template or summary_text(template["summary"]) == text:
            return
        raise TraceError(
            "not_representable",
            f"the reasoning block kept for this part (metadata.langchain) holds the summary "
            f"{short_repr(template['summary'])}, which does not join to the part's text "
            f"{text!r}: written, the part would read back with other metadata; take "
            "'summary' out of metadata.langchain.block to write the text as one "
            "summary_text entry, or give the part the text the summary joins to",
            path=at,
        )

    def check_id(self, template: dict[str, Any], item_id: str | None, at: str) -> None:
        """The part's ``item_id`` must read back from the item written from ``template``
        (``_check_item_id``)."""
        _check_item_id(self.held_back(template), template, item_id, at)


@dataclass(frozen=True)
class RawReasoningShape(SummaryShape):
    """An OpenAI Responses reasoning item whose text is its raw reasoning (``content``: a
    list of ``reasoning_text`` entries, as gpt-oss and other open-weight models served
    through the Responses API return it) and whose summary is empty: as ChatOpenAI keeps it
    (``summary: []`` beside ``content``; a content block, or ``additional_kwargs
    ["reasoning"]``), or as langchain-core's v1 standard block holds it (no ``reasoning``,
    the list in ``extras.content``). The list stays in the template only when one
    ``reasoning_text`` entry of the text would not give it back, and goes back as kept
    while it still joins to the part's text (``check_summary``)."""

    def read(self, block: dict[str, Any]) -> dict[str, str] | None:
        if block.get("type") != self.tag or not self._empty_summary(block):
            return None
        text = raw_reasoning_text(get(block, self._content))
        return None if text is None else self._with_item_id({"text": text}, block)

    def held_back(self, block: dict[str, Any]) -> list[str]:
        """The item's raw reasoning (its part is written as a summary elsewhere), and the
        keys of ``block`` beyond what the part gives back (``_keys_beyond``)."""
        carried = _ITEM_KEYS if self._content == ("content",) else _V1_RAW_KEYS
        return [".".join(self._content), *_keys_beyond(block, carried)]

    @property
    def _content(self) -> Path:
        return self.fields[0][1]

    def _empty_summary(self, block: dict[str, Any]) -> bool:
        if self._content == ("content",):
            return block.get("summary") == []
        return "summary" not in block and "reasoning" not in block

    def template(self, block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
        rest = _without_item_id(block, values)
        if get(rest, self._content) == [{"type": "reasoning_text", "text": values["text"]}]:
            parent = get(rest, self._content[:-1]) if len(self._content) > 1 else rest
            del parent[self._content[-1]]
        return rest

    def write(self, template: dict[str, Any], part: MappedPart, at: str) -> dict[str, Any]:
        if not isinstance(part, ReasoningPart):
            raise TraceError(
                "not_representable",
                f"{with_article(self.name)} block holds reasoning; the part is "
                f"{with_article(type(part).__name__)}",
                path=at,
            )
        self.check_summary(template, part.text, at)
        self.check_id(template, part.id, at)
        block = _with_item_id_first(copy.deepcopy(template), part.id)
        entries = [{"type": "reasoning_text", "text": part.text}]
        if len(self._content) > 1:
            extras = block.get(self._content[0])
            if type(extras) is dict and self._content[1] not in extras:
                block[self._content[0]] = {self._content[1]: entries, **extras}
            return block
        return block if "content" in block else with_raw_entries(block, entries)

    def check_summary(self, template: dict[str, Any], text: str, at: str) -> None:
        """Raw reasoning kept in the template must still join to the part's ``text``:
        written as one ``reasoning_text`` entry instead, the part would read back without
        the kept list (other metadata), so ``not_representable`` at ``at``."""
        kept = get(template, self._content)
        if kept is None or raw_reasoning_text(kept) == text:
            return
        raise TraceError(
            "not_representable",
            f"the reasoning block kept for this part (metadata.langchain) holds the raw "
            f"reasoning {short_repr(kept)} at {'.'.join(self._content)}, which does not "
            f"join to the part's text {text!r}: written, the part would read back with other "
            f"metadata; take {self._content[-1]!r} out of metadata.langchain.block to write "
            "the text as one reasoning_text entry, or give the part the text the list joins to",
            path=at,
        )


_ONE_ENTRY = object()
"""A template's missing ``summary``: the one plain entry of the part's text."""

_ITEM_KEYS = frozenset(("type", "id", "summary", "content", "index"))
"""What a reasoning part gives back to a Responses reasoning item (``openai_responses``
writes its ``type``, ``id``, ``summary`` and raw ``content``), and LangChain's stream
``index`` (its own key, no item's)."""

_V1_BLOCK_KEYS = frozenset(("type", "id", "reasoning", "content", "index"))
"""The same in langchain-core's v1 ``reasoning`` block (``reasoning``: the summary's text)."""

_V1_RAW_KEYS = frozenset(("type", "id", "extras.content", "index"))
"""The same in langchain-core's v1 block of an item of raw reasoning text alone."""


def _keys_beyond(block: dict[str, Any], carried: frozenset[str]) -> list[str]:
    """The keys of a reasoning item or block beyond ``carried`` (what its part gives back to
    a Responses reasoning item), those of langchain-core's ``extras`` (where its v1
    translation puts the item's other keys) as ``extras.<key>``: ``encrypted_content``,
    ``status``. The reader keeps the id of such an item in it, not as the part's ``id``:
    the part converts to the Responses API only with its whole item (which ``store=False``
    needs), so without an id it is refused there (``drop=["reasoning"]``)."""
    keys: list[str] = []
    for key, value in block.items():
        if key == "extras" and type(value) is dict:
            keys.extend(f"extras.{inner}" for inner in value)
        else:
            keys.append(key)
    return [key for key in keys if key not in carried]


_AUTO_ID_PREFIX = "lc_"
"""The prefix of the ids langchain-core makes itself (``LC_AUTO_PREFIX``: ``ensure_id``, which
its v1 block factories such as ``create_reasoning_block`` call): no provider gave such an id,
so it is no reasoning item's id and stays in the block."""


def _made_by_langchain(item_id: str) -> bool:
    """Whether ``item_id`` is one langchain-core made itself (``_AUTO_ID_PREFIX``)."""
    return item_id.startswith(_AUTO_ID_PREFIX)


def _check_item_id(
    held: list[str], template: dict[str, Any], item_id: str | None, at: str
) -> None:
    """The part's ``item_id`` must read back from the item or block written from
    ``template``, else ``not_representable`` at ``at``: an id langchain-core made itself
    (``lc_``) and an id beside what the part would not give back (``held``) are read as
    no part's id; an id kept in the template (where the item had it: not where the way back
    writes the part's) must be the part's, and a kept value that is no id (null, or one
    langchain-core made) goes with a part without one."""
    if item_id is not None and _made_by_langchain(item_id):
        raise TraceError(
            "not_representable",
            f"the part's id {item_id!r} has langchain-core's own prefix "
            f"({_AUTO_ID_PREFIX!r}, the ids it makes for blocks): the reader takes such an "
            "id for no reasoning item's, so written, the part would read back without it; "
            "take the id off the part",
            path=at,
        )
    _check_no_id_beside(held, item_id, at)
    if "id" not in template or held:
        return
    kept = template["id"]
    typed = type(kept) is str and not _made_by_langchain(kept)
    if (kept == item_id) if typed else item_id is None:
        return
    raise TraceError(
        "not_representable",
        f"the reasoning item kept for this part (metadata.langchain) holds the id "
        f"{short_repr(kept)}, which is not the part's id {short_repr(item_id)}: written, "
        "the part would read back with another id or other metadata; take 'id' out of "
        "metadata.langchain.block to write the part's id in the way back's place, or give "
        "the part the id the block holds",
        path=at,
    )


def _check_no_id_beside(held: list[str], item_id: str | None, at: str) -> None:
    """A part with an ``item_id`` whose kept item or block holds keys its part would not
    give back (``held``) is ``not_representable`` at ``at``: the reader keeps the id of such
    an item in it, so the part would read back without its id."""
    if not held or item_id is None:
        return
    raise TraceError(
        "not_representable",
        f"the reasoning item kept for this part (metadata.langchain) holds "
        f"{', '.join(map(repr, held))}, which the part's id {item_id!r} would not carry to a "
        "Responses reasoning item: the reader keeps the id of such an item in the item, not "
        "as the part's id, so written, the part would read back without its id; take the id "
        "off the part and keep it in metadata.langchain.block, or take "
        f"{', '.join(map(repr, held))} out of metadata.langchain.block",
        path=at,
    )


def _without_item_id(block: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """A copy of ``block`` without the ``id`` read into ``values`` when it is the item's
    first key, where the OpenAI SDK puts it (``model_dump``, which ChatOpenAI keeps, and
    langchain-core's v1 translation of it) and the way back writes it; an id elsewhere stays
    in its place too, so that the item is written back with its keys in their order."""
    rest = copy.deepcopy(block)
    if "id" in values and next(iter(block)) == "id":
        del rest["id"]
    return rest


def _with_item_id_first(block: dict[str, Any], item_id: str | None) -> dict[str, Any]:
    """``block`` (a reasoning item or block written from a kept template) with ``item_id``
    as its first key, unless the template keeps the id in its own place (``check_id``)."""
    if item_id is None or "id" in block:
        return block
    return {"id": item_id, **block}


def with_raw_entries(item: dict[str, Any], entries: list[Any]) -> dict[str, Any]:
    """``item`` (a reasoning item or block without its ``content``) with ``entries`` as its
    ``content``, where the item's producers put it: after its ``type``, ``id``, ``summary``
    and ``reasoning`` (the OpenAI SDK's and langchain-core's orders), before the rest."""
    keys = list(item)
    at = max((keys.index(key) + 1 for key in _BEFORE_CONTENT if key in item), default=0)
    out = {key: item[key] for key in keys[:at]}
    out["content"] = entries
    out.update((key, item[key]) for key in keys[at:])
    return out


_BEFORE_CONTENT = ("type", "id", "summary", "reasoning")


def _is_data_url(value: Any) -> bool:
    return type(value) is str and split_data_url(value) is not None


def _read_data_url(value: Any, values: dict[str, str]) -> None:
    """``data`` (and ``mime_type``, from a base64 ``data:`` URL) for text at a data-URL path."""
    if type(value) is not str:
        return  # absent or not text: left in the block
    found = split_data_url(value)
    if found is None:
        values["data"] = value
    else:
        values["mime_type"], values["data"] = found


def _typed_fields(part: MappedPart) -> tuple[str, ...]:
    return _fields_of(type(part))


@functools.cache
def _fields_of(kind: type[MappedPart]) -> tuple[str, ...]:
    return tuple(name for name in kind.model_fields if name not in ("type", "metadata"))


def typed_values(part: MappedPart) -> dict[str, str]:
    """The part's typed fields that are set, as ``BlockShape.read`` gives them back."""
    return {
        field: value
        for field in _fields_of(type(part))
        if (value := getattr(part, field)) is not None
    }


def _data_shapes(part: type[MappedPart], tag: str, *, file_id: bool = False) -> list[BlockShape]:
    """The v1 standard block (url/base64) and the v0 ``source_type`` block for one media;
    for a file, each also with its name where LangChain may keep it (``_named_elsewhere``)."""
    v1_fields: list[tuple[str, Path]] = [
        ("url", ("url",)),
        ("data", ("base64",)),
        ("mime_type", ("mime_type",)),
    ]
    sources = ["url", "data"]
    if file_id:
        v1_fields += [("file_id", ("file_id",)), ("filename", ("filename",))]
        sources.append("file_id")
    if part is ImagePart:
        # LangChain's own translators put an OpenAI image's detail under extras.
        v1_fields.append(("detail", ("extras", "detail")))
    v0_fields: list[tuple[str, Path]] = [("data", ("data",)), ("mime_type", ("mime_type",))]
    if file_id:
        v0_fields.append(("filename", ("filename",)))
    v1 = BlockShape(tag, part, tag, tuple(v1_fields), tuple(sources))
    # a base64 data: URL reads as inline data, as an image_url data URL does (the form
    # LangChain sends an image in; audio and file are read alike, for the same data)
    v1_data_url = BlockShape(
        f"{tag}_data_url",
        part,
        tag,
        tuple((field, path) for field, path in v1_fields if field not in _DATA_URL_FIELDS),
        ("data",),
        data_url=("url",),
        data_url_only=True,
    )
    v0 = BlockShape(
        f"{tag}_source_base64",
        part,
        tag,
        tuple(v0_fields),
        ("data",),
        when=((("source_type",), "base64"),),
    )
    if not file_id:
        return [v1_data_url, v1, v0]
    return [*_named_elsewhere(v1_data_url), *_named_elsewhere(v1), *_named_elsewhere(v0)]


_DATA_URL_FIELDS = frozenset({"url", "data", "mime_type"})
"""The v1 fields a base64 ``data:`` URL in ``url`` gives (``data`` and ``mime_type``)."""


_FILENAME_HOMES = ("extras", "metadata")
"""Where langchain-core's converters look for a file block's name when it has none at the
top, in their order: ``extras`` (as ``create_file_block`` writes it), then ``metadata`` (as a
v0 block keeps it)."""


def _named_elsewhere(shape: BlockShape) -> list[BlockShape]:
    """The same layout with its file name under each of ``_FILENAME_HOMES``, then ``shape``
    (the name at the top). Each matches only a block that names its file there and at no
    place looked at before, so the name read is the one langchain-core's converters send."""
    shapes = []
    earlier: list[Path] = [("filename",)]
    for key in _FILENAME_HOMES:
        shapes.append(
            dataclasses.replace(
                shape,
                name=f"{shape.name}_filename_in_{key}",
                fields=tuple(
                    (field, (key, "filename") if field == "filename" else path)
                    for field, path in shape.fields
                ),
                when=(*shape.when, *((path, None) for path in earlier)),
                requires=("filename",),
            )
        )
        earlier.append((key, "filename"))
    return [*shapes, shape]


def _bedrock_shapes(
    part: type[MappedPart], key: str, codec: Codec, *, name_field: str | None = None
) -> list[BlockShape]:
    """A Bedrock Converse media block, with and without LangChain's ``type`` tag."""
    fields: list[tuple[str, Path]] = [
        ("data", (key, "source", "bytes")),
        ("mime_type", (key, "format")),
    ]
    if name_field is not None:
        fields.append((name_field, (key, "name")))
    return [
        BlockShape(
            f"bedrock_{key}{suffix}",
            part,
            tag,
            tuple(fields),
            ("data",),
            codecs=(("mime_type", codec),),
        )
        for suffix, tag in (("", key), ("_untyped", None))
    ]


def _vertex_shapes() -> list[BlockShape]:
    """A Vertex AI ``media`` block: inline data or a ``file_uri``, kind by mime type."""
    fields: tuple[tuple[str, Path], ...] = (
        ("data", ("data",)),
        ("url", ("file_uri",)),
        ("mime_type", ("mime_type",)),
    )
    kinds: tuple[tuple[str, str, type[MappedPart]], ...] = (
        ("image", "image/", ImagePart),
        ("audio", "audio/", AudioPart),
        ("file", "", FilePart),
    )
    return [
        BlockShape(
            f"vertex_media_{name}", part, "media", fields, ("data", "url"), mime_prefix=prefix
        )
        for name, prefix, part in kinds
    ]


SHAPES: tuple[BlockShape, ...] = (
    BlockShape("text", TextPart, "text", (("text", ("text",)),), ("text",)),
    ReasoningBlockShape(
        "reasoning",
        ReasoningPart,
        "reasoning",
        (("text", ("reasoning",)), ("id", ("id",))),
        ("text",),
    ),
    RawReasoningShape(
        "responses_reasoning_content",
        ReasoningPart,
        "reasoning",
        (("text", ("content",)),),
        ("text",),
    ),
    RawReasoningShape(
        "reasoning_extras_content",
        ReasoningPart,
        "reasoning",
        (("text", ("extras", "content")),),
        ("text",),
    ),
    SummaryShape(
        "responses_reasoning", ReasoningPart, "reasoning", (("text", ("summary",)),), ("text",)
    ),
    BlockShape("thinking", ReasoningPart, "thinking", (("text", ("thinking",)),), ("text",)),
    BlockShape(
        "bedrock_reasoning",
        ReasoningPart,
        "reasoning_content",
        (("text", ("reasoning_content", "text")),),
        ("text",),
    ),
    BlockShape("refusal", RefusalPart, "refusal", (("text", ("refusal",)),), ("text",)),
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
    *_bedrock_shapes(ImagePart, "image", IMAGE_FORMAT),
    BlockShape(
        "image_url_data",
        ImagePart,
        "image_url",
        (("detail", ("image_url", "detail")),),
        ("data",),
        data_url=("image_url", "url"),
        data_url_only=True,
    ),
    BlockShape(
        "image_url",
        ImagePart,
        "image_url",
        (("url", ("image_url", "url")), ("detail", ("image_url", "detail"))),
        ("url",),
    ),
    BlockShape("image_url_string", ImagePart, "image_url", (("url", ("image_url",)),), ("url",)),
    *_data_shapes(AudioPart, "audio"),
    BlockShape(
        "input_audio",
        AudioPart,
        "input_audio",
        (("data", ("input_audio", "data")), ("mime_type", ("input_audio", "format"))),
        ("data",),
        codecs=(("mime_type", AUDIO_FORMAT),),
    ),
    *_data_shapes(FilePart, "file", file_id=True),
    BlockShape(
        "openai_file",
        FilePart,
        "file",
        (("file_id", ("file", "file_id")), ("filename", ("file", "filename"))),
        ("data", "file_id"),
        data_url=("file", "file_data"),
    ),
    BlockShape(
        "file_source_id",
        FilePart,
        "file",
        (("file_id", ("id",)),),
        ("file_id",),
        when=((("source_type",), "id"),),
    ),
    *_bedrock_shapes(FilePart, "document", PDF_FORMAT, name_field="filename"),
    *_vertex_shapes(),
)
"""Tried in order; the first shape that reads a block wins."""

SHAPES_BY_NAME = {shape.name: shape for shape in SHAPES}
REASONING_ITEM = SHAPES_BY_NAME["responses_reasoning"]
"""The Responses reasoning item, also read from ``additional_kwargs["reasoning"]``."""
RAW_REASONING_ITEM = SHAPES_BY_NAME["responses_reasoning_content"]
"""The Responses reasoning item of raw reasoning text alone (an empty summary), also read
from ``additional_kwargs["reasoning"]``."""
_DATA_URL_ONLY: dict[str | None, tuple[BlockShape, ...]] = {
    shape.tag: tuple(s for s in SHAPES if s.tag == shape.tag and s.data_url_only)
    for shape in SHAPES
    if shape.data_url_only
}
"""By block type, the shapes that read a base64 ``data:`` URL at their path as inline data."""

_BY_TAG: dict[str | None, tuple[BlockShape, ...]] = {
    tag: tuple(shape for shape in SHAPES if shape.tag == tag)
    for tag in dict.fromkeys(shape.tag for shape in SHAPES)
}
"""By block type, the shapes in the order the reader tries them (a shape of another type
never reads a block)."""


def first_reading(block: dict[str, Any]) -> tuple[BlockShape, dict[str, str]] | None:
    """The shape the reader takes ``block`` for, and the typed values it reads; None when
    it reads the block as no part (an opaque block, or one it refuses)."""
    tag = block.get("type")
    if tag is not None and type(tag) is not str:
        return None  # the reader refuses a block without a type string
    for shape in _BY_TAG.get(tag, ()):
        values = shape.read(block)
        if values is not None:
            return shape, values
    return None


def default_shape(part: MappedPart) -> BlockShape:
    """The block the way back writes for a part that carries no LangChain metadata.

    The v1 standard block, except where ChatOpenAI and ``convert_to_openai_messages`` would
    send the v1 block on without a value the Chat Completions block keeps:

    * an image with a detail (a v1 block's ``extras.detail`` they drop) in OpenAI's
      ``image_url`` block: an image by URL without mime type (not a base64 ``data:`` URL,
      which that block would read back as inline data), and inline data with its mime type,
      as a ``data:`` URL (``image_url_data``);
    * a file by ``file_id`` with its name (which they replace by a placeholder) in the
      ``{"type": "file", "file": {...}}`` block (``openai_file``);
    * inline audio whose mime type is a format the API takes under another name than its
      subtype (``audio/mpeg`` is ``mp3``; they would send ``mpeg``, which the API refuses)
      as ``input_audio``.
    """
    if isinstance(part, FilePart) and _named_file_id(part):
        return SHAPES_BY_NAME["openai_file"]
    if isinstance(part, AudioPart) and _chat_audio(part):
        return SHAPES_BY_NAME["input_audio"]
    if isinstance(part, ImagePart) and part.detail:
        if part.url and not part.mime_type and not _is_data_url(part.url):
            return SHAPES_BY_NAME["image_url"]
        if (
            part.url is None
            and part.data is not None
            and part.mime_type is not None
            and "," not in part.mime_type
        ):
            return SHAPES_BY_NAME["image_url_data"]
    return _DEFAULTS[type(part)]


def _named_file_id(part: FilePart) -> bool:
    """A file by id with its name and nothing else, all of which ``openai_file`` holds."""
    return (
        part.file_id is not None
        and part.filename is not None
        and part.url is None
        and part.data is None
        and part.mime_type is None
    )


_CHAT_AUDIO_FORMATS = ("wav", "mp3")
"""The ``input_audio.format`` values the Chat Completions API takes."""


def _chat_audio(part: AudioPart) -> bool:
    """Inline audio whose mime type ``input_audio`` spells as a format the API takes (and
    reads back in the same spelling), where the mime subtype a v1 block sends on is not
    that format."""
    mime = part.mime_type
    if part.url is not None or part.data is None or mime is None:
        return False
    spelled = audio_format(mime)
    return (
        spelled in _CHAT_AUDIO_FORMATS
        and audio_mime_type(spelled) == mime
        and mime.partition("/")[2] != spelled
    )


_DEFAULTS: dict[type[MappedPart], BlockShape] = {
    TextPart: SHAPES_BY_NAME["text"],
    ReasoningPart: SHAPES_BY_NAME["reasoning"],
    RefusalPart: SHAPES_BY_NAME["refusal"],
    ImagePart: SHAPES_BY_NAME["image"],
    AudioPart: SHAPES_BY_NAME["audio"],
    FilePart: SHAPES_BY_NAME["file"],
}


def get(block: Any, path: Path) -> Any:
    """The value at ``path`` inside nested dicts, or None."""
    for key in path:
        if type(block) is not dict:
            return None
        block = block.get(key)
    return block


def _put(block: dict[str, Any], path: Path, value: str) -> None:
    for key in path[:-1]:
        inner = block.get(key)
        if inner is None:  # absent, or None as LangChain allows (``"extras": None``)
            inner = block[key] = {}
        block = inner
    block[path[-1]] = value
