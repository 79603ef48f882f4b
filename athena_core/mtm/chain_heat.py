"""Heat of a stored chain now (SPEC S5): the pure heat functions applied to a chain's fields."""
from __future__ import annotations

from datetime import datetime

from athena_core.models.chains import Chain, HeatFactors
from athena_core.mtm.heat import compute_heat, elapsed_hours


def chain_heat(chain: Chain, now: datetime, tau_hours: float = 24.0) -> HeatFactors:
    """S5 heat: ΔT runs from the later of the last access and the chain's consolidation (formation or
    latest merge), so imported history is hot when first consolidated; S is the recall strength."""
    return compute_heat(
        intrinsic_importance=chain.intrinsic_importance,
        density=chain.density,
        hours_since_access=elapsed_hours(chain.last_accessed_at, chain.consolidated_at, now),
        strength=chain.recall_strength,
        tau_hours=tau_hours,
    )


def idle_heat(chain: Chain, now: datetime, tau_hours: float = 24.0) -> HeatFactors:
    """The heat curve over real idleness (S7 archival): ΔT from the later of the last event and the last
    access, not from consolidation, so a freshly imported chain of old events is still cold for archival."""
    return compute_heat(
        intrinsic_importance=chain.intrinsic_importance,
        density=chain.density,
        hours_since_access=elapsed_hours(chain.last_accessed_at, chain.last_event_at, now),
        strength=chain.recall_strength,
        tau_hours=tau_hours,
    )


def idle_days(chain: Chain, now: datetime) -> float:
    """Days since the chain was last touched (an event or an access)."""
    last = max(chain.last_event_at, chain.last_accessed_at or chain.last_event_at)
    return max(0.0, (now - last).total_seconds() / 86400)
