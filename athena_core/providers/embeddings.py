"""The embedding port (SPEC S8) and the cache that sits in front of every engine.

Vectors are float32, L2-normalised, shape (n, dimension), so a dot product is the cosine similarity.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from athena_core.observability import metrics


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    model_name: str
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dimension), float32, each row L2-normalised."""
        ...

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """As `embed`, for search queries: an engine may embed them in another form (e5's "query: "
        side) or faster at a small cost in accuracy (MiniLM's int8 queries); stored texts use `embed`."""
        ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise each row; a zero row stays zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class CachedEmbedder:
    """An in-process LRU cache keyed by (model and form, sha256(text)) in front of any Embedder.

    The pipeline embeds the same user message twice (break gate, then chain), and queries repeat,
    so the cache saves a model call on most of them. `hits` and `misses` feed the metrics. Queries
    (`embed_query`) are kept apart from stored texts: the engine may give them other vectors.
    """

    def __init__(self, inner: Embedder, max_entries: int = 50_000) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def _key(self, text: str, form: str) -> tuple[str, str]:
        return (f"{self.model_name}:{form}", hashlib.sha256(text.encode("utf-8")).hexdigest())

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._cached(texts, "text", self.inner.embed)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        return self._cached(texts, "query", self.inner.embed_query)

    def _cached(self, texts: list[str], form: str, embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing: dict[tuple[str, str], list[int]] = {}
        for i, text in enumerate(texts):
            key = self._key(text, form)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                out[i] = cached
                self.hits += 1
                metrics.EMBEDDING_CACHE.labels("hit").inc()
            else:
                missing.setdefault(key, []).append(i)
        if missing:
            self.misses += len(missing)
            metrics.EMBEDDING_CACHE.labels("miss").inc(len(missing))
            first_index = [positions[0] for positions in missing.values()]
            fresh = embed([texts[i] for i in first_index])
            for (key, positions), vector in zip(missing.items(), fresh):
                for i in positions:
                    out[i] = vector
                self._cache[key] = vector
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return out
