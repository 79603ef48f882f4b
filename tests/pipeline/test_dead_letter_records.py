"""A task that fails for good leaves two records in two stores (SPEC S7): a dead letter in the document
store and its scope's failure mark in Redis. One store failing must not cost the other record, and the
log must say which one failed. The stores are real (SQLite, Redis); only the failing write is patched."""
from __future__ import annotations

import logging
import sqlite3
import uuid

import pytest
import redis

from athena_core.wiring.redis_keys import failed_key
from athena_core.wiring.runtime import Runtime
from athena_tasks.app import app


@pytest.fixture
def task_runtime(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """The failure hook reads this test's stores; the session's worker (tests/pipeline/conftest.py) keeps
    its own runtime."""
    app.loader.import_default_modules()
    monkeypatch.setattr("athena_tasks.base.get_runtime", lambda: runtime)
    return runtime


def fail_for_good(scope_key: str) -> str:
    task_id = uuid.uuid4().hex
    app.tasks["athena.pipeline.segment"].on_failure(
        RuntimeError("summarizer down"), task_id, ({"scope": scope_key},), {}, None)
    return task_id


def test_a_dead_letter_that_cannot_be_written_still_marks_the_scope_failed(
    task_runtime: Runtime, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def locked(*_: object, **__: object) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(task_runtime.documents, "record_dead_letter", locked)
    scope_key = f"t{uuid.uuid4().hex[:8]}:u1:s1"
    with caplog.at_level(logging.ERROR, logger="athena_tasks.base"):
        task_id = fail_for_good(scope_key)
    assert task_runtime.redis.get(failed_key(scope_key)) is not None
    [problem] = [r for r in caplog.records if r.exc_info]
    assert problem.getMessage() == f"could not write the dead letter of athena.pipeline.segment[{task_id}] to the document store"


def test_a_scope_that_cannot_be_marked_failed_still_gets_its_dead_letter(
    task_runtime: Runtime, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def refused(*_: object, **__: object) -> None:
        raise redis.ConnectionError("Connection refused")

    monkeypatch.setattr("athena_tasks.base.mark_failed", refused)
    scope_key = f"t{uuid.uuid4().hex[:8]}:u1:s1"
    with caplog.at_level(logging.ERROR, logger="athena_tasks.base"):
        task_id = fail_for_good(scope_key)
    [letter] = [d for d in task_runtime.documents.dead_letters(limit=1000) if d["task_id"] == task_id]
    assert scope_key in letter["error"] and "summarizer down" in letter["error"]
    [problem] = [r for r in caplog.records if r.exc_info]
    assert problem.getMessage().startswith(f"could not mark scope {scope_key} failed in Redis after "
                                           f"athena.pipeline.segment[{task_id}]")
