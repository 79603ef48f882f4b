"""The offline extractor on ordinary chat (issue 14 items 2 and 3): the phrasings an HTTP run missed, a
change of value kept as two edges in time order, "it" resolved within the turn or dropped, personal facts
as RELATES_TO with their nuance, third parties and the assistant kept apart, and the demo sample's persona."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from importlib import resources

from athena_core.ltm.extraction import ExtractionTurn, OfflineTripleExtractor, normalise_triples
from athena_core.models.ontology import FactObservation

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def facts_of(*texts: str | tuple[str, str]) -> list[FactObservation]:
    """Facts from turns given oldest first: a plain string is a user turn, (role, text) any turn."""
    turns = []
    for i, item in enumerate(texts):
        role, text = ("user", item) if isinstance(item, str) else item
        turns.append(ExtractionTurn(f"ev-{i}", "sam" if role == "user" else "helper", role,
                                    T0 + timedelta(minutes=i), text))
    turns.reverse()  # newest first, as the promoter reads them
    extraction = OfflineTripleExtractor().extract("", entities=[], turns=turns)
    facts, _ = normalise_triples(extraction, user_name="sam", valid_at=T0, heat_score=0.5, evidence_id="c:1",
                                 turns=turns)
    return facts


def triples(facts: list[FactObservation], floor: float = 0.5) -> set[tuple[str, str, str]]:
    return {(f.subject_id, f.relation, f.object_id) for f in facts if f.confidence >= floor}


def test_the_phrasings_the_http_run_missed() -> None:
    assert ("checkout_service", "BUILT_FOR_CLIENT", "northwind_traders") in triples(
        facts_of("The checkout service is for Northwind Traders."))
    assert ("user", "STRUGGLES_WITH", "building_wheels") in triples(facts_of("Building wheels is a struggle."))
    assert ("user", "WORKS_ON", "billing_dashboard") in triples(
        facts_of("The project I spend most of my week on is the billing dashboard."))
    assert ("user", "EXPRESSED_INTEREST", "kafka_consumer_rebalancing") in triples(
        facts_of("I'd love to understand Kafka consumer rebalancing."))
    assert ("user", "STRUGGLES_WITH", "kafka_consumer_rebalancing") in triples(
        facts_of("Kafka consumer rebalancing is something I keep fighting with."))


def test_a_switch_keeps_both_values_the_old_one_first() -> None:
    facts = facts_of("I use VS Code for everything.", "I switched from VS Code to Zed.")
    by_object = {f.object_id: f for f in facts if f.relation == "USES" and f.evidence_event_ids == ["ev-1"]}
    zed, vs_code = by_object["zed"], by_object["vs_code"]
    assert vs_code.valid_at < zed.valid_at == T0 + timedelta(minutes=1)  # the old value is the past
    assert vs_code.context_nuance.startswith("previously") and "switched from VS Code" in zed.context_nuance
    assert min(f.valid_at for f in facts if f.object_id == "vs_code") == T0  # and was stated before


def test_it_resolves_to_what_the_turn_named_and_is_dropped_otherwise() -> None:
    facts = facts_of("Flutter came up at work, I'm a heavy Flutter user. Honestly I use it all day.")
    assert ("user", "USES", "flutter") in triples(facts)
    alone = facts_of("I use it all day.")
    assert not [f for f in alone if f.relation == "USES"]  # no antecedent: nothing guessed
    other_turn = facts_of("I picked up Flutter last month.", ("agent", "Nice."), "I use it all day.")
    from_last = [f for f in other_turn if f.evidence_event_ids == ["ev-2"]]
    assert from_last == []  # "it" is not carried across turns


def test_a_subject_it_is_the_project_the_turn_named() -> None:
    facts = facts_of("I'm working on the checkout service. It's written in Go. It's for Northwind Traders.")
    found = triples(facts)
    assert {("checkout_service", "USES", "go"), ("checkout_service", "BUILT_FOR_CLIENT", "northwind_traders")} <= found
    assert ("user", "USES", "go") not in found  # the service's language, not a claim about the speaker
    named = facts_of("The checkout service is written in Go.")
    guessed = next(f for f in facts if f.object_id == "go")
    assert guessed.confidence < next(f for f in named if f.object_id == "go").confidence  # "it" is a guess
    situation = facts_of("I'm working on the checkout service. It's been a long week.")
    assert {f.subject_id for f in situation} == {"user"}
    after_tool = facts_of("I use Redis. It is written in C.")  # after a tool, "it" stays unread as a subject
    assert not [f for f in after_tool if f.subject_id == "redis"]


def test_what_instead_of_sets_aside_is_not_the_speakers() -> None:
    found = triples(facts_of("Instead of learning Rust, I use Go."))
    assert ("user", "USES", "go") in found
    assert not [t for t in found if t[2] == "rust"]
    found = triples(facts_of("Rather than struggling with Kafka, I use Redis."))
    assert ("user", "USES", "redis") in found
    assert not [t for t in found if t[2] == "kafka"]


def test_an_option_a_choice_set_aside_was_never_the_speakers_but_a_plain_instead_of_is_a_change() -> None:
    """Seen in `make demo`: "I decided we will use pgx directly instead of an ORM" gave "uses ORM [earlier]"."""
    for text, chosen, other in (("I decided we will use pgx directly instead of an ORM.", "pgx", "orm"),
                                ("We went with Postgres rather than MongoDB.", "postgresql", "mongodb"),
                                ("I'll use Zed instead of VS Code for the Go code.", "zed", "vs_code")):
        found = triples(facts_of(text))
        assert ("user", "USES", chosen) in found, text
        assert ("user", "USES", other) not in found, text
    left = [f for f in facts_of("I use Zed instead of VS Code now.") if f.object_id == "vs_code"]
    assert left and left[0].relation == "USES" and left[0].context_nuance.startswith("previously")


def test_how_x_works_is_an_interest_in_x() -> None:
    """Seen on `make run`: "I'd love to understand how CRDTs work" gave an interest in "CRDTs work"."""
    assert ("user", "EXPRESSED_INTEREST", "crdts") in triples(facts_of("I'd love to understand how CRDTs work."))
    assert ("user", "STRUGGLES_WITH", "borrow_checker") in \
        triples(facts_of("I keep struggling with how the borrow checker works."))
    assert ("user", "EXPRESSED_INTEREST", "crdts_work") not in triples(facts_of("I'd love to understand how CRDTs work."))


def test_an_it_after_a_comma_is_the_project_the_clause_before_named() -> None:
    """Seen on `make run`: "…digging into the inventory sync service again, it's the project I spend most of
    my week on" gave no WORKS_ON: the comma splice is read as two sentences, "it" as the project."""
    found = triples(facts_of("Today I'm digging into the inventory sync service again, "
                             "it's the project I spend most of my week on."))
    assert ("user", "WORKS_ON", "inventory_sync_service") in found
    assert ("user", "USES", "redis") in triples(facts_of("I use Redis, it's fast."))  # after a tool: unchanged


def test_pronoun_objects_are_written_lower_than_named_ones() -> None:
    named = {f.object_id: f.confidence for f in facts_of("I picked up Terraform recently.")}
    via_it = [f for f in facts_of("Terraform is new to me. I use it all day.") if f.object_id == "terraform"
              and f.relation == "USES"]
    assert via_it and via_it[0].confidence < named["terraform"]
    # a name the extractor cannot tell is a product is no antecedent: "it" is dropped, not guessed
    assert not [f for f in facts_of("Svelte is new to me. I use it all day.") if f.relation == "USES"]


def test_personal_facts_are_relates_to_with_their_nuance() -> None:
    facts = {f.object_id: f for f in facts_of(
        "I live in Lisbon.", "My sister Ana visits every month.", "I have a dog named Biscuit.")}
    assert {k: (facts[k].relation, facts[k].context_nuance.split(":")[0]) for k in ("lisbon", "ana", "biscuit")} == {
        "lisbon": ("RELATES_TO", "lives in"), "ana": ("RELATES_TO", "sister"), "biscuit": ("RELATES_TO", "has a dog")}
    assert facts["ana"].object_label == "Identities"


def test_third_parties_and_the_assistant_keep_their_facts() -> None:
    facts = facts_of("My colleague Priya uses Java.", "Femi from my team wants to learn Redpanda.",
                     ("agent", "I'd recommend Cassandra here. I use Helm myself for this kind of work."),
                     ("agent", "You could try Airflow for that."))
    user_objects = {f.object_id for f in facts if f.subject_id == "user"}
    assert not user_objects & {"java", "redpanda", "cassandra", "helm", "airflow"}
    assert ("priya", "USES", "java") in triples(facts)


def test_the_demo_sample_yields_the_users_persona_and_a_change() -> None:
    sample = json.loads(resources.files("athena_devtools.samples").joinpath("demo_conversation.json").read_text())
    facts: list[FactObservation] = []
    for number, session in enumerate(sample["sessions"]):
        texts: list[str | tuple[str, str]] = []
        for turn in session["turns"]:
            if "user" in turn:
                texts += [turn["user"], ("agent", turn["agent"])]
        facts += [f.model_copy(update={"valid_at": f.valid_at + timedelta(days=7 * number)}) for f in facts_of(*texts)]
    found = triples(facts)
    assert {("user", "USES", "go"), ("user", "USES", "pgx"), ("user", "USES", "postgresql"),
            ("user", "WORKS_ON", "payments_service"), ("user", "STRUGGLES_WITH", "pgxpool_settings"),
            ("user", "EXPRESSED_INTEREST", "spaced_repetition")} <= found
    switch = {f.object_id: f for f in facts if f.object_id in ("vs_code", "zed")}
    assert switch["vs_code"].valid_at < switch["zed"].valid_at  # initially VS Code, currently Zed


def test_a_product_named_after_a_known_tool_is_named_whole() -> None:
    """Seen on `make run`: "I moved from Jenkins to GitHub Actions" gave "uses GitHub"."""
    found = triples(facts_of("Switching topics: I moved from Jenkins to GitHub Actions for our CI this spring."))
    assert ("user", "USES", "github_actions") in found and ("user", "USES", "github") not in found
    assert ("user", "USES", "react_native") in triples(facts_of("We use React Native for the mobile app."))
    assert ("user", "USES", "github") in triples(facts_of("I use GitHub for everything."))


def test_an_ing_word_before_a_project_word_modifies_it() -> None:
    """Seen on `make run`: "I'm responsible for keeping the billing API alive, it's written in Kotlin" gave no
    Kotlin, and "The billing API is written in Kotlin" nothing: "billing" was read as a verb."""
    assert ("billing_api", "USES", "kotlin") in triples(facts_of("The billing API is written in Kotlin."))
    found = triples(facts_of("I'm responsible for keeping the billing API alive, it's written in Kotlin."))
    assert ("billing_api", "USES", "kotlin") in found and ("user", "WORKS_ON", "billing_api") in found
    rewriting = triples(facts_of("I'm rewriting the billing service in Go."))  # an object still: the speaker's
    assert ("user", "WORKS_ON", "billing_service") in rewriting and ("billing_service", "USES", "go") not in rewriting
