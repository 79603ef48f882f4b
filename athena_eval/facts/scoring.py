"""Scores of one user's graph against what the generator planted (pure: hand-made graphs test it).

Claims are the graph's facts a reader sees as the user's: subject the user (or a BUILT_FOR_CLIENT edge,
whose subject is the user's project), confidence at or above the retrieval floor (SPEC S6.4, 0.5).
An unsure fact written low is no claim, so honest low confidences cost no precision.

- precision: claims that match a planted fact / claims.
- recall: planted facts some claim matches / planted facts.
- weight accuracy: of the recalled facts, the share whose edge weight equals the number of sessions that
  stated the fact.
- change order: of the planted changes (A then B), the share where both edges exist, A came first
  (`first_valid_at`) and B is newer (`valid_at`).
- initial/current: per (subject, relation) with a planted change whose two values were both recalled,
  whether the graph's current (newest `valid_at`) and initial (oldest `first_valid_at`) objects are the
  planted ones among the recalled values (a missing value is a recall miss, not counted twice). The graph's own
  `is_current` / `is_initial` flags are used when its facts carry them, else they are computed here.
- decoy leakage: decoys (a third party's or the assistant's objects; in the fresh split also the user's
  negations, hypotheticals and questions) that became a user claim / decoys.

Object ids match when equal, or when the graph's id holds every word of the planted one and at most two
more ("pgxpool_settings" for "pgxpool"; "memory_leaks" for "memory_leaks_in_the_worker" does not count).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from athena_eval.facts.generator import Change, Decoy, PlantedFact

RETRIEVAL_FLOOR = 0.5
USER = "user"


@dataclass(frozen=True)
class GraphFact:
    subject: str
    relation: str
    obj: str
    weight: int
    confidence: float
    valid_at: datetime
    first_valid_at: datetime
    is_current: bool | None = None
    is_initial: bool | None = None


def ids_match(planted: str, found: str) -> bool:
    """Equal, or `found`'s words hold all of `planted`'s and at most two more."""
    if planted == found:
        return True
    p, f = planted.split("_"), found.split("_")
    return bool(planted) and set(p) <= set(f) and len(f) - len(p) <= 2


def is_claim(fact: GraphFact, floor: float = RETRIEVAL_FLOOR) -> bool:
    return fact.confidence >= floor and (fact.subject == USER or fact.relation == "BUILT_FOR_CLIENT")


def _matches(planted: PlantedFact, fact: GraphFact) -> bool:
    return planted.relation == fact.relation and ids_match(planted.subject, fact.subject) \
        and ids_match(planted.obj, fact.obj)


@dataclass
class Tally:
    """Counts that add up across users; `rates()` turns them into the reported numbers."""

    claims: int = 0
    true_claims: int = 0
    planted: int = 0
    recalled: int = 0
    weight_right: int = 0
    changes: int = 0
    changes_right: int = 0
    groups: int = 0
    groups_right: int = 0
    decoys: int = 0
    leaked: int = 0

    def add(self, other: "Tally") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def rates(self) -> dict[str, float | None]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None
        return {
            "precision": ratio(self.true_claims, self.claims), "recall": ratio(self.recalled, self.planted),
            "weight_accuracy": ratio(self.weight_right, self.recalled),
            "change_order_accuracy": ratio(self.changes_right, self.changes),
            "initial_current_accuracy": ratio(self.groups_right, self.groups),
            "decoy_leakage": ratio(self.leaked, self.decoys),
            "claims": self.claims, "planted": self.planted, "decoys": self.decoys,
        }


def _flags(group: Sequence[GraphFact]) -> tuple[str | None, str | None]:
    """(current, initial) object ids of one (subject, relation): the graph's flags if it has them."""
    if not group:
        return None, None
    if all(f.is_current is not None and f.is_initial is not None for f in group):
        current = next((f.obj for f in group if f.is_current), None)
        initial = next((f.obj for f in group if f.is_initial), None)
        return current, initial
    current = max(group, key=lambda f: f.valid_at).obj
    initial = min(group, key=lambda f: f.first_valid_at).obj
    return current, initial


def _expected_flags(planted: Sequence[PlantedFact], changes: Sequence[Change]) -> tuple[str, str]:
    """The planted current (latest statement; a switch's old value counts as just before it) and initial."""
    olds = {c.initial for c in changes}

    def last(fact: PlantedFact) -> tuple[datetime, int]:
        return max(fact.mentioned_at), 0 if fact.obj in olds else 1
    current = max(planted, key=last).obj
    initial = min(planted, key=lambda f: (min(f.mentioned_at), f.obj not in olds)).obj
    return current, initial


def score_user(planted: Sequence[PlantedFact], changes: Sequence[Change], decoys: Sequence[Decoy],
               graph: Iterable[GraphFact], *, floor: float = RETRIEVAL_FLOOR,
               splits: Sequence[str] | None = None) -> Tally:
    """One user's tally. `splits` keeps only the planted facts (and changes) stated in those phrasing
    splits for recall, weight and changes; precision and leakage always count all claims. Leakage counts
    the shared decoys (split "any") in the tuning and held-out rows, and only its own in the fresh row."""
    facts = list(graph)
    claims = [f for f in facts if is_claim(f, floor)]
    kept = [p for p in planted if splits is None or p.split in splits]
    decoys = [d for d in decoys if splits is None or d.split in splits
              or (d.split == "any" and "fresh" not in splits)]
    t = Tally(claims=len(claims), planted=len(kept), decoys=len(decoys))
    t.true_claims = sum(1 for c in claims if any(_matches(p, c) for p in planted))
    for p in kept:
        found = [c for c in claims if _matches(p, c)]
        if found:
            t.recalled += 1
            t.weight_right += int(max(found, key=lambda c: c.weight).weight == p.weight)
    user_objects = [c.obj for c in claims if c.subject == USER]
    t.leaked = sum(1 for d in decoys if any(ids_match(d.obj, o) for o in user_objects))
    for change in changes:
        if splits is not None and change.split not in splits:
            continue
        t.changes += 1
        a = [c for c in claims if c.subject == USER and c.relation == change.relation and ids_match(change.initial, c.obj)]
        b = [c for c in claims if c.subject == USER and c.relation == change.relation and ids_match(change.current, c.obj)]
        if a and b:
            t.changes_right += int(min(x.first_valid_at for x in a) < min(x.first_valid_at for x in b)
                                   and max(x.valid_at for x in b) > max(x.valid_at for x in a))
    groups: dict[tuple[str, str], list[PlantedFact]] = {}
    for p in planted:
        groups.setdefault((p.subject, p.relation), []).append(p)
    for (subject, relation), members in groups.items():
        relation_changes = [c for c in changes if (c.subject, c.relation) == (subject, relation)]
        if not relation_changes or (splits is not None and not any(c.split in splits for c in relation_changes)):
            continue
        group = [c for c in claims if c.subject == subject and c.relation == relation]
        recalled = [m for m in members if any(_matches(m, c) for c in group)]
        if not all(any(ids_match(value, m.obj) for m in recalled)
                   for change in relation_changes for value in (change.initial, change.current)):
            continue  # a value of the change is missing: a recall miss, counted there
        t.groups += 1
        want_current, want_initial = _expected_flags(recalled, relation_changes)
        current, initial = _flags(group)
        t.groups_right += int(current is not None and initial is not None and ids_match(want_current, current)
                              and ids_match(want_initial, initial))
    return t
