"""Nothing accepted is lost (SPEC S7): the real stack as processes, HTTP on loopback, Redis stopped."""
from __future__ import annotations

import time
from pathlib import Path

from athena_client.client import AthenaClient
from athena_core.wiring.embedded_redis import ensure_embedded_redis, stop_embedded_redis
from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from athena_devtools.engine_servers import free_port


def test_events_stored_while_the_broker_is_down_are_swept_into_the_pipeline(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, redis_url=None, api_port=free_port())
    fast_sweep = {"ATHENA_PENDING_SWEEP_AGE_S": "0", "ATHENA_PENDING_SWEEP_EVERY_S": "1"}
    stack = Stack(settings, worker_concurrency=1, extra_env=fast_sweep)
    try:
        stack.start_redis()
        stack.start_api()
        stack.wait_for_api()
        scope = AgentScope(tenant_id="t-durable", user_id="u1", agent_id="a1")
        with AthenaClient(stack.base_url) as client:
            session_id = client.create_session(scope.tenant_id, scope.user_id, scope.agent_id)
            assert stop_embedded_redis(data_dir)  # broker and STM gone

            started = time.monotonic()
            [event_id] = client.store_interaction(session_id, "written while the broker is down")
            assert time.monotonic() - started < 5  # fails fast, does not hang on the broker
            context = client.get_context(session_id)
            assert context["stm_source"] == "event_log"
            assert context["stm_events"][-1]["content"] == "written while the broker is down"

            documents = SqliteDocuments(settings.sqlite_path)
            [event] = documents.get_events(scope.user_scope, [event_id])
            assert event.status == EventStatus.pending and event.seen_at is None

            ensure_embedded_redis(data_dir)  # the broker returns (same socket)
            stack.start_worker()
            stack.start_beat_worker()  # the pending sweep is a beat job: it runs on the beat queue's worker
            stack.start_beat()
            deadline = time.monotonic() + 180  # the worker loads the embedding model first
            while documents.get_events(scope.user_scope, [event_id])[0].seen_at is None:
                assert time.monotonic() < deadline, "the pending sweep never enqueued the event"
                stack.assert_running()
                time.sleep(0.2)
            # And the API recovers its Redis connection: new writes reach the window again.
            client.store_interaction(session_id, "after the outage")
            assert client.get_context(session_id)["stm_source"] in ("redis", "rebuilt")
    finally:
        stack.stop()
