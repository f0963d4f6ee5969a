"""What only an assistant-side ChatMessage says besides its blocks and calls: a refusal, a
spoken reply, and the sources it cites.

LlamaIndex keeps them where its OpenAI integration puts them:

* a refusal: ``additional_kwargs["refusal"]`` (a string), as ``from_openai_message_dict``
  keeps OpenAI's ``refusal``. It is the last part of ``AIMessage.content``;
* a spoken reply, in one of two forms. What ``OpenAI.chat`` makes of an audio response:
  ``additional_kwargs["reference_audio_id"]`` (the id ``to_openai_message_dict`` sends back)
  and, as the last block, an ``AudioBlock`` with the reply's data and ``format="mp3"``. Or what
  ``from_openai_message_dict`` keeps of a message dict: ``additional_kwargs["audio"]``, OpenAI's
  ``{"id", "data", "transcript", "expires_at"}``. The first form holds no transcript and no
  expiry time, so a reply that has either is written in the second;
* citations: ``additional_kwargs["annotations"]``, OpenAI's ``url_citation`` list as
  ``from_openai_message_dict`` keeps it. A url_citation holds no cited text.

What a typed field does not hold stays under the typed value's ``metadata["llama_index"]``:
``format`` of the reply's AudioBlock when it is not ``"mp3"``; ``audio`` (the reply dict's
null and unknown keys) and ``reference_audio_id: true`` (both forms at once); ``annotation``
(the entry's null and unknown keys, and the entry itself when it leaves out one of
``url``, ``title``, ``start_index`` and ``end_index``, which OpenAI's url_citation requires).
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

from tracebridge import AIMessage, AudioReference, Citation, RefusalPart
from tracebridge.errors import short_repr

from ._blocks import NAME, fail, held_block, no_unknown_fields, not_representable, optional_str
from ._kept import (
    AUDIO_KEYS,
    CITATION_KEYS,
    PART_KEYS,
    not_written,
    own,
    refuse_unknown_keys,
)
from ._parts import held_as_given

REPLY_FIELDS = {"transcript": str, "data": str, "expires_at": int}
CITATION_FIELDS = {"url": str, "title": str, "start_index": int, "end_index": int}


def take_refusal(extra: dict[str, Any]) -> RefusalPart | None:
    if type(extra.get("refusal")) is not str:
        return None  # absent or null: kept verbatim with the kwargs
    return RefusalPart(text=extra.pop("refusal"))


def _lifted(
    source: dict[str, Any], fields: dict[str, type], index: int, path: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The typed fields of ``source`` that have a value, and everything else (kept)."""
    typed: dict[str, Any] = {}
    for key, kind in fields.items():
        value = source.get(key)
        if value is not None and type(value) is not kind:
            raise fail("malformed_event", f"{key!r} must be {kind.__name__} or null, got "
                       f"{short_repr(value)}", index, f"{path}.{key}")
        if value is not None:
            typed[key] = value
    return typed, {key: value for key, value in source.items() if key not in typed}


def take_audio(
    extra: dict[str, Any], blocks: list[Any], index: int, where: str
) -> tuple[AudioReference | None, list[Any]]:
    """The spoken reply, and the blocks without the one that carried its data."""
    audio, reference = extra.get("audio"), extra.get("reference_audio_id")
    if type(audio) is dict:
        path = f"{where}.additional_kwargs.audio"
        if type(audio.get("id")) is not str:
            raise fail("malformed_event", f"an assistant's audio is OpenAI's reply {{'id', "
                       f"'data', 'transcript', 'expires_at'}}, got {short_repr(audio)}",
                       index, f"{path}.id")
        typed, rest = _lifted(audio, REPLY_FIELDS, index, path)
        rest = {key: value for key, value in rest.items() if key != "id"}
        kept: dict[str, Any] = {}
        if rest or not _needs_openai_form(typed, blocks):
            kept["audio"] = rest  # says "this form" where the writer would pick the other
        if type(reference) is str:
            if reference != audio["id"]:
                raise fail("conflicting_fields", f"reference_audio_id {reference!r} and audio "
                           f"id {audio['id']!r} name different replies", index,
                           f"{where}.additional_kwargs.reference_audio_id")
            kept["reference_audio_id"] = True
            del extra["reference_audio_id"]
        del extra["audio"]
        reply = AudioReference(id=audio["id"], **typed, metadata={NAME: kept} if kept else {})
        return reply, blocks
    if type(reference) is not str:
        return None, blocks  # absent or null: kept verbatim with the kwargs
    del extra["reference_audio_id"]
    if not blocks or not is_reply_audio(blocks[-1], index, f"{where}.blocks[{len(blocks) - 1}]"):
        return AudioReference(id=reference), blocks
    last_path = f"{where}.blocks[{len(blocks) - 1}]"
    no_unknown_fields(blocks[-1], "audio", index, last_path)
    last = held_block(blocks[-1], index, last_path)  # as LlamaIndex holds it, or refused
    kept = {} if last.get("format") == "mp3" else {"format": last.get("format")}
    reply = AudioReference(id=reference, data=last["audio"], metadata={NAME: kept} if kept else {})
    return reply, blocks[:-1]


def _needs_openai_form(typed: dict[str, Any], blocks: list[Any]) -> bool:
    """Whether a reply can only be written as OpenAI's ``audio`` dict: it has what
    ``reference_audio_id`` cannot carry, or no data while the last block looks like data."""
    if "transcript" in typed or "expires_at" in typed:
        return True
    return "data" not in typed and bool(blocks) and is_reply_audio(blocks[-1], 0, "")


def is_reply_audio(block: Any, index: int, path: str) -> bool:
    """An AudioBlock with inline data and nothing else: how a reply's data is carried."""
    if type(block) is not dict or block.get("block_type") != "audio":
        return False
    if type(block.get("audio")) is not str or block.get("url") is not None:
        return False
    optional_str(block, "format", index, path)
    return block.get("path") is None


def take_citations(extra: dict[str, Any], index: int, where: str) -> list[Citation]:
    entries = extra.get("annotations")
    if type(entries) is not list or not entries:
        return []  # absent, null or empty: kept verbatim with the kwargs
    citations = []
    for k, entry in enumerate(entries):
        path = f"{where}.additional_kwargs.annotations[{k}]"
        inner = entry.get("url_citation") if type(entry) is dict else None
        if type(inner) is not dict or entry.get("type") != "url_citation":
            raise fail("malformed_event", f"an annotation is {{'type': 'url_citation', "
                       f"'url_citation': {{'url', 'title', 'start_index', 'end_index'}}}}, got "
                       f"{short_repr(entry)}", index, path)
        typed, rest = _lifted(inner, CITATION_FIELDS, index, f"{path}.url_citation")
        kept = {**entry, "url_citation": rest}
        namespace: dict[str, Any] = {}
        if kept != {"type": "url_citation", "url_citation": {}}:
            namespace["annotation"] = kept
        absent = [key for key in CITATION_FIELDS if key not in inner]
        if absent:  # only a citation read so is written without them
            namespace["absent"] = absent
        citations.append(Citation(**typed, metadata={NAME: namespace} if namespace else {}))
    del extra["annotations"]
    return citations


# --- the way back -------------------------------------------------------------------------


def put_refusal(message: AIMessage, extra: dict[str, Any], where: str) -> Any:
    """The content without a last RefusalPart, which goes to ``additional_kwargs`` (its
    metadata too is refused where it keeps anything of this adapter's: no reader keeps any).
    It has a place, so ``drop=["refusals"]`` does not leave it out: that option is for a
    refusal that has none (``part_to_block``)."""
    content = message.content
    if isinstance(content, str) or not content or not isinstance(content[-1], RefusalPart):
        return content
    if content[-1].metadata:
        part_where = f"{where}.content[{len(content) - 1}]"
        kept = own(content[-1].metadata, part_where)
        if kept:
            refuse_unknown_keys(kept, PART_KEYS["refusal"], "a refusal part", part_where)
    extra["refusal"] = content[-1].text
    return content[:-1]


def put_audio(message: AIMessage, blocks: list[dict[str, Any]], extra: dict[str, Any],
              where: str, drop: Collection[str]) -> list[dict[str, Any]]:
    """The blocks, with the reply's data block when it goes in the first form (refused where
    LlamaIndex would not hold it as given: data that is not base64 text, say)."""
    reply = message.audio
    if reply is None:
        return blocks
    at = f"{where}.audio"
    kept = own(reply.metadata, at)
    if kept:
        refuse_unknown_keys(kept, AUDIO_KEYS, "a spoken reply", at)
    stored = kept.get("audio")
    if "audio" in kept and type(stored) is not dict:
        raise not_written("audio", f"keeps the null and other keys of OpenAI's audio dict, a "
                           f"dict; found {short_repr(stored)}", at)
    typed = {key: getattr(reply, key) for key in REPLY_FIELDS if getattr(reply, key) is not None}
    if type(stored) is dict or _needs_openai_form(typed, blocks):
        if "format" in kept:
            raise not_written("format", "is the format of the reply's AudioBlock, but this "
                               "reply is written as OpenAI's audio dict, which has none", at)
        if "reference_audio_id" in kept and kept["reference_audio_id"] is not True:
            raise not_written("reference_audio_id", f"is true when to_messages keeps it "
                               f"(the reply's id given twice); found "
                               f"{short_repr(kept['reference_audio_id'])}", at)
        audio = copy.deepcopy(stored) if type(stored) is dict else {}
        extra["audio"] = {**audio, "id": reply.id, **typed}
        if kept.get("reference_audio_id") is True:
            extra["reference_audio_id"] = reply.id
        return blocks
    if "reference_audio_id" in kept:
        raise not_written("reference_audio_id", "says the reply's id was also given beside "
                           "OpenAI's audio dict, but this reply is written as "
                           "reference_audio_id alone", at)
    extra["reference_audio_id"] = reply.id
    stored_name = kept.get("format", "mp3")
    if "format" in kept and (reply.data is None or not (
        stored_name is None or type(stored_name) is str
    )):
        raise not_written("format", f"is the format of the reply's AudioBlock, text or null, "
                           f"and the reply needs data for that block; found "
                           f"{short_repr(stored_name)} beside data set: "
                           f"{reply.data is not None}", at)
    if reply.data is None:
        return blocks
    name = stored_name
    block = {"block_type": "audio", "audio": reply.data, "url": None, "path": None,
             "format": name}
    return [*blocks, held_as_given(block, f"{where}.audio", drop, {"audio": "data"})]


def _lacking(
    inner: dict[str, Any], absent: list[str], drop: Collection[str], at: str
) -> bool:
    """Whether a citation lacks a key of OpenAI's url_citation (all four of which the API
    requires) that it was not read without (``absent``; a key read as null is in ``inner``):
    refused, or left out (True) with ``drop=["citations"]``."""
    missing = [key for key in CITATION_FIELDS if key not in inner and key not in absent]
    if not missing:
        return False
    if "citations" in drop:
        return True
    raise not_representable(
        f"an OpenAI url_citation in additional_kwargs['annotations'] needs "
        f"{', '.join(missing)}; drop=['citations'] leaves citations out",
        at,
    )


def _kept_absent(cited: Citation, absent: Any, inner: dict[str, Any], at: str) -> list[str]:
    """The kept list of the url_citation keys the entry left out, when it is the one the
    reader keeps for this citation: once each, in the entry's order, each without a value
    on the citation and not kept as null (a key given a value since is stale: written
    whole, the citation would read back without the list)."""
    known = type(absent) is list and all(type(key) is str for key in absent)
    reread = [key for key in CITATION_FIELDS if known and key in absent]
    if not known or not absent or absent != reread or any(
        getattr(cited, key) is not None or key in inner for key in absent
    ):
        raise not_written("absent", f"({short_repr(absent)}) is not the list of url_citation "
                          "keys the reader keeps for this citation (once each, in the entry's "
                          "order, each without a value and not kept as null)", at)
    return reread


def put_citations(message: AIMessage, extra: dict[str, Any], drop: Collection[str],
                  where: str) -> None:
    """The message's citations as ``additional_kwargs["annotations"]``. One with cited text
    has no place there, nor one without a url, title or index that was not read so: refused,
    or left out whole with ``drop=["citations"]``; the others are written either way."""
    if not message.citations:
        return
    entries = []
    for k, cited in enumerate(message.citations):
        if cited.cited_text is not None:
            if "citations" in drop:
                continue
            raise not_representable(
                "an OpenAI url_citation in additional_kwargs['annotations'] has no cited "
                "text; drop=['citations'] leaves citations out",
                f"{where}.citations[{k}].cited_text",
            )
        at = f"{where}.citations[{k}]"
        kept = own(cited.metadata, at)
        if kept:
            refuse_unknown_keys(kept, CITATION_KEYS, "a citation", at)
        stored = kept.get("annotation")
        if "annotation" in kept and type(stored) is not dict:
            raise not_written("annotation", f"keeps the null and other keys of the "
                               f"url_citation entry, a dict; found {short_repr(stored)}", at)
        entry = copy.deepcopy(stored) if type(stored) is dict else {}
        inner = entry.get("url_citation")
        inner = dict(inner) if type(inner) is dict else {}
        absent = _kept_absent(cited, kept["absent"], inner, at) if "absent" in kept else []
        for key in CITATION_FIELDS:
            if getattr(cited, key) is not None:
                inner[key] = getattr(cited, key)
        if _lacking(inner, absent, drop, at):
            continue
        entries.append({**entry, "type": "url_citation", "url_citation": inner})
    if entries:  # (an empty list would read back as a kept value, not as no citations)
        extra["annotations"] = entries
