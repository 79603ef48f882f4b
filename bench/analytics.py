"""Community analytics (SPEC S6.5 / S9): seconds for 10k / 100k / 1M edges, and modularity.

Run from the repo root:

    python bench/analytics.py             # 10k, 100k and 1M edges, planted partition and G(n, m)
    python bench/analytics.py --quick     # 10k edges only
    python bench/analytics.py --sizes 10000,100000 --kinds planted

For each size m and graph kind it builds m weighted edges (weights 1..5, like observation counts) over
n = m / 5 nodes (mean degree 10) with string node keys `bench:u:n<i>` (what `tenant_edges` returns), then
times `detect_communities` (graph build + Leiden/modularity + renumbering) and `bridge_scores`:
  - planted: communities of 100 nodes, 80% of edges inside a community (the structure Leiden must find;
    `nmi_vs_planted` is the normalized mutual information with the planted partition, 1 = perfect);
  - gnm: uniform random G(n, m), no structure (modularity here is what noise alone scores; Leiden needs
    more iterations to converge, so it is the slow case).
Each JSON line has edges, nodes, seconds (detect + bridge), seconds_detect, seconds_bridge, communities,
modularity, ratio_to_smallest (seconds over the smallest size of the same kind in this run: growth per
decade of edges), the 1-minute load average before and after, CPU count and peak RSS. Records are also
saved to bench/results/analytics-<stamp>.json.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from athena_core.ltm.communities import bridge_scores, detect_communities  # noqa: E402
from bench.common import emit, log, machine_info, save_results, utc_stamp  # noqa: E402

COMMUNITY_SIZE = 100
P_IN = 0.8
MEAN_DEGREE = 10


def make_edges(kind: str, m: int, seed: int) -> tuple[list[tuple[str, str, float]], np.ndarray | None]:
    """m edges without self-loops over n = 2m / MEAN_DEGREE nodes; returns edges and planted labels."""
    rng = np.random.default_rng(seed)
    n = max(2 * COMMUNITY_SIZE, 2 * m // MEAN_DEGREE)
    n -= n % COMMUNITY_SIZE
    us = np.empty(0, dtype=np.int64)
    vs = np.empty(0, dtype=np.int64)
    while len(us) < m:  # draw in bulk, drop self-loops, top up
        k = int((m - len(us)) * 1.05) + 16
        u = rng.integers(0, n, k)
        if kind == "planted":
            inside = rng.random(k) < P_IN
            v = np.where(inside, (u // COMMUNITY_SIZE) * COMMUNITY_SIZE + rng.integers(0, COMMUNITY_SIZE, k),
                         rng.integers(0, n, k))
        elif kind == "gnm":
            v = rng.integers(0, n, k)
        else:
            raise ValueError(kind)
        keep = u != v
        us = np.concatenate([us, u[keep]])
        vs = np.concatenate([vs, v[keep]])
    us, vs = us[:m], vs[:m]
    ws = rng.integers(1, 6, m).astype(float)
    keys = [f"bench:u:n{i}" for i in range(n)]
    edges = [(keys[a], keys[b], w) for a, b, w in zip(us.tolist(), vs.tolist(), ws.tolist())]
    planted = np.arange(n) // COMMUNITY_SIZE if kind == "planted" else None
    return edges, planted


def nmi_vs_planted(membership: dict[str, int], planted: np.ndarray) -> float:
    import igraph as ig

    found = [(int(k.rsplit("n", 1)[1]), c) for k, c in membership.items()]
    return ig.compare_communities([planted[i] for i, _ in found], [c for _, c in found], method="nmi")


def run(kind: str, m: int, seed: int, n_iterations: int = -1) -> dict:
    edges, planted = make_edges(kind, m, seed)
    gc.collect()
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    result = detect_communities(edges, seed=seed, n_iterations=n_iterations)
    t1 = time.perf_counter()
    scores = bridge_scores(edges, result.membership)
    t2 = time.perf_counter()
    record = {
        "bench": "analytics",
        "kind": kind,
        "n_iterations": n_iterations,
        "edges": m,
        "nodes": len(result.membership),
        "seconds": round(t2 - t0, 3),
        "seconds_detect": round(t1 - t0, 3),
        "seconds_bridge": round(t2 - t1, 3),
        "communities": len(result.communities),
        "largest_community": result.communities[0].size if result.communities else 0,
        "modularity": round(result.modularity, 4),
        "bridging_nodes": sum(1 for s in scores.values() if s),
        "max_bridge_score": max(scores.values(), default=0),
    }
    if planted is not None:
        record["nmi_vs_planted"] = round(nmi_vs_planted(result.membership, planted), 4)
    record.update({
        "load_avg_1m_before": round(load_before, 2),
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    })
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k edges only")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated edge counts")
    parser.add_argument("--kinds", default="planted,gnm", help="comma-separated: planted, gnm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-iterations", type=int, default=-1, help="Leiden passes; -1 = until stable")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/")
    args = parser.parse_args(argv)

    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    kinds = [k for k in args.kinds.split(",") if k]
    stamp = utc_stamp()
    records = []
    for kind in kinds:
        first = None
        for m in sizes:
            log(f"analytics: {kind} m={m} ...")
            record = run(kind, m, args.seed, args.n_iterations)
            first = first or record
            record["ratio_to_smallest"] = round(record["seconds"] / first["seconds"], 2) if first["seconds"] else None
            record["machine"] = machine_info()
            emit(record)
            records.append(record)
    if not args.no_save:
        log(f"saved {save_results('analytics', records, stamp)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
