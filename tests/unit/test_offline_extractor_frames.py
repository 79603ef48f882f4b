"""The offline extractor's generalised clause reader (issue 14 item 3, `clause_frames`): cues of a verb
class with the object after the cue or fronted, in sentences no rule names word for word; and the
filters that keep it honest (negation, hypotheticals, questions, other speakers, third parties)."""
from __future__ import annotations

import pytest

from athena_core.ltm.extraction.clause_frames import clause_spans
from tests.unit.test_offline_extractor_chat import facts_of, triples


@pytest.mark.parametrize(("text", "expected"), [
    ("Go is what I write everything in.", ("user", "USES", "go")),
    ("Most of my week goes to the checkout service.", ("user", "WORKS_ON", "checkout_service")),
    ("Honestly, Neovim never leaves my dock.", ("user", "USES", "neovim")),
    ("We settled on Grafana for dashboards.", ("user", "USES", "grafana")),
    ("I'm in charge of the inventory service.", ("user", "WORKS_ON", "inventory_service")),
    ("The search api takes up most of my week.", ("user", "WORKS_ON", "search_api")),
    ("Database migrations cause me endless grief.", ("user", "STRUGGLES_WITH", "database_migrations")),
    ("I keep getting bogged down in flaky integration tests.", ("user", "STRUGGLES_WITH", "flaky_integration_tests")),
    ("Sourdough baking has become my new obsession.", ("user", "EXPRESSED_INTEREST", "sourdough_baking")),
    ("I've been itching to dig into compiler design.", ("user", "EXPRESSED_INTEREST", "compiler_design")),
    ("People say I've become pretty methodical over the years.", ("user", "EXHIBITS", "methodical")),
    ("I can't live without Redis.", ("user", "USES", "redis")),
    ("Honestly Redis is the backbone of everything I ship.", ("user", "USES", "redis")),
    ("Kafka and I go way back.", ("user", "USES", "kafka")),
    ("I'm all about Zed now.", ("user", "USES", "zed")),
    ("I still haven't got the hang of pgxpool settings.", ("user", "STRUGGLES_WITH", "pgxpool_settings")),
    ("I can't get a handle on flaky tests.", ("user", "STRUGGLES_WITH", "flaky_tests")),
])
def test_a_verb_class_cue_reads_phrasings_no_rule_names(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(facts_of(text))


@pytest.mark.parametrize("text", ["I can't get a handle on flaky tests.", "I never got the hang of it.",
                                  "I haven't got the hang of Rust."])
def test_the_idiom_of_not_getting_a_thing_is_not_its_object(text: str) -> None:
    """"a handle", "the hang" are the idiom's words: the struggle is what follows them, or nothing."""
    objects = {o for _, _, o in triples(facts_of(text))}
    assert not objects & {"handle", "hang"}


def test_a_client_is_read_from_its_relation_to_the_project() -> None:
    found = triples(facts_of("The billing dashboard is paid for by Globex."))
    assert ("billing_dashboard", "BUILT_FOR_CLIENT", "globex") in found


def test_leaving_one_tool_for_another_is_a_change_with_both_values() -> None:
    facts = [f for f in facts_of("I'm through with Emacs; Zed is what I use now.") if f.relation == "USES"]
    by_object = {f.object_id: f for f in facts}
    assert by_object["emacs"].valid_at < by_object["zed"].valid_at
    assert by_object["emacs"].context_nuance.startswith("previously")
    replaced = {f.object_id: f for f in facts_of("Bun replaced Deno for me.") if f.relation == "USES"}
    assert replaced["deno"].valid_at < replaced["bun"].valid_at


@pytest.mark.parametrize("text", [
    "I don't rely on Jenkins anymore.",  # negated
    "If I ever standardise on Figma, I'll tell you.",  # hypothetical
    "Do you think I should standardise on Figma?",  # a question: capped below the floor
    "My colleague Priya is bogged down in flaky integration tests.",  # a third party
    "Kafka depends on Zookeeper.",  # a thing's dependency, not the speaker's
    "Lots of people rely on Figma.",
    "If we ever switch to Kubernetes, I'll let you know.",  # a condition: no fact yet, whichever rule reads it
    "I'm tempted to move to Zed.",
    "I'm passionate about creating a safe place for people.",  # an activity half read is no topic
])
def test_negation_hypotheticals_questions_and_other_subjects_claim_nothing_for_the_user(text: str) -> None:
    # (that Priya is the user's colleague is the user's fact; her problem is not)
    assert not {t for t in triples(facts_of(text)) if t[0] == "user" and t[2] != "priya"}


def test_an_agents_clause_is_never_the_users() -> None:
    assert not {t for t in triples(facts_of(("agent", "Zed is open on my screen all day."))) if t[0] == "user"}


def test_a_fronted_it_is_the_turns_antecedent_written_lower() -> None:
    facts = facts_of("I picked up Terraform this spring. It is now part of my daily toolkit.")
    terraform = [f for f in facts if f.object_id == "terraform" and f.relation == "USES"]
    assert terraform and max(f.confidence for f in terraform) >= 0.5


def test_clauses_split_at_semicolons_and_at_a_comma_before_a_new_subject() -> None:
    text = "I gave up on Emacs; Zed is mine now, it's all Zed from here"
    assert [text[a:b].strip() for a, b in clause_spans(text)] == [
        "I gave up on Emacs", "Zed is mine now", "it's all Zed from here"]


def test_a_topic_keeps_its_place() -> None:
    assert ("user", "STRUGGLES_WITH", "memory_leaks_in_the_worker") in triples(
        facts_of("Memory leaks in the worker are a struggle."))
    assert ("user", "STRUGGLES_WITH", "kafka") in triples(facts_of("I'm struggling with Kafka in the morning."))
