"""Change over time (SPEC S6, seed 003): which value of a fact is the current one and which came first.

Nothing is superseded in the graph: "I switched from VS Code to Zed" leaves both edges, each with its
`valid_at`. A read answers "current" and "initial" by time alone, per (subject, relation): the current
value is the one observed last (newest `valid_at`), the initial one the one observed first (oldest
`first_valid_at`). A (subject, relation) with one value has it both current and initial. Only a value a
reader can rely on is marked: when the (subject, relation) has values at or above the retrieval floor
(SPEC S6.4, `graph_min_confidence`, 0.5), an unsure value written below it (seed 002: written low, not
dropped) is neither current nor initial, so "what do I use now?" never answers with a guess over a
stated fact. RELATES_TO is one (subject, relation) per relation its nuance names (`timeline_key`).
Pure: the caller passes every value it knows of the (subject, relation) — a partial history gives a
partial answer.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from athena_core.models.ontology import Fact

Order = Literal["earliest", "latest"]
RETRIEVAL_FLOOR = 0.5  # SPEC S6.4's default; the service passes its `graph_min_confidence`
MAX_KIND_WORDS = 3  # a nuance head longer than this is prose (a model's free text), not a relation's name
T = TypeVar("T")


@dataclass(frozen=True)
class TimelineMark:
    is_current: bool
    is_initial: bool
    values: int  # how many objects its (subject, relation) has had

    @property
    def changed(self) -> bool:
        return self.values > 1


def timeline_key(fact: Fact) -> tuple[str, str, str]:
    """The (subject, relation) whose values succeed each other. RELATES_TO holds every relation outside the
    ontology, the original kept at the head of its nuance (SPEC S6.1: "based in: …", "colleague: …"), so a
    place the user is based in and a colleague they name are two relations, not two values of one."""
    kind = ""
    if fact.relation == "RELATES_TO" and ":" in fact.context_nuance:
        head = fact.context_nuance.split(":", 1)[0].strip().lower()
        kind = head if len(head.split()) <= MAX_KIND_WORDS else ""
    return fact.subject.id, fact.relation, kind


def mark_timeline(facts: Iterable[Fact], floor: float = RETRIEVAL_FLOOR) -> dict[str, TimelineMark]:
    """edge id → its mark. Ties break on the other timestamp, then the edge id, so marks are stable."""
    groups: dict[tuple[str, str, str], dict[str, Fact]] = defaultdict(dict)
    for fact in facts:
        groups[timeline_key(fact)].setdefault(fact.edge_id, fact)
    marks: dict[str, TimelineMark] = {}
    for group in groups.values():
        edges = list(group.values())
        values = len({f.object.id for f in edges})
        sure = [f for f in edges if f.confidence >= floor] or edges
        current = max(sure, key=lambda f: (f.valid_at, f.first_valid_at, f.edge_id)).edge_id
        initial = min(sure, key=lambda f: (f.first_valid_at, f.valid_at, f.edge_id)).edge_id
        for f in edges:
            marks[f.edge_id] = TimelineMark(is_current=values == 1 or f.edge_id == current,
                                            is_initial=values == 1 or f.edge_id == initial, values=values)
    return marks


def prefers(mark: TimelineMark | None, order: Order | None) -> bool:
    """Whether a time cue asks for this value: "currently" the current one, "first" the initial one.
    A fact with a single value, or no cue, is never held back."""
    if mark is None or order is None or not mark.changed:
        return True
    return mark.is_current if order == "latest" else mark.is_initial


def order_by_cue(items: Sequence[T], mark_of: dict[str, TimelineMark], edge_id, order: Order | None) -> list[T]:
    """`items` with the values the cue asks for moved ahead of the other values (a stable sort):
    "what do I use now?" ranks the current value first, "what did I use first?" the initial one."""
    if order is None:
        return list(items)
    return sorted(items, key=lambda item: not prefers(mark_of.get(edge_id(item)), order))
