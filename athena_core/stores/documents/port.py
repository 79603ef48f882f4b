"""Store ports (SPEC S0): what the domain needs from each store role, independent of the engine.

Every method that reads or writes memory takes the scope it acts in, so no adapter can answer a
query across the tenant wall by accident (SPEC S1). The only unscoped reads are the operator sweeps,
which return scopes and then act scope by scope.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import AgentScope, UserScope
from athena_core.models.sessions import Session


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
class SessionStore(Protocol):
    """Sessions: who talks to whom (SPEC S2)."""

    def create_session(self, session: Session) -> None: ...

    def get_session(self, session_id: str) -> Session | None: ...

    def delete_session(self, session_id: str) -> bool: ...


@runtime_checkable
class EventLog(Protocol):
    """The event log, the system of record (SPEC S2): append, read, and the pipeline's status marks."""

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
        """The user's events (any status: pending ones are searchable too, SPEC S2 freshness) not yet
        marked indexed (SPEC S7: indexing is state), chronological."""

    def mark_indexed(self, scope: UserScope, event_ids: list[str], at: datetime) -> int:
        """Record that these events of the user are in the search indexes (their own vectors, lexical docs)."""

    def count_pending_for_tenant(self, tenant_id: str, cap: int) -> int:
        """Pending events of a tenant, counting at most `cap` (admission control needs only "over?")."""

    def previous_user_message(self, scope: AgentScope, before: Event) -> Event | None:
        """The scope's newest user message strictly before `before` (timestamp, then event_id)."""


@runtime_checkable
class ChainStore(Protocol):
    """Cognitive chains (MTM, SPEC S4): write, read, heat and access marks, promotion and archival marks."""

    def upsert_chain(self, chain: Chain) -> None:
        """Insert or replace the chain document by chain_id, within its user scope."""

    def get_chains(self, scope: UserScope, chain_ids: list[str]) -> list[Chain]:
        """The named chains of this user, in the order asked; unknown ids are left out."""

    def may_fall_in(self, scope: UserScope, kind: str, ids: list[str], start: datetime, end: datetime) -> list[str]:
        """Which of this user's `ids` (`kind` "event" or "chain") may hold evidence of [start, end), read
        from indexed columns, no document parsed: an event whose timestamp is inside; a chain whose last
        event is at or after `start` (a superset: its start is in its document). For a search with a time
        window, which candidates beyond its load budget its window bonus could lift."""

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

    def unindexed_chains(self, scope: UserScope, limit: int) -> list[Chain]:
        """The user's active chains written (created, merged) since they were last indexed (SPEC S7):
        every `upsert_chain` makes a chain unindexed again."""

    def mark_chains_indexed(self, scope: UserScope, chain_ids: list[str], at: datetime) -> int:
        """Record that these chains of the user (their summary vector and lexical doc) are indexed."""


@runtime_checkable
class Operations(Protocol):
    """What operators and the beat need: the sweeps and the dead letters."""

    # Operator sweeps (unscoped by nature: they return scopes, then work scope by scope)
    def active_chains_page(self, after: tuple[str, str, str] | None, limit: int) -> list[Chain]:
        """Active chains of every tenant ordered by (tenant, user, chain_id), after the given position:
        the promoter and archiver walk them in batches."""

    def active_chain_users(self, after: tuple[str, str] | None, limit: int) -> list[UserScope]:
        """Users with at least one active chain, ordered by (tenant, user), after the given position: the
        promotion beat walks them and fans out one task per user."""

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
        """Users holding events (any status) received before the cut-off, or chains written before it, that
        are not indexed (the index sweep)."""

    def record_dead_letter(self, task_name: str, task_id: str, args: object, error: str,
                           scope: UserScope | None = None) -> None:
        """Keep a task that exhausted its retries where operators can see it (SPEC S7). With the user
        `scope` it worked for, so a purge removes it too (its error may quote the user's text)."""

    def dead_letters(self, limit: int = 100) -> list[dict]: ...


@runtime_checkable
class IdempotencyKeys(Protocol):
    """Idempotency-Key records of the API (SPEC S2)."""

    # Idempotency keys (SPEC S2): one record per (tenant_id, key), kept `ttl_s`
    def claim_idempotency_key(
        self, tenant_id: str, user_id: str, key: str, request_hash: str, planned_event_ids: list[str],
        now: datetime, ttl_s: float = 86400,
    ) -> "IdempotencyRecord":
        """Atomically insert (tenant_id, key) → {request_hash, planned_event_ids, created_at=now} unless a
        live record exists (created within `ttl_s` of `now`), and return whichever record holds the key.
        An expired record is replaced. No multi-document transaction: the route then (re)writes the
        returned event ids, and append_events ignores ids already written."""


@runtime_checkable
class DocumentStore(SessionStore, EventLog, ChainStore, Operations, IdempotencyKeys, Protocol):
    """The document store: sessions, the event log, chains, operations and idempotency keys, one engine
    holding them all (SQLite embedded, MongoDB). Callers type against the narrow port they use."""

    engine: str

    def ping(self) -> None:
        """Raise if the store cannot serve requests."""

    def close(self) -> None: ...

    def delete_user(self, scope: UserScope) -> dict[str, int]:
        """Purge (SPEC S7.4): the user's sessions, events, chains, idempotency keys and dead letters.
        Returns counts per kind."""


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
