"""Beat / admin trigger: community detection and bridge scores (SPEC S6.5). LTM issue."""
from __future__ import annotations

from athena_tasks.app import app
from athena_tasks.base import AthenaTask


@app.task(base=AthenaTask, name="athena.beat.analytics")
def run_community_analytics() -> dict:
    return {"tenants_analysed": 0}
