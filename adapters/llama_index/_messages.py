"""One LlamaIndex ``ChatMessage`` (its ``model_dump(mode="json")`` dict) <-> one typed message.

Shared by ``to_messages`` (chat histories) and ``events_to_messages`` (agent event streams),
so the same ChatMessage becomes the same typed message on both roads.

What a typed message cannot hold is kept under ``metadata["llama_index"]``:

* ``role``: the source role when it is not the kind's default (function, chatbot, model;
  ``developer`` is ``SystemMessage.role``);
* ``additional_kwargs``: what is left of ``additional_kwargs`` after the typed fields were
  lifted (``name``; ``tool_call_id`` / ``call_id`` of a tool result; ``tool_calls``,
  ``function_call``, ``refusal``, ``reference_audio_id``, ``audio`` and ``annotations`` of an
  assistant-side message), verbatim. Legacy ``images`` (``ImageDocument`` dumps, whose images
  LlamaIndex already appended to the blocks) stay there too;
* ``tool_call_id_key``: ``"call_id"`` when a tool result named its call with that key;
* ``layout``: the order of content blocks and tool-call blocks, when the calls do not all
  come after the content.

Tool calls (and what each ``ToolCall`` keeps) are in ``_calls``; refusals, spoken replies and
citations in ``_reply``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    _build,
)
from tracebridge._json import NotPlainJson, json_copy, json_copy_checked
from tracebridge._optional import module_of, require
from tracebridge.errors import short_repr

from ._blocks import (
    NAME,
    Llama,
    block_to_part,
    fail,
    json_checked,
    llama_types,
    not_representable,
)
from ._calls import block_call, blocks_with_calls, parse_args, reconcile_calls
from ._json_form import check_json_form, refuse_surrogate_key
from ._kept import (
    LIFTED_KWARGS,
    REASONING_KEYS,
    RESULT_ID_KEYS,
    check_call_kept,
    check_kept_kwargs,
    check_message_kept,
    check_tool_call_id_key,
    contradicting_role,
    own,
)
from ._parts import part_to_block
from ._reasoning import put_reasoning, take_reasoning
from ._reply import (
    put_audio,
    put_citations,
    put_refusal,
    take_audio,
    take_citations,
    take_refusal,
)

ROLE_KIND = {
    "system": "system",
    "developer": "system",
    "user": "human",
    "assistant": "ai",
    "chatbot": "ai",
    "model": "ai",
    "tool": "tool",
    "function": "tool",
}
"""All eight ``MessageRole`` values and the typed message each becomes."""

DEFAULT_ROLE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
"""The role ``from_messages`` writes for each kind unless the metadata names another."""

_CHAT_MESSAGE_KEYS = frozenset({"role", "additional_kwargs", "blocks"})


def is_chat_message(item: Any) -> bool:
    """A llama-index ``ChatMessage`` object, told without importing llama_index."""
    kind = type(item)
    return kind is Llama.chat_message or (
        kind.__name__ == "ChatMessage" and module_of(kind).startswith("llama_index.")
    )


def chat_message_dump(
    message: Any, index: int | None = None, where: str = "message"
) -> dict[str, Any]:
    """``message.model_dump(mode="json")`` of a ChatMessage object, written out by hand where
    that is plain: text blocks, tool-call blocks with text or flat arguments, and
    ``additional_kwargs`` of strings under ASCII keys. Anything else is left to pydantic's
    serializer, and a value it would write as another (a NaN as null, a key that is not a
    string as its text) is ``unserializable_value`` there (``where``: the message's path,
    ``index`` its position), as is what it cannot write (a key holding a lone surrogate)."""
    extra = message.additional_kwargs
    if type(extra) is not dict:
        return _pydantic_dump(message, index, where)
    if extra:
        for key, value in extra.items():
            if type(value) is not str or not (type(key) is str and key.isascii()):
                return _pydantic_dump(message, index, where)
    role = message.role
    role = role._value_ if type(role) is Llama.role_type else getattr(role, "value", role)
    blocks = message.blocks
    if type(blocks) is list and len(blocks) == 1:  # the common case, without a loop
        block = blocks[0]
        if type(block) is Llama.text_block and type(text := block.text) is str:
            return {"role": role, "additional_kwargs": dict(extra),
                    "blocks": [{"block_type": "text", "text": text}]}
    return {"role": role, "additional_kwargs": dict(extra),
            "blocks": blocks_dump(blocks, index, f"{where}.blocks")}


def _pydantic_dump(message: Any, index: int | None, where: str) -> dict[str, Any]:
    dumped: dict[str, Any] = message.model_dump(mode="json")
    check_json_form(message, index, where)
    blocks, written = message.blocks, dumped.get("blocks")
    if type(blocks) is list and type(written) is list and len(blocks) == len(written):
        for block, block_dump in zip(blocks, written, strict=True):
            _typed_by_class(block, block_dump)
    return dumped


def _typed_by_class(block: Any, dumped: Any) -> None:
    """A text or tool-call block's dump with the ``block_type`` of its class.

    LlamaIndex tells these blocks by their class (``isinstance``), and so do the hand-written
    dumps and the fast paths; a ``block_type`` changed after the block was made would
    otherwise be read on some paths and not on others."""
    llama = Llama.loaded()
    if type(dumped) is dict:
        if type(block) is llama.text_block:
            dumped["block_type"] = "text"
        elif type(block) is llama.tool_call_block:
            dumped["block_type"] = "tool_call"


def blocks_dump(
    blocks: list[Any], index: int | None = None, where: str = "blocks"
) -> list[Any]:
    """``[block.model_dump(mode="json") for block in blocks]``, by hand where it is plain;
    a block left to pydantic that holds what it would write as another value is
    ``unserializable_value`` there (``where``: the path of the list).

    Anything but a list (set after the message was made) falls here, so that the caller
    asks LlamaIndex what is wrong with it: an empty string or dict was read as no blocks."""
    if type(blocks) is not list:
        raise TypeError(f"blocks must be a list, got {type(blocks).__name__}")
    llama = Llama if Llama.chat_message is not None else Llama.loaded()
    text_block, call_block = llama.text_block, llama.tool_call_block
    dumped: list[Any] = []
    for j, block in enumerate(blocks):
        kind = type(block)
        if kind is text_block and type(text := block.text) is str:
            dumped.append({"block_type": "text", "text": text})
        elif kind is call_block and _plain_call(block):
            dumped.append({"block_type": "tool_call", "tool_call_id": block.tool_call_id,
                           "tool_name": block.tool_name, "tool_kwargs": block.tool_kwargs})
        else:
            dumped.append(block_dump := block.model_dump(mode="json"))
            check_json_form(block, index, f"{where}[{j}]")
            _typed_by_class(block, block_dump)
    return dumped


_FLAT = frozenset({str, int, bool, type(None)})
_ID_TYPES = frozenset({str, type(None)})


def _plain_call(block: Any) -> bool:
    """A ToolCallBlock whose JSON dump is its fields as they are (a key holding a lone
    surrogate is not written as itself: a non-ASCII key is left to pydantic's serializer)."""
    if type(block.tool_name) is not str or type(block.tool_call_id) not in _ID_TYPES:
        return False
    kwargs = block.tool_kwargs
    if type(kwargs) is str:
        return True
    if type(kwargs) is not dict:
        return False
    for key, value in kwargs.items():
        if type(key) is not str or not key.isascii() or type(value) not in _FLAT:
            return False
    return True


def message_from_dump(dump: Any, index: int, where: str) -> Message:
    """The typed message for one ChatMessage dict; errors point at ``where`` / ``index``."""
    cls, fields = message_fields(dump, index, where)
    return build_message(cls, fields)


def build_message(cls: type[Message], fields: dict[str, Any]) -> Message:
    """``cls(**fields)`` for fields that ``message_fields`` gave (and a caller added checked
    values to): every one is checked already (the text a str, parts and calls built models,
    ids and names str, the metadata plain JSON: additional_kwargs through json_checked, the
    rest strings and lists of them), so only citations and audio still go through the model."""
    if "citations" in fields or "audio" in fields:
        return cls(**fields)
    build: Any = _BUILDERS[cls]
    built: Message = build(**fields)
    return built


_BUILDERS: dict[type, Any] = {
    HumanMessage: _build.human,
    AIMessage: _build.ai,
    ToolMessage: _build.tool,
    SystemMessage: _build.system,
}


def message_fields(dump: Any, index: int, where: str) -> tuple[type[Message], dict[str, Any]]:
    """The typed message class for one ChatMessage dict and the fields to build it with
    (only those that are not the class's defaults), for a caller that adds its own."""
    if type(dump) is not dict:
        raise fail(
            "malformed_event",
            f"expected a ChatMessage or its model_dump(mode='json') dict, "
            f"got {type(dump).__name__} {short_repr(dump)}",
            index,
            where,
        )
    if not dump.keys() <= _CHAT_MESSAGE_KEYS or "role" not in dump or "blocks" not in dump:
        _refuse_keys(dump, index, where)
    role = dump["role"]
    kind = ROLE_KIND.get(role) if type(role) is str else None
    if kind is None:
        raise fail(
            "unknown_role",
            f"unknown role {short_repr(role)}; LlamaIndex roles are {', '.join(ROLE_KIND)}"
            + _PYTHON_MODE_HINT * _is_message_role(role),
            index,
            f"{where}.role",
        )
    blocks = dump["blocks"]
    if type(blocks) is not list:
        raise fail("malformed_event", f"'blocks' must be a list, got {type(blocks).__name__}",
                   index, f"{where}.blocks")
    extra: dict[str, Any] = {}
    given = dump.get("additional_kwargs", {})
    if type(given) is not dict or given:
        extra = _kwargs_copy(given, index, f"{where}.additional_kwargs")
    if extra.get("images"):
        _check_legacy_images(extra["images"], index, f"{where}.additional_kwargs.images")
    kept: dict[str, Any] = {}
    if role != DEFAULT_ROLE[kind] and kind != "system":
        kept["role"] = role
    fields: dict[str, Any] = {}
    if extra and type(extra.get("name")) is str:
        fields["name"] = extra.pop("name")
    refusal = reasoning = None
    if kind == "ai" and extra:
        reasoning = take_reasoning(extra, index, where)
        refusal = take_refusal(extra)
        audio, blocks = take_audio(extra, blocks, index, where)
        if audio is not None:
            fields["audio"] = audio
        citations = take_citations(extra, index, where)
        if citations:
            fields["citations"] = citations
    parts, block_calls, layout = _split_blocks(blocks, kind == "ai", index, where)
    plain = len(parts) == 1 and type(parts[0]) is str  # one text block: a plain string
    fields["content"] = parts[0] if plain else parts
    cls: type[Message]
    if kind == "ai":
        cls = AIMessage
        if refusal is not None or reasoning is not None:
            fields["content"] = [TextPart(text=p) if type(p) is str else p for p in parts]
            if reasoning is not None:
                fields["content"].insert(0, reasoning)
            if refusal is not None:
                fields["content"].append(refusal)
        if block_calls or extra:
            call_blocks = [block for block in blocks if block["block_type"] == "tool_call"]
            calls = reconcile_calls(call_blocks, block_calls, extra, index, where)
            if calls:
                fields["tool_calls"] = calls
        first_call = layout.index("call") if "call" in layout else len(layout)
        if "part" in layout[first_call:]:
            kept["layout"] = layout  # a part after a call: not the order calls are written in
    elif kind == "tool":
        cls = ToolMessage
        call_id = _lift_result_id(extra, kept, index, where) if extra else None
        if call_id is not None:
            fields["tool_call_id"] = call_id
    elif kind == "human":
        cls = HumanMessage
    else:
        cls = SystemMessage
        if role != "system":
            fields["role"] = role
    if extra:
        kept["additional_kwargs"] = extra
    if kept:
        fields["metadata"] = {NAME: kept}
    return cls, fields


_PYTHON_MODE_HINT = (
    " (given as a MessageRole object, as a Python-mode model_dump() keeps it, with data as "
    "bytes and paths and URLs as objects; a ChatMessage dict is its model_dump(mode='json'), "
    "or pass the ChatMessage itself)"
)


def _is_message_role(role: Any) -> bool:
    """A LlamaIndex ``MessageRole`` member, told without importing llama_index."""
    kind = type(role)
    return kind.__name__ == "MessageRole" and module_of(kind).startswith("llama_index.") and (
        type(getattr(role, "value", None)) is str
    )


def _kwargs_copy(given: Any, index: int, path: str) -> dict[str, Any]:
    """A copy of ``additional_kwargs`` (nothing of it shared with the source, which its owner
    may change), or the error where it is not a JSON object."""
    if type(given) is dict:
        try:
            copied: dict[str, Any] = json_copy_checked(given)
            return copied
        except NotPlainJson:
            pass
    checked: dict[str, Any] = json_copy(json_checked(given, index, path, is_object=True))
    return checked  # (the error, where it is not JSON: json_checked says where)


def _refuse_keys(dump: dict[str, Any], index: int, where: str) -> None:
    for key in ("role", "blocks"):
        if key not in dump:
            raise fail("malformed_event", f"a ChatMessage dict needs {key!r}; found keys "
                       f"{sorted(dump)}", index, f"{where}.{key}")
    unknown = sorted(set(dump) - _CHAT_MESSAGE_KEYS)
    raise fail("malformed_event", f"unknown ChatMessage fields {unknown}; a ChatMessage "
               f"has {sorted(_CHAT_MESSAGE_KEYS)}", index, f"{where}.{unknown[0]}")


def _check_legacy_images(images: Any, index: int, path: str) -> None:
    """``additional_kwargs["images"]``: ``ImageDocument``s that LlamaIndex turned into image
    blocks when the message was built; as JSON, their dumps. Anything else is a message
    LlamaIndex cannot build (its validator calls ``resolve_image`` on each), and a dump that
    does not dump back as itself would not be written back as it was."""
    if type(images) is not list:
        raise fail("malformed_event", f"legacy 'images' must be a list of ImageDocument dumps, "
                   f"got {short_repr(images)}", index, path)
    for k, document in enumerate(images):
        try:
            (rebuilt,) = _dumped_images([document])
        except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
            rebuilt = None
        if rebuilt != document:
            raise fail("malformed_event", f"legacy 'images' must hold ImageDocument dumps, got "
                       f"{short_repr(document)}", index, f"{path}[{k}]")


def legacy_image_documents(images: list[Any]) -> list[Any]:
    """The ``ImageDocument`` objects of ``additional_kwargs["images"]`` dumps."""
    schema = require("llama_index.core.schema", adapter=NAME, extra="llama-index",
                     package="llama-index-core")
    return [schema.ImageDocument.model_validate(document) for document in images]


def _dumped_images(images: list[Any]) -> list[Any]:
    """The documents rebuilt from ``images`` as a ChatMessage dumps them."""
    holder = llama_types().ChatMessage()
    holder.additional_kwargs["images"] = legacy_image_documents(images)
    dumped: list[Any] = holder.model_dump(mode="json")["additional_kwargs"]["images"]
    return dumped


def _is_plain_text(parts: list[Any]) -> bool:
    return len(parts) == 1 and parts[0].type == "text" and not parts[0].metadata


def _is_text_block(block: Any) -> bool:
    """A text block with its text and nothing else (the common case, read without a call)."""
    return (type(block) is dict and len(block) == 2 and block.get("block_type") == "text"
            and type(block.get("text")) is str)


def _split_blocks(
    blocks: list[Any], is_ai: bool, index: int, where: str
) -> tuple[list[Any], list[ToolCall], list[str]]:
    parts: list[Any] = []
    calls: list[ToolCall] = []
    layout: list[str] = []
    for j, block in enumerate(blocks):
        if _is_text_block(block):
            parts.append(block["text"])  # a TextPart below, unless it is the whole content
            layout.append("part")
            continue
        path = f"{where}.blocks[{j}]"
        if type(block) is not dict or type(block.get("block_type")) is not str:
            raise fail("malformed_event", f"a block must be a dict with a 'block_type', got "
                       f"{short_repr(block)}", index, path)
        if is_ai and block["block_type"] == "tool_call":
            calls.append(block_call(block, index, path))
            layout.append("call")
        else:
            parts.append(block_to_part(block, index, path))
            layout.append("part")
    if len(parts) == 1 and type(parts[0]) is not str and _is_plain_text(parts):
        parts = [parts[0].text]
    if len(parts) == 1 and type(parts[0]) is str:
        return parts, calls, layout  # the whole content: a plain string
    # what block_to_part makes of a text block
    return [TextPart(text=p) if type(p) is str else p for p in parts], calls, layout


def _lift_result_id(extra: dict[str, Any], kept: dict[str, Any], index: int, where: str) -> Any:
    """The call id a tool result names (a null one, or the ``""`` LlamaIndex gives the result
    of a call without an id, is kept verbatim with the kwargs: the result has no call id)."""
    found = {key: extra[key] for key in RESULT_ID_KEYS if not _no_call_id(extra.get(key))}
    for key, value in found.items():
        if type(value) is not str:
            raise fail("malformed_event", f"{key!r} must be a string, got {short_repr(value)}",
                       index, f"{where}.additional_kwargs.{key}")
    if len(set(found.values())) > 1:
        raise fail("conflicting_fields", f"'tool_call_id' {found['tool_call_id']!r} and "
                   f"'call_id' {found['call_id']!r} name different calls", index,
                   f"{where}.additional_kwargs.call_id")
    if "tool_call_id" in found:
        return extra.pop("tool_call_id")
    if "call_id" in found:
        kept["tool_call_id_key"] = "call_id"
        return extra.pop("call_id")
    return None


# --- the way back -------------------------------------------------------------------------


def _reads_back_unparsed(call: ToolCall, where: str) -> None:
    """Refuse a call whose unparsed argument text (``invalid_args``) the reader would take as
    arguments (a JSON object): written, it would come back as another call. No option fits:
    leaving the call out orphans its result, and writing it parsed "fixes" it."""
    assert call.invalid_args is not None
    args, invalid = parse_args(call.invalid_args, 0, where)
    if invalid is None:
        raise not_representable(
            f"tool call {call.name!r} has arguments that did not parse "
            f"(invalid_args={call.invalid_args!r}), but LlamaIndex reads that text as the "
            f"arguments {short_repr(args)}: it has no spelling that reads back unparsed",
            where,
        )


def dump_from_message(message: Message, k: int, drop: Collection[str]) -> dict[str, Any]:
    """The ChatMessage dict for one typed message (read from its own namespace only).

    The message ``id`` is provenance, like other adapters' metadata: a ChatMessage has no
    place for it and it is not written.
    """
    where = f"messages[{k}]"
    kept = own(message.metadata, where)
    if kept:
        check_message_kept(kept, message.type, where)
        if "event" in kept and "event_extras" not in drop:
            raise not_representable(
                f"metadata['{NAME}']['event'] keeps what only an event stream says "
                f"({short_repr(kept['event'])}); a ChatMessage has no place for it: "
                f"drop=['event_extras'] leaves it out",
                f"{where}.metadata.{NAME}.event",
            )
    role = message.role if isinstance(message, SystemMessage) else DEFAULT_ROLE[message.type]
    if "role" in kept and kept["role"] != role:  # (a string: checked above)
        stored = kept["role"]
        if ROLE_KIND.get(stored) != message.type or isinstance(message, SystemMessage):
            raise contradicting_role(stored, role, ROLE_KIND, message.type, where)
        role = stored
    extra = _kept_kwargs(kept, message)
    refuse_surrogate_key(extra, f"{where}.metadata.{NAME}.additional_kwargs")
    if extra.get("images"):
        _check_kept_images(extra["images"], f"{where}.metadata.{NAME}.additional_kwargs.images")
    if message.name is not None:
        extra["name"] = message.name
    is_ai = isinstance(message, AIMessage)
    first = 0
    if isinstance(message, AIMessage):
        content, first = put_reasoning(put_refusal(message, extra, where), extra, where)
    else:
        content = message.content
    written: Sequence[dict[str, Any] | None]
    if isinstance(content, str):
        written = blocks = [{"block_type": "text", "text": content}]
    else:
        written = [part_to_block(part, f"{where}.content[{j}]", drop, in_ai=is_ai)
                   for j, part in enumerate(content, first)]
        blocks = [block for block in written if block is not None]
    if isinstance(message, AIMessage):
        last = len(message.tool_calls) - 1
        for j, call in enumerate(message.tool_calls):
            check_call_kept(call, f"{where}.tool_calls[{j}]", is_last=j == last)
            if call.id == "":
                raise not_representable("a call's id is empty: LlamaIndex takes a "
                                         "ToolCallBlock's tool_call_id \"\" for no id, and it "
                                         "reads back as a call without an id (id=None)",
                                         f"{where}.tool_calls[{j}].id")
            if call.invalid_args is not None:
                _reads_back_unparsed(call, f"{where}.tool_calls[{j}].invalid_args")
            refuse_surrogate_key(call.args, f"{where}.tool_calls[{j}].args")
        blocks = blocks_with_calls(message, blocks, written, kept, extra, where)
        blocks = put_audio(message, blocks, extra, where, drop)
        put_citations(message, extra, drop, where)
    elif isinstance(message, ToolMessage):
        if message.is_error and "is_error" not in drop:
            raise not_representable("a ChatMessage cannot say a tool failed (is_error=True); "
                                     "drop=['is_error'] leaves the flag out",
                                     f"{where}.is_error")
        if kept:
            check_tool_call_id_key(kept, message.tool_call_id, where)
        if message.tool_call_id == "":
            raise not_representable("a result's call id is empty: LlamaIndex writes \"\" for "
                                     "the result of a call without an id, and it reads back as "
                                     "a result with no call id (tool_call_id=None)",
                                     f"{where}.tool_call_id")
        if message.tool_call_id is not None:
            extra[kept.get("tool_call_id_key", "tool_call_id")] = message.tool_call_id
    if "additional_kwargs" in kept and not LIFTED_KWARGS[message.type].isdisjoint(
        kept["additional_kwargs"]
    ):
        check_kept_kwargs(kept["additional_kwargs"], extra, message, where)
    return {"role": role, "additional_kwargs": extra, "blocks": blocks}


def _kept_kwargs(kept: dict[str, Any], message: Message) -> dict[str, Any]:
    """The kept ``additional_kwargs`` without any key the reader would lift into a typed field:
    the typed message, not its metadata, says what those hold (what it writes there is then
    held to the kept value, ``check_kept_kwargs``). A tool result's call id kept under the
    other key (given under both) is written there too: both name the one call."""
    stored = kept.get("additional_kwargs")
    if type(stored) is not dict:
        return {}
    kind = message.type
    return {key: json_copy(value) for key, value in stored.items()
            if not _is_lifted(key, value, kind) or _is_call_id(key, value, message)}


def _is_call_id(key: str, value: Any, message: Message) -> bool:
    """Whether a kept key is a tool result's call id key holding its call id."""
    return (isinstance(message, ToolMessage) and key in RESULT_ID_KEYS
            and value == message.tool_call_id)


def _no_call_id(value: Any) -> bool:
    """Whether a tool result's call id key says it answers a call without an id: null, or
    ``""`` (what FunctionAgent writes for such a call: ``ToolSelection.tool_id`` is text)."""
    return value is None or (type(value) is str and not value)


def _check_kept_images(images: Any, path: str) -> None:
    """Kept legacy ``images`` are written back as ``ImageDocument``s: only what the reader
    keeps there (their dumps, each dumping back as itself) is; anything else would be another
    document (or none), ``not_representable`` where it is."""
    try:
        _check_legacy_images(images, 0, path)
    except TraceError as error:
        raise not_representable(error.detail, error.path or path) from None


_LIFTED_TEXT = frozenset(("refusal", "reference_audio_id", *REASONING_KEYS))


def _is_lifted(key: str, value: Any, kind: str) -> bool:
    if key == "name":
        return type(value) is str
    if kind == "tool":  # a null or empty one is kept verbatim, as the reader keeps it
        return key in RESULT_ID_KEYS and not _no_call_id(value)
    if kind != "ai":
        return False
    if key in ("tool_calls", "annotations"):
        return type(value) is list and bool(value)
    if key in ("function_call", "audio"):
        return type(value) is dict
    return key in _LIFTED_TEXT and type(value) is str
