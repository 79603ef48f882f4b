"""The sync and async clients against the real app (ASGI transport): same operations, same results."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from athena_api.app import create_app
from athena_client.client import AsyncAthenaClient, AthenaClient, AthenaError
from athena_core.wiring.runtime import Runtime


def test_sync_client_round_trip(api, tenant: str) -> None:  # noqa: ANN001 - fixture
    client = AthenaClient("http://testserver", http_client=api)
    sid = client.create_session(tenant, "u1", "a1", {"k": "v"})
    [user_id, agent_id] = client.store_interaction(sid, "hello there", "hi!")
    event_id = client.store_event(sid, type="observation", content="log", metadata={"execution_id": "e"})
    window = client.get_context(sid)["stm_events"]
    assert [e["event_id"] for e in window] == [user_id, agent_id, event_id]
    assert client.get_session(sid)["metadata"] == {"k": "v"}
    with pytest.raises(AthenaError) as error:
        client.store_interaction(sid, "   ")
    assert error.value.status == 422
    assert client.delete_session(sid)["deleted"] is True


def test_store_events_sends_batches_and_returns_every_id_in_order(api, tenant: str) -> None:  # noqa: ANN001
    client = AthenaClient("http://testserver", http_client=api)
    sid = client.create_session(tenant, "u1", "a1")
    events = [{"type": "message", "role": "user", "content": f"imported {i}"} for i in range(7)]
    ids = client.store_events(sid, events, batch_size=3)
    assert len(ids) == 7
    window = client.get_context(sid)["stm_events"]
    assert [e["event_id"] for e in window] == ids and [e["content"] for e in window] == [e["content"] for e in events]
    events[4]["type"] = "gossip"  # the second request of three is refused: the first is stored, the rest not sent
    with pytest.raises(AthenaError) as error:
        client.store_events(sid, events, batch_size=3)
    assert error.value.status == 422 and len(error.value.stored_ids) == 3
    assert error.value.body["error"]["fields"][0]["field"] == "events[1].type"


def test_async_client_round_trip(runtime: Runtime, tenant: str) -> None:
    app = create_app(runtime=runtime)

    async def scenario() -> None:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with AsyncAthenaClient("http://athena", transport=transport) as client:
                sid = await client.create_session(tenant, "u1")
                ids = await client.store_interaction(sid, "async hello", "async hi")
                context = await client.get_context(sid, limit=2)
                assert [e["event_id"] for e in context["stm_events"]] == ids
                with pytest.raises(AthenaError) as error:
                    await client.get_session("ses_missing")
                assert error.value.status == 404
                assert (await client.health())["status"] in ("ok", "degraded")

    asyncio.run(scenario())
