"""Triple extraction onto the ontology (SPEC S6.1, S8): normalisation, the offline extractor, the openai one."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import httpx2
import pytest
from prometheus_client import REGISTRY

from athena_core.ltm.extraction import (
    CONFIDENCE,
    HEDGED_CAP,
    ExtractionTurn,
    OfflineTripleExtractor,
    OpenAITripleExtractor,
    TripleExtractor,
    normalise_triples,
)
from athena_core.models.ontology import RELATIONS, USER_NODE_ID, ExtractedNode, ExtractedTriple, TripleExtraction
from athena_core.providers.llm import LLMSchemaError
from athena_core.providers.openai_llm import OpenAILLM
from tests.unit.test_openai_providers import CHAT, FakeOpenAI, chat_reply, http_client, server  # noqa: F401 (fixtures)

WHEN = datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)
SUMMARY = (
    "I'm rewriting the payments service in Go for Prescott Data. I'm struggling with pgxpool settings. "
    "I'd like to learn more about spaced repetition."
)


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def node(id: str, label: str = "Concepts", name: str | None = None) -> ExtractedNode:
    return ExtractedNode(id=id, label=label, name=name if name is not None else id)


def triple(subject: ExtractedNode, relation: str, obj: ExtractedNode, confidence: float = 0.8,
           nuance: str = "said so") -> ExtractedTriple:
    return ExtractedTriple(subject=subject, relation=relation, object=obj, confidence=confidence,
                           context_nuance=nuance)


def normalise(*triples: ExtractedTriple) -> Any:
    return normalise_triples(TripleExtraction(triples=list(triples)), user_name="Sangalo", valid_at=WHEN,
                             heat_score=0.42, evidence_id="chain-1:abc")


def edges(extraction: TripleExtraction) -> dict[tuple[str, str, str], ExtractedTriple]:
    return {(t.subject.id, t.relation, t.object.id): t for t in extraction.triples}


# ---------------------------------------------------------------------------------------------------
# normalise_triples


def test_ids_are_snake_case_relations_upper_and_evidence_is_carried() -> None:
    facts, report = normalise(
        triple(node("Prescott Data", "Identities"), " uses ", node("ArangoDB", "Tools", "ArangoDB"), 0.9),
        triple(node("!!!"), "USES", node("go", "Tools")),  # id and name empty after snake-casing
        triple(node("", "Tools", "Docker Compose"), "works on", node("Nexus-Protocol", "Projects")),
    )
    assert [(f.subject_id, f.relation, f.object_id) for f in facts] == [
        ("prescott_data", "USES", "arangodb"),
        ("docker_compose", "WORKS_ON", "nexus_protocol"),  # blank id falls back to the name
    ]
    fact = facts[0]
    assert fact.subject_name == "Prescott Data" and fact.object_label == "Tools"
    assert fact.valid_at == WHEN and fact.heat_score == 0.42 and fact.evidence_id == "chain-1:abc"
    assert (report.kept, report.dropped, report.corrected) == (2, 1, 0)


def test_off_list_relation_becomes_relates_to_keeping_the_original_and_is_counted() -> None:
    before = metric("athena_extraction_relation_corrections_total")
    facts, report = normalise(
        triple(node("I"), "lives_in", node("lisbon"), nuance="since 2024"),
        triple(node("I"), "LIKES", node("hiking"), nuance=""),
        triple(node("I"), "relates_to", node("chess")),
    )
    assert [f.relation for f in facts] == ["RELATES_TO"] * 3
    assert all(f.relation in RELATIONS for f in facts)
    assert facts[0].context_nuance == "LIVES_IN: since 2024"
    assert facts[1].context_nuance == "LIKES"
    assert facts[2].context_nuance == "said so"  # already on the list: not a correction
    assert report.corrected == 2
    assert metric("athena_extraction_relation_corrections_total") == before + 2


@pytest.mark.parametrize("mention", ["I", "me", "user", "The User", "my", "we"])
def test_first_person_resolves_to_the_user_node(mention: str) -> None:
    facts, report = normalise(triple(node(mention, "Concepts", mention), "USES", node("go", "Tools")))
    (fact,) = facts
    assert (fact.subject_id, fact.subject_label, fact.subject_name) == (USER_NODE_ID, "Identities", "Sangalo")
    assert report.first_person_resolved == 1


def test_assistant_you_and_third_parties_are_not_collapsed() -> None:
    facts, report = normalise(
        triple(node("assistant", "Identities"), "USES", node("trello", "Tools")),
        triple(node("you", "Identities"), "USES", node("jira", "Tools")),
        triple(node("frida", "Identities", "Frida"), "EXHIBITS", node("patience")),
        triple(node("Frida Kahlo", "Identities"), "RELATES_TO", node("me", "Identities")),
    )
    subjects = [f.subject_id for f in facts]
    assert subjects == ["assistant", "you", "frida", "frida_kahlo"]
    assert facts[3].object_id == USER_NODE_ID  # the first-person *object* does resolve
    assert report.first_person_resolved == 1


def test_self_loops_dropped_duplicates_merged_and_confidence_clamped() -> None:
    loose = ExtractedTriple.model_construct(  # a provider that skipped validation
        subject=node("user", "Identities"), relation="USES", object=node("Go", "Tools"), confidence=1.7,
        context_nuance="every day",
    )
    facts, report = normalise(
        triple(node("I"), "USES", node("me")),  # both ends are the user: a self-loop
        triple(node("I"), "USES", node("go", "Tools"), 0.6, "sometimes"),
        triple(node("user"), "uses", node("Go", "Tools"), 0.9, "daily, at work"),
        triple(node("user"), "USES", node("go", "Tools"), 0.7, "for the payments service"),
        loose,
        triple(node("user"), "USES", node("docker", "Tools"), 0.0),
    )
    assert [(f.subject_id, f.object_id, f.confidence) for f in facts] == [("user", "go", 1.0),
                                                                         ("user", "docker", 0.0)]
    assert facts[0].context_nuance == "every day"  # the surest reading wins, nuance included
    assert (report.kept, report.dropped, report.merged) == (2, 1, 3)
    assert report.first_person_resolved == 2 + 4 + 1


# ---------------------------------------------------------------------------------------------------
# OfflineTripleExtractor


def test_offline_extractor_reads_the_reference_summary() -> None:
    extractor = OfflineTripleExtractor()
    assert isinstance(extractor, TripleExtractor)
    found = edges(extractor.extract(SUMMARY, entities=["Go", "Prescott Data"]))

    uses = found[("user", "USES", "go")]
    assert uses.object.label == "Tools" and 0.8 <= uses.confidence <= 0.9
    works = found[("user", "WORKS_ON", "payments_service")]
    assert works.object.label == "Projects" and 0.6 <= works.confidence <= 0.7
    client = found[("payments_service", "BUILT_FOR_CLIENT", "prescott_data")]
    assert client.object.label == "Identities" and client.object.name == "Prescott Data"
    assert 0.6 <= client.confidence <= 0.7
    struggle = found[("user", "STRUGGLES_WITH", "pgxpool_settings")]
    assert 0.6 <= struggle.confidence <= 0.7 and "pgxpool" in struggle.context_nuance
    interest = found[("user", "EXPRESSED_INTEREST", "spaced_repetition")]
    assert interest.object.label == "Concepts" and 0.6 <= interest.confidence <= 0.7
    assert len(found) == 5  # nothing invented beyond the five facts

    facts, report = normalise_triples(extractor.extract(SUMMARY, entities=[]), user_name="sangalo",
                                      valid_at=WHEN, heat_score=0.5, evidence_id="c:1")
    assert report.kept == 5 and report.corrected == 0 and report.dropped == 0
    assert {f.subject_name for f in facts if f.subject_id == USER_NODE_ID} == {"sangalo"}


def test_offline_extractor_is_deterministic() -> None:
    text = SUMMARY + " We use Postgres, Redis and Kafka. Frida is stuck on Terraform."
    first = OfflineTripleExtractor().extract(text, entities=["Frida"])
    again = OfflineTripleExtractor().extract(text, entities=["Frida"])
    assert first.model_dump_json() == again.model_dump_json()


def test_gazetteer_objects_third_parties_and_co_mentions() -> None:
    found = edges(OfflineTripleExtractor().extract(
        "We use Postgres, Redis and Kafka. Frida is struggling with Docker. "
        "The assistant suggested using Trello. My wife uses Vim.",
        entities=[],
    ))
    for tool in ("postgresql", "redis", "kafka"):
        assert 0.8 <= found[("user", "USES", tool)].confidence <= 0.9
    frida = found[("frida", "STRUGGLES_WITH", "docker")]
    assert frida.subject.label == "Identities" and frida.confidence < CONFIDENCE["explicit_tool"]
    assert not any(o == "docker" for s, _, o in found if s == "user")  # Frida's problem is not the user's
    assert not any(o in ("trello", "vim") for _, _, o in found)  # the assistant's and the wife's tools
    co = found[("postgresql", "RELATES_TO", "redis")]
    assert 0.3 <= co.confidence <= 0.4 < 0.5  # below the retrieval floor by design
    assert co.context_nuance.startswith("mentioned together")


def test_traits_preferences_habits_negation_and_hedges() -> None:
    found = edges(OfflineTripleExtractor().extract(
        "I am very patient. I prefer small pull requests over big ones. I always write tests first. "
        "I don't use Kafka anymore. Should I switch to Rust? I moved to Berlin.",
        entities=[],
    ))
    assert 0.6 <= found[("user", "EXHIBITS", "patient")].confidence <= 0.7
    preference = found[("user", "EXHIBITS", "small_pull_requests")]
    assert preference.context_nuance.startswith("prefers small pull requests")
    assert ("user", "EXHIBITS", "always_write_tests_first") in found
    assert ("user", "USES", "kafka") not in found  # negated
    assert found[("user", "USES", "rust")].confidence <= HEDGED_CAP < 0.5  # a question, not a fact
    assert ("user", "USES", "berlin") not in found  # "moved to" needs a tool to mean USES
    assert found[("user", "RELATES_TO", "berlin")].context_nuance.startswith("moved to")  # a personal fact


def test_offline_extractor_needs_a_subject() -> None:
    assert OfflineTripleExtractor().extract("Struggling with Docker is common. It is raining.",
                                            entities=[]).triples == []
    assert OfflineTripleExtractor().extract("", entities=[]).triples == []


# ---------------------------------------------------------------------------------------------------
# OpenAITripleExtractor over a loopback scripted server

REPLY = {"triples": [
    {"subject": {"id": "user", "label": "Identities", "name": "I"}, "relation": "USES",
     "object": {"id": "go", "label": "Tools", "name": "Go"}, "confidence": 0.9,
     "context_nuance": "rewriting the payments service"},
    {"subject": {"id": "user", "label": "Identities", "name": "I"}, "relation": "LIVES_IN",
     "object": {"id": "lisbon", "label": "Concepts", "name": "Lisbon"}, "confidence": 0.7,
     "context_nuance": "since 2024"},
]}


def make_extractor(server: FakeOpenAI, http_client: httpx2.Client) -> OpenAITripleExtractor:
    llm = OpenAILLM("gpt-test", "sk-test", base_url=server.base_url, timeout_s=2.0, max_retries=1,
                    backoff_base_s=0.01, http_client=http_client)
    return OpenAITripleExtractor(llm)


def test_openai_extractor_sends_the_strict_triple_schema(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    server.script(CHAT, chat_reply(json.dumps(REPLY), prompt_tokens=50, completion_tokens=20))
    extractor = make_extractor(server, http_client)
    assert isinstance(extractor, TripleExtractor)
    ok = metric("athena_llm_calls_total", provider="openai", purpose="extract", outcome="ok")

    extraction = extractor.extract(SUMMARY, entities=["Go", "Prescott Data"], tenant_id="t-extract")

    assert extraction == TripleExtraction.model_validate(REPLY)
    (body,) = server.bodies(CHAT)
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "triple_extraction"
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["triples"] and schema["additionalProperties"] is False
    item = schema["properties"]["triples"]["items"]
    assert set(item["required"]) == {"subject", "relation", "object", "confidence", "context_nuance", "turn"}
    assert item["additionalProperties"] is False
    assert item["properties"]["subject"]["properties"]["label"]["enum"] == [
        "Identities", "Tools", "Projects", "Concepts"]
    assert item["properties"]["subject"]["additionalProperties"] is False
    system, user = body["messages"]
    assert system["role"] == "system" and "BUILT_FOR_CLIENT" in system["content"]
    assert '"user"' in system["content"] and "snake_case" in system["content"]
    assert SUMMARY in user["content"] and "Prescott Data" in user["content"]
    assert metric("athena_llm_calls_total", provider="openai", purpose="extract", outcome="ok") == ok + 1
    assert metric("athena_llm_tokens_total", provider="openai", purpose="extract", kind="prompt",
                  tenant="t-extract") >= 50

    facts, report = normalise_triples(extraction, user_name="sangalo", valid_at=WHEN, heat_score=0.3,
                                      evidence_id="c:1")
    assert report.corrected == 1 and facts[1].context_nuance == "LIVES_IN: since 2024"


@pytest.mark.parametrize("bad", [
    {"triples": [{**REPLY["triples"][0], "object": {"id": "go", "label": "Language", "name": "Go"}}]},
    {"triples": [{**REPLY["triples"][0], "confidence": 1.4}]},
    {"facts": []},
    "not json",
])
def test_openai_extractor_schema_violation_raises_and_is_counted(
    server: FakeOpenAI, http_client: httpx2.Client, bad: Any
) -> None:
    server.script(CHAT, chat_reply(bad if isinstance(bad, str) else json.dumps(bad)))
    failures = metric("athena_llm_schema_failures_total", purpose="extract")
    errors = metric("athena_llm_calls_total", provider="openai", purpose="extract", outcome="schema_error")

    with pytest.raises(LLMSchemaError, match="TripleExtraction"):
        make_extractor(server, http_client).extract(SUMMARY, entities=[])
    assert metric("athena_llm_schema_failures_total", purpose="extract") == failures + 1
    assert metric("athena_llm_calls_total", provider="openai", purpose="extract",
                  outcome="schema_error") == errors + 1


# -- extraction from the evidence: per-turn speakers, valid_at and evidence ids (SPEC S6.1, issue 14) --------

def turn(event_id: str, role: str, text: str, day: int) -> ExtractionTurn:
    return ExtractionTurn(event_id=event_id, speaker="sangalo" if role == "user" else "helper-bot", role=role,
                          timestamp=datetime(2026, 4, day, 12, 0, tzinfo=timezone.utc), text=text)


TURNS = [  # newest first, as the promoter reads them
    turn("ev-5", "agent", "I recommend Redpanda for that. I use Python for this. You could try Redpanda.", 5),
    turn("ev-4", "user", "My colleague Priya uses Java.", 4),
    turn("ev-3", "user", "I use Go for the payments service.", 3),
    turn("ev-2", "agent", "Sounds good. I am patient and I'd love to learn Rust.", 2),
]


def offline_facts(turns: list[ExtractionTurn], summary: str = "") -> list:
    extraction = OfflineTripleExtractor().extract(summary, entities=["Priya"], turns=turns)
    facts, _ = normalise_triples(extraction, user_name="sangalo", valid_at=WHEN, heat_score=0.5,
                                 evidence_id="c:1", turns=turns)
    return facts


def test_a_user_turn_first_person_is_the_user_with_that_turns_time_and_event_id() -> None:
    facts = offline_facts(TURNS)
    (go,) = [f for f in facts if (f.subject_id, f.relation, f.object_id) == (USER_NODE_ID, "USES", "go")]
    assert go.valid_at == TURNS[2].timestamp and go.evidence_event_ids == ["ev-3"]


def test_an_agent_first_person_never_becomes_a_user_fact() -> None:
    facts = offline_facts(TURNS)
    user_objects = {f.object_id for f in facts if USER_NODE_ID in (f.subject_id, f.object_id)}
    assert not user_objects & {"redpanda", "python", "patient", "rust"}
    assert all("ev-5" not in f.evidence_event_ids and "ev-2" not in f.evidence_event_ids
               for f in facts if USER_NODE_ID in (f.subject_id, f.object_id))


def test_an_extractive_summary_quoting_the_agent_gives_the_user_nothing() -> None:
    facts = offline_facts(TURNS, summary="I recommend Redpanda for that. I use Python for this.")
    assert not [f for f in facts if f.subject_id == USER_NODE_ID and f.object_id in ("redpanda", "python")]


def test_a_third_party_statement_attaches_to_the_third_party() -> None:
    facts = offline_facts(TURNS)
    java = [f for f in facts if f.object_id == "java"]
    assert java and all(f.subject_id == "priya" for f in java)
    assert java[0].evidence_event_ids == ["ev-4"] and java[0].valid_at == TURNS[1].timestamp


def test_every_evidence_id_is_one_of_the_turns_and_summary_only_facts_keep_the_chain_time() -> None:
    facts = offline_facts(TURNS, summary="I'm struggling with pgxpool settings.")
    ids = {t.event_id for t in TURNS}
    assert all(set(f.evidence_event_ids) <= ids for f in facts)
    (pgx,) = [f for f in facts if f.relation == "STRUGGLES_WITH"]
    assert pgx.evidence_event_ids == [] and pgx.valid_at == WHEN  # only the summary says it


def test_normalisation_drops_a_user_fact_cited_to_an_agent_turn_and_keeps_one_observation_per_turn() -> None:
    extraction = TripleExtraction(triples=[
        triple(node("user", "Identities"), "USES", node("redpanda", "Tools"), 0.9).model_copy(update={"turn": 0}),
        triple(node("user", "Identities"), "USES", node("go", "Tools"), 0.9).model_copy(update={"turn": 2}),
        triple(node("I", "Identities"), "USES", node("go", "Tools"), 0.7).model_copy(update={"turn": 1}),
        triple(node("user", "Identities"), "USES", node("zig", "Tools"), 0.3).model_copy(update={"turn": 9}),
    ])
    facts, report = normalise_triples(extraction, user_name="sangalo", valid_at=WHEN, heat_score=0.5,
                                      evidence_id="c:1", turns=TURNS)
    by_object = {f.object_id: f for f in facts}
    assert "redpanda" not in by_object and report.dropped == 1
    # two turns state "uses go": two observations, each with its turn's event, time and observation id
    go = sorted((f for f in facts if f.object_id == "go"), key=lambda f: f.valid_at)
    assert [(f.evidence_event_ids, f.valid_at, f.evidence_id) for f in go] == [
        (["ev-3"], TURNS[2].timestamp, "turn:ev-3"), (["ev-4"], TURNS[1].timestamp, "turn:ev-4")]
    assert by_object["zig"].evidence_event_ids == [] and by_object["zig"].valid_at == WHEN  # no such turn
    assert by_object["zig"].confidence == 0.3  # unsure is written low, not dropped


def test_openai_extractor_sends_the_numbered_turns_and_reads_the_turn_index(
    server: FakeOpenAI, http_client: httpx2.Client,
) -> None:
    reply = {"triples": [{
        "subject": {"id": "user", "label": "Identities", "name": "I"}, "relation": "USES",
        "object": {"id": "go", "label": "Tools", "name": "Go"}, "confidence": 0.9,
        "context_nuance": "payments service", "turn": 2,
    }]}
    server.script(CHAT, chat_reply(json.dumps(reply)))
    extraction = make_extractor(server, http_client).extract(SUMMARY, entities=["Go"], turns=TURNS)
    (body,) = server.bodies(CHAT)
    system, user = body["messages"]
    assert "never the user" in system["content"].lower() and "turn" in system["content"]
    assert "[2] 2026-04-03T12:00:00+00:00 user (sangalo): I use Go for the payments service." in user["content"]
    assert "[0] 2026-04-05T12:00:00+00:00 agent (helper-bot):" in user["content"]
    assert extraction.triples[0].turn == 2
    facts, _ = normalise_triples(extraction, user_name="sangalo", valid_at=WHEN, heat_score=0.5,
                                 evidence_id="c:1", turns=TURNS)
    assert facts[0].evidence_event_ids == ["ev-3"] and facts[0].valid_at == TURNS[2].timestamp
