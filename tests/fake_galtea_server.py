"""A small stateful Galtea API on 127.0.0.1, for running the real Galtea SDK offline.

It answers the routes the SDK calls for ``traces.create_batch``, ``traces.create`` /
``update`` / ``list`` / ``get``, ``traces.generate``, ``simulator.simulate`` and
``test_cases.create`` (plus the version check and span export the client makes on its own),
keeps what it is told (sessions, test cases, traces, in camelCase as the API speaks) and logs
every request body. Traces are stored the way the API stores them: a string input is wrapped as
``{"user_message": ...}``, and ``retrievalContext`` is accepted on writes but not returned on
reads. Simulated user messages come from a per-session script; when it runs out the simulator
says the conversation is finished, so no loop can run on. After ``MAX_REQUESTS`` requests every
answer is a 500, and the server stops when its ``serve`` generator is closed.

    with galtea_api() as api:
        client = galtea.Galtea(api_key="test", base_url=api.base_url)
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from local_server import serving

MAX_REQUESTS = 500
CREATED_AT = "2026-01-01T00:00:00.000Z"
# Keys of a trace write (camelCase, as the SDK sends them) the stored record does not return.
_WRITE_ONLY = {"retrievalContext"}


@dataclass(frozen=True)
class Request:
    """One request as the fake API received it."""

    method: str
    path: str
    """The route without the query string (``inferenceResults/batch``)."""
    query: dict[str, list[str]]
    body: Any


@dataclass
class FakeGaltea:
    """The running API: its ``base_url``, what it holds, and the requests it received."""

    base_url: str = ""
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    test_cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    traces: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per session id, the stored trace records in order."""
    user_script: dict[str, list[str]] = field(default_factory=dict)
    """Per session id, the simulated user's next messages."""
    fixed_latency: float | None = None
    """Store this instead of the latency a write sends (the SDK measures the agent's time), so
    that what the API returns is the same on every run."""
    requests: list[Request] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    _ids: int = 0

    # --- fixtures a test or generator sets up ------------------------------------------------

    def new_id(self, prefix: str) -> str:
        with self.lock:
            self._ids += 1
            return f"{prefix}_{self._ids}"

    def add_session(self, *, test_case: dict[str, Any] | None = None,
                    dataset_type: str = "QUALITY") -> str:
        """A session; with ``test_case`` (its camelCase fields), one bound to a new test case."""
        with self.lock:
            session_id = self.new_id("session")
            session: dict[str, Any] = {
                "id": session_id, "createdAt": CREATED_AT, "versionId": "version_1",
                "isProduction": test_case is None, "status": "PENDING",
            }
            if test_case is not None:
                dataset_id = self.new_id("dataset")
                self.datasets[dataset_id] = {
                    "id": dataset_id, "name": "golden", "type": dataset_type,
                    "createdAt": CREATED_AT,
                }
                case_id = self.new_id("test_case")
                self.test_cases[case_id] = {
                    "id": case_id, "testId": dataset_id, "createdAt": CREATED_AT, **test_case,
                }
                session["testCaseId"] = case_id
            self.sessions[session_id] = session
            self.traces[session_id] = []
            return session_id

    def add_trace(self, session_id: str, **fields: Any) -> dict[str, Any]:
        """Store a trace record as the API would return it (camelCase ``fields``)."""
        with self.lock:
            stored = self.traces[session_id]
            record: dict[str, Any] = {
                "id": self.new_id("trace"), "index": len(stored), "sessionId": session_id,
                "status": "GENERATED", "createdAt": CREATED_AT, **fields,
            }
            if isinstance(record.get("input"), str):
                record["input"] = {"user_message": record["input"]}
            stored.append(record)
            return record

    def bodies(self, method: str, path: str) -> list[Any]:
        """The bodies of the requests made to one route, in order."""
        with self.lock:
            return [r.body for r in self.requests if (r.method, r.path) == (method, path)]

    # --- routes ------------------------------------------------------------------------------

    def answer(self, method: str, path: str, query: dict[str, list[str]],
               body: Any) -> tuple[int, Any]:
        with self.lock:
            self.requests.append(Request(method, path, query, body))
            if len(self.requests) > MAX_REQUESTS:
                return 500, {"message": f"more than {MAX_REQUESTS} requests"}
            parts = path.split("/")
            route = (method, parts[0], len(parts))
            if route == ("GET", "minimum-sdk-version", 1):
                return 200, {}
            if route in {("POST", "traces", 1), ("POST", "traces", 2)}:
                return 200, []  # span export
            if route == ("POST", "inferenceResults", 2) and parts[1] == "batch":
                return 200, self._create_batch(body)
            if route == ("POST", "inferenceResults", 1):
                return 200, self._create_trace(body)
            if route == ("GET", "inferenceResults", 1):
                return 200, self._list_traces(query)
            if route in {("GET", "inferenceResults", 2), ("PATCH", "inferenceResults", 2)}:
                return self._one_trace(parts[1], body if method == "PATCH" else None)
            if route == ("GET", "sessions", 2):
                return self._found(self.sessions, parts[1])
            if route == ("PATCH", "sessions", 2):
                return self._update(self.sessions, parts[1], body)
            if route == ("PATCH", "sessions", 3) and parts[2] == "finish":
                return self._update(self.sessions, parts[1], {**body, "status": "COMPLETED"})
            if route == ("GET", "testCases", 2):
                return self._found(self.test_cases, parts[1])
            if route == ("POST", "testCases", 1):
                return 200, self._create_test_case(body)
            if route == ("GET", "tests", 2):
                return self._found(self.datasets, parts[1])
            if route == ("POST", "conversationSimulator", 2):
                return self._next_user_message(body)
            return 404, {"message": f"no route {method} {path}"}

    def _create_batch(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        # One trace per user turn and the assistant turn that answers it, like the API.
        session_id = body["sessionId"]
        created: list[dict[str, Any]] = []
        pending: dict[str, Any] | None = None
        for turn in body["conversationTurns"]:
            if turn["role"] == "user":
                if pending is not None:
                    created.append(self.add_trace(session_id, **pending))
                pending = {"input": turn["content"]}
            else:
                pending = pending or {}
                pending["actualOutput"] = turn["content"]
                created.append(self.add_trace(session_id, **pending))
                pending = None
        if pending is not None:
            created.append(self.add_trace(session_id, **pending))
        return created

    def _stored(self, body: dict[str, Any]) -> dict[str, Any]:
        fields = {key: value for key, value in body.items() if key not in _WRITE_ONLY}
        if fields.get("latency") is not None and self.fixed_latency is not None:
            fields["latency"] = self.fixed_latency
        return fields

    def _create_trace(self, body: dict[str, Any]) -> dict[str, Any]:
        fields = {key: value for key, value in self._stored(body).items() if key != "sessionId"}
        return self.add_trace(body["sessionId"], **fields)

    def _list_traces(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for session_id in query.get("sessionIds[]", []):
            found.extend(self.traces.get(session_id, []))
        ids = set(query.get("ids[]", []))
        if ids:
            found = [t for records in self.traces.values() for t in records if t["id"] in ids]
        return found

    def _one_trace(self, trace_id: str, update: dict[str, Any] | None) -> tuple[int, Any]:
        for records in self.traces.values():
            for record in records:
                if record["id"] == trace_id:
                    if update is not None:
                        record.update(self._stored(update))
                    return 200, record
        return 404, {"message": f"trace {trace_id} not found"}

    def _found(self, table: dict[str, dict[str, Any]], key: str) -> tuple[int, Any]:
        if key not in table:
            return 404, {"message": f"{key} not found"}
        return 200, table[key]

    def _update(self, table: dict[str, dict[str, Any]], key: str,
                body: dict[str, Any]) -> tuple[int, Any]:
        if key not in table:
            return 404, {"message": f"{key} not found"}
        table[key].update(body)
        return 200, table[key]

    def _create_test_case(self, body: dict[str, Any]) -> dict[str, Any]:
        case_id = self.new_id("test_case")
        stored = {key: value for key, value in body.items() if key != "conversationHistory"}
        if isinstance(stored.get("input"), str):
            stored["input"] = {"user_message": stored["input"]}
        record = {**stored, "id": case_id, "createdAt": CREATED_AT}
        self.test_cases[case_id] = record
        return record

    def _next_user_message(self, body: dict[str, Any]) -> tuple[int, Any]:
        session_id = body["sessionId"]
        script = self.user_script.get(session_id, [])
        if not script:
            return 200, {"nextMessage": "", "finished": True, "stoppingReason": "GOAL_ACHIEVED",
                         "inferenceResultId": ""}
        message = script.pop(0)
        trace = self.add_trace(session_id, input=message, status="PENDING")
        return 200, {"nextMessage": message, "finished": False, "simulatorVersion": "1",
                     "inferenceResultId": trace["id"]}


def _handler(state: FakeGaltea) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            url = urlsplit(self.path)
            status, payload = state.answer(
                self.command, url.path.strip("/"), parse_qs(url.query), body
            )
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = do_POST = do_PATCH = do_DELETE = _handle

    return Handler


def serve() -> Iterator[FakeGaltea]:
    """Run the API in a thread until the generator is closed (a pytest fixture body)."""
    state = FakeGaltea()
    with serving(_handler(state)) as base_url:
        state.base_url = base_url
        yield state


galtea_api = contextlib.contextmanager(serve)
"""``with galtea_api() as api: ...``: the same server, for scripts."""
