"""How evidence reads in a result: every event, chain and fact shows its date(s), and a subject's
relation that changed over time shows which value was the initial one and which is current."""
from __future__ import annotations

from datetime import datetime

from athena_core.ltm.fact_timeline import TimelineMark
from athena_core.ltm.retrieval import statement
from athena_core.models.chains import Chain
from athena_core.models.ontology import Fact
from athena_core.retrieval.time_cues import render_date, render_span


def render_event(at: datetime, text: str) -> str:
    return f"[{render_date(at)}] {text}"


def render_chain(chain: Chain) -> str:
    return f"[{render_span(chain.started_at, chain.last_event_at)}] {chain.summary}"


def timeline_label(mark: TimelineMark | None) -> str | None:
    """"initially" / "currently" for a value of a (subject, relation) that had several; None otherwise."""
    if mark is None or not mark.changed or not (mark.is_initial or mark.is_current):
        return None
    if mark.is_initial and mark.is_current:
        return "initially and currently"
    return "initially" if mark.is_initial else "currently"


def render_fact(fact: Fact, mark: TimelineMark | None) -> str:
    """"[6 January 2025 – 1 March 2025] initially: user works on apollo"."""
    span = render_span(fact.first_valid_at, fact.valid_at)
    label = timeline_label(mark)
    return f"[{span}] {label + ': ' if label else ''}{statement(fact)}"
