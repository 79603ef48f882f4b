"""Liveness (`/health`), per-store readiness (`/api/v1/health`) and Prometheus text (`/metrics`)."""
from __future__ import annotations

import os
import time
from collections.abc import Callable

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess
from pydantic import BaseModel

from athena_api.dependencies import PrincipalDep, RuntimeDep
from athena_api.errors import ApiError

router = APIRouter(tags=["health"])


class StoreHealth(BaseModel):
    ok: bool
    engine: str
    latency_ms: float
    error: str | None = None


class HealthReport(BaseModel):
    status: str  # ok | degraded
    stores: dict[str, StoreHealth]


def _probe(engine: str, check: Callable[[], object]) -> StoreHealth:
    started = time.perf_counter()
    try:
        check()
        return StoreHealth(ok=True, engine=engine, latency_ms=round((time.perf_counter() - started) * 1000, 2))
    except Exception as exc:  # noqa: BLE001 - a failing store is reported, not raised
        return StoreHealth(
            ok=False, engine=engine, latency_ms=round((time.perf_counter() - started) * 1000, 2), error=str(exc)
        )


@router.get("/health")
def liveness() -> dict:
    return {"status": "ok"}


@router.get("/api/v1/health", response_model=HealthReport)
def readiness(runtime: RuntimeDep, _: PrincipalDep) -> HealthReport:
    """200 with `degraded` when a store fails: writes stay accepted while the event log is up."""
    stores = {
        "redis": _probe("redis", runtime.redis.ping),
        "documents": _probe(runtime.documents.engine, runtime.documents.ping),
    }
    if runtime.blobs is not None:
        stores["blobs"] = _probe(runtime.blobs.engine, runtime.blobs.ping)
    status = "ok" if all(s.ok for s in stores.values()) else "degraded"
    return HealthReport(status=status, stores=stores)


@router.get("/metrics", include_in_schema=False)
def prometheus_metrics(request: Request) -> Response:
    app = request.app
    if not app.state.runtime.settings.metrics_public:
        try:
            app.state.authenticator.authenticate(request.headers.get("x-api-key"), request.headers.get("authorization"))
        except Exception as exc:  # noqa: BLE001
            raise ApiError(401, "unauthenticated", str(exc)) from exc
    return Response(generate_latest(metrics_registry()), media_type=CONTENT_TYPE_LATEST)


def metrics_registry() -> CollectorRegistry:
    """With PROMETHEUS_MULTIPROC_DIR set (the stack sets it), /metrics aggregates every process on the
    host — API, workers, beat — so pipeline, LLM and promotion counters show up beside the API's."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry
