"""Baselines over the raw turns of a conversation (SPEC S9): Okapi BM25 and dense retrieval.

Both rank the same turn texts Athena ingested ("Speaker: text [shares a photo: …]") and return the top k
turns as `Result`s, so they are scored by exactly the same functions as Athena's chains.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from athena_core.text.tokens import word_tokens
from athena_eval.scoring import Result

def tokenize(text: str) -> list[str]:
    return word_tokens(text)


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) over a small corpus, numpy only."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        tokenised = [tokenize(d) for d in docs]
        self.n = len(docs)
        self.lengths = np.array([len(t) for t in tokenised], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if self.n else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, toks in enumerate(tokenised):
            for term, tf in Counter(toks).items():
                self.postings[term].append((i, tf))

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float64)
        if not self.n:
            return out
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.avgdl, 1e-9))
        for term in set(tokenize(query)):
            posting = self.postings.get(term)
            if not posting:
                continue
            df = len(posting)
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            idx = np.fromiter((p[0] for p in posting), dtype=np.int64, count=df)
            tf = np.fromiter((p[1] for p in posting), dtype=np.float64, count=df)
            out[idx] += idf * tf * (self.k1 + 1) / (tf + norm[idx])
        return out


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best scores, best first; ties keep corpus order."""
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def _results(turn_ids: list[str], texts: list[str], scores: np.ndarray, k: int) -> list[Result]:
    return [Result(text=texts[i], turn_ids=(turn_ids[i],), score=float(scores[i]), source_id=turn_ids[i])
            for i in top_k(scores, k)]


def bm25_search(turn_ids: list[str], texts: list[str], queries: list[str], k: int) -> list[list[Result]]:
    index = BM25(texts)
    return [_results(turn_ids, texts, index.scores(q), k) for q in queries]


def dense_search(embedder, turn_ids: list[str], texts: list[str], queries: list[str], k: int) -> list[list[Result]]:
    """Cosine over `embedder` vectors (rows are L2-normalised), the same model the pipeline embeds with."""
    if not texts or not queries:
        return [[] for _ in queries]
    embed_q = getattr(embedder, "embed_query", embedder.embed)
    embed_p = getattr(embedder, "embed_passages", embedder.embed)
    scores = np.asarray(embed_q(queries)) @ np.asarray(embed_p(texts)).T
    return [_results(turn_ids, texts, row, k) for row in scores]
