"""Validate at the door (SPEC S1, S2, S10; issue 12 items 1, 2, 6, 10, 11, 12): whatever the API accepts
must be processable, and whatever it refuses is a 4xx naming the field, never a 5xx.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import jwt
import pytest
from fastapi.testclient import TestClient

from athena_api.app import create_app
from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime

SECRET = "validation-secret-that-is-long-enough-for-hs256"
JSON = {"Content-Type": "application/json"}


def fields_of(response) -> list[str]:  # noqa: ANN001 - httpx.Response
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "fields"} <= set(body["error"]), body
    return [f["field"] for f in body["error"]["fields"]]


def hs256(claims: dict, exp: object = "default") -> str:
    payload = dict(claims)
    if exp == "default":
        payload["exp"] = int(time.time()) + 3600
    elif exp is not None:
        payload["exp"] = exp
    return jwt.encode(payload, SECRET, algorithm="HS256")


@pytest.fixture
def secured(make_settings) -> Iterator[TestClient]:
    settings = make_settings(auth_mode="api_key_or_jwt", jwt_secret=SECRET, api_keys="svc-key:tenant-v")
    with TestClient(create_app(settings)) as client:
        yield client


# ---- 1. ids (S1) ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [".", "..", "...", ".x", "-x", "_x", "@x", "a/b", "a:b", "a\\b", "", "x" * 129,
                                 "a\n", "é"])
@pytest.mark.parametrize("field", ["tenant_id", "user_id", "agent_id"])
def test_ids_with_path_meaning_are_refused_naming_the_field(api: TestClient, tenant: str, field: str,
                                                             bad: str) -> None:
    body = {"tenant_id": tenant, "user_id": "u1", "agent_id": "a1", field: bad}
    response = api.post("/api/v1/sessions", json=body)
    assert response.status_code == 422, response.text
    assert fields_of(response) == [field]


def test_ordinary_ids_are_still_accepted(api: TestClient) -> None:
    from athena_core.models.scope import check_scope_id  # the one rule, shared with JWT claim checks

    for value in ["a", "A1", "0", "user.name@example.com", "a..b", "x-y_z", "9" * 128]:
        assert check_scope_id(value) == value
        response = api.post("/api/v1/sessions", json={"tenant_id": "t-ok", "user_id": value})
        assert response.status_code == 201, (value, response.text)


# ---- 2. JWT claims (S10) ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "claims",
    [
        {"tenant_id": "tenant-v", "user_id": "auth0|5f7c1e2d"},  # fails the id rules
        {"tenant_id": "tenant-v", "user_id": ".."},
        {"tenant_id": "..", "user_id": "u1"},
        {"tenant_id": "tenant-v", "user_id": "u1", "agent_id": "a/b"},
        {"tenant_id": "tenant-v", "user_id": 42},  # not a string
        {"tenant_id": ["tenant-v"], "user_id": "u1"},
        {"user_id": "u1"},  # no tenant
    ],
    ids=["pipe-in-user", "dotdot-user", "dotdot-tenant", "slash-agent", "int-user", "list-tenant", "no-tenant"],
)
def test_claims_that_fail_the_id_rules_are_401(secured: TestClient, claims: dict) -> None:
    headers = {"Authorization": f"Bearer {hs256(claims)}"}
    response = secured.post("/api/v1/sessions", json={}, headers=headers)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthenticated"


def test_a_bad_user_claim_writes_nothing_and_gets_no_500(secured: TestClient) -> None:
    good = {"Authorization": f"Bearer {hs256({'tenant_id': 'tenant-v', 'user_id': 'u1'})}"}
    session_id = secured.post("/api/v1/sessions", json={}, headers=good).json()["session_id"]
    bad = {"Authorization": f"Bearer {hs256({'tenant_id': 'tenant-v', 'user_id': 'auth0|x'})}"}
    response = secured.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "x"},
                            headers=bad)
    assert response.status_code == 401


def test_roles_must_be_a_string_or_a_list_of_strings(secured: TestClient, monkeypatch) -> None:
    import athena_tasks.analytics.communities as communities

    class _Result:
        id = "task-v"

    monkeypatch.setattr(communities.run_community_analytics, "delay", lambda: _Result())
    trigger = "/api/v1/admin/analytics/trigger"
    for roles in ({"admin": False}, {"admin": True}, [["admin"]], 1, [1]):
        tok = hs256({"tenant_id": "ops", "roles": roles})
        response = secured.post(trigger, headers={"Authorization": f"Bearer {tok}"})
        assert response.status_code == 401, (roles, response.text)
        assert "roles" in response.json()["error"]["message"]
    tok = hs256({"tenant_id": "ops", "role": {"admin": 1}})
    assert secured.post(trigger, headers={"Authorization": f"Bearer {tok}"}).status_code == 401
    for roles in ("admin", ["reader", "admin"]):
        tok = hs256({"tenant_id": "ops", "roles": roles})
        assert secured.post(trigger, headers={"Authorization": f"Bearer {tok}"}).status_code == 202
    tok = hs256({"tenant_id": "ops", "roles": ["reader"]})
    assert secured.post(trigger, headers={"Authorization": f"Bearer {tok}"}).status_code == 403


@pytest.mark.parametrize("exp", [str(int(time.time()) + 3600), True, None, [1], {"t": 1}],
                         ids=["numeric-string", "bool", "null", "list", "object"])
def test_exp_must_be_numeric(secured: TestClient, exp: object) -> None:
    payload = {"tenant_id": "tenant-v", "user_id": "u1", "exp": exp}
    tok = jwt.encode(payload, SECRET, algorithm="HS256")
    response = secured.post("/api/v1/sessions", json={}, headers={"Authorization": f"Bearer {tok}"})
    assert response.status_code == 401, response.text


def test_api_key_tenants_follow_the_id_rules(make_settings) -> None:
    with pytest.raises(ValueError):
        create_app(make_settings(auth_mode="api_key", api_keys="k1:.."))


# ---- 3. timestamps (S2) ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("stamp", [
    "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59Z", (datetime.now(timezone.utc) + timedelta(days=366 * 100)).isoformat(), -1,
])
@pytest.mark.parametrize("route", ["events", "interactions"])
def test_timestamps_out_of_range_are_422_naming_the_field(api: TestClient, session_id: str, route: str,
                                                           stamp: object) -> None:
    body = {"type": "message", "content": "x"} if route == "events" else {"user_message": "x"}
    response = api.post(f"/api/v1/sessions/{session_id}/{route}", json={**body, "timestamp": stamp})
    assert response.status_code == 422, response.text
    assert fields_of(response) == ["timestamp"]
    assert api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0


def test_timestamps_in_range_are_honoured(api: TestClient, session_id: str) -> None:
    for stamp in ["1970-01-01T00:00:00Z", "1970-01-02T00:00:00+05:00",
                  (datetime.now(timezone.utc) + timedelta(days=365 * 50)).isoformat()]:
        response = api.post(f"/api/v1/sessions/{session_id}/events",
                            json={"type": "message", "content": "x", "timestamp": stamp})
        assert response.status_code == 201, (stamp, response.text)


# ---- 4. strict UTF-8 (S2) --------------------------------------------------------------------------------------

SURROGATE = "\\ud83d"  # a JSON escape of a lone high surrogate


@pytest.mark.parametrize("route,template,field", [
    ("events", '{"type":"message","content":"a %s b"}', "content"),
    ("events", '{"type":"message","content":"x","metadata":{"k":"%s"}}', "metadata.k"),
    ("events", '{"type":"message","content":"x","metadata":{"%s":"v"}}', "metadata"),
    ("events", '{"type":"message","content":"x","mime_type":"text/%s","payload":"eA=="}', "mime_type"),
    ("interactions", '{"user_message":"hi %s"}', "user_message"),
    ("interactions", '{"user_message":"hi","agent_response":"%s"}', "agent_response"),
    ("interactions", '{"user_message":"hi","metadata":{"k":"%s"}}', "metadata.k"),
])
def test_a_lone_surrogate_is_422_naming_the_field(api: TestClient, session_id: str, route: str, template: str,
                                                   field: str) -> None:
    raw = (template % SURROGATE).encode()
    response = api.post(f"/api/v1/sessions/{session_id}/{route}", content=raw, headers=JSON)
    assert response.status_code == 422, response.text
    assert any(name == field or name.startswith(field + ".") for name in fields_of(response)), response.text
    assert api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0
    assert api.get(f"/api/v1/sessions/{session_id}/context").status_code == 200


def test_a_lone_surrogate_in_session_metadata_or_ids_is_422(api: TestClient, tenant: str) -> None:
    for raw, field in [
        ('{"tenant_id":"%s","user_id":"u1","metadata":{"k":"%s"}}' % (tenant, SURROGATE), "metadata.k"),
        ('{"tenant_id":"%s","user_id":"u%s"}' % (tenant, SURROGATE), "user_id"),
    ]:
        response = api.post("/api/v1/sessions", content=raw.encode(), headers=JSON)
        assert response.status_code == 422, response.text
        assert fields_of(response) == [field]


def test_a_surrogate_pair_is_an_ordinary_emoji(api: TestClient, session_id: str, runtime: Runtime) -> None:
    raw = b'{"type":"message","content":"smile \\ud83d\\ude00"}'
    response = api.post(f"/api/v1/sessions/{session_id}/events", content=raw, headers=JSON)
    assert response.status_code == 201
    assert api.get(f"/api/v1/sessions/{session_id}/context").json()["stm_events"][-1]["content"] == "smile \U0001F600"


@pytest.mark.parametrize("raw,field", [
    (b'{"type":"message","content":"\xff\xfe"}', "body"),  # not UTF-8 at all: the body is at fault
    (b'{"type":"message","content":"\xed\xa0\xbd"}', "content"),  # an encoded surrogate (json decodes it)
])
def test_invalid_utf8_in_the_body_is_422(api: TestClient, session_id: str, raw: bytes, field: str) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/events", content=raw, headers=JSON)
    assert response.status_code == 422, response.text
    assert fields_of(response) == [field]
    assert api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0


def test_invalid_utf8_bytes_are_422_naming_body(api: TestClient, session_id: str) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/events", content=b'{"type":"message","content":"\xff"}',
                        headers=JSON)
    assert response.status_code == 422, response.text
    assert fields_of(response) == ["body"]
    assert "UTF-8" in response.json()["error"]["message"]


# ---- 5. size limits (S2) ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["sessions", "events", "interactions"])
def test_metadata_limits(api: TestClient, tenant: str, session_id: str, where: str) -> None:
    def post(metadata: dict):  # noqa: ANN202
        if where == "sessions":
            return api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "metadata": metadata})
        body = {"type": "message", "content": "x"} if where == "events" else {"user_message": "x"}
        return api.post(f"/api/v1/sessions/{session_id}/{where}", json={**body, "metadata": metadata})

    exactly = {f"k{i}": "v" for i in range(64)}
    assert post(exactly).status_code == 201
    too_many = post({f"k{i}": "v" for i in range(65)})
    assert too_many.status_code == 422 and fields_of(too_many) == ["metadata"]
    long_key = post({"k" * 257: "v"})
    assert long_key.status_code == 422 and fields_of(long_key)[0].startswith("metadata.kkk")
    huge_value = post({"big": "x" * (16 * 1024 + 1)})
    assert huge_value.status_code == 413 and fields_of(huge_value) == ["metadata.big"]
    too_big = post({f"k{i}": "x" * 400 for i in range(60)})  # each value fine, 24 KB in all
    assert too_big.status_code == 413 and fields_of(too_big) == ["metadata"]
    five_mb = post({"big": "x" * 5_000_000})
    assert five_mb.status_code == 413
    if where != "sessions":
        assert api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 1


@pytest.fixture
def small_body_api(make_settings) -> Iterator[TestClient]:
    """The body limit derives from the payload limit: a small payload limit gives a body limit under 1 MB."""
    with TestClient(create_app(make_settings(max_payload_bytes=1024))) as client:
        yield client


def test_a_chunked_body_over_the_limit_is_413_and_not_processed(small_body_api: TestClient, tenant: str) -> None:
    api = small_body_api
    session_id = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1"}).json()["session_id"]

    def chunks() -> Iterator[bytes]:  # a valid, acceptable event padded with 2 MB of JSON whitespace
        yield b'{"type":"message","content":"padded"'
        for _ in range(512):
            yield b" " * 4096
        yield b"}"

    response = api.post(f"/api/v1/sessions/{session_id}/events", content=chunks(), headers=JSON)
    assert response.status_code == 413, response.text
    assert fields_of(response) == ["body"]
    assert api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0

    def small() -> Iterator[bytes]:
        yield b'{"type":"message",'
        yield b'"content":"chunked but small"}'

    assert api.post(f"/api/v1/sessions/{session_id}/events", content=small(), headers=JSON).status_code == 201


# ---- 6. error field names --------------------------------------------------------------------------------------

def test_a_field_named_query_is_reported_as_query(api: TestClient, session_id: str) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/context/search", json={"query": 5})
    assert response.status_code == 422
    assert fields_of(response) == ["query"]
    response = api.get(f"/api/v1/sessions/{session_id}/context", params={"limit": "abc"})
    assert response.status_code == 422 and fields_of(response) == ["limit"]


def test_truncated_json_is_reported_as_invalid_json_of_the_body(api: TestClient, session_id: str) -> None:
    response = api.post(f"/api/v1/sessions/{session_id}/events", content=b'{"type":"mess', headers=JSON)
    assert response.status_code == 422
    assert fields_of(response) == ["body"]
    assert "JSON" in response.json()["error"]["message"]


# ---- 7. docs and openapi behind auth ---------------------------------------------------------------------------

def test_docs_are_public_by_default(secured: TestClient) -> None:
    for path in ("/openapi.json", "/docs", "/redoc"):
        assert secured.get(path).status_code == 200, path


def test_docs_can_be_closed(make_settings) -> None:
    settings = make_settings(auth_mode="api_key", api_keys="svc-key:tenant-v", docs_public=False)
    with TestClient(create_app(settings)) as client:
        for path in ("/openapi.json", "/docs", "/redoc"):
            assert client.get(path).status_code == 401, path
            assert client.get(path, headers={"X-API-Key": "svc-key"}).status_code == 200, path
        assert "paths" in client.get("/openapi.json", headers={"X-API-Key": "svc-key"}).json()
    # With auth off there is nothing to authenticate against: the docs stay reachable.
    with TestClient(create_app(make_settings(docs_public=False))) as client:
        assert client.get("/openapi.json").status_code == 200


def test_the_validated_event_is_processable(api: TestClient, session_id: str, runtime: Runtime) -> None:
    """What is accepted round-trips: stored, in the window, with its UTC time."""
    raw = json.dumps({"type": "message", "content": "RTL \u05e9\u05dc\u05d5\u05dd zero\u200bwidth NUL\u0000 end",
                      "timestamp": "1970-01-02T00:00:00Z", "metadata": {"k": "\u200f"}}).encode()
    response = api.post(f"/api/v1/sessions/{session_id}/events", content=raw, headers=JSON)
    assert response.status_code == 201
    s = api.get(f"/api/v1/sessions/{session_id}").json()
    scope = AgentScope(tenant_id=s["tenant_id"], user_id=s["user_id"], agent_id=s["agent_id"])
    [event] = runtime.documents.get_events(scope.user_scope, [response.json()["event_id"]])
    assert event.status == EventStatus.pending and event.timestamp.year == 1970


def test_iat_and_nbf_must_be_numeric_too(secured: TestClient) -> None:
    for claim in ("iat", "nbf"):
        tok = hs256({"tenant_id": "tenant-v", "user_id": "u1", claim: "1000000000"})
        response = secured.post("/api/v1/sessions", json={}, headers={"Authorization": f"Bearer {tok}"})
        assert response.status_code == 401, (claim, response.text)


def test_an_unsafe_request_id_is_replaced_not_echoed(api: TestClient) -> None:
    for raw in (b"\xff\xfe", b"x" * 10_000, b"a b"):
        response = api.get("/health", headers=[(b"x-request-id", raw)])
        assert response.status_code == 200
        assert response.headers["x-request-id"] != raw.decode("latin-1") and len(response.headers["x-request-id"]) == 32
    assert api.get("/health", headers={"X-Request-ID": "req-1.2:3"}).headers["x-request-id"] == "req-1.2:3"
