"""The write side of hybrid search: what the pipeline's embed step indexes for each consolidated chain.

Three indexes, all user-scoped: the chain vector (its summary), one vector per event, and lexical docs
for the events' verbatim text and the chain's summary. Everything is an upsert keyed by id, so a retried
or re-delivered embed step changes nothing; archival and purge remove what they remove everywhere.
"""
from __future__ import annotations

from athena_core.models.chains import Chain
from athena_core.models.events import Event
from athena_core.models.scope import UserScope
from athena_core.providers.embeddings import Embedder
from athena_core.retrieval.sentences import sentence_texts, sentence_vector_id, sentence_vector_ids
from athena_core.stores.lexical.port import LexicalDoc, LexicalIndex
from athena_core.stores.vectors.port import VectorIndex


class EvidenceIndex:
    def __init__(self, chain_vectors: VectorIndex, event_vectors: VectorIndex, lexical: LexicalIndex,
                 embedder: Embedder, *, sentence_min_words: int) -> None:
        self.chain_vectors = chain_vectors
        self.event_vectors = event_vectors
        self.lexical = lexical
        self.embedder = embedder
        self.sentence_min_words = sentence_min_words  # `search_sentence_min_words`; 0: no sentence vectors

    def index(self, scope: UserScope, chains: list[Chain], events: list[Event]) -> int:
        """Index active chains and events, either may be empty: events are indexed as they arrive, pending or
        not (issue 15), chains when formed or merged. Events with empty content are kept out; returns events
        indexed."""
        if chains:
            self.chain_vectors.upsert_many(scope, [c.chain_id for c in chains],
                                           self.embedder.embed([c.search_text for c in chains]))
        texts = [e for e in events if e.content.strip()]
        if texts:
            ids, bodies = [e.event_id for e in texts], [e.content for e in texts]
            for e in texts:
                for i, sentence in enumerate(sentence_texts(e.content, self.sentence_min_words)):
                    ids.append(sentence_vector_id(e.event_id, i))
                    bodies.append(sentence)
            self.event_vectors.upsert_many(scope, ids, self.embedder.embed(bodies))
        self.lexical.upsert(scope, [LexicalDoc(c.chain_id, "chain", c.search_text) for c in chains] +
                            [LexicalDoc(e.event_id, "event", e.content) for e in texts])
        return len(texts)

    def remove_events(self, scope: UserScope, event_ids: list[str]) -> None:
        """Events that must not be found (a rejected segment's, when `index_rejected_events` is off)."""
        if event_ids:
            self.event_vectors.delete(scope, event_ids + [s for e in event_ids for s in sentence_vector_ids(e)])
            self.lexical.delete(scope, "event", event_ids)

    def remove(self, scope: UserScope, chains: list[Chain]) -> None:
        """Archived chains leave every index (their knowledge stays in the graph, SPEC S7)."""
        if not chains:
            return
        chain_ids = [c.chain_id for c in chains]
        event_ids = [e for c in chains for e in c.event_ids]
        self.chain_vectors.delete(scope, chain_ids)
        self.event_vectors.delete(scope, event_ids + [s for e in event_ids for s in sentence_vector_ids(e)])
        self.lexical.delete(scope, "chain", chain_ids)
        self.lexical.delete(scope, "event", event_ids)

    def delete_user(self, scope: UserScope) -> dict[str, int]:
        return {"chain_vectors": self.chain_vectors.delete_user(scope),
                "event_vectors": self.event_vectors.delete_user(scope),
                "lexical": self.lexical.delete_user(scope)}
