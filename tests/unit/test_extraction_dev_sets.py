"""The offline extractor on its two development sets (issue 14 item 3): chat phrasings written blind to the
extractor and to the facts benchmark's splits, each filled with several objects and read as a user turn.

The extractor was tuned on these sets (`docs/facts-eval.md`, fourth round), so the floors below guard
against regressions; they are no figure for unseen wordings: the benchmark's fresh split stays that figure.
A decoy leaks when the tool it names becomes a USES claim of the user (confidence at the retrieval floor).
"""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from types import ModuleType

import pytest

from athena_core.ltm.extraction.offline_extractor import OfflineTripleExtractor
from athena_core.ltm.extraction.port import ExtractionTurn
from athena_core.models.ontology import ExtractedTriple, snake_id
from athena_eval.facts.scoring import ids_match
from tests.unit import extraction_dev_phrasings as DEV_1
from tests.unit import extraction_dev_phrasings_2 as DEV_2
from tests.unit import extraction_dev_phrasings_3 as DEV_3

FLOOR = 0.5
AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
# relation (or personal-fact kind) -> (graph relation, objects as written)
OBJECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "USES": ("USES", ("Neovim", "PostgreSQL", "Kafka", "Figma", "Terraform")),
    "WORKS_ON": ("WORKS_ON", ("the checkout service", "the billing dashboard", "the data pipeline")),
    "STRUGGLES_WITH": ("STRUGGLES_WITH", ("flaky integration tests", "time zone handling", "Kafka consumer rebalancing")),
    "EXPRESSED_INTEREST": ("EXPRESSED_INTEREST", ("category theory", "sourdough baking", "compiler design")),
    "EXHIBITS": ("EXHIBITS", ("a night owl", "methodical", "a perfectionist", "detail-oriented")),
    "PLACE": ("RELATES_TO", ("Lisbon", "Nairobi", "Krakow")),
    "PERSON": ("RELATES_TO", ("Ingrid", "Kofi", "Mei")),
    "POSSESSION": ("RELATES_TO", ("Biscuit", "Miso", "Juniper")),
}
CLIENTS = (("the billing dashboard", "Globex"), ("the search api", "Northwind Traders"))
SWITCHES = (("Emacs", "Neovim"), ("Vim", "Bun"), ("Jenkins", "Kotlin"))
DECOY_TOOLS = ("Redpanda", "Ansible", "Cassandra")
EXTRACTOR = OfflineTripleExtractor()


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _object_id(written: str) -> str:
    return snake_id(written.removeprefix("the ").removeprefix("a ").removeprefix("an "))


def read_turn(text: str) -> list[ExtractedTriple]:
    """What the extractor writes from one user turn (answered by a neutral agent turn)."""
    turns = [ExtractionTurn("e1", "u", "user", AT, text),
             ExtractionTurn("e2", "agent", "agent", AT, "Sounds good, tell me more about that.")]
    return EXTRACTOR.extract("", entities=[], turns=turns).triples


def user_claims(text: str, relation: str) -> set[str]:
    return {t.object.id for t in read_turn(text)
            if t.subject.id == "user" and t.relation == relation and t.confidence >= FLOOR}


def _statements(dev: ModuleType) -> Iterator[bool]:
    """One bool per (template, object): whether the planted fact became a claim."""
    for kind, (relation, objects) in OBJECTS.items():
        for template in getattr(dev, kind, ()):
            for written in objects:
                found = user_claims(template.format(x=written, X=_cap(written)), relation)
                yield any(ids_match(_object_id(written), f) for f in found)
    for template in getattr(dev, "BUILT_FOR_CLIENT", ()):
        for project, client in CLIENTS:
            text = template.format(p=project, P=_cap(project), c=client)
            yield any(t.relation == "BUILT_FOR_CLIENT" and t.confidence >= FLOOR and ids_match(snake_id(client), t.object.id)
                      and ids_match(_object_id(project), t.subject.id) for t in read_turn(text))
    for template in getattr(dev, "SWITCH", ()):
        for old, new in SWITCHES:
            found = user_claims(template.format(a=old, b=new, A=_cap(old), B=_cap(new)), "USES")
            yield {snake_id(old), snake_id(new)} <= found


def _leaks(dev: ModuleType) -> Iterator[bool]:
    """One bool per (decoy, tool): whether the tool became a USES claim. A past use alone ("I haven't touched
    X in years") is a true old value (seed 003), not a decoy, so it is left out."""
    for kind, template in dev.DECOYS:
        if kind == "past_only":
            continue
        for tool in DECOY_TOOLS:
            text = template.format(x=tool, X=tool, n="Priya")
            yield snake_id(tool) in user_claims(text, "USES")


@pytest.mark.parametrize(("dev", "recall_floor"), [(DEV_1, 0.9), (DEV_2, 0.85), (DEV_3, 0.8)],
                         ids=["dev1", "dev2", "dev3"])
def test_the_development_sets_stay_read(dev: ModuleType, recall_floor: float) -> None:
    read = list(_statements(dev))
    leaked = list(_leaks(dev))
    assert len(read) > 300 and len(leaked) > 90
    assert sum(read) / len(read) >= recall_floor
    assert sum(leaked) / len(leaked) <= 0.05


@pytest.mark.parametrize("text", [
    "I dropped Jenkins. Bun is what I use now.",
    "Bun is what I use now. I stopped using Jenkins when it got too slow.",
    "Not using Jenkins anymore. I switched to Bun and it's way nicer.",
])
def test_a_change_told_over_two_sentences_keeps_both_values(text: str) -> None:
    uses = {t.object.id: t for t in read_turn(text) if t.relation == "USES" and t.subject.id == "user"}
    assert uses["jenkins"].confidence >= FLOOR and uses["bun"].confidence >= FLOOR
    assert uses["jenkins"].context_nuance.startswith("previously")
    assert not uses["bun"].context_nuance.startswith("previously")


def test_a_lone_left_tool_stays_below_the_floor() -> None:
    uses = {t.object.id: t for t in read_turn("I dropped Jenkins last year.") if t.relation == "USES"}
    assert uses["jenkins"].confidence < FLOOR


@pytest.mark.parametrize(("text", "relation", "obj"), [
    ("Kotlin, I use every day.", "USES", "kotlin"),
    ("The checkout service - that's the project I'm working on these days.", "WORKS_ON", "checkout_service"),
    ("Time zone handling. I can never get that stuff right.", "STRUGGLES_WITH", "time_zone_handling"),
    ("The thing I keep coming back to is Neovim, I use it constantly.", "USES", "neovim"),
    ("i'm based in Lisbon", "RELATES_TO", "lisbon"),
    ("Also the thing I keep fighting with is flaky integration tests on CI.", "STRUGGLES_WITH", "flaky_integration_tests"),
    ("What's been killing me lately is time zone handling in the nightly jobs.", "STRUGGLES_WITH", "time_zone_handling"),
])
def test_objects_said_before_their_clause_are_read(text: str, relation: str, obj: str) -> None:
    assert obj in user_claims(text, relation)


@pytest.mark.parametrize("text", [
    "I used to use Jenkins back in college.",
    "say i was using Jenkins, how would that change things",
    "I'd love to use Jenkins someday, but work won't allow it.",
    "My colleague Priya is on Jenkins now.",
])
def test_past_wished_and_others_uses_are_no_current_claim(text: str) -> None:
    assert "jenkins" not in user_claims(text, "USES")
