"""Beat: archive cold chains (SPEC S7). LTM issue."""
from __future__ import annotations

from athena_tasks.app import app
from athena_tasks.base import AthenaTask


@app.task(base=AthenaTask, name="athena.beat.archive")
def archive_cold_chains() -> dict:
    return {"chains_archived": 0}
