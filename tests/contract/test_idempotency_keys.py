"""DocumentStore contract, idempotency keys (SPEC S2), on every adapter of test_document_store.py."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from athena_core.models.scope import UserScope
from athena_core.stores.documents.port import DocumentStore
from tests.contract.test_document_store import store  # noqa: F401 - the adapters fixture (SQLite, mongomock, Mongo)

# Wall-clock now: a real MongoDB (and mongomock) TTL index expires records by the real clock
NOW = datetime.now(timezone.utc).replace(microsecond=250000)
DAY = 86400


def test_first_claim_records_the_plan_and_later_claims_return_it(store: DocumentStore) -> None:  # noqa: F811
    first = store.claim_idempotency_key("t1", "u1", "key-1", "hash-a", ["evt_1", "evt_2"], NOW, ttl_s=DAY)
    assert (first.tenant_id, first.user_id, first.key, first.request_hash, first.event_ids) == (
        "t1", "u1", "key-1", "hash-a", ["evt_1", "evt_2"])
    assert first.created_at == NOW

    later = NOW + timedelta(hours=23)
    again = store.claim_idempotency_key("t1", "u1", "key-1", "hash-a", ["evt_9", "evt_8"], later, ttl_s=DAY)
    assert again.event_ids == ["evt_1", "evt_2"] and again.created_at == NOW
    other_body = store.claim_idempotency_key("t1", "u1", "key-1", "hash-b", ["evt_7"], later, ttl_s=DAY)
    assert other_body.request_hash == "hash-a" and other_body.event_ids == ["evt_1", "evt_2"]  # caller says 422


def test_keys_are_per_tenant(store: DocumentStore) -> None:  # noqa: F811
    a = store.claim_idempotency_key("t1", "u1", "shared", "hash-a", ["evt_a"], NOW, ttl_s=DAY)
    b = store.claim_idempotency_key("t2", "u1", "shared", "hash-b", ["evt_b"], NOW, ttl_s=DAY)
    assert a.event_ids == ["evt_a"] and b.event_ids == ["evt_b"] and b.request_hash == "hash-b"


def test_an_expired_key_starts_fresh(store: DocumentStore) -> None:  # noqa: F811
    store.claim_idempotency_key("t1", "u1", "old", "hash-a", ["evt_1"], NOW, ttl_s=DAY)
    after = NOW + timedelta(seconds=DAY + 1)
    fresh = store.claim_idempotency_key("t1", "u1", "old", "hash-b", ["evt_2"], after, ttl_s=DAY)
    assert (fresh.request_hash, fresh.event_ids, fresh.created_at) == ("hash-b", ["evt_2"], after)
    assert store.claim_idempotency_key("t1", "u1", "old", "hash-c", ["evt_3"], after, ttl_s=DAY).event_ids == ["evt_2"]


def test_purge_deletes_the_users_keys_only(store: DocumentStore) -> None:  # noqa: F811
    store.claim_idempotency_key("t1", "u1", "k", "hash-a", ["evt_1"], NOW, ttl_s=DAY)
    store.claim_idempotency_key("t1", "u2", "k2", "hash-a", ["evt_2"], NOW, ttl_s=DAY)
    counts = store.delete_user(UserScope(tenant_id="t1", user_id="u1"))
    assert counts["idempotency_keys"] == 1
    assert store.claim_idempotency_key("t1", "u1", "k", "hash-z", ["evt_9"], NOW, ttl_s=DAY).event_ids == ["evt_9"]
    assert store.claim_idempotency_key("t1", "u2", "k2", "hash-z", ["evt_9"], NOW, ttl_s=DAY).event_ids == ["evt_2"]


def test_expired_sqlite_rows_are_deleted_lazily(tmp_path) -> None:
    from athena_core.stores.documents import sqlite_documents
    from athena_core.stores.documents.sqlite_documents import SqliteDocuments

    docs = SqliteDocuments(tmp_path / "docs.sqlite3")
    try:
        for i in range(5):
            docs.claim_idempotency_key("t1", "u1", f"k{i}", "h", [f"evt_{i}"], NOW, ttl_s=DAY)
        docs._idempotency_swept_at = 0.0  # the next claim is due to sweep (at most once a minute otherwise)
        docs.claim_idempotency_key("t1", "u1", "new", "h", ["evt_n"], NOW + timedelta(days=2), ttl_s=DAY)
        assert [r[0] for r in docs._conn().execute("SELECT key FROM idempotency_keys")] == ["new"]
        assert sqlite_documents.IDEMPOTENCY_SWEEP_EVERY_S >= 1
    finally:
        docs.close()
