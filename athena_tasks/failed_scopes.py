"""Sweeps isolate per scope (SPEC S2: no one scope's bad row may stop a sweep for other scopes).

Two kinds of trouble, each told to operators once (a dead letter with a readable reason), never every tick:
- a row of the event log whose ids cannot make a scope (stored before the door checked them, or written
  around the API): skipped by every sweep, recorded once (`bad_row`);
- a scope whose pipeline run failed for good (retries exhausted, or a permanent error): `AthenaTask`
  marks it failed in Redis for `ATHENA_FAILED_SCOPE_BACKOFF_S`; idle-flush, the pending sweep and the
  index sweep skip it until the mark expires (new events of the scope still ask for runs as usual).
"""
from __future__ import annotations

import hashlib
import logging

import redis

from athena_core.observability import metrics
from athena_core.models.scope import UserScope
from athena_core.stores.documents.port import DocumentStore
from athena_core.wiring.redis_keys import bad_row_key, failed_key

log = logging.getLogger(__name__)

BAD_ROW_MEMORY_S = 30 * 24 * 3600  # a bad row is reported again at most monthly


def scope_key_of(args: tuple | list) -> str | None:
    """The scope a pipeline task works on: `coalesce(scope_key)`, later steps `step({"scope": …})`,
    the index step `index_user(tenant, user)` (a user key `tenant:user`)."""
    if not args:
        return None
    first = args[0]
    if isinstance(first, dict) and isinstance(first.get("scope"), str):
        return first["scope"]
    if isinstance(first, str) and first.count(":") == 2:
        return first
    return None


def user_scope_of(scope_key: str | None) -> UserScope | None:
    """The user a dead letter belongs to (a purge deletes it), when the key forms a scope."""
    if scope_key is None:
        return None
    try:
        tenant_id, user_id = scope_key.split(":")[:2]
        return UserScope(tenant_id=tenant_id, user_id=user_id)
    except ValueError:  # pydantic's ValidationError included
        return None


def mark_failed(client: redis.Redis, scope_key: str, reason: str, backoff_s: int) -> None:
    if backoff_s > 0:
        client.set(failed_key(scope_key), reason[:1000], ex=backoff_s)


def recently_failed(client: redis.Redis, scope_keys: list[str]) -> set[str]:
    """Which of these scopes are inside their failure backoff (one round trip)."""
    if not scope_keys:
        return set()
    flags = client.mget([failed_key(k) for k in scope_keys])
    return {k for k, flag in zip(scope_keys, flags) if flag is not None}


class BadRowReporter:
    """The `on_invalid` callback of the operator sweeps: log, count, and dead-letter a bad row once."""

    def __init__(self, client: redis.Redis, documents: DocumentStore, sweep: str) -> None:
        self.redis = client
        self.documents = documents
        self.sweep = sweep
        self.skipped = 0

    def __call__(self, ids: tuple, error: Exception) -> None:
        self.skipped += 1
        metrics.SWEEP_BAD_ROWS.labels(self.sweep).inc()
        digest = hashlib.sha256(repr(ids).encode("utf-8", "backslashreplace")).hexdigest()[:24]
        reason = (f"{self.sweep}: event-log row with ids {ids!r} cannot form a scope and is skipped: "
                  f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
        try:
            if not self.redis.set(bad_row_key(digest), "1", nx=True, ex=BAD_ROW_MEMORY_S):
                return  # reported already
            log.error(reason)
            self.documents.record_dead_letter(f"athena.beat.{self.sweep}", f"bad-row:{digest}",
                                              {"ids": [str(i) for i in ids]}, reason)
        except Exception:  # noqa: BLE001 - reporting must never stop the sweep
            log.exception("could not record the bad row %r", ids)
