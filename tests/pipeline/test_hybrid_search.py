"""Hybrid SearchMemory end to end (issue 7): a real worker forms and indexes chains, the API searches them."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient

from athena_core.models.ontology import FactObservation
from athena_core.models.events import utc_now
from athena_core.models.scope import AgentScope
from athena_core.retrieval.budget import approx_tokens
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import _flush_and_wait, _post, _session

TOPICS = [
    ("our Kubernetes cluster upgrade", "drain the nodes one pool at a time and watch the pod disruption budgets"),
    ("the quarterly budget spreadsheet", "group the costs by team and compare them with last quarter"),
    ("training for the autumn half marathon", "add one long slow run a week and taper in the last ten days"),
    ("the kitchen renovation", "order the cabinets first, they take six weeks to arrive"),
    ("learning Spanish verbs", "practise the preterite with short daily stories"),
    ("the flaky integration tests", "quarantine the flaky ones and fix the shared fixture first"),
]
RARE_NAME = "Ottoline Vasquez"


def _long_conversation() -> list[tuple[str, str]]:
    """72 turns over six topics; one turn, in the middle, names a person never mentioned again."""
    turns = []
    for round_ in range(4):
        for topic, advice in TOPICS:
            for step in range(3):
                turns.append((f"Next question about {topic}, part {round_ * 3 + step}: what should I do now?",
                              f"For {topic}: {advice}. Step {round_ * 3 + step} is the usual next one."))
    turns[37] = (f"My new manager {RARE_NAME} wants the quarterly budget spreadsheet by Friday.",
                 "Then group the costs by team tonight and send a draft tomorrow.")
    return turns


def test_a_name_mentioned_once_in_a_long_conversation_is_found_by_name(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    session_id, scope = _session(worker_api)
    t0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
    ids = _post(worker_api, session_id, _long_conversation(), t0)
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)

    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "Who is Ottoline?", "max_tokens": 300}).json()
    # the turn that names her comes first: a chain summary ranks by its own score, not pinned before it
    top = results[0]
    assert top["source_type"] == "event" and top["source_id"] == ids[37][0], results[:3]
    assert RARE_NAME in top["content"] and "lexical" in top["retrievers"]
    # the evidence carries its time: in the text (for a reader) and as a span (for a program)
    assert "3 March 2025" in top["content"]
    assert top["time_span"]["start"] == top["time_span"]["end"] == top["timestamp"]
    assert sum(approx_tokens(r["content"]) for r in results) <= 300
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert len({r["source_id"] for r in results}) == len(results)
    chain_results = [r for r in results if r["source_type"] == "chain"]
    assert all(r["time_span"]["start"] <= r["time_span"]["end"] for r in chain_results)
    # every event and chain reports its cosine (SPEC S2), also one only BM25 or a neighbour found, so the
    # threshold applies to all of them
    assert all(-1.0 <= r["similarity_score"] <= 1.0 for r in results if r["source_type"] != "fact"), results
    threshold = top["similarity_score"] + 1e-4
    kept = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                           json={"query": "Who is Ottoline?", "max_tokens": 300,
                                 "similarity_threshold": threshold}).json()
    assert top["source_id"] not in {r["source_id"] for r in kept}
    assert all(r["similarity_score"] >= threshold for r in kept if r["source_type"] != "fact")

    # Another tenant with the same user and agent ids sees nothing of it.
    other = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id=scope.user_id, agent_id=scope.agent_id)
    other_session = worker_api.post("/api/v1/sessions", json=other.model_dump()).json()["session_id"]
    assert worker_api.post(f"/api/v1/sessions/{other_session}/context/search",
                           json={"query": "Who is Ottoline?"}).json() == []


def test_time_cues_rank_the_evidence_of_the_asked_time_first(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    now = utc_now()
    old = _post(worker_api, session_id, [("I went bouldering at the climbing gym with Marco.",
                                          "Nice, bouldering is a great workout.")], now - timedelta(days=40))
    recent = _post(worker_api, session_id, [("I went bouldering at the climbing gym with Priya.",
                                             "Nice, bouldering is a great workout.")], now - timedelta(days=1))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)

    def first_user_event(query: str) -> str:
        results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                                  json={"query": query, "limit": 10}).json()
        return next(r["source_id"] for r in results if r["source_id"] in (old[0][0], recent[0][0]))

    assert first_user_event("Who did I go bouldering with yesterday?") == recent[0][0]
    assert first_user_event("Who did I go bouldering with first?") == old[0][0]
    assert first_user_event("Who do I go bouldering with currently?") == recent[0][0]


def test_a_fact_that_changed_returns_its_initial_and_current_value_with_dates(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    session_id, scope = _session(worker_api)
    early, late = datetime(2025, 1, 6, tzinfo=timezone.utc), datetime(2025, 3, 10, tzinfo=timezone.utc)

    def works_on(project: str, at: datetime) -> FactObservation:
        return FactObservation(subject_id="user", subject_label="Identities", subject_name="user",
                               relation="WORKS_ON", object_id=f"{project.lower()}_project", object_label="Projects",
                               object_name=f"{project} project", confidence=0.8, context_nuance="", heat_score=0.5,
                               valid_at=at, evidence_id=f"chn_{project}:{at.isoformat()}")

    # The LTM promotion path is covered in test_ltm_pipeline; here the graph holds two values of one fact.
    worker_runtime.graph.upsert_facts(scope.user_scope, [works_on("Apollo", early)], early)
    worker_runtime.graph.upsert_facts(scope.user_scope, [works_on("Zephyr", late)], late)

    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "Which project do I work on currently?"}).json()
    facts = {r["content"]: r for r in results if r["source_type"] == "fact"}
    assert len(facts) == 2, results
    initial = next(r for text, r in facts.items() if "apollo" in text.lower())
    current = next(r for text, r in facts.items() if "zephyr" in text.lower())
    assert "initially" in initial["content"] and "6 January 2025" in initial["content"]
    assert "currently" in current["content"] and "10 March 2025" in current["content"]
    assert initial["timestamp"] < current["timestamp"] and current["retrievers"][0] == "graph"
    assert (initial["is_initial"], initial["is_current"]) == (True, False)
    assert (current["is_initial"], current["is_current"]) == (False, True)
    assert current["valid_at"] == current["timestamp"] and initial["first_valid_at"] == initial["time_span"]["start"]
    assert [r["source_id"] for r in results].index(current["source_id"]) < \
        [r["source_id"] for r in results].index(initial["source_id"])  # "currently": the current value first

    first = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                            json={"query": "Which project did I work on first?"}).json()
    ranked = [r["source_id"] for r in first if r["source_type"] == "fact"]
    assert ranked.index(initial["source_id"]) < ranked.index(current["source_id"])

    # GetContext and the graph route say the same, with the dates
    context = worker_api.get(f"/api/v1/sessions/{session_id}/context",
                             params={"query": "Which project did I work on initially?"}).json()
    marks = {f["object"]: (f["is_initial"], f["is_current"]) for f in context["facts"]}
    assert marks == {"apollo_project": (True, False), "zephyr_project": (False, True)}
    assert context["facts"][0]["object"] == "apollo_project"
    # Apollo was not said to be replaced: both stay in the persona, the current value first
    assert context["user_persona"] == ["Works on Zephyr project.", "Works on Apollo project."]
    edges = worker_api.get(f"/api/v1/sessions/{session_id}/graph").json()["edges"]
    assert {e["object"]: (e["is_initial"], e["is_current"]) for e in edges} == marks
    assert all(e["valid_at"] and e["first_valid_at"] for e in edges)


def test_a_switch_answers_first_and_now_questions_about_its_own_kind(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    """Seen on `make run`: "which CI did we use at first?" ranked "initially: uses Flutter" (the first USES
    value of all) above Jenkins, which the user left for GitHub Actions; "which editor do I use now?"
    ranked the old editor above the new one, whose kind the tool list did not know."""
    session_id, scope = _session(worker_api)
    said = "I moved from Jenkins to GitHub Actions for our CI"

    def uses(tool: str, at: datetime, nuance: str) -> FactObservation:
        return FactObservation(subject_id="user", subject_label="Identities", subject_name="user", relation="USES",
                               object_id=tool.lower().replace(" ", "_"), object_label="Tools", object_name=tool,
                               confidence=0.8, context_nuance=nuance, heat_score=0.5, valid_at=at,
                               evidence_id=f"chn_{tool}:{at.isoformat()}")

    march, april = datetime(2023, 3, 1, tzinfo=timezone.utc), datetime(2023, 4, 12, tzinfo=timezone.utc)
    worker_runtime.graph.upsert_facts(scope.user_scope, [uses("Flutter", march, "I am building an app in Flutter")],
                                      march)
    worker_runtime.graph.upsert_facts(scope.user_scope, [
        uses("Jenkins", april - timedelta(seconds=1), f"previously, switched to GitHub Actions: {said}"),
        uses("GitHub Actions", april, f"switched from Jenkins: {said}")], april)

    def facts_for(query: str) -> list[str]:
        results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search", json={"query": query}).json()
        return [r["content"] for r in results if r["source_type"] == "fact"]

    first = facts_for("Which CI did we use at first?")
    assert "Jenkins" in first[0], first
    now = facts_for("Which CI do we use now?")
    assert "GitHub Actions" in now[0] and "currently" in now[0], now


def test_search_validation_names_the_field(worker_api: TestClient) -> None:
    session_id, _ = _session(worker_api)
    url = f"/api/v1/sessions/{session_id}/context/search"
    for body, field in [({"query": "x", "max_tokens": 0}, "max_tokens"),
                        ({"query": "x", "max_tokens": 10**9}, "max_tokens"),
                        ({"query": "x", "limit": 0}, "limit")]:
        response = worker_api.post(url, json=body)
        assert response.status_code == 422, body
        assert [f["field"] for f in response.json()["error"]["fields"]] == [field]


GARDEN = [
    ("How are the tomatoes doing this week?",
     "They are doing well overall. The cherry ones ripened first, right after the heat wave. "
     "I still need to tie the tall stems to the stakes before the next storm arrives."),
    ("Any trouble with pests?",
     "A little. Aphids showed up on the basil, so I sprayed them with soapy water. "
     "Ladybugs arrived two days later and finished the job for me, which was a relief."),
    ("What about the compost?",
     "The compost heap is finally warm in the middle. I turn it every Sunday morning with a fork. "
     "Coffee grounds from the cafe down the street keep it going nicely."),
    ("Did the new raised bed work out?",
     "Yes, the cedar raised bed drains much better than the old one did. "
     "Carrots sown there came up evenly, and the soil stays loose after heavy rain."),
    ("How is the watering schedule?",
     "I water early, before seven, so less evaporates in the afternoon sun. "
     "The drip line on a timer covers the peppers while I am travelling for work."),
    ("What will you plant in autumn?",
     "Garlic goes in at the end of October, with a thick mulch of straw on top. "
     "Next spring I want to try growing asparagus along the fence on the north side."),
]


def test_long_turns_get_sentence_vectors_and_results_after_the_best_come_as_excerpts(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    session_id, scope = _session(worker_api)
    ids = _post(worker_api, session_id, GARDEN, datetime(2025, 6, 2, 8, 0, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    user = scope.user_scope
    # every agent answer (3 sentences, 20+ words) has its own vector plus one per sentence
    assert worker_runtime.event_vectors.count(user) == 12 + 15  # 12 events, 15 sentences in the 6 answers

    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "When do I turn the compost heap?", "max_tokens": 2000}).json()
    events = [r for r in results if r["source_type"] == "event"]
    compost = ids[2][1]
    assert events[0]["source_id"] == compost and not events[0]["excerpt"], events[:3]
    whole = worker_runtime.settings.search_whole_results
    assert not any(r["excerpt"] for r in events[:whole])
    cut = [r for r in events[whole:] if r["excerpt"]]
    assert cut, events  # the long answers further down are excerpts: dated, marked, short
    for r in cut:
        text = r["content"].split("] ", 1)[1]
        assert "…" in text and len(text.replace("…", "").split()) <= worker_runtime.settings.search_excerpt_words
        assert r["content"].startswith("[2 June 2025]") and r["tokens"] == approx_tokens(r["content"])

    # archival removes an event's sentence vectors with it (ids derived from the event id, not its text)
    chains = worker_runtime.documents.get_chains(user, list({r["chain_id"] for r in events}))
    worker_runtime.evidence.remove(user, chains)
    assert worker_runtime.event_vectors.count(user) == 0
