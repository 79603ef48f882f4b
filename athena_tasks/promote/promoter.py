"""Beat: recompute heat and promote hot chains into the knowledge graph (SPEC S6.1). LTM issue."""
from __future__ import annotations

from athena_tasks.app import app
from athena_tasks.base import AthenaTask


@app.task(base=AthenaTask, name="athena.beat.promote")
def promote_hot_chains() -> dict:
    return {"chains_scanned": 0, "chains_promoted": 0}
