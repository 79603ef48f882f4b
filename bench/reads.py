"""Read benchmark (SPEC S9): GetContext (with query) and SearchMemory p50/p99 over HTTP vs chains per tenant.

    python bench/reads.py            # 1k, 10k and 100k chains per tenant, 100 queries per route and size
    python bench/reads.py --quick    # 1k and 10k chains, 20 queries

1. Seed (untimed) a temporary ATHENA_DATA_DIR directly through the embedded adapters: for each size N a
   tenant `reads-<N>` whose user `u0` holds N active chains (`SqliteDocuments.upsert_chain`) with their
   vectors (`SqliteVectors.upsert_many`, batches of 5000), and `--events-per-chain` consolidated events
   per chain (event log rows, event vectors, FTS5 docs for events and summaries: what hybrid search
   reads), plus noise: another user of the same tenant and two other tenants with `--noise` chains each,
   so the scope filter has work to do. Two events per chain by default: at 100k chains that is 200k event
   vectors a user, already 300 MB of float32 in the API's cache; real chains hold more (LoCoMo: median 8).
   Vectors are real embeddings from the configured local embedder (all-MiniLM-L6-v2) of synthetic,
   varied summaries. Embedding 100k texts on a loaded 2-core machine takes far too long (about 16
   texts/s measured here under load), so a pool of `--pool` distinct summaries is embedded and chain i
   reuses pool text i mod pool with its vector plus small Gaussian noise (sigma `--noise-sigma` per
   dimension, then re-normalised: cosine to the pool vector about 0.98). Chains therefore keep realistic
   neighbourhoods (topics, near-duplicates) without 100k model calls. The pool's embedding rate is reported.
2. Start the API (`Stack.start_redis` + `start_api`, no worker: reads only) on that data dir.
3. Per size: an untimed warm-up (loads the API's embedder and the user's vector matrix; the first request
   per size is reported as `first_*_ms`), then, with one sequential client (latency, not throughput):
   - baseline: dense-only search in this process on the same files (`HybridSearch` with the lexical and
     graph retrievers switched off: event and chain vectors fused by rank), i.e. without HTTP / JSON;
   - hybrid search in this process (the shipped settings: lexical + dense + neighbours + graph + time),
     `max_tokens` 1000 — `ratio_hybrid_to_dense` is the cost of hybrid over dense-only, same run;
   - the same hybrid search as the third round ran it (`before_direct`: every candidate loaded, the
     query's embedding and vector scans before the lexical search, `search_load_candidates` 0 and
     `search_parallel` off), taking turns with the shipped one query by query:
     `ratio_to_load_all_serial` is shipped p50 / that p50;
   - SearchMemory over HTTP (`POST /context/search`, max_tokens 1000) and GetContext over HTTP
     (`GET /context?query=...&pages=5`, hybrid chain ranking).
   Every request uses a query text not used before in that process, so the embedding cache never hides
   the model call (dense-only and hybrid in this process get different lists; HTTP SearchMemory reuses
   the hybrid list, embedded once in the API process).

4. Per size (or per `--concurrent-sizes`), unless `--concurrent-readers 0`: SearchMemory from 8 concurrent
   readers (`wrk -c 8`, each request a distinct query) for `--concurrent-seconds` (10 s) while a second `wrk`
   posts StoreEvent into the same user (another session) on a schedule of `--ingest-rate` (500) events/s,
   and a Celery worker (started for this phase, at ATHENA_WORKER_NICE as shipped unless `--worker-nice`;
   none with `--no-worker`) indexes what arrives, twice: first the searches on a schedule of
   `--reader-rate` (16) per second, Poisson arrivals by default (`transport: http-concurrent-paced`), then
   each reader sending its next search on the answer (`http-concurrent`). Each: the reader's p50/p95/p99,
   its errors, the ingest rate reached and its refusals, the CPU cores the API and the worker used, the
   worker's niceness and the events left unindexed at the end (`unindexed_after_phase`). `--reads-api`
   sends the readers to a second API process on another port (the ingest keeps the first). The worker is
   stopped after the phases, so the next size's one-at-a-time figures are not measured beside its backlog
   (the next phase's worker takes it up). The user's vector cache then refreshes under the reads, as it
   does for a user who writes while reading. Those events stay: a reused `--data-dir` holds them on its
   next run (about 5k more events per size and run).

`--data-dir DIR` keeps the seeded files in DIR (not deleted afterwards) and reuses them on the next run
when they were seeded with the same sizes, pool, events per chain, noise and seed (`seeded.json`): the 100k
size takes long to build, so before/after runs share one build.

Per size the in-process hybrid search reports its time per stage (`stage_ms`: median and mean ms of each
stage in `athena_core/retrieval/stage_clock.STAGES`, measured by the search's own `timings` argument), and
every line records the API process's resident memory after the timed requests (`api_rss_mb`, from
/proc/<pid>/status) and this process's (`bench_rss_mb`, which holds the same caches for the in-process runs).

`--vector-store milvus` puts the chain and event vectors on a Milvus standalone server started here (the
production vector engine, `athena_devtools/engine_servers.py`), in the collections the API opens
(`build_vectors`); the documents and the lexical index stay SQLite. After seeding, the collections are
flushed and the bench waits until the server has indexed every row (`vector_index_wait_s`), so the timed
searches read the HNSW index. A Milvus run cannot reuse a data dir (the server's ports are new each run).
With it, the 1M-event user: `--sizes 500000` (two events per chain).

`--omp-threads 1` sets OMP_NUM_THREADS for this process and the API (default: unset, as shipped). On a
loaded 2-core machine torch's default of one intra-op thread per core made a single-query embedding ~30x
slower here (about 500 ms vs 17 ms), so that flag changes the figures a lot; every line records it.

One JSON line per (route, size): p50/p95/p99/mean/max ms, `ratio_hybrid_to_dense` (in-process p50s),
`ratio_http_to_direct` (SearchMemory p50 over HTTP / in-process hybrid p50) and a summary line with growth
per decade (p50 at 10N / p50 at N).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from common import (  # noqa: E402
    emit, free_port, log, machine_info, percentile, process_tree, save_results, tree_cpu_s, utc_stamp,
)
from http_load import ensure_wrk, start_wrk  # noqa: E402
from pipeline import BASE_TIME, query as synthetic_query, summary as synthetic_summary  # noqa: E402

BENCH = "reads"
MAX_TOKENS = 1000
PREFIXES = ["", "Remind me: ", "Earlier we talked about this. ", "Quick question. ", "What did we say? ",
            "From last week: ", "Again: ", "Context please. "]


def load_avg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def stats(latencies: list[float]) -> dict:
    values = sorted(latencies)
    return {
        "requests": len(values),
        "p50_ms": ms(percentile(values, 50)),
        "p95_ms": ms(percentile(values, 95)),
        "p99_ms": ms(percentile(values, 99)),
        "mean_ms": ms(statistics.fmean(values)) if values else None,
        "max_ms": ms(values[-1]) if values else None,
    }


class QueryPool:
    """Distinct query texts, handed out once each (so no request hits the embedding cache)."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        texts = {p + synthetic_query(rng) for _ in range(20_000) for p in [rng.choice(PREFIXES)]}
        self.texts = sorted(texts)
        rng.shuffle(self.texts)
        # then, for long runs (about 1k queries per size with the concurrent phases), the same questions
        # behind two prefixes: the first ~2k are as before, so earlier runs stay comparable
        questions = {t.removeprefix(next(p for p in PREFIXES[1:] + [""] if t.startswith(p))) for t in texts}
        more = sorted({a + b + q for q in questions for a in PREFIXES[1:] for b in PREFIXES[1:] if a != b} - texts)
        rng.shuffle(more)
        self.texts += more

    def take(self, n: int) -> list[str]:
        if n > len(self.texts):
            raise ValueError(f"only {len(self.texts)} distinct queries left, {n} asked")
        out, self.texts = self.texts[:n], self.texts[n:]
        return out


def make_chain(tenant: str, user: str, i: int, topic: str, text: str, entities: list[str], events: int = 2):
    from athena_core.mtm.heat import compute_heat
    from athena_core.models.chains import Chain
    from athena_core.models.chains import QualityScores

    at = BASE_TIME + timedelta(minutes=7 * i)
    quality = QualityScores(coherence=0.6, completeness=0.6, relevance=0.6, engagement=0.5, cognitive_depth=0.5,
                            overall=0.56, passed=True, mode="balanced")
    heat = compute_heat(intrinsic_importance=0.5, density=0.2, hours_since_access=24.0)
    return Chain(
        chain_id=f"chn_{tenant}_{user}_{i}", tenant_id=tenant, user_id=user, agent_ids=["default"],
        topic=topic, subtopics=[], summary=text, entities=entities, quality=quality, intrinsic_importance=0.5,
        density=0.2, heat_score=heat.heat, heat_factors=heat, started_at=at, last_event_at=at + timedelta(minutes=5),
        event_count=events, event_ids=[f"evt_{tenant}_{user}_{i}_{k}" for k in range(events)],
        metadata={"bench": BENCH, "topic_group": topic.split(":")[0]}, created_at=at, updated_at=at,
    )


EVENT_LINES = ["I keep thinking about {t}: {s}", "Agreed. For {t}, the next step is {e}."]


def make_events(chain, text: str, entities: list[str]):
    from athena_core.models.events import Event, EventRole, EventStatus, EventType

    topic = chain.topic
    return [
        Event(event_id=event_id, tenant_id=chain.tenant_id, user_id=chain.user_id, agent_id="default",
              session_id="ses_bench", role=EventRole.user if k % 2 == 0 else EventRole.agent,
              type=EventType.message,
              content=EVENT_LINES[k % 2].format(t=topic, s=text, e=", ".join(entities) or "to write it down"),
              timestamp=chain.started_at + timedelta(minutes=k), received_at=chain.started_at,
              status=EventStatus.consolidated, chain_id=chain.chain_id)
        for k, event_id in enumerate(chain.event_ids)
    ]


def seed_user(stores, tenant: str, user: str, n: int, pool: list[tuple[str, str, list[str]]],
              pool_vectors: np.ndarray, rng: np.random.Generator, sigma: float, events_per_chain: int) -> None:
    from athena_core.models.scope import UserScope
    from athena_core.stores.lexical.port import LexicalDoc

    documents, vectors, event_vectors, lexical = stores
    scope = UserScope(tenant_id=tenant, user_id=user)
    batch = 5000

    def noisy(block: np.ndarray) -> np.ndarray:
        if len(pool) < n:  # reused pool vectors get a little noise (see the module docstring)
            block = block + rng.normal(0.0, sigma, block.shape).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
        return block

    for start in range(0, n, batch):
        stop = min(n, start + batch)
        ids, vecs, events, event_vecs, docs = [], [], [], [], []
        for i in range(start, stop):
            topic, text, entities = pool[i % len(pool)]
            chain = make_chain(tenant, user, i, topic, text, entities, events_per_chain)
            documents.upsert_chain(chain)
            ids.append(chain.chain_id)
            vecs.append(pool_vectors[i % len(pool)])
            chain_events = make_events(chain, text, entities)
            events += chain_events
            event_vecs += [pool_vectors[i % len(pool)]] * len(chain_events)
            docs += [LexicalDoc(chain.chain_id, "chain", chain.search_text)]
            docs += [LexicalDoc(e.event_id, "event", e.content) for e in chain_events]
        vectors.upsert_many(scope, ids, noisy(np.asarray(vecs, dtype=np.float32)))
        if events:
            documents.append_events(events)
            event_vectors.upsert_many(scope, [e.event_id for e in events], noisy(np.asarray(event_vecs, dtype=np.float32)))
        lexical.upsert(scope, docs)
        # indexed, as the pipeline leaves them: else the index sweep of a running worker (the concurrent
        # phase starts one) re-embeds every seeded event, and the timed reads measure that instead
        now = datetime.now(timezone.utc)
        documents.mark_indexed(scope, [e.event_id for e in events], now)
        documents.mark_chains_indexed(scope, ids, now)


def wait_for_milvus_index(indexes, timeout_s: float = 3600.0) -> float:
    """Flush the Milvus collections and wait until the server has indexed every row (HNSW under
    AUTOINDEX): the timed searches then measure the index, not a brute-force scan of unindexed segments.
    Returns the seconds waited."""
    start = time.perf_counter()
    for index in indexes:
        index.client.flush(index.collection, timeout=600)
    while True:
        states = [index.client.describe_index(index.collection, "vector") for index in indexes]
        # (2.3's pending_index_rows counts rows of segments in compaction too: not a done signal)
        if all(st.get("indexed_rows", 0) >= st.get("total_rows", 0) for st in states):
            break
        if time.perf_counter() - start > timeout_s:
            raise RuntimeError(f"Milvus still indexing after {timeout_s} s: {states}")
        time.sleep(5)
    waited = round(time.perf_counter() - start, 1)
    log(f"[reads] Milvus indexes built in {waited} s: {states}")
    return waited


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident memory of a process (Linux /proc), MB; None where /proc is missing."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        return None
    return None


def api_rss_mb(stack) -> float | None:
    """Resident memory of the API: its process, or with `--api-workers` above 1 the sum of uvicorn's
    workers (each holds its own embedder and vector caches)."""
    pid = stack.processes["api"].pid
    workers = {p.pid for p in process_tree(pid)} - {pid}
    sizes = [rss_mb(p) for p in (workers or {pid})]
    return round(sum(x for x in sizes if x is not None), 1) if any(x is not None for x in sizes) else None


def stage_summary(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median and mean ms per stage over the timed requests (a stage a request skipped counts as 0)."""
    names = sorted({k for sample in samples for k in sample})
    out = {}
    for name in names:
        values = sorted(sample.get(name, 0.0) for sample in samples)
        out[name] = {"p50_ms": round(percentile(values, 50), 3), "mean_ms": round(statistics.fmean(values), 3)}
    return out


def seed_key(args: argparse.Namespace) -> dict:
    """What a data dir was seeded with; a reused dir must match it exactly."""
    return {"sizes": args.sizes, "pool": args.pool, "events_per_chain": args.events_per_chain,
            "noise": args.noise, "noise_sigma": args.noise_sigma, "seed": args.seed,
            "layout": 2,  # 2: seeded events and chains marked indexed (older dirs are seeded again)
            **({"vector_store": args.vector_store} if args.vector_store != "sqlite" else {})}


def warm_every_worker(base_url: str, sid: str, texts: list[str], workers: int) -> None:
    """Searches on fresh connections, 4 per worker at once, so each uvicorn worker loads its embedder and
    the user's vectors before anything is timed (the sequential client's one connection reaches one)."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    def one(text: str) -> None:
        with httpx.Client(base_url=base_url, timeout=120.0, trust_env=False) as c:
            c.post(f"/api/v1/sessions/{sid}/context/search", json={"query": text, "max_tokens": MAX_TOKENS})

    with ThreadPoolExecutor(max_workers=4 * workers) as pool:
        list(pool.map(one, texts))


def timed_in_turns(fns: list, query_lists: list[list[str]]) -> list[list[float]]:
    """Seconds per call of each fn, the fns taking turns query by query (fn i gets query_lists[i])."""
    out: list[list[float]] = [[] for _ in fns]
    for i in range(len(query_lists[0])):
        for fn, queries, times in zip(fns, query_lists, out):
            t0 = time.perf_counter()
            fn(queries[i])
            times.append(time.perf_counter() - t0)
    return out


def timed(fn, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append(time.perf_counter() - t0)
    return out


def run(args: argparse.Namespace, root: Path, records: list[dict], stamp: str) -> None:
    import httpx

    from athena_core.models.events import utc_now
    from athena_core.models.scope import UserScope
    from athena_core.mtm.recall import MemoryReader
    from athena_core.providers.factory import build_embedder
    from athena_api.dependencies import warm_up_and_freeze
    from athena_core.retrieval.hybrid_search import HybridSearch
    from athena_core.wiring.runtime import build_graph, build_vectors
    from athena_core.stores.lexical.sqlite_lexical import SqliteLexical
    from athena_core.wiring.settings import Settings
    from athena_devtools.stack import Stack
    from athena_core.stores.documents.sqlite_documents import SqliteDocuments
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    marker = data_dir / "seeded.json"
    reuse = marker.exists() and json.loads(marker.read_text()) == seed_key(args)
    if marker.exists() and not reuse:
        raise SystemExit(f"{data_dir} was seeded with {marker.read_text()}, not {seed_key(args)}: use another dir")
    if reuse and args.vector_store == "milvus":
        raise SystemExit("--vector-store milvus seeds a fresh Milvus server each run: give a new --data-dir")
    env_backup = os.environ.pop("ATHENA_REDIS_URL", None)  # always the embedded Redis
    milvus = None
    if args.vector_store == "milvus":  # the production vector engine: a standalone server on loopback
        from athena_devtools.engine_servers import BENCH_SESSION_TTL_S, MilvusServerProcess

        milvus = MilvusServerProcess(data_dir=root / "milvus", session_ttl_s=BENCH_SESSION_TTL_S).start()
        log(f"[reads] Milvus server at {milvus.uri}")
    settings = Settings(data_dir=data_dir, api_host="127.0.0.1", api_port=free_port(), document_store="sqlite",
                        auth_mode="off", llm_provider="offline", embedding_provider="local",
                        vector_store=args.vector_store, milvus_uri=milvus.uri if milvus else "",
                        api_workers=args.api_workers)
    queries = QueryPool(args.seed)
    omp_env = {"OMP_NUM_THREADS": str(args.omp_threads)} if args.omp_threads else {}
    os.environ.update(omp_env)  # before torch loads in this process (LocalEmbedder imports it lazily)

    # -- 1. seed ------------------------------------------------------------------------------------
    t0 = time.perf_counter()
    embedder = build_embedder(settings)
    embedder.embed(["warm up the embedding model"])
    model_load_s = time.perf_counter() - t0
    rng = random.Random(args.seed)
    if reuse:  # the pool's embedding only feeds the seeding
        args.pool = 0
    distinct: dict[str, tuple[str, str, list[str]]] = {}
    while len(distinct) < args.pool:
        topic, text, entities = synthetic_summary(rng)
        distinct.setdefault(text, (topic, text, entities))
    pool = list(distinct.values())
    t0 = time.perf_counter()
    pool_vectors = (embedder.embed([f"{t}. {s} ({', '.join(e)})" for t, s, e in pool])  # Chain.search_text form
                    if pool else np.zeros((0, embedder.dimension), dtype=np.float32))
    embed_s = max(time.perf_counter() - t0, 1e-9)
    log(f"[reads] model load {model_load_s:.1f} s; embedded {len(pool)} summaries in {embed_s:.1f} s "
        f"({len(pool) / embed_s:.1f}/s), load {load_avg()}")

    documents = SqliteDocuments(settings.sqlite_path)
    if milvus is not None:  # the collections the API opens (build_vectors), filled here
        vectors = build_vectors(settings, embedder.dimension, "chains")
        event_vectors = build_vectors(settings, embedder.dimension, "events")
    else:
        vectors = SqliteVectors(data_dir / "vectors.sqlite3", embedder.dimension, model_name=embedder.model_name)
        event_vectors = SqliteVectors(data_dir / "event_vectors.sqlite3", embedder.dimension,
                                      model_name=embedder.model_name)
    lexical = SqliteLexical(data_dir / "lexical.sqlite3", max_df=settings.search_lexical_max_df)
    stores = (documents, vectors, event_vectors, lexical)
    nrng = np.random.default_rng(args.seed)
    seed_info = {}
    for n in args.sizes if not reuse else []:
        t0 = time.perf_counter()
        tenant = f"reads-{n}"
        seed_user(stores, tenant, "u0", n, pool, pool_vectors, nrng, args.noise_sigma, args.events_per_chain)
        seed_user(stores, tenant, "u1", args.noise, pool, pool_vectors, nrng, args.noise_sigma, args.events_per_chain)
        seed_info[n] = round(time.perf_counter() - t0, 2)
        log(f"[reads] seeded {n} chains (+{args.noise} noise) in {seed_info[n]} s")
    for k in range(2 if not reuse else 0):
        seed_user(stores, f"reads-other-{k}", "u0", args.noise, pool, pool_vectors, nrng, args.noise_sigma,
                  args.events_per_chain)
    index_wait_s = wait_for_milvus_index((vectors, event_vectors)) if milvus is not None else None
    if reuse:
        log(f"[reads] reusing the seeded data dir {data_dir}")
        seed_info = {n: 0.0 for n in args.sizes}
    else:
        marker.write_text(json.dumps(seed_key(args)))

    # -- 2. API ---------------------------------------------------------------------------------------
    stack = Stack(settings=settings, with_beat=False, extra_env={
        "ATHENA_AUTH_MODE": "off", "ATHENA_DOCUMENT_STORE": "sqlite", "ATHENA_PRODUCTION": "0",
        "ATHENA_LLM_PROVIDER": "offline", "ATHENA_EMBEDDING_PROVIDER": "local",
        "ATHENA_VECTOR_STORE": args.vector_store, "ATHENA_MILVUS_URI": settings.milvus_uri,
        **omp_env, **({"ATHENA_WORKER_NICE": str(args.worker_nice)} if args.worker_nice is not None else {})})
    reader = MemoryReader(documents, vectors, embedder, settings)
    graph = build_graph(settings)
    stores_of_search = dict(documents=documents, chain_vectors=vectors, event_vectors=event_vectors, lexical=lexical,
                            graph=graph, embedder=embedder, on_access=reader.access)
    hybrid = HybridSearch(**stores_of_search, settings=settings)
    dense_only = HybridSearch(**stores_of_search, settings=settings.model_copy(update={
        "search_weight_lexical": 0.0, "search_weight_graph": 0.0}))
    # the third round's way, measured beside the shipped one: every candidate loaded, stages one after another
    before = HybridSearch(**stores_of_search, settings=settings.model_copy(update={
        "search_load_candidates": 0, "search_parallel": False}))
    warm_up_and_freeze(hybrid)  # as the API does on its first search (athena_api/dependencies.py)
    try:
        stack.start_redis()
        stack.start_api()
        stack.wait_for_api(90.0)
        reads_url = stack.base_url
        if args.reads_api:
            reads_port = free_port()
            stack.start_api("api-reads", reads_port)
            reads_url = stack.url(reads_port)
            stack.wait_for_api(90.0, "api-reads", reads_port)
        with httpx.Client(base_url=stack.base_url, timeout=120.0, trust_env=False) as client:
            per_route: dict[str, dict[int, dict]] = {"dense_direct": {}, "before_direct": {}, "search_direct": {},
                                                     "search_http": {}, "context_http": {}, "search_concurrent": {},
                                                     "search_concurrent_paced": {}}
            for n in args.sizes:
                tenant = f"reads-{n}"
                scope = UserScope(tenant_id=tenant, user_id="u0")
                r = client.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u0", "agent_id": "default"})
                r.raise_for_status()
                sid = r.json()["session_id"]

                def dense(q: str) -> None:
                    if not dense_only.search(scope, q, utc_now(), limit=50, max_tokens=MAX_TOKENS):
                        raise RuntimeError("dense-only search found nothing")

                stage_samples: list[dict[str, float]] = []
                before_samples: list[dict[str, float]] = []

                def direct(q: str, search=hybrid, samples=stage_samples) -> None:
                    timings: dict[str, float] = {}
                    if not search.search(scope, q, utc_now(), limit=50, max_tokens=MAX_TOKENS, timings=timings):
                        raise RuntimeError("hybrid search found nothing")
                    samples.append(timings)

                def direct_before(q: str) -> None:
                    direct(q, before, before_samples)

                def search_http(q: str) -> None:
                    resp = client.post(f"/api/v1/sessions/{sid}/context/search",
                                       json={"query": q, "max_tokens": MAX_TOKENS})
                    if resp.status_code != 200 or not resp.json():
                        raise RuntimeError(f"SearchMemory answered {resp.status_code}: {resp.text[:200]}")

                def context_http(q: str) -> None:
                    resp = client.get(f"/api/v1/sessions/{sid}/context", params={"query": q, "pages": 5})
                    if resp.status_code != 200 or len(resp.json()["relevant_pages"]) != 5:
                        raise RuntimeError(f"GetContext answered {resp.status_code}: {resp.text[:200]}")

                # first requests (cold user matrix; the API's first one also loads its embedder)
                first = {name: ms(timed(fn, queries.take(1))[0])
                         for name, fn in (("dense_direct", dense), ("before_direct", direct_before),
                                          ("search_direct", direct), ("search_http", search_http),
                                          ("context_http", context_http))}
                for fn in (dense, direct_before, direct, search_http, context_http):
                    timed(fn, queries.take(args.warmup))
                if args.api_workers > 1:  # one connection reaches one worker: warm the others too
                    warm_every_worker(stack.base_url, sid, queries.take(8 * args.api_workers), args.api_workers)
                search_queries = queries.take(args.queries)
                stage_samples.clear()
                before_samples.clear()
                load_before = load_avg()
                # each in-process route its own fresh queries: one shared embedding cache in this process;
                # the third round's way and the shipped one take turns, query by query (same machine state)
                before_times, direct_times = timed_in_turns([direct_before, direct],
                                                            [queries.take(args.queries), search_queries])
                results = {
                    "dense_direct": timed(dense, queries.take(args.queries)),
                    "before_direct": before_times,
                    "search_direct": direct_times,
                    "search_http": timed(search_http, search_queries),
                    "context_http": timed(context_http, queries.take(args.queries)),
                }
                load_after = load_avg()
                stages = stage_summary(stage_samples)
                api_rss = api_rss_mb(stack)
                bench_rss = rss_mb()
                direct_p50 = percentile(sorted(results["search_direct"]), 50)
                before_p50 = percentile(sorted(results["before_direct"]), 50)
                dense_p50 = percentile(sorted(results["dense_direct"]), 50)
                for name, latencies in results.items():
                    route, transport = name.split("_")
                    record = {
                        "bench": BENCH,
                        "route": {"search": "SearchMemory", "context": "GetContext", "dense": "SearchMemory",
                                  "before": "SearchMemory"}[route],
                        "retrieval": {"dense": "dense-only", "before": "hybrid, load all, serial"}.get(route, "hybrid"),
                        "transport": transport,
                        "chains": n,
                        "events_per_chain": args.events_per_chain,
                        "max_tokens": MAX_TOKENS if route != "context" else None,
                        **stats(latencies),
                        "first_request_ms": first[name],
                        "baseline_dense_direct_p50_ms": ms(dense_p50),
                        "ratio_hybrid_to_dense": round(direct_p50 / dense_p50, 3) if name == "search_direct" else None,
                        "ratio_to_load_all_serial": (round(direct_p50 / before_p50, 3)
                                                     if name == "search_direct" else None),
                        "baseline_direct_p50_ms": ms(direct_p50),
                        "ratio_http_to_direct": (round(percentile(sorted(latencies), 50) / direct_p50, 3)
                                                 if transport == "http" else 1.0),
                        "stage_ms": {"search_direct": stages, "before_direct": stage_summary(before_samples)}.get(name),
                        "api_rss_mb": api_rss,
                        "bench_rss_mb": bench_rss,
                        "noise_chains": 3 * args.noise,
                        "pool": len(pool),
                        "omp_threads": args.omp_threads,
                        "seed_seconds": seed_info[n],
                        "vector_store": args.vector_store,
                        "vector_index_wait_s": index_wait_s,
                        "load_avg_before": load_before,
                        "load_avg_after": load_after,
                        **machine_info(),
                    }
                    per_route[name][n] = record
                    emit(record)
                    records.append(record)
                if args.concurrent_readers > 0 and (args.concurrent_sizes is None or n in args.concurrent_sizes):
                    if args.reads_api:  # its first searches load the user's matrix: not in the phase
                        warm_every_worker(reads_url, sid, queries.take(8), 1)
                    if not args.no_worker:
                        stack.start_worker()  # the ingest's pipeline runs as it does in production
                    phases = [("search_concurrent", 0.0)]
                    if args.reader_rate > 0:
                        phases.insert(0, ("search_concurrent_paced", args.reader_rate))
                    for name, rate in phases:
                        record = under_ingest(args, stack, client, tenant, sid, queries, root / "wrk", n, rate,
                                              reads_url)
                        # what the worker had not indexed yet when the phase ended (its freshness, SPEC S2)
                        record["unindexed_after_phase"] = len(documents.unindexed_events(scope, 1_000_000))
                        # searches the API runs at once (the rest wait their turn); from the same environment
                        record["search_max_concurrent"] = settings.search_max_concurrent
                        per_route[name][n] = record
                        emit(record)
                        records.append(record)
                    # stopped again: its backlog (indexing what the phase ingested) would take a core from
                    # the next size's one-at-a-time figures; the next phase's worker picks it up
                    if not args.no_worker:
                        stack.stop_process("worker")
                save_results(BENCH, records, stamp)
    finally:
        stack.stop()
        documents.close()
        vectors.close()
        event_vectors.close()
        lexical.close()
        graph.close()
        if milvus is not None:
            milvus.stop()
        if env_backup is not None:
            os.environ["ATHENA_REDIS_URL"] = env_backup

    summary: dict = {"bench": "reads_summary", "sizes": args.sizes, "pool": len(pool),
                     "pool_embed_per_s": round(len(pool) / embed_s, 1), "model_load_s": round(model_load_s, 1),
                     "embedding_runtime": getattr(embedder.inner, "runtime", None),
                     "omp_threads": args.omp_threads}
    for name, rows in per_route.items():
        for low, high in zip(args.sizes, args.sizes[1:]):
            if low in rows and high in rows and high == 10 * low:
                summary[f"{name}_p50_growth_{high}_over_{low}"] = round(rows[high]["p50_ms"] / rows[low]["p50_ms"], 3)
    summary["load_avg"] = load_avg()
    summary.update(machine_info())
    emit(summary)
    records.append(summary)
    save_results(BENCH, records, stamp)


def under_ingest(args: argparse.Namespace, stack, client, tenant: str, sid: str, queries: "QueryPool",
                 out_dir: Path, n: int, reader_rate: float = 0.0, reads_url: str | None = None) -> dict:
    """SearchMemory from `--concurrent-readers` wrk connections (distinct queries) while another wrk posts
    StoreEvent into the same user (a second session) on a schedule of `--ingest-rate` events/s, with the
    pipeline worker indexing what arrives: the reader's latency when the user is also writing.

    `reader_rate` 0: each reader sends its next search as soon as it has the answer (closed loop: the
    searches/s the machine can serve, and the latency of a queue of `readers` searches on two cores).
    Above 0: the searches start on a schedule of `reader_rate` per second (`--reader-arrivals`, Poisson by
    default: agents that search independently, once per turn), each on a free reader connection."""
    wrk = ensure_wrk()
    r = client.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": "u0", "agent_id": "ingest"})
    r.raise_for_status()
    ingest_sid = r.json()["session_id"]
    seconds = args.concurrent_seconds
    # on a schedule of --ingest-rate events/s, evenly spaced; 16 connections leave room for ~30 ms answers
    connections = 16
    load_before = load_avg()
    cpu_pids = {name: stack.processes[name].pid for name in ("api", "api-reads", "worker")
                if name in stack.processes}
    cpu_before = {name: tree_cpu_s(pid) for name, pid in cpu_pids.items()}
    phase_started = time.perf_counter()
    ingest = start_wrk(wrk, stack.base_url, f"/api/v1/sessions/{ingest_sid}/events", connections=connections,
                       duration_s=seconds + 2, out_dir=out_dir, name=f"ingest-{n}", rate_per_s=args.ingest_rate,
                       event_content="Deploy notes for the ledger service: the canary is green, rolling on")
    time.sleep(1.0)  # the ingest at its rate before the readers start
    # distinct queries (the pool holds ~2k for the whole run); past them wrk starts over, and a repeated
    # query's embedding is the API's cache hit: `requests` over `distinct_queries` says whether it did
    wanted = 400 if not reader_rate else int(reader_rate * seconds * 1.25)  # a paced phase asks for fewer
    bodies = [{"query": q, "max_tokens": MAX_TOKENS} for q in queries.take(min(wanted, len(queries.texts) // 2))]
    readers = start_wrk(wrk, reads_url or stack.base_url, f"/api/v1/sessions/{sid}/context/search",
                        connections=args.concurrent_readers, duration_s=seconds, out_dir=out_dir,
                        name=f"readers-{n}{'-paced' if reader_rate else ''}", bodies=bodies,
                        rate_per_s=reader_rate, arrivals=args.reader_arrivals)
    read = readers.result()
    written = ingest.result()
    worker_priority = None  # read at the end: a worker started for the phase lowers itself as it starts
    if "worker" in cpu_pids:  # what ATHENA_WORKER_NICE did: the worker's niceness and its scheduling group's
        group = Path(f"/proc/{cpu_pids['worker']}/autogroup")
        worker_priority = {"nice": os.getpriority(os.PRIO_PROCESS, cpu_pids["worker"]),
                           "autogroup": group.read_text().strip() if group.exists() else None}
    # where the two cores went: the API (searches and ingest in one process) and the worker (indexing)
    elapsed = time.perf_counter() - phase_started
    cpu_cores = {f"{name.replace('-', '_')}_cpu_cores": round((tree_cpu_s(pid) - cpu_before[name]) / elapsed, 2)
                 for name, pid in cpu_pids.items()}
    return {
        "bench": BENCH, "route": "SearchMemory", "retrieval": "hybrid",
        "transport": "http-concurrent-paced" if reader_rate else "http-concurrent",
        "chains": n, "events_per_chain": args.events_per_chain, "max_tokens": MAX_TOKENS,
        "readers": args.concurrent_readers, "distinct_queries": len(bodies),
        "reader_rate_offered": reader_rate or None,
        "reader_arrivals": args.reader_arrivals if reader_rate else None,
        **{k: v for k, v in read.items() if k != "client_cpu_s_cumulative"},
        "reader_errors": read["status_other"] + read["status_503"] + read["status_429"]
        + sum(read["transport_errors"].values()),
        "ingest_offered_events_per_s": args.ingest_rate, "ingest_events_per_s": written["requests_per_s"],
        "ingest_2xx": written["status_2xx"], "ingest_refused": written["status_429"] + written["status_503"],
        "ingest_errors": written["status_other"] + sum(written["transport_errors"].values()),
        "ingest_p99_ms": written["p99_ms"], "api_rss_mb": api_rss_mb(stack), **cpu_cores,
        "worker_priority": worker_priority,
        "client_cpu_s_cumulative": written["client_cpu_s_cumulative"],
        "load_avg_before": load_before, "load_avg_after": load_avg(), **machine_info(),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1k and 10k chains, 20 queries, pool 100, 3 warm-up")
    p.add_argument("--sizes", default=None, help="comma-separated chains per tenant (default 1000,10000,100000)")
    p.add_argument("--queries", type=int, default=None, help="timed requests per route and size (100; quick 30)")
    p.add_argument("--warmup", type=int, default=None, help="untimed requests per route and size (5; quick 3)")
    p.add_argument("--pool", type=int, default=None, help="distinct summaries embedded (2000; quick 200)")
    p.add_argument("--events-per-chain", type=int, default=2, help="consolidated events seeded per chain")
    p.add_argument("--noise", type=int, default=1000, help="chains of each noise user (3 noise users)")
    p.add_argument("--noise-sigma", type=float, default=0.01)
    p.add_argument("--omp-threads", type=int, default=None,
                   help="set OMP_NUM_THREADS (torch intra-op threads) in every process; default: as shipped (unset)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--concurrent-sizes", default=None,
                   help="comma-separated sizes that get the concurrent phase (default: every size)")
    p.add_argument("--concurrent-readers", type=int, default=8,
                   help="per size, SearchMemory from this many wrk connections under ingest (0: skip)")
    p.add_argument("--ingest-rate", type=float, default=500.0,
                   help="events/s posted meanwhile, on a schedule (the rate reached is in each record)")
    p.add_argument("--reader-rate", type=float, default=16.0,
                   help="searches/s of the paced phase, all readers together, before the closed-loop one (0: skip)")
    p.add_argument("--reader-arrivals", choices=("poisson", "even"), default="poisson",
                   help="the paced phase's searches start at random around their rate (independent agents) "
                        "or evenly spaced")
    p.add_argument("--api-workers", type=int, default=1,
                   help="uvicorn workers of the API (ATHENA_API_WORKERS; each its own caches)")
    p.add_argument("--no-worker", action="store_true",
                   help="no pipeline worker in the concurrent phases: the API alone, its indexing left to "
                        "workers elsewhere (the events stay unindexed until one runs)")
    p.add_argument("--worker-nice", type=int, default=None,
                   help="ATHENA_WORKER_NICE of the concurrent phase's worker (default: as shipped, 10; 0: none)")
    p.add_argument("--reads-api", action="store_true",
                   help="the concurrent phases' readers search through a second API process on another port, "
                        "the ingest posts to the first")
    p.add_argument("--concurrent-seconds", type=float, default=10.0, help="length of that phase (quick 5)")
    p.add_argument("--vector-store", choices=("sqlite", "milvus"), default="sqlite",
                   help="sqlite: the embedded default; milvus: a Milvus standalone server started here (the "
                        "production vector engine; documents and lexical index stay SQLite; no reuse)")
    p.add_argument("--data-dir", default=None,
                   help="keep the seeded files here and reuse them when seeded alike (see the docstring)")
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = "1000,10000" if args.quick else "1000,10000,100000"
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.concurrent_sizes is not None:
        args.concurrent_sizes = [int(s) for s in args.concurrent_sizes.split(",") if s.strip()]
    if args.queries is None:
        args.queries = 20 if args.quick else 100
    if args.warmup is None:
        args.warmup = 3 if args.quick else 5
    if args.pool is None:
        args.pool = 100 if args.quick else 2000
    if args.quick and args.concurrent_seconds == 10.0:
        args.concurrent_seconds = 5.0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stamp = utc_stamp()
    records: list[dict] = []
    if args.data_dir:
        run(args, Path(args.data_dir), records, stamp)
        return 0
    root = Path(tempfile.mkdtemp(prefix=f"athena-bench-reads-{uuid.uuid4().hex[:6]}-"))
    try:
        run(args, root, records, stamp)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
