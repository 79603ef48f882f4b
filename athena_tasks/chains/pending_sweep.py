"""Beat: re-enqueue scopes whose pending events no run has seen (SPEC S7: broker down at write time)."""
from __future__ import annotations

from datetime import timedelta

from athena_core import metrics
from athena_core.models.events import utc_now
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.run_requests import PipelineRunRequester
from athena_tasks.worker_runtime import get_runtime


@app.task(base=AthenaTask, name="athena.beat.pending_sweep")
def sweep_pending() -> dict:
    runtime = get_runtime()
    cutoff = utc_now() - timedelta(seconds=runtime.settings.pending_sweep_age_s)
    scopes = runtime.documents.unseen_pending_scopes(cutoff)
    requester = PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s)
    for scope in scopes:
        requester.publish(scope)  # not debounced: the flag may belong to a run the outage lost
        metrics.PIPELINE_PUBLISH.labels("swept").inc()
    return {"scopes_enqueued": len(scopes)}
