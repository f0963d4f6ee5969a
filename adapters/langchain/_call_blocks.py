"""Tool calls that LangChain content blocks describe (used by the ``langchain`` adapter).

Five block types name a call, each with its own keys:

==================  =========  ===========  ===================================================
block ``type``      id key     arguments    where LangChain puts it
==================  =========  ===========  ===================================================
``tool_use``        ``id``     ``input``    Anthropic replies (an object)
``tool_call``       ``id``     ``args``     v1 standard content (an object)
``function_call``   ``call_id``  ``arguments``  OpenAI Responses replies (JSON text)
``custom_tool_call``  ``call_id``  ``input``  OpenAI Responses custom tools (free text); the
                                             call in ``tool_calls`` has ``args={"__arg1": text}``
``invalid_tool_call``  ``id``  ``args``     v1 standard content: a call of ``invalid_tool_calls``
                                             (its argument text, as given)
==================  =========  ===========  ===================================================

When ``tool_calls`` has the calls, each block must name one of them by id and agree with it
(name, arguments); a matched block leaves the typed content and is kept on its call. A
``tool_use`` or ``function_call`` block whose call was edited in ``tool_calls`` since (a
human-in-the-loop edit of its name or args; a block with its name as text and its arguments
of the type its provider writes) is a stale copy: LangChain's translators and
``convert_to_openai_messages`` take such a call from ``tool_calls`` by id, and so does the
reader; the block is kept as it is, its call marked (``metadata.langchain.stale`` names
``content``), and the way back writes it as kept. Other blocks still disagree
(``conflicting_fields``): a v1 ``tool_call`` block *is* LangChain's standard reading of its
call, and a ``custom_tool_call`` or ``invalid_tool_call`` block is matched by more than its id.
When
``tool_calls`` is empty (what ``convert_to_messages`` builds from Anthropic dicts), the blocks
*are* the calls: two blocks with one id are two calls, which rule 5 refuses
(``duplicate_tool_call_id`` at the second block's id). A ``custom_tool_call`` block makes its
call ``kind="custom"``. An id the lists hold twice breaks rule 5 whatever its blocks say: its
blocks, however many, name none of those calls, and the rule refuses the message at the
lists' second call with that id.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Literal

from tracebridge._json import check_json, same_json
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import ToolCall

from ._classes import NAME

STALE_BLOCK_TAGS = frozenset({"tool_use", "function_call"})
"""The call blocks LangChain links to ``tool_calls`` by id, taking the call from there."""
STALE_KEY = "stale"
"""The call key (under ``metadata["langchain"]``) listing the call's stale copies."""
BLOCK_COPY = "content"
"""How a call's stale mark names its content block."""

__all__ = [
    "BLOCK_COPY",
    "CALL_BLOCKS",
    "CUSTOM_ARG",
    "STALE_KEY",
    "CallBlock",
    "block_reads_back",
    "call_block",
    "lenient_json",
    "link_content_blocks",
]

CUSTOM_ARG = "__arg1"
"""The one argument LangChain gives a free-text (custom) call in ``tool_calls``."""


@dataclass(frozen=True)
class CallBlock:
    """Where one call-block type keeps the call's id and arguments."""

    tag: str
    id_key: str
    args_key: str
    encoding: Literal["object", "json_text", "custom_text", "invalid_text"]


CALL_BLOCKS = {
    kind.tag: kind
    for kind in (
        CallBlock("tool_use", "id", "input", "object"),
        CallBlock("tool_call", "id", "args", "object"),
        CallBlock("function_call", "call_id", "arguments", "json_text"),
        CallBlock("custom_tool_call", "call_id", "input", "custom_text"),
        CallBlock("invalid_tool_call", "id", "args", "invalid_text"),
    )
}


_LENIENT = json.JSONDecoder(strict=False)
"""``json.loads(text, strict=False)`` without building a decoder per call."""
_SCAN = _LENIENT.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__


def lenient_json(text: str) -> Any:
    """JSON text as LangChain reads a call's arguments (``json.loads(text, strict=False)``:
    a raw control character, such as the newline a model writes into code, may stand inside
    a string). Raises ``ValueError`` (``JSONDecodeError``) or ``RecursionError`` as
    ``json.loads`` does."""
    return _LENIENT.decode(text)


def parse_arguments(text: Any) -> dict[str, Any] | None:
    """Raw argument text as LangChain reads it (``parse_tool_call``): an object, ``{}`` for
    empty text or a JSON value that is falsy; None when it is not one of those."""
    if type(text) is not str:
        return None
    if not text:
        return {}
    try:
        if text[0] == "{":
            # The scanner alone for the usual text that is one object and nothing else
            # (what ``decode`` does, without its whitespace scans); anything after the
            # object goes through ``decode``, which skips whitespace or refuses the rest.
            value, end = _SCAN(text, 0)
            if end != len(text):
                value = _LENIENT.decode(text)
        else:
            value = _LENIENT.decode(text)
    except (ValueError, RecursionError, StopIteration):
        # not JSON (JSONDecodeError), legal JSON Python cannot hold (an int of more than
        # 4,300 digits: ValueError; nesting past its depth: RecursionError), or the scanner
        # stopping where no value starts: text LangChain cannot parse either
        return None
    if type(value) is dict:
        return value
    return None if value else {}


def _conflict(detail: str, path: str) -> TraceError:
    return TraceError("conflicting_fields", detail, path=path)


def link_content_blocks(
    specs: list[dict[str, Any]], content: Any, at: str, *, calls_in_content: bool
) -> dict[int, Any]:
    """Match call blocks to the calls by id and move them there; with ``calls_in_content``
    (``tool_calls`` is empty) a block that names no call becomes one, appended to ``specs``.

    A block takes the first call with its id that no block before it took, so that a second
    block with one id is a second call (``calls_in_content``) or names no call (refused),
    not a copy of the first."""
    if type(content) is not list:
        return {}
    unclaimed: dict[str, list[dict[str, Any]]] = {}
    for spec in specs:
        if spec["id"] is not None:
            unclaimed.setdefault(spec["id"], []).append(spec)
    repeated = {call_id for call_id, named in unclaimed.items() if len(named) > 1}
    blocks: dict[int, Any] = {}
    for j, block in enumerate(content):
        tag = block.get("type") if type(block) is dict else None
        if type(tag) is not str or tag not in CALL_BLOCKS:
            continue  # an ordinary content element: the content mapping handles it
        where = f"{at}.content[{j}]"
        kind = CALL_BLOCKS[tag]
        call_id = _block_id(block, kind, where)
        if call_id in repeated:
            # an id the lists hold twice breaks rule 5 whatever its blocks say (however many,
            # whatever call of the two lists they would copy): the rule's
            # duplicate_tool_call_id at the list's second call is the error to give
            blocks[j] = block
            continue
        named = unclaimed.get(call_id, []) if call_id is not None else []
        if named:
            spec = named.pop(0)
            _check_copy(spec, block, kind, where)
        elif calls_in_content:
            spec = _content_spec(block, kind, where)
            specs.append(spec)
        else:
            raise _conflict(
                f"{with_article(kind.tag)} block with {kind.id_key} {call_id!r} names no call "
                f"of tool_calls that another block has not named (call ids: "
                f"{list(unclaimed)})",
                f"{where}.{kind.id_key}",
            )
        _keep_block(spec, block, kind, j, where)
        blocks[j] = block
    _forget_default_custom_blocks(specs, len(content))
    return blocks


def _block_id(block: dict[str, Any], kind: CallBlock, where: str) -> str | None:
    """A call block's id: a string, or None when it has none."""
    call_id = block.get(kind.id_key)
    if call_id is not None and type(call_id) is not str:
        raise TraceError(
            "malformed_event",
            f"{with_article(kind.tag)} block's {kind.id_key} must be a string, got "
            f"{short_repr(call_id)}",
            path=f"{where}.{kind.id_key}",
        )
    return call_id


def _check_copy(spec: dict[str, Any], block: dict[str, Any], kind: CallBlock, where: str) -> None:
    """A block that names a call of the lists repeats it, or is a stale copy of it (marked)."""
    if _is_stale(spec, block, kind, where):
        kept = spec.setdefault("metadata", {}).setdefault(NAME, {})
        kept.setdefault(STALE_KEY, []).append(BLOCK_COPY)
    else:
        _agree(spec, block, kind, where)


def _content_spec(block: dict[str, Any], kind: CallBlock, where: str) -> dict[str, Any]:
    """A call that only a content block names (``tool_calls`` is empty)."""
    name = block.get("name")
    if kind.encoding == "invalid_text":
        name = _as_text(name)  # LangChain's InvalidToolCall allows name None
    elif type(name) is not str:
        raise TraceError(
            "malformed_event",
            f"{with_article(kind.tag)} block needs a 'name' string, got {short_repr(name)}",
            path=f"{where}.name",
        )
    call_id = block.get(kind.id_key)  # None or a string: checked by link_content_blocks
    spec: dict[str, Any] = {"name": name, "id": call_id, "metadata": {NAME: {"in_content": True}}}
    value = block.get(kind.args_key)
    if kind.encoding == "json_text":
        if type(value) is not str:
            raise _malformed_args(kind, value, where)
        parsed = parse_arguments(value)
        if parsed is None:
            spec["invalid_args"] = value
        else:
            spec["args"] = parsed
    elif kind.encoding == "custom_text":
        if type(value) is not str:
            raise _malformed_args(kind, value, where)
        spec.update(args={"input": value}, kind="custom")
    elif kind.encoding == "invalid_text":
        spec["invalid_args"] = _as_text(value)  # args None (or no key) too
    elif kind.args_key in block:
        args = _block_args(block, kind.args_key, where)
        if type(args) is not dict:
            raise _malformed_args(kind, value, where)
        check_json(args, f"{where}.{kind.args_key}")
        spec["args"] = args
    return spec


def _as_text(value: Any) -> str:
    """An ``invalid_tool_call`` block's name or argument text as the typed call holds it:
    ``""`` for a value that is not text (LangChain's None, or no key), as an
    ``invalid_tool_calls`` entry reads; the block keeps the value it had."""
    return value if type(value) is str else ""


def _malformed_args(kind: CallBlock, value: Any, where: str) -> TraceError:
    wanted = "an object" if kind.encoding == "object" else "a string"
    return TraceError(
        "malformed_event",
        f"{with_article(kind.tag)} block's {kind.args_key} must be {wanted}, got "
        f"{short_repr(value)}",
        path=f"{where}.{kind.args_key}",
    )


def _is_stale(spec: dict[str, Any], block: dict[str, Any], kind: CallBlock, where: str) -> bool:
    """Whether ``block``, which names the parsed call ``spec`` by id, is a copy of it from
    before an edit of its name or args in ``tool_calls`` (``STALE_BLOCK_TAGS`` only, and a
    block shaped as its provider writes it: see ``_shaped_as_written``)."""
    if kind.tag not in STALE_BLOCK_TAGS or "invalid_args" in spec:
        return False
    if not _shaped_as_written(block, kind):
        return False
    if block["name"] != spec["name"]:
        return True
    if kind.args_key not in block:
        return False
    if kind.encoding == "json_text":
        return not same_json(parse_arguments(block[kind.args_key]), spec["args"])
    # a partial_json that does not parse is refused as such (by _agree)
    return not same_json(_block_args(block, kind.args_key, where), spec["args"])


def _shaped_as_written(block: dict[str, Any], kind: CallBlock) -> bool:
    """Whether ``block`` has a name that is text and arguments (if it has the key) of the type
    its encoding holds: an object for ``object``, text for ``json_text``. A block shaped
    otherwise was never its provider's copy of the call: it disagrees with the call."""
    if type(block.get("name")) is not str:
        return False
    if kind.args_key not in block:
        return True
    wanted = dict if kind.encoding == "object" else str
    return type(block[kind.args_key]) is wanted


def _is_stale_copy(call: ToolCall, block: dict[str, Any]) -> bool:
    """``_is_stale`` for the block the way back writes for a typed call."""
    kind = CALL_BLOCKS[block["type"]]
    spec = {"name": call.name, "args": call.args, "id": call.id}
    if call.invalid_args is not None:
        return False
    try:
        return _is_stale(spec, block, kind, "")
    except TraceError:  # a partial_json that does not parse: refused when read
        return False


def _agree(spec: dict[str, Any], block: dict[str, Any], kind: CallBlock, where: str) -> None:
    """The block must say what ``tool_calls`` says about its call."""
    if kind.encoding == "invalid_text":
        _agree_invalid(spec, block, kind, where)
        return
    invalid = "invalid_args" in spec
    if block.get("name") != spec["name"] or (invalid and kind.encoding != "json_text"):
        raise _conflict(
            f"the {kind.tag} block names {block.get('name')!r} but tool_calls has "
            f"{spec['name']!r}" + (" with unparsed arguments" if invalid else ""),
            f"{where}.name",
        )
    if kind.args_key not in block:
        return  # the block does not repeat the arguments (LangChain's own tests build these)
    value = block[kind.args_key]
    if kind.encoding == "json_text":
        agrees = (
            value == spec["invalid_args"] if invalid
            else same_json(parse_arguments(value), spec["args"])
        )
    elif kind.encoding == "custom_text":
        agrees = type(value) is str and spec["args"] == {CUSTOM_ARG: value}
        if agrees:
            spec.update(args={"input": value}, kind="custom")
    else:
        agrees = same_json(_block_args(block, kind.args_key, where), spec["args"])
    if not agrees:
        verb = "disagrees" if kind.args_key == "input" else "disagree"
        raise _conflict(
            f"the {kind.tag} block's {kind.args_key} {short_repr(value)} {verb} with "
            f"tool_calls' args {short_repr(spec.get('args', spec.get('invalid_args')))}",
            f"{where}.{kind.args_key}",
        )


def _agree_invalid(
    spec: dict[str, Any], block: dict[str, Any], kind: CallBlock, where: str
) -> None:
    """An ``invalid_tool_call`` block must repeat its ``invalid_tool_calls`` entry: the same
    name and argument text (a block without ``args`` does not repeat them)."""
    kept = spec.get("metadata", {}).get(NAME, {}).get("invalid_tool_call")
    if "invalid_args" not in spec and kept is None:
        raise _conflict(
            f"the invalid_tool_call block names call {spec['id']!r}, which tool_calls holds "
            "with parsed arguments",
            f"{where}.{kind.id_key}",
        )
    source = kept if kept is not None else {}
    name = source["name"] if "name" in source else spec["name"]
    if block.get("name") != name:
        raise _conflict(
            f"the invalid_tool_call block names {block.get('name')!r} but invalid_tool_calls "
            f"has {name!r}",
            f"{where}.name",
        )
    text = source["args"] if "args" in source else spec["invalid_args"]
    if kind.args_key in block and block[kind.args_key] != text:
        raise _conflict(
            f"the invalid_tool_call block's args {short_repr(block[kind.args_key])} disagree "
            f"with invalid_tool_calls' args {short_repr(text)}",
            f"{where}.{kind.args_key}",
        )


def _keep_block(
    spec: dict[str, Any], block: dict[str, Any], kind: CallBlock, j: int, where: str
) -> None:
    """Keep the block on its call: everything the way back cannot rebuild from the call (a
    stale block whole but for its id)."""
    stale = BLOCK_COPY in spec.get("metadata", {}).get(NAME, {}).get(STALE_KEY, [])
    template = {
        k: v for k, v in block.items() if k != kind.id_key and (stale or k != "name")
    }
    link: dict[str, Any] = {"at": j, "block": template}
    if kind.id_key not in block:
        link["without_id"] = True
    if kind.args_key not in block:
        link["without_args"] = True
    elif not stale and _rebuilt_from_call(kind, template[kind.args_key], spec):
        del template[kind.args_key]
    if kind.encoding == "invalid_text":
        _keep_empty_name(block, template, link)
    check_json(template, where)
    spec.setdefault("metadata", {}).setdefault(NAME, {})["content_block"] = link


def _keep_empty_name(
    block: dict[str, Any], template: dict[str, Any], link: dict[str, Any]
) -> None:
    """An ``invalid_tool_call`` block whose name is not text (None, or no key) gives its call
    the name ``""``, which the way back would write as ``""``: keep how the block said it."""
    if "name" not in block:
        link["without_name"] = True
    elif type(block["name"]) is not str:
        template["name"] = block["name"]


def _rebuilt_from_call(kind: CallBlock, value: Any, spec: dict[str, Any]) -> bool:
    """Whether the way back writes exactly ``value`` from the call (JSON text is kept: its
    spelling is the provider's)."""
    if kind.encoding == "object":
        return bool(value == spec["args"])
    if kind.encoding == "custom_text":
        return bool(spec["args"] == {"input": value})
    if kind.encoding == "invalid_text":
        return "invalid_args" in spec and value == spec["invalid_args"]
    return False


def _forget_default_custom_blocks(specs: list[dict[str, Any]], size: int) -> None:
    """Custom calls whose blocks are exactly what the way back writes for them (the plain
    block, at the end of the content, in call order) need no metadata."""
    custom = [spec for spec in specs if spec.get("kind") == "custom"]
    if not custom:
        return
    links = [spec["metadata"][NAME] for spec in custom]
    plain = all(
        link == {"content_block": _link_of(link)}
        and _link_of(link)["block"] == {"type": "custom_tool_call"}
        for link in links
    )
    tail = [_link_of(link)["at"] for link in links] == list(range(size - len(links), size))
    if plain and tail:
        for spec in custom:
            del spec["metadata"]


def _link_of(kept: dict[str, Any]) -> dict[str, Any]:
    link: dict[str, Any] = kept.get("content_block", {})
    return link


def _block_args(block: dict[str, Any], key: str, where: str) -> Any:
    """A call block's arguments; a streamed ``tool_use`` keeps them in ``partial_json``."""
    value = block.get(key)
    partial = block.get("partial_json")
    if value == {} and type(partial) is str and partial:
        try:
            return lenient_json(partial)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, or JSON Python cannot hold
            raise _conflict(f"partial_json does not parse: {exc}", f"{where}.partial_json") from exc
    return value


# --- the way back --------------------------------------------------------------------------


def block_reads_back(call: ToolCall, block: dict[str, Any], *, in_content: bool) -> bool:
    """Whether the reader gives back a call with ``invalid_args`` from the ``block`` written
    for it (by ``call_block``): as the call only the block names (``in_content``), or as
    the block that repeats a call of ``invalid_tool_calls``. Asked of the reader's own
    functions, so the two cannot disagree."""
    kind = CALL_BLOCKS[block["type"]]
    if in_content:
        return bool(_content_spec(block, kind, "").get("invalid_args") == call.invalid_args)
    spec: dict[str, Any] = {"name": call.name, "id": call.id, "invalid_args": call.invalid_args}
    listed = call.metadata.get(NAME, {}).get("invalid_tool_call")
    if type(listed) is dict:
        # the block repeats the entry as LangChain had it (a name or args of None)
        spec["metadata"] = {NAME: {"invalid_tool_call": listed}}
    try:
        _agree(spec, block, kind, "")
    except TraceError:
        return False
    return True


def call_block(
    call: ToolCall, link: dict[str, Any], at: str, *, in_content: bool
) -> dict[str, Any]:
    """The content block a call came from, rebuilt from the call and its kept template.

    The call's name, id and arguments come from the call alone: a template holding them
    (the reader keeps none, except a streamed ``tool_use``'s ``input``, which its
    ``partial_json`` gives, and an ``invalid_tool_call`` block's name or args that is not
    text, written as kept while the call's is still ``""``) is refused where it would read
    back as another call. The
    block of a call only the content names (``in_content``) is the call itself: it gets the
    call's id and arguments even where the source block had none (``without_id``,
    ``without_args``), when the call now has them."""
    template = link.get("block")
    tag = template.get("type") if type(template) is dict else None
    kind = CALL_BLOCKS.get(tag) if type(tag) is str else None
    if kind is None or type(template) is not dict or type(link.get("at")) is not int:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.content_block needs 'at' (a position) and a 'block' whose "
            f"type is one of {', '.join(CALL_BLOCKS)}; got {short_repr(link)}",
            path=f"{at}.metadata",
        )
    kept_at = f"{at}.metadata.{NAME}.content_block.block"
    stale = BLOCK_COPY in call.metadata.get(NAME, {}).get(STALE_KEY, [])
    for key in (kind.id_key, "name"):
        if key in template and not (
            key == "name" and (stale or _empty_name_kept(kind, template))
        ):
            raise TraceError(
                "not_representable",
                f"the {kind.tag} block kept for this call (metadata.langchain.content_block) "
                f"holds {key} {short_repr(template[key])}; the way back writes the block's "
                f"{key} from the typed call alone",
                path=f"{kept_at}.{key}",
            )
    without_args = bool(link.get("without_args")) and (
        not in_content or _reads_back_without_args(kind, call)
    )
    custom_block = kind.encoding == "custom_text" and not without_args
    if (call.kind == "custom") != custom_block:
        raise TraceError(
            "not_representable",
            "a custom_tool_call block belongs to a custom call; this call is a function call"
            if custom_block
            else f"{with_article(kind.tag)} block "
                 f"{'without arguments ' if without_args else ''}holds a function call; this call "
                 "is a custom (free-text) call, which LangChain holds in a custom_tool_call "
                 "block with its input (it would read back as a function call)",
            path=at,
        )
    omit_id = bool(link.get("without_id")) and call.id is None
    block: dict[str, Any] = {} if omit_id else {kind.id_key: call.id}
    block["name"] = call.name
    block.update(copy.deepcopy(template))
    if kind.encoding == "invalid_text":
        _name_as_kept(block, link, call)
    if stale:
        return _stale_block(call, block, at, in_content=in_content)
    if without_args:
        return block
    if kind.encoding == "object":
        if kind.args_key not in block and "partial_json" not in block:
            block[kind.args_key] = copy.deepcopy(call.args)  # the usual block
        else:
            _object_args_in_line(block, kind, call, kept_at)
    elif kind.encoding == "custom_text":
        text = call.args["input"]
        if kind.args_key in block and block[kind.args_key] != text:
            raise TraceError(
                "not_representable",
                f"the custom_tool_call block kept for this call holds input "
                f"{short_repr(block[kind.args_key])}; the call's input is {short_repr(text)}",
                path=f"{kept_at}.{kind.args_key}",
            )
        block[kind.args_key] = text
    elif kind.encoding == "invalid_text":
        _invalid_args_in_line(block, kind, call, at, in_content=in_content)
    else:
        text = block.get(kind.args_key)
        wanted = call.invalid_args if call.invalid_args is not None else call.args
        if not same_json(
            text if call.invalid_args is not None else parse_arguments(text), wanted
        ):
            block[kind.args_key] = (
                call.invalid_args if call.invalid_args is not None else json.dumps(call.args)
            )
    return block


def _stale_block(
    call: ToolCall, block: dict[str, Any], at: str, *, in_content: bool
) -> dict[str, Any]:
    """The stale block of a call marked so (``metadata.langchain.stale`` names ``content``),
    written as it was kept; refused where it no longer reads as stale (it would read back as
    the call's own block, without the mark), and for a call only the block names (the block
    is then the call itself)."""
    kind = CALL_BLOCKS[block["type"]]
    if in_content:
        why = "the call is named only by that block (metadata.langchain.in_content): the block "
        why += "is the call itself"
    elif kind.tag in STALE_BLOCK_TAGS and not _shaped_as_written(block, kind):
        wanted = "an object" if kind.encoding == "object" else "text"
        why = "the block kept for it (metadata.langchain.content_block) has a name that is not "
        why += f"text, or {kind.args_key} of another type than {wanted}: no copy of a call"
    elif not _is_stale_copy(call, block):
        why = "the block kept for it (metadata.langchain.content_block) names the call as it is "
        why += "now"
    else:
        return block
    raise TraceError(
        "not_representable",
        f"this call is marked as having a stale {block['type']} block (metadata.langchain."
        f"stale names 'content'), but {why}: it would read back without the mark (take "
        f"'content' out of the mark, and the block's name and arguments out of the kept "
        f"block, to write the block from the call)",
        path=f"{at}.metadata.{NAME}.{STALE_KEY}",
    )


def _empty_name_kept(kind: CallBlock, template: dict[str, Any]) -> bool:
    """Whether the template's name is one the reader keeps: an ``invalid_tool_call`` block's
    name that is not text."""
    return kind.encoding == "invalid_text" and type(template["name"]) is not str


def _name_as_kept(block: dict[str, Any], link: dict[str, Any], call: ToolCall) -> None:
    """An ``invalid_tool_call`` block of a call named ``""`` says so as it did (a name that is
    not text, or no name key); a call named since reading gets its name."""
    if call.name:
        block["name"] = call.name
    elif link.get("without_name"):
        del block["name"]


def _reads_back_without_args(kind: CallBlock, call: ToolCall) -> bool:
    """Whether a block without its arguments key that *is* the call reads back as ``call``:
    an object block as no arguments, an ``invalid_tool_call`` block as the text ``""``."""
    if kind.encoding == "object":
        return not call.args and call.kind != "custom"
    return kind.encoding == "invalid_text" and call.invalid_args == ""


def _invalid_args_in_line(
    block: dict[str, Any], kind: CallBlock, call: ToolCall, at: str, *, in_content: bool
) -> None:
    """An ``invalid_tool_call`` block holds the call's argument text; a call with parsed
    arguments has such a block only as an ``invalid_tool_calls`` entry whose empty text is
    no arguments (its block keeps that text)."""
    if call.invalid_args is not None:
        if kind.args_key not in block or _as_text(block[kind.args_key]) != call.invalid_args:
            block[kind.args_key] = call.invalid_args  # a kept args None reads back as ""
        return
    listed_invalid = "invalid_tool_call" in call.metadata.get(NAME, {})
    if in_content or not listed_invalid or call.args:
        raise TraceError(
            "not_representable",
            f"an invalid_tool_call block holds a call whose arguments did not parse; this call "
            f"has parsed args {short_repr(call.args)} (it would read back as another call)",
            path=f"{at}.args",
        )


def _object_args_in_line(
    block: dict[str, Any], kind: CallBlock, call: ToolCall, kept_at: str
) -> None:
    """An object block whose template keeps arguments: a streamed ``tool_use`` (``input``
    ``{}`` and the arguments as ``partial_json`` text). Written as kept when it reads back as
    the call's arguments; a ``partial_json`` that no longer does (the call was edited after
    reading) is rewritten from them, as the provider spells them (``json.dumps``)."""
    block.setdefault(kind.args_key, copy.deepcopy(call.args))
    if _reads_back_args(block, kind, call):
        return
    if block[kind.args_key] == {} and type(block.get("partial_json")) is str:
        block["partial_json"] = json.dumps(call.args)
        return
    raise TraceError(
        "not_representable",
        f"the {kind.tag} block kept for this call (metadata.langchain.content_block) holds "
        f"{kind.args_key} {short_repr(block[kind.args_key])}; the call's arguments are "
        f"{short_repr(call.args)}",
        path=f"{kept_at}.{kind.args_key}",
    )


def _reads_back_args(block: dict[str, Any], kind: CallBlock, call: ToolCall) -> bool:
    try:
        return same_json(_block_args(block, kind.args_key, ""), call.args)
    except TraceError:  # a partial_json that does not parse
        return False
