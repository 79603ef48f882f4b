"""Reciprocal rank fusion: one ranking from several retrievers whose scores are not comparable.

BM25 scores, cosines and graph weights live on different scales; RRF uses only ranks:
``score(d) = Σ_r weight_r / (k + rank_r(d))`` with rank starting at 1 (Cormack et al., 2009). A small
``k`` trusts the top of each list more; the default (10) was chosen on offline retrieval runs, see
`docs/retrieval.md`. Each fused item remembers which retrievers found it.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Fused:
    key: str
    score: float = 0.0
    retrievers: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: float = 10.0
) -> list[Fused]:
    """Fuse ranked key lists (best first) into one list, best first; ties keep first-seen order.

    A retriever missing from `weights` counts with weight 1, one with weight ≤ 0 is switched off; a key
    repeated within one list counts once, at its best rank.
    """
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    fused: dict[str, Fused] = {}
    for retriever, keys in rankings.items():
        weight = weights.get(retriever, 1.0)
        if weight <= 0:
            continue
        for rank, key in enumerate(keys, start=1):
            item = fused.setdefault(key, Fused(key))
            if retriever in item.ranks:
                continue
            item.ranks[retriever] = rank
            item.retrievers.append(retriever)
            item.score += weight / (k + rank)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.values(), key=lambda f: (-f.score, order[f.key]))


def rank_bonus(rank: int, weight: float, k: float = 10.0) -> float:
    """What one more list would add for an item at `rank` (1-based): used for context signals."""
    return weight / (k + rank)


def best_keys(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: float, budget: int) -> list[str]:
    """The keys worth loading: every key of the lists (budget ≤ 0), else the `budget` best by a first
    fusion of their ranks. A key past the budget ranks below `budget` others in that fusion, so it could
    only reach a result through signals added after it (neighbours, chain context, length, time order)."""
    if budget <= 0:
        return list(dict.fromkeys(key for keys in rankings.values() for key in keys))
    return [f.key for f in reciprocal_rank_fusion(rankings, weights, k)[:budget]]


def fuse_loaded(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: float, *,
                gone: Collection[str], loaded: Collection[str]) -> tuple[list[Fused], dict[str, int]]:
    """RRF of lists of which only `loaded` keys can be results (a search loads the `best_keys`): `gone`
    keys (loaded and not kept: archived, filtered out) leave the lists; keys never loaded keep their
    place, so every loaded key gets the rank and score it would have with all keys loaded.
    Returns the loaded keys fused, best first, and each one's rank among all fused keys."""
    fused = reciprocal_rank_fusion({name: [key for key in keys if key not in gone] for name, keys in rankings.items()},
                                   weights, k)
    ranks = {f.key: rank for rank, f in enumerate(fused, start=1) if f.key in loaded}
    return [f for f in fused if f.key in loaded], ranks
