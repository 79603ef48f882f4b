"""Segmentation (SPEC S4): which pending events of an agent scope form finished topic segments.

`plan_segments` is pure: it walks the pending events in order, asks `decide` about each pair of
consecutive user messages, and cuts before a user message that breaks the topic, or when the open
segment reaches `max_events` (force flush), or everything when the scope went idle. Whatever is not
cut stays pending: the open segment. `BreakDetector` is the `decide` the pipeline uses: the cosine
gate over the two messages' embeddings, with the LLM only in the gray zone.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from athena_core.models.events import Event, EventRole, EventType
from athena_core.mtm.topic_breaks import (
    BreakDecision,
    cosine_similarity,
    cuts_segment,
    decision_for_gate,
    gate_by_cosine,
    should_skip,
)
from athena_core.providers.embeddings import Embedder
from athena_core.providers.llm import LLMProvider

Decide = Callable[[Event, Event, list[Event]], BreakDecision]
GRAY_ZONE_CONTEXT_EVENTS = 6


def is_user_message(event: Event) -> bool:
    """Only user messages can break a topic."""
    return event.role == EventRole.user and event.type == EventType.message


@dataclass
class SegmentPlan:
    segments: list[list[Event]] = field(default_factory=list)  # finished, oldest first
    open_events: list[Event] = field(default_factory=list)  # still pending
    decisions: list[BreakDecision] = field(default_factory=list)  # one per check, for metrics


def plan_segments(
    pending: list[Event],
    previous_user_message: Event | None,
    decide: Decide,
    *,
    max_events: int = 20,
    flush_all: bool = False,
) -> SegmentPlan:
    """Cut `pending` (chronological) into finished segments and the open remainder."""
    plan = SegmentPlan()
    start = 0
    previous = previous_user_message
    for i, event in enumerate(pending):
        if is_user_message(event):
            if previous is not None:
                decision = decide(previous, event, pending[max(start, i - GRAY_ZONE_CONTEXT_EVENTS):i])
                plan.decisions.append(decision)
                if cuts_segment(decision) and i > start:
                    plan.segments.append(pending[start:i])
                    start = i
            previous = event
        if i + 1 - start >= max_events:
            plan.decisions.append(BreakDecision.FORCE)
            plan.segments.append(pending[start : i + 1])
            start = i + 1
    if flush_all and start < len(pending):
        plan.decisions.append(BreakDecision.IDLE)
        plan.segments.append(pending[start:])
        start = len(pending)
    plan.open_events = pending[start:]
    return plan


class BreakDetector:
    """The break gate of SPEC S4 over real embeddings, with LLM arbitration in the gray zone."""

    def __init__(
        self, embedder: Embedder, llm: LLMProvider, *, high: float = 0.72, low: float = 0.52, tenant_id: str = "",
        vectors: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        """`vectors`: event id → the message's stored vector (arrival indexing embedded it already); a
        message not in it is embedded."""
        self.embedder = embedder
        self.llm = llm
        self.high = high
        self.low = low
        self.tenant_id = tenant_id
        self.vectors = vectors or {}

    def _vector(self, event: Event) -> np.ndarray:
        known = self.vectors.get(event.event_id)
        return known if known is not None else self.embedder.embed([event.content])[0]

    def __call__(self, previous: Event, current: Event, context: list[Event] | None = None) -> BreakDecision:
        """Gate the two newest user messages; in the gray zone the LLM also sees the open segment's tail."""
        if should_skip(previous.metadata, current.metadata):
            return BreakDecision.SKIP
        decision = decision_for_gate(gate_by_cosine(
            cosine_similarity(self._vector(previous), self._vector(current)), high=self.high, low=self.low))
        if decision is not BreakDecision.GRAY_ZONE:
            return decision
        recent = [e.content for e in (context or []) if e.event_id != previous.event_id]
        same = self.llm.same_topic("\n".join([previous.content, *recent]), current.content, tenant_id=self.tenant_id)
        return BreakDecision.LLM_TRUE if same else BreakDecision.LLM_FALSE
