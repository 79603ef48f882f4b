"""The task side of the purge fence (SPEC S7.4, issue 12 item 4): a task that began before a user's purge
writes nothing for that user, at every writing step (summarize, the index step, the promoter).

The purge is simulated by its first act, the fence (`fence_user`), at the moment a real purge would race
the step; the purge's own deletion and its test live with the purge (tests/http, tests/faults).
"""
from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest

from athena_core.observability import metrics
from athena_core.models.events import EventStatus, utc_now
from athena_core.models.scope import AgentScope
from athena_core.usecases.purge_fence import fence_key, fence_user
from athena_core.wiring.runtime import Runtime
from athena_tasks.chains.indexing import index_user
from athena_tasks.chains.pipeline import coalesce, segment, summarize
from tests.pipeline.test_sweep_isolation import _store
from tests.pipeline.waiting import run_pipeline_and_wait


def _fenced(step: str) -> float:
    return metrics.PURGE_FENCED_WRITES.labels(step)._value.get()


@pytest.fixture
def scope(worker_runtime: Runtime):
    s = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    yield s
    worker_runtime.redis.delete(fence_key(s.user_scope))


def test_summarize_writes_nothing_for_a_user_purged_after_the_snapshot(worker_runtime: Runtime, scope) -> None:
    ids = _store(worker_runtime, scope, at=utc_now() - timedelta(hours=1), received_at=utc_now())
    batch = coalesce.apply(args=[scope.key, True]).get()
    assert batch["event_ids"] == ids and batch["snapshot_at"] <= time.time()
    fence_user(worker_runtime.redis, scope.user_scope, time.time(), 60)  # the purge begins mid-run
    before = _fenced("summarize")
    result = summarize.apply(args=[segment.apply(args=[batch]).get()]).get()
    assert result["chain_ids"] == [] and _fenced("summarize") == before + 1
    assert worker_runtime.documents.recent_chains(scope.user_scope, status=None) == []
    assert worker_runtime.documents.count_events(scope, EventStatus.pending) == 4
    # A run that starts after the purge (a new session of that user) is not fenced.
    run_pipeline_and_wait(scope, flush=True, timeout_s=120)
    assert worker_runtime.documents.count_events(scope, EventStatus.consolidated) == 4


def test_the_index_step_writes_nothing_for_a_user_purged_after_its_read(
    worker_runtime: Runtime, scope, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pipeline.test_index_state import _lose_the_index

    ids = _store(worker_runtime, scope, at=utc_now() - timedelta(hours=1), received_at=utc_now())
    run_pipeline_and_wait(scope, steps=[coalesce.s(scope.key, True), segment.s(), summarize.s()], timeout_s=120)
    user = scope.user_scope
    _lose_the_index(worker_runtime, user)  # summarize indexes its chains itself: lose that, then index again
    documents = worker_runtime.documents
    get_chains = documents.get_chains

    def purge_arrives(asked_scope, chain_ids):  # noqa: ANN001 - the purge fences right after the page is read
        if asked_scope == user:
            fence_user(worker_runtime.redis, user, time.time(), 60)
        return get_chains(asked_scope, chain_ids)

    monkeypatch.setattr(documents, "get_chains", purge_arrives)
    before = _fenced("index:run")
    result = index_user(worker_runtime, user, path="run")
    assert result.get("fenced") and result["events_indexed"] == 0 and _fenced("index:run") == before + 1
    assert worker_runtime.lexical.count(user) == 0 and worker_runtime.vectors.count(user) == 0
    assert worker_runtime.event_vectors.count(user) == 0
    monkeypatch.undo()
    assert len(documents.unindexed_events(user, 10)) == len(ids)  # not marked either


def test_the_promoter_writes_nothing_for_a_user_purged_during_its_pass(
    worker_runtime: Runtime, scope, monkeypatch: pytest.MonkeyPatch
) -> None:
    from athena_core.ltm.promotion import Promoter
    from athena_tasks.promote.promoter import promote_user

    _store(worker_runtime, scope, at=utc_now() - timedelta(minutes=30), received_at=utc_now())
    run_pipeline_and_wait(scope, flush=True, timeout_s=120)
    user = scope.user_scope
    [chain] = worker_runtime.documents.recent_chains(user)
    prepare = Promoter.prepare

    def purge_during_extraction(self, c, heat):  # noqa: ANN001 - the purge lands while the LLM extracts
        prepared = prepare(self, c, heat)
        if c.tenant_id == scope.tenant_id:
            fence_user(worker_runtime.redis, user, time.time(), 60)
        return prepared

    monkeypatch.setattr(Promoter, "prepare", purge_during_extraction)
    before = _fenced("promote")
    result = promote_user.apply(args=[user.tenant_id, user.user_id]).get()  # the beat's per-user task (issue 13)
    assert result["fenced"] >= 1 and _fenced("promote") >= before + 1
    assert worker_runtime.graph.count(user) == (0, 0)
    [after] = worker_runtime.documents.get_chains(user, [chain.chain_id])
    assert after.promoted_evidence is None
