"""What only an assistant message carries: ``refusal``, ``audio`` and ``annotations``, both ways.

A refusal is a ``RefusalPart`` at the end of ``AIMessage.content``. The form the API returns
(``content: null`` and a ``refusal`` string) is the one written for a content of one plain
refusal part, except for an empty refusal: beside an empty ``refusal``, a null content would
leave a message with nothing in it, which the API refuses, so an empty refusal is written
with ``content: ""``. Every other spelling is named in the message namespace under
``refusal``:

=================  =======================================  =========================
``refusal``        source                                   typed content
=================  =======================================  =========================
(not set)          ``content: null, refusal: r`` (r != "")  ``[Refusal(r)]``
(not set)          ``content: "", refusal: ""``             ``[Refusal("")]``
``"null"``         ``content: null, refusal: ""``           ``[Refusal("")]``
``"absent"``       no ``content``, ``refusal: r``           ``[Refusal(r)]``
``"empty"``        ``content: "", refusal: r`` (r != "")    ``[Refusal(r)]``
``"after_text"``   ``content: t, refusal: r``               ``[Text(t), Refusal(r)]``
``"after_parts"``  ``content: [p...], refusal: r``          ``[p..., Refusal(r)]``
``"part"``         ``content: [{"type": "refusal", ...}]``  ``[Refusal(r)]``
=================  =======================================  =========================

(``Refusal``/``Text`` are ``RefusalPart``/``TextPart``.)

The model's reasoning, which Chat Completions-compatible APIs return beside the content (the
OpenAI API has none), is a ``ReasoningPart`` first in ``AIMessage.content``: the text of
``reasoning_content`` (DeepSeek, vLLM before 0.11, OpenRouter) or ``reasoning`` (vLLM since,
OpenRouter, Groq with ``reasoning_format="parsed"``). The part keeps in its namespace the key
it was read from (``from``), the other key when both held the same text (``also``: vLLM and
OpenRouter send both), and ``content: "string"`` when the rest of the content was a string
(``[]`` for ``""``, one text part otherwise), which goes back as that string. A value that is
not a string (``None``, OpenRouter's ``reasoning_details`` list) stays in ``fields``.

``audio`` is ``AIMessage.audio`` (keys other than ``id``/``transcript``/``data``/``expires_at``,
and null values, kept in the reference's ``metadata[<adapter>]["fields"]``). ``annotations``
of type ``url_citation`` are ``AIMessage.citations`` (the API gives all four keys; those an
annotation leaves out are listed under ``absent``, so that only such a citation is written
without them); any other annotation stays verbatim in the
message namespace's ``annotations`` layout, which is set only when the list is not what the
citations alone would write (``[]``, or other annotation types among them): one entry per
annotation, ``null`` for "the next citation" and the annotation itself otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracebridge._json import json_copy
from tracebridge.errors import short_repr
from tracebridge.messages import (
    AIMessage,
    AudioReference,
    Citation,
    Content,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
)

from ._parts import PartReader, PartWriter, described, is_plain
from ._write_keys import AUDIO_KEYS, CITATION_KEYS, refuse_unknown, refuse_untyped

__all__ = ["REASONING_KEYS", "ReplyReader", "ReplyWriter"]

REASONING_KEYS = ("reasoning_content", "reasoning")
"""The keys of an assistant message that hold the model's reasoning text."""

_CITATION_KEYS = (("url", str), ("title", str), ("start_index", int), ("end_index", int))
_CITATION_NAMES = frozenset(key for key, _ in _CITATION_KEYS)
_AUDIO_KEYS = ("transcript", "data", "expires_at")
"""The optional typed keys of an ``audio`` object (``id`` is required)."""


class ReplyReader(PartReader):
    """Reads the parts of an assistant message that no other role has."""

    whole_citations = False
    """``Dialect.whole_citations``: a citation read without some keys lists them."""

    def refusal(self, data: dict[str, Any], content: Content, namespace: dict[str, Any]) -> Content:
        """``content`` with the ``refusal`` key's text as a last ``RefusalPart``."""
        value = data.get("refusal")
        if value is None:  # a null refusal stays in ``fields`` as it was
            if self.lone_refusal(content):
                namespace["refusal"] = "part"
            return content
        if type(value) is not str:
            self.fail(
                "malformed_event",
                f"{self.root}.refusal",
                f"expected a string or null, got {described(value)}",
            )
        refused = RefusalPart(text=data.pop("refusal"))
        spelled = namespace.pop("content", None)  # "null" (the API's form) or "absent"
        if isinstance(content, list):
            namespace["refusal"] = "after_parts"
            return [*content, refused]
        if spelled == "absent":
            namespace["refusal"] = "absent"
        elif spelled is None:  # a string content
            if content:
                namespace["refusal"] = "after_text"
                return [TextPart(text=content), refused]
            if refused.text:  # "" beside an empty refusal is that refusal's own spelling
                namespace["refusal"] = "empty"
        elif not refused.text:  # null beside an empty refusal
            namespace["refusal"] = "null"
        return [refused]

    def reasoning(self, data: dict[str, Any], content: Content, keys: tuple[str, ...]) -> Content:
        """``content`` after the reasoning text of ``keys`` as a first ``ReasoningPart``."""
        found = [key for key in keys if type(data.get(key)) is str]
        if not found:
            return content
        marker: dict[str, Any] = {"from": found[0]}
        if len(found) > 1:
            order = list(data)
            first, second = sorted(found, key=order.index)
            if data[first] != data[second]:
                self.fail(
                    "conflicting_fields",
                    f"{self.root}.{second}",
                    f"the model's reasoning is given twice and the texts differ ({first} "
                    f"{short_repr(data[first])}, {second} {short_repr(data[second])}); "
                    "expected one text (vLLM and OpenRouter send the same under both keys)",
                )
            marker = {"from": first, "also": second}
            del data[second]
        text = data.pop(marker["from"])
        if isinstance(content, str):
            marker["content"] = "string"
            content = [TextPart(text=content)] if content else []
        return [ReasoningPart(text=text, metadata={self.source: marker}), *content]

    def lone_refusal(self, content: Content) -> bool:
        return isinstance(content, list) and len(content) == 1 and is_plain(
            content[0], RefusalPart, self.source
        )

    def audio(self, data: dict[str, Any]) -> AudioReference | None:
        if data.get("audio") is None:  # absent, or null (kept in ``fields``)
            return None
        path = f"{self.root}.audio"
        audio = self.mapping(data.pop("audio"), path, "'audio'")
        fields = {
            "id": self.string(audio, "id", path),
            "transcript": self.optional(audio, "transcript", str, path),
            "data": self.optional(audio, "data", str, path),
            "expires_at": self.optional(audio, "expires_at", int, path),
        }
        metadata = {self.source: {"fields": self.kept(audio, path)}} if audio else {}
        return AudioReference(**fields, metadata=metadata)

    def citations(self, data: dict[str, Any], namespace: dict[str, Any]) -> list[Citation]:
        listed = data.get("annotations")
        if listed is None:  # absent, or null (kept in ``fields``)
            return []
        path = f"{self.root}.annotations"
        if not isinstance(listed, list):
            self.fail("malformed_event", path, f"expected a list, got {described(listed)}")
        del data["annotations"]
        cited: list[Citation] = []
        layout: list[Any] = []
        for k, item in enumerate(listed):
            citation = self.citation(item, f"{path}[{k}]")
            if citation is None:
                layout.append(self.kept(item, f"{path}[{k}]"))
            else:
                cited.append(citation)
                layout.append(None)
        if not cited or len(cited) < len(layout):
            namespace["annotations"] = layout
        return cited

    def citation(self, item: Any, path: str) -> Citation | None:
        """The ``url_citation`` annotation as a Citation; None for another annotation type."""
        data = self.mapping(item, path, "an annotation")
        kind = data.get("type")
        if not isinstance(kind, str) or kind != "url_citation":
            return None  # (a value of another class is kept, or refused, verbatim)
        del data["type"]
        inner_path = f"{path}.url_citation"
        inner = self.mapping(data.pop("url_citation", None), inner_path, "'url_citation'")
        absent = [key for key, _ in _CITATION_KEYS if key not in inner]
        fields = {key: self.optional(inner, key, kind, inner_path) for key, kind in _CITATION_KEYS}
        namespace: dict[str, Any] = {}
        if absent and self.whole_citations:
            namespace["absent"] = absent
        if inner:
            namespace["inner"] = self.kept(inner, inner_path)
        if data:
            namespace["fields"] = self.kept(data, path)
        return Citation(**fields, metadata={self.source: namespace} if namespace else {})


class ReplyWriter(PartWriter):
    """Writes the parts of an assistant message that no other role has."""

    whole_citations = False
    """``Dialect.whole_citations``: a citation lacking a key is written only when read so."""

    def refusal(self, content: Content, namespace: dict[str, Any], out: dict[str, Any]) -> bool:
        """Write a trailing refusal as the ``refusal`` key when the message spelled it so (or
        it is the whole content); False leaves the content to be written as parts."""
        if not (isinstance(content, list) and content):
            return False
        *before, last = content
        if not is_plain(last, RefusalPart, self.source):
            return False
        assert isinstance(last, RefusalPart)
        form = namespace.get("refusal")
        if form == "after_parts":
            out["content"] = self.content(before, "assistant")
        elif before:
            if form != "after_text" or not self.plain_text(before):
                return False
            out["content"] = before[0].text  # type: ignore[union-attr]
        elif form is None:
            out["content"] = None if last.text else ""  # see the module docstring
        elif form == "empty" or form == "null":
            out["content"] = "" if form == "empty" else None
        elif form != "absent":
            return False
        out["refusal"] = last.text
        return True

    def plain_text(self, parts: list[Part]) -> bool:
        # An empty text would read back as the "empty" form, without the text part.
        return (
            len(parts) == 1
            and is_plain(parts[0], TextPart, self.source)
            and parts[0].text != ""  # type: ignore[union-attr]
        )

    def audio(self, audio: AudioReference, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": audio.id}
        for key in _AUDIO_KEYS:
            value = getattr(audio, key)
            if value is not None:
                out[key] = value
        namespace = self.namespace(audio.metadata)
        fields = namespace.get("fields", {})
        self.check_kept(fields, out, f"{path}.metadata.{self.source}.fields", _audio_key)
        if fields:
            out.update(json_copy(fields))  # the frozen reference's own values: copies
        if namespace and self.known_keys and not AUDIO_KEYS.issuperset(namespace):
            refuse_unknown(self, namespace, AUDIO_KEYS, "an audio reply",
                           f"{path}.metadata.{self.source}")
        return out

    def annotations(self, message: AIMessage, namespace: dict[str, Any]) -> list[Any] | None:
        """The ``annotations`` list, or None when the message has none to write."""
        written = [
            self.annotation(citation, f".citations[{k}]")
            for k, citation in enumerate(message.citations)
        ]
        layout = namespace.get("annotations")
        if not isinstance(layout, list):
            if self.known_keys and "annotations" in namespace:
                refuse_untyped(self, layout, "a list", "one entry per annotation",
                               f".metadata.{self.source}.annotations")
            return [a for a in written if a is not None] or None
        kept = [
            self.kept_annotation(entry, f".metadata.{self.source}.annotations[{n}]")
            for n, entry in enumerate(layout)
            if entry is not None
        ]
        if len(kept) + len(written) != len(layout):
            # The citations were edited: they come first, the other annotations after them.
            return [a for a in written if a is not None] + kept
        cited = iter(written)
        others = iter(kept)
        merged = [next(cited) if entry is None else next(others) for entry in layout]
        return [a for a in merged if a is not None]

    def kept_annotation(self, entry: Any, path: str) -> dict[str, Any]:
        """A layout entry that is not "the next citation": an annotation the reader keeps
        (an object of another type than ``url_citation``), as a copy. Anything else would be
        refused by the reader, or read back as a citation the message does not hold."""
        if not isinstance(entry, dict):
            self.refuse(
                f"the kept annotation {short_repr(entry)} is not an object: the reader "
                "refuses it",
                path,
            )
        if entry.get("type") == "url_citation":
            self.refuse(
                f"the kept annotation {short_repr(entry)} is a url_citation, which the reader "
                "reads as a citation the message does not hold (citations are "
                "AIMessage.citations)",
                path,
            )
        copied: dict[str, Any] = json_copy(entry)  # the frozen message's own value: a copy
        return copied

    def annotation(self, citation: Citation, path: str) -> dict[str, Any] | None:
        namespace = self.namespace(citation.metadata)
        missing = self.missing_fields(citation, namespace, path)
        if missing:
            self.lose(f"a url_citation annotation needs {', '.join(missing)}", path, "citations")
            return None
        if citation.cited_text is not None:
            self.lose(
                "a url_citation annotation has no place for the cited text "
                f"({citation.cited_text!r})",
                f"{path}.cited_text",
                "citations",
            )
        inner: dict[str, Any] = {
            key: getattr(citation, key)
            for key, _ in _CITATION_KEYS
            if getattr(citation, key) is not None
        }
        kept_inner = namespace.get("inner", {})
        where = f"{path}.metadata.{self.source}"
        self.check_kept(kept_inner, inner, f"{where}.inner", _citation_key)
        if kept_inner:
            inner.update(json_copy(kept_inner))  # the frozen citation's own values: copies
        fields = namespace.get("fields", {})
        if namespace and self.known_keys and not CITATION_KEYS.issuperset(namespace):
            refuse_unknown(self, namespace, CITATION_KEYS, "a citation", where)
        if not (inner or fields) and citation.cited_text is not None:
            return None  # the cited text was all it said, and the caller dropped it
        out: dict[str, Any] = {"type": "url_citation", "url_citation": inner}
        self.check_kept(fields, out, f"{where}.fields")
        if fields:
            out.update(json_copy(fields))
        return out

    def missing_fields(
        self, citation: Citation, namespace: dict[str, Any], path: str
    ) -> list[str]:
        """The keys of a ``url_citation`` (all four required by the API) the citation has no
        value for and was not read without from this format (absent, or null and kept in
        ``inner``). Writers of other formats built on this class (otel's flat messages, which
        take any annotation) require none."""
        if not self.whole_citations:
            return []
        absent = namespace.get("absent", [])
        if not isinstance(absent, list) or any(
            type(key) is not str or key not in _CITATION_NAMES for key in absent
        ):
            refuse_untyped(self, absent, "a list of url_citation keys",
                           "the keys the source's url_citation left out",
                           f"{path}.metadata.{self.source}.absent")
        inner = namespace.get("inner", {})
        if "absent" in namespace:
            self.check_absent(citation, absent, inner, f"{path}.metadata.{self.source}.absent")
        return [
            key
            for key, _ in _CITATION_KEYS
            if getattr(citation, key) is None
            and key not in absent
            and not (key in inner and inner[key] is None)
        ]

    def check_absent(
        self, citation: Citation, absent: list[str], inner: Mapping[str, Any], path: str
    ) -> None:
        """Refuse a kept ``absent`` list the reader would not have kept for this citation: it
        lists, once each and in the annotation's order, keys the citation has no value for
        and ``inner`` does not hold (a key given a value since, such as a title filled in, is
        stale: written whole, the citation would read back without the list)."""
        why = _absent_fault(citation, absent, inner)
        if why is not None:
            self.refuse(
                f"the kept list of keys the source's url_citation left out "
                f"({short_repr(absent)}) is not what this format's reader keeps for this "
                f"citation ({why}): written, it would read back otherwise",
                path,
            )


def _absent_fault(citation: Citation, absent: list[str], inner: Mapping[str, Any]) -> str | None:
    """Why a kept ``absent`` list is not the reader's for ``citation``, or None."""
    if not absent:
        return "the reader keeps no empty list"
    if absent != [key for key, _ in _CITATION_KEYS if key in absent]:
        return "the reader lists them once each, in the annotation's order"
    for key in absent:
        if getattr(citation, key) is not None:
            return f"{key} has a value now"
        if key in inner and inner[key] is None:  # (a value there is refused at it)
            return f"{key} is kept as null in inner too"
    return None


def _audio_key(key: str, value: Any) -> bool:
    """Whether the reader takes this kept key of an ``audio`` object into the reference: an
    optional typed key unless null (``id``, always written, is refused as written)."""
    return value is not None and key in _AUDIO_KEYS


def _citation_key(key: str, value: Any) -> bool:
    """Whether the reader takes this kept key of a ``url_citation`` object into the
    Citation: a typed key unless null (a null one is kept as it was)."""
    return value is not None and key in _CITATION_NAMES
