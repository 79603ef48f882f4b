"""Every route of the foundation over the ASGI transport, against a real Redis and SQLite (SPEC S2, S3)."""
from __future__ import annotations

import base64

import pytest
from fastapi.testclient import TestClient

from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime
from athena_core.stm.stm_window import stm_key


def _scope(api: TestClient, session_id: str) -> AgentScope:
    s = api.get(f"/api/v1/sessions/{session_id}").json()
    return AgentScope(tenant_id=s["tenant_id"], user_id=s["user_id"], agent_id=s["agent_id"])


def test_create_get_delete_session(api: TestClient, tenant: str) -> None:
    created = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "metadata": {"k": "v"}})
    assert created.status_code == 201
    session_id = created.json()["session_id"]
    got = api.get(f"/api/v1/sessions/{session_id}").json()
    assert got["tenant_id"] == tenant and got["agent_id"] == "default" and got["metadata"] == {"k": "v"}
    assert got["pending_events"] == 0
    assert api.delete(f"/api/v1/sessions/{session_id}").json() == {
        "session_id": session_id, "deleted": True, "purge": None}
    assert api.get(f"/api/v1/sessions/{session_id}").status_code == 404


def test_unknown_session_is_404_naming_the_field(api: TestClient) -> None:
    for method, path in [
        ("GET", "/api/v1/sessions/nope"),
        ("DELETE", "/api/v1/sessions/nope"),
        ("GET", "/api/v1/sessions/nope/context"),
    ]:
        response = api.request(method, path)
        assert response.status_code == 404
        assert response.json()["error"]["fields"][0]["field"] == "session_id"
    response = api.post("/api/v1/sessions/nope/events", json={"type": "message", "content": "x"})
    assert response.status_code == 404


def test_store_event_honours_timestamp_and_metadata(api: TestClient, runtime: Runtime, session_id: str) -> None:
    body = {
        "role": "agent", "type": "thought", "content": "plan the migration",
        "metadata": {"workflow_id": "wf-1", "custom": "x"}, "timestamp": "2024-03-01T10:00:00Z",
    }
    response = api.post(f"/api/v1/sessions/{session_id}/events", json=body)
    assert response.status_code == 201
    event_id = response.json()["event_id"]
    scope = _scope(api, session_id)
    [event] = runtime.documents.get_events(scope.user_scope, [event_id])
    assert event.metadata == {"workflow_id": "wf-1", "custom": "x"}
    assert event.timestamp.isoformat() == "2024-03-01T10:00:00+00:00"
    assert event.status == EventStatus.pending
    slot = api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"][-1]
    assert slot["timestamp"].startswith("2024-03-01T10:00:00") and slot["metadata"]["custom"] == "x"


def test_store_interaction_writes_user_then_agent(api: TestClient, runtime: Runtime, session_id: str) -> None:
    response = api.post(
        f"/api/v1/sessions/{session_id}/interactions",
        json={"user_message": "hi there", "agent_response": "hello!", "metadata": {"m": "1"},
              "timestamp": "2023-05-07T13:00:00+02:00"},
    )
    assert response.status_code == 201
    ids = response.json()["event_ids"]
    events = runtime.documents.get_events(_scope(api, session_id).user_scope, ids)
    assert [(e.role.value, e.content) for e in events] == [("user", "hi there"), ("agent", "hello!")]
    assert all(e.timestamp.isoformat() == "2023-05-07T11:00:00+00:00" and e.metadata == {"m": "1"} for e in events)
    window = api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"]
    assert [e["content"] for e in window] == ["hi there", "hello!"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"role": "robot", "type": "message", "content": "x"}, "role"),
        ({"role": "user", "type": "shout", "content": "x"}, "type"),
        ({"role": "user", "type": "message", "content": "   "}, "content"),
        ({"role": "user", "type": "message"}, "content"),
        ({"type": "message", "content": 12}, "content"),
        ({"type": "message", "content": "x", "metadata": {"k": 1}}, "metadata.k"),
        ({"type": "message", "content": "x", "metadata": ["a"]}, "metadata"),
        ({"type": "message", "content": "x", "timestamp": "yesterday"}, "timestamp"),
        ({"type": "message", "content": "x", "payload": "%%%not-base64"}, "payload"),
        ({"type": "message", "content": "x", "colour": "red"}, "colour"),
    ],
)
def test_store_event_validation_names_the_field(api: TestClient, session_id: str, body: dict, field: str) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/events", json=body)
    assert response.status_code == 422, response.text
    assert field in [f["field"] for f in response.json()["error"]["fields"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user_message": ""}, "user_message"),
        ({"user_message": " \n "}, "user_message"),
        ({"agent_response": "hi"}, "user_message"),
        ({"user_message": "hi", "metadata": {"k": None}}, "metadata.k"),
        ({"user_message": "hi", "timestamp": 1e30}, "timestamp"),
    ],
)
def test_store_interaction_validation_names_the_field(
    api: TestClient, session_id: str, body: dict, field: str
) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/interactions", json=body)
    assert response.status_code == 422, response.text
    assert field in [f["field"] for f in response.json()["error"]["fields"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tenant_id": "a:b", "user_id": "u"}, "tenant_id"),
        ({"tenant_id": "t", "user_id": ""}, "user_id"),
        ({"tenant_id": "t", "user_id": "u", "agent_id": "x" * 200}, "agent_id"),
        ({"user_id": "u"}, "tenant_id"),
        ({"tenant_id": "t", "user_id": "u", "metadata": {"a": 1}}, "metadata.a"),
    ],
)
def test_create_session_validation_names_the_field(api: TestClient, body: dict, field: str) -> None:
    response = api.post("/api/v1/sessions", json=body)
    assert response.status_code == 422, response.text
    assert field in [f["field"] for f in response.json()["error"]["fields"]]


def test_context_query_validation(api: TestClient, session_id: str) -> None:
    response = api.get(f"/api/v1/sessions/{session_id}/context", params={"limit": 0})
    assert response.status_code == 422 and response.json()["error"]["fields"][0]["field"] == "limit"


def test_oversized_content_is_413_naming_the_field(api: TestClient, runtime: Runtime, session_id: str) -> None:
    limit = runtime.settings.max_content_bytes
    ok = api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "observation", "content": "x" * limit})
    assert ok.status_code == 201
    big = api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "observation", "content": "é" * limit})
    assert big.status_code == 413 and big.json()["error"]["fields"][0]["field"] == "content"
    big = api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "x" * (limit + 1)})
    assert big.status_code == 413 and big.json()["error"]["fields"][0]["field"] == "user_message"


def test_payload_is_stored_as_a_blob(api: TestClient, runtime: Runtime, session_id: str) -> None:
    data = b"\x89PNG fake image bytes"
    response = api.post(
        f"/api/v1/sessions/{session_id}/events",
        json={"type": "observation", "content": "screenshot", "payload": base64.b64encode(data).decode(),
              "mime_type": "image/png"},
    )
    assert response.status_code == 201
    slot = api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"][-1]
    assert slot["mime_type"] == "image/png" and slot["blob_uri"].startswith("local://")
    scope = _scope(api, session_id)
    assert runtime.blobs.get(scope.user_scope, slot["blob_uri"]) == data


def test_oversized_payload_is_413(make_settings, tenant: str) -> None:
    from athena_api.app import create_app

    settings = make_settings(max_payload_bytes=16)
    with TestClient(create_app(settings)) as api:
        sid = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u"}).json()["session_id"]
        payload = base64.b64encode(b"x" * 17).decode()
        response = api.post(f"/api/v1/sessions/{sid}/events", json={"type": "observation", "content": "c", "payload": payload})
        assert response.status_code == 413 and response.json()["error"]["fields"][0]["field"] == "payload"
        huge = api.post(f"/api/v1/sessions/{sid}/events", content=b"x" * 300_000,
                        headers={"content-type": "application/json"})
        assert huge.status_code == 413 and huge.json()["error"]["fields"][0]["field"] == "body"


def test_payload_without_a_blob_store_is_rejected(make_settings, tenant: str) -> None:
    from athena_api.app import create_app

    with TestClient(create_app(make_settings(blob_store="none"))) as api:
        sid = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u"}).json()["session_id"]
        response = api.post(f"/api/v1/sessions/{sid}/events",
                            json={"type": "observation", "content": "c", "payload": "aGk="})
        assert response.status_code == 422 and response.json()["error"]["fields"][0]["field"] == "payload"


def test_forty_observations_of_one_step_take_one_slot(api: TestClient, runtime: Runtime, session_id: str) -> None:
    api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "run the CI please"})
    for i in range(40):
        response = api.post(
            f"/api/v1/sessions/{session_id}/events",
            json={"role": "system", "type": "observation", "content": f"log line {i}",
                  "metadata": {"execution_id": "ci-7", "step_id": "build", "line": str(i)}},
        )
        assert response.status_code == 201
    window = api.get(f"/api/v1/sessions/{session_id}/context").json()
    assert window["stm_source"] == "redis"
    assert len(window["stm_events"]) == 2
    head = window["stm_events"][-1]
    assert head["coalesced_count"] == 40 and head["content"] == "log line 39" and head["metadata"]["line"] == "39"
    scope = _scope(api, session_id)
    assert runtime.documents.count_events(scope) == 41  # the log keeps every raw event

    # A different step of the same execution takes a new slot.
    api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "observation", "content": "deploy",
             "metadata": {"execution_id": "ci-7", "step_id": "deploy"}})
    assert len(api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"]) == 3


def test_window_keeps_the_newest_ten(api: TestClient, session_id: str) -> None:
    for i in range(15):
        api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": f"message {i}"})
    events = api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"]
    assert [e["content"] for e in events] == [f"message {i}" for i in range(5, 15)]
    assert len(api.get(f"/api/v1/sessions/{session_id}/context", params={"limit": 3}).json()["stm_events"]) == 3


def test_window_is_rebuilt_from_the_log_after_the_key_is_deleted(
    api: TestClient, runtime: Runtime, session_id: str
) -> None:
    for i in range(12):
        api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": f"message {i}"})
    for i in range(5):
        api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "observation", "content": f"out {i}",
                 "metadata": {"execution_id": "x1"}})
    before = api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"]
    scope = _scope(api, session_id)
    assert runtime.redis.delete(stm_key(scope)) == 1
    rebuilt = api.get(f"/api/v1/sessions/{session_id}/context").json()
    assert rebuilt["stm_source"] == "rebuilt"
    assert rebuilt["stm_events"] == before
    assert runtime.redis.ttl(stm_key(scope)) > 0
    assert api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_source"] == "redis"


def test_health_routes_and_metrics(api: TestClient, session_id: str) -> None:
    assert api.get("/health").json() == {"status": "ok"}
    report = api.get("/api/v1/health").json()
    assert report["status"] == "ok" and report["stores"]["redis"]["ok"] and report["stores"]["documents"]["ok"]
    api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "count me"})
    text = api.get("/metrics").text
    assert 'athena_events_ingested_total{role="user",type="message"}' in text
    assert 'route="/api/v1/sessions/{session_id}/interactions"' in text
    spec = api.get("/openapi.json").json()
    for path in ["/api/v1/sessions", "/api/v1/sessions/{session_id}/events",
                 "/api/v1/sessions/{session_id}/interactions", "/api/v1/sessions/{session_id}/context",
                 "/api/v1/health"]:
        assert path in spec["paths"]


def test_health_reports_degraded_when_redis_is_down(make_settings) -> None:
    from athena_api.app import create_app

    settings = make_settings(redis_url="redis://127.0.0.1:1/0")  # nothing listens on port 1
    with TestClient(create_app(settings)) as api:
        report = api.get("/api/v1/health").json()
    assert report["status"] == "degraded"
    assert report["stores"]["redis"]["ok"] is False and report["stores"]["documents"]["ok"] is True


def test_writes_stay_accepted_and_readable_when_redis_is_down(make_settings, tenant: str) -> None:
    """SPEC S7: only the durable write may fail a request; the window is served from the log."""
    from athena_api.app import create_app

    settings = make_settings(redis_url="redis://127.0.0.1:1/0")
    with TestClient(create_app(settings)) as api:
        sid = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u"}).json()["session_id"]
        response = api.post(f"/api/v1/sessions/{sid}/interactions", json={"user_message": "still here?"})
        assert response.status_code == 201
        context = api.get(f"/api/v1/sessions/{sid}/context").json()
        assert context["stm_source"] == "event_log"
        assert [e["content"] for e in context["stm_events"]] == ["still here?"]


def test_durable_write_failure_is_503(api: TestClient, runtime: Runtime, session_id: str, monkeypatch) -> None:
    def refuse(events):  # noqa: ANN001
        raise OSError("disk full")

    monkeypatch.setattr(runtime.documents, "append_events", refuse)
    response = api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "lost?"})
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
