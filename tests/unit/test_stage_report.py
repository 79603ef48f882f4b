"""Every search's stages go to Prometheus; a slow one is logged with its stages, slowest first."""
from __future__ import annotations

import logging

from prometheus_client import REGISTRY

from athena_core.retrieval.stage_clock import StageClock, report_stages


def observed(stage: str) -> float:
    return REGISTRY.get_sample_value("athena_search_stage_seconds_count", {"stage": stage}) or 0.0


def test_stages_are_observed_and_a_slow_search_is_logged_slowest_first(caplog) -> None:
    before = observed("loading"), observed("lexical")
    clock = StageClock()
    with clock("lexical"):
        pass
    clock.sink["loading"] = 120.0  # as if loading had waited
    with caplog.at_level(logging.WARNING, logger="athena_core.retrieval.stage_clock"):
        report_stages(clock, "search", slow_ms=0.001)
        report_stages(clock, "search", slow_ms=0)  # 0: never logged
        report_stages(clock, "search", slow_ms=60_000)  # not slow
    assert (observed("loading"), observed("lexical")) == (before[0] + 3, before[1] + 3)
    slow = [r.getMessage() for r in caplog.records if r.getMessage().startswith("slow search")]
    assert len(slow) == 1 and "stages, ms: loading 120, lexical 0" in slow[0]


def test_a_caller_sink_gets_the_stages() -> None:
    timings: dict[str, float] = {}
    clock = StageClock(timings)
    with clock("fusion"):
        pass
    with clock("fusion"):
        pass
    assert set(timings) == {"fusion"} and timings["fusion"] >= 0.0 and clock.total_ms() >= timings["fusion"]
