"""StoreEvents, `POST /api/v1/sessions/{id}/events:batch` (SPEC S2): StoreEvent's validation per item, each
bad item named by index and field, ids in order, 413 past ATHENA_BATCH_MAX_EVENTS, all or nothing durable,
Idempotency-Key."""
from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from athena_api.app import create_app
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime, build_runtime


def _scope(tenant: str) -> AgentScope:
    return AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1")


def _fields(response) -> list[str]:  # noqa: ANN001
    return [f["field"] for f in response.json()["error"]["fields"]]


def _batch(session_id: str) -> str:
    return f"/api/v1/sessions/{session_id}/events:batch"


def test_the_ids_come_back_in_order_and_name_the_stored_events(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    events = [{"role": "user", "type": "message", "content": f"turn {i}", "metadata": {"n": str(i)}} for i in range(7)]
    events[3] = {"type": "observation", "content": "PASS 42 tests", "metadata": {"execution_id": "ci-1"}}
    response = api.post(_batch(session_id), json={"events": events})
    assert response.status_code == 201, response.text
    ids = response.json()["event_ids"]
    assert len(ids) == 7 and len(set(ids)) == 7
    stored = {e.event_id: e for e in runtime.documents.get_events(_scope(tenant).user_scope, ids)}
    assert [stored[i].content for i in ids] == [e["content"] for e in events]
    assert stored[ids[3]].type.value == "observation" and stored[ids[0]].metadata == {"n": "0"}
    window, _ = runtime.stm.read(_scope(tenant))
    assert [w.event_id for w in window] == ids  # pushed to the window in request order


def test_every_bad_item_is_named_by_index_and_field_and_nothing_is_stored(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    events = [{"type": "message", "content": "fine"} for _ in range(6)]
    events[1] = {"type": "gossip", "content": "bad type"}
    events[3] = {"role": "user", "type": "message", "content": "   "}  # an empty user message
    events[4] = {"type": "message", "content": "ok", "timestamp": "1066-10-14T09:00:00Z"}
    response = api.post(_batch(session_id), json={"events": events})
    assert response.status_code == 422
    assert {"events[1].type", "events[4].timestamp"} <= set(_fields(response))
    assert runtime.documents.count_events(_scope(tenant)) == 0
    # the model's checks pass; the route's own check (empty user message) names its item as well
    events[1] = {"type": "message", "content": "fine"}
    events[4] = {"type": "message", "content": "fine", "metadata": {f"k{i}": "v" for i in range(65)}}
    response = api.post(_batch(session_id), json={"events": events})
    assert response.status_code == 422 and _fields(response) == ["events[3].content", "events[4].metadata"]
    assert runtime.documents.count_events(_scope(tenant)) == 0


def test_sizes_answer_413_naming_the_list_or_the_item(make_settings, tenant: str) -> None:
    runtime = build_runtime(make_settings(batch_max_events=4, max_content_bytes=100))
    try:
        with TestClient(create_app(runtime=runtime)) as api:
            sid = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "agent_id": "a1"}
                           ).json()["session_id"]
            five = [{"type": "message", "content": f"e{i}"} for i in range(5)]
            too_many = api.post(_batch(sid), json={"events": five})
            assert too_many.status_code == 413 and _fields(too_many) == ["events"]
            big = api.post(_batch(sid), json={"events": [{"type": "message", "content": "x"},
                                                         {"type": "message", "content": "y" * 101}]})
            assert big.status_code == 413 and _fields(big) == ["events[1].content"]
            assert api.post(_batch(sid), json={"events": []}).status_code == 422
            assert runtime.documents.count_events(_scope(tenant)) == 0
            assert api.post(_batch(sid), json={"events": five[:4]}).status_code == 201
    finally:
        runtime.close()


def test_a_failing_durable_write_stores_none_of_the_batch(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    # A real mid-batch failure of the real adapter: SQLite aborts the insert of the fourth row, after three
    # rows of the same statement were written inside the transaction.
    conn = runtime.documents._conn()
    conn.execute("CREATE TRIGGER refuse_poison BEFORE INSERT ON events WHEN NEW.content = 'poison' "
                 "BEGIN SELECT RAISE(ABORT, 'the disk refused this row'); END")
    try:
        events = [{"type": "message", "content": c} for c in ("one", "two", "three", "poison", "five")]
        response = api.post(_batch(session_id), json={"events": events})
        assert response.status_code == 503 and response.headers["retry-after"] == "1"
        assert response.json()["error"]["code"] == "not_durable"
        assert runtime.documents.count_events(_scope(tenant)) == 0
        assert runtime.stm.read(_scope(tenant))[0] == []
        ok = api.post(_batch(session_id), json={"events": events[:3]})
        assert ok.status_code == 201 and runtime.documents.count_events(_scope(tenant)) == 3
    finally:
        conn.execute("DROP TRIGGER refuse_poison")


def test_an_idempotency_key_replays_the_first_answer_and_stores_once(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    body = {"events": [{"type": "message", "content": f"import {i}"} for i in range(3)]}
    key = {"Idempotency-Key": f"import-{uuid.uuid4().hex}"}
    first = api.post(_batch(session_id), json=body, headers=key)
    again = api.post(_batch(session_id), json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert first.json()["event_ids"] == again.json()["event_ids"]
    assert runtime.documents.count_events(_scope(tenant)) == 3
    other = api.post(_batch(session_id), json={"events": body["events"][:2]}, headers=key)
    assert other.status_code == 422 and _fields(other) == ["Idempotency-Key"]


def test_an_unknown_session_is_a_404(api: TestClient) -> None:
    response = api.post(_batch("ses_missing"), json={"events": [{"type": "message", "content": "x"}]})
    assert response.status_code == 404 and _fields(response) == ["session_id"]


def test_a_batch_of_many_bad_items_names_every_one_in_fields_and_the_first_ten_in_the_message(
    api: TestClient, runtime: Runtime, tenant: str, session_id: str
) -> None:
    untyped = [{"role": "user", "content": f"turn {i}"} for i in range(30)]  # the model's check: `type` required
    empty = [{"role": "user", "type": "message", "content": " "} for _ in range(12)]  # the route's own check
    for events, field, more in ((untyped, "type", 20), (empty, "content", 2)):
        response = api.post(_batch(session_id), json={"events": events})
        assert response.status_code == 422
        assert _fields(response) == [f"events[{i}].{field}" for i in range(len(events))]
        message = response.json()["error"]["message"]
        assert f"events[9].{field}" in message and f"events[10].{field}" not in message, message
        assert message.endswith(f" and {more} more"), message
    assert runtime.documents.count_events(_scope(tenant)) == 0
