"""Overload is answered before any work (issue 16): while the group-commit queue is full, a write request
gets 503 with Retry-After before its body is read or validated.

A refusal must cost next to nothing, or a flood of refused clients (each retrying at once) steals the
CPU the writer needs and accepted throughput falls as clients grow. The writer's own bound
(`GroupCommitWriter.store`) still decides for a request that gets past this door.
"""
from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from athena_api.errors import error_body

WRITE_ROUTES = ("/events", "/events:batch", "/interactions")
SESSIONS = "/api/v1/sessions/"


def is_write(method: str, path: str) -> bool:
    return method == "POST" and path.startswith(SESSIONS) and path.endswith(WRITE_ROUTES)


class WriteAdmission:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_write(scope["method"], scope["path"]):
            writer = getattr(scope["app"].state, "writer", None)
            if writer is not None and writer.is_full():
                await _refuse(send, writer.queued_events, writer.max_queued_events)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, queued: int, limit: int) -> None:
    body = json.dumps(error_body(
        "overloaded", f"{queued} events are waiting to be written (limit {limit}); retry shortly")).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]})
    await send({"type": "http.response.body", "body": body})
