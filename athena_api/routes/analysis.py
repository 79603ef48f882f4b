"""AnalyzeTopics and GetSegments (SPEC S2): what the user's chains are about, and the chains themselves."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from athena_api.dependencies import RuntimeDep, SessionDep
from athena_core.models.chains import Chain
from athena_core.mtm.recall import TopicStat, topic_stats

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["analysis"])


@router.get("/analysis/topics", response_model=list[TopicStat])
def analyze_topics(session: SessionDep, runtime: RuntimeDep) -> list[TopicStat]:
    return topic_stats(runtime.documents.recent_chains(session.scope.user_scope, limit=1000))


@router.get("/segments", response_model=list[Chain])
def get_segments(
    session: SessionDep, runtime: RuntimeDep, limit: Annotated[int, Query(ge=1, le=1000)] = 50
) -> list[Chain]:
    """The user's chains, newest first, with quality, heat factors and their event_ids."""
    return runtime.documents.recent_chains(session.scope.user_scope, limit=limit, status=None)
