"""A fake Chat Completions server that answers each POST with the next scripted reply, for
the judge's tests: its status, body, headers and content-type are the test's to choose."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_server import serving


@dataclass(frozen=True)
class Scripted:
    """One reply; a ``content_type`` of None sends no such header."""

    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "application/json"


ERROR_500 = Scripted(500, '{"error": {"message": "boom"}}')
"""What the server answers once its script is used up."""


@dataclass
class Server:
    """Answers each POST with the next scripted reply (``ERROR_500`` when none is left)."""

    base_url: str = ""
    script: list[Scripted] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self) -> Scripted:
        with self.lock:
            self.requests += 1
            return self.script.pop(0) if self.script else ERROR_500


def handler(state: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            reply = state.next()
            data = reply.body.encode()
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextlib.contextmanager
def scripted_server() -> Iterator[Server]:
    """A ``Server`` on 127.0.0.1 for the block, its ``base_url`` the client's."""
    state = Server()
    with serving(handler(state)) as url:
        state.base_url = f"{url}/v1"
        yield state
