"""SPEC S10 auth: API keys and JWTs, claims override bodies, sessions usable only by their owners."""
from __future__ import annotations

import time
import warnings
from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient
from jwt.warnings import InsecureKeyLengthWarning

from athena_api.app import create_app
from athena_core.wiring.settings import Settings, check_production_safety

SECRET = "test-secret-that-is-long-enough-for-hs256"


def _rsa_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


RSA_PRIVATE, RSA_PUBLIC = _rsa_pair()


def token(tenant: str, user: str | None = "u1", *, exp: float | None = 3600, alg: str = "HS256",
          key: str = SECRET, **claims) -> str:
    payload = {"tenant_id": tenant, **claims}
    if user is not None:
        payload["user_id"] = user
    if exp is not None:
        payload["exp"] = int(time.time() + exp)
    return jwt.encode(payload, key, algorithm=alg)


def hs512_with_our_secret() -> str:
    """Right secret, wrong algorithm: only the algorithm check can refuse it. PyJWT warns that the secret
    is short for HS512; that is this token's point, not a flaw of the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureKeyLengthWarning)
        return token("tenant-a", alg="HS512")


def bearer(tok: str) -> dict:
    return {"Authorization": f"Bearer {tok}"}


@pytest.fixture
def secured(make_settings) -> Iterator[TestClient]:
    settings = make_settings(
        auth_mode="api_key_or_jwt", jwt_secret=SECRET, jwt_public_key=RSA_PUBLIC,
        api_keys="svc-key-a:tenant-a,admin-key:ops:admin",
    )
    with TestClient(create_app(settings)) as client:
        yield client


def _session(api: TestClient, tenant: str, user: str = "u1") -> str:
    response = api.post("/api/v1/sessions", json={}, headers=bearer(token(tenant, user)))
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def test_no_credential_is_401_but_liveness_is_open(secured: TestClient) -> None:
    assert secured.post("/api/v1/sessions", json={"tenant_id": "t", "user_id": "u"}).status_code == 401
    assert secured.get("/api/v1/health").status_code == 401
    assert secured.get("/health").status_code == 200
    assert secured.get("/metrics").status_code == 200  # public by default (ATHENA_METRICS_PUBLIC)


@pytest.mark.parametrize(
    "bad",
    [
        token("tenant-a", exp=None),  # no exp
        token("tenant-a", exp=-60),  # expired
        hs512_with_our_secret(),  # algorithm not accepted
        token("tenant-a", key="another-secret-of-sufficient-length"),  # wrong signature
        jwt.encode({"tenant_id": "tenant-a", "exp": int(time.time()) + 60}, None, algorithm="none"),
        token("tenant-a", alg="RS256", key=_rsa_pair()[0]),  # signed by another RSA key
        "not-a-jwt",
    ],
    ids=["no-exp", "expired", "hs512", "bad-signature", "alg-none", "foreign-rsa-key", "garbage"],
)
def test_bad_jwts_are_rejected(secured: TestClient, bad: str) -> None:
    response = secured.post("/api/v1/sessions", json={}, headers=bearer(bad))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


def test_rs256_and_hs256_both_accepted(secured: TestClient) -> None:
    for tok in (token("tenant-a", alg="RS256", key=RSA_PRIVATE), token("tenant-a")):
        assert secured.post("/api/v1/sessions", json={}, headers=bearer(tok)).status_code == 201


def test_claims_fill_and_override_bodies(secured: TestClient) -> None:
    headers = bearer(token("tenant-a", "alice", agent_id="bot"))
    created = secured.post("/api/v1/sessions", json={"metadata": {"x": "y"}}, headers=headers)
    session = secured.get(f"/api/v1/sessions/{created.json()['session_id']}", headers=headers).json()
    assert (session["tenant_id"], session["user_id"], session["agent_id"]) == ("tenant-a", "alice", "bot")


def test_cannot_create_a_session_for_another_tenant_or_user(secured: TestClient) -> None:
    headers = bearer(token("tenant-a", "alice"))
    response = secured.post("/api/v1/sessions", json={"tenant_id": "tenant-b", "user_id": "alice"}, headers=headers)
    assert response.status_code == 403 and response.json()["error"]["fields"][0]["field"] == "tenant_id"
    response = secured.post("/api/v1/sessions", json={"tenant_id": "tenant-a", "user_id": "bob"}, headers=headers)
    assert response.status_code == 403 and response.json()["error"]["fields"][0]["field"] == "user_id"
    api_key = {"X-API-Key": "svc-key-a"}
    response = secured.post("/api/v1/sessions", json={"tenant_id": "tenant-b", "user_id": "x"}, headers=api_key)
    assert response.status_code == 403


def test_a_tenant_cannot_read_or_write_another_tenants_session(secured: TestClient) -> None:
    theirs = _session(secured, "tenant-b")
    secured.post(f"/api/v1/sessions/{theirs}/interactions", json={"user_message": "secret of b"},
                 headers=bearer(token("tenant-b")))
    for headers in (bearer(token("tenant-a")), {"X-API-Key": "svc-key-a"}):
        assert secured.get(f"/api/v1/sessions/{theirs}", headers=headers).status_code == 404
        assert secured.get(f"/api/v1/sessions/{theirs}/context", headers=headers).status_code == 404
        assert secured.post(f"/api/v1/sessions/{theirs}/events", json={"type": "message", "content": "x"},
                            headers=headers).status_code == 404
        assert secured.post(f"/api/v1/sessions/{theirs}/interactions", json={"user_message": "x"},
                            headers=headers).status_code == 404
        assert secured.delete(f"/api/v1/sessions/{theirs}", headers=headers).status_code == 404
        for path in ("segments", "analysis/topics", "analysis/heat", "graph"):
            assert secured.get(f"/api/v1/sessions/{theirs}/{path}", headers=headers).status_code == 404
        assert secured.post(f"/api/v1/sessions/{theirs}/context/search", json={"query": "secret"},
                            headers=headers).status_code == 404
        assert secured.delete(f"/api/v1/sessions/{theirs}", params={"purge": "user"},
                              headers=headers).status_code == 404
    context = secured.get(f"/api/v1/sessions/{theirs}/context", headers=bearer(token("tenant-b"))).json()
    assert [e["content"] for e in context["stm_events"]] == ["secret of b"]


def test_a_user_cannot_use_another_users_session_in_the_same_tenant(secured: TestClient) -> None:
    alices = _session(secured, "tenant-a", "alice")
    assert secured.get(f"/api/v1/sessions/{alices}", headers=bearer(token("tenant-a", "bob"))).status_code == 404
    # A tenant-wide service key may act for any user of its tenant.
    assert secured.get(f"/api/v1/sessions/{alices}", headers={"X-API-Key": "svc-key-a"}).status_code == 200


def test_unknown_api_key_is_401(secured: TestClient) -> None:
    assert secured.post("/api/v1/sessions", json={"tenant_id": "t", "user_id": "u"},
                        headers={"X-API-Key": "guess"}).status_code == 401


def test_production_refuses_to_start_with_auth_off(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="refusing to start"):
        check_production_safety(Settings(data_dir=tmp_path, production=True))
    check_production_safety(Settings(data_dir=tmp_path, production=True, insecure_dev=True))
    check_production_safety(Settings(data_dir=tmp_path, production=True, auth_mode="jwt", jwt_secret=SECRET))


def test_misconfigured_auth_is_a_startup_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="ATHENA_API_KEYS"):
        create_app(Settings(data_dir=tmp_path, auth_mode="api_key"))
    with pytest.raises(ValueError, match="JWT"):
        create_app(Settings(data_dir=tmp_path, auth_mode="jwt"))
    with pytest.raises(ValueError, match="key:tenant"):
        create_app(Settings(data_dir=tmp_path, auth_mode="api_key", api_keys="justakey"))


def test_the_admin_route_needs_the_admin_role(secured: TestClient, monkeypatch) -> None:
    from athena_tasks.analytics import communities

    class Sent:
        id = "task-123"

    monkeypatch.setattr(communities.run_community_analytics, "delay", lambda: Sent())
    trigger = "/api/v1/admin/analytics/trigger"
    assert secured.post(trigger).status_code == 401
    assert secured.post(trigger, headers=bearer(token("tenant-a"))).status_code == 403
    assert secured.post(trigger, headers={"X-API-Key": "svc-key-a"}).status_code == 403
    admin_jwt = bearer(token("ops", roles=["admin"]))
    assert secured.post(trigger, headers=admin_jwt).json() == {"task_id": "task-123"}
    response = secured.post(trigger, headers={"X-API-Key": "admin-key"})
    assert response.status_code == 202 and response.json()["task_id"] == "task-123"
