"""Render a `bench/run_all.py` run file to bench/results/README.md, with matplotlib PNG plots.

    python bench/render_results.py                      # the latest bench/results/run-*.json
    python bench/render_results.py bench/results/run-20261129T170000Z.json

One markdown table per kind of record (the `bench` field of each JSON line), with curated columns for
the main benchmarks and every scalar field otherwise; plots (written next to the README):
  reads_latency.png      GetContext / SearchMemory p50 and p99 vs chains per tenant (log-log)
  vector_search.png      vector search p50 vs vectors per user, per engine
  ingest.png             StoreEvent events/s vs concurrent clients, with the direct baseline
  pipeline.png           pipeline events/s per worker count
  graph_upsert.png       triples/s, batched vs one query per triple, vs triples
  analytics.png          community detection seconds vs edges
Without matplotlib the tables are still written (and the README says the plots were skipped).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, RESULTS_DIR  # noqa: E402

MACHINE_KEYS = {"python", "implementation", "cpu_count", "platform", "machine", "cpus"}
COLUMNS = {
    "ingest": ["redis", "route", "api_workers", "concurrency", "events_per_s", "p50_ms", "p99_ms", "errors",
               "status_429", "status_503", "events_2xx", "events_2xx_in_log", "baseline_events_per_s",
               "ratio_to_direct", "server_ms_per_event", "server_cpu_s", "client_cpu_s", "load_avg_1m"],
    "pipeline": ["phase", "workers", "events", "seconds", "events_per_s", "events_per_s_searchable",
                 "freshness_p50_s", "freshness_p99_s", "ratio_to_floor", "chains", "consolidated", "pending_left",
                 "errors", "omp_threads", "load_avg_before", "load_avg_after"],
    "reads": ["route", "retrieval", "transport", "chains", "requests", "p50_ms", "p95_ms", "p99_ms", "mean_ms",
              "first_request_ms", "ratio_hybrid_to_dense", "baseline_direct_p50_ms", "ratio_http_to_direct", "pool",
              "reader_rate_offered", "ingest_events_per_s", "api_cpu_cores", "worker_cpu_cores", "unindexed_after_phase",
              "omp_threads", "load_avg_before"],
    "sqlite_one_step": ["busy_threads", "chains", "rows", "per_row_p50_ms", "per_row_p95_ms", "one_step_p50_ms",
                        "one_step_p95_ms", "ratio_per_row_to_one_step"],
    "embedding_runtime": ["runtime", "queries", "query_p50_ms", "query_p95_ms", "passages", "passages_per_s",
                          "load_s"],
    "vector_search": ["engine", "n_user", "search_p50_ms", "search_p95_ms", "first_search_ms", "recall_at_10",
                      "bulk_insert_vps", "single_upsert_ops", "cold_open_s", "cold_first_search_ms", "load_avg_1m"],
    "graph_upsert": ["engine", "triples", "edges", "batched_triples_per_s", "per_triple_triples_per_s",
                     "ratio_batched_to_per_triple", "load_avg_1m"],
    "analytics": ["kind", "edges", "nodes", "seconds", "communities", "modularity", "nmi_vs_planted",
                  "max_bridge_score", "peak_rss_mb", "ratio_to_smallest", "load_avg_1m_before"],
}


def latest_run() -> Path:
    runs = sorted(RESULTS_DIR.glob("run-*.json"))
    if not runs:
        raise SystemExit("no bench/results/run-*.json yet: run bench/run_all.py first")
    return runs[-1]


def cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.0f}"
    if isinstance(value, (list, dict)):
        text = json.dumps(value, separators=(",", ":"))
        return text if len(text) <= 60 else text[:57] + "..."
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(records: list[dict], columns: list[str] | None = None) -> str:
    if columns is None:
        columns = []
        for record in records:
            for key, value in record.items():
                if key in MACHINE_KEYS or key == "bench" or key in columns:
                    continue
                columns.append(key)
    columns = [c for c in columns if any(c in r for r in records)]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for record in records:
        lines.append("| " + " | ".join(cell(record.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def summary_list(record: dict) -> str:
    return "\n".join(f"- `{k}`: {cell(v)}" for k, v in record.items() if k not in MACHINE_KEYS and k != "bench")


# ------------------------------------------------------------------------------------------- plots
def plots(by_kind: dict[str, list[dict]], out_dir: Path) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: list[tuple[str, str]] = []

    def save(fig, name: str, title: str) -> None:
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        made.append((name, title))

    reads = by_kind.get("reads", [])
    if reads:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        def kind(r: dict) -> tuple[str, str]:  # older runs have no "retrieval" (they were dense-only)
            return (f'{r["route"]} {r.get("retrieval", "dense-only")}', r["transport"])

        series = sorted({kind(r) for r in reads})
        for route, transport in series:
            rows = sorted((r for r in reads if kind(r) == (route, transport)), key=lambda r: r["chains"])
            xs = [r["chains"] for r in rows]
            line, = ax.plot(xs, [r["p50_ms"] for r in rows], marker="o", label=f"{route} {transport} p50")
            ax.plot(xs, [r["p99_ms"] for r in rows], marker="x", linestyle="--", color=line.get_color(),
                    label=f"{route} {transport} p99")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("chains per tenant (user)")
        ax.set_ylabel("latency (ms)")
        ax.set_title("Read latency vs corpus size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, "reads_latency.png", "Read latency vs chains per tenant")

    vectors = [r for r in by_kind.get("vector_search", []) if "engine" in r and "n_user" in r]
    if vectors:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for engine in sorted({r["engine"] for r in vectors}):
            rows = sorted((r for r in vectors if r["engine"] == engine), key=lambda r: r["n_user"])
            ax.plot([r["n_user"] for r in rows], [r["search_p50_ms"] for r in rows], marker="o", label=f"{engine} p50")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("vectors per user")
        ax.set_ylabel("search latency (ms)")
        ax.set_title("Vector search latency vs N")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "vector_search.png", "Vector search p50 vs vectors per user")

    ingest = by_kind.get("ingest", [])
    if ingest:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for redis, route in sorted({(r["redis"], r.get("route", "single")) for r in ingest}):
            rows = sorted((r for r in ingest if r["redis"] == redis and r.get("route", "single") == route),
                          key=lambda r: r["concurrency"])
            xs = [r["concurrency"] for r in rows]
            line, = ax.plot(xs, [max(r["events_per_s"], 1) for r in rows], marker="o", label=f"{route} ({redis})")
            ax.plot(xs, [r["baseline_events_per_s"] for r in rows], marker="x", linestyle="--",
                    color=line.get_color(), label=f"direct floor, {route} ({redis})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("events/s")
        ax.set_title("StoreEvent throughput")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "ingest.png", "StoreEvent events/s vs concurrent clients")

    pipeline = by_kind.get("pipeline", [])
    if pipeline:
        fig, ax = plt.subplots(figsize=(5, 4))
        rows = sorted(pipeline, key=lambda r: (r.get("phase", ""), r["workers"]))
        ax.bar([f"{r.get('phase', '')} {r['workers']}" for r in rows], [r.get("events_per_s") or 0 for r in rows],
               color="tab:blue")
        ax.set_xlabel("worker processes (celery -c)")
        ax.set_ylabel("events/s to consolidated chains")
        ax.set_title("Pipeline throughput")
        save(fig, "pipeline.png", "Pipeline events/s per worker count")

    graph = by_kind.get("graph_upsert", [])
    if graph:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        rows = sorted(graph, key=lambda r: r["triples"])
        xs = [r["triples"] for r in rows]
        ax.plot(xs, [r["batched_triples_per_s"] for r in rows], marker="o", label="batched")
        ax.plot(xs, [r["per_triple_triples_per_s"] for r in rows], marker="x", label="one query per triple")
        ax.set_xscale("log")
        ax.set_xlabel("triples upserted")
        ax.set_ylabel("triples/s")
        ax.set_title("Graph UPSERT throughput (SQLite)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "graph_upsert.png", "Graph triples/s, batched vs per triple")

    analytics = by_kind.get("analytics", [])
    if analytics:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for kind in sorted({r["kind"] for r in analytics}):
            rows = sorted((r for r in analytics if r["kind"] == kind), key=lambda r: r["edges"])
            ax.plot([r["edges"] for r in rows], [r["seconds"] for r in rows], marker="o", label=kind)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("edges")
        ax.set_ylabel("seconds")
        ax.set_title("Community analytics time vs graph size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "analytics.png", "Analytics seconds vs edges")
    return made


def render(run_path: Path, out_dir: Path = RESULTS_DIR) -> Path:
    run = json.loads(run_path.read_text())
    by_kind: dict[str, list[dict]] = {}
    for bench in run.get("benchmarks", []):
        for record in bench.get("records", []):
            by_kind.setdefault(str(record.get("bench", bench["name"])), []).append(record)
    machine = run.get("machine", {})
    try:
        rel = run_path.resolve().relative_to(REPO_ROOT)
    except ValueError:
        rel = run_path
    out = [
        "# Benchmark results",
        "",
        f"Rendered by `bench/render_results.py` from `{rel}` (git-ignored; re-run `make bench` or "
        "`make bench-quick` to regenerate). Machines are noisy: compare the ratios measured in the same run "
        "(`ratio_*`, `*_over_*`, growth per decade), not raw figures between machines.",
        "",
        f"- mode: **{run.get('mode')}**, started {run.get('started_at')}, {run.get('seconds')} s in total",
        f"- machine: {machine.get('cpu_count')} CPUs, {machine.get('platform')}, Python {machine.get('python')}, "
        f"git {machine.get('git_commit')}",
        f"- load average (1/5/15 min) at start: {machine.get('load_avg')}, at end: {machine.get('load_avg_after')}",
        "",
        "| benchmark | status | seconds | load avg before | load avg after | records |",
        "|---|---|---|---|---|---|",
    ]
    for bench in run.get("benchmarks", []):
        status = "CRASHED" if bench.get("crashed") else "ok"
        out.append(f"| {bench['name']} | {status} | {bench.get('seconds')} | {cell(bench.get('load_avg_before'))} | "
                   f"{cell(bench.get('load_avg_after'))} | {len(bench.get('records', []))} |")
    out.append("")

    try:
        made = plots(by_kind, out_dir)
    except ImportError:
        made = []
        out += ["_Plots skipped: matplotlib is not installed (`pip install matplotlib`)._", ""]

    for kind, records in by_kind.items():
        out += [f"## {kind}", ""]
        if kind.endswith("_summary") and len(records) == 1:
            out += [summary_list(records[0]), ""]
        else:
            out += [table(records, COLUMNS.get(kind)), ""]
        for name, title in made:
            if name.split(".")[0].startswith(kind) or (kind == "reads" and name == "reads_latency.png"):
                out += [f"![{title}]({name})", ""]
    out_dir.mkdir(parents=True, exist_ok=True)
    readme = out_dir / "README.md"
    readme.write_text("\n".join(out).rstrip() + "\n")
    return readme


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    run_path = Path(argv[0]) if argv else latest_run()
    readme = render(run_path)
    print(f"rendered {readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
