"""Overload is answered, never dropped (issue 16): a flood past a deliberately small write queue gets 503
with Retry-After at once, over a real socket no connection is reset or times out, and every event
answered 201 is in the event log. The SDK's clients resend what was refused after its Retry-After, so
the same flood through them stores every event, each once."""
from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

from athena_api.app import create_app
from athena_client.client import AsyncAthenaClient
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import build_runtime
from athena_devtools.engine_servers import free_port


class FakeSlowDisk:
    """Wraps the event log's append with a pause, so a small flood outruns the writer (a fake slow disk)."""

    def __init__(self, append, pause_s: float) -> None:  # noqa: ANN001
        self.append, self.pause_s = append, pause_s

    def __call__(self, events) -> None:  # noqa: ANN001
        time.sleep(self.pause_s)
        self.append(events)


@contextmanager
def serving(app) -> Iterator[str]:  # noqa: ANN001
    """The app under uvicorn on a free loopback port, in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.started
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)


def small_capacity_runtime(make_settings):  # noqa: ANN001, ANN201
    runtime = build_runtime(make_settings(ingest_queue_max_events=4, ingest_group_max_events=2))
    runtime.documents.append_events = FakeSlowDisk(runtime.documents.append_events, 0.02)
    return runtime


def test_a_flood_past_capacity_gets_503_with_retry_after_and_every_201_is_in_the_log(make_settings, tenant) -> None:
    runtime = small_capacity_runtime(make_settings)
    with serving(create_app(runtime=runtime)) as base:
        sid = httpx.post(f"{base}/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u1", "agent_id": "a1"}
                         ).json()["session_id"]

        async def flood() -> list[httpx.Response]:
            limits = httpx.Limits(max_connections=64)
            async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30.0, trust_env=False) as client:
                return await asyncio.gather(*(
                    client.post(f"/api/v1/sessions/{sid}/events", json={"type": "message", "content": f"flood {i}"})
                    for i in range(192)))  # a transport error (reset, timeout) raises and fails the test

        answers = asyncio.run(flood())
    statuses = [r.status_code for r in answers]
    assert set(statuses) <= {201, 503} and statuses.count(503) > 0 and statuses.count(201) > 0
    refused = [r for r in answers if r.status_code == 503]
    assert all(r.headers.get("retry-after") == "1" and r.json()["error"]["code"] == "overloaded" for r in refused)
    accepted = [r.json()["event_id"] for r in answers if r.status_code == 201]
    held = runtime.documents.get_events(AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1").user_scope, accepted)
    assert sorted(e.event_id for e in held) == sorted(accepted)
    assert runtime.documents.count_events(AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1")) == len(accepted)
    runtime.close()


def test_the_sdk_resends_what_was_refused_and_stores_every_event_once(make_settings, tenant) -> None:
    runtime = small_capacity_runtime(make_settings)
    refusals = 0

    async def count_refusals(response: httpx.Response) -> None:
        nonlocal refusals
        refusals += response.status_code == 503

    async def flood(base: str) -> list[str]:
        async with AsyncAthenaClient(base, timeout=30.0, retries=12, max_retry_wait_s=1.5) as client:
            client._http.event_hooks["response"] = [count_refusals]  # what the server answered, refusals too
            sid = await client.create_session(tenant, "u1", "a1")
            return await asyncio.gather(*(client.store_event(sid, type="message", content=f"flood {i}")
                                          for i in range(48)))

    with serving(create_app(runtime=runtime)) as base:
        ids = asyncio.run(flood(base))
    assert refusals > 0  # the flood was refused at first, so the clients did resend
    assert len(set(ids)) == 48
    scope = AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1")
    assert sorted(e.content for e in runtime.documents.get_events(scope.user_scope, ids)) == \
        sorted(f"flood {i}" for i in range(48))
    assert runtime.documents.count_events(scope) == 48  # nothing stored twice
    runtime.close()
