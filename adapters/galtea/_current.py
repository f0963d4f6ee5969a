"""The current exchange split off a conversation, for the earlier evaluation-task API.

That API took the prior exchanges as pairs (``conversation_turns``) and the exchange being
evaluated apart (``input``, ``actual_output``, ``retrieval_context``). The Galtea SDK 5.12 has no
such call (``evaluations.create_single_turn`` and ``traces.create_and_evaluate`` take no
``conversation_turns``): this helper serves data and code written for the earlier API.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from typing_extensions import assert_never

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AnyMessage

from ._turns import Origin, write_turns
from ._write import NAME, Omission, Options, Shape, check_options, leave_out, refuse

__all__ = ["CurrentTurn", "split_current_turn"]

# What the earlier API's call took for the current exchange (a role turn's answer spells its
# retrieval context either way; a history answer keeps it only here).
_FIELDS: dict[Shape, frozenset[str]] = {
    "roles": frozenset({"role", "content", "retrieval_context", "retrievalContext"}),
    "history": frozenset({"role", "content", "retrieval_context"}),
    "pairs": frozenset({"input", "actual_output", "retrieval_context"}),
}
_CONTEXT_KEYS = frozenset({"retrieval_context", "retrievalContext"})
_FILE_KEYS = frozenset({"input_files", "inputFiles", "output_files", "outputFiles"})
_NO_PLACE = "the evaluation-task call (input, actual_output, retrieval_context) had no place for"
# What a written role turn holds that says nothing (as in pairs and history): a null, an empty
# file list, in either spelling. Every message read from the SDK's own objects carries them.
# (A pair's keys besides its own are extra keys, which say what they hold.)
_SILENT = frozenset({"retrieval_context", "retrievalContext", "metadata", "input_files",
                     "inputFiles", "output_files", "outputFiles"})


class CurrentTurn(tuple[list[dict[str, Any]], str, str]):
    """``(conversation_turns, input, actual_output)`` as the earlier evaluation-task API took
    them; ``retrieval_context`` is the current answer's, or None.

    Two of them are equal when all four values are (the context is part of what the call
    took); a plain triple, which states no context, compares with the three it holds.
    """

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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, tuple):
            return NotImplemented
        if isinstance(other, CurrentTurn) and self.retrieval_context != other.retrieval_context:
            return False
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, tuple):
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:
        # hashed as the plain triple it may equal (its list of turns makes both unhashable)
        return tuple.__hash__(self)

    def __repr__(self) -> str:
        return (f"CurrentTurn(conversation_turns={self[0]!r}, input={self[1]!r}, "
                f"actual_output={self[2]!r}, retrieval_context={self.retrieval_context!r})")

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
    shape: Shape | None = "pairs",
    skip_system: bool = False,
    fold_tools: bool = False,
    drop_non_text: bool = False,
    drop_names: bool = False,
    join_consecutive: str | None = None,
    drop: Collection[str] = (),
    omitted: list[Omission] | None = None,
) -> CurrentTurn:
    """``(conversation_turns, input, actual_output)``: the prior turns and the current exchange,
    as the earlier evaluation-task API took them.

    The conversation must end with a user message answered by an assistant message. The
    options and shapes are ``from_messages``'s (``shape=None`` is the shape ``to_messages``
    recorded: pairs when a message says so, else roles). The answer's ``retrieval_context`` is
    on the result (``.retrieval_context``, from either spelling), whatever the shape of the
    prior turns; other Galtea fields of the current exchange have no place in the call: the
    question's ``retrieval_context`` needs ``drop=["retrieval_context"]``, ``metadata`` and
    extra keys ``drop=["turn_metadata"]``, and files are refused (a null, an empty file list
    and a spelling say nothing).

    >>> from tracebridge import AIMessage, HumanMessage
    >>> turns, question, answer = split_current_turn(
    ...     [HumanMessage(content="a"), AIMessage(content="b"),
    ...      HumanMessage(content="c"), AIMessage(content="d")])
    >>> turns, question, answer
    ([{'input': 'a', 'actual_output': 'b'}], 'c', 'd')
    """
    settings = Options(skip_system, fold_tools, drop_non_text, drop_names, join_consecutive, drop)
    check_options(settings.join_consecutive, settings.drop, omitted)
    # what the options left out is the caller's only when the split succeeds (it may refuse
    # the current exchange after the turns were written)
    found: list[Omission] = []
    turns, given = write_turns(messages, shape, settings, found, context_on_last=True)
    origins = [Origin.given(origin) for origin in given]
    if not turns:
        raise TraceError(
            "empty_conversation",
            "no user/assistant exchange to split (after what the options left out)",
            source=NAME,
        )
    if shape is None:  # resolved as from_messages resolves it: pairs turns have no role
        shape = "roles" if "role" in turns[-1] else "pairs"
    if shape == "pairs":
        current, prior = [turns[-1]], turns[:-1]
        question, answer = current[0]["input"], current[0]["actual_output"]
    elif shape == "roles" or shape == "history":
        current, prior = turns[-2:], turns[:-2]
        if [turn["role"] for turn in current] != ["user", "assistant"]:
            raise refuse(
                origins[-1].completed_by,
                f"messages[{origins[-1].completed_by}]",
                "the conversation must end with a user message answered by an assistant "
                "message to split off the current exchange",
            )
        question, answer = current[0]["content"], current[1]["content"]
    else:
        assert_never(shape)
    allowed = [_FIELDS[shape]] * len(current)
    if shape != "pairs":
        allowed[0] = frozenset({"role", "content"})  # the question has no retrieval_context
    for turn, fields, origin in zip(current, allowed, origins[-len(current):], strict=True):
        leftover = [key for key, value in turn.items() if key not in fields
                    and not (shape == "roles" and key in _SILENT and value in (None, []))]
        if leftover:
            _leave_out_fields(turn, leftover, origin, settings, found)
    answer_turn = current[-1]  # its retrieval context is optional, in either spelling
    context = answer_turn.get("retrieval_context", answer_turn.get("retrievalContext"))
    if omitted is not None:
        omitted.extend(found)
    return CurrentTurn(prior, question, answer, context)


def _leave_out_fields(turn: dict[str, Any], leftover: list[str], origin: Origin,
                      options: Options, found: list[Omission]) -> None:
    """The Galtea fields of a current turn the call has no place for: refused, or left out by
    the option that accepts the loss (files: none does), at the message they came from."""
    files = [key for key in leftover if key in _FILE_KEYS]
    if files:
        raise refuse(origin.files, f"messages[{origin.files}].metadata.{NAME}",
                     f"the current exchange carries Galtea fields {files} that {_NO_PLACE}")
    at = origin.fields
    path = f"messages[{at}].metadata.{NAME}"
    context = [key for key in leftover if key in _CONTEXT_KEYS]
    if context:
        leave_out("retrieval_context" in options.drop,
                  Omission(at, "retrieval_context", "drop=retrieval_context",
                           f"retrieval_context {short_repr(turn[context[0]])}"),
                  found, path, f"the current exchange carries Galtea fields {context}",
                  "the call's retrieval_context is the answer's, not the question's")
    rest = {key: turn[key] for key in leftover if key not in _CONTEXT_KEYS}
    if rest:
        leave_out("turn_metadata" in options.drop,
                  Omission(at, "turn_metadata", "drop=turn_metadata",
                           f"turn fields {short_repr(rest)}"),
                  found, path, f"the current exchange carries Galtea fields {list(rest)}",
                  f"{_NO_PLACE} them")
