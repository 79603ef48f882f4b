"""The purge fence (SPEC S7.4): once a user is purged, no task that started before the purge may write.

A purge first records its time under `fence:purged:{tenant}:{user}` (kept `ATHENA_PURGE_FENCE_TTL_S`,
far longer than any task with its retries can live), then takes the user's write lock, so a formation,
an indexing run or a promotion that is mid-write finishes before anything is deleted. Every task that
writes a user's memory takes the same lock and, inside it, asks `purged_since(its start)`: a run whose
snapshot predates the purge writes nothing. Runs started after the purge (new events of a new session
of that user) are not fenced.
"""
from __future__ import annotations

import redis

from athena_core.models.scope import UserScope
from athena_core.wiring.redis_keys import fence_key, user_write_lock_name

__all__ = ["fence_key", "fence_user", "purged_since", "user_write_lock_name"]


def fence_user(client: redis.Redis, scope: UserScope, at: float, ttl_s: int) -> None:
    """Record that the user was purged at `at` (epoch seconds)."""
    client.set(fence_key(scope), repr(at), ex=ttl_s)


def purged_since(client: redis.Redis, scope: UserScope, started_at: float) -> bool:
    """True when the user was purged at or after `started_at`: a task that began then must not write."""
    value = client.get(fence_key(scope))
    return value is not None and float(value) >= started_at
