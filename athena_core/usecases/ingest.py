"""The synchronous write path (SPEC S3): durable event log first, then the STM window, then the pipeline.

Only the durable write may fail the request (503). A Redis or broker failure after it is logged and
counted; the event stays `pending` in the log, the window is rebuilt from the log, and the pending
sweep enqueues the pipeline later. Accepted data is never lost (SPEC S7).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from athena_core.observability import metrics
from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventType, utc_now
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.stm.stm_window import StmWindow
from athena_core.stores.documents.port import EventLog

log = logging.getLogger(__name__)


class DurableWriteError(RuntimeError):
    """The event log refused the write: the only case where an event is not accepted (503)."""


@dataclass(frozen=True)
class EventDraft:
    """A validated event before it has an id: what a route hands to `Ingest`."""

    role: EventRole
    type: EventType
    content: str
    metadata: dict[str, str]
    timestamp: datetime | None = None
    blob_uri: str | None = None
    mime_type: str | None = None


class Ingest:
    def __init__(
        self,
        documents: EventLog,
        stm: StmWindow,
        request_pipeline: Callable[[AgentScope], object],
    ) -> None:
        self.documents = documents
        self.stm = stm
        self.request_pipeline = request_pipeline

    def store(self, session: Session, drafts: list[EventDraft], event_ids: list[str] | None = None) -> list[Event]:
        """Write the drafts durably, then push them to the window and request the pipeline.

        `event_ids` (one per draft) are ids planned beforehand, e.g. claimed with an Idempotency-Key:
        those already in the log are not written or pushed again (a retry after the first request's
        append); the others are written now (a retry after a crash before it). Returns the events in
        draft order, as the log holds them.
        """
        started = time.perf_counter()
        received_at = utc_now()
        if event_ids is not None and len(event_ids) != len(drafts):
            raise ValueError(f"{len(event_ids)} planned event ids for {len(drafts)} events")
        stored: dict[str, Event] = {}
        if event_ids is not None:
            try:
                stored = {e.event_id: e for e in self.documents.get_events(session.scope.user_scope, event_ids)}
            except Exception as exc:  # noqa: BLE001 - the log cannot tell what is durable: not accepted
                log.error("durable read failed: %s", exc)
                raise DurableWriteError(str(exc)) from exc
        ids = event_ids if event_ids is not None else [new_id("evt") for _ in drafts]
        events = [
            Event(
                event_id=event_id,
                tenant_id=session.tenant_id,
                user_id=session.user_id,
                agent_id=session.agent_id,
                session_id=session.session_id,
                role=d.role,
                type=d.type,
                content=d.content,
                metadata=d.metadata,
                timestamp=d.timestamp or received_at,
                received_at=received_at,
                blob_uri=d.blob_uri,
                mime_type=d.mime_type,
            )
            for event_id, d in zip(ids, drafts)
            if event_id not in stored
        ]
        try:
            if events:
                self.documents.append_events(events)
        except Exception as exc:  # noqa: BLE001 - any store failure means "not durable"
            log.error("durable write failed: %s", exc)
            raise DurableWriteError(str(exc)) from exc
        scope = session.scope
        for event in events:
            metrics.EVENTS_INGESTED.labels(event.role.value, event.type.value).inc()
            self._push_window(scope, event)
        self._request_pipeline(scope)  # also for a replay: a crash may have cut the first request here
        metrics.INGEST_SECONDS.observe(time.perf_counter() - started)
        written = {e.event_id: e for e in events}
        return [stored.get(i) or written[i] for i in ids]

    def _push_window(self, scope: AgentScope, event: Event) -> None:
        try:
            if self.stm.push(scope, event) > 1:
                metrics.STM_COALESCED.inc()
        except Exception as exc:  # noqa: BLE001 - the window is a view; the log has the event
            metrics.STM_PUSH_FAILURES.inc()
            log.warning("STM push failed for %s (event %s stays durable): %s", scope.key, event.event_id, exc)

    def _request_pipeline(self, scope: AgentScope) -> None:
        try:
            self.request_pipeline(scope)
        except Exception as exc:  # noqa: BLE001 - the pending sweep re-enqueues
            metrics.PIPELINE_PUBLISH.labels("failed").inc()
            log.warning("pipeline enqueue failed for %s; the pending sweep will retry: %s", scope.key, exc)
