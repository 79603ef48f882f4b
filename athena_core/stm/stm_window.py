"""The STM window (SPEC S3): newest `STM_WINDOW` slots per agent scope in a Redis list, newest first.

The window is a view. The event log is written first and is the system of record, so a missing key
(TTL expiry, Redis restart) is rebuilt from the log by replaying the same coalescing rule in Python.
"""
from __future__ import annotations

import logging
from importlib import resources

import redis

from athena_core.observability import metrics
from athena_core.models.events import Event, EventType, WindowEvent
from athena_core.models.scope import AgentScope
from athena_core.stores.documents.port import EventLog
from athena_core.wiring.redis_keys import stm_key

log = logging.getLogger(__name__)

PUSH_SCRIPT = resources.files("athena_core.stm").joinpath("push_window.lua").read_text()
REBUILD_LOOKBACK = 20  # raw events read per window slot when rebuilding (coalesced runs need more)


def coalesces_into(head: WindowEvent, new: WindowEvent) -> bool:
    """The door's coalescing rule (mirrors push_window.lua): same execution step of observations."""
    execution_id = new.metadata.get("execution_id", "")
    step_id = new.metadata.get("step_id", "")
    return (
        new.type == EventType.observation
        and execution_id != ""
        and head.type == EventType.observation
        and head.metadata.get("execution_id") == execution_id
        and (step_id == "" or step_id == head.metadata.get("step_id", ""))
    )


def apply_to_window(slots: list[WindowEvent], new: WindowEvent, window: int) -> list[WindowEvent]:
    """Pure form of the Lua script: `slots` newest first; returns the new slots, newest first."""
    if slots and coalesces_into(slots[0], new):
        head = slots[0]
        merged = head.model_copy(
            update={
                "content": new.content,
                "timestamp": new.timestamp,
                "metadata": {**head.metadata, **new.metadata},
                "coalesced_count": head.coalesced_count + 1,
                "last_event_id": new.event_id,
            }
        )
        return [merged, *slots[1:]]
    return [new, *slots][:window]


def window_from_events(events_oldest_first: list[Event], window: int) -> list[WindowEvent]:
    slots: list[WindowEvent] = []
    for event in events_oldest_first:
        slots = apply_to_window(slots, WindowEvent.from_event(event), window)
    return slots


class StmWindow:
    """Pushes events into, and reads them back from, the per-agent-scope Redis window."""

    def __init__(self, client: redis.Redis, documents: EventLog, window: int = 10, ttl_s: int = 7200):
        self.redis = client
        self.documents = documents
        self.window = window
        self.ttl_s = ttl_s
        self._push = client.register_script(PUSH_SCRIPT)

    def push(self, scope: AgentScope, event: Event) -> int:
        """Coalesce-or-push one durable event; returns the head slot's coalesced_count, or 0 when the
        event is already in the window (the push is idempotent: retries and rebuild races are safe)."""
        slot = WindowEvent.from_event(event).model_dump_json()
        return int(self._push(keys=[stm_key(scope)], args=[slot, self.window, self.ttl_s, event.event_id]))

    def push_many(self, pushes: list[tuple[AgentScope, Event]]) -> list[int | Exception]:
        """`push` for several events in one Redis round trip (a pipeline, in order); a failed push is
        returned as its exception in its place, so one bad script call does not hide the others."""
        calls = [(stm_key(scope), WindowEvent.from_event(event).model_dump_json(), event.event_id)
                 for scope, event in pushes]
        for _ in range(2):  # EVALSHA by itself (no SCRIPT EXISTS round trip); once more after a NOSCRIPT
            pipe = self.redis.pipeline(transaction=False)
            for key, slot, event_id in calls:
                pipe.evalsha(self._push.sha, 1, key, slot, self.window, self.ttl_s, event_id)
            results = pipe.execute(raise_on_error=False)
            if not any(isinstance(r, redis.exceptions.NoScriptError) for r in results):
                break
            self._push.sha = self.redis.script_load(PUSH_SCRIPT)  # a restarted Redis forgot the script
        return results

    def read(self, scope: AgentScope, limit: int | None = None) -> tuple[list[WindowEvent], str]:
        """Chronological window and where it came from: `redis`, `rebuilt`, or `event_log` (Redis down).

        A window that exists but misses the scope's newest logged event is stale — Redis restarted from
        an AOF older than writes made during its outage, or a push failed — and is rebuilt from the log.
        The check costs one indexed LIMIT 1 query on (scope, timestamp, event_id). (A client backfilling
        more than a window of events older than the newest one makes reads rebuild until it stops: the
        rebuilt window holds the newest events by timestamp, which is what the window means.)
        """
        limit = self.window if limit is None else min(limit, self.window)
        try:
            raw = self.redis.lrange(stm_key(scope), 0, self.window - 1)
        except redis.RedisError as exc:
            log.warning("STM read failed, serving the window from the event log: %s", exc)
            slots = self._slots_from_log(scope)
            metrics.STM_REBUILDS.labels("event_log").inc()
            return list(reversed(slots[:limit])), "event_log"
        if raw:
            slots = [WindowEvent.model_validate_json(item) for item in raw]
            if self._holds_newest(scope, slots):
                return list(reversed(slots[:limit])), "redis"
            log.warning("STM window of %s misses the newest logged event; rebuilding it from the log", scope.key)
        slots = self.rebuild(scope)
        metrics.STM_REBUILDS.labels("rebuilt").inc()
        return list(reversed(slots[:limit])), "rebuilt"

    def _holds_newest(self, scope: AgentScope, slots: list[WindowEvent]) -> bool:
        """The log's newest event of the scope is in the window (a slot's event_id or last_event_id)."""
        newest = self.documents.recent_events(scope, 1)
        if not newest:
            return True
        wanted = newest[0].event_id
        return any(wanted in (s.event_id, s.last_event_id) for s in slots)

    def _slots_from_log(self, scope: AgentScope) -> list[WindowEvent]:
        recent = self.documents.recent_events(scope, self.window * REBUILD_LOOKBACK)
        return window_from_events(list(reversed(recent)), self.window)

    def rebuild(self, scope: AgentScope) -> list[WindowEvent]:
        """Recreate a missing window from the event log (newest first) and store it with a fresh TTL."""
        slots = self._slots_from_log(scope)
        if slots:
            key = stm_key(scope)
            pipe = self.redis.pipeline(transaction=True)
            pipe.delete(key)
            pipe.rpush(key, *[s.model_dump_json() for s in slots])
            pipe.expire(key, self.ttl_s)
            pipe.execute()
        return slots

    def clear(self, scope: AgentScope) -> None:
        self.redis.delete(stm_key(scope))
