"""The keys of ``metadata["otel"]`` the writer knows, at each level of a message.

The reader keeps under ``metadata["otel"]`` only the keys listed here, each on the kinds of
message, part or call it reads them from; the writers read them there. Any other key (a
``finish_reason`` beside ``fields``, say), or a known one where no writer reads it (a
``failed_attempts`` on a user message), would be left out without a word: it is refused
(``not_representable`` at the key), as are values of a known key that no writer acts on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tracebridge._json import json_path
from tracebridge.errors import with_article
from tracebridge.messages import AIMessage, AnyMessage, ToolCall

from ..openai_chat._parts import PartWriter, described
from ._spans import SOURCE

_EVERY_MESSAGE = frozenset(("fields", "content", "system_instructions", "instructions", "output"))
MESSAGE_KEYS: Mapping[str, frozenset[str]] = {
    "human": _EVERY_MESSAGE,
    "system": _EVERY_MESSAGE,
    "ai": _EVERY_MESSAGE | {"refusal", "annotations"},
    "tool": _EVERY_MESSAGE | {"role", "response", "response_key", "part_fields", "tool_message",
                              "failed_attempts"},
}
"""Per message kind, what the reader keeps on it (GenAI's, the flat messages', and what it
says of the model calls and tool spans) and the writers read."""

PART_KEYS: Mapping[str, frozenset[str]] = {
    "text": frozenset(("fields",)),
    "reasoning": frozenset(("fields",)),
    "refusal": frozenset(("fields",)),
    "image": frozenset(("fields", "inner")),
    "audio": frozenset(("fields", "inner", "format")),
    "file": frozenset(("fields", "inner", "modality")),
    "opaque": frozenset(("fields", "verbatim")),
}
CALL_KEYS = frozenset(("fields", "inner", "arguments"))
CITATION_KEYS = frozenset(("fields", "inner"))
AUDIO_KEYS = frozenset(("fields",))

REFUSAL_FORMS = ("null", "absent", "empty", "after_text", "after_parts", "part")
"""The spellings of a refusal the flat messages' reader keeps (``openai_chat._reply``)."""


def check_namespaces(
    typed: list[AnyMessage],
    instructions: Mapping[int, list[AnyMessage]],
    genai: bool,
    drop: Collection[str],
) -> None:
    """Refuse a key of ``metadata["otel"]`` no writer reads, on a message, its parts, calls,
    citations and audio reference, an ``output`` it keeps, and the system messages of its
    ``instructions`` (``instructions``: message position -> those messages). What a ``drop``
    option leaves out whole (GenAI's citations and audio replies) is not looked at."""
    for i, message in enumerate(typed):
        if not (_kept_anywhere(message) or i in instructions):
            continue  # (most messages: nothing to look at)
        check = _Checker(i)
        check.message(message, "")
        for k, system in enumerate(instructions.get(i, ())):
            check.message(system, f".metadata.{SOURCE}.instructions[{k}]")
        if isinstance(message, AIMessage):
            own = message.metadata.get(SOURCE)
            if isinstance(own, dict) and isinstance(own.get("output"), dict):
                where = f".metadata.{SOURCE}.output"
                check.keys(own["output"], MESSAGE_KEYS["ai"], "an assistant message", where)
                check.values(own["output"], where)
            if not (genai and "citations" in drop):
                for k, citation in enumerate(message.citations):
                    check.element(citation.metadata, CITATION_KEYS, "a citation",
                                  f".citations[{k}]")
            if message.audio is not None and not (genai and "audio_replies" in drop):
                check.element(message.audio.metadata, AUDIO_KEYS, "an audio reply", ".audio")


def _kept_anywhere(message: AnyMessage) -> bool:
    """Whether the message, a part, a call, a citation or its audio reply keeps anything
    under ``metadata["otel"]``."""
    if SOURCE in message.metadata:
        return True
    content = message.content
    if type(content) is list and any(SOURCE in part.metadata for part in content):
        return True
    if type(message) is not AIMessage:
        return False
    audio = message.audio
    return (
        any(SOURCE in call.metadata for call in message.tool_calls)
        or any(SOURCE in citation.metadata for citation in message.citations)
        or (audio is not None and SOURCE in audio.metadata)
    )


_MESSAGE_NAMES = {"human": "a user message", "system": "a system message",
                  "ai": "an assistant message", "tool": "a tool result"}


class _Checker(PartWriter):
    def __init__(self, index: int) -> None:
        super().__init__(SOURCE, index, ())

    def message(self, message: AnyMessage, path: str) -> None:
        if message.metadata:
            own = self.element(message.metadata, MESSAGE_KEYS[message.type],
                               _MESSAGE_NAMES[message.type], path)
            self.values(own, f"{path}.metadata.{SOURCE}")
        if isinstance(message.content, list):
            for k, part in enumerate(message.content):
                if part.metadata:
                    self.element(part.metadata, PART_KEYS[part.type], f"{with_article(part.type)} "
                                                                      "part",
                                 f"{path}.content[{k}]")
        calls: list[ToolCall] = message.tool_calls if isinstance(message, AIMessage) else []
        for k, call in enumerate(calls):
            if call.metadata:
                self.element(call.metadata, CALL_KEYS, "a tool call", f"{path}.tool_calls[{k}]")

    def element(
        self, metadata: Mapping[str, Any], known: frozenset[str], what: str, path: str
    ) -> dict[str, Any]:
        own = metadata.get(SOURCE)
        if own is None:
            return {}
        if not isinstance(own, dict):
            self.malformed(f"metadata.{SOURCE} must be an object, as to_messages writes it; "
                           f"got {described(own)}", f"{path}.metadata.{SOURCE}")
        self.keys(own, known, what, f"{path}.metadata.{SOURCE}")
        return own

    def keys(self, own: dict[str, Any], known: frozenset[str], what: str, where: str) -> None:
        for key in own:
            if key not in known:
                self.refuse(
                    f"{json_path(where, key)[1:]} is no key the otel reader keeps on {what} (it "
                    f"keeps {', '.join(sorted(known))}): nothing writes it, so it would be "
                    "lost",
                    json_path(where, key),
                )

    def values(self, own: dict[str, Any], where: str) -> None:
        """Refuse a known key's value no writer acts on (it would be left out or fail)."""
        if "refusal" in own and own["refusal"] not in REFUSAL_FORMS:
            self.malformed(f"{where[1:]}.refusal is one of {list(REFUSAL_FORMS)} when "
                           f"to_messages keeps it; got {described(own['refusal'])}",
                           f"{where}.refusal")
        if "annotations" in own and not isinstance(own["annotations"], list):
            self.malformed(f"{where[1:]}.annotations is a list when to_messages keeps "
                           f"it; got {described(own['annotations'])}", f"{where}.annotations")
        for key in ("part_fields", "tool_message"):
            if key in own and not isinstance(own[key], dict):
                self.malformed(f"{where[1:]}.{key} must be an object, as to_messages "
                               f"writes it; got {described(own[key])}", f"{where}.{key}")

