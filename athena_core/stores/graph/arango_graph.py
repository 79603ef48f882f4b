"""ArangoDB adapter of the knowledge graph (SPEC S6, seed 000): `GraphStore` on the `athena_ltm` database.

Layout: one vertex collection per ontology label (Identities, Tools, Projects, Concepts), `Communities`
for analytics documents, the edge collection `MemoryEdges`, and the named graph `athena_knowledge`.
Node `_key` is the namespaced key `tenant:user:id` (':' is legal in Arango keys), edge `_key` is the same
stable hash of (from, to, relation) the SQLite adapter uses, so edge ids agree across engines and a racing
duplicate insert of one edge fails on the primary index instead of creating a twin.

Evidence idempotency: every edge carries `evidence`, the array of evidence ids it has counted. The check
("was this observation counted?") and the strengthening then happen inside the one UPSERT that touches
the edge document, so they are atomic per document without a second collection to keep consistent (a
separate EdgeEvidence collection would need an insert-if-absent and a conditional edge update as two
modifications whose results depend on each other). The array grows by one entry per independent
observation (one per distinct chain content), which is what `weight` counts anyway.

Every query text is a module constant in `AQL` and is only ever run through `_query(name, ...)`: all values
(scope, ids, names, timestamps, limits, even collection names via `@@collection`) go in as bind variables,
never by string formatting. `aql_queries()` exposes the texts so a test can check that.

Only `athena_ltm` is created or written; `_system` is used solely to create that database when missing.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from athena_core.stores.graph.port import node_key
from athena_core.models.ontology import NODE_LABELS, Fact, FactObservation, GraphNode
from athena_core.stores.graph.sqlite_graph import check_node_id, edge_key, match_terms, name_tokens
from athena_core.models.scope import UserScope

DATABASE = "athena_ltm"
GRAPH = "athena_knowledge"
EDGES = "MemoryEdges"
COMMUNITIES = "Communities"

# Observations of one edge in this call that the edge has not counted yet.
_FRESH = "t.obs[* FILTER CURRENT.evidence_id NOT IN OLD.evidence]"

_NODE_UPSERT = """
  FOR n IN @{var}
    UPSERT {{ _key: n._key }}
    INSERT {{ _key: n._key, tenant_id: @tenant_id, user_id: @user_id, id: n.id, label: "{label}",
             name: n.name, created_at: @now, last_seen: @now, community_id: null, bridge_score: null }}
    UPDATE {{ last_seen: @now }}
    IN {label}
    RETURN 1
"""  # expanded once at import time with constant labels only (see _build_upsert), never with values

_EDGE_UPSERT = """
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
"""


def _build_upsert() -> str:
    """The one write query of `upsert_facts`: a node subquery per label collection (each collection is
    modified once, as AQL requires), then the edge UPSERT loop. Built from constants only."""
    parts = [
        f"LET written_{label.lower()} = (" + _NODE_UPSERT.format(var=f"nodes_{label.lower()}", label=label) + ")"
        for label in NODE_LABELS
    ]
    return "\n".join(parts) + _EDGE_UPSERT.replace("FRESH", _FRESH)


_SCOPED_NODES = ",\n".join(
    f"(FOR y IN {label} FILTER y.tenant_id == @tenant_id AND y.user_id == @user_id RETURN y)"
    for label in NODE_LABELS
)

_FACT_RETURN = "RETURN { edge: f, subject: DOCUMENT(f._from), object: DOCUMENT(f._to) }"

AQL: dict[str, str] = {
    # Which label collection already holds each node key (a node keeps its first label, as in SQLite).
    "resolve_labels": """
FOR d IN DOCUMENT(@candidates)
  RETURN { key: d._key, label: PARSE_IDENTIFIER(d._id).collection }
""",
    "upsert_facts": _build_upsert(),
    "neighbourhood": """
WITH Identities, Tools, Projects, Concepts
FOR f IN (
  FOR s IN DOCUMENT(@starts)
    FILTER s.tenant_id == @tenant_id AND s.user_id == @user_id
    FOR v, e, p IN 1..@depth ANY s MemoryEdges
      PRUNE e != null AND (e.confidence < @min_confidence OR e.tenant_id != @tenant_id OR e.user_id != @user_id)
      FILTER p.edges[*].confidence ALL >= @min_confidence
      FILTER p.edges[*].tenant_id ALL == @tenant_id AND p.edges[*].user_id ALL == @user_id
      RETURN DISTINCT e
)
  SORT f.weight DESC, f.heat_score DESC, f._key
  LIMIT @limit
  """ + _FACT_RETURN,
    "match_candidates": """
FOR x IN UNION(""" + _SCOPED_NODES + """)
  FILTER x.id IN @ids OR LENGTH(@tokens[* FILTER CONTAINS(LOWER(x.name), CURRENT)]) > 0
  RETURN { id: x.id, name: x.name }
""",
    "facts_about": """
FOR f IN MemoryEdges
  FILTER f._from IN @from_ids AND f.tenant_id == @tenant_id AND f.user_id == @user_id
  FILTER @relation == null OR f.relation == @relation
  SORT f.valid_at, f.first_seen, f._key
  """ + _FACT_RETURN,
    "nodes": """
FOR x IN UNION(""" + _SCOPED_NODES + """)
  SORT x._key
  RETURN x
""",
    "edges": """
FOR f IN MemoryEdges
  FILTER f.tenant_id == @tenant_id AND f.user_id == @user_id
  SORT f.valid_at, f._key
  """ + _FACT_RETURN,
    "tenants": """
FOR f IN MemoryEdges
  COLLECT tenant_id = f.tenant_id
  SORT tenant_id
  RETURN tenant_id
""",
    "tenant_edges": """
FOR f IN MemoryEdges
  FILTER f.tenant_id == @tenant_id
  SORT f._key
  RETURN [PARSE_IDENTIFIER(f._from).key, PARSE_IDENTIFIER(f._to).key, f.weight]
""",
    # Every node of the tenant is rewritten, so nodes outside `membership` lose stale values.
    "set_communities": """
FOR n IN @@collection
  FILTER n.tenant_id == @tenant_id
  LET c = @membership[n._key]
  UPDATE n WITH { community_id: c, bridge_score: c == null ? null : (@bridge_scores[n._key] || 0) }
  IN @@collection OPTIONS { keepNull: true }
""",
    "clear_community_docs": """
FOR c IN Communities
  FILTER c.tenant_id == @tenant_id
  REMOVE c IN Communities
""",
    "insert_community_docs": """
FOR d IN @docs
  INSERT d INTO Communities
""",
    "communities": """
FOR c IN Communities
  FILTER c.tenant_id == @tenant_id
  SORT c.community_id
  RETURN c.doc
""",
    "delete_user_edges": """
FOR f IN MemoryEdges
  FILTER f.tenant_id == @tenant_id AND f.user_id == @user_id
  REMOVE f IN MemoryEdges
  COLLECT WITH COUNT INTO removed
  RETURN removed
""",
    "delete_user_nodes": """
FOR x IN @@collection
  FILTER x.tenant_id == @tenant_id AND x.user_id == @user_id
  REMOVE x IN @@collection
  COLLECT WITH COUNT INTO removed
  RETURN removed
""",
    "count": """
LET node_counts = [""" + ",\n".join(
        f"LENGTH((FOR y IN {label} FILTER y.tenant_id == @tenant_id AND y.user_id == @user_id RETURN 1))"
        for label in NODE_LABELS
    ) + """]
LET edge_count = LENGTH((FOR f IN MemoryEdges FILTER f.tenant_id == @tenant_id AND f.user_id == @user_id RETURN 1))
RETURN { nodes: SUM(node_counts), edges: edge_count }
""",
}


def aql_queries() -> dict[str, str]:
    """Every AQL text the adapter runs (for tests: they must carry values only as @bind variables)."""
    return dict(AQL)


def _epoch(value: datetime) -> float:
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def _dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=timezone.utc)


def _node(doc: dict) -> GraphNode:
    return GraphNode(
        key=doc["_key"], id=doc["id"], label=doc["label"], name=doc["name"],
        community_id=doc.get("community_id"), bridge_score=doc.get("bridge_score"),
    )


def _fact(row: dict) -> Fact:
    edge = row["edge"]
    return Fact(
        edge_id=edge["_key"], subject=_node(row["subject"]), relation=edge["relation"], object=_node(row["object"]),
        weight=edge["weight"], confidence=edge["confidence"], heat_score=edge["heat_score"],
        context_nuance=edge["context_nuance"], valid_at=_dt(edge["valid_at"]),
        first_valid_at=_dt(edge["first_valid_at"]), first_seen=_dt(edge["first_seen"]),
        last_seen=_dt(edge["last_seen"]),
    )


def _candidates(keys: Iterable[str]) -> list[str]:
    """Document ids a node key could have (its label is not known to the caller)."""
    return [f"{label}/{key}" for key in keys for label in NODE_LABELS]


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """`http://user:pw@host:8529` → (`http://host:8529`, user, pw); credentials never reach the host list."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), parts.username, parts.password


class ArangoGraph:
    """Implements `GraphStore` on ArangoDB (python-arango)."""

    engine = "arango"

    def __init__(self, url: str, username: str = "root", password: str = "", database: str = DATABASE) -> None:
        from arango import ArangoClient

        hosts, url_user, url_password = split_credentials(url)
        username = url_user or username
        password = url_password if url_password is not None else password
        self._client = ArangoClient(hosts=hosts)
        self.database = database
        self._db = self._open_database(username, password)
        self._ensure_schema()

    @classmethod
    def on_database(cls, db: Any) -> "ArangoGraph":
        """An adapter over an already opened database handle, without touching the schema (tests)."""
        self = cls.__new__(cls)
        self._client = None
        self.database = getattr(db, "name", DATABASE)
        self._db = db
        return self

    # -- bootstrap ---------------------------------------------------------------------------------
    def _open_database(self, username: str, password: str) -> Any:
        from arango.exceptions import DatabaseCreateError, ServerConnectionError

        try:
            return self._client.db(self.database, username=username, password=password, verify=True)
        except ServerConnectionError:
            pass  # most likely missing: create it through _system, and only it
        system = self._client.db("_system", username=username, password=password, verify=True)
        if not system.has_database(self.database):
            try:
                system.create_database(self.database)
            except DatabaseCreateError as exc:
                if getattr(exc, "error_code", None) != 1207:  # created concurrently: fine
                    raise
        return self._client.db(self.database, username=username, password=password, verify=True)

    def _ensure_schema(self) -> None:
        from arango.exceptions import CollectionCreateError, GraphCreateError

        db = self._db
        for name, is_edge in [(label, False) for label in NODE_LABELS] + [(COMMUNITIES, False), (EDGES, True)]:
            if not db.has_collection(name):
                try:
                    db.create_collection(name, edge=is_edge)
                except CollectionCreateError as exc:
                    if getattr(exc, "error_code", None) != 1207:
                        raise
        for label in NODE_LABELS:
            db.collection(label).add_index({"type": "persistent", "fields": ["tenant_id", "user_id"]})
        db.collection(EDGES).add_index({"type": "persistent", "fields": ["tenant_id", "user_id", "relation"]})
        db.collection(COMMUNITIES).add_index({"type": "persistent", "fields": ["tenant_id", "community_id"]})
        if not db.has_graph(GRAPH):
            try:
                db.create_graph(
                    GRAPH,
                    edge_definitions=[{
                        "edge_collection": EDGES,
                        "from_vertex_collections": list(NODE_LABELS),
                        "to_vertex_collections": list(NODE_LABELS),
                    }],
                    orphan_collections=[COMMUNITIES],
                )
            except GraphCreateError as exc:
                if getattr(exc, "error_code", None) != 1925:  # graph already exists
                    raise

    def _query(self, name: str, bind_vars: dict[str, Any]) -> list:
        return list(self._db.aql.execute(AQL[name], bind_vars=bind_vars))

    def ping(self) -> None:
        self._db.version()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # -- writes ------------------------------------------------------------------------------------
    def upsert_facts(self, scope: UserScope, facts: list[FactObservation], now: datetime) -> int:
        """One write query per call. Observations of the same edge within the call are grouped (distinct
        evidence ids, input order) so one UPSERT applies them all: the query never has to read its own
        writes, and the running mean over k new observations is exact: (c·w + Σnew)/(w + k)."""
        if not facts:
            return 0
        at = _epoch(now)
        wanted: dict[str, tuple[str, str, str]] = {}  # key → (id, label, name); first mention wins
        for fact in facts:
            for node_id, label, name in (
                (fact.subject_id, fact.subject_label, fact.subject_name),
                (fact.object_id, fact.object_label, fact.object_name),
            ):
                wanted.setdefault(node_key(scope, check_node_id(node_id)), (node_id, label, name))
        existing: dict[str, str] = {}
        for row in self._query("resolve_labels", {"candidates": _candidates(wanted)}):
            current = existing.get(row["key"])
            if current is None or NODE_LABELS.index(row["label"]) < NODE_LABELS.index(current):
                existing[row["key"]] = row["label"]
        labels = {key: existing.get(key, label) for key, (_, label, _) in wanted.items()}
        bind: dict[str, Any] = {f"nodes_{label.lower()}": [] for label in NODE_LABELS}
        for key, (node_id, _, name) in wanted.items():
            bind[f"nodes_{labels[key].lower()}"].append({"_key": key, "id": node_id, "name": name})
        edges: dict[str, dict[str, Any]] = {}
        for fact in facts:
            from_key, to_key = node_key(scope, fact.subject_id), node_key(scope, fact.object_id)
            key = edge_key(from_key, to_key, fact.relation)
            edge = edges.setdefault(key, {
                "_key": key, "_from": f"{labels[from_key]}/{from_key}", "_to": f"{labels[to_key]}/{to_key}",
                "relation": fact.relation, "obs": [],
            })
            if any(o["evidence_id"] == fact.evidence_id for o in edge["obs"]):
                continue
            edge["obs"].append({
                "evidence_id": fact.evidence_id, "confidence": fact.confidence, "heat_score": fact.heat_score,
                "context_nuance": fact.context_nuance, "valid_at": _epoch(fact.valid_at),
            })
        bind.update(edges=list(edges.values()), tenant_id=scope.tenant_id, user_id=scope.user_id, now=at)
        return int(sum(self._query("upsert_facts", bind)))

    def write_communities(
        self, tenant_id: str, membership: dict[str, int], bridge_scores: dict[str, int],
        communities: list[dict],
    ) -> None:
        members = {key: int(value) for key, value in membership.items()}
        bridges = {key: int(value) for key, value in bridge_scores.items()}
        for label in NODE_LABELS:
            self._query("set_communities", {
                "@collection": label, "tenant_id": tenant_id, "membership": members, "bridge_scores": bridges,
            })
        self._query("clear_community_docs", {"tenant_id": tenant_id})
        docs = [
            {"_key": f"{tenant_id}:{int(doc['community_id'])}", "tenant_id": tenant_id,
             "community_id": int(doc["community_id"]), "size": int(doc.get("size", 0)),
             "top_members": list(doc.get("top_members", [])), "doc": doc}
            for doc in communities
        ]
        if docs:
            self._query("insert_community_docs", {"docs": docs})

    def delete_user(self, scope: UserScope) -> int:
        args = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        removed = sum(self._query("delete_user_edges", args))
        for label in NODE_LABELS:
            removed += sum(self._query("delete_user_nodes", {**args, "@collection": label}))
        return int(removed)

    # -- reads -------------------------------------------------------------------------------------
    def neighbourhood(
        self, scope: UserScope, start_ids: list[str], *, depth: int = 2, min_confidence: float = 0.5,
        limit: int = 50,
    ) -> list[Fact]:
        if not start_ids or depth < 1 or limit < 1:
            return []
        starts = _candidates(node_key(scope, node_id) for node_id in dict.fromkeys(start_ids))
        rows = self._query("neighbourhood", {
            "starts": starts, "tenant_id": scope.tenant_id, "user_id": scope.user_id, "depth": int(depth),
            "min_confidence": float(min_confidence), "limit": int(limit),
        })
        return [_fact(row) for row in rows]

    def match_nodes(self, scope: UserScope, terms: list[str]) -> list[str]:
        from athena_core.models.ontology import snake_id

        ids = sorted({snake_id(term) for term in terms} - {""})
        tokens = sorted({token for term in terms for token in name_tokens(term)})
        if not ids and not tokens:
            return []
        rows = self._query("match_candidates", {
            "tenant_id": scope.tenant_id, "user_id": scope.user_id, "ids": ids, "tokens": tokens,
        })
        return match_terms(terms, [(row["id"], row["name"]) for row in rows])

    def facts_about(self, scope: UserScope, subject_id: str, relation: str | None = None) -> list[Fact]:
        rows = self._query("facts_about", {
            "from_ids": _candidates([node_key(scope, subject_id)]), "tenant_id": scope.tenant_id,
            "user_id": scope.user_id, "relation": relation,
        })
        return [_fact(row) for row in rows]

    def nodes(self, scope: UserScope) -> list[GraphNode]:
        rows = self._query("nodes", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        return [_node(doc) for doc in rows]

    def edges(self, scope: UserScope) -> list[Fact]:
        rows = self._query("edges", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        return [_fact(row) for row in rows]

    def tenants(self) -> list[str]:
        return list(self._query("tenants", {}))

    def tenant_edges(self, tenant_id: str) -> list[tuple[str, str, float]]:
        return [(a, b, float(w)) for a, b, w in self._query("tenant_edges", {"tenant_id": tenant_id})]

    def communities(self, tenant_id: str) -> list[dict]:
        return list(self._query("communities", {"tenant_id": tenant_id}))

    def count(self, scope: UserScope) -> tuple[int, int]:
        rows = self._query("count", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        if not rows:
            return 0, 0
        return int(rows[0]["nodes"]), int(rows[0]["edges"])
