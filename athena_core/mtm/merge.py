"""Merge or create: does a new segment continue an existing chain? (SPEC S4)

A conversation that returns to a topic should grow its chain instead of spawning a duplicate. The
decision needs both a similar summary and enough confidence, where confidence rewards closeness in
time and penalises joining chains of very different size (a short aside is rarely the same episode
as a long session).

Pure functions; every SPEC number is a keyword default so callers pass the configured settings.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MergeCandidate",
    "merge_confidence",
    "pick_merge_target",
    "score_candidates",
    "should_merge",
    "union_entities",
]


def merge_confidence(
    similarity: float,
    gap_hours: float,
    event_count_a: int,
    event_count_b: int,
    *,
    near_gap_hours: float = 1.0,
    near_bonus: float = 0.10,
    recent_gap_hours: float = 6.0,
    recent_bonus: float = 0.05,
    count_diff_limit: int = 10,
    count_penalty: float = 0.10,
) -> float:
    """Confidence that two segments are one episode, clamped to [0, 1] (S4).

    similarity + 0.10 if the gap is < 1 h, else + 0.05 if < 6 h (only the larger bonus applies),
    − 0.10 if the event counts differ by more than 10. The gap is taken as an absolute distance, so a
    backfilled segment older than the chain is treated like a newer one. Rounded to 9 decimals so float
    noise (0.65 + 0.05 = 0.7000000000000001) cannot flip a decision at the 0.7 boundary.
    """
    gap = abs(float(gap_hours))
    confidence = float(similarity)
    if gap < near_gap_hours:
        confidence += near_bonus
    elif gap < recent_gap_hours:
        confidence += recent_bonus
    if abs(int(event_count_a) - int(event_count_b)) > count_diff_limit:
        confidence -= count_penalty
    return round(min(1.0, max(0.0, confidence)), 9)


def should_merge(
    similarity: float,
    confidence: float,
    *,
    min_similarity: float = 0.6,
    min_confidence: float = 0.7,
) -> bool:
    """Merge only when the summary cosine is ≥ 0.6 and the merge confidence is ≥ 0.7 (both inclusive)."""
    return similarity >= min_similarity and confidence >= min_confidence


def union_entities(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """Case-insensitive union of two entity lists, keeping first-seen casing and order.

    "Redis" and "redis" are one entity; the chain keeps the spelling it saw first so a merge never
    rewrites names already shown to users. Surrounding whitespace is ignored; empty names are dropped.
    """
    seen: set[str] = set()
    out: list[str] = []
    for name in [*a, *b]:
        cleaned = name.strip()
        key = cleaned.casefold()
        if cleaned and key not in seen:
            seen.add(key)
            out.append(cleaned)
    return out


@dataclass(frozen=True, slots=True)
class MergeCandidate:
    """An existing chain the new segment might join: its summary cosine to the segment, time gap, size."""

    chain_id: str
    similarity: float
    gap_hours: float
    event_count: int


def score_candidates(
    candidates: Sequence[MergeCandidate],
    segment_event_count: int,
    *,
    near_gap_hours: float = 1.0,
    near_bonus: float = 0.10,
    recent_gap_hours: float = 6.0,
    recent_bonus: float = 0.05,
    count_diff_limit: int = 10,
    count_penalty: float = 0.10,
) -> list[tuple[MergeCandidate, float]]:
    """Every candidate with its merge confidence, best first.

    Order: confidence desc, then similarity desc, then smaller gap, then chain_id, so the choice is
    deterministic when the 72 h list and the vector neighbours overlap or tie.
    """
    scored = [
        (
            c,
            merge_confidence(
                c.similarity,
                c.gap_hours,
                c.event_count,
                segment_event_count,
                near_gap_hours=near_gap_hours,
                near_bonus=near_bonus,
                recent_gap_hours=recent_gap_hours,
                recent_bonus=recent_bonus,
                count_diff_limit=count_diff_limit,
                count_penalty=count_penalty,
            ),
        )
        for c in candidates
    ]
    scored.sort(key=lambda pair: (-pair[1], -pair[0].similarity, abs(pair[0].gap_hours), pair[0].chain_id))
    return scored


def pick_merge_target(
    candidates: Sequence[MergeCandidate],
    segment_event_count: int,
    *,
    min_similarity: float = 0.6,
    min_confidence: float = 0.7,
    near_gap_hours: float = 1.0,
    near_bonus: float = 0.10,
    recent_gap_hours: float = 6.0,
    recent_bonus: float = 0.05,
    count_diff_limit: int = 10,
    count_penalty: float = 0.10,
) -> MergeCandidate | None:
    """The highest-confidence candidate that passes `should_merge`, or None (create a new chain).

    `segment_event_count` is the new segment's event count, compared with each candidate's.
    """
    for candidate, confidence in score_candidates(
        candidates,
        segment_event_count,
        near_gap_hours=near_gap_hours,
        near_bonus=near_bonus,
        recent_gap_hours=recent_gap_hours,
        recent_bonus=recent_bonus,
        count_diff_limit=count_diff_limit,
        count_penalty=count_penalty,
    ):
        if should_merge(
            candidate.similarity, confidence, min_similarity=min_similarity, min_confidence=min_confidence
        ):
            return candidate
    return None
