"""Per-request context for logs: the request id and tenant, set by the API and read by the log formatter."""
from __future__ import annotations

from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("athena_request_id", default="")
tenant_id: ContextVar[str] = ContextVar("athena_tenant_id", default="")
