"""Pure parts of hybrid search (issue 7): fact timelines, evidence rendering, the light term check."""
from __future__ import annotations

from datetime import datetime, timezone

from athena_core.models.ontology import Fact, GraphNode
from athena_core.retrieval.fact_candidates import searchable_text, shares_a_term, term_ranking
from athena_core.ltm.fact_timeline import mark_timeline
from athena_core.retrieval.rendering import render_fact, timeline_label
from athena_core.retrieval.search_hit import Candidate as _Candidate
from athena_core.retrieval.search_hit import HitDraft, SearchHit, Span
from athena_core.retrieval.summary_pinning import pin_summaries
from athena_core.retrieval.lexical_terms import search_terms


def at(month: int, day: int) -> datetime:
    return datetime(2025, month, day, tzinfo=timezone.utc)


def node(node_id: str, name: str, label: str = "Projects") -> GraphNode:
    return GraphNode(key=f"t:u:{node_id}", id=node_id, label=label, name=name)


def fact(edge_id: str, obj: str, first: datetime, last: datetime, relation: str = "WORKS_ON") -> Fact:
    return Fact(edge_id=edge_id, subject=node("user", "user", "Identities"), relation=relation,
                object=node(obj, obj.replace("_", " ")), weight=1, confidence=0.8, heat_score=0.5,
                context_nuance="", valid_at=last, first_valid_at=first, first_seen=first, last_seen=last)


def test_a_relation_with_several_values_is_labelled_initially_and_currently() -> None:
    apollo = fact("e1", "apollo", at(1, 6), at(2, 1))
    zephyr = fact("e2", "zephyr", at(3, 10), at(3, 12))
    middle = fact("e3", "hermes", at(2, 2), at(2, 20))
    other = fact("e4", "go", at(1, 1), at(5, 1), relation="USES")  # one value: no label
    marks = mark_timeline([zephyr, apollo, middle, other])
    assert {e: timeline_label(m) for e, m in marks.items()} == {
        "e1": "initially", "e2": "currently", "e3": None, "e4": None}


def test_facts_render_with_their_span_and_label() -> None:
    apollo, zephyr = fact("e1", "apollo", at(1, 6), at(3, 1)), fact("e2", "zephyr", at(3, 10), at(3, 10))
    marks = mark_timeline([apollo, zephyr])
    assert render_fact(apollo, marks["e1"]) == "[6 January 2025 – 1 March 2025] initially: user works on apollo"
    assert render_fact(zephyr, None) == "[10 March 2025] user works on zephyr"


def test_search_terms_drop_stop_and_question_words_but_keep_numbers() -> None:
    assert search_terms("When did Ottoline move to Lisbon in 2023?") == ["ottoline", "move", "lisbon", "2023"]
    assert search_terms("what is it") == []


def test_shares_a_term_tolerates_plurals_and_tenses() -> None:
    assert shares_a_term("user works on apollo project", ["projects"])
    assert shares_a_term("user struggles with pgxpool settings", ["setting"])
    assert not shares_a_term("user uses go", ["payments", "language"])


def candidate(kind: str, source_id: str, chain_id: str, score: float) -> _Candidate:
    return _Candidate(HitDraft(content=source_id, similarity_score=None, score=score, source_type=kind,
                               source_id=source_id, timestamp=at(1, 1), time_span=Span(at(1, 1), at(1, 1)),
                               retrievers=["dense"], chain_id=chain_id), chain_id)


def test_a_pinned_summary_moves_right_before_its_chains_best_event() -> None:
    ranked = [candidate("event", "e1", "A", 0.9), candidate("event", "e2", "B", 0.8),
              candidate("event", "e3", "A", 0.7), candidate("chain", "B", "B", 0.3), candidate("chain", "A", "A", 0.2)]
    out = pin_summaries(ranked, ["B"])
    assert [c.hit.source_id for c in out] == ["e1", "B", "e2", "e3", "A"]
    assert [c.hit.score for c in out] == sorted((c.hit.score for c in out), reverse=True)
    # a summary ranked above all its chain's events stays where it is; nothing pinned → unchanged
    first = [candidate("chain", "A", "A", 0.95), *ranked[:3]]
    assert [c.hit.source_id for c in pin_summaries(first, ["A"])] == ["A", "e1", "e2", "e3"]
    assert pin_summaries(ranked, []) == ranked


def test_a_draft_becomes_the_search_hit_the_route_returns() -> None:
    # the draft must carry every field of the model, or a returned hit silently loses one
    assert set(HitDraft.__dataclass_fields__) == set(SearchHit.model_fields)
    draft = candidate("event", "e1", "A", 0.5).hit
    draft.evidence_event_ids, draft.is_current = ["evt_1"], True
    hit = draft.to_hit()
    assert isinstance(hit, SearchHit)
    assert SearchHit.model_validate(hit.model_dump()) == hit  # what FastAPI validates on the way out
    assert (hit.time_span.start, hit.evidence_event_ids, hit.is_current, hit.score) == (at(1, 1), ["evt_1"], True, 0.5)


def test_a_tool_fact_is_found_by_the_kind_of_tool_it_names() -> None:
    zed = fact("f1", "Zed", at(1, 1), at(2, 1), relation="USES")
    postgres = fact("f2", "PostgreSQL", at(1, 1), at(2, 1), relation="USES")
    portal = fact("f3", "onboarding portal", at(1, 1), at(2, 1))
    facts = [zed, postgres, portal]
    assert [f.edge_id for f in term_ranking(facts, search_terms("which editor do I use now?"))] == ["f1"]
    assert [f.edge_id for f in term_ranking(facts, search_terms("what database do we keep?"))] == ["f2"]
    assert [f.edge_id for f in term_ranking(facts, search_terms("what tools am I using"))] == ["f1", "f2"]
    assert term_ranking(facts, search_terms("which editor")) and not term_ranking([portal], search_terms("editor"))
    assert searchable_text(zed) == "user uses Zed editor ide tool"
    assert searchable_text(portal) == "user works on onboarding portal"  # not a tool: its statement alone


def test_a_time_cue_brings_the_value_a_matching_one_was_switched_to() -> None:
    """"which editor do I use now?": Emacs is a known editor; Kakoune, which the tool kinds do not know,
    was switched to in the same sentence and is the answer. A value only stated elsewhere is not lifted."""
    emacs = fact("f1", "Emacs", at(1, 1), at(1, 1), relation="USES").model_copy(
        update={"context_nuance": "previously, switched to Kakoune: I switched from Emacs to Kakoune"})
    kakoune = fact("f2", "Kakoune", at(2, 1), at(2, 1), relation="USES").model_copy(
        update={"context_nuance": "switched from Emacs: I switched from Emacs to Kakoune"})
    postgres = fact("f3", "PostgreSQL", at(1, 1), at(3, 1), relation="USES")
    terms = search_terms("which editor do I use now?")
    assert [f.edge_id for f in term_ranking([emacs, kakoune, postgres], terms)] == ["f1"]
    assert [f.edge_id for f in term_ranking([emacs, kakoune, postgres], terms, with_successors=True)] == ["f1", "f2"]
