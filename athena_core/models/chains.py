"""Cognitive chains (SPEC S4): one summarised topic of a user's conversations, the MTM unit."""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel

from athena_core.heat import HeatFactors
from athena_core.mtm.quality_gate import QualityScores
from athena_core.providers.llm import Subtopic


class ChainStatus(StrEnum):
    active = "active"
    archived = "archived"


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

    @property
    def search_text(self) -> str:
        """What the chain's vector embeds: its topic, summary and entities."""
        entities = ", ".join(self.entities)
        return f"{self.topic}. {self.summary}" + (f" ({entities})" if entities else "")
