"""The write routes' fast path (athena_api/fast_writes.py) and the write door's in-flight bound (issue 16).

Once a session's identity is cached, StoreEvent and StoreEvents are answered outside FastAPI; these tests
check that the answers are the same ones: a bad body is named as before, a session deleted after it was
cached is a 404 with nothing stored, another tenant's credential is refused. And the door refuses a write
with 503 + Retry-After while as many write requests as its bound are in progress.
"""
from __future__ import annotations

import asyncio

from fastapi.testclient import TestClient

from athena_api.app import create_app
from athena_api.write_admission import WriteAdmission
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime, build_runtime


def _scope(tenant: str) -> AgentScope:
    return AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1")


def test_once_cached_a_session_answers_the_same_errors_and_stores_the_same_events(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    path = f"/api/v1/sessions/{session_id}/events"
    first = api.post(path, json={"type": "message", "content": "fills the cache"})
    assert first.status_code == 201 and api.app.state.sessions.get(session_id) is not None
    fast = api.post(path, json={"role": "user", "type": "message", "content": "fast", "metadata": {"k": "v"}})
    assert fast.status_code == 201 and fast.headers["content-type"] == "application/json"
    stored = runtime.documents.get_events(_scope(tenant).user_scope, [fast.json()["event_id"]])
    assert [(e.content, e.metadata, e.role.value) for e in stored] == [("fast", {"k": "v"}, "user")]
    bad = api.post(path, json={"type": "gossip", "content": "x"})
    assert bad.status_code == 422 and [f["field"] for f in bad.json()["error"]["fields"]] == ["type"]
    empty = api.post(path, json={"role": "user", "type": "message", "content": "  "})
    assert empty.status_code == 422 and empty.json()["error"]["fields"][0]["field"] == "content"
    big = api.post(path, json={"type": "message", "content": "x" * (64 * 1024 + 1)})
    assert big.status_code == 413 and big.json()["error"]["fields"][0]["field"] == "content"
    batch = api.post(f"{path}:batch", json={"events": [{"type": "message", "content": "a"},
                                                       {"type": "message", "content": "b",
                                                        "metadata": {f"k{i}": "v" for i in range(65)}}]})
    assert batch.status_code == 422 and [f["field"] for f in batch.json()["error"]["fields"]] == ["events[1].metadata"]
    ids = api.post(f"{path}:batch", json={"events": [{"type": "message", "content": c} for c in "abc"]}).json()
    assert [e.content for e in runtime.documents.get_events(_scope(tenant).user_scope, ids["event_ids"])] == list("abc")
    assert runtime.documents.count_events(_scope(tenant)) == 5


def test_a_session_deleted_after_it_was_cached_is_a_404_and_nothing_is_stored(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    path = f"/api/v1/sessions/{session_id}/events"
    assert api.post(path, json={"type": "message", "content": "cached"}).status_code == 201
    runtime.documents.delete_session(session_id)  # as another API process would: this one's cache still has it
    for route, body in (("", {"type": "message", "content": "late"}),
                        (":batch", {"events": [{"type": "message", "content": "late"}]})):
        gone = api.post(path + route, json=body)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "session_not_found", gone.text
        api.app.state.sessions.put(runtime.documents.get_session(session_id) or _cached(api, session_id, tenant))
    assert runtime.documents.count_events(_scope(tenant)) == 1


def _cached(api: TestClient, session_id: str, tenant: str):  # noqa: ANN202
    """The deleted session's identity, put back in the cache (the first 404 forgot it)."""
    from athena_core.models.events import utc_now
    from athena_core.models.sessions import Session

    return Session(session_id=session_id, tenant_id=tenant, user_id="u1", agent_id="a1", metadata={},
                   created_at=utc_now())


def test_another_tenants_key_is_refused_on_a_cached_session(make_settings, tenant: str) -> None:
    keys = f"key-a:{tenant},key-b:other-{tenant}"
    runtime = build_runtime(make_settings(auth_mode="api_key", api_keys=keys))
    try:
        with TestClient(create_app(runtime=runtime)) as api:
            sid = api.post("/api/v1/sessions", json={"user_id": "u1"}, headers={"X-API-Key": "key-a"}).json()["session_id"]
            path = f"/api/v1/sessions/{sid}/events"
            assert api.post(path, json={"type": "message", "content": "mine"},
                            headers={"X-API-Key": "key-a"}).status_code == 201
            assert api.post(path, json={"type": "message", "content": "x"}, headers={"X-API-Key": "key-b"}).status_code == 404
            assert api.post(path, json={"type": "message", "content": "x"}).status_code == 401
            assert runtime.documents.count_events(AgentScope(tenant_id=tenant, user_id="u1")) == 1
    finally:
        runtime.close()


def test_the_door_refuses_writes_past_its_in_flight_bound_and_admits_again_after() -> None:
    release = asyncio.Event()
    answered: list[tuple[str, int, dict]] = []

    class FakeState:
        writer = None

    class FakeApp:
        """A fake app that holds every request until `release` is set."""

        state = FakeState()

        async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
            await release.wait()
            await send({"type": "http.response.start", "status": 201, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

    door = WriteAdmission(FakeApp(), max_in_flight=2)

    async def call(name: str, method: str = "POST", path: str = "/api/v1/sessions/s1/events") -> None:
        scope = {"type": "http", "method": method, "path": path, "app": FakeApp(), "headers": []}
        started: dict = {}

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                started.update(status=message["status"], headers=dict(message["headers"]))

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        await door(scope, receive, send)
        answered.append((name, started["status"], started["headers"]))

    async def scenario() -> None:
        held = [asyncio.create_task(call(f"held{i}")) for i in range(2)]
        await asyncio.sleep(0.01)
        await call("refused")
        read = asyncio.create_task(call("read", "GET", "/api/v1/sessions/s1"))  # not a write: not bounded
        await asyncio.sleep(0.01)
        assert not read.done() and door.in_flight == 2
        release.set()
        await asyncio.gather(*held, read)
        await call("after")

    asyncio.run(scenario())
    status = {name: (code, headers) for name, code, headers in answered}
    assert status["refused"][0] == 503 and status["refused"][1][b"retry-after"] == b"1"
    assert status["held0"][0] == status["held1"][0] == status["after"][0] == status["read"][0] == 201
    assert door.in_flight == 0
