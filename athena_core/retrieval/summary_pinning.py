"""Chain summaries read beside their evidence: a pinned summary moves right before its chain's best event."""
from __future__ import annotations

from athena_core.retrieval.search_hit import Candidate


def pin_summaries(ranked: list[Candidate], chain_ids: list[str]) -> list[Candidate]:
    """Move each given chain's summary right before the best-ranked event of that chain, so the topic
    and its verbatim evidence are read together (a summary alone ranks below its own best events)."""
    pinned = {c.chain_id: c for c in ranked if c.hit.source_type == "chain" and c.chain_id in chain_ids}
    pinned_ids = set(pinned)
    out: list[Candidate] = []
    for c in ranked:
        if c.hit.source_type == "chain" and c.chain_id in pinned_ids:
            if c.chain_id in pinned:  # not placed yet: no event of its chain came first
                out.append(pinned.pop(c.chain_id))
            continue
        if c.hit.source_type == "event" and c.chain_id in pinned:
            summary = pinned.pop(c.chain_id)
            summary.hit.score = max(summary.hit.score, c.hit.score)
            out.append(summary)
        out.append(c)
    return out
