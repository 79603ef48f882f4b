"""The write path (SPEC S3): durable event log first, then the STM window, then the pipeline.

Only the durable write may fail the request (503). A Redis or broker failure after it is logged and
counted; the event stays `pending` in the log, the window is rebuilt from the log, and the pending
sweep enqueues the pipeline later. Accepted data is never lost (SPEC S7).
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from athena_core.observability import metrics
from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventType, utc_now
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.stm.stm_window import StmWindow
from athena_core.stores.documents.port import EventLog, SessionStore

log = logging.getLogger(__name__)


class DurableWriteError(RuntimeError):
    """The event log refused the write: the only case where an event is not accepted (503)."""


class SessionGone(LookupError):
    """The request's session no longer exists (deleted, or its user purged): nothing was stored (404)."""


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


@dataclass(frozen=True)
class IngestRequest:
    """One request's events: its session, its validated drafts, and the ids planned for them (or None)."""

    session: Session
    drafts: list[EventDraft]
    event_ids: list[str] | None = None
    # The route took the session's identity from a cache: the writer checks, just before the commit,
    # that the session still exists (one read per distinct session per group, not one per request).
    recheck_session: bool = False


class Ingest:
    def __init__(
        self,
        documents: EventLog,
        stm: StmWindow,
        request_pipeline: Callable[[AgentScope], object],
        sessions: SessionStore | None = None,
    ) -> None:
        self.documents = documents
        self.stm = stm
        self.request_pipeline = request_pipeline
        self.sessions = sessions  # for `recheck_session`; without it the check is skipped

    def store(self, session: Session, drafts: list[EventDraft], event_ids: list[str] | None = None) -> list[Event]:
        """Write one request's drafts durably, then push them to the window and request the pipeline.

        `event_ids` (one per draft) are ids planned beforehand, e.g. claimed with an Idempotency-Key:
        those already in the log are not written or pushed again (a retry after the first request's
        append); the others are written now (a retry after a crash before it). Returns the events in
        draft order, as the log holds them.
        """
        outcome = self.store_group([IngestRequest(session, drafts, event_ids)])[0]
        if isinstance(outcome, (DurableWriteError, SessionGone)):
            raise outcome
        return outcome

    def store_group(self, requests: list[IngestRequest],
                    defer_requests: Callable[[list[AgentScope]], None] | None = None,
                    ) -> list[list[Event] | DurableWriteError | SessionGone]:
        """Several requests' events in one durable commit, one pipelined window push, one pipeline request
        per scope (the group commit, SPEC S9). A request's outcome is its events or the error that kept
        them from the log; when the shared commit fails, each request is retried in its own commit, so
        one request's failure never refuses another's, and a request's events are stored all or none.

        `defer_requests` takes the scopes whose pipeline runs are to be requested after the answer (SPEC
        S9 allows publishing off the request path: the pending sweep covers a run request lost in a crash);
        without it they are requested here, before returning.
        """
        started = time.perf_counter()
        received_at = utc_now()
        gone = self._sessions_gone(requests)
        planned = [SessionGone(r.session.session_id) if r.session.session_id in gone else self._plan(r, received_at)
                   for r in requests]
        outcomes: list[list[Event] | DurableWriteError | SessionGone] = [
            p if isinstance(p, (DurableWriteError, SessionGone)) else [] for p in planned]
        writable = [i for i, p in enumerate(planned) if not isinstance(p, (DurableWriteError, SessionGone))]
        new_events = [e for i in writable for e in planned[i][1]]
        durable = set(writable)
        try:
            if new_events:
                self.documents.append_events(new_events)
        except Exception as exc:  # noqa: BLE001 - any store failure means "not durable"
            log.error("durable group write of %d events failed, retrying per request: %s", len(new_events), exc)
            durable = set()
            # One request alone gains nothing from a retry of the same write: while the store is down it would
            # only double the wait before the 503 (a client's timeout would then turn it into a lost answer).
            retried = writable if len(writable) > 1 else []
            for i in set(writable) - set(retried):
                outcomes[i] = DurableWriteError(str(exc))
            for i in retried:
                try:
                    if planned[i][1]:
                        self.documents.append_events(planned[i][1])
                    durable.add(i)
                except Exception as one:  # noqa: BLE001
                    log.error("durable write failed: %s", one)
                    outcomes[i] = DurableWriteError(str(one))
        scope_of = {i: requests[i].session.scope for i in durable}  # a validated model: built once per request
        pushes = [(scope_of[i], e) for i in sorted(durable) for e in planned[i][1]]
        for (role, type_), count in Counter((e.role.value, e.type.value) for _, e in pushes).items():
            metrics.EVENTS_INGESTED.labels(role, type_).inc(count)
        window = getattr(self.stm, "window", None)  # a window without a size (a fake) gets every push
        self._push_windows(window_pushes(pushes, window) if window else pushes)
        # also for a replay: a crash may have cut the first request before its run request
        scopes = list(dict.fromkeys(scope_of[i] for i in sorted(durable)))
        if defer_requests is not None:
            defer_requests(scopes)
        else:
            for scope in scopes:
                self.request_pipeline_safely(scope)
        for i in durable:
            stored, written, ids = planned[i]
            by_id = {e.event_id: e for e in written}
            outcomes[i] = [stored.get(event_id) or by_id[event_id] for event_id in ids]
        metrics.INGEST_SECONDS.observe(time.perf_counter() - started)
        return outcomes

    def _sessions_gone(self, requests: list[IngestRequest]) -> set[str]:
        """The session ids of the group, among those asked to be rechecked, that no longer exist. A read
        that fails counts as "exists": the session was found moments ago, and refusing the write for a
        read error would turn a healthy write into a 404."""
        if self.sessions is None:
            return set()
        gone = set()
        for session_id in dict.fromkeys(r.session.session_id for r in requests if r.recheck_session):
            try:
                if self.sessions.get_session(session_id) is None:
                    gone.add(session_id)
            except Exception as exc:  # noqa: BLE001
                log.warning("session recheck of %s failed; writing as found by the route: %s", session_id, exc)
        return gone

    def _plan(self, request: IngestRequest, received_at: datetime
              ) -> tuple[dict[str, Event], list[Event], list[str]] | DurableWriteError:
        """(events already in the log by planned id, events to write, every id in draft order)."""
        session, drafts, event_ids = request.session, request.drafts, request.event_ids
        if event_ids is not None and len(event_ids) != len(drafts):
            raise ValueError(f"{len(event_ids)} planned event ids for {len(drafts)} events")
        stored: dict[str, Event] = {}
        if event_ids is not None:
            try:
                stored = {e.event_id: e for e in self.documents.get_events(session.scope.user_scope, event_ids)}
            except Exception as exc:  # noqa: BLE001 - the log cannot tell what is durable: not accepted
                log.error("durable read failed: %s", exc)
                return DurableWriteError(str(exc))
        ids = event_ids if event_ids is not None else [new_id("evt") for _ in drafts]
        events = [  # drafts are validated at the door: construct, not re-validate (a sixth of a batch's time)
            Event.model_construct(
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
        return stored, events, ids

    def _push_windows(self, pushes: list[tuple[AgentScope, Event]]) -> None:
        """All of a group's window pushes in one Redis round trip."""
        if not pushes:
            return
        try:
            counts = self.stm.push_many(pushes)
        except Exception as exc:  # noqa: BLE001 - the window is a view; the log has the events
            metrics.STM_PUSH_FAILURES.inc(len(pushes))
            log.warning("STM push of %d events failed (they stay durable): %s", len(pushes), exc)
            return
        for (scope, event), count in zip(pushes, counts):
            if isinstance(count, Exception):
                metrics.STM_PUSH_FAILURES.inc()
                log.warning("STM push failed for %s (event %s stays durable): %s", scope.key, event.event_id, count)
            elif int(count) > 1:
                metrics.STM_COALESCED.inc()

    def request_pipeline_safely(self, scope: AgentScope) -> bool:
        """Request the scope's pipeline run; False when that failed (logged and counted, never raised)."""
        try:
            self.request_pipeline(scope)
        except Exception as exc:  # noqa: BLE001 - retried by the group commit's requester, then the sweeps
            metrics.PIPELINE_PUBLISH.labels("failed").inc()
            log.warning("pipeline enqueue failed for %s; retried, and the sweeps cover it: %s", scope.key, exc)
            return False
        return True


def adds_a_slot(event: Event) -> bool:
    """True when pushing the event always takes a new window slot: only an observation with an
    execution_id may coalesce into the head (push_window.lua)."""
    return not (event.type == EventType.observation and event.metadata.get("execution_id"))


def window_pushes(pushes: list[tuple[AgentScope, Event]], window: int) -> list[tuple[AgentScope, Event]]:
    """The pushes that can still show in their window, in order: an event followed, in the same scope,
    by at least `window` events that each take a new slot would be trimmed out by them, so it is not
    pushed (a batch of 100 messages to one scope pushes its last 10). The window ends exactly as if every
    event were pushed: the kept pushes of a scope begin with a slot-taking event, so nothing they do
    depends on the slots before them. (The coalescing metric does not count skipped pushes.)"""
    later_slots: Counter = Counter()
    keep = [False] * len(pushes)
    for i in range(len(pushes) - 1, -1, -1):
        scope, event = pushes[i]
        if later_slots[scope] < window:
            keep[i] = True
        if adds_a_slot(event):
            later_slots[scope] += 1
    return [push for push, kept in zip(pushes, keep) if kept]
