"""A task running when the worker loses the broker goes on to its end (celeryconfig:
`worker_cancel_long_running_tasks_on_connection_loss = False`): its writes are durable and idempotent, and
the message it could not ack is delivered again (or its events re-enqueued by the pending sweep) and finds
the work done. Cancelling it, Celery 6's coming default, would kill the pool process and lose that work.

Celery warns about the coming default on every reconnect, nine lines in each worker's log per Redis
restart. The choice is made, so the notice is muted, and only it. This happens once the worker's
logging is set up (`celeryd_after_setup`), because setting up logging turns Celery's deprecation warnings
back to "always".
"""
from __future__ import annotations

import warnings

from celery.exceptions import CPendingDeprecationWarning
from celery.signals import celeryd_after_setup

# The start of Celery's notice (celery.worker.consumer.consumer.CANCEL_TASKS_BY_DEFAULT), as a
# `warnings` filter matches it: from the message's first character, case-insensitively.
NOTICE_START = r"\s*In Celery 5\.1 we introduced an optional breaking change"


@celeryd_after_setup.connect
def mute_cancel_default_notice(**_: object) -> None:
    warnings.filterwarnings("ignore", message=NOTICE_START, category=CPendingDeprecationWarning)
