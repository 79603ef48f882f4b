"""Topic-break gate: when does a finished topic become a segment? (SPEC S4)

The pipeline compares the two newest user messages of a scope. Automation that shares a workflow or
execution is one topic by construction (skip). Otherwise the cosine similarity of their embeddings
decides cheaply at the extremes, and only the gray zone in between costs an LLM call. Independently
of topic, a scope is consolidated when too many events are pending (force) or it went quiet (idle),
so no event is ever left unsummarized.

Pure functions; every SPEC number is a keyword default so callers pass the configured settings.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Literal

import numpy as np

__all__ = [
    "BreakDecision",
    "Gate",
    "can_break_topic",
    "cosine_similarity",
    "cuts_segment",
    "decision_for_gate",
    "gate_by_cosine",
    "is_idle",
    "needs_force_flush",
    "should_skip",
]

Gate = Literal["same", "break", "gray"]


class BreakDecision(StrEnum):
    """The path a segmentation check took; the values are the metric label `path` (S10)."""

    COSINE_HIGH = "cosine_high"  # similarity >= high: same topic
    COSINE_LOW = "cosine_low"  # similarity < low: topic break
    GRAY_ZONE = "gray_zone"  # in between: not final, ask the LLM
    SKIP = "skip"  # shared workflow_id / execution_id: same topic, no embedding compared
    FORCE = "force"  # too many pending events: consolidate regardless of topic
    IDLE = "idle"  # scope idle long enough: consolidate regardless of topic
    LLM_TRUE = "llm_true"  # LLM says the two messages share a topic: no break
    LLM_FALSE = "llm_false"  # LLM says they do not: topic break


_CUTTING = frozenset(
    {BreakDecision.COSINE_LOW, BreakDecision.LLM_FALSE, BreakDecision.FORCE, BreakDecision.IDLE}
)


def cuts_segment(decision: BreakDecision | str) -> bool:
    """Whether a final decision consolidates the pending events into a segment.

    `gray_zone` is not final (the LLM must still answer), so asking about it is a caller bug: ValueError.
    """
    d = BreakDecision(decision)
    if d is BreakDecision.GRAY_ZONE:
        raise ValueError("gray_zone is not a final decision; resolve it with the LLM (llm_true / llm_false)")
    return d in _CUTTING


def can_break_topic(role: str, type_: str) -> bool:
    """Only a user message (`role=user, type=message`) can start a new topic (S4)."""
    return role == "user" and type_ == "message"


def _present(meta: Mapping[str, str], key: str) -> str:
    value = meta.get(key)
    return value.strip() if isinstance(value, str) else ""


def should_skip(
    prev_meta: Mapping[str, str],
    cur_meta: Mapping[str, str],
    *,
    keys: Sequence[str] = ("workflow_id", "execution_id"),
) -> bool:
    """True when the two newest user messages share a non-empty `workflow_id` or `execution_id` (S4).

    Messages of one workflow run belong to one topic whatever their wording, so no similarity is
    computed. Empty (or whitespace-only) ids never match: two messages with no workflow are not "the
    same workflow".
    """
    for key in keys:
        a = _present(prev_meta, key)
        if a and a == _present(cur_meta, key):
            return True
    return False


def gate_by_cosine(similarity: float, *, high: float = 0.72, low: float = 0.52) -> Gate:
    """Classify a similarity: `>= high` → "same", `< low` → "break", otherwise "gray" (ask the LLM).

    Both ends are decided without an LLM call, which keeps the common case cheap. NaN falls in the
    gray zone, so an unusable embedding is arbitrated rather than silently deciding.
    """
    if low > high:
        raise ValueError(f"low threshold {low} must not exceed high threshold {high}")
    if similarity >= high:
        return "same"
    if similarity < low:
        return "break"
    return "gray"


def decision_for_gate(gate: Gate) -> BreakDecision:
    """Map a cosine gate result to its metric path."""
    return {
        "same": BreakDecision.COSINE_HIGH,
        "break": BreakDecision.COSINE_LOW,
        "gray": BreakDecision.GRAY_ZONE,
    }[gate]


def cosine_similarity(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> float:
    """Cosine similarity in [−1, 1] of two vectors; 0.0 when either is a zero vector (no direction).

    Computed in float64 and clipped, so rounding on unit vectors cannot step outside [−1, 1].
    """
    va = np.asarray(a, dtype=np.float64).ravel()
    vb = np.asarray(b, dtype=np.float64).ravel()
    if va.shape != vb.shape:
        raise ValueError(f"vector dimensions differ: {va.shape[0]} vs {vb.shape[0]}")
    na = float(np.linalg.norm(va))
    nb = float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.clip(np.dot(va, vb) / (na * nb), -1.0, 1.0))


def needs_force_flush(pending_count: int, max_events: int = 20) -> bool:
    """A scope with `>= max_events` pending events is consolidated now, topic or not (S4).

    Bounds segment size (and the LLM prompt) for long single-topic streams.
    """
    return pending_count >= max_events


def is_idle(last_event_at: datetime, now: datetime, idle_seconds: float = 1800) -> bool:
    """A scope quiet for `>= idle_seconds` (30 min) is flushed by the beat task (S4).

    Without it, the last topic of a conversation would wait forever for a break that never comes.
    """
    return (now - last_event_at).total_seconds() >= idle_seconds
