"""SPEC S10 admission: per-tenant rate limit and backlog bound answer 429 with Retry-After; JSON logs."""
from __future__ import annotations

import json
import logging
import time
import uuid

from fastapi.testclient import TestClient

from athena_api.app import create_app
from athena_core.observability import request_context
from athena_core.observability.json_logs import JsonFormatter


def _session(api: TestClient) -> str:
    body = {"tenant_id": f"t-{uuid.uuid4().hex[:8]}", "user_id": "u"}
    return api.post("/api/v1/sessions", json=body).json()["session_id"]


def test_rate_limit_is_per_tenant(make_settings) -> None:
    with TestClient(create_app(make_settings(rate_limit_per_s=5))) as api:
        busy, calm = _session(api), _session(api)
        statuses, refusal = [], None
        for i in range(12):
            response = api.post(f"/api/v1/sessions/{busy}/interactions", json={"user_message": f"m{i}"})
            statuses.append(response.status_code)
            if response.status_code == 429 and refusal is None:
                refusal = response
        assert statuses.count(201) <= 10 and 429 in statuses  # at most two one-second windows
        assert refusal.headers["retry-after"] == "1" and refusal.json()["error"]["code"] == "too_many_requests"
        assert api.post(f"/api/v1/sessions/{calm}/interactions", json={"user_message": "hi"}).status_code == 201


def test_backlog_bound_refuses_writes_until_the_tenant_drains(make_settings) -> None:
    with TestClient(create_app(make_settings(backlog_max_pending=3))) as api:
        full, other = _session(api), _session(api)
        for i in range(4):  # no worker runs here, so every event stays pending
            api.post(f"/api/v1/sessions/{full}/events", json={"type": "observation", "content": f"e{i}"})
        time.sleep(1.1)  # the per-process backlog count is cached for one second
        response = api.post(f"/api/v1/sessions/{full}/events", json={"type": "observation", "content": "more"})
        assert response.status_code == 429 and response.headers["retry-after"] == "5"
        assert api.get(f"/api/v1/sessions/{full}/context").status_code == 200  # reads still served
        assert api.post(f"/api/v1/sessions/{other}/events",
                        json={"type": "observation", "content": "fine"}).status_code == 201


def test_json_log_lines_carry_request_tenant_and_extras() -> None:
    request_context.request_id.set("req-1")
    request_context.tenant_id.set("tenant-x")
    try:
        record = logging.makeLogRecord({"name": "athena.test", "levelname": "WARNING", "msg": "hello %s",
                                        "args": ("world",), "scope": "t:u:a"})
        entry = json.loads(JsonFormatter().format(record))
    finally:
        request_context.request_id.set("")
        request_context.tenant_id.set("")
    assert entry["message"] == "hello world" and entry["request_id"] == "req-1"
    assert entry["tenant"] == "tenant-x" and entry["scope"] == "t:u:a" and entry["level"] == "WARNING"


def test_every_response_carries_a_request_id(api: TestClient) -> None:
    assert api.get("/health").headers["x-request-id"]
    assert api.get("/health", headers={"X-Request-ID": "abc"}).headers["x-request-id"] == "abc"
