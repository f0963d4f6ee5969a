"""langchain: the hosted-tool items of ``additional_kwargs["tool_outputs"]`` read where
langchain-core puts them (``code_interpreter_call``, ``mcp_call`` and
``image_generation_call`` after the reasoning and before the text, the others after the text
and the refusal), so one reply reads alike in its ``output_version="v0"`` form and its
``responses/v1`` form; the way back writes them in their list's order, kept as ``at`` when
the reader placed them out of it.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    messages_to_dict,
)
from langchain_core.messages.block_translators.openai import _convert_from_v03_ai_message
from langchain_helpers import forms
from langchain_helpers import rejected_write as rejected

import tracebridge
from tracebridge import TraceError
from tracebridge.adapters import langchain
from tracebridge.messages import OpaquePart, ReasoningPart, RefusalPart, TextPart

LC = "langchain"

CODE = {
    "type": "code_interpreter_call", "id": "ci_1", "code": "print(1)", "container_id": "c_1",
    "outputs": None, "status": "completed",
}
MCP = {
    "type": "mcp_call", "id": "mcp_1", "name": "lookup", "server_label": "docs",
    "arguments": "{}", "output": "ok",
}
IMAGE = {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "AAAA"}
SEARCH = {
    "type": "web_search_call", "id": "ws_1", "status": "completed",
    "action": {"type": "search", "query": "news"},
}
FILES = {
    "type": "file_search_call", "id": "fs_1", "queries": ["news"], "status": "completed",
    "results": None,
}
TOOLS = {"type": "mcp_list_tools", "id": "ml_1", "server_label": "docs", "tools": []}
OTHER = {"type": "local_shell_call", "id": "ls_1", "status": "completed"}
ITEMS = [CODE, MCP, IMAGE, SEARCH, FILES, TOOLS, OTHER]
REASONING = {
    "type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look"}]
}
TEXT = {"type": "text", "text": "Here", "annotations": []}


def v03(items: list[dict[str, Any]], *, reasoning: bool = True, refusal: str | None = None,
        text: bool = True) -> AIMessage:
    """A reply as ChatOpenAI on the Responses API builds it with ``output_version="v0"``."""
    kwargs: dict[str, Any] = {"tool_outputs": copy.deepcopy(items)}
    if reasoning:
        kwargs["reasoning"] = copy.deepcopy(REASONING)
    if refusal is not None:
        kwargs["refusal"] = refusal
    return AIMessage(
        content=[dict(TEXT)] if text else [],
        id="msg_1",
        additional_kwargs=kwargs,
        response_metadata={"id": "resp_1", "model_provider": "openai"},
    )


def parts_of(content: Any) -> list[tuple[str, Any]]:
    """Each part's class and what it holds, without the marks of where it was read from."""
    return [
        (type(part).__name__, part.value if isinstance(part, OpaquePart) else part.text)
        for part in content
    ]


def mark(**kept: Any) -> dict[str, Any]:
    return {LC: {"from": "tool_outputs", **kept}}


def item_part(item: dict[str, Any], **kept: Any) -> OpaquePart:
    return OpaquePart(kind=item["type"], value=item, metadata=mark(**kept))


def test_the_items_read_in_langchain_cores_order() -> None:
    reply = v03([SEARCH, IMAGE, OTHER, CODE, FILES, MCP, TOOLS], refusal="No.")
    typed = langchain.to_messages([HumanMessage("q"), reply])
    assert parts_of(typed[1].content) == [
        ("ReasoningPart", "Look"), ("OpaquePart", CODE), ("OpaquePart", MCP),
        ("OpaquePart", IMAGE), ("TextPart", "Here"), ("RefusalPart", "No."),
        ("OpaquePart", TOOLS), ("OpaquePart", SEARCH), ("OpaquePart", OTHER),
        ("OpaquePart", FILES),
    ]
    assert [part.metadata[LC]["at"] for part in typed[1].content[1:4]] == [3, 5, 1]
    assert [part.metadata[LC]["at"] for part in typed[1].content[6:]] == [6, 0, 2, 4]
    # as langchain-core's own reading of the reply
    assert [block["type"] for block in reply.content_blocks] == [
        "reasoning", "server_tool_call", "server_tool_result", "server_tool_call",
        "server_tool_result", "image", "text", "refusal", "server_tool_call",
        "server_tool_result", "server_tool_call", "server_tool_result", "non_standard",
        "server_tool_call", "server_tool_result",
    ]


@pytest.mark.parametrize("count", [1, 2])
def test_a_v0_reply_reads_as_its_responses_v1_form(count: int) -> None:
    for items in itertools.permutations(ITEMS, count):
        for reasoning, refusal, text in itertools.product(
            (True, False), (None, "No."), (True, False)
        ):
            reply = v03(list(items), reasoning=reasoning, refusal=refusal, text=text)
            v1 = _convert_from_v03_ai_message(reply)
            assert "tool_outputs" not in v1.additional_kwargs
            a = langchain.to_messages([HumanMessage("q"), reply])
            b = langchain.to_messages([HumanMessage("q"), v1])
            assert parts_of(a[1].content) == parts_of(b[1].content), (items, reasoning)
            assert tracebridge.transcript_hash(a) == tracebridge.transcript_hash(b)


def test_the_items_in_their_order_keep_no_position() -> None:
    typed = langchain.to_messages([HumanMessage("q"), v03([CODE, MCP, SEARCH, FILES])])
    assert typed[1].content[1:3] == [item_part(CODE), item_part(MCP)]
    assert typed[1].content[4:] == [item_part(SEARCH), item_part(FILES)]


@pytest.mark.parametrize(
    "items",
    [[SEARCH, CODE], [MCP, CODE], [IMAGE, SEARCH, CODE, MCP], [SEARCH, TOOLS], ITEMS[::-1]],
)
def test_the_way_back_writes_the_list_in_its_order(items: list[dict[str, Any]]) -> None:
    replies: list[BaseMessage] = [
        v03(items),
        v03(items, reasoning=False, refusal="No."),
        AIMessage("Here", additional_kwargs={"tool_outputs": copy.deepcopy(items)}),
        AIMessage("", additional_kwargs={"tool_outputs": copy.deepcopy(items)}),
        AIMessage("Here", additional_kwargs={"tool_outputs": copy.deepcopy(items),
                                             "refusal": "No."}),
        AIMessageChunk(content=[{**TEXT, "index": 0}], id="msg_1", chunk_position="last",
                       additional_kwargs={"tool_outputs": copy.deepcopy(items)}),
    ]
    trace: list[BaseMessage] = [HumanMessage("q")]
    for reply in replies:
        trace += [reply, HumanMessage("And?")]
    v1 = langchain.to_messages([HumanMessage("q"), _convert_from_v03_ai_message(replies[0])])
    for form in forms(trace):
        typed = langchain.to_messages(form)
        assert parts_of(typed[1].content) == parts_of(v1[1].content)
        back = langchain.from_messages(typed)
        assert messages_to_dict(back) == messages_to_dict(trace)
        assert back[5].content == "Here"
        assert back[7].content == ""
        assert langchain.to_messages(back) == typed


def test_a_string_content_marks_the_first_item_it_reads() -> None:
    typed = langchain.to_messages(
        [HumanMessage("q"), AIMessage("Here", additional_kwargs={"tool_outputs": [SEARCH, MCP]})]
    )
    assert typed[1].content == [
        item_part(MCP, at=1, content="string"), TextPart(text="Here"), item_part(SEARCH, at=0)
    ]


def test_taking_items_out_leaves_the_others_in_their_order() -> None:
    typed = langchain.to_messages([HumanMessage("q"), v03([SEARCH, CODE, FILES, MCP])])
    think, code, mcp, text, search, files = typed[1].content
    assert [p.metadata[LC]["at"] for p in (code, mcp, search, files)] == [1, 3, 0, 2]
    left = typed[1].model_copy(update={"content": [think, mcp, text, files, search]})
    # two swapped, and gaps where items were taken out: the list's order is their 'at'
    edited = langchain.from_messages([typed[0], left])[1]
    assert edited.additional_kwargs["tool_outputs"] == [SEARCH, FILES, MCP]


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


def test_an_item_out_of_its_place_is_refused_at_it() -> None:
    typed = langchain.to_messages([HumanMessage("q"), v03([SEARCH, CODE, MCP])])
    think, code, mcp, text, search = typed[1].content
    cases = [
        # a code_interpreter_call among the last parts
        ([think, mcp, text, search, code], "messages[1].content[4]", "goes before the"),
        # a code_interpreter_call before the text but after an mcp_call
        ([think, mcp, code, text, search], "messages[1].content[2]", "would read back before"),
        # a web_search_call before the text
        ([think, code, mcp, search, text], "messages[1].content[3].metadata", "among the first"),
        # a web_search_call between the text and a refusal
        ([think, code, mcp, text, search, RefusalPart(text="No.")],
         "messages[1].content[4].metadata", "among its last parts"),
    ]
    for content, path, words in cases:
        error = rejected([typed[0], typed[1].model_copy(update={"content": content})])
        assert where(error) == ("not_representable", 1, path), path
        assert words in str(error)


def test_a_position_that_does_not_say_where_the_item_goes_is_refused_at_it() -> None:
    typed = langchain.to_messages([HumanMessage("q"), v03([SEARCH, CODE, MCP])])
    think, code, mcp, text, search = typed[1].content

    def at(part: OpaquePart, value: Any) -> OpaquePart:
        kept = {**part.metadata[LC], "at": value}
        if value is None:
            del kept["at"]
        return part.model_copy(update={"metadata": {LC: kept}})

    cases = [
        ([think, code, at(mcp, 1), text, search], "messages[1].content[2].metadata.langchain.at",
         "is also the 'at' of messages[1].content[1]"),
        ([think, code, mcp, text, at(search, -1)],
         "messages[1].content[4].metadata.langchain.at", "is no index of a list"),
        ([think, code, mcp, text, at(search, True)],
         "messages[1].content[4].metadata.langchain.at", "is no index of a list"),
        ([think, code, mcp, text, at(search, None)], "messages[1].content[4].metadata.langchain",
         "this one has none"),
        ([think, code, mcp, text, item_part(FILES)], "messages[1].content[4].metadata.langchain",
         "this one has none"),
    ]
    for content, path, words in cases:
        error = rejected([typed[0], typed[1].model_copy(update={"content": content})])
        assert where(error) == ("not_representable", 1, path), path
        assert words in str(error)


def test_a_string_mark_on_a_part_after_the_first_item_is_refused() -> None:
    typed = langchain.to_messages(
        [HumanMessage("q"), AIMessage("Here", additional_kwargs={"tool_outputs": [CODE, SEARCH]})]
    )
    code, text, search = typed[1].content
    assert code.metadata == mark(content="string")
    moved = [code.model_copy(update={"metadata": mark()}), text,
             search.model_copy(update={"metadata": mark(content="string")})]
    error = rejected([typed[0], typed[1].model_copy(update={"content": moved})])
    assert where(error) == (
        "not_representable", 1, "messages[1].content[2].metadata.langchain.content"
    )
    two = [code, text, TextPart(text="more"), search]
    error = rejected([typed[0], typed[1].model_copy(update={"content": two})])
    assert where(error) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain.content"
    )
    assert "2 part(s) are between them" in str(error)


def test_reasoning_first_and_items_around_the_content_stay_in_their_places() -> None:
    reply = AIMessage(
        "Here", additional_kwargs={"reasoning_content": "Hmm", "tool_outputs": [SEARCH, IMAGE]}
    )
    typed = langchain.to_messages([HumanMessage("q"), reply])
    assert typed[1].content == [
        ReasoningPart(text="Hmm", metadata={LC: {"from": "reasoning_content"}}),
        item_part(IMAGE, at=1, content="string"),
        TextPart(text="Here"),
        item_part(SEARCH, at=0),
    ]
    assert messages_to_dict(langchain.from_messages(typed)) == messages_to_dict(
        [HumanMessage("q"), reply]
    )
