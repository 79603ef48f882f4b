"""Time cues applied to candidates: a bonus for evidence inside the asked window, and for "first" /
"currently" a bonus among the best candidates by how early (or late) each is."""
from __future__ import annotations

from athena_core.retrieval.fusion import rank_bonus
from athena_core.retrieval.search_hit import Candidate
from athena_core.retrieval.time_cues import TimeCues


def apply_time_cues(candidates: list[Candidate], cues: TimeCues, *, weight: float, rrf_k: int,
                    rerank: int) -> None:
    """A window bonus (a first-rank RRF bonus at `weight`) for evidence inside the asked time; for an
    order cue, among the best `rerank` candidates a share of that bonus that grows with how early (or
    late) each is within their time range. In place."""
    if not cues.any or weight <= 0:
        return
    bonus = rank_bonus(1, weight, rrf_k)
    if cues.window is not None:
        for c in candidates:
            span = c.hit.time_span
            if span.start < cues.window[1] and span.end >= cues.window[0]:
                c.hit.score += bonus
    if cues.order is not None:
        # among the best candidates, a bonus by position in time: full for the earliest (or latest)
        best = sorted(candidates, key=lambda c: -c.hit.score)[:rerank]
        times = [(c.hit.time_span.start if cues.order == "earliest" else c.hit.time_span.end).timestamp()
                 for c in best]
        if times and max(times) > min(times):
            lo, hi = min(times), max(times)
            for c, at in zip(best, times):
                position = (hi - at) / (hi - lo) if cues.order == "earliest" else (at - lo) / (hi - lo)
                c.hit.score += bonus * position
