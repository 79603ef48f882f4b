"""Every Redis key the product writes, in one place (issue 13): name, shape and who owns it.

Redis holds no memory of record (the event log does, SPEC S2); it holds views, coordination and
Celery's own keys. A tenant/user/agent scope key is `{tenant}:{user}:{agent}` (`AgentScope.key`); a user
key is `{tenant}:{user}`. Patterns (for SCAN MATCH) escape the ids with `glob_escape`.

| key | type | written by | meaning |
|---|---|---|---|
| `stm:{tenant}:{user}:{agent}` | list | stm/stm_window.py (push_window.lua) | the STM window (newest first) |
| `pipeline:requested:{tenant}:{user}:{agent}` | string | athena_tasks/chains/run_requests.py | a pipeline run is queued |
| `index:requested:{shard}` | string | athena_tasks/chains/run_requests.py | an arrival index task of the shard is queued |
| `pipeline:failed:{scope key}` | string | athena_tasks/failed_scopes.py | a scope's failure backoff (error text) |
| `index:{tenant}:{user}` | scope key | athena_tasks/chains/index_sweep.py | the index sweep's scope key of a user |
| `sweep:bad-row:{digest}` | string | athena_tasks/failed_scopes.py | a bad event-log row already reported |
| `lock:{name}` | string | wiring/scope_lock.py | a leased scope lock (owner token) |
| `segment:{tenant}:{user}:{agent}` | lock name | athena_tasks/chains/pipeline.py | one pipeline run per scope at a time |
| `chains:{tenant}:{user}` | lock name | usecases/purge_fence.py | the user's write lock (`lock:chains:…`) |
| `fence:purged:{tenant}:{user}` | string | usecases/purge_fence.py | when the user was last purged |
| `rate:{tenant}:{epoch second}` | counter | athena_api/rate_limits.py | the tenant's requests this second |
| `celery-task-meta-{task id}` | string | Celery's result backend | task results (purge scrubs the user's) |
"""
from __future__ import annotations

from athena_core.models.scope import AgentScope, UserScope

TASK_RESULT_PREFIX = "celery-task-meta-"  # Celery's own result keys (purge deletes those naming a user)


def user_key(scope: UserScope) -> str:
    return f"{scope.tenant_id}:{scope.user_id}"


def stm_key(scope: AgentScope) -> str:
    """The agent's STM window (a list, newest first)."""
    return f"stm:{scope.key}"


def run_request_key(scope: AgentScope) -> str:
    """Set while a pipeline run of the agent's scope is queued (one run queued per scope)."""
    return f"pipeline:requested:{scope.key}"


def index_request_key(shard: int) -> str:
    """Set while an arrival index task of one shard of the users is queued (issue 15: one per shard)."""
    return f"index:requested:{int(shard)}"


def failed_key(scope_key: str) -> str:
    """A scope's failure backoff; the value is the error text."""
    return f"pipeline:failed:{scope_key}"


def index_scope_key(scope: UserScope) -> str:
    """The index sweep's scope key of a user (its failure backoff is `failed_key` of it)."""
    return f"index:{user_key(scope)}"


def bad_row_key(digest: str) -> str:
    """Remembers that a sweep already reported this bad event-log row."""
    return f"sweep:bad-row:{digest}"


def lock_key(name: str) -> str:
    """A leased scope lock; the value is its owner's token."""
    return f"lock:{name}"


def segment_lock_name(scope: AgentScope) -> str:
    """The lock a pipeline run of the scope holds (`lock:segment:…`): one run per scope at a time."""
    return f"segment:{scope.key}"


def user_write_lock_name(scope: UserScope) -> str:
    """The lock every writer of a user's chains, indexes and graph holds while it writes (and purge too)."""
    return f"chains:{user_key(scope)}"


def fence_key(scope: UserScope) -> str:
    """When the user was last purged (epoch seconds): tasks that began before it write nothing."""
    return f"fence:purged:{user_key(scope)}"


def rate_key(tenant_id: str, second: int) -> str:
    """The tenant's request count in one epoch second (admission, API only)."""
    return f"rate:{tenant_id}:{second}"


def glob_escape(text: str) -> str:
    """Literal text inside a Redis SCAN MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def user_key_patterns(scope: UserScope) -> tuple[str, ...]:
    """SCAN patterns of the user's STM windows, run requests and failure marks (purge deletes them)."""
    user = glob_escape(user_key(scope))
    return (f"stm:{user}:*", f"pipeline:requested:{user}:*", f"pipeline:failed:{user}:*",
            f"pipeline:failed:{user}", f"pipeline:failed:index:{user}")
