"""A Celery process survives cancelling a broadcast consumer while Redis is down.

Workers listen to broadcast queues (remote control; gossip where it runs) over Redis pub/sub. When Redis restarts, a
worker tears those consumers down; kombu's Redis transport then sends PUNSUBSCRIBE for each one. On the
embedded default's Unix socket the write fails at once, redis-py's retry finds the server still down,
and the ConnectionError escaped from `Channel._unsubscribe_from` and ended the beat-jobs worker with
exit code 1 during a fault run (CI, 2026-12-07). kombu 5.7 only skips the command when the pub/sub
connection has no socket; a socket whose server is gone looks alive until written to.

A lost connection has already ended the server's side of the subscription, so there is nothing left to
undo there. Locally the pub/sub client still holds the pattern and would subscribe to it again on its
next connect, so it is forgotten here as well. Installed when `athena_tasks.app` is imported (every
worker, beat and Flower).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import redis
from kombu.transport import redis as kombu_redis

LOST_CONNECTION = (redis.ConnectionError, redis.TimeoutError)


def tolerate_lost_connection(unsubscribe_from: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """Wrap kombu's `Channel._unsubscribe_from`: on a lost connection, forget the queue's patterns."""

    @functools.wraps(unsubscribe_from)
    def _unsubscribe_from(channel: Any, queue: str) -> None:
        try:
            unsubscribe_from(channel, queue)
        except LOST_CONNECTION:
            subclient = channel.subclient
            topics = channel._get_subscribe_topics(queue)
            for pattern in subclient._normalize_keys(dict.fromkeys(topics)):
                subclient.patterns.pop(pattern, None)

    _unsubscribe_from.tolerates_lost_connection = True  # type: ignore[attr-defined]
    return _unsubscribe_from


def install() -> None:
    """Patch kombu's Redis channel once (importing this module twice must not wrap it twice)."""
    current = kombu_redis.Channel._unsubscribe_from
    if not getattr(current, "tolerates_lost_connection", False):
        kombu_redis.Channel._unsubscribe_from = tolerate_lost_connection(current)


install()
