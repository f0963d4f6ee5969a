"""Write golden_traces/openai_chat/ by running the real openai client in a tool-using loop.

Usage: ``python scripts/golden/openai_chat.py`` (rewrites the folder; output is deterministic).

The client is ``openai.OpenAI`` with an ``httpx.MockTransport`` that answers each
``POST /chat/completions`` with the next scripted reply (fixed completion ids, fixed
``created``, fixed call ids), so nothing random is left in. The application loop is the one
the OpenAI docs show: send the history, append the reply, run each tool call, append a
``tool`` message per call, repeat until the model stops calling tools.

What is stored is what the application holds and sends:

* request messages as the plain dicts the application wrote (``*Param`` TypedDicts);
* each reply as ``ChatCompletionMessage.model_dump(mode="json")`` -- the full dump, every
  field with its null, as ``messages.append(message.model_dump())`` code and Swarm store it.
  (Appending the object itself is covered by tests/test_openai_chat_sdk.py, which compares
  by ``model_dump(exclude_unset=True)``: the keys the server really sent.)

The script checks that the last request the SDK sent carried exactly the stored history.
``expected`` is the adapter's typed output at generation time; review a diff before
committing it. Invalid cases are valid histories broken on purpose, with the code and
index written here by hand.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai

from tracebridge.adapters import openai_chat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: golden_errors
from golden_errors import error_of as raised

OUT = Path(__file__).resolve().parents[2] / "golden_traces" / "openai_chat"
MODEL = "gpt-4o-2024-08-06"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
CONVERT_TOOL = {
    "type": "function",
    "function": {
        "name": "convert_currency",
        "parameters": {
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "source": {"type": "string"},
                "target": {"type": "string"},
            },
        },
    },
}
LOCATION_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_location",
        "description": "The city the user is in now.",
        "parameters": {"type": "object", "properties": {}},
    },
}
SQL_TOOL = {"type": "custom", "custom": {"name": "run_sql", "description": "Run a SQL query."}}
WEATHER = {"Paris": "18 C, sunny", "Rome": "24 C, clear", "Oslo": "3 C, light snow"}


# --- the scripted endpoint -------------------------------------------------------------------


def said(content: str | None, **extra: Any) -> dict[str, Any]:
    """An assistant reply as the API sends it (refusal and annotations always present)."""
    return {"role": "assistant", "content": content, "refusal": None, "annotations": [], **extra}


def calls(*specs: tuple[str, str, str]) -> dict[str, Any]:
    """A reply made of function tool calls ``(id, name, arguments text)``."""
    return said(
        None,
        tool_calls=[
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in specs
        ],
    )


class ScriptedEndpoint:
    """Answers each request with the next reply; keeps every request body it got."""

    def __init__(self, case: str, replies: list[dict[str, Any]]) -> None:
        self.case = case
        self.replies = replies
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        message = self.replies[len(self.requests) - 1]
        finish = (
            "tool_calls"
            if message.get("tool_calls")
            else ("function_call" if message.get("function_call") else "stop")
        )
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-{self.case}-{len(self.requests)}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            },
        )

    def client(self) -> openai.OpenAI:
        transport = httpx.MockTransport(self)
        return openai.OpenAI(
            api_key="sk-golden",
            base_url="http://127.0.0.1:9/v1",
            http_client=httpx.Client(transport=transport),
            max_retries=0,
        )


# --- the application -------------------------------------------------------------------------


def run_tool(name: str, args: dict[str, Any]) -> str:
    if name == "get_current_location":
        return "Oslo"
    if name == "get_weather":
        return WEATHER[args["city"]]
    if name == "convert_currency":
        if args["target"] not in ("EUR", "USD", "GBP"):
            raise ValueError(f"unknown currency {args['target']!r}")
        return f"{args['amount'] * 0.92:.2f} {args['target']}"
    raise KeyError(name)


def agent_loop(
    case: str,
    history: list[Any],
    replies: list[dict[str, Any]],
    *,
    model: str = MODEL,
    **options: Any,
) -> list[Any]:
    """Run the loop until the model answers without tool calls; return the history.

    ``options`` go to ``chat.completions.create`` as given (``tools``, ``functions``, ...).
    """
    endpoint = ScriptedEndpoint(case, replies)
    client = endpoint.client()
    while True:
        completion = client.chat.completions.create(model=model, messages=history, **options)
        message = completion.choices[0].message
        history.append(message.model_dump(mode="json"))
        if message.function_call is not None:
            result = run_tool(
                message.function_call.name, json.loads(message.function_call.arguments)
            )
            history.append(
                {"role": "function", "name": message.function_call.name, "content": result}
            )
            continue
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            history.append({"role": "tool", "tool_call_id": call.id, "content": answer(call)})
    assert endpoint.requests[-1]["messages"] == history[:-1], "the SDK sent something else"
    return history


def answer(call: Any) -> str:
    """Run one tool call the way applications do: errors become the result text."""
    if call.type == "custom":
        return "3 rows: (1, 'ana'), (2, 'ben'), (3, 'cy')"
    try:
        # "" is what OpenRouter and vLLM send for a tool without parameters.
        args = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError as error:
        return f"Error: the arguments are not valid JSON ({error.msg})"
    try:
        return run_tool(call.function.name, args)
    except ValueError as error:
        return f"Error: {error}"


# --- the cases -------------------------------------------------------------------------------


def parallel_calls() -> list[Any]:
    return agent_loop(
        "parallel",
        [
            {"role": "system", "content": "You are a weather assistant."},
            {"role": "user", "content": "What's the weather in Paris and Rome?"},
        ],
        [
            calls(
                ("call_pw1", "get_weather", '{"city": "Paris"}'),
                ("call_pw2", "get_weather", '{"city":"Rome"}'),
            ),
            said("Paris: 18 C and sunny. Rome: 24 C and clear."),
        ],
        tools=[WEATHER_TOOL],
    )


def tool_error() -> list[Any]:
    return agent_loop(
        "tool-error",
        [
            {"role": "user", "content": "Convert 100 USD to XYZ."},
        ],
        [
            calls(
                (
                    "call_te1",
                    "convert_currency",
                    '{"amount": 100, "source": "USD", "target": "XYZ"}',
                )
            ),
            said("I couldn't convert that: XYZ is not a currency I know."),
        ],
        tools=[CONVERT_TOOL],
    )


def refusal() -> list[Any]:
    return agent_loop(
        "refusal",
        [
            {"role": "user", "content": "How do I open my neighbour's lock without a key?"},
        ],
        [
            said(None, refusal="I'm sorry, but I can't help with that."),
        ],
    )


def image_input() -> list[Any]:
    return agent_loop(
        "image",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in these pictures?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/bicycle.jpg", "detail": "high"},
                    },
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
        ],
        [
            said("A red bicycle against a wall, and a tiny blank PNG."),
        ],
    )


def attachments() -> list[Any]:
    return agent_loop(
        "attachments",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Summarise the recording and the report."},
                    {
                        "type": "input_audio",
                        "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"},
                    },
                    {
                        "type": "file",
                        "file": {
                            "filename": "report.pdf",
                            "file_data": "data:application/pdf;base64,JVBERi0xLjQ=",
                        },
                    },
                    {"type": "file", "file": {"file_id": "file-abc123"}},
                ],
            },
        ],
        [
            said("The recording is a short greeting; the report is a one-page invoice."),
        ],
    )


def multi_turn() -> list[Any]:
    history: list[Any] = [
        {"role": "developer", "content": "Answer in one short sentence."},
        {"role": "user", "name": "ana", "content": "Who wrote Dune?"},
    ]
    agent_loop("turn-1", history, [said("Frank Herbert wrote Dune.")])
    history.append({"role": "user", "name": "ana", "content": "When was it published?"})
    return agent_loop("turn-2", history, [said("Dune was published in 1965.")])


def malformed_arguments() -> list[Any]:
    return agent_loop(
        "malformed",
        [
            {"role": "user", "content": "Weather in Oslo?"},
        ],
        [
            calls(("call_ma1", "get_weather", '{"city": "Oslo"')),
            calls(("call_ma2", "get_weather", '{"city":"Oslo"}')),
            said("It is 3 C with light snow in Oslo."),
        ],
        tools=[WEATHER_TOOL],
    )


def legacy_function_call() -> list[Any]:
    return agent_loop(
        "legacy",
        [
            {"role": "user", "content": "Weather in Rome?"},
        ],
        [
            said(None, function_call={"name": "get_weather", "arguments": '{"city": "Rome"}'}),
            said("It is 24 C and clear in Rome."),
        ],
        functions=[WEATHER_TOOL["function"]],
    )


def custom_tool() -> list[Any]:
    return agent_loop(
        "custom",
        [
            {"role": "user", "content": "List the first three users."},
        ],
        [
            said(
                None,
                tool_calls=[
                    {
                        "id": "call_ct1",
                        "type": "custom",
                        "custom": {
                            "name": "run_sql",
                            "input": "SELECT id, name FROM users LIMIT 3",
                        },
                    }
                ],
            ),
            said("The first three users are ana, ben and cy."),
        ],
        tools=[SQL_TOOL],
    )


def developer_prompt() -> list[Any]:
    return agent_loop(
        "developer",
        [
            {
                "role": "developer",
                "content": [
                    {"type": "text", "text": "You are a terse assistant."},
                    {"type": "text", "text": "Answer with one word when you can."},
                ],
            },
            {"role": "user", "content": "Is Oslo the capital of Norway?"},
        ],
        [said("Yes.")],
        model="o3-mini",
        reasoning_effort="low",
    )


def image_detail() -> list[Any]:
    return agent_loop(
        "image-detail",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Which of these is the larger map?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/map-small.png", "detail": "low"},
                    },
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": "data:image/png;base64,iVBORw0KGgo=",
                            "detail": "auto",
                        },
                    },
                ],
            },
        ],
        [said("The first one, at low detail, is still the larger map.")],
    )


def url_citations() -> list[Any]:
    text = "Oslo opened a new public library this week, according to City News."
    start = text.index("City News")
    cited = said(
        text,
        annotations=[
            {
                "type": "url_citation",
                "url_citation": {
                    "start_index": start,
                    "end_index": start + len("City News"),
                    "title": "Oslo's new library opens",
                    "url": "https://news.example.com/oslo-library",
                },
            }
        ],
    )
    history: list[Any] = [{"role": "user", "content": "Any good news from Oslo this week?"}]
    search: dict[str, Any] = {"model": "gpt-4o-search-preview", "web_search_options": {}}
    agent_loop("citations-1", history, [cited], **search)
    history.append({"role": "user", "content": "When is it open?"})
    return agent_loop(
        "citations-2",
        history,
        [said("I could not find its opening hours.")],
        **search,
    )


def audio_reply() -> list[Any]:
    """The audio guide's multi-turn flow: the spoken reply goes back by its id."""
    spoken = {
        "id": "audio_6790a1b2c3",
        "data": "UklGRiQAAABXQVZF",
        "expires_at": 1767229200,
        "transcript": "Yes, golden retrievers are gentle and patient with children.",
    }
    again = {
        "id": "audio_6790a1b2c4",
        "data": "UklGRiQAAABXQVZF",
        "expires_at": 1767229260,
        "transcript": "They were bred to work closely with people.",
    }
    endpoint = ScriptedEndpoint("audio", [said(None, audio=spoken), said(None, audio=again)])
    client = endpoint.client()
    options: dict[str, Any] = {
        "model": "gpt-4o-audio-preview",
        "modalities": ["text", "audio"],
        "audio": {"voice": "alloy", "format": "wav"},
    }
    history: list[Any] = [{"role": "user", "content": "Is a golden retriever a good family dog?"}]
    first = client.chat.completions.create(messages=history, **options).choices[0].message
    assert first.audio is not None
    history.append({"role": "assistant", "audio": {"id": first.audio.id}})
    history.append({"role": "user", "content": "Why are they so friendly?"})
    second = client.chat.completions.create(messages=history, **options).choices[0].message
    history.append(second.model_dump(mode="json"))
    assert endpoint.requests[-1]["messages"] == history[:-1], "the SDK sent something else"
    return history


def empty_arguments() -> list[Any]:
    """A tool without parameters, called as OpenRouter and vLLM spell it: arguments ""."""
    return agent_loop(
        "empty-arguments",
        [{"role": "user", "content": "What's the weather where I am?"}],
        [
            calls(("call_ea1", "get_current_location", "")),
            calls(("call_ea2", "get_weather", '{"city": "Oslo"}')),
            said("It is 3 C with light snow in Oslo."),
        ],
        model="meta-llama/llama-3.3-70b-instruct",
        tools=[LOCATION_TOOL, WEATHER_TOOL],
    )


def streamed_deltas() -> list[Any]:
    """The deltas of a real stream, stored one by one instead of aggregated."""
    chunks = [
        '{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1767225600,'
        f'"model":"{MODEL}","choices":[{{"index":0,"delta":{delta},'
        '"finish_reason":null,"logprobs":null}]}'
        for delta in (
            '{"role":"assistant","content":"","refusal":null}',
            '{"content":"Hello"}',
            '{"content":" there."}',
        )
    ]
    body = "".join(f"data: {chunk}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            200, text=body, headers={"content-type": "text/event-stream"}
        )
    )
    client = openai.OpenAI(
        api_key="sk-golden",
        base_url="http://127.0.0.1:9/v1",
        http_client=httpx.Client(transport=transport),
        max_retries=0,
    )
    history: list[Any] = [{"role": "user", "content": "Say hello."}]
    stream = client.chat.completions.create(model=MODEL, messages=history, stream=True)
    history.extend(chunk.choices[0].delta.model_dump(mode="json") for chunk in stream)
    return history


VALID: dict[str, tuple[str, Callable[[], list[Any]]]] = {
    "parallel_calls": ("Two get_weather calls in one reply, answered in order.", parallel_calls),
    "tool_error": (
        "The tool fails; the application returns the error text as the result.",
        tool_error,
    ),
    "refusal": ("The model refuses: content null, refusal set.", refusal),
    "image_input": ("A user message with an image URL (detail high) and a data: URL.", image_input),
    "attachments": (
        "A user message with input audio, a file as data and a file by id.",
        attachments,
    ),
    "multi_turn": ("A developer prompt and two user turns with a participant name.", multi_turn),
    "malformed_arguments": (
        "The model writes truncated JSON arguments, gets an error result "
        "and retries with compact JSON.",
        malformed_arguments,
    ),
    "legacy_function_call": (
        "The deprecated functions/function_call flow with a function message.",
        legacy_function_call,
    ),
    "custom_tool": ("A custom tool call with free-text input.", custom_tool),
    "developer_prompt": (
        "A reasoning model's developer prompt, as two text parts.",
        developer_prompt,
    ),
    "image_detail": ("Images with detail low (by URL) and auto (a data: URL).", image_detail),
    "url_citations": (
        "A web-search reply with a url_citation annotation, sent back in the next request.",
        url_citations,
    ),
    "audio_reply": (
        "A spoken reply (audio with id, data, expires_at, transcript); the next request "
        "sends it back by id alone.",
        audio_reply,
    ),
    "empty_arguments": (
        "A tool without parameters called with arguments \"\" (OpenRouter, vLLM), "
        "then a tool with arguments.",
        empty_arguments,
    ),
}


def invalid_cases() -> dict[str, tuple[str, list[Any], str, int | None]]:
    parallel = parallel_calls()  # [system, user, assistant(2 calls), tool, tool, assistant]
    retried = malformed_arguments()  # [user, assistant, tool, assistant, tool, assistant]

    def edited(history: list[Any], edit: Callable[[list[Any]], None]) -> list[Any]:
        broken = copy.deepcopy(history)
        edit(broken)
        return broken

    def reuse_call_id(history: list[Any]) -> None:
        history[3]["tool_calls"][0]["id"] = "call_ma1"
        history[4]["tool_call_id"] = "call_ma1"

    return {
        "unknown_role": (
            "A user message with role 'human' (a LangChain type name).",
            edited(parallel, lambda h: h[1].update(role="human")),
            "unknown_role",
            1,
        ),
        "tool_before_assistant": (
            "A tool result right after the system prompt.",
            edited(parallel, lambda h: h.insert(1, copy.deepcopy(h[3]))),
            "orphan_tool_result",
            1,
        ),
        "removed_tool_result": (
            "The result of call_pw2 removed: its call is unanswered.",
            edited(parallel, lambda h: h.pop(4)),
            "unanswered_tool_call",
            2,
        ),
        "duplicated_tool_result": (
            "The result of call_pw1 stored twice.",
            edited(parallel, lambda h: h.insert(5, copy.deepcopy(h[3]))),
            "orphan_tool_result",
            5,
        ),
        "duplicate_call_ids": (
            "The retry reuses the first call's id.",
            edited(retried, reuse_call_id),
            "duplicate_tool_call_id",
            3,
        ),
        "non_dict_element": (
            "A bare string where a message belongs.",
            edited(parallel, lambda h: h.insert(2, "And in Oslo?")),
            "malformed_event",
            2,
        ),
        "galtea_pirate_history": (
            "The pirate history on Galtea's page: its first entry has no 'role' "
            "('system': 'system').",
            [
                {"system": "system", "content": "You are a pirate."},
                {"role": "user", "content": "Can you teach me to swim?"},
                {
                    "role": "assistant",
                    "content": "Sure thing, matey! Then ye go swim with the shark.",
                },
            ],
            "malformed_event",
            0,
        ),
        "streamed_deltas": (
            "The deltas of a stream stored unaggregated: the first delta looks "
            "like a message, the second has role null.",
            streamed_deltas(),
            "streaming_chunk",
            2,
        ),
        "arguments_as_object": (
            "Arguments stored as an object instead of a JSON string.",
            edited(
                parallel,
                lambda h: h[2]["tool_calls"][0]["function"].update(arguments={"city": "Paris"}),
            ),
            "malformed_event",
            2,
        ),
    }


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def error_of(trace: Any, code: str, index: int | None) -> dict[str, Any]:
    """The error reading ``trace`` raises: the code and index given here, and its path."""
    return raised(openai_chat.to_messages, trace, code, index)


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "invalid").mkdir(parents=True)
    for name, (description, build) in VALID.items():
        trace = build()
        expected = [m.model_dump(mode="json") for m in openai_chat.to_messages(trace)]
        write(
            OUT / f"{name}.json", {"description": description, "trace": trace, "expected": expected}
        )
    for name, (description, trace, code, index) in invalid_cases().items():
        write(
            OUT / "invalid" / f"{name}.json",
            {"description": description, "trace": trace, "error": error_of(trace, code, index)},
        )
    print(f"wrote {len(VALID)} valid and {len(invalid_cases())} invalid traces to {OUT}")


if __name__ == "__main__":
    main()
