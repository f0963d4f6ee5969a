"""What a converted conversation says, as a set of comparable facts.

Two converters can write the same information in different places: a refusal is
``additional_kwargs["refusal"]`` in one LangChain message and a ``refusal`` block in
another; an image is an ``image_url`` part, a v1 ``image`` block or an Anthropic
``source``. Comparing outputs byte for byte would call those different, and comparing by eye
proves nothing. So each output is projected to facts: tuples
``(message index, kind, *values)`` that name one piece of information each, wherever the
format keeps it. "Theirs carries nothing ours does not" is then
``facts(theirs) <= facts(ours)``.

Kinds (values after the index):

* ``role`` (OpenAI role: system, developer, user, assistant, tool, function, or a
  ``ChatMessage``'s own role), ``name``, ``id``
* ``text`` (every text piece of the content, joined by newlines, as a string content reads)
* ``call`` (id, name, canonical JSON of the arguments); ``invalid_call`` (id, name, raw text);
  ``custom_call`` (id, name, input)
* ``tool_call_id``, ``status`` (only ``error``), ``artifact``
* ``refusal``, ``reasoning``, ``reasoning_extra`` (key, value)
* ``image`` (source), ``image_detail`` (source, detail), ``mime_type`` (source, type);
  a source is the URL, a ``data:`` URL for inline bytes, or ``file_id:<id>``
* ``audio`` (base64, mime type), ``file`` (source), ``filename`` (source, name)
* ``audio_reply`` (key, value), ``citation`` (url, title, start, end, cited text),
  ``citation_extra`` (key, value)
* ``in_result`` (tool_use_id, *fact): a fact inside an Anthropic ``tool_result`` block
* ``usage``, ``response_metadata`` (key, value)
* ``block`` (type, canonical JSON): a block no kind above describes, whole
* ``extra`` (where, key, value): a key no kind above describes
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .content import Fact, call_fact, canon, citations, content_facts

__all__ = ["langchain_facts", "openai_facts"]

# --- OpenAI Chat Completions dicts ---------------------------------------------------------

_OPENAI_MAPPED = frozenset(
    {
        "role",
        "name",
        "content",
        "refusal",
        "tool_calls",
        "function_call",
        "tool_call_id",
        "audio",
        "annotations",
    }
)


def openai_facts(messages: Iterable[dict[str, Any]]) -> frozenset[Fact]:
    """The facts of a list of Chat Completions message dicts."""
    facts: set[Fact] = set()
    for i, message in enumerate(messages):
        facts.add((i, "role", message["role"]))
        if message.get("name"):
            facts.add((i, "name", message["name"]))
        facts.update(content_facts(i, message.get("content")))
        if message.get("refusal"):
            facts.add((i, "refusal", message["refusal"]))
        for call in message.get("tool_calls") or ():
            facts.add(_openai_call(i, call))
        if message.get("function_call"):
            call = message["function_call"]
            facts.add(call_fact(i, None, call.get("name"), call.get("arguments")))
        if message.get("tool_call_id") is not None:
            facts.add((i, "tool_call_id", message["tool_call_id"]))
        for key, value in (message.get("audio") or {}).items():
            facts.add((i, "audio_reply", key, canon(value)))
        facts.update(citations(i, message.get("annotations") or ()))
        for key, value in message.items():
            if key not in _OPENAI_MAPPED and value is not None:
                facts.add((i, "extra", "message", key, canon(value)))
    return frozenset(facts)


def _openai_call(i: int, call: dict[str, Any]) -> Fact:
    if call.get("type") == "custom":
        custom = call["custom"]
        return (i, "custom_call", call.get("id"), custom.get("name"), custom.get("input"))
    function = call.get("function") or {}
    return call_fact(i, call.get("id"), function.get("name"), function.get("arguments"))


# --- LangChain messages --------------------------------------------------------------------

_KWARGS_MAPPED = frozenset(
    {
        "__openai_role__",
        "refusal",
        "audio",
        "annotations",
        "function_call",
        "tool_calls",
        "invalid_tool_calls",
        "usage_metadata",
    }
)


def langchain_facts(messages: Iterable[Any]) -> frozenset[Fact]:
    """The facts of a list of LangChain ``BaseMessage`` objects."""
    facts: set[Fact] = set()
    for i, message in enumerate(messages):
        kwargs = message.additional_kwargs
        facts.add((i, "role", _langchain_role(message)))
        if message.name:
            facts.add((i, "name", message.name))
        if message.id:
            facts.add((i, "id", message.id))
        facts.update(content_facts(i, message.content))
        for call in getattr(message, "tool_calls", ()) or ():
            facts.add((i, "call", call.get("id"), call["name"], canon(call["args"])))
        invalid = [*(getattr(message, "invalid_tool_calls", ()) or ())]
        invalid += kwargs.get("invalid_tool_calls") or []
        for call in invalid:
            facts.add((i, "invalid_call", call.get("id"), call.get("name"), call.get("args")))
        usage = getattr(message, "usage_metadata", None) or kwargs.get("usage_metadata")
        if usage:
            facts.add((i, "usage", canon(usage)))
        if getattr(message, "tool_call_id", None) is not None:
            facts.add((i, "tool_call_id", message.tool_call_id))
        if getattr(message, "status", None) == "error":
            facts.add((i, "status", "error"))
        if getattr(message, "artifact", None) is not None:
            facts.add((i, "artifact", canon(message.artifact)))
        facts.update(_kwargs_facts(i, kwargs))
        for key, value in message.response_metadata.items():
            facts.add((i, "response_metadata", key, canon(value)))
    return frozenset(facts)


def _langchain_role(message: Any) -> str:
    kind = type(message).__name__.removesuffix("Chunk")
    if kind == "SystemMessage":
        return str(message.additional_kwargs.get("__openai_role__", "system"))
    roles = {
        "HumanMessage": "user",
        "AIMessage": "assistant",
        "ToolMessage": "tool",
        "FunctionMessage": "function",
    }
    if kind == "ChatMessage":
        return str(message.role)
    return roles[kind]


def _kwargs_facts(i: int, kwargs: dict[str, Any]) -> Iterator[Fact]:
    if kwargs.get("refusal"):
        yield (i, "refusal", kwargs["refusal"])
    for key, value in (kwargs.get("audio") or {}).items():
        yield (i, "audio_reply", key, canon(value))
    yield from citations(i, kwargs.get("annotations") or ())
    if kwargs.get("function_call"):
        call = kwargs["function_call"]
        yield call_fact(i, None, call.get("name"), call.get("arguments"))
    for call in kwargs.get("tool_calls") or ():
        yield _openai_call(i, call)
    for key, value in kwargs.items():
        if key not in _KWARGS_MAPPED:
            yield (i, "extra", "additional_kwargs", key, canon(value))
