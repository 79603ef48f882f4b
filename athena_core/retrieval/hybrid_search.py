"""Hybrid search (issue 7; SPEC S2 SearchMemory, GetContext with a query, S6.4).

Four retrievers, each a ranked list from its own index, all scoped to the user:
- ``lexical``: BM25 over the verbatim text of consolidated events (names, numbers, rare words);
- ``dense``: cosine over the events' vectors (same meaning, other words); a long event also has one
  vector per sentence and ranks by its best part (`sentences.py`);
- chain level (``lexical`` and ``dense`` over chain summaries): which topics the query is about. A chain
  is a result of its own (its summary), and lends its rank to its events as context;
- ``neighbour``: events next to a found event in its chain get a share of its score (the answer is
  often the reply to the matching turn);
- ``graph``: facts around the entities the query names or its top chains mention (S6.4), and the user's
  facts sharing a word with the query.
Reciprocal rank fusion combines them (weights are settings). Time cues in the query add a bonus for
evidence inside the asked window and re-rank the best candidates by time for "first" / "currently".
A length prior (score × tokens^`search_length_prior`) favours turns that say more. Every event and chain
result shows its date(s) in its text and carries its time span, so the caller can answer "when". Results
are sorted by fused score, deduplicated and packed into `max_tokens`; events after the best few are shown
as excerpts (their best-matching sentences), so the budget holds more of the evidence.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from athena_core.ltm.graph_port import GraphStore
from athena_core.ltm.ontology import Fact
from athena_core.ltm.retrieval import FactRetriever, statement
from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import UserScope
from athena_core.mtm.recall import MemoryReader, matches_filter
from athena_core.providers.offline_text import stem
from athena_core.retrieval.budget import approx_tokens, pack_within_budget
from athena_core.retrieval.fusion import Fused, rank_bonus, reciprocal_rank_fusion
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.retrieval.sentences import event_of, excerpt
from athena_core.retrieval.time_cues import TimeCues, parse_time_cues, render_date, render_span
from athena_core.settings import Settings
from athena_core.stores.ports import LexicalIndex, VectorIndex

SourceType = Literal["chain", "event", "fact"]
FILTER_EVENT_SCAN = 5000  # with a `filter`: most events read from the log to test the candidate chains' events


class TimeSpan(BaseModel):
    start: datetime
    end: datetime


class SearchHit(BaseModel):
    """One SearchMemory result (SPEC S2 fields, plus what hybrid retrieval adds)."""

    content: str
    similarity_score: float | None  # cosine to the query (events and chains; null for facts, or dense off)
    score: float  # fused score: what results are sorted by
    source_type: SourceType
    source_id: str  # chain id, event id, or edge id
    timestamp: datetime  # the evidence time (event time, chain's last event, fact's valid_at)
    time_span: TimeSpan
    retrievers: list[str]
    chain_id: str | None = None
    topic: str | None = None
    role: str | None = None
    tokens: int = 0
    excerpt: bool = False  # content is the event's best-matching sentences, not all of it (`…` marks cuts)


@dataclass
class _Candidate:
    """A result before packing. Built with `model_construct` (trusted fields, no validation): a search
    scores a few hundred candidates and returns tens; FastAPI validates what is returned."""

    hit: SearchHit
    chain_id: str | None = None
    text: str | None = None  # an event's own text (content adds its date), for an excerpt


# ------------------------------------------------------------------------------------------ rendering


def render_event(at: datetime, text: str) -> str:
    return f"[{render_date(at)}] {text}"


def render_chain(chain: Chain) -> str:
    return f"[{render_span(chain.started_at, chain.last_event_at)}] {chain.summary}"


def fact_timeline(facts: list[Fact]) -> dict[str, str]:
    """edge id → "initially" / "currently" where a subject's relation had several values over time.

    Ordered by valid_at (SPEC S6): the first value observed is the initial one, the last the current one.
    """
    groups: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for fact in facts:
        groups[(fact.subject.id, fact.relation)].append(fact)
    labels: dict[str, str] = {}
    for group in groups.values():
        if len({f.object.id for f in group}) < 2:
            continue
        ordered = sorted(group, key=lambda f: (f.first_valid_at, f.valid_at))
        labels[ordered[0].edge_id] = "initially"
        labels[max(group, key=lambda f: (f.valid_at, f.first_valid_at)).edge_id] = "currently"
    return labels


def render_fact(fact: Fact, label: str | None) -> str:
    span = render_span(fact.first_valid_at, fact.valid_at)
    return f"[{span}] {label + ': ' if label else ''}{statement(fact)}"


def pin_summaries(ranked: list[_Candidate], chain_ids: list[str]) -> list[_Candidate]:
    """Move each given chain's summary right before the best-ranked event of that chain, so the topic
    and its verbatim evidence are read together (a summary alone ranks below its own best events)."""
    pinned = {c.chain_id: c for c in ranked if c.hit.source_type == "chain" and c.chain_id in chain_ids}
    pinned_ids = set(pinned)
    out: list[_Candidate] = []
    for c in ranked:
        if c.hit.source_type == "chain" and c.chain_id in pinned_ids:
            if c.chain_id in pinned:  # not placed yet: no event of its chain came first
                out.append(pinned.pop(c.chain_id))
            continue
        if c.hit.source_type == "event" and c.chain_id in pinned:
            summary = pinned.pop(c.chain_id)
            summary.hit.score = max(summary.hit.score, c.hit.score)
            out.append(summary)
        out.append(c)
    return out


def shares_a_term(text: str, terms: list[str]) -> bool:
    """A light lexical check: a query term in the text, compared by stem (plurals and tenses meet)."""
    stems = {stem(w) for w in search_terms(text, max_terms=10_000)}
    return any(stem(t) in stems for t in terms)


# ---------------------------------------------------------------------------------------------- search


class HybridSearch:
    def __init__(
        self, reader: MemoryReader, event_vectors: VectorIndex, lexical: LexicalIndex,
        graph: GraphStore | None, settings: Settings,
    ) -> None:
        self.reader = reader
        self.documents = reader.documents
        self.chain_vectors = reader.vectors
        self.event_vectors = event_vectors
        self.lexical = lexical
        self.embedder = reader.embedder
        self.facts = FactRetriever(graph, settings) if graph is not None else None
        self.graph = graph
        self.settings = settings

    # -- ranking ------------------------------------------------------------------------------------
    def _rank(self, scope: UserScope, query: str, now: datetime, metadata_filter: dict[str, str] | None,
              with_facts: bool) -> tuple[list[_Candidate], dict[str, Chain]]:
        s = self.settings
        n = s.search_candidates
        event_dense, chain_dense, event_lexical, chain_lexical = [], [], [], []  # a weight ≤ 0 switches one off
        cosine: dict[str, float] = {}  # event id → cosine of its best-matching part
        vector = None
        if s.search_weight_dense > 0:
            vector = self.embedder.embed([query])[0]
            event_dense, cosine = self._event_dense(scope, vector, n)
            chain_dense = self.chain_vectors.search(scope, vector, n)
        if s.search_weight_lexical > 0:
            event_lexical = self.lexical.search(scope, query, "event", n)
            chain_lexical = self.lexical.search(scope, query, "chain", n)
        chain_cosine = {h.chain_id: h.similarity for h in chain_dense}

        events = {e.event_id: e for e in self.documents.get_events(
            scope, list(dict.fromkeys([*event_lexical, *cosine])))
            if e.status == EventStatus.consolidated and e.chain_id}
        chain_ids = list(dict.fromkeys([*chain_lexical, *chain_cosine, *(e.chain_id for e in events.values())]))
        chains = {c.chain_id: c for c in self.documents.get_chains(scope, chain_ids) if c.status == ChainStatus.active}
        keep_event = None
        if metadata_filter:
            events, chains, keep_event = self._filtered(scope, events, chains, metadata_filter)

        k = s.search_rrf_k
        chain_fused = reciprocal_rank_fusion(
            {"dense": [c for c in chain_cosine if c in chains], "lexical": [c for c in chain_lexical if c in chains]},
            {"dense": s.search_weight_dense, "lexical": s.search_weight_lexical}, k)
        chain_rank = {f.key: rank for rank, f in enumerate(chain_fused, start=1)}
        event_fused = reciprocal_rank_fusion(
            {"lexical": [e for e in event_lexical if e in events and events[e].chain_id in chains],
             "dense": [e for e in event_dense if e in events and events[e].chain_id in chains]},
            {"lexical": s.search_weight_lexical, "dense": s.search_weight_dense}, k)

        event_scores = self._with_neighbours(scope, event_fused, events, chains, keep_event)

        candidates: list[_Candidate] = []
        for fused in chain_fused:
            chain = chains[fused.key]
            candidates.append(_Candidate(SearchHit.model_construct(
                content=render_chain(chain), similarity_score=_round(chain_cosine.get(chain.chain_id)),
                score=s.search_weight_chain * fused.score, source_type="chain", source_id=chain.chain_id,
                timestamp=chain.last_event_at, time_span=TimeSpan.model_construct(start=chain.started_at, end=chain.last_event_at),
                retrievers=fused.retrievers, chain_id=chain.chain_id, topic=chain.topic), chain.chain_id))
        for event_id, (score, retrievers) in event_scores.items():
            event = events[event_id]
            context = chain_rank.get(event.chain_id)
            score += rank_bonus(context, s.search_weight_chain, k) if context else 0.0
            candidates.append(_Candidate(SearchHit.model_construct(
                content=render_event(event.timestamp, event.content),
                similarity_score=_round(cosine.get(event.event_id)), score=score,
                source_type="event", source_id=event.event_id, timestamp=event.timestamp,
                time_span=TimeSpan.model_construct(start=event.timestamp, end=event.timestamp), retrievers=retrievers,
                chain_id=event.chain_id, topic=chains[event.chain_id].topic, role=event.role.value), event.chain_id,
                event.content))
        if with_facts and self.facts is not None and s.search_weight_graph > 0:
            top_entities = [e for f in chain_fused[:3] for e in chains[f.key].entities]
            candidates += self._fact_candidates(scope, query, top_entities)
        if vector is not None:
            self._fill_cosine(scope, vector, candidates)
        self._apply_time_cues(candidates, parse_time_cues(query, now))
        if s.search_length_prior:
            for c in candidates:  # a longer turn holds more evidence (and may be cut to an excerpt later)
                c.hit.score *= max(approx_tokens(c.hit.content), 1) ** s.search_length_prior
        candidates.sort(key=lambda c: -c.hit.score)
        return candidates, chains

    def _event_dense(self, scope: UserScope, vector, n: int) -> tuple[list[str], dict[str, float]]:
        """The `n` events nearest the query by their best part — the event's own vector or one of its
        sentence vectors, a sentence counted × `search_weight_sentence` — best first; and each one's
        cosine (of that best part, unweighted)."""
        weight = self.settings.search_weight_sentence
        rank: dict[str, float] = {}
        cosine: dict[str, float] = {}
        for vector_id, similarity in self.event_vectors.search(scope, vector, 3 * n):
            event_id, is_sentence = event_of(vector_id)
            if is_sentence and weight <= 0:
                continue
            score = similarity * weight if is_sentence else similarity
            if score > rank.get(event_id, -2.0):
                rank[event_id] = score
            cosine[event_id] = max(similarity, cosine.get(event_id, -1.0))
        ranked = sorted(rank, key=lambda e: -rank[e])[:n]
        return ranked, {e: cosine[e] for e in ranked}

    def _fill_cosine(self, scope: UserScope, vector, candidates: list[_Candidate]) -> None:
        """Every event and chain result reports its cosine to the query (SPEC S2), also those only BM25 or
        a neighbour found, so `similarity_threshold` means the same for every result."""
        for kind, index in (("event", self.event_vectors), ("chain", self.chain_vectors)):
            missing = [c for c in candidates if c.hit.source_type == kind and c.hit.similarity_score is None]
            if missing:
                found = index.similarities(scope, vector, [c.hit.source_id for c in missing])
                for c in missing:
                    c.hit.similarity_score = _round(found.get(c.hit.source_id))

    def _filtered(self, scope: UserScope, events: dict[str, Event], chains: dict[str, Chain],
                  wanted: dict[str, str]) -> tuple[dict[str, Event], dict[str, Chain], "Callable[[Event], bool]"]:
        """SearchMemory's metadata `filter` (SPEC S2: all pairs equal, on event and session metadata).

        - an event is kept when its own metadata matches, or its chain's metadata does (a chain carries
          its sessions' metadata);
        - a chain (its summary) is kept when its metadata matches, or any of its events' metadata does
          (read from the log for chains none of whose found events matched), so a topic the filtered
          events belong to is shown with them.
        Facts are not filtered (graph facts carry no metadata). Returns the kept events and chains and
        the event test (for neighbours loaded later).
        """
        def keep_event(event: Event) -> bool:
            chain = chains.get(event.chain_id or "")
            return matches_filter(event.metadata, wanted) or (chain is not None and matches_filter(chain.metadata, wanted))

        kept_events = {i: e for i, e in events.items() if keep_event(e)}
        kept_chains = {c.chain_id: c for c in chains.values()
                       if matches_filter(c.metadata, wanted) or any(e.chain_id == c.chain_id for e in kept_events.values())}
        unknown = [i for c in chains.values() if c.chain_id not in kept_chains for i in c.event_ids if i not in events]
        for event in self.documents.get_events(scope, unknown[:FILTER_EVENT_SCAN]) if unknown else []:
            if event.chain_id in chains and event.chain_id not in kept_chains and matches_filter(event.metadata, wanted):
                kept_chains[event.chain_id] = chains[event.chain_id]
        return kept_events, kept_chains, keep_event

    def _with_neighbours(self, scope: UserScope, fused: list[Fused], events: dict[str, Event],
                         chains: dict[str, Chain],
                         keep_event: "Callable[[Event], bool] | None" = None) -> dict[str, tuple[float, list[str]]]:
        """event id → (score, retrievers), where each found event lends a share of its score to the events
        just before and after it in its chain: an answer often sits in the reply next to the matching turn.
        Neighbours not found by any retriever are loaded and marked found by "neighbour"."""
        scores = {f.key: (f.score, list(f.retrievers)) for f in fused}
        share = self.settings.search_weight_neighbour
        if share <= 0 or not fused:
            return scores
        wanted = {events[f.key].chain_id for f in fused}
        position = {c: {e: i for i, e in enumerate(chains[c].event_ids)} for c in wanted}
        lent: dict[str, float] = defaultdict(float)
        for f in fused:
            chain = chains[events[f.key].chain_id]
            i = position[chain.chain_id].get(f.key)
            if i is None:
                continue
            for j in (i - 1, i + 1):
                if 0 <= j < len(chain.event_ids):
                    lent[chain.event_ids[j]] += share * f.score
        missing = [e for e in lent if e not in events]
        for event in self.documents.get_events(scope, missing) if missing else []:
            if event.status == EventStatus.consolidated and event.chain_id in chains and (
                    keep_event is None or keep_event(event)):
                events[event.event_id] = event
        for event_id, extra in lent.items():
            if event_id not in events:
                continue
            score, retrievers = scores.get(event_id, (0.0, []))
            scores[event_id] = (score + extra, [*retrievers, "neighbour"])
        return scores

    def _fact_candidates(self, scope: UserScope, query: str, chain_entities: list[str]) -> list[_Candidate]:
        """Facts around the entities the query names or the top chains mention (S6.4 order), then the
        user's own facts that share a word with the query; for each (subject, relation) found, every value
        it had over time, so that the initial and the current value both show."""
        terms = search_terms(query)
        named = self.facts.entity_facts(scope, query, chain_entities)
        own = [f for f in self.facts.user_facts(scope) if shares_a_term(statement(f), terms)]
        found = list({f.edge_id: f for f in [*named, *own]}.values())
        history: dict[str, Fact] = {f.edge_id: f for f in found}
        for subject, relation in list(dict.fromkeys((f.subject.id, f.relation) for f in found))[:5]:
            for fact in self.graph.facts_about(scope, subject, relation):
                history.setdefault(fact.edge_id, fact)
        labels = fact_timeline(list(history.values()))
        out = []
        for rank, fact in enumerate(history.values(), start=1):
            out.append(_Candidate(SearchHit.model_construct(
                content=render_fact(fact, labels.get(fact.edge_id)), similarity_score=None,
                score=rank_bonus(rank, self.settings.search_weight_graph, self.settings.search_rrf_k),
                source_type="fact", source_id=fact.edge_id, timestamp=fact.valid_at,
                time_span=TimeSpan.model_construct(start=fact.first_valid_at, end=fact.valid_at), retrievers=["graph"])))
        return out

    def _apply_time_cues(self, candidates: list[_Candidate], cues: TimeCues) -> None:
        """A window bonus for evidence inside the asked time; for "first" / "currently", a bonus among the
        best candidates that grows with how early (or late) each is within their time range."""
        s = self.settings
        if not cues.any or s.search_weight_time <= 0:
            return
        bonus = rank_bonus(1, s.search_weight_time, s.search_rrf_k)
        if cues.window is not None:
            for c in candidates:
                span = c.hit.time_span
                if span.start < cues.window[1] and span.end >= cues.window[0]:
                    c.hit.score += bonus
        if cues.order is not None:
            # among the best candidates, a bonus by position in time: full for the earliest (or latest)
            best = sorted(candidates, key=lambda c: -c.hit.score)[: s.search_time_rerank]
            times = [(c.hit.time_span.start if cues.order == "earliest" else c.hit.time_span.end).timestamp()
                     for c in best]
            if times and max(times) > min(times):
                lo, hi = min(times), max(times)
                for c, at in zip(best, times):
                    position = (hi - at) / (hi - lo) if cues.order == "earliest" else (at - lo) / (hi - lo)
                    c.hit.score += bonus * position

    # -- public -------------------------------------------------------------------------------------
    def search(
        self, scope: UserScope, query: str, now: datetime, *, limit: int, max_tokens: int | None = None,
        similarity_threshold: float | None = None, metadata_filter: dict[str, str] | None = None,
    ) -> list[SearchHit]:
        candidates, chains = self._rank(scope, query, now, metadata_filter, with_facts=True)
        if similarity_threshold is not None:
            # the threshold is on cosine, which every event and chain result has; facts have none and stay
            candidates = [c for c in candidates
                          if c.hit.similarity_score is None or c.hit.similarity_score >= similarity_threshold]
        # summaries of the top chains only: beyond them, a chain is better shown by its own events
        top_chains = [c.chain_id for c in candidates if c.hit.source_type == "chain"][: self.settings.search_summaries]
        candidates = [c for c in candidates if c.hit.source_type != "chain" or c.chain_id in top_chains]
        candidates = pin_summaries(candidates, top_chains[: self.settings.search_pinned_summaries])
        self._cut_to_excerpts(candidates, query, max_tokens)
        packed = pack_within_budget(candidates, text=lambda c: c.hit.content, key=lambda c: c.hit.source_id,
                                    max_tokens=max_tokens, max_items=limit)
        for c in packed:
            c.hit.score = round(c.hit.score, 6)
            c.hit.tokens = approx_tokens(c.hit.content)
        touched = [chains[i] for i in dict.fromkeys(c.chain_id for c in packed if c.chain_id) if i in chains]
        self.reader.access(scope, touched, now)
        return [c.hit for c in packed]

    def _cut_to_excerpts(self, candidates: list[_Candidate], query: str, max_tokens: int | None) -> None:
        """Events after the best `search_whole_results` are shown by their best-matching sentences (at most
        `search_excerpt_words` words), so a budget holds more of the evidence; the best stay whole. Only
        candidates within twice the budget are cut: packing never reaches further than gap-filling."""
        s = self.settings
        if s.search_excerpt_words <= 0:
            return
        terms = search_terms(query)
        seen_events, running = 0, 0
        for c in candidates:
            if max_tokens is not None and running > 2 * max_tokens:
                break
            if c.hit.source_type == "event" and c.text is not None:
                seen_events += 1
                cut = excerpt(c.text, terms, s.search_excerpt_words) if seen_events > s.search_whole_results else None
                if cut is not None:
                    c.hit.content = render_event(c.hit.timestamp, cut)
                    c.hit.excerpt = True
            running += approx_tokens(c.hit.content)

    def rank_chains(self, scope: UserScope, query: str, now: datetime, limit: int) -> list[tuple[Chain, float | None]]:
        """GetContext(query): chains in hybrid order (a chain counts at its best result: itself or an event)."""
        candidates, chains = self._rank(scope, query, now, None, with_facts=False)
        order: dict[str, float | None] = {}
        for c in candidates:
            if c.chain_id and c.chain_id not in order:
                order[c.chain_id] = c.hit.similarity_score if c.hit.source_type == "chain" else None
        return [(chains[i], sim) for i, sim in list(order.items())[:limit]]


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)
