"""Kill runs (issue 12 "Show"; SPEC S3, S7): the embedded stack as processes, clients writing over HTTP while the
worker, the embedded Redis or the API is SIGKILLed and restarted twice. Nothing acknowledged may be lost or
altered, nothing may stay pending or unindexed after recovery.

Sizes scale with ATHENA_FAULTS_SCALE (0.5 here; `make faults` runs 5). Each run prints its figures as one JSON
line (`pytest -s`, or `make faults`). The harness is tests/faults/faults_harness.py.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tests.faults.faults_harness import FAULT_KINDS, FaultRunConfig, duplicates_asserted, problems, run_kill_run


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_kill_run_loses_nothing_and_leaves_nothing_unindexed(kind: str, tmp_path: Path) -> None:
    figures = run_kill_run(FaultRunConfig.scaled(kind), tmp_path)

    assert not figures["errors"], figures
    assert len(figures["faults"]) == 2, figures
    assert figures["requests_failed"] == 0, figures  # every request got its 201 through the faults (with retries)
    assert figures["lost"] == 0 and figures["altered"] == 0, figures  # every 201 in the log, byte-identical
    assert figures["events_in_log"] >= figures["events_201"], figures
    assert figures["pending_after_recovery"] == 0, figures
    assert figures["unindexed_after_recovery"] == 0, figures
    assert figures["chain_mismatch"] == 0 and figures["events_in_two_chains"] == 0, figures
    assert figures["stm_gap_missing"] == 0, figures  # redis runs: the outage's events are in the rebuilt window

    if duplicates_asserted(figures):
        assert figures["duplicates"] == 0 and figures["stored_without_201"] == 0, figures
    else:
        # NOT ASSERTED until Idempotency-Key lands (issue 12 item 14): requests cut by the fault were retried
        # without a key the API honours, so a retry may store an event twice. Counted and reported only.
        warnings.warn(f"{kind}: Idempotency-Key not honoured; duplicates={figures['duplicates']} "
                      f"stored_without_201={figures['stored_without_201']} (not asserted)")
    assert not problems(figures), problems(figures)
