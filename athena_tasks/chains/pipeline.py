"""The pipeline chain of one agent scope: coalesce → segment → summarize → embed (SPEC S0, S4).

Each step takes and returns a small JSON dict, so the chain needs no result backend and any step can
be re-run: chain ids derive from segments, merges are unions and events are re-checked for `pending`
before they are summarised, so a redelivered task (late acks) repeats no work.
"""
from __future__ import annotations

from celery import chain
from celery.canvas import Signature

from athena_core import metrics
from athena_core.models.events import EventStatus, utc_now
from athena_core.models.scope import AgentScope
from athena_core.mtm.calibration import calibration_for
from athena_core.mtm.chain_formation import ChainFormer
from athena_core.mtm.segmenter import BreakDetector, is_user_message, plan_segments
from athena_core.models.chains import ChainStatus
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.run_requests import PipelineRunRequester, clear_run_request
from athena_tasks.chains.scope_lock import scope_lock
from athena_tasks.worker_runtime import get_runtime


@app.task(base=AthenaTask, name="athena.pipeline.coalesce")
def coalesce(scope_key: str, flush: bool = False) -> dict:
    """Take the scope's pending events as one snapshot for this run.

    The run request flag is cleared *before* the snapshot, so an event stored after this point asks
    for a new run, and an event stored before it is in the snapshot: none falls between two runs.
    """
    runtime = get_runtime()
    scope = AgentScope.from_key(scope_key)
    clear_run_request(runtime.redis, scope)
    batch = runtime.settings.pipeline_batch_events
    pending = runtime.documents.pending_events(scope, limit=batch)
    runtime.documents.mark_seen(scope, [e.event_id for e in pending if e.seen_at is None], utc_now())
    more = len(pending) == batch  # a backlog: the embed step asks for the next run (carrying the flush)
    return {"scope": scope_key, "event_ids": [e.event_id for e in pending], "flush": flush, "more": more}


def _run_flags(batch: dict) -> dict:
    """What every step passes on: the scope, whether a backlog remains, whether an idle flush was asked."""
    return {"scope": batch["scope"], "more": batch["more"], "flush": batch["flush"]}


@app.task(base=AthenaTask, name="athena.pipeline.segment")
def segment(batch: dict) -> dict:
    """Topic-break detection over the snapshot: which pending events form finished segments."""
    runtime = get_runtime()
    settings = runtime.settings
    scope = AgentScope.from_key(batch["scope"])
    with scope_lock(runtime.redis, f"segment:{scope.key}", settings.lock_timeout_s):
        events = [e for e in runtime.documents.get_events(scope.user_scope, batch["event_ids"])
                  if e.status == EventStatus.pending and e.agent_id == scope.agent_id]
        if not events:
            return {**_run_flags(batch), "segments": []}
        previous = runtime.documents.previous_user_message(scope, events[0])
        # One batched embedding of every user message; the gate's pairwise lookups then hit the cache.
        runtime.embedder.embed([e.content for e in [previous, *events] if e is not None and is_user_message(e)])
        calibration = calibration_for(settings, runtime.embedder.model_name)
        detector = BreakDetector(runtime.embedder, runtime.llm, high=calibration.break_high,
                                 low=calibration.break_low, tenant_id=scope.tenant_id)
        plan = plan_segments(
            events, previous, detector,
            max_events=settings.segment_max_events, flush_all=batch["flush"] and not batch["more"],
        )
    for decision in plan.decisions:
        metrics.BREAK_DECISIONS.labels(decision.value).inc()
    return {**_run_flags(batch), "segments": [[e.event_id for e in s] for s in plan.segments]}


@app.task(base=AthenaTask, name="athena.pipeline.summarize")
def summarize(batch: dict) -> dict:
    """Form (or merge) one chain per finished segment; one user's formations run one at a time."""
    runtime = get_runtime()
    scope = AgentScope.from_key(batch["scope"])
    former = ChainFormer(runtime.documents, runtime.vectors, runtime.llm, runtime.embedder, runtime.settings)
    chain_ids: list[str] = []
    for segment_ids in batch["segments"]:
        with scope_lock(runtime.redis, f"chains:{scope.tenant_id}:{scope.user_id}", runtime.settings.lock_timeout_s):
            events = [e for e in runtime.documents.get_events(scope.user_scope, segment_ids)
                      if e.status == EventStatus.pending and e.agent_id == scope.agent_id]
            if not events:
                continue  # already summarised by an earlier delivery of this task
            outcome = former.form(scope, events, utc_now())
        if outcome.chain_id and outcome.chain_id not in chain_ids:
            chain_ids.append(outcome.chain_id)
    # the events this run consolidated: embed indexes these, not a merged chain's earlier events again
    return {**_run_flags(batch), "chain_ids": chain_ids, "event_ids": [e for s in batch["segments"] for e in s]}


@app.task(base=AthenaTask, name="athena.pipeline.embed")
def embed(batch: dict) -> dict:
    """Index each formed or merged chain for hybrid search: its vector and lexical doc, and the vectors and
    lexical docs of this run's events (a merged chain's earlier events were indexed by their own run).
    A batch without `event_ids` (queued by an older version) indexes every event of the chains."""
    runtime = get_runtime()
    user = AgentScope.from_key(batch["scope"]).user_scope
    chains = runtime.documents.get_chains(user, batch["chain_ids"])
    active = [c for c in chains if c.status == ChainStatus.active]
    event_ids = [e for c in active for e in c.event_ids]
    if batch.get("event_ids") is not None:
        this_run = set(batch["event_ids"])
        event_ids = [e for e in event_ids if e in this_run]
    events = runtime.documents.get_events(user, event_ids) if event_ids else []
    indexed = runtime.evidence.index(user, active, events)
    runtime.evidence.remove(user, [c for c in chains if c.status != ChainStatus.active])
    if batch["more"]:
        PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s).request(
            AgentScope.from_key(batch["scope"]), flush=batch["flush"])
    return {"scope": batch["scope"], "chain_ids": batch["chain_ids"], "embedded": len(active), "events_indexed": indexed}


def pipeline_for(scope: AgentScope, flush: bool = False) -> Signature:
    return chain(coalesce.s(scope.key, flush), segment.s(), summarize.s(), embed.s())
