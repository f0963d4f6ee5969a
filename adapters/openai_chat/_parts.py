"""Content parts of OpenAI-style messages, both ways, for ``openai_chat`` and ``swarm``.

The API takes different part types in each role (``PART_TYPES``, from the SDK's ``*Param``
TypedDicts): user ``text``/``image_url``/``input_audio``/``file``, assistant ``text``/``refusal``,
system, developer and tool ``text`` only, and the legacy ``function`` role no parts at all
(``STRING_ROLES``: its content is a string or null). ``PartReader`` maps the part types a
role takes to typed parts (``image_url.detail`` to ``ImagePart.detail``,
``input_audio.format`` to ``AudioPart.mime_type`` through ``tracebridge.media``; a detail or
a format the API does not take is kept, and only a part that keeps it is written so, while a
kept one the part is not written with is refused where it is); any other
part is kept whole as an ``OpaquePart`` marked ``{"verbatim": true}`` in the adapter's
namespace, and only such a part is written back as it was. ``PartWriter`` writes what a
role takes and refuses the rest, naming the ``drop=`` option when leaving the part out is an
acceptable loss. Unknown keys of a part and of its inner object are kept under
``metadata[<adapter>]`` as ``fields``/``inner``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, NoReturn

from pydantic import BaseModel

from tracebridge._changed import FELL, refusal
from tracebridge._json import check_json, json_copy, json_path
from tracebridge._optional import module_of
from tracebridge._shape import unknown_kind
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.media import (
    audio_format,
    audio_mime_type,
    canonical_audio_mime_type,
    data_url,
    split_data_url,
)
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
    ToolCall,
)

from ._write_keys import PART_KEYS, PART_NAMES, refuse_unknown, refuse_untyped

__all__ = [
    "API_AUDIO_FORMATS",
    "API_IMAGE_DETAILS",
    "PART_TYPES",
    "STRING_ROLES",
    "PartReader",
    "PartWriter",
    "described",
    "is_plain",
    "joined_text",
]

PART_TYPES: Mapping[str, tuple[str, ...]] = {
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
    "system": ("text",),
    "developer": ("text",),
    "tool": ("text",),
    "function": ("text",),
}
"""The content part types the Chat Completions API takes in each role that takes parts
(``function``'s entry is for formats built on these classes whose function messages hold
parts: otel's flat messages; the API takes none there, see ``STRING_ROLES``)."""

STRING_ROLES = frozenset(("function",))
"""The roles whose content the Chat Completions API takes only as a string or null, never as
a list of parts: the legacy ``function`` message (``ChatCompletionFunctionMessageParam``,
``content: Optional[str]``). The openai_chat and swarm dialects refuse parts there both ways
(``Dialect.string_roles``)."""


API_AUDIO_FORMATS = ("wav", "mp3")
"""The ``input_audio.format`` names the Chat Completions API takes (the SDK's
``ChatCompletionContentPartInputAudioParam``). The openai_chat and swarm dialects keep any
other name a part is read in (``metadata.format``), and write another name only for a part
that keeps it (``Dialect.audio_formats``)."""


API_IMAGE_DETAILS = ("auto", "low", "high", "original")
"""The ``image_url.detail`` values the Chat Completions API takes (the SDK's
``ChatCompletionContentPartImageParam``; the Responses API's ``input_image.detail`` takes the
same). As with audio formats, a part read with another detail keeps it
(``metadata.detail``), and only a part that keeps it is written with it
(``Dialect.image_details``)."""


DROP_EFFECTS: Mapping[str, str] = {
    "custom_calls": "write it as a function call with args {'input': text}",
}
"""What a ``drop=`` option does, where it writes the loss another way than by leaving it out
(the words after "pass drop=[...] to" in a refusal)."""


def drop_effect(option: str) -> str:
    """What ``drop=[option]`` does, as a refusal's hint says it."""
    return DROP_EFFECTS.get(option, "leave it out")


class PartReader:
    """Reads parts of the message at one index of a trace."""

    audio_formats: tuple[str, ...] | None = None
    """The audio formats the API takes (``API_AUDIO_FORMATS``): a part read in another one
    keeps it (``metadata.format``), so that only it is written back so. None: only a name
    the table spells otherwise is kept (the formats of other writers built on this one)."""

    image_details: tuple[str, ...] | None = None
    """The image details the API takes (``API_IMAGE_DETAILS``): a part read with another one
    keeps it (``metadata.detail``), so that only it is written back so. None: any detail is
    written (the formats of other writers built on this one)."""

    def __init__(self, source: str, index: int) -> None:
        self.source = source
        self.index = index
        self.root = f"messages[{index}]"

    def fail(self, code: Any, path: str, detail: str) -> NoReturn:
        raise TraceError(code, detail, index=self.index, path=path, source=self.source)

    def kept(self, value: Any, path: str) -> Any:
        """``value``, checked to be JSON, to be kept verbatim in metadata: a copy, so the
        message does not change when the source does (a part's metadata is set by
        ``model_copy``, which takes what it is given as it is)."""
        try:
            check_json(value, path)
        except TraceError as error:
            raise error.relocated(index=self.index, source=self.source) from None
        return json_copy(value)

    def mapping(self, value: Any, path: str, what: str) -> dict[str, Any]:
        """``value`` as a dict: a mapping as it is, an OpenAI SDK object (a reply's tool
        call, its ``Function``, an ``Annotation``, a ``ChatCompletionAudio``, put in a dict
        message as the application got it) as the SDK sends it, with only the keys it
        really has; anything else is malformed."""
        if isinstance(value, BaseModel) and module_of(type(value)).startswith("openai."):
            return self.sdk_dump(value, path)
        if not isinstance(value, Mapping):
            self.fail(
                "malformed_event", path, f"expected {what} (an object), got {described(value)}"
            )
        return dict(value)

    def sdk_dump(self, value: BaseModel, path: str) -> dict[str, Any]:
        """An SDK object's JSON form, as the SDK serialises it in a request."""
        try:
            dumped: dict[str, Any] = value.model_dump(mode="json", exclude_unset=True)
        except FELL:
            refused = refusal(value, path, "the OpenAI SDK", index=self.index, source=self.source)
            if refused is not None:
                raise refused from None
            raise  # the SDK accepts the object: the fault is ours, shown as it is
        return dumped

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

    def optional(self, data: dict[str, Any], key: str, kind: type, path: str) -> Any:
        """The value of an optional typed key; absent or null gives None (a null stays in
        ``data``, to be kept verbatim), another type is malformed."""
        value = data.get(key)
        if value is None:
            return None
        if type(value) is not kind:
            self.fail(
                "malformed_event",
                f"{path}.{key}",
                f"expected {'an integer' if kind is int else 'a string'}, got {described(value)}",
            )
        return data.pop(key)

    def part(self, item: Any, path: str, role: str) -> Part:
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
        if kind not in PART_TYPES[role]:
            # Not a part the API takes here (a vendor extension, or a type out of its role):
            # kept whole, and marked so that only this adapter writes it back.
            return OpaquePart(
                kind=kind, value=self.kept(data, path), metadata={self.source: {"verbatim": True}}
            )
        del data["type"]
        namespace: dict[str, Any] = {}
        kind_of: type[TextPart | RefusalPart | ImagePart | AudioPart | FilePart]
        fields: dict[str, Any]
        if kind == "text":
            kind_of, fields = TextPart, {"text": self.string(data, "text", path)}
        elif kind == "refusal":
            kind_of, fields = RefusalPart, {"text": self.string(data, "refusal", path)}
        elif kind == "image_url":
            kind_of, fields = ImagePart, self.image_fields(data, path, namespace)
        elif kind == "input_audio":
            kind_of, fields = AudioPart, self.audio_fields(data, path, namespace)
        else:
            kind_of, fields = FilePart, self.file_fields(data, path, namespace)
        if namespace.get("inner"):
            self.kept(namespace["inner"], f"{path}.{kind}")
        else:
            namespace.pop("inner", None)
        if data:
            namespace["fields"] = self.kept(data, path)
        metadata = {self.source: namespace} if namespace else {}
        return kind_of(**fields, metadata=metadata)

    def inner(
        self, data: dict[str, Any], key: str, path: str, namespace: dict[str, Any]
    ) -> dict[str, Any]:
        """The part's inner object (``image_url``, ``file``...); what is left of it is kept."""
        if key not in data:
            self.fail("malformed_event", f"{path}.{key}", f"{with_article(key)} part needs {key!r}")
        inner = self.mapping(data.pop(key), f"{path}.{key}", repr(key))
        # The caller pops what it maps; the dict object left behind is what gets kept.
        namespace["inner"] = inner
        return inner

    def image_fields(
        self, data: dict[str, Any], path: str, namespace: dict[str, Any]
    ) -> dict[str, Any]:
        inner = self.inner(data, "image_url", path, namespace)
        url = self.string(inner, "url", f"{path}.image_url")
        # A detail that is not a string (null, say) is not a resolution: it stays in ``inner``.
        detail = inner.pop("detail") if type(inner.get("detail")) is str else None
        self.keep_odd_detail(detail, namespace)
        found = split_data_url(url)
        fields = {"data": found[1], "mime_type": found[0]} if found else {"url": url}
        return {**fields, "detail": detail}

    def keep_odd_detail(self, detail: str | None, namespace: dict[str, Any]) -> None:
        """Keep a detail the API does not take (``"ultra"``, ``""``) in ``namespace``: only
        a part read with it is written with it."""
        if detail is not None and _keeps_detail(detail, self.image_details):
            namespace["detail"] = detail

    def audio_fields(
        self, data: dict[str, Any], path: str, namespace: dict[str, Any]
    ) -> dict[str, Any]:
        inner = self.inner(data, "input_audio", path, namespace)
        audio = self.string(inner, "data", f"{path}.input_audio")
        spelled = self.string(inner, "format", f"{path}.input_audio")
        mime_type = audio_mime_type(spelled)
        if _keeps_format(spelled, self.audio_formats):
            # "mpeg", "pcm": the table spells them otherwise; "ogg", "flac": the API takes
            # neither, and only a part read so is written so
            namespace["format"] = spelled
        return {"data": audio, "mime_type": mime_type}

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
        found = split_data_url(file_data) if file_data is not None else None
        if found:
            return {
                "data": found[1],
                "mime_type": found[0],
                "file_id": file_id,
                "filename": filename,
            }
        return {"data": file_data, "file_id": file_id, "filename": filename}


def _read_as_detail(key: str, value: Any) -> bool:
    """Whether the reader takes this key of an ``image_url`` object as the image's detail."""
    return key == "detail" and type(value) is str


def _read_as_file(key: str, value: Any) -> bool:
    """Whether the reader takes this key of a ``file`` object as the file's source or name."""
    return key in ("file_data", "file_id", "filename")


# The typed part classes and the API part type each one is written as.
_API_TYPES: Mapping[type, str] = {
    TextPart: "text",
    RefusalPart: "refusal",
    ImagePart: "image_url",
    AudioPart: "input_audio",
    FilePart: "file",
}


class PartWriter:
    """Writes parts of the typed message at one index."""

    FORMAT = "Chat Completions"
    """The format's name, as errors say it."""

    known_keys = False
    """Whether a namespace key the Chat Completions reader does not keep there is refused
    (``_write_keys``): set by the openai_chat and swarm writer; writers of other formats
    built on this class keep other keys, and check them themselves."""

    reasoning_keys: tuple[str, ...] = ()
    """The assistant keys a reasoning part marked in this namespace goes back to (``from``):
    the openai_chat and swarm writer's; none for writers of other formats."""

    string_roles: frozenset[str] = frozenset()
    """The roles whose content is written only as a string (``STRING_ROLES``): the openai_chat
    and swarm writer's; none for writers of other formats."""

    audio_formats: tuple[str, ...] | None = None
    """The audio formats written for a part that keeps no other one (``API_AUDIO_FORMATS``):
    the openai_chat and swarm writer's; None (any name) for writers of other formats."""

    image_details: tuple[str, ...] | None = None
    """The image details written for a part that keeps no other one (``API_IMAGE_DETAILS``):
    the openai_chat and swarm writer's; None (any detail) for writers of other formats."""

    origins: Mapping[str, str] = {}
    """Per adapter that writes with this class, what its reader reads, as a refusal names it
    (``"a Swarm history"``); another adapter's is "a <FORMAT> trace"."""

    def __init__(self, source: str, index: int, drop: Collection[str]) -> None:
        self.source = source
        self.index = index
        self.drop = drop
        self.first = 0
        """The typed position of the first part ``content`` writes (1 after a reasoning part
        written as its own key)."""

    def lose(self, what: str, path: str, option: str | None) -> None:
        """Raise ``not_representable`` unless the caller accepted this loss by name; the
        error names the option and what it does (``DROP_EFFECTS``)."""
        if option is not None and option in self.drop:
            return
        hint = f"; pass drop=[{option!r}] to {drop_effect(option)}" if option else ""
        raise TraceError(
            "not_representable",
            f"{what}{hint}",
            index=self.index,
            path=f"messages[{self.index}]{path}",
            source=self.source,
        )

    def refuse(self, what: str, path: str) -> NoReturn:
        """Raise ``not_representable``: no option accepts this loss."""
        self.lose(what, path, None)
        raise AssertionError  # lose() without an option always raises

    def check_kept(
        self,
        kept: Mapping[str, Any],
        written: Mapping[str, Any],
        path: str,
        mapped: Callable[[str, Any], bool] = lambda key, value: False,
    ) -> None:
        """Refuse a kept key (of ``fields`` or ``inner``, at ``path``) that ``written``, made
        from the typed message, has too, or that the reader would take into the typed
        message (``mapped``): the reader never keeps such a key, so either the typed value
        or the kept one would be lost, or typed data invented."""
        for key, value in kept.items():
            if key in written or mapped(key, value):
                self.refuse(
                    f"the kept key {key!r} ({short_repr(value)}) is one this format's reader "
                    "maps to the typed message: written, it would "
                    + ("replace what the typed message says" if key in written
                       else "read back as typed data the message does not hold"),
                    json_path(path, key),
                )

    def refuse_read_back(self, call: ToolCall, read_back: Any, path: str) -> NoReturn:
        """Refuse a call whose unparsed argument text (``invalid_args``) the reader takes as
        the arguments ``read_back``: written, it would come back as another call. No option
        fits: leaving the call out orphans its result, and writing it "fixes" it."""
        self.refuse(
            f"tool call {call.name!r} has arguments that did not parse "
            f"(invalid_args={call.invalid_args!r}), but this format reads that text as the "
            f"arguments {short_repr(read_back)}: it has no spelling that reads back unparsed",
            path,
        )

    def namespace(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """This adapter's kept source fields (``{}`` when there are none)."""
        kept = metadata.get(self.source, {})
        if (
            isinstance(kept, dict)
            and isinstance(kept.get("fields", kept), dict)  # (absent: kept itself)
            and isinstance(kept.get("inner", kept), dict)
        ):
            return kept  # the usual case, without spelling the paths below
        shapes = [(kept, f"metadata.{self.source}")]
        if isinstance(kept, dict):
            shapes += [
                (kept[key], f"metadata.{self.source}.{key}")
                for key in ("fields", "inner")
                if key in kept
            ]
        for value, where in shapes:
            if not isinstance(value, dict):
                self.malformed(
                    f"{where} must be an object, as to_messages writes it; got {described(value)}"
                )
        return kept  # type: ignore[no-any-return]

    def malformed(self, what: str, path: str = "") -> NoReturn:
        """Raise ``malformed_event`` at this message (``path`` below it, as ``.metadata.x``)."""
        raise TraceError(
            "malformed_event",
            what,
            index=self.index,
            path=f"messages[{self.index}]{path}",
            source=self.source,
        )

    def content(self, content: Content, role: str) -> str | list[dict[str, Any]]:
        if isinstance(content, str):
            return content
        if role in self.string_roles:
            # Not even one text part as its string: it would read back as another content
            # (a string, not a list of parts).
            self.refuse(
                f"{self.FORMAT} takes {with_article(role)} message's content only as a string "
                f"(or null), not as a list of parts (found {len(content)} part(s)); a result "
                "with a tool_call_id (answering a call with an id) is a tool message, which "
                "takes text parts",
                ".content",
            )
        parts = []
        for j, part in enumerate(content, self.first):
            written = self.part(part, f".content[{j}]", role)
            if written is not None:
                parts.append(written)
        if content and not parts:
            return ""  # every part was dropped: an empty list of parts is no content
        return parts

    def part(self, part: Part, path: str, role: str) -> dict[str, Any] | None:
        """The part as the API spells it, or None when the caller dropped it."""
        if isinstance(part, ReasoningPart):
            if self.reasoning_keys and part.metadata.get(self.source):
                self.refuse(
                    f"this reasoning part is marked as read from an assistant message's "
                    f"reasoning key (metadata.{self.source}), which it goes back to only as "
                    "the first part of an assistant message (the reader puts it first); take "
                    "the marker out of its metadata to write it as other reasoning",
                    f"{path}.metadata.{self.source}",
                )
            self.lose("Chat Completions content has no reasoning part", path, "reasoning")
            return None
        if isinstance(part, OpaquePart):
            if part.kind in PART_TYPES[role] and self.namespace(part.metadata).get("verbatim"):
                # the reader keeps only types it does not map: this one would read back typed
                self.refuse(f"an opaque {part.kind!r} part kept verbatim: {self.FORMAT} "
                            f"reads {with_article(part.kind)} part in {role} content as a typed "
                            "part", path)
            return self.opaque(part, path)
        api_type = _API_TYPES[type(part)]
        if api_type not in PART_TYPES[role]:
            taken = ", ".join(PART_TYPES[role])
            what = f"Chat Completions takes only {taken} parts in {role} content, not {api_type}"
            self.lose(what, path, "refusals" if api_type == "refusal" else None)
            return None
        namespace = self.namespace(part.metadata)
        inner: dict[str, Any] = json_copy(namespace.get("inner", {}))
        kept = f"{path}.metadata.{self.source}"
        out: dict[str, Any]
        if isinstance(part, TextPart):
            out = {"type": "text", "text": part.text}
        elif isinstance(part, RefusalPart):
            out = {"type": "refusal", "refusal": part.text}
        elif isinstance(part, ImagePart):
            image = {"url": self.source_url(part, path)}
            detail = self.image_detail(part, path)
            if detail is not None:
                image["detail"] = detail
            self.check_kept(inner, image, f"{kept}.inner", _read_as_detail)
            out = {"type": "image_url", "image_url": {**inner, **image}}
        elif isinstance(part, AudioPart):
            data = self.audio_data(part, path)
            spelled = self.audio_format(part, path)
            if spelled is None:
                return None  # (drop=["audio_parts"])
            audio = {"data": data, "format": spelled}
            self.check_kept(inner, audio, f"{kept}.inner")
            out = {"type": "input_audio", "input_audio": {**inner, **audio}}
        elif isinstance(part, FilePart):
            file = self.file(part, path)
            self.check_kept(inner, file, f"{kept}.inner", _read_as_file)
            out = {"type": "file", "file": {**inner, **file}}
        else:
            unknown_kind(part)
        fields = namespace.get("fields", {})
        self.check_kept(fields, out, f"{kept}.fields")
        if fields:
            out.update(json_copy(fields))
        if namespace and self.known_keys and not PART_KEYS[part.type].issuperset(namespace):
            refuse_unknown(self, namespace, PART_KEYS[part.type], PART_NAMES[part.type], kept)
        return out

    def opaque(self, part: OpaquePart, path: str) -> dict[str, Any] | None:
        namespace = self.namespace(part.metadata)
        if namespace.get("verbatim") is not True:
            self.lose(
                f"an opaque {part.kind!r} block from another format is not "
                f"{with_article(self.FORMAT)} part (only parts read from "
                f"{self.origin()} are written back verbatim)",
                path,
                "opaque_parts",
            )
            return None
        written = self.whole(part, path)
        if self.known_keys and not PART_KEYS["opaque"].issuperset(namespace):
            refuse_unknown(self, namespace, PART_KEYS["opaque"], PART_NAMES["opaque"],
                           f"{path}.metadata.{self.source}")
        return written

    def whole(self, part: OpaquePart, path: str, what: str = "part") -> dict[str, Any]:
        """The value of an opaque block written back whole: an object of the block's type."""
        value = part.value
        if not (isinstance(value, dict) and value.get("type") == part.kind):
            self.refuse(
                f"an opaque {part.kind!r} {what} is written back verbatim, so its value "
                f"must be {with_article(what)} object with type {part.kind!r}",
                path,
            )
        return json_copy(value)  # type: ignore[no-any-return]

    def source_url(self, part: ImagePart, path: str) -> str:
        if part.url is not None and part.data is None:
            self.not_a_data_url(part.url, "url", path)
            if part.mime_type is not None:
                self.lose(
                    f"an image_url part given by URL has no mime_type field (found "
                    f"{part.mime_type!r})",
                    path,
                    "mime_types",
                )
            return part.url
        if part.data is not None and part.url is None and part.mime_type is not None:
            return self.inline_data_url(part, part.mime_type, part.data, path)
        self.refuse(
            "an image_url part needs a URL, or base64 data with a mime_type (found "
            f"url={part.url!r}, data set: {part.data is not None}, "
            f"mime_type={part.mime_type!r})",
            path,
        )

    def inline_data_url(self, part: Part, mime_type: str, data: str, path: str) -> str:
        """The base64 ``data:`` URL of inline data; refused for a mime type it cannot spell
        (a comma ends a data: URL's header: the type would read back cut there)."""
        if "," in mime_type:
            self.refuse(
                f"{with_article(part.type)} part's mime type {mime_type!r} has a comma, which a "
                "data: URL cannot hold",
                f"{path}.mime_type",
            )
        return data_url(mime_type, data)

    def not_a_data_url(self, text: str, field: str, path: str) -> None:
        """Refuse ``text`` where a base64 ``data:`` URL would read back as inline data and
        its mime type rather than as the ``field`` it is."""
        if split_data_url(text) is not None:
            self.refuse(
                f"the part's {field} is a base64 data: URL ({short_repr(text)}), which this "
                f"format reads back as inline data with its mime type",
                f"{path}.{field}",
            )

    def origin(self) -> str:
        """What this adapter's reader reads (``origins``), as a refusal names it."""
        return self.origins.get(self.source, f"{with_article(self.FORMAT)} trace")

    def kept_text(self, part: Part, key: str, what: str, path: str) -> str | None:
        """The string the part keeps under ``key`` in this namespace (``what`` it is), None
        when it keeps none; a value that is no string is ``malformed_event`` at the key."""
        namespace = self.namespace(part.metadata)
        if key not in namespace:
            return None
        kept = namespace[key]
        if type(kept) is not str:
            refuse_untyped(self, kept, "a string", what, f"{path}.metadata.{self.source}.{key}")
        return kept  # type: ignore[no-any-return]

    def image_detail(self, part: ImagePart, path: str) -> str | None:
        """The part's detail: one the API takes, or the one a part read with it keeps
        (``metadata.detail``); any other is refused, as the API would refuse it, and so is
        a kept detail the reader would not keep beside the part's (it would be lost)."""
        detail = part.detail
        if self.image_details is None:
            return detail  # (a format that takes any detail: its reader keeps none)
        kept = self.kept_text(part, "detail", "the source's image detail", path)
        if detail is not None and detail not in self.image_details and kept != detail:
            self.refuse(
                f"{self.FORMAT} takes an image's detail only as one of "
                f"{', '.join(self.image_details)}, not {detail!r} (only a part read from "
                f"{self.origin()} with another detail, kept in metadata.{self.source}.detail, "
                "is written back with it)",
                f"{path}.detail",
            )
        if kept is not None and (kept != detail or kept in self.image_details):
            self.refuse_kept_detail(kept, detail, path)
        return detail

    def refuse_kept_detail(self, kept: str, detail: str | None, path: str) -> NoReturn:
        """Refuse a kept detail that is not the part's, or that the API takes: the reader
        keeps only the detail it reads, and only one the API does not take."""
        why = (
            f"is not the part's detail ({detail!r}): the part is written with its own"
            if kept != detail
            else f"is one {self.FORMAT} takes: the reader keeps a detail only when the API "
            "does not take it"
        )
        self.refuse(
            f"the kept detail {kept!r} {why}, so the kept one would be lost",
            f"{path}.metadata.{self.source}.detail",
        )

    def audio_data(self, part: AudioPart, path: str) -> str:
        if part.data is None or part.url is not None:
            self.refuse(
                f"an input_audio part holds base64 data, not a URL (found url={part.url!r})", path
            )
        return part.data

    def audio_format(self, part: AudioPart, path: str) -> str | None:
        """The format name: the source's own spelling while it still names the mime type
        and the reader would keep it; None when the caller left out a part in a format the
        API does not take. A kept spelling the part is not written in is refused (it would
        be lost)."""
        mime = part.mime_type
        spelled = self.kept_text(part, "format", "the source's audio format", path)
        if (
            spelled is not None
            and mime is not None
            and _same_audio(spelled, mime)
            and _keeps_format(spelled, self.audio_formats)
        ):
            return spelled
        name = audio_format(mime) if mime is not None else None
        if name is None:
            self.refuse(
                f"an input_audio part needs an audio mime type to name its format (found "
                f"mime_type={mime!r})",
                path,
            )
        if self.audio_formats is not None and name not in self.audio_formats:
            self.lose(
                f"{self.FORMAT} takes input_audio only in the formats "
                f"{' and '.join(self.audio_formats)}, not {name!r} (mime_type {mime!r}; "
                f"only a part read from {self.origin()} in another format, kept in "
                f"metadata.{self.source}.format, is written back in it)",
                path,
                "audio_parts",
            )
            return None
        if spelled is not None:
            self.refuse_kept_format(spelled, mime, name, path)
        return name

    def refuse_kept_format(self, spelled: str, mime: str | None, name: str, path: str) -> NoReturn:
        """Refuse a kept format the part is not written in (``name`` instead): one that no
        longer names its mime type, or one the reader does not keep."""
        also = "" if self.audio_formats is None else f" or {self.FORMAT} does not take it"
        why = (
            f"is the one the part's mime type is written in: the reader keeps a format only "
            f"when the table spells it otherwise{also}"
            if mime is not None and _same_audio(spelled, mime)
            else f"does not name the part's mime type ({mime!r}): the part is written in "
            f"{name!r}"
        )
        self.refuse(
            f"the kept format {spelled!r} {why}, so the kept one would be lost",
            f"{path}.metadata.{self.source}.format",
        )

    def file(self, part: FilePart, path: str) -> dict[str, Any]:
        if part.url is not None:
            self.refuse(f"a file part holds data or a file_id, not a URL ({part.url!r})", path)
        out: dict[str, Any] = {}
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
                f"a file part given by file_id has no mime_type field (found {part.mime_type!r})",
                path,
                "mime_types",
            )
        if part.file_id is not None:
            out["file_id"] = part.file_id
        if part.filename is not None:
            out["filename"] = part.filename
        return out


def _same_audio(spelled: str, mime_type: str) -> bool:
    return canonical_audio_mime_type(audio_mime_type(spelled)) == canonical_audio_mime_type(
        mime_type
    )


def _keeps_detail(detail: str, details: tuple[str, ...] | None) -> bool:
    """Whether the reader keeps an image read with ``detail`` (``metadata.detail``): one the
    API does not take (``details``; None: the reader keeps none)."""
    return details is not None and detail not in details


def _keeps_format(spelled: str, formats: tuple[str, ...] | None) -> bool:
    """Whether the reader keeps audio read in the format ``spelled`` (``metadata.format``):
    one the table spells otherwise (``"mpeg"``), or one the API does not take (``formats``;
    None: any)."""
    written = audio_format(audio_mime_type(spelled))
    return written != spelled or (formats is not None and spelled not in formats)


def joined_text(parts: list[Any]) -> str:
    """The text of a stored message's ``content_parts`` joined, as its ``content`` gives it
    (``"text"`` parts, typed or written, joined by newlines, as ``Message.text`` joins)."""
    return "\n".join(
        part.text if isinstance(part, TextPart) else part["text"]
        for part in parts
        if isinstance(part, TextPart) or (isinstance(part, dict) and part.get("type") == "text")
    )


def is_plain(part: Part, kind: type, source: str) -> bool:
    """Whether ``part`` is a ``kind`` part that keeps nothing of its own under ``source``."""
    return type(part) is kind and not part.metadata.get(source)


def described(value: Any) -> str:
    return f"{type(value).__name__} {short_repr(value)}"
