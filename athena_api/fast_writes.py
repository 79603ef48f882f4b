"""The hot write routes' common case without FastAPI's per-request machinery (issue 16).

StoreEvent and StoreEvents are most of the API's traffic, and FastAPI spends more on a small request than
the route does: solving five dependencies (two with header parameters), validating the answer against
its response model and encoding it twice. This ASGI layer, just inside the write admission, answers the
plain case itself: a JSON body, no Idempotency-Key, no payload, a session whose identity the process has
already read (`SessionCache`). It does what the routes do, with the routes' own helpers, in the same
order: the credential, the session's owner (404), the tenant's rate and backlog (429), the body model,
the same per-event checks (413/422), the group-commit writer (503 when overloaded or not durable, 404 when
the session is gone), 201 with the ids.

Anything else goes to FastAPI with the body replayed, so every other answer (a 401, a body that does not
validate, an unknown session, a payload, a key) is FastAPI's, the same as before: this path changes how
fast the common answer comes, never which answer it is. The routes stay declared in FastAPI (OpenAPI).
"""
from __future__ import annotations

import json

from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from athena_api.auth import AuthError
from athena_api.dependencies import refuse
from athena_api.errors import ApiError, api_error_response
from athena_api.routes import events as routes
from athena_api.write_admission import SESSIONS
from athena_core.models.events import EventIn
from athena_core.observability import request_context
from athena_core.observability.sentry_setup import tag_tenant

SINGLE, BATCH = "/events", "/events:batch"


def write_target(method: str, path: str) -> tuple[str, str] | None:
    """(session id, route suffix) of a POST to StoreEvent or StoreEvents, else None."""
    if method != "POST" or not path.startswith(SESSIONS):
        return None
    for suffix in (BATCH, SINGLE):
        if path.endswith(suffix):
            session_id = path[len(SESSIONS):-len(suffix)]
            return (session_id, suffix) if session_id and "/" not in session_id else None
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


class FastWrites:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._routes: dict[str, object] | None = None  # suffix → FastAPI's route (metrics label it)

    def _route_of(self, scope: Scope, suffix: str) -> object | None:
        if self._routes is None:
            endpoints = {routes.store_event: SINGLE, routes.store_events: BATCH}
            self._routes = {endpoints[r.endpoint]: r for r in scope["app"].routes
                            if getattr(r, "endpoint", None) in endpoints}
        return self._routes.get(suffix)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = write_target(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if target is None or not self._plain(scope):
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        session = state.sessions.get(target[0])
        if session is None:  # unknown to this process: FastAPI reads it (and fills the cache)
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:  # the client went away before its body arrived
            return
        answer = await self._answer(scope, state, session, target[1], body)
        if answer is None:
            await self.app(scope, _replay(body, receive), send)
            return
        route = self._route_of(scope, target[1])
        if route is not None:
            scope["route"] = route
        await answer(scope, receive, send)

    @staticmethod
    def _plain(scope: Scope) -> bool:
        """JSON, and no Idempotency-Key: the case this path answers (a content type FastAPI would parse
        differently, or a key, goes to FastAPI)."""
        return _header(scope, b"content-type") == "application/json" and _header(scope, b"idempotency-key") is None

    async def _answer(self, scope: Scope, state, session, suffix: str, body: bytes):  # noqa: ANN001, ANN202
        """The response for the plain case, or None to let FastAPI answer."""
        try:
            principal = state.authenticator.authenticate(_header(scope, b"x-api-key"), _header(scope, b"authorization"))
        except AuthError:
            return None
        if not principal.may_use(session.tenant_id, session.user_id):
            return None
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep: FastAPI's answer names it
            return None
        runtime = state.runtime
        model = self._single(parsed) if suffix == SINGLE else self._batch(parsed)
        if model is None:  # FastAPI answers (after its own rate check, as it orders them)
            return None
        try:
            request_context.tenant_id.set(session.tenant_id)
            tag_tenant(session.tenant_id)
            refuse(state.admission.check_rate(session.tenant_id))
            refuse(await state.admission.check_backlog_async(session.tenant_id))
            drafts = self._drafts(runtime.settings, suffix, model)
            ids = await routes.store_drafts(state, state.writer, session, drafts, None, recheck=True)
        except ApiError as error:
            return api_error_response(error)
        return routes.created({"event_id": ids[0]} if suffix == SINGLE else {"event_ids": ids})

    @staticmethod
    def _single(parsed: object) -> EventIn | None:
        try:
            event = EventIn.model_validate(parsed)
        except ValidationError:
            return None
        return None if event.payload is not None else event

    @staticmethod
    def _batch(parsed: object) -> routes.EventsBatchIn | None:
        try:
            batch = routes.EventsBatchIn.model_validate(parsed)
        except ValidationError:
            return None
        return None if any(event.payload is not None for event in batch.events) else batch

    @staticmethod
    def _drafts(settings, suffix: str, model) -> list:  # noqa: ANN001
        """The route's checks after the body model, in its order; raises the ApiError it answers."""
        if suffix == SINGLE:
            problems = routes._event_problems(settings, model)
            if problems:
                raise problems[0]
            return [routes._draft(model)]
        limit = settings.batch_max_events
        if len(model.events) > limit:
            raise ApiError(413, "too_large", f"{len(model.events)} events; the limit is {limit} per batch",
                           field="events")
        problems = [p for i, e in enumerate(model.events) for p in routes._event_problems(settings, e, f"events[{i}].")]
        if problems:
            raise routes._one_error(problems)
        return [routes._draft(event) for event in model.events]


async def _read_body(receive: Receive) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for FastAPI after this layer read the body: the body once, then the real channel."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


__all__ = ["FastWrites", "write_target"]
