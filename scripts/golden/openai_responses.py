"""Write golden_traces/openai_responses/ by running the real openai client's ``responses.create``.

Usage: ``python scripts/golden/openai_responses.py`` (rewrites the folder; output is
deterministic).

The client is ``openai.OpenAI`` pointed at a scripted Responses endpoint served on 127.0.0.1
(a thread; every request has a 10-second timeout and no retries, and the server stops when the
case ends). Each ``POST /v1/responses`` is answered with the next scripted ``Response`` (fixed
ids and ``created_at``). The application loop is the one the OpenAI docs show for the Responses
API: send the input list, append ``response.output`` to it, run each function call and append
its ``function_call_output`` (or a ``custom_tool_call_output``, ``computer_call_output``,
``local_shell_call_output``), repeat until the model stops calling tools.

What is stored is the input list the application holds: its own items as the plain dicts it
wrote, and the response's items as ``item.model_dump(mode="json", exclude_unset=True,
by_alias=True)``, the keys the server sent (as the Agents SDK's ``to_input_list()`` stores
them). The script checks that the last request the client sent carried exactly the stored
list (before the last response's output). ``expected`` is the adapter's typed output at
generation time; review a diff before committing it. Invalid cases are valid lists broken on
purpose, with the code and index written here by hand.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import openai

from tracebridge.adapters import openai_responses

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from local_server import serving  # noqa: E402  (the loopback runner the tests use)

OUT = ROOT / "golden_traces" / "openai_responses"
MODEL = "gpt-5-2025-08-07"

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
SQL_TOOL = {"type": "custom", "name": "run_sql", "description": "Run a SQL query."}
WEATHER = {"Paris": "18 C, sunny", "Rome": "24 C, clear", "Oslo": "3 C, light snow"}


# --- the scripted endpoint -------------------------------------------------------------------


def text(words: str, annotations: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "output_text", "text": words, "annotations": annotations or [], "logprobs": []}


def message(item_id: str, *parts: dict[str, Any]) -> dict[str, Any]:
    """An assistant message item as the API sends it."""
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": list(parts),
    }


def function_call(item_id: str, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def reasoning(item_id: str, *summary: str, encrypted: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": item_id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": said} for said in summary],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


class Endpoint:
    """Answers each ``POST /v1/responses`` with the next scripted output; keeps the requests."""

    def __init__(self, case: str, outputs: list[list[dict[str, Any]]]) -> None:
        self.case = case
        self.outputs = outputs
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
            if number > len(self.outputs):
                return 500, {"error": {"message": "no scripted response left"}}
            output = self.outputs[number - 1]
        return 200, {
            "id": f"resp_{self.case}_{number}",
            "object": "response",
            "created_at": 1767225600,
            "status": "completed",
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools", []),
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
            "usage": {
                "input_tokens": 50,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 10,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 60,
            },
        }

    def handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path != "/v1/responses":
                    status, payload = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    status, payload = endpoint.answer(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


# --- the application -------------------------------------------------------------------------


def run_call(item: Any) -> dict[str, Any] | None:
    """The output item for one call the application runs (None for items the API ran)."""
    if item.type == "function_call":
        try:
            args = json.loads(item.arguments)
        except json.JSONDecodeError as error:
            result = f"Error: the arguments are not valid JSON ({error.msg})"
        else:
            result = WEATHER.get(args.get("city"), "Error: unknown city")
        return {"type": "function_call_output", "call_id": item.call_id, "output": result}
    if item.type == "custom_tool_call":
        return {
            "type": "custom_tool_call_output",
            "call_id": item.call_id,
            "output": "3 rows: (1, 'ana'), (2, 'ben'), (3, 'cy')",
        }
    if item.type == "computer_call":
        return {
            "type": "computer_call_output",
            "call_id": item.call_id,
            "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBO"},
        }
    if item.type == "local_shell_call":
        # The API names the call by ``id`` here (LocalShellCallOutput has no call_id).
        return {"type": "local_shell_call_output", "id": item.call_id, "output": "README.md\nsrc\n"}
    return None


def agent_loop(
    case: str, items: list[Any], outputs: list[list[dict[str, Any]]], **options: Any
) -> list[Any]:
    """Run the loop until a response calls nothing the application runs; return the items."""
    endpoint = Endpoint(case, outputs)
    with serving(endpoint.handler()) as base_url:
        client = openai.OpenAI(
            api_key="sk-golden", base_url=f"{base_url}/v1", max_retries=0, timeout=10.0
        )
        while True:
            sent = copy.deepcopy(items)
            response = client.responses.create(model=MODEL, input=items, **options)
            assert endpoint.requests[-1]["input"] == sent, "the client sent something else"
            items.extend(  # by alias: the API's "async", which the SDK holds as async_
                item.model_dump(mode="json", exclude_unset=True, by_alias=True)
                for item in response.output
            )
            ran = [run_call(item) for item in response.output]
            if not any(ran):
                return items
            items.extend(out for out in ran if out is not None)


# --- the cases -------------------------------------------------------------------------------


def parallel_calls() -> list[Any]:
    return agent_loop(
        "parallel",
        [
            {"role": "developer", "content": "You are a weather assistant."},
            {"role": "user", "content": "What's the weather in Paris and Rome?"},
        ],
        [
            [
                reasoning("rs_p1", "Two cities: call get_weather twice.", encrypted="gAAAAB-p1"),
                function_call("fc_p1", "call_pw1", "get_weather", '{"city":"Paris"}'),
                function_call("fc_p2", "call_pw2", "get_weather", '{"city":"Rome"}'),
            ],
            [message("msg_p3", text("Paris: 18 C and sunny. Rome: 24 C and clear."))],
        ],
        tools=[WEATHER_TOOL],
        include=["reasoning.encrypted_content"],
        store=False,
    )


def refusal() -> list[Any]:
    return agent_loop(
        "refusal",
        [{"role": "user", "content": "How do I open my neighbour's lock without a key?"}],
        [
            [
                message(
                    "msg_r1",
                    {"type": "refusal", "refusal": "I'm sorry, but I can't help with that."},
                )
            ]
        ],
    )


def web_search_citations() -> list[Any]:
    words = "Oslo opened a new public library this week, according to City News."
    start = words.index("City News")
    cited = {
        "type": "url_citation",
        "start_index": start,
        "end_index": start + len("City News"),
        "title": "Oslo's new library opens",
        "url": "https://news.example.com/oslo-library",
    }
    return agent_loop(
        "search",
        [{"role": "user", "content": "Any good news from Oslo this week?"}],
        [
            [
                {
                    "id": "ws_s1",
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "search", "query": "Oslo good news this week"},
                },
                message("msg_s2", text(words, [cited])),
            ]
        ],
        tools=[{"type": "web_search"}],
    )


def hosted_tools() -> list[Any]:
    return agent_loop(
        "hosted",
        [{"role": "user", "content": "Check the handbook, chart the sales and draw a logo."}],
        [
            [
                {
                    "id": "fs_h1",
                    "type": "file_search_call",
                    "status": "completed",
                    "queries": ["vacation policy"],
                    "results": [
                        {
                            "file_id": "file-hb1",
                            "filename": "handbook.pdf",
                            "score": 0.91,
                            "text": "Employees get 25 days of paid vacation.",
                            "attributes": {},
                        }
                    ],
                },
                {
                    "id": "ci_h2",
                    "type": "code_interpreter_call",
                    "status": "completed",
                    "code": "print(sum([3, 4, 5]))",
                    "container_id": "cntr_1",
                    "outputs": [{"type": "logs", "logs": "12\n"}],
                },
                {
                    "id": "ig_h3",
                    "type": "image_generation_call",
                    "status": "completed",
                    "result": "iVBORw0KGgo=",
                    "revised_prompt": "A minimal blue logo",
                    "output_format": "png",
                },
                {
                    "id": "mcpl_h4",
                    "type": "mcp_list_tools",
                    "server_label": "deepwiki",
                    "tools": [{"name": "ask_question", "input_schema": {"type": "object"}}],
                },
                {
                    "id": "mcp_h5",
                    "type": "mcp_call",
                    "server_label": "deepwiki",
                    "name": "ask_question",
                    "arguments": '{"question":"What is tracebridge?"}',
                    "output": "A converter of agent traces.",
                    "error": None,
                    "status": "completed",
                },
                message("msg_h6", text("25 vacation days; sales total 12; logo drawn.")),
            ]
        ],
        tools=[
            {"type": "file_search", "vector_store_ids": ["vs_1"]},
            {"type": "code_interpreter", "container": {"type": "auto"}},
            {"type": "image_generation"},
            {
                "type": "mcp",
                "server_label": "deepwiki",
                "server_url": "https://mcp.example.com/mcp",
                "require_approval": "never",
            },
        ],
    )


def computer_and_shell() -> list[Any]:
    return agent_loop(
        "computer",
        [{"role": "user", "content": "Take a screenshot, then list the files."}],
        [
            [
                {
                    "id": "cu_c1",
                    "type": "computer_call",
                    "call_id": "call_cu1",
                    "action": {"type": "screenshot"},
                    "pending_safety_checks": [],
                    "status": "completed",
                },
            ],
            [
                {
                    "id": "ls_c2",
                    "type": "local_shell_call",
                    "call_id": "call_ls1",
                    "action": {"type": "exec", "command": ["ls"], "env": {}},
                    "status": "completed",
                }
            ],
            [message("msg_c3", text("The screen shows a desktop; the folder has README.md, src."))],
        ],
        tools=[
            {
                "type": "computer_use_preview",
                "display_width": 1024,
                "display_height": 768,
                "environment": "browser",
            },
            {"type": "local_shell"},
        ],
    )


def custom_tool() -> list[Any]:
    return agent_loop(
        "custom",
        [{"role": "user", "content": "How many users are there?"}],
        [
            [
                {
                    "id": "ctc_u1",
                    "type": "custom_tool_call",
                    "call_id": "call_sql1",
                    "name": "run_sql",
                    "input": "SELECT id, name FROM users",
                    "status": "completed",
                }
            ],
            [message("msg_u2", text("There are 3 users: ana, ben and cy."))],
        ],
        tools=[SQL_TOOL],
    )


def malformed_arguments() -> list[Any]:
    return agent_loop(
        "malformed",
        [{"role": "user", "content": "Weather in Oslo?"}],
        [
            [function_call("fc_m1", "call_ma1", "get_weather", '{"city": "Oslo"')],
            [function_call("fc_m2", "call_ma2", "get_weather", '{"city":"Oslo"}')],
            [message("msg_m3", text("It is 3 C with light snow in Oslo."))],
        ],
        tools=[WEATHER_TOOL],
    )


def attachments() -> list[Any]:
    return agent_loop(
        "attachments",
        [
            {"role": "system", "content": "Answer briefly."},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in this photo and this report?"},
                    {
                        "type": "input_image",
                        "image_url": "https://example.com/bicycle.jpg",
                        "detail": "high",
                    },
                    {
                        "type": "input_image",
                        "image_url": "data:image/png;base64,iVBORw0KGgo=",
                        "detail": "low",
                    },
                    {
                        "type": "input_file",
                        "filename": "report.pdf",
                        "file_data": "data:application/pdf;base64,JVBERi0x",
                    },
                    {"type": "input_file", "file_id": "file-abc123"},
                ],
            },
        ],
        [[message("msg_a1", text("A red bicycle; the report is about Q3 sales."))]],
    )


def multi_turn() -> list[Any]:
    items: list[Any] = [{"role": "user", "content": "Hi! I'm planning a trip."}]
    agent_loop("turn-1", items, [[message("msg_t1", text("Lovely! Where to?"))]])
    items.append({"role": "user", "content": "Rome, in May."})
    return agent_loop(
        "turn-2",
        items,
        [
            [
                reasoning("rs_t2"),
                message("msg_t2", text("May is a great time for Rome: warm, not yet hot.")),
            ]
        ],
    )


VALID: dict[str, tuple[str, Callable[[], list[Any]]]] = {
    "parallel_calls": (
        "A developer prompt; a reasoning item (summary and encrypted content) then two "
        "function calls, answered in order; the final answer.",
        parallel_calls,
    ),
    "refusal": ("The model refuses: a message whose only part is a refusal.", refusal),
    "web_search_citations": (
        "A hosted web search, then a message citing a URL (url_citation annotation).",
        web_search_citations,
    ),
    "hosted_tools": (
        "file_search, code_interpreter, image_generation, mcp_list_tools and mcp_call items in "
        "one reply, then its message.",
        hosted_tools,
    ),
    "computer_and_shell": (
        "A computer call answered by a screenshot, then a local shell call answered by its "
        "output.",
        computer_and_shell,
    ),
    "custom_tool": ("A custom tool call with free-text input and its output.", custom_tool),
    "malformed_arguments": (
        "The model writes truncated JSON arguments, gets an error output and retries.",
        malformed_arguments,
    ),
    "attachments": (
        "A system prompt; a user message item with text, two images (detail high and low), "
        "a file as data and a file by id.",
        attachments,
    ),
    "multi_turn": (
        "Two user turns as plain role/content items; the second reply has a reasoning item "
        "with no summary.",
        multi_turn,
    ),
}


def invalid_cases() -> dict[str, tuple[str, list[Any], str, int | None]]:
    parallel = parallel_calls()  # [dev, user, reasoning, fc1, fc2, out1, out2, message]
    retried = malformed_arguments()  # [user, fc1, out1, fc2, out2, message]

    def edited(items: list[Any], edit: Callable[[list[Any]], None]) -> list[Any]:
        broken = copy.deepcopy(items)
        edit(broken)
        return broken

    def reuse_call_id(items: list[Any]) -> None:
        items[3]["call_id"] = "call_ma1"
        items[4]["call_id"] = "call_ma1"

    return {
        "unknown_item_type": (
            "An item of a type the adapter does not know ('tool_result').",
            edited(parallel, lambda i: i.insert(5, {"type": "tool_result", "content": "18 C"})),
            "unknown_role",
            5,
        ),
        "orphan_output": (
            "A function_call_output right after the user message, answering nothing.",
            edited(parallel, lambda i: i.insert(2, copy.deepcopy(i[5]))),
            "orphan_tool_result",
            2,
        ),
        "removed_output": (
            "The output of call_pw2 removed: its call is unanswered.",
            edited(parallel, lambda i: i.pop(6)),
            "unanswered_tool_call",
            4,
        ),
        "output_twice": (
            "The output of call_pw1 stored twice.",
            edited(parallel, lambda i: i.insert(6, copy.deepcopy(i[5]))),
            "orphan_tool_result",
            6,
        ),
        "duplicate_call_ids": (
            "The retry reuses the first call's call_id.",
            edited(retried, reuse_call_id),
            "duplicate_tool_call_id",
            3,
        ),
        "non_dict_element": (
            "A bare string where an item belongs.",
            edited(parallel, lambda i: i.insert(2, "And in Oslo?")),
            "malformed_event",
            2,
        ),
        "arguments_as_object": (
            "Arguments stored as an object instead of a JSON string.",
            edited(parallel, lambda i: i[3].update(arguments={"city": "Paris"})),
            "malformed_event",
            3,
        ),
        "streaming_event": (
            "A streaming event stored where the finished item belongs.",
            edited(
                parallel,
                lambda i: i.insert(
                    7,
                    {
                        "type": "response.output_text.delta",
                        "item_id": "msg_p3",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": "Paris",
                        "sequence_number": 4,
                    },
                ),
            ),
            "streaming_chunk",
            7,
        ),
    }


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "invalid").mkdir(parents=True)
    for name, (description, build) in VALID.items():
        trace = build()
        expected = [m.model_dump(mode="json") for m in openai_responses.to_messages(trace)]
        write(
            OUT / f"{name}.json", {"description": description, "trace": trace, "expected": expected}
        )
    cases = invalid_cases()
    for name, (description, trace, code, index) in cases.items():
        write(
            OUT / "invalid" / f"{name}.json",
            {"description": description, "trace": trace, "error": {"code": code, "index": index}},
        )
    print(f"wrote {len(VALID)} valid and {len(cases)} invalid traces to {OUT}")


if __name__ == "__main__":
    main()
