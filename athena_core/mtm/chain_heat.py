"""Heat of a stored chain now (SPEC S5): the pure heat functions applied to a chain's fields."""
from __future__ import annotations

from datetime import datetime

from athena_core.models.chains import HeatFactors
from athena_core.mtm.heat import compute_heat, elapsed_hours
from athena_core.models.chains import Chain


def chain_heat(chain: Chain, now: datetime, tau_hours: float = 24.0) -> HeatFactors:
    """ΔT runs from the last access, else the last event; S is the chain's recall strength."""
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
