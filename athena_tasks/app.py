"""The Celery application. `celery -A athena_tasks.app worker|beat|flower`."""
from __future__ import annotations

from celery import Celery

app = Celery("athena")
app.config_from_object("athena_tasks.celeryconfig")
app.conf.include = [
    "athena_tasks.chains.pipeline",
    "athena_tasks.chains.pending_sweep",
    "athena_tasks.chains.idle_flush",
    "athena_tasks.promote.promoter",
    "athena_tasks.promote.archiver",
    "athena_tasks.analytics.communities",
]
