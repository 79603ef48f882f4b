"""The user persona (SPEC S2 GetContext `user_persona`): the user's strongest current facts as sentences.

One small renderer per relation of the ontology turns a user fact into what a person would write about
someone: "Uses Go.", "Works on the payments service.", "Struggles with pgxpool settings.". Which facts:
the user's own (the user node as subject), strongest first (weight, then confidence, then the current
value of its relation before older ones), leaving out a
value that was replaced — not the current value of its (subject, relation), and described by its
evidence as a past one ("previously", "used to", "no longer" …). Time alone cannot tell a replaced
value from one of several held at once (Go, pgx and PostgreSQL are all used), so the nuance decides.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from athena_core.ltm.fact_timeline import TimelineMark
from athena_core.models.ontology import USER_NODE_ID, Fact

# Words the extraction's nuance uses for a value no longer held ("previously, switched to Zed"). Only
# unambiguous ones: a nuance may quote its turn, and "I switched from VS Code to Zed" is quoted on both edges.
PAST_VALUE = re.compile(r"\b(previously|formerly|used to|no longer|not anymore|anymore|stopped|gave up|abandoned|"
                        r"replaced by)\b", re.I)


def _name(fact: Fact) -> str:
    return " ".join(fact.object.name.split()) or fact.object.id.replace("_", " ")


def _with_article(fact: Fact) -> str:
    """"the payments service" for a lower-case project phrase; a proper name ("Athena") stays bare."""
    name = _name(fact)
    if fact.object.label == "Projects" and name == name.lower() and not re.match(r"(the|my|our|a|an) ", name):
        return f"the {name}"
    return name


def _short_nuance(nuance: str, words: int = 8) -> str:
    """The extractor's own words about a fact ("lives in"), not the turn it may quote after a colon."""
    head = nuance.split(": ", 1)[0] if ": " in nuance else nuance
    return " ".join(head.split()[:words])


def _relates_to(fact: Fact) -> str:
    nuance = _short_nuance(fact.context_nuance)
    return f"Relates to {_name(fact)} ({nuance})." if nuance else f"Relates to {_name(fact)}."


RENDERERS: dict[str, Callable[[Fact], str]] = {
    "USES": lambda f: f"Uses {_name(f)}.",
    "WORKS_ON": lambda f: f"Works on {_with_article(f)}.",
    "BUILT_FOR_CLIENT": lambda f: f"Builds for the client {_name(f)}.",
    "STRUGGLES_WITH": lambda f: f"Struggles with {_name(f)}.",
    "EXHIBITS": lambda f: f"Exhibits {_name(f)}.",
    "EXPRESSED_INTEREST": lambda f: f"Is interested in {_name(f)}.",
    "RELATES_TO": _relates_to,
}


def persona_sentence(fact: Fact) -> str:
    """A user fact as a sentence about the user (an off-list relation reads as RELATES_TO)."""
    return RENDERERS.get(fact.relation, _relates_to)(fact)


def is_replaced(fact: Fact, mark: TimelineMark | None) -> bool:
    """A value no longer held: not its relation's current value, and its nuance says it is a past one."""
    return mark is not None and not mark.is_current and bool(PAST_VALUE.search(fact.context_nuance or ""))


def persona_lines(facts: list[Fact], marks: dict[str, TimelineMark], limit: int) -> list[str]:
    """The user's strongest current facts, one sentence each, at most `limit`, no sentence twice."""
    own = [f for f in facts if f.subject.id == USER_NODE_ID and not is_replaced(f, marks.get(f.edge_id))]
    worked_on = {f.object.id for f in own if f.relation == "WORKS_ON"}
    # "digging into the inventory sync service" reads as an interest; one who works on it says more
    own = [f for f in own if not (f.relation == "EXPRESSED_INTEREST" and f.object.id in worked_on)]
    current = {f.edge_id: (m := marks.get(f.edge_id)) is None or m.is_current for f in own}
    own.sort(key=lambda f: (-f.weight, -f.confidence, not current[f.edge_id], f.edge_id))
    lines = list(dict.fromkeys(persona_sentence(f) for f in own))
    return lines[: max(limit, 0)]
