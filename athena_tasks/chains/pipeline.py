"""The pipeline chain of one agent scope: coalesce → segment → summarize → embed (SPEC S0, S4).

Each step takes and returns a small JSON dict, so the chain needs no result backend and any step can
be re-run: every step is idempotent on the event log's state.
"""
from __future__ import annotations

from celery import chain
from celery.canvas import Signature

from athena_core.models.events import utc_now
from athena_core.models.scope import AgentScope
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.run_requests import clear_run_request
from athena_tasks.worker_runtime import get_runtime


@app.task(base=AthenaTask, name="athena.pipeline.coalesce")
def coalesce(scope_key: str) -> dict:
    """Take the scope's pending events as one snapshot for this run.

    The run request flag is cleared *before* the snapshot, so an event stored after this point asks
    for a new run, and an event stored before it is in the snapshot: none falls between two runs.
    """
    runtime = get_runtime()
    scope = AgentScope.from_key(scope_key)
    clear_run_request(runtime.redis, scope)
    pending = runtime.documents.pending_events(scope)
    runtime.documents.mark_seen(scope, [e.event_id for e in pending if e.seen_at is None], utc_now())
    return {"scope": scope_key, "event_ids": [e.event_id for e in pending]}


@app.task(base=AthenaTask, name="athena.pipeline.segment")
def segment(batch: dict) -> dict:
    """Topic-break detection over the snapshot (MTM issue); passes the snapshot through for now."""
    return batch


@app.task(base=AthenaTask, name="athena.pipeline.summarize")
def summarize(batch: dict) -> dict:
    """Chain formation for finished segments (MTM issue); passes through for now."""
    return batch


@app.task(base=AthenaTask, name="athena.pipeline.embed")
def embed(batch: dict) -> dict:
    """Vector upsert of formed chains (MTM issue); passes through for now."""
    return batch


def pipeline_for(scope: AgentScope) -> Signature:
    return chain(coalesce.s(scope.key), segment.s(), summarize.s(), embed.s())
