"""Structured JSON logs (SPEC S10): one object per line with request id, tenant and Celery task id."""
from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

from athena_core.observability import request_context

STANDARD_FIELDS = frozenset(vars(logging.makeLogRecord({})))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if rid := request_context.request_id.get():
            entry["request_id"] = rid
        if tenant := request_context.tenant_id.get():
            entry["tenant"] = tenant
        task_id = _celery_task_id()
        if task_id:
            entry["task_id"] = task_id
        for key, value in vars(record).items():
            if key not in STANDARD_FIELDS and not key.startswith("_"):
                entry[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def _celery_task_id() -> str | None:
    try:
        from celery import current_task
    except ImportError:  # pragma: no cover - celery is a dependency
        return None
    request = getattr(current_task, "request", None)
    return getattr(request, "id", None) if current_task else None


def configure_logging(fmt: str, level: str = "INFO") -> None:
    """`json` replaces the root handler's formatter; `text` keeps the standard format."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
