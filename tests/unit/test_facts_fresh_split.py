"""The fresh split of the facts benchmark: generated from `phrasings_fresh`, and scored as its own row."""
from __future__ import annotations

from datetime import datetime, timezone

from athena_eval.facts import phrasings, phrasings_fresh
from athena_eval.facts.generator import generate
from athena_eval.facts.runner import SPLITS, markdown_table
from athena_eval.facts.scoring import GraphFact, Tally, score_user

NOW = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
RELATIONS = ("USES", "WORKS_ON", "BUILT_FOR_CLIENT", "STRUGGLES_WITH", "EXPRESSED_INTEREST", "EXHIBITS", "PLACE",
             "PERSON", "POSSESSION", "SWITCH")


def _plain(template: str) -> str:
    """A phrasing without case or end punctuation: two spellings of one phrasing are one."""
    return template.lower().rstrip(".!? ")


def test_fresh_phrasings_cover_every_kind_and_share_no_text_with_the_other_splits() -> None:
    for name in RELATIONS:
        fresh: tuple[str, ...] = getattr(phrasings_fresh, name)
        old: phrasings.Phrasings = getattr(phrasings, name)
        overlap = {_plain(t) for t in fresh} & {_plain(t) for t in (*old.tuning, *old.held_out)}
        assert len(fresh) >= 8 and not overlap, (name, overlap)
    assert len(phrasings_fresh.THIRD_PARTY) >= 8 and len(phrasings_fresh.ASSISTANT) >= 8
    assert all(len(pairs) >= 8 for pairs in phrasings_fresh.USER_DECOYS.values())


def test_a_fresh_share_plants_fresh_facts_and_decoys_and_none_without_it() -> None:
    users = generate(8, seed=5, now=NOW, fresh_share=0.3)
    assert {f.split for u in users for f in u.facts} == {"tuning", "held_out", "fresh"}
    kinds = {d.kind for u in users for d in u.decoys if d.split == "fresh"}
    assert kinds == {"third_party", "assistant", "negation", "hypothetical", "question"}
    for user in users:
        assert {d.obj for d in user.decoys}.isdisjoint({f.obj for f in user.facts})
    plain = generate(8, seed=5, now=NOW)
    assert all(f.split != "fresh" for u in plain for f in u.facts) and all(d.split == "any" for u in plain
                                                                          for d in u.decoys)
    assert [[t.text for s in u.sessions for t in s] for u in plain] == \
        [[t.text for s in u.sessions for t in s] for u in generate(8, seed=5, now=NOW)]


def test_the_fresh_row_scores_the_fresh_facts_and_its_own_decoys() -> None:
    user = generate(4, seed=5, now=NOW, fresh_share=1.0, held_out_share=0.0)[0]
    # only the shared third-party decoy's "my colleague" fact can be a tuning one: no other shares are left
    assert {f.split for f in user.facts} <= {"fresh", "tuning"} and sum(f.split == "tuning" for f in user.facts) <= 1
    planted_fresh = [f for f in user.facts if f.split == "fresh"]
    leaked = next(d for d in user.decoys if d.split == "fresh")
    graph = [GraphFact(f.subject, f.relation, f.obj, f.weight, 0.9, NOW, NOW) for f in user.facts]
    graph.append(GraphFact("user", "USES", leaked.obj, 1, 0.9, NOW, NOW))
    fresh = score_user(user.facts, user.changes, user.decoys, graph, splits=SPLITS["fresh"])
    tuning = score_user(user.facts, user.changes, user.decoys, graph, splits=SPLITS["tuning"])
    assert fresh.planted == len(planted_fresh) > 8 and fresh.recalled == fresh.planted
    assert tuning.planted == len(user.facts) - len(planted_fresh)
    assert fresh.decoys == sum(d.split == "fresh" for d in user.decoys) and fresh.leaked == 1
    assert tuning.decoys == sum(d.split == "any" for d in user.decoys) and tuning.leaked == 0
    row = {"offline": {"all": {split: Tally().rates() for split in SPLITS}}}
    assert "| offline | all | fresh |" in markdown_table(row)
