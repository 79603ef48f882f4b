"""Cognitive chains (SPEC S4): one summarised topic of a user's conversations, the MTM unit."""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


class ChainStatus(StrEnum):
    active = "active"
    archived = "archived"


class Subtopic(BaseModel):
    model_config = ConfigDict(extra="forbid")

    theme: str
    confidence: float = Field(ge=0.0, le=1.0)


class QualityScores(BaseModel):
    """Sub-scores, weighted overall and verdict of the quality gate; stored on the chain (S4)."""

    model_config = ConfigDict(extra="forbid")

    coherence: float = Field(ge=0.0, le=1.0)
    completeness: float = Field(ge=0.0, le=1.0)
    relevance: float = Field(ge=0.0, le=1.0)
    engagement: float = Field(ge=0.0, le=1.0)
    cognitive_depth: float = Field(ge=0.0, le=1.0)
    overall: float = Field(ge=0.0, le=1.0)
    passed: bool
    mode: str


class HeatFactors(BaseModel):
    """The inputs and result of one heat computation, stored on the chain as `heat_factors` (S4, S2)."""

    model_config = ConfigDict(extra="forbid")

    i_base: float = Field(ge=0.0, le=1.0)
    density: float = Field(ge=0.0, le=1.0)
    intrinsic_importance: float = Field(ge=0.0, le=1.0)
    strength: float = Field(ge=1.0)
    hours_since_access: float = Field(ge=0.0)
    heat: float = Field(ge=0.0, le=1.0)


class Chain(BaseModel):
    chain_id: str
    tenant_id: str
    user_id: str
    agent_ids: list[str]
    topic: str
    subtopics: list[Subtopic]
    summary: str
    entities: list[str]
    quality: QualityScores
    intrinsic_importance: float
    density: float
    heat_score: float
    heat_factors: HeatFactors
    recall_strength: float = 1.0
    started_at: datetime
    last_event_at: datetime
    last_accessed_at: datetime | None = None
    event_count: int
    event_ids: list[str]
    status: ChainStatus = ChainStatus.active
    archived_at: datetime | None = None
    # Hash of the content last promoted into the knowledge graph (S6.1: once per distinct content).
    promoted_evidence: str | None = None
    metadata: dict[str, str] = {}
    created_at: datetime
    updated_at: datetime
    # When memory last consolidated the chain: its formation or latest merge. The heat clock (S5) runs
    # from the later of this and the last access. Documents written before the field existed default to
    # `updated_at`, which only formation and merges ever set.
    consolidated_at: datetime = Field(default=None, validate_default=True)

    @field_validator("consolidated_at", mode="before")
    @classmethod
    def _consolidated_defaults_to_updated(cls, value: object, info: ValidationInfo) -> object:
        """A field validator, not a "before" model validator: that made pydantic decode every stored
        document into Python objects first (48 µs a chain, not 30; a search at 100k chains loads ~270)."""
        if value is None:
            return info.data.get("updated_at") or info.data.get("created_at")
        return value

    @property
    def search_text(self) -> str:
        """What the chain's vector embeds: its topic, summary and entities."""
        entities = ", ".join(self.entities)
        return f"{self.topic}. {self.summary}" + (f" ({entities})" if entities else "")
