"""Deterministic tool-call metrics: ``ToolCallAccuracy`` and ``ToolCallF1``.

Predicted calls are every ``AIMessage.tool_calls`` of the conversation, in order; the
reference is ``sample.reference_tool_calls``. Arguments compare as JSON (see
``_matching.json_key``); a call whose arguments did not parse (``invalid_args``) matches
nothing. Formulas and edge cases: docs/metrics.md.
"""

from __future__ import annotations

import asyncio
import math
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any

from .._drop import check_flag
from .._json import _INT_BOUND, _INT_FLOOR, check_json, json_copy, json_copy_checked
from .._shape import UNCHECKED, unchecked_field, unchecked_value
from ..errors import TraceError
from ..messages import ToolCall
from ..sample import MultiTurnSample
from ._matching import Calls, Pair, Score, argument_items, equal_keys, order_free_pairs
from ._ordered import forced_front, ordered_pairs
from .base import Metric, MetricResult

__all__ = ["PredictedCall", "ToolCallAccuracy", "ToolCallF1", "predicted_calls"]

PredictedCall = tuple[int, ToolCall]
"""(index of the AIMessage in the conversation, the call)."""

_INVALID = attrgetter("invalid_args")
_SECOND = itemgetter(1)
_NO_REFERENCE = "the sample has no reference_tool_calls (None); give [] to expect no calls"
_PLAIN_SCALARS = frozenset({str, bool, type(None)})
"""The argument values plain JSON whatever they hold (an int is, up to JSON's digits)."""


def predicted_calls(sample: MultiTurnSample) -> list[PredictedCall]:
    """Every tool call the agent made, in conversation order, with its message index."""
    # the type tag rather than isinstance: the discriminator says the same, faster
    return [
        (index, call)
        for index, message in enumerate(sample.messages)
        if message.type == "ai"
        for call in message.tool_calls
    ]


def _described(entry: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """``entry`` with the call's name, args and (when set) invalid_args added."""
    entry["name"] = call.name
    entry["args"] = json_copy(call.args)  # a copy: editing a result never edits the sample
    if call.invalid_args is not None:
        entry["invalid_args"] = call.invalid_args
    return entry


def _reference_described(j: int, call: ToolCall) -> dict[str, Any]:
    """The details entry of reference call ``j``: its args copied and checked as JSON in one
    walk (a value put there after validation: ``NotPlainJson``, which ``_computed`` turns into
    ``unserializable_value`` where it is)."""
    entry = {"reference": j, "name": call.name, "args": json_copy_checked(call.args)}
    if call.invalid_args is not None:
        entry["invalid_args"] = call.invalid_args
    return entry


class _Deterministic(Metric):
    """A metric computed on the spot: ``score()`` needs no event loop."""

    def compute(self, sample: MultiTurnSample) -> MetricResult:
        raise NotImplementedError

    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        return self._computed(sample)

    def score(self, sample: MultiTurnSample) -> MetricResult:
        """Score one sample synchronously (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._computed(sample)
        # the same rule as every metric, so code that works with one works with all
        raise RuntimeError(
            f"{type(self).__name__}.score() was called inside a running event loop; "
            "use `await metric.ascore(sample)` there"
        )

    def _computed(self, sample: MultiTurnSample) -> MetricResult:
        """``compute``; a value that is not JSON (put into a call's ``args`` after validation:
        a set, a tuple inside a list), or a field of another type than declared (a call made
        with ``model_construct(args=None)``), refused where it is, not a raw exception."""
        try:
            return self.compute(sample)
        except UNCHECKED:
            refused = _unchecked(sample) or _not_json(sample)
            if refused is None:
                raise
            raise refused from None


def _unchecked(sample: MultiTurnSample) -> TraceError | None:
    """``malformed_event`` at the first field of the sample's messages, then of its reference
    calls, that is not of its declared type (``tracebridge._shape``); None when there is none.
    Only what the metric reads is looked at (the calls, and what the transcript hash covers,
    not metadata): a fault elsewhere is not blamed for one that stopped it."""
    return unchecked_field(sample.messages, hashed_only=True) or unchecked_value(
        sample.reference_tool_calls, list[ToolCall] | None, "reference_tool_calls"
    )


def _not_json(sample: MultiTurnSample) -> TraceError | None:
    """``unserializable_value`` at the first argument value of the sample's calls (predicted,
    then reference) that is not plain JSON; None when they all are."""
    for i, message in enumerate(sample.messages):
        if message.type == "ai":
            for k, call in enumerate(message.tool_calls):
                try:
                    check_json(call.args, f"messages[{i}].tool_calls[{k}].args")
                except TraceError as error:
                    return TraceError(error.code, error.detail, index=i, path=error.path)
    for j, call in enumerate(sample.reference_tool_calls or ()):
        try:
            check_json(call.args, f"reference_tool_calls[{j}].args")
        except TraceError as error:
            return error
    return None


class ToolCallAccuracy(_Deterministic):
    """Pairs predicted and reference calls, scoring each pair by its equal arguments.

    A pair (same name, both arguments parsed) scores the share of the union of their
    argument keys whose values are equal (1 when neither has arguments). Pairs maximise
    the total: in order (a longest common subsequence by name) when ``strict_order``,
    one-to-one in any order otherwise. ``value = total / max(len(predicted),
    len(reference))``; both empty -> 1.0.

    >>> from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
    >>> call = ToolCall(name="search", args={"query": "python", "limit": 10}, id="c1")
    >>> sample = MultiTurnSample(
    ...     messages=[HumanMessage(content="find"), AIMessage(tool_calls=[call]),
    ...               ToolMessage(content="ok", tool_call_id="c1")],
    ...     reference_tool_calls=[ToolCall(name="search", args={"query": "python", "limit": 5})],
    ... )
    >>> ToolCallAccuracy().score(sample).value
    0.5
    """

    def __init__(self, strict_order: bool = True) -> None:
        check_flag("strict_order", strict_order)  # "false" would be true: scored in order
        self.strict_order = strict_order
        self.name = "tool_call_accuracy" if strict_order else "tool_call_accuracy_unordered"

    def compute(self, sample: MultiTurnSample) -> MetricResult:
        """The result for ``sample`` (what ``score`` and ``ascore`` return)."""
        reference = sample.reference_tool_calls
        if reference is None:
            return self.failed(sample, _NO_REFERENCE)
        predicted = predicted_calls(sample)
        calls = list(map(_SECOND, predicted))
        if self.strict_order:
            pairs, sames = _ordered(calls, reference)
        else:
            pairs, sames = order_free_pairs(Calls(calls), Calls(reference)), {}
        longest = max(len(calls), len(reference))
        described, numerator, denominator = _described_pairs(pairs, predicted, reference, sames)
        # int / int is correctly rounded: the same float as float(Fraction(...))
        value = numerator / (denominator * longest) if longest else 1.0
        unmatched_predicted, unmatched_reference = _unmatched(predicted, reference, pairs)
        details = {
            "strict_order": self.strict_order,
            "total": numerator / denominator,
            "predicted_count": len(predicted),
            "reference_count": len(reference),
            "pairs": described,
            "unmatched_predicted": unmatched_predicted,
            "unmatched_reference": unmatched_reference,
        }
        return self.scored(sample, value, details)


def _ordered(
    predicted: list[ToolCall], reference: list[ToolCall]
) -> tuple[list[Pair], dict[int, list[str]]]:
    """``ordered_pairs``, after the steps ``forced_front`` takes on the calls as they are
    (none when a call's arguments did not parse: those go the general way); with the equal
    argument names ``forced_front`` found."""
    if _broken(predicted) or _broken(reference):
        return ordered_pairs(Calls(predicted, by_name=True), Calls(reference, by_name=True)), {}
    i, j, pairs, sames = forced_front(predicted, reference)
    if i == len(predicted) or j == len(reference):
        return pairs, sames
    rest = ordered_pairs(Calls(predicted[i:], by_name=True), Calls(reference[j:], by_name=True))
    if i == 0 and j == 0:
        return rest, sames
    return pairs + [(a + i, b + j, score) for a, b, score in rest], sames


def _broken(calls: list[ToolCall]) -> bool:
    """Whether a call's arguments did not parse."""
    return list(map(_INVALID, calls)).count(None) != len(calls)


def _described_pairs(
    pairs: list[Pair],
    predicted: list[PredictedCall],
    reference: list[ToolCall],
    sames: dict[int, list[str]],
) -> tuple[list[dict[str, Any]], int, int]:
    """Each pair as its details entry, and the sum of the pair scores as numerator and
    denominator (exact). ``sames``: the equal argument names of pairs already compared,
    by predicted position."""
    described: list[dict[str, Any]] = []
    append = described.append
    whole = 0
    parts: list[Score] = []
    for i, j, score in pairs:
        message_index, call = predicted[i]
        e, u = score
        if e == u:  # every argument equal: the calls are identical, the pair scores 1
            whole += 1
            append(
                {
                    "predicted": i,
                    "reference": j,
                    "message_index": message_index,
                    "name": call.name,
                    "score": 1.0,
                    "equal_args": sorted(call.args),
                    "different_args": [],
                }
            )
            continue
        args, other = call.args, reference[j].args
        same = sames.get(i)
        if same is None:
            same = equal_keys(args, other)
        parts.append(score)
        append(
            {
                "predicted": i,
                "reference": j,
                "message_index": message_index,
                "name": call.name,
                "score": e / u,
                "equal_args": sorted(same),
                # u is the size of the union of the argument names: when both calls have
                # that many, they have the same names
                "different_args": sorted(args.keys() - same)
                if len(args) == u == len(other)
                else sorted((args.keys() | other.keys()).difference(same)),
            }
        )
    if not parts:
        return described, whole, 1
    denominator = math.lcm(*{u for _, u in parts})
    numerator = whole * denominator + sum([e * (denominator // u) for e, u in parts])
    return described, numerator, denominator


def _unmatched(
    predicted: list[PredictedCall], reference: list[ToolCall], pairs: list[Pair]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The details entries of the calls in no pair, each side in order."""
    # pairs are one-to-one: a side with as many calls as pairs has none left over
    left: list[int] = []
    right: list[int] = []
    if len(pairs) != len(predicted):
        free = bytearray(b"\x01") * len(predicted)
        for i, _, _ in pairs:
            free[i] = 0
        left = list(compress(range(len(predicted)), free))
    if len(pairs) != len(reference):
        free = bytearray(b"\x01") * len(reference)
        for _, j, _ in pairs:
            free[j] = 0
        right = list(compress(range(len(reference)), free))
    return (
        [
            _described({"predicted": i, "message_index": predicted[i][0]}, predicted[i][1])
            for i in left
        ],
        [_reference_described(j, reference[j]) for j in right],
    )


class ToolCallF1(_Deterministic):
    """F1 of exact (name, arguments) matches, counted as multisets.

    A call made twice counts twice; a call with ``invalid_args`` matches nothing.
    ``F1 = 2·tp / (2·tp + fp + fn)``; both lists empty -> 1.0 (the agent did exactly what was
    expected). ``details`` holds tp, fp, fn, precision and recall (None when undefined:
    precision with no predicted call, recall with no reference call).
    """

    name = "tool_call_f1"

    def compute(self, sample: MultiTurnSample) -> MetricResult:
        """The result for ``sample`` (what ``score`` and ``ascore`` return)."""
        reference = sample.reference_tool_calls
        if reference is None:
            return self.failed(sample, _NO_REFERENCE)
        reference_keys: list[Any] = []
        wanted: dict[Any, int] = {}
        # A call's multiset key: its name and argument items (one for each equal value, a
        # boolean apart from a number); None for a call that matches nothing (its arguments
        # did not parse). Every value a scalar is the common case: hashable as it is.
        for wanted_call in reference:
            if wanted_call.invalid_args is not None:
                reference_keys.append(None)
                continue
            try:
                key = (
                    wanted_call.name,
                    frozenset([(k, v, v.__class__ is bool) for k, v in wanted_call.args.items()]),
                )
            except TypeError:
                key = (wanted_call.name, argument_items(wanted_call.args))
            reference_keys.append(key)
            wanted[key] = wanted.get(key, 0) + 1
        matched: list[dict[str, Any]] = []
        extra: list[dict[str, Any]] = []
        i = 0
        for message_index, message in enumerate(sample.messages):
            if message.type != "ai":
                continue
            for call in message.tool_calls:  # predicted_calls, in one pass with the counting
                args = call.args
                if call.invalid_args is not None:
                    extra.append({"predicted": i, "message_index": message_index,
                                  "name": call.name, "args": json_copy(args),  # as _described
                                  "invalid_args": call.invalid_args})
                    i += 1
                    continue
                try:  # the multiset key, as for the reference
                    key = (
                        call.name,
                        frozenset([(k, v, v.__class__ is bool) for k, v in args.items()]),
                    )
                    # every value hashable: no dict or list among them, a shallow copy is whole
                    copied = args.copy()
                except TypeError:
                    key = (call.name, argument_items(args))
                    copied = json_copy(args)
                entry = {"predicted": i, "message_index": message_index, "name": call.name,
                         "args": copied}
                i += 1
                count = wanted.get(key)
                if count:
                    wanted[key] = count - 1
                    matched.append(entry)
                else:
                    extra.append(entry)
        missing = _missing(reference, reference_keys, wanted)
        tp, fp, fn = len(matched), len(extra), len(missing)
        value = 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)
        details = {
            "true_positives": tp,
            "false_positives": fp,
            "false_negatives": fn,
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
            "matched": matched,
            "unexpected": extra,
            "missing": missing,
        }
        return self.scored(sample, value, details)


def _missing(
    reference: list[ToolCall], keys: list[Any], wanted: dict[Any, int]
) -> list[dict[str, Any]]:
    """The details entries of the reference calls no prediction matched, in order, their
    args checked as JSON (``NotPlainJson``, as in ``_reference_described``). ``keys``: each
    call's multiset key; ``wanted``: how many calls of each key were not matched."""
    # Each matched prediction used up the first equal reference call not used yet, so
    # the ones left over are the last of their kind: found from the end.
    missing: list[dict[str, Any]] = []
    for j in range(len(keys) - 1, -1, -1):
        key = keys[j]
        if key is None:
            missing.append(_reference_described(j, reference[j]))
            continue
        count = wanted[key]
        if not count:
            continue
        wanted[key] = count - 1
        call = reference[j]
        # the common case, inline: every value a JSON scalar, so a shallow copy is whole
        for name, value in call.args.items():
            kind = type(value)
            if type(name) is not str or not (
                kind in _PLAIN_SCALARS or (kind is int and _INT_FLOOR < value < _INT_BOUND)
            ):
                missing.append(_reference_described(j, call))  # a float, a list: walked
                break
        else:
            missing.append({"reference": j, "name": call.name, "args": call.args.copy()})
    missing.reverse()
    return missing
