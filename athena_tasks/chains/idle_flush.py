"""Beat: consolidate the open segment of scopes idle for `ATHENA_SEGMENT_IDLE_S` (SPEC S4).

Nothing is left unsummarised: a conversation that simply stops is still consolidated.
"""
from __future__ import annotations

from datetime import timedelta

from athena_core.models.events import utc_now
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.run_requests import PipelineRunRequester
from athena_tasks.worker_runtime import get_runtime


@app.task(base=AthenaTask, name="athena.beat.idle_flush")
def flush_idle_segments() -> dict:
    runtime = get_runtime()
    cutoff = utc_now() - timedelta(seconds=runtime.settings.segment_idle_s)
    scopes = runtime.documents.idle_pending_scopes(cutoff)
    requester = PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s)
    published = sum(requester.request(scope, flush=True) for scope in scopes)
    return {"scopes_flushed": len(scopes), "runs_published": published}
