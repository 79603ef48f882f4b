"""Celery configuration (SPEC S7): late acks, prefetch 1, time limits, JSON only, two queues, beat.

Values come from `ATHENA_*` settings so tests and demos can run the schedules fast.
"""
from __future__ import annotations

from celery.schedules import crontab
from kombu import Queue

from athena_core.redis_connection import resolve_redis
from athena_core.settings import get_settings

_settings = get_settings()
_redis = resolve_redis(_settings)

PIPELINE_QUEUE = "athena.pipeline"
BEAT_QUEUE = "athena.beat"

broker_url = _redis.celery_url
result_backend = _redis.celery_url
result_expires = 3600
broker_connection_retry_on_startup = True
broker_transport_options = {
    "visibility_timeout": _settings.broker_visibility_timeout_s,
    "socket_connect_timeout": 1,
    "socket_timeout": 5,
}
# A broker outage must not hang an ingest request: fail fast, the pending sweep re-enqueues.
task_publish_retry = True
task_publish_retry_policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1, "interval_max": 0.1}

task_serializer = "json"
result_serializer = "json"
accept_content = ["json"]
timezone = "UTC"
enable_utc = True

task_acks_late = True
task_reject_on_worker_lost = True
worker_prefetch_multiplier = 1
task_soft_time_limit = _settings.task_soft_time_limit_s
task_time_limit = _settings.task_time_limit_s
worker_send_task_events = True
task_send_sent_event = True

task_default_queue = PIPELINE_QUEUE
task_queues = (Queue(PIPELINE_QUEUE), Queue(BEAT_QUEUE))
task_routes = {
    "athena.pipeline.*": {"queue": PIPELINE_QUEUE},
    "athena.beat.*": {"queue": BEAT_QUEUE},
}

beat_schedule = {
    "promote-hot-chains": {"task": "athena.beat.promote", "schedule": _settings.promote_every_s},
    "archive-cold-chains": {"task": "athena.beat.archive", "schedule": _settings.archive_every_s},
    "flush-idle-segments": {"task": "athena.beat.idle_flush", "schedule": _settings.idle_flush_every_s},
    "sweep-pending-events": {"task": "athena.beat.pending_sweep", "schedule": _settings.pending_sweep_every_s},
    "sweep-unindexed-events": {"task": "athena.beat.index_sweep", "schedule": _settings.index_sweep_every_s},
    "community-analytics": {
        "task": "athena.beat.analytics",
        "schedule": crontab(hour=_settings.analytics_hour_utc, minute=0),
    },
}
beat_schedule_filename = str(_settings.data_dir / "celerybeat-schedule")
