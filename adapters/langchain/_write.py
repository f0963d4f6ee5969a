"""Typed messages -> LangChain ``BaseMessage`` objects (the ``langchain`` adapter's way back).

Reads only ``metadata["langchain"]``: the class tag, the kept fields and extras go back
verbatim, except the provider's copies of calls edited after reading, which are rewritten
from the typed calls (``_call_copies``); tool calls are split into LangChain's two lists and
their blocks; parts become content blocks; the typed homes LangChain keeps in
``additional_kwargs`` go back there.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any

from pydantic import ValidationError

from tracebridge._changed import FELL
from tracebridge._json import json_copy
from tracebridge._shape import unchecked_field
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    Citation,
    Content,
    HumanMessage,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolMessage,
)

from ._blocks import AnyPart, block_of
from ._call_blocks import CALL_BLOCKS
from ._call_copies import bring_copies_in_line
from ._call_lists import CallLists, lists_of
from ._calls import interleave, source_kinds
from ._chunks import ChunkRun, ContentWatch, continued_from, watch_content
from ._classes import CHAT_ROLES, CLASSES, MAPPED, NAME, partial_parser, plain_class
from ._homes import (
    CITATIONS_KEY,
    CITING_LISTS,
    DEVELOPER_KEY,
    ITEM_KEY,
    REASONING_KEY,
    annotation_of,
    audio_reply,
    check_no_kept_citation,
    in_block_text,
    item_reading,
    source_citation_back,
    typed_home_in,
)
from ._kept_places import GROUP_MARKERS, kept_in, refuse_unknown
from ._raw_reasoning import check_no_raw, continues, merged
from ._results import RESULT, write_tool_results
from ._shapes import RAW_REASONING_ITEM, REASONING_ITEM, BlockShape, first_reading
from ._tool_outputs import OUTPUTS_KEY, is_output, split_tool_outputs

__all__ = ["write_trace"]

_CALL_TAGS = frozenset(CALL_BLOCKS)
"""Block types the reader takes out of an AI message's content as calls."""



def _not_representable(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path)


def write_trace(messages: Sequence[Message], lc: Any, drop: Collection[str]) -> list[Any]:
    """LangChain messages for typed ones (``lc`` is ``langchain_core.messages``)."""
    out: list[Any] = []
    chunk_run = ChunkRun()  # the AIMessageChunks just written, by id
    i = 0
    while i < len(messages):
        message = messages[i]
        try:
            if "from_human" in message.metadata.get(NAME, {}):
                written, i_next = write_tool_results(messages, i, _in_group(i, lc, drop))
                if i_next <= i:
                    # a group writes at least the message at i: never loop on one place
                    raise RuntimeError(f"langchain writer: no progress at messages[{i}]")
            else:
                written, i_next = native(message, i, lc, drop), i + 1
        except TraceError as error:
            # (an error about a message of the group written at i may name that message)
            index = i if error.index is None else error.index
            raise error.relocated(index=index, source=NAME) from None
        except FELL as exc:
            # A typed message made without validation may hold a field of another type
            # (named first); what this writer reads besides is metadata["langchain"], which
            # may hold anything JSON allows.
            unchecked = unchecked_field(messages, NAME)
            if unchecked is not None:
                raise unchecked from None
            found = kept_in(messages, i)
            if found is None:
                raise  # nothing of it was read: the fault is the writer's, shown as it is
            j, kept, expected = found
            raise TraceError(
                "malformed_event",
                f"{kept[1:]} is not "
                + (f"{expected}, as to_messages writes it" if expected else
                   "what to_messages writes there")
                + f" ({type(exc).__name__}: {exc})",
                index=j,
                path=f"messages[{j}]{kept}",
                source=NAME,
            ) from exc
        if type(written) is lc.AIMessageChunk:
            _check_not_continued(written, out, i, chunk_run)
        out.append(written)
        i = i_next
    return out


def _check_not_continued(written: Any, out: list[Any], i: int, run: ChunkRun) -> None:
    """A written ``AIMessageChunk`` must not read back as a piece of the stream of one
    written just before it (the reader refuses that as ``streaming_chunk``)."""
    first = continued_from(written.id, len(out), run)
    if first is not None:
        raise TraceError(
            "not_representable",
            f"this AIMessageChunk would follow another AIMessageChunk with its id "
            f"{short_repr(written.id)} (written as messages[{first}]): LangChain's pieces of "
            f"one streamed message look so, and read back as such (streaming_chunk); give one "
            f"another id, or another class (metadata.langchain.class)",
            index=i,
            path=f"messages[{i}].id",
            source=NAME,
        )


def _in_group(
    i: int, lc: Any, drop: Collection[str]
) -> Callable[[Message, Any, tuple[int, str]], Any]:
    """``native`` for the human message the tool results at ``i`` go back into (``kept_at``:
    the typed message holding the host's kept fields, and their path)."""

    def write(host: Message, content: Any, kept_at: tuple[int, str]) -> Any:
        return native(host, i, lc, drop, content=content, kept_at=kept_at)

    return write


def native(
    message: Message,
    i: int,
    lc: Any,
    drop: Collection[str],
    *,
    content: Any = None,
    kept_at: tuple[int, str] | None = None,
) -> Any:
    """The LangChain message for typed ``message``; ``content`` given means its content
    was put together from tool results (``_results``), and ``kept_at`` says which typed
    message holds the fields kept for it, and where."""
    at = f"messages[{i}]"
    kept: dict[str, Any] = json_copy(message.metadata.get(NAME, {}))
    if kept and type(kept) is dict:
        _check_not_defaults(kept, message, i, kept_at)
    tag = kept.pop("class", _plain_class(message))
    dropped = kept.pop("artifact_dropped", _NO_DEFAULT)
    extra = kept.pop("extra", {})
    for marker in GROUP_MARKERS:
        if marker in kept and content is None:
            raise _not_representable(
                f"metadata.langchain.{marker} marks a message that goes back into a human "
                f"message with tool_result blocks, but it is not where it was read from",
                f"{at}.metadata",
            )
        kept.pop(marker, None)
    if tag not in CLASSES:  # (an unhashable one falls over here: kept_in names it)
        if type(tag) is not str:
            j, where = kept_at or (i, f"{at}.metadata.{NAME}")
            raise TraceError(
                "malformed_event",
                f"metadata.langchain.class is a LangChain class tag (a string), got "
                f"{short_repr(tag)}",
                index=j,
                path=f"{where}.class",
            )
        raise _not_representable(
            f"metadata.langchain.class {short_repr(tag)} is no LangChain message class; "
            f"known: {', '.join(CLASSES)}",
            f"{at}.metadata",
        )
    cls_name, kind = CLASSES[tag]
    if dropped is not _NO_DEFAULT:
        _check_artifact_dropped(dropped, kept, getattr(lc, cls_name), i, kept_at)
    if (kind or CHAT_ROLES.get(kept.get("role", ""))) != message.type:
        raise _not_representable(
            f"metadata.langchain.class {tag!r} is not {with_article(message.type)} message class",
            f"{at}.metadata",
        )
    if kept or extra:
        j, where = kept_at or (i, f"{at}.metadata.{NAME}")
        try:
            _check_kept(kept, extra, message.type, getattr(lc, cls_name), where)
        except TraceError as error:
            raise error.relocated(index=j) from None
    fields: dict[str, Any] = {"name": message.name, "id": message.id, **kept, **extra}
    watch = None
    if isinstance(message, AIMessage):
        watch = _ai_fields(message, fields, cls_name, at, drop)
    else:
        read_as = frozenset({RESULT}) if isinstance(message, HumanMessage) else frozenset()
        fields["content"] = (
            content if content is not None else _content_back(message.content, at, read_as)
        )
    if isinstance(message, ToolMessage):
        _tool_fields(message, fields, tag, at)
    elif isinstance(message, SystemMessage):
        _system_fields(message, fields, cls_name, at)
    try:
        built = getattr(lc, cls_name)(**fields)
    except (ValidationError, TypeError, ValueError) as exc:
        raise _not_representable(
            f"LangChain's {cls_name} does not accept these fields: {exc}".replace("\n", " "), at
        ) from None
    if watch is not None:
        watch.check(built.content, at)
    return built


def _check_not_defaults(
    kept: dict[str, Any], message: Message, i: int, kept_at: tuple[int, str] | None
) -> None:
    """The reader keeps no class tag for the class the way back writes without one and no
    empty ``extra``: kept, they would be written as nothing and read back without the key."""
    j, where = kept_at or (i, f"messages[{i}].metadata.{NAME}")
    if kept.get("class") == _plain_class(message):
        raise TraceError(
            "not_representable",
            f"metadata.langchain.class is {kept['class']!r}, the class the way back writes "
            f"for this {message.type} message without one, which the reader never keeps: "
            f"written, the message would read back without the key",
            index=j,
            path=f"{where}.class",
        )
    if "extra" in kept and kept["extra"] == {} and type(kept["extra"]) is dict:
        raise TraceError(
            "not_representable",
            "metadata.langchain.extra is kept empty, which the reader never keeps (it keeps "
            "extra attributes only when there are some): written, the message would read back "
            "without the key",
            index=j,
            path=f"{where}.extra",
        )


def _check_artifact_dropped(
    dropped: Any, kept: dict[str, Any], cls: Any, i: int, kept_at: tuple[int, str] | None
) -> None:
    """``artifact_dropped`` (the type name of an artifact ``drop_artifacts`` left out) is
    kept only on a tool result of a class with an ``artifact`` field, which then keeps no
    ``artifact``; the way back writes ``artifact=None`` for it."""
    j, where = kept_at or (i, f"messages[{i}].metadata.{NAME}")
    if type(dropped) is not str:
        raise TraceError(
            "malformed_event",
            f"metadata.langchain.artifact_dropped is the type name of a dropped artifact (a "
            f"string), as to_messages writes it; got {short_repr(dropped)}",
            index=j,
            path=f"{where}.artifact_dropped",
        )
    if "artifact" not in cls.model_fields or "artifact" in kept:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.artifact_dropped is kept on a message written as "
            f"{cls.__name__}, "
            + (
                "which also keeps an artifact"
                if "artifact" in kept
                else "which has no artifact field"
            )
            + ": the reader keeps it only on a tool result whose artifact drop_artifacts left "
            "out, and nothing would write it here",
            index=j,
            path=f"{where}.artifact_dropped",
        )


def _check_kept(kept: dict[str, Any], extra: Any, kind: str, cls: Any, where: str) -> None:
    """Kept fields go back as they were read, beside the typed fields, never over them.

    Refused: a kept key the reader reads into a typed field (``name``, ``status``, ...),
    which would be written over the typed value; a kept key the class does not declare,
    which LangChain keeps as an extra attribute (read back under ``extra``); an extra
    attribute named like a declared field, a constructor parameter (``content_blocks``,
    which replaces the content) or a kept key, which would be taken as that; a kept
    ``additional_kwargs`` value the reader takes into a typed home (text reasoning, a text
    refusal, an audio reply, citations, the developer marker), which would read back as
    typed data."""
    taken, writable = _fields_of(cls)
    if not writable.issuperset(kept):
        key = next(key for key in kept if key not in writable)
        if key in MAPPED:
            raise _not_representable(
                f"metadata.langchain.{key} ({short_repr(kept[key])}) would be written as "
                f"LangChain's {key} field, which the way back writes from the typed message "
                f"itself; it would replace that value or read back as typed data",
                f"{where}.{key}",
            )
        raise _not_representable(
            f"metadata.langchain.{key} is kept as a field of {cls.__name__}, which declares "
            f"none of that name: LangChain would keep it as an extra attribute, which reads "
            f"back as metadata.langchain.extra.{key}",
            f"{where}.{key}",
        )
    if type(extra) is dict and extra:
        for key in extra:
            if key in taken or key in kept:
                raise _not_representable(
                    f"metadata.langchain.extra.{key} is kept as an extra attribute, but {key} "
                    + (
                        f"is a field or constructor parameter of {cls.__name__}"
                        if key in taken
                        else f"is also kept as metadata.langchain.{key}"
                    )
                    + "; written, LangChain would take it as that, not as an attribute",
                    f"{where}.extra.{key}",
                )
    defaults = _defaults_of(cls)
    for key, value in kept.items():
        default = defaults.get(key, _NO_DEFAULT)
        if value == default and type(value) is type(default):
            raise _not_representable(
                f"metadata.langchain.{key} is kept as {short_repr(value)}, the default of "
                f"{cls.__name__}'s {key} field, which the reader never keeps (the way back "
                f"writes the default without it): written, the message would read back without "
                f"the key",
                f"{where}.{key}",
            )
    kwargs = kept.get("additional_kwargs")
    if type(kwargs) is dict and kwargs:
        # a ChatMessage says its role itself: the developer marker stays verbatim there
        chat_system = kind == "system" and cls.__name__.startswith("ChatMessage")
        home = None if chat_system else typed_home_in(kwargs, kind)
        if home is not None:
            raise _not_representable(
                f"metadata.langchain.additional_kwargs.{home} is kept as "
                f"{short_repr(kwargs[home])}, which the reader takes out of additional_kwargs "
                f"into a typed field ({_HOME_NAMES[home]}): the way back writes that key from "
                f"the typed field alone; kept, it would read back as typed data (set the typed "
                f"field instead)",
                f"{where}.additional_kwargs.{home}",
            )


@functools.cache
def _fields_of(cls: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The names a LangChain message class's constructor takes as its own (its fields and
    its other parameters, such as ``content_blocks``, which replaces the content), which an
    extra attribute therefore cannot have; and the fields a kept key may name (the others
    the way back writes from typed fields)."""
    fields = frozenset(cls.model_fields)
    parameters = inspect.signature(cls.__init__).parameters.values()
    taken = fields | {
        parameter.name
        for parameter in parameters
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }
    return taken - {"self"}, fields - MAPPED


_NO_DEFAULT = object()


@functools.cache
def _defaults_of(cls: Any) -> dict[str, Any]:
    """Each field of a LangChain message class that has a default, with that default (the
    reader keeps no field at its default)."""
    return {
        key: declared.get_default(call_default_factory=True)
        for key, declared in cls.model_fields.items()
        if not declared.is_required()
    }


_HOME_NAMES = {
    DEVELOPER_KEY: "SystemMessage.role 'developer'",
    REASONING_KEY: "a ReasoningPart",
    ITEM_KEY: "a ReasoningPart",
    "refusal": "a RefusalPart",
    OUTPUTS_KEY: "an OpaquePart of each item, marked from tool_outputs",
    "audio": "AIMessage.audio",
    "annotations": "AIMessage.citations",
}


def _content_back(
    content: Content | list[AnyPart],
    at: str,
    read_as: frozenset[str] = frozenset(),
    *,
    cites: bool = False,
    marks_last: bool = False,
    first: int = 0,
) -> Any:
    """The LangChain content; ``read_as`` names block types the reader takes out of this
    message's content (calls, results), which an opaque part therefore cannot be; ``cites``:
    the reader takes the citation annotations of its text blocks (an AI message's);
    ``marks_last``: the reader marks a refusal block that ends this content as a block (an
    AI message's with no ``additional_kwargs.refusal``); ``first``: the typed position of
    ``content[0]`` (after a part written elsewhere)."""
    if isinstance(content, str):
        return content
    for j, part in enumerate(content, first):
        if isinstance(part, OpaquePart) and part.kind in read_as:
            raise _not_representable(
                f"an opaque {part.kind!r} part in this message's content would read back as "
                f"{with_article('tool result' if part.kind == RESULT else 'tool call')}, not as a "
                "part",
                f"{at}.content[{j}]",
            )
        if part.metadata:
            if cites and isinstance(part, TextPart):
                check_no_kept_citation(part, f"{at}.content[{j}]")
            elif is_output(part):
                raise _not_representable(
                    f"this opaque part is marked as read from additional_kwargs.{OUTPUTS_KEY} "
                    f"(metadata.langchain.from), which goes back there only from where the "
                    f"reader puts the items: a code_interpreter_call, mcp_call or "
                    f"image_generation_call among the first parts of an AI message (after its "
                    f"reasoning), the others among its last parts; take the marker out of its "
                    f"metadata to write it as a content block",
                    f"{at}.content[{j}].metadata",
                )
            elif isinstance(part, ReasoningPart) and _home_of(part) is not None:
                place = (
                    "the first part of an AI message (the reader puts it first)"
                    if _home_of(part) == REASONING_KEY
                    else f"the first part of an AI message, or the second after reasoning from "
                    f"{REASONING_KEY} (the reader puts it there)"
                )
                raise _not_representable(
                    f"this reasoning part is marked as read from additional_kwargs."
                    f"{_home_of(part)} (metadata.langchain.from), which goes back there only "
                    f"from {place}; take the marker out of its metadata to write it as a "
                    f"reasoning block",
                    f"{at}.content[{j}].metadata",
                )
    last = first + len(content) - 1
    blocks: list[Any] = []
    for j, part in enumerate(content, first):
        if cites and isinstance(part, ReasoningPart) and continues(part):
            # an AI message's part holding the raw text of the item before it
            previous = blocks.pop() if blocks else None
            blocks.append(merged(previous, part, first_reading, f"{at}.content[{j}]"))
            continue
        blocks.append(block_of(part, f"{at}.content[{j}]", last_of_reply=marks_last and j == last))
    return blocks


_LEADING = (REASONING_KEY, ITEM_KEY)
"""The ``additional_kwargs`` keys whose reasoning the reader puts first, in its order."""


def _home_of(part: ReasoningPart) -> str | None:
    """The ``additional_kwargs`` key a reasoning part is marked as read from, if any."""
    kept = part.metadata.get(NAME)
    home = kept.get("from") if type(kept) is dict else None
    return home if home in _LEADING else None


def _system_fields(message: SystemMessage, fields: dict[str, Any], cls_name: str, at: str) -> None:
    developer = message.role == "developer"
    if cls_name.startswith("ChatMessage"):
        if (fields.get("role") == "developer") != developer:
            raise _not_representable(
                f"a ChatMessage's role {fields.get('role')!r} is kept with this message, which "
                f"has the {message.role} role",
                f"{at}.role",
            )
        return
    if developer:
        _kwargs_home(fields, DEVELOPER_KEY, "developer", at, typed="developer role")


def _kwargs_home(
    fields: dict[str, Any], key: str, value: Any, at: str, *, typed: str | None = None
) -> None:
    """Put a typed home's value into ``additional_kwargs[key]``, where ChatOpenAI keeps it."""
    kwargs = fields.setdefault("additional_kwargs", {})
    if key in kwargs:
        raise _not_representable(
            f"additional_kwargs.{key} is kept with this message as {short_repr(kwargs[key])}, "
            f"and the message's typed {typed or key} belongs there too",
            f"{at}.additional_kwargs.{key}",
        )
    kwargs[key] = value


def _ai_fields(
    message: AIMessage, fields: dict[str, Any], cls_name: str, at: str, drop: Collection[str]
) -> ContentWatch | None:
    """Fill ``fields`` for an AI message; the ``ContentWatch`` to check the built message
    with when LangChain may rewrite its content (a stream's last v1 chunk)."""
    parts, homes = _split_reasoning(message.content, at)
    first = len(message.content) - len(parts) if isinstance(parts, list) else len(homes)
    for key, value in homes.items():
        _kwargs_home(fields, key, value, at, typed="reasoning part")
    parts, outputs, first = split_tool_outputs(parts, at, first)
    if outputs:
        _kwargs_home(fields, OUTPUTS_KEY, outputs, at, typed="hosted-tool parts' list")
    parts, refusal = _split_refusal(parts, at)
    if refusal is not None:
        _kwargs_home(fields, "refusal", refusal, at)
    if message.audio is not None:
        _kwargs_home(fields, "audio", audio_reply(message.audio, f"{at}.audio"), at)
    # a refusal moved to additional_kwargs leaves the reader's mark off the content's last
    content = _content_back(
        parts, at, _CALL_TAGS, cites=True, marks_last=refusal is None, first=first
    )
    # a stream's last chunk may have its content rewritten by LangChain: which block is
    # which part (call blocks go in between)
    part_blocks = (
        (list(content) if type(content) is list else []) if cls_name == "AIMessageChunk" else None
    )
    # A custom call's block follows the content; an empty content list would then read
    # back as "", so such a call is written the way an id-less one is.
    lists = lists_of(message.tool_calls, at, drop, custom_blocks=content != [])
    if cls_name.startswith("ChatMessage"):
        if lists.kinds or lists.tail:
            raise _not_representable(
                "a ChatMessage has no tool_calls field; this assistant message has tool calls",
                f"{at}.tool_calls",
            )
        # its calls are in additional_kwargs.function_call or content blocks; the reader
        # reads and cross-checks the kept copies there as on an AIMessage
        bring_copies_in_line(fields, lists, message.tool_calls, None, at)
    else:
        _call_fields(message, fields, lists, cls_name, at)
    fields["content"] = _with_call_blocks(content, lists, at)
    if "citations" not in drop:
        _put_citations(message.citations, fields, at)
    return None if part_blocks is None else watch_content(cls_name, fields, part_blocks, first)


def _split_reasoning(
    content: Content, at: str
) -> tuple[Content | list[AnyPart], dict[str, Any]]:
    """The content without the reasoning that belongs in ``additional_kwargs``, and what
    goes into which key: the first parts, when they are reasoning parts read from there
    (``metadata.langchain.from``: ``reasoning_content`` text, then a ``reasoning`` item, as
    the reader puts them). What is left goes back as the string it was read from
    (``content: "string"`` on the first), which it must still be: no part, or one text
    part with text and nothing kept. A marker holding anything else would be lost:
    ``not_representable`` at it."""
    if isinstance(content, str) or not content:
        return content, {}
    homes: dict[str, Any] = {}
    layout: dict[str, Any] | None = None
    taken = 0  # the parts taken into homes
    for key in _LEADING:
        part = content[taken] if taken < len(content) else None
        if not isinstance(part, ReasoningPart) or _home_of(part) != key:
            continue
        marker = part.metadata[NAME]
        where = f"{at}.content[{taken}].metadata.{NAME}"
        known = _MARKER_KEYS if key == REASONING_KEY else _ITEM_MARKER_KEYS
        for name in marker:
            if name not in known or (name == "content" and homes):
                raise _not_representable(
                    f"{name!r} is no key the reader keeps beside 'from' on this reasoning read "
                    f"from additional_kwargs.{key} (it keeps {', '.join(sorted(known))}"
                    f"{'; content only on the first part' if name == 'content' else ''}): "
                    f"nothing writes it, so it would be lost", f"{where}.{name}")
        if "content" in marker:
            layout = marker
        if key == REASONING_KEY and part.id is not None:
            raise _not_representable(
                f"additional_kwargs.{REASONING_KEY} is a string, a layout without id; the part "
                f"has id {part.id!r}", f"{at}.content[{taken}].id")
        homes[key] = part.text if key == REASONING_KEY else _reasoning_item(part, marker, where)
        taken += 1
        if key == ITEM_KEY and taken < len(content) and continues(content[taken]):
            raw = content[taken]
            assert isinstance(raw, ReasoningPart)  # (continues)
            homes[key] = merged(homes[key], raw, item_reading, f"{at}.content[{taken}]")
            taken += 1
    if not homes:
        return content, {}
    rest: list[AnyPart] = list(content[taken:])
    if layout is None:
        return rest, homes
    only = rest[0] if len(rest) == 1 else None
    if layout["content"] != "string" or not (
        not rest or (isinstance(only, TextPart) and only.text and not only.metadata)
    ):
        raise _not_representable(
            f"'content': {short_repr(layout['content'])} is kept only as 'string' (the "
            f"content after the reasoning was a string), before no part or one plain text "
            f"part; {len(rest)} part(s) follow it here: written, the message would read back "
            f"without this key", f"{at}.content[0].metadata.{NAME}.content")
    return (only.text if isinstance(only, TextPart) else ""), homes


def _reasoning_item(part: ReasoningPart, marker: dict[str, Any], where: str) -> dict[str, Any]:
    """``additional_kwargs["reasoning"]`` for a reasoning part read from there: the kept
    item with the part's text as its summary (the kept summary while it still reads as the
    text), or as its raw reasoning (``content``) when the mark's ``shape`` says so."""
    kept = marker.get("block")
    if type(kept) is not dict:
        raise TraceError(
            "malformed_event",
            f"metadata.langchain.block of reasoning read from additional_kwargs.{ITEM_KEY} is "
            f"the reasoning item without its summary text (an object), as to_messages writes "
            f"it; got {short_repr(kept)}",
            path=f"{where}.block",
        )
    shape = _item_shape(marker, where)
    if shape is REASONING_ITEM:
        check_no_raw(kept, f"{where}.block")
    item = shape.write(kept, part, where)
    read = {"text": part.text} if part.id is None else {"text": part.text, "id": part.id}
    if item_reading(item) != (shape, read):
        raise _not_representable(
            f"the reasoning item kept for this part makes {short_repr(item)}, which does not "
            f"read back as this reasoning (a Responses reasoning item has type 'reasoning'"
            f"{', an empty summary and its raw text in content' if 'shape' in marker else ''})",
            f"{where}.block",
        )
    return item


def _item_shape(marker: dict[str, Any], where: str) -> BlockShape:
    """The layout of the item kept for reasoning read from ``additional_kwargs.reasoning``:
    its summary's text, or (``shape``) its raw reasoning text."""
    if "shape" not in marker:
        return REASONING_ITEM
    if marker["shape"] != RAW_REASONING_ITEM.name:
        raise _not_representable(
            f"metadata.langchain.shape of reasoning read from additional_kwargs.{ITEM_KEY} "
            f"is {RAW_REASONING_ITEM.name!r} (the text is the item's raw reasoning, its "
            f"content), as to_messages writes it, or absent; got {short_repr(marker['shape'])}",
            f"{where}.shape",
        )
    return RAW_REASONING_ITEM


_MARKER_KEYS = frozenset(("from", "content"))
"""What the reader keeps on reasoning read from ``additional_kwargs.reasoning_content``."""

_ITEM_MARKER_KEYS = frozenset(("from", "content", "block", "shape"))
"""What the reader keeps on reasoning read from ``additional_kwargs.reasoning``."""


def _split_refusal(
    content: Content | list[AnyPart], at: str
) -> tuple[Content | list[AnyPart], str | None]:
    """The content without the refusal that belongs in ``additional_kwargs``: the last
    part, when it is a refusal that was not a content block (the reader keeps no key but
    ``content`` on it)."""
    if isinstance(content, str) or not content:
        return content, None
    last = content[-1]
    if not isinstance(last, RefusalPart) or "shape" in last.metadata.get(NAME, {}):
        return content, None
    rest: list[AnyPart] = list(content[:-1])
    kept = last.metadata.get(NAME, {})
    was = kept.get("content")
    if not rest:
        written: Content | list[AnyPart] = [] if was == "list" else ""
    elif (
        was == "string"
        and len(rest) == 1
        and isinstance(rest[0], TextPart)
        and rest[0].text  # an empty string content reads back as no text part
        and not rest[0].metadata
    ):
        written = rest[0].text
    else:
        written = rest
    if kept and type(kept) is dict:
        _check_refusal_mark(kept, f"{at}.content[{len(rest)}].metadata.{NAME}")
    return written, last.text


def _check_refusal_mark(kept: dict[str, Any], where: str) -> None:
    """The mark of a refusal read from ``additional_kwargs.refusal``: the layout of the
    content beside it (``"string"`` or ``"list"``), and nothing else."""
    if not _REFUSAL_KEYS.issuperset(kept):
        refuse_unknown(
            kept, _REFUSAL_KEYS, "a refusal read from additional_kwargs.refusal", where
        )
    if "content" in kept and kept["content"] not in _CONTENT_LAYOUTS:
        raise _not_representable(
            f"'content': {short_repr(kept['content'])} is no layout the reader keeps on a "
            f"refusal read from additional_kwargs.refusal (it keeps 'string' or 'list'): "
            f"nothing writes it, so it would be lost",
            f"{where}.content",
        )


_CONTENT_LAYOUTS = ("string", "list")


_REFUSAL_KEYS = frozenset(("content",))
"""What the reader keeps on a refusal read from ``additional_kwargs.refusal``."""


def _call_fields(
    message: AIMessage, fields: dict[str, Any], lists: CallLists, cls_name: str, at: str
) -> None:
    fields["tool_calls"] = lists.tool_calls
    fields["invalid_tool_calls"] = lists.invalid_tool_calls
    # LangChain rebuilds only an AIMessageChunk's calls from tool_call_chunks; the reader
    # reads the order from them on that class alone
    parse_partial = partial_parser() if cls_name == "AIMessageChunk" else None
    bring_copies_in_line(fields, lists, message.tool_calls, parse_partial, at)
    order = interleave(
        source_kinds(
            fields, parse_partial, len(lists.tool_calls), len(lists.invalid_tool_calls)
        ),
        len(lists.tool_calls),
        len(lists.invalid_tool_calls),
    )
    if [invalid for invalid, _ in order] != lists.kinds:
        raise _not_representable(
            "LangChain keeps invalid tool calls in their own list after the valid ones; this "
            "message has an invalid call before a valid one and no raw provider calls "
            "(additional_kwargs.tool_calls, tool_call_chunks) that record the order",
            f"{at}.tool_calls",
        )


def _with_call_blocks(content: Any, lists: CallLists, at: str) -> Any:
    """The content with the calls' blocks back in place (and new custom calls' blocks last)."""
    if not lists.blocks and not lists.tail:
        return content
    if isinstance(content, str):
        if content and lists.blocks:
            raise _not_representable(
                "a call keeps a content block (metadata.langchain.content_block) but the "
                "message content is a string, which holds no blocks",
                f"{at}.content",
            )
        content = [{"type": "text", "text": content}] if content else []
    for position, k, block in sorted(lists.blocks, key=lambda entry: entry[0]):
        if type(position) is not int or not 0 <= position <= len(content):
            raise _misplaced_block(position, k, len(content), lists, at)
        content.insert(position, block)
    return [*content, *lists.tail]


def _misplaced_block(position: Any, k: int, size: int, lists: CallLists, at: str) -> TraceError:
    """The refusal of call ``k``'s kept block, whose position is not among the ``size``
    content elements written before it. Where calls that keep no block are as many as the
    places missing, the gap may be theirs as much as its own (a call edited to lose its block
    leaves the later blocks out of place, as content taken out before them does): the calls
    as a whole are at fault."""
    blockless = lists.without_block
    if type(position) is int and size < position <= size + len(blockless):
        named = ", ".join(f"tool_calls[{j}]" for j in blockless)
        keeps = "keeps" if len(blockless) == 1 else "keep"
        return _not_representable(
            f"the calls' content blocks (metadata.langchain.content_block.at) leave a gap: "
            f"the block of tool_calls[{k}] belongs at position {position}, but only "
            f"{_elements_come(size)} before it, and {named} {keeps} no block: content "
            f"elements before it were taken out, or a call lost its block (keep the block of "
            f"a call edited to lose it, or number the later blocks' positions anew)",
            f"{at}.tool_calls",
        )
    return _not_representable(
        f"this call's content block (metadata.langchain.content_block) belongs at "
        f"position {short_repr(position)}, outside the message's {size} other "
        f"content elements",
        f"{at}.tool_calls[{k}]",
    )


def _elements_come(size: int) -> str:
    return "1 content element comes" if size == 1 else f"{size} content elements come"


def _put_citations(citations: list[Citation], fields: dict[str, Any], at: str) -> None:
    """Citations read from text blocks go back into them (into the list they were read
    from: ``annotations``, or an Anthropic block's ``citations``); the others into
    ``additional_kwargs["annotations"]``, as LangChain's standard citation annotations."""
    located = [c for c in citations if "in_block" in c.metadata.get(NAME, {})]
    loose = citations[len(located) :]
    _check_list_marks(citations, at)
    if (
        located != citations[: len(located)]
        or any("in_block" in c.metadata.get(NAME, {}) for c in loose)
        or located != sorted(located, key=_location)
    ):
        raise _not_representable(
            "citations read from text blocks come first, in content order, then the others; "
            "these are in another order (drop=['citations'] leaves them out)",
            f"{at}.citations",
        )
    content = fields["content"]
    texts = _text_places(content) if located else {}
    for k, citation in enumerate(located):
        j, listed, position = _location(citation)
        key = CITING_LISTS[listed][0]
        block = content[j] if isinstance(content, list) and 0 <= j < len(content) else None
        entries = block.get(key) if type(block) is dict else None
        if type(entries) is not list or not 0 <= position <= len(entries) or j not in texts:
            raise _not_representable(
                f"a citation belongs in the {key} of text block {j}, which has no "
                f"place {position} for it (drop=['citations'] leaves citations out)",
                f"{at}.citations[{k}]",
            )
        where = f"{at}.citations[{k}]"
        in_block = in_block_text(citation, *texts[j], where)
        write = annotation_of if key == "annotations" else source_citation_back
        entries.insert(position, write(in_block, where))
    if loose:
        where = f"{at}.citations"
        written = [annotation_of(c, f"{where}[{len(located) + n}]") for n, c in enumerate(loose)]
        _kwargs_home(fields, "annotations", written, at)


def _check_list_marks(citations: list[Citation], at: str) -> None:
    """The reader marks a citation read from a text block's ``citations`` list with
    ``in_list = "citations"``, and no other: another value, or the mark on a citation read
    from no text block, would not read back."""
    for k, citation in enumerate(citations):
        kept = citation.metadata.get(NAME, {})
        if "in_list" in kept and (kept["in_list"] != CITATIONS_KEY or "in_block" not in kept):
            raise _not_representable(
                f"metadata.langchain.in_list is kept as {short_repr(kept['in_list'])}; the "
                f"reader keeps it only as {CITATIONS_KEY!r}, beside in_block, on a citation "
                f"read from a text block's citations: written, the citation would read back "
                f"without it",
                f"{at}.citations[{k}].metadata.{NAME}.in_list",
            )


def _text_places(content: Any) -> dict[int, tuple[int, int]]:
    """By position in an AI message's written content, each element that reads back as a
    text part: where its text starts in the reply's text (the text parts joined by
    newlines) and how long it is."""
    places: dict[int, tuple[int, int]] = {}
    if not isinstance(content, list):
        return places
    start = 0
    for j, element in enumerate(content):
        found = first_reading(element) if type(element) is dict else None
        if type(element) is str:
            text = element
        elif found is not None and found[0].part is TextPart:
            text = found[1]["text"]
        else:
            continue
        places[j] = (start, len(text))
        start += len(text) + 1
    return places


def _location(citation: Citation) -> tuple[int, int, int]:
    """Where a citation read from a text block goes back: the block, the list (an index of
    ``CITING_LISTS``) and the place in it; -1 for a mark that names none."""
    kept = citation.metadata[NAME]
    j, position = kept.get("in_block"), kept.get("at")
    listed = 1 if "in_list" in kept else 0  # _check_list_marks: only CITATIONS_KEY
    return (j if type(j) is int else -1, listed, position if type(position) is int else -1)



def _plain_class(message: Message) -> str:
    """The class for a message that records none."""
    call_id = message.tool_call_id if isinstance(message, ToolMessage) else None
    return plain_class(message.type, call_id, message.name)


def _tool_fields(message: ToolMessage, fields: dict[str, Any], tag: str, at: str) -> None:
    if CLASSES[tag][0].startswith("Function"):
        if message.tool_call_id is not None:
            raise _not_representable(
                f"metadata.langchain.class {tag!r} is a FunctionMessage class, which has no "
                f"tool_call_id field; this tool result has tool_call_id "
                f"{message.tool_call_id!r} (take the class out to write a ToolMessage)",
                f"{at}.tool_call_id",
            )
        if message.is_error:
            raise _not_representable(
                "a FunctionMessage (a tool result without tool_call_id) has no status to "
                "say it is an error",
                f"{at}.is_error",
            )
        return  # a FunctionMessage has neither tool_call_id nor status
    if message.tool_call_id is None:
        raise _not_representable(
            "a LangChain ToolMessage needs a tool_call_id, and a FunctionMessage (the legacy "
            "id-less result) a name; this tool result has neither",
            f"{at}.tool_call_id",
        )
    fields["tool_call_id"] = message.tool_call_id
    fields["status"] = "error" if message.is_error else "success"
