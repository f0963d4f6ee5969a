"""Content parts of OpenAI-style messages, both ways, for ``openai_chat`` and ``swarm``.

``PartReader`` and ``PartWriter`` hold the position of the message being converted (every
error points there) and convert one content list: ``text``, ``image_url`` (a base64
``data:`` URL becomes ``data`` + ``mime_type``), ``input_audio``, ``file``; any other part
type (``refusal``, provider extensions) is kept whole as an ``OpaquePart``. Unknown keys of a
part and of its inner object are kept under ``metadata[<adapter>]`` as ``fields``/``inner``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, NoReturn

from typing_extensions import assert_never

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import (
    AudioPart,
    Content,
    FilePart,
    ImagePart,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
)

__all__ = ["PartReader", "PartWriter", "described", "lone_refusal", "refusal_part"]

_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


class PartReader:
    """Reads parts of the message at one index of a trace."""

    def __init__(self, source: str, index: int) -> None:
        self.source = source
        self.index = index
        self.root = f"messages[{index}]"

    def fail(self, code: Any, path: str, detail: str) -> NoReturn:
        raise TraceError(code, detail, index=self.index, path=path, source=self.source)

    def kept(self, value: Any, path: str) -> Any:
        """``value``, checked to be JSON, to be kept verbatim in metadata."""
        try:
            check_json(value, path)
        except TraceError as error:
            raise error.relocated(index=self.index, source=self.source) from None
        return value

    def mapping(self, value: Any, path: str, what: str) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(
                "malformed_event", path, f"expected {what} (an object), got {described(value)}"
            )
        return dict(value)

    def string(self, data: dict[str, Any], key: str, path: str) -> str:
        if key not in data:
            self.fail("malformed_event", f"{path}.{key}", f"missing required {key!r}")
        value = data.pop(key)
        if type(value) is not str:
            self.fail(
                "malformed_event", f"{path}.{key}", f"expected a string, got {described(value)}"
            )
        return value

    def optional_string(self, data: dict[str, Any], key: str, path: str) -> str | None:
        return self.string(data, key, path) if key in data else None

    def part(self, item: Any, path: str) -> Part:
        data = self.mapping(item, path, "a content part")
        if "type" not in data or type(data["type"]) is not str:
            got = described(data["type"]) if "type" in data else "no 'type'"
            self.fail(
                "malformed_event",
                f"{path}.type",
                f"a content part needs a string "
                f"'type' (text, image_url, input_audio, file, refusal), got {got}",
            )
        kind: str = data["type"]
        if kind not in ("text", "image_url", "input_audio", "file"):
            return OpaquePart(kind=kind, value=self.kept(data, path))
        del data["type"]
        namespace: dict[str, Any] = {}
        kind_of: type[TextPart | ImagePart | AudioPart | FilePart]
        fields: dict[str, Any]
        if kind == "text":
            namespace["inner"] = {}
            kind_of, fields = TextPart, {"text": self.string(data, "text", path)}
        elif kind == "image_url":
            inner = self.inner(data, "image_url", path, namespace)
            url = self.string(inner, "url", f"{path}.image_url")
            found = _DATA_URL.fullmatch(url)
            fields = {"data": found[2], "mime_type": found[1]} if found else {"url": url}
            kind_of = ImagePart
        elif kind == "input_audio":
            inner = self.inner(data, "input_audio", path, namespace)
            audio = self.string(inner, "data", f"{path}.input_audio")
            audio_format = self.string(inner, "format", f"{path}.input_audio")
            kind_of, fields = AudioPart, {"data": audio, "mime_type": f"audio/{audio_format}"}
        else:
            kind_of, fields = FilePart, self.file_fields(data, path, namespace)
        if namespace["inner"]:
            self.kept(namespace["inner"], f"{path}.{kind}")
        else:
            del namespace["inner"]
        if data:
            namespace["fields"] = self.kept(data, path)
        metadata = {self.source: namespace} if namespace else {}
        return kind_of(**fields, metadata=metadata)

    def inner(
        self, data: dict[str, Any], key: str, path: str, namespace: dict[str, Any]
    ) -> dict[str, Any]:
        """The part's inner object (``image_url``, ``file``...); what is left of it is kept."""
        if key not in data:
            self.fail("malformed_event", f"{path}.{key}", f"a {key} part needs {key!r}")
        inner = self.mapping(data.pop(key), f"{path}.{key}", repr(key))
        # The caller pops what it maps; the dict object left behind is what gets kept.
        namespace["inner"] = inner
        return inner

    def file_fields(
        self, data: dict[str, Any], path: str, namespace: dict[str, Any]
    ) -> dict[str, Any]:
        inner = self.inner(data, "file", path, namespace)
        file_data = self.optional_string(inner, "file_data", f"{path}.file")
        file_id = self.optional_string(inner, "file_id", f"{path}.file")
        filename = self.optional_string(inner, "filename", f"{path}.file")
        if file_data is None and file_id is None:
            self.fail(
                "malformed_event", f"{path}.file", "a file part needs 'file_data' or 'file_id'"
            )
        found = _DATA_URL.fullmatch(file_data) if file_data is not None else None
        if found:
            return {
                "data": found[2],
                "mime_type": found[1],
                "file_id": file_id,
                "filename": filename,
            }
        return {"data": file_data, "file_id": file_id, "filename": filename}


class PartWriter:
    """Writes parts of the typed message at one index."""

    def __init__(self, source: str, index: int, drop: Collection[str]) -> None:
        self.source = source
        self.index = index
        self.drop = drop

    def lose(self, what: str, path: str, option: str | None) -> None:
        """Raise ``not_representable`` unless the caller accepted this loss by name."""
        if option is not None and option in self.drop:
            return
        hint = f"; pass drop=[{option!r}] to leave it out" if option else ""
        raise TraceError(
            "not_representable",
            f"{what}{hint}",
            index=self.index,
            path=f"messages[{self.index}]{path}",
            source=self.source,
        )

    def namespace(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """This adapter's kept source fields (``{}`` when there are none)."""
        kept = metadata.get(self.source, {})
        shapes = [(kept, f"metadata.{self.source}")]
        if isinstance(kept, dict):
            shapes += [
                (kept[key], f"metadata.{self.source}.{key}")
                for key in ("fields", "inner")
                if key in kept
            ]
        for value, where in shapes:
            if not isinstance(value, dict):
                raise TraceError(
                    "malformed_event",
                    f"{where} must be an object, as to_messages writes it; got {described(value)}",
                    index=self.index,
                    path=f"messages[{self.index}]",
                    source=self.source,
                )
        return kept  # type: ignore[no-any-return]

    def content(self, content: Content) -> str | list[dict[str, Any]]:
        if isinstance(content, str):
            return content
        parts = []
        for j, part in enumerate(content):
            written = self.part(part, f".content[{j}]")
            if written is not None:
                parts.append(written)
        return parts

    def part(self, part: Part, path: str) -> dict[str, Any] | None:
        namespace = self.namespace(part.metadata)
        inner: dict[str, Any] = dict(namespace.get("inner", {}))
        out: dict[str, Any]
        if isinstance(part, TextPart):
            out = {"type": "text", "text": part.text}
        elif isinstance(part, ImagePart):
            out = {"type": "image_url", "image_url": {"url": self.source_url(part, path), **inner}}
        elif isinstance(part, AudioPart):
            mime = part.mime_type or ""
            if part.data is None or not mime.startswith("audio/"):
                self.lose(
                    "an input_audio part needs base64 data and an audio/<format> "
                    f"mime_type (found url={part.url!r}, mime_type={part.mime_type!r})",
                    path,
                    None,
                )
            out = {
                "type": "input_audio",
                "input_audio": {"data": part.data, "format": mime[len("audio/") :], **inner},
            }
        elif isinstance(part, FilePart):
            out = {"type": "file", "file": {**self.file(part, path), **inner}}
        elif isinstance(part, ReasoningPart):
            self.lose("Chat Completions content has no reasoning part", path, "reasoning")
            return None
        elif isinstance(part, OpaquePart):
            value = part.value
            if not (isinstance(value, dict) and value.get("type") == part.kind):
                self.lose(
                    f"an opaque {part.kind!r} part is written back verbatim, so its value "
                    f"must be a part object with type {part.kind!r}",
                    path,
                    None,
                )
            return dict(value)
        else:
            assert_never(part)
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return out

    def source_url(self, part: ImagePart, path: str) -> str:
        if part.url is not None and part.data is None:
            if part.mime_type is not None:
                self.lose(
                    f"an image_url part given by URL has no mime_type field (found "
                    f"{part.mime_type!r})",
                    path,
                    "mime_types",
                )
            return part.url
        if part.data is not None and part.url is None and part.mime_type is not None:
            return f"data:{part.mime_type};base64,{part.data}"
        self.lose(
            "an image_url part needs a URL, or base64 data with a mime_type (found "
            f"url={part.url!r}, data set: {part.data is not None}, "
            f"mime_type={part.mime_type!r})",
            path,
            None,
        )
        raise AssertionError  # lose() without an option always raises

    def file(self, part: FilePart, path: str) -> dict[str, Any]:
        if part.url is not None:
            self.lose(f"a file part holds data or a file_id, not a URL ({part.url!r})", path, None)
        out: dict[str, Any] = {}
        if part.data is not None:
            out["file_data"] = (
                part.data if part.mime_type is None else f"data:{part.mime_type};base64,{part.data}"
            )
        elif part.mime_type is not None:
            self.lose(
                f"a file part given by file_id has no mime_type field (found {part.mime_type!r})",
                path,
                "mime_types",
            )
        if part.file_id is not None:
            out["file_id"] = part.file_id
        if part.filename is not None:
            out["filename"] = part.filename
        return out


def refusal_part(text: str) -> OpaquePart:
    return OpaquePart(kind="refusal", value={"type": "refusal", "refusal": text})


def lone_refusal(content: Content) -> str | None:
    """The text of a content that is exactly one plain refusal part, else None."""
    if not (isinstance(content, list) and len(content) == 1):
        return None
    part = content[0]
    if not (isinstance(part, OpaquePart) and part.kind == "refusal" and not part.metadata):
        return None
    value = part.value
    if (
        isinstance(value, dict)
        and set(value) == {"type", "refusal"}
        and type(value["refusal"]) is str
        and value["type"] == "refusal"
    ):
        text: str = value["refusal"]
        return text
    return None


def described(value: Any) -> str:
    return f"{type(value).__name__} {short_repr(value)}"
