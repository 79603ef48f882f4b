"""Heat: how much a chain matters right now (SPEC S5).

Heat drives the chain lifecycle: promotion to the knowledge graph (heat >= 0.3, S6.1) and archiving
(heat < 0.1 after 7 idle days, S7). It is importance decaying exponentially with time since the later of
the chain's last access and its consolidation (formation or latest merge: imported history is hot when
memory first holds it), slowed down by a recall strength that grows with spaced re-access (S5.2).
Archival measures the same curve over real idleness (last event or access, `chain_heat.idle_heat`).

Everything here is a pure function of its arguments; every SPEC number is a keyword default so callers
can pass the configured `ATHENA_*` settings instead.
"""
from __future__ import annotations

import math
from datetime import datetime

from athena_core.models.chains import HeatFactors

__all__ = [
    "HeatFactors",
    "base_importance",
    "compute_heat",
    "density_score",
    "elapsed_hours",
    "heat_clock_start",
    "heat_score",
    "recall_on_access",
]


def heat_score(
    i_base: float,
    hours_since_access: float,
    strength: float = 1.0,
    tau_hours: float = 24.0,
) -> float:
    """`H = I_base · exp(−ΔT / (τ · S))` (S5).

    ΔT is clamped at 0 (a clock-skewed future access must not make a chain hotter than its importance)
    and S at 1 (strength only ever slows decay, S5.2). τ must be positive.
    """
    if tau_hours <= 0:
        raise ValueError(f"tau_hours must be > 0, got {tau_hours}")
    dt = max(0.0, float(hours_since_access))
    s = max(1.0, float(strength))
    return float(i_base) * math.exp(-dt / (tau_hours * s))


def base_importance(
    intrinsic_importance: float,
    density: float,
    *,
    importance_weight: float = 0.7,
    density_weight: float = 0.3,
) -> float:
    """`I_base = min(1, 0.7 · intrinsic_importance + 0.3 · density)` (S5).

    The LLM's own importance judgement is kept and dominates; density adds what the LLM cannot see
    (structure of the segment). Floored at 0 so bad inputs cannot produce negative heat.
    """
    value = importance_weight * float(intrinsic_importance) + density_weight * float(density)
    return min(1.0, max(0.0, value))


def density_score(
    *,
    has_entities: bool,
    has_thought_or_action: bool,
    has_workflow_observation_or_blob: bool,
    distinct_origin_services: int,
    turn_count: int,
    entities_bonus: float = 0.15,
    thought_or_action_bonus: float = 0.20,
    observation_bonus: float = 0.25,
    per_extra_service_bonus: float = 0.15,
    multi_turn_bonus: float = 0.05,
    cap: float = 1.0,
) -> float:
    """Information density of a segment, capped at 1 (S5).

    Why these signals: named entities, agent reasoning/tool use, workflow-linked observations or blobs,
    and several cooperating services all mark a segment that carries more than small talk.
    `distinct_origin_services` counts distinct `origin_service` values; only those beyond the first
    score. `turn_count` > 1 scores the multi-turn bonus.
    """
    score = 0.0
    if has_entities:
        score += entities_bonus
    if has_thought_or_action:
        score += thought_or_action_bonus
    if has_workflow_observation_or_blob:
        score += observation_bonus
    score += per_extra_service_bonus * max(0, int(distinct_origin_services) - 1)
    if turn_count > 1:
        score += multi_turn_bonus
    return min(cap, score)


def heat_clock_start(last_accessed_at: datetime | None, consolidated_at: datetime) -> datetime:
    """Where ΔT starts (S5): the later of the last access and the chain's consolidation (its formation or
    latest merge). So a chain is hot when memory first holds it, however old its events are (imported
    history), it cools from then on, and an access restarts the clock."""
    if last_accessed_at is None:
        return consolidated_at
    return max(last_accessed_at, consolidated_at)


def elapsed_hours(last_accessed_at: datetime | None, since: datetime, now: datetime) -> float:
    """Hours from the later of `last_accessed_at` and `since` to `now`, ≥ 0.

    For heat (S5) `since` is the chain's consolidation; for real idleness (archival, S7) it is the last
    event."""
    reference = since if last_accessed_at is None else max(last_accessed_at, since)
    return max(0.0, (now - reference).total_seconds() / 3600.0)


def recall_on_access(
    strength: float,
    previous_access: datetime | None,
    now: datetime,
    spacing_hours: float = 12.0,
    factor: float = 1.5,
) -> float:
    """New recall strength after a chain is returned to an agent (S5.2, spaced repetition).

    `S ×= factor` only if the previous access was at least `spacing_hours` before `now`: re-reading a
    chain minutes apart is one recall, not many, so bursts cannot inflate it. `previous_access=None`
    (never accessed since the chain was formed) gives no boost: there was no earlier recall to space
    from, so the first access only starts the clock. A previous access in the future (clock skew) gives
    no boost either. The result is never below 1.
    """
    s = max(1.0, float(strength))
    if previous_access is None:
        return s
    gap_hours = (now - previous_access).total_seconds() / 3600.0
    if gap_hours >= spacing_hours:
        s *= factor
    return max(1.0, s)


def compute_heat(
    *,
    intrinsic_importance: float,
    density: float,
    hours_since_access: float,
    strength: float = 1.0,
    tau_hours: float = 24.0,
    importance_weight: float = 0.7,
    density_weight: float = 0.3,
) -> HeatFactors:
    """Compute I_base and heat together and return every factor, so the API can explain a heat value."""
    i_base = base_importance(
        intrinsic_importance, density, importance_weight=importance_weight, density_weight=density_weight
    )
    s = max(1.0, float(strength))
    dt = max(0.0, float(hours_since_access))
    return HeatFactors(
        i_base=i_base,
        density=min(1.0, max(0.0, float(density))),
        intrinsic_importance=min(1.0, max(0.0, float(intrinsic_importance))),
        strength=s,
        hours_since_access=dt,
        heat=heat_score(i_base, dt, s, tau_hours),
    )
