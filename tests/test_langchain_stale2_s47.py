"""langchain: a ``tool_use`` or ``function_call`` block is a stale copy of its call only when
it is shaped as its provider writes it (a ``name`` that is text; an object ``input``, text
``arguments``). A block without a name, or with a name or arguments of another type, is no
copy of a call: it disagrees with ``tool_calls`` (``conflicting_fields`` at the value), and a
kept block shaped so is refused when written under a stale mark.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from test_langchain_stale_fixes_s47 import refused_write, rejected, where

import tracebridge as tb
from tracebridge.adapters import langchain

LC = "langchain"
CALL = {"name": "w", "args": {"city": "Lyon"}, "id": "t1", "type": "tool_call"}
TOOL_USE = {"type": "tool_use", "id": "t1"}
FUNCTION_CALL = {"type": "function_call", "call_id": "t1"}
STALE_AT = "messages[1].tool_calls[0].metadata.langchain.stale"


def trace_with(block: dict[str, Any]) -> list[Any]:
    return [
        HumanMessage("Weather in Lyon?"),
        AIMessage([{"type": "text", "text": "Looking."}, block], tool_calls=[CALL]),
        ToolMessage("18C", tool_call_id="t1"),
    ]


@pytest.mark.parametrize(
    ("block", "detail"),
    [
        pytest.param({**TOOL_USE, "input": {"city": "Lyon"}},
                     "the tool_use block names None but tool_calls has 'w'",
                     id="tool_use-no-name-args-agree"),
        pytest.param({**TOOL_USE, "input": {"city": "Paris"}},
                     "the tool_use block names None but tool_calls has 'w'",
                     id="tool_use-no-name-args-differ"),
        pytest.param({**TOOL_USE},
                     "the tool_use block names None but tool_calls has 'w'",
                     id="tool_use-no-name-no-input"),
        pytest.param({**FUNCTION_CALL, "arguments": '{"city": "Lyon"}'},
                     "the function_call block names None but tool_calls has 'w'",
                     id="function_call-no-name-args-agree"),
        pytest.param({**FUNCTION_CALL, "arguments": '{"city": "Paris"}'},
                     "the function_call block names None but tool_calls has 'w'",
                     id="function_call-no-name-args-differ"),
        pytest.param({**TOOL_USE, "name": None, "input": {"city": "Paris"}},
                     "the tool_use block names None but tool_calls has 'w'",
                     id="tool_use-name-None"),
        pytest.param({**TOOL_USE, "name": 3, "input": {"city": "Lyon"}},
                     "the tool_use block names 3 but tool_calls has 'w'",
                     id="tool_use-name-3"),
        pytest.param({**FUNCTION_CALL, "name": None, "arguments": '{"city": "Paris"}'},
                     "the function_call block names None but tool_calls has 'w'",
                     id="function_call-name-None"),
        pytest.param({**TOOL_USE, "name": "w2", "input": "Paris"},
                     "the tool_use block names 'w2' but tool_calls has 'w'",
                     id="tool_use-renamed-input-text"),
        pytest.param({**FUNCTION_CALL, "name": "w2", "arguments": {"city": "Lyon"}},
                     "the function_call block names 'w2' but tool_calls has 'w'",
                     id="function_call-renamed-arguments-object"),
    ],
)
def test_a_call_block_whose_name_is_not_text_conflicts_at_its_name(
    block: dict[str, Any], detail: str
) -> None:
    error = rejected(trace_with(block))
    assert where(error) == ("conflicting_fields", 1, "messages[1].content[1].name")
    assert error.detail == detail


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("Paris", "'Paris'", id="text"),
        pytest.param(None, "None", id="None"),
        pytest.param(["Lyon"], "['Lyon']", id="list"),
    ],
)
def test_a_tool_use_block_whose_input_is_no_object_conflicts_at_its_input(
    value: Any, shown: str
) -> None:
    error = rejected(trace_with({**TOOL_USE, "name": "w", "input": value}))
    assert where(error) == ("conflicting_fields", 1, "messages[1].content[1].input")
    assert error.detail == (
        f"the tool_use block's input {shown} disagrees with tool_calls' args {{'city': 'Lyon'}}"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param({"city": "Lyon"}, "{'city': 'Lyon'}", id="object"),
        pytest.param(None, "None", id="None"),
    ],
)
def test_a_function_call_block_whose_arguments_are_not_text_conflicts_at_its_arguments(
    value: Any, shown: str
) -> None:
    error = rejected(trace_with({**FUNCTION_CALL, "name": "w", "arguments": value}))
    assert where(error) == ("conflicting_fields", 1, "messages[1].content[1].arguments")
    assert error.detail == (
        f"the function_call block's arguments {shown} disagree with tool_calls' args "
        "{'city': 'Lyon'}"
    )


@pytest.mark.parametrize(
    "block",
    [
        pytest.param({**TOOL_USE, "name": "w2", "input": {"city": "Lyon"}}, id="tool_use-renamed"),
        pytest.param({**TOOL_USE, "name": "w2"}, id="tool_use-renamed-no-input"),
        pytest.param({**TOOL_USE, "name": "w", "input": {"city": "Paris"}},
                     id="tool_use-args-edited"),
        pytest.param({**FUNCTION_CALL, "name": "w", "arguments": '{"city": "Paris"}'},
                     id="function_call-args-edited"),
    ],
)
def test_a_call_block_shaped_as_its_provider_writes_it_is_still_a_stale_copy(
    block: dict[str, Any],
) -> None:
    trace = trace_with(block)
    typed = langchain.to_messages(trace)
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    template = {k: v for k, v in block.items() if k not in ("id", "call_id")}
    link: dict[str, Any] = {"at": 1, "block": template}
    if "input" not in block and "arguments" not in block:
        link["without_args"] = True
    assert ai.tool_calls == [
        tb.ToolCall(name="w", args={"city": "Lyon"}, id="t1",
                    metadata={LC: {"stale": ["content"], "content_block": link}})
    ]
    back = langchain.from_messages(typed)
    assert messages_to_dict(back) == messages_to_dict(trace)


RENAMED = {**TOOL_USE, "name": "w2", "input": {"city": "Lyon"}}


def stale_typed_with_kept(block: dict[str, Any], kept: dict[str, Any]) -> list[tb.Message]:
    """The read trace of a stale ``block``, its call's kept block then given ``kept``."""
    typed = langchain.to_messages(trace_with(block))
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    call = ai.tool_calls[0]
    link = call.metadata[LC]["content_block"]
    marks = {**call.metadata[LC], "content_block": {**link, "block": {**link["block"], **kept}}}
    edited = call.model_copy(update={"metadata": {LC: marks}})
    return [typed[0], ai.model_copy(update={"tool_calls": [edited]}), *typed[2:]]


@pytest.mark.parametrize(
    "kept",
    [
        pytest.param({"name": None}, id="name-None"),
        pytest.param({"name": 3}, id="name-3"),
        pytest.param({"input": "Paris"}, id="input-text"),
        pytest.param({"input": None}, id="input-None"),
    ],
)
def test_a_stale_mark_whose_kept_block_is_no_copy_of_a_call_is_refused(
    kept: dict[str, Any],
) -> None:
    error = refused_write(stale_typed_with_kept(RENAMED, kept))
    assert where(error) == ("not_representable", 1, STALE_AT)
    assert error.detail == (
        "this call is marked as having a stale tool_use block (metadata.langchain.stale names "
        "'content'), but the block kept for it (metadata.langchain.content_block) has a name "
        "that is not text, or input of another type than an object: no copy of a call: it "
        "would read back without the mark (take 'content' out of the mark, and the block's "
        "name and arguments out of the kept block, to write the block from the call)"
    )


def test_a_stale_function_call_mark_whose_kept_arguments_are_not_text_is_refused() -> None:
    block = {**FUNCTION_CALL, "name": "w", "arguments": '{"city": "Paris"}'}
    error = refused_write(stale_typed_with_kept(block, {"arguments": {"city": "Paris"}}))
    assert where(error) == ("not_representable", 1, STALE_AT)
    assert error.detail.startswith(
        "this call is marked as having a stale function_call block (metadata.langchain.stale "
        "names 'content'), but the block kept for it (metadata.langchain.content_block) has a "
        "name that is not text, or arguments of another type than text: no copy of a call: "
    )
