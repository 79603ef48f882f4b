"""Typed HTTP clients for Athena (sync and async), used by the demo, the evaluation and the README.

Each operation is described once as a `Call` (method, path, parameters); the two clients only differ
in how they send it. A refusal (429 or 503 with Retry-After: overloaded, rate-limited, or the event log
did not answer) stored nothing (SPEC S2), so both clients resend it after the time it asks, up to
`retries` times, before raising.
"""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx


FIELDS_SHOWN = 5  # field reasons an AthenaError's text lists; `body` keeps every one


def describe_error(status: int, body: Any) -> str:
    """One readable report of an error answer: status, code and message, then the first `FIELDS_SHOWN`
    fields with their reasons (a batch of 500 bad items is not 500 lines on a terminal)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return f"Athena answered {status}: {body}"
    lines = [f"Athena answered {status} {error.get('code')}: {error.get('message')}"]
    fields = [f for f in error.get("fields") or [] if isinstance(f, dict)]
    lines += [f"  {f.get('field')}: {f.get('message')}" for f in fields[:FIELDS_SHOWN]]
    if len(fields) > FIELDS_SHOWN:
        lines.append(f"  ... and {len(fields) - FIELDS_SHOWN} more")
    return "\n".join(lines)


class AthenaError(RuntimeError):
    """A non-2xx answer: its text is `describe_error`'s report, `body` the whole answer."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(describe_error(status, body))
        self.status = status
        self.body = body
        self.stored_ids: list[str] = []  # store_events: ids of the requests stored before this one failed


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    json: dict | None = None
    params: dict | None = None
    pick: str | None = None  # a key of the response to return instead of the whole body
    kwargs: dict = field(default_factory=dict)


def _event_body(role: str, type: str, content: str, metadata: dict | None, timestamp: datetime | None) -> dict:
    body: dict[str, Any] = {"role": role, "type": type, "content": content, "metadata": metadata or {}}
    if timestamp is not None:
        body["timestamp"] = timestamp.isoformat()
    return body


def _batch_item(event: dict) -> dict:
    """A StoreEvent body from a dict of its fields (`role` defaults to system; a datetime timestamp is sent
    as ISO 8601)."""
    item = {"role": "system", **event}
    if isinstance(item.get("timestamp"), datetime):
        item["timestamp"] = item["timestamp"].isoformat()
    return item


def batches(events: list[dict], size: int) -> list[list[dict]]:
    """`events` cut into requests of at most `size` (the server's ATHENA_BATCH_MAX_EVENTS, 500 by default)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    return [events[i:i + size] for i in range(0, len(events), size)]


class Operations:
    """The API's operations as `Call`s (SPEC S2)."""

    @staticmethod
    def create_session(tenant_id: str | None, user_id: str | None, agent_id: str | None,
                       metadata: dict[str, str] | None) -> Call:
        body = {k: v for k, v in {"tenant_id": tenant_id, "user_id": user_id, "agent_id": agent_id}.items() if v}
        return Call("POST", "/api/v1/sessions", json={**body, "metadata": metadata or {}}, pick="session_id")

    @staticmethod
    def get_session(session_id: str) -> Call:
        return Call("GET", f"/api/v1/sessions/{session_id}")

    @staticmethod
    def delete_session(session_id: str, purge_user: bool) -> Call:
        return Call("DELETE", f"/api/v1/sessions/{session_id}", params={"purge": "user"} if purge_user else None)

    @staticmethod
    def store_event(session_id: str, type: str, content: str, role: str, metadata: dict | None,
                    timestamp: datetime | None) -> Call:
        return Call("POST", f"/api/v1/sessions/{session_id}/events",
                    json=_event_body(role, type, content, metadata, timestamp), pick="event_id")

    @staticmethod
    def store_events(session_id: str, events: list[dict]) -> Call:
        """One StoreEvents request (all or none of `events` is stored); the ids come back in order."""
        return Call("POST", f"/api/v1/sessions/{session_id}/events:batch",
                    json={"events": [_batch_item(e) for e in events]}, pick="event_ids")

    @staticmethod
    def store_interaction(session_id: str, user_message: str, agent_response: str | None, metadata: dict | None,
                          timestamp: datetime | None) -> Call:
        body: dict[str, Any] = {"user_message": user_message, "metadata": metadata or {}}
        if agent_response is not None:
            body["agent_response"] = agent_response
        if timestamp is not None:
            body["timestamp"] = timestamp.isoformat()
        return Call("POST", f"/api/v1/sessions/{session_id}/interactions", json=body, pick="event_ids")

    @staticmethod
    def get_context(session_id: str, limit: int, query: str, pages: int) -> Call:
        return Call("GET", f"/api/v1/sessions/{session_id}/context",
                    params={"limit": limit, "query": query, "pages": pages})

    @staticmethod
    def search_memory(session_id: str, query: str, limit: int | None, options: dict) -> Call:
        body = {"query": query, **({"limit": limit} if limit is not None else {}), **options}
        return Call("POST", f"/api/v1/sessions/{session_id}/context/search", json=body)

    @staticmethod
    def segments(session_id: str, limit: int) -> Call:
        return Call("GET", f"/api/v1/sessions/{session_id}/segments", params={"limit": limit})

    @staticmethod
    def health() -> Call:
        return Call("GET", "/api/v1/health")


def _headers(api_key: str | None, token: str | None) -> dict[str, str]:
    headers = {}
    if api_key:
        headers["X-API-Key"] = api_key
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


RETRY_STATUSES = frozenset({429, 503})


def retry_wait(response: httpx.Response, cap_s: float) -> float | None:
    """Seconds to wait before resending a refused request: its Retry-After plus up to 50 % jitter (refused
    clients then do not all come back at once), at most `cap_s`; None for an answer that is no refusal or
    names no delay in seconds."""
    if response.status_code not in RETRY_STATUSES:
        return None
    try:
        seconds = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return min(cap_s, max(seconds, 0.0) * (1.0 + random.random() / 2))


def _result(call: Call, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = response.text
        raise AthenaError(response.status_code, body)
    body = response.json() if response.content else None
    return body[call.pick] if call.pick and body is not None else body


class AthenaClient:
    """Synchronous client."""

    def __init__(self, base_url: str, *, api_key: str | None = None, token: str | None = None,
                 timeout: float = 10.0, transport: httpx.BaseTransport | None = None,
                 http_client: httpx.Client | None = None, retries: int = 3, max_retry_wait_s: float = 30.0) -> None:
        """`http_client` replaces the internal client (e.g. a Starlette TestClient in tests). A refused
        request is resent up to `retries` times, each after its Retry-After (at most `max_retry_wait_s`)."""
        self._http = http_client or httpx.Client(base_url=base_url, headers=_headers(api_key, token),
                                                 timeout=timeout, transport=transport)
        self.retries, self.max_retry_wait_s = retries, max_retry_wait_s

    def _send(self, call: Call) -> Any:
        for attempt in range(self.retries + 1):
            response = self._http.request(call.method, call.path, json=call.json, params=call.params)
            wait = retry_wait(response, self.max_retry_wait_s) if attempt < self.retries else None
            if wait is None:
                return _result(call, response)
            time.sleep(wait)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "AthenaClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_session(self, tenant_id: str | None = None, user_id: str | None = None,
                       agent_id: str | None = None, metadata: dict[str, str] | None = None) -> str:
        return self._send(Operations.create_session(tenant_id, user_id, agent_id, metadata))

    def get_session(self, session_id: str) -> dict:
        return self._send(Operations.get_session(session_id))

    def delete_session(self, session_id: str, purge_user: bool = False) -> dict:
        return self._send(Operations.delete_session(session_id, purge_user))

    def store_event(self, session_id: str, *, type: str, content: str, role: str = "system",
                    metadata: dict[str, str] | None = None, timestamp: datetime | None = None) -> str:
        return self._send(Operations.store_event(session_id, type, content, role, metadata, timestamp))

    def store_events(self, session_id: str, events: list[dict], *, batch_size: int = 500) -> list[str]:
        """Store many events (dicts with StoreEvent's fields: type, content, role, metadata, timestamp…)
        through the batch route, `batch_size` per request; returns every id, in order. Each request is
        all or none: on an error, the requests before it are stored and the ids so far are in the
        exception's `stored_ids`."""
        ids: list[str] = []
        for chunk in batches(events, batch_size):
            try:
                ids += self._send(Operations.store_events(session_id, chunk))
            except AthenaError as exc:
                exc.stored_ids = ids
                raise
        return ids

    def store_interaction(self, session_id: str, user_message: str, agent_response: str | None = None, *,
                          metadata: dict[str, str] | None = None, timestamp: datetime | None = None) -> list[str]:
        return self._send(Operations.store_interaction(session_id, user_message, agent_response, metadata, timestamp))

    def get_context(self, session_id: str, *, limit: int = 10, query: str = "", pages: int = 5) -> dict:
        return self._send(Operations.get_context(session_id, limit, query, pages))

    def search_memory(self, session_id: str, query: str, *, limit: int | None = None, **options: Any) -> list[dict]:
        return self._send(Operations.search_memory(session_id, query, limit, options))

    def segments(self, session_id: str, *, limit: int = 50) -> list[dict]:
        return self._send(Operations.segments(session_id, limit))

    def health(self) -> dict:
        return self._send(Operations.health())


class AsyncAthenaClient:
    """Asynchronous client with the same operations."""

    def __init__(self, base_url: str, *, api_key: str | None = None, token: str | None = None,
                 timeout: float = 10.0, transport: httpx.AsyncBaseTransport | None = None, retries: int = 3,
                 max_retry_wait_s: float = 30.0) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, headers=_headers(api_key, token), timeout=timeout,
                                       transport=transport)
        self.retries, self.max_retry_wait_s = retries, max_retry_wait_s

    async def _send(self, call: Call) -> Any:
        for attempt in range(self.retries + 1):
            response = await self._http.request(call.method, call.path, json=call.json, params=call.params)
            wait = retry_wait(response, self.max_retry_wait_s) if attempt < self.retries else None
            if wait is None:
                return _result(call, response)
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncAthenaClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def create_session(self, tenant_id: str | None = None, user_id: str | None = None,
                             agent_id: str | None = None, metadata: dict[str, str] | None = None) -> str:
        return await self._send(Operations.create_session(tenant_id, user_id, agent_id, metadata))

    async def get_session(self, session_id: str) -> dict:
        return await self._send(Operations.get_session(session_id))

    async def delete_session(self, session_id: str, purge_user: bool = False) -> dict:
        return await self._send(Operations.delete_session(session_id, purge_user))

    async def store_event(self, session_id: str, *, type: str, content: str, role: str = "system",
                          metadata: dict[str, str] | None = None, timestamp: datetime | None = None) -> str:
        return await self._send(Operations.store_event(session_id, type, content, role, metadata, timestamp))

    async def store_events(self, session_id: str, events: list[dict], *, batch_size: int = 500) -> list[str]:
        """As `AthenaClient.store_events`."""
        ids: list[str] = []
        for chunk in batches(events, batch_size):
            try:
                ids += await self._send(Operations.store_events(session_id, chunk))
            except AthenaError as exc:
                exc.stored_ids = ids
                raise
        return ids

    async def store_interaction(self, session_id: str, user_message: str, agent_response: str | None = None, *,
                                metadata: dict[str, str] | None = None,
                                timestamp: datetime | None = None) -> list[str]:
        return await self._send(
            Operations.store_interaction(session_id, user_message, agent_response, metadata, timestamp))

    async def get_context(self, session_id: str, *, limit: int = 10, query: str = "", pages: int = 5) -> dict:
        return await self._send(Operations.get_context(session_id, limit, query, pages))

    async def search_memory(self, session_id: str, query: str, *, limit: int | None = None, **options: Any) -> list[dict]:
        return await self._send(Operations.search_memory(session_id, query, limit, options))

    async def segments(self, session_id: str, *, limit: int = 50) -> list[dict]:
        return await self._send(Operations.segments(session_id, limit))

    async def health(self) -> dict:
        return await self._send(Operations.health())
