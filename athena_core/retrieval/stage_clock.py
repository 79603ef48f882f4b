"""Time per stage of one search (issue 16 item 6): which stage grows with a user's memory, or stalls under
load, is a measurement, not a guess. Every search clocks its stages (two perf_counter calls each); the
search reports them to Prometheus and logs a slow one (`report_stages`), and a caller that passes a dict
(the reads benchmark) also gets milliseconds per stage added to it."""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from athena_core.observability.metrics import SEARCH_STAGE_SECONDS

log = logging.getLogger(__name__)

# The stages, in the order a search runs them (docs/retrieval.md "Reads at scale").
STAGES = ("turn", "embedding", "dense", "lexical", "dense_wait", "loading", "fusion", "neighbours", "graph",
          "similarities", "time_cues", "excerpts", "packing", "access")


class StageClock:
    """Adds the wall time of each `with clock("stage"):` block, in ms, to `sink[stage]`."""

    __slots__ = ("sink", "started")

    def __init__(self, sink: dict[str, float] | None = None) -> None:
        self.sink = {} if sink is None else sink
        self.started = time.perf_counter()

    def total_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.sink[stage] = self.sink.get(stage, 0.0) + (time.perf_counter() - start) * 1000.0


def report_stages(clock: StageClock, what: str, slow_ms: float) -> None:
    """Each stage's time to `athena_search_stage_seconds`; a search slower than `slow_ms` (> 0) is logged
    with its stages, slowest first, so an operator sees whether it waited on lexical, loading or the CPU."""
    for stage, spent in clock.sink.items():
        SEARCH_STAGE_SECONDS.labels(stage=stage).observe(spent / 1000.0)
    total = clock.total_ms()
    if 0 < slow_ms < total:
        stages = ", ".join(f"{stage} {spent:.0f}" for stage, spent in sorted(clock.sink.items(), key=lambda kv: -kv[1]))
        log.warning("slow %s: %.0f ms (stages, ms: %s)", what, total, stages)
