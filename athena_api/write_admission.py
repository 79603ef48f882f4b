"""Overload is answered before any work (issue 16): a write request gets 503 with Retry-After before its
body is read or validated while the group-commit queue is full (in events), or while the process already
holds `max_in_flight` write requests between this door and their answer.

Two bounds, because batches and single events fill a process differently: a batch of 100 is one request
but a hundred events of the writer's work, so the events bound is sized for batches (20,000: 200 batches
of 100 queued are about a second of commits) and the request bound caps what the loop parses and holds at
once (bodies in memory, validations) however small each request is. A refusal must cost next to nothing,
or a flood of refused clients (each retrying at once) steals the CPU the writer needs and accepted
throughput falls as clients grow. The writer's own bound (`GroupCommitWriter.store`) still decides for a
request that got past this door.
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
    def __init__(self, app: ASGIApp, max_in_flight: int = 1024) -> None:
        self.app = app
        self.max_in_flight = max_in_flight
        self.in_flight = 0  # write requests admitted and not yet answered (one event loop: no lock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_write(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        writer = getattr(scope["app"].state, "writer", None)
        if writer is not None and writer.is_full():
            await _refuse(send, f"{writer.queued_events} events are waiting to be written "
                                f"(limit {writer.admission_limit()}); retry shortly")
            return
        if self.in_flight >= self.max_in_flight:
            await _refuse(send, f"{self.in_flight} write requests are in progress (limit {self.max_in_flight}); "
                                "retry shortly")
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


async def _refuse(send: Send, message: str) -> None:
    body = json.dumps(error_body("overloaded", message)).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]})
    await send({"type": "http.response.body", "body": body})
