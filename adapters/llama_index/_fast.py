"""The common ChatMessage shapes, read and written without the general code's bookkeeping.

A message takes a fast path only when the general path (``_messages``) would map it with no
error possible and keep nothing in metadata: text blocks, then (on an assistant message)
``ToolCallBlock``s with a string id and non-empty JSON arguments as a dict, one of the five
roles a typed message says by itself (user, assistant, system, developer, tool), and
``additional_kwargs`` that hold at most a string ``name`` (and a tool result's string
``tool_call_id``). Everything else returns None and goes the general way, which gives the
same typed message, the ChatMessage, or the error. The tests in
``tests/test_llama_index_fast.py`` hold each fast path to the general one.

Reading builds typed messages through ``tracebridge._build`` (the values are checked here as
the models check them). Writing builds ``ChatMessage``, ``TextBlock`` and ``ToolCallBlock``
objects as LlamaIndex's validating constructor builds them from the same dict (instance dict,
fields set, no extra, no private values), once that has been seen to hold for the installed
version (``_writer_matches``); otherwise every message is written the general way.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    _build,
)
from tracebridge._json import NotPlainJson, json_copy, json_copy_checked, surrogate_key_in

from ._blocks import NAME, Llama
from ._messages import is_chat_message

# What a fast-path message needs besides its blocks: (role, additional_kwargs, content, calls)
Read = tuple[str, dict[str, Any], Any, list[ToolCall]]

_NO_KWARGS: dict[str, Any] = {}


def _content(texts: list[str]) -> Any:
    """What ``_messages._split_blocks`` makes of text blocks alone."""
    if len(texts) == 1:
        return texts[0]
    return [TextPart(text=text) for text in texts]


def dump_read(dump: Any) -> Read | None:
    """The parts of a ChatMessage dict in a common shape, or None."""
    if type(dump) is not dict:
        return None
    size = len(dump)
    if size == 3:
        extra = dump.get("additional_kwargs")
        if type(extra) is not dict:
            return None
    elif size == 2:
        extra = _NO_KWARGS
    else:
        return None
    role = dump.get("role")
    blocks = dump.get("blocks")
    if type(role) is not str or type(blocks) is not list:
        return None
    read = dump_blocks(blocks, role == "assistant")
    return None if read is None else (role, extra, read[0], read[1])


def _one_text(blocks: list[Any]) -> str | None:
    """The text of blocks that are one text block dict and nothing else, or None."""
    if len(blocks) == 1:
        block = blocks[0]
        if type(block) is dict and len(block) == 2 and block.get("block_type") == "text":
            text = block.get("text")
            if type(text) is str:
                return text
    return None


def read_dump(dump: Any) -> Message | None:
    """``build(dump_read(dump))``, the commonest shape (one text block, no
    ``additional_kwargs``) read at once."""
    if (type(dump) is dict and len(dump) == 3
            and type(extra := dump.get("additional_kwargs")) is dict and not extra):
        blocks, role = dump.get("blocks"), dump.get("role")
        if type(blocks) is list and type(role) is str and (text := _one_text(blocks)) is not None:
            if role == "user":
                return _build.human(text)
            if role == "assistant":
                return _build.ai(text)
    read = dump_read(dump)
    return None if read is None else build(read)


def response_read(dump: Any, agent: str) -> AIMessage | None:
    """The AIMessage of an ``AgentOutput`` response dict in a common shape (an assistant
    message without ``additional_kwargs``), named after the agent; or None."""
    if type(dump) is not dict or len(dump) != 3 or dump.get("role") != "assistant":
        return None
    extra, blocks = dump.get("additional_kwargs"), dump.get("blocks")
    if type(extra) is not dict or extra or type(blocks) is not list:
        return None
    if type(dump["role"]) is not str:
        return None
    text = _one_text(blocks)
    if text is not None:
        return _build.ai(text, None, agent)
    read = dump_blocks(blocks, True)
    return None if read is None else _build.ai(read[0], read[1], agent)


def dump_blocks(blocks: list[Any], assistant: bool) -> tuple[Any, list[ToolCall]] | None:
    """The content and calls of block dicts in a common shape, or None."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        if type(block) is not dict:
            return None
        kind = block.get("block_type")
        if kind == "text":
            text = block.get("text")
            if calls or len(block) != 2 or type(text) is not str:
                return None  # a text block after a call: the layout is kept
            texts.append(text)
        elif kind == "tool_call" and assistant and len(block) == 4:
            call = _call(block.get("tool_name"), block.get("tool_call_id"),
                         block.get("tool_kwargs"))
            if call is None:
                return None
            calls.append(call)
        else:
            return None
    return _content(texts), calls


def _call(name: Any, call_id: Any, kwargs: Any) -> ToolCall | None:
    if (type(name) is not str or type(call_id) is not str or not call_id
            or type(kwargs) is not dict or not kwargs):
        return None  # ("": no id to LlamaIndex, kept by the general reader)
    try:
        args = json_copy_checked(kwargs)
    except NotPlainJson:
        return None
    return _build.call(name, args, call_id)


def object_read(message: Any) -> Read | None:
    """The parts of a ChatMessage object in a common shape, or None (its JSON dump would be
    the same message: text blocks dump as ``{"block_type", "text"}``, ToolCallBlocks as their
    fields when no key in them holds a lone surrogate, ``additional_kwargs`` of strings as
    they are)."""
    llama = Llama.loaded()
    if type(message) is not llama.chat_message:
        return None
    role = message.role
    if type(role) is llama.role_type:
        role = role._value_
    elif type(role) is not str:
        return None
    extra = message.additional_kwargs
    blocks = message.blocks
    if type(extra) is not dict or type(blocks) is not list:
        return None
    read = object_blocks(blocks, role == "assistant")
    return None if read is None else (role, extra, read[0], read[1])


def object_blocks(blocks: list[Any], assistant: bool) -> tuple[Any, list[ToolCall]] | None:
    """The content and calls of block objects in a common shape, or None (``load`` first)."""
    text_block, call_block = Llama.text_block, Llama.tool_call_block
    if len(blocks) == 1 and type(blocks[0]) is text_block:  # the common case, at once
        text = blocks[0].text
        return (text, []) if type(text) is str else None
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        kind = type(block)
        if kind is text_block:
            text = block.text
            if calls or type(text) is not str:
                return None
            texts.append(text)
        elif kind is call_block and assistant:
            call = _call(block.tool_name, block.tool_call_id, block.tool_kwargs)
            if call is None or surrogate_key_in(call.args):  # (its dump changes such a key)
                return None
            calls.append(call)
        else:
            return None
    return _content(texts), calls


def build(read: Read) -> Message | None:
    """The typed message, when its role and ``additional_kwargs`` need no metadata."""
    role, extra, content, calls = read
    name = call_id = None
    for key, value in extra.items():
        if type(value) is not str:
            return None
        if key == "name":
            name = value
        elif key == "tool_call_id" and role == "tool" and value:  # ("": kept, no call id)
            call_id = value
        else:
            return None
    if role == "user":
        return _build.human(content, name)
    if role == "assistant":
        return _build.ai(content, calls, name)
    if role == "tool":
        return _build.tool(content, call_id, name)
    if role == "system" or role == "developer":
        return _build.system(content, role, name)
    return None


def read_item(item: Any) -> Message | None:
    """One ChatMessage (object or dict) in a common shape as a typed message, or None."""
    if type(item) is Llama.chat_message:
        fields = item.__dict__  # (its fields at one lookup: a pydantic attribute costs more)
        role, extra, blocks = (fields.get("role"), fields.get("additional_kwargs"),
                               fields.get("blocks"))
        if (type(role) is Llama.role_type and type(extra) is dict and not extra
                and type(blocks) is list and len(blocks) == 1
                and type(block := blocks[0]) is Llama.text_block
                and type(text := block.text) is str):
            if role is Llama.user:
                return _build.human(text)
            if role is Llama.assistant:
                return _build.ai(text)
    if type(item) is dict:
        read = dump_read(item)
    elif is_chat_message(item):
        read = object_read(item)
    else:
        return None
    return None if read is None else build(read)


# --- the way back -------------------------------------------------------------------------

_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

_TEXT_FIELDS = frozenset({"block_type", "text"})
_CALL_FIELDS = frozenset({"block_type", "tool_call_id", "tool_name", "tool_kwargs"})
_MESSAGE_FIELDS = frozenset({"role", "additional_kwargs", "blocks"})
# The builders below set every field, so each object's fields set is all its fields (a set
# of its own: LlamaIndex's models are not frozen, and setting a field adds to it).


def _chat_message(role: str, extra: dict[str, Any], blocks: list[Any]) -> Any:
    """``ChatMessage.model_validate({"role": role, "additional_kwargs": extra, "blocks":
    [block dicts]})`` for text and tool-call blocks built by ``_text`` and ``_tool_call``."""
    made = _new(Llama.chat_message)
    _set_dict(made, {"role": Llama.roles[role], "additional_kwargs": extra, "blocks": blocks})
    _set_fields_set(made, {"role", "additional_kwargs", "blocks"})
    _set_extra(made, None)
    _set_private(made, None)
    return made


def _text(text: str) -> Any:
    made = _new(Llama.text_block)
    _set_dict(made, {"block_type": "text", "text": text})
    _set_fields_set(made, {"block_type", "text"})
    _set_extra(made, None)
    _set_private(made, None)
    return made


def _tool_call(call: ToolCall) -> Any:
    made = _new(Llama.tool_call_block)
    _set_dict(made, {"block_type": "tool_call", "tool_call_id": call.id, "tool_name": call.name,
                     "tool_kwargs": json_copy(call.args)})
    _set_fields_set(made, {"block_type", "tool_call_id", "tool_name", "tool_kwargs"})
    _set_extra(made, None)
    _set_private(made, None)
    return made


def _same_object(made: Any, validated: Any) -> bool:
    """Two pydantic objects alike in class, fields, fields set, extra and private values."""
    if type(made) is not type(validated):
        return False
    if (made.__pydantic_fields_set__, made.__pydantic_extra__, made.__pydantic_private__) != (
        validated.__pydantic_fields_set__, validated.__pydantic_extra__,
        validated.__pydantic_private__,
    ) or made.__dict__.keys() != validated.__dict__.keys():
        return False
    for key, value in made.__dict__.items():
        other = validated.__dict__[key]
        if isinstance(value, list):
            if type(other) is not list or len(value) != len(other):
                return False
            if not all(map(_same_object, value, other)):
                return False
        elif type(value) is not type(other) or value != other:
            return False
    return True


@lru_cache(maxsize=1)
def _writer_matches() -> bool:
    """Whether the installed LlamaIndex builds these objects as ``_chat_message`` does."""
    Llama.loaded()
    probe = {"role": "assistant", "additional_kwargs": {"name": "a"}, "blocks": [
        {"block_type": "text", "text": "t"},
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"k": 1}},
    ]}
    call = ToolCall(name="f", args={"k": 1}, id="c")
    made = _chat_message("assistant", {"name": "a"}, [_text("t"), _tool_call(call)])
    return (
        set(Llama.chat_message.model_fields) == _MESSAGE_FIELDS
        and set(Llama.text_block.model_fields) == _TEXT_FIELDS
        and set(Llama.tool_call_block.model_fields) == _CALL_FIELDS
        and _same_object(made, Llama.chat_message.model_validate(probe))
    )


def writer() -> Any:
    """``write`` when the installed LlamaIndex builds objects as it expects, else None."""
    return write if _writer_matches() else None


_KINDS = frozenset({HumanMessage, AIMessage, ToolMessage, SystemMessage})


def write(message: Message, drop: Collection[str]) -> Any:
    """The ChatMessage for a typed message in a common shape, or None: no metadata of this
    adapter (on the message, its text parts or its calls), text content, function calls with
    parsed arguments, no refusal, audio, citations or (unless dropped) error flag."""
    if type(message) not in _KINDS or NAME in message.metadata:
        return None
    content = message.content
    if type(content) is str:
        blocks = [_text(content)]
    else:
        blocks = []
        for part in content:
            if type(part) is not TextPart or NAME in part.metadata:
                return None  # (kept metadata is checked by the general writer)
            blocks.append(_text(part.text))
    extra: dict[str, Any] = {} if message.name is None else {"name": message.name}
    if type(message) is HumanMessage:
        return _chat_message("user", extra, blocks)
    if type(message) is AIMessage:
        if message.citations or message.audio is not None:
            return None
        for call in message.tool_calls:
            if (call.kind != "function" or call.invalid_args is not None or call.id == ""
                    or NAME in call.metadata or surrogate_key_in(call.args)):
                return None  # (a key its dump changes is refused by the general writer)
            blocks.append(_tool_call(call))
        return _chat_message("assistant", extra, blocks)
    if type(message) is ToolMessage:
        if (message.is_error and "is_error" not in drop) or message.tool_call_id == "":
            return None  # (an empty call id is refused by the general writer)
        if message.tool_call_id is not None:
            extra["tool_call_id"] = message.tool_call_id
        return _chat_message("tool", extra, blocks)
    if type(message) is SystemMessage:
        return _chat_message(message.role, extra, blocks)
    return None
