"""The hosted-tool items ChatOpenAI (Responses API, ``output_version="v0"``) keeps in an AI
message's ``additional_kwargs["tool_outputs"]`` (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ``mcp_call``, ``image_generation_call``, ...; langchain-core's
``content_blocks`` reads them as ``server_tool_call`` and ``server_tool_result`` blocks).

Each item is an ``OpaquePart`` of its ``type``, holding the item verbatim, marked
``metadata.langchain.from = "tool_outputs"``, placed where langchain-core's own reading of
the message (``content_blocks``, and the ``responses/v1`` form ChatOpenAI writes) places it,
so that both forms of one reply read alike: ``code_interpreter_call``, ``mcp_call`` and
``image_generation_call`` items right after the reasoning, before the other parts, the rest
after them all (the refusal too); within each group by type in langchain-core's order
(``ORDER``), then in list order. When that is not the list's order, every item's part keeps
its index in the list as ``at``. The first part keeps ``content = "string"`` when the content
between the items was a string. The way back writes the marked parts that start (after the
reasoning) and end an AI message's content back into ``tool_outputs``, in list order.
"""

from __future__ import annotations

import copy
from typing import Any, TypeGuard

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import Content, OpaquePart, TextPart

from ._blocks import AnyPart
from ._classes import NAME
from ._kept_places import refuse_unknown

__all__ = [
    "OUTPUTS_KEY",
    "is_output",
    "is_tool_outputs",
    "split_tool_outputs",
    "tool_outputs_of",
]

OUTPUTS_KEY = "tool_outputs"
"""Where ChatOpenAI keeps the hosted-tool items; the opaque part read from each keeps
``metadata.langchain.from`` = this key."""

_MARKER_KEYS = frozenset(("from", "content", "at"))
"""What the reader keeps on an opaque part read from ``additional_kwargs.tool_outputs``."""

ORDER = (
    "reasoning",
    "code_interpreter_call",
    "mcp_call",
    "image_generation_call",
    "text",
    "refusal",
    "function_call",
    "computer_call",
    "mcp_list_tools",
    "mcp_approval_request",
)
"""The item types in the order langchain-core puts them into a message's content (the
``content_order`` of its ``responses/v1`` conversion); any other type comes after them all.
The types before ``text`` go before the message's other parts, the rest after them."""

_RANK = {kind: rank for rank, kind in enumerate(ORDER)}
_TEXT_RANK = _RANK["text"]


def _rank(kind: str) -> int:
    return _RANK.get(kind, len(ORDER))


def _early(kind: str) -> bool:
    """Whether items of this type go before the message's other parts."""
    return _rank(kind) < _TEXT_RANK


def is_tool_outputs(value: Any) -> TypeGuard[list[dict[str, Any]]]:
    """A non-empty list of items with a non-empty string ``type`` (each an opaque part of
    that kind; any other value stays in ``additional_kwargs``, whole)."""
    return (
        type(value) is list
        and bool(value)
        and all(
            type(item) is dict and type(item.get("type")) is str and item["type"]
            for item in value
        )
    )


def tool_outputs_of(kwargs: dict[str, Any]) -> tuple[list[OpaquePart], list[OpaquePart]]:
    """``additional_kwargs["tool_outputs"]`` as opaque parts, one for each item (its
    ``type`` the kind, the item verbatim the value), marked ``from`` = ``OUTPUTS_KEY``, when
    ``is_tool_outputs``: those that go before the message's other parts, and those that go
    after them, each in langchain-core's order (``at`` = the list index on every one when
    that is not the list's order). Any other value stays where it is, whole."""
    outputs = kwargs.get(OUTPUTS_KEY)
    if not is_tool_outputs(outputs):
        return [], []
    del kwargs[OUTPUTS_KEY]
    placed = sorted(range(len(outputs)), key=lambda k: _rank(outputs[k]["type"]))
    moved = placed != list(range(len(outputs)))
    parts = [
        OpaquePart(
            kind=outputs[k]["type"],
            value=outputs[k],
            metadata={NAME: {"from": OUTPUTS_KEY, "at": k} if moved else {"from": OUTPUTS_KEY}},
        )
        for k in placed
    ]
    lead = sum(1 for part in parts if _early(part.kind))
    return parts[:lead], parts[lead:]


def is_output(part: Any) -> bool:
    """Whether ``part`` is an opaque part marked as read from ``additional_kwargs``'s
    ``tool_outputs``."""
    if not isinstance(part, OpaquePart):
        return False
    kept = part.metadata.get(NAME)
    return type(kept) is dict and kept.get("from") == OUTPUTS_KEY


def _goes_first(part: AnyPart) -> bool:
    """Whether ``part`` is marked as read from ``tool_outputs`` with a type that goes first."""
    return isinstance(part, OpaquePart) and is_output(part) and _early(part.kind)


def split_tool_outputs(
    content: Content | list[AnyPart], at: str, first: int
) -> tuple[Content | list[AnyPart], list[dict[str, Any]], int]:
    """The content without the hosted-tool items that belong in ``additional_kwargs``, those
    items in list order, and the typed position of what is left's first part. The items:
    the first parts (those of a type that goes first) and the last parts, when they are
    opaque parts marked as read from there, in the reader's places and order; the list's
    order is their ``at`` when they keep one (then all do), else theirs. What is left goes
    back as the string it was read from (``content: "string"`` on the first), which it must
    still be: no part, or one text part with text and nothing kept. ``first``: the typed
    position of ``content[0]``. A mark or an item that would not read back as it is:
    ``not_representable`` at it."""
    if isinstance(content, str) or not content:
        return content, [], first
    lead = 0
    while lead < len(content) and _goes_first(content[lead]):
        lead += 1
    start = len(content)
    while start > lead and is_output(content[start - 1]):
        start -= 1
    if lead == 0 and start == len(content):
        return content, [], first
    marked = [*range(lead), *range(start, len(content))]
    placed: list[tuple[int, dict[str, Any]]] = []
    positions: dict[int, str] = {}
    layout: str | None = None
    for i, j in enumerate(marked):
        part = content[j]
        assert isinstance(part, OpaquePart)  # (is_output)
        where = f"{at}.content[{first + j}]"
        mark = part.metadata[NAME]
        refuse_unknown(
            mark, _MARKER_KEYS, f"an opaque part read from additional_kwargs."
            f"{OUTPUTS_KEY}", f"{where}.metadata.{NAME}"
        )
        if "content" in mark:
            if i != 0 or mark["content"] != "string":
                raise _refused(
                    f"'content': {short_repr(mark['content'])} is kept only as 'string' (the "
                    f"content between the items was a string), and only on the first part read "
                    f"from additional_kwargs.{OUTPUTS_KEY}"
                    + ("; this is not the first" if i != 0 else "")
                    + ": written, the message would read back without this key",
                    f"{where}.metadata.{NAME}.content",
                )
            layout = where
        value = part.value
        if type(value) is not dict or value.get("type") != part.kind or not part.kind:
            raise _refused(
                f"an opaque part read from additional_kwargs.{OUTPUTS_KEY} goes back there as "
                f"its item, a dict whose 'type' is the part's kind ({part.kind!r}); got "
                f"{short_repr(value)}", where)
        _check_place(part, content[j - 1] if j else None, j >= lead, where)
        placed.append((_position(mark, i, positions, where), copy.deepcopy(value)))
    if positions and len(positions) != len(marked):
        j = next(j for j in marked if "at" not in content[j].metadata[NAME])
        raise _refused(
            f"the other parts read from additional_kwargs.{OUTPUTS_KEY} keep their index in "
            f"that list as 'at' (the reader keeps it on every one when it places them out of "
            f"the list's order); this one has none, so its place in the list is unknown",
            f"{at}.content[{first + j}].metadata.{NAME}")
    items = [item for _, item in sorted(placed, key=lambda pair: pair[0])]
    rest: list[AnyPart] = list(content[lead:start])
    if layout is None:
        return rest, items, first + lead
    only = rest[0] if len(rest) == 1 else None
    if rest and not (isinstance(only, TextPart) and only.text and not only.metadata):
        raise _refused(
            f"'content': 'string' says the content between the items read from "
            f"additional_kwargs.{OUTPUTS_KEY} was a string: no part or one plain text part; "
            f"{len(rest)} part(s) are between them here: written, the message would read "
            f"back without this key", f"{layout}.metadata.{NAME}.content")
    return (only.text if isinstance(only, TextPart) else ""), items, first + lead


def _check_place(part: OpaquePart, previous: AnyPart | None, late: bool, where: str) -> None:
    """A part read from ``tool_outputs`` is where the reader puts an item of its type:
    first or last by type (``late``: among the last parts), after the one before it when
    that one's type comes first in langchain-core's order."""
    if late and _early(part.kind):
        raise _refused(
            f"a {part.kind!r} item read from additional_kwargs.{OUTPUTS_KEY} goes before the "
            f"message's other parts (the reader puts the items of type {_early_names()} "
            f"first, after any reasoning read from additional_kwargs, as langchain-core does); "
            f"this part is among the last parts of the message: written, it would read back "
            f"at the start", where)
    if not isinstance(previous, OpaquePart) or not is_output(previous):
        return
    if _rank(previous.kind) > _rank(part.kind):
        raise _refused(
            f"the reader puts the items read from additional_kwargs.{OUTPUTS_KEY} in "
            f"langchain-core's order of their types ({', '.join(ORDER)}, then any other), "
            f"so a {part.kind!r} item before a {previous.kind!r} one; this part comes after "
            f"one: written, it would read back before it", where)


def _early_names() -> str:
    names = ORDER[:_TEXT_RANK]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _position(mark: dict[str, Any], i: int, positions: dict[int, str], where: str) -> int:
    """Where in ``tool_outputs`` the ``i``-th marked part's item goes: its ``at`` (a
    distinct index; the ones kept may leave gaps, where items were taken out), else ``i``."""
    if "at" not in mark:
        return i
    k = mark["at"]
    if type(k) is not int or k < 0 or k in positions:
        reason = (
            f"is also the 'at' of {positions[k]}" if type(k) is int and k in positions
            else "is no index of a list"
        )
        raise _refused(
            f"'at': {short_repr(k)} keeps the index of this part's item in additional_kwargs."
            f"{OUTPUTS_KEY} (an int from 0, one per item); it {reason}",
            f"{where}.metadata.{NAME}.at")
    positions[k] = where
    return k


def _refused(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path, source=NAME)
