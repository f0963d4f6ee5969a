"""Writing typed messages as Chat Completions message dicts (``openai_chat`` and ``swarm``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any, NoReturn

from tracebridge._drop import check_drop
from tracebridge._gc import pause_gc, resume_gc
from tracebridge._json import json_copy, same_json
from tracebridge._shape import UNCHECKED, unchecked_field, unknown_kind
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    messages_of,
)
from tracebridge.validation import validate

from ._parts import PartWriter, is_plain, joined_text
from ._read import (
    Dialect,
    dumps_finite,
    fast_for,
    parse_arguments,
    read_arguments,
    refused_anywhere,
)
from ._reply import ReplyWriter
from ._write_keys import (
    CALL_KEYS,
    MESSAGE_KEYS,
    PART_KEYS,
    PART_NAMES,
    ROLE_NAMES,
    check_call,
    check_reply,
    refuse_unknown,
    refuse_untyped,
)

DROPPABLE = (
    "is_error",
    "reasoning",
    "mime_types",
    "refusals",
    "citations",
    "custom_calls",
    "unanswered_calls",
    "opaque_parts",
    "audio_parts",
)
"""What ``from_messages(drop=...)`` may leave out: the format has no place for them."""


# --- writing -------------------------------------------------------------------------------


def write_trace(
    messages: Any, dialect: Dialect, *, drop: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The messages as plain dicts of ``dialect``, in an order the API takes.

    The conversation rules are checked first (a result that answers nothing, or a call left
    unanswered before the conversation goes on, raises the rule's code), so each tool result
    follows the message that called it. A call with no result at all (its arguments did not
    parse, or the conversation ends before it is answered) is ``not_representable`` unless
    ``drop=["unanswered_calls"]`` leaves it out.
    """
    check_drop(drop, DROPPABLE)
    typed = messages_of(messages, dialect.source)
    paused = pause_gc()
    try:
        validate(typed, allow_pending=True, source=dialect.source)
        return _write_all(typed, dialect, drop, unanswered_calls(typed))
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, dialect.source)
        if refused is None:
            raise
        raise refused from None
    finally:
        resume_gc(paused)


def _write_all(
    typed: list[AnyMessage],
    dialect: Dialect,
    drop: Collection[str],
    unanswered: dict[int, set[int]],
) -> list[dict[str, Any]]:
    fast = fast_for(dialect, _FastWriter).message
    if unanswered:
        first = [None if i in unanswered else fast(m) for i, m in enumerate(typed)]
    else:
        first = [fast(m) for m in typed]
    if None not in first:
        return first  # type: ignore[return-value]  # no None in it
    written: list[dict[str, Any]] = []
    by_id = True  # whether the open block's calls were written with ids (``tool_calls``)
    for i, message in enumerate(typed):
        out = first[i]
        if out is not None:  # never a legacy function_call, nor a result without id
            if type(message) is AIMessage:
                by_id = True
            written.append(out)
            continue
        out = _OwnWriter(dialect, i, drop, unanswered.get(i, ())).message(message)
        if isinstance(message, AIMessage):
            by_id = out.get("function_call") is None  # a null one kept from the source is none
        elif isinstance(message, ToolMessage) and message.tool_call_id is None and by_id:
            raise TraceError(
                "not_representable",
                "a tool result without tool_call_id answers a call written with its id: the "
                "API takes only tool messages (with tool_call_id) after tool_calls",
                index=i,
                path=f"messages[{i}].tool_call_id",
                source=dialect.source,
            )
        written.append(out)
    return written


_FAST_KEYS = frozenset(("content", "fields", "annotations"))
_CLASSES = frozenset((AIMessage, HumanMessage, SystemMessage, ToolMessage))

_MAPPED = {
    "assistant": ("tool_calls", "function_call", "refusal", "audio", "annotations"),
    "tool": ("tool_call_id",),
}
"""Per role, the keys (besides role, content and the name key) whose value the reader maps
to the typed message unless it is null (or, for ``tool_calls``, an empty list): kept in
``fields`` only then."""

_FORMS = {"assistant": ("null", "absent"), "function": ("null",)}
"""Per role, the kept forms of an empty content the reader makes (``metadata.content``)."""


MAPPED_WHEN_NULL = frozenset(("content", "delta", "choices", "role"))
"""The keys whose null value ``reader_maps(role, ...)`` says the reader never keeps, for
every role: ``content`` (a null content is the ``"null"`` form) and what ``refused_anywhere``
refuses with a null (a chunk's ``delta``, a completion's ``choices``, a delta's null
``role``); the reader keeps any other null key in ``fields`` as it was (a null name,
``tool_calls``, ``refusal``, ...). The fast writer asks this set instead of ``maps`` for a
null; tests/test_openai_chat_swarm_speed_paths.py holds it to ``maps``."""


@functools.cache
def reader_maps(
    role: str, name_key: str, reasoning_keys: tuple[str, ...] = ()
) -> Callable[[str, Any], bool]:
    """Whether the reader never keeps this field of a ``role`` message (its name under
    ``name_key``) in ``fields``: ``content`` whatever its value (null and absent are
    ``metadata.content`` forms), a key it maps that is not null (nor, for ``tool_calls``, an
    empty list: those are kept as they were), an assistant's reasoning text (under one of
    ``reasoning_keys``), and what makes it refuse the whole message (streaming chunks,
    completions: ``refused_anywhere``)."""
    mapped = frozenset(("role", name_key, *_MAPPED.get(role, ())))
    reasoning = frozenset(reasoning_keys if role == "assistant" else ())

    def maps(key: str, value: Any) -> bool:
        if key == "content" or refused_anywhere(key, value):
            return True
        if key == "content_parts":
            return value is not None  # a stored message's parts: its content
        if key in reasoning:
            return type(value) is str
        return key in mapped and value is not None and not (key == "tool_calls" and value == [])

    return maps


class _FastWriter:
    """The common shapes, written without the general writer's bookkeeping.

    A message takes this path only when nothing in it can be refused or needs a ``drop``
    option: text content, no error flag, no refusal, audio or citations, calls with ids,
    parsed arguments and no kept spelling, and this adapter's metadata holding at most the
    empty-content form and kept ``fields``. Anything else returns None and goes through
    ``_Writer``, which writes the same dict or raises.
    """

    __slots__ = ("assistant_name", "maps", "source", "tool_name", "user_names")

    def __init__(self, dialect: Dialect) -> None:
        self.source = dialect.source
        names = dialect.name_keys
        self.assistant_name = names["assistant"]
        self.tool_name = names["tool"]
        # Whether user, system and developer names are under "name" (as in both dialects).
        self.user_names = all(names[r] == "name" for r in ("user", "system", "developer"))
        self.maps = {
            role: reader_maps(role, key, dialect.reasoning_keys) for role, key in names.items()
        }
        """Per role, what the general writer checks each kept field with (``check_kept``)."""

    def message(self, message: AnyMessage) -> dict[str, Any] | None:
        kind = type(message)
        if kind not in _CLASSES:
            return None  # a subclass: the general writer reads it through its attributes
        # The fields as the model holds them (reading its instance dict costs half as much
        # as reading each attribute). Only the message classes themselves (and ToolCall
        # itself) are read so: no subclass's property can stand in front of a field. A field
        # missing from it (model_construct without a required one) is a KeyError: the
        # general writer reads the attribute and fails as it always has.
        held = message.__dict__
        try:
            content = held["content"]
            if type(content) is not str:
                return None
            metadata = held["metadata"]
            fields = None
            form = None
            annotated = False
            if metadata:
                namespace = metadata.get(self.source)
                if namespace is not None:
                    if type(namespace) is not dict or not namespace.keys() <= _FAST_KEYS:
                        return None
                    if "annotations" in namespace:
                        if namespace["annotations"] != [] or kind is not AIMessage:
                            return None
                        annotated = True
                    fields = namespace.get("fields")
                    if type(fields) is not dict and (fields is not None or "fields" in namespace):
                        return None  # (a null one too): the general writer refuses it
                    form = namespace.get("content")
                    if form is None and "content" in namespace:
                        return None  # a null form, which the general writer refuses
                elif self.source in metadata:
                    return None  # a null namespace, which the general writer refuses
            name = held["name"]
            out: dict[str, Any]
            if kind is AIMessage:
                out = self.reply(held, content, form, name, annotated)
                if not out:
                    return None
            elif form is not None:
                return None  # a null/absent content: the general writer knows each role's form
            elif kind is ToolMessage:
                call_id = held["tool_call_id"]
                if held["is_error"] or call_id is None:
                    return None
                out = {"role": "tool", "content": content}
                if name is not None:
                    out[self.tool_name] = name
                out["tool_call_id"] = call_id
            elif not self.user_names:
                return None  # names of users and system prompts under another key
            elif kind is HumanMessage:
                out = {"role": "user", "content": content}
                if name is not None:
                    out["name"] = name
            elif kind is SystemMessage:
                out = {"role": held["role"], "content": content}
                if name is not None:
                    out["name"] = name
            else:
                return None
        except KeyError:
            return None
        if fields:
            maps = self.maps.get(out["role"])
            if maps is None:
                return None  # a role no dialect has (model_construct): the general writer
            for key, value in fields.items():
                if key in out:
                    return None  # the general writer says why it cannot be written
                if value is None:
                    # what ``maps`` answers for a null, without calling it (most kept
                    # fields are nulls: Swarm and SDK dumps keep four or five per reply)
                    if key in MAPPED_WHEN_NULL:
                        return None
                    out[key] = None
                elif maps(key, value):
                    return None
                else:
                    out[key] = json_copy(value)  # the frozen message's own value: a copy
        return out

    def reply(
        self, held: dict[str, Any], content: str, form: Any, name: Any, annotated: bool
    ) -> dict[str, Any]:
        """The assistant message (``held``: its instance dict), or ``{}`` when the general
        writer must write it."""
        if held["citations"] or held["audio"] is not None:
            return {}
        out: dict[str, Any] = {"role": "assistant"}
        if form is None:
            out["content"] = content
        elif content != "":
            return {}  # a form of an empty content beside text: the general writer refuses
        elif form == "null":
            out["content"] = None
        elif form != "absent":
            return {}
        if name is not None:
            out[self.assistant_name] = name
        listed = held["tool_calls"]
        if listed:
            calls = []
            for call in listed:
                if type(call) is not ToolCall:
                    return {}  # a subclass: read through its attributes, by the general writer
                spec = call.__dict__
                call_id = spec["id"]
                if (
                    call_id is None
                    or spec["metadata"]
                    or spec["invalid_args"] is not None
                    or spec["kind"] != "function"
                ):
                    return {}
                args = spec["args"]
                function = {
                    "name": spec["name"], "arguments": dumps_finite(args) if args else "{}"
                }
                calls.append({"id": call_id, "type": "function", "function": function})
            out["tool_calls"] = calls
        if annotated:
            out["annotations"] = []  # read as []: no citations, and nothing else in it
        return out


def write_message(message: AnyMessage, dialect: Dialect, index: int) -> dict[str, Any]:
    """One message as ``dialect`` spells it, on its own: no conversation rules and no
    ``drop``. (Tests build broken traces with it; ``write_trace`` writes whole histories.)"""
    return _OwnWriter(dialect, index, (), ()).message(message)


def unanswered_calls(messages: list[AnyMessage]) -> dict[int, set[int]]:
    """For each AIMessage, the positions of its calls that no result of its tool-result
    block answers (pairing as the conversation rules do). Once the rules hold, these are
    calls whose arguments did not parse, and the calls of a block the conversation ends in.
    One pass: the open block's unanswered calls, by position, in order."""
    calls = results = 0
    for message in messages:
        kind = type(message)
        if kind is ToolMessage:
            results += 1
        elif kind is AIMessage:
            calls += len(message.tool_calls)  # type: ignore[union-attr]
        elif kind is not HumanMessage and kind is not SystemMessage:
            break  # a subclass: the pass below decides
    else:
        if calls == results:
            return {}  # the rules pair each result with a distinct call: all are answered
    found: dict[int, set[int]] = {}
    opener = -1
    pending: dict[int, None] = {}  # positions of the open block's calls not answered yet
    ids: dict[str, int] = {}  # their ids
    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if pending:
                call_id = message.tool_call_id
                if call_id is None:  # answers the first call left
                    del pending[next(iter(pending))]
                elif (k := ids.pop(call_id, None)) is not None:
                    pending.pop(k, None)
            continue
        if pending:
            found[opener] = set(pending)
        if isinstance(message, AIMessage) and message.tool_calls:
            opener = i
            pending = dict.fromkeys(range(len(message.tool_calls)))
            ids = {c.id: k for k, c in enumerate(message.tool_calls) if c.id is not None}
        else:
            pending = {}
    if pending:
        found[opener] = set(pending)
    return found


class _Writer(ReplyWriter):
    """Writes the typed message at one index."""

    def __init__(
        self, dialect: Dialect, index: int, drop: Collection[str], unanswered: Collection[int]
    ) -> None:
        super().__init__(dialect.source, index, drop)
        self.dialect = dialect
        self.unanswered = unanswered
        self.reasoning_keys = dialect.reasoning_keys
        self.string_roles = dialect.string_roles
        self.audio_formats = dialect.audio_formats
        self.image_details = dialect.image_details
        self.whole_citations = dialect.whole_citations

    def message(self, message: AnyMessage) -> dict[str, Any]:
        namespace = self.namespace(message.metadata)
        reasoning: dict[str, str] = {}
        if (
            self.reasoning_keys
            and isinstance(message, AIMessage)
            and isinstance(message.content, list)
            and message.content
            and isinstance(message.content[0], ReasoningPart)
            and message.content[0].metadata.get(self.source)
        ):
            message, reasoning = self.split_reasoning(message)
        role: str
        if isinstance(message, SystemMessage):
            role = message.role
        elif isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = "function" if message.tool_call_id is None else "tool"
        else:
            unknown_kind(message)
        out: dict[str, Any] = {"role": role}
        if not (isinstance(message, AIMessage) and self.refusal(message.content, namespace, out)):
            empty = self.empty_form(message, role, namespace)
            if empty == "null":
                out["content"] = None
            elif empty != "absent":
                out["content"] = self.content(message.content, role)
        elif "content" in namespace and "refusal" not in namespace and self.known_keys:
            # (with a spelling, check_reply says the same)
            self.refuse(
                f"the kept form {short_repr(namespace['content'])} of an empty content beside "
                "a refusal written as the refusal key: the reader keeps no such form there "
                "(a refusal's own spellings are under 'refusal'), so it would be lost",
                f".metadata.{self.source}.content",
            )
        out.update(reasoning)
        name_key = self.dialect.name_keys[role]
        if message.name is not None:
            out[name_key] = message.name
        if isinstance(message, AIMessage):
            self.reply(message, namespace, out)
        if isinstance(message, ToolMessage):
            if message.is_error:
                self.lose(
                    "Chat Completions tool results have no error flag (is_error=True)",
                    ".is_error",
                    "is_error",
                )
            if message.tool_call_id is not None:
                out["tool_call_id"] = message.tool_call_id
            elif message.name is None:
                self.refuse(
                    "a tool result without tool_call_id becomes a legacy function message, "
                    "which needs the function's name (name is None)",
                    ".name",
                )
        fields = namespace.get("fields", {})
        self.check_kept(fields, out, f".metadata.{self.source}.fields",
                        reader_maps(role, self.dialect.name_keys[role], self.reasoning_keys))
        if fields:
            out.update(json_copy(fields))  # the frozen message's own values: copies
        if namespace and self.known_keys:
            if not MESSAGE_KEYS[role].issuperset(namespace):
                refuse_unknown(self, namespace, MESSAGE_KEYS[role], ROLE_NAMES[role],
                               f".metadata.{self.source}")
            if "refusal" in namespace:  # an assistant's, by now
                check_reply(self, namespace, out, f".metadata.{self.source}")
        if "content_parts" in namespace or "joined" in namespace or "joined_parts" in namespace:
            self.stored_parts(namespace, out, isinstance(message.content, list))
        return out

    def stored_parts(self, namespace: dict[str, Any], out: dict[str, Any], listed: bool) -> None:
        """Write the parts of a message read from a stored message (``content_parts: true``)
        where they were: in ``content_parts``, with their text joined in ``content`` (the
        kept ``joined`` text when there is one). ``listed``: whether the typed content is a
        list of parts."""
        where = f".metadata.{self.source}"
        marker = namespace.get("content_parts")
        if marker is not True:
            if "content_parts" in namespace:
                refuse_untyped(self, marker, "true", "the parts were read from content_parts",
                               f"{where}.content_parts")
            key = "joined" if "joined" in namespace else "joined_parts"
            self.refuse(
                f"the kept {key} text {short_repr(namespace[key])} without "
                "content_parts: true: the reader keeps it only beside the parts of a stored "
                "message, and nothing else writes it, so it would be lost",
                f"{where}.{key}",
            )
        parts = out.get("content")
        if parts == "" and listed:
            parts = []  # every part was left out by name (drop=...)
        if not isinstance(parts, list):
            self.refuse(
                f"content_parts: true (the parts go back to content_parts) beside a content "
                f"not written as parts ({short_repr(parts)}): the reader keeps it only "
                "beside a list of parts, so it would be lost",
                f"{where}.content_parts",
            )
        if "content_parts" in out:
            self.refuse(
                "the kept key 'content_parts' beside content_parts: true: written, it would "
                "replace the message's parts",
                f"{where}.fields.content_parts",
            )
        out["content"] = self.stored_text(namespace, parts, where)
        out["content_parts"] = parts

    def stored_text(self, namespace: dict[str, Any], parts: list[Any], where: str) -> Any:
        """A stored message's ``content``: the kept ``joined`` text while the parts' text is
        still what it was read as (``joined_parts``), else their text joined (edited since:
        the kept text would say what they no longer do)."""
        said = joined_text(parts)
        if "joined" not in namespace:
            if "joined_parts" in namespace:
                self.refuse("the kept joined_parts without joined: the reader keeps it only "
                            "beside the joined text it was read with", f"{where}.joined_parts")
            return said
        joined, read_as = namespace["joined"], namespace.get("joined_parts")
        if joined is not None and type(joined) is not str:
            refuse_untyped(self, joined, "a string or null", "the parts' text as the source "
                           "joined it", f"{where}.joined")
        if type(read_as) is not str:
            refuse_untyped(self, read_as, "a string", "the parts' text joined by newlines when "
                           "they were read", f"{where}.joined_parts")
        return joined if read_as == said else said

    def split_reasoning(self, message: AIMessage) -> tuple[AIMessage, dict[str, str]]:
        """The message without its first part, a reasoning part marked as read from a
        reasoning key, and that key (with the other one when both held it) and its text. The
        rest of the content goes back as the string it was read from when the part keeps
        ``content: "string"``; a marker that does not say where the text goes, or such a
        form that the rest cannot take, is refused."""
        first = message.content[0]
        assert isinstance(first, ReasoningPart)
        own = self.namespace(first.metadata)
        where = f".content[0].metadata.{self.source}"
        if not PART_KEYS["reasoning"].issuperset(own):
            refuse_unknown(self, own, PART_KEYS["reasoning"], PART_NAMES["reasoning"], where)
        key = own.get("from")
        if type(key) is not str or key not in self.reasoning_keys:
            self.refuse(
                f"the reasoning part is marked as read from {short_repr(key)}, which is no "
                f"reasoning key of an assistant message (those are "
                f"{', '.join(self.reasoning_keys)}): it has nowhere to go back to",
                f"{where}.from",
            )
        keys = {key: first.text}
        if "also" in own:
            also = own["also"]
            if type(also) is not str or also == key or also not in self.reasoning_keys:
                self.refuse(
                    f"the reasoning part is marked as also read from {short_repr(also)}, "
                    f"which is not the other reasoning key beside {key!r}",
                    f"{where}.also",
                )
            keys[also] = first.text
        rest: Any = message.content[1:]
        if "content" in own:
            only = rest[0] if len(rest) == 1 else None
            if own["content"] != "string" or not (
                not rest
                or (only is not None and is_plain(only, TextPart, self.source) and only.text)
            ):
                self.refuse(
                    f"the reasoning part keeps the content form {short_repr(own['content'])}, "
                    f"but the rest of the content ({len(rest)} part(s)) is not written as a "
                    "string (no part, or one text part with text): written, the form would "
                    "be lost",
                    f"{where}.content",
                )
            rest = only.text if isinstance(only, TextPart) else ""
        self.first = 1
        return message.model_copy(update={"content": rest}), keys

    def empty_form(self, message: AnyMessage, role: str, namespace: dict[str, Any]) -> Any:
        """The kept form of an empty content (``"null"``, ``"absent"``) or None; refused
        where the reader never makes it: another value, a role that has no such form, or a
        content that is not empty."""
        if "content" not in namespace or (
            isinstance(message, AIMessage) and "refusal" in namespace
        ):
            return None  # a refusal's own forms read the same key (``refusal``)
        form = namespace["content"]  # a null one too: the reader keeps none
        where = f".metadata.{self.source}.content"
        if form not in _FORMS.get(role, ()):
            self.refuse(f"{with_article(role)} message read from {self.FORMAT} has no empty "
                        f"content of the kept form {form!r}", where)
        if message.content != "":
            self.refuse(f"the kept form {form!r} of an empty content, with content "
                        f"{short_repr(message.content)}: written, one of them is lost", where)
        return form

    def reply(self, message: AIMessage, namespace: dict[str, Any], out: dict[str, Any]) -> None:
        """The assistant's calls, audio reply and annotations."""
        if message.tool_calls:
            self.calls(message.tool_calls, out)
            left_out = "tool_calls" not in out and "function_call" not in out
            if left_out and out.get("content") is None and "refusal" not in out:
                # Every call was left out (drop=["unanswered_calls"]): an assistant message
                # without calls needs content.
                out["content"] = ""
        if message.audio is not None:
            out["audio"] = self.audio(message.audio, ".audio")
        annotations = self.annotations(message, namespace)
        if annotations is not None:
            out["annotations"] = annotations

    def calls(self, calls: list[ToolCall], out: dict[str, Any]) -> None:
        kept = [(k, call) for k, call in enumerate(calls) if self.answerable(call, k)]
        if not kept:
            return
        if all(call.id is not None for _, call in kept):
            out["tool_calls"] = [self.call(call, f".tool_calls[{k}]") for k, call in kept]
        elif len(kept) == 1:
            k, call = kept[0]
            if call.kind == "custom":
                self.lose(
                    "a custom tool call needs an id (only function calls have the id-less "
                    "legacy function_call)",
                    f".tool_calls[{k}].id",
                    "custom_calls",
                )
            namespace = self.namespace(call.metadata)
            out["function_call"] = self.function(call, namespace, f".tool_calls[{k}]")
            if namespace and self.known_keys:
                check_call(self, namespace, "legacy", f".tool_calls[{k}]")
        else:
            self.refuse_idless(kept)

    def refuse_idless(self, kept: list[tuple[int, ToolCall]]) -> NoReturn:
        """Refuse the written calls ``kept`` (positions and calls) when some lack an id and
        they are not one lone call: only the legacy ``function_call`` is written without an
        id, and it holds one call with nothing beside it."""
        idless = [k for k, call in kept if call.id is None]
        with_ids = len(kept) - len(idless)
        if not with_ids:
            self.refuse(
                f"{len(idless)} tool calls without ids: only the legacy function_call "
                "pairs by position, and it holds one call",
                ".tool_calls",
            )
        self.refuse(
            f"{_calls(len(idless))} without an id beside {_calls(with_ids)} with one: calls "
            "with ids are written as tool_calls, where each needs its id, and only the legacy "
            "function_call (one call, nothing beside it) is written without one",
            f".tool_calls[{idless[0]}].id",
        )

    def answerable(self, call: ToolCall, k: int) -> bool:
        """False for a call the caller chose to leave out because it was never answered."""
        if k not in self.unanswered:
            return True
        why = (
            f"has arguments that did not parse ({call.invalid_args!r}) and no result"
            if call.invalid_args is not None
            else "has no result (the conversation ends before it is answered)"
        )
        self.lose(
            f"tool call {call.name!r} {why}: the API rejects an assistant message whose "
            "tool calls are not each followed by their result",
            f".tool_calls[{k}]",
            "unanswered_calls",
        )
        return False

    def call(self, call: ToolCall, path: str) -> dict[str, Any]:
        namespace = self.namespace(call.metadata)
        inner = namespace.get("inner", {})
        out: dict[str, Any]
        if call.kind == "custom":
            custom = {"name": call.name, "input": custom_input(self, call, path)}
            self.check_kept(inner, custom, f"{path}.metadata.{self.source}.inner")
            custom = {**json_copy(inner), **custom}
            out = {"id": call.id, "type": "custom", "custom": custom}
        else:
            function = self.function(call, namespace, path)
            out = {"id": call.id, "type": "function", "function": function}
        fields = namespace.get("fields", {})
        # The reader maps a call's id, type and the object of its type, which ``out`` holds:
        # the other type's object (a "custom" key on a function call, a "function" key on a
        # custom call) is kept as any unknown key, and written back.
        self.check_kept(fields, out, f"{path}.metadata.{self.source}.fields")
        if fields:
            out.update(json_copy(fields))
        if namespace and self.known_keys and not CALL_KEYS[call.kind].issuperset(namespace):
            check_call(self, namespace, call.kind, path)
        return out

    def function(self, call: ToolCall, namespace: Mapping[str, Any], path: str) -> dict[str, Any]:
        if call.invalid_args is not None:
            read_back = read_arguments(call.invalid_args)  # what the reader makes of the text
            if read_back is not None:
                self.refuse_read_back(call, read_back, f"{path}.invalid_args")
        spelled = namespace.get("arguments")
        text = _arguments(call, spelled)
        if text is not spelled and namespace and self.known_keys and "arguments" in namespace:
            # kept text not used: stale text (args edited since) is dropped by design; a
            # value that is no text at all is refused
            check_call(self, namespace, "legacy" if call.id is None else call.kind, path)
        written = {"name": call.name, "arguments": text}
        inner = namespace.get("inner", {})
        self.check_kept(inner, written, f"{path}.metadata.{self.source}.inner")
        return {**json_copy(inner), **written}


class _OwnWriter(_Writer):
    """The writer of ``openai_chat`` and ``swarm`` themselves, which also refuses what a
    message keeps under the dialect's namespace that no writer reads (``_write_keys``; the
    fast writer takes no such message). Other formats' writers built on ``_Writer`` (otel's
    flat messages) keep other keys there, and check them themselves."""

    known_keys = True
    origins: Mapping[str, str] = {
        "openai_chat": "a Chat Completions trace",
        "swarm": "a Swarm history",
    }


def custom_input(writer: PartWriter, call: ToolCall, path: str) -> str:
    """The input text of a custom call (at ``path``). ``ToolCall`` checks that its args are
    exactly ``{"input": <text>}`` when it is made, but not a dict changed in place after
    that: other args are ``malformed_event`` at ``path.args`` (the call holds its input text
    alone, so another key would be lost, and input that is no text would not read back)."""
    args = call.args
    if args.keys() != {"input"} or type(args["input"]) is not str:
        writer.malformed(
            f"a custom call's args must be {{'input': <text>}} (were they changed after the "
            f"call was made?), got {short_repr(args)}",
            f"{path}.args",
        )
    return args["input"]


def _calls(count: int) -> str:
    return f"{count} tool call" if count == 1 else f"{count} tool calls"


def _arguments(call: ToolCall, spelled: Any) -> str:
    """The argument text: the raw text kept, when it still says what ``args`` say."""
    if call.invalid_args is not None:
        return call.invalid_args
    if spelled == "" and call.args == {}:
        return ""
    # -0.0 is not 0.0 here: kept '{"dx":-0.0}' after args were edited to {"dx": 0.0}
    # would read back as the old value
    if isinstance(spelled, str) and same_json(
        parse_arguments(spelled), call.args, zero_signs=True
    ):
        return spelled
    return dumps_finite(call.args)

