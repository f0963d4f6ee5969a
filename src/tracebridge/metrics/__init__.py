"""Metrics over a ``MultiTurnSample`` (formulas and edge cases: docs/metrics.md).

Deterministic: ``ToolCallAccuracy``, ``ToolCallF1``. Judged (through a ``Judge``, e.g.
``OpenAIJudge``): ``AgentGoalAccuracyWithReference``, ``AgentGoalAccuracyWithoutReference``,
``TopicAdherence``, ``RoleAdherence``, ``KnowledgeRetention``, ``ConversationCompleteness``,
``ConversationRelevancy``. Every metric returns a ``MetricResult``; ``evaluate`` scores a
batch. ``openai`` is imported only when an ``OpenAIJudge`` is used.
"""

from __future__ import annotations

from .base import Metric, MetricResult, Usage
from .conversation import (
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
    RoleAdherence,
)
from .evaluate import MetricSummary, aevaluate, evaluate, summarize
from .goals import AgentGoalAccuracyWithoutReference, AgentGoalAccuracyWithReference, TopicAdherence
from .judge import Judge, JudgeError, JudgeReply, JudgeRequest, OpenAIJudge, strict_json_schema
from .judged import JudgedMetric
from .tool_calls import ToolCallAccuracy, ToolCallF1

__all__ = [
    "AgentGoalAccuracyWithReference",
    "AgentGoalAccuracyWithoutReference",
    "ConversationCompleteness",
    "ConversationRelevancy",
    "Judge",
    "JudgeError",
    "JudgeReply",
    "JudgeRequest",
    "JudgedMetric",
    "KnowledgeRetention",
    "Metric",
    "MetricResult",
    "MetricSummary",
    "OpenAIJudge",
    "RoleAdherence",
    "ToolCallAccuracy",
    "ToolCallF1",
    "TopicAdherence",
    "Usage",
    "aevaluate",
    "evaluate",
    "strict_json_schema",
    "summarize",
]
