"""The knowledge-graph port (SPEC S6): one interface, an adapter per engine (SQLite, ArangoDB).

Node keys are namespaced `{tenant}:{user}:{id}` (ids cannot contain ':'), so no query or traversal can
leave its user's subgraph even by accident (SPEC S1). Every method takes the scope it acts in.

One key rule for every engine (`node_key`): a key is at most `MAX_KEY_BYTES` (250) bytes, under ArangoDB's
254-byte document-key limit, so an id one engine accepts the other accepts too. Keys that fit are the
plain `{tenant}:{user}:{id}`. Tenant and user ids are at most 128 characters each and node ids at most 200,
so a full key can reach 458 bytes; then, deterministically: the scope prefix `{tenant}:{user}:` is kept
when it is at most 160 bytes, else each of its two parts longer than 64 bytes becomes its first 31
characters + `=` + 32 hex digits of its BLAKE2b hash; and the id part, when the key would still be too long,
becomes as many leading characters as fit + `=` + 32 hex digits of the id's hash. Scope ids cannot contain
`=` and a node id may not end in `=` + 32 hex digits (`check_node_id`), so a shortened part never equals a
verbatim one. Every key of a user starts with the same `key_prefix(scope)`.
"""
from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Protocol, runtime_checkable

from athena_core.models.ontology import Fact, FactObservation, GraphNode
from athena_core.models.scope import UserScope


MAX_KEY_BYTES = 250  # ArangoDB refuses document keys over 254 bytes (error 1221); SQLite would accept any
_PREFIX_MAX_BYTES = 160
_PART_MAX_BYTES = 64
_HASH_HEX = 32  # BLAKE2b with a 16-byte digest


def _shortened(part: str, limit: int) -> str:
    """`part` itself when it fits in `limit` bytes, else a deterministic prefix + '=' + hash of that size."""
    raw = part.encode("utf-8")
    if len(raw) <= limit:
        return part
    digest = hashlib.blake2b(raw, digest_size=_HASH_HEX // 2).hexdigest()
    room = limit - _HASH_HEX - 1
    head = raw[:room].decode("utf-8", errors="ignore")  # ids are ASCII; never split a character anyway
    return f"{head}={digest}"


def key_prefix(scope: UserScope) -> str:
    """`{tenant}:{user}:`, the start of every node key of the user (bounded: see the module docstring)."""
    full = f"{scope.tenant_id}:{scope.user_id}:"
    if len(full.encode("utf-8")) <= _PREFIX_MAX_BYTES:
        return full
    return f"{_shortened(scope.tenant_id, _PART_MAX_BYTES)}:{_shortened(scope.user_id, _PART_MAX_BYTES)}:"


def node_key(scope: UserScope, node_id: str) -> str:
    """The namespaced node key, at most `MAX_KEY_BYTES` bytes, the same in every engine."""
    prefix = key_prefix(scope)
    return prefix + _shortened(node_id, MAX_KEY_BYTES - len(prefix.encode("utf-8")))


class GraphWriteConflict(Exception):
    """A concurrent write to the same documents won (ArangoDB 1200 write-write conflict, 1210 a racing
    insert of the same key; SQLite still locked after its busy timeout). The write was rolled back as a
    whole and changed nothing: retrying it is safe (observations are counted once by evidence id)."""


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
