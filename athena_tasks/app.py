"""The Celery application. `celery -A athena_tasks.app worker|beat|flower`.

Importing it starts nothing and connects nowhere (celeryconfig.py says how the broker is found). The one
side effect a Celery program may need, the embedded default's redis-server, is started when a worker,
beat or Flower starts: Celery sends `import_modules` from `loader.import_default_modules()` as each of
them starts, before any connection to the broker.
"""
from __future__ import annotations

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger, import_modules

from athena_core.observability.json_logs import JsonFormatter
from athena_core.wiring.settings import get_settings
import athena_tasks.connection_loss_notice  # noqa: F401  (running tasks outlive a lost broker, quietly)
import athena_tasks.cpu_priority  # noqa: F401  (ATHENA_WORKER_NICE, via celeryd_init)
import athena_tasks.kombu_redis_outage  # noqa: F401  (workers survive a Redis restart: two kombu wraps)
import athena_tasks.sentry_hooks  # noqa: F401  (SENTRY_DSN → Sentry in the worker, via celeryd_init)

app = Celery("athena")
app.config_from_object("celeryconfig")  # read when the configuration is first needed, not here


@import_modules.connect
def _embedded_broker_up(sender: Celery | None = None, **_: object) -> None:
    """The embedded default (no ATHENA_REDIS_URL): make sure the data directory's redis-server runs before
    this worker, beat or Flower connects to it (a no-op when it answers, e.g. under `make run`)."""
    if sender is not app:
        return
    settings = get_settings()
    if not settings.redis_url:
        from athena_core.wiring.embedded_redis import ensure_embedded_redis

        ensure_embedded_redis(settings.data_dir)


@after_setup_logger.connect
@after_setup_task_logger.connect
def _json_logs(logger, **_: object) -> None:  # noqa: ANN001 - celery signal signature
    """ATHENA_LOG_FORMAT=json: workers and beat log one JSON object per line, with the task id."""
    if get_settings().log_format == "json":
        for handler in logger.handlers:
            handler.setFormatter(JsonFormatter())
