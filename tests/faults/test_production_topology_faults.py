"""Worker and Redis faults on the production topology (issue 17 item 3; SPEC S3, S7): nothing accepted is lost.

The topology of tests/production/test_production_faults.py (one API, one pipeline worker, the beat-queue
worker and beat on SecantusDB + Milvus 2.3.5 + a private Redis 7, `athena_devtools.production_stack`):

- the pipeline worker SIGKILLed while a summarize task of a chain runs, then started again: the broker
  redelivers that task (late acks; the visibility timeout is 5 s here), every event is consolidated into
  exactly one chain (no chain duplicated by the re-run) and nothing accepted is lost;
- the private Redis 7 SIGKILLed and started empty (its append-only files removed: a Redis whose data is
  gone), with the STM window, the locks and the broker's queued tasks in it: GetContext rebuilds the window
  from the event log, and the pipeline resumes (the pending sweep re-enqueues what the lost queue held).

Each takes far longer than `make test`'s 10 s budget per test (one run at load ~12 on 2 cores: stack start
13 s, the worker kill 88 s, of which the restarted worker's cold model load ~28 s and the visibility wait
6 s; the Redis restart 29 s), so they run in `make faults` only (it sets ATHENA_FAULTS_SCALE);
`ATHENA_FAULTS_SCALE=1 pytest tests/faults/test_production_topology_faults.py` runs them alone.
"""
from __future__ import annotations

import os
import re
import signal
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import build_documents
from athena_devtools.production_stack import ProductionStack
from tests.production.test_production_faults import FAST, _read_from, _session, _wait_drained

pytestmark = [
    pytest.mark.slow, pytest.mark.timeout(600),
    pytest.mark.skipif(not os.environ.get("ATHENA_FAULTS_SCALE"),
                       reason="topology fault runs take minutes: `make faults` runs them (ATHENA_FAULTS_SCALE set)"),
]


VISIBILITY_S = 5


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[ProductionStack]:
    # A worker's first scan for unacked messages runs as it starts (then only every ~100 s: kombu scans on one
    # restore call in 10, every 10 s): the test starts the new worker once the killed task's 5 s are over.
    env = {**FAST, "ATHENA_BROKER_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S)}
    with ProductionStack(tmp_path_factory.mktemp("topology-faults"), apis=1, pipeline_workers=1,
                         with_flower=False, extra_env=env) as running:
        yield running


def _batch(topics: list[str], per_topic: int, start: datetime) -> list[dict]:
    """User/agent turns, `per_topic` per topic, one minute apart (explicit timestamps: a stable order)."""
    return [{"role": "user" if i % 2 == 0 else "agent", "type": "message",
             "timestamp": (start + timedelta(minutes=i)).isoformat(),
             "content": f"{topics[i // per_topic]}: note {i} with detail {uuid.uuid4().hex[:6]}"}
            for i in range(per_topic * len(topics))]


def _post_batch(stack: ProductionStack, session_id: str, events: list[dict]) -> list[str]:
    response = httpx.post(f"{stack.api_urls[0]}/api/v1/sessions/{session_id}/events:batch",
                          json={"events": events}, timeout=60)
    assert response.status_code == 201, response.text
    return response.json()["event_ids"]


def test_production_faults_pipeline_worker_sigkilled_mid_chain_is_redelivered_without_a_duplicate_chain(
        stack) -> None:
    session_id, scope = _session(stack)
    worker_log = stack.work_dir / "logs" / "pipeline1.log"
    offset = worker_log.stat().st_size
    event_ids = _post_batch(stack, session_id, _batch(
        ["Kafka consumer lag on the billing topic after the broker upgrade",
         "sourdough starter that stopped rising in the cold kitchen",
         "learning the Italian subjunctive with a weekly tutor"], 6, datetime(2026, 11, 21, 8, tzinfo=timezone.utc)))
    received = re.compile(r"athena\.pipeline\.summarize\[([0-9a-f-]+)\] received")
    deadline = time.monotonic() + 60
    while not (match := received.search(_read_from(worker_log, offset))) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert match, "no summarize task reached the pipeline worker"
    task_id = match.group(1)
    time.sleep(0.02)  # received, not yet acknowledged (late acks): the chain is being formed
    procs = stack.processes
    assert procs is not None
    procs.stop_process("pipeline1", sig=signal.SIGKILL)
    time.sleep(VISIBILITY_S + 1)  # the task's visibility timeout runs out while no worker is up
    restart_offset = worker_log.stat().st_size
    procs.start_pipeline_worker("pipeline1", stack.pipeline_concurrency)
    deadline = time.monotonic() + 60
    while f"[{task_id}] received" not in _read_from(worker_log, restart_offset) and time.monotonic() < deadline:
        procs.assert_running()
        time.sleep(0.2)
    assert f"[{task_id}] received" in _read_from(worker_log, restart_offset), \
        f"the killed summarize task {task_id} was not redelivered"
    _wait_drained(stack, scope)

    documents = build_documents(stack.settings())
    try:
        events = documents.get_events(scope.user_scope, event_ids)
        chains = documents.recent_chains(scope.user_scope, limit=1000, status=None)
    finally:
        documents.close()
    assert len(events) == len(event_ids), "an accepted event is missing from the log"
    consolidated = [e for e in events if e.status == EventStatus.consolidated]
    assert consolidated and all(e.status != EventStatus.pending for e in events), [e.status for e in events]
    members = [event_id for chain in chains for event_id in chain.event_ids]
    assert sorted(members) == sorted(e.event_id for e in consolidated), \
        "an event in two chains (a chain formed twice by the re-run) or a consolidated event in none"
    assert {e.chain_id for e in consolidated} == {c.chain_id for c in chains}


def test_production_faults_private_redis_restarted_empty_rebuilds_the_window_and_the_pipeline_resumes(
        stack) -> None:
    session_id, scope = _session(stack)
    start = datetime(2026, 11, 22, 8, tzinfo=timezone.utc)
    before = _post_batch(stack, session_id, _batch(["terraform state lock stuck on the staging bucket"], 6, start))
    with httpx.Client(base_url=stack.api_urls[0], timeout=30.0) as client:
        context = client.get(f"/api/v1/sessions/{session_id}/context", params={"limit": 10}).json()
        assert context["stm_source"] == "redis"
        assert [e["event_id"] for e in context["stm_events"]] == before
        stack.redis.kill(forget_data=True)  # type: ignore[union-attr]  window, locks, queued tasks: gone
        time.sleep(1.0)
        stack.redis.start()  # type: ignore[union-attr]  same port, empty
        deadline = time.monotonic() + 20  # the API's pooled connections to the old server fail first
        while time.monotonic() < deadline:  # (while Redis does not answer, the window is read from the log)
            context = client.get(f"/api/v1/sessions/{session_id}/context", params={"limit": 10})
            if context.status_code == 200 and context.json()["stm_source"] != "event_log":
                break
            time.sleep(0.2)
        assert context.status_code == 200, context.text
        assert context.json()["stm_source"] == "rebuilt"
        assert [e["event_id"] for e in context.json()["stm_events"]] == before
        after = _post_batch(stack, session_id, _batch(["ansible playbook that hangs on the package cache"], 4,
                                                      start + timedelta(hours=1)))
        window = client.get(f"/api/v1/sessions/{session_id}/context", params={"limit": 10}).json()
        assert [e["event_id"] for e in window["stm_events"]] == (before + after)[-10:]
    _wait_drained(stack, scope)
    documents = build_documents(stack.settings())
    try:
        events = documents.get_events(scope.user_scope, before + after)
    finally:
        documents.close()
    assert len(events) == len(before) + len(after)
    assert all(e.status != EventStatus.pending for e in events), [e.status for e in events]
    assert any(e.status == EventStatus.consolidated for e in events)
