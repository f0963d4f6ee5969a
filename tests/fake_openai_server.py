"""A scripted Chat Completions server on 127.0.0.1 for judge tests.

Each ``POST /v1/chat/completions`` takes the next scripted reply and logs the request body.
A reply is ``Reply(content=...)`` (a completion whose message content is that text),
``Reply(status=500)`` (an error body), ``Reply(sleep=...)`` (answer late, to trigger a
client timeout), or ``Reply(body=...)`` (any text, as a server that is not quite
compatible might send). When the script runs out the server answers 500, so no loop can run on.
Every wait is bounded and released when the server stops.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_server import serving


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    content: str | None = None
    status: int = 200
    sleep: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 20
    usage: bool = True
    finish_reason: str = "stop"
    body: str | None = None
    """Sent verbatim as the response body instead of a completion (a broken server)."""


@dataclass
class FakeOpenAI:
    """The running server: its ``base_url``, the script, and the logged requests."""

    base_url: str = ""
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *replies: Reply | str) -> None:
        """Queue replies; a plain string is a 200 reply with that content."""
        with self.lock:
            for reply in replies:
                self.script.append(Reply(content=reply) if isinstance(reply, str) else reply)

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self.lock:
            self.requests.append(body)
            return self.script.pop(0) if self.script else None


def _completion(body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
    completion: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model", "unknown"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": None},
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
        ],
    }
    if reply.usage:
        completion["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
    return completion


def _handler(state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like real servers

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = state.next_reply(body)
            if reply is None:
                self._send(500, {"error": {"message": "no scripted reply left"}})
                return
            if reply.sleep:
                state.stopping.wait(reply.sleep)
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": "scripted failure"}})
                return
            if reply.body is not None:
                self._send(200, reply.body)
                return
            self._send(200, _completion(body, reply, len(state.requests)))

        def _send(self, status: int, payload: dict[str, Any] | str) -> None:
            text = payload if isinstance(payload, str) else json.dumps(payload)
            data = text.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing to answer

    return Handler


def serve(state: FakeOpenAI | None = None) -> Iterator[FakeOpenAI]:
    """Run the server in a thread until the generator is closed (pytest fixture body);
    ``state`` may be a ``FakeOpenAI`` of another kind (one that answers from the request)."""
    state = FakeOpenAI() if state is None else state
    with serving(_handler(state)) as base_url:
        state.base_url = f"{base_url}/v1"
        try:
            yield state
        finally:
            state.stopping.set()  # a handler waiting on purpose (timeout tests) lets go
