"""The base class of every Athena task (SPEC S7, celery task guidelines).

Late acks and reject-on-worker-lost redeliver a task whose worker died, so every task must be
idempotent. Failures retry with exponential backoff and jitter, at most `ATHENA_TASK_MAX_RETRIES`
times; then a dead-letter record is written where operators can see it. A `PermanentTaskError`
skips the retries: retrying a bad input only burns the queue. A busy scope lock never blocks the
worker: `scope_lock` tries once and raises `ScopeBusy`, and the task is re-queued with a short jittered
countdown (its slot is free meanwhile) outside the failure budget; a live holder cannot outlive its task
time limit, a dead one's lease runs out within `ATHENA_LOCK_LEASE_S`, so the re-queues are bounded. A pipeline run that fails for good marks
its scope failed (`failed_scopes`): the beats leave it alone for `ATHENA_FAILED_SCOPE_BACKOFF_S`.
"""
from __future__ import annotations

import logging
import random

import redis
from celery import Task
from celery.exceptions import Reject
from kombu.exceptions import OperationalError

from athena_core.observability import metrics
from athena_core.wiring.settings import get_settings
from athena_core.wiring.scope_lock import ScopeBusy
from athena_tasks.failed_scopes import mark_failed, scope_key_of, user_scope_of
from athena_tasks.worker_runtime import get_runtime

LOCK_RETRY_S = 1.0  # plus up to as much jitter
BROKER_DOWN = (OperationalError, redis.ConnectionError, redis.TimeoutError, ConnectionError)

log = logging.getLogger(__name__)


class PermanentTaskError(Exception):
    """A failure that no retry can fix (bad input, schema violation of stored data)."""


class AthenaTask(Task):
    acks_late = True
    reject_on_worker_lost = True
    autoretry_for = (Exception,)
    dont_autoretry_for = (PermanentTaskError, ScopeBusy)
    retry_backoff = 2  # seconds, doubled each retry: 2, 4, 8, 16, 32 …
    retry_backoff_max = get_settings().task_retry_backoff_max_s
    retry_jitter = True
    max_retries = get_settings().task_max_retries

    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204 - celery signature
        """A busy scope lock is not a failure: re-queue with a countdown of a second or two (the worker slot
        is free meanwhile) until the holder must be done, without spending the failure budget's backoff."""
        try:
            return super().__call__(*args, **kwargs)
        except ScopeBusy as busy:
            settings = get_settings()
            lock_waits = int((settings.task_time_limit_s + settings.lock_lease_s) / LOCK_RETRY_S) + 1
            countdown = LOCK_RETRY_S + random.uniform(0, LOCK_RETRY_S)
            raise self.retry(exc=busy, countdown=countdown, max_retries=self.max_retries + lock_waits) from busy

    def retry(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - celery signature
        """A retry is a new message. When the broker refuses it, Celery rejects the task's own message without
        requeueing it and logs the broker's chained traceback (about 275 lines a task in a Redis outage).
        Here the message goes back to its queue instead (restored by the broker, or redelivered as unacked
        once the broker returns), and the log line says why in one reason."""
        try:
            return super().retry(*args, **kwargs)
        except Reject as refused:
            if not isinstance(refused.reason, BROKER_DOWN):
                raise
            raise Reject(f"the broker refused its retry ({refused.reason}); back to the queue",
                         requeue=True) from None

    def on_retry(self, exc, task_id, args, kwargs, einfo) -> None:  # noqa: ANN001 - celery signature
        metrics.TASK_RETRIES.labels(self.name).inc()
        log.warning("task %s[%s] retrying after %r", self.name, task_id, exc)

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:  # noqa: ANN001 - celery signature
        metrics.DEAD_LETTERS.labels(self.name).inc()
        scope_key = scope_key_of(args)
        reason = f"{type(exc).__name__}: {exc}"[:2000]
        if scope_key:
            reason = f"pipeline run of scope {scope_key} failed for good in {self.name}: {reason}"
        log.error("task %s[%s] failed for good: %s", self.name, task_id, reason)
        try:
            runtime = get_runtime()
        except Exception:  # noqa: BLE001 - never mask the original failure
            log.exception("could not record the failure of %s[%s]: the worker's stores did not open", self.name, task_id)
            return
        # Two independent records, each in its own store: one failing must not cost the other.
        try:
            runtime.documents.record_dead_letter(
                self.name, task_id, {"args": list(args), "kwargs": dict(kwargs)}, reason,
                scope=user_scope_of(scope_key),
            )
        except Exception:  # noqa: BLE001
            log.exception("could not write the dead letter of %s[%s] to the document store", self.name, task_id)
        if scope_key:
            try:
                mark_failed(runtime.redis, scope_key, reason, runtime.settings.failed_scope_backoff_s)
            except Exception:  # noqa: BLE001
                log.exception("could not mark scope %s failed in Redis after %s[%s]: the beats may start its run "
                              "again before its backoff", scope_key, self.name, task_id)
