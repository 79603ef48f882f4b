"""StoreEvent and StoreInteraction (SPEC S2, S3): validate, then hand to `Ingest`.

Size limits answer 413 and name the field; anything malformed answers 422 and names the field;
only a failed durable write answers 503.
"""
from __future__ import annotations

import base64
import binascii

from fastapi import APIRouter, Request
from pydantic import BaseModel

from athena_api.dependencies import IngestDep, RuntimeDep, SessionDep, refuse
from athena_api.errors import ApiError
from athena_api.idempotency import IdempotencyKey, blob_name, check_key, claim_event_ids, request_hash
from athena_api.limits import check_metadata, check_text_size
from athena_core.usecases.ingest import DurableWriteError, EventDraft
from athena_core.ids import new_id
from athena_core.models.events import EventIn, EventRole, EventType, InteractionIn
from athena_core.models.sessions import Session
from athena_core.wiring.runtime import Runtime

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["events"])


class EventStored(BaseModel):
    event_id: str


class InteractionStored(BaseModel):
    event_ids: list[str]


_check_size = check_text_size


def _store_payload(runtime: Runtime, session: Session, body: EventIn,
                   name: str | None = None) -> tuple[str | None, str | None]:
    if body.payload is None:
        return None, None
    if runtime.blobs is None:
        raise ApiError(422, "no_blob_store", "payload sent but no blob store is configured", field="payload")
    try:
        data = base64.b64decode(body.payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ApiError(422, "validation_error", "payload must be base64", field="payload") from exc
    limit = runtime.settings.max_payload_bytes
    if len(data) > limit:
        raise ApiError(413, "too_large", f"payload is {len(data)} bytes; the limit is {limit}", field="payload")
    uri = runtime.blobs.put(session.scope.user_scope, name or new_id("blob"), data)
    return uri, body.mime_type or "application/octet-stream"


def _store(ingest: IngestDep, session: Session, drafts: list[EventDraft],
           event_ids: list[str] | None = None) -> list[str]:
    try:
        return [e.event_id for e in ingest.store(session, drafts, event_ids)]
    except DurableWriteError as exc:
        raise ApiError(503, "not_durable", "the event could not be made durable; retry", headers={"Retry-After": "1"}) from exc


@router.post("/events", status_code=201, response_model=EventStored)
def store_event(
    body: EventIn, session: SessionDep, runtime: RuntimeDep, ingest: IngestDep, request: Request,
    idempotency_key: IdempotencyKey = None,
) -> EventStored:
    refuse(request.app.state.admission.check_backlog(session.tenant_id))
    if body.is_empty_user_message:
        raise ApiError(422, "validation_error", "a user message must not be empty", field="content")
    _check_size("content", body.content, runtime.settings.max_content_bytes)
    check_metadata(runtime.settings, body.metadata)
    digest = request_hash(request, body) if idempotency_key is not None else ""
    if idempotency_key is not None:
        check_key(idempotency_key)
    blob_uri, mime_type = _store_payload(
        runtime, session, body, blob_name(session, idempotency_key, digest) if idempotency_key else None)
    draft = EventDraft(
        role=body.role, type=body.type, content=body.content, metadata=body.metadata,
        timestamp=body.timestamp, blob_uri=blob_uri, mime_type=mime_type,
    )
    event_ids = claim_event_ids(runtime, session, idempotency_key, digest, 1)
    return EventStored(event_id=_store(ingest, session, [draft], event_ids)[0])


@router.post("/interactions", status_code=201, response_model=InteractionStored)
def store_interaction(
    body: InteractionIn, session: SessionDep, runtime: RuntimeDep, ingest: IngestDep, request: Request,
    idempotency_key: IdempotencyKey = None,
) -> InteractionStored:
    refuse(request.app.state.admission.check_backlog(session.tenant_id))
    _check_size("user_message", body.user_message, runtime.settings.max_content_bytes)
    check_metadata(runtime.settings, body.metadata)
    drafts = [EventDraft(EventRole.user, EventType.message, body.user_message, body.metadata, body.timestamp)]
    if body.agent_response is not None and body.agent_response.strip():
        _check_size("agent_response", body.agent_response, runtime.settings.max_content_bytes)
        drafts.append(
            EventDraft(EventRole.agent, EventType.message, body.agent_response, body.metadata, body.timestamp)
        )
    digest = request_hash(request, body) if idempotency_key is not None else ""
    event_ids = claim_event_ids(runtime, session, idempotency_key, digest, len(drafts))
    return InteractionStored(event_ids=_store(ingest, session, drafts, event_ids))
