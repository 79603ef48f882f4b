"""Beat: consolidate segments idle for `ATHENA_SEGMENT_IDLE_S` (SPEC S4). Filled in by the MTM issue."""
from __future__ import annotations

from athena_tasks.app import app
from athena_tasks.base import AthenaTask


@app.task(base=AthenaTask, name="athena.beat.idle_flush")
def flush_idle_segments() -> dict:
    return {"scopes_flushed": 0}
