"""SQLite adapter of the knowledge graph (SPEC S6): the embedded default's `GraphStore`.

Tables mirror the ArangoDB layout: `nodes` (namespaced key → label, name, timestamps, analytics),
`edges` (one row per (from, to, relation), keyed by a stable hash of the triple so both engines agree on
edge ids), `edge_evidence` (which observations an edge has already counted: the idempotency ledger),
`edge_events` (the event-log ids of the turns behind an edge's observations, SPEC S6.1) and `communities` (the analytics documents of a tenant).

Why the evidence ledger is a table and not a column: `INSERT OR IGNORE` on its primary key tells us in
one indexed statement whether an (edge, evidence) pair is new, and only then is the edge strengthened.
Re-running a promotion therefore changes nothing, even when it crashed half-way in an earlier attempt
(the whole call is one transaction, so a half-written attempt never exists anyway).

One connection per thread, WAL, a busy timeout and BEGIN IMMEDIATE writes, as in `sqlite_documents`.
Datetimes are stored as epoch seconds (REAL) and returned as aware UTC datetimes.
"""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from datetime import datetime, timezone

from athena_core.stores.graph.port import GraphWriteConflict, key_prefix, node_key
from athena_core.models.ontology import Fact, FactObservation, GraphNode, snake_id
from athena_core.models.scope import UserScope
from athena_core.stores.sqlite_file import SqliteAdapter
from athena_core.text.tokens import word_tokens

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    key TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
    id TEXT NOT NULL, label TEXT NOT NULL, name TEXT NOT NULL,
    created_at REAL NOT NULL, last_seen REAL NOT NULL,
    community_id INTEGER, bridge_score INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nodes_by_user ON nodes (tenant_id, user_id);
CREATE TABLE IF NOT EXISTS edges (
    edge_key TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
    from_key TEXT NOT NULL, to_key TEXT NOT NULL, relation TEXT NOT NULL,
    weight INTEGER NOT NULL, confidence REAL NOT NULL, heat_score REAL NOT NULL,
    context_nuance TEXT NOT NULL,
    valid_at REAL NOT NULL, first_valid_at REAL NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_by_user ON edges (tenant_id, user_id, relation);
-- No mutable column (valid_at, weight) in any edge index: a repeated observation rewrites only the row.
CREATE INDEX IF NOT EXISTS edges_by_from ON edges (from_key, relation);
CREATE INDEX IF NOT EXISTS edges_by_to ON edges (to_key);
CREATE TABLE IF NOT EXISTS edge_evidence (
    edge_key TEXT NOT NULL, evidence_id TEXT NOT NULL,
    PRIMARY KEY (edge_key, evidence_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edge_events (
    edge_key TEXT NOT NULL, event_id TEXT NOT NULL,
    PRIMARY KEY (edge_key, event_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS communities (
    tenant_id TEXT NOT NULL, community_id INTEGER NOT NULL,
    size INTEGER NOT NULL, top_members TEXT NOT NULL, doc TEXT NOT NULL,
    PRIMARY KEY (tenant_id, community_id)
) WITHOUT ROWID;
"""

# Characters ArangoDB allows in a document key, minus ':' (the namespace separator). Both adapters apply
# the same rule so an id accepted by one engine is accepted by the other.
_ID_RE = re.compile(r"[A-Za-z0-9_\-.@()+,=;$!*'%]{1,200}")
# The shape `node_key` gives an id it had to shorten: a verbatim id may not take it (no collision).
_SHORTENED_RE = re.compile(r".*=[0-9a-f]{32}")

_NODE_UPSERT = """
INSERT INTO nodes (key, tenant_id, user_id, id, label, name, created_at, last_seen)
VALUES (?,?,?,?,?,?,?,?)
ON CONFLICT(key) DO UPDATE SET last_seen = excluded.last_seen
"""

# In DO UPDATE every unqualified column is the row as it was before this statement (SQLite evaluates all
# SET expressions against the old row), so `weight` below is the OLD weight in every expression.
_EDGE_UPSERT = """
INSERT INTO edges (edge_key, tenant_id, user_id, from_key, to_key, relation, weight, confidence, heat_score,
                   context_nuance, valid_at, first_valid_at, first_seen, last_seen)
VALUES (?,?,?,?,?,?,1,?,?,?,?,?,?,?)
ON CONFLICT(edge_key) DO UPDATE SET
    weight = weight + 1,
    confidence = (confidence * weight + excluded.confidence) / (weight + 1),
    context_nuance = excluded.context_nuance,
    heat_score = excluded.heat_score,
    valid_at = max(valid_at, excluded.valid_at),
    first_valid_at = min(first_valid_at, excluded.first_valid_at),
    last_seen = excluded.last_seen
"""

_FACT_SELECT = """
SELECT e.edge_key, e.relation, e.weight, e.confidence, e.heat_score, e.context_nuance,
       e.valid_at, e.first_valid_at, e.first_seen, e.last_seen,
       s.key AS s_key, s.id AS s_id, s.label AS s_label, s.name AS s_name,
       s.community_id AS s_community, s.bridge_score AS s_bridge,
       o.key AS o_key, o.id AS o_id, o.label AS o_label, o.name AS o_name,
       o.community_id AS o_community, o.bridge_score AS o_bridge,
       (SELECT json_group_array(v.event_id) FROM edge_events v WHERE v.edge_key = e.edge_key) AS event_ids
FROM edges e
JOIN nodes s ON s.key = e.from_key
JOIN nodes o ON o.key = e.to_key
"""

# Nodes reachable from the start keys over qualifying edges (the user's own, confidence ≥ min) in fewer
# than `depth` hops; the answer is every qualifying edge touching one of them. That is exactly the set of
# edges lying on some 1..depth path whose every edge qualifies, so a low-confidence edge also blocks what
# lies behind it. Two recursive arms (out and in) keep both lookups on an index; the unary `+` keeps the
# planner off the (tenant, user) index, which would scan every edge of the user on each hop (the scope
# test stays: it is the wall, the namespaced keys are the second one).
_NEIGHBOURHOOD = """
WITH RECURSIVE reach(node, depth) AS (
    SELECT value, 0 FROM json_each(:starts)
    UNION
    SELECT e.to_key, r.depth + 1 FROM reach r JOIN edges e ON e.from_key = r.node
    WHERE r.depth + 1 < :depth AND +e.tenant_id = :tenant AND +e.user_id = :user AND e.confidence >= :min
    UNION
    SELECT e.from_key, r.depth + 1 FROM reach r JOIN edges e ON e.to_key = r.node
    WHERE r.depth + 1 < :depth AND +e.tenant_id = :tenant AND +e.user_id = :user AND e.confidence >= :min
),
near(edge_key) AS (
    SELECT e.edge_key FROM reach r JOIN edges e ON e.from_key = r.node
    WHERE +e.tenant_id = :tenant AND +e.user_id = :user AND e.confidence >= :min
    UNION
    SELECT e.edge_key FROM reach r JOIN edges e ON e.to_key = r.node
    WHERE +e.tenant_id = :tenant AND +e.user_id = :user AND e.confidence >= :min
)
""" + _FACT_SELECT + """
WHERE e.edge_key IN (SELECT edge_key FROM near)
ORDER BY e.weight DESC, e.heat_score DESC, e.edge_key
LIMIT :limit
"""


def edge_key(from_key: str, to_key: str, relation: str) -> str:
    """Stable id of the edge (from, to, relation): the same in every engine and on every run."""
    raw = "\x1f".join((from_key, to_key, relation)).encode()
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def check_node_id(node_id: str) -> str:
    """Refuse ids that would break the namespace (':') or are not valid ArangoDB keys, and ids shaped like
    a shortened id (`node_key`)."""
    if not isinstance(node_id, str) or not _ID_RE.fullmatch(node_id) or _SHORTENED_RE.fullmatch(node_id):
        raise ValueError(f"invalid graph node id {node_id!r}")
    return node_id


def name_tokens(text: str) -> set[str]:
    return set(word_tokens(text))


def _epoch(value: datetime) -> float:
    if value.tzinfo is None:  # naive datetimes are UTC throughout Athena
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def _dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=timezone.utc)


def _node(row: sqlite3.Row, prefix: str) -> GraphNode:
    return GraphNode(
        key=row[f"{prefix}_key"], id=row[f"{prefix}_id"], label=row[f"{prefix}_label"],
        name=row[f"{prefix}_name"], community_id=row[f"{prefix}_community"],
        bridge_score=row[f"{prefix}_bridge"],
    )


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(
        edge_id=row["edge_key"], subject=_node(row, "s"), relation=row["relation"], object=_node(row, "o"),
        weight=row["weight"], confidence=row["confidence"], heat_score=row["heat_score"],
        context_nuance=row["context_nuance"], valid_at=_dt(row["valid_at"]),
        first_valid_at=_dt(row["first_valid_at"]), first_seen=_dt(row["first_seen"]),
        last_seen=_dt(row["last_seen"]), evidence_event_ids=json.loads(row["event_ids"] or "[]"),
    )


def match_terms(terms: Iterable[str], candidates: list[tuple[str, str]]) -> list[str]:
    """Shared matching rule (both adapters): for each term, exact id (its snake_case form) first, then
    nodes whose name tokens contain every token of the term. `candidates` are (id, name) pairs."""
    ids = {node_id for node_id, _ in candidates}
    exact: list[str] = []
    by_name: list[str] = []
    wanted = [snake_id(term) for term in terms]
    for term in wanted:
        if term and term in ids and term not in exact:
            exact.append(term)
    for term in wanted:
        tokens = set(term.split("_")) - {""}
        if not tokens:
            continue
        for node_id, name in sorted(candidates):
            if node_id not in exact and node_id not in by_name and tokens <= name_tokens(name):
                by_name.append(node_id)
    return exact + by_name


class SqliteGraph(SqliteAdapter):
    """Implements `GraphStore` on one SQLite file."""

    engine = "sqlite"
    schema = SCHEMA

    # -- writes ------------------------------------------------------------------------------------
    def upsert_facts(self, scope: UserScope, facts: list[FactObservation], now: datetime) -> int:
        """One transaction per call (one promotion): nodes first, then each observation is counted only
        if its (edge, evidence) pair is new, so re-running a promotion changes nothing."""
        if not facts:
            return 0
        at = _epoch(now)
        tenant, user = scope.tenant_id, scope.user_id
        nodes: dict[str, tuple] = {}
        for fact in facts:
            for node_id, label, name in (
                (fact.subject_id, fact.subject_label, fact.subject_name),
                (fact.object_id, fact.object_label, fact.object_name),
            ):
                key = node_key(scope, check_node_id(node_id))
                nodes.setdefault(key, (key, tenant, user, node_id, label, name, at, at))
        try:
            return self._upsert(scope, facts, nodes, at)
        except sqlite3.OperationalError as exc:  # still locked after the busy timeout: rolled back whole
            if "locked" in str(exc) or "busy" in str(exc):
                raise GraphWriteConflict(str(exc)) from exc
            raise

    def _upsert(self, scope: UserScope, facts: list[FactObservation], nodes: dict[str, tuple], at: float) -> int:
        tenant, user = scope.tenant_id, scope.user_id
        new = 0
        with self._write() as conn:
            conn.executemany(_NODE_UPSERT, list(nodes.values()))
            for fact in facts:
                from_key = node_key(scope, fact.subject_id)
                to_key = node_key(scope, fact.object_id)
                key = edge_key(from_key, to_key, fact.relation)
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO edge_evidence (edge_key, evidence_id) VALUES (?,?)",
                    (key, fact.evidence_id),
                )
                if cursor.rowcount != 1:
                    continue  # this observation was already counted: leave the edge as it is
                valid_at = _epoch(fact.valid_at)
                conn.execute(
                    _EDGE_UPSERT,
                    (key, tenant, user, from_key, to_key, fact.relation, fact.confidence, fact.heat_score,
                     fact.context_nuance, valid_at, valid_at, at, at),
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO edge_events (edge_key, event_id) VALUES (?,?)",
                    [(key, event_id) for event_id in fact.evidence_event_ids],
                )
                new += 1
        return new

    def write_communities(
        self, tenant_id: str, membership: dict[str, int], bridge_scores: dict[str, int],
        communities: list[dict],
    ) -> None:
        """Every node of the tenant is reset first, so a node that left the analysed graph keeps no stale
        community or bridge flag; then members get theirs (bridge 0 when not given)."""
        rows = [
            (community, int(bridge_scores.get(key, 0)), key, tenant_id) for key, community in membership.items()
        ]
        docs = [
            (tenant_id, int(doc["community_id"]), int(doc.get("size", 0)),
             json.dumps(doc.get("top_members", [])), json.dumps(doc))
            for doc in communities
        ]
        with self._write() as conn:
            conn.execute(
                "UPDATE nodes SET community_id = NULL, bridge_score = NULL WHERE tenant_id = ? "
                "AND (community_id IS NOT NULL OR bridge_score IS NOT NULL)",
                (tenant_id,),
            )
            conn.executemany(
                "UPDATE nodes SET community_id = ?, bridge_score = ? WHERE key = ? AND tenant_id = ?", rows
            )
            conn.execute("DELETE FROM communities WHERE tenant_id = ?", (tenant_id,))
            conn.executemany("INSERT INTO communities VALUES (?,?,?,?,?)", docs)

    def delete_user(self, scope: UserScope) -> int:
        args = (scope.tenant_id, scope.user_id)
        with self._write() as conn:
            for ledger in ("edge_evidence", "edge_events"):
                conn.execute(
                    f"DELETE FROM {ledger} WHERE edge_key IN "
                    "(SELECT edge_key FROM edges WHERE tenant_id = ? AND user_id = ?)",
                    args,
                )
            removed = conn.execute("DELETE FROM edges WHERE tenant_id = ? AND user_id = ?", args).rowcount
            removed += conn.execute("DELETE FROM nodes WHERE tenant_id = ? AND user_id = ?", args).rowcount
            # The tenant's community documents name their top members by node key (which holds the
            # entity's name): the purged user's keys leave them too.
            mine = key_prefix(scope)
            for community_id, doc in conn.execute(
                "SELECT community_id, doc FROM communities WHERE tenant_id = ? AND instr(top_members, ?) > 0",
                (scope.tenant_id, json.dumps(mine)[:-1]),
            ).fetchall():
                kept = json.loads(doc)
                kept["top_members"] = [k for k in kept.get("top_members", []) if not k.startswith(mine)]
                conn.execute(
                    "UPDATE communities SET top_members = ?, doc = ? WHERE tenant_id = ? AND community_id = ?",
                    (json.dumps(kept["top_members"]), json.dumps(kept), scope.tenant_id, community_id),
                )
        return removed

    # -- reads -------------------------------------------------------------------------------------
    def neighbourhood(
        self, scope: UserScope, start_ids: list[str], *, depth: int = 2, min_confidence: float = 0.5,
        limit: int = 50,
    ) -> list[Fact]:
        if not start_ids or depth < 1 or limit < 1:
            return []
        starts = [node_key(scope, node_id) for node_id in dict.fromkeys(start_ids)]
        rows = self._conn().execute(
            _NEIGHBOURHOOD,
            {"starts": json.dumps(starts), "depth": depth, "tenant": scope.tenant_id, "user": scope.user_id,
             "min": min_confidence, "limit": limit},
        ).fetchall()
        return [_fact(row) for row in rows]

    def match_nodes(self, scope: UserScope, terms: list[str]) -> list[str]:
        candidates = [
            (row["id"], row["name"])
            for row in self._conn().execute(
                "SELECT id, name FROM nodes WHERE tenant_id = ? AND user_id = ?", (scope.tenant_id, scope.user_id)
            )
        ]
        return match_terms(terms, candidates)

    def facts_about(self, scope: UserScope, subject_id: str, relation: str | None = None) -> list[Fact]:
        sql = _FACT_SELECT + " WHERE e.from_key = ? AND +e.tenant_id = ? AND +e.user_id = ?"
        args: list = [node_key(scope, subject_id), scope.tenant_id, scope.user_id]
        if relation is not None:
            sql += " AND e.relation = ?"
            args.append(relation)
        sql += " ORDER BY e.valid_at, e.first_seen, e.edge_key"
        return [_fact(row) for row in self._conn().execute(sql, args)]

    def nodes(self, scope: UserScope) -> list[GraphNode]:
        rows = self._conn().execute(
            "SELECT key, id, label, name, community_id, bridge_score FROM nodes "
            "WHERE tenant_id = ? AND user_id = ? ORDER BY key",
            (scope.tenant_id, scope.user_id),
        )
        return [
            GraphNode(key=r["key"], id=r["id"], label=r["label"], name=r["name"], community_id=r["community_id"],
                      bridge_score=r["bridge_score"])
            for r in rows
        ]

    def edges(self, scope: UserScope) -> list[Fact]:
        sql = _FACT_SELECT + " WHERE e.tenant_id = ? AND e.user_id = ? ORDER BY e.valid_at, e.edge_key"
        return [_fact(row) for row in self._conn().execute(sql, (scope.tenant_id, scope.user_id))]

    def tenants(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT DISTINCT tenant_id FROM edges ORDER BY tenant_id")]

    def tenant_edges(self, tenant_id: str) -> list[tuple[str, str, float]]:
        rows = self._conn().execute(
            "SELECT from_key, to_key, weight FROM edges WHERE tenant_id = ? ORDER BY edge_key", (tenant_id,)
        )
        return [(r["from_key"], r["to_key"], float(r["weight"])) for r in rows]

    def communities(self, tenant_id: str) -> list[dict]:
        rows = self._conn().execute(
            "SELECT doc FROM communities WHERE tenant_id = ? ORDER BY community_id", (tenant_id,)
        )
        return [json.loads(r["doc"]) for r in rows]

    def count(self, scope: UserScope) -> tuple[int, int]:
        conn = self._conn()
        args = (scope.tenant_id, scope.user_id)
        nodes = conn.execute("SELECT count(*) FROM nodes WHERE tenant_id = ? AND user_id = ?", args).fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM edges WHERE tenant_id = ? AND user_id = ?", args).fetchone()[0]
        return int(nodes), int(edges)
