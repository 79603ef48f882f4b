"""Chain formation (SPEC S4): a finished segment becomes a new chain or merges into a returning one.

One structured LLM call summarises the segment; the quality gate (no LLM) decides whether it is worth
keeping; merge-or-create compares its summary with the user's recent and nearest chains. On a merge
the summary is regenerated over the union of events, never concatenated. Chain ids are derived from
the segment's first event, and merges are unions, so re-running a formation changes nothing.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, Protocol

from athena_core.observability import metrics
from athena_core.mtm.heat import compute_heat, density_score, elapsed_hours
from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import Event, EventStatus, EventType
from athena_core.models.scope import AgentScope
from athena_core.mtm.calibration import calibration_for
from athena_core.mtm.merge import MergeCandidate, pick_merge_target, union_entities
from athena_core.models.chains import QualityScores
from athena_core.mtm.quality_gate import score_segment
from athena_core.mtm.topic_breaks import cosine_similarity
from athena_core.providers.embeddings import Embedder
from athena_core.providers.llm import ChainFormation, LLMProvider, TranscriptLine
from athena_core.wiring.settings import Settings
from athena_core.stores.documents.port import ChainStore, EventLog, SessionStore
from athena_core.stores.vectors.port import VectorIndex, reading_own_writes

log = logging.getLogger(__name__)

Outcome = Literal["created", "merged", "rejected", "already"]

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


def window_start(anchor: datetime, window: timedelta) -> datetime:
    """`anchor - window`, clamped at the calendar's start: a valid year-1 timestamp must not overflow."""
    try:
        return anchor - window
    except OverflowError:
        return EARLIEST


def encodable(value: str) -> str:
    """A string as UTF-8 can carry it: a lone surrogate (valid in Python, not in UTF-8 or JSON) becomes
    U+FFFD, so one bad session value cannot break every formation of the user."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_metadata(metadata: dict) -> dict[str, str]:
    """Session metadata as a chain can store it (a string map): keys and values made encodable."""
    return {encodable(str(key)): encodable(str(value)) for key, value in metadata.items() if value is not None}


class FormationDocuments(SessionStore, EventLog, ChainStore, Protocol):
    """What formation reads and writes: the session (its agent), the events, the chains."""


@dataclass(frozen=True)
class FormationOutcome:
    kind: Outcome
    chain_id: str | None
    quality: QualityScores | None = None


def chain_id_for(first_event: Event) -> str:
    """Deterministic: the same segment always forms the same chain, so retries cannot duplicate it."""
    return "chn_" + first_event.event_id.split("_", 1)[-1]


def search_text_of(formation: ChainFormation) -> str:
    """The text a new chain's vector would embed (`Chain.search_text`): the segment is compared with
    candidate chains in the form their stored vectors have, and its own vector is reused when it is indexed."""
    entities = ", ".join(union_entities([], formation.entities))
    return f"{formation.topic}. {formation.summary}" + (f" ({entities})" if entities else "")


def transcript_of(events: list[Event]) -> list[TranscriptLine]:
    return [TranscriptLine(role=e.role.value, type=e.type.value, content=e.content, timestamp=e.timestamp)
            for e in events]


def segment_density(events: list[Event], entities: list[str]) -> float:
    """SPEC S5 density from the structure of the events (what the LLM cannot see)."""
    services = {e.metadata["origin_service"] for e in events if e.metadata.get("origin_service")}
    return density_score(
        has_entities=bool(entities),
        has_thought_or_action=any(e.type in (EventType.thought, EventType.action) for e in events),
        has_workflow_observation_or_blob=any(
            e.blob_uri or (e.type == EventType.observation
                           and (e.metadata.get("workflow_id") or e.metadata.get("execution_id")))
            for e in events
        ),
        distinct_origin_services=len(services),
        turn_count=sum(1 for e in events if e.role.value == "user" and e.type == EventType.message),
    )


class ChainFormer:
    def __init__(
        self, documents: "FormationDocuments", vectors: VectorIndex, llm: LLMProvider, embedder: Embedder,
        settings: Settings,
    ) -> None:
        self.documents = documents
        self.vectors = vectors
        self.llm = llm
        self.embedder = embedder
        self.settings = settings
        self.calibration = calibration_for(settings, embedder.model_name)
        self._written: set[str] = set()  # chains this former wrote: their stored vector may be stale

    def formation(self, events: list[Event], tenant_id: str) -> ChainFormation:
        """The LLM's formation of a segment (what `form` starts with): a caller forming several segments
        may take them first and embed their `search_text_of` in one batch, then pass each to `form`."""
        return self._formation(events, tenant_id)

    def form(self, scope: AgentScope, events: list[Event], now: datetime,
             formation: ChainFormation | None = None) -> FormationOutcome:
        """Turn one finished segment (chronological, all pending) into a chain, a merge, or a rejection;
        `formation`: this segment's, when the caller already has it (`formation`)."""
        user = scope.user_scope
        segment_ids = {e.event_id for e in events}
        formation = formation or self._formation(events, scope.tenant_id)
        lines = transcript_of(events)
        quality = score_segment(lines, formation.summary, formation.topic, formation.entities,
                                self.settings.quality_mode)
        if not quality.passed:
            self.documents.mark_events(scope, sorted(segment_ids), EventStatus.rejected)
            metrics.FORMATION_OUTCOMES.labels("rejected").inc()
            return FormationOutcome("rejected", None, quality)

        candidates = self._candidates(scope, events[0].timestamp, search_text_of(formation))
        for chain, _ in candidates.values():
            if segment_ids <= set(chain.event_ids):  # a retry after the chain was written
                self.documents.mark_events(scope, sorted(segment_ids), EventStatus.consolidated, chain.chain_id)
                return FormationOutcome("already", chain.chain_id, quality)

        target = pick_merge_target(
            [MergeCandidate(chain.chain_id, similarity,
                            abs((events[0].timestamp - chain.last_event_at).total_seconds()) / 3600,
                            chain.event_count)
             for chain, similarity in candidates.values()],
            len(events),
            min_similarity=self.calibration.merge_similarity,
            min_confidence=self.calibration.merge_confidence,
        )
        if target is None:
            chain = self._build(scope, chain_id_for(events[0]), events, formation, quality, None, now)
            kind: Outcome = "created"
        else:
            existing = candidates[target.chain_id][0]
            prior = self.documents.get_events(user, existing.event_ids)
            union = sorted({e.event_id: e for e in [*prior, *events]}.values(), key=lambda e: (e.timestamp, e.event_id))
            merged_formation = self._formation(union, scope.tenant_id)
            merged_quality = score_segment(transcript_of(union), merged_formation.summary, merged_formation.topic,
                                           merged_formation.entities, self.settings.quality_mode)
            chain = self._build(scope, existing.chain_id, union, merged_formation, merged_quality, existing, now)
            kind = "merged"
        self.documents.upsert_chain(chain)
        self._written.add(chain.chain_id)
        self.documents.mark_events(scope, sorted(segment_ids), EventStatus.consolidated, chain.chain_id)
        metrics.FORMATION_OUTCOMES.labels(kind).inc()
        return FormationOutcome(kind, chain.chain_id, chain.quality)

    def _formation(self, events: list[Event], tenant_id: str) -> ChainFormation:
        capped = events[-self.settings.formation_max_events:]
        formation = self.llm.form_chain(transcript_of(capped), tenant_id=tenant_id)
        subtopics = [s for s in formation.subtopics if s.confidence >= self.settings.subtopic_min_confidence]
        return formation.model_copy(update={"subtopics": subtopics})

    def _candidates(self, scope: AgentScope, anchor: datetime, text: str) -> dict[str, tuple[Chain, float]]:
        """The user's active chains of the last 72 h (before the segment) plus the nearest by vector."""
        user = scope.user_scope
        recent = self.documents.recent_chains(
            user, since=window_start(anchor, timedelta(hours=self.settings.merge_window_h)),
            limit=self.settings.merge_recent_limit,
        )
        vector = self.embedder.embed([text])[0]
        with reading_own_writes():  # a chain another worker wrote a moment ago must be a merge candidate
            nearest_ids = [hit.chain_id for hit in self.vectors.search(user, vector, self.settings.merge_nearest)]
        known = {c.chain_id for c in recent}
        chains = recent + self.documents.get_chains(user, [c for c in nearest_ids if c not in known])
        chains = [c for c in chains if c.status == ChainStatus.active]
        if not chains:
            return {}
        # A chain's summary vector as the index stores it (its `search_text`, the same form as `text`), so
        # no summary is embedded twice; chains not indexed yet, or rewritten by this former, are embedded.
        stored = self.vectors.vectors_of(user, [c.chain_id for c in chains if c.chain_id not in self._written])
        missing = [c for c in chains if c.chain_id not in stored]
        if missing:
            stored.update(zip([c.chain_id for c in missing], self.embedder.embed([c.search_text for c in missing])))
        return {c.chain_id: (c, cosine_similarity(vector, stored[c.chain_id])) for c in chains}

    def _build(
        self, scope: AgentScope, chain_id: str, events: list[Event], formation: ChainFormation,
        quality: QualityScores, existing: Chain | None, now: datetime,
    ) -> Chain:
        entities = union_entities(existing.entities if existing else [], formation.entities)
        density = segment_density(events, entities)
        last_event_at = events[-1].timestamp
        strength = existing.recall_strength if existing else 1.0
        last_access = existing.last_accessed_at if existing else None
        heat = compute_heat(
            intrinsic_importance=formation.intrinsic_importance, density=density,
            hours_since_access=elapsed_hours(last_access, now, now), strength=strength,  # consolidated now (S5)
            tau_hours=self.settings.heat_tau_hours,
        )
        session = self.documents.get_session(events[0].session_id)
        metadata = clean_metadata({**(existing.metadata if existing else {}), **(session.metadata if session else {})})
        agent_ids = sorted({*(existing.agent_ids if existing else []), *(e.agent_id for e in events)})
        return Chain(
            chain_id=chain_id, tenant_id=scope.tenant_id, user_id=scope.user_id, agent_ids=agent_ids,
            topic=formation.topic, subtopics=formation.subtopics, summary=formation.summary, entities=entities,
            quality=quality, intrinsic_importance=formation.intrinsic_importance, density=density,
            heat_score=heat.heat, heat_factors=heat, recall_strength=strength,
            started_at=events[0].timestamp, last_event_at=last_event_at, last_accessed_at=last_access,
            event_count=len(events), event_ids=[e.event_id for e in events],
            status=ChainStatus.active, promoted_evidence=existing.promoted_evidence if existing else None,
            metadata=metadata, created_at=existing.created_at if existing else now, updated_at=now,
            consolidated_at=now,
        )
