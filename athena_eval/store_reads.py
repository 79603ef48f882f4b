"""What the harness reads of a running stack's stores, through the ports (no adapter tables, no SQL):
so it works whatever engines the stack was configured with.

The stores are opened with the composition root's builders (`athena_core.wiring.runtime`) from the
stack's own `Settings`; the harness knows its sessions, so every read is scoped.
"""
from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from typing import Callable

from datetime import datetime

from athena_core.ltm.promotion import content_hash
from athena_core.models.chains import ChainStatus
from athena_core.models.scope import AgentScope, UserScope
from athena_core.mtm.chain_heat import chain_heat
from athena_core.stores.documents.port import DocumentStore
from athena_core.wiring.runtime import build_documents, build_graph
from athena_core.wiring.settings import Settings
from athena_eval import scoring
from athena_eval.dataset import Conversation

Echo = Callable[[str], None]
EVERYTHING = 10**9  # "no limit" for the ports' paged reads


def open_documents(settings: Settings) -> DocumentStore:
    return build_documents(settings)


def agent_scopes(documents: DocumentStore, session_ids: list[str]) -> list[AgentScope]:
    """The distinct agent scopes of these sessions, in first-seen order."""
    scopes: dict[str, AgentScope] = {}
    for session_id in session_ids:
        session = documents.get_session(session_id)
        if session is not None:
            scopes.setdefault(session.scope.key, session.scope)
    return list(scopes.values())


def user_scopes(scopes: list[AgentScope]) -> list[UserScope]:
    users: dict[tuple[str, str], UserScope] = {}
    for scope in scopes:
        users.setdefault((scope.tenant_id, scope.user_id), scope.user_scope)
    return list(users.values())


def wait_for_vectors(documents: DocumentStore, users: list[UserScope], timeout_s: float, echo: Echo) -> dict:
    """pending_events == 0 once chains are formed; their vectors and lexical docs come one task later (the
    embed/index step, which marks the events indexed last). Wait until no active chain has an event that
    is not yet indexed."""
    start = time.monotonic()
    missing: set[str] = set()
    while True:
        missing = set()
        for user in users:
            active = {c.chain_id for c in documents.recent_chains(user, limit=EVERYTHING)}
            waiting = {e.chain_id for e in documents.unindexed_events(user, EVERYTHING)}
            missing |= active & waiting
        if not missing or time.monotonic() - start >= timeout_s:
            break
        time.sleep(1.0)
    if missing:
        echo(f"  {len(missing)} active chains still have no vector after {timeout_s:.0f} s")
    return {"chains_without_vector": len(missing), "vector_wait_s": round(time.monotonic() - start, 1)}


def chains_awaiting_promotion(documents: DocumentStore, users: list[UserScope], settings: Settings,
                              now: datetime) -> int:
    """Active chains the promoter would promote now (SPEC S6.1): heat ≥ the threshold and content not yet
    promoted. Zero once a promotion pass is through."""
    awaiting = 0
    for user in users:
        for chain in documents.recent_chains(user, limit=EVERYTHING):
            hot = chain_heat(chain, now, settings.heat_tau_hours).heat >= settings.promote_threshold
            awaiting += hot and chain.promoted_evidence != content_hash(chain)
    return awaiting


def graph_sizes(settings: Settings, users: list[UserScope]) -> dict[str, dict[str, int]]:
    """user id → {nodes, edges} of the user's knowledge graph, read through the graph port."""
    graph = build_graph(settings)
    try:
        return {u.user_id: dict(zip(("nodes", "edges"), graph.count(u))) for u in users}
    finally:
        graph.close()


class EventLogReader:
    """Event → turn id, read from the stack's event log while it runs."""

    def __init__(self, documents: DocumentStore, tenant_id: str) -> None:
        self.documents = documents
        self.tenant_id = tenant_id
        self._cache: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def turn_ids(self, user_id: str, event_ids: list[str]) -> dict[str, str | None]:
        with self._lock:
            missing = [e for e in event_ids if e not in self._cache]
            if missing:
                scope = UserScope(tenant_id=self.tenant_id, user_id=user_id)
                found = {e.event_id: e.metadata.get("turn_id") for e in self.documents.get_events(scope, missing)}
                for event_id in missing:
                    self._cache[event_id] = found.get(event_id)
            return {e: self._cache[e] for e in event_ids}


def pipeline_stats(documents: DocumentStore, scopes: list[AgentScope], conversations: list[Conversation]) -> dict:
    """What the pipeline made of the corpus: event outcomes, chains, their sizes and session spans."""
    status: Counter[str] = Counter()
    event_session: dict[str, str | None] = {}
    for scope in scopes:
        for event in documents.recent_events(scope, EVERYTHING):
            status[event.status.value] += 1
            event_session[event.event_id] = event.metadata.get("session")
    docs = [c.model_dump(mode="json") for user in user_scopes(scopes)
            for c in documents.recent_chains(user, limit=EVERYTHING, status=None)]
    dead = len(documents.dead_letters(EVERYTHING))
    sizes = [d["event_count"] for d in docs]
    summary_tokens = [scoring.approx_tokens(d["summary"]) for d in docs]
    spans = [len({event_session.get(e) for e in d["event_ids"]} - {None}) for d in docs]
    quality = [d.get("quality", {}).get("overall") for d in docs if isinstance(d.get("quality"), dict)]
    n_sessions = sum(len(c.sessions) for c in conversations)

    def dist(values: list[float]) -> dict | None:
        if not values:
            return None
        ordered = sorted(values)
        return {"mean": round(statistics.fmean(ordered), 2), "median": ordered[len(ordered) // 2],
                "min": ordered[0], "max": ordered[-1]}

    return {
        "events_by_status": dict(status),
        "chains": len(docs),
        "chains_active": sum(1 for d in docs if d.get("status") == ChainStatus.active.value),
        "chains_per_locomo_session": round(len(docs) / n_sessions, 2) if n_sessions else None,
        "events_per_chain": dist(sizes),
        "summary_tokens": dist(summary_tokens),
        "summary_tokens_per_event": round(sum(summary_tokens) / max(sum(sizes), 1), 3),
        "sessions_spanned_per_chain": dist(spans),
        "chains_spanning_several_sessions": sum(1 for s in spans if s > 1),
        "quality_overall": dist([q for q in quality if q is not None]),
        "dead_letters": dead,
    }
