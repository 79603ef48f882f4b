"""Event log: append and pending scan on the MongoDB-wire server (SecantusDB 0.7.0b3, not MongoDB) beside SQLite.

Run from the repo root:

    python bench/document_store.py                 # 20k events over 40 agent scopes
    python bench/document_store.py --quick         # 2k events over 20 scopes (run_all --quick)

Both adapters are the production code (`MongoDocuments`, `SqliteDocuments`); SecantusDB is started here
(`secantusd-py`, free port, fresh directory; mongod's default durability, no fsync per commit) and SQLite
is a fresh WAL file (the adapter's own synchronous setting). Each engine gets the same events, and one
JSON line reports:
  - append_single_eps / append_single_p50_ms / p95: one `append_events([event])` per call (StoreEvent
    without the group commit);
  - append_batch_eps: `append_events` of 100 events per call (the group commit's and the batch route's way;
    on SecantusDB one transaction per call, `atomic_batches` says so); then, on a server with transactions,
    append_batch_unordered_eps: as many new events in the non-atomic fallback (one unordered insert_many),
    and transaction_over_unordered_batch_eps, the ratio of the two in this run;
  - pending_scan_p50_ms / p95: `pending_events(scope, limit=200)` of one scope (the pipeline's snapshot);
  - unseen_scan_ms: `unseen_pending_scopes` over the whole log (the pending sweep's query);
  - mark_ms: `mark_events` of one scope's 200 events as consolidated.
A summary line gives the SecantusDB/SQLite ratio of each figure, measured in this run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from athena_core.ids import new_id  # noqa: E402
from athena_core.models.events import Event, EventRole, EventStatus, EventType  # noqa: E402
from athena_core.models.scope import AgentScope  # noqa: E402
from athena_core.stores.documents.mongo_documents import MongoDocuments  # noqa: E402
from athena_core.stores.documents.sqlite_documents import SqliteDocuments  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _events(n: int, scopes: list[AgentScope]) -> list[Event]:
    out = []
    for i in range(n):
        scope = scopes[i % len(scopes)]
        at = T0 + timedelta(seconds=i)
        out.append(Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                         agent_id=scope.agent_id, session_id="ses_bench", role=EventRole.user,
                         type=EventType.message, content=f"benchmark message {i} about topic {i % 17}",
                         metadata={"n": str(i)}, timestamp=at, received_at=at))
    return out


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000, 3)


def run(engine: str, store, n: int, scopes: list[AgentScope]) -> dict:
    single = _events(n // 2, scopes)
    batched = _events(n - n // 2, scopes)
    latencies = []
    start = time.perf_counter()
    for event in single:
        t = time.perf_counter()
        store.append_events([event])
        latencies.append(time.perf_counter() - t)
    single_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, len(batched), 100):
        store.append_events(batched[i:i + 100])
    batch_s = time.perf_counter() - start

    scans = []
    for scope in scopes * 3:
        t = time.perf_counter()
        pending = store.pending_events(scope, limit=200)
        scans.append(time.perf_counter() - t)
    assert len(pending) == min(200, n // len(scopes))
    t = time.perf_counter()
    unseen = store.unseen_pending_scopes(T0 + timedelta(days=365))
    unseen_s = time.perf_counter() - t
    assert len(unseen) == len(scopes)
    t = time.perf_counter()
    marked = store.mark_events(scopes[-1], [e.event_id for e in pending], EventStatus.consolidated, "chn_bench")
    mark_s = time.perf_counter() - t
    assert marked == len(pending)
    fallback = {}
    if getattr(store, "atomic_batches", False):  # the same batches without a transaction, same run: its cost
        extra = _events(len(batched), scopes)
        store.atomic_batches = False
        start = time.perf_counter()
        for i in range(0, len(extra), 100):
            store.append_events(extra[i:i + 100])
        store.atomic_batches = True
        unordered_eps = len(extra) / (time.perf_counter() - start)
        fallback = {"append_batch_unordered_eps": round(unordered_eps, 1),
                    "transaction_over_unordered_batch_eps": round(len(batched) / batch_s / unordered_eps, 3)}
    return {
        "bench": "document_store", "engine": engine, "events": n, "scopes": len(scopes),
        "append_single_eps": round(len(single) / single_s, 1),
        "append_single_p50_ms": round(statistics.median(latencies) * 1000, 3),
        "append_single_p95_ms": _ms(latencies, 95),
        "append_batch_eps": round(len(batched) / batch_s, 1), "batch_size": 100,
        "pending_scan_p50_ms": round(statistics.median(scans) * 1000, 3), "pending_scan_p95_ms": _ms(scans, 95),
        "unseen_scan_ms": round(unseen_s * 1000, 3), "mark_ms": round(mark_s * 1000, 3), **fallback,
        "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--scopes", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="2,000 events over 20 scopes (run_all --quick)")
    args = parser.parse_args()
    if args.quick:
        args.events, args.scopes = 2000, 20
    scopes = [AgentScope(tenant_id=f"t{i % 4}", user_id=f"u{i}", agent_id="a1") for i in range(args.scopes)]
    from athena_devtools.engine_servers import SECANTUS_NAME, SecantusServerProcess

    work = Path(tempfile.mkdtemp(prefix="athena-bench-docs-"))
    server = SecantusServerProcess(work / "secantusdb").start()
    rows = {}
    try:
        sqlite = SqliteDocuments(work / "athena.sqlite3")
        rows["sqlite"] = run("sqlite", sqlite, args.events, scopes)
        sqlite.close()
        print(json.dumps(rows["sqlite"]), flush=True)
        mongo = MongoDocuments.connect(server.url, "athena_bench")
        rows["secantusdb"] = {**run("secantusdb", mongo, args.events, scopes), "server": SECANTUS_NAME,
                              "atomic_batches": mongo.atomic_batches}
        mongo.close()
        print(json.dumps(rows["secantusdb"]), flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    keys = ["append_single_eps", "append_single_p50_ms", "append_batch_eps", "pending_scan_p50_ms",
            "pending_scan_p95_ms", "unseen_scan_ms", "mark_ms"]
    summary = {"bench": "document_store_summary",
               **{f"secantusdb_over_sqlite_{k}": round(rows["secantusdb"][k] / rows["sqlite"][k], 3)
                  for k in keys if rows["sqlite"][k]}}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
