"""One contract suite for every GraphStore adapter (SPEC S1, S6, S7.4).

Runs on SQLite (a temporary file per test) and on ArangoDB when ATHENA_TEST_ARANGO_URL is set
(e.g. http://root:pw@127.0.0.1:8529; user and password are taken from the URL). Every test works in fresh
random tenant ids, and on Arango removes what it wrote.

Without a server, the Arango adapter is still checked offline: every AQL text it can run carries values
only as @bind variables, and a recording stand-in for the database shows that no scope value, id or name
ever reaches the query text and that each query gets exactly the bind variables it references.
"""
from __future__ import annotations

import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from athena_core.stores.graph.arango_graph import AQL, ArangoGraph, aql_queries
from athena_core.stores.graph.port import GraphStore, node_key
from athena_core.models.ontology import USER_NODE_ID, FactObservation
from athena_core.stores.graph.sqlite_graph import SqliteGraph
from athena_core.models.scope import UserScope

ARANGO_URL = os.environ.get("ATHENA_TEST_ARANGO_URL")
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
    graph = ArangoGraph(ARANGO_URL, username=parts.username or "root", password=parts.password or "")
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
    with pytest.raises(ValueError):
        g.upsert_facts(scope, [obs(USER_NODE_ID, "USES", "other:user:go")], T0)
    assert g.count(scope) == (0, 0)


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


class _RecordingDb:
    """Stands in for a python-arango database: records each (query, bind_vars) and answers emptily."""

    name = "athena_ltm"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.aql = self

    def execute(self, query: str, bind_vars: dict[str, Any] | None = None, **_: Any) -> Iterator[Any]:
        self.calls.append((query, dict(bind_vars or {})))
        if query == AQL["upsert_facts"]:
            return iter([1 for _ in bind_vars["edges"]])
        if query == AQL["count"]:
            return iter([{"nodes": 0, "edges": 0}])
        return iter([])

    def version(self) -> str:
        return "stand-in"


def test_arango_adapter_sends_values_only_as_bind_variables() -> None:
    db = _RecordingDb()
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
