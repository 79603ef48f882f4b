"""A small typed HTTP client for Athena, used by the demo, the evaluation harness and the README."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx


class AthenaError(RuntimeError):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"Athena answered {status}: {body}")
        self.status = status
        self.body = body


class AthenaClient:
    def __init__(
        self, base_url: str, *, api_key: str | None = None, token: str | None = None, timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {}
        if api_key:
            headers["X-API-Key"] = api_key
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "AthenaClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = response.text
            raise AthenaError(response.status_code, body)
        return response.json() if response.content else None

    def create_session(
        self, tenant_id: str | None = None, user_id: str | None = None, agent_id: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> str:
        body = {k: v for k, v in {"tenant_id": tenant_id, "user_id": user_id, "agent_id": agent_id}.items() if v}
        body["metadata"] = metadata or {}
        return self._call("POST", "/api/v1/sessions", json=body)["session_id"]

    def get_session(self, session_id: str) -> dict:
        return self._call("GET", f"/api/v1/sessions/{session_id}")

    def delete_session(self, session_id: str, purge_user: bool = False) -> dict:
        params = {"purge": "user"} if purge_user else None
        return self._call("DELETE", f"/api/v1/sessions/{session_id}", params=params)

    def store_event(
        self, session_id: str, *, type: str, content: str, role: str = "system",
        metadata: dict[str, str] | None = None, timestamp: datetime | None = None,
    ) -> str:
        body: dict[str, Any] = {"role": role, "type": type, "content": content, "metadata": metadata or {}}
        if timestamp is not None:
            body["timestamp"] = timestamp.isoformat()
        return self._call("POST", f"/api/v1/sessions/{session_id}/events", json=body)["event_id"]

    def store_interaction(
        self, session_id: str, user_message: str, agent_response: str | None = None, *,
        metadata: dict[str, str] | None = None, timestamp: datetime | None = None,
    ) -> list[str]:
        body: dict[str, Any] = {"user_message": user_message, "metadata": metadata or {}}
        if agent_response is not None:
            body["agent_response"] = agent_response
        if timestamp is not None:
            body["timestamp"] = timestamp.isoformat()
        return self._call("POST", f"/api/v1/sessions/{session_id}/interactions", json=body)["event_ids"]

    def get_context(self, session_id: str, *, limit: int = 10, query: str = "", pages: int = 5) -> dict:
        params = {"limit": limit, "query": query, "pages": pages}
        return self._call("GET", f"/api/v1/sessions/{session_id}/context", params=params)

    def search_memory(self, session_id: str, query: str, *, limit: int = 5, **options: Any) -> list[dict]:
        body = {"query": query, "limit": limit, **options}
        return self._call("POST", f"/api/v1/sessions/{session_id}/context/search", json=body)

    def health(self) -> dict:
        return self._call("GET", "/api/v1/health")
