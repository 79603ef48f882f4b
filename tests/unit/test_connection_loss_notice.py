"""Running tasks outlive a lost broker connection by choice (celeryconfig), so Celery's notice about its
coming default is muted in the worker, and only that notice."""
from __future__ import annotations

import warnings

from celery.exceptions import CPendingDeprecationWarning
from celery.worker.consumer.consumer import CANCEL_TASKS_BY_DEFAULT

from athena_tasks.app import app
from athena_tasks.connection_loss_notice import mute_cancel_default_notice


def test_the_cancel_default_notice_is_muted_and_no_other_warning() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # what Celery's logging set-up leaves for its deprecation warnings
        mute_cancel_default_notice()
        warnings.warn(CANCEL_TASKS_BY_DEFAULT, CPendingDeprecationWarning)
        warnings.warn("another Celery notice", CPendingDeprecationWarning)
        warnings.warn(CANCEL_TASKS_BY_DEFAULT, UserWarning)
    assert [(w.category, str(w.message)) for w in seen] == [
        (CPendingDeprecationWarning, "another Celery notice"), (UserWarning, CANCEL_TASKS_BY_DEFAULT)]


def test_running_tasks_are_not_cancelled_on_connection_loss() -> None:
    assert app.conf.worker_cancel_long_running_tasks_on_connection_loss is False
