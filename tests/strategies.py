"""hypothesis strategies: valid typed conversations, and mutations that break one rule each.

``conversations()`` builds conversations that satisfy every rule of ``validation.py``:
optional system prompt, user turns, agent steps with parallel tool calls (with ids, or
id-less pairing by position), tool errors, content parts and metadata. Each ``mutate_*``
strategy takes a valid conversation and breaks exactly one rule, returning the broken
messages with the code, index and field that validation must report; ``rule_mutations``
gives them by the code they must raise.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)

# --- JSON values -------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)

json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=8), inner, max_size=3),
    ),
    max_leaves=4,
)

json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)

names = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=1, max_size=12)
maybe_names = st.none() | names
texts = st.text(max_size=40)
invalid_argument_texts = st.sampled_from(['{"city": ', "[1, 2]", "not json"])


@cache  # building strategies once keeps generation fast
def metadata(enabled: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """Empty most of the time; sometimes an adapter-like namespace of JSON."""
    if not enabled:
        return st.just({})
    return st.one_of(st.just({}), st.dictionaries(names, json_objects, min_size=1, max_size=1))


# --- content -----------------------------------------------------------------------------


@cache  # building strategies once keeps generation fast
def parts(
    with_metadata: bool = True, refusals: bool = True, details: bool = True
) -> st.SearchStrategy[Any]:
    md = metadata(with_metadata)
    mime = st.none() | st.sampled_from(
        ["image/png", "image/jpeg", "audio/wav", "audio/mpeg", "application/pdf"]
    )
    detail = st.none() | st.sampled_from(["auto", "low", "high"]) if details else st.none()
    choices = [
        st.builds(TextPart, text=texts, metadata=md),
        st.builds(
            ImagePart,
            url=st.just("https://example.com/a.png"),
            mime_type=mime,
            detail=detail,
            metadata=md,
        ),
        st.builds(
            ImagePart, data=st.just("iVBORw0KGgo="), mime_type=mime, detail=detail, metadata=md
        ),
        st.builds(AudioPart, data=st.just("UklGRg=="), mime_type=mime, metadata=md),
        st.builds(FilePart, file_id=names, filename=st.none() | names, mime_type=mime, metadata=md),
        st.builds(ReasoningPart, text=texts, metadata=md),
        st.builds(OpaquePart, kind=names, value=json_values, metadata=md),
    ]
    if refusals:
        choices.append(st.builds(RefusalPart, text=texts, metadata=md))
    return st.one_of(choices)


@cache  # building strategies once keeps generation fast
def content(
    with_parts: bool = True,
    with_metadata: bool = True,
    refusals: bool = True,
    details: bool = True,
) -> st.SearchStrategy[Any]:
    if not with_parts:
        return texts
    return st.one_of(
        texts, st.lists(parts(with_metadata, refusals, details), min_size=1, max_size=2)
    )


@cache  # building strategies once keeps generation fast
def citations(with_metadata: bool = True) -> st.SearchStrategy[list[Citation]]:
    index = st.none() | st.integers(0, 200)
    cited = st.builds(
        Citation,
        url=st.none() | st.just("https://example.com/source"),
        title=st.none() | texts,
        start_index=index,
        end_index=index,
        cited_text=st.none() | texts,
        metadata=metadata(with_metadata),
    )
    return st.lists(cited, max_size=2)


@cache  # building strategies once keeps generation fast
def audio_replies(with_metadata: bool = True) -> st.SearchStrategy[AudioReference | None]:
    reply = st.builds(
        AudioReference,
        id=names.map(lambda name: f"audio_{name}"),
        transcript=st.none() | texts,
        data=st.none() | st.just("UklGRg=="),
        expires_at=st.none() | st.integers(0, 2**31),
        metadata=metadata(with_metadata),
    )
    return st.none() | reply


# --- conversations -----------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """Which features generated conversations use (adapters narrow it to what they express)."""

    parts: bool = True
    metadata: bool = True
    names: bool = True
    ids: bool = True
    """Tool calls and results carry ids; False pairs them by position."""
    invalid_args: bool = True
    system: bool = True
    message_ids: bool = True
    developer: bool = True
    """System messages may have the developer role."""
    refusals: bool = True
    """Parts may be refusals."""
    details: bool = True
    """Images may say their detail."""
    citations: bool = True
    """Agent messages may cite sources."""
    audio_replies: bool = True
    """Agent messages may carry an audio reply."""
    custom_calls: bool = True
    """Tool calls may be custom (free-text input) calls."""

    def system_roles(self) -> st.SearchStrategy[str]:
        return st.sampled_from(["system", "developer"]) if self.developer else st.just("system")

    def content(self) -> st.SearchStrategy[Any]:
        return content(self.parts, self.metadata, self.refusals, self.details)

    def agent_extras(self, draw: st.DrawFn) -> dict[str, Any]:
        """``citations`` and ``audio`` of an agent message, as far as the shape allows."""
        extras: dict[str, Any] = {}
        if self.citations:
            extras["citations"] = draw(citations(self.metadata))
        if self.audio_replies:
            extras["audio"] = draw(audio_replies(self.metadata))
        return extras


def _tool_step(draw: st.DrawFn, shape: Shape, counter: list[int]) -> list[Message]:
    """An AIMessage with 1-3 calls and one result per call (in a shuffled order when ids)."""
    calls: list[ToolCall] = []
    for _ in range(draw(st.integers(1, 2)) if draw(st.booleans()) else 3):
        counter[0] += 1
        invalid = shape.invalid_args and draw(st.booleans()) and draw(st.booleans())
        custom = not invalid and shape.custom_calls and draw(st.integers(0, 5)) == 0
        args = {"input": draw(texts)} if custom else {} if invalid else draw(json_objects)
        calls.append(
            ToolCall(
                name=draw(names),
                args=args,
                id=f"call_{counter[0]}" if shape.ids else None,
                invalid_args=draw(invalid_argument_texts) if invalid else None,
                kind="custom" if custom else "function",
                metadata=draw(metadata(shape.metadata)),
            )
        )
    ai = AIMessage(
        content=draw(shape.content()),
        tool_calls=calls,
        **shape.agent_extras(draw),
        name=draw(maybe_names) if shape.names else None,
        id=draw(maybe_names) if shape.message_ids else None,
        metadata=draw(metadata(shape.metadata)),
    )
    order = list(range(len(calls)))
    if shape.ids:
        order = draw(st.permutations(order))
    results = [
        ToolMessage(
            content=draw(shape.content()),
            tool_call_id=calls[k].id,
            name=calls[k].name if shape.names and draw(st.booleans()) else None,
            is_error=draw(st.booleans()),
            id=draw(maybe_names) if shape.message_ids else None,
            metadata=draw(metadata(shape.metadata)),
        )
        for k in order
    ]
    return [ai, *results]


@st.composite
def conversations(draw: st.DrawFn, shape: Shape = Shape(), max_turns: int = 3) -> list[Message]:
    """A valid conversation: [system] (human (tool-step)* ai?)+ ."""
    counter = [0]
    optional_name = maybe_names if shape.names else st.none()
    message_id = maybe_names if shape.message_ids else st.none()
    messages: list[Message] = []
    if shape.system and draw(st.booleans()):
        messages.append(
            SystemMessage(
                content=draw(shape.content()),
                role=draw(shape.system_roles()),
                name=draw(optional_name),
                id=draw(message_id),
                metadata=draw(metadata(shape.metadata)),
            )
        )
    for _ in range(draw(st.integers(1, max_turns))):
        messages.append(
            HumanMessage(
                content=draw(shape.content()),
                name=draw(optional_name),
                id=draw(message_id),
                metadata=draw(metadata(shape.metadata)),
            )
        )
        for _ in range(draw(st.integers(0, 2))):
            messages.extend(_tool_step(draw, shape, counter))
        if draw(st.booleans()):
            messages.append(
                AIMessage(
                    content=draw(shape.content()),
                    **shape.agent_extras(draw),
                    name=draw(optional_name),
                    id=draw(message_id),
                    metadata=draw(metadata(shape.metadata)),
                )
            )
    return messages


def tool_conversations(shape: Shape = Shape()) -> st.SearchStrategy[list[Message]]:
    """Valid conversations with at least one tool call."""
    return conversations(shape).filter(
        lambda ms: any(isinstance(m, ToolMessage) for m in ms)
    )


# --- mutations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Broken:
    """A conversation that breaks one rule, and what validation must say about it."""

    messages: list[Any]
    code: str
    index: int | None
    field: str = ""
    """The broken field of ``messages[index]`` as a path suffix (``".tool_calls[1]"``); every
    ``mutate_*`` says it."""

    @property
    def path(self) -> str:
        """Where tracebridge's own reader reports it: ``messages[3].tool_calls[1]``."""
        return f"messages[{self.index}]{self.field}"


def _tool_positions(messages: list[Message]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]


def _opener(messages: list[Message], i: int) -> int:
    while not isinstance(messages[i], AIMessage):
        i -= 1
    return i


@st.composite
def mutate_orphan_result(draw: st.DrawFn, shape: Shape = Shape()) -> Broken:
    """A tool result moved to right after a human message (rule 2), or before any AI (rule 1)."""
    messages = draw(conversations(shape))
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    at = draw(st.sampled_from(humans)) + 1
    orphan = ToolMessage(content="stray", tool_call_id="call_stray" if shape.ids else None)
    return Broken(
        [*messages[:at], orphan, *messages[at:]], "orphan_tool_result", at, ".tool_call_id"
    )


def _answers_a_parsed_call(messages: list[Message], i: int) -> bool:
    """Whether removing result ``i`` must leave a call unanswered (rule 6).

    A call with ``invalid_args`` may go unanswered, so with ids the removed result must answer
    a parsed call; without ids results pair by position, so the whole block must be parsed.
    """
    opener = messages[_opener(messages, i)]
    assert isinstance(opener, AIMessage)
    result = messages[i]
    assert isinstance(result, ToolMessage)
    if result.tool_call_id is not None:
        (call,) = [c for c in opener.tool_calls if c.id == result.tool_call_id]
        return call.invalid_args is None
    return all(c.invalid_args is None for c in opener.tool_calls)


@st.composite
def mutate_removed_result(draw: st.DrawFn, shape: Shape = Shape()) -> Broken:
    """One tool result of a parsed call removed: the call is unanswered (rule 6), reported at
    the AIMessage."""
    messages = draw(
        tool_conversations(shape).filter(
            lambda ms: any(_answers_a_parsed_call(ms, i) for i in _tool_positions(ms))
        )
    )
    removable = [i for i in _tool_positions(messages) if _answers_a_parsed_call(messages, i)]
    gone = draw(st.sampled_from(removable))
    opener = _opener(messages, gone)
    field = f".tool_calls[{_unanswered_call(messages, opener, gone)}]"
    return Broken(messages[:gone] + messages[gone + 1 :], "unanswered_tool_call", opener, field)


def _unanswered_call(messages: list[Message], opener: int, gone: int) -> int:
    """Which call of ``messages[opener]`` removing result ``gone`` leaves unanswered: the one
    it names by id; without ids results pair by position, so the block's last call."""
    ai, result = messages[opener], messages[gone]
    assert isinstance(ai, AIMessage)
    assert isinstance(result, ToolMessage)
    if result.tool_call_id is None:
        return len(ai.tool_calls) - 1
    return [call.id for call in ai.tool_calls].index(result.tool_call_id)


@st.composite
def mutate_duplicated_result(draw: st.DrawFn, shape: Shape = Shape()) -> Broken:
    """A tool result repeated: with ids the copy answers an answered call; without, it is
    one result more than calls (rule 4)."""
    messages = draw(tool_conversations(shape))
    original = draw(st.sampled_from(_tool_positions(messages)))
    if shape.ids:
        at = original + 1
    else:
        at = original + 1
        while at < len(messages) and isinstance(messages[at], ToolMessage):
            at += 1
    broken = [*messages[:at], messages[original], *messages[at:]]
    return Broken(broken, "orphan_tool_result", at, ".tool_call_id")


@st.composite
def mutate_duplicate_id(draw: st.DrawFn) -> Broken:
    """A later AIMessage reuses an earlier call id (rule 5)."""
    shape = Shape(ids=True)
    messages = draw(
        conversations(shape).filter(
            lambda ms: sum(bool(m.tool_calls) for m in ms if isinstance(m, AIMessage)) >= 2
        )
    )
    openers = [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and m.tool_calls]
    first, later = openers[0], draw(st.sampled_from(openers[1:]))
    taken = messages[first].tool_calls[0].id  # type: ignore[union-attr]
    ai = messages[later]
    assert isinstance(ai, AIMessage)
    calls = [ai.tool_calls[0].model_copy(update={"id": taken}), *ai.tool_calls[1:]]
    mutated = ai.model_copy(update={"tool_calls": calls})
    broken = [*messages[:later], mutated, *messages[later + 1 :]]
    return Broken(broken, "duplicate_tool_call_id", later, ".tool_calls[0].id")


@st.composite
def mutate_unknown_role(draw: st.DrawFn, shape: Shape = Shape()) -> Broken:
    """The JSON form of one message gets a type tracebridge does not know."""
    messages = draw(conversations(shape))
    dumped = [m.model_dump(mode="json") for m in messages]
    at = draw(st.integers(0, len(dumped) - 1))
    dumped[at]["type"] = draw(st.sampled_from(["robot", "developer", "function", "user", ""]))
    return Broken(dumped, "unknown_role", at, ".type")


RULE_CODES = ("orphan_tool_result", "unanswered_tool_call", "duplicate_tool_call_id")
"""The conversation rules the mutations break, by the code each must raise."""


def rule_mutations(shape: Shape = Shape()) -> dict[str, st.SearchStrategy[Broken]]:
    """The rule-breaking mutations that apply to ``shape``, by the code they must raise (a
    duplicate id needs ids)."""
    rules = {
        "orphan_tool_result": st.one_of(
            mutate_orphan_result(shape), mutate_duplicated_result(shape)
        ),
        "unanswered_tool_call": mutate_removed_result(shape),
    }
    if shape.ids:
        rules["duplicate_tool_call_id"] = mutate_duplicate_id()
    return rules


def mutations(shape: Shape = Shape()) -> st.SearchStrategy[Broken]:
    """Any one of the rule-breaking mutations that apply to ``shape``."""
    return st.one_of(*rule_mutations(shape).values())
