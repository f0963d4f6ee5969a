"""The Galtea adapter, exactly: reading both shapes, writing with named opt-outs, splitting."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
)
from tracebridge.adapters import galtea
from tracebridge.adapters.galtea import Omission
from tracebridge.errors import FormatError
from tracebridge.registry import detect_format

PAIRS = {"galtea": {"shape": "pairs"}}


def error_of(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- reading: pairs ----------------------------------------------------------------------


def test_a_pair_becomes_a_human_then_an_ai_message_marked_as_pairs() -> None:
    trace = [
        {"input": "Hi", "actual_output": "Hello!"},
        {"input": "How are you?", "actual_output": "Fine."},
    ]
    assert galtea.to_messages(trace) == [
        HumanMessage(content="Hi", metadata=PAIRS),
        AIMessage(content="Hello!", metadata=PAIRS),
        HumanMessage(content="How are you?", metadata=PAIRS),
        AIMessage(content="Fine.", metadata=PAIRS),
    ]


def test_a_pairs_retrieval_context_and_unknown_keys_are_kept_on_its_ai_message() -> None:
    trace = [{"input": "q", "actual_output": "a", "retrieval_context": "doc", "score": 0.5}]
    assert galtea.to_messages(trace) == [
        HumanMessage(content="q", metadata=PAIRS),
        AIMessage(
            content="a",
            metadata={
                "galtea": {"shape": "pairs", "retrieval_context": "doc", "extra": {"score": 0.5}}
            },
        ),
    ]


@pytest.mark.parametrize(
    ("turn", "path", "detail"),
    [
        (
            {"input": "q"},
            "conversation_turns[1].actual_output",
            "missing 'actual_output': a pair needs the assistant's answer under 'actual_output'",
        ),
        (
            {"actual_output": "a"},
            "conversation_turns[1].input",
            "missing 'input': a pair needs the user's query under 'input'",
        ),
        (
            {"input": None, "actual_output": "a"},
            "conversation_turns[1].input",
            "expected a string, got NoneType None",
        ),
        (
            {"input": "q", "actual_output": ["a"]},
            "conversation_turns[1].actual_output",
            "expected a string, got list ['a']",
        ),
    ],
)
def test_a_pair_needs_string_input_and_actual_output(
    turn: dict[str, Any], path: str, detail: str
) -> None:
    error = error_of(galtea.to_messages, [{"input": "a", "actual_output": "b"}, turn])
    assert (error.code, error.index, error.path, error.detail) == (
        "malformed_event", 1, path, detail
    )


# --- reading: role turns -----------------------------------------------------------------


def test_role_turns_map_one_to_one_with_retrieval_context_on_the_ai_message() -> None:
    trace = [
        {"role": "user", "content": "Hours?"},
        {"role": "assistant", "content": "9 to 5.", "retrieval_context": "Open 9-5."},
        {"role": "user", "content": "Thanks"},
    ]
    assert galtea.to_messages(trace) == [
        HumanMessage(content="Hours?"),
        AIMessage(content="9 to 5.", metadata={"galtea": {"retrieval_context": "Open 9-5."}}),
        HumanMessage(content="Thanks"),
    ]


def test_a_turns_metadata_is_its_own_field_and_unknown_keys_are_kept_verbatim() -> None:
    trace = [{"role": "user", "content": "hi", "metadata": {"chat_type": "support"}, "ts": 1}]
    messages = galtea.to_messages(trace)
    assert messages == [
        HumanMessage(
            content="hi",
            metadata={"galtea": {"metadata": {"chat_type": "support"}, "extra": {"ts": 1}}},
        )
    ]
    assert galtea.from_messages(messages) == trace


def test_a_null_retrieval_context_on_a_user_turn_is_kept_not_refused() -> None:
    trace = [{"role": "user", "content": "hi", "retrieval_context": None}]
    messages = galtea.to_messages(trace)
    assert messages == [
        HumanMessage(content="hi", metadata={"galtea": {"retrieval_context": None}})
    ]
    assert galtea.from_messages(messages) == trace


def test_a_retrieval_context_on_a_user_turn_is_kept_as_the_sdk_takes_it() -> None:
    # ConversationMessage accepts it on any turn and traces.create_batch sends it as given.
    trace = [{"role": "user", "content": "q", "retrieval_context": "doc"}]
    messages = galtea.to_messages(trace)
    assert messages == [
        HumanMessage(content="q", metadata={"galtea": {"retrieval_context": "doc"}})
    ]
    assert galtea.from_messages(messages) == trace


@pytest.mark.parametrize("role", ["system", "tool", "developer", "Assistant"])
def test_a_role_other_than_user_or_assistant_is_unknown(role: str) -> None:
    error = error_of(
        galtea.to_messages, [{"role": "user", "content": "q"}, {"role": role, "content": "x"}]
    )
    assert (error.code, error.index, error.path) == (
        "unknown_role", 1, "conversation_turns[1].role"
    )
    assert error.detail == f"unknown role {role!r}: Galtea turns are 'user' or 'assistant'"


def test_a_role_that_is_not_a_string_is_malformed() -> None:
    error = error_of(galtea.to_messages, [{"role": ["user"], "content": "q"}])
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "conversation_turns[0].role"
    )


def test_content_parts_are_malformed_galtea_content_is_a_string() -> None:
    error = error_of(
        galtea.to_messages, [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    )
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "conversation_turns[0].content"
    )


def test_a_missing_content_is_malformed() -> None:
    error = error_of(galtea.to_messages, [{"role": "assistant"}])
    assert str(error) == (
        "galtea: conversation_turns[0].content: missing 'content': a role turn needs its text "
        "under 'content' [malformed_event]"
    )


# --- reading: the list -------------------------------------------------------------------


def test_a_list_mixing_the_two_shapes_is_malformed_at_the_first_odd_turn() -> None:
    trace = [
        {"input": "q", "actual_output": "a"},
        {"input": "q2", "actual_output": "a2"},
        {"role": "user", "content": "q3"},
    ]
    error = error_of(galtea.to_messages, trace)
    assert str(error) == (
        "galtea: conversation_turns[2]: a role turn in a list of pairs (turn 0 set the shape); "
        "one list holds one shape [malformed_event]"
    )


def test_a_turn_with_keys_of_both_shapes_is_malformed() -> None:
    error = error_of(galtea.to_messages, [{"role": "user", "content": "q", "input": "q"}])
    assert (error.code, error.index) == ("malformed_event", 0)
    assert "keys of both shapes" in error.detail


def test_the_pirate_pages_system_entry_is_malformed_at_0_not_a_key_error() -> None:
    trace = [
        {"system": "system", "content": "You are a pirate."},
        {"role": "user", "content": "Can you teach me to swim?"},
    ]
    error = error_of(galtea.to_messages, trace)
    assert str(error) == (
        "galtea: conversation_turns[0]: expected a role turn ('role', 'content') or a pair "
        "('input', 'actual_output'); got keys ['system', 'content'] [malformed_event]"
    )


@pytest.mark.parametrize(
    ("trace", "code", "index", "path"),
    [
        ([], "empty_conversation", None, None),
        ({"input": "q", "actual_output": "a"}, "malformed_event", None, "conversation_turns"),
        (
            [{"role": "user", "content": "q"}, "hello"],
            "malformed_event",
            1,
            "conversation_turns[1]",
        ),
        (
            [{"role": "user", "content": "q", "ts": {1, 2}}],
            "unserializable_value",
            0,
            "conversation_turns[0].ts",
        ),
        (
            [{"input": "q", "actual_output": "a", "x": [float("nan")]}],
            "unserializable_value",
            0,
            "conversation_turns[0].x[0]",
        ),
    ],
)
def test_broken_lists_raise_with_code_index_and_path(
    trace: Any, code: str, index: int | None, path: str | None
) -> None:
    error = error_of(galtea.to_messages, trace)
    assert (error.code, error.index, error.path, error.source) == (code, index, path, "galtea")


def test_kept_values_are_copies_not_shared_with_the_trace() -> None:
    trace = [{"role": "user", "content": "q", "tags": ["a"]}]
    messages = galtea.to_messages(trace)
    trace[0]["tags"].append("b")
    assert messages[0].metadata == {"galtea": {"extra": {"tags": ["a"]}}}
    back = galtea.from_messages(messages)
    back[0]["tags"].append("c")
    assert messages[0].metadata == {"galtea": {"extra": {"tags": ["a"]}}}


# --- writing: shapes ---------------------------------------------------------------------


def test_from_messages_defaults_to_roles_for_conversations_that_record_no_shape() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="a")]
    assert galtea.from_messages(messages) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert galtea.from_messages(messages, shape="pairs") == [{"input": "q", "actual_output": "a"}]


def test_from_messages_defaults_to_the_recorded_pairs_shape_and_shape_overrides_it() -> None:
    trace = [{"input": "q", "actual_output": "a", "retrieval_context": "doc"}]
    messages = galtea.to_messages(trace)
    assert galtea.from_messages(messages) == trace
    assert galtea.from_messages(messages, shape="roles") == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "retrieval_context": "doc"},
    ]


def test_an_unknown_shape_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="shape must be one of 'roles', 'history', 'pairs', "
                       "got 'turns'"):
        galtea.from_messages([HumanMessage(content="q")], shape="turns")  # type: ignore[arg-type]


def test_role_turns_may_hold_consecutive_user_messages() -> None:
    messages = [HumanMessage(content="a"), HumanMessage(content="b"), AIMessage(content="c")]
    assert galtea.from_messages(messages) == [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]


# --- writing: what Galtea turns cannot hold ------------------------------------------------

AGENT = [
    SystemMessage(content="Be brief."),
    HumanMessage(content="Weather in Paris?"),
    AIMessage(content="Checking.", tool_calls=[ToolCall(name="weather", id="c1")]),
    ToolMessage(content="18 C", tool_call_id="c1", name="weather"),
    AIMessage(content="18 C."),
]


def test_a_system_message_is_not_representable_and_names_skip_system() -> None:
    error = error_of(galtea.from_messages, AGENT)
    assert str(error) == (
        "galtea: messages[0]: a system message: Galtea turns hold only user and assistant "
        "text and files; skip_system=True leaves it out (recorded in omitted) "
        "[not_representable]"
    )


def test_tool_calls_are_not_representable_and_name_fold_tools() -> None:
    error = error_of(galtea.from_messages, AGENT, skip_system=True)
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].tool_calls"
    )
    assert error.detail.endswith("fold_tools=True leaves it out (recorded in omitted)")


def test_a_tool_result_is_not_representable() -> None:
    messages = [HumanMessage(content="q"), ToolMessage(content="r", tool_call_id="x")]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == ("not_representable", 1, "messages[1]")


def test_named_options_leave_things_out_and_record_each_one() -> None:
    omitted: list[Omission] = []
    turns = galtea.from_messages(
        AGENT, shape="roles", skip_system=True, fold_tools=True, omitted=omitted
    )
    assert turns == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking."},
        {"role": "assistant", "content": "18 C."},
    ]
    assert omitted == [
        Omission(0, "system_message", "skip_system", "system message 'Be brief.'"),
        Omission(2, "tool_calls", "fold_tools", "1 tool call(s): weather"),
        Omission(3, "tool_result", "fold_tools", "result of 'weather': '18 C'"),
    ]


def test_nothing_is_recorded_when_the_conversion_fails() -> None:
    omitted: list[Omission] = []
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(AGENT, skip_system=True, omitted=omitted)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].tool_calls")
    assert omitted == []


def test_non_text_parts_are_not_representable_unless_dropped_by_name() -> None:
    content = [TextPart(text="look"), ImagePart(url="https://x/a.png"), TextPart(text="here")]
    messages = [HumanMessage(content=content), AIMessage(content=[ReasoningPart(text="hm")])]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[1]"
    )
    assert error.detail == (
        "an image part: Galtea turns hold only user and assistant text and files; "
        "drop_non_text=True leaves it out (recorded in omitted)"
    )
    # the two text parts left become one text: a loss of its own, accepted by its own name
    error = error_of(galtea.from_messages, messages, drop_non_text=True)
    assert (error.code, error.index, error.path) == ("not_representable", 0, "messages[0].content")
    assert "drop=['part_boundaries']" in error.detail
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, drop_non_text=True, drop=["part_boundaries"],
                                omitted=omitted) == [
        {"role": "user", "content": "look\nhere"},
        {"role": "assistant", "content": ""},
    ]
    assert [(o.index, o.what) for o in omitted] == [
        (0, "non_text_part"), (0, "part_boundaries"), (1, "non_text_part")]


def test_a_refusal_beside_text_is_two_losses_each_by_its_name() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content=[TextPart(text="Sorry."), RefusalPart(text="I can't.")])]
    error = error_of(galtea.from_messages, messages, drop=["refusals"])
    assert (error.code, error.index, error.path) == ("not_representable", 1, "messages[1].content")
    assert galtea.from_messages(messages, drop=["refusals", "part_boundaries"]) == [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "Sorry.\nI can't."}]


def test_names_are_not_representable_unless_dropped_by_name() -> None:
    messages = [HumanMessage(content="q", id="m1"), AIMessage(content="a", name="bot")]
    error = error_of(galtea.from_messages, messages)
    assert (error.code, error.index, error.path) == ("not_representable", 1, "messages[1].name")
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, drop_names=True, omitted=omitted) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert omitted == [Omission(1, "name", "drop_names", "name 'bot'")]


def test_message_ids_are_provenance_and_are_not_written() -> None:
    messages = [HumanMessage(content="q", id="m1"), AIMessage(content="a", id="m2")]
    assert galtea.from_messages(messages) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]


# --- writing: pairs must alternate ---------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "index", "start"),
    [
        ([AIMessage(content="a")], 0, "an assistant message that answers no user message (no"),
        (
            [HumanMessage(content="q"), AIMessage(content="a"), AIMessage(content="b")],
            2,
            "an assistant message that answers no user message (it follows the assistant",
        ),
        (
            [HumanMessage(content="q"), HumanMessage(content="r"), AIMessage(content="a")],
            1,
            "two user messages in a row (messages[0] and messages[1])",
        ),
        (
            [HumanMessage(content="q"), AIMessage(content="a"), HumanMessage(content="r")],
            2,
            "the last user message has no answer",
        ),
    ],
)
def test_pairs_refuse_what_does_not_alternate_user_then_assistant(
    messages: list[Any], index: int, start: str
) -> None:
    error = error_of(galtea.from_messages, messages, shape="pairs")
    assert (error.code, error.index) == ("not_representable", index)
    assert error.detail.startswith(start)


def test_consecutive_messages_are_joined_only_when_asked_and_the_join_is_recorded() -> None:
    messages = [
        HumanMessage(content="Is it shipped?"),
        HumanMessage(content="Order 44."),
        AIMessage(content="Yes."),
    ]
    omitted: list[Omission] = []
    assert galtea.from_messages(
        messages, shape="pairs", join_consecutive=" ", omitted=omitted
    ) == [{"input": "Is it shipped? Order 44.", "actual_output": "Yes."}]
    assert omitted == [
        Omission(1, "joined", "join_consecutive", "joined into the user turn of messages[0]")
    ]


def test_joining_refuses_two_messages_that_both_carry_galtea_fields() -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(content="a", metadata={"galtea": {"retrieval_context": "d1"}}),
        AIMessage(content="b", metadata={"galtea": {"retrieval_context": "d2"}}),
    ]
    error = error_of(galtea.from_messages, messages, shape="pairs", join_consecutive="\n")
    assert (error.code, error.index) == ("not_representable", 2)


def test_pairs_keep_galtea_fields_on_the_answer_only() -> None:
    messages = [
        HumanMessage(content="q", metadata={"galtea": {"extra": {"k": 1}}}),
        AIMessage(content="a"),
    ]
    error = error_of(galtea.from_messages, messages, shape="pairs")
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].metadata.galtea"
    )
    assert galtea.from_messages(messages) == [
        {"role": "user", "content": "q", "k": 1},
        {"role": "assistant", "content": "a"},
    ]


def test_an_extra_key_that_would_replace_a_turn_field_is_refused() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="a", metadata={
        "galtea": {"shape": "pairs", "extra": {"content": "x"}}})]
    assert galtea.from_messages(messages) == [
        {"input": "q", "actual_output": "a", "content": "x"}
    ]
    error = error_of(galtea.from_messages, messages, shape="roles")
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].metadata.galtea.extra.content"
    )


@pytest.mark.parametrize(
    ("namespace", "path"),
    [
        ("pairs", "messages[0].metadata.galtea"),
        ({"shape": "roles"}, "messages[0].metadata.galtea.shape"),
        ({"context": "d"}, "messages[0].metadata.galtea.context"),
        ({"retrieval_context": 3}, "messages[0].metadata.galtea.retrieval_context"),
        ({"extra": [1]}, "messages[0].metadata.galtea.extra"),
        # items that are not names (they are not hashable: a TypeError escaped)
        ({"empty_files": [{"a": 1}]}, "messages[0].metadata.galtea.empty_files"),
        ({"aliases": [["x"]]}, "messages[0].metadata.galtea.aliases"),
    ],
)
def test_a_malformed_galtea_namespace_is_malformed(namespace: Any, path: str) -> None:
    messages = [AIMessage(content="a", metadata={"galtea": namespace})]
    error = error_of(galtea.from_messages, messages, shape="roles")
    assert (error.code, error.index, error.path) == ("malformed_event", 0, path)


def test_a_file_parts_absent_keys_that_are_not_names_are_malformed() -> None:
    file = FilePart(url="https://example.com/a.pdf", metadata={"galtea": {"absent": [{"a": 1}]}})
    messages = [HumanMessage(content=[TextPart(text="hi"), file])]
    error = error_of(galtea.from_messages, messages, shape="roles")
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "messages[0].content[1].metadata.galtea.absent")


def test_other_adapters_metadata_is_not_read() -> None:
    messages = [HumanMessage(content="q", metadata={"openai_chat": {"fields": {"x": 1}}})]
    assert galtea.from_messages(messages) == [{"role": "user", "content": "q"}]


# --- split_current_turn --------------------------------------------------------------------


def test_split_current_turn_gives_prior_pairs_and_the_current_exchange() -> None:
    messages = galtea.to_messages(
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "d", "retrieval_context": "doc"},
        ]
    )
    current = galtea.split_current_turn(messages)
    assert current == ([{"input": "a", "actual_output": "b"}], "c", "d")
    assert (current.input, current.actual_output, current.retrieval_context) == ("c", "d", "doc")
    assert current.conversation_turns == [{"input": "a", "actual_output": "b"}]


def test_the_current_turn_survives_copy_and_pickle() -> None:
    current = galtea.CurrentTurn([{"input": "a", "actual_output": "b"}], "c", "d", "doc")
    for clone in (copy.deepcopy(current), pickle.loads(pickle.dumps(current))):
        assert clone == current
        assert clone.retrieval_context == "doc"


def test_split_current_turn_in_roles_shape_with_options() -> None:
    messages = [
        SystemMessage(content="s"),
        HumanMessage(content="a"),
        AIMessage(content="b"),
        HumanMessage(content="c"),
        AIMessage(content="d"),
    ]
    assert galtea.split_current_turn(messages, shape="roles", skip_system=True) == (
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        "c",
        "d",
    )


def test_split_current_turn_in_roles_shape_needs_user_then_assistant_at_the_end() -> None:
    error = error_of(
        galtea.split_current_turn, AGENT, shape="roles", skip_system=True, fold_tools=True
    )
    assert (error.code, error.index) == ("not_representable", 4)
    assert error.detail.startswith("the conversation must end with a user message answered")


def test_split_current_turn_needs_an_answered_last_user_message() -> None:
    messages = [HumanMessage(content="a"), AIMessage(content="b"), HumanMessage(content="c")]
    error = error_of(galtea.split_current_turn, messages)
    assert (error.code, error.index) == ("not_representable", 2)


def test_split_current_turn_refuses_extra_keys_on_the_current_exchange() -> None:
    messages = galtea.to_messages([{"input": "q", "actual_output": "a", "latency": 3}])
    error = error_of(galtea.split_current_turn, messages)
    assert (error.code, error.index) == ("not_representable", 1)


def test_split_current_turn_refuses_a_retrieval_context_on_the_current_question() -> None:
    messages = galtea.to_messages(
        [
            {"role": "user", "content": "q", "retrieval_context": "r"},
            {"role": "assistant", "content": "a"},
        ]
    )
    error = error_of(galtea.split_current_turn, messages, shape="roles")
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].metadata.galtea"
    )
    assert error.detail.startswith("the current exchange carries Galtea fields "
                                   "['retrieval_context']")
    # a null one says nothing (every user message read from the SDK's objects carries one)
    null = galtea.to_messages([{"role": "user", "content": "q", "retrieval_context": None},
                               {"role": "assistant", "content": "a"}])
    assert galtea.split_current_turn(null, shape="roles") == ([], "q", "a")


def test_split_current_turn_of_nothing_is_an_empty_conversation() -> None:
    error = error_of(galtea.split_current_turn, [SystemMessage(content="s")], skip_system=True)
    assert (error.code, error.index) == ("empty_conversation", None)


# --- detection and convert -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("trace", "expected"),
    [
        ([{"input": "q", "actual_output": "a"}], True),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], True),
        ([{"role": "user", "content": "q", "retrieval_context": "r", "metadata": {"k": 1}}],
         True),
        # Chat Completions keys: an OpenAI chat history, not Galtea role turns
        ([{"role": "user", "content": "q"},
          {"role": "assistant", "content": "a", "refusal": None, "annotations": []}], False),
        ([{"role": "user", "content": "q", "name": "ann"}], False),
        ([{"role": "assistant", "content": "", "tool_calls": None}], False),
        ([{"role": "system", "content": "s"}], False),
        ([{"role": "user", "content": None}], False),
        ([{"input": "q", "actual_output": "a"}, {"role": "user", "content": "q"}], False),
        ([{"input": "q"}], False),
        ([{"role": ["user"], "content": "q"}], False),
        ([], False),
        ({"input": "q", "actual_output": "a"}, False),
    ],
)
def test_detect(trace: Any, expected: bool) -> None:
    assert galtea.detect(trace) is expected


def test_pairs_are_detected_as_galtea_and_a_bare_role_list_reads_alike_either_way() -> None:
    candidates = ("tracebridge", "openai_chat", "galtea")
    assert detect_format([{"input": "q", "actual_output": "a"}], candidates=candidates) == "galtea"
    # Both readers give the same typed messages, so the first candidate is as good as any.
    assert detect_format([{"role": "user", "content": "q"}], candidates=candidates) == (
        "openai_chat"
    )
    with pytest.raises(FormatError, match="ambiguous trace: it has the shape of openai_chat and "
                       "galtea, and they read it differently"):
        detect_format([{"role": "assistant", "content": "a", "note": 1}], candidates=candidates)


def test_convert_rewrites_pairs_as_role_turns() -> None:
    pairs = [{"input": "q", "actual_output": "a"}]
    assert convert(pairs, source="galtea", target="galtea", target_options={"shape": "roles"}) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
