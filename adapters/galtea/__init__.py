"""Galtea ``conversation_turns`` <-> tracebridge messages, in both of Galtea's shapes.

* **pairs** (the legacy shape): ``[{"input": str, "actual_output": str}, ...]``; each dict is
  one finished exchange and becomes a ``HumanMessage`` followed by an ``AIMessage``.
* **roles** (the current SDK, ``inference_results.create_batch``):
  ``[{"role": "user" | "assistant", "content": str, "retrieval_context"?: str}, ...]``; each
  dict becomes one message.

The shape is detected per list; one list holds one shape. What the typed model has no field
for is kept under ``metadata["galtea"]``:

* ``"shape": "pairs"`` on both messages of a pair (roles is the default and is not recorded),
  so that ``from_messages`` writes a pairs trace back as pairs;
* ``"retrieval_context"`` on the ``AIMessage`` (a user turn may carry only a null one, kept on
  the ``HumanMessage``);
* ``"extra"``: the turn's other keys, verbatim (a pair's on its ``AIMessage``).

Galtea turns hold user and assistant text only. ``from_messages`` refuses anything else with
``not_representable`` unless the caller accepts that loss by name (``skip_system``,
``fold_tools``, ``drop_non_text``, ``drop_names``, ``join_consecutive``, and
``drop=[...]`` for ``refusals``, ``citations``, ``audio_replies``, ``part_boundaries``); what
was left out is then recorded in the ``omitted`` list the caller passes. The writing side lives
in ``_write.py``; ``split_current_turn`` here builds on it.

>>> from tracebridge.adapters import galtea
>>> galtea.to_messages([{"input": "hi", "actual_output": "hello"}])[1].text
'hello'
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from tracebridge._json import check_json, json_path
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AIMessage, AnyMessage, HumanMessage, Message
from tracebridge.validation import validate

from ._write import (
    DROPPABLE,
    FIELDS,
    NAME,
    Omission,
    OmissionKind,
    Options,
    Shape,
    from_messages,
    refuse,
    write_turns,
)

__all__ = [
    "DROPPABLE",
    "NAME",
    "CurrentTurn",
    "Omission",
    "OmissionKind",
    "Shape",
    "detect",
    "from_messages",
    "split_current_turn",
    "to_messages",
]

_ROLE_KEYS = frozenset({"role", "content", "retrieval_context"})
_PAIR_KEYS = frozenset({"input", "actual_output", "retrieval_context"})
_ROLES = frozenset({"user", "assistant"})


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Galtea turns, in either shape.

    Errors point at the turn in ``trace`` (``index``) and the key (``path``, e.g.
    ``conversation_turns[2].content``). ``allow_pending`` is accepted for symmetry with the
    other adapters; Galtea turns hold no tool calls, so nothing can be pending.
    """
    if not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a list of conversation turns (dicts), got {type(trace).__name__} "
            f"{short_repr(trace)}",
            path="conversation_turns",
            source=NAME,
        )
    messages: list[Message] = []
    origin: list[int] = []
    shape: Shape | None = None
    for i, turn in enumerate(trace):
        turn_shape = _shape_of(turn, i)
        if shape is None:
            shape = turn_shape
        elif turn_shape != shape:
            raise _error(
                "malformed_event",
                f"a {_NOUN[turn_shape]} in a list of {_NOUN[shape]}s (turn 0 set the shape); "
                f"one list holds one shape",
                i,
            )
        if turn_shape == "pairs":
            converted = _from_pair(turn, i)
        elif turn_shape == "roles":
            converted = [_from_role_turn(turn, i)]
        else:
            assert_never(turn_shape)
        messages.extend(converted)
        origin.extend([i] * len(converted))
    validate(messages, allow_pending=allow_pending, source=NAME, origin=origin)
    return messages


def detect(trace: Any) -> bool:
    """True for a non-empty list of pairs, or of user/assistant role turns with str content.

    A role list without ``retrieval_context`` also has the shape of an OpenAI chat history;
    ``detect_format`` then reports the trace as ambiguous, and the caller names the source.
    """
    if not isinstance(trace, list) or not trace:
        return False
    if not all(isinstance(turn, dict) for turn in trace):
        return False
    return all(map(_looks_like_pair, trace)) or all(map(_looks_like_role_turn, trace))


# --- the current exchange, as Galtea's production evaluation takes it ----------------------


class CurrentTurn(tuple[list[dict[str, Any]], str, str]):
    """``(conversation_turns, input, actual_output)`` as Galtea's production evaluation takes
    them; ``retrieval_context`` is the current answer's, or None."""

    retrieval_context: str | None

    def __new__(
        cls,
        conversation_turns: list[dict[str, Any]],
        input: str,
        actual_output: str,
        retrieval_context: str | None = None,
    ) -> CurrentTurn:
        self = super().__new__(cls, (conversation_turns, input, actual_output))
        self.retrieval_context = retrieval_context
        return self

    def __getnewargs__(self) -> tuple[list[dict[str, Any]], str, str, str | None]:
        # copy and pickle rebuild through __new__, which takes the fields, not one tuple
        return (self[0], self[1], self[2], self.retrieval_context)

    @property
    def conversation_turns(self) -> list[dict[str, Any]]:
        """The turns before the current exchange."""
        return self[0]

    @property
    def input(self) -> str:
        """The current user input."""
        return self[1]

    @property
    def actual_output(self) -> str:
        """The current answer."""
        return self[2]


def split_current_turn(
    messages: Sequence[AnyMessage],
    *,
    shape: Shape = "pairs",
    omitted: list[Omission] | None = None,
    **options: Any,
) -> CurrentTurn:
    """``(conversation_turns, input, actual_output)``: the prior turns and the current exchange.

    The conversation must end with a user message answered by an assistant message. The
    options are ``from_messages``'s. The answer's ``retrieval_context`` is on the result
    (``.retrieval_context``); other Galtea fields of the current exchange have no place in the
    call and are refused.

    >>> from tracebridge import AIMessage, HumanMessage
    >>> turns, question, answer = split_current_turn(
    ...     [HumanMessage(content="a"), AIMessage(content="b"),
    ...      HumanMessage(content="c"), AIMessage(content="d")])
    >>> turns, question, answer
    ([{'input': 'a', 'actual_output': 'b'}], 'c', 'd')
    """
    turns, origins = write_turns(messages, shape, Options(**options), omitted)
    if not turns:
        raise TraceError(
            "empty_conversation",
            "no user/assistant exchange to split (after what the options left out)",
            source=NAME,
        )
    if shape == "pairs":
        current, prior = [turns[-1]], turns[:-1]
        question, answer = current[0]["input"], current[0]["actual_output"]
    elif shape == "roles":
        current, prior = turns[-2:], turns[:-2]
        if [turn["role"] for turn in current] != ["user", "assistant"]:
            raise refuse(
                origins[-1],
                f"messages[{origins[-1]}]",
                "the conversation must end with a user message answered by an assistant "
                "message to split off the current exchange",
            )
        question, answer = current[0]["content"], current[1]["content"]
    else:
        assert_never(shape)
    allowed = [FIELDS[shape]] * len(current)
    if shape == "roles":
        allowed[0] = frozenset({"role", "content"})  # the question has no retrieval_context
    for turn, fields, at in zip(current, allowed, origins[-len(current):], strict=True):
        leftover = [key for key in turn if key not in fields]
        if leftover:
            raise refuse(
                at,
                f"messages[{at}].metadata.{NAME}",
                f"the current exchange carries Galtea fields {leftover} that the production "
                f"call (input, actual_output, retrieval_context) has no place for",
            )
    context = current[-1].get("retrieval_context")  # optional in both shapes
    return CurrentTurn(prior, question, answer, context)


# --- reading one turn ---------------------------------------------------------------------

_NOUN: dict[Shape, str] = {"pairs": "pair", "roles": "role turn"}


def _where(i: int, key: str | None = None) -> str:
    turn = f"conversation_turns[{i}]"
    return turn if key is None else json_path(turn, key)


def _error(code: Any, detail: str, i: int, key: str | None = None) -> TraceError:
    return TraceError(code, detail, index=i, path=_where(i, key), source=NAME)


def _shape_of(turn: Any, i: int) -> Shape:
    if not isinstance(turn, dict):
        raise _error(
            "malformed_event",
            f"expected a turn dict, got {type(turn).__name__} {short_repr(turn)}",
            i,
        )
    has_role = "role" in turn
    has_pair = "input" in turn or "actual_output" in turn
    if has_role and has_pair:
        raise _error(
            "malformed_event",
            f"the turn has keys of both shapes: 'role' (a role turn) and 'input'/'actual_output' "
            f"(a pair); got keys {short_repr(list(turn))}",
            i,
        )
    if has_role:
        return "roles"
    if has_pair:
        return "pairs"
    raise _error(
        "malformed_event",
        f"expected a role turn ('role', 'content') or a pair ('input', 'actual_output'); "
        f"got keys {short_repr(list(turn))}",
        i,
    )


def _text(turn: dict[str, Any], i: int, key: str, needed_by: str) -> str:
    if key not in turn:
        raise _error("malformed_event", f"missing {key!r}: {needed_by}", i, key)
    value = turn[key]
    if type(value) is not str:
        raise _error(
            "malformed_event",
            f"expected a string, got {type(value).__name__} {short_repr(value)}",
            i,
            key,
        )
    return value


def _retrieval_context(value: Any, i: int, *, on_user_turn: bool) -> str | None:
    if value is None:
        return None
    if type(value) is not str:
        raise _error(
            "malformed_event",
            f"expected a string (or null), got {type(value).__name__} {short_repr(value)}",
            i,
            "retrieval_context",
        )
    if on_user_turn:
        raise _error(
            "malformed_event",
            f"retrieval_context {short_repr(value)} on a user turn: Galtea takes it on "
            f"assistant turns only (the context the answer was built from)",
            i,
            "retrieval_context",
        )
    return value


def _extra(turn: dict[str, Any], i: int, known: frozenset[str]) -> dict[str, Any]:
    extra = {key: value for key, value in turn.items() if key not in known}
    try:
        check_json(extra, _where(i))
    except TraceError as exc:
        raise exc.relocated(index=i, source=NAME) from None
    return copy.deepcopy(extra)  # the message must not share lists/dicts with the trace


def _metadata(namespace: dict[str, Any]) -> dict[str, Any]:
    return {NAME: namespace} if namespace else {}


def _from_role_turn(turn: dict[str, Any], i: int) -> Message:
    role = turn["role"]
    if type(role) is not str:
        raise _error(
            "malformed_event",
            f"expected the role as a string ('user' or 'assistant'), got "
            f"{type(role).__name__} {short_repr(role)}",
            i,
            "role",
        )
    if role not in _ROLES:
        raise _error(
            "unknown_role",
            f"unknown role {role!r}: Galtea turns are 'user' or 'assistant'",
            i,
            "role",
        )
    content = _text(turn, i, "content", "a role turn needs its text under 'content'")
    namespace: dict[str, Any] = {}
    if "retrieval_context" in turn:
        namespace["retrieval_context"] = _retrieval_context(
            turn["retrieval_context"], i, on_user_turn=role == "user"
        )
    extra = _extra(turn, i, _ROLE_KEYS)
    if extra:
        namespace["extra"] = extra
    if role == "user":
        return HumanMessage(content=content, metadata=_metadata(namespace))
    return AIMessage(content=content, metadata=_metadata(namespace))


def _from_pair(turn: dict[str, Any], i: int) -> list[Message]:
    question = _text(turn, i, "input", "a pair needs the user's query under 'input'")
    answer = _text(
        turn, i, "actual_output", "a pair needs the assistant's answer under 'actual_output'"
    )
    namespace: dict[str, Any] = {"shape": "pairs"}
    if "retrieval_context" in turn:
        namespace["retrieval_context"] = _retrieval_context(
            turn["retrieval_context"], i, on_user_turn=False
        )
    extra = _extra(turn, i, _PAIR_KEYS)
    if extra:
        namespace["extra"] = extra
    return [
        HumanMessage(content=question, metadata={NAME: {"shape": "pairs"}}),
        AIMessage(content=answer, metadata={NAME: namespace}),
    ]


def _looks_like_pair(turn: dict[str, Any]) -> bool:
    return (
        "role" not in turn
        and type(turn.get("input")) is str
        and type(turn.get("actual_output")) is str
    )


def _looks_like_role_turn(turn: dict[str, Any]) -> bool:
    return (
        turn.get("role") in ("user", "assistant")
        and type(turn.get("content")) is str
        and "input" not in turn
        and "actual_output" not in turn
    )
