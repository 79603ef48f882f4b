"""The bad-input corpus against one real stack (issue 12 items 1, 2, 6, 10-12 as HTTP tests against a real server).

`athena_devtools.stack.Stack` runs the embedded default as processes (embedded Redis, uvicorn API, one Celery worker,
beat) with auth `api_key_or_jwt` and fast schedules. Every case of `tests/faults/bad_inputs.py` is sent over
loopback; then:

- no answer is a 5xx, and every answer has the status the case expects;
- every 4xx carries the JSON error shape and names the field at fault;
- every accepted write consolidates: all sessions reach `pending_events == 0` (bounded), every accepted event is
  consolidated or rejected in the event log, no dead letter was written, and GetContext and SearchMemory on each
  session answer 200.
"""
from __future__ import annotations

import json
import select
import socket
import sqlite3
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import httpx
import jwt

from athena_core.models.events import EventStatus
from athena_core.models.scope import UserScope
from athena_core.wiring.settings import Settings
from athena_devtools.engine_servers import free_port
from athena_devtools.stack import Stack
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from tests.faults.bad_inputs import (
    ADMIN_KEY, API_KEY, AUTH_ENV, CASES, JWT_SECRET, OTHER_KEY, TENANT, USER, Case, request_body,
)

FAST = {
    "ATHENA_IDLE_FLUSH_EVERY_S": "1",
    "ATHENA_SEGMENT_IDLE_S": "2",
    "ATHENA_PENDING_SWEEP_EVERY_S": "2",
    "ATHENA_PENDING_SWEEP_AGE_S": "1",
}
CONSOLIDATION_TIMEOUT_S = 120


def auth_headers(case: Case) -> dict[str, str]:
    if case.auth == "key":
        return {"X-API-Key": API_KEY}
    if case.auth == "admin":
        return {"X-API-Key": ADMIN_KEY}
    if case.auth == "other":
        return {"X-API-Key": OTHER_KEY}
    if case.auth == "jwt":
        claims = dict(case.claims or {})
        if "exp" not in claims:
            claims["exp"] = int(time.time()) + 3600
        elif claims["exp"] is None:
            del claims["exp"]
        return {"Authorization": "Bearer " + jwt.encode(claims, JWT_SECRET, algorithm="HS256")}
    return {}


def send_chunked(base_url: str, path: str, headers: dict[str, str], body: bytes, chunk: int) -> tuple[int, bytes]:
    """POST with Transfer-Encoding: chunked over a raw socket, stopping as soon as the server answers (a server
    that refuses a body mid-stream answers 413 and closes; an HTTP client that writes everything first would only
    see the broken pipe)."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Transfer-Encoding: chunked", "Connection: close"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        try:
            for start in range(0, len(body), chunk):
                if select.select([sock], [], [], 0)[0]:
                    break  # the server has answered already
                part = body[start:start + chunk]
                sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            else:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        try:
            while True:
                piece = sock.recv(65536)
                if not piece:
                    break
                data += piece
                head_end = data.find(b"\r\n\r\n")
                if head_end >= 0:
                    length = [line.split(b":", 1)[1].strip() for line in data[:head_end].split(b"\r\n")
                              if line.lower().startswith(b"content-length:")]
                    if length and len(data) >= head_end + 4 + int(length[0]):
                        break
        except ConnectionResetError:
            pass
    status_line, _, rest = data.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 "), f"no HTTP answer: {data[:200]!r}"
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def send(client: httpx.Client, base_url: str, case: Case, ids: dict[str, str]) -> tuple[int, bytes]:
    path = case.path.format(**ids)
    headers = {**auth_headers(case), **case.headers}
    body = request_body(case)
    if body is not None and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    if case.chunked:
        full = path + ("?" + urlencode(case.params) if case.params else "")
        return send_chunked(base_url, full, headers, body or b"", case.chunked)
    response = client.request(case.method, path, params=case.params, headers=headers, content=body)
    return response.status_code, response.content


def check_answer(case: Case, status: int, raw: bytes) -> list[str]:
    problems = []
    if status >= 500:
        problems.append(f"{case.name}: {status} (a server error) {raw[:300]!r}")
    elif status not in case.statuses:
        problems.append(f"{case.name}: expected {sorted(case.statuses)}, got {status} {raw[:300]!r}")
    if 400 <= status < 500 and case.json_error:
        try:
            error = json.loads(raw)["error"]
            assert isinstance(error["code"], str) and isinstance(error["message"], str)
            names = [f["field"] for f in error["fields"]]
        except (ValueError, KeyError, TypeError, AssertionError):
            return [*problems, f"{case.name}: {status} without the JSON error shape: {raw[:300]!r}"]
        if case.field is not None and not any(name.startswith(case.field) for name in names):
            problems.append(f"{case.name}: the error names {names}, not {case.field!r}")
    return problems


def test_the_bad_input_corpus_against_a_real_stack(tmp_path: Path) -> None:
    assert len(CASES) >= 80
    settings = Settings(data_dir=tmp_path / "data", redis_url=None, api_port=free_port())
    stack = Stack(settings, worker_concurrency=1, extra_env={**FAST, **AUTH_ENV})
    key = {"X-API-Key": API_KEY}
    problems: list[str] = []
    try:
        stack.start()
        with httpx.Client(base_url=stack.base_url, timeout=60) as client:
            def create(user: str, headers: dict[str, str]) -> str:
                response = client.post("/api/v1/sessions", json={"user_id": user, "agent_id": "a-corpus"},
                                       headers=headers)
                assert response.status_code == 201, response.text
                return response.json()["session_id"]

            ids = {"sid": create(USER, key), "peer": create("u-peer", key),
                   "foreign": create("u-foreign", {"X-API-Key": OTHER_KEY})}
            sessions = {ids["sid"], ids["peer"]}  # the tenant's sessions whose memory must stay usable
            accepted_events: list[str] = []
            statuses: Counter[int] = Counter()
            for case in CASES:
                status, raw = send(client, stack.base_url, case, ids)
                statuses[status] += 1
                problems += check_answer(case, status, raw)
                if status in (200, 201) and case.method == "POST" and case.path == "/api/v1/sessions":
                    sessions.add(json.loads(raw)["session_id"])
                if status == 201 and case.path.endswith(("/events", "/interactions")):
                    answer = json.loads(raw)
                    accepted_events += answer.get("event_ids") or [answer["event_id"]]
            stack.assert_running()
            assert not problems, "\n".join(problems)
            assert len(accepted_events) >= 20

            # Every accepted write consolidates (or is rejected by the quality gate): nothing stays pending.
            waited_from = time.monotonic()
            deadline = waited_from + CONSOLIDATION_TIMEOUT_S
            pending = {s: -1 for s in sessions}
            while any(pending.values()):
                assert time.monotonic() < deadline, f"still pending after {CONSOLIDATION_TIMEOUT_S} s: {pending}"
                stack.assert_running()
                for session_id in [s for s, n in pending.items() if n]:
                    answer = client.get(f"/api/v1/sessions/{session_id}", headers=key)
                    assert answer.status_code == 200, answer.text
                    pending[session_id] = answer.json()["pending_events"]
                time.sleep(0.5)
            drained_after = time.monotonic() - waited_from

            documents = SqliteDocuments(settings.sqlite_path)
            events = documents.get_events(UserScope(tenant_id=TENANT, user_id=USER), accepted_events)
            assert sorted(e.event_id for e in events) == sorted(accepted_events)
            assert all(e.status in (EventStatus.consolidated, EventStatus.rejected) for e in events)
            with sqlite3.connect(settings.sqlite_path) as conn:
                dead = conn.execute("SELECT task_name, error FROM dead_letters").fetchall()
            assert not dead, dead

            # The scope stays readable: the window, the chains, hybrid search, the graph.
            for session_id in sorted(sessions):
                for method, path, body in [
                    ("GET", "/context", None), ("GET", "/context?query=deploy%20rocket", None),
                    ("POST", "/context/search", {"query": "deploy rocket"}),
                    ("POST", "/context/search", {"query": "שלום", "max_tokens": 200}),
                    ("GET", "/segments", None), ("GET", "/analysis/heat", None),
                ]:
                    answer = client.request(method, f"/api/v1/sessions/{session_id}{path}", json=body, headers=key)
                    assert answer.status_code == 200, (session_id, path, answer.status_code, answer.text[:300])
            print(json.dumps({  # the campaign's figures, for the note
                "cases": len(CASES), "statuses": dict(sorted(statuses.items())), "server_errors": 0,
                "accepted_events": len(accepted_events), "sessions": len(sessions),
                "consolidated": sum(e.status == EventStatus.consolidated for e in events),
                "rejected": sum(e.status == EventStatus.rejected for e in events),
                "seconds_to_drain": round(drained_after, 1), "dead_letters": 0,
            }))
            contents = {e.content for e in events}  # the odd but valid texts were stored as sent
            assert {"before\u0000after", "smile \U0001F600", "line one\r\nline two\r\n\r\nline four"} <= contents
    finally:
        stack.stop()
