"""The LTM ontology (SPEC S6.1, seed 000): four node labels, seven relations, snake_case ids.

These pydantic models are the extraction contract: the `openai` provider sends their strict JSON schema
(structured outputs) and the `offline` provider builds them directly.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

NodeLabel = Literal["Identities", "Tools", "Projects", "Concepts"]
NODE_LABELS: tuple[str, ...] = ("Identities", "Tools", "Projects", "Concepts")
RELATIONS: tuple[str, ...] = (
    "USES", "WORKS_ON", "BUILT_FOR_CLIENT", "STRUGGLES_WITH", "EXHIBITS", "EXPRESSED_INTEREST", "RELATES_TO",
)
USER_NODE_ID = "user"  # every user's own node (Identities), the subject of first-person facts
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "user", "the_user", "we", "us", "our"})


def snake_id(text: str) -> str:
    """Lowercase snake_case id ("Prescott Data" → "prescott_data"); empty when nothing is left."""
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", text.lower())).strip("_")[:120]


class ExtractedNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="lowercase snake_case identifier, e.g. prescott_data")
    label: NodeLabel
    name: str = Field(description="human-readable name as mentioned")


class ExtractedTriple(BaseModel):
    """One fact as the LLM extracts it. `relation` is free text here: off-list values are corrected."""

    model_config = ConfigDict(extra="forbid")

    subject: ExtractedNode
    relation: str
    object: ExtractedNode
    confidence: float = Field(ge=0.0, le=1.0)
    context_nuance: str
    turn: int = Field(
        default=-1,
        description="index of the numbered turn the fact came from; -1 when only the summary states it",
    )


class TripleExtraction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    triples: list[ExtractedTriple]


class FactObservation(BaseModel):
    """A normalised triple ready for the graph: ids namespaced later by the adapter, with its evidence."""

    subject_id: str
    subject_label: NodeLabel
    subject_name: str
    relation: str  # one of RELATIONS
    object_id: str
    object_label: NodeLabel
    object_name: str
    confidence: float = Field(ge=0.0, le=1.0)
    context_nuance: str
    heat_score: float
    valid_at: datetime  # time of the evidence: its source turn, else the chain's last event
    evidence_id: str  # chain_id:content_hash — an observation counts once, however often it is written
    evidence_event_ids: list[str] = []  # the event-log ids of the turns the fact came from (SPEC S6.1)


class GraphNode(BaseModel):
    key: str
    id: str
    label: NodeLabel
    name: str
    community_id: int | None = None
    bridge_score: int | None = None


class Fact(BaseModel):
    """An edge as retrieval returns it."""

    edge_id: str
    subject: GraphNode
    relation: str
    object: GraphNode
    weight: int
    confidence: float
    heat_score: float
    context_nuance: str
    valid_at: datetime
    first_valid_at: datetime
    first_seen: datetime
    last_seen: datetime
    evidence_event_ids: list[str] = []  # event-log ids of the turns behind the edge's observations
