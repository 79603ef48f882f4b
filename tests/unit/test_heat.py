"""SPEC S5: heat formula, base importance, density, spaced-repetition strength."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from athena_core.models.chains import HeatFactors
from athena_core.mtm.heat import base_importance, compute_heat, density_score, elapsed_hours, heat_score, recall_on_access

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("strength", "hours", "expected"),
    [
        (1.0, 12, 0.49),
        (1.0, 24, 0.29),
        (1.0, 48, 0.11),
        (2.25, 12, 0.64),
        (2.25, 24, 0.51),
        (2.25, 48, 0.33),
    ],
)
def test_spec_reference_values(strength: float, hours: float, expected: float) -> None:
    assert round(heat_score(0.8, hours, strength), 2) == expected


def test_zero_elapsed_gives_i_base() -> None:
    assert heat_score(0.8, 0.0) == pytest.approx(0.8)
    assert heat_score(0.8, 0.0, strength=5.0) == pytest.approx(0.8)


def test_negative_elapsed_is_clamped_and_strength_floor_is_one() -> None:
    assert heat_score(0.8, -5.0) == pytest.approx(0.8)
    assert heat_score(0.8, 24, strength=0.2) == heat_score(0.8, 24, strength=1.0)


def test_tau_is_a_setting_and_must_be_positive() -> None:
    assert heat_score(1.0, 12, tau_hours=12) == pytest.approx(math.exp(-1))
    with pytest.raises(ValueError):
        heat_score(1.0, 1, tau_hours=0)


def test_base_importance() -> None:
    assert base_importance(0.5, 0.5) == pytest.approx(0.5)
    assert base_importance(1.0, 0.0) == pytest.approx(0.7)
    assert base_importance(0.0, 1.0) == pytest.approx(0.3)
    assert base_importance(1.0, 1.0) == 1.0
    assert base_importance(1.0, 1.0, importance_weight=0.9, density_weight=0.9) == 1.0  # min(1, …)


NO_DENSITY = dict(
    has_entities=False,
    has_thought_or_action=False,
    has_workflow_observation_or_blob=False,
    distinct_origin_services=0,
    turn_count=1,
)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, 0.0),
        ({"has_entities": True}, 0.15),
        ({"has_thought_or_action": True}, 0.20),
        ({"has_workflow_observation_or_blob": True}, 0.25),
        ({"distinct_origin_services": 1}, 0.0),  # only services beyond the first count
        ({"distinct_origin_services": 2}, 0.15),
        ({"distinct_origin_services": 3}, 0.30),
        ({"turn_count": 2}, 0.05),
        ({"turn_count": 1}, 0.0),
    ],
)
def test_density_increments(change: dict, expected: float) -> None:
    assert density_score(**{**NO_DENSITY, **change}) == pytest.approx(expected)


def test_density_all_signals_and_cap() -> None:
    full = dict(
        has_entities=True,
        has_thought_or_action=True,
        has_workflow_observation_or_blob=True,
        distinct_origin_services=2,
        turn_count=3,
    )
    assert density_score(**full) == pytest.approx(0.15 + 0.20 + 0.25 + 0.15 + 0.05)
    assert density_score(**{**full, "distinct_origin_services": 10}) == 1.0
    assert density_score(**{**NO_DENSITY, "distinct_origin_services": 50}) == 1.0


def test_recall_boost_boundary_at_twelve_hours() -> None:
    assert recall_on_access(1.0, NOW - timedelta(hours=12), NOW) == pytest.approx(1.5)
    assert recall_on_access(1.0, NOW - timedelta(hours=11.99), NOW) == 1.0
    assert recall_on_access(1.5, NOW - timedelta(hours=30), NOW) == pytest.approx(2.25)


def test_recall_first_access_and_future_access_do_not_boost() -> None:
    assert recall_on_access(1.0, None, NOW) == 1.0
    assert recall_on_access(2.0, None, NOW) == 2.0
    assert recall_on_access(1.0, NOW + timedelta(hours=20), NOW) == 1.0


def test_recall_strength_never_below_one() -> None:
    assert recall_on_access(0.1, None, NOW) == 1.0
    assert recall_on_access(0.0, NOW - timedelta(hours=1), NOW) == 1.0
    assert recall_on_access(0.5, NOW - timedelta(hours=24), NOW, factor=0.5) == 1.0


def test_recall_settings() -> None:
    assert recall_on_access(1.0, NOW - timedelta(hours=2), NOW, spacing_hours=1, factor=2.0) == 2.0


def test_elapsed_hours_prefers_last_access() -> None:
    assert elapsed_hours(NOW - timedelta(hours=3), NOW - timedelta(hours=10), NOW) == pytest.approx(3)
    assert elapsed_hours(None, NOW - timedelta(hours=10), NOW) == pytest.approx(10)
    assert elapsed_hours(None, NOW + timedelta(hours=1), NOW) == 0.0


def test_compute_heat_returns_all_factors() -> None:
    f = compute_heat(intrinsic_importance=0.8, density=0.8, hours_since_access=24, strength=2.25)
    assert isinstance(f, HeatFactors)
    assert f.i_base == pytest.approx(0.8)
    assert round(f.heat, 2) == 0.51
    assert (f.density, f.intrinsic_importance, f.strength, f.hours_since_access) == (0.8, 0.8, 2.25, 24)
    clamped = compute_heat(intrinsic_importance=0.5, density=0.0, hours_since_access=-3, strength=0.5)
    assert clamped.strength == 1.0 and clamped.hours_since_access == 0.0
    assert clamped.heat == pytest.approx(0.35)


# The heat clock (S5 as revised): ΔT runs from the later of the last access and the chain's consolidation
# (formation or latest merge); archival (S7) keeps real idleness (last event or access).

def _stored_chain(*, last_event_at: datetime, consolidated_at: datetime | None, updated_at: datetime,
                  last_accessed_at: datetime | None = None, strength: float = 1.0):
    from athena_core.models.chains import Chain, QualityScores

    quality = QualityScores(coherence=0.5, completeness=0.5, relevance=0.5, engagement=0.5, cognitive_depth=0.5,
                            overall=0.5, passed=True, mode="balanced")
    factors = compute_heat(intrinsic_importance=0.8, density=0.8, hours_since_access=0.0)
    values = dict(
        chain_id="chn_clock", tenant_id="t", user_id="u", agent_ids=["a"], topic="t", subtopics=[], summary="s",
        entities=[], quality=quality, intrinsic_importance=0.8, density=0.8, heat_score=factors.heat,
        heat_factors=factors, recall_strength=strength, started_at=last_event_at - timedelta(hours=1),
        last_event_at=last_event_at, last_accessed_at=last_accessed_at, event_count=2, event_ids=["e1", "e2"],
        created_at=updated_at, updated_at=updated_at, consolidated_at=consolidated_at,
    )
    return Chain(**values)


def test_heat_clock_starts_at_the_later_of_access_and_consolidation() -> None:
    from athena_core.mtm.heat import heat_clock_start

    formed = NOW - timedelta(hours=5)
    assert heat_clock_start(None, formed) == formed
    assert heat_clock_start(NOW - timedelta(hours=2), formed) == NOW - timedelta(hours=2)
    assert heat_clock_start(NOW - timedelta(hours=9), formed) == formed  # an access before a merge


def test_a_chain_of_imported_2023_history_formed_now_is_hot_now() -> None:
    from athena_core.mtm.chain_heat import chain_heat, idle_heat

    history = datetime(2023, 3, 14, 9, 30, tzinfo=timezone.utc)
    chain = _stored_chain(last_event_at=history, consolidated_at=NOW, updated_at=NOW)
    factors = chain_heat(chain, NOW)
    assert factors.heat == pytest.approx(factors.i_base) == pytest.approx(0.8)
    assert factors.hours_since_access == 0.0
    # It cools from its formation like any chain, on the SPEC reference curve (I_base 0.8, S 1).
    assert round(chain_heat(chain, NOW + timedelta(hours=12)).heat, 2) == 0.49
    assert round(chain_heat(chain, NOW + timedelta(hours=24)).heat, 2) == 0.29
    assert round(chain_heat(chain, NOW + timedelta(hours=48)).heat, 2) == 0.11
    # Archival sees the real idleness: the events are years old, so for it the chain is cold.
    assert idle_heat(chain, NOW).heat < 0.01


def test_a_live_chain_cools_from_its_formation() -> None:
    from athena_core.mtm.chain_heat import chain_heat

    formed = NOW - timedelta(hours=24)
    chain = _stored_chain(last_event_at=formed - timedelta(minutes=10), consolidated_at=formed, updated_at=formed)
    assert round(chain_heat(chain, NOW).heat, 2) == 0.29


def test_an_access_restarts_the_clock_and_strength_slows_it() -> None:
    from athena_core.mtm.chain_heat import chain_heat

    formed = NOW - timedelta(hours=72)
    chain = _stored_chain(last_event_at=formed, consolidated_at=formed, updated_at=formed,
                          last_accessed_at=NOW - timedelta(hours=12), strength=2.25)
    factors = chain_heat(chain, NOW)
    assert factors.hours_since_access == pytest.approx(12)
    assert round(factors.heat, 2) == 0.64


def test_a_merge_restarts_the_clock() -> None:
    from athena_core.mtm.chain_heat import chain_heat

    formed, merged = NOW - timedelta(days=10), NOW - timedelta(hours=12)
    chain = _stored_chain(last_event_at=datetime(2023, 6, 1, tzinfo=timezone.utc), consolidated_at=merged,
                          updated_at=merged, last_accessed_at=formed)
    assert round(chain_heat(chain, NOW).heat, 2) == 0.49


def test_an_old_document_without_consolidated_at_uses_updated_at() -> None:
    updated = NOW - timedelta(hours=3)
    chain = _stored_chain(last_event_at=datetime(2023, 1, 1, tzinfo=timezone.utc), consolidated_at=None,
                          updated_at=updated)
    assert chain.consolidated_at == updated
    from athena_core.models.chains import Chain

    legacy = chain.model_dump(mode="json")
    del legacy["consolidated_at"]
    assert Chain.model_validate(legacy).consolidated_at == updated
