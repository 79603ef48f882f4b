"""Which Redis this process talks to: `ATHENA_REDIS_URL`, or the data directory's embedded server."""
from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from athena_core.wiring.embedded_redis import (
    RedisLocation, embedded_location, ensure_embedded_redis, location_from_url,
)
from athena_core.wiring.settings import Settings


def configured_location(settings: Settings) -> RedisLocation:
    """Where this deployment's Redis is, without starting or connecting to anything (Celery's config reads
    this at import; `resolve_redis` is what makes sure the embedded server runs)."""
    if settings.redis_url:
        return location_from_url(settings.redis_url)
    return embedded_location(settings.data_dir)


def resolve_redis(settings: Settings) -> RedisLocation:
    if settings.redis_url:
        return location_from_url(settings.redis_url)
    return ensure_embedded_redis(settings.data_dir)


def redis_client(location: RedisLocation) -> redis.Redis:
    """Short timeouts and one immediate retry on a connection error only: a Redis outage must degrade a
    request quickly, not hang it (redis-py's default elsewhere is 10 retries with backoff), while a pooled
    connection left stale by a Redis restart is replaced at once instead of failing the first command."""
    return redis.Redis.from_url(
        location.redis_url, socket_connect_timeout=1.0, socket_timeout=2.0, health_check_interval=30,
        retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
    )
