"""A schemathesis run against `/openapi.json` with auth on: no generated request may cause a 5xx.

Requests carry a valid JWT of one tenant; sessions they name mostly do not exist (404) or belong to
that tenant. Bounded: a fixed number of examples per operation, no network beyond the ASGI app.
"""
from __future__ import annotations

import time

import jwt
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from fastapi.testclient import TestClient

from athena_api.app import create_app
from athena_core.wiring.settings import Settings

SECRET = "fuzz-secret-that-is-long-enough-for-hs256-and-then-some-more!"


@pytest.fixture(scope="module")
def secured_app(tmp_path_factory, redis_url):  # noqa: ANN001, ANN201 - fixtures
    settings = Settings(data_dir=tmp_path_factory.mktemp("fuzz"), redis_url=redis_url, auth_mode="jwt",
                        jwt_secret=SECRET)
    app = create_app(settings)
    with TestClient(app):  # run the lifespan: runtime, authenticator
        yield app


TOKEN = jwt.encode({"tenant_id": "fuzz-tenant", "user_id": "fuzz-user", "exp": int(time.time()) + 3600},
                   SECRET, algorithm="HS256")
SKIPPED = {"/api/v1/admin/analytics/trigger"}  # would enqueue real analytics runs; auth tested in test_auth.py


def test_no_generated_request_causes_a_server_error(secured_app) -> None:  # noqa: ANN001 - fixture
    """Every operation of the OpenAPI document, 15 generated cases each (schemathesis + hypothesis).

    schemathesis' own pytest plugin does not load under pytest 9 here, so the cases are drawn with
    hypothesis directly from each operation's strategy.
    """
    schema = schemathesis.openapi.from_asgi("/openapi.json", secured_app)
    failures: list[tuple] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path in SKIPPED:
            continue
        operations += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case) -> None:  # noqa: ANN001 - schemathesis case
            response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
            if response.status_code >= 500:
                failures.append((case.method, case.path, response.status_code, response.text[:300]))

        check()
    assert operations >= 12
    assert failures == []
