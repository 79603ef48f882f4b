"""SPEC S4: topic-break gate (skip, cosine thresholds, force and idle flush)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from athena_core.mtm.topic_breaks import (
    BreakDecision,
    can_break_topic,
    cosine_similarity,
    cuts_segment,
    decision_for_gate,
    gate_by_cosine,
    is_idle,
    needs_force_flush,
    should_skip,
)


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [
        (1.0, "same"),
        (0.72, "same"),
        (0.7199, "gray"),
        (0.6, "gray"),
        (0.52, "gray"),
        (0.5199, "break"),
        (-1.0, "break"),
    ],
)
def test_gate_boundaries(similarity: float, expected: str) -> None:
    assert gate_by_cosine(similarity) == expected


def test_gate_thresholds_are_settings() -> None:
    assert gate_by_cosine(0.65, high=0.6, low=0.5) == "same"
    assert gate_by_cosine(0.65, high=0.9, low=0.7) == "break"
    assert gate_by_cosine(float("nan")) == "gray"
    with pytest.raises(ValueError):
        gate_by_cosine(0.5, high=0.4, low=0.6)


def test_decision_paths() -> None:
    assert decision_for_gate("same") is BreakDecision.COSINE_HIGH
    assert decision_for_gate("break") is BreakDecision.COSINE_LOW
    assert decision_for_gate("gray") is BreakDecision.GRAY_ZONE
    assert {d.value for d in BreakDecision} == {
        "cosine_high", "cosine_low", "gray_zone", "skip", "force", "idle", "llm_true", "llm_false",
    }
    assert BreakDecision.SKIP == "skip"  # usable directly as a metric label


def test_cuts_segment() -> None:
    for d in ("cosine_low", "llm_false", "force", "idle"):
        assert cuts_segment(d) is True
    for d in ("cosine_high", "llm_true", "skip"):
        assert cuts_segment(d) is False
    with pytest.raises(ValueError):
        cuts_segment(BreakDecision.GRAY_ZONE)


@pytest.mark.parametrize(
    ("prev", "cur", "expected"),
    [
        ({}, {}, False),
        ({"workflow_id": ""}, {"workflow_id": ""}, False),
        ({"workflow_id": "  "}, {"workflow_id": "  "}, False),
        ({"workflow_id": "wf-1"}, {"workflow_id": "wf-1"}, True),
        ({"workflow_id": "wf-1"}, {"workflow_id": "wf-2"}, False),
        ({"workflow_id": "wf-1"}, {}, False),
        ({"execution_id": "ex-9"}, {"execution_id": "ex-9"}, True),
        ({"execution_id": "ex-9"}, {"execution_id": "ex-8"}, False),
        ({"workflow_id": "wf-1", "execution_id": "a"}, {"workflow_id": "wf-2", "execution_id": "a"}, True),
        ({"workflow_id": "", "execution_id": "ex"}, {"workflow_id": "", "execution_id": "ex"}, True),
        ({"workflow_id": "x"}, {"execution_id": "x"}, False),  # different keys never match
    ],
)
def test_should_skip(prev: dict, cur: dict, expected: bool) -> None:
    assert should_skip(prev, cur) is expected


def test_can_break_topic() -> None:
    assert can_break_topic("user", "message")
    assert not can_break_topic("agent", "message")
    assert not can_break_topic("user", "thought")
    assert not can_break_topic("system", "observation")


def test_cosine_similarity() -> None:
    a = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    assert cosine_similarity(a, a) == pytest.approx(1.0)
    assert cosine_similarity(a, -a) == pytest.approx(-1.0)
    assert cosine_similarity(a, np.array([0.0, 1.0, 0.0])) == pytest.approx(0.0)
    assert cosine_similarity([1, 1], [1, 0]) == pytest.approx(1 / np.sqrt(2))
    assert cosine_similarity(a, np.zeros(3)) == 0.0
    assert cosine_similarity(np.zeros(3), np.zeros(3)) == 0.0
    assert isinstance(cosine_similarity(a, a), float)
    with pytest.raises(ValueError):
        cosine_similarity(a, np.ones(4))


def test_cosine_is_scale_invariant_and_bounded() -> None:
    rng = np.random.default_rng(0)
    v = rng.normal(size=384)
    assert cosine_similarity(v, 7.5 * v) <= 1.0
    assert cosine_similarity(v, 7.5 * v) == pytest.approx(1.0)


def test_force_flush_boundary() -> None:
    assert not needs_force_flush(19)
    assert needs_force_flush(20)
    assert needs_force_flush(21)
    assert needs_force_flush(5, max_events=5)


def test_idle_boundary() -> None:
    now = datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert is_idle(now - timedelta(seconds=1800), now)
    assert not is_idle(now - timedelta(seconds=1799.9), now)
    assert is_idle(now - timedelta(seconds=61), now, idle_seconds=60)
    assert not is_idle(now + timedelta(minutes=5), now)
