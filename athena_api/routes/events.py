"""StoreEvent, StoreEvents (batch) and StoreInteraction (SPEC S2, S3): validate, then hand to the group
commit writer, which answers once the events are durable.

Size limits answer 413 and name the field; anything malformed answers 422 and names the field (a batch
names every bad item by index, `events[3].content`); a failed durable write, or a full write queue,
answers 503 with Retry-After. The routes are `async def`: validation runs on the event loop, the durable
write in the writer's thread, and only a payload's blob and an Idempotency-Key record go through the
thread pool. The plain case of StoreEvent and StoreEvents (JSON, no key, no payload, a session already
cached) is answered by `athena_api/fast_writes.py` with these same helpers, without FastAPI's
per-request machinery; everything else comes here.
"""
from __future__ import annotations

import base64
import binascii
import json

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from athena_api.dependencies import RuntimeDep, WriteSessionDep, WriterDep, confirm_session, refuse
from athena_api.errors import ApiError, naming
from athena_api.idempotency import IdempotencyKey, blob_name, check_key, claim_event_ids, request_hash
from athena_api.limits import check_metadata, check_text_size
from athena_core.ids import new_id
from athena_core.models.events import EventIn, EventRole, EventType, InteractionIn
from athena_core.models.sessions import Session
from athena_core.usecases.group_commit import GroupCommitWriter, Overloaded
from athena_core.usecases.ingest import DurableWriteError, EventDraft, IngestRequest, SessionGone
from athena_core.wiring.runtime import Runtime
from athena_core.wiring.settings import Settings

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["events"])


class EventStored(BaseModel):
    event_id: str


class InteractionStored(BaseModel):
    event_ids: list[str]


class EventsStored(BaseModel):
    event_ids: list[str] = Field(description="the stored events' ids, in the order of the request's events")


class EventsBatchIn(BaseModel):
    """Body of StoreEvents: StoreEvent bodies, at most `ATHENA_BATCH_MAX_EVENTS` (500), stored all or none."""

    model_config = ConfigDict(extra="forbid")

    events: list[EventIn] = Field(min_length=1)


def _event_problems(settings: Settings, body: EventIn, prefix: str = "") -> list[ApiError]:
    """Every check StoreEvent makes after the body model, each as the error it answers."""
    problems = []
    if body.is_empty_user_message:
        problems.append(ApiError(422, "validation_error", "a user message must not be empty",
                                 field=f"{prefix}content"))
    for check in (lambda: check_text_size(f"{prefix}content", body.content, settings.max_content_bytes),
                  lambda: check_metadata(settings, body.metadata, field=f"{prefix}metadata")):
        try:
            check()
        except ApiError as problem:
            problems.append(problem)
    return problems


def _decode_payload(runtime: Runtime, body: EventIn, field: str = "payload") -> bytes | None:
    if body.payload is None:
        return None
    if runtime.blobs is None:
        raise ApiError(422, "no_blob_store", "payload sent but no blob store is configured", field=field)
    try:
        data = base64.b64decode(body.payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ApiError(422, "validation_error", "payload must be base64", field=field) from exc
    limit = runtime.settings.max_payload_bytes
    if len(data) > limit:
        raise ApiError(413, "too_large", f"payload is {len(data)} bytes; the limit is {limit}", field=field)
    return data


async def _put_blob(runtime: Runtime, session: Session, body: EventIn, data: bytes | None,
                    name: str | None) -> tuple[str | None, str | None]:
    if data is None:
        return None, None
    uri = await run_in_threadpool(runtime.blobs.put, session.scope.user_scope, name or new_id("blob"), data)
    return uri, body.mime_type or "application/octet-stream"


def _draft(body: EventIn, blob_uri: str | None = None, mime_type: str | None = None) -> EventDraft:
    return EventDraft(role=body.role, type=body.type, content=body.content, metadata=body.metadata,
                      timestamp=body.timestamp, blob_uri=blob_uri, mime_type=mime_type)


async def _claim(runtime: Runtime, session: Session, key: str | None, digest: str, count: int) -> list[str] | None:
    if key is None:
        return None
    return await run_in_threadpool(claim_event_ids, runtime, session, key, digest, count)


async def _store(request: Request, writer: GroupCommitWriter, session: Session, drafts: list[EventDraft],
                 event_ids: list[str] | None = None) -> list[str]:
    return await store_drafts(request.app.state, writer, session, drafts, event_ids,
                              recheck=getattr(request.state, "session_cached", False))


async def store_drafts(state, writer: GroupCommitWriter, session: Session, drafts: list[EventDraft],  # noqa: ANN001
                       event_ids: list[str] | None, *, recheck: bool) -> list[str]:
    """The drafts stored by the group-commit writer, their ids once durable; the refusals as `ApiError`s.
    `recheck`: the session came from the cache, the writer checks it still exists (404 if not)."""
    try:
        events = await writer.store(IngestRequest(session, drafts, event_ids, recheck_session=recheck))
    except SessionGone as exc:
        state.sessions.forget(session.session_id)
        raise ApiError(404, "session_not_found", f"session {session.session_id!r} not found",
                       field="session_id") from exc
    except Overloaded as exc:
        raise ApiError(503, "overloaded", str(exc), headers={"Retry-After": str(exc.retry_after_s)}) from exc
    except DurableWriteError as exc:
        raise ApiError(503, "not_durable", "the event could not be made durable; retry", headers={"Retry-After": "1"}) from exc
    return [e.event_id for e in events]


def created(body: dict) -> Response:
    """201 with the body as JSON, rendered here: FastAPI would validate it against the response model
    and encode it again (the model stays declared for the OpenAPI document)."""
    return Response(json.dumps(body, separators=(",", ":")).encode(), status_code=201, media_type="application/json")


async def _confirm_before_side_writes(request: Request, runtime: Runtime, session: Session, key: str | None,
                                      payloads: bool) -> None:
    """A payload's blob and an Idempotency-Key record are written before the event log: their session,
    if taken from the cache, must be known to exist first (the writer's recheck comes too late for them)."""
    if key is not None or payloads:
        await confirm_session(request, runtime, session)


def _one_error(problems: list[ApiError]) -> ApiError:
    """A batch's problems as one answer: 413 when every one is a size, else 422; every field named."""
    status = 413 if all(p.status == 413 for p in problems) else 422
    fields = [(p.field or "events", p.message) for p in problems]
    return ApiError(status, "too_large" if status == 413 else "validation_error",
                    naming("invalid events", [f for f, _ in fields]), fields=fields)


@router.post("/events", status_code=201, response_model=EventStored)
async def store_event(
    body: EventIn, session: WriteSessionDep, runtime: RuntimeDep, writer: WriterDep, request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    refuse(await request.app.state.admission.check_backlog_async(session.tenant_id))
    problems = _event_problems(runtime.settings, body)
    if problems:
        raise problems[0]
    digest = request_hash(request, body) if idempotency_key is not None else ""
    if idempotency_key is not None:
        check_key(idempotency_key)
    data = _decode_payload(runtime, body)
    await _confirm_before_side_writes(request, runtime, session, idempotency_key, data is not None)
    blob_uri, mime_type = await _put_blob(
        runtime, session, body, data, blob_name(session, idempotency_key, digest) if idempotency_key else None)
    event_ids = await _claim(runtime, session, idempotency_key, digest, 1)
    stored = await _store(request, writer, session, [_draft(body, blob_uri, mime_type)], event_ids)
    return created({"event_id": stored[0]})


@router.post("/events:batch", status_code=201, response_model=EventsStored)
async def store_events(
    body: EventsBatchIn, session: WriteSessionDep, runtime: RuntimeDep, writer: WriterDep, request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Up to `ATHENA_BATCH_MAX_EVENTS` events in one request, validated like StoreEvent and stored all or
    none in one durable write; the ids come back in the order of `events`."""
    refuse(await request.app.state.admission.check_backlog_async(session.tenant_id))
    limit = runtime.settings.batch_max_events
    if len(body.events) > limit:
        raise ApiError(413, "too_large", f"{len(body.events)} events; the limit is {limit} per batch", field="events")
    problems = [p for i, e in enumerate(body.events) for p in _event_problems(runtime.settings, e, f"events[{i}].")]
    payloads: list[bytes | None] = []
    for i, event in enumerate(body.events):
        try:
            payloads.append(_decode_payload(runtime, event, f"events[{i}].payload"))
        except ApiError as problem:
            problems.append(problem)
    if problems:
        raise _one_error(problems)
    digest = request_hash(request, body) if idempotency_key is not None else ""
    if idempotency_key is not None:
        check_key(idempotency_key)
    await _confirm_before_side_writes(request, runtime, session, idempotency_key,
                                      any(data is not None for data in payloads))
    drafts = []
    for i, (event, data) in enumerate(zip(body.events, payloads)):
        name = f"{blob_name(session, idempotency_key, digest)}_{i}" if idempotency_key and data is not None else None
        drafts.append(_draft(event, *await _put_blob(runtime, session, event, data, name)))
    event_ids = await _claim(runtime, session, idempotency_key, digest, len(drafts))
    return created({"event_ids": await _store(request, writer, session, drafts, event_ids)})


@router.post("/interactions", status_code=201, response_model=InteractionStored)
async def store_interaction(
    body: InteractionIn, session: WriteSessionDep, runtime: RuntimeDep, writer: WriterDep, request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    refuse(await request.app.state.admission.check_backlog_async(session.tenant_id))
    check_text_size("user_message", body.user_message, runtime.settings.max_content_bytes)
    check_metadata(runtime.settings, body.metadata)
    drafts = [EventDraft(EventRole.user, EventType.message, body.user_message, body.metadata, body.timestamp)]
    if body.agent_response is not None and body.agent_response.strip():
        check_text_size("agent_response", body.agent_response, runtime.settings.max_content_bytes)
        drafts.append(
            EventDraft(EventRole.agent, EventType.message, body.agent_response, body.metadata, body.timestamp)
        )
    digest = request_hash(request, body) if idempotency_key is not None else ""
    await _confirm_before_side_writes(request, runtime, session, idempotency_key, False)
    event_ids = await _claim(runtime, session, idempotency_key, digest, len(drafts))
    return created({"event_ids": await _store(request, writer, session, drafts, event_ids)})
