"""The Celery pipeline on a real worker and a real Redis broker (SPEC S0, S7)."""
from __future__ import annotations

import time
import uuid
from collections import defaultdict

import pytest
from fastapi.testclient import TestClient

from athena_core.models.scope import AgentScope
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.wiring.runtime import Runtime
from athena_tasks.app import app
from tests.pipeline.waiting import run_pipeline_and_wait, wait_until
from athena_tasks.base import AthenaTask
from athena_tasks.chains.pipeline import coalesce, pipeline_for
from athena_core.wiring.redis_keys import run_request_key

ATTEMPTS: dict[str, list[float]] = defaultdict(list)


@app.task(base=AthenaTask, name="tests.flaky", retry_backoff=1, retry_jitter=False, max_retries=3)
def flaky(key: str, failures: int) -> int:
    ATTEMPTS[key].append(time.monotonic())
    if len(ATTEMPTS[key]) <= failures:
        raise ConnectionError("transient outage")
    return len(ATTEMPTS[key])


@app.task(base=AthenaTask, name="tests.always_fails", retry_backoff=1, retry_jitter=False, max_retries=1)
def always_fails(key: str) -> None:
    ATTEMPTS[key].append(time.monotonic())
    raise ConnectionError("still down")




def _new_session(api: TestClient) -> tuple[str, AgentScope]:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    response = api.post("/api/v1/sessions", json=scope.model_dump())
    return response.json()["session_id"], scope


def test_storing_an_event_runs_the_pipeline_on_the_worker(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _new_session(worker_api)
    ids = worker_api.post(f"/api/v1/sessions/{session_id}/interactions",
                          json={"user_message": "hello pipeline"}).json()["event_ids"]

    def seen() -> bool:
        return all(e.seen_at is not None for e in worker_runtime.documents.get_events(scope.user_scope, ids))

    wait_until(seen)
    wait_until(lambda: not worker_runtime.redis.exists(run_request_key(scope)))


def _one_exchange_through_the_pipeline(
    api: TestClient, runtime: Runtime, user_message: str, agent_response: str
) -> tuple[AgentScope, list[str]]:
    """A new session, one interaction, one flushed pipeline run on the worker: the scope and the event ids.
    Pipeline tasks keep no results (issue 12 item 7): the test waits for the run's last step, then reads state."""
    session_id, scope = _new_session(api)
    ids = api.post(f"/api/v1/sessions/{session_id}/interactions",
                   json={"user_message": user_message, "agent_response": agent_response}).json()["event_ids"]
    wait_until(lambda: not runtime.redis.exists(run_request_key(scope)))
    run_pipeline_and_wait(scope, flush=True, timeout_s=120)
    return scope, ids


def test_the_chain_runs_all_four_steps(worker_api: TestClient, worker_runtime: Runtime) -> None:
    scope, ids = _one_exchange_through_the_pipeline(
        worker_api, worker_runtime,
        "How do I rotate the TLS certificates of our Nginx ingress before they expire on Friday?",
        "Renew them with cert-manager, then reload Nginx; the ingress picks up the new secret.")
    events = worker_runtime.documents.get_events(scope.user_scope, ids)
    assert {e.status.value for e in events} == {"consolidated"} and len({e.chain_id for e in events}) == 1
    assert worker_runtime.documents.unindexed_events(scope.user_scope, 10) == []  # the index step marked them
    [chain] = worker_runtime.documents.get_chains(scope.user_scope, [events[0].chain_id])
    assert worker_runtime.vectors.search(scope.user_scope, worker_runtime.embedder.embed([chain.search_text])[0], 1)[0].chain_id == chain.chain_id
    steps = [t.name for t in pipeline_for(scope).tasks]
    assert steps == ["athena.pipeline.coalesce", "athena.pipeline.segment", "athena.pipeline.summarize",
                     "athena.pipeline.embed"]
    # No pipeline step leaves a result (with the user's scope and ids) in the result backend.
    assert all(app.tasks[name].ignore_result for name in steps)
    assert not [k for k in worker_runtime.redis.scan_iter(match="celery-task-meta-*", count=1000)
                if scope.tenant_id.encode() in (worker_runtime.redis.get(k) or b"")]


def test_the_index_step_indexes_state_not_its_message(worker_api: TestClient, worker_runtime: Runtime) -> None:
    """The index step takes what is not indexed, whatever its batch names: a second
    delivery finds nothing left, and an event whose indexing was lost is indexed by the next one."""
    from athena_tasks.chains.pipeline import embed

    scope, ids = _one_exchange_through_the_pipeline(
        worker_api, worker_runtime, "Which database should the billing service use for its invoices?",
        "PostgreSQL: invoices need transactions, and the team already runs it.")
    user = scope.user_scope
    batch = {"scope": scope.key, "chain_ids": [], "more": False, "flush": False}
    assert embed.apply(args=[batch]).get()["events_indexed"] == 0  # a redelivery: nothing left to do
    # Lose the indexing of one event (as a worker killed between summarize and the index step would).
    worker_runtime.lexical.delete(user, "event", [ids[1]])
    with worker_runtime.documents._write() as conn:
        conn.execute("UPDATE events SET indexed_at = NULL WHERE event_id = ?", (ids[1],))
    assert worker_runtime.lexical.search(user, search_terms("transactions"), "event", 5) == []
    result = embed.apply(args=[batch]).get()
    # per event and per chain (issue 15): the chain kept its index, only the lost event is indexed again
    assert result["events_indexed"] == 1 and result["chains_indexed"] == 0
    assert worker_runtime.lexical.search(user, search_terms("transactions"), "event", 5) == [ids[1]]
    assert worker_runtime.documents.unindexed_events(user, 10) == []


def test_a_flood_publishes_few_runs(worker_api: TestClient, worker_runtime: Runtime) -> None:
    """SPEC S9 debounce: one queued run per scope takes every pending event."""
    from athena_core.observability import metrics

    session_id, scope = _new_session(worker_api)
    published_before = metrics.PIPELINE_PUBLISH.labels("published")._value.get()
    ids = []
    for i in range(30):
        ids += worker_api.post(f"/api/v1/sessions/{session_id}/interactions",
                               json={"user_message": f"msg {i}"}).json()["event_ids"]
    published = metrics.PIPELINE_PUBLISH.labels("published")._value.get() - published_before
    assert 1 <= published < 30
    wait_until(lambda: all(e.seen_at for e in worker_runtime.documents.get_events(scope.user_scope, ids)))


def test_coalesce_is_idempotent(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _new_session(worker_api)
    ids = worker_api.post(f"/api/v1/sessions/{session_id}/interactions", json={"user_message": "x"}).json()["event_ids"]
    first = coalesce.apply(args=[scope.key]).get()
    seen_at = worker_runtime.documents.get_events(scope.user_scope, ids)[0].seen_at
    second = coalesce.apply(args=[scope.key]).get()
    # the same snapshot; only its time (the purge fence's reference) is the later delivery's own
    assert first.pop("snapshot_at") <= second.pop("snapshot_at") and first == second
    assert worker_runtime.documents.get_events(scope.user_scope, ids)[0].seen_at == seen_at


def test_a_failing_task_is_retried_with_exponential_backoff(worker_runtime: Runtime) -> None:
    key = uuid.uuid4().hex
    assert flaky.delay(key, 2).get(timeout=120) == 3
    first_gap = ATTEMPTS[key][1] - ATTEMPTS[key][0]
    second_gap = ATTEMPTS[key][2] - ATTEMPTS[key][1]
    assert first_gap >= 0.9 and second_gap >= 1.9  # backoff 1 s, then 2 s


def test_exhausted_retries_leave_a_dead_letter(worker_runtime: Runtime) -> None:
    key = uuid.uuid4().hex
    result = always_fails.delay(key)
    with pytest.raises(ConnectionError):
        result.get(timeout=120)
    assert len(ATTEMPTS[key]) == 2  # the first try and one retry
    wait_until(lambda: any(d["task_id"] == result.id for d in worker_runtime.documents.dead_letters()))
    letter = next(d for d in worker_runtime.documents.dead_letters() if d["task_id"] == result.id)
    assert letter["task_name"] == "tests.always_fails" and "still down" in letter["error"]


def test_pipeline_tasks_are_late_acked_and_retry_with_jittered_backoff() -> None:
    from athena_core.wiring.settings import get_settings

    for name in ["athena.pipeline.coalesce", "athena.pipeline.segment", "athena.pipeline.summarize",
                 "athena.pipeline.embed", "athena.beat.promote", "athena.beat.promote_user", "athena.beat.archive",
                 "athena.beat.idle_flush", "athena.beat.pending_sweep", "athena.beat.index_sweep",
                 "athena.beat.analytics"]:
        task = app.tasks[name]
        assert task.acks_late and task.reject_on_worker_lost
        assert task.retry_backoff and task.retry_jitter and task.max_retries == get_settings().task_max_retries
    conf = app.conf
    assert conf.worker_prefetch_multiplier == 1 and conf.task_serializer == "json"
    assert conf.task_time_limit and conf.task_soft_time_limit
    assert {e["task"] for e in conf.beat_schedule.values()} == {
        "athena.beat.promote", "athena.beat.archive", "athena.beat.idle_flush", "athena.beat.pending_sweep",
        "athena.beat.index_sweep", "athena.beat.analytics"}


@pytest.mark.parametrize("name", ["athena.beat.promote", "athena.beat.archive", "athena.beat.idle_flush",
                                  "athena.beat.pending_sweep", "athena.beat.index_sweep", "athena.beat.analytics"])
def test_every_beat_task_runs_on_the_worker(worker_runtime: Runtime, name: str) -> None:
    assert isinstance(app.send_task(name).get(timeout=120), dict)
