"""A worker killed mid-pipeline and restarted repeats no work (late acks + idempotent tasks, SPEC S7), and
leaves nothing unindexed: whatever its kill left consolidated but not indexed, a later index step or the
index sweep indexes (issue 12 item 3)."""
from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx

from athena_client.client import AthenaClient
from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from athena_core.stores.lexical.sqlite_lexical import SqliteLexical
from tests.pipeline.test_durability import free_port

TOPICS = [
    "Postgres streaming replication for the orders database: standby {i} lags by {i} seconds.",
    "Roasting salmon for dinner: batch {i} needs {i} more minutes in the oven at 200 C.",
    "Japan trip planning: day {i} in Kyoto, visiting temple number {i} near the station.",
]


def test_killing_the_worker_mid_run_duplicates_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, redis_url=None, api_port=free_port())
    env = {"ATHENA_BROKER_VISIBILITY_TIMEOUT_S": "5", "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "2",
           "ATHENA_LOCK_LEASE_S": "3",  # the killed worker's lock leases run out quickly
           "ATHENA_INDEX_SWEEP_EVERY_S": "1", "ATHENA_INDEX_SWEEP_AGE_S": "1"}
    stack = Stack(settings, worker_concurrency=1, extra_env=env)
    scope = AgentScope(tenant_id="t-crash", user_id="u1", agent_id="a1")
    try:
        stack.start()
        documents = SqliteDocuments(settings.sqlite_path)
        with AthenaClient(stack.base_url) as client:
            session_id = client.create_session(scope.tenant_id, scope.user_id, scope.agent_id)
            ids = []
            for i in range(60):
                topic = TOPICS[(i // 8) % len(TOPICS)]
                ids += client.store_interaction(session_id, topic.format(i=i), f"Noted step {i}: " + topic.format(i=i))
            deadline = time.monotonic() + 420  # generous: CI machines are small
            while documents.count_events(scope, EventStatus.consolidated) == 0:  # the worker is mid-run
                assert time.monotonic() < deadline, "the worker never consolidated anything"
                stack.assert_running()
                time.sleep(0.05)
            stack.stop_process("worker", sig=signal.SIGKILL)
            stack.start_worker()
            while client.get_session(session_id)["pending_events"] > 0:
                assert time.monotonic() < deadline, "events left pending after the restart"
                stack.assert_running()
                time.sleep(0.5)
            while documents.unindexed_events(scope.user_scope, 1):
                assert time.monotonic() < deadline, "consolidated events left unindexed after the restart"
                stack.assert_running()
                time.sleep(0.5)
            # The API's /metrics aggregates the workers' counters (PROMETHEUS_MULTIPROC_DIR of the stack).
            exposition = httpx.get(stack.base_url + "/metrics").text
            assert 'athena_chain_formation_total{outcome="created"}' in exposition
            assert "athena_segment_decisions_total" in exposition

        events = documents.get_events(scope.user_scope, ids)
        assert len(events) == 120
        consolidated = [e for e in events if e.status == EventStatus.consolidated]
        assert consolidated and all(e.status in (EventStatus.consolidated, EventStatus.rejected) for e in events)
        chains = documents.get_chains(scope.user_scope, sorted({e.chain_id for e in consolidated}))
        members = [i for c in chains for i in c.event_ids]
        assert len(members) == len(set(members)), "an event sits in two chains"
        assert set(members) == {e.event_id for e in consolidated}
        assert all(e.event_id in next(c.event_ids for c in chains if c.chain_id == e.chain_id) for e in consolidated)
        # every consolidated event and every chain is searchable: one lexical doc each, nothing missing
        lexical = SqliteLexical(settings.data_dir / "lexical.sqlite3")
        assert lexical.count(scope.user_scope) == len(consolidated) + len(chains)
        assert set(lexical.search(scope.user_scope, search_terms("Kyoto temple"), "event", 200)) <= {e.event_id for e in consolidated}
    finally:
        stack.stop()
