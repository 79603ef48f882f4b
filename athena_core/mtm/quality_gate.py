"""Quality gate: is a finished segment worth a chain? (SPEC S4)

Runs without an LLM, on lexical signals of the transcript and the formation output, so it is cheap,
deterministic and cannot be talked into passing by the model it is checking. Five sub-scores, each in
[0, 1], are combined with the SPEC weights 0.3 / 0.25 / 0.25 / 0.1 / 0.1; the segment passes when the
weighted overall reaches the mode's threshold (permissive 0.4, balanced 0.5, strict 0.7). A failing
segment's events are marked `rejected` and no chain is formed.

The sub-scores and their text model are in `quality_subscores.py`; here the weights, the modes and
the verdict.

Pure functions; the SPEC weights and thresholds are keyword defaults so callers pass the settings.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from athena_core.models.chains import QualityScores
from athena_core.mtm.quality_subscores import (
    cognitive_depth_score,
    coherence_score,
    completeness_score,
    content_tokens,
    engagement_score,
    relevance_score,
)
from athena_core.providers.llm import TranscriptLine

__all__ = [
    "QUALITY_THRESHOLDS",
    "QUALITY_WEIGHTS",
    "QualityScores",
    "cognitive_depth_score",
    "coherence_score",
    "completeness_score",
    "content_tokens",
    "engagement_score",
    "passes",
    "relevance_score",
    "score_segment",
    "threshold_for",
    "weighted_overall",
]

QUALITY_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "coherence": 0.30,
        "completeness": 0.25,
        "relevance": 0.25,
        "engagement": 0.10,
        "cognitive_depth": 0.10,
    }
)
QUALITY_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {"permissive": 0.4, "balanced": 0.5, "strict": 0.7}
)


# ------------------------------------------------------------------------------------------- verdict


def threshold_for(mode: str, *, thresholds: Mapping[str, float] = QUALITY_THRESHOLDS) -> float:
    """Pass threshold of a `QUALITY_MODE` (case-insensitive); unknown → ValueError naming the valid modes."""
    key = mode.strip().lower()
    if key not in thresholds:
        raise ValueError(f"unknown quality mode {mode!r}; valid modes: {', '.join(sorted(thresholds))}")
    return thresholds[key]


def weighted_overall(
    scores: QualityScores | Mapping[str, float], *, weights: Mapping[str, float] = QUALITY_WEIGHTS
) -> float:
    """Weighted sum of the sub-scores (SPEC weights 0.3/0.25/0.25/0.1/0.1).

    Rounded to 6 decimals so float noise cannot flip a verdict at a threshold (e.g. five sub-scores of
    exactly 0.5 give 0.5, not 0.49999999999999994).
    """
    values = scores.model_dump() if isinstance(scores, QualityScores) else scores
    missing = [name for name in weights if name not in values]
    if missing:
        raise ValueError(f"missing sub-scores: {', '.join(missing)}")
    return round(sum(weights[name] * float(values[name]) for name in weights), 6)


def passes(
    overall: float, mode: str = "balanced", *, thresholds: Mapping[str, float] = QUALITY_THRESHOLDS
) -> bool:
    """A segment passes when `overall >= threshold(mode)` (inclusive: 0.5 passes balanced)."""
    return overall >= threshold_for(mode, thresholds=thresholds)


def score_segment(
    lines: Sequence[TranscriptLine],
    summary: str,
    topic: str,
    entities: Sequence[str],
    mode: str = "balanced",
    *,
    weights: Mapping[str, float] = QUALITY_WEIGHTS,
    thresholds: Mapping[str, float] = QUALITY_THRESHOLDS,
) -> QualityScores:
    """Score a finished segment and its formation output; the verdict decides chain vs `rejected` (S4)."""
    threshold = threshold_for(mode, thresholds=thresholds)  # fail fast on a bad mode
    sub = {
        "coherence": round(coherence_score(lines, topic, entities), 6),
        "completeness": round(completeness_score(lines), 6),
        "relevance": round(relevance_score(lines, summary, topic, entities), 6),
        "engagement": round(engagement_score(lines), 6),
        "cognitive_depth": round(cognitive_depth_score(lines, entities), 6),
    }
    overall = min(1.0, max(0.0, weighted_overall(sub, weights=weights)))
    return QualityScores(**sub, overall=overall, passed=overall >= threshold, mode=mode.strip().lower())
