"""A worker closes its broker connection after Redis died (athena_tasks/kombu_redis_outage.py).

The data directory's embedded Redis, as `make run` has it: one kombu connection with two consuming
channels, each holding an unacked delivery, and a BRPOP in flight, as a worker's consumer has them. The server is
SIGKILLed, and the connection is cleaned up the way Celery's consumer does on a lost broker: bound the
sockets, `collect`, then `close` with connection errors ignored. With kombu 5.7 alone that close raises
`AttributeError: 'NoneType' object has no attribute 'hostname'`, which killed a worker under `make run`.
"""
from __future__ import annotations

import pytest
from celery.worker.consumer.consumer import bound_open_broker_sockets
from kombu import Connection, Consumer, Producer, Queue
from kombu.common import ignore_errors
from kombu.transport import redis as kombu_redis

import athena_tasks.app  # noqa: F401  (installs the wrapper, as every worker does)
from tests.pipeline.killable_redis import embedded_redis  # noqa: F401  (fixture)

QUEUES = ("athena-close-test-a", "athena-close-test-b")


def _consuming_connection(url: str) -> Connection:
    """Two channels, each with one delivery not yet acked; the first channel's BRPOP is in flight."""
    with Connection(url) as producer_connection:
        for name in QUEUES:
            Producer(producer_connection.default_channel).publish({"queue": name}, routing_key=name,
                                                                  declare=[Queue(name)])
    connection = Connection(url)
    delivered: list = []
    channels = [connection.default_channel, connection.channel()]
    for channel, name in zip(channels, QUEUES):
        consumer = Consumer(channel, queues=[Queue(name)], callbacks=[lambda body, message: delivered.append(message)])
        consumer.qos(prefetch_count=1)
        consumer.consume()
        connection.drain_events(timeout=5)
    assert len(delivered) == 2 and all(channel.qos._delivered for channel in channels), "nothing left unacked"
    channels[0]._brpop_start()
    return connection


def _celery_cleanup(connection: Connection) -> None:
    """Celery's consumer on a lost broker (`on_connection_error_after_connected`), in the same order."""
    bound_open_broker_sockets(connection, 1.0)
    try:
        connection.collect(socket_timeout=1.0)
    except Exception:  # noqa: BLE001 - Celery ignores any error here too
        pass
    ignore_errors(connection, connection.close)


def test_closing_a_connection_redis_dropped_raises_nothing(embedded_redis) -> None:
    url, kill = embedded_redis
    connection = _consuming_connection(url)
    kill()

    _celery_cleanup(connection)  # kombu alone: AttributeError: 'NoneType' object has no attribute 'hostname'


def test_kombus_own_connparams_raises_attribute_error_there(embedded_redis) -> None:
    """The failure the wrapper exists for. If kombu stops raising here, the wrapper can go."""
    url, kill = embedded_redis
    connection = _consuming_connection(url)
    channel = connection.default_channel
    kill()
    _celery_cleanup(connection)

    assert channel.connection is not None and channel.connection.client is None  # the state the crash met
    with pytest.raises(AttributeError, match="hostname"):
        kombu_redis.Channel._connparams.__wrapped__(channel)
