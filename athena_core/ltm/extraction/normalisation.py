"""Normalisation of extracted triples into graph-ready facts: snake_case ids, the seven-relation vocabulary
(anything else becomes RELATES_TO with the original kept in the nuance, counted), first-person mentions
collapsed onto the user node (but never "assistant", "you" or a third party), self-loops dropped,
duplicates merged, confidences clamped."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from athena_core.ltm.extraction.port import ExtractionTurn

from athena_core.models.ontology import (
    ExtractedNode,
    FIRST_PERSON,
    FactObservation,
    RELATIONS,
    TripleExtraction,
    USER_NODE_ID,
    snake_id,
)
from athena_core.observability.metrics import EXTRACTION_RELATION_CORRECTIONS

FALLBACK_RELATION = "RELATES_TO"
# A value the speaker moved away from ("I switched from VS Code to Zed": VS Code) carries this nuance prefix
# and is stamped just before its turn, so ordering by valid_at gives the old value first, the new one last.
PAST_PREFIX = "previously"
PAST_OFFSET = timedelta(seconds=1)
USER_LABEL = "Identities"


@dataclass
class ExtractionReport:
    """What normalisation did to one extraction.

    `kept`: facts returned; `dropped`: triples discarded (an id empty after snake-casing, or a self-loop
    once first person was resolved); `merged`: duplicates folded into a kept fact; `corrected`: off-list
    relations rewritten to RELATES_TO; `first_person_resolved`: endpoints mapped onto the user node.
    """

    kept: int = 0
    dropped: int = 0
    merged: int = 0
    corrected: int = 0
    first_person_resolved: int = 0


def _clamp(value: float) -> float:
    if value is None or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def is_first_person(node: ExtractedNode) -> bool:
    """"I", "me", "my", "we", "user", "the user" (id or name). Not "you", "assistant" or any other name."""
    return snake_id(node.id) in FIRST_PERSON or snake_id(node.name) in FIRST_PERSON


def _endpoint(node: ExtractedNode, user_name: str) -> tuple[str, str, str, bool]:
    """(id, label, name, resolved_to_user) of one triple end."""
    if is_first_person(node):
        return USER_NODE_ID, USER_LABEL, user_name or USER_NODE_ID, True
    node_id = snake_id(node.id) or snake_id(node.name)  # an LLM that left the id blank still named it
    name = " ".join(node.name.split()) or node_id
    return node_id, node.label, name, False


def turn_evidence_id(event_id: str) -> str:
    """The observation id of a fact stated in one turn: the same whichever chain content holds the turn."""
    return f"turn:{event_id}"


def _valid_at(at: datetime, nuance: str) -> datetime:
    return at - PAST_OFFSET if nuance.startswith(PAST_PREFIX) else at


def normalise_relation(relation: str) -> str:
    """Uppercased, stripped, inner spaces/hyphens as underscores ("works on" → "WORKS_ON")."""
    return re.sub(r"[\s\-]+", "_", relation.strip()).upper()


def normalise_triples(
    extraction: TripleExtraction,
    *,
    user_name: str,
    valid_at: datetime,
    heat_score: float,
    evidence_id: str,
    turns: Sequence[ExtractionTurn] = (),
) -> tuple[list[FactObservation], ExtractionReport]:
    """Graph-ready facts from one extraction, in first-seen order, and a report of what changed.

    A triple citing a turn (`triple.turn`, an index into `turns`) takes that turn's timestamp as its
    `valid_at`, its event id as evidence and `turn:<event id>` as its observation id: the turn is the
    observation, so a fact two turns state counts twice, each with its own time, and re-promoting a chain
    that grew (a merge) counts only its new turns. One citing none (or an index out of range) takes
    `valid_at` (the chain's last event), no event id, and `evidence_id` (the chain's content). A triple on
    the user node citing an agent's turn is dropped: an agent's first person is the agent, never the user
    (SPEC S6.1). A value the speaker left (nuance `PAST_PREFIX`) is stamped `PAST_OFFSET` before its turn."""
    report = ExtractionReport()
    merged: dict[tuple[str, str, str, str], FactObservation] = {}
    for triple in extraction.triples:
        s_id, s_label, s_name, s_user = _endpoint(triple.subject, user_name)
        o_id, o_label, o_name, o_user = _endpoint(triple.object, user_name)
        report.first_person_resolved += int(s_user) + int(o_user)
        if not s_id or not o_id or s_id == o_id:
            report.dropped += 1
            continue
        source = turns[triple.turn] if 0 <= triple.turn < len(turns) else None
        if source is not None and source.role != "user" and (s_user or o_user):
            report.dropped += 1
            continue
        relation = normalise_relation(triple.relation)
        nuance = " ".join(triple.context_nuance.split())
        if relation not in RELATIONS:
            report.corrected += 1
            EXTRACTION_RELATION_CORRECTIONS.inc()
            original = relation or "UNSPECIFIED"
            nuance = f"{original}: {nuance}" if nuance else original
            relation = FALLBACK_RELATION
        fact = FactObservation(
            subject_id=s_id, subject_label=s_label, subject_name=s_name, relation=relation,
            object_id=o_id, object_label=o_label, object_name=o_name,
            confidence=_clamp(triple.confidence), context_nuance=nuance,
            heat_score=heat_score, valid_at=_valid_at(source.timestamp if source is not None else valid_at, nuance),
            evidence_id=turn_evidence_id(source.event_id) if source is not None else evidence_id,
            evidence_event_ids=[source.event_id] if source is not None else [],
        )
        key = (s_id, relation, o_id, source.event_id if source is not None else "")
        previous = merged.get(key)
        if previous is None:
            merged[key] = fact
            continue
        report.merged += 1
        events = list(dict.fromkeys([*previous.evidence_event_ids, *fact.evidence_event_ids]))
        if fact.confidence > previous.confidence:  # the surer reading wins, nuance included
            merged[key] = fact.model_copy(update={"evidence_event_ids": events})
        else:
            merged[key] = previous.model_copy(update={"evidence_event_ids": events})
    facts = list(merged.values())
    report.kept = len(facts)
    return facts, report
