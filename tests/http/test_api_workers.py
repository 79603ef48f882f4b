"""Two API processes on one data dir (ATHENA_API_WORKERS=2, issue 16): both serve, their SQLite commits
queue on the WAL lock instead of failing, they share the supervisor's embedded Redis, and every event
answered 201 is in the log."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil

from athena_core.models.scope import AgentScope
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from athena_core.wiring.embedded_redis import socket_path
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from athena_devtools.engine_servers import free_port as _free_port


def _cmdline(process: psutil.Process) -> str:
    """A child's command line; "" for one that has already exited (a zombie the supervisor has not reaped
    yet, seen once in CI: `cmdline()` raised ZombieProcess), which is not a serving worker."""
    try:
        return " ".join(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return ""


def test_two_api_processes_accept_concurrent_posts_and_every_201_is_in_the_log(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", redis_url=None, api_port=_free_port(), api_workers=2)
    stack = Stack(settings=settings, with_beat=False, extra_env={"ATHENA_AUTH_MODE": "off"})
    try:
        stack.reset_metrics()
        stack.start_redis()  # the supervisor's embedded Redis, passed to both workers as ATHENA_REDIS_URL
        stack.start_api()
        stack.wait_for_api(60.0)
        api = psutil.Process(stack.processes["api"].pid)
        workers = [p for p in api.children() if "spawn_main" in _cmdline(p)]
        assert len(workers) == 2, [_cmdline(p) for p in api.children()]
        base = stack.base_url
        sessions = [httpx.post(f"{base}/api/v1/sessions", json={"tenant_id": "t", "user_id": f"u{i}"}).json()
                    ["session_id"] for i in range(4)]

        def post(n: int) -> tuple[int, list[str]]:
            with httpx.Client(base_url=base, timeout=30.0) as client:  # a connection per task: both workers serve
                sid = sessions[n % len(sessions)]
                if n % 2:
                    r = client.post(f"/api/v1/sessions/{sid}/events", json={"type": "message", "content": f"e{n}"})
                    return r.status_code, [r.json()["event_id"]] if r.status_code == 201 else []
                r = client.post(f"/api/v1/sessions/{sid}/events:batch",
                                json={"events": [{"type": "message", "content": f"b{n}-{i}"} for i in range(10)]})
                return r.status_code, r.json()["event_ids"] if r.status_code == 201 else []

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(post, range(64)))
        assert {status for status, _ in answers} == {201}
        ids = [i for _, got in answers for i in got]
        assert len(ids) == 32 + 32 * 10
        sock = str(socket_path(settings.data_dir))
        redis_servers = [p for p in psutil.process_iter(["cmdline"]) if sock in " ".join(p.info["cmdline"] or [])]
        assert len(redis_servers) == 1  # the supervisor's; no worker started an embedded Redis of its own
    finally:
        stack.stop()
    documents = SqliteDocuments(settings.data_dir / "athena.sqlite3")
    try:
        held = [e.event_id for i in range(4)
                for e in documents.get_events(AgentScope(tenant_id="t", user_id=f"u{i}").user_scope, ids)]
        assert sorted(held) == sorted(ids)
    finally:
        documents.close()
