"""Debounced pipeline runs (SPEC S9): at most one queued run per agent scope, one queued arrival index task
per shard of the users (issue 15).

A Celery publish costs more than the durable write, so a flood of events must not publish one chain
each. The first event sets a flag and publishes; later events see the flag and return; the run's first
step clears the flag before reading the pending events. The flag expires, so a run lost with a broker
outage cannot block the scope; the pending sweep covers the gap in between.

The run is published by task name (`pipeline_for`), so this module needs no task module: the pipeline's
tasks (chains/pipeline.py) ask for their next run through it, and nothing imports back (no cycle).
"""
from __future__ import annotations

import zlib

import redis
from celery import chain
from celery.canvas import Signature

from athena_core.models.scope import AgentScope, UserScope
from athena_core.observability import metrics
from athena_core.wiring.redis_keys import index_request_key, run_request_key, user_key
from athena_core.wiring.settings import get_settings
from athena_tasks.app import app

# The steps of one run, in order (their tasks live in chains/pipeline.py under these names).
PIPELINE_STEPS = ("athena.pipeline.coalesce", "athena.pipeline.segment", "athena.pipeline.summarize",
                  "athena.pipeline.embed")
INDEX_TASK = "athena.pipeline.index_events"  # indexes a user's newly arrived events (chains/pipeline.py)


def pipeline_for(scope: AgentScope, flush: bool = False) -> Signature:
    """The chain of one run of the scope: coalesce(scope key, flush) → segment → summarize → embed.

    No step keeps a result (`ignore_result`, as the tasks themselves say): also where the publisher has
    not imported the task modules (the API), the publish then waits on, and subscribes to, nothing."""
    first, *rest = PIPELINE_STEPS
    options = {"ignore_result": True}
    return chain(app.signature(first, args=(scope.key, flush), options=options),
                 *(app.signature(name, options=options) for name in rest))


def clear_run_request(client: redis.Redis, scope: AgentScope) -> None:
    client.delete(run_request_key(scope))


class PipelineRunRequester:
    def __init__(self, client: redis.Redis, ttl_s: int, index_delay_s: float | None = None) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        settings = get_settings()
        self.index_delay_s = settings.index_delay_s if index_delay_s is None else index_delay_s
        self.shards = max(1, settings.index_shards)

    def request(self, scope: AgentScope, flush: bool = False) -> bool:
        """Ask for the user's arrival indexing (`request_index`), and publish a run unless one is already
        queued for the scope. True when this call published a run.

        A queued ordinary run also serves an idle flush request: the idle-flush beat asks again next tick.
        """
        self.request_index(scope.user_scope)
        key = run_request_key(scope)
        if not self.redis.set(key, "1", nx=True, ex=self.ttl_s):
            metrics.PIPELINE_PUBLISH.labels("debounced").inc()
            return False
        try:
            self.publish(scope, flush)
        except Exception:
            self.redis.delete(key)
            raise
        metrics.PIPELINE_PUBLISH.labels("published").inc()
        return True

    def publish(self, scope: AgentScope, flush: bool = False) -> None:
        pipeline_for(scope, flush=flush).apply_async()

    def request_index(self, user: UserScope) -> bool:
        """Publish the arrival index task of the user's shard (`index_events`, `index_delay_s` from now, so a
        burst shares one embedding batch) unless one is queued. The task clears the flag before it reads: an
        event stored after that asks again. A lost task is covered by the next one and the index sweep."""
        return self.request_shard(shard_of(user, self.shards))

    def request_shard(self, shard: int) -> bool:
        key = index_request_key(shard)
        if not self.redis.set(key, "1", nx=True, ex=self.ttl_s):
            return False
        try:
            app.send_task(INDEX_TASK, args=(shard,), countdown=self.index_delay_s or None, ignore_result=True)
        except Exception:
            self.redis.delete(key)
            raise
        return True


def shard_of(user: UserScope, shards: int) -> int:
    """A stable shard of the user (crc32 of its key): the same in every process, every run."""
    return zlib.crc32(user_key(user).encode("utf-8")) % max(1, shards)


def clear_index_request(client: redis.Redis, shard: int) -> None:
    client.delete(index_request_key(shard))
