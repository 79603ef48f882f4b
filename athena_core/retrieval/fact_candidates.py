"""Graph retrieval for a search (S6.4): facts around the entities the query names or its top chains
mention, and the user's own facts sharing a word with the query, each with its history.

Facts are ranked like chains and events, by reciprocal rank fusion of two lists, so a fact lands among
them by how well it matches, not after them: ``graph`` (the traversal's S6.4 order: weight, heat; then
the other values of each (subject, relation) found) and ``lexical`` (the facts whose statement, or the
kind of tool their object is, shares query words, most shared first). Both count at
`search_weight_graph`. For a (subject, relation) that changed over time, every value it had joins, each
marked current or initial, and a "currently" / "first" cue in the query puts the value it asks for ahead
of the others in both lists (for "first" / "used to", a value its evidence calls replaced counts as an
early one as well: "which CI did we use at first?" asks for Jenkins, left for GitHub Actions, though the
relation's first value is Flutter).
"""
from __future__ import annotations

from dataclasses import replace

from athena_core.ltm.fact_timeline import Order, order_by_cue, timeline_key
from athena_core.ltm.persona import is_replaced
from athena_core.ltm.retrieval import FactRetriever, statement
from athena_core.models.ontology import Fact
from athena_core.models.scope import UserScope
from athena_core.retrieval.fusion import reciprocal_rank_fusion
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.retrieval.rendering import render_fact
from athena_core.retrieval.search_hit import Candidate, HitDraft, Span
from athena_core.text.stemming import stem
from athena_core.text.tool_kinds import kind_words


def shared_terms(text: str, terms: list[str]) -> int:
    """How many query terms the text holds, compared by stem (plurals and tenses meet)."""
    stems = {stem(w) for w in search_terms(text, max_terms=10_000)}
    return len({stem(t) for t in terms} & stems)


def shares_a_term(text: str, terms: list[str]) -> bool:
    """A light lexical check: a query term in the text, compared by stem."""
    return shared_terms(text, terms) > 0


def searchable_text(fact: Fact) -> str:
    """What a query's words are compared with: the fact's statement and the kind of tool its object is
    ("sam uses Zed" is also found by "which editor do I use now?")."""
    return " ".join([statement(fact), *kind_words(fact.object.name)])


def stated_together(a: Fact, b: Fact) -> bool:
    """Two values of one (subject, relation) whose evidence names both ("I switched from Emacs to Helix")."""
    return timeline_key(a) == timeline_key(b) and a.object.name.lower() in b.context_nuance.lower() \
        and b.object.name.lower() in a.context_nuance.lower()


def term_ranking(facts: list[Fact], terms: list[str], *, with_successors: bool = False) -> list[Fact]:
    """The facts whose text shares a query word, most shared first (stable: S6.4 order breaks ties).
    `with_successors` (a query asking for a value by time): a value stated together with a matching one
    of its (subject, relation) shares its overlap, so the value the cue asks for can lead. Seen on
    `make run`: in "which editor do I use now?", "editor" matched the old Emacs (a known editor), and the
    current Helix, switched to in the same sentence, was not in the list at all."""
    overlap = {f.edge_id: shared_terms(searchable_text(f), terms) for f in facts}
    if with_successors:
        overlap = {f.edge_id: max([overlap[f.edge_id]] + [overlap[g.edge_id] for g in facts if stated_together(f, g)])
                   for f in facts}
    return sorted((f for f in facts if overlap[f.edge_id] > 0), key=lambda f: -overlap[f.edge_id])


def fact_candidates(facts: FactRetriever, scope: UserScope, query: str, chain_entities: list[str], *,
                    weight: float, rrf_k: float, order: Order | None = None) -> list[Candidate]:
    """The graph's facts as search candidates, scored by RRF over the `graph` and `lexical` lists (each at
    `weight`), each with its dates, its current/initial marks and the event ids of its evidence."""
    terms = search_terms(query)
    named = facts.entity_facts(scope, query, chain_entities)
    own = [f for f in facts.user_facts(scope) if shares_a_term(searchable_text(f), terms)]
    found = list({f.edge_id: f for f in [*named, *own]}.values())
    if not found:
        return []
    history = facts.history(scope, found)  # `found` first, then the other values of their relations
    marks = facts.timeline(history)
    by_id = {f.edge_id: f for f in history}
    cue_marks = {**marks, **{f.edge_id: replace(marks[f.edge_id], is_initial=True) for f in history
                             if is_replaced(f, marks.get(f.edge_id))}}  # "used to", "at first": a past value too
    lexical = term_ranking(history, terms, with_successors=order is not None)
    rankings = {name: [f.edge_id for f in order_by_cue(ranking, cue_marks, lambda f: f.edge_id, order)]
                for name, ranking in (("graph", history), ("lexical", lexical))}
    out = []
    for fused in reciprocal_rank_fusion(rankings, {"graph": weight, "lexical": weight}, rrf_k):
        fact, mark = by_id[fused.key], marks.get(fused.key)
        out.append(Candidate(HitDraft(
            content=render_fact(fact, mark), similarity_score=None, score=fused.score,
            source_type="fact", source_id=fact.edge_id, timestamp=fact.valid_at,
            time_span=Span(fact.first_valid_at, fact.valid_at),
            retrievers=fused.retrievers, valid_at=fact.valid_at, first_valid_at=fact.first_valid_at,
            is_current=mark.is_current if mark else True, is_initial=mark.is_initial if mark else True,
            evidence_event_ids=list(fact.evidence_event_ids))))
    return out
