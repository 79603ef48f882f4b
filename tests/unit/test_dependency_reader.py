"""The dependency parse in the offline extractor (issue 14 item 3: a library that does the linguistics,
measured against the patterns alone).

Two sets written blind to the extractor: `extraction_dev_phrasings_4` (uses, switches, decoys) and
`extraction_third_party_decoys` (someone else's tools). Set 4 was measured before the reader was tuned on
it (docs/facts-eval.md, fifth round); the floors here guard the tuned state.
"""
from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from athena_core.ltm.extraction import dependency_reader
from athena_core.ltm.extraction.offline_extractor import OfflineTripleExtractor
from athena_core.models.ontology import snake_id
from tests.unit import extraction_dev_phrasings_4 as DEV_4
from tests.unit import extraction_third_party_decoys as THIRD_PARTY
from tests.unit import test_extraction_dev_sets as dev_sets

PARSED = OfflineTripleExtractor(parser=True)
PATTERNS_ALONE = OfflineTripleExtractor(parser=False)


def _read(extractor: OfflineTripleExtractor, dev: ModuleType) -> tuple[float, float]:
    """(recall, leakage) of one extractor on one development set, scored as the other sets are."""
    previous, dev_sets.EXTRACTOR = dev_sets.EXTRACTOR, extractor
    try:
        read, leaked = list(dev_sets._statements(dev)), list(dev_sets._leaks(dev))
    finally:
        dev_sets.EXTRACTOR = previous
    return sum(read) / len(read), sum(leaked) / len(leaked)


def _third_party_leaks(extractor: OfflineTripleExtractor) -> Iterator[bool]:
    previous, dev_sets.EXTRACTOR = dev_sets.EXTRACTOR, extractor
    try:
        for template in THIRD_PARTY.THIRD_PARTY:
            for tool in ("Ansible", "Cassandra", "Airflow"):
                yield snake_id(tool) in dev_sets.user_claims(template.format(x=tool, X=tool, n="Priya"), "USES")
    finally:
        dev_sets.EXTRACTOR = previous


def test_the_parser_is_installed_and_enabled_by_default() -> None:
    assert dependency_reader.available()
    assert OfflineTripleExtractor().parser and not PATTERNS_ALONE.parser


def test_the_parse_reads_what_the_patterns_miss_without_leaking() -> None:
    parsed_recall, parsed_leak = _read(PARSED, DEV_4)
    alone_recall, alone_leak = _read(PATTERNS_ALONE, DEV_4)
    assert parsed_recall >= 0.74 and parsed_recall >= alone_recall + 0.1
    assert parsed_leak <= 0.02 and parsed_leak <= alone_leak


def test_the_parse_gives_other_peoples_tools_back_to_them() -> None:
    parsed = list(_third_party_leaks(PARSED))
    alone = list(_third_party_leaks(PATTERNS_ALONE))
    assert len(parsed) >= 150
    assert sum(parsed) / len(parsed) <= 0.05 < sum(alone) / len(alone)


def _uses(text: str) -> dict[str, float]:
    return {t.object.id: t.confidence for t in dev_sets.read_turn(text) if t.subject.id == "user" and t.relation == "USES"}


@pytest.mark.parametrize(("text", "tool"), [
    ("been living in Kafka lately, it's kind of taken over my workflow", "kafka"),
    ("Terraform powers our internal tooling.", "terraform"),
    ("I have Terraform set up on both of my laptops.", "terraform"),
    ("Most of my week is spent in Terraform.", "terraform"),
    ("since I'm on Terraform, how do I set up a config that survives upgrades?", "terraform"),
])
def test_a_use_in_an_unlisted_wording_is_a_claim(text: str, tool: str) -> None:
    assert _uses(text).get(tool, 0.0) >= dev_sets.FLOOR


@pytest.mark.parametrize("text", [
    "I introduced Priya to Ansible.",
    "I have zero experience with Ansible.",
    "Ansible has always seemed awful to me, and I've never even tried it.",
    "The backend folks swear by Ansible, but I've never touched it myself.",
    "The vendor we're evaluating uses Ansible under the hood, according to their sales guy.",
    "If I used Ansible, would this be easier?",
    "My old classmate Sven works with Ansible at their job.",
    "Everyone at Priya's company uses Ansible, which is why she keeps sending me articles about it.",
])
def test_no_claim_for_a_tool_someone_else_uses_or_the_speaker_does_not(text: str) -> None:
    assert _uses(text).get("ansible", 0.0) < dev_sets.FLOOR
