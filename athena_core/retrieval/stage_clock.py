"""Time per stage of one search (issue 16 item 6): which stage grows with a user's memory is a measurement,
not a guess. A caller (the reads benchmark) passes a dict and gets milliseconds per stage added to it;
without one, the clock measures nothing worth keeping and costs two perf_counter calls per stage."""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# The stages, in the order a search runs them (docs/retrieval.md "Reads at scale").
STAGES = ("embedding", "dense", "lexical", "loading", "fusion", "neighbours", "graph", "similarities",
          "time_cues", "excerpts", "packing", "access")


class StageClock:
    """Adds the wall time of each `with clock("stage"):` block, in ms, to `sink[stage]` (when given)."""

    __slots__ = ("sink",)

    def __init__(self, sink: dict[str, float] | None = None) -> None:
        self.sink = sink

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        if self.sink is None:
            yield
            return
        start = time.perf_counter()
        try:
            yield
        finally:
            self.sink[stage] = self.sink.get(stage, 0.0) + (time.perf_counter() - start) * 1000.0
