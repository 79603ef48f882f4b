"""Request-scoped dependencies: the process runtime, the caller, and the session the caller may use."""
from __future__ import annotations

import gc
from typing import Annotated

from fastapi import Depends, Header, Request

from athena_api.errors import ApiError, store_unavailable
from athena_core.observability import request_context
from athena_api.auth import AuthError, Authenticator, Principal
from athena_api.rate_limits import Refusal
from athena_api.session_cache import SessionCache
from athena_core.observability.sentry_setup import tag_tenant
from athena_core.usecases.group_commit import GroupCommitWriter
from athena_core.usecases.ingest import Ingest
from athena_core.models.sessions import Session
from athena_core.ltm.retrieval import FactRetriever
from athena_core.mtm.recall import MemoryReader
from athena_core.retrieval.hybrid_search import HybridSearch
from athena_core.wiring.runtime import Runtime


# The dependencies of the write path are `async def`: FastAPI runs a sync dependency in the thread pool,
# one thread hop each (the cost that made StoreEvent collapse under concurrency, issue 16). They do no
# blocking I/O except the first lookup of a session (in the thread pool; later writes take its identity
# from the `SessionCache`, and the writer rechecks that it exists), and the optional rate-limit call
# (one Redis round trip).
async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


async def get_ingest(request: Request) -> Ingest:
    return request.app.state.ingest


async def get_writer(request: Request) -> GroupCommitWriter:
    return request.app.state.writer


def get_reader(request: Request) -> "MemoryReader":
    """Built on first use: loading the embedding model is seconds, and only reads need it."""
    state = request.app.state
    if getattr(state, "reader", None) is None:
        rt: Runtime = state.runtime
        touch = state.access_writer.submit if rt.settings.search_access_in_background else None
        state.reader = MemoryReader(rt.documents, rt.vectors, rt.embedder, rt.settings, touch=touch)
    return state.reader


def get_search(request: Request) -> "HybridSearch":
    """SearchMemory and GetContext(query): lexical + dense + graph, built on first use like the reader."""
    state = request.app.state
    if getattr(state, "search", None) is None:
        rt: Runtime = state.runtime
        state.search = HybridSearch(
            documents=rt.documents, chain_vectors=rt.vectors, event_vectors=rt.event_vectors, lexical=rt.lexical,
            graph=rt.graph, embedder=rt.embedder, on_access=get_reader(request).access, settings=rt.settings)
        warm_up_and_freeze(state.search)
    return state.search


def warm_up_and_freeze(search: "HybridSearch") -> None:
    """Load the embedding model now, then move every live object into the GC's permanent generation.

    The model and its libraries leave about half a million long-lived objects; without the freeze each
    full collection walks them all, a 250 ms stall in whichever request triggers it (over 400 LoCoMo
    searches: p99 274 → 49 ms). Objects made later are collected as usual.
    """
    search.embedder.embed(["warm up"])
    search.embedder.embed_query(["warm up"])  # a second model when queries run in int8
    gc.freeze()


def get_facts(request: Request) -> "FactRetriever":
    state = request.app.state
    if getattr(state, "facts", None) is None:
        rt: Runtime = state.runtime
        state.facts = FactRetriever(rt.graph, rt.settings)
    return state.facts


async def get_principal(
    request: Request,
    x_api_key: Annotated[str | None, Header()] = None,
    authorization: Annotated[str | None, Header()] = None,
) -> Principal:
    authenticator: Authenticator = request.app.state.authenticator
    try:
        return authenticator.authenticate(x_api_key, authorization)
    except AuthError as exc:
        raise ApiError(401, "unauthenticated", str(exc), headers={"WWW-Authenticate": "Bearer"}) from exc


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
IngestDep = Annotated[Ingest, Depends(get_ingest)]
WriterDep = Annotated[GroupCommitWriter, Depends(get_writer)]
ReaderDep = Annotated[MemoryReader, Depends(get_reader)]
FactsDep = Annotated[FactRetriever, Depends(get_facts)]
SearchDep = Annotated[HybridSearch, Depends(get_search)]


async def get_owned_session(request: Request, session_id: str, runtime: RuntimeDep, principal: PrincipalDep
                            ) -> Session:
    """404 for a session that does not exist *or* belongs to someone else: never confirm it exists.
    The lookup runs in the thread pool (a network document store must not block the event loop), and a
    store that does not answer is a 503 with Retry-After, not a 500 (issue 17: SecantusDB stopped)."""
    from starlette.concurrency import run_in_threadpool

    try:
        session = await run_in_threadpool(runtime.documents.get_session, session_id)
    except Exception as exc:  # noqa: BLE001 - any store failure: the caller retries, nothing was accepted
        raise store_unavailable() from exc
    if session is None or not principal.may_use(session.tenant_id, session.user_id):
        raise ApiError(404, "session_not_found", f"session {session_id!r} not found", field="session_id")
    request_context.tenant_id.set(session.tenant_id)
    tag_tenant(session.tenant_id)  # Sentry: tag the shared scope (sync routes run in the thread pool)
    refuse(request.app.state.admission.check_rate(session.tenant_id))
    return session


def refuse(refusal: Refusal | None) -> None:
    """429 with Retry-After (SPEC S10)."""
    if refusal is not None:
        raise ApiError(429, "too_many_requests", refusal.reason, headers={"Retry-After": str(refusal.retry_after_s)})


SessionDep = Annotated[Session, Depends(get_owned_session)]


async def get_write_session(request: Request, session_id: str, runtime: RuntimeDep, principal: PrincipalDep
                            ) -> Session:
    """`get_owned_session` for the write routes, without a thread hop per request: a session's identity
    (tenant, user, agent) never changes, so once read it is taken from the process's `SessionCache`. That
    it still exists is checked by the writer just before the commit (`IngestRequest.recheck_session`), and
    again here before anything is written outside the event log (a payload's blob, an Idempotency-Key
    record: `confirm_session`). An unknown id is read every time (a session created by another process
    is found at once)."""
    cache: SessionCache = request.app.state.sessions
    session = cache.get(session_id)
    if session is None:
        session = await get_owned_session(request, session_id, runtime, principal)
        cache.put(session)
        return session
    request.state.session_cached = True
    if not principal.may_use(session.tenant_id, session.user_id):
        raise ApiError(404, "session_not_found", f"session {session_id!r} not found", field="session_id")
    request_context.tenant_id.set(session.tenant_id)
    tag_tenant(session.tenant_id)
    refuse(request.app.state.admission.check_rate(session.tenant_id))
    return session


async def confirm_session(request: Request, runtime: Runtime, session: Session) -> None:
    """404 when a session taken from the cache no longer exists: before a write outside the event log."""
    if not getattr(request.state, "session_cached", False):
        return
    from starlette.concurrency import run_in_threadpool

    try:
        found = await run_in_threadpool(runtime.documents.get_session, session.session_id)
    except Exception as exc:  # noqa: BLE001
        raise store_unavailable() from exc
    if found is None:
        request.app.state.sessions.forget(session.session_id)
        raise ApiError(404, "session_not_found", f"session {session.session_id!r} not found", field="session_id")


WriteSessionDep = Annotated[Session, Depends(get_write_session)]


def require_admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        raise ApiError(403, "forbidden", "this route needs the admin role")
    return principal


AdminDep = Annotated[Principal, Depends(require_admin)]
