"""A real Celery worker in this process (celery.contrib.testing.start_worker; pytest-celery's fixtures need
Docker), consuming from the tests' real Redis, with its tasks bound to a runtime the tests can inspect."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker
from fastapi.testclient import TestClient

from athena_core.wiring.runtime import Runtime, build_runtime
from athena_core.wiring.settings import Settings
from athena_tasks.worker_runtime import set_runtime


@pytest.fixture(scope="session")
def worker_runtime(tmp_path_factory, redis_url: str) -> Iterator[Runtime]:
    from athena_tasks.app import app

    app.loader.import_default_modules()
    settings = Settings(data_dir=tmp_path_factory.mktemp("worker"), redis_url=redis_url, segment_idle_s=1,
                        pipeline_batch_events=30,  # small batches: the force-flush test crosses several runs
                        index_sweep_age_s=0)  # the index sweep takes any unindexed event (tests call it)
    runtime = build_runtime(settings)
    runtime.embedder.embed(["warm up the model before the worker starts"])
    set_runtime(runtime)
    with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False, loglevel="WARNING",
                      shutdown_timeout=20):
        yield runtime
    set_runtime(None)
    runtime.close()


@pytest.fixture
def worker_api(worker_runtime: Runtime) -> Iterator[TestClient]:
    from athena_api.app import create_app

    with TestClient(create_app(runtime=worker_runtime)) as client:
        yield client
