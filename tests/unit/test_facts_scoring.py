"""`athena eval facts` scoring on hand-made graphs, and the generator's corpus (issue 14 item 6)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from athena_eval.facts import phrasings
from athena_eval.facts.generator import Change, Decoy, PlantedFact, generate
from athena_eval.facts.scoring import GraphFact, Tally, ids_match, score_user

T = datetime(2023, 5, 1, tzinfo=timezone.utc)


def planted(subject: str, relation: str, obj: str, sessions: set[int], *times: int) -> PlantedFact:
    return PlantedFact(subject, relation, obj, "tuning", set(sessions), [T + timedelta(days=d) for d in times])


def edge(subject: str, relation: str, obj: str, weight: int = 1, confidence: float = 0.8, valid: int = 0,
         first: int | None = None, current: bool | None = None, initial: bool | None = None) -> GraphFact:
    return GraphFact(subject, relation, obj, weight, confidence, T + timedelta(days=valid),
                     T + timedelta(days=valid if first is None else first), current, initial)


PLANTED = [
    planted("user", "USES", "vs_code", {0, 2}, 0, 10),  # the switch (day 10) restates the old value
    planted("user", "USES", "zed", {2}, 10),
    planted("user", "STRUGGLES_WITH", "building_wheels", {1}, 5),
    planted("checkout_service", "BUILT_FOR_CLIENT", "northwind_traders", {1}, 5),
]
CHANGES = [Change("user", "USES", "vs_code", "zed", "tuning")]
DECOYS = [Decoy("java", "third_party"), Decoy("redpanda", "assistant")]
PERFECT = [
    edge("user", "USES", "vs_code", 2, valid=9, first=0), edge("user", "USES", "zed", 1, valid=10),
    edge("user", "STRUGGLES_WITH", "building_wheels", valid=5),
    edge("checkout_service", "BUILT_FOR_CLIENT", "northwind_traders", valid=5),
    edge("priya", "USES", "java", valid=3),  # a third party's fact is no user claim
]


def rates(graph: list[GraphFact], planted_facts=PLANTED) -> dict:
    return score_user(planted_facts, CHANGES, DECOYS, graph).rates()


def test_a_perfect_graph_scores_one_everywhere_and_leaks_nothing() -> None:
    r = rates(PERFECT)
    assert (r["precision"], r["recall"], r["weight_accuracy"], r["change_order_accuracy"],
            r["initial_current_accuracy"], r["decoy_leakage"]) == (1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
    assert (r["claims"], r["planted"], r["decoys"]) == (4, 4, 2)


def test_a_wrong_claim_costs_precision_but_an_unsure_one_does_not() -> None:
    assert rates([*PERFECT, edge("user", "USES", "emacs")])["precision"] == 0.8
    assert rates([*PERFECT, edge("user", "USES", "emacs", confidence=0.45)])["precision"] == 1.0


def test_a_decoy_as_the_users_fact_is_leakage_and_a_miss_costs_recall() -> None:
    leaked = rates([*PERFECT, edge("user", "USES", "redpanda")])
    assert leaked["decoy_leakage"] == 0.5 and leaked["precision"] == 0.8
    assert rates(PERFECT[1:])["recall"] == 0.75


def test_weight_must_equal_the_sessions_that_stated_the_fact() -> None:
    wrong = [edge("user", "USES", "vs_code", 1, valid=9, first=0), *PERFECT[1:]]
    assert rates(wrong)["weight_accuracy"] == 0.75


def test_change_order_and_initial_current_from_valid_at() -> None:
    swapped = [edge("user", "USES", "vs_code", 2, valid=11, first=0), *PERFECT[1:]]  # vs_code newer than zed
    r = rates(swapped)
    assert r["change_order_accuracy"] == 0.0 and r["initial_current_accuracy"] == 0.0
    missing_new = [PERFECT[0], *PERFECT[2:]]
    r = rates(missing_new)
    assert r["change_order_accuracy"] == 0.0 and r["initial_current_accuracy"] is None  # a recall miss only


def test_the_graphs_own_current_and_initial_marks_win_over_valid_at() -> None:
    marked_wrong = [edge("user", "USES", "vs_code", 2, valid=9, first=0, current=True, initial=False),
                    edge("user", "USES", "zed", 1, valid=10, current=False, initial=True), *PERFECT[2:]]
    assert rates(marked_wrong)["initial_current_accuracy"] == 0.0
    marked_right = [edge("user", "USES", "vs_code", 2, valid=9, first=0, current=False, initial=True),
                    edge("user", "USES", "zed", 1, valid=10, current=True, initial=False), *PERFECT[2:]]
    assert rates(marked_right)["initial_current_accuracy"] == 1.0


def test_ids_match_allows_a_longer_phrase_not_a_shorter_one() -> None:
    assert ids_match("pgxpool", "pgxpool_settings") and ids_match("go", "go")
    assert not ids_match("memory_leaks_in_the_worker", "memory_leaks")
    assert not ids_match("zed", "zed_and_five_more_words_here")


def test_tallies_add_across_users() -> None:
    total = Tally()
    total.add(score_user(PLANTED, CHANGES, DECOYS, PERFECT))
    total.add(score_user(PLANTED, CHANGES, DECOYS, PERFECT[1:]))
    assert total.rates()["recall"] == 0.875 and total.planted == 8


def test_the_generator_is_seeded_and_plants_what_it_says() -> None:
    now = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    first, again = generate(6, seed=3, now=now), generate(6, seed=3, now=now)
    assert [[t.text for s in u.sessions for t in s] for u in first] == [[t.text for s in u.sessions for t in s] for u in again]
    assert {u.stamps for u in first} == {"live", "historical"}
    for user in first:
        user_text = " ".join(t.text for s in user.sessions for t in s if t.role == "user")
        agent_text = " ".join(t.text for s in user.sessions for t in s if t.role == "agent")
        for fact in user.facts:
            assert fact.weight == len(fact.sessions) >= 1 and len(fact.mentioned_at) >= fact.weight
        assert {d.obj for d in user.decoys}.isdisjoint({f.obj for f in user.facts})
        assert any(d.kind == "assistant" for d in user.decoys) and len(user.changes) == 1
        stamps = [t.timestamp for s in user.sessions for t in s]
        assert stamps == sorted(stamps)
        assert (stamps[0].year == 2023) == (user.stamps == "historical")
        assert user_text and agent_text
    held_out = {f.split for u in first for f in u.facts}
    assert held_out == {"tuning", "held_out"}


def test_held_out_phrasings_are_not_tuning_phrasings() -> None:
    for name in ("USES", "WORKS_ON", "BUILT_FOR_CLIENT", "STRUGGLES_WITH", "EXPRESSED_INTEREST", "EXHIBITS",
                 "PLACE", "PERSON", "POSSESSION", "SWITCH"):
        lists: phrasings.Phrasings = getattr(phrasings, name)
        assert lists.held_out and not set(lists.held_out) & set(lists.tuning)
