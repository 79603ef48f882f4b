"""The knowledge-graph port (SPEC S6): one interface, an adapter per engine (SQLite, ArangoDB).

Node keys are namespaced `{tenant}:{user}:{id}` (ids cannot contain ':'), so no query or traversal can
leave its user's subgraph even by accident (SPEC S1). Every method takes the scope it acts in.
"""
from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from athena_core.models.ontology import Fact, FactObservation, GraphNode
from athena_core.models.scope import UserScope


def node_key(scope: UserScope, node_id: str) -> str:
    return f"{scope.tenant_id}:{scope.user_id}:{node_id}"


@runtime_checkable
class GraphStore(Protocol):
    engine: str

    def ping(self) -> None: ...

    def close(self) -> None: ...

    def upsert_facts(self, scope: UserScope, facts: list[FactObservation], now: datetime) -> int:
        """Batched UPSERT of nodes and edges (SPEC S6.1 contract). Node on key: insert name, created_at,
        last_seen; update last_seen. Edge on (from, to, relation): insert weight 1, confidence, heat_score,
        valid_at = first_valid_at = evidence time, first_seen = last_seen = now; update weight + 1,
        confidence = (c·w + new)/(w + 1), context_nuance and heat_score = latest, valid_at = max,
        last_seen = now. An (edge, evidence_id) pair counts once: re-writing it changes nothing.
        Returns how many edge observations were new."""

    def neighbourhood(
        self, scope: UserScope, start_ids: list[str], *, depth: int = 2, min_confidence: float = 0.5,
        limit: int = 50,
    ) -> list[Fact]:
        """Edges within 1..depth hops of the start nodes, any direction, every edge on the path with
        confidence ≥ min_confidence; sorted weight desc, heat desc; distinct; at most `limit`."""

    def match_nodes(self, scope: UserScope, terms: list[str]) -> list[str]:
        """Node ids matched by query terms: exact id first, then name-token match."""

    def facts_about(self, scope: UserScope, subject_id: str, relation: str | None = None) -> list[Fact]:
        """All edges from a subject (any confidence), ordered by valid_at: first = initial, last = current."""

    def nodes(self, scope: UserScope) -> list[GraphNode]: ...

    def edges(self, scope: UserScope) -> list[Fact]:
        """Every edge of the user (any confidence), for the Graph route and analytics."""

    def tenants(self) -> list[str]:
        """Every tenant with at least one edge: the analytics fan-out (an operator job, unscoped)."""

    def tenant_edges(self, tenant_id: str) -> list[tuple[str, str, float]]:
        """(from_key, to_key, weight) of every edge of one tenant, for community analytics."""

    def write_communities(
        self, tenant_id: str, membership: dict[str, int], bridge_scores: dict[str, int],
        communities: list[dict],
    ) -> None:
        """Set community_id and bridge_score on the tenant's nodes (clearing stale values of nodes not
        in `membership`) and replace the tenant's Communities documents."""

    def communities(self, tenant_id: str) -> list[dict]: ...

    def delete_user(self, scope: UserScope) -> int:
        """Purge (SPEC S7.4): every node and edge of the user. Returns how many were removed."""

    def count(self, scope: UserScope) -> tuple[int, int]:
        """(nodes, edges) of the user."""
