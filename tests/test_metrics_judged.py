"""Judge-based metrics, driven through the real openai client against a scripted server."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from fake_openai_server import FakeOpenAI, Reply

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    SystemMessage,
    ToolCall,
    ToolMessage,
    render,
)
from tracebridge.metrics import (
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
    OpenAIJudge,
    RoleAdherence,
    TopicAdherence,
    Usage,
    strict_json_schema,
)
from tracebridge.metrics.base import run_sync
from tracebridge.metrics.goals import GoalVerdict, TopicReport
from tracebridge.metrics.judged import TRANSCRIPT_GUIDE, MessageVerdicts

BOOKING = MultiTurnSample(
    messages=[
        SystemMessage(content="You are Acme Travel's booking assistant. Only discuss travel."),
        HumanMessage(content="Book me a flight to Paris on May 3."),
        AIMessage(
            content="Booking it.",
            tool_calls=[
                ToolCall(name="book_flight", args={"to": "Paris", "date": "05-03"}, id="c1")
            ],
        ),
        ToolMessage(content="no seats left", tool_call_id="c1", name="book_flight",
                    is_error=True),
        AIMessage(content="Your flight to Paris is booked!"),
    ],
    reference="A seat on a flight to Paris on May 3 is booked.",
    reference_topics=["travel bookings"],
)

VERSION = "1+prompt.2+render.6"


def verdicts(*items: tuple[int, bool, str]) -> str:
    return json.dumps(
        {"verdicts": [{"message_index": i, "reason": r, "verdict": v} for i, v, r in items]}
    )


def goal(achieved: bool, reason: str) -> str:
    return json.dumps(
        {
            "user_goal": "a flight to Paris on May 3",
            "end_state": "booking failed: no seats left",
            "reason": reason,
            "achieved": achieved,
        }
    )


def sample(*messages: Any, **fields: Any) -> MultiTurnSample:
    return MultiTurnSample(messages=list(messages), **fields)


# --- agent goal accuracy -----------------------------------------------------------------


async def test_goal_without_reference_sends_the_rendered_transcript_and_returns_the_reason(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    reason = "[3] shows the booking failed although [4] claims success."
    server.add(Reply(content=goal(False, reason), prompt_tokens=400, completion_tokens=50))
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)

    assert result.value == 0.0
    assert result.reason == reason
    assert result.error is None
    assert result.details == {
        "user_goal": "a flight to Paris on May 3",
        "end_state": "booking failed: no seats left",
    }
    assert result.usage == Usage(requests=1, prompt_tokens=400, completion_tokens=50,
                                 total_tokens=450)
    assert result.name == "agent_goal_accuracy_without_reference"
    assert result.metric_version == VERSION
    assert result.judge == f"judge-model @ {server.base_url}/"
    assert result.transcript_hash == BOOKING.transcript_hash()

    [sent] = server.requests
    assert sent["model"] == "judge-model"
    assert sent["temperature"] == 0
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "GoalVerdict", "schema": strict_json_schema(GoalVerdict),
                        "strict": True},
    }
    system, user = sent["messages"]
    assert system["content"].startswith(TRANSCRIPT_GUIDE)
    assert "contradicts" in system["content"]
    assert "corrections" in system["content"]
    assert user["content"] == f"<transcript>\n{render(BOOKING.messages)}\n</transcript>"
    assert '-> book_flight [id=c1] {"to": "Paris", "date": "05-03"}' in user["content"]
    assert "[3] tool book_flight [id=c1] (error): no seats left" in user["content"]


async def test_goal_achieved_scores_one(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(goal(True, "booked"))
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)
    assert result.value == 1.0
    assert result.reason == "booked"


async def test_goal_with_reference_sends_the_reference(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(goal(False, "no seat was booked"))
    result = await AgentGoalAccuracyWithReference(judge).ascore(BOOKING)
    assert result.value == 0.0
    assert result.name == "agent_goal_accuracy_with_reference"
    user = server.requests[0]["messages"][1]["content"]
    assert user.endswith(
        "</transcript>\n<reference>\nA seat on a flight to Paris on May 3 is booked.\n</reference>"
    )


async def test_goal_with_reference_needs_one(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    result = await AgentGoalAccuracyWithReference(judge).ascore(
        BOOKING.model_copy(update={"reference": None})
    )
    assert result.value is None
    assert result.error == "the sample has no reference (the expected outcome, in words)"
    assert result.usage == Usage()
    assert server.requests == []


async def test_http_500_gives_an_error_result(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(Reply(status=500))
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)
    assert result.value is None
    assert result.error == (
        "the judge request failed: InternalServerError: Error code: 500 - scripted failure"
    )
    assert result.usage == Usage(requests=1, requests_without_usage=1)


async def test_a_timeout_gives_an_error_result(server: FakeOpenAI) -> None:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0,
                                timeout=0.3)
    judge = OpenAIJudge(client=client, model="judge-model")
    server.add(Reply(content=goal(True, "late"), sleep=2.0))
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)
    await judge.aclose()
    assert result.value is None
    assert result.error == "the judge request failed: APITimeoutError: Request timed out."


async def test_invalid_json_is_retried_and_both_requests_are_paid_for(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add('{"user_goal": "a flight"', goal(True, "ok"))
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)
    assert result.value == 1.0
    assert result.usage == Usage(requests=2, prompt_tokens=200, completion_tokens=40,
                                 total_tokens=240)


async def test_invalid_output_after_every_retry_gives_an_error_result(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add("{}", "{}", "{}")
    result = await AgentGoalAccuracyWithoutReference(judge).ascore(BOOKING)
    assert result.value is None
    assert result.error is not None
    assert result.error.startswith(
        "the judge gave no valid answer in 3 attempts; last problem: user_goal: Field required"
    )
    assert result.usage == Usage(requests=3, prompt_tokens=300, completion_tokens=60,
                                 total_tokens=360)


# --- topic adherence ---------------------------------------------------------------------

SUPPORT = sample(
    HumanMessage(content="How do I reset my router?"),
    AIMessage(content="Hold the reset button for 10 seconds."),
    HumanMessage(content="Who will win the election?"),
    AIMessage(content="Sorry, I can only help with your internet service."),
    reference_topics=["internet service", "router setup"],
)


def topics(*rows: tuple[int, bool, bool]) -> str:
    return json.dumps(
        {
            "questions": [
                {"message_index": i, "question": f"q{i}", "topic": f"t{i}",
                 "topic_allowed": allowed, "answered": answered}
                for i, allowed, answered in rows
            ]
        }
    )


async def test_a_correct_refusal_is_a_true_negative(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(topics((0, True, True), (2, False, False)))
    result = await TopicAdherence(judge, mode="f1").ascore(SUPPORT)
    assert result.value == 1.0
    assert result.reason == "all 2 questions handled correctly"
    assert result.details["true_positive"] == 1
    assert result.details["true_negative"] == 1
    assert [q["label"] for q in result.details["questions"]] == ["true_positive", "true_negative"]
    user = server.requests[0]["messages"][1]["content"]
    assert user.endswith(
        "<allowed_topics>\n- internet service\n- router setup\n</allowed_topics>"
    )
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == (
        strict_json_schema(TopicReport)
    )


async def test_only_an_off_topic_question_refused_scores_one(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(topics((2, False, False)))
    result = await TopicAdherence(judge, mode="precision").ascore(SUPPORT)
    assert result.value == 1.0
    assert result.name == "topic_adherence_precision"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("precision", 0.5), ("recall", 0.5), ("f1", 0.5)],
)
async def test_topic_modes(
    server: FakeOpenAI, judge: OpenAIJudge, mode: str, expected: float
) -> None:
    # tp: [0]; fp: [2] answered off-topic; fn: a second allowed question refused; tn: none
    server.add(topics((0, True, True), (2, False, True), (2, True, False)))
    result = await TopicAdherence(judge, mode=mode).ascore(SUPPORT)  # type: ignore[arg-type]
    assert result.value == expected
    assert result.reason == "[2] t2: answered off-topic; [2] t2: refused on-topic"


async def test_refusing_everything_has_full_precision_and_zero_recall(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(*[topics((0, True, False))] * 3)
    values = [
        (await TopicAdherence(judge, mode=mode).ascore(SUPPORT)).value
        for mode in ("precision", "recall", "f1")
    ]
    assert values == [1.0, 0.0, 0.0]


async def test_topic_adherence_needs_reference_topics(judge: OpenAIJudge) -> None:
    result = await TopicAdherence(judge).ascore(SUPPORT.model_copy(update={"reference_topics": []}))
    assert result.value is None
    assert result.error == "the sample has no reference_topics (the allowed topics)"


async def test_no_question_found_is_nothing_to_judge(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(topics())
    result = await TopicAdherence(judge).ascore(SUPPORT)
    assert result.value is None
    assert result.error == "nothing to judge: the judge found no user question"
    assert result.usage == Usage(requests=1, prompt_tokens=100, completion_tokens=20,
                                 total_tokens=120)


async def test_a_question_pointing_at_an_agent_message_is_retried(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(topics((1, True, True)), topics((0, True, True)))
    result = await TopicAdherence(judge).ascore(SUPPORT)
    assert result.value == 1.0
    feedback = server.requests[1]["messages"][3]["content"]
    assert feedback.startswith("That answer is not valid: message indexes [1] are not among "
                               "the allowed [0, 2].")


def test_topic_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="mode must be 'precision', 'recall' or 'f1'"):
        TopicAdherence(judge=None, mode="accuracy")  # type: ignore[arg-type]


# --- per-message metrics -----------------------------------------------------------------


async def test_role_adherence_from_the_system_message(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(verdicts((2, True, "on task"), (4, False, "claims a booking that failed")))
    result = await RoleAdherence(judge).ascore(BOOKING)
    assert result.value == 0.5
    assert result.reason == "1 of 2 agent messages fail: [4] claims a booking that failed"
    assert result.details == {
        "verdicts": [
            {"message_index": 2, "reason": "on task", "verdict": True},
            {"message_index": 4, "reason": "claims a booking that failed", "verdict": False},
        ]
    }
    user = server.requests[0]["messages"][1]["content"]
    assert user == (
        f"<transcript>\n{render(BOOKING.messages)}\n</transcript>\n<role>\n"
        "You are Acme Travel's booking assistant. Only discuss travel.\n</role>\n"
        "Give one verdict for each of the messages [2, 4]."
    )
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == (
        strict_json_schema(MessageVerdicts)
    )


async def test_role_from_rubrics_wins(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(verdicts((2, True, "ok"), (4, True, "ok")))
    pirate = BOOKING.model_copy(update={"rubrics": {"role": "a pirate"}})
    result = await RoleAdherence(judge).ascore(pirate)
    assert result.value == 1.0
    assert result.reason == "all 2 agent messages pass"
    assert "<role>\na pirate\n</role>" in server.requests[0]["messages"][1]["content"]


async def test_no_role_is_an_error(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    result = await RoleAdherence(judge).ascore(
        sample(HumanMessage(content="hi"), AIMessage(content="hello"))
    )
    assert result.value is None
    assert result.error == (
        'no role to adhere to: the sample has no system message text and no rubrics["role"]'
    )
    assert server.requests == []


async def test_missing_verdicts_are_retried(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(verdicts((2, True, "ok")), verdicts((2, True, "ok"), (4, True, "ok")))
    result = await RoleAdherence(judge).ascore(BOOKING)
    assert result.value == 1.0
    assert server.requests[1]["messages"][3]["content"].startswith(
        "That answer is not valid: give exactly one verdict for each of the messages [2, 4]; "
        "got verdicts for [2]."
    )


async def test_knowledge_retention_judges_agent_messages_after_the_first_user_message(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    talk = sample(
        AIMessage(content="Welcome!"),
        HumanMessage(content="I'm vegetarian. Suggest a dinner."),
        AIMessage(content="Try a mushroom risotto."),
        HumanMessage(content="Something else?"),
        AIMessage(content="How about a steak?"),
    )
    server.add(verdicts((2, True, "vegetarian"), (4, False, "forgets [1]: steak")))
    result = await KnowledgeRetention(judge).ascore(talk)
    assert result.value == 0.5
    assert [v["message_index"] for v in result.details["verdicts"]] == [2, 4]
    assert server.requests[0]["messages"][1]["content"].endswith(
        "Give one verdict for each of the messages [2, 4]."
    )


async def test_nothing_to_judge_without_an_agent_reply(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    only_user = sample(HumanMessage(content="hello?"))
    for metric in (KnowledgeRetention(judge), ConversationRelevancy(judge)):
        result = await metric.ascore(only_user)
        assert result.value is None
        assert result.error is not None
        assert result.error.startswith("nothing to judge: the conversation has no agent message")
        assert result.usage == Usage()
    assert server.requests == []


async def test_conversation_completeness(server: FakeOpenAI, judge: OpenAIJudge) -> None:
    server.add(
        json.dumps(
            {
                "intentions": [
                    {"message_index": 1, "intention": "book a flight to Paris",
                     "reason": "[3] failed", "satisfied": False},
                ]
            }
        )
    )
    result = await ConversationCompleteness(judge).ascore(BOOKING)
    assert result.value == 0.0
    assert result.reason == "1 of 1 intentions fail: [1] [3] failed"
    assert result.details["intentions"][0]["message_index"] == 1


async def test_completeness_with_no_intention_is_nothing_to_judge(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(json.dumps({"intentions": []}))
    result = await ConversationCompleteness(judge).ascore(BOOKING)
    assert result.value is None
    assert result.error == "nothing to judge: the judge found no user intention"


async def test_completeness_without_a_user_message_asks_nothing(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    result = await ConversationCompleteness(judge).ascore(sample(AIMessage(content="hi")))
    assert result.error == "nothing to judge: the conversation has no user message"
    assert server.requests == []


def relevancy(relevant: bool, reason: str) -> str:
    return json.dumps({"reason": reason, "relevant": relevant})


async def test_conversation_relevancy_judges_each_agent_message_in_its_window(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    talk = sample(
        HumanMessage(content="u0"),
        AIMessage(content="a1"),
        HumanMessage(content="u2"),
        AIMessage(content="a3"),
        HumanMessage(content="u4"),
        AIMessage(content="a5"),
    )
    server.add(relevancy(True, "r1"), relevancy(True, "r3"), relevancy(False, "off"))
    result = await ConversationRelevancy(judge, window=2).ascore(talk)
    assert result.value == 2 / 3
    assert result.reason == "1 of 3 agent messages fail: [5] off"
    assert result.usage == Usage(requests=3, prompt_tokens=300, completion_tokens=60,
                                 total_tokens=360)
    windows = [r["messages"][1]["content"] for r in server.requests]
    assert windows == [
        "<transcript>\n[0] human: u0\n[1] ai: a1\n</transcript>",
        "<transcript>\n[0] human: u0\n[1] ai: a1\n[2] human: u2\n[3] ai: a3\n</transcript>",
        "<transcript>\n[2] human: u2\n[3] ai: a3\n[4] human: u4\n[5] ai: a5\n</transcript>",
    ]
    assert [v["window_start"] for v in result.details["verdicts"]] == [0, 0, 2]
    assert result.details["window"] == 2


async def test_relevancy_failure_midway_keeps_the_usage_spent(
    server: FakeOpenAI, judge: OpenAIJudge
) -> None:
    server.add(relevancy(True, "ok"), Reply(status=500))
    result = await ConversationRelevancy(judge).ascore(BOOKING)
    assert result.value is None
    assert result.usage == Usage(requests=2, prompt_tokens=100, completion_tokens=20,
                                 total_tokens=120, requests_without_usage=1)


def test_relevancy_window_is_checked() -> None:
    with pytest.raises(ValueError, match="window must be 1 or more user turns, got 0"):
        ConversationRelevancy(judge=None, window=0)  # type: ignore[arg-type]


def test_score_is_the_synchronous_form_and_reuses_the_client(server: FakeOpenAI) -> None:
    # The fake server keeps connections alive, so a second score() on a fresh event loop
    # would find the client's pooled connection bound to a closed loop.
    server.add(goal(True, "one"), goal(False, "two"))
    judge = OpenAIJudge.connect("judge-model", base_url=server.base_url, api_key="test",
                                max_retries=0)
    metric = AgentGoalAccuracyWithoutReference(judge)
    try:
        assert metric.score(BOOKING).value == 1.0
        assert metric.score(BOOKING).value == 0.0
    finally:
        run_sync(judge.aclose(), "closing the judge", "await judge.aclose()")
    assert len(server.requests) == 2


async def test_score_inside_a_running_loop_says_to_await(judge: OpenAIJudge) -> None:
    with pytest.raises(RuntimeError, match=r"use `await metric\.ascore"):
        AgentGoalAccuracyWithoutReference(judge).score(BOOKING)
