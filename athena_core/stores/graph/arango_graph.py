"""ArangoDB adapter of the knowledge graph (SPEC S6, seed 000): `GraphStore` on one database (`athena_ltm`
by default; the contract tests use their own).

Layout: one vertex collection per ontology label (Identities, Tools, Projects, Concepts), `Communities`
for analytics documents, the edge collection `MemoryEdges`, and the named graph `athena_knowledge`.
Node `_key` is the namespaced key `tenant:user:id` (':' is legal in Arango keys) under the one key rule of
`port.node_key` (at most 250 bytes, shortened deterministically beyond), edge `_key` is the same stable hash
of (from, to, relation) the SQLite adapter uses, so edge ids agree across engines, the edge UPSERT looks the
edge up by `_key` (primary index), and a racing duplicate insert of one edge fails on the primary index
(1210) instead of creating a twin. Such races and write-write conflicts (1200) roll the query back whole and
are raised as `GraphWriteConflict`, which the promoter retries.

AQL pitfalls this file avoids (the offline test checks them): a ternary before `IN` must be parenthesized
(`?:` binds looser than `IN`, so `UPDATE a ? b : c IN coll` reads `c IN coll` as a membership test); an
expansion is never chained (`x[* FILTER …][*].y` nests the second `[*]` inside each element): attributes of
filtered elements are taken with `x[* FILTER … RETURN CURRENT.y]`. Sorting is binary in SQLite and ICU in
ArangoDB, so whatever sorts by a user-made string (node keys, tenant ids) is sorted in Python; edge keys
are lowercase hex, which both orders agree on. Reads project the attributes `_fact`/`_node` need (never
the growing `evidence` array), and an edge whose node is missing is dropped, as SQLite's JOIN drops it.
Multi-query writes (`delete_user`, `write_communities`) run in one stream transaction.

Evidence idempotency: every edge carries `evidence`, the array of evidence ids it has counted. The check
("was this observation counted?") and the strengthening then happen inside the one UPSERT that touches
the edge document, so they are atomic per document without a second collection to keep consistent (a
separate EdgeEvidence collection would need an insert-if-absent and a conditional edge update as two
modifications whose results depend on each other). The array grows by one entry per independent
observation (one per distinct chain content), which is what `weight` counts anyway.

Every query text is a module constant in `AQL` and is only ever run through `_query(name, ...)`: all values
(scope, ids, names, timestamps, limits, even collection names via `@@collection`) go in as bind variables,
never by string formatting. `aql_queries()` exposes the texts so a test can check that.

Only the configured database is created or written; `_system` is used solely to create it when missing.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from athena_core.stores.graph.port import GraphWriteConflict, key_prefix, node_key
from athena_core.models.ontology import NODE_LABELS, Fact, FactObservation, GraphNode
from athena_core.stores.graph.sqlite_graph import check_node_id, edge_key, match_terms, name_tokens
from athena_core.models.scope import UserScope

DATABASE = "athena_ltm"
GRAPH = "athena_knowledge"
EDGES = "MemoryEdges"
COMMUNITIES = "Communities"

# Observations of one edge in this call that the edge has not counted yet, and one attribute of them (an
# expansion with RETURN, never a chained `[*]`).
_FRESH = "t.obs[* FILTER CURRENT.evidence_id NOT IN OLD.evidence]"


def _fresh(attribute: str) -> str:
    return f"t.obs[* FILTER CURRENT.evidence_id NOT IN OLD.evidence RETURN CURRENT.{attribute}]"


_NODE_UPSERT = """
  FOR n IN @{var}
    UPSERT {{ _key: n._key }}
    INSERT {{ _key: n._key, tenant_id: @tenant_id, user_id: @user_id, id: n.id, label: "{label}",
             name: n.name, created_at: @now, last_seen: @now, community_id: null, bridge_score: null }}
    UPDATE {{ last_seen: @now }}
    IN {label}
    RETURN 1
"""  # expanded once at import time with constant labels only (see _build_upsert), never with values

# The UPDATE expression is parenthesized: unparenthesized, `… : {…} IN MemoryEdges` would parse as a
# membership test inside the ternary's else branch and the statement would have no collection (1501).
_EDGE_UPSERT = """
FOR t IN @edges
  UPSERT { _key: t._key }
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
    evidence: t.obs[*].evidence_id,
    events: UNIQUE(FLATTEN(t.obs[*].event_ids))
  }
  UPDATE (LENGTH(FRESH) == 0 ? {} : {
    weight: OLD.weight + LENGTH(FRESH),
    confidence: (OLD.confidence * OLD.weight + SUM(FRESH_confidence)) / (OLD.weight + LENGTH(FRESH)),
    heat_score: LAST(FRESH).heat_score,
    context_nuance: LAST(FRESH).context_nuance,
    valid_at: MAX([OLD.valid_at, MAX(FRESH_valid_at)]),
    first_valid_at: MIN([OLD.first_valid_at, MIN(FRESH_valid_at)]),
    last_seen: @now,
    evidence: APPEND(OLD.evidence, FRESH_evidence_id),
    events: UNION_DISTINCT(OLD.events || [], FLATTEN(FRESH_event_ids))
  })
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
    edge = _EDGE_UPSERT
    for attribute in ("confidence", "valid_at", "evidence_id", "event_ids"):
        edge = edge.replace(f"FRESH_{attribute}", _fresh(attribute))
    return "\n".join(parts) + edge.replace("FRESH", _FRESH)


# The attributes `_node` and `_fact` read: reads return these projections, never whole documents (an edge's
# `evidence` array grows with every observation).
_NODE_FIELDS = "_key: {v}._key, id: {v}.id, label: {v}.label, name: {v}.name, community_id: {v}.community_id, " \
    "bridge_score: {v}.bridge_score"
_EDGE_FIELDS = (
    "_key: {v}._key, _from: {v}._from, _to: {v}._to, relation: {v}.relation, weight: {v}.weight, "
    "confidence: {v}.confidence, heat_score: {v}.heat_score, context_nuance: {v}.context_nuance, "
    "valid_at: {v}.valid_at, first_valid_at: {v}.first_valid_at, first_seen: {v}.first_seen, "
    "last_seen: {v}.last_seen, events: {v}.events"
)


def _node_projection(var: str) -> str:
    return "{ " + _NODE_FIELDS.format(v=var) + " }"


def _edge_projection(var: str) -> str:
    return "{ " + _EDGE_FIELDS.format(v=var) + " }"


_SCOPED_NODES = ",\n".join(
    f"(FOR y IN {label} FILTER y.tenant_id == @tenant_id AND y.user_id == @user_id "
    f"RETURN {_node_projection('y')})"
    for label in NODE_LABELS
)

# An edge whose node is missing is dropped before any SORT/LIMIT (as SQLite's JOIN drops it).
_FACT_NODES = """
  LET s = DOCUMENT(f._from)
  LET o = DOCUMENT(f._to)
  FILTER s != null AND o != null
"""
_FACT_RETURN = (
    "RETURN { edge: " + _edge_projection("f") + ",\n    subject: " + _node_projection("s")
    + ",\n    object: " + _node_projection("o") + " }"
)

AQL: dict[str, str] = {
    # Which label collection already holds each node key (a node keeps its first label, as in SQLite).
    "resolve_labels": """
FOR d IN DOCUMENT(@candidates)
  RETURN { key: d._key, label: PARSE_IDENTIFIER(d._id).collection }
""",
    "upsert_facts": _build_upsert(),
    # DISTINCT over the small projection (not whole documents); edge keys are lowercase hex, so the
    # tie-break by `_key` orders as SQLite's binary collation does.
    "neighbourhood": """
WITH Identities, Tools, Projects, Concepts
FOR f IN (
  FOR start IN DOCUMENT(@starts)
    FILTER start.tenant_id == @tenant_id AND start.user_id == @user_id
    FOR v, e, p IN 1..@depth ANY start MemoryEdges
      PRUNE e != null AND (e.confidence < @min_confidence OR e.tenant_id != @tenant_id OR e.user_id != @user_id)
      FILTER p.edges[*].confidence ALL >= @min_confidence
      FILTER p.edges[*].tenant_id ALL == @tenant_id AND p.edges[*].user_id ALL == @user_id
      RETURN DISTINCT """ + _edge_projection("e") + """
)""" + _FACT_NODES + """  SORT f.weight DESC, f.heat_score DESC, f._key
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
""" + _FACT_NODES + """  SORT f.valid_at, f.first_seen, f._key
  """ + _FACT_RETURN,
    # Sorted by key in Python (binary, as SQLite): ICU would order mixed-case keys differently.
    "nodes": """
FOR x IN UNION(""" + _SCOPED_NODES + """)
  RETURN x
""",
    "edges": """
FOR f IN MemoryEdges
  FILTER f.tenant_id == @tenant_id AND f.user_id == @user_id
""" + _FACT_NODES + """  SORT f.valid_at, f._key
  """ + _FACT_RETURN,
    # Sorted in Python (binary, as SQLite).
    "tenants": """
FOR f IN MemoryEdges
  COLLECT tenant_id = f.tenant_id
  RETURN tenant_id
""",
    "tenant_edges": """
FOR f IN MemoryEdges
  FILTER f.tenant_id == @tenant_id
  SORT f._key
  RETURN [PARSE_IDENTIFIER(f._from).key, PARSE_IDENTIFIER(f._to).key, f.weight]
""",
    # One query, the membership bound once: each label collection is modified once (by its own subquery),
    # and only nodes whose values change are rewritten; nodes outside `membership` lose stale values.
    "set_communities": "\n".join(
        f"""LET set_{label.lower()} = (
  FOR n IN {label}
    FILTER n.tenant_id == @tenant_id
    LET c = @membership[n._key]
    LET b = (c == null ? null : (@bridge_scores[n._key] || 0))
    FILTER n.community_id != c OR n.bridge_score != b
    UPDATE n WITH {{ community_id: c, bridge_score: b }} IN {label} OPTIONS {{ keepNull: true }}
    RETURN 1
)"""
        for label in NODE_LABELS
    ) + """
RETURN SUM([""" + ", ".join(f"LENGTH(set_{label.lower()})" for label in NODE_LABELS) + """])
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
    # The tenant's community documents name their top members by node key: the purged user's leave them.
    "scrub_community_members": """
FOR c IN Communities
  FILTER c.tenant_id == @tenant_id
  LET kept = c.top_members[* FILTER NOT STARTS_WITH(CURRENT, @prefix)]
  FILTER LENGTH(kept) != LENGTH(c.top_members)
  UPDATE c WITH { top_members: kept, doc: MERGE(c.doc, { top_members: kept }) } IN Communities
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
    edge = row["edge"]  # rows whose node is missing are dropped by the queries (and by `_facts`)
    return Fact(
        edge_id=edge["_key"], subject=_node(row["subject"]), relation=edge["relation"], object=_node(row["object"]),
        weight=edge["weight"], confidence=edge["confidence"], heat_score=edge["heat_score"],
        context_nuance=edge["context_nuance"], valid_at=_dt(edge["valid_at"]),
        first_valid_at=_dt(edge["first_valid_at"]), first_seen=_dt(edge["first_seen"]),
        last_seen=_dt(edge["last_seen"]), evidence_event_ids=edge.get("events") or [],
    )


def _facts(rows: Iterable[dict]) -> list[Fact]:
    return [_fact(row) for row in rows if row.get("subject") is not None and row.get("object") is not None]


# Write conflicts (1200) and a racing insert of the same key (1210): the query was rolled back whole.
CONFLICT_CODES = frozenset({1200, 1210})


def _conflict_code(exc: BaseException) -> int | None:
    code = getattr(exc, "error_code", None)
    return code if code in CONFLICT_CODES else None


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

    def _query(self, name: str, bind_vars: dict[str, Any], db: Any = None) -> list:
        from arango.exceptions import ArangoServerError

        try:
            return list((self._db if db is None else db).aql.execute(AQL[name], bind_vars=bind_vars))
        except ArangoServerError as exc:
            if _conflict_code(exc) is not None:
                raise GraphWriteConflict(f"{name}: {exc}") from exc
            raise

    @contextmanager
    def _transaction(self, write: list[str], read: list[str] | None = None) -> Iterator[Any]:
        """A stream transaction: every query run on the yielded handle commits together or not at all."""
        txn = self._db.begin_transaction(read=read, write=write)
        try:
            yield txn
        except BaseException:
            try:
                txn.abort_transaction()
            except Exception:  # noqa: BLE001 - the original error matters; the server times the txn out
                pass
            raise
        txn.commit_transaction()

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
                "event_ids": list(fact.evidence_event_ids),
            })
        bind.update(edges=list(edges.values()), tenant_id=scope.tenant_id, user_id=scope.user_id, now=at)
        return int(sum(self._query("upsert_facts", bind)))

    def write_communities(
        self, tenant_id: str, membership: dict[str, int], bridge_scores: dict[str, int],
        communities: list[dict],
    ) -> None:
        """One stream transaction: node values and the Communities documents change together."""
        members = {key: int(value) for key, value in membership.items()}
        bridges = {key: int(value) for key, value in bridge_scores.items()}
        docs = [
            {"_key": f"{tenant_id}:{int(doc['community_id'])}", "tenant_id": tenant_id,
             "community_id": int(doc["community_id"]), "size": int(doc.get("size", 0)),
             "top_members": list(doc.get("top_members", [])), "doc": doc}
            for doc in communities
        ]
        with self._transaction(write=[*NODE_LABELS, COMMUNITIES]) as txn:
            self._query("set_communities", {
                "tenant_id": tenant_id, "membership": members, "bridge_scores": bridges,
            }, txn)
            self._query("clear_community_docs", {"tenant_id": tenant_id}, txn)
            if docs:
                self._query("insert_community_docs", {"docs": docs}, txn)

    def delete_user(self, scope: UserScope) -> int:
        """One stream transaction: edges, nodes and the user's keys in community documents go together."""
        args = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        with self._transaction(write=[EDGES, *NODE_LABELS, COMMUNITIES]) as txn:
            removed = sum(self._query("delete_user_edges", args, txn))
            for label in NODE_LABELS:
                removed += sum(self._query("delete_user_nodes", {**args, "@collection": label}, txn))
            self._query("scrub_community_members", {"tenant_id": scope.tenant_id, "prefix": key_prefix(scope)}, txn)
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
        return _facts(rows)

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
        return _facts(rows)

    def nodes(self, scope: UserScope) -> list[GraphNode]:
        rows = self._query("nodes", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        return [_node(doc) for doc in sorted(rows, key=lambda doc: doc["_key"])]  # binary order, as SQLite

    def edges(self, scope: UserScope) -> list[Fact]:
        rows = self._query("edges", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        return _facts(rows)

    def tenants(self) -> list[str]:
        return sorted(self._query("tenants", {}))  # binary order, as SQLite

    def tenant_edges(self, tenant_id: str) -> list[tuple[str, str, float]]:
        return [(a, b, float(w)) for a, b, w in self._query("tenant_edges", {"tenant_id": tenant_id})]

    def communities(self, tenant_id: str) -> list[dict]:
        return list(self._query("communities", {"tenant_id": tenant_id}))

    def count(self, scope: UserScope) -> tuple[int, int]:
        rows = self._query("count", {"tenant_id": scope.tenant_id, "user_id": scope.user_id})
        if not rows:
            return 0, 0
        return int(rows[0]["nodes"]), int(rows[0]["edges"])
