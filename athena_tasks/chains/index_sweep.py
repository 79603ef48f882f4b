"""Beat: index what no index task or step reached (SPEC S7: what is indexed is state, not a message).

Users with events (pending or consolidated) received, or chains written, more than `ATHENA_INDEX_SWEEP_AGE_S`
ago and still not indexed
(a worker killed between summarize and the index step, an index message lost with the broker, a database
from before `indexed_at`) are indexed user by user, under each user's write lock. One user's failure
never stops the sweep for the others: a busy user waits for the next tick, a failing one is
dead-lettered once with its reason and left alone for `ATHENA_FAILED_SCOPE_BACKOFF_S`.
"""
from __future__ import annotations

import logging
import time
from datetime import timedelta

from athena_core.models.events import utc_now
from athena_core.wiring.redis_keys import index_scope_key
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.failed_scopes import BadRowReporter, mark_failed, recently_failed
from athena_tasks.chains.indexing import index_user
from athena_core.wiring.scope_lock import ScopeBusy
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)

SWEEP_USERS = 1000  # users per tick; the rest wait for the next one


@app.task(base=AthenaTask, name="athena.beat.index_sweep")
def sweep_unindexed() -> dict:
    runtime = get_runtime()
    settings = runtime.settings
    deadline = time.monotonic() + settings.task_soft_time_limit_s / 2
    cutoff = utc_now() - timedelta(seconds=settings.index_sweep_age_s)
    bad_rows = BadRowReporter(runtime.redis, runtime.documents, "index_sweep")
    users = runtime.documents.unindexed_scopes(cutoff, limit=SWEEP_USERS, on_invalid=bad_rows)
    keys = {user: index_scope_key(user) for user in users}
    backed_off = recently_failed(runtime.redis, list(keys.values()))
    counts = {"users": 0, "events_indexed": 0, "busy": 0, "failed": 0, "backed_off": 0, "deferred": 0,
              "bad_rows": 0}
    for user in users:
        if keys[user] in backed_off:
            counts["backed_off"] += 1
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            counts["deferred"] += 1
            continue
        try:
            result = index_user(runtime, user, path="sweep", budget_s=remaining)
        except ScopeBusy:
            counts["busy"] += 1  # a run of this user is writing: it indexes, or the next tick does
            continue
        except Exception as exc:  # noqa: BLE001 - isolate per user
            counts["failed"] += 1
            reason = f"index sweep of user {user.tenant_id}:{user.user_id} failed: {type(exc).__name__}: {exc}"[:2000]
            log.exception(reason)
            try:
                mark_failed(runtime.redis, keys[user], reason, settings.failed_scope_backoff_s)
                runtime.documents.record_dead_letter(sweep_unindexed.name, f"{keys[user]}:{int(time.time())}",
                                                     {"tenant_id": user.tenant_id, "user_id": user.user_id}, reason,
                                                     scope=user)
            except Exception:  # noqa: BLE001 - reporting must not stop the sweep
                log.exception("could not dead-letter the index sweep of %s", keys[user])
            continue
        counts["users"] += 1
        counts["events_indexed"] += result["events_indexed"]
    counts["bad_rows"] = bad_rows.skipped
    return counts
