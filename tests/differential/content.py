"""The content of a message as facts: text, blocks of every shape, calls, citations.

The same blocks reach both sides (LangChain passes blocks it does not know through), so one
projection serves Chat Completions parts and LangChain blocks alike. See ``facts`` for the
kinds of fact."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Fact", "call_fact", "canon", "citations", "content_facts"]

Fact = tuple[Any, ...]

_AUDIO_MIME = {"wav": "audio/wav", "mp3": "audio/mpeg", "mpeg": "audio/mpeg", "flac": "audio/flac"}
"""The audio formats the corpus uses (an independent table: the oracle does not borrow ours)."""

_AUDIO_ALIASES = {"audio/mp3": "audio/mpeg", "audio/x-wav": "audio/wav", "audio/wave": "audio/wav"}
"""Spellings of one audio type: the same information."""


def canon(value: Any) -> str:
    """Canonical JSON of a value; raw bytes stand as their base64 text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_bytes_as_base64)


def _bytes_as_base64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"not JSON: {type(value).__name__}")


def _b64(value: Any) -> Any:
    return _bytes_as_base64(value) if isinstance(value, (bytes, bytearray)) else value


def _audio_mime(fmt: Any) -> Any:
    return _AUDIO_MIME.get(fmt, f"audio/{fmt}")


def _audio_fact(i: int, data: Any, mime: Any) -> Fact:
    return (i, "audio", data, _AUDIO_ALIASES.get(mime, mime))


def call_fact(i: int, call_id: Any, name: Any, arguments: Any) -> Fact:
    """A call whose arguments are JSON text: ``""`` means no arguments (OpenRouter, vLLM)."""
    if isinstance(arguments, dict):
        return (i, "call", call_id, name, canon(arguments))
    if arguments == "":
        return (i, "call", call_id, name, canon({}))
    try:
        parsed = json.loads(arguments)
    except (TypeError, json.JSONDecodeError):
        return (i, "invalid_call", call_id, name, arguments)
    if isinstance(parsed, dict):
        return (i, "call", call_id, name, canon(parsed))
    return (i, "invalid_call", call_id, name, arguments)


def content_facts(i: int, content: Any) -> Iterator[Fact]:
    if content is None:
        return
    if isinstance(content, str):
        if content:
            yield (i, "text", content)
        return
    texts: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        yield from _block_facts(i, block, texts)
    joined = "\n".join(texts)
    if joined:
        yield (i, "text", joined)


def _block_facts(i: int, block: dict[str, Any], texts: list[str]) -> Iterator[Fact]:
    kind = block.get("type")
    if kind == "text" and "source_type" not in block:
        texts.append(block["text"])
        yield from citations(i, block.get("annotations") or ())
        yield from _extras(i, block, "text", {"type", "text", "annotations"})
    elif kind == "image_url":
        inner = block["image_url"]
        url = inner if isinstance(inner, str) else inner.get("url")
        yield (i, "image", url)
        if isinstance(inner, dict):
            if inner.get("detail"):
                yield (i, "image_detail", url, inner["detail"])
            yield from _extras(i, inner, "image_url", {"url", "detail"})
        yield from _extras(i, block, "image_url_part", {"type", "image_url"})
    elif kind == "image" or (kind is None and "image" in block):
        yield from _image_facts(i, block)
    elif kind == "media":
        source = f"data:{block['mime_type']};base64,{_b64(block['data'])}"
        yield (i, "image" if "image" in block["mime_type"] else "media", source)
    elif kind == "input_audio":
        inner = block["input_audio"]
        yield _audio_fact(i, inner.get("data"), _audio_mime(inner.get("format")))
        yield from _extras(i, inner, "input_audio", {"data", "format"})
        yield from _extras(i, block, "input_audio_part", {"type", "input_audio"})
    elif kind == "audio" and ("base64" in block or block.get("source_type") == "base64"):
        data = block.get("base64", block.get("data"))
        yield _audio_fact(i, data, block.get("mime_type"))
        yield from _extras(
            i, block, "audio", {"type", "base64", "data", "mime_type", "source_type"}
        )
    elif kind == "file":
        yield from _file_facts(i, block)
    elif kind == "refusal":
        if block.get("refusal"):
            yield (i, "refusal", block["refusal"])
        yield from _extras(i, block, "refusal", {"type", "refusal"})
    elif kind in ("reasoning", "thinking"):
        yield from _reasoning_facts(i, block)
    elif kind == "tool_use":
        yield (i, "call", block.get("id"), block.get("name"), canon(block.get("input")))
        yield from _extras(i, block, "tool_use", {"type", "id", "name", "input"})
    elif kind == "tool_call":
        yield (i, "call", block.get("id"), block.get("name"), canon(block.get("args")))
        yield from _extras(i, block, "tool_call", {"type", "id", "name", "args"})
    elif kind == "function_call":
        yield call_fact(i, block.get("call_id"), block.get("name"), block.get("arguments"))
        yield from _extras(i, block, "function_call", {"type", "call_id", "name", "arguments"})
    elif kind == "tool_result":
        yield from _tool_result_facts(i, block)
    else:
        yield (i, "block", kind, canon(block))


def _image_facts(i: int, block: dict[str, Any]) -> Iterator[Fact]:
    used = {"type", "detail", "mime_type", "source_type"}
    source_block = block.get("source")
    bedrock = block.get("image")
    if isinstance(source_block, dict):  # Anthropic
        used.add("source")
        if source_block.get("type") == "base64":
            source = f"data:{source_block.get('media_type')};base64,{source_block.get('data')}"
        else:
            source = source_block.get("url")
        yield from _extras(i, source_block, "image_source", {"type", "media_type", "data", "url"})
    elif isinstance(bedrock, dict):  # Bedrock Converse: raw bytes
        used.add("image")
        data = _b64(bedrock["source"]["bytes"])
        source = f"data:image/{bedrock.get('format')};base64,{data}"
    elif "base64" in block or block.get("source_type") == "base64":
        used |= {"base64", "data"}
        data = block.get("base64", block.get("data"))
        source = f"data:{block.get('mime_type')};base64,{data}"
    elif "url" in block:
        used.add("url")
        source = block["url"]
    else:
        used |= {"file_id", "id"}
        source = f"file_id:{block.get('file_id', block.get('id'))}"
    yield (i, "image", source)
    if block.get("mime_type") and not source.startswith("data:"):
        yield (i, "mime_type", source, block["mime_type"])
    extras = block.get("extras") or {}
    detail = block.get("detail") or extras.get("detail")
    if detail:
        yield (i, "image_detail", source, detail)
    yield from _extras(i, {**block, **extras}, "image", used | {"extras"})


def _file_facts(i: int, block: dict[str, Any]) -> Iterator[Fact]:
    inner = block.get("file")
    extras = block.get("extras") or {}
    if isinstance(inner, dict):  # Chat Completions
        source = inner.get("file_data") or f"file_id:{inner.get('file_id')}"
        filename = inner.get("filename")
        yield from _extras(i, inner, "file", {"file_data", "file_id", "filename"})
        used = {"type", "file"}
    else:
        if "base64" in block or block.get("source_type") == "base64":
            data = block.get("base64", block.get("data"))
            source = f"data:{block.get('mime_type')};base64,{data}"
        elif "url" in block:
            source = block["url"]
        else:
            source = f"file_id:{block.get('file_id', block.get('id'))}"
        filename = block.get("filename") or extras.get("filename")
        used = {
            "type",
            "base64",
            "data",
            "url",
            "file_id",
            "id",
            "mime_type",
            "filename",
            "source_type",
            "extras",
        }
        if block.get("mime_type") and not source.startswith("data:"):
            yield (i, "mime_type", source, block["mime_type"])
    yield (i, "file", source)
    if filename:
        yield (i, "filename", source, filename)
    yield from _extras(i, {**block, **extras}, "file", used | {"filename"})


def _reasoning_facts(i: int, block: dict[str, Any]) -> Iterator[Fact]:
    text = block.get("reasoning") if block["type"] == "reasoning" else block.get("thinking")
    if text:
        yield (i, "reasoning", text)
    for item in block.get("summary") or ():
        yield (i, "reasoning", item.get("text"))
    for key, value in block.items():
        if key not in {"type", "reasoning", "thinking", "summary"}:
            yield (i, "reasoning_extra", key, canon(value))


def _tool_result_facts(i: int, block: dict[str, Any]) -> Iterator[Fact]:
    tool_use_id = block.get("tool_use_id")
    yield (i, "in_result", tool_use_id, "tool_call_id", tool_use_id)
    if block.get("is_error"):
        yield (i, "in_result", tool_use_id, "status", "error")
    for fact in content_facts(i, block.get("content")):
        yield (i, "in_result", tool_use_id, *fact[1:])
    yield from _extras(i, block, "tool_result", {"type", "tool_use_id", "is_error", "content"})


def citations(i: int, annotations: Iterable[dict[str, Any]]) -> Iterator[Fact]:
    for annotation in annotations:
        kind = annotation.get("type")
        if kind not in ("url_citation", "citation"):
            yield (i, "block", f"annotation:{kind}", canon(annotation))
            continue
        fields = annotation.get("url_citation") or annotation
        yield (
            i,
            "citation",
            fields.get("url"),
            fields.get("title"),
            fields.get("start_index"),
            fields.get("end_index"),
            fields.get("cited_text"),
        )
        known = {"type", "url_citation", "url", "title", "start_index", "end_index", "cited_text"}
        for key, value in {**annotation, **fields}.items():
            if key not in known:
                yield (i, "citation_extra", key, canon(value))


def _extras(i: int, block: dict[str, Any], where: str, used: set[str]) -> Iterator[Fact]:
    for key, value in block.items():
        if key not in used:
            yield (i, "extra", where, key, canon(value))
