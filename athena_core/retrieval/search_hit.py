"""What a search returns: `SearchHit` (one SearchMemory result, SPEC S2) and the `Candidate` it is while
being ranked."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

SourceType = Literal["chain", "event", "fact"]


class TimeSpan(BaseModel):
    start: datetime
    end: datetime


class SearchHit(BaseModel):
    """One SearchMemory result (SPEC S2 fields, plus what hybrid retrieval adds)."""

    content: str
    similarity_score: float | None  # cosine to the query (events and chains; null for facts, or dense off)
    score: float  # fused score: what results are sorted by
    source_type: SourceType
    source_id: str  # chain id, event id, or edge id
    timestamp: datetime  # the evidence time (event time, chain's last event, fact's valid_at)
    time_span: TimeSpan
    retrievers: list[str]
    chain_id: str | None = None
    topic: str | None = None
    role: str | None = None
    tokens: int = 0
    excerpt: bool = False  # content is the event's best-matching sentences, not all of it (`…` marks cuts)
    evidence_event_ids: list[str] | None = None  # facts: the event-log ids of the turns they came from
    valid_at: datetime | None = None  # facts: the newest evidence
    first_valid_at: datetime | None = None  # facts: the oldest evidence
    is_current: bool | None = None  # facts: the newest value of its (subject, relation) (True if only one)
    is_initial: bool | None = None  # facts: the first value of its (subject, relation) (True if only one)


@dataclass
class Candidate:
    """A result before packing. Built with `model_construct` (trusted fields, no validation): a search
    scores a few hundred candidates and returns tens; FastAPI validates what is returned."""

    hit: SearchHit
    chain_id: str | None = None
    text: str | None = None  # an event's own text (content adds its date), for an excerpt


def rounded(value: float | None) -> float | None:
    """A score as results show it (6 decimals); None stays None."""
    return None if value is None else round(float(value), 6)
