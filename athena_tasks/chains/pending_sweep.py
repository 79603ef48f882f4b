"""Beat: re-enqueue scopes whose pending events no run has seen (SPEC S7: broker down at write time).

Isolated per scope like idle-flush: bad rows are skipped (dead-lettered once), failed scopes backed off.
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


@app.task(base=AthenaTask, name="athena.beat.pending_sweep")
def sweep_pending() -> dict:
    runtime = get_runtime()
    cutoff = utc_now() - timedelta(seconds=runtime.settings.pending_sweep_age_s)
    bad_rows = BadRowReporter(runtime.redis, runtime.documents, "pending_sweep")
    scopes = runtime.documents.unseen_pending_scopes(cutoff, on_invalid=bad_rows)
    backed_off = recently_failed(runtime.redis, [s.key for s in scopes])
    requester = PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s)
    enqueued = failed = 0
    for scope in scopes:
        if scope.key in backed_off:
            metrics.SWEEP_SKIPPED_FAILED.labels("pending_sweep").inc()
            continue
        try:
            requester.publish(scope)  # not debounced: the flag may belong to a run the outage lost
        except Exception:  # noqa: BLE001 - one scope's publish must not stop the others
            failed += 1
            log.exception("pending sweep could not publish a run for %s", scope.key)
            continue
        enqueued += 1
        metrics.PIPELINE_PUBLISH.labels("swept").inc()
    return {"scopes_enqueued": enqueued, "scopes_backed_off": len(backed_off), "bad_rows": bad_rows.skipped,
            "publish_failures": failed}
