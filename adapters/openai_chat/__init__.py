"""OpenAI Chat Completions messages <-> tracebridge messages.

A trace is the ``messages`` list an application sends to ``chat.completions.create``: plain
dicts (the ``*Param`` TypedDicts) mixed with ``ChatCompletionMessage`` objects taken from
responses. ``from_messages`` gives back plain dicts ready for the API, equal to the source
(null-valued keys and which optional keys were present included).

Shared typed homes: ``developer`` is ``SystemMessage(role="developer")``; a refusal (the
``refusal`` key or a ``refusal`` part) is a ``RefusalPart``; ``image_url.detail`` is
``ImagePart.detail``; ``input_audio.format`` is ``AudioPart.mime_type`` (``tracebridge.media``);
the assistant's ``audio`` is ``AIMessage.audio``; ``url_citation`` annotations are
``AIMessage.citations``; a custom call is ``ToolCall(kind="custom", args={"input": text})``;
``arguments: ""`` (a tool without parameters) is ``args={}``; the model's reasoning text that
compatible APIs return beside an assistant's content (``reasoning_content``: DeepSeek, vLLM;
``reasoning``: vLLM, OpenRouter, Groq) is a ``ReasoningPart`` first in the content, marked so
that it goes back to its key.

What the typed fields do not hold is kept under ``metadata["openai_chat"]``:

* ``content``: ``"null"`` or ``"absent"`` when an empty content was ``None`` or missing;
* ``refusal``: how a refusal was spelled, when not as ``content: null`` + ``refusal``;
* ``annotations``: the annotation list, when it was ``[]`` or held other annotation types;
* ``content_parts``/``joined``/``joined_parts``: a stored message's parts
  (``chat.completions.messages.list``) were read from ``content_parts`` (they are the
  content), and the ``content`` beside them when it is not their text joined by newlines
  (with that join, to tell an edit of the parts);
* ``fields``: every other source key, verbatim (null-valued ``refusal``/``audio``/
  ``annotations``/``tool_calls``/``function_call``/``name``, unknown keys);
* on a ToolCall: ``arguments`` (the exact argument text when ``json.dumps(args)`` would spell
  it differently, ``""`` included), ``fields``/``inner`` (unknown keys of the call and of its
  ``function``/``custom`` object);
* on a part: ``fields``/``inner`` (unknown keys of the part and of its inner object), ``format``
  (an audio format the table spells otherwise, such as ``"mpeg"``, or one the API does not
  take, such as ``"ogg"``: only a part read in it is written in it), ``detail`` (an image
  detail the API does not take, such as ``"ultra"``: only a part read with it is written with
  it), ``verbatim`` (an
  ``OpaquePart``: a part the API does not take in that role, kept whole);
* on a Citation / the AudioReference: ``fields``/``inner`` (their unknown keys and null values).

The Swarm adapter reuses this module with another ``Dialect`` (other name keys, its own
metadata namespace).

>>> from tracebridge.adapters import openai_chat
>>> trace = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]
>>> openai_chat.from_messages(openai_chat.to_messages(trace)) == trace
True
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import BaseModel

from tracebridge.messages import Message
from tracebridge.options import AdapterOptions

from ._parts import API_AUDIO_FORMATS, API_IMAGE_DETAILS, STRING_ROLES
from ._read import (
    ROLES,
    Dialect,
    has_swarm_keys,
    is_sdk_message,
    parse_arguments,
    read_trace,
)
from ._reply import REASONING_KEYS
from ._write import DROPPABLE, write_trace

__all__ = [
    "DROPPABLE",
    "NAME",
    "ROLES",
    "Dialect",
    "detect",
    "from_messages",
    "options",
    "parse_arguments",
    "to_messages",
]

NAME = "openai_chat"
options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""

OPENAI = Dialect(
    NAME,
    {role: "name" for role in ROLES},
    REASONING_KEYS,
    STRING_ROLES,
    API_AUDIO_FORMATS,
    API_IMAGE_DETAILS,
    whole_citations=True,
)

# What an assistant message may carry instead of content (the audio guide sends back
# ``{"role": "assistant", "audio": {"id": ...}}``).
_CONTENT_FREE = ("tool_calls", "function_call", "audio", "refusal")


# --- public surface ------------------------------------------------------------------------


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Chat Completions message dicts and SDK message objects."""
    return read_trace(trace, OPENAI, allow_pending=allow_pending)


def from_messages(messages: Any, *, drop: Collection[str] = ()) -> list[dict[str, Any]]:
    """Plain Chat Completions message dicts, ready to send to the API.

    Each role gets only the content parts the API takes there. ``drop`` accepts losses the
    format cannot avoid, by name (see ``DROPPABLE``): ``is_error`` (tool results have no
    error flag), ``reasoning`` (there is no reasoning part), ``mime_types`` (an image by URL
    or a file by id has no mime type field), ``refusals`` (a refusal outside an assistant
    message), ``citations`` (a citation's cited text), ``custom_calls`` (an id-less custom
    call, written as a function call with args ``{"input": text}``), ``unanswered_calls`` (a
    call no result answers: its arguments did not parse, or the conversation ends before
    it), ``opaque_parts`` (a block from another format), ``audio_parts`` (an audio part in a
    format the API does not take: ``input_audio`` takes wav and mp3). Without it they raise
    ``not_representable``. The conversation rules are checked first, so what is written is
    in the order the API takes (each tool result right after the call it answers). Message ids are
    provenance, not content (other adapters' metadata is not carried either): they are not
    written.
    """
    return write_trace(messages, OPENAI, drop=drop)


def detect(trace: Any) -> bool:
    """True for a non-empty list of role-keyed message dicts / ``ChatCompletionMessage``s.

    Each has ``content``, or (an assistant message) calls, ``audio`` or ``refusal`` in its place.
    Lists with a Responses item's ``type`` key or Responses parts, and lists with a ``phase``
    key that openai_responses takes, belong to the openai_responses adapter (a ``phase``
    beside chat-only keys is a chat message's unknown field).
    Lists with Swarm's ``sender`` or ``tool_name`` keys (on a dict, or set on an SDK object)
    belong to the swarm adapter; those with a Galtea turn's ``retrieval_context``,
    ``input_files`` or ``output_files`` (or their camelCase) to the galtea adapter, when it
    reads them (user and assistant text turns).
    """
    if not isinstance(trace, list) or not trace:
        return False
    galtea_keys = phased = False
    for item in trace:
        if has_swarm_keys(item):
            return False
        if is_sdk_message(item):
            continue
        if not isinstance(item, dict):
            return False
        role = item.get("role")
        if not isinstance(role, str) or role not in ROLES:  # ``in`` on a numpy array raises
            return False
        if "content" not in item and not any(key in item for key in _CONTENT_FREE):
            return False
        if "type" in item or _has_responses_parts(item.get("content")):
            return False  # a Responses item (openai_responses): no chat message has these
        galtea_keys = galtea_keys or not _GALTEA_ONLY.isdisjoint(item)
        phased = phased or "phase" in item
    if phased and _responses_detect(trace):
        return False  # Responses messages marked by their phase (openai_responses)
    # Galtea role turns (every dump of its ``ConversationMessage``) are galtea's; a chat
    # history that keeps such a key beside what Galtea turns cannot hold stays a chat history
    return not galtea_keys or not _galtea_detect(trace)


def _responses_detect(trace: list[Any]) -> bool:
    from .. import openai_responses  # (asked only for a list with a ``phase`` key)

    return openai_responses.detect(trace)


def _galtea_detect(trace: list[Any]) -> bool:
    from .. import galtea  # (asked only for a list with such a key)

    return galtea.detect(trace)


_GALTEA_ONLY = frozenset(
    ("retrieval_context", "input_files", "output_files",
     "retrievalContext", "inputFiles", "outputFiles")
)
"""Keys of a Galtea role turn that no Chat Completions message has: a list with them that
Galtea reads is Galtea ``conversation_turns``, whose files would otherwise be kept only as
unknown fields."""


# Part types only the Responses API has: a message holding them is a Responses item.
_RESPONSES_PARTS = frozenset(("input_text", "output_text", "input_image", "input_file"))


def _has_responses_parts(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    # a part object is a Responses SDK part (the Chat Completions SDK's parts are dicts)
    kinds = [part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
             for part in content if isinstance(part, (dict, BaseModel))]
    return any(type(kind) is str and kind in _RESPONSES_PARTS for kind in kinds)


