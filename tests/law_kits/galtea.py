"""Law kit for Galtea ``conversation_turns``: pairs and role turns.

Traces: lists of pairs, or lists of role turns (any order of user/assistant), with optional
``retrieval_context`` and extra keys. Conversations: what the format expresses: Human/AI
text-only messages (roles) and alternating Human/AI pairs, with the ``metadata["galtea"]``
that ``to_messages`` records. Broken: one turn broken per trace, at a known index.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, Message

from law_kits import BrokenTrace, LawKit
from strategies import json_values, names, texts

RESERVED = {"role", "content", "retrieval_context", "input", "actual_output"}

extra_keys = names.filter(lambda key: key not in RESERVED)
extras = st.dictionaries(extra_keys, json_values, max_size=2)
contexts = st.none() | texts


@st.composite
def pair_turns(draw: st.DrawFn) -> dict[str, Any]:
    turn: dict[str, Any] = {"input": draw(texts), "actual_output": draw(texts)}
    if draw(st.booleans()):
        turn["retrieval_context"] = draw(contexts)
    return {**turn, **draw(extras)}


@st.composite
def role_turns(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant"]))
    turn: dict[str, Any] = {"role": role, "content": draw(texts)}
    if draw(st.booleans()):
        turn["retrieval_context"] = draw(contexts if role == "assistant" else st.none())
    return {**turn, **draw(extras)}


pair_traces = st.lists(pair_turns(), min_size=1, max_size=4)
role_traces = st.lists(role_turns(), min_size=1, max_size=6)


def _metadata(namespace: dict[str, Any]) -> dict[str, Any]:
    return {"galtea": namespace} if namespace else {}


@st.composite
def _namespace(draw: st.DrawFn, *, assistant: bool, base: dict[str, Any]) -> dict[str, Any]:
    namespace = dict(base)
    if draw(st.booleans()):
        namespace["retrieval_context"] = draw(contexts if assistant else st.none())
    extra = draw(extras)
    if extra:
        namespace["extra"] = extra
    return namespace


@st.composite
def role_conversations(draw: st.DrawFn) -> list[Message]:
    """Human and AI text messages in any order: what role turns express."""
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            namespace = draw(_namespace(assistant=False, base={}))
            messages.append(HumanMessage(content=draw(texts), metadata=_metadata(namespace)))
        else:
            namespace = draw(_namespace(assistant=True, base={}))
            messages.append(AIMessage(content=draw(texts), metadata=_metadata(namespace)))
    return messages


@st.composite
def pair_conversations(draw: st.DrawFn) -> list[Message]:
    """Alternating Human/AI text messages, as to_messages reads pairs."""
    messages: list[Message] = []
    marker = {"shape": "pairs"}
    for _ in range(draw(st.integers(1, 3))):
        messages.append(HumanMessage(content=draw(texts), metadata={"galtea": marker}))
        namespace = draw(_namespace(assistant=True, base=marker))
        messages.append(AIMessage(content=draw(texts), metadata={"galtea": namespace}))
    return messages


# --- broken traces -----------------------------------------------------------------------

_UNSERIALIZABLE = st.sampled_from([(1, 2), {1, 2}, float("nan"), b"bytes", object()])


@st.composite
def broken_traces(draw: st.DrawFn) -> BrokenTrace:
    """A valid trace with one turn replaced or broken; the code and index it must raise."""
    shape = draw(st.sampled_from(["pairs", "roles"]))
    trace: list[Any] = draw(pair_traces if shape == "pairs" else role_traces)
    at = draw(st.integers(0, len(trace) - 1))
    turn = dict(trace[at])
    kind = draw(st.sampled_from(_BREAKS[shape]))
    code = "malformed_event"
    if kind == "not_a_dict":
        trace[at] = draw(st.sampled_from(["hi", None, 3, ["role", "user"]]))
    elif kind == "no_shape":
        trace[at] = {"system": "system", "content": "You are a pirate."}
    elif kind == "both_shapes":
        trace[at] = {"role": "user", "content": "hi", "input": "hi"}
    elif kind == "other_shape":
        at = len(trace)  # the first turn sets the shape; a later turn of the other shape breaks it
        other = role_turns() if shape == "pairs" else pair_turns()
        trace.append(draw(other))
        return BrokenTrace(trace, code, at)
    elif kind == "missing":
        del turn[draw(st.sampled_from(["input", "actual_output"] if shape == "pairs" else
                                      ["content"]))]
        trace[at] = turn
    elif kind == "not_a_string":
        key = draw(st.sampled_from(["input", "actual_output"] if shape == "pairs" else ["content"]))
        turn[key] = draw(st.sampled_from([None, 3, ["text"], {"type": "text", "text": "x"}]))
        trace[at] = turn
    elif kind == "context_not_a_string":
        turn["retrieval_context"] = draw(st.sampled_from([["a", "b"], 1, {"doc": "x"}]))
        trace[at] = turn
    elif kind == "context_on_user":
        trace[at] = {"role": "user", "content": "q", "retrieval_context": draw(texts)}
    elif kind == "unknown_role":
        turn["role"] = draw(st.sampled_from(["system", "tool", "developer", "function", "User"]))
        trace[at] = turn
        code = "unknown_role"
    elif kind == "role_not_a_string":
        turn["role"] = draw(st.sampled_from([None, 1, ["user"]]))
        trace[at] = turn
    elif kind == "unserializable_extra":
        turn["note"] = draw(_UNSERIALIZABLE)
        trace[at] = turn
        code = "unserializable_value"
    else:
        raise AssertionError(f"unknown break {kind!r}")
    return BrokenTrace(trace, code, at)


_COMMON = ["not_a_dict", "no_shape", "both_shapes", "other_shape", "missing", "not_a_string",
           "context_not_a_string", "unserializable_extra"]
_BREAKS = {
    "pairs": _COMMON,
    "roles": [*_COMMON, "context_on_user", "unknown_role", "role_not_a_string"],
}

KIT = LawKit(
    traces=st.one_of(pair_traces, role_traces),
    conversations=st.one_of(role_conversations(), pair_conversations()),
    broken=st.one_of(
        broken_traces(),
        st.just(BrokenTrace([], "empty_conversation", None)),
        st.sampled_from([{"input": "q", "actual_output": "a"}, "turns", None]).map(
            lambda trace: BrokenTrace(trace, "malformed_event", None)
        ),
    ),
)
