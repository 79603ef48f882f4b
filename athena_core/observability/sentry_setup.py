"""Sentry for the API and the workers (SPEC S10): on when `SENTRY_DSN` is set, off (and free) otherwise.

The DSN is read from `SENTRY_DSN` (the name SPEC S10 uses and the one sentry-sdk itself knows), not from an
`ATHENA_*` setting: it is a deployment secret of the error tracker, not an Athena behaviour knob. Optional:
`SENTRY_ENVIRONMENT` (default `production` when ATHENA_PRODUCTION=1, else `development`), `SENTRY_RELEASE`,
`SENTRY_TRACES_SAMPLE_RATE` (default 0: errors only).

- API: the Starlette/FastAPI (ASGI) integrations; each event is tagged with the request id and, once the
  request has resolved a session, its tenant (`athena_core.observability.request_context`; see `tag_tenant`).
- Worker: the Celery integration; each event raised inside a task is tagged with the task name and the
  tenant taken from the task's arguments (a `tenant:user:agent` scope key, a `{"scope": key}` batch, or a
  `tenant_id` argument).
- Task arguments, request bodies and local variables are not sent: they hold conversation content and raw
  credential headers.

`init_sentry` must run before the worker builds its task tracers: `athena_tasks.sentry_hooks` calls it from
the `celeryd_init` signal, which fires before the consumer and the prefork children start.
"""
from __future__ import annotations

import inspect
import logging
import os
from typing import TYPE_CHECKING, Any, Literal

from athena_core.observability import request_context

if TYPE_CHECKING:
    from athena_core.wiring.settings import Settings

log = logging.getLogger("athena.sentry")

Component = Literal["api", "worker"]
DSN_ENV = "SENTRY_DSN"


def sentry_dsn(settings_or_dsn: "Settings | str | None" = None) -> str | None:
    """An explicit DSN string wins; otherwise `SENTRY_DSN` from the environment. Empty means off."""
    if isinstance(settings_or_dsn, str):
        return settings_or_dsn.strip() or None
    return os.environ.get(DSN_ENV, "").strip() or None


def init_sentry(
    settings_or_dsn: "Settings | str | None" = None,
    component: Component = "api",
    **options: Any,
) -> bool:
    """Turn Sentry on for this process if a DSN is configured. Returns whether it is on.

    `options` are passed to `sentry_sdk.init` (tests use `shutdown_timeout`, for example).
    """
    dsn = sentry_dsn(settings_or_dsn)
    if dsn is None:
        return False
    if component not in ("api", "worker"):
        raise ValueError(f"component must be 'api' or 'worker', got {component!r}")
    import sentry_sdk

    production = bool(getattr(settings_or_dsn, "production", False))
    environment = os.environ.get("SENTRY_ENVIRONMENT") or ("production" if production else "development")
    kwargs: dict[str, Any] = {
        "dsn": dsn,
        "environment": environment,
        "integrations": _integrations(component),
        "traces_sample_rate": float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE") or 0.0),
        # Conversations are user data, and ASGI header lists are not scrubbed: no local variables
        # (they hold message content and raw `X-API-Key` headers) and no request bodies in events.
        "include_local_variables": False,
        "max_request_body_size": "never",
        "before_send": _tagger(component),
        "before_send_transaction": _tagger(component),
    }
    kwargs.update(options)
    sentry_sdk.init(**kwargs)
    log.info("Sentry is on for the %s (environment %s)", component, environment)
    return True


def close_sentry(timeout_s: float = 2.0) -> None:
    """Flush and detach the client: afterwards nothing is captured (tests; graceful shutdowns)."""
    try:
        import sentry_sdk
    except ImportError:  # pragma: no cover - sentry-sdk is a dependency
        return
    client = sentry_sdk.get_client()
    if client.is_active():
        client.close(timeout=timeout_s)
    sentry_sdk.get_global_scope().set_client(None)


def tag_tenant(tenant_id: str) -> None:
    """Tag the current request's Sentry scope with its tenant (a no-op when Sentry is off).

    For request code that runs in a thread pool (sync FastAPI dependencies), where a context variable set
    there is not seen by the ASGI layer that reports the exception: the isolation scope object is shared.
    """
    try:
        import sentry_sdk
    except ImportError:  # pragma: no cover
        return
    if sentry_sdk.get_client().is_active():
        sentry_sdk.get_isolation_scope().set_tag("tenant", tenant_id)


def tenant_from_task_call(task: Any, args: Any, kwargs: Any) -> str | None:
    """The tenant a task runs for, read from its arguments, or None (beat jobs that span tenants)."""
    named: dict[str, Any] = dict(kwargs or {})
    run = getattr(task, "run", None)
    if run is not None and args:
        try:
            named = dict(inspect.signature(run).bind_partial(*args, **(kwargs or {})).arguments)
        except (TypeError, ValueError):
            named = dict(kwargs or {})
    tenant = named.get("tenant_id")
    if isinstance(tenant, str) and tenant:
        return tenant
    values = [named.get("scope_key"), *(args or ()), *named.values()]
    for value in values:
        if isinstance(value, dict):
            value = value.get("scope") or value.get("scope_key")
        tenant = _tenant_of_scope_key(value)
        if tenant:
            return tenant
    return None


def _tenant_of_scope_key(value: Any) -> str | None:
    if isinstance(value, str) and value.count(":") == 2:
        tenant = value.split(":", 1)[0]
        return tenant or None
    return None


def _integrations(component: Component) -> list:
    if component == "worker":
        from sentry_sdk.integrations.celery import CeleryIntegration

        return [CeleryIntegration()]
    from sentry_sdk.integrations.fastapi import FastApiIntegration
    from sentry_sdk.integrations.starlette import StarletteIntegration

    return [StarletteIntegration(), FastApiIntegration()]


def _tagger(component: Component):
    def before_send(event: dict, hint: dict) -> dict:
        tags = event.setdefault("tags", {})
        tags.setdefault("component", component)
        try:
            if component == "worker":
                _tag_task(tags)
            else:
                if rid := request_context.request_id.get():
                    tags.setdefault("request_id", rid)
            if "tenant" not in tags and (tenant := request_context.tenant_id.get()):
                tags["tenant"] = tenant
        except Exception:  # noqa: BLE001 - tagging must never drop the event
            log.debug("could not tag a Sentry event", exc_info=True)
        return event

    return before_send


def _tag_task(tags: dict) -> None:
    from celery import current_task

    task = current_task._get_current_object()
    if task is None or getattr(task.request, "id", None) is None:
        return
    tags.setdefault("task", task.name)
    tenant = tenant_from_task_call(task, task.request.args, task.request.kwargs)
    if tenant:
        tags.setdefault("tenant", tenant)
