"""Neighbour retrieval: the events next to a found event in its chain get a share of its score (the answer
is often the reply to the matching turn)."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from athena_core.models.chains import Chain
from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import UserScope
from athena_core.retrieval.fusion import Fused
from athena_core.stores.documents.port import DocumentStore


def with_neighbours(documents: DocumentStore, scope: UserScope, fused: list[Fused], events: dict[str, Event],
                    chains: dict[str, Chain], share: float,
                    keep_event: Callable[[Event], bool] | None = None) -> dict[str, tuple[float, list[str]]]:
    """event id → (score, retrievers), where each found event lends `share` of its score to the events
    just before and after it in its chain. Neighbours not found by any retriever are loaded (into
    `events`) and marked found by "neighbour"; `keep_event` (a metadata filter) may refuse them."""
    scores = {f.key: (f.score, list(f.retrievers)) for f in fused}
    if share <= 0 or not fused:
        return scores
    wanted = {events[f.key].chain_id for f in fused}
    position = {c: {e: i for i, e in enumerate(chains[c].event_ids)} for c in wanted}
    lent: dict[str, float] = defaultdict(float)
    for f in fused:
        chain = chains[events[f.key].chain_id]
        i = position[chain.chain_id].get(f.key)
        if i is None:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(chain.event_ids):
                lent[chain.event_ids[j]] += share * f.score
    missing = [e for e in lent if e not in events]
    for event in documents.get_events(scope, missing) if missing else []:
        if event.status == EventStatus.consolidated and event.chain_id in chains and (
                keep_event is None or keep_event(event)):
            events[event.event_id] = event
    for event_id, extra in lent.items():
        if event_id not in events:
            continue
        score, retrievers = scores.get(event_id, (0.0, []))
        scores[event_id] = (score + extra, [*retrievers, "neighbour"])
    return scores
