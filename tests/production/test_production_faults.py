"""Faults on the production topology (issue 17 item 3; SPEC S2, S7): nothing accepted is lost.

One API, one pipeline worker, the beat-queue worker and beat on SecantusDB + Milvus 2.3.5 + a private
Redis 7 (`athena_devtools.production_stack`), each engine stopped and started again under load:

- SecantusDB (the event log) stopped during ingest: every answer while it is down is a 503 with
  Retry-After, never a 201 for an event that is not durable; after it returns, every 201 event is in the
  log and consolidated.
- the Milvus server killed while the pipeline embeds (the worker's log shows its vector write retried
  after a MilvusException), then started again on the same data directory: the vectors land, nothing is
  left pending or unindexed, and searches answer again (the collection is loaded again after the restart).

The worker-SIGKILL and Redis-restart faults on the same topology take longer (a broker redelivery waits for
the visibility timeout): they are in tests/faults/test_production_topology_faults.py, run by `make faults`.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import build_documents
from athena_devtools.production_stack import ProductionStack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # module fixtures start whole stacks

FAST = {
    "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "2",
    "ATHENA_PENDING_SWEEP_EVERY_S": "2", "ATHENA_PENDING_SWEEP_AGE_S": "1",
    "ATHENA_INDEX_SWEEP_EVERY_S": "3", "ATHENA_INDEX_SWEEP_AGE_S": "5",
    "ATHENA_TASK_RETRY_BACKOFF_MAX_S": "5",  # an outage of seconds is retried within seconds
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[ProductionStack]:
    with ProductionStack(tmp_path_factory.mktemp("faults"), apis=1, pipeline_workers=1, with_flower=False,
                         extra_env=dict(FAST)) as running:
        yield running


@dataclass
class Writer:
    """One client writing StoreEvent requests with unique contents, one at a time, recording every answer."""

    base_url: str
    session_id: str
    answers: list[tuple[int, str, str | None, str | None, float, float]] = field(default_factory=list)
    # (status, content, event_id, Retry-After, sent at, answered at)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=30.0) as client:
            i = 0
            while not self.stop.is_set():
                content = f"fault probe {uuid.uuid4().hex[:12]} about the orders database replica number {i}"
                sent = time.monotonic()
                try:
                    response = client.post(f"/api/v1/sessions/{self.session_id}/events",
                                           json={"role": "user", "type": "message", "content": content})
                    event_id = response.json().get("event_id") if response.status_code == 201 else None
                    self.answers.append((response.status_code, content, event_id, response.headers.get("retry-after"),
                                         sent, time.monotonic()))
                except httpx.HTTPError as exc:
                    self.answers.append((0, content, None, type(exc).__name__, sent, time.monotonic()))
                i += 1
                time.sleep(0.05)


def _read_from(path, offset: int) -> str:
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def _session(stack: ProductionStack) -> tuple[str, AgentScope]:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    response = httpx.post(stack.api_urls[0] + "/api/v1/sessions", json=scope.model_dump(), timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["session_id"], scope


def _wait_consolidated(stack: ProductionStack, scope: AgentScope, event_ids: list[str], timeout_s: float = 180) -> dict:
    documents = build_documents(stack.settings())
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            events = documents.get_events(scope.user_scope, event_ids)
            statuses = {e.event_id: e.status for e in events}
            if len(statuses) == len(event_ids) and all(s != EventStatus.pending for s in statuses.values()):
                return statuses
            if time.monotonic() > deadline:
                return statuses
            stack.processes.assert_running()  # type: ignore[union-attr]
            time.sleep(0.5)
    finally:
        documents.close()


def _wait_drained(stack: ProductionStack, scope: AgentScope, timeout_s: float = 120, when: str = "") -> None:
    """Until nothing of the scope is pending or unindexed (bounded); asserts it."""
    documents = build_documents(stack.settings())
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            stack.processes.assert_running()  # type: ignore[union-attr]
            if not documents.pending_events(scope) and not documents.unindexed_events(scope.user_scope, 1):
                return
            time.sleep(0.5)
        assert not documents.pending_events(scope), f"events left pending{when}"
        assert not documents.unindexed_events(scope.user_scope, 1), f"events left unindexed{when}"
    finally:
        documents.close()


def test_production_faults_secantusdb_stopped_during_ingest_never_acknowledges_a_lost_event(stack) -> None:
    session_id, scope = _session(stack)
    writer = Writer(stack.api_urls[0], session_id)
    thread = threading.Thread(target=writer.run)
    thread.start()
    try:
        time.sleep(2.0)
        stack.secantus.stop()  # type: ignore[union-attr]
        down_at = time.monotonic()
        time.sleep(10.0)
        up_at = time.monotonic()
        stack.secantus.start()  # type: ignore[union-attr]  same port, same WiredTiger directory
        time.sleep(4.0)
    finally:
        writer.stop.set()
        thread.join(60)
    sent_while_down = [a for a in writer.answers if down_at < a[4] < up_at]
    assert sent_while_down, "no request was sent during the outage"
    # a 201 answered while the server was down would be an acknowledgement of a non-durable event
    assert not [a for a in sent_while_down if a[0] == 201 and a[5] < up_at], "201 while the event log was down"
    assert {a[0] for a in sent_while_down} <= {503, 201}, [(a[0], a[3]) for a in sent_while_down]
    outage = sent_while_down
    refused = [a for a in outage if a[0] == 503]
    assert refused and all(a[3] for a in refused), "a 503 without Retry-After"
    accepted = [(a[1], a[2]) for a in writer.answers if a[0] == 201]
    assert len(accepted) > len(refused) // 4 and writer.answers[-1][0] == 201, writer.answers[-5:]
    statuses = _wait_consolidated(stack, scope, [e for _, e in accepted])
    missing = [e for _, e in accepted if e not in statuses]
    assert not missing, f"{len(missing)} events answered 201 are not in the log"
    assert all(s != EventStatus.pending for s in statuses.values()), "accepted events left pending"
    # nothing refused was stored behind the client's back
    documents = build_documents(stack.settings())
    try:
        stored = {e.content for e in documents.recent_events(scope, 10_000)}
    finally:
        documents.close()
    assert stored == {content for content, _ in accepted}


def test_production_faults_milvus_restart_mid_embed_lands_the_vectors_and_search_answers(stack) -> None:
    session_id, scope = _session(stack)
    topics = ["Postgres replication lag on the orders standby after the vacuum job",
              "tomato seedlings with yellow leaves on the balcony garden",
              "marathon training plan with long runs on Sunday mornings"]
    events = [{"role": "user" if i % 2 == 0 else "agent", "type": "message",
               "content": f"{topics[i // 8]}: note {i} with detail {uuid.uuid4().hex[:6]}"} for i in range(24)]
    worker_log = stack.work_dir / "logs" / "pipeline1.log"
    offset = worker_log.stat().st_size
    with httpx.Client(base_url=stack.api_urls[0], timeout=60.0) as client:
        stack.milvus.kill()  # type: ignore[union-attr]  SIGKILL: the pipeline's vector writes meet a dead server
        assert client.post(f"/api/v1/sessions/{session_id}/events:batch", json={"events": events}).status_code == 201
        deadline = time.monotonic() + 120
        while "retrying after MilvusException" not in _read_from(worker_log, offset) and time.monotonic() < deadline:
            time.sleep(0.5)
        hit = _read_from(worker_log, offset)
        stack.milvus.start()  # type: ignore[union-attr]  same ports, same data directory
        assert "retrying after MilvusException" in hit, "the pipeline never met the dead Milvus server"
        _wait_drained(stack, scope, timeout_s=180, when=" after the Milvus restart")
        deadline = time.monotonic() + 60
        while True:
            hits = client.post(f"/api/v1/sessions/{session_id}/context/search",
                               json={"query": "tomato seedlings yellow leaves"})
            if hits.status_code == 200 and any("tomato" in h["content"] for h in hits.json()) or \
                    time.monotonic() > deadline:
                break
            time.sleep(1)
        assert hits.status_code == 200, hits.text
        assert any("tomato" in h["content"] and h.get("similarity_score") for h in hits.json()), hits.json()[:3]
    from pymilvus import MilvusClient

    milvus = MilvusClient(uri=stack.milvus_url)
    try:
        rows = milvus.query("athena_chains_events", filter=f'tenant_id == "{scope.tenant_id}"',
                            output_fields=["count(*)"], consistency_level="Strong")
        assert int(rows[0]["count(*)"]) >= 24  # every event's vector landed (plus sentence vectors)
    finally:
        milvus.close()

