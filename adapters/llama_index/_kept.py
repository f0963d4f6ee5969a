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

A ``ReasoningPart``'s ``content_is_null`` and kept legacy ``images`` are checked where they
are written (``_parts``, ``_messages``).
"""

from __future__ import annotations

from typing import Any

from tracebridge import ToolCall
from tracebridge.errors import short_repr

from ._blocks import NAME, not_representable

RESULT_ID_KEYS = ("tool_call_id", "call_id")
"""The keys of ``additional_kwargs`` a tool result names its call by."""

LAYOUT_TOKENS = frozenset({"part", "call"})


def own(metadata: dict[str, Any], where: str) -> dict[str, Any]:
    """``metadata["llama_index"]`` (``{}`` when absent); ``where``: the holder's path."""
    kept = metadata.get(NAME)
    if kept is None:
        return {}
    if type(kept) is not dict:
        raise not_representable(
            f"metadata['{NAME}'] holds what to_messages keeps there, a dict; found "
            f"{short_repr(kept)}",
            f"{where}.metadata.{NAME}",
        )
    return kept


def check_message_kept(kept: dict[str, Any], where: str) -> None:
    """Refuse a kept message field the writer could only write over typed data, or not at
    all (``where``: the message's path)."""
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


def check_call_kept(call: ToolCall, where: str) -> None:
    """Refuse a kept entry that would give a call without an id one (``where``: the call's
    path). The writer writes the entry's other fields as they were."""
    kept = own(call.metadata, where)
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
