"""The model's reasoning text that an assistant-side ChatMessage holds in ``additional_kwargs``.

LlamaIndex's OpenAI integrations (``llama-index-llms-openai``'s ``from_openai_message_dict``,
and ``llama-index-llms-openai-like`` through it) copy every key of an OpenAI-compatible reply
but ``role`` and ``content`` into ``additional_kwargs``, so the reasoning that DeepSeek, vLLM,
OpenRouter and Groq return beside the content lands there: ``reasoning_content`` (DeepSeek,
vLLM before 0.11, OpenRouter) or ``reasoning`` (vLLM since, OpenRouter, Groq). Its text is a
``ReasoningPart`` first in ``AIMessage.content``, as the openai_chat reader reads the same
reply, and ``to_openai_message_dict`` sends the key back as it was.

The part keeps ``{"from": <key>}`` in ``metadata["llama_index"]``, with ``"also": <the other
key>`` when both held the same text (vLLM and OpenRouter send both); the writer puts the text
back under those keys. Both keys with different texts are ``conflicting_fields``; a value
that is not a string (``None``) stays verbatim in the kept ``additional_kwargs``. The rest of
the content is the message's blocks, read as always, so no content form is kept: one text
block reads as one ``TextPart`` after the reasoning and is written back as that one block.

A ``ThinkingBlock`` beside such a key is another record of reasoning (the integrations make
none from these keys): both are read, the key's text first, then the blocks in their order.
"""

from __future__ import annotations

from typing import Any

from tracebridge import ReasoningPart
from tracebridge.errors import short_repr

from ._blocks import NAME, fail, not_representable
from ._kept import REASONING_KEYS, REASONING_MARK, own, refuse_unknown_keys

__all__ = ["put_reasoning", "take_reasoning"]


def take_reasoning(extra: dict[str, Any], index: int, where: str) -> ReasoningPart | None:
    """The reasoning text of ``extra`` (an assistant-side message's ``additional_kwargs``,
    its keys taken out) as a marked part, or None; ``where``: the message's path."""
    found = [key for key in REASONING_KEYS if type(extra.get(key)) is str]
    if not found:
        return None
    marker: dict[str, Any] = {"from": found[0]}
    if len(found) > 1:
        order = list(extra)
        first, second = sorted(found, key=order.index)
        if extra[first] != extra[second]:
            raise fail(
                "conflicting_fields",
                f"the model's reasoning is given twice and the texts differ ({first} "
                f"{short_repr(extra[first])}, {second} {short_repr(extra[second])}); expected "
                "one text (vLLM and OpenRouter send the same under both keys)",
                index,
                f"{where}.additional_kwargs.{second}",
            )
        marker = {"from": first, "also": second}
        del extra[second]
    return ReasoningPart(text=extra.pop(marker["from"]), metadata={NAME: marker})


def put_reasoning(content: Any, extra: dict[str, Any], where: str) -> tuple[Any, int]:
    """``content`` without a first reasoning part marked as read from ``additional_kwargs``,
    whose text goes back there under the keys it names, and the typed position of the first
    part left (1 when one was taken out, else 0). A mark that names no reasoning key, or keeps
    what the reader does not keep beside it, or a key the kept ``additional_kwargs`` holds a
    value under (the reader reads no text from a key it keeps), is refused
    (``not_representable`` at the key); ``where``: the message's path."""
    if type(content) is not list or not content:
        return content, 0
    first = content[0]
    if type(first) is not ReasoningPart or NAME not in first.metadata:
        return content, 0
    at = f"{where}.content[0]"
    kept = own(first.metadata, at)
    if "from" not in kept and "also" not in kept:
        return content, 0  # a ThinkingBlock's part: written as one
    if not kept.keys() <= REASONING_MARK:
        refuse_unknown_keys(kept, REASONING_MARK, "a reasoning part read from "
                            "additional_kwargs (from, also)", at)
    key = kept.get("from")
    if type(key) is not str or key not in REASONING_KEYS:
        raise not_representable(
            f"the reasoning part is marked as read from additional_kwargs[{short_repr(key)}], "
            f"which is no reasoning key of an assistant-side message (those are "
            f"{', '.join(REASONING_KEYS)}): it has nowhere to go back to",
            f"{at}.metadata.{NAME}.from",
        )
    keys = [key]
    if "also" in kept:
        also = kept["also"]
        if type(also) is not str or also == key or also not in REASONING_KEYS:
            raise not_representable(
                f"the reasoning part is marked as also read from {short_repr(also)}, which "
                f"is not the other reasoning key beside {key!r}",
                f"{at}.metadata.{NAME}.also",
            )
        keys.append(also)
    for name in keys:
        if name in extra:
            raise not_representable(
                f"metadata['{NAME}']['additional_kwargs'][{name!r}] keeps "
                f"{short_repr(extra[name])} under the key the first part's reasoning text is "
                f"written to: one of the two would be lost",
                f"{where}.metadata.{NAME}.additional_kwargs.{name}",
            )
        extra[name] = first.text
    return content[1:], 1
