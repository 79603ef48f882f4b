"""Idempotency-Key on StoreEvent and StoreInteraction (SPEC S2; issue 12 item 14)."""
from __future__ import annotations

import base64
import uuid

from fastapi.testclient import TestClient

from athena_api.idempotency import hash_of
from athena_core.ids import new_id
from athena_core.models.events import InteractionIn, utc_now
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime


def _session(api: TestClient, tenant: str, user: str = "u1") -> str:
    r = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": user, "agent_id": "a1"})
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


def _scope(tenant: str, user: str = "u1") -> AgentScope:
    return AgentScope(tenant_id=tenant, user_id=user, agent_id="a1")


def _window(api: TestClient, sid: str) -> list[str]:
    return [e["event_id"] for e in api.get(f"/api/v1/sessions/{sid}/context").json()["stm_events"]]


def test_same_key_twice_returns_the_same_id_and_stores_one_event(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    body = {"type": "message", "content": "deploy the payments service", "metadata": {"project": "payments"}}
    key = {"Idempotency-Key": f"k-{uuid.uuid4().hex}"}
    first = api.post(f"/api/v1/sessions/{session_id}/events", json=body, headers=key)
    second = api.post(f"/api/v1/sessions/{session_id}/events", json=body, headers=key)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    # the same request spelled with a default made explicit, and keys reordered, is the same request
    third = api.post(f"/api/v1/sessions/{session_id}/events", json={**dict(reversed(body.items())), "role": "system"},
                     headers=key)
    assert third.status_code == 201 and third.json() == first.json()
    assert runtime.documents.count_events(_scope(tenant)) == 1
    assert _window(api, session_id) == [first.json()["event_id"]]


def test_interaction_retry_returns_both_ids_once(api: TestClient, runtime: Runtime, tenant: str, session_id: str) -> None:
    body = {"user_message": "which database?", "agent_response": "Postgres 16."}
    key = {"Idempotency-Key": "interaction-1"}
    answers = [api.post(f"/api/v1/sessions/{session_id}/interactions", json=body, headers=key) for _ in range(3)]
    assert [a.status_code for a in answers] == [201] * 3
    ids = answers[0].json()["event_ids"]
    assert len(ids) == 2 and all(a.json()["event_ids"] == ids for a in answers)
    assert runtime.documents.count_events(_scope(tenant)) == 2
    assert _window(api, session_id) == ids


def test_same_key_with_another_body_is_422_naming_the_header(api: TestClient, runtime: Runtime, tenant: str,
                                                               session_id: str) -> None:
    key = {"Idempotency-Key": "reused"}
    assert api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "one"},
                    headers=key).status_code == 201
    r = api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "two"}, headers=key)
    assert r.status_code == 422
    assert [f["field"] for f in r.json()["error"]["fields"]] == ["Idempotency-Key"]
    # another route (another path) with the key is another request too
    r = api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "one"}, headers=key)
    assert r.status_code == 422
    assert runtime.documents.count_events(_scope(tenant)) == 1


def test_a_rejected_request_does_not_take_the_key(api: TestClient, session_id: str) -> None:
    key = {"Idempotency-Key": "after-a-fix"}
    bad = api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "nonsense", "content": "x"}, headers=key)
    assert bad.status_code == 422
    assert api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "x"},
                    headers=key).status_code == 201


def test_a_malformed_key_is_422(api: TestClient, session_id: str) -> None:
    for key in ("has space", "x" * 256, "ünïcode"):
        r = api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "x"},
                     headers={"Idempotency-Key": key.encode("utf-8")})
        assert r.status_code == 422, key
        assert [f["field"] for f in r.json()["error"]["fields"]] == ["Idempotency-Key"]


def test_keys_are_per_tenant(api: TestClient, runtime: Runtime) -> None:
    tenants = [f"t-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    sessions = [_session(api, t) for t in tenants]
    body = {"type": "message", "content": "same words, other tenant"}
    ids = [api.post(f"/api/v1/sessions/{s}/events", json=body, headers={"Idempotency-Key": "shared"}).json()["event_id"]
           for s in sessions]
    assert ids[0] != ids[1]
    assert [runtime.documents.count_events(_scope(t)) for t in tenants] == [1, 1]


def test_a_crash_between_claim_and_append_is_completed_by_the_retry(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    body = {"user_message": "I moved the blog to Hugo", "agent_response": "Noted."}
    path = f"/api/v1/sessions/{session_id}/interactions"
    planned = [new_id("evt"), new_id("evt")]
    # the first request claimed the key and died before writing anything
    runtime.documents.claim_idempotency_key(tenant, "u1", "crashed", hash_of("POST", path, InteractionIn(**body)),
                                            planned, utc_now(), ttl_s=runtime.settings.idempotency_ttl_s)
    assert runtime.documents.count_events(_scope(tenant)) == 0
    for _ in range(2):
        r = api.post(path, json=body, headers={"Idempotency-Key": "crashed"})
        assert r.status_code == 201 and r.json()["event_ids"] == planned
    assert runtime.documents.count_events(_scope(tenant)) == 2
    assert [e.content for e in runtime.documents.get_events(_scope(tenant).user_scope, planned)] == [
        "I moved the blog to Hugo", "Noted."]
    assert _window(api, session_id) == planned


def test_a_crash_after_append_before_the_window_push_writes_nothing_more(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str, monkeypatch
) -> None:
    body = {"type": "message", "content": "first attempt reached the log only"}
    key = {"Idempotency-Key": "cut-after-append"}
    ingest = api.app.state.ingest

    class Killed(Exception):
        pass

    def die(*_args, **_kwargs):  # noqa: ANN002, ANN003
        raise Killed("API killed after the append: no answer reaches the client")

    monkeypatch.setattr(ingest, "_push_windows", die)
    try:
        api.post(f"/api/v1/sessions/{session_id}/events", json=body, headers=key)
        raise AssertionError("the request should have died")
    except Killed:
        pass
    monkeypatch.undo()
    assert runtime.documents.count_events(_scope(tenant)) == 1
    r = api.post(f"/api/v1/sessions/{session_id}/events", json=body, headers=key)
    assert r.status_code == 201
    assert runtime.documents.count_events(_scope(tenant)) == 1
    assert _window(api, session_id) == [r.json()["event_id"]]  # the window's gap check rebuilt it


def test_a_payload_retry_keeps_one_blob(make_settings, tenant: str) -> None:
    from athena_api.app import create_app
    from athena_core.wiring.runtime import build_runtime

    runtime = build_runtime(make_settings(blob_store="local"))
    try:
        with TestClient(create_app(runtime=runtime)) as api:
            sid = _session(api, tenant)
            body = {"type": "observation", "content": "a screenshot", "payload": base64.b64encode(b"png").decode()}
            ids = {api.post(f"/api/v1/sessions/{sid}/events", json=body, headers={"Idempotency-Key": "blob"}).json()[
                "event_id"] for _ in range(2)}
            assert len(ids) == 1
            user_dir = runtime.settings.data_dir / "blobs" / tenant / "u1"
            assert len([p for p in user_dir.iterdir() if not p.name.startswith(".")]) == 1
    finally:
        runtime.close()


def test_purge_forgets_the_users_keys(api: TestClient, runtime: Runtime, tenant: str, session_id: str) -> None:
    body = {"type": "message", "content": "to be erased"}
    key = {"Idempotency-Key": "purged"}
    first = api.post(f"/api/v1/sessions/{session_id}/events", json=body, headers=key).json()["event_id"]
    assert api.delete(f"/api/v1/sessions/{session_id}?purge=user").status_code == 200
    sid = _session(api, tenant)
    again = api.post(f"/api/v1/sessions/{sid}/events", json=body, headers=key)
    assert again.status_code == 201 and again.json()["event_id"] != first


def test_create_session_with_a_key_creates_one_session(api: TestClient, tenant: str) -> None:
    body = {"tenant_id": tenant, "user_id": "u1", "agent_id": "a1", "metadata": {"project": "payments"}}
    key = {"Idempotency-Key": "new-session"}
    answers = [api.post("/api/v1/sessions", json=body, headers=key) for _ in range(2)]
    assert [a.status_code for a in answers] == [201, 201] and answers[0].json() == answers[1].json()
    other = api.post("/api/v1/sessions", json={**body, "agent_id": "a2"}, headers=key)
    assert other.status_code == 422
    assert [f["field"] for f in other.json()["error"]["fields"]] == ["Idempotency-Key"]
