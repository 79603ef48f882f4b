"""Sentry (SPEC S10): an exception raised in a task, and one raised in a request, reach the Sentry ingest
endpoint with tenant/task tags. The endpoint is a loopback HTTP server standing in for Sentry; the DSN
points at it. Sentry is initialised only inside each test and detached afterwards, so other tests never
report anything.
"""
from __future__ import annotations

import gzip
import json
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import sentry_sdk
from fastapi.testclient import TestClient

from athena_core.wiring.runtime import Runtime
from athena_core.observability.sentry_setup import close_sentry, init_sentry, tenant_from_task_call
from athena_tasks.app import app
from athena_tasks.base import AthenaTask

TASK_NAME = "athena.test.sentry_probe"


class SentryProbeError(RuntimeError):
    """Raised by the probe task; its type name must appear in the envelope."""


class ApiProbeError(RuntimeError):
    """Raised by a request handler in the API test."""


@app.task(base=AthenaTask, name=TASK_NAME, max_retries=0)
def sentry_probe(scope_key: str) -> None:
    raise SentryProbeError(f"probe failure for {scope_key}")


class IngestServer:
    """Records every envelope POSTed to /api/<project>/envelope/ (gzip or deflate bodies are inflated)."""

    def __init__(self) -> None:
        self.envelopes: list[bytes] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                elif encoding == "br":
                    import brotli  # only if sentry-sdk found it installed

                    body = brotli.decompress(body)
                with recorder._lock:
                    recorder.envelopes.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def dsn(self) -> str:
        return f"http://public@127.0.0.1:{self.server.server_address[1]}/1"

    def events(self) -> list[dict]:
        """The error events of all envelopes received so far (header lines and other items skipped)."""
        found = []
        with self._lock:
            envelopes = list(self.envelopes)
        for envelope in envelopes:
            for line in envelope.splitlines():
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict) and "exception" in item:
                    found.append(item)
        return found

    def wait_for_event(self, exc_type: str, timeout_s: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            sentry_sdk.flush(timeout=2.0)
            for event in self.events():
                if any(v.get("type") == exc_type for v in event["exception"].get("values", [])):
                    return event
            time.sleep(0.1)
        raise AssertionError(f"no {exc_type} event within {timeout_s} s; got {self.envelopes!r}"[:2000])


@pytest.fixture
def ingest() -> Iterator[IngestServer]:
    server = IngestServer()
    server.thread.start()
    try:
        yield server
    finally:
        close_sentry()
        server.server.shutdown()
        server.server.server_close()


def test_an_exception_raised_in_a_task_reaches_sentry_with_tenant_and_task_tags(
    worker_runtime: Runtime, ingest: IngestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from celery.app import trace

    monkeypatch.delenv("SENTRY_DSN", raising=False)
    assert init_sentry(ingest.dsn, "worker", shutdown_timeout=2)
    # In production `celeryd_init` turns Sentry on before the worker builds its tracers. The test
    # session's worker was started earlier, so rebuild this task's tracer through the patched builder.
    sentry_probe.__trace__ = trace.build_tracer(sentry_probe.name, sentry_probe, app=app)

    tenant = f"t-{uuid.uuid4().hex[:10]}"
    result = sentry_probe.delay(f"{tenant}:u1:a1")
    result.get(timeout=60, propagate=False)
    assert result.state == "FAILURE"

    event = ingest.wait_for_event("SentryProbeError")
    assert event["tags"]["tenant"] == tenant
    assert event["tags"]["task"] == TASK_NAME
    assert event["tags"]["component"] == "worker"
    assert event["tags"].get("celery_task_id") == result.id  # from the Celery integration itself
    values = event["exception"]["values"]
    assert any(f"probe failure for {tenant}:u1:a1" in (v.get("value") or "") for v in values)

    close_sentry()
    assert not sentry_sdk.get_client().is_active()  # nothing else in this session reports


def test_an_unhandled_api_error_reaches_sentry_through_create_app(
    runtime: Runtime, ingest: IngestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wiring in `create_app`: SENTRY_DSN set → the ASGI/FastAPI integration reports a 500."""
    from athena_api.app import create_app
    from athena_core.observability import request_context

    monkeypatch.setenv("SENTRY_DSN", ingest.dsn)
    application = create_app(runtime=runtime)
    assert sentry_sdk.get_client().is_active()
    monkeypatch.delenv("SENTRY_DSN")

    tenant = f"t-{uuid.uuid4().hex[:10]}"

    async def boom() -> None:
        request_context.tenant_id.set(tenant)  # what the session dependency records once it is known
        raise ApiProbeError("api probe failure")

    application.add_api_route("/test-only/boom", boom, methods=["GET"])
    with TestClient(application, raise_server_exceptions=False) as client:
        response = client.get("/test-only/boom", headers={"X-Request-Id": "req-sentry-probe"})
    assert response.status_code == 500

    event = ingest.wait_for_event("ApiProbeError")
    assert event["tags"]["component"] == "api"
    assert event["tags"]["tenant"] == tenant
    assert event["tags"]["request_id"] == "req-sentry-probe"
    assert event["request"]["url"].endswith("/test-only/boom")
    frames = [f for v in event["exception"]["values"] for f in v.get("stacktrace", {}).get("frames", [])]
    assert frames and not any("vars" in f for f in frames)  # no local variables: they hold user content


def test_sentry_stays_off_without_a_dsn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SENTRY_DSN", raising=False)
    assert init_sentry(None, "worker") is False
    assert init_sentry("", "api") is False
    assert not sentry_sdk.get_client().is_active()


def test_tenant_is_read_from_scope_keys_batches_and_tenant_arguments() -> None:
    def coalesce(scope_key: str, flush: bool = False) -> None: ...
    def segment(batch: dict) -> None: ...
    def analyse_tenant(tenant_id: str) -> None: ...
    def sweep() -> None: ...

    class FakeTask:
        def __init__(self, run) -> None:  # noqa: ANN001
            self.run = run

    assert tenant_from_task_call(FakeTask(coalesce), ["acme:u1:a1"], {}) == "acme"
    assert tenant_from_task_call(FakeTask(coalesce), [], {"scope_key": "acme:u1:a1"}) == "acme"
    assert tenant_from_task_call(FakeTask(segment), [{"scope": "beta:u2:a2", "event_ids": []}], {}) == "beta"
    assert tenant_from_task_call(FakeTask(analyse_tenant), ["gamma"], {}) == "gamma"
    assert tenant_from_task_call(FakeTask(sweep), [], {}) is None
    assert tenant_from_task_call(FakeTask(coalesce), ["not-a-scope"], {}) is None
