"""Scale-out (issue 15): the pipeline queue served by four worker processes consolidates every event exactly once.

A real prefork Celery worker (`-c 4`: four processes) on a private redis-server and its own data dir, no
in-process worker. Twelve scopes (six users with two agents each, so two scopes share each user's write
lock) receive events in two waves; after each wave two runs of every scope are published at once, so
runs of one scope race each other on different processes (the segment lock must order them) and runs of
one user's two agents race on the user's write lock. Then idle-flush runs consolidate the open segments.
Afterwards: every event is consolidated into exactly one chain (the chains' event lists are disjoint and
cover every consolidated event, each event's `chain_id` is the chain that lists it), nothing is pending,
every event and chain is indexed, and the worker log shows that more than one process did the work.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from celery import Celery, chain

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventStatus, EventType, utc_now
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.wiring.runtime import build_runtime
from athena_core.wiring.settings import Settings
from tests.pipeline.test_durability import free_port
from tests.pipeline.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
TOPICS = [
    ("the Lisbon rail trip in April", "Book the Alfa Pendular early and keep a free day for the coast."),
    ("the sourdough starter that went flat", "Feed it twice a day at room temperature for three days."),
    ("our Postgres replication lag", "Check pg_stat_replication and the standby's disk throughput first."),
    ("the half marathon training plan", "Keep most runs easy and add one tempo run each week."),
]
STEPS = ("athena.pipeline.coalesce", "athena.pipeline.segment", "athena.pipeline.summarize", "athena.pipeline.embed")

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


def _wave(scope: AgentScope, session_id: str, wave: int, t0) -> list[Event]:
    """Two topics per wave, three interactions each: user messages that break topic between them."""
    events = []
    for k, (topic, advice) in enumerate(TOPICS[(wave * 2) % 4:(wave * 2) % 4 + 2]):
        for turn in range(3):
            at = t0 + timedelta(hours=wave * 3 + k, minutes=2 * turn)
            for j, (role, text) in enumerate([(EventRole.user, f"About {topic} ({scope.agent_id}): step {turn}?"),
                                              (EventRole.agent, f"{advice} Step {turn}.")]):
                events.append(Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                                    agent_id=scope.agent_id, session_id=session_id, role=role,
                                    type=EventType.message, content=text, metadata={},
                                    timestamp=at + timedelta(seconds=j), received_at=utc_now()))
    return events


def answers(client) -> bool:  # noqa: ANN001
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


def test_four_worker_processes_consolidate_every_event_exactly_once(tmp_path: Path) -> None:
    port = free_port()
    redis_proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    data_dir = tmp_path / "data"
    log_path = tmp_path / "worker.log"
    env = {**os.environ, "ATHENA_DATA_DIR": str(data_dir), "ATHENA_REDIS_URL": url, "ATHENA_SEGMENT_IDLE_S": "0",
           "ATHENA_INDEX_SHARDS": "4", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    worker = None
    runtime = None
    try:
        settings = Settings(data_dir=data_dir, redis_url=url)
        runtime = build_runtime(settings)  # the test's own view of the stores (and the schema, created once)
        wait_until(lambda: answers(runtime.redis), 10)  # the server may not listen yet: refused is "not yet"
        with log_path.open("w") as log_file:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "athena_tasks.app", "worker", "-Q", "athena.pipeline",
                 "-c", "4", "-P", "prefork", "-n", f"scaleout-{uuid.uuid4().hex[:6]}@%h", "-l", "info"],
                cwd=REPO, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(lambda: re.search(r"\bready\.", log_path.read_text(errors="replace")) or worker.poll() is not None,
                   120)
        assert worker.poll() is None, log_path.read_text(errors="replace")[-3000:]

        client = Celery("scale-out-test", broker=url)
        client.conf.task_default_queue = "athena.pipeline"

        def run(scope: AgentScope, flush: bool) -> None:
            opts = {"ignore_result": True, "queue": "athena.pipeline"}
            chain(client.signature(STEPS[0], args=(scope.key, flush), options=opts),
                  *(client.signature(s, options=opts) for s in STEPS[1:])).apply_async()

        tenant = f"t-{uuid.uuid4().hex[:8]}"
        scopes = [AgentScope(tenant_id=tenant, user_id=f"u{i}", agent_id=f"a{j}") for i in range(6) for j in range(2)]
        sessions = {}
        for scope in scopes:
            sessions[scope.key] = new_id("ses")
            runtime.documents.create_session(Session(session_id=sessions[scope.key], tenant_id=scope.tenant_id,
                                                     user_id=scope.user_id, agent_id=scope.agent_id, metadata={},
                                                     created_at=utc_now()))
        t0 = utc_now() - timedelta(days=2)
        all_ids: set[str] = set()
        for wave in range(2):
            for scope in scopes:
                events = _wave(scope, sessions[scope.key], wave, t0)
                runtime.documents.append_events(events)
                all_ids |= {e.event_id for e in events}
            for scope in scopes:  # two runs per scope at once: they race on the scope's segment lock
                run(scope, False)
                run(scope, False)
            for shard in range(4):
                client.send_task("athena.pipeline.index_events", args=(shard,), queue="athena.pipeline")

        flushed_at: dict[str, float] = {}

        def drained() -> bool:
            pending = [s for s in scopes if runtime.documents.count_events(s, EventStatus.pending)]
            for scope in pending:  # idle flush of the open segments, asked again every few seconds
                if time.monotonic() - flushed_at.get(scope.key, 0.0) > 5.0:
                    flushed_at[scope.key] = time.monotonic()
                    run(scope, True)
            time.sleep(0.2)
            return not pending

        wait_until(drained, 180)
        user_scopes = {s.user_scope for s in scopes}
        wait_until(lambda: all(not runtime.documents.unindexed_events(u, 1) and not runtime.documents.unindexed_chains(u, 1)
                               for u in user_scopes), 120)

        chains = [c for u in user_scopes for c in runtime.documents.recent_chains(u, limit=10_000, status=None)]
        listed = [e for c in chains for e in c.event_ids]
        assert len(listed) == len(set(listed)), "an event is in two chains (or twice in one)"
        assert len({c.chain_id for c in chains}) == len(chains)
        stored = [e for u in user_scopes for e in runtime.documents.get_events(u, sorted(all_ids))]
        assert {e.event_id for e in stored} == all_ids
        assert {e.status for e in stored} <= {EventStatus.consolidated, EventStatus.rejected}
        consolidated = {e.event_id: e.chain_id for e in stored if e.status == EventStatus.consolidated}
        assert set(listed) == set(consolidated), "chains and event statuses disagree"
        owner = {e: c.chain_id for c in chains for e in c.event_ids}
        assert all(owner[e] == chain_id for e, chain_id in consolidated.items())
        for c in chains:  # a chain holds one scope's events, in time order: no run cut another's segment
            members = [e for e in stored if e.event_id in set(c.event_ids)]
            assert len({(e.user_id, e.agent_id) for e in members}) >= 1
            times = [e.timestamp for e in sorted(members, key=lambda e: c.event_ids.index(e.event_id))]
            assert times == sorted(times)
        assert sum(runtime.vectors.count(u) for u in user_scopes) == len([c for c in chains if c.status.value == "active"])
        worker_log = log_path.read_text(errors="replace")
        assert "Traceback" not in worker_log, worker_log[worker_log.index("Traceback") - 500:][:3000]
        processes = set(re.findall(r"ForkPoolWorker-(\d+)\] Task athena\.pipeline\.", log_path.read_text(errors="replace")))
        assert len(processes) >= 2, f"only {processes} ran pipeline tasks"
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, 15)
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, 9)
        if runtime is not None:
            runtime.close()
        redis_proc.terminate()
        redis_proc.wait(10)
