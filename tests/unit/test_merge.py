"""SPEC S4: merge confidence, merge decision, entity union, candidate choice."""
from __future__ import annotations

import pytest

from athena_core.mtm.merge import (
    MergeCandidate,
    merge_confidence,
    pick_merge_target,
    score_candidates,
    should_merge,
    union_entities,
)


@pytest.mark.parametrize(
    ("gap", "expected"),
    [
        (0.0, 0.70), (0.5, 0.70), (0.999, 0.70),
        (1.0, 0.65), (3.0, 0.65), (5.99, 0.65),
        (6.0, 0.60), (7.0, 0.60),
    ],
)
def test_gap_bonus_only_the_larger_applies(gap: float, expected: float) -> None:
    assert merge_confidence(0.6, gap, 5, 5) == pytest.approx(expected)


@pytest.mark.parametrize(("a", "b", "expected"), [(1, 12, 0.6), (12, 1, 0.6), (1, 11, 0.7), (30, 20, 0.7)])
def test_event_count_penalty(a: int, b: int, expected: float) -> None:
    assert merge_confidence(0.7, 10.0, a, b) == pytest.approx(expected)


def test_adjustments_combine_and_clamp() -> None:
    assert merge_confidence(0.8, 0.5, 1, 20) == pytest.approx(0.8)  # +0.10 −0.10
    assert merge_confidence(0.95, 0.5, 3, 3) == 1.0
    assert merge_confidence(0.05, 10, 1, 100) == 0.0
    assert merge_confidence(-0.3, 0.5, 1, 1) == 0.0


def test_negative_gap_is_a_distance() -> None:
    assert merge_confidence(0.6, -0.5, 1, 1) == merge_confidence(0.6, 0.5, 1, 1)


def test_confidence_is_exact_at_the_threshold() -> None:
    # 0.65 + 0.05 is 0.7000000000000001 in floats; rounding keeps the boundary honest.
    assert merge_confidence(0.65, 3.0, 1, 1) == 0.7
    assert merge_confidence(0.6, 0.5, 1, 1) == 0.7


def test_should_merge_boundaries() -> None:
    assert should_merge(0.6, 0.7)
    assert not should_merge(0.5999, 0.7)
    assert not should_merge(0.6, 0.6999)
    assert should_merge(0.9, 1.0)
    assert should_merge(0.5, 0.6, min_similarity=0.5, min_confidence=0.6)


def test_union_entities_case_insensitive_first_casing_kept() -> None:
    merged = union_entities(["Redis", "Celery"], ["redis", "AOF", "celery", "RDB"])
    assert merged == ["Redis", "Celery", "AOF", "RDB"]
    assert union_entities([], ["Go", "GO", "go"]) == ["Go"]
    assert union_entities(["  Milvus ", ""], ["milvus"]) == ["Milvus"]
    assert union_entities(["Straße"], ["STRASSE"]) == ["Straße"]  # casefold, not lower
    assert union_entities([], []) == []


def test_pick_merge_target_best_passing_candidate() -> None:
    cands = [
        MergeCandidate("far", similarity=0.68, gap_hours=30, event_count=5),  # conf 0.68: fails
        MergeCandidate("recent", similarity=0.66, gap_hours=3, event_count=5),  # conf 0.71
        MergeCandidate("near", similarity=0.62, gap_hours=0.5, event_count=5),  # conf 0.72: best
        MergeCandidate("big", similarity=0.75, gap_hours=0.5, event_count=40),  # conf 0.75 (−0.10)
        MergeCandidate("dissimilar", similarity=0.55, gap_hours=0.1, event_count=5),  # conf 0.65, sim < 0.6
    ]
    best = pick_merge_target(cands, segment_event_count=6)
    assert best is not None and best.chain_id == "big"
    best = pick_merge_target(cands[:3] + cands[4:], segment_event_count=6)
    assert best is not None and best.chain_id == "near"


def test_pick_merge_target_none_and_similarity_floor() -> None:
    assert pick_merge_target([], 3) is None
    # enough confidence (0.59 + 0.10 + 0.10 bonus via settings) is not enough without similarity >= 0.6
    close = MergeCandidate("x", 0.59, 0.1, 3)
    assert merge_confidence(0.59, 0.1, 3, 3, near_bonus=0.2) >= 0.7
    assert pick_merge_target([close], 3, near_bonus=0.2) is None
    assert pick_merge_target([close], 3, near_bonus=0.2, min_similarity=0.55) == close


def test_score_candidates_is_deterministic_on_ties() -> None:
    a = MergeCandidate("b-chain", 0.7, 10, 3)
    b = MergeCandidate("a-chain", 0.7, 10, 3)
    ranked = score_candidates([a, b], 3)
    assert [c.chain_id for c, _ in ranked] == ["a-chain", "b-chain"]
    assert all(conf == pytest.approx(0.7) for _, conf in ranked)
