"""The parse's struggles, interests and projects (`parsed_phrases`, issue 14 item 3): measured on the fifth
development set, written blind to the extractor; the parse was developed on it, so the floors guard
against regressions against the patterns alone (0.267 / 0.650 / 0.550 before it), not unseen wordings."""
from __future__ import annotations

import pytest

from athena_core.ltm.extraction.offline_extractor import OfflineTripleExtractor
from athena_core.ltm.extraction.port import ExtractionTurn
from athena_eval.facts.scoring import ids_match
from tests.unit import extraction_dev_phrasings_5 as DEV_5
from tests.unit import test_extraction_dev_sets as dev_sets

AT = dev_sets.AT


def _recall(extractor: OfflineTripleExtractor, kind: str) -> float:
    relation, objects = dev_sets.OBJECTS[kind]
    hits = total = 0
    for template in getattr(DEV_5, kind):
        for written in objects:
            text = template.format(x=written, X=dev_sets._cap(written))
            turns = [ExtractionTurn("e1", "u", "user", AT, text),
                     ExtractionTurn("e2", "agent", "agent", AT, "Sounds good, tell me more about that.")]
            found = {t.object.id for t in extractor.extract("", entities=[], turns=turns).triples
                     if t.subject.id == "user" and t.relation == relation and t.confidence >= dev_sets.FLOOR}
            hits += any(ids_match(dev_sets._object_id(written), f) for f in found)
            total += 1
    return hits / total


@pytest.mark.parametrize(("kind", "floor"), [("STRUGGLES_WITH", 0.575), ("WORKS_ON", 0.775), ("EXPRESSED_INTEREST", 0.6)])
def test_the_parse_reads_phrase_relations_the_patterns_miss(kind: str, floor: float) -> None:
    with_parse = _recall(OfflineTripleExtractor(), kind)
    alone = _recall(OfflineTripleExtractor(parser=False), kind)
    assert with_parse >= floor and with_parse > alone


@pytest.mark.parametrize(("text", "relation", "obj"), [
    ("Time zone handling is eating my weekends.", "STRUGGLES_WITH", "time_zone_handling"),
    ("Still banging my head against flaky integration tests, send help", "STRUGGLES_WITH", "flaky_integration_tests"),
    ("I've been nerding out on category theory lately", "EXPRESSED_INTEREST", "category_theory"),
    # a listed verb whose lemma ends in "e" keeps it ("struggling" -> "struggle", not "struggl")
    ("Struggling hard with time zone handling, any tips?", "STRUGGLES_WITH", "time_zone_handling"),
    ("wrestling with flaky integration tests for what feels like the hundredth time", "STRUGGLES_WITH",
     "flaky_integration_tests"),
    ("I'm out of my depth with Kafka consumer rebalancing", "STRUGGLES_WITH", "kafka_consumer_rebalancing"),
    ("I find time zone handling really confusing", "STRUGGLES_WITH", "time_zone_handling"),
    ("I find compiler design super interesting and want to know more", "EXPRESSED_INTEREST", "compiler_design"),
    ("I find coroutines super interesting and want to know more", "EXPRESSED_INTEREST", "coroutines"),
    ("I've been tasked with scaling the checkout service", "WORKS_ON", "checkout_service"),
    ("I'm responsible for keeping the billing dashboard alive and well", "WORKS_ON", "billing_dashboard"),
    ("I'm on call for the data pipeline this month", "WORKS_ON", "data_pipeline"),
    ("hey, I'm putting together the checkout service and need to pick a database", "WORKS_ON", "checkout_service"),
])
def test_an_unlisted_wording_is_a_claim(text: str, relation: str, obj: str) -> None:
    assert obj in dev_sets.user_claims(text, relation)


@pytest.mark.parametrize("text", [
    "my friend Priya says time zone handling is eating their weekends",
    "Priya's been fighting flaky integration tests for days, poor thing",
    "if I ever end up fighting flaky integration tests, where would I start?",
    "I'm not struggling with time zone handling at all, just wanted to share a neat trick",
])
def test_no_claim_for_someone_elses_or_an_unstated_struggle(text: str) -> None:
    assert not dev_sets.user_claims(text, "STRUGGLES_WITH")


@pytest.mark.parametrize(("text", "relation", "obj"), [
    ("hey, I'm putting together the checkout service and need to pick a database", "EXPRESSED_INTEREST", "database"),
    ("I don't find time zone handling confusing at all", "STRUGGLES_WITH", "time_zone_handling"),
    ("My sister finds compiler design fascinating", "EXPRESSED_INTEREST", "compiler_design"),
    ("Priya is the main dev on the checkout service", "WORKS_ON", "checkout_service"),
    ("I'm not responsible for the billing dashboard", "WORKS_ON", "billing_dashboard"),
])
def test_no_claim_for_a_choice_a_negation_or_someone_elses_role(text: str, relation: str, obj: str) -> None:
    """"pick" without "up" is a choice, not learning; a negated reading or a third party's is no claim."""
    assert obj not in dev_sets.user_claims(text, relation)


def test_a_fronted_phrase_frames_the_clause_and_is_not_its_object() -> None:
    """Seen on make run: "On a different note, …" was read as the interest ("different_note")."""
    text = "On a different note, I've been nerding out on category theory lately, any book you would suggest?"
    claims = dev_sets.user_claims(text, "EXPRESSED_INTEREST")
    assert "category_theory" in claims and "different_note" not in claims


@pytest.mark.parametrize(("capped_by_question", "expected"), [(True, 0.55), (False, 0.45)])
def test_only_a_reading_the_question_capped_is_lifted(capped_by_question: bool, expected: float) -> None:
    """The parse lifts a pattern's reading that the sentence's question lowered to the hedge cap; a reading
    that was low for its own reason (an unsure pattern, 0.45) stays low though the parse finds it stated."""
    from athena_core.ltm.extraction.summary_sentence import USER, Node, SummarySentence
    from athena_core.models.ontology import ExtractedNode, ExtractedTriple

    s = SummarySentence("I keep tripping over time zone handling, is there a sane mental model for it?", {})
    s.claimed.update(t.start for t in s.toks if t.lower in ("time", "zone", "handling"))
    low = ExtractedTriple(subject=ExtractedNode(id=USER.id, label=USER.label, name=USER.name),
                          relation="STRUGGLES_WITH",
                          object=ExtractedNode(id="time_zone_handling", label="Concepts", name="time zone handling"),
                          confidence=0.45, context_nuance="")
    out = [low]
    emitted: list[tuple[str, Node]] = []
    OfflineTripleExtractor._parsed_phrases(s, out, lambda _s, rel, obj, *a, **k: emitted.append((rel, obj)),
                                           {0} if capped_by_question else set())
    assert out[0].confidence == expected and not emitted
