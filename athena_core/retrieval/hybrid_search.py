"""Hybrid search (issue 7; SPEC S2 SearchMemory, GetContext with a query, S6.4).

Four retrievers, each a ranked list from its own index, all scoped to the user:
- ``lexical``: BM25 over the verbatim text of events, pending or consolidated (names, numbers, rare words);
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

Turns (`search_max_concurrent`): at most that many searches of one process run at once; the others wait
for a turn (stage ``turn``), first come first served (`search_turns.py`). Searches share the process's GIL
with the API's ingest: without a limit, eight readers in a closed loop held ingest to ~90 of 500 events/s
offered; with two at a time ingest keeps ~280, with one ~430 (`docs/retrieval.md`, sixteenth round).

Cost (issue 16, `docs/retrieval.md` "Reads at scale"): the query's embedding and the vector scans run on
a thread beside the lexical searches (`search_parallel`), and only the `search_load_candidates` best
events and chains by a first fusion of the retrievers' ranks are loaded from the document store, each
keeping the score it has with every candidate loaded (`fusion.fuse_loaded`); a query naming a time window
also loads the candidates that may fall in it, since its window bonus can lift any of them.

Here: the ranking and the packing. Beside it, one concept each: `search_hit.py` (what is returned),
`neighbours.py`, `fact_candidates.py`, `metadata_filter.py`, `time_bonus.py`, `rendering.py` and
`summary_pinning.py`; query terms for the lexical index come from `lexical_terms.py`.
"""
from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TypeVar

from athena_core.ltm.retrieval import FactRetriever
from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import EventStatus
from athena_core.models.scope import UserScope
from athena_core.providers.embeddings import Embedder
from athena_core.retrieval.budget import approx_tokens, pack_within_budget
from athena_core.retrieval.fact_candidates import fact_candidates
from athena_core.retrieval.fusion import best_keys, fuse_loaded, rank_bonus
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.retrieval.metadata_filter import filtered
from athena_core.retrieval.neighbours import with_neighbours
from athena_core.retrieval.rendering import render_chain, render_event
from athena_core.retrieval.search_hit import Candidate, HitDraft, SearchHit, Span, rounded
from athena_core.retrieval.search_turns import SearchTurns
from athena_core.retrieval.stage_clock import StageClock, report_stages
from athena_core.retrieval.sentences import event_of, excerpt
from athena_core.retrieval.summary_pinning import pin_summaries
from athena_core.retrieval.time_bonus import apply_time_cues
from athena_core.retrieval.time_cues import parse_time_cues
from athena_core.stores.documents.port import DocumentStore
from athena_core.stores.graph.port import GraphStore
from athena_core.stores.lexical.port import LexicalIndex
from athena_core.stores.vectors.port import VectorIndex
from athena_core.wiring.settings import Settings

OnAccess = Callable[[UserScope, list[Chain], datetime], None]
T = TypeVar("T")


class HybridSearch:
    """SearchMemory and GetContext(query) over explicit stores: the document store (events, chains), the
    chain and event vector indexes, the lexical index, the graph (None: no facts) and the embedder that
    made the vectors. `on_access` is told which chains a search returned (recall on access, SPEC S5.2:
    `MemoryReader.access`)."""

    def __init__(
        self, *, documents: DocumentStore, chain_vectors: VectorIndex, event_vectors: VectorIndex,
        lexical: LexicalIndex, graph: GraphStore | None, embedder: Embedder, on_access: OnAccess,
        settings: Settings,
    ) -> None:
        self.documents = documents
        self.chain_vectors = chain_vectors
        self.event_vectors = event_vectors
        self.lexical = lexical
        self.graph = graph
        self.embedder = embedder
        self.on_access = on_access
        self.facts = FactRetriever(graph, settings) if graph is not None else None
        self.settings = settings
        self._pool: ThreadPoolExecutor | None = None  # made on first use (after any fork)
        self._pool_lock = threading.Lock()
        limit = settings.search_max_concurrent
        self._turns = SearchTurns(limit) if limit > 0 else None

    @contextmanager
    def _turn(self, clock: StageClock) -> Iterator[None]:
        """Run the search when one of the process's `search_max_concurrent` turns is free (module
        docstring); the wait is the search's ``turn`` stage."""
        if self._turns is None:
            yield
            return
        with clock("turn"):
            self._turns.acquire()
        try:
            yield
        finally:
            self._turns.release()

    # -- ranking ------------------------------------------------------------------------------------
    def _rank(self, scope: UserScope, query: str, now: datetime, metadata_filter: dict[str, str] | None,
              with_facts: bool, clock: StageClock) -> tuple[list[Candidate], dict[str, Chain]]:
        s = self.settings
        n = s.search_candidates
        k = s.search_rrf_k
        # the query's embedding and the vector scans run beside the lexical searches (both release the GIL)
        dense_lists = self._in_background(self._dense_lists, scope, query, n, clock) if s.search_weight_dense > 0 \
            else (lambda: (None, [], {}, []))
        event_lexical, chain_lexical = [], []  # a weight ≤ 0 switches one off
        if s.search_weight_lexical > 0:
            with clock("lexical"):
                terms = search_terms(query)
                event_lexical = self.lexical.search(scope, terms, "event", n)
                chain_lexical = self.lexical.search(scope, terms, "chain", n)
        with clock("dense_wait"):  # the part of the embedding and vector scans the lexical search did not cover
            vector, event_dense, cosine, chain_dense = dense_lists()
        chain_cosine = {h.chain_id: h.similarity for h in chain_dense}
        with clock("time_cues"):
            cues = parse_time_cues(query, now)
        budget = s.search_load_candidates
        weights = {"dense": s.search_weight_dense, "lexical": s.search_weight_lexical}
        event_lists = {"lexical": event_lexical, "dense": event_dense}
        chain_lists = {"dense": list(chain_cosine), "lexical": chain_lexical}

        with clock("loading"):
            wanted = self._worth_loading(scope, "event", event_lists, weights, budget, cues.window)
            events = {e.event_id: e for e in self.documents.get_events(scope, wanted)
                      if self._findable(e.status, e.chain_id)}
            chain_ids = list(dict.fromkeys([*self._worth_loading(scope, "chain", chain_lists, weights, budget,
                                                                 cues.window),
                                            *(e.chain_id for e in events.values())]))
            chains = {c.chain_id: c for c in self.documents.get_chains(scope, chain_ids)
                      if c.status == ChainStatus.active}
            keep_event = None
            if metadata_filter:
                events, chains, keep_event = filtered(self.documents, scope, events, chains, metadata_filter)
            events = {e: event for e, event in events.items() if self._chain_kept(event.chain_id, chains)}
        with clock("fusion"):  # only loaded, kept items come out, each scored as with every candidate loaded
            chain_fused, chain_rank = fuse_loaded(chain_lists, weights, k, gone=set(chain_ids) - chains.keys(),
                                                  loaded=chains)
            event_fused, _ = fuse_loaded(event_lists, weights, k, gone=set(wanted) - events.keys(), loaded=events)
        with clock("neighbours"):
            event_scores = with_neighbours(self.documents, scope, [f for f in event_fused if events[f.key].chain_id],
                                           events, chains, s.search_weight_neighbour, keep_event)
        with clock("fusion"):
            candidates = self._candidates(chain_fused, chain_rank, event_fused, event_scores, events, chains,
                                          chain_cosine, cosine)
        if with_facts and self.facts is not None and s.search_weight_graph > 0:
            with clock("graph"):
                top_entities = [e for f in chain_fused[:3] for e in chains[f.key].entities]
                candidates += fact_candidates(self.facts, scope, query, top_entities, weight=s.search_weight_graph,
                                              rrf_k=k, order=cues.value_order)
        if vector is not None:
            with clock("similarities"):
                self._fill_cosine(scope, vector, candidates)
        with clock("time_cues"):
            apply_time_cues(candidates, cues, weight=s.search_weight_time, rrf_k=k, rerank=s.search_time_rerank)
            if s.search_length_prior:
                for c in candidates:  # a longer turn holds more evidence (and may be cut to an excerpt later)
                    c.hit.score *= max(approx_tokens(c.hit.content), 1) ** s.search_length_prior
            candidates.sort(key=lambda c: -c.hit.score)
        return candidates, chains

    def _worth_loading(self, scope: UserScope, kind: str, lists: dict[str, list[str]], weights: dict[str, float],
                       budget: int, window: tuple[datetime, datetime] | None) -> list[str]:
        """The `budget` best keys by a first fusion of the ranks (all when `budget` ≤ 0). A time window's
        bonus can lift any candidate of the pools, so with a window the candidates past the budget that
        may fall in it (`DocumentStore.may_fall_in`: indexed columns, no document read) are loaded too."""
        best = best_keys(lists, weights, self.settings.search_rrf_k, budget)
        if window is None or budget <= 0:
            return best
        taken = set(best)
        rest = [key for key in best_keys(lists, weights, self.settings.search_rrf_k, 0) if key not in taken]
        return best + self.documents.may_fall_in(scope, kind, rest, *window)

    def _dense_lists(self, scope: UserScope, query: str, n: int, clock: StageClock):
        """(query vector, event ids by cosine, their cosines, chain hits by cosine)."""
        with clock("embedding"):
            vector = self.embedder.embed_query([query])[0]
        with clock("dense"):
            event_dense, cosine = self._event_dense(scope, vector, n)
            chain_dense = self.chain_vectors.search(scope, vector, n)
        floor = self.settings.search_dense_min_similarity  # a rank is no evidence when nothing is near
        event_dense = [e for e in event_dense if cosine[e] >= floor]
        chain_dense = [h for h in chain_dense if h.similarity >= floor]
        return vector, event_dense, cosine, chain_dense

    def _in_background(self, fn: Callable[..., T], *args) -> Callable[[], T]:
        """Start `fn(*args)` on the search's thread pool (in this thread when `search_parallel` is off);
        the returned call waits for its result (re-raising its error). The request's context (log ids)
        goes along."""
        if not self.settings.search_parallel:
            result = fn(*args)
            return lambda: result
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="athena-search")
        future = self._pool.submit(contextvars.copy_context().run, fn, *args)
        return future.result

    def _candidates(self, chain_fused: list, chain_rank: dict[str, int], event_fused: list,
                    event_scores: dict[str, tuple[float, list[str]]], events: dict, chains: dict[str, Chain],
                    chain_cosine: dict[str, float], cosine: dict[str, float]) -> list[Candidate]:
        """Chain and event results with their fused scores. An event gains its chain's rank as context; a
        pending event, whose chain is not formed yet, is its own context at its best rank (the chain it
        will form is summed up by it), so the newest turns are not outranked by every turn of an older
        chain only because that chain exists (SPEC S2 freshness)."""
        s = self.settings
        k = s.search_rrf_k
        own_context: dict[str, int] = {}
        for f in event_fused:  # events not in a chain yet (pending, rejected) rank alike, without neighbours
            event = events[f.key]
            if not event.chain_id:
                event_scores[f.key] = (f.score, list(f.retrievers))
                if event.status == EventStatus.pending:
                    own_context[f.key] = min(f.ranks.values())

        candidates: list[Candidate] = []
        for fused in chain_fused:
            chain = chains[fused.key]
            candidates.append(Candidate(HitDraft(
                content=render_chain(chain), similarity_score=rounded(chain_cosine.get(chain.chain_id)),
                score=s.search_weight_chain * fused.score, source_type="chain", source_id=chain.chain_id,
                timestamp=chain.last_event_at, time_span=Span(chain.started_at, chain.last_event_at),
                retrievers=fused.retrievers, chain_id=chain.chain_id, topic=chain.topic), chain.chain_id))
        for event_id, (score, retrievers) in event_scores.items():
            event = events[event_id]
            context = chain_rank.get(event.chain_id) if event.chain_id else own_context.get(event_id)
            score += rank_bonus(context, s.search_weight_chain, k) if context else 0.0
            candidates.append(Candidate(HitDraft(
                content=render_event(event.timestamp, event.content),
                similarity_score=rounded(cosine.get(event.event_id)), score=score,
                source_type="event", source_id=event.event_id, timestamp=event.timestamp,
                time_span=Span(event.timestamp, event.timestamp), retrievers=retrievers,
                chain_id=event.chain_id, topic=chains[event.chain_id].topic if event.chain_id else None,
                role=event.role.value), event.chain_id,
                event.content))
        return candidates

    @staticmethod
    def _chain_kept(chain_id: str | None, chains: dict[str, Chain]) -> bool:
        """An event not in a chain yet stands alone; one in a chain only while the chain is kept."""
        return chain_id is None or chain_id in chains

    def _findable(self, status: EventStatus, chain_id: str | None) -> bool:
        """Events are searchable as they arrive (SPEC S2 freshness): pending ones alike with consolidated
        ones, and a rejected segment's unless `index_rejected_events` is off (issue 15)."""
        if status == EventStatus.consolidated:
            return bool(chain_id)
        return status == EventStatus.pending or self.settings.index_rejected_events

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

    def _fill_cosine(self, scope: UserScope, vector, candidates: list[Candidate]) -> None:
        """Every event and chain result reports its cosine to the query (SPEC S2), also those only BM25 or
        a neighbour found, so `similarity_threshold` means the same for every result."""
        for kind, index in (("event", self.event_vectors), ("chain", self.chain_vectors)):
            missing = [c for c in candidates if c.hit.source_type == kind and c.hit.similarity_score is None]
            if missing:
                found = index.similarities(scope, vector, [c.hit.source_id for c in missing])
                for c in missing:
                    c.hit.similarity_score = rounded(found.get(c.hit.source_id))

    # -- public -------------------------------------------------------------------------------------
    def search(
        self, scope: UserScope, query: str, now: datetime, *, limit: int, max_tokens: int | None = None,
        similarity_threshold: float | None = None, metadata_filter: dict[str, str] | None = None,
        include_facts: bool = True, timings: dict[str, float] | None = None,
    ) -> list[SearchHit]:
        """`timings`, when given, receives ms per stage (`stage_clock.STAGES`; the reads benchmark)."""
        clock = StageClock(timings)
        with self._turn(clock):
            candidates, chains = self._rank(scope, query, now, metadata_filter, with_facts=include_facts, clock=clock)
            if similarity_threshold is not None:
                # the threshold is on cosine, which every event and chain result has; facts have none and stay
                candidates = [c for c in candidates
                              if c.hit.similarity_score is None or c.hit.similarity_score >= similarity_threshold]
            # summaries of the top chains only: beyond them, a chain is better shown by its own events
            top_chains = [c.chain_id for c in candidates
                          if c.hit.source_type == "chain"][: self.settings.search_summaries]
            candidates = [c for c in candidates if c.hit.source_type != "chain" or c.chain_id in top_chains]
            candidates = pin_summaries(candidates, top_chains[: self.settings.search_pinned_summaries])
            with clock("excerpts"):
                self._cut_to_excerpts(candidates, query, max_tokens)
            with clock("packing"):
                packed = pack_within_budget(candidates, text=lambda c: c.hit.content, key=lambda c: c.hit.source_id,
                                            max_tokens=max_tokens, max_items=limit)
                for c in packed:
                    c.hit.score = round(c.hit.score, 6)
                    c.hit.tokens = approx_tokens(c.hit.content)
            with clock("access"):
                touched = [chains[i] for i in dict.fromkeys(c.chain_id for c in packed if c.chain_id) if i in chains]
                self.on_access(scope, touched, now)
        report_stages(clock, "search", self.settings.search_slow_log_ms)
        return [c.hit.to_hit() for c in packed]

    def _cut_to_excerpts(self, candidates: list[Candidate], query: str, max_tokens: int | None) -> None:
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

    def rank_chains(self, scope: UserScope, query: str, now: datetime, limit: int,
                    timings: dict[str, float] | None = None) -> list[tuple[Chain, float | None]]:
        """GetContext(query): chains in hybrid order (a chain counts at its best result: itself or an event)."""
        clock = StageClock(timings)
        with self._turn(clock):
            candidates, chains = self._rank(scope, query, now, None, with_facts=False, clock=clock)
        report_stages(clock, "chain ranking", self.settings.search_slow_log_ms)
        order: dict[str, float | None] = {}
        for c in candidates:
            if c.chain_id and c.chain_id not in order:
                order[c.chain_id] = c.hit.similarity_score if c.hit.source_type == "chain" else None
        return [(chains[i], sim) for i, sim in list(order.items())[:limit]]
