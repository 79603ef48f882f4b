"""Bounded waits for asynchronous outcomes (the worker runs beside the test)."""
from __future__ import annotations

import time
from collections.abc import Callable

# Upper bounds, not expectations: CI machines are small and a loaded one runs the worker slowly.
DEFAULT_TIMEOUT_S = 180.0


def wait_until(predicate: Callable[[], object], timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def run_pipeline_and_wait(scope, flush: bool = True, steps=None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Run one pipeline (or the given steps) on the worker and wait until its last step has run.

    Pipeline tasks store no results (issue 12 item 7: results would keep a user's ids past a purge), so
    the wait is on state: a probe task chained after the last step sets a Redis key.
    """
    import uuid

    from celery import chain

    from athena_tasks.chains.pipeline import pipeline_for
    from athena_tasks.worker_runtime import get_runtime

    key = f"tests:pipeline-done:{uuid.uuid4().hex}"
    signature = pipeline_for(scope, flush=flush) if steps is None else chain(*steps)
    (signature | pipeline_done.si(key)).apply_async()
    redis = get_runtime().redis
    wait_until(lambda: redis.exists(key), timeout_s)
    redis.delete(key)


def promote_and_wait(runtime, user, timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """Run the promotion beat on the worker until every hot chain of the user is promoted.

    The beat fans out one task per user (issue 13 item 5), so its own result counts users, not promotions:
    the wait is on state (each hot chain's promoted content hash, recorded after its facts are written).
    A pass skips a chain whose user lock is busy (the pipeline was writing) and leaves it to the next
    pass, so one promoted chain does not mean all: the beat is sent again until none is left.
    Returns the number of users the first beat fanned out to."""
    from athena_core.ltm.promotion import content_hash
    from athena_core.models.events import utc_now
    from athena_core.mtm.chain_heat import chain_heat
    from athena_tasks.app import app

    settings = runtime.settings
    users = app.send_task("athena.beat.promote").get(timeout=timeout_s)["users"]

    def waiting() -> list:
        now = utc_now()
        return [c for c in runtime.documents.recent_chains(user)
                if chain_heat(c, now, settings.heat_tau_hours).heat >= settings.promote_threshold
                and c.promoted_evidence != content_hash(c)]

    def all_promoted() -> bool:
        if not waiting():
            return True
        time.sleep(0.5)  # the pass of the last beat may still be running
        if waiting():
            app.send_task("athena.beat.promote").get(timeout=timeout_s)
            return False
        return True

    wait_until(all_promoted, timeout_s)
    if not any(c.promoted_evidence for c in runtime.documents.recent_chains(user)):
        raise AssertionError("no chain of the user is hot enough to promote")
    return users


def wait_indexed(documents, user, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Until every consolidated event of the user is in the search indexes (SPEC S7: indexing is state)."""
    wait_until(lambda: documents.unindexed_events(user, 1) == [], timeout_s)


def _probe_task():
    from athena_tasks.app import app

    @app.task(name="tests.pipeline_done", ignore_result=True)
    def done(key: str) -> None:
        from athena_tasks.worker_runtime import get_runtime

        get_runtime().redis.set(key, "1", ex=600)

    return done


pipeline_done = _probe_task()
