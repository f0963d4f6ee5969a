"""Reading Chat Completions dicts and SDK objects into typed messages (openai_chat, swarm)."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel

from tracebridge import _build
from tracebridge._changed import FELL, drifted, refusal
from tracebridge._gc import pause_gc, resume_gc
from tracebridge._json import MAX_DEPTH, is_plain_json, non_finite_at
from tracebridge._optional import module_of
from tracebridge.errors import TraceError, with_article
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    Content,
    HumanMessage,
    Message,
    Part,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from tracebridge.validation import surely_valid, validate

from ._parts import described, joined_text
from ._reply import REASONING_KEYS, ReplyReader

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
"""The roles a Chat Completions message may have (``function`` is the legacy one)."""

_CHUNK_CLASSES = ("ChatCompletionChunk", "ChoiceDelta", "ChoiceDeltaToolCall")
_MESSAGE = "ChatCompletionMessage"
_STORE = "ChatCompletionStoreMessage"


@dataclass(frozen=True)
class Dialect:
    """One flavour of OpenAI message dicts: where names live and whose metadata it is."""

    source: str
    """The adapter name: the metadata namespace and ``TraceError.source``."""
    name_keys: Mapping[str, str]
    """For each role, the source key that holds the typed ``name``."""
    reasoning_keys: tuple[str, ...] = ()
    """The keys of an assistant message whose text is the model's reasoning (a
    ``ReasoningPart`` first in the content); none for a dialect that keeps them verbatim."""
    string_roles: frozenset[str] = frozenset()
    """The roles whose content is only a string or null (``_parts.STRING_ROLES``): a list of
    parts there is refused, read or written; none for a dialect whose messages hold parts in
    every role (otel's flat messages)."""
    audio_formats: tuple[str, ...] | None = None
    """The ``input_audio`` formats the API takes (``_parts.API_AUDIO_FORMATS``): a part read
    in another keeps its name, and only such a part is written in one; None for a dialect
    that writes any name (otel's flat messages)."""
    image_details: tuple[str, ...] | None = None
    """The ``image_url.detail`` values the API takes (``_parts.API_IMAGE_DETAILS``): a part
    read with another keeps it, and only such a part is written with one; None for a dialect
    that writes any detail (otel's flat messages)."""
    whole_citations: bool = False
    """Whether the API takes a ``url_citation`` only with all four keys (url, title and both
    indexes): a citation read without some lists them (``absent``), and only such a citation
    is written without them; False for a dialect that writes any (otel's flat messages)."""


T = TypeVar("T")


# --- reading -------------------------------------------------------------------------------

_FAST: dict[tuple[int, object], tuple[Dialect, Any]] = {}
"""(id of a dialect, fast reader or writer class) -> (the dialect, its instance)."""


def fast_for(dialect: Dialect, kind: Callable[[Dialect], T]) -> T:
    """The one ``kind`` (fast reader or writer) of ``dialect``, made on first use: a trace of
    a few messages would otherwise pay for making it as much as for reading them. Dialects
    are module constants; the entry keeps its dialect, so an id is never taken for another."""
    entry = _FAST.get((id(dialect), kind))
    if entry is None or entry[0] is not dialect:
        entry = (dialect, kind(dialect))
        _FAST[(id(dialect), kind)] = entry
    made: T = entry[1]
    return made


def is_sdk_message(item: Any) -> bool:
    """An SDK message object: a ``ChatCompletionMessage``, the
    ``ParsedChatCompletionMessage[T]`` of a ``parse()`` call, or a
    ``ChatCompletionStoreMessage`` of ``chat.completions.messages.list()``."""
    kind = type(item)
    return kind is not dict and sdk_message_class(kind) is not None


SWARM_KEYS = ("sender", "tool_name")
"""The keys Swarm adds to a message: the agent that wrote it, the tool that answered."""


def has_swarm_keys(item: Any) -> bool:
    """Whether a message dict, or an SDK message object among its fields the SDK does not
    declare (Swarm sets ``sender`` on the reply object before it stores it), has a key of
    ``SWARM_KEYS``."""
    if is_sdk_message(item):
        extra = getattr(item, "__pydantic_extra__", None)
        return isinstance(extra, dict) and any(key in extra for key in SWARM_KEYS)
    return isinstance(item, dict) and any(key in item for key in SWARM_KEYS)


def sdk_message_class(kind: type) -> str | None:
    """The SDK message class ``kind`` is or derives from (``_STORE`` for a stored message,
    ``_MESSAGE`` for any other), or None. Asked through the classes it derives from, not
    by its own module: pydantic names a ``ParsedChatCompletionMessage[T]`` first made at a
    module's top level after that module (``__main__``)."""
    for base in kind.__mro__:
        name = base.__name__
        if name in (_STORE, _MESSAGE) and module_of(base).startswith("openai."):
            return name
    return None


def read_trace(trace: Any, dialect: Dialect, *, allow_pending: bool) -> list[Message]:
    """Convert every element of ``trace`` in order, then check the conversation rules."""
    if not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a list of Chat Completions messages, got {type(trace).__name__}",
            source=dialect.source,
        )
    fast = fast_for(dialect, _FastReader).message
    paused = pause_gc()  # the rules too: they make no cycles either (see pause_gc)
    try:
        messages = [
            fast(item) or _Reader(dialect, i, trace).message(item) for i, item in enumerate(trace)
        ]
        # the quick pass of the rules passes no result without an id after calls with ids,
        # so only a conversation it cannot vouch for is looked at closer
        if not surely_valid(messages, allow_pending) or type(allow_pending) is not bool:
            try:
                validate(
                    messages,
                    allow_pending=allow_pending,
                    source=dialect.source,
                    origin=range(len(messages)),
                )
            except TraceError as error:
                placed = _at_legacy_keys(error, messages)
                raise _first_fault(placed, messages, dialect.source) from None
            _function_results_answer_function_calls(messages, dialect.source)
    finally:
        resume_gc(paused)
    return messages


def _at_legacy_keys(error: TraceError, messages: list[Message]) -> TraceError:
    """A rule's error pointed at the keys the source message has. The rules name a call as
    ``tool_calls[k]`` and a result by its ``tool_call_id``; an id-less call was read from the
    legacy ``function_call`` (one per message), and a result without id from a ``function``
    message, which has neither key: such an error points at ``function_call`` / the
    message. Asked only once a rule has failed."""
    i = error.index
    if i is None or not 0 <= i < len(messages):
        return error
    message = messages[i]
    if (
        error.code == "unanswered_tool_call"
        and error.path == f"messages[{i}].tool_calls[0]"
        and isinstance(message, AIMessage)
        and message.tool_calls
        and message.tool_calls[0].id is None
    ):
        return error.relocated(path=f"messages[{i}].function_call")
    if (
        error.code == "orphan_tool_result"
        and error.path == f"messages[{i}].tool_call_id"
        and isinstance(message, ToolMessage)
        and message.tool_call_id is None
    ):
        return error.relocated(path=f"messages[{i}]")
    return error


def _first_fault(error: TraceError, messages: list[Message], source: str) -> TraceError:
    """The first fault of a conversation the rules refused with ``error``: that one, or a
    ``function`` message answering ``tool_calls`` (this format's own rule) met before it.
    The rules accept such a result (they pair it by position) and go on to the next fault,
    so it is looked for here, only once they have failed. Faults are in the order one pass
    meets them, as ``validate`` reports its own: a result where it stands, a call left
    unanswered where its block closes. At the same message the rules' error is kept: they
    say whether a result answers anything at all, before this rule says how it may."""
    own = _function_result_after_tool_calls(messages, source)
    if own is not None and own.index is not None and own.index < _met_at(error, messages):
        return own
    return error


def _met_at(error: TraceError, messages: list[Message]) -> int:
    """Where the rules' pass meets ``error``: at its message, but a call left unanswered
    where its block closes (the next message that is no tool result, or the end); -1 for an
    error at no message (an empty conversation)."""
    at = error.index
    if at is None:
        return -1
    if error.code == "unanswered_tool_call":
        at += 1
        while at < len(messages) and messages[at].type == "tool":
            at += 1
    return at


def _function_results_answer_function_calls(messages: list[Message], source: str) -> None:
    """Raise the first ``function`` message that answers ``tool_calls`` (see
    ``_function_result_after_tool_calls``), for a conversation the rules accept."""
    own = _function_result_after_tool_calls(messages, source)
    if own is not None:
        raise own


def _function_result_after_tool_calls(messages: list[Message], source: str) -> TraceError | None:
    """The first ``function`` message (a result without a ``tool_call_id``) that answers
    ``tool_calls``, as an error, or None. A ``function`` message answers a legacy
    ``function_call``; after ``tool_calls`` the API takes only ``tool`` messages, each naming
    its call. The conversation rules pair an id-less result with a call by position, which
    other formats need; here it would be a trace the API refuses, and that no writer of this
    format writes back."""
    with_ids = False
    for i, message in enumerate(messages):
        kind = message.type
        if kind == "ai":
            calls = message.tool_calls  # type: ignore[union-attr]
            with_ids = bool(calls) and calls[0].id is not None
        elif kind == "tool" and with_ids and message.tool_call_id is None:  # type: ignore[union-attr]
            return TraceError(
                "orphan_tool_result",
                "a function message answers a legacy function_call, but the calls before it "
                "are tool_calls, which only tool messages (with tool_call_id) answer",
                index=i,
                path=f"messages[{i}]",
                source=source,
            )
    return None


# Keys an assistant message may hold as null, kept verbatim in ``fields`` (as _Reader keeps them).
_NULLABLE = frozenset(("refusal", "audio", "annotations", "function_call", "tool_calls"))


class _FastReader:
    """The common shapes, read without the general reader's bookkeeping.

    A message takes this path only when every key is one the general reader maps the same
    way with no error possible: string ``content`` (or null/absent on an assistant message),
    a string name under the dialect's name key, function ``tool_calls`` whose arguments parse
    to a JSON object, and nulls where the general reader would keep them. Anything else
    (parts, refusals, audio, citations, unknown keys, wrong types, streaming chunks, a ``str``
    subclass such as an Enum member where a role, a call's type or a kept key is stored or
    checked) returns None and goes through ``_Reader``, which gives the same typed message
    (``model_fields_set`` and metadata key order included) or the error.
    """

    __slots__ = ("assistant_name", "nullable", "source", "tool_name", "user_names")

    def __init__(self, dialect: Dialect) -> None:
        self.source = dialect.source
        self.assistant_name = dialect.name_keys["assistant"]
        self.nullable = _NULLABLE | {self.assistant_name}
        """Keys an assistant message may hold as null (kept in ``fields``)."""
        self.tool_name = dialect.name_keys["tool"]
        # Whether user, system and developer names are under "name" (as in both dialects).
        self.user_names = all(
            dialect.name_keys[r] == "name" for r in ("user", "system", "developer")
        )

    def message(self, item: Any) -> Message | None:
        if type(item) is not dict:
            return None
        role = item.get("role")
        if type(role) is not str:
            # a str subclass (an Enum: the general reader stores the str), or no string at
            # all (a numpy array, whose == has no truth value: the general reader refuses it)
            return None
        if role == "assistant":
            return self.assistant(item)
        content = item.get("content")
        if type(content) is not str:
            return None
        size = len(item)  # role, content, and the name / the call id where there are
        # defaults are not passed: validating them costs as much again
        if role == "user":
            if not self.user_names:
                return None
            if size == 2:
                return _build.human(content)
            if size == 3 and type(name := item.get("name")) is str:
                return _build.human(content, name)
            return None
        if role == "tool":
            call_id = item.get("tool_call_id")
            if type(call_id) is not str:
                return None
            if size == 3:
                return _build.tool(content, call_id)
            if size == 4 and type(name := item.get(self.tool_name)) is str:
                return _build.tool(content, call_id, name)
            return None
        if (role == "system" or role == "developer") and self.user_names:
            if size == 2:
                return _build.system(content, role)
            if size == 3 and type(name := item.get("name")) is str:
                return _build.system(content, role, name)
        return None

    def assistant(self, item: dict[str, Any]) -> AIMessage | None:
        # The namespace is made only when there is something to keep (most messages have
        # nothing), in the general reader's key order: content form, annotations, fields.
        form = None if "content" in item else "absent"
        fields: dict[str, Any] = {}
        content = ""
        name = None
        calls: list[ToolCall] | None = None  # made when there are calls
        annotated = False
        nullable, sender = self.nullable, self.assistant_name
        # the branches in the order the keys are most often met; None first (SDK dumps
        # carry several null keys)
        for key, value in item.items():
            if value is None:
                if key in nullable and type(key) is str:  # a subclass is no JSON key
                    fields[key] = None
                elif key == "content":
                    form = "null"
                else:
                    return None
            elif key == "content":
                if type(value) is not str:
                    return None
                content = value
            elif key == "role":
                continue
            elif key == "tool_calls":
                if type(value) is not list or not value:
                    return None
                call = self.call
                calls = []
                for raw_call in value:
                    read = call(raw_call)
                    if read is None:
                        return None
                    calls.append(read)
            elif key == sender:
                if type(value) is not str:
                    return None
                name = value
            elif key == "annotations" and type(value) is list and not value:
                annotated = True
            else:
                return None
        if form is None and not fields and not annotated:
            return _build.ai(content, calls, name, None, None)
        namespace: dict[str, Any] = {} if form is None else {"content": form}
        if annotated:
            namespace["annotations"] = []
        if fields:
            namespace["fields"] = fields
        return _build.ai(content, calls, name, None, {self.source: namespace})

    def call(self, call: Any) -> ToolCall | None:
        if type(call) is not dict or len(call) != 3:
            return None
        try:
            kind = call["type"]
            call_id = call["id"]
            function = call["function"]
            if type(function) is not dict or len(function) != 2:
                return None
            name = function["name"]
            raw = function["arguments"]
        except KeyError:
            return None  # a key missing: the general reader says which
        if (
            type(kind) is not str  # a str subclass (an Enum): the general reader refuses it
            or kind != "function"
            or type(call_id) is not str
            or type(name) is not str
            or type(raw) is not str
        ):
            return None
        # parse_arguments gives plain JSON (its decoder refuses NaN and infinities): the
        # arguments need no second check.
        if raw == "{}":  # a tool without parameters, as most SDKs spell it: nothing to parse
            return _build.call(name, {}, call_id)
        if raw == "":
            return _build.call(name, {}, call_id, {self.source: {"arguments": ""}})
        if raw[0] != "{":
            return None  # not an object, or space before it: the general reader decides
        try:  # parse_arguments, inline for the usual one-object text
            args, end = _SCAN(raw, 0)
        except (ValueError, RecursionError, StopIteration):
            return None
        if end != len(raw) or type(args) is not dict:
            return None
        if end > MAX_DEPTH and _too_deep(raw, args):
            return None
        # spelled_as_dumps, inline
        if (args and '": ' not in raw) or (
            (_FLAT(raw) is None or raw.count('": ') != len(args)) and dumps(args) != raw
        ):
            return _build.call(name, args, call_id, {self.source: {"arguments": raw}})
        return _build.call(name, args, call_id)


class _Reader(ReplyReader):
    """Reads the message at one index; every error it raises points there. ``trace``: the
    list the message is in, looked at when an empty dict is found (the last delta of a
    stream, where other deltas are)."""

    def __init__(self, dialect: Dialect, index: int, trace: list[Any] | None = None) -> None:
        super().__init__(dialect.source, index)
        self.dialect = dialect
        self.trace = trace
        self.audio_formats = dialect.audio_formats
        self.image_details = dialect.image_details
        self.whole_citations = dialect.whole_citations

    # -- messages --

    def message(self, item: Any) -> Message:
        data = self.as_dict(item)
        self.reject_streaming(data)
        if "role" not in data:
            self.reject_roleless_delta(data)
            self.fail(
                "malformed_event",
                self.root,
                f"a message needs 'role' (one of {', '.join(ROLES)}); found keys {sorted(data)}",
            )
        role = data.pop("role")
        if not isinstance(role, str) or role not in ROLES:
            self.fail(
                "unknown_role",
                f"{self.root}.role",
                f"unknown role {role!r}; accepted roles: {', '.join(ROLES)}",
            )
        namespace: dict[str, Any] = {}
        content = self.content(data, role, namespace)
        name_key = self.dialect.name_keys[role]
        name = self.name(data, name_key)
        kind: type[AnyMessage]
        # Only what differs from the defaults is passed (content always), as the fast path
        # builds it: the same model_fields_set either way.
        fields: dict[str, Any] = {"content": content}
        if name is not None:
            fields["name"] = name
        if role in ("system", "developer"):
            kind = SystemMessage
            if role != "system":
                fields["role"] = role
        elif role == "user":
            kind = HumanMessage
        elif role == "assistant":
            kind = AIMessage
            typed = self.refusal(data, content, namespace)
            if self.dialect.reasoning_keys:
                typed = self.reasoning(data, typed, self.dialect.reasoning_keys)
            fields["content"] = typed
            calls = self.calls(data)
            if calls:
                fields["tool_calls"] = calls
            audio = self.audio(data)
            if audio is not None:
                fields["audio"] = audio
            citations = self.citations(data, namespace)
            if citations:
                fields["citations"] = citations
        elif role == "tool":
            kind = ToolMessage
            fields["tool_call_id"] = self.string(data, "tool_call_id", self.root)
        elif role == "function":
            if name is None:
                self.fail(
                    "malformed_event",
                    f"{self.root}.{name_key}",
                    "a function message needs the function's 'name' (a string)",
                )
            kind = ToolMessage
        else:
            raise AssertionError(role)  # ROLES was checked above
        if data:
            namespace["fields"] = self.kept(data, self.root)
        if namespace:
            fields["metadata"] = {self.dialect.source: namespace}
        return kind(**fields)

    def as_dict(self, item: Any) -> dict[str, Any]:
        kind = type(item)
        sdk = None if kind is dict else sdk_message_class(kind)
        if sdk is not None:
            # A stored message holds the role the request gave it (the SDK makes it without
            # validation, under the reply's class, which allows "assistant" only).
            if sdk != _STORE and drifted(item):  # a role set after it was made
                self.refuse_changed(item)
            # Only the keys the response really had; a full dump would invent nulls.
            try:
                dumped: dict[str, Any] = item.model_dump(mode="json", exclude_unset=True)
            except FELL:
                self.refuse_changed(item)
                raise  # the SDK accepts the object: the fault is ours, shown as it is
            self.check_extras(item, self.root)
            return dumped
        if module_of(kind).startswith("openai."):
            if is_chunk_class(kind):
                self.fail(
                    "streaming_chunk",
                    self.root,
                    f"a streaming {kind.__name__}: aggregate "
                    "the chunks into a ChatCompletionMessage first",
                )
            self.fail(
                "malformed_event",
                self.root,
                f"expected a message, got {kind.__name__} "
                "(for a ChatCompletion, pass completion.choices[0].message)",
            )
        if not isinstance(item, Mapping):
            self.fail(
                "malformed_event",
                self.root,
                f"expected a message object with 'role', got {described(item)}",
            )
        return dict(item)

    def check_extras(
        self, model: Any, path: str, message: Any = None, within: tuple[int, ...] = ()
    ) -> None:
        """Fields the SDK does not declare (a vendor's) hold what the response said, as
        ``json.loads`` made it: a JSON dump would write a NaN there as null, a tuple as a
        list. Each must be JSON as it is (``unserializable_value`` where it is not); a field
        the SDK would refuse is told so first. The SDK's own fields are typed, but a NaN or
        an infinity set on one after the object was made would be written as null too: it is
        refused alike. ``parsed`` (a ``parse()`` call's) is the application's model, written
        as it writes itself. ``message``: the message ``model`` is part of (itself when
        None), which the SDK is asked about; ``within``: the ids of the models around
        ``model``, from the message down."""
        message = model if message is None else message
        for key, value in (model.__pydantic_extra__ or {}).items():
            try:
                self.kept(value, f"{path}.{key}")
            except TraceError:
                self.refuse_changed(message)
                raise
        within = (*within, id(model))
        for key, value in model.__dict__.items():
            if key == "parsed":
                continue
            if isinstance(value, BaseModel):
                self.nested(value, f"{path}.{key}", message, within)
            elif type(value) is list:
                for k, entry in enumerate(value):
                    if isinstance(entry, BaseModel):
                        self.nested(entry, f"{path}.{key}[{k}]", message, within)
                    else:
                        self.finite(message, entry, f"{path}.{key}[{k}]")
            elif type(value) is float or type(value) is dict:
                self.finite(message, value, f"{path}.{key}")

    def nested(self, model: Any, path: str, message: Any, within: tuple[int, ...]) -> None:
        """``check_extras`` of a model inside another (``within``: the ids of those around
        it). A model set inside itself after it was made (``m.annotations = [m]``: pydantic
        does not check assignments, and the SDK's dump writes the inner one by the field's
        class, as ``{}``) has no JSON form, nor has a chain of models deeper than a JSON
        value may nest: both are refused where they are, before the walk runs out of stack."""
        if id(model) in within:
            self.fail("unserializable_value", path,
                      f"{with_article(type(model).__name__)} set inside "
                      "itself (after it was made): JSON has no form for an object inside "
                      "itself")
        if len(within) >= MAX_DEPTH:
            self.fail("unserializable_value", path, f"objects nested more than {MAX_DEPTH} "
                      "levels deep (set after they were made): JSON readers stop before "
                      "their end")
        self.check_extras(model, path, message, within)

    def finite(self, message: Any, value: Any, path: str) -> None:
        """Refuse a NaN or an infinity in ``value`` (a field of the SDK's ``message`` or of
        a part of it): where the SDK would refuse it, as that; else as
        ``unserializable_value``."""
        found = non_finite_at(value, path)
        if found is not None:
            self.refuse_changed(message)
            self.fail("unserializable_value", found, "NaN or an infinity, which JSON has no "
                      "form for (the SDK's JSON dump writes null in its place)")

    def refuse_changed(self, item: Any) -> None:
        """Refuse an SDK object whose fields were changed after it was made (pydantic does not
        check assignments) where the SDK would refuse it; return if the SDK accepts it."""
        if sdk_message_class(type(item)) == _STORE:
            # its role is the request's, which the reply's class it is made under (allowing
            # "assistant" only) would refuse: the SDK is asked about the other fields
            item = item.model_copy(update={"role": "assistant"})
        refused = refusal(item, self.root, "the OpenAI SDK", index=self.index, source=self.source)
        if refused is not None:
            raise refused

    def reject_streaming(self, data: dict[str, Any]) -> None:
        if _is_text(data.get("object"), "chat.completion.chunk") or "delta" in data:
            self.fail(
                "streaming_chunk",
                self.root,
                "a streaming chunk: aggregate the chunks into one message first",
            )
        if "role" in data and data["role"] is None:
            # ChoiceDelta.model_dump(): only the first delta of a stream names its role.
            self.fail(
                "streaming_chunk",
                f"{self.root}.role",
                "role is null, as in a streaming "
                "delta after the first: aggregate the deltas into one message first",
            )
        if "choices" in data:
            self.fail(
                "malformed_event",
                self.root,
                "a whole completion, not a message: pass completion['choices'][0]['message']",
            )
        calls = data.get("tool_calls")
        if isinstance(calls, list):
            for k, call in enumerate(calls):
                if is_call_delta(call):
                    self.fail(
                        "streaming_chunk",
                        f"{self.root}.tool_calls[{k}]",
                        "a streaming "
                        "tool-call delta (has 'index', lacks 'id'/'type'): aggregate first",
                    )
        at = roleless_call_delta(data)
        if at is not None:
            self.fail(
                "streaming_chunk",
                f"{self.root}.tool_calls[{at}]",
                "a streaming tool-call delta (has 'index', in a message without 'role'): "
                "aggregate first",
            )

    def reject_roleless_delta(self, data: dict[str, Any]) -> None:
        """Refuse a message without ``role`` that is a stream's delta after its first, dumped
        with ``exclude_unset=True`` (``is_roleless_delta``: ``{"content": "Hel"}``, the last
        one ``{}``), where the trace shows a stream: another element is plainly a piece of one
        (``among_deltas``), or it is one of a run of such deltas right after an assistant
        message (``after_a_first_delta``). A lone one is left to the missing-role error: it
        may as well be a message whose role was lost."""
        if not is_roleless_delta(data) or not (self.among_deltas() or self.after_a_first_delta()):
            return
        if not data:
            self.fail(
                "streaming_chunk",
                self.root,
                "an empty streaming delta (a stream's last, among other deltas): "
                "aggregate first",
            )
        self.fail(
            "streaming_chunk",
            self.root,
            f"a streaming delta (no 'role', only a delta's keys {sorted(data)}, among other "
            "deltas): aggregate the deltas into one message first",
        )

    def among_deltas(self) -> bool:
        """Whether another element of the trace is a piece of a stream (``is_delta``)."""
        trace = self.trace or []
        return any(is_delta(item) for k, item in enumerate(trace) if k != self.index)

    def after_a_first_delta(self) -> bool:
        """Whether the element read is one of two or more ``is_roleless_delta`` elements in a
        row right after an assistant message: a stream's first delta names the role
        (``{"role": "assistant", "content": ""}``), the ones after it do not. One role-less
        element there is not enough: a conversation with one role lost looks the same."""
        trace = self.trace
        if trace is None:  # a message read alone (otel's flat messages): no stream around it
            return False
        start = end = self.index
        while start > 0 and is_roleless_delta(trace[start - 1]):
            start -= 1
        while end + 1 < len(trace) and is_roleless_delta(trace[end + 1]):
            end += 1
        return end > start and start > 0 and _is_assistant(trace[start - 1])

    def content(self, data: dict[str, Any], role: str, namespace: dict[str, Any]) -> Content:
        if data.get("content_parts") is not None:
            return self.stored_parts(data, role, namespace)
        path = f"{self.root}.content"
        if "content" not in data:
            if role != "assistant":
                self.fail("malformed_event", path, f"{with_article(role)} message needs 'content'")
            namespace["content"] = "absent"
            return ""
        value = data.pop("content")
        if value is None:
            if role not in ("assistant", "function"):
                self.fail(
                    "malformed_event",
                    path,
                    f"{with_article(role)} message needs content (a string or a list of parts), "
                    "got None",
                )
            namespace["content"] = "null"
            return ""
        if type(value) is str:
            return value
        if isinstance(value, list):
            return self.parts(value, path, role)
        self.fail(
            "malformed_event",
            path,
            f"expected a string, None or a list of parts, got {described(value)}",
        )

    def parts(self, value: list[Any], path: str, role: str) -> list[Part]:
        if role in self.dialect.string_roles:
            # as a null content where the API takes none: a shape of the whole content
            # the role does not take (no part of it is one the API takes there)
            self.fail(
                "malformed_event",
                path,
                f"{with_article(role)} message's content is a string or null, not a list "
                f"of parts; got {described(value)}",
            )
        return [self.part(part, f"{path}[{j}]", role) for j, part in enumerate(value)]

    def stored_parts(self, data: dict[str, Any], role: str, namespace: dict[str, Any]) -> Content:
        """A stored message's content (``chat.completions.messages.list``): the parts the
        request gave, in ``content_parts``, beside their text joined in ``content``. The parts
        are the content (``content_parts: true`` says where they go back); the joined text is
        kept (``joined``) only when it is not what ``joined_text`` gives, with what that gave
        (``joined_parts``): the writer writes the kept text only while the parts still say
        it."""
        listed = data.pop("content_parts")
        path = f"{self.root}.content_parts"
        if not isinstance(listed, list):
            self.fail("malformed_event", path,
                      f"expected a list of parts or None, got {described(listed)}")
        if "content" not in data:
            self.fail("malformed_event", f"{self.root}.content",
                      "a message with content_parts needs 'content' (their text joined)")
        joined = data.pop("content")
        if joined is not None and type(joined) is not str:
            self.fail("malformed_event", f"{self.root}.content",
                      "expected a string or None beside content_parts (their text joined), "
                      f"got {described(joined)}")
        parts = self.parts(listed, path, role)
        namespace["content_parts"] = True
        said = joined_text(parts)
        if joined != said:
            namespace["joined"] = joined
            namespace["joined_parts"] = said  # what the parts said: an edit of them shows
        return parts

    def name(self, data: dict[str, Any], key: str) -> str | None:
        if key not in data or data[key] is None:
            return None  # a null name stays in ``fields`` as it was
        value = data.pop(key)
        if type(value) is not str:
            self.fail(
                "malformed_event",
                f"{self.root}.{key}",
                f"expected a string, got {described(value)}",
            )
        return value

    # -- tool calls --

    def calls(self, data: dict[str, Any]) -> list[ToolCall]:
        calls: list[ToolCall] = []
        listed = data.get("tool_calls")
        # None and [] stay in ``fields`` as they were
        if listed is not None and not (type(listed) is list and not listed):
            path = f"{self.root}.tool_calls"
            if not isinstance(listed, list):
                self.fail(
                    "malformed_event",
                    path,
                    f"expected a list of tool calls, got {described(listed)}",
                )
            del data["tool_calls"]
            calls = [self.call(call, f"{path}[{k}]") for k, call in enumerate(listed)]
        legacy = data.get("function_call")
        if legacy is not None:
            path = f"{self.root}.function_call"
            if calls:
                self.fail(
                    "conflicting_fields",
                    path,
                    "a message with both 'tool_calls' and the "
                    "legacy 'function_call'; expected one of them",
                )
            del data["function_call"]
            function = self.mapping(legacy, path, "a function_call")
            calls = [self.function(function, path, call_id=None, extra={})]
        return calls

    def call(self, item: Any, path: str) -> ToolCall:
        data = self.mapping(item, path, "a tool call")
        call_id = self.string(data, "id", path)
        kind = self.string(data, "type", path)
        extra: dict[str, Any] = {}
        if kind == "function":
            function = self.mapping(data.pop("function", None), f"{path}.function", "'function'")
            if data:
                extra["fields"] = self.kept(data, path)
            return self.function(function, f"{path}.function", call_id=call_id, extra=extra)
        if kind == "custom":
            custom = self.mapping(data.pop("custom", None), f"{path}.custom", "'custom'")
            name = self.string(custom, "name", f"{path}.custom")
            text = self.string(custom, "input", f"{path}.custom")
            if data:
                extra["fields"] = self.kept(data, path)
            if custom:
                extra["inner"] = self.kept(custom, f"{path}.custom")
            metadata = {self.dialect.source: extra} if extra else {}
            return ToolCall(
                name=name, args={"input": text}, id=call_id, kind="custom", metadata=metadata
            )
        self.fail(
            "malformed_event",
            f"{path}.type",
            f"unknown tool call type {kind!r}; expected 'function' or 'custom'",
        )

    def function(
        self, function: dict[str, Any], path: str, *, call_id: str | None, extra: dict[str, Any]
    ) -> ToolCall:
        name = self.string(function, "name", path)
        if "arguments" in function and type(function["arguments"]) is not str:
            self.fail(
                "malformed_event",
                f"{path}.arguments",
                f"expected a JSON string, got {described(function['arguments'])}",
            )
        raw = self.string(function, "arguments", path)
        if function:
            extra["inner"] = self.kept(function, path)
        args = read_arguments(raw)
        # Only what differs from the defaults is passed, as the fast path builds it.
        given: dict[str, Any] = {"name": name}
        if args is None:
            given["invalid_args"] = raw
        else:
            if args:
                given["args"] = args
            if not spelled_as_dumps(args, raw):
                extra["arguments"] = raw  # the exact spelling (spacing, escapes) comes back out
        if call_id is not None:
            given["id"] = call_id
        if extra:
            given["metadata"] = {self.dialect.source: extra}
        return ToolCall(**given)


def is_chunk_class(kind: type) -> bool:
    """Whether an openai SDK class is one of a streaming chunk or of a part of one."""
    return kind.__name__ in _CHUNK_CLASSES or module_of(kind).endswith("_chunk")


def is_delta(item: Any) -> bool:
    """Whether an element of a trace is plainly a piece of a stream: an SDK chunk or delta
    object, or a dict the reader refuses as one (``refused_anywhere``; a whole completion's
    ``choices`` aside), or one without ``role`` whose tool calls carry ``index``."""
    kind = type(item)
    if module_of(kind).startswith("openai."):
        return is_chunk_class(kind)
    if not isinstance(item, Mapping):
        return False
    if any(key != "choices" and refused_anywhere(key, value) for key, value in item.items()):
        return True
    return roleless_call_delta(item) is not None


DELTA_KEYS = frozenset(
    ("content", "refusal", "tool_calls", "function_call", "audio", *REASONING_KEYS)
)
"""The keys a stream's delta holds: ``ChoiceDelta``'s own but ``role``, the ``audio`` of an
audio reply and the reasoning text vendors stream."""


def is_roleless_delta(item: Any) -> bool:
    """Whether an element of a trace has the shape of a stream's delta after its first, as
    ``delta.model_dump(exclude_unset=True)`` stores it: a mapping without ``role`` whose keys
    are all ``DELTA_KEYS``, each holding what a delta does (``is_delta_value``); the last
    delta, ``{}``, too. A message with parts for content, or with a key no delta has (Galtea's
    ``{"system": ..., "content": ...}``), is not one."""
    return (
        isinstance(item, Mapping)
        and "role" not in item
        and all(is_delta_value(key, value) for key, value in item.items())
    )


def is_delta_value(key: Any, value: Any) -> bool:
    """Whether ``key`` is one of ``DELTA_KEYS`` holding a value of the shape a delta gives it:
    null; a piece of text for ``content``, ``refusal`` and the reasoning keys; tool-call
    deltas (each with ``index``) for ``tool_calls``; an object for ``function_call`` and
    ``audio``."""
    if not isinstance(key, str) or key not in DELTA_KEYS:
        return False
    if value is None:
        return True
    if key == "tool_calls":
        return (
            type(value) is list
            and bool(value)
            and all(isinstance(call, Mapping) and "index" in call for call in value)
        )
    if key in ("function_call", "audio"):
        return isinstance(value, Mapping)
    return isinstance(value, str)


def _is_assistant(item: Any) -> bool:
    """Whether an element of a trace is a message dict with ``role: "assistant"``."""
    return isinstance(item, Mapping) and _is_text(item.get("role"), "assistant")


def roleless_call_delta(data: Mapping[str, Any]) -> int | None:
    """The position of the first entry of ``tool_calls`` carrying ``index`` in a message
    without ``role``, or None: a later call's first delta (its id and type, but no role:
    only a stream's first delta names it)."""
    calls = data.get("tool_calls")
    if "role" in data or not isinstance(calls, list):
        return None
    for k, call in enumerate(calls):
        if isinstance(call, Mapping) and "index" in call:
            return k
    return None


def is_call_delta(call: Any) -> bool:
    """Whether an entry of ``tool_calls`` is a streaming tool-call delta (it has ``index``
    and lacks ``id`` or ``type``), which the reader refuses in any message."""
    return isinstance(call, Mapping) and "index" in call and not ("id" in call and "type" in call)


def refused_anywhere(key: str, value: Any) -> bool:
    """Whether the reader refuses every message holding ``key`` with ``value``, as a
    streaming chunk or a whole completion (``_Reader.reject_streaming``): ``delta``,
    ``choices``, ``object: "chat.completion.chunk"``, a null ``role``, tool-call deltas."""
    if key == "delta" or key == "choices":
        return True
    if key == "object":
        return _is_text(value, "chat.completion.chunk")
    if key == "role":
        return value is None
    return key == "tool_calls" and isinstance(value, list) and any(map(is_call_delta, value))


def _is_text(value: Any, text: str) -> bool:
    """Whether ``value`` is the string ``text`` (a ``str`` Enum member of it too), asked
    without ``==`` on a value of another class, whose answer may have no truth value (a
    numpy array's)."""
    return isinstance(value, str) and value == text


def read_arguments(raw: str) -> dict[str, Any] | None:
    """A function call's argument text as the reader takes it: its JSON object, or None
    when the text is not one (the call keeps it as ``invalid_args``).

    ``""`` is ``{}``: it is how OpenRouter, vLLM and others spell the arguments of a tool
    without parameters (no arguments, not a malformed call). Writers ask this too, so that a
    call whose ``invalid_args`` would read back as arguments is refused, never written.
    """
    return {} if raw == "" else parse_arguments(raw)


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """The arguments as a JSON object, or None when the text is not one (kept as raw text)."""
    try:
        if raw[:1] == "{":
            # The scanner alone, for the usual text that is one object and nothing else;
            # anything after it (whitespace, more data) goes through the whole decoder.
            value, end = _SCAN(raw, 0)
            if end != len(raw):
                value = _DECODER.decode(raw)
        else:
            value = _DECODER.decode(raw)
    except (ValueError, RecursionError, StopIteration):  # the scanner stops at bad JSON
        return None
    if type(value) is not dict:
        return None
    return None if _too_deep(raw, value) else value


def _too_deep(raw: str, value: dict[str, Any]) -> bool:
    """Whether ``value`` (what ``raw`` parsed to) nests deeper than a JSON value may be here
    (``MAX_DEPTH``): such text is not arguments the typed call can hold. Text with fewer
    brackets than that cannot be, and is not walked."""
    return (
        len(raw) > MAX_DEPTH
        and raw.count("[") + raw.count("{") > MAX_DEPTH
        and not is_plain_json(value)
    )


def spelled_as_dumps(args: dict[str, Any], raw: str) -> bool:
    """Whether ``raw`` is ``dumps(args)`` (``args`` being what ``raw`` parsed to).

    ``dumps`` writes ``"key": value`` for a first key, so text of a non-empty object without
    ``": `` is spelled otherwise (the compact spelling most models reply with) without
    writing it out.
    """
    if args and '": ' not in raw:
        return False
    if _FLAT(raw) is not None and raw.count('": ') == len(args):
        return True
    return dumps(args) == raw


_STRING = r'"[ !#-\[\]-~]*"'
_FLAT = re.compile(
    rf"\{{{_STRING}: (?:{_STRING}|0|-?[1-9][0-9]*|true|false|null)"
    rf"(?:, {_STRING}: (?:{_STRING}|0|-?[1-9][0-9]*|true|false|null))*\}}"
).fullmatch
"""Whether text is a flat object as ``dumps`` spells it: keys and values that are strings of
printable ASCII without a quote or a backslash (``dumps`` writes them as they are), integers
without a leading zero or a ``-0``, booleans and nulls, after ``": `` and ``, ``. Such text is
``dumps`` of what it parses to, unless a key is given twice, which the parsed object then
holds once: there is one ``": `` per key given (no string holds a quote), so the count tells.
It answers at a third of the cost of writing the object out (most arguments are such objects);
text it does not match is written out and compared."""


def _not_json(token: str) -> NoReturn:
    raise ValueError(f"{token} is not JSON")


def _finite(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"{token} is out of range")
    return value


# One decoder for every call (``json.loads`` with options builds a new one each time).
_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__


def _encoder(allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps`` with its default options (``allow_nan`` as given), without rebuilding
    the C encoder per call."""
    given = functools.partial(json.dumps, allow_nan=allow_nan)
    make = getattr(json.encoder, "c_make_encoder", None)
    plain = getattr(json.encoder, "c_encode_basestring_ascii", None)
    if make is None or plain is None:
        return given

    def default(value: Any) -> Any:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    # check_circular off (no markers): the values are parsed JSON or checked JSON, never
    # circular. The rest are json.dumps's defaults: ensure_ascii, ", " and ": ".
    encode = make(None, default, plain, None, ": ", ", ", False, False, allow_nan)

    def dumps(value: Any) -> str:
        return "".join(encode(value, 0))

    probe = {"a": [1, 2.5, None, True, "\u00e9\n"], "b": {}}
    return dumps if dumps(probe) == given(probe) else given


dumps = _encoder(allow_nan=True)
"""``json.dumps(value)`` (the spelling a call's arguments are compared with)."""

dumps_finite = _encoder(allow_nan=False)
"""``dumps`` that raises ``ValueError`` on NaN or an infinity, which JSON has no spelling
for: the argument text a writer writes. A call's args are checked when it is made, but a
dict changed in place after that may hold one; the writer's fallback then names it
(``unserializable_value`` at the value)."""
