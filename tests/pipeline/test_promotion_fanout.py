"""Promotion fans out per user (issue 13 item 5, SPEC S6.1): the beat enqueues one task per user with active
chains and runs none itself; each per-user task promotes only its user's hot chains, idempotently, and
re-queues itself (never waits) when the user's write lock is busy; one tenant whose LLM is slow does not
hold up another tenant's promotion."""
from __future__ import annotations

import threading
import uuid

import pytest

from athena_core.ltm.promotion import Promoter
from athena_core.models.events import utc_now
from athena_core.models.scope import AgentScope
from athena_core.mtm.chain_heat import chain_heat
from athena_core.observability import metrics
from athena_core.usecases.purge_fence import user_write_lock_name
from athena_core.wiring.runtime import Runtime
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_tasks.app import app
from athena_tasks.promote.promoter import promote_hot_chains, promote_user
from tests.contract.test_document_store import _chain
from tests.pipeline.waiting import wait_until


def _scope(label: str) -> AgentScope:
    return AgentScope(tenant_id=f"t-{label}-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")


def _hot_chains(runtime: Runtime, scope: AgentScope, n: int = 1) -> None:
    now = utc_now()
    for i in range(n):
        chain = _chain(scope, f"chn_{uuid.uuid4().hex[:10]}", now, summary=f"I use Go for the billing job {i}.",
                       entities=["Go"], intrinsic_importance=0.9, density=0.6)
        assert chain_heat(chain, now, runtime.settings.heat_tau_hours).heat >= runtime.settings.promote_threshold
        runtime.documents.upsert_chain(chain)


def _promoted(runtime: Runtime, scope: AgentScope) -> int:
    return sum(1 for c in runtime.documents.recent_chains(scope.user_scope) if c.promoted_evidence)


def test_the_beat_enqueues_one_task_per_user_and_promotes_nothing_itself(
    worker_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _scope("fan-a"), _scope("fan-b")
    _hot_chains(worker_runtime, a, n=2)
    _hot_chains(worker_runtime, b, n=1)
    sent: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(promote_user, "apply_async",
                        lambda args=None, **options: sent.append((tuple(args), options)))
    result = promote_hot_chains.apply().get()
    monkeypatch.undo()
    assert result == {"users": len(sent)}
    mine = sorted((args, options) for args, options in sent if args[0] in (a.tenant_id, b.tenant_id))
    assert [args for args, _ in mine] == sorted([(a.tenant_id, "u1"), (b.tenant_id, "u1")])  # per user, not chain
    assert all(options["expires"] == worker_runtime.settings.promote_every_s for _, options in mine)
    assert _promoted(worker_runtime, a) == _promoted(worker_runtime, b) == 0  # the beat itself promotes nothing

    result = promote_user.apply(args=[a.tenant_id, "u1"]).get()
    assert result["chains_scanned"] == 2 and result["chains_promoted"] == 2 and result["busy"] == 0
    assert _promoted(worker_runtime, a) == 2 and _promoted(worker_runtime, b) == 0  # that user's chains only
    assert worker_runtime.graph.count(a.user_scope)[1] > 0 and worker_runtime.graph.count(b.user_scope) == (0, 0)
    # Idempotent (late acks redeliver): a second delivery promotes nothing again and writes no observation.
    edges = worker_runtime.graph.edges(a.user_scope)
    assert promote_user.apply(args=[a.tenant_id, "u1"]).get()["chains_promoted"] == 0
    assert [(e.edge_id, e.weight) for e in worker_runtime.graph.edges(a.user_scope)] == [(e.edge_id, e.weight) for e in edges]


def test_a_busy_user_is_re_queued_not_waited_for(worker_runtime: Runtime) -> None:
    """The per-user task tries the user's write lock once; busy, it raises ScopeBusy, which AthenaTask turns
    into a retry with a countdown (the worker slot is free meanwhile); once the lock is free it promotes."""
    scope = _scope("busy")
    _hot_chains(worker_runtime, scope)
    user = scope.user_scope
    with scope_lock(worker_runtime.redis, user_write_lock_name(user), worker_runtime.settings.lock_lease_s):
        with pytest.raises(ScopeBusy):
            promote_user.run(scope.tenant_id, "u1")  # the body: busy after the other chains, no wait
        assert _promoted(worker_runtime, scope) == 0
        retries = metrics.TASK_RETRIES.labels(promote_user.name)
        before = retries._value.get()
        promote_user.apply_async(args=[scope.tenant_id, "u1"])  # on the worker: re-queued while busy
        wait_until(lambda: retries._value.get() > before, 60)
        assert _promoted(worker_runtime, scope) == 0
    wait_until(lambda: _promoted(worker_runtime, scope) == 1, 120)  # a retry after the countdown promoted it


def test_one_slow_tenant_does_not_hold_up_another_tenants_promotion(
    worker_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow, fast = _scope("slow"), _scope("fast")
    _hot_chains(worker_runtime, slow)
    _hot_chains(worker_runtime, fast)
    entered, release = threading.Event(), threading.Event()
    prepare = Promoter.prepare

    def slow_llm(self, chain, heat):  # noqa: ANN001 - the slow tenant's extraction hangs until released
        if chain.tenant_id == slow.tenant_id:
            entered.set()
            release.wait(120)
        return prepare(self, chain, heat)

    monkeypatch.setattr(Promoter, "prepare", slow_llm)
    try:
        assert app.send_task("athena.beat.promote").get(timeout=120)["users"] >= 2
        wait_until(entered.is_set, 120)  # the slow tenant's task holds one worker slot ...
        wait_until(lambda: _promoted(worker_runtime, fast) == 1, 120)  # ... and the other tenant is promoted
        assert _promoted(worker_runtime, slow) == 0
    finally:
        release.set()
    wait_until(lambda: _promoted(worker_runtime, slow) == 1, 120)
