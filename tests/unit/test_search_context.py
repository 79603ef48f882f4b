"""An event's context in hybrid search (`HybridSearch._candidates`): an event in a chain gains its chain's
rank; a pending event, whose chain is not formed yet, is its own context at its best rank (SPEC S2
freshness: on `make run`, a user's newest words came 13th for their own wording behind the turns of an
older chain on the topic, now 5th); an event of a rejected segment gains none."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from athena_core.models.chains import Chain
from athena_core.models.events import Event, EventRole, EventStatus, EventType
from athena_core.retrieval.fusion import Fused, rank_bonus
from athena_core.retrieval.hybrid_search import HybridSearch
from athena_core.wiring.settings import Settings

AT = datetime(2026, 12, 1, tzinfo=timezone.utc)
BOTH_FIRST = {"lexical": 1, "dense": 1}


def _event(event_id: str, status: EventStatus, chain_id: str | None = None) -> Event:
    return Event(event_id=event_id, tenant_id="t", user_id="u", agent_id="a", session_id="s", role=EventRole.user,
                 type=EventType.message, content=f"text of {event_id}", timestamp=AT, received_at=AT, status=status,
                 chain_id=chain_id)


def _fused(key: str, ranks: dict[str, int], k: float) -> Fused:
    return Fused(key, sum(1.0 / (k + r) for r in ranks.values()), list(ranks), dict(ranks))


def _scores(settings: Settings, chain_rank: int, fused: list[Fused], events: dict[str, Event]) -> dict[str, float]:
    """Each event's score out of `_candidates` (no stores are read there: none given)."""
    search = HybridSearch(documents=None, chain_vectors=None, event_vectors=None, lexical=None, graph=None,
                          embedder=None, on_access=lambda *args: None, settings=settings)
    chains = {"chn_old": Chain.model_construct(chain_id="chn_old", topic="adoption")}
    in_chains = {f.key: (f.score, list(f.retrievers)) for f in fused if events[f.key].chain_id}
    candidates = search._candidates([], {"chn_old": chain_rank}, fused, in_chains, events, chains, {}, {})
    return {c.hit.source_id: c.hit.score for c in candidates}


@pytest.mark.parametrize("best_rank", [1, 3])
def test_a_pending_event_is_its_own_context_at_its_best_rank(best_rank: int) -> None:
    settings = Settings()
    k, weight = settings.search_rrf_k, settings.search_weight_chain
    ranks = {"lexical": best_rank, "dense": best_rank + 4}
    events = {"old": _event("old", EventStatus.consolidated, "chn_old"), "new": _event("new", EventStatus.pending),
              "rejected": _event("rejected", EventStatus.rejected)}
    fused = [_fused(key, ranks, k) for key in events]
    scores = _scores(settings, best_rank, fused, events)
    plain = fused[0].score
    assert scores["old"] == pytest.approx(plain + rank_bonus(best_rank, weight, k))  # its chain at that rank
    assert scores["new"] == pytest.approx(scores["old"])  # the same context, its own
    assert scores["rejected"] == pytest.approx(plain)  # a rejected segment lends no context


def test_no_chain_weight_no_context() -> None:
    settings = Settings(search_weight_chain=0.0)
    events = {"new": _event("new", EventStatus.pending)}
    fused = [_fused("new", BOTH_FIRST, settings.search_rrf_k)]
    assert _scores(settings, 1, fused, events)["new"] == pytest.approx(fused[0].score)
