"""Content parts of Responses messages and tool outputs, both ways.

The API takes different part types in each place (from the SDK's ``*Param`` types):
user, system and developer messages ``input_text``/``input_image``/``input_file``/
``input_audio``; assistant messages ``output_text``/``refusal``; tool outputs
``input_text``/``input_image``/``input_file``. A part of another type (or of a type the place
does not take) is kept whole as an ``OpaquePart`` marked ``{"verbatim": true}``, and only such
a part is written back as it was. The API's request types take no ``input_audio`` part in a
message (the SDK has it for evals); one read from a trace is an ``AudioPart`` marked
``{"read": true}``, and only such a part is written back. An ``input_image`` detail the API
does not take (any but ``API_IMAGE_DETAILS``) is kept (``{"detail": "ultra"}``), and only a
part that keeps it is written with it. Unknown keys of a part (and null
values) are kept under ``metadata[<adapter>]["fields"]``; ``url_citation`` annotations of an
``output_text`` part are ``AIMessage.citations`` (``_item_reader`` collects them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from tracebridge._json import NotPlainJson, json_copy_checked
from tracebridge.media import split_data_url
from tracebridge.messages import (
    AudioPart,
    Content,
    FilePart,
    ImagePart,
    OpaquePart,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
)

from ..openai_chat._parts import API_IMAGE_DETAILS, PartReader, PartWriter, described
from ._items import held_sdk_dicts

__all__ = ["PLACES", "ItemPartReader", "ItemPartWriter", "taken", "taken_always"]

PLACES: Mapping[str, tuple[str, ...]] = {
    "user": ("input_text", "input_image", "input_file", "input_audio"),
    "system": ("input_text", "input_image", "input_file", "input_audio"),
    "developer": ("input_text", "input_image", "input_file", "input_audio"),
    "assistant": ("output_text", "refusal"),
    "output": ("input_text", "input_image", "input_file"),
}
"""The part types the API takes in each role, and in a tool output (``output``)."""

_DROPPED_BY: Mapping[str, str] = {"refusal": "refusals", "input_audio": "audio_parts"}
"""The ``drop=`` option that leaves out a part of a type its place does not take."""


class ItemPartReader(PartReader):
    """Reads the parts of the item at one index of a trace."""

    image_details = API_IMAGE_DETAILS
    """The ``input_image.detail`` values the API takes (the SDK's ``ImageDetail``: those of
    Chat Completions): a part read with another keeps it (``metadata.detail``)."""

    def __init__(self, source: str, index: int) -> None:
        super().__init__(source, index)
        self.root = f"items[{index}]"

    def kept(self, value: Any, path: str) -> Any:
        """``value``, checked to be JSON, as a copy to keep verbatim in metadata, copied and
        checked in one walk. Only a value that is not plain JSON is walked again: the openai
        SDK objects in it are read as ``sdk_dict`` gives them (``held_sdk_dicts``), and what
        is still not JSON is refused where it is."""
        try:
            return json_copy_checked(value)
        except NotPlainJson:
            return super().kept(held_sdk_dicts(value, path, self.index, self.source), path)

    def parts(self, value: Any, path: str, place: str) -> Content:
        """A string as it is; a list as typed parts (``place`` says which types it takes)."""
        if type(value) is str:
            return value
        if not isinstance(value, list):
            self.fail(
                "malformed_event", path, f"expected a string or a list of parts, got "
                f"{described(value)}"
            )
        return [self.item_part(part, f"{path}[{j}]", place) for j, part in enumerate(value)]

    def item_part(self, item: Any, path: str, place: str) -> Part:
        data = self.mapping(item, path, "a content part")
        kind = data.get("type")
        if type(kind) is not str:
            self.fail(
                "malformed_event",
                f"{path}.type",
                f"a content part needs a string 'type' ({', '.join(PLACES[place])}), got "
                f"{described(kind) if 'type' in data else 'none'}",
            )
        if kind not in PLACES[place]:
            return OpaquePart(
                kind=kind, value=self.kept(data, path), metadata={self.source: {"verbatim": True}}
            )
        del data["type"]
        namespace: dict[str, Any] = {}
        made: Part
        if kind in ("input_text", "output_text"):
            made = TextPart(text=self.string(data, "text", path))
            if kind == "output_text":
                self.output_text(data, path, namespace)
        elif kind == "refusal":
            made = RefusalPart(text=self.string(data, "refusal", path))
        elif kind == "input_image":
            if type(data.get("image_url")) is not str:
                # By file id alone: the typed ImagePart needs a URL or data.
                data["type"] = kind
                return OpaquePart(
                    kind=kind,
                    value=self.kept(data, path),
                    metadata={self.source: {"verbatim": True}},
                )
            made = self.image(data, path, namespace)
        elif kind == "input_file":
            made = self.file(data, path)
        else:
            # The API's message types take no audio part (the SDK has input_audio for evals
            # only): marked, so that only a part read here is written back.
            namespace["read"] = True
            made = AudioPart(**self.audio_fields(data, path, namespace))
            if namespace.get("inner"):
                namespace["inner"] = self.kept(namespace["inner"], f"{path}.input_audio")
            else:
                namespace.pop("inner", None)
        if data:
            namespace["fields"] = self.kept(data, path)
        if not namespace:
            return made
        return made.model_copy(update={"metadata": {self.source: namespace}})

    def output_text(self, data: dict[str, Any], path: str, namespace: dict[str, Any]) -> None:
        """Hook: the reply reader takes the annotations out of ``data``."""

    def image(self, data: dict[str, Any], path: str, namespace: dict[str, Any]) -> ImagePart:
        url = self.string(data, "image_url", path)
        detail = data.pop("detail") if type(data.get("detail")) is str else None
        self.keep_odd_detail(detail, namespace)
        found = split_data_url(url)
        if found:
            return ImagePart(data=found[1], mime_type=found[0], detail=detail)
        return ImagePart(url=url, detail=detail)

    def file(self, data: dict[str, Any], path: str) -> FilePart:
        given = {
            key: self.optional(data, key, str, path)
            for key in ("file_id", "file_data", "file_url", "filename")
        }
        if given["file_id"] is None and given["file_data"] is None and given["file_url"] is None:
            self.fail(
                "malformed_event",
                path,
                "an input_file part needs 'file_id', 'file_data' or 'file_url' (a string)",
            )
        found = split_data_url(given["file_data"]) if given["file_data"] is not None else None
        return FilePart(
            url=given["file_url"],
            data=found[1] if found else given["file_data"],
            mime_type=found[0] if found else None,
            file_id=given["file_id"],
            filename=given["filename"],
        )


def taken(keys: Collection[str]) -> Callable[[str, Any], bool]:
    """A kept key the reader takes into typed data unless it is null: one of ``keys`` (the
    reader keeps a null value of an optional key)."""
    return lambda key, value: value is not None and key in keys


def taken_always(keys: Collection[str] | None) -> Callable[[str, Any], bool]:
    """A kept key the reader takes whatever its value: one of ``keys`` (None: every key)."""
    return lambda key, value: keys is None or key in keys


def _nothing_taken(key: str, value: Any) -> bool:
    return False


_KEPT_TAKEN: Mapping[str, Callable[[str, Any], bool]] = {
    "output_text": taken_always(("annotations",)),
    "input_image": lambda key, value: key == "detail" and type(value) is str,
    "input_file": taken(("file_id", "file_data", "file_url", "filename")),
}
"""Per part type: the kept keys its reader takes into the typed part (``type`` and the
keys the writer writes aside)."""


_PART_TYPES: Mapping[type, str] = {
    TextPart: "input_text",
    RefusalPart: "refusal",
    ImagePart: "input_image",
    AudioPart: "input_audio",
    FilePart: "input_file",
}


class ItemPartWriter(PartWriter):
    """Writes the parts of the typed message at one index."""

    FORMAT = "Responses"
    image_details = API_IMAGE_DETAILS
    origins: Mapping[str, str] = {
        "openai_responses": "a Responses trace",
        "openai_agents": "an Agents SDK run",
    }

    def __init__(self, source: str, index: int, drop: Collection[str]) -> None:
        super().__init__(source, index, drop)

    def parts(self, content: Content, place: str, path: str = ".content") -> Any:
        if isinstance(content, str):
            return content
        written = []
        for j, part in enumerate(content):
            out = self.item_part(part, f"{path}[{j}]", place)
            if out is not None:
                written.append(out)
        return written

    def item_part(self, part: Part, path: str, place: str) -> dict[str, Any] | None:
        """The part as the API spells it in ``place``, or None when the caller dropped it."""
        if isinstance(part, ReasoningPart):
            self.lose(
                f"a Responses {_where(place)} has no reasoning part (reasoning is an item of "
                "its own, in a reply)",
                path,
                "reasoning",
            )
            return None
        if isinstance(part, OpaquePart):
            if part.kind in PLACES[place] and self.namespace(part.metadata).get("verbatim") is True:
                self.typed_verbatim(part, path, place)
            return self.opaque(part, path)
        kind = _PART_TYPES[type(part)]
        if kind == "input_text" and place == "assistant":
            kind = "output_text"
        if kind not in PLACES[place]:
            self.lose(
                f"a Responses {_where(place)} takes only {', '.join(PLACES[place])} parts, "
                f"not {kind}",
                path,
                _DROPPED_BY.get(kind),
            )
            return None
        namespace = self.namespace(part.metadata)
        out: dict[str, Any] = {"type": kind}
        if isinstance(part, TextPart):
            out["text"] = part.text
            if kind == "output_text":
                self.output_text(part, namespace, out)
        elif isinstance(part, RefusalPart):
            out["refusal"] = part.text
        elif isinstance(part, ImagePart):
            out["image_url"] = self.source_url(part, path)
            detail = self.image_detail(part, path)
            if detail is not None:
                out["detail"] = detail
        elif isinstance(part, AudioPart):
            if namespace.get("read") is not True:
                self.lose(
                    "a Responses message takes no audio part (only an input_audio part read "
                    f"from {self.origin()} is written back)",
                    path,
                    "audio_parts",
                )
                return None
            audio = {"data": self.audio_data(part, path), "format": self.audio_format(part, path)}
            inner = namespace.get("inner", {})
            self.check_kept(inner, audio, f"{path}.metadata.{self.source}.inner")
            out["input_audio"] = {**inner, **audio}
        else:
            out.update(self.file_fields(part, path))
        return self.with_fields(out, namespace, path, _KEPT_TAKEN.get(kind, _nothing_taken))

    def with_fields(
        self,
        out: dict[str, Any],
        namespace: dict[str, Any],
        path: str,
        mapped: Callable[[str, Any], bool] = _nothing_taken,
    ) -> dict[str, Any]:
        """``out`` with the kept keys (``fields``) of the element at ``path``. A kept key
        ``out`` has too, or one the reader takes into typed data (``mapped``), is refused:
        the reader never keeps one, and written it would be lost, or read back as typed
        data the message does not hold."""
        fields = namespace.get("fields")
        if fields:
            self.check_kept(fields, out, f"{path}.metadata.{self.source}.fields", mapped)
            out.update(fields)
        return out

    def typed_verbatim(self, part: OpaquePart, path: str, place: str) -> None:
        """Refuse a part kept verbatim whose type the reader maps to a typed part in
        ``place``: it would read back typed. The one such part the reader keeps is an
        ``input_image`` by file id alone (no string ``image_url``)."""
        value = part.value
        if part.kind == "input_image" and isinstance(value, dict) and (
            type(value.get("image_url")) is not str
        ):
            return
        self.refuse(
            f"an opaque {part.kind!r} part kept verbatim: a Responses {_where(place)} reads "
            f"its {part.kind} parts as typed parts",
            path,
        )

    def output_text(self, part: TextPart, namespace: dict[str, Any], out: dict[str, Any]) -> None:
        """Hook: the reply writer adds the part's annotations."""
        out["annotations"] = []

    def file_fields(self, part: FilePart, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if part.file_id is not None:
            out["file_id"] = part.file_id
        if part.data is not None:
            if part.mime_type is None:
                self.not_a_data_url(part.data, "data", path)
            out["file_data"] = (
                part.data
                if part.mime_type is None
                else self.inline_data_url(part, part.mime_type, part.data, path)
            )
        elif part.mime_type is not None:
            self.lose(
                f"an input_file part given by id or URL has no mime_type field (found "
                f"{part.mime_type!r})",
                path,
                "mime_types",
            )
        if part.url is not None:
            out["file_url"] = part.url
        if part.filename is not None:
            out["filename"] = part.filename
        return out


def _where(place: str) -> str:
    return "tool output" if place == "output" else f"{place} message"
