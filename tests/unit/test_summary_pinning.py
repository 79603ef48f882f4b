"""`pin_summaries` (ATHENA_SEARCH_PINNED_SUMMARIES > 0): a pinned chain summary moves right before its chain's
best event; with none pinned (the default) every result keeps its own rank."""
from __future__ import annotations

from datetime import datetime, timezone

from athena_core.retrieval.search_hit import Candidate, HitDraft, Span
from athena_core.retrieval.summary_pinning import pin_summaries

T = datetime(2026, 1, 5, tzinfo=timezone.utc)


def _candidate(kind: str, source_id: str, chain_id: str, score: float) -> Candidate:
    return Candidate(HitDraft(content=source_id, similarity_score=None, score=score, source_type=kind,
                              source_id=source_id, timestamp=T, time_span=Span(T, T), retrievers=["lexical"],
                              chain_id=chain_id), chain_id)


def _ranked() -> list[Candidate]:
    return [
        _candidate("event", "e1", "c1", 0.9),
        _candidate("event", "e2", "c2", 0.8),
        _candidate("chain", "c2", "c2", 0.7),
        _candidate("event", "e3", "c1", 0.6),
        _candidate("chain", "c1", "c1", 0.5),
    ]


def test_a_pinned_summary_moves_before_its_chains_best_event_and_takes_its_score() -> None:
    out = pin_summaries(_ranked(), ["c1"])
    assert [c.hit.source_id for c in out] == ["c1", "e1", "e2", "c2", "e3"]
    assert out[0].hit.score == 0.9


def test_with_none_pinned_every_result_keeps_its_rank() -> None:
    out = pin_summaries(_ranked(), [])
    assert [c.hit.source_id for c in out] == ["e1", "e2", "c2", "e3", "c1"]
