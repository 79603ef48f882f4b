"""One contract suite for every GraphStore adapter (SPEC S1, S6, S7.4).

Runs on SQLite (a temporary file per test) and on ArangoDB when ATHENA_TEST_ARANGO_URL is set
(e.g. http://root:pw@127.0.0.1:8529; user and password are taken from the URL), in the database
ATHENA_TEST_ARANGO_DB (default `athena_ltm_test`, never the production `athena_ltm`). Every test works in
fresh random tenant ids, and on Arango removes what it wrote. Only a real server parses and evaluates the
AQL: the UPSERT arithmetic, idempotent re-runs and the maximum-length key are proven there.

Without a server, the Arango adapter is still checked offline, by `_NonParsingAqlRecorder`, a stand-in for
python-arango's database that does NOT parse or evaluate AQL: it checks the few things a token scan can
honestly check (bind variables declared and used both ways, each collection modified at most once per query,
no ternary before `IN` without parentheses, no chained `[*]` expansion, keys within the length limit,
writes inside a stream transaction only to collections it declared) and records queries and transactions.
"""
from __future__ import annotations

import os
import re
import sqlite3
from unittest import mock
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from athena_core.stores.graph.arango_graph import AQL, DATABASE, ArangoGraph, aql_queries
from athena_core.stores.graph.port import MAX_KEY_BYTES, GraphStore, GraphWriteConflict, key_prefix, node_key
from athena_core.models.ontology import USER_NODE_ID, FactObservation
from athena_core.stores.graph.sqlite_graph import SqliteGraph
from athena_core.models.scope import UserScope

ARANGO_URL = os.environ.get("ATHENA_TEST_ARANGO_URL")
ARANGO_TEST_DB = os.environ.get("ATHENA_TEST_ARANGO_DB", "athena_ltm_test")
T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def _tenant() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def obs(
    subject: str, relation: str, obj: str, *, confidence: float = 0.9, evidence: str = "c1:h1",
    valid_at: datetime = T0, heat: float = 0.5, nuance: str = "", subject_label: str = "Identities",
    object_label: str = "Tools", subject_name: str | None = None, object_name: str | None = None,
) -> FactObservation:
    return FactObservation(
        subject_id=subject, subject_label=subject_label, subject_name=subject_name or subject,
        relation=relation, object_id=obj, object_label=object_label, object_name=object_name or obj,
        confidence=confidence, context_nuance=nuance or f"{subject} {relation} {obj}", heat_score=heat,
        valid_at=valid_at, evidence_id=evidence,
    )


class Harness:
    """The adapter under test, fresh scopes, and a peek at node timestamps (not part of the port)."""

    def __init__(self, graph: GraphStore, node_times: Callable[[str], tuple[float, float]]) -> None:
        self.graph = graph
        self.node_times = node_times
        self.scopes: list[UserScope] = []

    def scope(self, tenant: str | None = None, user: str | None = None) -> UserScope:
        scope = UserScope(tenant_id=tenant or _tenant(), user_id=user or f"u-{uuid.uuid4().hex[:8]}")
        self.scopes.append(scope)
        return scope

    def cleanup(self) -> None:
        for scope in self.scopes:
            self.graph.delete_user(scope)
        for tenant in {s.tenant_id for s in self.scopes}:
            self.graph.write_communities(tenant, {}, {}, [])


def _sqlite_harness(tmp_path: Path) -> Harness:
    path = tmp_path / "graph.db"
    graph = SqliteGraph(path)

    def node_times(key: str) -> tuple[float, float]:
        with sqlite3.connect(path) as conn:
            return conn.execute("SELECT created_at, last_seen FROM nodes WHERE key = ?", (key,)).fetchone()

    return Harness(graph, node_times)


@pytest.fixture(scope="module")
def arango_graph() -> Iterator[ArangoGraph]:
    if not ARANGO_URL:
        pytest.skip("ATHENA_TEST_ARANGO_URL not set")
    parts = urlsplit(ARANGO_URL)
    assert ARANGO_TEST_DB != DATABASE, "the contract tests never write into the production database"
    graph = ArangoGraph(ARANGO_URL, username=parts.username or "root", password=parts.password or "",
                        database=ARANGO_TEST_DB)
    yield graph
    graph.close()


@pytest.fixture(params=["sqlite", "arango"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "sqlite":
        h = _sqlite_harness(tmp_path)
        yield h
        h.graph.close()
        return
    graph: ArangoGraph = request.getfixturevalue("arango_graph")

    def node_times(key: str) -> tuple[float, float]:
        docs = list(graph._db.aql.execute(AQL["resolve_labels"], bind_vars={"candidates": [
            f"{label}/{key}" for label in ("Identities", "Tools", "Projects", "Concepts")]}))
        doc = graph._db.collection(docs[0]["label"]).get(key)
        return doc["created_at"], doc["last_seen"]

    h = Harness(graph, node_times)
    yield h
    h.cleanup()


def _edge(graph: GraphStore, scope: UserScope, subject: str, relation: str, obj: str):
    found = [f for f in graph.edges(scope) if (f.subject.id, f.relation, f.object.id) == (subject, relation, obj)]
    assert len(found) <= 1
    return found[0] if found else None


def _pairs(facts) -> list[tuple[str, str, str]]:
    return [(f.subject.id, f.relation, f.object.id) for f in facts]


# -- the UPSERT contract ---------------------------------------------------------------------------------
def test_repeated_observations_strengthen_one_edge(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    confidences = [0.9, 0.6, 0.7, 0.8, 1.0, 0.55, 0.65, 0.75, 0.85, 0.95]
    for i, c in enumerate(confidences):
        new = g.upsert_facts(
            scope, [obs(USER_NODE_ID, "USES", "go", confidence=c, evidence=f"chain{i}:h", heat=i / 10,
                        valid_at=T0 + timedelta(days=i), nuance=f"n{i}")],
            T0 + timedelta(days=i, hours=1),
        )
        assert new == 1
    facts = g.edges(scope)
    assert len(facts) == 1
    fact = facts[0]
    assert fact.weight == 10
    assert fact.confidence == pytest.approx(sum(confidences) / 10)
    assert fact.context_nuance == "n9" and fact.heat_score == pytest.approx(0.9)  # latest wins
    assert fact.valid_at == T0 + timedelta(days=9) and fact.first_valid_at == T0
    assert fact.first_seen == T0 + timedelta(hours=1)
    assert fact.last_seen == T0 + timedelta(days=9, hours=1)
    assert fact.valid_at.tzinfo is not None and fact.valid_at.utcoffset() == timedelta(0)
    assert g.count(scope) == (2, 1)


def test_same_evidence_twice_changes_nothing(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    fact = obs(USER_NODE_ID, "USES", "go", confidence=0.8, evidence="chain1:abc")
    assert g.upsert_facts(scope, [fact], T0) == 1
    before = g.edges(scope)[0]
    # The same promotion re-run later (also duplicated inside one batch) counts nothing.
    assert g.upsert_facts(scope, [fact, fact], T0 + timedelta(hours=1)) == 0
    after = g.edges(scope)[0]
    assert after.model_dump() == before.model_dump()
    # A new evidence id does count, and a batch holding the same edge twice with two new ids counts both.
    assert g.upsert_facts(scope, [
        obs(USER_NODE_ID, "USES", "go", confidence=0.4, evidence="chain2:x"),
        obs(USER_NODE_ID, "USES", "go", confidence=0.6, evidence="chain3:y", nuance="last"),
        obs(USER_NODE_ID, "USES", "go", confidence=0.6, evidence="chain3:y"),
    ], T0 + timedelta(hours=2)) == 2
    edge = g.edges(scope)[0]
    assert edge.weight == 3
    assert edge.confidence == pytest.approx((0.8 + 0.4 + 0.6) / 3)
    assert edge.context_nuance == "last"
    # Re-running that same promotion after the update changes nothing either (the evidence ids appended
    # by the update are real ids, not `[]` entries of a chained expansion).
    again = [obs(USER_NODE_ID, "USES", "go", confidence=0.4, evidence="chain2:x"),
             obs(USER_NODE_ID, "USES", "go", confidence=0.6, evidence="chain3:y", nuance="last")]
    assert g.upsert_facts(scope, again, T0 + timedelta(hours=3)) == 0
    assert g.edges(scope)[0].model_dump() == edge.model_dump()
    # An update with two new observations at once: (c·w + Σnew)/(w + k), valid_at = the latest evidence.
    later = T0 + timedelta(days=2)
    assert g.upsert_facts(scope, [
        obs(USER_NODE_ID, "USES", "go", confidence=0.2, evidence="chain4:z", valid_at=later),
        obs(USER_NODE_ID, "USES", "go", confidence=1.0, evidence="chain5:w", valid_at=T0 + timedelta(days=1)),
    ], T0 + timedelta(hours=4)) == 2
    edge = g.edges(scope)[0]
    assert edge.weight == 5
    assert edge.confidence == pytest.approx((0.8 + 0.4 + 0.6 + 0.2 + 1.0) / 5)
    assert edge.valid_at == later and edge.first_valid_at == T0


def test_edges_keep_the_event_ids_of_their_evidence(harness: Harness) -> None:
    """SPEC S6.1: a fact keeps the ids of its evidence events; every read returns them; purge removes them."""
    g, scope = harness.graph, harness.scope()
    first = obs(USER_NODE_ID, "USES", "go", evidence="chain1:a").model_copy(update={"evidence_event_ids": ["ev-1"]})
    assert g.upsert_facts(scope, [first, obs(USER_NODE_ID, "USES", "zig", evidence="chain1:a")], T0) == 2
    assert g.upsert_facts(scope, [first], T0) == 0  # the same observation again adds nothing
    second = obs(USER_NODE_ID, "USES", "go", evidence="chain2:b").model_copy(
        update={"evidence_event_ids": ["ev-2", "ev-1"]})
    assert g.upsert_facts(scope, [second], T0 + timedelta(hours=1)) == 1
    assert sorted(_edge(g, scope, USER_NODE_ID, "USES", "go").evidence_event_ids) == ["ev-1", "ev-2"]
    assert _edge(g, scope, USER_NODE_ID, "USES", "zig").evidence_event_ids == []  # the summary said it
    (about,) = [f for f in g.facts_about(scope, USER_NODE_ID, "USES") if f.object.id == "go"]
    (near,) = [f for f in g.neighbourhood(scope, [USER_NODE_ID]) if f.object.id == "go"]
    assert sorted(about.evidence_event_ids) == sorted(near.evidence_event_ids) == ["ev-1", "ev-2"]
    g.delete_user(scope)
    assert g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go", evidence="chain3:c")], T0) == 1
    assert _edge(g, scope, USER_NODE_ID, "USES", "go").evidence_event_ids == []  # nothing left of the purge


def test_nodes_created_once_last_seen_updated(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go", object_name="Go")], T0)
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go", evidence="c2:h", object_name="golang")],
                   T0 + timedelta(hours=3))
    created, last_seen = harness.node_times(node_key(scope, "go"))
    assert created == pytest.approx(T0.timestamp())
    assert last_seen == pytest.approx((T0 + timedelta(hours=3)).timestamp())
    nodes = {n.id: n for n in g.nodes(scope)}
    assert set(nodes) == {USER_NODE_ID, "go"}
    assert nodes["go"].name == "Go" and nodes["go"].label == "Tools"  # insert-only fields keep first value
    assert nodes["go"].key == node_key(scope, "go")


def test_node_keeps_its_first_label(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "rust", object_label="Tools")], T0)
    g.upsert_facts(scope, [obs(USER_NODE_ID, "EXPRESSED_INTEREST", "rust", object_label="Concepts",
                               evidence="c2:h")], T0)
    assert [(n.id, n.label) for n in g.nodes(scope) if n.id == "rust"] == [("rust", "Tools")]
    assert g.count(scope) == (2, 2)
    assert {f.object.label for f in g.edges(scope)} == {"Tools"}


def test_ids_with_a_namespace_separator_are_refused(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    for bad in ("other:user:go", "go\n", "x=" + "0" * 32):  # separator, trailing newline, shortened shape
        with pytest.raises(ValueError):
            g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", bad)], T0)
    assert g.count(scope) == (0, 0)


def _long_ids(tag: str) -> tuple[str, str, str, str]:
    """A 128-character tenant and user, and two 200-character node ids sharing their first 199."""
    tenant = (f"t{tag}" + uuid.uuid4().hex * 8)[:128]
    user = (f"u{tag}" + uuid.uuid4().hex * 8)[:128]
    return tenant, user, "a" * 199 + "1", "a" * 199 + "2"


def test_maximum_length_keys_fit_every_engine(harness: Harness) -> None:
    """Full keys could reach 128 + 128 + 200 + 2 = 458 bytes; ArangoDB refuses keys over 254 (1221). One
    rule for both engines keeps every key within MAX_KEY_BYTES, deterministic and collision-free."""
    tenant, user, long_a, long_b = _long_ids("max")
    g, scope = harness.graph, harness.scope(tenant=tenant, user=user)
    assert g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", long_a), obs(long_a, "RELATES_TO", long_b,
                                                                          subject_label="Tools")], T0) == 2
    nodes = {n.id: n for n in g.nodes(scope)}
    assert set(nodes) == {USER_NODE_ID, long_a, long_b}  # ids round-trip verbatim
    assert len({n.key for n in nodes.values()}) == 3
    for node in nodes.values():
        assert len(node.key.encode()) <= MAX_KEY_BYTES < 254
        assert node.key == node_key(scope, node.id) and node.key.startswith(key_prefix(scope))
    assert sorted(_pairs(g.neighbourhood(scope, [long_a], depth=1))) == sorted(
        [(USER_NODE_ID, "USES", long_a), (long_a, "RELATES_TO", long_b)])
    assert [f.object.id for f in g.facts_about(scope, long_a)] == [long_b]
    assert g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", long_a)], T0) == 0  # same key, same edge
    assert g.count(scope) == (3, 2)
    assert g.delete_user(scope) == 5


def test_node_key_rule() -> None:
    short = UserScope(tenant_id="acme", user_id="alice")
    assert node_key(short, "go") == "acme:alice:go"  # keys that fit are unchanged
    tenant, user, long_a, long_b = _long_ids("rule")
    scope = UserScope(tenant_id=tenant, user_id=user)
    keys = {node_key(scope, i) for i in (long_a, long_b, "go", "a" * 199)}
    assert len(keys) == 4 and all(len(k.encode()) <= MAX_KEY_BYTES for k in keys)
    assert node_key(scope, long_a) == node_key(UserScope(tenant_id=tenant, user_id=user), long_a)
    assert all(k.startswith(key_prefix(scope)) for k in keys) and key_prefix(scope).count(":") == 2
    # Scopes that differ only beyond the kept characters still get different prefixes (the hash).
    other = UserScope(tenant_id=tenant[:-1] + ("x" if tenant[-1] != "x" else "y"), user_id=user)
    assert key_prefix(other) != key_prefix(scope)
    assert node_key(short, long_a) == f"acme:alice:{long_a}"  # 211 bytes: fits, unchanged
    # A prefix that fits (≤ 160 bytes) stays verbatim and only the id is shortened.
    medium = UserScope(tenant_id=tenant, user_id="alice")
    assert key_prefix(medium) == f"{tenant}:alice:"
    assert node_key(medium, long_a).startswith(f"{tenant}:alice:aaaa") and len(node_key(medium, long_a)) == 250
    assert node_key(medium, long_a) != node_key(medium, long_b)


# -- retrieval ---------------------------------------------------------------------------------------------
def _chain_graph(g: GraphStore, scope: UserScope) -> None:
    """user -USES-> go -RELATES_TO-> docker -RELATES_TO-> k8s ; user -USES(0.3)-> perl -RELATES_TO-> cpan ;
    rust -RELATES_TO-> user (incoming edge)."""
    g.upsert_facts(scope, [
        obs(USER_NODE_ID, "USES", "go"),
        obs("go", "RELATES_TO", "docker", subject_label="Tools"),
        obs("docker", "RELATES_TO", "k8s", subject_label="Tools"),
        obs(USER_NODE_ID, "USES", "perl", confidence=0.3),
        obs("perl", "RELATES_TO", "cpan", subject_label="Tools", confidence=0.95),
        obs("rust", "RELATES_TO", USER_NODE_ID, subject_label="Tools", object_label="Identities"),
    ], T0)


def test_low_confidence_edges_exist_but_never_surface(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    _chain_graph(g, scope)
    assert ("user", "USES", "perl") in _pairs(g.edges(scope))
    near = _pairs(g.neighbourhood(scope, [USER_NODE_ID], depth=2))
    assert ("user", "USES", "perl") not in near
    assert ("perl", "RELATES_TO", "cpan") not in near  # reachable only through the 0.3 edge
    # Starting at perl itself, its own good edge is visible; the weak one still is not.
    assert _pairs(g.neighbourhood(scope, ["perl"], depth=1)) == [("perl", "RELATES_TO", "cpan")]
    # The threshold is a parameter (default 0.5).
    assert ("user", "USES", "perl") in _pairs(g.neighbourhood(scope, [USER_NODE_ID], min_confidence=0.2))


def test_neighbourhood_depth_any_direction(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    _chain_graph(g, scope)
    one = set(_pairs(g.neighbourhood(scope, [USER_NODE_ID], depth=1)))
    assert one == {("user", "USES", "go"), ("rust", "RELATES_TO", "user")}
    two = set(_pairs(g.neighbourhood(scope, [USER_NODE_ID], depth=2)))
    assert two == one | {("go", "RELATES_TO", "docker")}
    assert ("docker", "RELATES_TO", "k8s") not in two  # three hops away
    # Several start nodes: distinct edges, even when reachable from both.
    both = _pairs(g.neighbourhood(scope, [USER_NODE_ID, "go", "go"], depth=1))
    assert sorted(both) == sorted(set(both))
    assert set(both) == one | {("go", "RELATES_TO", "docker")}
    assert g.neighbourhood(scope, ["nowhere"], depth=2) == []
    assert g.neighbourhood(scope, [], depth=2) == []


def test_neighbourhood_sorts_weight_then_heat_and_limits(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    facts = []
    for tool, weight, heat in [("a", 1, 0.9), ("b", 3, 0.1), ("c", 2, 0.2), ("d", 2, 0.8), ("e", 1, 0.1)]:
        facts += [obs(USER_NODE_ID, "USES", tool, heat=heat, evidence=f"c{i}:h") for i in range(weight)]
    g.upsert_facts(scope, facts, T0)
    ranked = [f.object.id for f in g.neighbourhood(scope, [USER_NODE_ID], depth=1)]
    assert ranked == ["b", "d", "c", "a", "e"]
    assert [f.object.id for f in g.neighbourhood(scope, [USER_NODE_ID], depth=2, limit=2)] == ["b", "d"]
    top = g.neighbourhood(scope, [USER_NODE_ID], limit=1)[0]
    assert (top.weight, top.subject.id, top.subject.label) == (3, USER_NODE_ID, "Identities")


def test_facts_about_initial_and_current_by_valid_at(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    t1, t2 = T0, T0 + timedelta(days=30)
    # Written out of order: the later fact arrives first. Nothing is superseded.
    g.upsert_facts(scope, [obs(USER_NODE_ID, "RELATES_TO", "lisbon", valid_at=t2, nuance="lives in",
                               object_label="Concepts", evidence="c2:h")], T0 + timedelta(days=31))
    g.upsert_facts(scope, [obs(USER_NODE_ID, "RELATES_TO", "berlin", valid_at=t1, nuance="lives in",
                               object_label="Concepts", evidence="c1:h")], T0 + timedelta(days=32))
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go", valid_at=t1 + timedelta(days=1))], T0)
    lives = g.facts_about(scope, USER_NODE_ID, "RELATES_TO")
    assert [f.object.id for f in lives] == ["berlin", "lisbon"]  # first = initial, last = current
    assert lives[0].valid_at == t1 and lives[-1].valid_at == t2
    assert [f.object.id for f in g.facts_about(scope, USER_NODE_ID)] == ["berlin", "go", "lisbon"]
    assert g.facts_about(scope, "go") == []  # only edges *from* the subject
    assert g.facts_about(scope, USER_NODE_ID, "WORKS_ON") == []


def test_match_nodes_exact_id_then_name_tokens(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    g.upsert_facts(scope, [
        obs(USER_NODE_ID, "WORKS_ON", "nexus_protocol", object_label="Projects", object_name="Nexus Protocol"),
        obs(USER_NODE_ID, "USES", "go", object_name="Go"),
        obs(USER_NODE_ID, "USES", "golang_tools", object_name="Go tools"),
    ], T0)
    assert g.match_nodes(scope, ["Nexus Protocol"]) == ["nexus_protocol"]
    assert g.match_nodes(scope, ["go"]) == ["go", "golang_tools"]  # exact first, then the name token
    assert g.match_nodes(scope, ["nexus"]) == ["nexus_protocol"]
    assert g.match_nodes(scope, ["python"]) == []
    assert g.match_nodes(harness.scope(tenant=scope.tenant_id), ["go"]) == []


# -- scope walls ---------------------------------------------------------------------------------------------
def test_tenant_wall(harness: Harness) -> None:
    g = harness.graph
    a = harness.scope(user="same-user")
    b = harness.scope(user="same-user")
    g.upsert_facts(a, [obs(USER_NODE_ID, "USES", "go"), obs("go", "RELATES_TO", "docker", subject_label="Tools")], T0)
    g.upsert_facts(b, [obs(USER_NODE_ID, "USES", "go", confidence=0.7), obs("go", "RELATES_TO", "rust",
                                                                           subject_label="Tools")], T0)
    assert {n.key for n in g.nodes(a)}.isdisjoint({n.key for n in g.nodes(b)})  # "go" twice: two nodes
    assert node_key(a, "go") in {n.key for n in g.nodes(a)}
    for facts in (g.neighbourhood(a, [USER_NODE_ID, "go"], depth=2), g.edges(a), g.facts_about(a, "go")):
        for fact in facts:
            assert fact.subject.key.startswith(f"{a.tenant_id}:") and fact.object.key.startswith(f"{a.tenant_id}:")
    assert "rust" not in {f.object.id for f in g.neighbourhood(a, [USER_NODE_ID, "go"], depth=2)}
    edges_a = g.tenant_edges(a.tenant_id)
    assert len(edges_a) == 2
    assert all(k.startswith(f"{a.tenant_id}:") for frm, to, _ in edges_a for k in (frm, to))
    assert all(isinstance(w, float) for _, _, w in edges_a)
    assert g.tenant_edges(_tenant()) == []
    assert a.tenant_id in g.tenants()


def test_other_user_in_same_tenant_is_invisible(harness: Harness) -> None:
    g = harness.graph
    alice = harness.scope()
    bob = harness.scope(tenant=alice.tenant_id)
    g.upsert_facts(alice, [obs(USER_NODE_ID, "USES", "go")], T0)
    g.upsert_facts(bob, [obs(USER_NODE_ID, "USES", "go"), obs(USER_NODE_ID, "USES", "perl", evidence="c9:h")], T0)
    assert _pairs(g.neighbourhood(alice, [USER_NODE_ID, "perl"], depth=2)) == [("user", "USES", "go")]
    assert g.facts_about(alice, USER_NODE_ID)[0].edge_id != g.facts_about(bob, USER_NODE_ID)[0].edge_id
    assert g.count(alice) == (2, 1) and g.count(bob) == (3, 2)
    assert g.match_nodes(alice, ["perl"]) == []
    assert len(g.tenant_edges(alice.tenant_id)) == 3  # the tenant view (analytics) sees both users


def test_awkward_ids_and_names_round_trip_verbatim(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    name = 'Robert"); RETURN 1 // \' FOR x IN Tools REMOVE x IN Tools'
    nuance = "@tenant_id ` \" ' RETURN 1 /* -- ; DROP TABLE edges"
    g.upsert_facts(scope, [
        obs(USER_NODE_ID, "USES", "x_return_1", object_name=name, nuance=nuance, evidence="c'1\":h @x"),
        obs("o'brien", "RELATES_TO", "for", subject_label="Identities", object_label="Concepts",
            subject_name="O'Brien", object_name="FOR"),
    ], T0)
    nodes = {n.id: n for n in g.nodes(scope)}
    assert nodes["x_return_1"].name == name and nodes["o'brien"].name == "O'Brien" and "for" in nodes
    fact = g.facts_about(scope, USER_NODE_ID)[0]
    assert (fact.object.id, fact.object.name, fact.context_nuance) == ("x_return_1", name, nuance)
    assert _pairs(g.neighbourhood(scope, ["o'brien"], depth=1)) == [("o'brien", "RELATES_TO", "for")]
    assert g.match_nodes(scope, ["x_return_1"]) == ["x_return_1"]
    assert g.count(scope) == (4, 2)
    assert g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "x_return_1", evidence="c'1\":h @x")], T0) == 0


# -- analytics and lifecycle -----------------------------------------------------------------------------------
def test_write_communities_sets_and_clears(harness: Harness) -> None:
    g = harness.graph
    scope = harness.scope()
    other = harness.scope()  # another tenant: never touched
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go"), obs(USER_NODE_ID, "USES", "rust")], T0)
    g.upsert_facts(other, [obs(USER_NODE_ID, "USES", "go")], T0)
    keys = {n.id: n.key for n in g.nodes(scope)}
    g.write_communities(other.tenant_id, {node_key(other, "go"): 7}, {}, [{"community_id": 7, "size": 1,
                                                                           "top_members": ["go"]}])
    g.write_communities(
        scope.tenant_id, {keys["user"]: 0, keys["go"]: 0, keys["rust"]: 1}, {keys["user"]: 1},
        [{"community_id": 0, "size": 2, "top_members": ["user", "go"]},
         {"community_id": 1, "size": 1, "top_members": ["rust"]}],
    )
    got = {n.id: (n.community_id, n.bridge_score) for n in g.nodes(scope)}
    assert got == {"user": (0, 1), "go": (0, 0), "rust": (1, 0)}
    assert [c["community_id"] for c in g.communities(scope.tenant_id)] == [0, 1]
    assert g.communities(scope.tenant_id)[0]["top_members"] == ["user", "go"]
    # A later run without rust: its stale community and flags are cleared, old documents replaced.
    g.write_communities(scope.tenant_id, {keys["user"]: 5, keys["go"]: 5}, {},
                        [{"community_id": 5, "size": 2, "top_members": ["user", "go"]}])
    got = {n.id: (n.community_id, n.bridge_score) for n in g.nodes(scope)}
    assert got == {"user": (5, 0), "go": (5, 0), "rust": (None, None)}
    assert [c["community_id"] for c in g.communities(scope.tenant_id)] == [5]
    assert [(n.community_id, n.bridge_score) for n in g.nodes(other) if n.id == "go"] == [(7, 0)]
    assert [c["community_id"] for c in g.communities(other.tenant_id)] == [7]


def test_delete_user_removes_only_that_user(harness: Harness) -> None:
    g = harness.graph
    alice = harness.scope()
    bob = harness.scope(tenant=alice.tenant_id)
    g.upsert_facts(alice, [obs(USER_NODE_ID, "USES", "go"), obs("go", "RELATES_TO", "docker", subject_label="Tools")], T0)
    g.upsert_facts(bob, [obs(USER_NODE_ID, "USES", "go")], T0)
    assert g.count(alice) == (3, 2)
    assert g.delete_user(alice) == 5
    assert g.count(alice) == (0, 0)
    assert g.nodes(alice) == [] and g.edges(alice) == [] and g.neighbourhood(alice, [USER_NODE_ID]) == []
    assert all(not k.startswith(f"{alice.tenant_id}:{alice.user_id}:")
               for frm, to, _ in g.tenant_edges(alice.tenant_id) for k in (frm, to))
    assert g.count(bob) == (2, 1)
    assert g.delete_user(alice) == 0
    # The user can start again from nothing: old evidence does not block new knowledge.
    assert g.upsert_facts(alice, [obs(USER_NODE_ID, "USES", "go")], T0) == 1
    assert g.edges(alice)[0].weight == 1


def test_count_and_protocol(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    assert isinstance(g, GraphStore)
    g.ping()
    assert g.count(scope) == (0, 0)
    assert g.upsert_facts(scope, [], T0) == 0
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go"), obs(USER_NODE_ID, "WORKS_ON", "go")], T0)
    assert g.count(scope) == (2, 2)


# -- the Arango adapter without a server -------------------------------------------------------------------------
_FORMAT_FIELD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.\[\]]*\}|%[sdr(]|\{![rs]\}")
_BIND = re.compile(r"@(@?[A-Za-z_][A-Za-z0-9_]*)")


def test_every_aql_text_uses_only_bind_variables() -> None:
    queries = aql_queries()
    assert queries and queries == AQL
    for name, text in queries.items():
        assert not _FORMAT_FIELD.search(text), (name, _FORMAT_FIELD.search(text).group())
        assert '"@' not in text and "'" not in text, name  # no quoted literal that could hide a value
        assert "tenant_id ==" not in text or "@tenant_id" in text, name
        if name == "tenants":  # the one unscoped operator query: it lists tenants and filters nothing
            assert "FILTER" not in text
            continue
        # Only constant string literals: label names, nothing scope-like.
        for literal in re.findall(r'"([^"]*)"', text):
            assert literal in {"Identities", "Tools", "Projects", "Concepts"}, (name, literal)
        assert _BIND.search(text), name


# Token scan of AQL text, for the stand-in's checks. NOT a parser: it knows brackets, string literals,
# comments and a handful of keywords, nothing of AQL's grammar or semantics.
_AQL_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|´[^´]*´')
_AQL_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_AQL_TOKEN = re.compile(r"@@?[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\.\.|==|!=|<=|>=|&&|\|\||\S")
_OPEN, _CLOSE = "([{", ")]}"
# Keywords that end an expression: a ternary's else branch stops before them.
_STATEMENT_KEYWORDS = {"FOR", "RETURN", "FILTER", "SORT", "LIMIT", "LET", "COLLECT", "INSERT", "UPDATE", "REPLACE",
                       "REMOVE", "UPSERT", "WITH", "INTO", "OPTIONS", "PRUNE", "SEARCH", "WINDOW", "AGGREGATE"}
_MODIFY_KEYWORDS = {"INSERT", "UPDATE", "REPLACE", "REMOVE", "UPSERT"}


def aql_tokens(query: str) -> list[str]:
    return _AQL_TOKEN.findall(_AQL_COMMENT.sub(" ", _AQL_STRING.sub(' "" ', query)))


def aql_bind_names(query: str) -> set[str]:
    """Bind parameters a query references (`@x` → x, `@@c` → @c), outside string literals."""
    return {t[1:] for t in aql_tokens(query) if t.startswith("@")}


def aql_ternary_before_in(query: str) -> list[int]:
    """Token positions of each `?` whose else branch, at the ternary's own nesting depth, reaches an `IN`:
    `?:` binds looser than `IN` (grammar.y), so `a ? b : c IN coll` reads `c IN coll` as a membership test."""
    tokens, found = aql_tokens(query), []
    for i, tok in enumerate(tokens):
        if tok != "?":
            continue
        depth = 0
        for later in tokens[i + 1:]:
            if later in _OPEN:
                depth += 1
            elif later in _CLOSE:
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0:
                if later == "," or later.upper() in _STATEMENT_KEYWORDS:
                    break
                if later.upper() == "IN":
                    found.append(i)
                    break
    return found


def aql_chained_expansions(query: str) -> int:
    """How many expansions `[* …]` are directly followed by another `[*`: `x[* FILTER …][*].y` applies the
    second one to each element (nested arrays), it does not project the filtered elements."""
    tokens, stack, chained = aql_tokens(query), [], 0
    for i, tok in enumerate(tokens):
        if tok in _OPEN:
            stack.append(tok == "[" and tokens[i + 1:i + 2] == ["*"])
        elif tok in _CLOSE:
            was_expansion = stack.pop() if stack else False
            if was_expansion and tokens[i + 1:i + 3] == ["[", "*"]:
                chained += 1
    return chained


def aql_modified_collections(query: str, bind_vars: dict[str, Any]) -> list[str]:
    """The collection of every INSERT/UPDATE/REPLACE/REMOVE/UPSERT: the name after the first `IN`/`INTO`
    at the statement's depth (`@@c` resolved from the bind variables). One entry per modification."""
    tokens, depth, pending, modified = aql_tokens(query), 0, set(), []
    for i, tok in enumerate(tokens):
        attribute = i > 0 and tokens[i - 1] == "." or tokens[i + 1:i + 2] == [":"]
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            pending.discard(depth)
            depth -= 1
        elif attribute:
            continue
        elif tok.upper() in _MODIFY_KEYWORDS:
            pending.add(depth)
        elif tok.upper() in ("IN", "INTO") and depth in pending and i + 1 < len(tokens):
            name = tokens[i + 1]
            modified.append(bind_vars.get(name[1:], name) if name.startswith("@@") else name)
            pending.discard(depth)
    return modified


def aql_problems(query: str, bind_vars: dict[str, Any]) -> list[str]:
    """What the stand-in can check without parsing AQL (an empty list is no proof the query runs)."""
    problems = []
    referenced, given = aql_bind_names(query), set(bind_vars)
    if referenced - given:
        problems.append(f"bind parameters used but not declared: {sorted(referenced - given)}")  # 1551
    if given - referenced:
        problems.append(f"bind parameters declared but not used: {sorted(given - referenced)}")  # 1552
    modified = aql_modified_collections(query, bind_vars)
    twice = sorted({c for c in modified if modified.count(c) > 1})
    if twice:
        problems.append(f"collections modified more than once in one query: {twice}")  # 1579 / 1521
    if aql_ternary_before_in(query):
        problems.append("a ternary reaches IN without parentheses")  # 1501
    if aql_chained_expansions(query):
        problems.append("chained [*] expansion")
    return problems


def _keys_in(value: Any) -> Iterator[str]:
    """Every document key a bind value names: `_key`s, and the key part of `_from`/`_to`/document ids."""
    if isinstance(value, dict):
        for name, item in value.items():
            if name == "_key" and isinstance(item, str):
                yield item
            elif name in ("_from", "_to") and isinstance(item, str):
                yield item.split("/", 1)[1]
            else:
                yield from _keys_in(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str) and "/" in item:
                yield item.split("/", 1)[1]
            else:
                yield from _keys_in(item)


def _conflict(code: int) -> Exception:
    from arango.exceptions import AQLQueryExecuteError
    from arango.request import Request
    from arango.response import Response

    resp = Response("post", "http://stand-in/_api/cursor", {}, 409, "Conflict", "")
    resp.error_code, resp.error_message = code, "conflict (stand-in)"
    return AQLQueryExecuteError(resp, Request("post", "/_api/cursor"))


class _NonParsingAqlRecorder:
    """A stand-in for a python-arango database handle that does NOT parse or evaluate AQL: a query that
    passes here may still fail on a server. It answers emptily, records every (query, bind_vars) and every
    stream transaction (`begin_transaction`, the queries run in it, commit/abort), and raises AssertionError
    on what a token scan can honestly catch (`aql_problems`), on a document key over 254 bytes, on a write
    inside a transaction to a collection the transaction did not declare, and on a query run on a
    transaction already committed or aborted. `fail` maps a query name to an exception to raise."""

    def __init__(self, fail: dict[str, list[Exception]] | None = None, name: str = "athena_ltm_test",
                 answers: dict[str, list] | None = None) -> None:
        self.name = name
        self.answers = answers or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.events: list[tuple] = []  # ("begin", txn, write) / ("query", txn or None, name) / ("commit"|"abort", txn)
        self.fail = fail or {}
        self.aql = _RecorderAql(self, None)
        self._transactions = 0

    def begin_transaction(self, read: Any = None, write: Any = None, exclusive: Any = None, **_: Any) -> "_RecorderTxn":
        self._transactions += 1
        txn = _RecorderTxn(self, f"txn{self._transactions}", write, exclusive)
        self.events.append(("begin", txn.transaction_id, tuple(txn.writable)))
        return txn

    def version(self) -> str:
        return "stand-in"

    def run(self, txn: "_RecorderTxn | None", query: str, bind_vars: dict[str, Any]) -> Iterator[Any]:
        names = [n for n, text in AQL.items() if text == query]
        assert names, "a query outside AQL"
        name = names[0]
        assert not (problems := aql_problems(query, bind_vars)), (name, problems)
        for key in _keys_in(bind_vars):
            assert len(key.encode()) <= 254, (name, "document key over 254 bytes (1221)", len(key.encode()))
        if txn is not None:
            assert txn.state == "running", (name, f"query on a {txn.state} transaction")
            undeclared = set(aql_modified_collections(query, bind_vars)) - txn.writable
            assert not undeclared, (name, "write to collections the transaction did not declare", undeclared)
        self.calls.append((query, dict(bind_vars)))
        self.events.append(("query", txn and txn.transaction_id, name))
        if self.fail.get(name):
            raise self.fail[name].pop(0)
        if name in self.answers:
            return iter(self.answers[name])
        if name == "upsert_facts":
            return iter([1 for _ in bind_vars["edges"]])
        if name == "count":
            return iter([{"nodes": 0, "edges": 0}])
        return iter([])


class _RecorderAql:
    def __init__(self, db: _NonParsingAqlRecorder, txn: "_RecorderTxn | None") -> None:
        self._db, self._txn = db, txn

    def execute(self, query: str, bind_vars: dict[str, Any] | None = None, **_: Any) -> Iterator[Any]:
        return self._db.run(self._txn, query, dict(bind_vars or {}))


class _RecorderTxn:
    def __init__(self, db: _NonParsingAqlRecorder, txn_id: str, write: Any, exclusive: Any) -> None:
        def names(value: Any) -> set[str]:
            return {value} if isinstance(value, str) else set(value or [])

        self._db, self.transaction_id, self.state = db, txn_id, "running"
        self.writable = names(write) | names(exclusive)
        self.aql = _RecorderAql(db, self)

    def commit_transaction(self) -> bool:
        assert self.state == "running"
        self.state = "committed"
        self._db.events.append(("commit", self.transaction_id))
        return True

    def abort_transaction(self) -> bool:
        assert self.state == "running"
        self.state = "aborted"
        self._db.events.append(("abort", self.transaction_id))
        return True


def test_arango_adapter_sends_values_only_as_bind_variables() -> None:
    db = _NonParsingAqlRecorder()
    graph = ArangoGraph.on_database(db)
    scope = UserScope(tenant_id="tenant-SECRET-1", user_id="user-SECRET-2")
    evil = "x_return_1"
    facts = [
        obs(USER_NODE_ID, "USES", evil, object_name='" RETURN 1 //', nuance="@@collection RETURN 1",
            evidence="ev-SECRET-3"),
        obs(USER_NODE_ID, "USES", evil, evidence="ev-SECRET-4"),
        obs("o'brien", "RELATES_TO", "docs", subject_label="Identities", object_label="Concepts"),
    ]
    assert graph.upsert_facts(scope, facts, T0) == 2
    graph.neighbourhood(scope, [USER_NODE_ID, evil], depth=2, min_confidence=0.5, limit=7)
    graph.match_nodes(scope, ["Robert RETURN 1", evil])
    graph.facts_about(scope, USER_NODE_ID, "RELATES_TO")
    graph.nodes(scope)
    graph.edges(scope)
    graph.tenant_edges(scope.tenant_id)
    graph.tenants()
    graph.write_communities(scope.tenant_id, {node_key(scope, evil): 1}, {node_key(scope, evil): 2},
                            [{"community_id": 1, "size": 1, "top_members": [evil]}])
    graph.communities(scope.tenant_id)
    assert graph.count(scope) == (0, 0)
    graph.delete_user(scope)
    graph.ping()
    texts = set(AQL.values())
    used = {q for q, _ in db.calls}
    assert used == texts  # every query of the adapter was exercised here
    for query, bind_vars in db.calls:
        assert query in texts
        for secret in ("SECRET", evil, "o'brien", "RETURN 1 //", "Robert"):
            assert secret not in query
        referenced = set(_BIND.findall(query))
        assert referenced == set(bind_vars), (referenced ^ set(bind_vars))  # Arango rejects either mismatch
    upsert = next(b for q, b in db.calls if q == AQL["upsert_facts"])
    go_edge = next(e for e in upsert["edges"] if e["_to"].endswith(f":{evil}"))
    assert [o["evidence_id"] for o in go_edge["obs"]] == ["ev-SECRET-3", "ev-SECRET-4"]  # grouped per edge
    assert go_edge["_from"] == f"Identities/{node_key(scope, USER_NODE_ID)}"
    assert go_edge["_to"] == f"Tools/{node_key(scope, evil)}"
    assert {n["_key"] for n in upsert["nodes_concepts"]} == {node_key(scope, "docs")}


# The edge UPSERT as it was before issue 18 (expanded exactly as the old `_build_upsert` expanded it:
# `FRESH` → `t.obs[* FILTER …]`, so `FRESH[*].confidence` became a chained expansion).
_OLD_FRESH = "t.obs[* FILTER CURRENT.evidence_id NOT IN OLD.evidence]"
_OLD_EDGE_UPSERT = """
FOR t IN @edges
  UPSERT { _from: t._from, _to: t._to, relation: t.relation }
  INSERT {
    _key: t._key, _from: t._from, _to: t._to, relation: t.relation,
    tenant_id: @tenant_id, user_id: @user_id,
    weight: LENGTH(t.obs),
    confidence: SUM(t.obs[*].confidence) / LENGTH(t.obs),
    heat_score: LAST(t.obs).heat_score,
    context_nuance: LAST(t.obs).context_nuance,
    valid_at: MAX(t.obs[*].valid_at),
    first_valid_at: MIN(t.obs[*].valid_at),
    first_seen: @now, last_seen: @now,
    evidence: t.obs[*].evidence_id
  }
  UPDATE LENGTH(FRESH) == 0 ? {} : {
    weight: OLD.weight + LENGTH(FRESH),
    confidence: (OLD.confidence * OLD.weight + SUM(FRESH[*].confidence)) / (OLD.weight + LENGTH(FRESH)),
    heat_score: LAST(FRESH).heat_score,
    context_nuance: LAST(FRESH).context_nuance,
    valid_at: MAX([OLD.valid_at, MAX(FRESH[*].valid_at)]),
    first_valid_at: MIN([OLD.first_valid_at, MIN(FRESH[*].valid_at)]),
    last_seen: @now,
    evidence: APPEND(OLD.evidence, FRESH[*].evidence_id)
  }
  IN MemoryEdges
  RETURN OLD == null ? LENGTH(t.obs) : LENGTH(FRESH)
""".replace("FRESH", _OLD_FRESH)
_EDGE_BINDS = {"edges": [], "tenant_id": "t", "user_id": "u", "now": 0.0}


def test_the_stand_in_checks_catch_the_original_queries() -> None:
    old = aql_problems(_OLD_EDGE_UPSERT, _EDGE_BINDS)
    assert "a ternary reaches IN without parentheses" in old  # issue 18 item 1 (error 1501 on a server)
    assert "chained [*] expansion" in old  # item 2
    assert aql_chained_expansions(_OLD_EDGE_UPSERT) == 4  # confidence, valid_at twice, evidence_id
    # The fixed forms pass: the ternary in parentheses, INTO, or `RETURN CURRENT.x` / `(FRESH)[*].x`.
    fixed = _OLD_EDGE_UPSERT.replace("UPDATE LENGTH", "UPDATE (LENGTH").replace("}\n  IN MemoryEdges",
                                                                                "})\n  IN MemoryEdges")
    assert aql_problems(fixed, _EDGE_BINDS) == ["chained [*] expansion"]
    for attribute in ("confidence", "valid_at", "evidence_id"):
        fixed = fixed.replace(f"{_OLD_FRESH}[*].{attribute}", f"({_OLD_FRESH})[*].{attribute}")
    assert aql_problems(fixed, _EDGE_BINDS) == []
    assert aql_problems(_OLD_EDGE_UPSERT.replace("}\n  IN MemoryEdges", "}\n  INTO MemoryEdges"), _EDGE_BINDS) == [
        "chained [*] expansion"]
    assert aql_ternary_before_in("FOR x IN @xs UPDATE x WITH (x.a ? {} : { b: 1 }) IN Tools") == []
    assert aql_ternary_before_in("FOR x IN @xs UPDATE x WITH x.a ? {} : { b: 1 } INTO Tools") == []
    assert aql_ternary_before_in("RETURN @a ? 1 : 2 IN @b") == [2]
    assert aql_ternary_before_in("RETURN [@a ? 1 : 2, 3 IN @b]") == []  # the comma ends the ternary
    assert aql_chained_expansions("RETURN (@x[* FILTER CURRENT.a])[*].b") == 0
    # Bind parameters: declared and used, both ways, `@x` and `@@collection`; never inside a string.
    text = 'FOR x IN @@collection FILTER x.a == @a AND x.n == "@fake" RETURN x'
    assert aql_bind_names(text) == {"@collection", "a"}
    assert aql_problems(text, {"@collection": "Tools", "a": 1}) == []
    assert aql_problems(text, {"a": 1}) == ["bind parameters used but not declared: ['@collection']"]
    assert aql_problems(text, {"@collection": "Tools", "a": 1, "b": 2}) == [
        "bind parameters declared but not used: ['b']"]
    # Each collection modified at most once per query (an UPSERT's INSERT/UPDATE is one modification).
    twice = ("LET a = (FOR x IN @xs INSERT x INTO Tools RETURN 1)\n"
             "LET b = (FOR y IN @ys UPDATE y WITH { k: 1 } IN @@c RETURN 1) RETURN 1")
    assert aql_modified_collections(twice, {"@c": "Tools"}) == ["Tools", "Tools"]
    assert aql_problems(twice, {"xs": [], "ys": [], "@c": "Tools"}) == [
        "collections modified more than once in one query: ['Tools']"]
    assert aql_modified_collections(AQL["upsert_facts"], {}) == ["Identities", "Tools", "Projects", "Concepts",
                                                                 "MemoryEdges"]
    assert aql_modified_collections(AQL["set_communities"], {}) == ["Identities", "Tools", "Projects", "Concepts"]
    # Every query the adapter runs passes, given exactly the bind parameters it references.
    for name, text in AQL.items():
        binds = {b: "Tools" if b.startswith("@") else None for b in aql_bind_names(text)}
        assert aql_problems(text, binds) == [], name


def test_the_stand_in_refuses_keys_over_the_arango_limit() -> None:
    db = _NonParsingAqlRecorder()
    too_long = "k" * 255
    with pytest.raises(AssertionError, match="1221"):
        db.aql.execute(AQL["resolve_labels"], bind_vars={"candidates": [f"Tools/{too_long}"]})
    tenant, user, long_a, long_b = _long_ids("standin")
    scope = UserScope(tenant_id=tenant, user_id=user)
    graph = ArangoGraph.on_database(db)
    assert graph.upsert_facts(scope, [obs(USER_NODE_ID, "USES", long_a), obs(long_a, "USES", long_b)], T0) == 2
    upsert = next(b for q, b in db.calls if q == AQL["upsert_facts"])
    keys = list(_keys_in(upsert))
    assert keys and max(len(k.encode()) for k in keys) <= MAX_KEY_BYTES


def test_arango_writes_of_several_queries_run_in_one_stream_transaction() -> None:
    db = _NonParsingAqlRecorder()
    graph = ArangoGraph.on_database(db)
    scope = UserScope(tenant_id="acme", user_id="alice")
    graph.delete_user(scope)
    assert db.events[0][:2] == ("begin", "txn1")
    assert set(db.events[0][2]) == {"MemoryEdges", "Identities", "Tools", "Projects", "Concepts", "Communities"}
    assert db.events[1:] == [("query", "txn1", "delete_user_edges")] + [("query", "txn1", "delete_user_nodes")] * 4 + [
        ("query", "txn1", "scrub_community_members"), ("commit", "txn1")]
    scrub = db.calls[-1][1]
    assert scrub == {"tenant_id": "acme", "prefix": "acme:alice:"}
    db.events.clear()
    graph.write_communities("acme", {node_key(scope, "go"): 1}, {}, [{"community_id": 1, "size": 1,
                                                                     "top_members": ["go"]}])
    assert db.events == [("begin", "txn2", db.events[0][2]), ("query", "txn2", "set_communities"),
                         ("query", "txn2", "clear_community_docs"), ("query", "txn2", "insert_community_docs"),
                         ("commit", "txn2")]
    assert set(db.events[0][2]) == {"Identities", "Tools", "Projects", "Concepts", "Communities"}
    # A failure half-way aborts the transaction: nothing of it is committed (no tenant left without communities).
    failing = _NonParsingAqlRecorder(fail={"insert_community_docs": [RuntimeError("connection lost")]})
    with pytest.raises(RuntimeError, match="connection lost"):
        ArangoGraph.on_database(failing).write_communities("acme", {}, {}, [{"community_id": 1, "size": 0}])
    assert [e[0] for e in failing.events] == ["begin", "query", "query", "query", "abort"]
    failing = _NonParsingAqlRecorder(fail={"delete_user_nodes": [_conflict(1200)]})
    with pytest.raises(GraphWriteConflict):
        ArangoGraph.on_database(failing).delete_user(scope)
    assert failing.events[-1] == ("abort", "txn1") and ("commit", "txn1") not in failing.events


def test_arango_write_conflicts_are_raised_as_graph_write_conflict() -> None:
    from arango.exceptions import AQLQueryExecuteError

    scope = UserScope(tenant_id="acme", user_id="alice")
    for code in (1200, 1210):  # write-write conflict; a racing insert of the same edge `_key`
        db = _NonParsingAqlRecorder(fail={"upsert_facts": [_conflict(code)]})
        with pytest.raises(GraphWriteConflict) as caught:
            ArangoGraph.on_database(db).upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go")], T0)
        assert caught.value.__cause__.error_code == code
    db = _NonParsingAqlRecorder(fail={"upsert_facts": [_conflict(1221)]})  # anything else is not a conflict
    with pytest.raises(AQLQueryExecuteError):
        ArangoGraph.on_database(db).upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go")], T0)


def test_promoter_retries_write_conflicts_then_gives_up() -> None:
    from athena_core.ltm.promotion import WRITE_ATTEMPTS, PreparedPromotion, Promoter

    scope = UserScope(tenant_id="acme", user_id="alice")
    chain = mock.Mock(chain_id="chn_1")
    prepared = PreparedPromotion(chain, scope, "h1", [obs(USER_NODE_ID, "USES", "go")], 0)
    documents, sleeps = mock.Mock(), []
    db = _NonParsingAqlRecorder(fail={"upsert_facts": [_conflict(1210), _conflict(1200)]})
    promoter = Promoter(documents, ArangoGraph.on_database(db), mock.Mock(), sleep=sleeps.append)
    result = promoter.commit(prepared, T0)
    assert result.new_observations == 1 and len(sleeps) == 2 and sleeps[0] < sleeps[1] < 1
    assert [e[2] for e in db.events if e[0] == "query"].count("upsert_facts") == 3
    documents.mark_promoted.assert_called_once_with(scope, "chn_1", "h1")
    # Conflicts on every attempt: raised, and the chain is not marked promoted (a later run retries it).
    documents = mock.Mock()
    db = _NonParsingAqlRecorder(fail={"upsert_facts": [_conflict(1200) for _ in range(WRITE_ATTEMPTS)]})
    promoter = Promoter(documents, ArangoGraph.on_database(db), mock.Mock(), sleep=lambda s: None)
    with pytest.raises(GraphWriteConflict):
        promoter.commit(prepared, T0)
    documents.mark_promoted.assert_not_called()


def test_arango_reads_sort_binary_and_drop_edges_whose_node_is_missing() -> None:
    scope = UserScope(tenant_id="acme", user_id="alice")

    def node(node_id: str) -> dict:
        return {"_key": node_key(scope, node_id), "id": node_id, "label": "Tools", "name": node_id,
                "community_id": None, "bridge_score": None}

    edge = {"_key": "ab", "_from": "Identities/x", "_to": "Tools/y", "relation": "USES", "weight": 1,
            "confidence": 0.9, "heat_score": 0.5, "context_nuance": "", "valid_at": 0.0, "first_valid_at": 0.0,
            "first_seen": 0.0, "last_seen": 0.0}
    db = _NonParsingAqlRecorder(answers={
        "nodes": [node("alpha"), node("Zeta"), node("Beta")],
        "tenants": ["t-b", "T-a", "t-a"],
        "edges": [{"edge": edge, "subject": node("user"), "object": None},
                  {"edge": edge, "subject": node("user"), "object": node("go")}],
    })
    graph = ArangoGraph.on_database(db)
    assert [n.id for n in graph.nodes(scope)] == ["Beta", "Zeta", "alpha"]  # binary, as SQLite (ICU: alpha first)
    assert graph.tenants() == ["T-a", "t-a", "t-b"]
    assert [f.object.id for f in graph.edges(scope)] == ["go"]
    assert "SORT x._key" not in AQL["nodes"] and "SORT tenant_id" not in AQL["tenants"]
    for name in ("neighbourhood", "facts_about", "edges"):
        assert "FILTER s != null AND o != null" in AQL[name], name
        assert "RETURN DISTINCT e\n" not in AQL[name] and "evidence" not in AQL[name], name  # projections only
    assert "UPSERT { _key: t._key }" in AQL["upsert_facts"]  # the primary index, not the edge index


def test_node_ids_sort_binary_on_every_engine(harness: Harness) -> None:
    g, scope = harness.graph, harness.scope()
    ids = ["alpha", "Zeta", "Beta", "_x", "b9"]
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", i, evidence=f"c{n}:h") for n, i in enumerate(ids)], T0)
    assert [n.key for n in g.nodes(scope)] == sorted(node_key(scope, i) for i in [*ids, USER_NODE_ID])
    tenants = g.tenants()
    assert tenants == sorted(tenants)


def test_sqlite_drops_an_edge_whose_node_is_missing(tmp_path: Path) -> None:
    h = _sqlite_harness(tmp_path)
    g, scope = h.graph, h.scope()
    g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go"), obs(USER_NODE_ID, "USES", "rust")], T0)
    with sqlite3.connect(tmp_path / "graph.db") as conn:
        conn.execute("DELETE FROM nodes WHERE key = ?", (node_key(scope, "go"),))
    assert [f.object.id for f in g.edges(scope)] == ["rust"]
    assert [f.object.id for f in g.neighbourhood(scope, [USER_NODE_ID], depth=1)] == ["rust"]
    g.close()


def test_sqlite_still_locked_after_the_busy_timeout_is_a_write_conflict(tmp_path: Path) -> None:
    h = _sqlite_harness(tmp_path)
    g, scope = h.graph, h.scope()
    with mock.patch.object(SqliteGraph, "_upsert", side_effect=sqlite3.OperationalError("database is locked")):
        with pytest.raises(GraphWriteConflict):
            g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go")], T0)
    with mock.patch.object(SqliteGraph, "_upsert", side_effect=sqlite3.OperationalError("no such table: edges")):
        with pytest.raises(sqlite3.OperationalError):
            g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "go")], T0)
    g.close()
