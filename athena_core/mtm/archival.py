"""Archival (SPEC S7): cold chains are frozen — search indexes and blobs dropped, graph knowledge kept."""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

from athena_core.models.chains import Chain
from athena_core.models.scope import UserScope
from athena_core.mtm.chain_heat import idle_days
from athena_core.stores.blobs.port import BlobStore
from athena_core.stores.documents.port import ChainStore, EventLog


class SearchIndexes(Protocol):
    """What archival needs of the search indexes (retrieval's `EvidenceIndex` is one): drop the chains."""

    def remove(self, scope: UserScope, chains: list[Chain]) -> None: ...


class ArchivalDocuments(EventLog, ChainStore, Protocol):
    """The event log (for the chain's blobs) and the chains (to archive it)."""


def should_archive(chain: Chain, heat: float, now: datetime, *, max_heat: float = 0.1, min_idle_days: float = 7.0) -> bool:
    """Idle ≥ 7 days (no event, no access) and heat < 0.1."""
    return heat < max_heat and idle_days(chain, now) >= min_idle_days


def archive(
    chain: Chain, now: datetime, documents: "ArchivalDocuments", index: SearchIndexes, blobs: BlobStore | None
) -> bool:
    """Search indexes and blobs first, then the status: a crash in between leaves an active chain to retry."""
    scope = UserScope(tenant_id=chain.tenant_id, user_id=chain.user_id)
    index.remove(scope, [chain])
    if blobs is not None:
        for event in documents.get_events(scope, chain.event_ids):
            if event.blob_uri:
                blobs.delete(event.blob_uri)
    return documents.archive_chain(scope, chain.chain_id, now)
