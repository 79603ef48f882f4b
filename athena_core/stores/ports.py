"""Store ports (SPEC S0): what the domain needs from each store role, independent of the engine.

Every method that reads or writes memory takes the scope it acts in, so no adapter can answer a
query across the tenant wall by accident (SPEC S1). The only unscoped reads are the operator sweeps,
which return scopes and then act scope by scope.
"""
from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import AgentScope, UserScope
from athena_core.models.sessions import Session


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

    # Operator sweeps (unscoped by nature: they return scopes, then work scope by scope)
    def unseen_pending_scopes(self, received_before: datetime, limit: int = 1000) -> list[AgentScope]:
        """Scopes holding pending events the pipeline has never seen, received before the cut-off."""

    def record_dead_letter(self, task_name: str, task_id: str, args: object, error: str) -> None:
        """Keep a task that exhausted its retries where operators can see it (SPEC S7)."""

    def dead_letters(self, limit: int = 100) -> list[dict]: ...
