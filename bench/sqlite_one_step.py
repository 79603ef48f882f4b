"""SQLite reads beside a busy thread: row by row against one step (`athena_core/stores/sqlite_one_step.py`).

    python bench/sqlite_one_step.py            # 190 chain documents of 1.2 KB, 0 / 1 / 3 busy threads
    python bench/sqlite_one_step.py --quick    # 2k chains, 3 reads per configuration (the CI smoke run)

Python's sqlite3 lets go of the GIL for every `sqlite3_step` (once per row) and must get it back to build
the row; beside a thread that keeps the GIL busy, each get-back can wait for that thread's switch
interval (5 ms). A search in the API reads a few hundred rows beside the event loop and other searches.
Per configuration (busy threads: 0, 1, 3, each looping in Python) this prints one JSON line with the p50 /
p95 ms of reading `--rows` random chain documents out of `--chains` with
- `per_row`: `SELECT doc ... WHERE chain_id IN (...)`, one `Chain` validated per row (the code before), and
- `one_step`: the same rows as one JSON array (`json_documents_in_one_step`) validated in one call
  (`SqliteDocuments.get_chains` now),
and `ratio_per_row_to_one_step` in the same run. A temporary file; nothing is kept.
"""
from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import emit, machine_info, percentile, save_results  # noqa: E402

from athena_core.models.chains import Chain  # noqa: E402
from athena_core.stores.documents.sqlite_documents import CHAINS  # noqa: E402
from athena_core.stores.sqlite_one_step import json_documents_in_one_step  # noqa: E402

BENCH = "sqlite_one_step"


def chain_doc(i: int) -> str:
    """A chain document of about the size the reads benchmark seeds (1.2 KB)."""
    return Chain(
        chain_id=f"chn_{i}", tenant_id="t", user_id="u", agent_ids=["default"], topic=f"topic {i % 97}",
        subtopics=[], summary=("The user discussed the ledger service and its canary rollout. " * 9)[:560],
        entities=["ledger", "canary"], quality={"coherence": 0.6, "completeness": 0.6, "relevance": 0.6,
                                                "engagement": 0.5, "cognitive_depth": 0.5, "overall": 0.56,
                                                "passed": True, "mode": "balanced"},
        intrinsic_importance=0.5, density=0.5, heat_score=0.4,
        heat_factors={"i_base": 0.5, "density": 0.5, "intrinsic_importance": 0.5, "strength": 1.0,
                      "hours_since_access": 1.0, "heat": 0.4},
        started_at="2026-01-05T09:00:00Z", last_event_at="2026-01-05T09:05:00Z", event_count=2,
        event_ids=[f"evt_{i}_a", f"evt_{i}_b"], created_at="2026-01-05T09:05:00Z",
        updated_at="2026-01-05T09:05:00Z",
    ).model_dump_json()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="2k chains, 3 reads per configuration: a smoke test (a per-row read beside 3 busy threads "
                        "takes ~3.4 s; 15 of them were 51 s of CI)")
    p.add_argument("--chains", type=int, default=100_000)
    p.add_argument("--rows", type=int, default=190, help="chains read per search (the reads bench: 150–250)")
    p.add_argument("--reads", type=int, default=40, help="timed reads per configuration and way")
    args = p.parse_args()
    if args.quick:
        args.chains, args.reads = 2_000, 3
    records = []
    with tempfile.TemporaryDirectory(prefix="athena-one-step-") as tmp:
        path = Path(tmp) / "chains.sqlite3"
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("CREATE TABLE chains (chain_id TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID")
        conn.executemany("INSERT INTO chains VALUES (?, ?)", ((f"chn_{i}", chain_doc(i)) for i in range(args.chains)))
        conn.commit()
        rng = random.Random(5)
        ids = [f"chn_{i}" for i in range(args.chains)]

        def per_row(sample: list[str]) -> int:
            marks = ",".join("?" * len(sample))
            rows = conn.execute(f"SELECT chain_id, doc FROM chains WHERE chain_id IN ({marks})", sample)
            return len({r[0]: Chain.model_validate_json(r[1]) for r in rows})

        def one_step(sample: list[str]) -> int:
            marks = ",".join("?" * len(sample))
            docs = json_documents_in_one_step(conn, f"SELECT doc FROM chains WHERE chain_id IN ({marks})", sample,
                                              "doc")
            return len(CHAINS.validate_json(docs))

        for busy in (0, 1, 3):
            stop = threading.Event()

            def spin() -> None:
                while not stop.is_set():
                    sum(range(1000))

            threads = [threading.Thread(target=spin, daemon=True) for _ in range(busy)]
            for t in threads:
                t.start()
            times: dict[str, list[float]] = {"per_row": [], "one_step": []}
            try:
                for _ in range(args.reads):  # the two ways take turns, each on its own random sample
                    for name, fn in (("per_row", per_row), ("one_step", one_step)):
                        sample = rng.sample(ids, args.rows)
                        started = time.perf_counter()
                        if fn(sample) != args.rows:
                            raise RuntimeError(f"{name} did not read {args.rows} chains")
                        times[name].append((time.perf_counter() - started) * 1000.0)
            finally:
                stop.set()
                for t in threads:
                    t.join()
            record = {"bench": BENCH, "busy_threads": busy, "chains": args.chains, "rows": args.rows,
                      "reads": args.reads, "switch_interval_ms": sys.getswitchinterval() * 1000.0}
            for name, values in times.items():
                values.sort()
                record[f"{name}_p50_ms"] = round(percentile(values, 50), 2)
                record[f"{name}_p95_ms"] = round(percentile(values, 95), 2)
            record["ratio_per_row_to_one_step"] = round(record["per_row_p50_ms"] / record["one_step_p50_ms"], 2)
            record.update(machine_info())
            emit(record)
            records.append(record)
        conn.close()
    save_results(BENCH, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
