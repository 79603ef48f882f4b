"""Per-tenant admission (SPEC S10): a request rate limit (Redis, atomic) and a pending-backlog bound.

Both answer 429 with Retry-After. The rate limit is a one-second fixed window counted by one Lua call,
so every API process shares it. The backlog bound protects the workers: when a tenant's unconsolidated
events exceed it, writes wait; the count is cached for a second per process so it costs one query a
second per tenant, not one per request.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import anyio.to_thread
import redis

from athena_api.errors import store_unavailable
from athena_core.stores.documents.port import EventLog
from athena_core.wiring.redis_keys import rate_key

WINDOW_SCRIPT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], 2) end
return n
"""


@dataclass(frozen=True)
class Refusal:
    reason: str
    retry_after_s: int


class TenantAdmission:
    def __init__(self, client: redis.Redis, documents: EventLog, *, rate_per_s: int, max_pending: int) -> None:
        self.redis = client
        self.documents = documents
        self.rate_per_s = rate_per_s
        self.max_pending = max_pending
        self._window = client.register_script(WINDOW_SCRIPT)
        self._backlog_cache: dict[str, tuple[float, int]] = {}

    def check_rate(self, tenant_id: str) -> Refusal | None:
        if self.rate_per_s <= 0:
            return None
        try:
            count = int(self._window(keys=[rate_key(tenant_id, int(time.time()))]))
        except redis.RedisError:
            return None  # fail open: availability of writes beats an exact limit during a Redis outage
        if count > self.rate_per_s:
            return Refusal(f"tenant rate limit of {self.rate_per_s} requests/s exceeded", 1)
        return None

    def check_backlog(self, tenant_id: str) -> Refusal | None:
        if self.max_pending <= 0:
            return None
        now = time.monotonic()
        cached = self._backlog_cache.get(tenant_id)
        if cached is None or now - cached[0] > 1.0:
            cached = (now, self.documents.count_pending_for_tenant(tenant_id, self.max_pending + 1))
            self._backlog_cache[tenant_id] = cached
        return self._backlog_refusal(cached[1])

    async def check_backlog_async(self, tenant_id: str) -> Refusal | None:
        """`check_backlog` for async routes: the cached answer on the event loop, the count (once a second
        per tenant) in a worker thread, so the loop never waits on a slow COUNT."""
        if self.max_pending <= 0:
            return None
        cached = self._backlog_cache.get(tenant_id)
        if cached is None or time.monotonic() - cached[0] > 1.0:
            try:
                return await anyio.to_thread.run_sync(self.check_backlog, tenant_id)
            except Exception as exc:  # noqa: BLE001 - the event log does not answer: nothing was accepted
                raise store_unavailable() from exc
        return self._backlog_refusal(cached[1])

    def _backlog_refusal(self, pending: int) -> Refusal | None:
        if pending > self.max_pending:
            return Refusal(f"tenant backlog above {self.max_pending} unconsolidated events; retry later", 5)
        return None
