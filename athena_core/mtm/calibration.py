"""Similarity thresholds per embedding model.

SPEC S4's numbers (break gate 0.72 / 0.52, merge 0.6 / 0.7) are on the scale of OpenAI embeddings.
Cosines from all-MiniLM-L6-v2 run lower: on LoCoMo (4 conversations, measured with
`bench/similarity_calibration.py`) unrelated turns from different sessions have median cosine 0.21
(90th percentile 0.38) while a speaker's consecutive turns have median 0.39 (90th percentile 0.60).
With the SPEC numbers almost every follow-up would "break". So each model carries its calibration,
and any explicitly configured `ATHENA_*` threshold overrides it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from athena_core.wiring.settings import Settings


@dataclass(frozen=True)
class Calibration:
    break_high: float
    break_low: float
    merge_similarity: float
    merge_confidence: float


SPEC_SCALE = Calibration(break_high=0.72, break_low=0.52, merge_similarity=0.6, merge_confidence=0.7)

MODEL_CALIBRATIONS: dict[str, Calibration] = {
    # 0.60 = 90th percentile of consecutive same-speaker turns; 0.30 ≈ 70th percentile of unrelated pairs.
    # Merge keeps the SPEC's 0.1 step between similarity and confidence, shifted to this scale.
    "all-MiniLM-L6-v2": Calibration(break_high=0.60, break_low=0.30, merge_similarity=0.5, merge_confidence=0.6),
}


def calibration_for(settings: Settings, model_name: str) -> Calibration:
    base = MODEL_CALIBRATIONS.get(model_name, SPEC_SCALE)
    overrides = {
        field: value
        for field, value in (
            ("break_high", settings.chain_sim_high),
            ("break_low", settings.chain_sim_low),
            ("merge_similarity", settings.merge_min_similarity),
            ("merge_confidence", settings.merge_min_confidence),
        )
        if value is not None
    }
    return replace(base, **overrides)
