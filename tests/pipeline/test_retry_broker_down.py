"""A task whose retry the broker refuses goes back to its queue with a one-line reason (athena_tasks/base.py),
instead of Celery's reject-for-good with the broker's chained traceback. The broker here is real and
absent: a Redis URL on a loopback port where nothing listens, so the publish fails as in an outage."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery import Celery
from celery.exceptions import Reject

from athena_tasks.base import AthenaTask


@pytest.fixture
def refusing_app() -> Iterator[Celery]:
    app = Celery("broker-down", broker="redis://127.0.0.1:9/0", set_as_current=False)  # port 9: nothing listens
    app.conf.broker_transport_options = {"socket_connect_timeout": 0.5}
    app.conf.task_publish_retry = False
    app.conf.task_serializer = "json"
    yield app
    app.close()


def retry_inside_a_worker(app: Celery, args: list) -> Reject:
    @app.task(base=AthenaTask, bind=True, name="tests.broker_down")
    def job(self, *_: object) -> None: ...

    job.push_request(id="task-1", retries=0, args=args, kwargs={}, called_directly=False, is_eager=False)
    try:
        with pytest.raises(Reject) as caught:
            job.retry(exc=RuntimeError("Redis lock: connection refused"), countdown=1)
    finally:
        job.pop_request()
    return caught.value


def test_a_retry_the_broker_refuses_puts_the_message_back_with_one_reason(refusing_app: Celery) -> None:
    rejected = retry_inside_a_worker(refusing_app, ["acme:u1:a1"])
    assert rejected.requeue is True
    assert str(rejected.reason).startswith("the broker refused its retry (")
    assert rejected.__cause__ is None and rejected.__suppress_context__  # no chained broker traceback


def test_a_retry_refused_for_another_reason_is_still_rejected_for_good(refusing_app: Celery) -> None:
    rejected = retry_inside_a_worker(refusing_app, [{"a set is no JSON"}])  # refused before any connection
    assert rejected.requeue is False
    assert type(rejected.reason).__name__ == "EncodeError"
