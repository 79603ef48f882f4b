"""Promotion (SPEC S6.1): a hot chain's summary becomes facts in the user's knowledge graph.

A chain is promoted once per distinct content: its content hash is the evidence id every fact carries,
so the graph counts an observation once however often a pass (or a retry) writes it, and `weight`
counts independent observations. `prepare` (the extraction, an LLM call) and `commit` (the graph write)
are separate so the promoter can hold the user's write lock, and check the purge fence, only around the write.

Extraction reads the summary and, given an event log, the chain's verbatim turns (user and agent messages,
newest first, at most `ATHENA_EXTRACTION_TURN_TOKENS` tokens, default `TURN_TOKEN_BUDGET`): each fact's
`valid_at` is then its source turn's timestamp and it keeps that turn's event id (`evidence_event_ids`);
a fact only the summary states keeps the chain's last event as `valid_at` (SPEC S6.1).

What counts as one observation (`weight`): a fact read from a turn is observed once per turn that states
it (observation id `turn:<event id>`), so a chain that grew by a merge and is promoted again adds only its
new turns, and a chain imported whole counts each session that said it; a fact only the summary states
counts once per chain content, as before.
"""
from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from athena_core.ltm.extraction import ExtractionTurn, TripleExtractor, normalise_triples
from athena_core.stores.graph.port import GraphStore, GraphWriteConflict
from athena_core.models.chains import Chain
from athena_core.models.scope import UserScope
from athena_core.models.events import Event, EventRole, EventType
from athena_core.stores.documents.port import ChainStore, EventLog

# The newest turns of a chain the extractor reads, in (approximate) tokens: about 4/3 per word.
TURN_TOKEN_BUDGET = 2000


def _approx_tokens(text: str) -> int:
    return len(text.split()) * 4 // 3 + 1


def extraction_turns(events: list[Event], budget: int = TURN_TOKEN_BUDGET) -> list[ExtractionTurn]:
    """The chain's user and agent messages, newest first, until `budget` tokens (the newest always)."""
    turns: list[ExtractionTurn] = []
    used = 0
    messages = [e for e in events if e.type == EventType.message and e.role in (EventRole.user, EventRole.agent)
                and e.content.strip()]
    for event in sorted(messages, key=lambda e: (e.timestamp, e.event_id), reverse=True):
        cost = _approx_tokens(event.content)
        if turns and used + cost > budget:
            break
        used += cost
        speaker = event.user_id if event.role == EventRole.user else event.agent_id
        turns.append(ExtractionTurn(event.event_id, speaker, event.role.value, event.timestamp, event.content))
    return turns


def content_hash(chain: Chain) -> str:
    """What the chain says now: a merge that changes its summary or events changes the hash."""
    text = "\n".join([chain.topic, chain.summary, *sorted(chain.entities), *sorted(chain.event_ids)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class PreparedPromotion:
    chain: Chain
    scope: UserScope
    evidence: str
    facts: list
    corrected: int


@dataclass(frozen=True)
class PromotionResult:
    chain_id: str
    facts: int
    new_observations: int
    corrected_relations: int


# A write conflict (a concurrent write to the same edge won; nothing of ours was written) is retried this
# many times in all, after a short jittered backoff; then it is raised, and the chain stays unpromoted.
WRITE_ATTEMPTS = 4
WRITE_BACKOFF_S = 0.05


class Promoter:
    def __init__(
        self, documents: ChainStore, graph: GraphStore, extractor: TripleExtractor, *,
        sleep: Callable[[float], None] = time.sleep, events: EventLog | None = None,
        turn_token_budget: int = TURN_TOKEN_BUDGET,
    ) -> None:
        self.documents = documents
        self.events = events  # None: summary-only extraction
        self.turn_token_budget = turn_token_budget
        self.graph = graph
        self.extractor = extractor
        self._sleep = sleep

    def needs_promotion(self, chain: Chain) -> bool:
        return chain.promoted_evidence != content_hash(chain)

    def promote(self, chain: Chain, heat: float, now: datetime) -> PromotionResult:
        """Extract, normalise and UPSERT one chain's facts; raises LLMSchemaError on a bad extraction."""
        return self.commit(self.prepare(chain, heat), now)

    def prepare(self, chain: Chain, heat: float) -> PreparedPromotion:
        """Extract and normalise (no write); raises LLMSchemaError on a bad extraction."""
        scope = UserScope(tenant_id=chain.tenant_id, user_id=chain.user_id)
        evidence = content_hash(chain)
        turns = self._turns(scope, chain)
        if turns:
            extraction = self.extractor.extract(
                chain.summary, entities=chain.entities, tenant_id=chain.tenant_id, turns=turns,
            )
        else:  # an extractor written for the summary alone still works
            extraction = self.extractor.extract(chain.summary, entities=chain.entities, tenant_id=chain.tenant_id)
        facts, report = normalise_triples(
            extraction, user_name=chain.user_id, valid_at=chain.last_event_at, heat_score=heat,
            evidence_id=f"{chain.chain_id}:{evidence}", turns=turns,
        )
        return PreparedPromotion(chain, scope, evidence, facts, report.corrected)

    def _turns(self, scope: UserScope, chain: Chain) -> list[ExtractionTurn]:
        if self.events is None or not chain.event_ids:
            return []
        return extraction_turns(self.events.get_events(scope, list(chain.event_ids)), self.turn_token_budget)

    def commit(self, prepared: PreparedPromotion, now: datetime) -> PromotionResult:
        """UPSERT the facts and record the promoted content. A `GraphWriteConflict` is retried (safe: the
        write was rolled back, and observations count once by evidence id); raised after WRITE_ATTEMPTS."""
        new = self._upsert(prepared, now) if prepared.facts else 0
        self.documents.mark_promoted(prepared.scope, prepared.chain.chain_id, prepared.evidence)
        return PromotionResult(prepared.chain.chain_id, len(prepared.facts), new, prepared.corrected)

    def _upsert(self, prepared: PreparedPromotion, now: datetime) -> int:
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return self.graph.upsert_facts(prepared.scope, prepared.facts, now)
            except GraphWriteConflict:
                if attempt == WRITE_ATTEMPTS:
                    raise
                self._sleep(WRITE_BACKOFF_S * 2 ** (attempt - 1) * (1 + random.random()))
        raise AssertionError("unreachable")
