"""Celery configuration of Athena (SPEC S7): late acks, prefetch 1, time limits, JSON only, two queues, beat.

Loaded the Celery way, `app.config_from_object("celeryconfig")` (athena_tasks/app.py). It is declarative:
plain values, the numbers read from the `ATHENA_*` settings (so tests and demos can run the schedules
fast). Importing it starts nothing and connects nowhere:

- Celery reads this module lazily: `config_from_object` only records its name, and the module is imported
  when the configuration is first read (a worker, beat or Flower starting, or the first publish).
- `broker_url` is where the deployment's Redis is, derived without touching it: `ATHENA_REDIS_URL`, or the
  Unix socket of the data directory's embedded server (`configured_location`).
- Making sure the embedded server runs is the job of the process that needs it, when it starts: `make run`
  (athena_devtools/stack.py) starts it before the API, workers and beat; the API's runtime starts it
  (`resolve_redis`) before it publishes; a bare `celery -A athena_tasks.app worker|beat|flower` on the
  embedded default starts it from the `import_modules` signal, which Celery sends as those programs start
  (athena_tasks/app.py). Production sets `ATHENA_REDIS_URL`, so nothing is ever started there.
"""
from __future__ import annotations

from celery.schedules import crontab
from kombu import Queue

from athena_core.wiring.redis_connection import configured_location
from athena_core.wiring.settings import get_settings

_settings = get_settings()

PIPELINE_QUEUE = "athena.pipeline"
BEAT_QUEUE = "athena.beat"
# How every worker is started (`athena run`, the production topology; compose/docker-compose.yml spells the
# same). -E: task events, for Flower. --without-gossip: no worker listens to the others' heartbeats (nothing
# here uses gossip), so a Redis restart tears down one broadcast consumer less and logs no "Error on
# restarting Gossip" traceback per worker (Celery passes the connection it has just dropped).
WORKER_OPTIONS = ("-l", "info", "-E", "--without-gossip")

include = [
    "athena_tasks.chains.pipeline",
    "athena_tasks.chains.pending_sweep",
    "athena_tasks.chains.idle_flush",
    "athena_tasks.chains.index_sweep",
    "athena_tasks.promote.promoter",
    "athena_tasks.promote.archiver",
    "athena_tasks.analytics.communities",
]

# ATHENA_BROKER_URL (RabbitMQ, say) moves only the task queue; results, locks and STM stay on Redis.
result_backend = configured_location(_settings).celery_url
broker_url = _settings.broker_url or result_backend
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
# A task running when the broker connection drops finishes (its work is durable and idempotent; the
# message is delivered again); Celery 6 would cancel it by default (athena_tasks/connection_loss_notice.py).
worker_cancel_long_running_tasks_on_connection_loss = False
task_soft_time_limit = _settings.task_soft_time_limit_s
task_time_limit = _settings.task_time_limit_s
worker_send_task_events = True
task_send_sent_event = True

# Two queues, each with its own worker (`make run` and compose): a pipeline backlog never delays the beat
# jobs, and a slow beat job never holds a pipeline slot.
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
