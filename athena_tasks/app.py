"""The Celery application. `celery -A athena_tasks.app worker|beat|flower`."""
from __future__ import annotations

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger

from athena_core.json_logs import JsonFormatter
from athena_core.settings import get_settings
import athena_tasks.sentry_hooks  # noqa: F401  (SENTRY_DSN → Sentry in the worker, via celeryd_init)

app = Celery("athena")
app.config_from_object("athena_tasks.celeryconfig")
app.conf.include = [
    "athena_tasks.chains.pipeline",
    "athena_tasks.chains.pending_sweep",
    "athena_tasks.chains.idle_flush",
    "athena_tasks.chains.index_sweep",
    "athena_tasks.promote.promoter",
    "athena_tasks.promote.archiver",
    "athena_tasks.analytics.communities",
]


@after_setup_logger.connect
@after_setup_task_logger.connect
def _json_logs(logger, **_: object) -> None:  # noqa: ANN001 - celery signal signature
    """ATHENA_LOG_FORMAT=json: workers and beat log one JSON object per line, with the task id."""
    if get_settings().log_format == "json":
        for handler in logger.handlers:
            handler.setFormatter(JsonFormatter())
