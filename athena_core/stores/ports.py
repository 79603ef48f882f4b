"""Store ports (SPEC S0): what the domain needs from each store role, independent of the engine.

Every method that reads or writes memory takes the scope it acts in, so no adapter can answer a
query across the tenant wall by accident (SPEC S1). The only unscoped reads are the operator sweeps,
which return scopes and then act scope by scope.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import AgentScope, UserScope
from athena_core.models.sessions import Session

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class IdempotencyRecord:
    """What an Idempotency-Key stands for: the first request's hash and the event ids it was given."""

    tenant_id: str
    user_id: str
    key: str
    request_hash: str
    event_ids: list[str]
    created_at: datetime


@runtime_checkable
class DocumentStore(Protocol):
    """Sessions and the event log (the system of record). Engines: SQLite (embedded), MongoDB."""

    engine: str

    def ping(self) -> None:
        """Raise if the store cannot serve requests."""

    def close(self) -> None: ...

    # Sessions
    def create_session(self, session: Session) -> None: ...

    def get_session(self, session_id: str) -> Session | None: ...

    def delete_session(self, session_id: str) -> bool: ...

    # Event log
    def append_events(self, events: list[Event]) -> None:
        """Write all events durably in one transaction; re-appending an existing event_id is a no-op."""

    def get_events(self, scope: UserScope, event_ids: list[str]) -> list[Event]:
        """The named events of this user, chronological (timestamp, then event_id)."""

    def recent_events(self, scope: AgentScope, limit: int) -> list[Event]:
        """The agent scope's newest events, newest first (used to rebuild the STM window)."""

    def pending_events(self, scope: AgentScope, limit: int | None = None) -> list[Event]:
        """The agent scope's events not yet consolidated or rejected, chronological."""

    def mark_seen(self, scope: AgentScope, event_ids: list[str], at: datetime) -> int:
        """Record that the pipeline took these events into the open segment (first time only)."""

    def mark_events(
        self, scope: AgentScope, event_ids: list[str], status: EventStatus, chain_id: str | None = None
    ) -> int:
        """Set status (and chain id) of these events of this scope; returns how many changed."""

    def count_events(self, scope: AgentScope, status: EventStatus | None = None) -> int: ...

    def unindexed_events(self, scope: UserScope, limit: int) -> list[Event]:
        """The user's consolidated events not yet marked indexed (SPEC S7: indexing is state), chronological."""

    def mark_indexed(self, scope: UserScope, event_ids: list[str], at: datetime) -> int:
        """Record that these events of the user (and their chains) are in the search indexes."""

    def count_pending_for_tenant(self, tenant_id: str, cap: int) -> int:
        """Pending events of a tenant, counting at most `cap` (admission control needs only "over?")."""

    def previous_user_message(self, scope: AgentScope, before: Event) -> Event | None:
        """The scope's newest user message strictly before `before` (timestamp, then event_id)."""

    # Chains (MTM)
    def upsert_chain(self, chain: Chain) -> None:
        """Insert or replace the chain document by chain_id, within its user scope."""

    def get_chains(self, scope: UserScope, chain_ids: list[str]) -> list[Chain]:
        """The named chains of this user, in the order asked; unknown ids are left out."""

    def recent_chains(
        self, scope: UserScope, *, since: datetime | None = None, limit: int = 100,
        status: ChainStatus | None = ChainStatus.active,
    ) -> list[Chain]:
        """The user's chains by last_event_at, newest first."""

    def touch_chains(self, scope: UserScope, accesses: list[tuple[str, datetime, float]]) -> None:
        """Record accesses (SPEC S5.2): (chain_id, last_accessed_at, recall_strength) per chain."""

    def set_chain_heat(self, scope: UserScope, updates: list[tuple[str, float, dict]]) -> None:
        """Store recomputed heat: (chain_id, heat_score, heat_factors) per chain."""

    def mark_promoted(self, scope: UserScope, chain_id: str, evidence: str) -> None:
        """Record the content hash last promoted into the graph (S6.1: once per distinct content)."""

    def archive_chain(self, scope: UserScope, chain_id: str, at: datetime) -> bool:
        """Freeze an active chain (S7): status archived, archived_at. False if it was not active."""

    def delete_user(self, scope: UserScope) -> dict[str, int]:
        """Purge (SPEC S7.4): the user's sessions, events, chains, idempotency keys and dead letters.
        Returns counts per kind."""

    # Operator sweeps (unscoped by nature: they return scopes, then work scope by scope)
    def active_chains_page(self, after: tuple[str, str, str] | None, limit: int) -> list[Chain]:
        """Active chains of every tenant ordered by (tenant, user, chain_id), after the given position:
        the promoter and archiver walk them in batches."""

    # A sweep never raises for one bad row: ids that form no scope are left out and passed to `on_invalid`
    # (ids tuple, error); without a callback they are logged.
    def idle_pending_scopes(self, received_before: datetime, limit: int = 1000,
                            on_invalid: "InvalidRow | None" = None) -> list[AgentScope]:
        """Scopes whose pending events are all older than the cut-off (received time): idle segments."""

    def unseen_pending_scopes(self, received_before: datetime, limit: int = 1000,
                              on_invalid: "InvalidRow | None" = None) -> list[AgentScope]:
        """Scopes holding pending events the pipeline has never seen, received before the cut-off."""

    def unindexed_scopes(self, received_before: datetime, limit: int = 1000,
                         on_invalid: "InvalidRow | None" = None) -> list[UserScope]:
        """Users holding consolidated, not indexed events received before the cut-off (the index sweep)."""

    def record_dead_letter(self, task_name: str, task_id: str, args: object, error: str,
                           scope: UserScope | None = None) -> None:
        """Keep a task that exhausted its retries where operators can see it (SPEC S7). With the user
        `scope` it worked for, so a purge removes it too (its error may quote the user's text)."""

    def dead_letters(self, limit: int = 100) -> list[dict]: ...

    # Idempotency keys (SPEC S2): one record per (tenant_id, key), kept `ttl_s`
    def claim_idempotency_key(
        self, tenant_id: str, user_id: str, key: str, request_hash: str, planned_event_ids: list[str],
        now: datetime, ttl_s: float = 86400,
    ) -> "IdempotencyRecord":
        """Atomically insert (tenant_id, key) → {request_hash, planned_event_ids, created_at=now} unless a
        live record exists (created within `ttl_s` of `now`), and return whichever record holds the key.
        An expired record is replaced. No multi-document transaction: the route then (re)writes the
        returned event ids, and append_events ignores ids already written."""


InvalidRow = Callable[[tuple, Exception], None]


def scopes_from_rows(rows, make: Callable[..., UserScope], on_invalid: InvalidRow | None) -> list:
    """Build one scope per row of ids; a row that forms no scope is reported and skipped, never raised."""
    import logging

    from pydantic import ValidationError

    scopes = []
    for ids in rows:
        ids = tuple(ids)
        try:
            scopes.append(make(*ids))
        except (ValidationError, ValueError, TypeError) as exc:
            if on_invalid is not None:
                on_invalid(ids, exc)
            else:
                logging.getLogger(__name__).warning("skipping event-log row %r: it forms no scope (%s)", ids,
                                                    type(exc).__name__)
    return scopes


class VectorHit(tuple):
    """(chain_id, similarity): cosine similarity in [-1, 1], higher is closer."""

    __slots__ = ()

    def __new__(cls, chain_id: str, similarity: float) -> "VectorHit":
        return super().__new__(cls, (chain_id, float(similarity)))

    @property
    def chain_id(self) -> str:
        return self[0]

    @property
    def similarity(self) -> float:
        return self[1]


@runtime_checkable
class VectorIndex(Protocol):
    """One vector per chain, user-scoped (SPEC S4, S1). Engines: SQLite exact search, Milvus.

    Vectors given to and compared by the index are L2-normalised float32 of `dimension` values.
    """

    engine: str
    dimension: int

    def ping(self) -> None: ...

    def close(self) -> None: ...

    def upsert(self, scope: UserScope, chain_id: str, vector: "np.ndarray") -> None:
        """Insert or replace the chain's vector (upsert by chain id)."""

    def upsert_many(self, scope: UserScope, chain_ids: list[str], vectors: object) -> None:
        """`upsert` for several ids in one write (the embed step indexes a chain's events at once)."""

    def delete(self, scope: UserScope, chain_ids: list[str]) -> int:
        """Remove these chains' vectors (archival); returns how many existed."""

    def delete_user(self, scope: UserScope) -> int:
        """Remove every vector of the user (purge)."""

    def search(self, scope: UserScope, vector: "np.ndarray", limit: int) -> list[VectorHit]:
        """The user's `limit` nearest chains, most similar first. Never another user's or tenant's."""

    def similarities(self, scope: UserScope, vector: "np.ndarray", chain_ids: list[str]) -> dict[str, float]:
        """Cosine of `vector` to each of these ids of the user that has a vector (others are left out):
        hybrid search reports a cosine for results the lexical retriever found, not only the nearest."""

    def count(self, scope: UserScope) -> int: ...


@runtime_checkable
class BlobStore(Protocol):
    """Event payloads (SPEC S2, S7). Engines: a local directory (embedded), S3-compatible (MinIO)."""

    engine: str

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        """Store the bytes under the user's prefix; returns the blob URI kept on the event."""

    def get(self, scope: UserScope, uri: str) -> bytes:
        """Read a blob of this user; another scope's URI raises PermissionError."""

    def delete(self, uri: str) -> None: ...

    def delete_user(self, scope: UserScope) -> None: ...

    def ping(self) -> None: ...


class LexicalDoc(tuple):
    """(doc_id, kind, body): one text the lexical index holds; kind is "event" or "chain"."""

    __slots__ = ()

    def __new__(cls, doc_id: str, kind: str, body: str) -> "LexicalDoc":
        return super().__new__(cls, (doc_id, kind, body))

    doc_id = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    body = property(lambda self: self[2])


@runtime_checkable
class LexicalIndex(Protocol):
    """Keyword search over a user's consolidated events and chain summaries (issue 7), user-scoped.

    Engines: SQLite FTS5 (BM25, Porter stemming) in the embedded default; a MongoDB text index in
    production. Search returns doc ids of one kind, best match first (only the rank is used: fusion is
    by rank, so engines with different score scales are interchangeable).
    """

    engine: str

    def ping(self) -> None: ...

    def close(self) -> None: ...

    def upsert(self, scope: UserScope, docs: list[LexicalDoc]) -> None:
        """Insert or replace docs by (scope, kind, doc_id); idempotent."""

    def delete(self, scope: UserScope, kind: str, doc_ids: list[str]) -> int: ...

    def delete_user(self, scope: UserScope) -> int: ...

    def search(self, scope: UserScope, query: str, kind: str, limit: int) -> list[str]: ...

    def count(self, scope: UserScope) -> int: ...
