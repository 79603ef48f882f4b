"""A broadcast consumer is cancelled while Redis is down (athena_tasks/kombu_redis_unsubscribe.py).

A private redis-server on a Unix socket, as the embedded default runs it: a kombu consumer of a fanout
queue subscribes over pub/sub, the server is SIGKILLed, and the consumer is cancelled as a worker does
when it tears its broadcast consumers down. kombu 5.7's own `_unsubscribe_from` raises there (the CI
fault run's beat-jobs worker died of it); Athena's wrapper must not, and must forget the pattern.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from kombu import Connection, Consumer, Exchange, Queue
from kombu.transport import redis as kombu_redis

import athena_tasks.app  # noqa: F401  (installs the wrapper, as every worker does)

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
pytestmark = pytest.mark.skipif(not os.path.exists(REDIS_SERVER), reason="no redis-server binary")

QUEUE = "athena-broadcast-test"


@pytest.fixture
def socket_redis() -> Iterator[tuple[Path, subprocess.Popen]]:
    directory = Path(tempfile.mkdtemp(prefix="athena-r", dir="/tmp"))  # a Unix socket path has ~100 bytes
    path = directory / "redis.sock"
    proc = subprocess.Popen([REDIS_SERVER, "--port", "0", "--unixsocket", str(path), "--save", "",
                             "--appendonly", "no", "--dir", str(directory)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(unix_socket_path=str(path))
    deadline = time.monotonic() + 10
    while True:
        try:
            if client.ping():
                break
        except redis.RedisError:
            assert time.monotonic() < deadline, "private redis-server did not start"
            time.sleep(0.02)
    yield path, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    shutil.rmtree(directory, ignore_errors=True)


def _subscribed_consumer(path: Path) -> tuple[Connection, Consumer]:
    connection = Connection(f"redis+socket://{path}")
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


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def test_cancelling_a_broadcast_consumer_while_redis_is_down_raises_nothing(socket_redis) -> None:
    path, proc = socket_redis
    connection, consumer = _subscribed_consumer(path)
    channel = consumer.channel
    _kill(proc)

    consumer.cancel()

    assert QUEUE not in channel.active_fanout_queues
    assert not channel.subclient.patterns  # not subscribed again when the pub/sub client reconnects
    connection.release()


def test_kombus_own_unsubscribe_raises_there(socket_redis) -> None:
    """The failure the wrapper exists for. If kombu stops raising here, the wrapper can go."""
    path, proc = socket_redis
    connection, consumer = _subscribed_consumer(path)
    kombus_own = kombu_redis.Channel._unsubscribe_from.__wrapped__
    _kill(proc)

    with pytest.raises(redis.ConnectionError):
        kombus_own(consumer.channel, QUEUE)
    connection.release()
