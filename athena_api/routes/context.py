"""GetContext (SPEC S2): the STM window now; relevant pages, facts and persona as the tiers arrive."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from athena_api.dependencies import RuntimeDep, SessionDep
from athena_core.models.events import WindowEvent

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["context"])


class ContextResponse(BaseModel):
    session_id: str
    stm_events: list[WindowEvent]
    stm_source: str  # redis | rebuilt | event_log
    relevant_pages: list[dict]
    facts: list[dict]
    user_persona: list[str]


@router.get("/context", response_model=ContextResponse)
def get_context(
    session: SessionDep,
    runtime: RuntimeDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    query: Annotated[str, Query(max_length=4096)] = "",
    pages: Annotated[int, Query(ge=0, le=50)] = 5,
) -> ContextResponse:
    events, source = runtime.stm.read(session.scope, limit)
    return ContextResponse(
        session_id=session.session_id,
        stm_events=events,
        stm_source=source,
        relevant_pages=[],
        facts=[],
        user_persona=[],
    )
