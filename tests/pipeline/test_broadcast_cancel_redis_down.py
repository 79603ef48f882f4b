"""A broadcast consumer is cancelled while Redis is down (athena_tasks/kombu_redis_outage.py).

The data directory's embedded Redis, on its Unix socket, as the CI fault run had it: a kombu consumer of a
fanout queue subscribes over pub/sub, the server is SIGKILLed, and the consumer is cancelled as a worker
does when it tears its broadcast consumers down. kombu 5.7's own `_unsubscribe_from` raises there (the CI
fault run's beat-jobs worker died of it); Athena's wrapper must not, and must forget the pattern.
"""
from __future__ import annotations

import socket

import pytest
import redis
from kombu import Connection, Consumer, Exchange, Queue
from kombu.transport import redis as kombu_redis

import athena_tasks.app  # noqa: F401  (installs the wrapper, as every worker does)
from tests.pipeline.killable_redis import embedded_redis  # noqa: F401  (fixture)

QUEUE = "athena-broadcast-test"


def _subscribed_consumer(url: str) -> tuple[Connection, Consumer]:
    connection = Connection(url)
    channel = connection.channel()
    consumer = Consumer(channel, queues=[Queue(QUEUE, Exchange(QUEUE, type="fanout"), auto_delete=True)],
                        callbacks=[lambda body, message: None])
    consumer.consume()
    try:
        connection.drain_events(timeout=0.2)  # the poller sends PSUBSCRIBE for the fanout queue
    except socket.timeout:
        pass
    assert channel.subclient.patterns, "the fanout queue was never subscribed"
    return connection, consumer


def test_cancelling_a_broadcast_consumer_while_redis_is_down_raises_nothing(embedded_redis) -> None:
    url, kill = embedded_redis
    connection, consumer = _subscribed_consumer(url)
    channel = consumer.channel
    kill()

    consumer.cancel()

    assert QUEUE not in channel.active_fanout_queues
    assert not channel.subclient.patterns  # not subscribed again when the pub/sub client reconnects
    connection.release()


def test_kombus_own_unsubscribe_raises_there(embedded_redis) -> None:
    """The failure the wrapper exists for. If kombu stops raising here, the wrapper can go."""
    url, kill = embedded_redis
    connection, consumer = _subscribed_consumer(url)
    kombus_own = kombu_redis.Channel._unsubscribe_from.__wrapped__
    kill()

    with pytest.raises(redis.ConnectionError):
        kombus_own(consumer.channel, QUEUE)
    connection.release()
