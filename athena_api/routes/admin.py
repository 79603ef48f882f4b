"""TriggerGraphAnalytics (SPEC S2, S6.5): admin only; runs on the workers, one run at a time."""
from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from athena_api.dependencies import AdminDep

router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


class TaskAccepted(BaseModel):
    task_id: str


@router.post("/analytics/trigger", status_code=202, response_model=TaskAccepted)
def trigger_analytics(_: AdminDep) -> TaskAccepted:
    from athena_tasks.analytics.communities import run_community_analytics

    return TaskAccepted(task_id=run_community_analytics.delay().id)
