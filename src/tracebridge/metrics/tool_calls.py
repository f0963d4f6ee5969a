"""Deterministic tool-call metrics: ``ToolCallAccuracy`` and ``ToolCallF1``.

Predicted calls are every ``AIMessage.tool_calls`` of the conversation, in order; the
reference is ``sample.reference_tool_calls``. Arguments compare as JSON (see
``_matching.json_key``); a call whose arguments did not parse (``invalid_args``) matches
nothing. Formulas and edge cases: docs/metrics.md.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from ..messages import AIMessage, ToolCall
from ..sample import MultiTurnSample
from ._matching import Pair, args_equal, json_key, order_free_pairs, ordered_pairs, score_matrix
from .base import Metric, MetricResult

__all__ = ["PredictedCall", "ToolCallAccuracy", "ToolCallF1", "predicted_calls"]

PredictedCall = tuple[int, ToolCall]
"""(index of the AIMessage in the conversation, the call)."""

_NO_REFERENCE = "the sample has no reference_tool_calls (None); give [] to expect no calls"


def predicted_calls(sample: MultiTurnSample) -> list[PredictedCall]:
    """Every tool call the agent made, in conversation order, with its message index."""
    return [
        (index, call)
        for index, message in enumerate(sample.messages)
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]


def _describe(call: ToolCall) -> dict[str, Any]:
    described: dict[str, Any] = {"name": call.name, "args": call.args}
    if call.invalid_args is not None:
        described["invalid_args"] = call.invalid_args
    return described


class ToolCallAccuracy(Metric):
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
        self.strict_order = strict_order
        self.name = "tool_call_accuracy" if strict_order else "tool_call_accuracy_unordered"

    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        if sample.reference_tool_calls is None:
            return self.failed(sample, _NO_REFERENCE)
        predicted = predicted_calls(sample)
        reference = sample.reference_tool_calls
        calls = [call for _, call in predicted]
        matrix = score_matrix(calls, reference)
        if self.strict_order:
            pairs = ordered_pairs(matrix)
        else:
            pairs = order_free_pairs(calls, reference, matrix)
        longest = max(len(calls), len(reference))
        total = sum((s for _, _, s in pairs), Fraction(0))
        value = float(total / longest) if longest else 1.0
        details = self._details(predicted, reference, pairs, total)
        return self.result(sample, value, details=details)

    def _details(
        self,
        predicted: list[PredictedCall],
        reference: list[ToolCall],
        pairs: list[Pair],
        total: Fraction,
    ) -> dict[str, Any]:
        paired_predicted = {i for i, _, _ in pairs}
        paired_reference = {j for _, j, _ in pairs}
        return {
            "strict_order": self.strict_order,
            "total": float(total),
            "predicted_count": len(predicted),
            "reference_count": len(reference),
            "pairs": [
                self._pair(i, j, s, predicted[i], reference[j]) for i, j, s in pairs
            ],
            "unmatched_predicted": [
                {"predicted": i, "message_index": message_index, **_describe(call)}
                for i, (message_index, call) in enumerate(predicted)
                if i not in paired_predicted
            ],
            "unmatched_reference": [
                {"reference": j, **_describe(call)}
                for j, call in enumerate(reference)
                if j not in paired_reference
            ],
        }

    @staticmethod
    def _pair(
        i: int, j: int, score: Fraction, predicted: PredictedCall, reference: ToolCall
    ) -> dict[str, Any]:
        message_index, call = predicted
        keys = sorted(call.args.keys() | reference.args.keys())
        equal = [
            key
            for key in keys
            if key in call.args
            and key in reference.args
            and args_equal(call.args[key], reference.args[key])
        ]
        return {
            "predicted": i,
            "reference": j,
            "message_index": message_index,
            "name": call.name,
            "score": float(score),
            "equal_args": equal,
            "different_args": [key for key in keys if key not in equal],
        }


class ToolCallF1(Metric):
    """F1 of exact (name, arguments) matches, counted as multisets.

    A call made twice counts twice; a call with ``invalid_args`` matches nothing.
    ``F1 = 2·tp / (2·tp + fp + fn)``; both lists empty -> 1.0 (the agent did exactly what was
    expected). ``details`` holds tp, fp, fn, precision and recall (None when undefined:
    precision with no predicted call, recall with no reference call).
    """

    name = "tool_call_f1"

    async def ascore(self, sample: MultiTurnSample) -> MetricResult:
        if sample.reference_tool_calls is None:
            return self.failed(sample, _NO_REFERENCE)
        predicted = predicted_calls(sample)
        reference = sample.reference_tool_calls
        wanted = Counter(_exact_key(call) for call in reference)
        wanted.pop(None, None)
        matched: list[dict[str, Any]] = []
        extra: list[dict[str, Any]] = []
        for i, (message_index, call) in enumerate(predicted):
            key = _exact_key(call)
            entry = {"predicted": i, "message_index": message_index, **_describe(call)}
            if key is not None and wanted[key] > 0:
                wanted[key] -= 1
                matched.append(entry)
            else:
                extra.append(entry)
        missing = _missing(reference, matched)
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
        return self.result(sample, value, details=details)


def _exact_key(call: ToolCall) -> Any:
    """The multiset key of a call; None for a call that matches nothing."""
    if call.invalid_args is not None:
        return None
    return (call.name, json_key(call.args))


def _missing(reference: list[ToolCall], matched: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reference calls left over once each matched prediction used up one equal reference."""
    used = Counter((entry["name"], json_key(entry["args"])) for entry in matched)
    missing: list[dict[str, Any]] = []
    for j, call in enumerate(reference):
        key = _exact_key(call)
        if key is not None and used[key] > 0:
            used[key] -= 1
        else:
            missing.append({"reference": j, **_describe(call)})
    return missing
