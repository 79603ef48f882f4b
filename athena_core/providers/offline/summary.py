"""The extractive summary: a TF-IDF sentence graph ranked by TextRank, picked greedily within a budget."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def tfidf_matrix(documents: list[list[str]]) -> np.ndarray:
    """L2-normalised TF-IDF rows (one per document) over a sorted vocabulary, so output is stable."""
    vocabulary = sorted({term for doc in documents for term in doc})
    if not vocabulary:
        return np.zeros((len(documents), 0))
    column = {term: j for j, term in enumerate(vocabulary)}
    counts = np.zeros((len(documents), len(vocabulary)))
    for i, doc in enumerate(documents):
        for term in doc:
            counts[i, column[term]] += 1.0
    document_frequency = (counts > 0).sum(axis=0)
    idf = np.log((1.0 + len(documents)) / (1.0 + document_frequency)) + 1.0
    weighted = counts * idf
    norms = np.linalg.norm(weighted, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return weighted / norms


def textrank(similarity: np.ndarray, damping: float = 0.85, iterations: int = 60) -> np.ndarray:
    """PageRank over the weighted sentence graph: a sentence is central if central sentences echo it.

    Self-loops are ignored; a sentence with no similar neighbour spreads its rank uniformly, so the
    iteration is a proper Markov chain and converges from any start.
    """
    n = similarity.shape[0]
    if n == 0:
        return np.zeros(0)
    graph = similarity.copy()
    np.fill_diagonal(graph, 0.0)
    out_weight = graph.sum(axis=1, keepdims=True)
    transition = np.where(out_weight > 0, graph / np.where(out_weight > 0, out_weight, 1.0), 1.0 / n)
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        updated = (1.0 - damping) / n + damping * transition.T @ rank
        if np.abs(updated - rank).sum() < 1e-10:
            return updated
        rank = updated
    return rank


def informative(centrality: np.ndarray, term_counts: np.ndarray, min_terms: int = 3) -> np.ndarray:
    """Centrality of a sentence with fewer than `min_terms` distinct content terms, in proportion. TextRank
    over TF-IDF favours short sentences: one common word ("photo") makes a two-word sentence similar to
    every sentence holding it, and a chat's summary became its one-liners."""
    return centrality * np.minimum(1.0, term_counts / float(min_terms))


def with_full_stop(text: str) -> str:
    """Chat turns often lack final punctuation; add it so joined sentences stay readable."""
    return text if text[-1] in ".!?" else text + "."


def truncate_words(text: str, max_chars: int) -> str:
    """Cut at a word boundary within max_chars, marking the cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    cut = text[: max(1, max_chars - 1)].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def select_summary(
    sentences: list[str], scores: np.ndarray, vectors: np.ndarray, max_sentences: int, max_chars: int,
    redundancy: float = 0.8, weights: np.ndarray | None = None, captions: Sequence[bool] | None = None,
) -> str:
    """Greedy pick by centrality within the budget, skipping near-duplicates; output in original order.
    With `weights`, sentences of a higher weight are taken first (the conversation before log lines:
    tool output repeats its own words, so it is central to itself), by centrality within one weight.
    Of the sentences flagged in `captions` (a shared picture's annotation), at most one is taken: captions
    share their frame's words, so in a chat of pictures they were central together and the summary said
    what was shown three times over and nothing of what was said."""
    tier = weights if weights is not None else np.ones(len(sentences))
    order = sorted(range(len(sentences)), key=lambda i: (-float(tier[i]), -round(float(scores[i]), 12), i))
    flagged = list(captions) if captions is not None else [False] * len(sentences)
    chosen: list[int] = []
    used = 0
    caption_taken = False
    for i in order:
        if len(chosen) >= max_sentences:
            break
        if flagged[i] and caption_taken:
            continue
        text = with_full_stop(sentences[i])
        extra = len(text) + (1 if chosen else 0)
        if used + extra > max_chars:
            continue
        if vectors.shape[1] and any(float(vectors[i] @ vectors[j]) >= redundancy for j in chosen):
            continue
        chosen.append(i)
        used += extra
        caption_taken = caption_taken or flagged[i]
    if not chosen:  # even the most central sentence is over budget: keep its opening
        return truncate_words(with_full_stop(sentences[order[0]]), max_chars)
    return " ".join(with_full_stop(sentences[i]) for i in sorted(chosen))
