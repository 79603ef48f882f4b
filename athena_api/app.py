"""The ASGI application factory. `uvicorn athena_api.app:create_app --factory`."""
from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from athena_api.dependencies import PrincipalDep
from athena_api.errors import install_error_handlers
from athena_api.observability import RequestObservability
from athena_api.fast_writes import FastWrites
from athena_api.session_cache import SessionCache
from athena_api.write_admission import WriteAdmission
from athena_api.routes import admin, analysis, context, events, health, sessions
from athena_api.auth import Authenticator
from athena_core.mtm.access_writer import AccessWriter
from athena_core.usecases.group_commit import GroupCommitWriter
from athena_core.usecases.ingest import Ingest
from athena_core.observability.json_logs import configure_logging
from athena_api.rate_limits import TenantAdmission
from athena_core.wiring.runtime import Runtime, build_runtime
from athena_core.observability.sentry_setup import init_sentry
from athena_core.wiring.settings import Settings, check_production_safety, get_settings

log = logging.getLogger("athena.api")


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> FastAPI:
    settings = settings or (runtime.settings if runtime else get_settings())
    check_production_safety(settings)
    if settings.log_format == "json":
        configure_logging("json", settings.log_level)
    init_sentry(settings, "api")  # no-op unless SENTRY_DSN is set
    authenticator = Authenticator(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        rt = runtime or build_runtime(settings)
        from athena_tasks.chains.run_requests import PipelineRunRequester

        requester = PipelineRunRequester(rt.redis, settings.pipeline_debounce_ttl_s)
        app.state.runtime = rt
        app.state.authenticator = authenticator
        app.state.ingest = Ingest(rt.documents, rt.stm, requester.request, sessions=rt.documents)
        app.state.sessions = SessionCache()
        app.state.writer = GroupCommitWriter(app.state.ingest, max_group_events=settings.ingest_group_max_events,
                                             max_queued_events=settings.ingest_queue_max_events)
        app.state.writer.start()
        app.state.access_writer = AccessWriter(rt.documents.touch_chains)  # reads record accesses beside them
        app.state.reader = None
        app.state.facts = None
        app.state.admission = TenantAdmission(
            rt.redis, rt.documents, rate_per_s=settings.rate_limit_per_s, max_pending=settings.backlog_max_pending
        )
        if owned:
            # A served process (not a test's app): its imports and runtime live as long as it does; frozen,
            # a full collection under load walks only the objects that requests made.
            gc.freeze()
        if not settings.auth_enabled:
            log.warning(
                "AUTH IS OFF (ATHENA_AUTH_MODE=off): every caller may act for every tenant. "
                "Embedded/dev use only; set ATHENA_AUTH_MODE and keys for anything shared."
            )
        yield
        app.state.writer.close()  # what is queued is written before the stores close
        app.state.access_writer.close()
        if owned:
            rt.close()

    # ATHENA_DOCS_PUBLIC=false with auth on: /openapi.json, /docs and /redoc need a credential (S10).
    docs_closed = settings.auth_enabled and not settings.docs_public
    app = FastAPI(
        title="Athena",
        version="0.1.0",
        description="Three-tier memory for AI agents: STM window, MTM chains, LTM knowledge graph.",
        lifespan=lifespan,
        **({"openapi_url": None, "docs_url": None, "redoc_url": None} if docs_closed else {}),
    )
    install_error_handlers(app)
    for router in (sessions.router, events.router, context.router, analysis.router, admin.router, health.router):
        app.include_router(router)
    if docs_closed:
        _add_authenticated_docs(app)
    app.add_middleware(FastWrites)  # innermost: after the admission door, before FastAPI
    app.add_middleware(WriteAdmission, max_in_flight=settings.ingest_max_in_flight_requests)  # inside the observability middleware: refusals are counted
    app.add_middleware(RequestObservability, max_body_bytes=max_body_bytes(settings))
    return app


def max_body_bytes(settings: Settings) -> int:
    """The largest request body (declared or streamed): a base64 payload, the two texts of an interaction, a
    metadata map and 64 KiB for JSON escapes and the rest. The fields' own limits are checked after parsing."""
    texts = 2 * settings.max_content_bytes + settings.max_metadata_bytes
    return settings.max_payload_bytes * 4 // 3 + texts + 64 * 1024


def _add_authenticated_docs(app: FastAPI) -> None:
    """The same three documents FastAPI serves, behind the API's own credential check (401 without)."""

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(_: PrincipalDep) -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False)
    def swagger(_: PrincipalDep) -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - Swagger UI")

    @app.get("/redoc", include_in_schema=False)
    def redoc(_: PrincipalDep) -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title=f"{app.title} - ReDoc")
