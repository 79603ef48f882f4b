"""What a search returns: `SearchHit` (one SearchMemory result, SPEC S2) and the `Candidate` it is while
being ranked (`HitDraft`: the same fields as a plain slotted dataclass)."""
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


@dataclass(slots=True)
class Span:
    start: datetime
    end: datetime


@dataclass(slots=True)
class HitDraft:
    """A `SearchHit` being ranked: the same fields, as a slotted dataclass. A search scores about a thousand
    candidates at 100k chains and returns tens; a pydantic model per candidate (even `model_construct`,
    ~7 µs) cost more than the fusion around it. `to_hit` builds the model for the ones returned."""

    content: str
    similarity_score: float | None
    score: float
    source_type: SourceType
    source_id: str
    timestamp: datetime
    time_span: Span
    retrievers: list[str]
    chain_id: str | None = None
    topic: str | None = None
    role: str | None = None
    tokens: int = 0
    excerpt: bool = False
    evidence_event_ids: list[str] | None = None
    valid_at: datetime | None = None
    first_valid_at: datetime | None = None
    is_current: bool | None = None
    is_initial: bool | None = None

    def to_hit(self) -> SearchHit:
        """The model (trusted fields, no validation: FastAPI validates what a route returns)."""
        fields = {name: getattr(self, name) for name in _DRAFT_FIELDS}
        fields["time_span"] = TimeSpan.model_construct(start=self.time_span.start, end=self.time_span.end)
        return SearchHit.model_construct(**fields)


_DRAFT_FIELDS = tuple(HitDraft.__dataclass_fields__)


@dataclass
class Candidate:
    """A result before packing."""

    hit: HitDraft
    chain_id: str | None = None
    text: str | None = None  # an event's own text (content adds its date), for an excerpt


def rounded(value: float | None) -> float | None:
    """A score as results show it (6 decimals); None stays None."""
    return None if value is None else round(float(value), 6)
