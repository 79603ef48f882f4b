"""Beat: consolidate the open segment of scopes idle for `ATHENA_SEGMENT_IDLE_S` (SPEC S4).

Nothing is left unsummarised: a conversation that simply stops is still consolidated. Isolated per scope:
a row whose ids form no scope is skipped and dead-lettered once, a scope whose run failed for good is
left alone for `ATHENA_FAILED_SCOPE_BACKOFF_S` (not republished every tick), one failing publish does
not stop the others.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from athena_core.observability import metrics
from athena_core.models.events import utc_now
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.failed_scopes import BadRowReporter, recently_failed
from athena_tasks.chains.run_requests import PipelineRunRequester
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)


@app.task(base=AthenaTask, name="athena.beat.idle_flush")
def flush_idle_segments() -> dict:
    runtime = get_runtime()
    cutoff = utc_now() - timedelta(seconds=runtime.settings.segment_idle_s)
    bad_rows = BadRowReporter(runtime.redis, runtime.documents, "idle_flush")
    scopes = runtime.documents.idle_pending_scopes(cutoff, on_invalid=bad_rows)
    backed_off = recently_failed(runtime.redis, [s.key for s in scopes])
    requester = PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s)
    published = flushed = failed = 0
    for scope in scopes:
        if scope.key in backed_off:
            metrics.SWEEP_SKIPPED_FAILED.labels("idle_flush").inc()
            continue
        flushed += 1
        try:
            published += requester.request(scope, flush=True)
        except Exception:  # noqa: BLE001 - one scope's publish must not stop the others
            failed += 1
            log.exception("idle flush could not publish a run for %s", scope.key)
    return {"scopes_flushed": flushed, "runs_published": published, "scopes_backed_off": len(backed_off),
            "bad_rows": bad_rows.skipped, "publish_failures": failed}
