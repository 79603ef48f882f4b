"""Pure-ASGI middleware: request id, latency and status metrics per route template, body size guard.

The body guard refuses a declared Content-Length over the limit at once, and counts the bytes of a streamed
(chunked) body as the app reads them: past the limit, `receive` raises `BodyTooLarge`, so the route never
runs, and the client gets 413 naming `body`.

Pure ASGI rather than BaseHTTPMiddleware: the ingest path is hot and this adds one function call.
"""
from __future__ import annotations

import itertools
import json
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from athena_api.errors import BodyTooLarge, error_body
from athena_core.observability import metrics, request_context


class RequestObservability:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        request_id = _request_id(headers.get(b"x-request-id", b""))
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            await _reject_too_large(send, int(length), self.max_body_bytes, request_id)
            return
        started = time.perf_counter()
        status = 500
        response_started = False
        received = 0
        limit = self.max_body_bytes
        request_context.request_id.set(request_id)
        request_context.tenant_id.set("")

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, limited_receive, send_with_id)
        except BodyTooLarge:
            # Normally the app's handler answers; this covers a body read outside FastAPI's request handling.
            if response_started:
                raise
            status = 413
            await _reject_too_large(send, received, limit, request_id)
        finally:
            route = scope.get("route")
            counted, timed = _series(scope["method"], getattr(route, "path", "unmatched"), status)
            counted.inc()
            timed.observe(time.perf_counter() - started)


_SERIES: dict[tuple[str, str, int], tuple] = {}


def _series(method: str, template: str, status: int) -> tuple:
    """The request counter and latency histogram of (method, route template, status), looked up once:
    `labels()` validates and locks on every call, twice per request on the hot path. Templates and
    statuses are few, so the map stays small."""
    key = (method, template, status)
    found = _SERIES.get(key)
    if found is None:
        found = _SERIES[key] = (metrics.HTTP_REQUESTS.labels(method, template, str(status)),
                                metrics.HTTP_SECONDS.labels(method, template))
    return found


# A client's X-Request-ID is echoed and logged: only a short token of safe characters is taken as it is.
_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")


# Our own request ids: a random prefix per process and a counter (unique, and no urandom call per request:
# uuid4 was 5% of the ingest path's samples under load).
_ID_PREFIX = uuid.uuid4().hex[:16]
_ids = itertools.count(1)


def _request_id(raw: bytes) -> str:
    return raw.decode("ascii") if _REQUEST_ID.fullmatch(raw) else f"{_ID_PREFIX}{next(_ids):016x}"


async def _reject_too_large(send: Send, size: int, limit: int, request_id: str) -> None:
    body = json.dumps(
        error_body("too_large", f"request body is {size} bytes or more; the limit is {limit}",
                   [{"field": "body", "message": "request body too large"}])
    ).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"x-request-id", request_id.encode()),
    ]})
    await send({"type": "http.response.body", "body": body})
