"""Chain-vector search: SQLite exact search vs Milvus Lite (the two embedded choices of SPEC S0/S9) and the
Milvus standalone server of production (2.3.5 from the `milvus` wheel, started here on free ports).

Run from the repo root:

    python bench/vector_search.py            # N = 1k and 10k vectors per user
    python bench/vector_search.py --quick    # N = 1k only, fewer queries and writes
    python bench/vector_search.py --engines sqlite,milvus_lite
    python bench/vector_search.py --engines sqlite,milvus_lite,milvus_server --sizes 10000,100000  # issue 17

For each engine and N it inserts N random L2-normalised 384-d vectors for one user, plus N more spread
over 20 other users (10 in the same tenant, 10 with the same user id in other tenants, so the scope
filter has to work), and prints one JSON line with:
  - bulk_insert_vps: vectors/s of `upsert_many` over all 2N vectors (one call per user);
  - single_upsert_ops: upserts/s of one chain at a time (what the pipeline does; Milvus Lite flushes
    after each write, as the adapter does, so reads stay fast);
  - first_search_ms (fills SQLite's per-user cache) and search_p50_ms / search_p95_ms of the next
    `--queries` searches (limit 10) in the target user's scope;
  - Milvus engines: search_consistency (the level of those searches: Bounded by default) and
    strong_search_p50_ms / p95 of the same queries inside `reading_own_writes()` (Strong: the pipeline's
    merge-candidate search);
  - recall_at_10 against exact numpy top-10 of the same rows (SQLite and FLAT are exact; Milvus Lite's
    AUTOINDEX is FAISS HNSW with ef 64, approximate, and random 384-d vectors are its worst case);
  - cold_open_s (construct on the existing data) and cold_first_search_ms (the first search after it:
    SQLite loads the user's matrix, Milvus Lite has loaded the collection at open).
Then:
  - sqlite_two_processes (twice: a write flood, then a writer pausing 5 ms between chains): a writer
    process upserting while a reader process searches the same user on the same file; the reader's
    latencies, how its cache caught up (incremental refreshes of newer rows vs full reloads), and whether
    the reader saw the writer's last chain;
  - milvus_lite_second_process: a second process opening the same Milvus Lite directory, expected to
    fail; the error text as reported;
  - summary: ratios measured in this run (Milvus Lite over SQLite; 10k over 1k per engine).
Every figure is measured here; nothing is hard-coded. Each line carries the CPU count and 1-minute load
average: on a busy machine, multi-threaded BLAS/OpenMP kernels wait for descheduled threads.
"""
from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from athena_core.models.scope import UserScope  # noqa: E402
from athena_core.stores.vectors.port import reading_own_writes  # noqa: E402
from athena_core.stores.vectors.sqlite_vectors import SqliteVectors  # noqa: E402

DIM = 384
TARGET = UserScope(tenant_id="tenant-0", user_id="user-0")


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _noise_scopes() -> list[UserScope]:
    same_tenant = [UserScope(tenant_id=TARGET.tenant_id, user_id=f"user-{i}") for i in range(1, 11)]
    other_tenants = [UserScope(tenant_id=f"tenant-{i}", user_id=TARGET.user_id) for i in range(1, 11)]
    return same_tenant + other_tenants


_SERVER_URI: str | None = None  # the Milvus server of this run (main starts it when an engine needs it)


def _open(engine: str, where: Path):
    if engine == "sqlite":
        return SqliteVectors(where / "vectors.sqlite3", DIM)
    from athena_core.stores.vectors.milvus_vectors import MilvusVectors

    if engine == "milvus_server":  # AUTOINDEX on 2.3 = HNSW; a collection per run, dropped after it
        assert _SERVER_URI is not None
        return MilvusVectors(_SERVER_URI, DIM, collection="bench_" + where.name.replace("-", "_"))

    index_type = "FLAT" if engine == "milvus_lite_flat" else "AUTOINDEX"  # Lite: AUTOINDEX = FAISS HNSW
    return MilvusVectors(str(where / "m.db"), DIM, index_type=index_type)


def _machine() -> dict:
    return {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


BULK_CHUNK = 20_000  # vectors per upsert_many call: an adapter builds its rows in memory (1M at once: > 16 GB)


def _bulk(index, scope, ids: list[str], vectors: np.ndarray) -> None:
    for i in range(0, len(ids), BULK_CHUNK):
        index.upsert_many(scope, ids[i:i + BULK_CHUNK], vectors[i:i + BULK_CHUNK])


def run_engine(engine: str, n: int, queries: int, single_writes: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    where = Path(tempfile.mkdtemp(prefix=f"athena-bench-{engine}-"))
    try:
        index = _open(engine, where)
        target = _unit(rng, n)
        target_ids = [f"chn_{i:07d}" for i in range(n)]
        scopes = _noise_scopes()
        per_scope = max(1, n // len(scopes))

        start = time.perf_counter()
        _bulk(index, TARGET, target_ids, target)
        for scope in scopes:
            _bulk(index, scope, [f"chn_{i:07d}" for i in range(per_scope)], _unit(rng, per_scope))
        bulk_s = time.perf_counter() - start
        total = n + per_scope * len(scopes)

        # One chain at a time, as the pipeline writes (into another user, so the target stays at N).
        writer = UserScope(tenant_id=TARGET.tenant_id, user_id="writer")
        singles = _unit(rng, single_writes)
        start = time.perf_counter()
        for i in range(single_writes):
            index.upsert(writer, f"chn_{i:07d}", singles[i])
        single_s = time.perf_counter() - start

        qs = _unit(rng, queries + 1)
        start = time.perf_counter()
        index.search(TARGET, qs[0], limit=10)
        first_search = time.perf_counter() - start
        latencies, recalls = [], []
        for q in qs[1:]:
            start = time.perf_counter()
            hits = index.search(TARGET, q, limit=10)
            latencies.append(time.perf_counter() - start)
            exact = {target_ids[i] for i in np.argsort(-(target @ q))[:10]}
            recalls.append(len(exact & {h.chain_id for h in hits}) / 10)
        assert all(h.chain_id.startswith("chn_") for h in hits)
        strong: list[float] = []
        if engine != "sqlite":  # the pipeline's merge search reads at Strong (issue 17): its cost, same run
            with reading_own_writes():
                for q in qs[1:]:
                    start = time.perf_counter()
                    index.search(TARGET, q, limit=10)
                    strong.append(time.perf_counter() - start)
        count = index.count(TARGET)
        index.close()

        start = time.perf_counter()
        index = _open(engine, where)
        cold_open = time.perf_counter() - start
        start = time.perf_counter()
        index.search(TARGET, qs[1], limit=10)
        cold_first = time.perf_counter() - start
        if engine == "milvus_server":
            index.client.drop_collection(index.collection)
        index.close()
        return {
            "bench": "vector_search", "engine": engine,
            "n_user": n, "n_total": total, "dim": DIM, "target_count": count,
            "bulk_insert_vps": round(total / bulk_s, 1), "bulk_insert_s": round(bulk_s, 3),
            "single_upsert_ops": round(single_writes / single_s, 1), "single_upserts": single_writes,
            "first_search_ms": _ms(first_search),
            "search_p50_ms": _ms(statistics.median(latencies)), "search_p95_ms": _ms(_percentile(latencies, 95)),
            "search_consistency": getattr(index, "search_consistency", "exact"),
            **({"strong_search_p50_ms": _ms(statistics.median(strong)),
                "strong_search_p95_ms": _ms(_percentile(strong, 95))} if strong else {}),
            "queries": queries, "limit": 10, "recall_at_10": round(float(np.mean(recalls)), 4),
            "cold_open_s": round(cold_open, 3), "cold_first_search_ms": _ms(cold_first), **_machine(),
        }
    finally:
        shutil.rmtree(where, ignore_errors=True)


# -- SQLite from two processes --------------------------------------------------------------------
def _writer(path: str, writes: int, pace_s: float, ready, go, out) -> None:
    index = SqliteVectors(path, DIM)
    rng = np.random.default_rng(11)
    vectors = _unit(rng, writes)
    ready.wait()
    go.wait()
    start = time.perf_counter()
    for i in range(writes):
        index.upsert(TARGET, f"new_{i:07d}", vectors[i])
        if pace_s:
            time.sleep(pace_s)
    elapsed = time.perf_counter() - start
    index.close()
    out.put({"role": "writer", "writes": writes, "write_s": elapsed,
             "last_id": f"new_{writes - 1:07d}", "last_vector": vectors[-1].tolist()})


def _reader(path: str, ready, go, writer_done, out) -> None:
    index = SqliteVectors(path, DIM)
    rng = np.random.default_rng(12)
    qs = _unit(rng, 64)
    index.search(TARGET, qs[0], limit=10)  # warm cache
    ready.wait()
    go.wait()
    latencies, errors, i = [], 0, 0
    while not writer_done.is_set():
        start = time.perf_counter()
        try:
            index.search(TARGET, qs[i % 64], limit=10)
        except Exception:  # noqa: BLE001 - counted and reported
            errors += 1
        latencies.append(time.perf_counter() - start)
        i += 1
    out.put({"role": "reader", "latencies": latencies, "errors": errors,
             "cache_loads": index.cache_loads, "cache_refreshes": index.cache_refreshes,
             "cache_hits": index.cache_hits})
    index.close()


def run_two_processes(n: int, writes: int, pace_s: float) -> dict:
    where = Path(tempfile.mkdtemp(prefix="athena-bench-mp-"))
    try:
        path = str(where / "vectors.sqlite3")
        index = SqliteVectors(path, DIM)
        rng = np.random.default_rng(10)
        index.upsert_many(TARGET, [f"chn_{i:07d}" for i in range(n)], _unit(rng, n))
        ctx = mp.get_context("spawn")
        ready, go, writer_done, out = ctx.Barrier(3), ctx.Barrier(3), ctx.Event(), ctx.Queue()
        reader = ctx.Process(target=_reader, args=(path, ready, go, writer_done, out))
        writer = ctx.Process(target=_writer, args=(path, writes, pace_s, ready, go, out))
        reader.start()
        writer.start()
        ready.wait()
        go.wait()
        results = {}
        first = out.get(timeout=600)
        results[first["role"]] = first
        writer_done.set()
        second = out.get(timeout=600)
        results[second["role"]] = second
        writer.join(60)
        reader.join(60)
        w, r = results["writer"], results["reader"]
        # A fresh instance in this (third) process after the run: does it see the writer's last chain?
        hits = index.search(TARGET, np.asarray(w["last_vector"], dtype=np.float32), limit=1)
        count = index.count(TARGET)
        index.close()
        lat = r["latencies"]
        return {
            "bench": "sqlite_two_processes", "n_user_start": n, "writer_upserts": w["writes"],
            "writer_pause_ms": pace_s * 1000, "writer_s": round(w["write_s"], 3),
            "writer_upserts_per_s": round(w["writes"] / w["write_s"], 1),
            "reader_searches": len(lat), "reader_errors": r["errors"],
            "reader_p50_ms": _ms(statistics.median(lat)) if lat else None,
            "reader_p95_ms": _ms(_percentile(lat, 95)) if lat else None,
            "reader_full_reloads": r["cache_loads"], "reader_incremental_refreshes": r["cache_refreshes"],
            "reader_cache_hits": r["cache_hits"],
            "final_count": count, "expected_count": n + w["writes"],
            "third_process_sees_last_write": bool(hits and hits[0].chain_id == w["last_id"]),
            "exit_codes": [writer.exitcode, reader.exitcode], **_machine(),
        }
    finally:
        shutil.rmtree(where, ignore_errors=True)


# -- Milvus Lite from a second process ------------------------------------------------------------
class _Capture(logging.Handler):
    """Keeps log records instead of printing them (pymilvus swallows Milvus Lite's real error and
    only logs it, with a traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                text += f" | {type(exc).__module__}.{type(exc).__name__}: {exc}"
            self.lines.append(text[:300])


def _second_lite_opener(directory: str, out) -> None:
    capture = _Capture()
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    for name in ("pymilvus", "milvus_lite"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
        logging.getLogger(name).setLevel(logging.DEBUG)
    from athena_core.stores.vectors.milvus_vectors import MilvusVectors

    start = time.perf_counter()
    try:
        MilvusVectors(directory, DIM).close()
        out.put({"opened": True, "error": None, "error_type": None, "seconds": time.perf_counter() - start})
    except Exception as exc:  # noqa: BLE001 - the failure is the result
        out.put({
            "opened": False, "error_type": f"{type(exc).__module__}.{type(exc).__name__}",
            "error": str(exc)[:500], "logged": capture.lines[:3], "seconds": time.perf_counter() - start,
        })


def run_lite_second_process() -> dict:
    from athena_core.stores.vectors.milvus_vectors import MilvusVectors

    where = Path(tempfile.mkdtemp(prefix="athena-bench-lite2-"))
    try:
        first = MilvusVectors(str(where / "m.db"), DIM)
        first.upsert(TARGET, "chn_1", np.ones(DIM, dtype=np.float32))
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        child = ctx.Process(target=_second_lite_opener, args=(str(where / "m.db"), out))
        child.start()
        result = out.get(timeout=120)
        child.join(60)
        still_works = first.count(TARGET) == 1
        first.close()
        return {"bench": "milvus_lite_second_process", **result, "seconds": round(result["seconds"], 3),
                "first_process_still_works": still_works}
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 1k only, 20 queries, fewer writes")
    parser.add_argument("--engines", default="sqlite,milvus_lite,milvus_lite_flat",
                        help="comma list of sqlite, milvus_lite (AUTOINDEX), milvus_lite_flat (exact FLAT), "
                             "milvus_server (Milvus 2.3.5 standalone, started here)")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--sizes", default=None, help="comma list of N (vectors of the searched user)")
    args = parser.parse_args()
    sizes = [1000] if args.quick else [1000, 10_000]
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    queries = args.queries or (20 if args.quick else 50)
    single_writes = 30 if args.quick else 200
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)

    server = None
    if "milvus_server" in engines:
        from athena_devtools.engine_servers import MilvusServerProcess

        global _SERVER_URI
        server_dir = Path(tempfile.mkdtemp(prefix="athena-bench-milvus-server-"))
        server = MilvusServerProcess(server_dir).start()
        _SERVER_URI = server.uri
    rows: dict[tuple[str, int], dict] = {}
    try:
        for n in sizes:
            for engine in engines:
                row = run_engine(engine, n, queries, single_writes, seed=n)
                if engine == "milvus_server":
                    row["server"] = "Milvus standalone 2.3.5 (milvus wheel), same machine"
                rows[(row["engine"], n)] = row
                print(json.dumps(row), flush=True)
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(server_dir, ignore_errors=True)
    if "sqlite" in engines:
        n_mp = 1000 if args.quick else 10_000
        writes = 200 if args.quick else 1000
        # A flood (no pause), then a paced writer (5 ms between chains) so the reader runs alongside.
        print(json.dumps(run_two_processes(n_mp, writes, 0.0)), flush=True)
        print(json.dumps(run_two_processes(n_mp, writes // 5, 0.005)), flush=True)
    if any(e.startswith("milvus_lite") for e in engines):
        print(json.dumps(run_lite_second_process()), flush=True)

    summary: dict[str, object] = {"bench": "vector_search_summary"}
    for n in sizes:
        s = rows.get(("sqlite", n))
        for engine in ("milvus_lite", "milvus_lite_flat", "milvus_server"):
            m = rows.get((engine, n))
            if not (s and m):
                continue
            for key in ("search_p50_ms", "search_p95_ms", "cold_open_s", "cold_first_search_ms",
                        "bulk_insert_vps", "single_upsert_ops"):
                summary[f"{engine}_over_sqlite_{key}_{n}"] = round(m[key] / s[key], 3) if s[key] else None
    if len(sizes) > 1:
        low, high = sizes[0], sizes[-1]
        for engine in ("sqlite", "milvus_lite", "milvus_lite_flat", "milvus_server"):
            a, b = rows.get((engine, low)), rows.get((engine, high))
            if a and b:
                summary[f"{engine}_p50_growth_{high}_over_{low}"] = round(b["search_p50_ms"] / a["search_p50_ms"], 2)
    for (engine, n), row in rows.items():
        if row.get("strong_search_p50_ms") and row["search_p50_ms"]:
            summary[f"{engine}_strong_over_default_p50_{n}"] = round(row["strong_search_p50_ms"] / row["search_p50_ms"], 2)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
