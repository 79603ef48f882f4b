"""GetContext and SearchMemory (SPEC S2): the STM window, relevant chains, graph facts and persona."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from athena_api.dependencies import FactsDep, ReaderDep, RuntimeDep, SearchDep, SessionDep
from athena_api.errors import ApiError
from athena_core.ltm.retrieval import FactView
from athena_core.models.events import WindowEvent, utc_now
from athena_core.mtm.recall import ChainPage
from athena_core.retrieval.hybrid_search import SearchHit
from athena_core.retrieval.time_cues import parse_time_cues

router = APIRouter(prefix="/api/v1/sessions/{session_id}", tags=["context"])


class ContextResponse(BaseModel):
    session_id: str
    stm_events: list[WindowEvent]
    stm_source: str  # redis | rebuilt | event_log
    relevant_pages: list[ChainPage]
    facts: list[FactView]  # each with valid_at, first_valid_at, is_current, is_initial, evidence_event_ids
    user_persona: list[str]  # the user's strongest current facts as sentences ("Uses Go.")


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4096)
    limit: int | None = Field(default=None, ge=1, le=200,
                              description="Most results; default 5, or ATHENA_SEARCH_MAX_RESULTS with max_tokens")
    max_tokens: int | None = Field(default=None, ge=1, description="Budget of returned text (≈ words × 4/3)")
    similarity_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    filter: dict[str, str] | None = Field(
        default=None, description="Metadata pairs that must all be equal: an event matches by its own metadata "
                                  "or its session's; a chain by its sessions' metadata or any of its events'")
    include_facts: bool = Field(
        default=True, description="false: no graph facts, only events and chains (what facts add is then measurable)")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


@router.get("/context", response_model=ContextResponse)
def get_context(
    session: SessionDep,
    runtime: RuntimeDep,
    reader: ReaderDep,
    facts: FactsDep,
    search: SearchDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    query: Annotated[str, Query(max_length=4096)] = "",
    pages: Annotated[int, Query(ge=0, le=50)] = 5,
) -> ContextResponse:
    user = session.scope.user_scope
    now = utc_now()
    events, source = runtime.stm.read(session.scope, limit)
    return ContextResponse(
        session_id=session.session_id,
        stm_events=events,
        stm_source=source,
        relevant_pages=reader.relevant_pages(user, query, pages, now, rank=search.rank_chains),
        facts=facts.facts(user, query, order=parse_time_cues(query, now).value_order if query.strip() else None),
        user_persona=facts.persona(user),
    )


@router.post("/context/search", response_model=list[SearchHit])
def search_memory(body: SearchRequest, session: SessionDep, search: SearchDep, runtime: RuntimeDep) -> list[SearchHit]:
    """Hybrid search: chains, their verbatim events and graph facts, fused, sorted, within `max_tokens`."""
    settings = runtime.settings
    if body.max_tokens is not None and body.max_tokens > settings.search_max_tokens:
        raise ApiError(422, "validation_error", f"max_tokens must be at most {settings.search_max_tokens}",
                       field="max_tokens")
    limit = body.limit or (settings.search_max_results if body.max_tokens else 5)
    return search.search(session.scope.user_scope, body.query, utc_now(), limit=limit, max_tokens=body.max_tokens,
                         similarity_threshold=body.similarity_threshold, metadata_filter=body.filter,
                         include_facts=body.include_facts)
