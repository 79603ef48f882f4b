"""`athena eval locomo` (issue 5): the pure scoring functions, and the harness end to end on a small slice.

The end-to-end test reads LoCoMo in place from ../shared/datasets/locomo/locomo10.json (CC BY-NC 4.0,
never copied into the repository) and is skipped when it is absent.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from athena_eval import scoring
from athena_eval.baselines import BM25, bm25_search
from athena_eval.dataset import normalise_evidence, parse_locomo_datetime
from athena_eval.scoring import Question, Result

REPO_ROOT = Path(__file__).resolve().parents[2]
DATASET = REPO_ROOT / ".." / "shared" / "datasets" / "locomo" / "locomo10.json"


def q(evidence, category=4, answer=""):
    return Question(key="c#0", category=category, evidence=tuple(evidence), answer=answer)


# ------------------------------------------------------------------------------------------ pure parts


def test_recall_at_k_counts_turns_and_sessions_of_the_first_k_results():
    results = [Result("a", ("D1:1", "D1:2")), Result("b", ("D2:5",)), Result("c", ("D3:1",))]
    question = q(["D1:2", "D3:1", "D4:7"])
    metrics = scoring.score_question(question, results, ks=(1, 2, 3), budgets=())
    assert metrics["turn_recall@1"] == pytest.approx(1 / 3)
    assert metrics["turn_recall@2"] == pytest.approx(1 / 3)
    assert metrics["turn_recall@3"] == pytest.approx(2 / 3)
    assert metrics["session_recall@1"] == pytest.approx(1 / 3)  # sessions 1, 3, 4 wanted
    assert metrics["session_recall@3"] == pytest.approx(2 / 3)
    assert scoring.turn_recall(["D1:1"], []) == 0.0
    assert scoring.session_of("D12:3") == "12"


def test_tokens_are_words_times_four_thirds_and_cutting_never_exceeds_the_budget():
    assert scoring.approx_tokens("") == 0
    assert scoring.approx_tokens("one two three") == 4
    text = " ".join(f"w{i}" for i in range(100))  # 134 tokens
    for budget in (1, 2, 3, 4, 10, 75, 133):
        cut = scoring.cut_to_tokens(text, budget)
        assert scoring.approx_tokens(cut) <= budget
        assert text.startswith(cut)
    assert scoring.cut_to_tokens(text, 134) == text
    assert scoring.cut_to_tokens(text, 0) == ""


def test_packing_keeps_rank_order_cuts_the_first_result_that_does_not_fit_and_stops():
    r1 = Result(" ".join(["alpha"] * 30), ("D1:1",))  # 40 tokens
    r2 = Result(" ".join(["beta"] * 60), ("D1:2",))  # 80 tokens
    r3 = Result("gamma", ("D1:3",))  # 2 tokens, would fit, but packing stops at the cut
    packed = scoring.pack([r1, r2, r3], 100)
    assert packed.results == [r1, r2]
    assert packed.cut
    assert packed.texts[0] == r1.text
    assert packed.texts[1].split() == ["beta"] * 45  # 60 remaining tokens → 45 words
    assert packed.tokens <= 100
    whole = scoring.pack([r1, r3], 100)
    assert whole.results == [r1, r3] and not whole.cut and whole.tokens == 42
    assert scoring.pack([r1], 0).results == []


def test_answer_word_recall_uses_only_the_returned_text():
    assert scoring.content_words("The Adoption agencies!") == {"adoption", "agencie"}
    assert scoring.answer_word_recall("adoption agencies", ["She called two adoption agencies."]) == 1.0
    assert scoring.answer_word_recall("mental health, counseling", ["counseling jobs"]) == pytest.approx(1 / 3)
    assert scoring.answer_word_recall("the", ["the"]) is None  # no content word: undefined
    assert scoring.answer_word_recall(2022, ["painted in 2022"]) == 1.0
    # the chain holds the evidence turn, but its (cut) summary does not say the answer
    question = q(["D1:1"], answer="sunrise painting")
    chain = Result(("word " * 300) + "sunrise painting", ("D1:1",))
    metrics = scoring.score_question(question, [chain], ks=(1,), budgets=(100,))
    assert metrics["turn_recall@100tok"] == 1.0
    assert metrics["answer_recall@100tok"] == 0.0
    assert metrics["answer_recall@1"] == 1.0
    assert metrics["returned_tokens@1"] == scoring.approx_tokens(chain.text)


def test_per_budget_answers_score_each_budget_from_its_own_call():
    question = q(["D1:1", "D1:2"], answer="sunrise")
    small = [Result("[1 May] sunrise", ("D1:1",))]
    large = [Result("nothing here", ("D1:2",)), Result("[1 May] sunrise", ("D1:1",))]
    metrics = scoring.score_question_by_budget(question, {100: small, 1000: large}, ks=(1,))
    assert metrics["turn_recall@100tok"] == 0.5 and metrics["answer_recall@100tok"] == 1.0
    assert metrics["turn_recall@1000tok"] == 1.0
    assert metrics["turn_recall@1"] == 0.5 and metrics["answer_recall@1"] == 0.0  # ranks from the largest call
    assert list(metrics) == scoring.metric_names((1,), (100, 1000))


def test_aggregate_splits_categories_and_keeps_adversarial_out_of_overall():
    scored = [(1, {"m": 1.0, "a": None}), (4, {"m": 0.0, "a": 0.5}), (4, {"m": 0.5, "a": 1.0}),
              (5, {"m": 1.0, "a": 1.0})]
    table = scoring.aggregate(scored)
    assert table["overall"]["n"] == 3 and table["overall"]["m"] == pytest.approx(0.5)
    assert table["overall"]["a"] == pytest.approx(0.75)  # undefined values are left out of the mean
    assert table["5"]["n"] == 1 and table["5"]["m"] == 1.0
    assert table["4"]["m"] == pytest.approx(0.25)
    assert table["2"] == {"n": 0} and table["3"] == {"n": 0}


def test_bm25_ranks_the_matching_turn_first():
    texts = ["Alice: I adopted a dog named Rex", "Bob: the weather is nice", "Alice: Rex loves the park"]
    assert int(BM25(texts).scores("dog named Rex").argmax()) == 0
    (results,) = bm25_search(["D1:1", "D1:2", "D1:3"], texts, ["weather"], k=2)
    assert results[0].turn_ids == ("D1:2",) and len(results) == 2


def test_dataset_helpers():
    assert parse_locomo_datetime("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    assert parse_locomo_datetime("12:09 am on 13 September, 2023").hour == 0
    assert normalise_evidence(["D:11:26", "D30:05", "D1:3; D1:4", "D9:9"], {"D11:26", "D30:5", "D1:3", "D1:4"}) == [
        "D11:26", "D30:5", "D1:3", "D1:4"]


def test_baselines_see_turns_dated_the_way_athena_event_results_are():
    from datetime import datetime, timezone

    from athena_core.retrieval.rendering import render_event
    from athena_eval.dataset import Turn
    from athena_eval.locomo import baseline_text

    at = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    turn = Turn("D1:1", "1", "Mel", "user", "Mel: I ran a charity race.", at)
    assert baseline_text(turn) == render_event(at, turn.content) == "[8 May 2023] Mel: I ran a charity race."
    # the date alone now earns a temporal answer's words, for the baseline as for Athena
    (results,) = bm25_search(["D1:1"], [baseline_text(turn)], ["charity race"], k=1)
    assert scoring.answer_word_recall("8 May 2023", [r.text for r in results]) == 1.0


def test_a_fact_credits_the_turns_of_the_evidence_events_it_cites():
    from athena_eval.locomo import result_turns

    turns = {"evt_1": "D1:3", "evt_2": "D2:7", "evt_3": None}
    assert result_turns({"source_type": "fact", "source_id": "e1", "evidence_event_ids": ["evt_2", "evt_1", "evt_3"]},
                        turns) == ("D2:7", "D1:3")
    assert result_turns({"source_type": "event", "source_id": "evt_1"}, turns) == ("D1:3",)
    assert result_turns({"source_type": "chain", "source_id": "chn_1"}, turns) == ()
    assert result_turns({"source_type": "fact", "source_id": "e2", "evidence_event_ids": None}, turns) == ()


def test_words_only_a_fact_says_are_those_no_other_result_returns():
    results = [Result("[8 May 2023] Mel: I went hiking", kind="event"),
               Result("[8 May 2023] mel relates to pottery class (signed up)", kind="fact")]
    assert scoring.words_only_facts_say("pottery class in May", results) == {"pottery", "class"}
    assert scoring.words_only_facts_say("hiking", results) == set()


# ---------------------------------------------------------------------------------------- end to end


@pytest.mark.skipif(not DATASET.exists(), reason="LoCoMo not present at ../shared/datasets/locomo/locomo10.json")
def test_harness_end_to_end_on_two_conversations(tmp_path):
    from athena_eval.dataset import load_conversations
    from athena_eval.locomo import run_eval

    lines: list[str] = []
    report = run_eval(DATASET.resolve(), conversations=2, sessions_per_conversation=2, out_dir=tmp_path,
                      limit=10, wait_timeout_s=240, details=True, echo=lines.append)

    expected = [q for c in load_conversations(DATASET.resolve(), 2, 2) for q in c.questions]
    assert expected and report["corpus"]["questions"] == len(expected)
    assert report["pipeline"]["pending_at_end"] == 0, report["pipeline"]
    assert report["pipeline"]["stopped"] is None and report["pipeline"]["chains_without_vector"] == 0
    assert report["pipeline"]["chains"] >= 1

    # every question scored by every system, over the same questions
    systems = {"athena", "athena_no_facts", "bm25", "dense"}
    assert set(report["summary"]) == systems
    assert len(report["questions"]) == len(expected)
    assert {q["key"] for q in report["questions"]} == {q.key for q in expected}
    for row in report["questions"]:
        assert set(row["systems"]) == systems
        for system in row["systems"].values():
            for name, value in system["metrics"].items():
                if value is not None and not name.startswith("returned_tokens"):
                    assert 0.0 <= value <= 1.0, (name, value)
    for system, table in report["summary"].items():
        assert table["overall"]["n"] + table["5"]["n"] == len(expected)
        assert sum(table[str(c)]["n"] for c in range(1, 6)) == len(expected)
    assert report["summary"]["bm25"]["overall"]["turn_recall@10"] > 0.2  # BM25 finds some evidence
    assert report["summary"]["athena"]["overall"]["returned_tokens@10"] > 0  # Athena returned something

    # the athena results map back to LoCoMo turn ids through the event log
    returned = [r for row in report["questions"] for r in row["systems"]["athena"]["returned"]]
    assert returned and any(r["turns"] for r in returned) and any(r["evidence"] for r in returned)
    assert all(t.startswith("D") for r in returned for t in r["evidence"])
    assert report["athena_results"][0]["budget"] == 500 and report["athena_results"][0]["found_by"]

    # promoted during the run (one pass, as beat would); facts in answers cite LoCoMo turns
    facts = report["facts"]
    assert facts["promotion"]["hot_chains"] >= 1 and facts["promotion"]["unpromoted_at_end"] == 0, facts
    assert set(facts["graph_per_conversation"]) == {c.sample_id for c in load_conversations(DATASET.resolve(), 2, 2)}
    assert [u["budget"] for u in facts["use"]] == list(report["config"]["budgets_tokens"])
    kinds = {name: {r["kind"] for row in report["questions"] for r in row["systems"][name]["returned"]}
             for name in ("athena", "athena_no_facts")}
    assert "fact" not in kinds["athena_no_facts"], kinds  # include_facts false: events and chains only
    # this slice is small: the offline extractor may find no fact in it (the full run has 75 edges)
    if sum(g["edges"] for g in facts["graph_per_conversation"].values()) and "fact" in kinds["athena"]:
        cited = [r for row in report["questions"] for r in row["systems"]["athena"]["returned"] if r["kind"] == "fact"]
        assert any(r["turns"] for r in cited)  # a fact credits the evidence turns it cites
        assert any(u["answers_with_a_fact"] > 0 for u in facts["use"])
    bm25 = [r for row in report["questions"] for r in row["systems"]["bm25"]["returned"]]
    assert all(r["turns"] == 1 and r["id"].startswith("D") for r in bm25)

    # outputs: JSON + markdown table, no dataset text in them
    written = json.loads(Path(report["paths"]["json"]).read_text())
    assert written["summary"] == report["summary"] and len(written["questions"]) == len(expected)
    table = Path(report["paths"]["markdown"]).read_text()
    assert "| turn_recall@10 | athena |" in table and "| answer_recall@1000tok | dense |" in table
    assert expected[0].question not in Path(report["paths"]["json"]).read_text()
