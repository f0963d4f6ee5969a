"""What the estimate is computed from: the requests a metric would send, found without sending."""

from __future__ import annotations

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, SystemMessage
from tracebridge.evaluation.plan import PlanningJudge, planned_requests
from tracebridge.metrics import (
    AgentGoalAccuracyWithReference,
    ConversationRelevancy,
    RoleAdherence,
    TopicAdherence,
)
from tracebridge.metrics.goals import GoalVerdict

TALK = MultiTurnSample(messages=[
    SystemMessage(content="You file tickets."),
    HumanMessage(content="Open a ticket."),
    AIMessage(content="Which kind?"),
    HumanMessage(content="Billing."),
    AIMessage(content="Done."),
], reference="A billing ticket.", reference_topics=["tickets"])


async def test_one_request_for_a_goal_metric_with_the_rendered_transcript() -> None:
    planner = PlanningJudge("planner")
    [request] = await planned_requests(AgentGoalAccuracyWithReference(planner), planner, TALK)
    assert request.answer is GoalVerdict
    assert "[4] ai: Done." in request.prompt
    assert "<reference>\nA billing ticket.\n</reference>" in request.prompt


async def test_one_request_per_judged_agent_message_for_relevancy() -> None:
    planner = PlanningJudge("planner")
    requests = await planned_requests(ConversationRelevancy(planner), planner, TALK)
    assert len(requests) == 2
    assert requests[1].prompt.endswith("[4] ai: Done.\n</transcript>")


async def test_placeholder_answers_that_cannot_score_still_show_the_request() -> None:
    planner = PlanningJudge("planner")  # zero verdicts: the share cannot be computed
    assert len(await planned_requests(RoleAdherence(planner), planner, TALK)) == 1
    assert len(await planned_requests(TopicAdherence(planner), planner, TALK)) == 1


async def test_no_request_when_the_metric_would_not_ask() -> None:
    planner = PlanningJudge("planner")
    bare = TALK.model_copy(update={"reference": None})
    assert await planned_requests(AgentGoalAccuracyWithReference(planner), planner, bare) == []
