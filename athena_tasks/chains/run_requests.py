"""Debounced pipeline runs (SPEC S9): at most one queued run per agent scope.

A Celery publish costs more than the durable write, so a flood of events must not publish one chain
each. The first event sets a flag and publishes; later events see the flag and return; the run's first
step clears the flag before reading the pending events. The flag expires, so a run lost with a broker
outage cannot block the scope; the pending sweep covers the gap in between.
"""
from __future__ import annotations

import redis

from athena_core import metrics
from athena_core.models.scope import AgentScope


def run_request_key(scope: AgentScope) -> str:
    return f"pipeline:requested:{scope.key}"


def clear_run_request(client: redis.Redis, scope: AgentScope) -> None:
    client.delete(run_request_key(scope))


class PipelineRunRequester:
    def __init__(self, client: redis.Redis, ttl_s: int) -> None:
        self.redis = client
        self.ttl_s = ttl_s

    def request(self, scope: AgentScope, flush: bool = False) -> bool:
        """Publish a run unless one is already queued for the scope. True when this call published.

        A queued ordinary run also serves an idle flush request: the idle-flush beat asks again next tick.
        """
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
        from athena_tasks.chains.pipeline import pipeline_for

        pipeline_for(scope, flush=flush).apply_async()
