"""How evidence reads in a result: every event, chain and fact shows its date(s), and a subject's
relation that changed over time shows which value was the initial one and which is current."""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from athena_core.ltm.retrieval import statement
from athena_core.models.chains import Chain
from athena_core.models.ontology import Fact
from athena_core.retrieval.time_cues import render_date, render_span


def render_event(at: datetime, text: str) -> str:
    return f"[{render_date(at)}] {text}"


def render_chain(chain: Chain) -> str:
    return f"[{render_span(chain.started_at, chain.last_event_at)}] {chain.summary}"


def fact_timeline(facts: list[Fact]) -> dict[str, str]:
    """edge id → "initially" / "currently" where a subject's relation had several values over time.

    Ordered by valid_at (SPEC S6): the first value observed is the initial one, the last the current one.
    """
    groups: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for fact in facts:
        groups[(fact.subject.id, fact.relation)].append(fact)
    labels: dict[str, str] = {}
    for group in groups.values():
        if len({f.object.id for f in group}) < 2:
            continue
        ordered = sorted(group, key=lambda f: (f.first_valid_at, f.valid_at))
        labels[ordered[0].edge_id] = "initially"
        labels[max(group, key=lambda f: (f.valid_at, f.first_valid_at)).edge_id] = "currently"
    return labels


def render_fact(fact: Fact, label: str | None) -> str:
    span = render_span(fact.first_valid_at, fact.valid_at)
    return f"[{span}] {label + ': ' if label else ''}{statement(fact)}"
