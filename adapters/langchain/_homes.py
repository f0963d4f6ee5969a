"""What LangChain keeps in ``additional_kwargs`` (and text-block annotations) that has a typed
home: the developer role, the model's reasoning, a refusal, the assistant's audio reply and
citations.

* a system message's ``additional_kwargs["__openai_role__"] == "developer"``:
  ``SystemMessage.role = "developer"``;
* an AI message's ``additional_kwargs["reasoning_content"]`` (text: where the DeepSeek,
  Ollama, xAI and Groq integrations keep the model's reasoning, which langchain-core's
  ``content_blocks`` reads as a ``reasoning`` block before the others): a ``ReasoningPart``
  before the other parts;
* an AI message's ``additional_kwargs["reasoning"]`` (an OpenAI Responses reasoning item
  with its ``summary``: where ChatOpenAI on the Responses API keeps it with
  ``output_version="v0"``, which ``content_blocks`` reads as reasoning first too): a
  ``ReasoningPart`` after that one (if any) and before the other parts;
* an AI message's ``additional_kwargs["refusal"]`` (text): a ``RefusalPart`` after the other
  parts;
* an AI message's ``additional_kwargs["tool_outputs"]`` (the hosted-tool items of the
  Responses API, ``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
  ``mcp_call``, ``image_generation_call``, ...: where ChatOpenAI keeps them with
  ``output_version="v0"``, which ``content_blocks`` reads as ``server_tool_call`` and
  ``server_tool_result`` blocks): an ``OpaquePart`` of each item where langchain-core
  places it, a ``code_interpreter_call``, ``mcp_call`` or ``image_generation_call`` after
  the reasoning and before the other parts, any other after them all (``_tool_outputs``);
* ``additional_kwargs["audio"]`` (``id``, ``data``, ``expires_at``, ``transcript``):
  ``AIMessage.audio``;
* ``additional_kwargs["annotations"]`` (``citation`` / ``url_citation`` entries) and the
  citation annotations of an AI text block: ``AIMessage.citations`` (text blocks' first).
  A text block's annotation counts characters of its own block, a citation those of the
  reply's text (``AIMessage.text``): ``in_reply_text`` and ``in_block_text`` turn one into
  the other.
* the citations of an AI text block's own ``citations`` list (ChatAnthropic's
  ``web_search_result_location``, ``char_location``, ``page_location``,
  ``content_block_location`` and ``search_result_location`` entries, which langchain-core's
  ``content_blocks`` reads as ``citation`` annotations): ``AIMessage.citations`` too, read as
  langchain-core reads them (``source_citation_of``), after the block's annotations.

Anything else in ``additional_kwargs`` stays there, verbatim, with the message's metadata.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeGuard

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AudioReference, Citation, TextPart

from ._classes import NAME
from ._shapes import RAW_REASONING_ITEM, REASONING_ITEM, BlockShape
from ._tool_outputs import OUTPUTS_KEY, is_tool_outputs

__all__ = [
    "CITATIONS_KEY",
    "CITATION_TYPES",
    "CITING_LISTS",
    "SOURCE_CITATION_TYPES",
    "annotation_of",
    "audio_of",
    "audio_reply",
    "check_no_kept_citation",
    "citation_of",
    "citations_of",
    "in_block_text",
    "in_reply_text",
    "ITEM_KEY",
    "REASONING_KEY",
    "is_developer",
    "item_reading",
    "reasoning_item_of",
    "reasoning_of",
    "refusal_of",
    "source_citation_back",
    "source_citation_of",
    "typed_home_in",
]

DEVELOPER_KEY = "__openai_role__"

REASONING_KEY = "reasoning_content"
"""Where chat models of OpenAI-compatible APIs keep the model's reasoning text; the reasoning
part read from there keeps ``metadata.langchain.from`` = this key."""

ITEM_KEY = "reasoning"
"""Where ChatOpenAI (Responses API, ``output_version="v0"``) keeps the reasoning item; the
reasoning part read from there keeps ``metadata.langchain.from`` = this key and ``block`` =
the item without what the part gives back (``REASONING_ITEM``'s template; for an item of raw
reasoning text and an empty summary, ``RAW_REASONING_ITEM``'s, and ``shape`` = its name)."""

CITATION_TYPES = ("citation", "url_citation")
"""Annotation types read as citations: LangChain's standard ``citation`` and OpenAI's
``url_citation`` (nested under ``url_citation`` in Chat Completions, flat in Responses)."""

SOURCE_CITATION_TYPES = (
    "web_search_result_location",
    "char_location",
    "page_location",
    "content_block_location",
    "search_result_location",
)
"""The types of the entries of an Anthropic text block's ``citations`` that langchain-core
reads as citations (``content_blocks``): a web search result's, and a document's (whose
character, page and block indexes count the cited document, not the reply)."""

CITATIONS_KEY = "citations"
"""Where an Anthropic text block keeps its citations; a citation read from there keeps
``metadata.langchain.in_list`` = this key (one read from the block's ``annotations`` none)."""

_WEB_RESULT = "web_search_result_location"

_TITLE_KEYS = {_WEB_RESULT: "title", "search_result_location": "title"}
"""Where a source citation of each type keeps its title; the others keep it in
``document_title``. One read from the other key keeps it as ``metadata.langchain.title_key``."""

_CITED: dict[str, type] = {
    "url": str,
    "title": str,
    "start_index": int,
    "end_index": int,
    "cited_text": str,
}
_AUDIO: dict[str, type] = {"data": str, "expires_at": int, "transcript": str}


def _is_developer_marker(value: Any) -> bool:
    return bool(value == "developer")


def _is_refusal(value: Any) -> TypeGuard[str]:
    return type(value) is str


def _is_reasoning(value: Any) -> TypeGuard[str]:
    # as langchain-core's content_blocks takes it: any string, "" too (None is no reasoning)
    return type(value) is str


def _is_reasoning_item(value: Any) -> TypeGuard[dict[str, Any]]:
    return type(value) is dict and item_reading(value) is not None


def _is_audio_reply(audio: Any) -> TypeGuard[dict[str, Any]]:
    """A dict with a string ``id`` and the other known keys of their types or ``None``."""
    return (
        type(audio) is dict
        and type(audio.get("id")) is str
        and all(
            audio.get(key) is None or type(audio[key]) is kind for key, kind in _AUDIO.items()
        )
    )


def _is_citation_list(annotations: Any) -> TypeGuard[list[Any]]:
    """A non-empty list whose every entry is a citation (``citation_of`` reads each)."""
    return (
        type(annotations) is list
        and bool(annotations)
        and all(
            type(item) is dict and item.get("type") in CITATION_TYPES for item in annotations
        )
    )


_HOMES: dict[str, tuple[tuple[str, Callable[[Any], bool]], ...]] = {
    "system": ((DEVELOPER_KEY, _is_developer_marker),),
    "ai": (
        (REASONING_KEY, _is_reasoning),
        (ITEM_KEY, _is_reasoning_item),
        ("refusal", _is_refusal),
        (OUTPUTS_KEY, is_tool_outputs),
        ("audio", _is_audio_reply),
        ("annotations", _is_citation_list),
    ),
}
"""By message kind, the ``additional_kwargs`` keys the reader takes into a typed home, and
the test of a value it takes (any other value stays in ``additional_kwargs``)."""


def typed_home_in(kwargs: dict[str, Any], kind: str) -> str | None:
    """The first key of ``kwargs`` whose value the reader would take into a typed home of a
    message of ``kind`` (the way back must not write a kept value there: it would read back
    as typed data the message does not have)."""
    for key, reads in _HOMES.get(kind, ()):
        if key in kwargs and reads(kwargs[key]):
            return key
    return None


def is_developer(kwargs: dict[str, Any]) -> bool:
    """Whether ChatOpenAI's marker says this system message is a developer message; the
    marker leaves ``kwargs`` (the typed role holds it)."""
    if _is_developer_marker(kwargs.get(DEVELOPER_KEY)):
        del kwargs[DEVELOPER_KEY]
        return True
    return False


def reasoning_of(kwargs: dict[str, Any]) -> str | None:
    """``additional_kwargs["reasoning_content"]`` when it is text; any other value (``None``,
    which langchain-deepseek writes when the model gave no reasoning, a dict, a list) is no
    reasoning langchain-core reads, and stays where it is."""
    reasoning = kwargs.get(REASONING_KEY)
    if _is_reasoning(reasoning):
        del kwargs[REASONING_KEY]
        return reasoning
    return None


def reasoning_item_of(
    kwargs: dict[str, Any],
) -> tuple[dict[str, str], dict[str, Any], str] | None:
    """The typed values (``text``, and ``id`` unless the item holds what its part would not
    give back to a Responses reasoning item, such as ``encrypted_content``: then the id stays
    in the item) of ``additional_kwargs["reasoning"]`` when it is a Responses reasoning item
    (``item_reading``), the item without what they give back, and the name of the layout
    read; any other value stays where it is."""
    item = kwargs.get(ITEM_KEY)
    if type(item) is not dict:
        return None
    found = item_reading(item)
    if found is None:
        return None
    del kwargs[ITEM_KEY]
    shape, values = found
    return values, shape.template(item, values), shape.name


def item_reading(item: dict[str, Any]) -> tuple[BlockShape, dict[str, str]] | None:
    """How the reader reads a Responses reasoning item in ``additional_kwargs["reasoning"]``
    (``type`` ``"reasoning"``, a ``summary`` of ``summary_text`` entries): the layout and its
    text, the raw reasoning text (``RAW_REASONING_ITEM``) for an item of such text and an
    empty summary, else the summary's (``REASONING_ITEM``); None for no such item."""
    for shape in (RAW_REASONING_ITEM, REASONING_ITEM):
        values = shape.read(item)
        if values is not None:
            return shape, values
    return None


def refusal_of(kwargs: dict[str, Any]) -> str | None:
    """ChatOpenAI's ``additional_kwargs["refusal"]`` when it is text (it is often ``None``,
    which stays where it is)."""
    refusal = kwargs.get("refusal")
    if _is_refusal(refusal):
        del kwargs["refusal"]
        return refusal
    return None


def audio_of(kwargs: dict[str, Any], at: str) -> AudioReference | None:
    """``additional_kwargs["audio"]`` as an audio reference, when it is one (a dict with a
    string ``id`` and the other known keys of their types or ``None``)."""
    audio = kwargs.get("audio")
    if not _is_audio_reply(audio):
        return None
    del kwargs["audio"]
    typed = {key: audio[key] for key in ("id", *_AUDIO) if audio.get(key) is not None}
    rest = {key: value for key, value in audio.items() if key not in typed}
    check_json(rest, f"{at}.additional_kwargs.audio")
    return AudioReference(**typed, metadata={NAME: rest} if rest else {})


def audio_reply(audio: AudioReference, at: str) -> dict[str, Any]:
    """``additional_kwargs["audio"]`` for a typed audio reference (``at``: its path).

    The reader keeps a key of a typed field only when it is ``None``; a kept value there
    would read back as that field (or, not of its type, take the reply out of its home)."""
    out: dict[str, Any] = copy.deepcopy(audio.metadata.get(NAME, {}))
    for key in ("id", *_AUDIO):
        value = getattr(audio, key)
        if value is not None:
            out[key] = value
        elif out.get(key) is not None:
            raise TraceError(
                "not_representable",
                f"metadata.langchain.{key} of the audio reply is kept as "
                f"{short_repr(out[key])}, and the typed reply has no {key}: written into "
                f"additional_kwargs.audio, it would read back as the reply's {key} or as no "
                f"typed reply at all (set AudioReference.{key} instead)",
                path=f"{at}.metadata",
            )
    return out


def _fields_of(annotation: dict[str, Any]) -> dict[str, Any]:
    """Where an annotation keeps its citation fields: in itself, or under ``url_citation``."""
    nested = annotation.get("url_citation")
    if annotation.get("type") == "url_citation" and type(nested) is dict:
        return nested
    return annotation


def citation_of(annotation: Any, where: str, **location: int) -> Citation | None:
    """The citation an annotation names, or None when it is another kind of annotation.

    ``location`` (``in_block``, ``at``) says where in the content it was, when it was in a
    text block.
    """
    if type(annotation) is not dict or annotation.get("type") not in CITATION_TYPES:
        return None
    check_json(annotation, where)
    template = copy.deepcopy(annotation)
    holder = _fields_of(template)
    typed = {key: holder.pop(key) for key, kind in _CITED.items() if type(holder.get(key)) is kind}
    kept: dict[str, Any] = dict(location)
    if template != {"type": "citation"}:
        kept["annotation"] = template
    return Citation(**typed, metadata={NAME: kept} if kept else {})


def in_reply_text(citation: Citation, start: int, length: int) -> Citation:
    """A citation read from a text block ``length`` characters long, with its indexes
    counted in the reply's text, where the block's text starts at ``start`` (as the
    ``openai_responses`` reader counts a part's). One whose span is not inside its block as
    read keeps ``outside: true``, so the way back writes it there as it was."""
    kept = dict(citation.metadata[NAME])
    if not _inside(citation.start_index, citation.end_index, length):
        kept["outside"] = True
    return _moved(citation, start, kept)


def in_block_text(citation: Citation, start: int, length: int, at: str) -> Citation:
    """The citation ``at`` (read from a text block, ``in_reply_text``) with its indexes
    counted in its block's text again: the block is ``length`` characters long and starts
    at ``start`` of the reply's text. A span that is no longer inside the block (edited, or
    the text before it was) would cite other text there: ``not_representable``."""
    kept = citation.metadata[NAME]
    back = _moved(citation, -start, kept)
    inside = _inside(back.start_index, back.end_index, length)
    if "outside" in kept and (kept["outside"] is not True or inside):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.outside is kept as {short_repr(kept['outside'])}; the reader "
            f"keeps it only as true, on a citation whose span is not inside its text block"
            + (", and this one's is" if inside else "")
            + ": written, the citation would read back without the key",
            path=f"{at}.metadata.{NAME}.outside",
        )
    if not inside and "outside" not in kept:
        raise TraceError(
            "not_representable",
            f"the citation's span ({citation.start_index}, {citation.end_index} of the reply's "
            f"text) is not inside the text block it goes back into (content block "
            f"{kept['in_block']}: characters {start} to {start + length}), where it would "
            f"cite other text (drop=['citations'] leaves citations out)",
            path=at,
        )
    return back


def _moved(citation: Citation, by: int, kept: dict[str, Any]) -> Citation:
    """``citation`` with its indexes moved ``by`` characters and ``kept`` as its metadata."""
    return Citation(
        url=citation.url,
        title=citation.title,
        start_index=None if citation.start_index is None else citation.start_index + by,
        end_index=None if citation.end_index is None else citation.end_index + by,
        cited_text=citation.cited_text,
        metadata={NAME: kept},
    )


def _inside(begin: int | None, end: int | None, length: int) -> bool:
    """Whether a span counted in a text ``length`` characters long lies inside it (an index
    left out: the other one does)."""
    if begin is not None and not 0 <= begin <= length:
        return False
    if end is not None and not 0 <= end <= length:
        return False
    return begin is None or end is None or begin <= end


def citations_of(kwargs: dict[str, Any], at: str) -> list[Citation]:
    """``additional_kwargs["annotations"]`` as citations, when every entry is one (a list
    with other annotations stays where it is, whole)."""
    annotations = kwargs.get("annotations")
    if not _is_citation_list(annotations):
        return []
    where = f"{at}.additional_kwargs.annotations"
    cited = [citation_of(item, f"{where}[{k}]") for k, item in enumerate(annotations)]
    del kwargs["annotations"]
    return [citation for citation in cited if citation is not None]


def annotation_of(citation: Citation, at: str) -> dict[str, Any]:
    """The annotation dict for a typed citation: its kept layout, else a standard
    ``citation`` annotation."""
    template = citation.metadata.get(NAME, {}).get("annotation", {"type": "citation"})
    if type(template) is not dict or template.get("type") not in CITATION_TYPES:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.annotation of a citation must be an annotation dict whose type "
            f"is one of {CITATION_TYPES}; got {short_repr(template)}",
            path=f"{at}.metadata",
        )
    out = copy.deepcopy(template)
    holder = _fields_of(out)
    for key, kind in _CITED.items():
        value = getattr(citation, key)
        if value is not None:
            holder[key] = value
        elif type(holder.get(key)) is kind:
            # the reader takes a value of the field's type into the citation
            raise TraceError(
                "not_representable",
                f"metadata.langchain.annotation of a citation holds {key} "
                f"{short_repr(holder[key])}, and the typed citation has no {key}: written, it "
                f"would read back as the citation's {key} (set Citation.{key} instead)",
                path=f"{at}.metadata",
            )
    return out


def _title_key(entry: dict[str, Any]) -> str:
    """Where langchain-core takes a source citation's title from: a document citation's
    ``document_title`` when it has the key, else ``title``."""
    if entry["type"] != _WEB_RESULT and "document_title" in entry:
        return "document_title"
    return "title"


def _is_source_citation(entry: Any) -> TypeGuard[dict[str, Any]]:
    """Whether langchain-core reads an entry of a text block's ``citations`` as a citation
    (one without ``cited_text``, or a web result without ``url``, it keeps as a
    ``non_standard_annotation``)."""
    if type(entry) is not dict or entry.get("type") not in SOURCE_CITATION_TYPES:
        return False
    return "cited_text" in entry and (entry["type"] != _WEB_RESULT or "url" in entry)


def source_citation_of(entry: Any, where: str, **location: int) -> Citation | None:
    """An entry of an Anthropic text block's ``citations`` as langchain-core's
    ``content_blocks`` reads it: ``cited_text``, a web search result's ``url``, the title
    (a document's ``document_title``, else a ``title`` that is not empty), and no span (a
    document citation's indexes count the cited document, not the reply). None for an entry
    it reads as no citation (another type, no ``cited_text``, a web result without ``url``).

    The rest of the entry is kept as ``metadata.langchain.annotation``, with
    ``in_list = "citations"`` beside ``location`` (``in_block``, ``at``)."""
    if not _is_source_citation(entry):
        return None
    web = entry["type"] == _WEB_RESULT
    check_json(entry, where)
    template = copy.deepcopy(entry)
    title_key = _title_key(entry)
    keys = {"cited_text": "cited_text", "title": title_key, **({"url": "url"} if web else {})}
    typed: dict[str, str] = {}
    for field, key in keys.items():
        value = template.get(key)
        if type(value) is str and (value or field != "title" or key == "document_title"):
            typed[field] = template.pop(key)
    kept: dict[str, Any] = {**location, "in_list": CITATIONS_KEY, "annotation": template}
    if "title" in typed and title_key != _TITLE_KEYS.get(entry["type"], "document_title"):
        kept["title_key"] = title_key
    return Citation(**typed, metadata={NAME: kept})


def source_citation_back(citation: Citation, at: str) -> dict[str, Any]:
    """The entry of an Anthropic text block's ``citations`` for a citation read from one
    (``source_citation_of``): the kept entry with the citation's fields put back. One that
    would read back as another citation (a span, which such an entry has no place for, a
    document citation's url, an empty title, a kept field the reader would take) is
    ``not_representable``."""
    kept = citation.metadata[NAME]
    template = kept.get("annotation")
    if type(template) is not dict or template.get("type") not in SOURCE_CITATION_TYPES:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.annotation of a citation read from a text block's citations "
            f"must be an entry whose type is one of {SOURCE_CITATION_TYPES}; got "
            f"{short_repr(template)}",
            path=f"{at}.metadata",
        )
    title_key = kept.get("title_key", _TITLE_KEYS.get(template["type"], "document_title"))
    if title_key not in ("title", "document_title"):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.title_key is kept as {short_repr(title_key)}; the reader "
            f"keeps 'title' or 'document_title' there: nothing writes another",
            path=f"{at}.metadata.{NAME}.title_key",
        )
    out = copy.deepcopy(template)
    keys = {"cited_text": "cited_text", "title": title_key}
    if template["type"] == _WEB_RESULT:
        keys["url"] = "url"
    for field, key in keys.items():
        if getattr(citation, field) is not None:
            out[key] = getattr(citation, field)
    _check_reads_back(citation, source_citation_of(out, at), out, at)
    return out


def _check_reads_back(citation: Citation, back: Citation | None, out: Any, at: str) -> None:
    """``not_representable`` when ``out``, the entry written for ``citation``, reads back
    (as ``back``) as no citation, or without one of its fields (the path names it)."""
    if back is None:
        raise TraceError(
            "not_representable",
            f"written into its text block's citations as {short_repr(out)}, this citation "
            f"would read back as none: such an entry is read as a citation only with "
            f"cited_text, a web_search_result_location with url too (set them, or "
            f"drop=['citations'] leaves citations out)",
            path=at,
        )
    for field in _CITED:
        own = getattr(citation, field)
        read = getattr(back, field)
        if read != own:
            raise TraceError(
                "not_representable",
                f"written into its text block's citations as {short_repr(out)}, this "
                f"citation would read back with {field} {short_repr(read)}, not "
                f"{short_repr(own)}: such an entry has no span in the reply, a document's no "
                f"url, and an empty title or a kept field reads otherwise "
                f"(drop=['citations'] leaves citations out)",
                path=f"{at}.{field}",
            )


def check_no_kept_citation(part: TextPart, at: str) -> None:
    """The reader takes every citation of an AI text block (``CITING_LISTS``) into the
    message's citations: one in the kept block would read back as a citation the message
    does not have (the message's own go back into the block from ``AIMessage.citations``)."""
    kept = part.metadata.get(NAME)
    block = kept.get("block") if type(kept) is dict else None
    if type(block) is not dict:
        return
    for key, read in CITING_LISTS:
        entries = block.get(key)
        if type(entries) is not list:
            continue
        for k, entry in enumerate(entries):
            if read(entry, f"{at}.metadata") is not None:
                raise TraceError(
                    "not_representable",
                    f"the text block kept for this part holds a citation "
                    f"(metadata.langchain.block.{key}[{k}] = {short_repr(entry)}), which "
                    f"would read back as a citation of the message; put it in "
                    f"AIMessage.citations instead",
                    path=f"{at}.metadata",
                )


CITING_LISTS: tuple[tuple[str, Callable[..., Citation | None]], ...] = (
    ("annotations", citation_of),
    (CITATIONS_KEY, source_citation_of),
)
"""The lists of an AI text block whose citations the reader takes, in the order it reads
them, each with how it reads an entry (None: no citation); a citation read from the second
keeps ``metadata.langchain.in_list``."""
