"""Sentry in the worker (SPEC S10): turned on by `SENTRY_DSN`, from the `celeryd_init` signal.

`celeryd_init` fires in the worker's main process before its consumer builds the task tracers and before
prefork children are forked, which is where sentry-sdk's Celery integration must hook in. Beat and
`celery call`/`inspect` never send it, so they stay without Sentry.
"""
from __future__ import annotations

from celery.signals import celeryd_init

from athena_core.observability.sentry_setup import init_sentry
from athena_core.wiring.settings import get_settings


@celeryd_init.connect
def _init_sentry_for_worker(**_: object) -> None:
    init_sentry(get_settings(), "worker")
