"""AnalyzeTopics, GetHeatMetrics, GetSegments and Graph (SPEC S2)."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from athena_api.dependencies import FactsDep, RuntimeDep, SessionDep
from athena_core.ltm.retrieval import GraphView
from athena_core.models.chains import HeatFactors
from athena_core.models.chains import Chain
from athena_core.models.events import utc_now
from athena_core.mtm.chain_heat import chain_heat
from athena_core.mtm.recall import TopicStat, topic_stats

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["analysis"])


class ChainHeat(BaseModel):
    chain_id: str
    topic: str
    heat_score: float
    heat_factors: HeatFactors
    last_event_at: datetime
    last_accessed_at: datetime | None
    consolidated_at: datetime  # formation or latest merge: with the last access, where ΔT starts (S5)


class HeatReport(BaseModel):
    overall_heat: float
    breakdown: dict[str, int]  # hot (≥ promote threshold) | warm | cold (< archive threshold)
    total_interactions: int
    last_activity: datetime | None
    chains: list[ChainHeat]


@router.get("/analysis/topics", response_model=list[TopicStat])
def analyze_topics(session: SessionDep, runtime: RuntimeDep) -> list[TopicStat]:
    return topic_stats(runtime.documents.recent_chains(session.scope.user_scope, limit=1000))


@router.get("/analysis/heat", response_model=HeatReport)
def heat_metrics(session: SessionDep, runtime: RuntimeDep) -> HeatReport:
    """Heat computed now (S5) for the user's active chains; the promoter stores the same numbers."""
    settings = runtime.settings
    now = utc_now()
    chains = runtime.documents.recent_chains(session.scope.user_scope, limit=1000)
    rows = []
    for chain in chains:
        factors = chain_heat(chain, now, settings.heat_tau_hours)
        rows.append(ChainHeat(chain_id=chain.chain_id, topic=chain.topic, heat_score=factors.heat,
                              heat_factors=factors, last_event_at=chain.last_event_at,
                              last_accessed_at=chain.last_accessed_at, consolidated_at=chain.consolidated_at))
    rows.sort(key=lambda r: -r.heat_score)
    breakdown = {
        "hot": sum(r.heat_score >= settings.promote_threshold for r in rows),
        "warm": sum(settings.archive_heat <= r.heat_score < settings.promote_threshold for r in rows),
        "cold": sum(r.heat_score < settings.archive_heat for r in rows),
    }
    recent = runtime.documents.recent_events(session.scope, 1)
    return HeatReport(
        overall_heat=round(sum(r.heat_score for r in rows) / len(rows), 6) if rows else 0.0,
        breakdown=breakdown,
        total_interactions=runtime.documents.count_events(session.scope),
        last_activity=recent[0].timestamp if recent else None,
        chains=rows,
    )


@router.get("/segments", response_model=list[Chain])
def get_segments(
    session: SessionDep, runtime: RuntimeDep, limit: Annotated[int, Query(ge=1, le=1000)] = 50
) -> list[Chain]:
    """The user's chains, newest first, with quality, heat factors and their event_ids."""
    return runtime.documents.recent_chains(session.scope.user_scope, limit=limit, status=None)


@router.get("/graph", response_model=GraphView)
def graph(session: SessionDep, facts: FactsDep, depth: Annotated[int, Query(ge=1, le=2)] = 1) -> GraphView:
    """The user's facts around their own node: {nodes, edges} (edges ≥ the confidence floor)."""
    return facts.graph_view(session.scope.user_scope, depth)
