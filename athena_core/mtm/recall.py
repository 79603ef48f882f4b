"""Reading the MTM back (SPEC S2, S5.2): relevant pages, SearchMemory, topics; every return is an access."""
from __future__ import annotations

from datetime import datetime

from typing import TYPE_CHECKING

from pydantic import BaseModel

from athena_core import metrics
from athena_core.heat import recall_on_access
from athena_core.models.chains import Chain
from athena_core.models.scope import UserScope
from athena_core.providers.embeddings import Embedder
from athena_core.settings import Settings
from athena_core.stores.ports import DocumentStore, VectorIndex

if TYPE_CHECKING:
    from athena_core.ltm.retrieval import FactView


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


class SearchResult(BaseModel):
    """SPEC S2 SearchMemory result."""

    content: str
    similarity_score: float
    source_type: str  # chain | fact
    source_id: str
    timestamp: datetime
    topic: str | None = None


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
    """SPEC S2: every pair of the filter must be equal in the chain's metadata."""
    return not wanted or all(metadata.get(k) == v for k, v in wanted.items())


class MemoryReader:
    def __init__(self, documents: DocumentStore, vectors: VectorIndex, embedder: Embedder, settings: Settings):
        self.documents = documents
        self.vectors = vectors
        self.embedder = embedder
        self.settings = settings

    def nearest(self, scope: UserScope, query: str, limit: int) -> list[tuple[Chain, float]]:
        """The user's chains nearest to the query, most similar first (active chains have vectors)."""
        hits = self.vectors.search(scope, self.embedder.embed([query])[0], limit)
        chains = {c.chain_id: c for c in self.documents.get_chains(scope, [h.chain_id for h in hits])}
        return [(chains[h.chain_id], h.similarity) for h in hits if h.chain_id in chains]

    def relevant_pages(self, scope: UserScope, query: str, pages: int, now: datetime) -> list[ChainPage]:
        if pages <= 0:
            return []
        if query.strip():
            found = self.nearest(scope, query, pages)
        else:
            found = [(c, None) for c in self.documents.recent_chains(scope, limit=pages)]
        self.access(scope, [c for c, _ in found], now)
        return [page_of(c, s) for c, s in found]

    def search(
        self, scope: UserScope, query: str, limit: int, now: datetime,
        similarity_threshold: float | None = None, metadata_filter: dict[str, str] | None = None,
    ) -> list[SearchResult]:
        overfetch = max(limit * 4, 20) if (metadata_filter or similarity_threshold is not None) else limit
        results: list[tuple[Chain, float]] = []
        for chain, similarity in self.nearest(scope, query, overfetch):
            if similarity_threshold is not None and similarity < similarity_threshold:
                continue
            if not matches_filter(chain.metadata, metadata_filter):
                continue
            results.append((chain, similarity))
        results.sort(key=lambda pair: -pair[1])
        results = results[:limit]
        self.access(scope, [c for c, _ in results], now)
        return [
            SearchResult(content=c.summary, similarity_score=round(s, 6), source_type="chain", source_id=c.chain_id,
                         timestamp=c.last_event_at, topic=c.topic)
            for c, s in results
        ]

    def fact_results(self, query: str, facts: list["FactView"]) -> list[SearchResult]:
        """Graph enrichment: each fact as a result, scored by the cosine of its statement to the query."""
        if not facts:
            return []
        vectors = self.embedder.embed([query, *(f.statement for f in facts)])
        return [
            SearchResult(content=f.statement, similarity_score=round(float(vectors[0] @ v), 6), source_type="fact",
                         source_id=f.edge_id, timestamp=f.valid_at)
            for f, v in zip(facts, vectors[1:])
        ]

    def access(self, scope: UserScope, chains: list[Chain], now: datetime) -> None:
        """SPEC S5.2: last_accessed_at = now; S ×= 1.5 when the previous access was ≥ 12 h ago."""
        accesses = [
            (c.chain_id, now, recall_on_access(c.recall_strength, c.last_accessed_at, now,
                                               spacing_hours=self.settings.recall_spacing_hours,
                                               factor=self.settings.recall_factor))
            for c in chains
        ]
        self.documents.touch_chains(scope, accesses)
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
