"""What ``from_messages`` reads of this adapter's own metadata, checked before it is written.

The reader keeps what a typed message has no field for under ``metadata["llama_index"]``;
the writer puts it back beside the typed fields, never over them. Kept values that the reader
never writes, and that would be written over typed data or make LlamaIndex (or this code)
fall, are ``not_representable`` at the kept key (``messages[i].metadata.llama_index.<key>``):

* the namespace itself when it is not a dict (on a message, part, call, citation or reply);
* ``role`` that is not a string; ``tool_call_id_key`` other than ``"tool_call_id"`` or
  ``"call_id"`` (the call id would go under a key that reads back as something else, or as
  nothing); ``layout`` that is not a list of ``"part"`` and ``"call"``; ``additional_kwargs``
  that is not a dict;
* on a call without an id, a kept entry's ``id`` (a ``ToolSelection``'s ``tool_id``): written,
  it would read back as the call's id, an id the typed call does not have.

The keys the readers (``to_messages``, ``events_to_messages``) keep there, on each kind of
message, part, call, citation and spoken reply, are listed below; the writer reads them
there. Any other key (a ``bogus`` beside ``additional_kwargs``), or a known one where no
writer reads it (a ``layout`` on a user message, a ``detail`` on a document), would be left
out without a word: it is refused (``not_representable`` at the key), as are values of a known
key that no writer acts on (``data_url: false``, an ``image_mimetype`` beside inline data).
So are kept values that contradict the typed message, which is written instead: a ``role``
that is not the one written (``contradicting_role``), a ``layout`` whose counts are not the
message's (checked in ``_calls``), and a key of the kept ``additional_kwargs`` that the reader
reads into a typed field, holding what the writer does not write there from the typed message
(``check_kept_kwargs``).

A ``ReasoningPart``'s ``content_is_null`` text, a spoken reply's and a citation's keys, and kept
legacy ``images`` are checked where they are written (``_parts``, ``_reply``, ``_messages``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracebridge import AIMessage, Message, ToolCall
from tracebridge._json import json_path, same_json
from tracebridge.errors import short_repr, with_article
from tracebridge.media import audio_mime_type, canonical_audio_mime_type
from tracebridge.messages import Part

from ._blocks import DATA_URL, NAME, not_representable

RESULT_ID_KEYS = ("tool_call_id", "call_id")
"""The keys of ``additional_kwargs`` a tool result names its call by."""

LAYOUT_TOKENS = frozenset({"part", "call"})

_EVERY_MESSAGE = frozenset(("additional_kwargs", "role", "event"))
MESSAGE_KEYS: Mapping[str, frozenset[str]] = {
    "human": _EVERY_MESSAGE,
    "system": _EVERY_MESSAGE,
    "ai": _EVERY_MESSAGE | {"layout"},
    "tool": _EVERY_MESSAGE | {"tool_call_id_key"},
}
"""Per message kind, what the readers keep on it and the writer reads. ``role`` and ``event``
are read on every kind, as documented: a role is refused unless it is written (a role of the
message's kind; a SystemMessage's own), and ``event`` unless ``drop=["event_extras"]`` leaves
it out."""

PART_KEYS: Mapping[str, frozenset[str]] = {
    "text": frozenset(),
    "refusal": frozenset(),
    "opaque": frozenset(),
    "reasoning": frozenset(("content_is_null", "num_tokens", "additional_information", "from",
                            "also")),
    "image": frozenset(("path", "image_mimetype", DATA_URL)),
    "audio": frozenset(("path", "format", DATA_URL)),
}
VIDEO_KEYS = frozenset(("block_type", "path", DATA_URL, "detail", "fps", "video_mimetype"))
DOCUMENT_KEYS = frozenset(("path", DATA_URL, "document_mimetype"))
"""A ``FilePart`` keeps a video's keys when ``block_type`` says ``"video"``, else a
document's."""
CALL_KEYS = frozenset(("kwargs_text", "entry", "entry_index", "in_blocks", "function_call",
                       "tool_call_id"))
CITATION_KEYS = frozenset(("annotation", "absent"))
AUDIO_KEYS = frozenset(("audio", "reference_audio_id", "format"))

_MESSAGE_NAMES = {"human": "a user message", "system": "a system message",
                  "ai": "an assistant message", "tool": "a tool result"}
_KIND_NAMES = {**_MESSAGE_NAMES, "ai": "an assistant-side message"}

REASONING_KEYS = ("reasoning_content", "reasoning")
"""The ``additional_kwargs`` keys of an assistant-side message that hold the model's reasoning
text (``_reasoning``)."""
REASONING_MARK = frozenset(("from", "also"))
"""What a reasoning part read from one of them keeps: the key, and the other key when both held
its text. Such a part is written back there only as an assistant's first part."""

LIFTED_KWARGS: Mapping[str, frozenset[str]] = {
    "human": frozenset(("name",)),
    "system": frozenset(("name",)),
    "tool": frozenset(("name", *RESULT_ID_KEYS)),
    "ai": frozenset(("name", "tool_calls", "function_call", "refusal", "audio",
                     "reference_audio_id", "annotations", *REASONING_KEYS)),
}
"""Per message kind, the ``additional_kwargs`` keys the reader reads into a typed field (a
value of the right type) and the writer writes from it."""


def own(metadata: dict[str, Any], where: str) -> dict[str, Any]:
    """``metadata["llama_index"]`` (``{}`` when absent); ``where``: the holder's path. A
    namespace that is there but no dict (a null one too, which would be left out without a
    word) is refused."""
    kept = metadata.get(NAME)
    if kept is None and NAME not in metadata:
        return {}
    if type(kept) is not dict:
        raise not_representable(
            f"metadata['{NAME}'] holds what to_messages keeps there, a dict; found "
            f"{short_repr(kept)}",
            f"{where}.metadata.{NAME}",
        )
    return kept


def refuse_unknown_keys(
    kept: dict[str, Any], known: frozenset[str], what: str, where: str
) -> None:
    """Refuse a key of ``kept`` (the namespace on the element at ``where``) that no reader
    keeps on ``what``, so that no writer writes it."""
    if kept.keys() <= known:
        return  # (the usual case, at C speed)
    for key in kept:
        if key not in known:
            raise not_representable(
                f"{json_path(f'metadata.{NAME}', key)} is no key the {NAME} reader keeps on "
                f"{what} (it keeps {', '.join(sorted(known)) or 'nothing there'}): nothing "
                f"writes it, so it would be lost",
                json_path(f"{where}.metadata.{NAME}", key),
            )


def not_written(key: str, detail: str, where: str) -> Exception:
    """``not_representable`` at a kept key (of the element at ``where``) whose value no
    writer writes."""
    return not_representable(f"metadata['{NAME}']['{key}'] {detail}: nothing writes it, so it "
                             f"would be lost", f"{where}.metadata.{NAME}.{key}")


def check_message_kept(kept: dict[str, Any], kind: str, where: str) -> None:
    """Refuse a kept message field the writer could only write over typed data, or not at
    all (``kind``: the message's type; ``where``: its path)."""
    if not kept.keys() <= MESSAGE_KEYS[kind]:
        refuse_unknown_keys(kept, MESSAGE_KEYS[kind], _MESSAGE_NAMES[kind], where)
    at = f"{where}.metadata.{NAME}"
    if "role" in kept and type(kept["role"]) is not str:
        raise not_representable(
            f"metadata['{NAME}']['role'] keeps the ChatMessage's role, a string; found "
            f"{short_repr(kept['role'])}",
            f"{at}.role",
        )
    if "tool_call_id_key" in kept and kept["tool_call_id_key"] not in RESULT_ID_KEYS:
        raise not_representable(
            f"metadata['{NAME}']['tool_call_id_key'] names the additional_kwargs key a tool "
            f"result gives its call id under, {' or '.join(map(repr, RESULT_ID_KEYS))}; "
            f"found {short_repr(kept['tool_call_id_key'])}, under which the call id would "
            f"read back as something else (or as nothing)",
            f"{at}.tool_call_id_key",
        )
    layout = kept.get("layout")
    if "layout" in kept and (type(layout) is not list or not all(
        type(token) is str and token in LAYOUT_TOKENS for token in layout
    )):
        raise not_representable(
            f"metadata['{NAME}']['layout'] is the order of the message's blocks, a list of "
            f"'part' and 'call'; found {short_repr(layout)}",
            f"{at}.layout",
        )
    if "additional_kwargs" in kept and type(kept["additional_kwargs"]) is not dict:
        raise not_representable(
            f"metadata['{NAME}']['additional_kwargs'] keeps what is left of the ChatMessage's "
            f"additional_kwargs, a dict; found {short_repr(kept['additional_kwargs'])}",
            f"{at}.additional_kwargs",
        )


def check_tool_call_id_key(kept: dict[str, Any], call_id: str | None, where: str) -> None:
    """``tool_call_id_key`` names where a result's call id goes: with no call id, nothing."""
    if call_id is None and "tool_call_id_key" in kept:
        raise not_written("tool_call_id_key", f"names the key the call id is written under "
                          f"({short_repr(kept['tool_call_id_key'])}), but the result has no "
                          f"call id", where)


def contradicting_role(stored: str, written: str, roles: Mapping[str, str], kind: str,
                       where: str) -> Exception:
    """``not_representable`` at a kept ``role`` that is not the one written (``roles``: each
    LlamaIndex role's kind of message; ``kind``: the message's). A role of the message's kind
    is written (``chatbot``), but another kind's is not, nor one that is not the
    SystemMessage's own ``role``: it would be left out."""
    stored_kind = roles.get(stored)
    if stored_kind is None:
        said = f"is no LlamaIndex role ({', '.join(roles)})"
    elif kind == "system":
        said = f"is not the SystemMessage's role ({written!r})"
    else:
        said = f"is the role of {_KIND_NAMES[stored_kind]}, not of {_MESSAGE_NAMES[kind]}"
    return not_representable(
        f"metadata['{NAME}']['role'] {short_repr(stored)} {said}: the ChatMessage is written "
        f"with the role {written!r}, so the kept role would be lost",
        f"{where}.metadata.{NAME}.role",
    )


_ABSENT = object()


def check_kept_kwargs(
    stored: dict[str, Any], written: dict[str, Any], message: Message, where: str
) -> None:
    """Refuse a key of the kept ``additional_kwargs`` that the reader reads into a typed field
    when the value written there from the typed message is not the kept one: the kept value
    would be written over, or left out (a value the reader reads into the field is not written
    from the metadata unless it is the typed one). ``where``: the message's path."""
    lifted = LIFTED_KWARGS[message.type]
    for key in stored:
        if key in lifted and not same_json(stored[key], found := written.get(key, _ABSENT)):
            writes = "nothing" if found is _ABSENT else short_repr(found)
            raise not_representable(
                f"metadata['{NAME}']['additional_kwargs'][{key!r}] keeps "
                f"{short_repr(stored[key])} under the key the reader reads "
                f"{_typed_home(key, message)} from, where the writer writes {writes}: the kept "
                f"value contradicts the typed message, and would be lost",
                json_path(f"{where}.metadata.{NAME}.additional_kwargs", key),
            )


def _typed_home(key: str, message: Message) -> str:
    if key == "name":
        return f"the message's name (name={message.name!r})"
    if key in RESULT_ID_KEYS:
        return f"the result's call id (tool_call_id={getattr(message, 'tool_call_id', None)!r})"
    assert isinstance(message, AIMessage)
    if key in ("tool_calls", "function_call"):
        return f"the message's tool calls ({len(message.tool_calls)} of them)"
    if key == "refusal":
        return "the message's refusal (a last RefusalPart)"
    if key == "annotations":
        return f"the message's citations ({len(message.citations)} of them)"
    if key in REASONING_KEYS:
        return "the message's reasoning (a first ReasoningPart marked 'from' it)"
    return f"the message's spoken reply (audio={'None' if message.audio is None else 'set'})"


def check_call_kept(call: ToolCall, where: str, *, is_last: bool) -> None:
    """Refuse a kept key or value of a call that the writer does not write, and a kept entry
    that would give a call without an id one (``where``: the call's path; ``is_last``:
    whether it is its message's last call). The writer writes the entry's other fields as
    they were."""
    kept = own(call.metadata, where)
    if not kept:
        return
    if not _usual_call_kept(kept):
        refuse_unknown_keys(kept, CALL_KEYS, "a tool call", where)
        _check_call_values(call, kept, where, is_last)
    entry = kept.get("entry")
    if call.id is not None or type(entry) is not dict:
        return
    is_selection = call.kind != "custom" and "function" not in entry and "tool_kwargs" in entry
    key = "tool_id" if is_selection else "id"
    if entry.get(key) is not None:
        raise not_representable(
            f"the call has no id, but metadata['{NAME}']['entry'] keeps {key}="
            f"{short_repr(entry[key])}: written, the entry would read back as a call with "
            f"that id",
            f"{where}.metadata.{NAME}.entry.{key}",
        )


_USUAL_CALL_TYPES = {"kwargs_text": str, "entry": dict, "entry_index": int, "in_blocks": bool}


def _usual_call_kept(kept: dict[str, Any]) -> bool:
    """Whether a call keeps what the reader usually keeps, each value of its type: an entry
    (with its index and ``in_blocks``), ``kwargs_text``, or both (one pass, for speed: anything
    else is looked at key by key)."""
    for key, value in kept.items():
        if type(value) is not _USUAL_CALL_TYPES.get(key):
            return False
    return "entry" in kept or (len(kept) == 1 and "kwargs_text" in kept)


def _check_call_values(call: ToolCall, kept: dict[str, Any], where: str, is_last: bool) -> None:
    if type(kept.get("kwargs_text", "")) is not str:
        raise not_written("kwargs_text", f"keeps the ToolCallBlock's arguments as JSON text; "
                          f"found {short_repr(kept['kwargs_text'])}", where)
    if "entry" in kept:
        if type(kept["entry"]) is not dict:
            raise not_written("entry", f"keeps the call's additional_kwargs['tool_calls'] "
                              f"entry, a dict; found {short_repr(kept['entry'])}", where)
        if type(kept.get("entry_index", 0)) is not int:
            raise not_written("entry_index", f"is the entry's position, an int; found "
                              f"{short_repr(kept['entry_index'])}", where)
        if type(kept.get("in_blocks", False)) is not bool:
            raise not_written("in_blocks", f"says whether the call has a ToolCallBlock, a "
                              f"bool; found {short_repr(kept['in_blocks'])}", where)
    else:
        for key in ("entry_index", "in_blocks"):
            if key in kept:
                raise not_written(key, "says where the call's kept entry goes, but the call "
                                  "keeps no entry", where)
    if "tool_call_id" in kept:
        _check_empty_id(call, kept, where)
    if "function_call" in kept:
        legacy = kept["function_call"]
        if type(legacy) is not dict:
            found = f"found {short_repr(legacy)}"
        elif "entry" in kept:
            found = "the call keeps an entry too, and is written as that"
        elif not (is_last and call.id is None and call.kind == "function"):
            found = ("only the message's last call, a function call without an id, is written "
                     "as one")
        else:
            return
        raise not_written("function_call", f"keeps the legacy additional_kwargs"
                          f"['function_call'] dict of the call; {found}", where)


def _check_empty_id(call: ToolCall, kept: dict[str, Any], where: str) -> None:
    """A kept ``tool_call_id`` is the ``""`` of the ToolCallBlock of a call without an id."""
    said = kept["tool_call_id"]
    if type(said) is not str or said != "":
        found = f"found {short_repr(said)}"
    elif call.id is not None:
        found = f"the call has the id {call.id!r}, which is written"
    elif call.kind != "function" or "entry" in kept or "function_call" in kept:
        found = "the call is written as an additional_kwargs entry, which has no block"
    else:
        return
    raise not_written("tool_call_id", f"keeps the \"\" of the ToolCallBlock of a call without "
                      f"an id; {found}", where)


def check_part_kept(part: Part, kept: dict[str, Any], where: str) -> None:
    """Refuse a key of a part's kept namespace that no reader keeps on its kind, and a value
    of a known key that the writer does not write (``where``: the part's path)."""
    kind = part.type
    if kind == "file":
        video = kept.get("block_type")
        if "block_type" in kept and video != "video":
            raise not_written("block_type", f"is 'video' when to_messages keeps it (a "
                              f"VideoBlock); found {short_repr(video)}", where)
        known = VIDEO_KEYS if video == "video" else DOCUMENT_KEYS
        if not kept.keys() <= known:
            refuse_unknown_keys(kept, known, "a file part of a video" if video == "video"
                                else "a file part (a document)", where)
    elif not kept.keys() <= PART_KEYS[kind]:
        refuse_unknown_keys(kept, PART_KEYS[kind], f"{with_article(kind)} part", where)
    if kind == "reasoning":
        if not REASONING_MARK.isdisjoint(kept):
            key = "from" if "from" in kept else "also"
            raise not_representable(
                f"this reasoning part is marked as read from an assistant-side message's "
                f"additional_kwargs (metadata.{NAME}.{key} = {short_repr(kept[key])}), which "
                f"it goes back to only as the first part of an assistant message (the reader "
                f"puts it first); take the mark out of its metadata to write it as a "
                f"ThinkingBlock",
                f"{where}.metadata.{NAME}.{key}",
            )
        _check_reasoning_values(kept, where)
        return
    inline = kept.get(DATA_URL, True)
    if inline is not True:
        raise not_written(DATA_URL, f"is true when to_messages keeps it (the block gave its "
                          f"data as a base64 data: URL); found {short_repr(inline)}", where)
    for key in ("path", "detail", "fps"):
        if key in kept and kept[key] is None:
            raise not_written(key, "is kept only when the block has one; found null, which "
                              "is no block's", where)
    if type(kept.get("path", "")) is not str:
        raise not_written("path", f"is the block's local path, text; found "
                          f"{short_repr(kept['path'])}", where)
    if DATA_URL in kept:
        return  # the type field kept beside a data: URL is checked where it is written
    for key in ("video_mimetype", "document_mimetype"):
        if key in kept:
            raise not_written(key, f"is kept only beside {DATA_URL}: true (the type a block "
                              f"says besides its data: URL); the part's mime_type says the "
                              f"type here", where)
    if "image_mimetype" in kept:
        _check_image_mimetype(part, kept["image_mimetype"], where)
    if "format" in kept:
        _check_audio_format(part, kept["format"], where)


def _check_image_mimetype(part: Part, stored: Any, where: str) -> None:
    """Without a data: URL, ``image_mimetype: null`` says an image by URL (or path) without
    a mime type had none where LlamaIndex would derive one."""
    data, mime_type = getattr(part, "data", None), getattr(part, "mime_type", None)
    if stored is not None or data is not None or mime_type is not None:
        raise not_written("image_mimetype", f"is null when to_messages keeps it without "
                          f"{DATA_URL} (an image without data or a mime type); found "
                          f"{short_repr(stored)} on a part with data set: "
                          f"{data is not None}, mime_type={mime_type!r}", where)


def _check_audio_format(part: Part, stored: Any, where: str) -> None:
    """Without a data: URL, ``format`` is the AudioBlock's own spelling of the part's mime
    type (``"mpeg"`` for audio/mpeg), or ``""`` on a part without one."""
    mime_type = getattr(part, "mime_type", None)
    if stored == "" and mime_type is None:
        return
    if type(stored) is str and stored and mime_type is not None and canonical_audio_mime_type(
        audio_mime_type(stored)
    ) == canonical_audio_mime_type(mime_type):
        return
    raise not_written("format", f"is the AudioBlock's spelling of the part's mime type (or "
                      f"'' beside none); found {short_repr(stored)} beside mime_type="
                      f"{mime_type!r}", where)


_REASONING_TYPES = {"content_is_null": bool, "num_tokens": int, "additional_information": dict}


def usual_reasoning_kept(kept: dict[str, Any]) -> bool:
    """Whether a reasoning part keeps only what the reader keeps there, as it keeps it (one
    pass, for speed; ``check_part_kept`` says what is wrong otherwise)."""
    for key, value in kept.items():
        if type(value) is not _REASONING_TYPES.get(key) or value is False or value == {}:
            return False
    return True


_SOME_INFORMATION = {"": None}
"""What an absent ``additional_information`` is taken for below: a dict that holds something."""


def _check_reasoning_values(kept: dict[str, Any], where: str) -> None:
    if kept.get("content_is_null", True) is not True:
        raise not_written("content_is_null", f"is true when to_messages keeps it (the "
                          f"ThinkingBlock had no content); found "
                          f"{short_repr(kept['content_is_null'])}", where)
    if type(kept.get("num_tokens", 0)) is not int:
        raise not_written("num_tokens", f"is the ThinkingBlock's token count, an int; found "
                          f"{short_repr(kept['num_tokens'])}", where)
    info = kept.get("additional_information", _SOME_INFORMATION)
    if type(info) is not dict or not info:
        raise not_written("additional_information", f"keeps the ThinkingBlock's "
                          f"additional_information when it holds something, a dict; found "
                          f"{short_repr(info)}", where)
