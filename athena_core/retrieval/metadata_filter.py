"""SearchMemory's metadata `filter` (SPEC S2): which found events and chains it keeps."""
from __future__ import annotations

from collections.abc import Callable

from athena_core.models.chains import Chain
from athena_core.models.events import Event
from athena_core.models.scope import UserScope
from athena_core.mtm.recall import matches_filter
from athena_core.stores.documents.port import DocumentStore

FILTER_EVENT_SCAN = 5000  # with a `filter`: most events read from the log to test the candidate chains' events


def filtered(documents: DocumentStore, scope: UserScope, events: dict[str, Event], chains: dict[str, Chain],
             wanted: dict[str, str]) -> tuple[dict[str, Event], dict[str, Chain], Callable[[Event], bool]]:
    """All pairs of `wanted` equal, on event and session metadata:

    - an event is kept when its own metadata matches, or its chain's metadata does (a chain carries
      its sessions' metadata);
    - a chain (its summary) is kept when its metadata matches, or any of its events' metadata does
      (read from the log for chains none of whose found events matched), so a topic the filtered
      events belong to is shown with them.
    Facts are not filtered (graph facts carry no metadata). Returns the kept events and chains and
    the event test (for neighbours loaded later).
    """
    def keep_event(event: Event) -> bool:
        chain = chains.get(event.chain_id or "")
        return matches_filter(event.metadata, wanted) or (chain is not None and matches_filter(chain.metadata, wanted))

    kept_events = {i: e for i, e in events.items() if keep_event(e)}
    kept_chains = {c.chain_id: c for c in chains.values()
                   if matches_filter(c.metadata, wanted) or any(e.chain_id == c.chain_id for e in kept_events.values())}
    unknown = [i for c in chains.values() if c.chain_id not in kept_chains for i in c.event_ids if i not in events]
    for event in documents.get_events(scope, unknown[:FILTER_EVENT_SCAN]) if unknown else []:
        if event.chain_id in chains and event.chain_id not in kept_chains and matches_filter(event.metadata, wanted):
            kept_chains[event.chain_id] = chains[event.chain_id]
    return kept_events, kept_chains, keep_event
