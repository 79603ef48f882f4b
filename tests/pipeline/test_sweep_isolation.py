"""Whatever is accepted is processable, and no single bad row stops a sweep for others (SPEC S2, issue 12
item 2): a real worker, real Redis, rows written straight into the SQLite event log (bypassing the API)."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventStatus, EventType, utc_now
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.mtm.chain_formation import clean_metadata, encodable, window_start
from athena_core.wiring.runtime import Runtime
from athena_tasks.app import app
from athena_tasks.base import PermanentTaskError
from athena_core.wiring.redis_keys import failed_key
from tests.pipeline.waiting import run_pipeline_and_wait, wait_until

DINNER = [
    ("What should I cook for dinner tonight? I have fresh salmon.",
     "Roast the salmon with lemon, garlic and dill, and serve it with asparagus."),
    ("How long should the salmon roast in the oven?", "About 12 to 15 minutes at 200 C, until the salmon flakes."),
]


def _scope() -> AgentScope:
    return AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")


def _store(runtime: Runtime, scope: AgentScope, *, at: datetime, received_at: datetime,
           session_metadata: dict | None = None) -> list[str]:
    """Pending events written as the API writes them, but without asking for a run."""
    session = Session(session_id=new_id("ses"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                      agent_id=scope.agent_id, metadata=session_metadata or {}, created_at=utc_now())
    runtime.documents.create_session(session)
    events = []
    for i, (user, agent) in enumerate(DINNER):
        for j, (role, text) in enumerate([(EventRole.user, user), (EventRole.agent, agent)]):
            events.append(Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                                agent_id=scope.agent_id, session_id=session.session_id, role=role,
                                type=EventType.message, content=text, metadata={},
                                timestamp=at + timedelta(minutes=2 * i, seconds=j), received_at=received_at))
    runtime.documents.append_events(events)
    return [e.event_id for e in events]


def _bad_row(runtime: Runtime, tenant_id: str, user_id: str, received_at: datetime) -> None:
    """A pending row whose user id the scope model refuses (an OIDC subject, as issue 12 found)."""
    at = received_at.timestamp()
    with runtime.documents._write() as conn:
        conn.execute(
            "INSERT INTO events (event_id, tenant_id, user_id, agent_id, session_id, role, type, content, metadata, "
            "timestamp, received_at, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,'pending')",
            (new_id("evt"), tenant_id, user_id, "a1", "ses_bad", "user", "message", "bad row", "{}", at, at))


def _pending(runtime: Runtime, scope: AgentScope) -> int:
    return runtime.documents.count_events(scope, EventStatus.pending)


def _letters(runtime: Runtime, text: str) -> list[dict]:
    return [d for d in runtime.documents.dead_letters(limit=1000) if text in d["error"]]


def test_a_bad_row_stops_neither_idle_flush_nor_the_pending_sweep(worker_runtime: Runtime) -> None:
    long_ago = utc_now() - timedelta(hours=1)
    idle, unseen = _scope(), _scope()
    bad_user = f"auth0|{uuid.uuid4().hex[:12]}"
    _store(worker_runtime, idle, at=long_ago, received_at=long_ago)
    _bad_row(worker_runtime, idle.tenant_id, bad_user, long_ago)
    _store(worker_runtime, unseen, at=long_ago, received_at=long_ago)

    counts = app.send_task("athena.beat.idle_flush").get(timeout=120)
    assert counts["bad_rows"] >= 1 and counts["runs_published"] >= 1
    wait_until(lambda: _pending(worker_runtime, idle) == 0 and _pending(worker_runtime, unseen) == 0)
    # The operator sees the bad row once, with a reason that names it, not once per tick.
    [letter] = _letters(worker_runtime, bad_user)
    assert "cannot form a scope" in letter["error"] and letter["task_name"] == "athena.beat.idle_flush"
    assert app.send_task("athena.beat.idle_flush").get(timeout=120)["bad_rows"] >= 1
    assert len(_letters(worker_runtime, bad_user)) == 1

    # The pending sweep walks past the same row: another scope's unseen events are re-enqueued.
    swept = _scope()
    _store(worker_runtime, swept, at=long_ago, received_at=long_ago)
    counts = app.send_task("athena.beat.pending_sweep").get(timeout=120)
    assert counts["bad_rows"] >= 1 and counts["scopes_enqueued"] >= 1
    wait_until(lambda: all(e.seen_at for e in worker_runtime.documents.pending_events(swept)))
    assert len(_letters(worker_runtime, bad_user)) == 1  # still reported once, whichever sweep met it first


def test_a_scope_whose_run_fails_for_good_is_dead_lettered_and_not_reflushed_every_tick(
    worker_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = _scope()
    long_ago = utc_now() - timedelta(hours=1)
    _store(worker_runtime, scope, at=long_ago, received_at=long_ago)
    calls: list[str] = []
    form_chain = worker_runtime.llm.form_chain

    def failing(transcript, tenant_id=None, **kw):  # noqa: ANN001, ANN003
        if tenant_id == scope.tenant_id:
            calls.append(tenant_id)
            raise PermanentTaskError("the formation of this segment cannot succeed")
        return form_chain(transcript, tenant_id=tenant_id, **kw)

    monkeypatch.setattr(worker_runtime.llm, "form_chain", failing)
    try:
        app.send_task("athena.beat.idle_flush").get(timeout=120)
        wait_until(lambda: _letters(worker_runtime, scope.key))
        [letter] = _letters(worker_runtime, scope.key)
        assert letter["task_name"] == "athena.pipeline.summarize"
        assert "cannot succeed" in letter["error"] and "failed for good" in letter["error"]
        assert worker_runtime.redis.ttl(failed_key(scope.key)) > 0
        for _ in range(3):  # later ticks leave the scope alone while it is backed off
            assert app.send_task("athena.beat.idle_flush").get(timeout=120)["scopes_backed_off"] >= 1
        time.sleep(1.0)
        assert len(calls) == 1 and len(_letters(worker_runtime, scope.key)) == 1
        assert _pending(worker_runtime, scope) == 4  # nothing lost: the events wait for the backoff to end
    finally:
        monkeypatch.undo()
        worker_runtime.redis.delete(failed_key(scope.key))
    app.send_task("athena.beat.idle_flush").get(timeout=120)  # after the backoff: flushed as usual
    wait_until(lambda: _pending(worker_runtime, scope) == 0)


def test_extreme_valid_timestamps_and_a_lone_surrogate_in_session_metadata_consolidate(
    worker_runtime: Runtime,
) -> None:
    """Year 1 used to overflow the 72 h merge window; a lone surrogate in the session's metadata broke
    every summarize of the user (the chain copies it). Both consolidate now."""
    for at in (datetime(1, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 31, 23, 0, tzinfo=timezone.utc)):
        scope = _scope()
        ids = _store(worker_runtime, scope, at=at, received_at=utc_now(),
                     session_metadata={"project": "dinner \ud83d", "\udc00key": "ok"})
        run_pipeline_and_wait(scope, flush=True, timeout_s=120)
        events = worker_runtime.documents.get_events(scope.user_scope, ids)
        assert {e.status for e in events} == {EventStatus.consolidated}, at
        [chain] = worker_runtime.documents.get_chains(scope.user_scope, [events[0].chain_id])
        assert chain.metadata == {"project": "dinner \ufffd", "\ufffdkey": "ok"}
        assert chain.started_at == at
        assert worker_runtime.documents.unindexed_events(scope.user_scope, 10) == []


def test_formation_helpers_clamp_and_clean() -> None:
    year_one = datetime(1, 1, 1, tzinfo=timezone.utc)
    assert window_start(year_one, timedelta(hours=72)) == datetime.min.replace(tzinfo=timezone.utc)
    later = datetime(2024, 1, 4, tzinfo=timezone.utc)
    assert window_start(later, timedelta(hours=72)) == datetime(2024, 1, 1, tzinfo=timezone.utc)
    assert encodable("fine é") == "fine é" and encodable("a\ud83db") == "a\ufffdb"
    assert clean_metadata({"k": "v\udfff", "n": None}) == {"k": "v\ufffd"}
