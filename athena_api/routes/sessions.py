"""CreateSession, GetSession, DeleteSession (SPEC S2)."""
from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel

from athena_api.dependencies import PrincipalDep, RuntimeDep, SessionDep
from athena_api.errors import ApiError
from athena_api.idempotency import IdempotencyKey, check_key, claim_ids, request_hash
from athena_api.limits import check_metadata
from athena_core.ids import new_id
from athena_core.models.events import EventStatus, utc_now
from athena_core.models.sessions import Session, SessionCreate
from athena_core.usecases.purge import PurgeBusy, PurgeIncomplete, PurgeReport, purge_user
from athena_core.stores.blobs.contained_path import PathEscape

router = APIRouter(prefix="/api/v1/sessions", tags=["sessions"])


class SessionCreated(BaseModel):
    session_id: str
    created_at: datetime


class SessionView(Session):
    pending_events: int  # events of this scope not yet consolidated into a chain (or rejected)


class SessionDeleted(BaseModel):
    session_id: str
    deleted: bool
    purge: PurgeReport | None = None


def _claimed(field: str, body_value: str | None, claim: str | None) -> str | None:
    """Credential claims override bodies; a body that names another identity is refused, not rewritten."""
    if claim is None:
        return body_value
    if body_value is not None and body_value != claim:
        raise ApiError(403, "forbidden", f"{field} does not match the credential", field=field)
    return claim


@router.post("", status_code=201, response_model=SessionCreated)
def create_session(body: SessionCreate, runtime: RuntimeDep, principal: PrincipalDep, request: Request,
                   idempotency_key: IdempotencyKey = None) -> SessionCreated:
    tenant_id = _claimed("tenant_id", body.tenant_id, principal.tenant_id)
    user_id = _claimed("user_id", body.user_id, principal.user_id)
    agent_id = _claimed("agent_id", body.agent_id, principal.agent_id) or "default"
    for name, value in (("tenant_id", tenant_id), ("user_id", user_id)):
        if value is None:
            raise ApiError(422, "validation_error", f"{name} is required", field=name)
    check_metadata(runtime.settings, body.metadata)
    session_id = new_id("ses")
    if idempotency_key is not None:  # a retry answers the first request's session (SPEC S2)
        check_key(idempotency_key)
        session_id = claim_ids(runtime, tenant_id, user_id, idempotency_key, request_hash(request, body),
                               [session_id])[0]
        existing = runtime.documents.get_session(session_id)
        if existing is not None:
            return SessionCreated(session_id=existing.session_id, created_at=existing.created_at)
    session = Session(
        session_id=session_id,
        tenant_id=tenant_id,
        user_id=user_id,
        agent_id=agent_id,
        metadata=body.metadata,
        created_at=utc_now(),
    )
    try:
        runtime.documents.create_session(session)
    except Exception:
        existing = runtime.documents.get_session(session_id) if idempotency_key is not None else None
        if existing is None:
            raise
        session = existing  # a concurrent retry with the same key created it first
    return SessionCreated(session_id=session.session_id, created_at=session.created_at)


@router.get("/{session_id}", response_model=SessionView)
def get_session(session: SessionDep, runtime: RuntimeDep) -> SessionView:
    pending = runtime.documents.count_events(session.scope, EventStatus.pending)
    return SessionView(**session.model_dump(), pending_events=pending)


@router.delete("/{session_id}", response_model=SessionDeleted)
def delete_session(
    session: SessionDep, runtime: RuntimeDep, purge: Literal["user"] | None = None
) -> SessionDeleted:
    """Delete the session handle; with `?purge=user`, erase the user's memory in every store (S7.4)."""
    if purge == "user":
        try:
            report = purge_user(runtime, session.scope.user_scope)
        except PurgeBusy as busy:  # nothing deleted yet: the same request can simply be sent again
            raise ApiError(503, "purge_busy", str(busy), headers={"Retry-After": str(busy.retry_after_s)}) from busy
        except PurgeIncomplete as incomplete:
            raise ApiError(500, "purge_incomplete", str(incomplete)) from incomplete
        except PathEscape as escape:  # a stored scope from before the id rules: refused, nothing touched
            raise ApiError(422, "validation_error", str(escape), field="user_id") from escape
        return SessionDeleted(session_id=session.session_id, deleted=True, purge=report)
    deleted = runtime.documents.delete_session(session.session_id)
    return SessionDeleted(session_id=session.session_id, deleted=deleted)
