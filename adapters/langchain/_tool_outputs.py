"""The hosted-tool items ChatOpenAI (Responses API, ``output_version="v0"``) keeps in an AI
message's ``additional_kwargs["tool_outputs"]`` (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ``mcp_call``, ``image_generation_call``, ...; langchain-core's
``content_blocks`` reads them as ``server_tool_call`` and ``server_tool_result`` blocks).

Each item is an ``OpaquePart`` of its ``type``, holding the item verbatim, after all the
other parts of the message (as the v1 ``server_tool_call`` blocks and the ``responses/v1``
items are opaque parts), marked ``metadata.langchain.from = "tool_outputs"``; the first keeps
``content = "string"`` when the content before the items was a string. The way back writes
the marked parts that end an AI message's content back into ``tool_outputs``, in order.
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

_MARKER_KEYS = frozenset(("from", "content"))
"""What the reader keeps on an opaque part read from ``additional_kwargs.tool_outputs``."""


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


def tool_outputs_of(kwargs: dict[str, Any]) -> list[OpaquePart]:
    """``additional_kwargs["tool_outputs"]`` as opaque parts, one for each item (its
    ``type`` the kind, the item verbatim the value), marked ``from`` = ``OUTPUTS_KEY``, when
    ``is_tool_outputs``; any other value stays where it is, whole."""
    outputs = kwargs.get(OUTPUTS_KEY)
    if not is_tool_outputs(outputs):
        return []
    del kwargs[OUTPUTS_KEY]
    return [
        OpaquePart(kind=item["type"], value=item, metadata={NAME: {"from": OUTPUTS_KEY}})
        for item in outputs
    ]


def is_output(part: Any) -> bool:
    """Whether ``part`` is an opaque part marked as read from ``additional_kwargs``'s
    ``tool_outputs``."""
    if not isinstance(part, OpaquePart):
        return False
    kept = part.metadata.get(NAME)
    return type(kept) is dict and kept.get("from") == OUTPUTS_KEY


def split_tool_outputs(
    content: Content | list[AnyPart], at: str, first: int
) -> tuple[Content | list[AnyPart], list[dict[str, Any]]]:
    """The content without the hosted-tool items that belong in ``additional_kwargs``, and
    those items: the last parts, when they are opaque parts marked as read from there (the
    reader puts them after all the others). What is left goes back as the string it was
    read from (``content: "string"`` on the first), which it must still be: no part, or one
    text part with text and nothing kept. ``first``: the typed position of ``content[0]``.
    A mark or an item that would not read back as it is: ``not_representable`` at it."""
    if isinstance(content, str) or not content:
        return content, []
    start = len(content)
    while start > 0 and is_output(content[start - 1]):
        start -= 1
    if start == len(content):
        return content, []
    items: list[dict[str, Any]] = []
    layout: str | None = None
    for j in range(start, len(content)):
        part = content[j]
        assert isinstance(part, OpaquePart)  # (is_output)
        where = f"{at}.content[{first + j}]"
        mark = part.metadata[NAME]
        refuse_unknown(
            mark, _MARKER_KEYS, f"an opaque part read from additional_kwargs."
            f"{OUTPUTS_KEY}", f"{where}.metadata.{NAME}"
        )
        if "content" in mark:
            if j != start or mark["content"] != "string":
                raise _refused(
                    f"'content': {short_repr(mark['content'])} is kept only as 'string' (the "
                    f"content before the items was a string), and only on the first part read "
                    f"from additional_kwargs.{OUTPUTS_KEY}"
                    + ("; this is not the first" if j != start else "")
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
        items.append(copy.deepcopy(value))
    rest: list[AnyPart] = list(content[:start])
    if layout is None:
        return rest, items
    only = rest[0] if len(rest) == 1 else None
    if rest and not (isinstance(only, TextPart) and only.text and not only.metadata):
        raise _refused(
            f"'content': 'string' says the content before the items read from "
            f"additional_kwargs.{OUTPUTS_KEY} was a string: no part or one plain text part; "
            f"{len(rest)} part(s) come before them here: written, the message would read "
            f"back without this key", f"{layout}.metadata.{NAME}.content")
    return (only.text if isinstance(only, TextPart) else ""), items


def _refused(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path, source=NAME)
