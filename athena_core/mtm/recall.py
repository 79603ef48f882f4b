"""Reading the MTM back (SPEC S2, S5.2): relevant pages, topics; every return is an access.

SearchMemory itself is hybrid (`athena_core.retrieval.hybrid_search`) and uses `access` from here."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel

from athena_core.observability import metrics
from athena_core.mtm.access_writer import Touch
from athena_core.mtm.heat import recall_on_access
from athena_core.models.chains import Chain
from athena_core.models.scope import UserScope
from athena_core.providers.embeddings import Embedder
from athena_core.wiring.settings import Settings
from athena_core.stores.documents.port import ChainStore
from athena_core.stores.vectors.port import VectorIndex


class ChainPage(BaseModel):
    """A chain as GetContext returns it."""

    chain_id: str
    topic: str
    summary: str
    entities: list[str]
    similarity: float | None
    started_at: datetime
    last_event_at: datetime
    event_count: int
    heat_score: float
    metadata: dict[str, str]


ChainRanker = Callable[[UserScope, str, datetime, int], list[tuple[Chain, "float | None"]]]


class TopicStat(BaseModel):
    topic: str
    confidence: float
    frequency: int
    last_mentioned: datetime


def page_of(chain: Chain, similarity: float | None) -> ChainPage:
    return ChainPage(
        chain_id=chain.chain_id, topic=chain.topic, summary=chain.summary, entities=chain.entities,
        similarity=similarity, started_at=chain.started_at, last_event_at=chain.last_event_at,
        event_count=chain.event_count, heat_score=chain.heat_score, metadata=chain.metadata,
    )


def matches_filter(metadata: dict[str, str], wanted: dict[str, str] | None) -> bool:
    """SPEC S2: every pair of the filter is equal in this metadata (an event's, or a chain's, which holds
    its sessions' metadata). SearchMemory decides which metadata a result is tested on
    (`HybridSearch._filtered`)."""
    return not wanted or all(metadata.get(k) == v for k, v in wanted.items())


class MemoryReader:
    """`touch` records accesses: the store's `touch_chains` by default (in the read), the API passes an
    `AccessWriter`'s `submit` (beside it, `access_writer.py`)."""

    def __init__(self, documents: ChainStore, vectors: VectorIndex, embedder: Embedder, settings: Settings,
                 touch: Touch | None = None):
        self.documents = documents
        self.vectors = vectors
        self.embedder = embedder
        self.settings = settings
        self.touch = touch or documents.touch_chains

    def relevant_pages(self, scope: UserScope, query: str, pages: int, now: datetime,
                       rank: "ChainRanker") -> list[ChainPage]:
        """Chains for a query, in `rank`'s order (hybrid search), else the most recent ones."""
        if pages <= 0:
            return []
        if query.strip():
            found = rank(scope, query, now, pages)
        else:
            found = [(c, None) for c in self.documents.recent_chains(scope, limit=pages)]
        self.access(scope, [c for c, _ in found], now)
        return [page_of(c, s) for c, s in found]

    def access(self, scope: UserScope, chains: list[Chain], now: datetime) -> None:
        """SPEC S5.2: last_accessed_at = now; S ×= 1.5 when the previous access was ≥ 12 h ago."""
        accesses = [
            (c.chain_id, now, recall_on_access(c.recall_strength, c.last_accessed_at, now,
                                               spacing_hours=self.settings.recall_spacing_hours,
                                               factor=self.settings.recall_factor))
            for c in chains
        ]
        self.touch(scope, accesses)
        metrics.CHAINS_ACCESSED.inc(len(accesses))


def topic_stats(chains: list[Chain]) -> list[TopicStat]:
    """AnalyzeTopics: each chain's topic (confidence = its quality) and kept subtopics, grouped."""
    stats: dict[str, TopicStat] = {}
    for chain in chains:
        mentions = [(chain.topic, chain.quality.overall)] + [(s.theme, s.confidence) for s in chain.subtopics]
        for topic, confidence in mentions:
            key = topic.strip().lower()
            if not key:
                continue
            current = stats.get(key)
            if current is None:
                stats[key] = TopicStat(topic=topic, confidence=confidence, frequency=1, last_mentioned=chain.last_event_at)
            else:
                current.frequency += 1
                current.confidence = max(current.confidence, confidence)
                current.last_mentioned = max(current.last_mentioned, chain.last_event_at)
    return sorted(stats.values(), key=lambda s: (-s.frequency, -s.last_mentioned.timestamp(), s.topic))
