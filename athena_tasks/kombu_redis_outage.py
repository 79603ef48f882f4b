"""Celery processes survive a Redis restart: two wraps of kombu 5.7's Redis channel.

Both failures end a worker with exit code 1 while Redis is down, in code that only tears down what the
lost connection already ended. Installed when `athena_tasks.app` is imported (every worker, beat and
Flower). Each test also checks that kombu's own method still fails, so a wrap can go once kombu is fixed
(tests/pipeline/test_broadcast_cancel_redis_down.py, test_connection_close_redis_down.py).

**Cancelling a broadcast consumer** (`Channel._unsubscribe_from`). Workers listen to broadcast queues
(remote control) over Redis pub/sub, and tear those consumers down when Redis restarts. kombu then sends
PUNSUBSCRIBE for each one. On the embedded default's Unix socket the write fails at once, redis-py's retry
finds the server still down, and the ConnectionError ended the beat-jobs worker during a CI fault run
(2026-12-07). kombu only skips the command when the pub/sub connection has no socket, and a socket whose
server is gone looks alive until written to. A lost connection has already ended the subscription on the
server. Locally the pub/sub client still holds the pattern and would subscribe again on its next connect,
so the wrap forgets the pattern there too.

**Closing a connection whose Redis died** (`Channel._connparams`, celery/kombu#582). Celery first collects
the connection, then closes it while ignoring connection errors. `collect` closes the channels one by one
and drops the transport's `client`. If one channel's close fails (its unacked deliveries cannot be put
back while Redis is down), the channels after it stay open. The final close then reaches one of them,
which tries again to restore its unacked messages and builds a pool from `transport.client`, now None.
The resulting `AttributeError: 'NoneType' object has no attribute 'hostname'` is not a connection error,
so nothing ignores it, and the worker exits ("Unrecoverable error"). Under `athena run`, 40 SIGKILLs of the
embedded Redis during ingest ended the pipeline worker and the beat-jobs worker once each. With the wrap,
the same 40 kills ended neither. A transport without its client now answers with `redis.ConnectionError`, which
is what the situation is. Celery ignores it and reconnects. The unacked messages stay in Redis's unacked
set, where the visibility timeout restores them, and the pending sweep covers their events either way.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import redis
from kombu.transport import redis as kombu_redis

LOST_CONNECTION = (redis.ConnectionError, redis.TimeoutError)
MARK = "athena_outage_wrap"  # set on a wrap, so importing this module twice wraps nothing twice


def tolerate_lost_connection(unsubscribe_from: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """Wrap `Channel._unsubscribe_from`: on a lost connection, forget the queue's patterns."""

    @functools.wraps(unsubscribe_from)
    def _unsubscribe_from(channel: Any, queue: str) -> None:
        try:
            unsubscribe_from(channel, queue)
        except LOST_CONNECTION:
            subclient = channel.subclient
            topics = channel._get_subscribe_topics(queue)
            for pattern in subclient._normalize_keys(dict.fromkeys(topics)):
                subclient.patterns.pop(pattern, None)

    return _unsubscribe_from


def refuse_closed_transport(connparams: Callable[..., dict]) -> Callable[..., dict]:
    """Wrap `Channel._connparams`: a transport without its client answers as a lost connection."""

    @functools.wraps(connparams)
    def _connparams(channel: Any, *args: Any, **kwargs: Any) -> dict:
        transport = channel.connection
        if transport is None or getattr(transport, "client", None) is None:
            raise redis.ConnectionError("the broker connection is closed")
        return connparams(channel, *args, **kwargs)

    return _connparams


WRAPS: dict[str, Callable[[Callable], Callable]] = {
    "_unsubscribe_from": tolerate_lost_connection,
    "_connparams": refuse_closed_transport,
}


def install() -> None:
    """Wrap each method of kombu's Redis channel once."""
    for name, wrap in WRAPS.items():
        current = getattr(kombu_redis.Channel, name)
        if not getattr(current, MARK, False):
            wrapped = wrap(current)
            setattr(wrapped, MARK, True)
            setattr(kombu_redis.Channel, name, wrapped)


install()
