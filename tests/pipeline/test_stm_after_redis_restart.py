"""Issue 12 item 5: a Redis restarted from its AOF must not serve a stale STM window (SPEC S3).

A private redis-server (temp dir, random port, AOF on) is the runtime's Redis. Events written while it is
down reach the log (201) but not the window; the restarted server restores the old list from the AOF. The
window must then show every event, and never claim `redis` for a stale list. Also the push script's dedupe.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from athena_core.models.events import Event, EventRole, EventType
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import build_runtime
from athena_core.wiring.settings import Settings
from athena_core.stm.stm_window import StmWindow, stm_key
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from tests.pipeline.test_durability import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
pytestmark = pytest.mark.skipif(not os.path.exists(REDIS_SERVER), reason="no redis-server binary")


class PrivateRedis:
    """A redis-server of this test only: same port and directory across restarts, AOF fsynced always."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                pass
            assert time.monotonic() < deadline, "private redis-server did not start"
            time.sleep(0.02)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = PrivateRedis(directory)
    server.start()
    yield server
    server.stop()


def test_events_written_while_redis_was_down_show_after_its_aof_restart(tmp_path: Path, private_redis) -> None:
    from athena_api.app import create_app

    settings = Settings(data_dir=tmp_path / "data", redis_url=private_redis.url)
    runtime = build_runtime(settings)
    try:
        with TestClient(create_app(runtime=runtime)) as api:
            api.app.state.ingest.request_pipeline = lambda scope: None  # no worker here: the window is the test
            tenant = f"t-{uuid.uuid4().hex[:10]}"
            r = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "agent_id": "a1"})
            assert r.status_code == 201, r.text
            sid = r.json()["session_id"]
            before = [api.post(f"/api/v1/sessions/{sid}/events", json={"type": "message", "content": f"before {i}"}) for i in range(3)]
            assert [r.status_code for r in before] == [201] * 3
            assert api.get(f"/api/v1/sessions/{sid}/context").json()["stm_source"] == "redis"

            private_redis.kill()
            during = [api.post(f"/api/v1/sessions/{sid}/events", json={"type": "message", "content": f"during {i}"}) for i in range(2)]
            assert [r.status_code for r in during] == [201] * 2  # durable in the log; the push failed

            private_redis.start()  # same port and dir: the AOF restores the 3-event list
            restored = redis.Redis.from_url(private_redis.url).lrange(
                stm_key(AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1")), 0, -1)
            assert len(restored) == 3, "the AOF should have restored the pre-outage window"

            context = api.get(f"/api/v1/sessions/{sid}/context").json()
            contents = [e["content"] for e in context["stm_events"]]
            assert contents == ["before 0", "before 1", "before 2", "during 0", "during 1"]
            assert context["stm_source"] == "rebuilt"

            # The rebuilt window is stored: the next read is Redis again, and new pushes land on it once.
            after = api.post(f"/api/v1/sessions/{sid}/events", json={"type": "message", "content": "after"})
            assert after.status_code == 201
            context = api.get(f"/api/v1/sessions/{sid}/context").json()
            assert context["stm_source"] == "redis"
            assert [e["content"] for e in context["stm_events"]][-2:] == ["during 1", "after"]
            assert len(context["stm_events"]) == 6
    finally:
        runtime.close()


def _event(scope: AgentScope, content: str, **metadata: str) -> Event:
    from athena_core.ids import new_id

    now = datetime.now(timezone.utc)
    return Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id, agent_id=scope.agent_id,
                 session_id="ses_x", role=EventRole.system,
                 type=EventType.observation if metadata else EventType.message,
                 content=content, metadata=metadata, timestamp=now, received_at=now)


def test_push_script_skips_an_event_already_in_the_window(tmp_path: Path, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    documents = SqliteDocuments(tmp_path / "docs.sqlite3")
    stm = StmWindow(client, documents, window=10, ttl_s=60)
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="u1", agent_id="a1")
    try:
        first, second = _event(scope, "one"), _event(scope, "two")
        assert stm.push(scope, first) == 1
        assert stm.push(scope, second) == 1
        assert stm.push(scope, first) == 0  # already a slot's event_id: not pushed again
        assert stm.push(scope, second) == 0
        assert client.llen(stm_key(scope)) == 2

        # a coalesced observation is found by the head's last_event_id
        obs1, obs2 = _event(scope, "step 1", execution_id="x1"), _event(scope, "step 2", execution_id="x1")
        assert stm.push(scope, obs1) == 1
        assert stm.push(scope, obs2) == 2
        assert stm.push(scope, obs2) == 0
        head = stm.redis.lindex(stm_key(scope), 0)
        assert b'"coalesced_count":2' in head and b'"content":"step 2"' in head
        assert client.llen(stm_key(scope)) == 3

        # an id mentioned in another event's content is not mistaken for that event
        third = _event(scope, "three")
        assert stm.push(scope, _event(scope, f'a quote: event_id":"{third.event_id}"')) == 1  # JSON-escaped
        assert stm.push(scope, third) == 1
    finally:
        client.delete(stm_key(scope))
        documents.close()


def test_a_window_missing_the_newest_logged_event_is_rebuilt(tmp_path: Path, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    documents = SqliteDocuments(tmp_path / "docs.sqlite3")
    stm = StmWindow(client, documents, window=10, ttl_s=60)
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="u1", agent_id="a1")
    try:
        pushed, missed = _event(scope, "pushed"), _event(scope, "missed")
        documents.append_events([pushed, missed])
        stm.push(scope, pushed)  # `missed` is in the log, not the window (a failed push)
        slots, source = stm.read(scope)
        assert source == "rebuilt" and [s.content for s in slots] == ["pushed", "missed"]
        stm.push(scope, missed)  # a late push after the rebuild adds nothing
        slots, source = stm.read(scope)
        assert source == "redis" and [s.content for s in slots] == ["pushed", "missed"]
    finally:
        client.delete(stm_key(scope))
        documents.close()
